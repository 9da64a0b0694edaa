//! What ckptsim writes cannot be turned against its user: text of a
//! scenario stays inside one Java string literal of an exported job (a Java
//! lexer here applies javac's unicode-escape pass first, JLS §3.3, and
//! `javac` itself checks where it is installed), and a path cannot add TOML
//! to a reproducer's header; no command writes through a
//! link planted in its output folder; no read of a FIFO or device hangs, and
//! names from files reach the terminal without control sequences; counters
//! summed from result lines saturate instead of wrapping.

use crate::common::{ckptsim, load, stderr, stdout};
use ckptsim::export::{self, java_string, Options};
use ckptsim::scenario::{self, ScenarioData};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::Config;

/// A piece of Java source as the tokenizer sees it.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// Everything outside literals and comments, unit by unit.
    Code(Vec<u16>),
    /// A string literal's value (escapes applied).
    Str(Vec<u16>),
    /// A character literal's value.
    Chr(Vec<u16>),
    /// A comment's text.
    Comment(Vec<u16>),
}

const BS: u16 = b'\\' as u16;
const CR: u16 = b'\r' as u16;
const LF: u16 = b'\n' as u16;

/// JLS §3.3: the UTF-16 units javac tokenizes. A backslash begins a
/// unicode escape (`\` `u`+ four hex digits) only if an even number of raw
/// backslashes precede it; a translated unit takes part in no escape.
fn unicode_pass(src: &str) -> Result<Vec<u16>, String> {
    let raw: Vec<u16> = src.encode_utf16().collect();
    let (mut out, mut i, mut run) = (Vec::new(), 0, 0usize);
    while i < raw.len() {
        let c = raw[i];
        if c == BS && run % 2 == 0 && raw.get(i + 1) == Some(&(b'u' as u16)) {
            let mut j = i + 1;
            while raw.get(j) == Some(&(b'u' as u16)) {
                j += 1;
            }
            let hex = raw.get(j..j + 4).ok_or("a unicode escape cut short")?;
            let hex = String::from_utf16(hex).map_err(|e| e.to_string())?;
            if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("a malformed unicode escape at {i}: {hex}"));
            }
            out.push(u16::from_str_radix(&hex, 16).unwrap());
            (i, run) = (j + 4, 0);
            continue;
        }
        run = if c == BS { run + 1 } else { 0 };
        out.push(c);
        i += 1;
    }
    Ok(out)
}

/// Java's tokens (JLS §3.7, §3.10.5-7) as far as literals and comments go.
fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let u = unicode_pass(src)?;
    let (mut toks, mut code, mut i) = (Vec::new(), Vec::new(), 0);
    let at = |i: usize| u.get(i).copied();
    let is = |c: Option<u16>, ch: char| c == Some(ch as u16);
    while i < u.len() {
        let c = u[i];
        let flush = |toks: &mut Vec<Tok>, code: &mut Vec<u16>| {
            if !code.is_empty() {
                toks.push(Tok::Code(std::mem::take(code)));
            }
        };
        if c == b'/' as u16 && is(at(i + 1), '/') {
            flush(&mut toks, &mut code);
            let end = (i..u.len()).find(|&k| u[k] == CR || u[k] == LF);
            let end = end.unwrap_or(u.len());
            toks.push(Tok::Comment(u[i + 2..end].to_vec()));
            i = end;
        } else if c == b'/' as u16 && is(at(i + 1), '*') {
            flush(&mut toks, &mut code);
            let end = (i + 2..u.len().saturating_sub(1))
                .find(|&k| is(at(k), '*') && is(at(k + 1), '/'))
                .ok_or("an unterminated comment")?;
            toks.push(Tok::Comment(u[i + 2..end].to_vec()));
            i = end + 2;
        } else if c == b'"' as u16 || c == b'\'' as u16 {
            flush(&mut toks, &mut code);
            if c == b'"' as u16 && is(at(i + 1), '"') && is(at(i + 2), '"') {
                return Err("a text block".into());
            }
            let (value, end) = literal(&u, i)?;
            toks.push(match c == b'"' as u16 {
                true => Tok::Str(value),
                false => Tok::Chr(value),
            });
            i = end;
        } else {
            code.push(c);
            i += 1;
        }
    }
    if !code.is_empty() {
        toks.push(Tok::Code(code));
    }
    Ok(toks)
}

/// The literal opening at `u[start]`: its value and the index after it.
fn literal(u: &[u16], start: usize) -> Result<(Vec<u16>, usize), String> {
    let quote = u[start];
    let (mut value, mut i) = (Vec::new(), start + 1);
    loop {
        let c = *u.get(i).ok_or("an unterminated literal")?;
        if c == CR || c == LF {
            return Err(format!("a line break in a literal at {i}"));
        }
        if c == quote {
            return Ok((value, i + 1));
        }
        if c != BS {
            value.push(c);
            i += 1;
            continue;
        }
        let e = *u.get(i + 1).ok_or("an escape cut short")?;
        let simple = match char::from_u32(e.into()) {
            Some('b') => Some(8),
            Some('t') => Some(9),
            Some('n') => Some(10),
            Some('f') => Some(12),
            Some('r') => Some(13),
            Some('s') => Some(32),
            Some('"') => Some(34),
            Some('\'') => Some(39),
            Some('\\') => Some(92),
            _ => None,
        };
        if let Some(v) = simple {
            value.push(v);
            i += 2;
            continue;
        }
        // Octal: up to three digits when the first is 0-3, else two.
        let octal = |k: usize| {
            u.get(k)
                .filter(|&&d| (b'0' as u16..=b'7' as u16).contains(&d))
        };
        let Some(&first) = octal(i + 1) else {
            return Err(format!("an invalid escape at {i}"));
        };
        let most = if first <= b'3' as u16 { 3 } else { 2 };
        let mut v = 0u16;
        let mut k = i + 1;
        while k < i + 1 + most {
            let Some(&d) = octal(k) else { break };
            v = v * 8 + (d - b'0' as u16);
            k += 1;
        }
        value.push(v);
        i = k;
    }
}

/// Text meant to leave a literal: quotes, backslashes, comment ends,
/// unicode escapes (single, doubled, with many `u`s, surrogate-range),
/// line breaks, control characters, non-ASCII, shell metacharacters.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        "[ -~]{0,4}",
        prop::sample::select(vec![
            "\"",
            "\\",
            "\\\\",
            "*/",
            "/*",
            "//",
            "'",
            "\\u000a",
            "\\u000A",
            "\\\\u000a",
            "\\\\\\u0022",
            "\\uuu0022",
            "\\u005c",
            "\\u005cu0022",
            "\\uD800",
            "\\udfff",
            "\\u",
            "\\u12",
            "\n",
            "\r",
            "\r\n",
            "\t",
            "\0",
            "\u{7}",
            "\u{1b}[31m",
            "\u{7f}",
            "\u{85}",
            "\u{2028}",
            "\u{feff}",
            "\u{fffd}",
            "\u{1F600}",
            "\u{10FFFF}",
            "$(id)",
            "`id`",
            "'\\''",
            "\\0",
            "\\377",
            "9",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..16).prop_map(|v| v.concat())
}

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// A statement holding `literal` among fixed code and a comment.
fn holder(literal: &str) -> String {
    format!("class T {{ String a = {literal}; char c = 'x'; }} /* end */ // tail\nint z;")
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    /// Any text is one string literal whose value is the text, and nothing
    /// around it changes.
    #[test]
    fn any_text_is_one_java_literal(s in hostile()) {
        let got = tokenize(&holder(&java_string(&s)))
            .map_err(|e| TestCaseError::fail(format!("{s:?}: {e}")))?;
        let mut want = tokenize(&holder("\"x\"")).unwrap();
        want[1] = Tok::Str(units(&s));
        prop_assert_eq!(got, want, "{:?} as {}", s, java_string(&s));
    }
}

/// tiny without its crash, its name and operator ids replaced.
fn tiny_named(name: &str, ids: &[String]) -> Result<scenario::Scenario, String> {
    let mut data = ScenarioData::clone(&load("tiny"));
    data.faults.crashes.clear();
    data.name = name.to_string();
    for (op, id) in data.operators.iter_mut().zip(ids) {
        op.id = id.clone();
    }
    scenario::check(&data, "tiny").map_err(|e| e.to_string())
}

/// The exported job's files that are code: the Java sources and run.sh.
fn code_files(s: &scenario::Scenario) -> Vec<(String, String)> {
    let e = export::export(s, &Options::new(0, s.checkpoint.algorithm)).unwrap();
    let code = |n: &str| n.ends_with(".java") || n.ends_with(".sh");
    e.files.into_iter().filter(|(n, _)| code(n)).collect()
}

const BENIGN: [&str; 4] = ["Qa0Q", "Qb1Q", "Qc2Q", "Qd3Q"];

fn an_id() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[A-Za-z0-9_-]{1,10}", 1 => hostile()]
}

proptest! {
    #![proptest_config(Config { cases: 48, failure_persistence: None, ..Config::default() })]

    /// The scenario's name and operator ids (every scenario text that
    /// reaches the job) through an export: the code outside literals, the
    /// comments and run.sh are a benign export's; each literal holds what
    /// the benign one does, the ids replaced. An id the validator refuses
    /// never reaches an export.
    #[test]
    fn scenario_text_stays_in_the_literals_of_an_export(
        name in hostile(),
        ids in prop::collection::vec(an_id(), 4),
    ) {
        let name = format!("n{name}");
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        prop_assume!(distinct.len() == 4);
        let hostile = match tiny_named(&name, &ids) {
            Ok(s) => s,
            Err(e) => {
                let plain = |id: &String| {
                    !id.is_empty()
                        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                };
                prop_assert!(!ids.iter().all(plain), "{ids:?} refused: {e}");
                prop_assert!(e.contains("operator id"), "{e}");
                return Ok(());
            }
        };
        let benign = tiny_named("benign", &BENIGN.map(String::from)).unwrap();
        let (got, want) = (code_files(&hostile), code_files(&benign));
        prop_assert_eq!(got.len(), want.len());
        for ((file, text), (_, benign_text)) in got.iter().zip(&want) {
            if !file.ends_with(".java") {
                prop_assert_eq!(text, benign_text, "{}", file);
                continue;
            }
            let t = tokenize(text).map_err(|e| TestCaseError::fail(format!("{file}: {e}")))?;
            let b = tokenize(benign_text).unwrap();
            prop_assert_eq!(t.len(), b.len(), "{}", file);
            for (x, y) in t.iter().zip(&b) {
                let want = match y {
                    Tok::Str(v) => {
                        let mut v = String::from_utf16(v).unwrap();
                        for (from, to) in BENIGN.iter().zip(&ids) {
                            v = v.replace(from, to);
                        }
                        Tok::Str(units(&v))
                    }
                    other => other.clone(),
                };
                prop_assert_eq!(x, &want, "{}", file);
            }
        }
    }
}

/// With a JDK installed: javac compiles the literals, and the program
/// prints each value's UTF-16 units as they were given.
#[test]
fn javac_reads_every_literal_as_written() {
    let Ok(javac) = which("javac") else {
        eprintln!("no javac on PATH: the lexer's property stands alone");
        return;
    };
    let java = javac.with_file_name("java");
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut texts: Vec<String> = (0..60)
        .map(|_| hostile().new_tree(&mut runner).unwrap().current())
        .collect();
    texts.extend([
        "\\u000a".into(),
        "x\nimport static java.lang.Runtime.getRuntime;\n//".into(),
    ]);
    let literals: Vec<String> = texts.iter().map(|t| java_string(t)).collect();
    let src = format!(
        "public final class T {{\n  public static void main(String[] a) {{\n    String[] s = {{ {} }};\n    \
         for (String x : s) {{\n      StringBuilder b = new StringBuilder();\n      \
         for (char c : x.toCharArray()) b.append(String.format(\"%04x \", (int) c));\n      \
         System.out.println(b.toString().trim());\n    }}\n  }}\n}}\n",
        literals.join(",\n      ")
    );
    let dir = temp("javac");
    std::fs::write(dir.join("T.java"), src).unwrap();
    let o = std::process::Command::new(&javac)
        .args(["-encoding", "US-ASCII", "-d"])
        .arg(&dir)
        .arg(dir.join("T.java"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = std::process::Command::new(java)
        .arg("-cp")
        .arg(&dir)
        .arg("T")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let printed: Vec<String> = stdout(&o).lines().map(String::from).collect();
    let want: Vec<String> = texts
        .iter()
        .map(|t| {
            let hex: Vec<String> = t.encode_utf16().map(|u| format!("{u:04x}")).collect();
            hex.join(" ")
        })
        .collect();
    assert_eq!(printed, want);
    let _ = std::fs::remove_dir_all(dir);
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .ok_or(())
}

/// A new, empty folder of this test process.
fn temp(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-outsec-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two result lines at `u64::MAX` events and records: `merge` reports the
/// saturated total, not a wrapped small one.
#[test]
fn merged_counters_saturate() {
    let dir = temp("merge");
    let lines = dir.join("s.jsonl");
    let o = ckptsim(&[
        "sweep",
        "scenarios/tiny.toml",
        "--seeds",
        "0..2",
        "--out",
        lines.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut text = String::new();
    for line in std::fs::read_to_string(&lines).unwrap().lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["events"] = u64::MAX.into();
        v["counters"]["records_emitted"] = u64::MAX.into();
        text.push_str(&format!("{v}\n"));
    }
    std::fs::write(&lines, text).unwrap();
    let o = ckptsim(&["merge", lines.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["events"], u64::MAX, "{v}");
    assert_eq!(v["summary"]["counters"]["records_emitted"], u64::MAX);
    let o = ckptsim(&["merge", lines.to_str().unwrap()]);
    assert!(stdout(&o).contains(&u64::MAX.to_string()), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// A new export folder with `links` planted (name in it → target).
#[cfg(unix)]
fn planted(what: &str, links: &[(&str, &std::path::Path)]) -> std::path::PathBuf {
    let dir = temp(what);
    for (name, target) in links {
        let at = dir.join(name);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, at).unwrap();
    }
    dir
}

/// A victim file outside every output folder, and a check that it is as
/// it was.
struct Victim(std::path::PathBuf);

impl Victim {
    fn new(what: &str) -> Victim {
        let dir = temp(&format!("victim-{what}"));
        std::fs::write(dir.join("file"), "the victim's own text\n").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/keep"), "kept\n").unwrap();
        Victim(dir)
    }
    fn file(&self) -> std::path::PathBuf {
        self.0.join("file")
    }
    fn sub(&self) -> std::path::PathBuf {
        self.0.join("sub")
    }
    fn unchanged(&self) {
        let file = std::fs::read_to_string(self.file()).unwrap();
        assert_eq!(file, "the victim's own text\n");
        let names: Vec<_> = std::fs::read_dir(self.sub())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            ["keep"],
            "something was written into the victim's folder"
        );
        assert_eq!(
            std::fs::read_to_string(self.0.join("sub/keep")).unwrap(),
            "kept\n"
        );
    }
}

/// Exit 2, naming `what` in the message.
fn refused(o: &std::process::Output, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}{}", stdout(o));
    assert!(err.contains(what), "no {what} in: {err}");
}

/// `flink-export --out DIR` with a link planted in DIR (a file, the
/// `real` and `java` folders), or DIR not its own: exit 2, nothing written
/// outside DIR. An earlier export is replaced file by file.
#[cfg(unix)]
#[test]
fn flink_export_never_writes_through_a_planted_link() {
    let victim = Victim::new("export");
    let export = |dir: &std::path::Path| {
        ckptsim(&[
            "flink-export",
            "scenarios/tiny.toml",
            "--out",
            dir.to_str().unwrap(),
        ])
    };
    for (what, name, target) in [
        ("file", "run.sh", victim.file()),
        ("java", "java", victim.sub()),
        ("real", "real", victim.sub()),
        ("data", "data/a.txt", victim.file()),
    ] {
        let dir = planted(&format!("export-{what}"), &[(name, &target)]);
        if what == "data" {
            // data/ itself is real here: an earlier export, then the link.
            std::fs::write(dir.join("export.json"), "{}").unwrap();
        }
        refused(&export(&dir), "symbolic link");
        refused(&export(&dir), name.split('/').next_back().unwrap());
        victim.unchanged();
    }
    let dir = temp("export-foreign");
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    refused(&export(&dir), "notes.txt");
    // An earlier export, written again: replaced, a hard link's other name
    // keeps its content.
    let dir = temp("export-again");
    assert_eq!(export(&dir).status.code(), Some(0));
    std::fs::hard_link(dir.join("run.sh"), victim.0.join("hard")).unwrap();
    std::fs::write(dir.join("run.sh"), "changed").unwrap();
    let o = export(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(victim.0.join("hard")).unwrap(),
        "changed"
    );
    assert!(std::fs::read_to_string(dir.join("run.sh"))
        .unwrap()
        .starts_with("#!/bin/sh"));
}

/// The generated run.sh refuses a link at a path it deletes or the job
/// writes, before anything else (no JDK needed to see it).
#[cfg(unix)]
#[test]
fn run_sh_deletes_nothing_through_a_link() {
    let victim = Victim::new("run-sh");
    let dir = temp("run-sh");
    let o = ckptsim(&[
        "flink-export",
        "scenarios/tiny.toml",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (name, target) in [("real", victim.sub()), ("real/classes", victim.sub())] {
        let _ = std::fs::remove_dir_all(dir.join("real"));
        if name != "real" {
            std::fs::create_dir(dir.join("real")).unwrap();
        }
        std::os::unix::fs::symlink(&target, dir.join(name)).unwrap();
        let o = std::process::Command::new("sh")
            .arg(dir.join("run.sh"))
            .env("CKPTSIM_FLINK_HOME", temp("run-sh-home"))
            .output()
            .unwrap();
        refused(&o, "symbolic link");
        victim.unchanged();
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// `stalls`, `compare` and `coverage-report --render` with a link planted
/// where they write: exit 2, the victim unchanged.
#[cfg(unix)]
#[test]
fn report_folders_are_never_written_through_a_link() {
    let victim = Victim::new("reports");
    let dir = planted("stalls", &[("runs.csv", &victim.file())]);
    let out = dir.to_str().unwrap();
    refused(
        &ckptsim(&["stalls", "--cases", "1", "--out", out]),
        "runs.csv",
    );
    let dir = planted("stalls-shapes", &[("shapes", &victim.sub())]);
    let out = dir.to_str().unwrap();
    refused(
        &ckptsim(&["stalls", "--cases", "1", "--out", out]),
        "shapes",
    );
    let dir = planted("compare", &[("results.csv", &victim.file())]);
    let args = ["compare", "scenarios/tiny.toml", "--seeds", "0..1", "--out"];
    refused(
        &ckptsim(&[&args[..], &[dir.to_str().unwrap()]].concat()),
        "results.csv",
    );
    let dir = planted("coverage", &[("README.md", &victim.file())]);
    std::fs::copy("reports/coverage/sweeps.json", dir.join("sweeps.json")).unwrap();
    refused(
        &ckptsim(&["coverage-report", "--render", dir.to_str().unwrap()]),
        "README.md",
    );
    let linked = temp("linked-out").join("out");
    std::os::unix::fs::symlink(victim.sub(), &linked).unwrap();
    let args = ["compare", "scenarios/tiny.toml", "--seeds", "0..1", "--out"];
    refused(
        &ckptsim(&[&args[..], &[linked.to_str().unwrap()]].concat()),
        "symbolic link",
    );
    victim.unchanged();
}

/// Single files named on the command line (`sweep --out`, `shrink --out`,
/// `explore --out`, `run --trace`, `--perfetto`) and snapshot folders
/// (`savepoint --out`, `run --checkpoint-dir`) with a link planted at the
/// path: exit 2 before the run, the victim unchanged and the link left as
/// it was. A regular file there is replaced, not written into.
#[cfg(unix)]
#[test]
fn single_files_and_snapshot_folders_are_never_written_through_a_link() {
    let victim = Victim::new("files");
    let dir = planted(
        "files",
        &[
            ("sweep.jsonl", &victim.file()),
            ("repro.toml", &victim.file()),
            ("found.toml", &victim.file()),
            ("t.jsonl", &victim.file()),
            ("t.json", &victim.file()),
            ("sp", &victim.sub()),
            ("cp", &victim.sub()),
        ],
    );
    let at = |name: &str| dir.join(name).display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["sweep", "scenarios/tiny.toml", "--seeds", "0..1", "--out"]
                .into_iter()
                .map(String::from)
                .chain([at("sweep.jsonl")])
                .collect(),
            "sweep.jsonl",
        ),
        (
            [
                "shrink",
                "scenarios/alignment-crash.toml",
                "--seed",
                "0",
                "--mutant",
                "no-source-rewind",
                "--out",
            ]
            .into_iter()
            .map(String::from)
            .chain([at("repro.toml")])
            .collect(),
            "repro.toml",
        ),
        (
            ["explore", "scenarios/tiny.toml", "--depth", "2", "--out"]
                .into_iter()
                .map(String::from)
                .chain([at("found.toml")])
                .collect(),
            "found.toml",
        ),
        (
            ["run", "scenarios/tiny.toml", "--trace"]
                .into_iter()
                .map(String::from)
                .chain([at("t.jsonl")])
                .collect(),
            "t.jsonl",
        ),
        (
            ["run", "scenarios/tiny.toml", "--perfetto"]
                .into_iter()
                .map(String::from)
                .chain([at("t.json")])
                .collect(),
            "t.json",
        ),
        (
            [
                "savepoint",
                "scenarios/wordcount.toml",
                "--at",
                "300ms",
                "--out",
            ]
            .into_iter()
            .map(String::from)
            .chain([at("sp")])
            .collect(),
            "sp",
        ),
        (
            [
                "run",
                "scenarios/wordcount.toml",
                "--cancel-at",
                "300ms",
                "--checkpoint-dir",
            ]
            .into_iter()
            .map(String::from)
            .chain([at("cp")])
            .collect(),
            "cp",
        ),
    ];
    for (args, name) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ckptsim(&args);
        refused(&o, "symbolic link");
        refused(&o, name);
        assert!(std::fs::symlink_metadata(dir.join(name))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    victim.unchanged();
    // A regular file is replaced: a hard link's other name keeps its text.
    let file = dir.join("plain.jsonl");
    std::fs::write(&file, "old\n").unwrap();
    std::fs::hard_link(&file, dir.join("other-name")).unwrap();
    let o = ckptsim(&[
        "sweep",
        "scenarios/tiny.toml",
        "--seeds",
        "0..1",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&file).unwrap().starts_with('{'));
    assert_eq!(
        std::fs::read_to_string(dir.join("other-name")).unwrap(),
        "old\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Paths a command prints outside its errors (what it wrote, how to replay
/// it) reach the terminal with their control characters escaped.
#[cfg(unix)]
#[test]
fn printed_paths_carry_no_control_sequences() {
    let dir = temp("printed");
    let out = dir.join("found\u{1b}[2J.toml");
    let (code, text) = exit_within(&[
        "explore",
        "scenarios/tiny.toml",
        "--mutant",
        "aligned-no-block",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("found\\u{1b}[2J.toml"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(out.exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs ckptsim; its exit code and output, or a failure if it ran longer
/// than about 20 s (polled: no wall clock in this crate's code).
fn exit_within(args: &[&str]) -> (Option<i32>, String) {
    let mut child = crate::common::ckptsim_command()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..1000 {
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            let text = format!("{}{}", stdout(&o), stderr(&o));
            return (status.code(), text);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("ckptsim {args:?} still running after 20 s");
}

/// A copy of the recorded real run with `file` replaced by what `make`
/// puts there.
#[cfg(unix)]
fn recorded_with(what: &str, file: &str, make: &dyn Fn(&std::path::Path)) -> std::path::PathBuf {
    let dir = temp(what);
    let o = std::process::Command::new("cp")
        .args(["-R", "tests/flink/wordcount-7/."])
        .arg(&dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let _ = std::fs::remove_file(dir.join(file));
    make(&dir.join(file));
    dir
}

/// `flink-check` on a folder whose files are FIFOs or links to
/// `/dev/zero`: exit 2 at once, naming the file; a link to another file of
/// the user's is read but its lines are never echoed.
#[cfg(unix)]
#[test]
fn flink_check_refuses_fifos_and_devices_at_once() {
    let fifo = |p: &std::path::Path| {
        let o = std::process::Command::new("mkfifo")
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "mkfifo: {}", stderr(&o));
    };
    let zero = |p: &std::path::Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    for file in [
        "simulated.json",
        "export.json",
        "expected.tsv",
        "real/run.json",
    ] {
        for (kind, make) in [
            ("fifo", &fifo as &dyn Fn(&std::path::Path)),
            ("zero", &zero),
        ] {
            let what = format!("check-{kind}-{}", file.replace('/', "-"));
            let dir = recorded_with(&what, file, make);
            let (code, text) = exit_within(&["flink-check", dir.to_str().unwrap()]);
            assert_eq!(code, Some(2), "{file} as {kind}: {text}");
            assert!(
                text.contains("not a regular file"),
                "{file} as {kind}: {text}"
            );
        }
    }
    let secret = temp("secret").join("secret.txt");
    std::fs::write(&secret, "SECRET-FIRST-LINE\tof\tthe user's\n").unwrap();
    let link = |p: &std::path::Path| std::os::unix::fs::symlink(&secret, p).unwrap();
    let dir = recorded_with("check-secret", "expected.tsv", &link);
    let (code, text) = exit_within(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
}

/// Names from an export's files and from paths reach the terminal with
/// their control characters escaped.
#[cfg(unix)]
#[test]
fn names_reach_the_terminal_without_control_sequences() {
    let evil = "wordcount\u{1b}]0;owned\u{7}\u{1b}[2J\r";
    let edit = |p: &std::path::Path| {
        let text = std::fs::read_to_string("tests/flink/wordcount-7/export.json").unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["scenario"] = evil.into();
        std::fs::write(p, v.to_string()).unwrap();
    };
    let dir = recorded_with("check-evil-name", "export.json", &edit);
    let (code, text) = exit_within(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("wordcount\\u{1b}]0;owned"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    let missing = temp("evil-path").join("x\u{1b}[31m");
    let (code, text) = exit_within(&["flink-check", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

/// A path with a line break and TOML in it, in the header of a reproducer
/// `explore` writes: escaped, so that the file is the scenario it found.
#[cfg(unix)]
#[test]
fn a_path_cannot_add_toml_to_a_reproducer() {
    let dir = temp("toml-header");
    let path = dir.join("a\nname = \"injected\"\n[limits]\nb.toml");
    std::fs::copy("scenarios/tiny.toml", &path).unwrap();
    let found = dir.join("found.toml");
    let o = ckptsim(&[
        "explore",
        path.to_str().unwrap(),
        "--mutant",
        "aligned-no-block",
        "--out",
        found.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = std::fs::read_to_string(&found).unwrap();
    let parsed = scenario::parse_str(&text, "found.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.name, "tiny");
    let header: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("version"))
        .collect();
    assert!(header.iter().all(|l| l.starts_with('#')), "{text}");
    assert!(text.contains("a\\u{a}name"), "{text}");
}
