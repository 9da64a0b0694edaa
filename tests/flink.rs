//! `flink-export` and `flink-check`: every shipped scenario exports
//! deterministically (snapshot-tested) or is refused with its reasons; the
//! checks of a real run, on a run recorded from Flink 2.3 and on copies of
//! it broken on purpose. Real Flink is not run here: the example
//! `real_flink` (`cargo run --release --example real_flink`) runs exported
//! jobs on it and checks them.

use crate::common::{ckptsim, stderr, stdout};
use ckptsim::export::{self, Options};
use ckptsim::scenario::{self, shipped::SHIPPED};
use std::path::{Path, PathBuf};

fn options(s: &scenario::Scenario) -> Options {
    Options::new(s.replay.seed, s.checkpoint.algorithm)
}

/// Every shipped scenario: the generated job and mapping, or the refusals.
#[test]
fn every_shipped_scenario_exports_or_is_refused() {
    let mut exported = 0;
    for (name, text) in SHIPPED {
        let s = scenario::parse_str(text, name).unwrap();
        let snapshot = match export::export(&s, &options(&s)) {
            Ok(e) => {
                exported += 1;
                let file = |n: &str| {
                    let f = e.files.iter().find(|f| f.0 == n);
                    f.map(|f| f.1.clone()).unwrap_or_default()
                };
                assert!(
                    !file("expected.tsv").is_empty(),
                    "{name}: no expected output"
                );
                let data = e.files.iter().filter(|f| f.0.starts_with("data/")).count();
                let sources = s.operators.iter().filter(|o| o.kind.is_source()).count();
                assert_eq!(data, sources, "{name}: a data file per source");
                format!("{}\n{}", file("java/CkptsimJob.java"), file("MAPPING.md"))
            }
            Err(why) => format!("refused:\n{}\n", why.join("\n")),
        };
        insta::assert_snapshot!(format!("flink-{name}"), snapshot);
    }
    assert!(exported >= 20, "only {exported} shipped scenarios export");
}

#[test]
fn an_export_is_the_same_byte_for_byte() {
    let text = scenario::shipped::shipped("wordcount").unwrap();
    let s = scenario::parse_str(text, "wordcount").unwrap();
    let mut o = options(&s);
    o.seed = 7;
    let (a, b) = (
        export::export(&s, &o).unwrap(),
        export::export(&s, &o).unwrap(),
    );
    assert_eq!(a.files, b.files);
    // Seed 7 crashes the sink once: injected at the same record count.
    assert_eq!(a.manifest.crashes.len(), 1);
    let job = &a
        .files
        .iter()
        .find(|f| f.0 == "java/CkptsimJob.java")
        .unwrap()
        .1;
    let c = &a.manifest.crashes[0];
    let plan = format!("{}:{}:{}", c.subtask, c.attempt, c.records);
    assert!(job.contains(&plan), "{plan} not in the job");
}

#[test]
fn the_command_writes_the_job_and_refuses_what_flink_cannot_run() {
    let out = tempdir("export");
    let dir = out.to_str().unwrap();
    let o = ckptsim(&[
        "flink-export",
        "scenarios/wordcount.toml",
        "--out",
        dir,
        "--seed",
        "7",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 crash injected"), "{}", stdout(&o));
    for f in [
        "run.sh",
        "java/CkptsimJob.java",
        "java/Harness.java",
        "data/source.txt",
        "expected.tsv",
        "MAPPING.md",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // Refused, each with its reason: a cycle, an algorithm Flink lacks, a
    // mutant the Java job does not carry, a repeat without a duration.
    let refused = [
        (&["scenarios/iterate.toml"][..], "edges.feedback"),
        (
            &["scenarios/wordcount.toml", "--algorithm", "chandy-lamport"],
            "no Flink counterpart",
        ),
        (
            &["scenarios/wordcount.toml", "--mutant", "aligned-no-block"],
            "not in the Java job",
        ),
        (
            &["scenarios/tiny.toml", "--repeat", "--duration", "0s"],
            "must be above zero",
        ),
    ];
    for (args, why) in refused {
        let o = ckptsim(&[&["flink-export", "--out", dir][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
    let args = [
        "flink-export",
        "scenarios/wordcount.toml",
        "--out",
        dir,
        "--mutant",
        "no-source-rewind",
    ];
    let o = ckptsim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let job = std::fs::read_to_string(out.join("java/CkptsimJob.java")).unwrap();
    assert!(job.contains("Mutants.set(\"no-source-rewind\");"), "{job}");
    // --drop-faults: the faults a real job cannot be given are dropped, on
    // both sides, and named.
    let args = [
        "flink-export",
        "scenarios/faults.toml",
        "--out",
        dir,
        "--drop-faults",
    ];
    let o = ckptsim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mapping = std::fs::read_to_string(out.join("MAPPING.md")).unwrap();
    assert!(
        mapping.contains("| `faults.coordinator` | not at all | dropped"),
        "{mapping}"
    );
    let kept = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(!kept.contains("[faults.coordinator]"), "{kept}");
    let o = ckptsim(&["flink-check", "scenarios"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

pub(crate) fn tempdir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-flink-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// `tests/flink/wordcount-7`: wordcount exported at seed 7 (the sink crashes
/// once) and run on Flink 2.3.0 by its run.sh; what the run wrote.
const RECORDED: &str = "tests/flink/wordcount-7";

#[test]
fn a_recorded_real_run_passes_with_ckptsims_metric_names() {
    let o = ckptsim(&["flink-check", RECORDED, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ended"], "finished");
    assert_eq!(v["records_committed"], 12000);
    assert!(v["checkpoints_completed"].as_u64().unwrap() > 0);
    assert!(
        v["checkpoint_metrics"]["duration_ns"]["p50"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(
        v["restarts"], 1,
        "the injected crash restarted the job once"
    );
    let crashes = (
        v["crashes_planned"].as_u64(),
        v["crashes_injected"].as_u64(),
    );
    assert_eq!(crashes, (Some(1), Some(1)));
    let flows = v["vertex_flow"].as_array().unwrap();
    let sampled = |f: &serde_json::Value| f["samples"].as_array().unwrap().len();
    assert!(flows.iter().any(|f| sampled(f) > 5), "{flows:?}");
    let o = ckptsim(&["flink-check", RECORDED]);
    let text = stdout(&o);
    assert!(
        text.contains("| metric | simulated | real Flink |"),
        "{text}"
    );
    assert!(
        text.contains("| records committed | 12000 | 12000 |"),
        "{text}"
    );
}

#[test]
fn the_checks_catch_a_broken_real_run() {
    // A transaction committed twice (what a committer that is not
    // idempotent does on a restore): duplicates.
    let dir = tempdir("dup");
    copy(Path::new(RECORDED), &dir);
    let committed = dir.join("real/store/committed");
    let first = std::fs::read_dir(&committed)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(&first, committed.join("again.tsv")).unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAIL exactly-once-output"),
        "{}",
        stdout(&o)
    );

    // A transaction never committed (a committable lost on restore): a loss.
    std::fs::remove_file(committed.join("again.tsv")).unwrap();
    std::fs::remove_file(&first).unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("records committed, the failure-free run commits"),
        "{}",
        stdout(&o)
    );

    // A planned crash that never fired is said, not silently skipped.
    std::fs::write(committed.join("../../crashes.tsv"), "").unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert!(
        stdout(&o)
            .contains("warning: the crash of sink[0] (attempt 0, after 2337 records) never fired"),
        "{}",
        stdout(&o)
    );

    // A crash that fired in a later attempt than planned counts.
    std::fs::write(committed.join("../../crashes.tsv"), "sink\t0\t0\t2337\t1\n").unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("crashes: 1 planned (the simulated run's), 1 injected"),
        "{}",
        stdout(&o)
    );

    // A run that hit its time limit: liveness.
    let dir = tempdir("limit");
    copy(Path::new(RECORDED), &dir);
    std::fs::write(
        dir.join("real/run.json"),
        r#"{"ended":"time-limit","wall_ms":600000,"failure":""}"#,
    )
    .unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("FAIL liveness: the bounded job did not finish"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_recorded_freeze_fails_liveness_and_its_aligned_twin_passes() {
    let o = ckptsim(&["flink-check", "tests/flink/deadlock-unaligned"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAIL liveness: the data flow froze"),
        "{}",
        stdout(&o)
    );
    let o = ckptsim(&["flink-check", "tests/flink/deadlock-aligned", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["checkpoints_completed"].as_u64().unwrap() >= 10);
}

#[test]
fn an_upsert_sink_is_judged_by_the_table_it_leaves() {
    let o = ckptsim(&["flink-check", "tests/flink/upsert-1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("every upsert sink's table is the failure-free run's"));
    // An older value written after a newer one (upsert-batch-reordered's
    // effect): the table is stale.
    let dir = tempdir("upsert");
    copy(Path::new("tests/flink/upsert-1"), &dir);
    let last = dir.join("real/store/upsert/sink-1-1-0.tsv");
    let text = std::fs::read_to_string(&last).unwrap();
    let first = text.lines().next().unwrap();
    let (prefix, value) = first.rsplit_once('\t').unwrap();
    let stale = format!("{prefix}\t{}\n", value.parse::<i64>().unwrap() - 1);
    std::fs::write(&last, text.clone() + &stale).unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAIL exactly-once-output: upsert sink sink key"),
        "{}",
        stdout(&o)
    );
}

/// With `CKPTSIM_EXPORT_KEEP=DIR`, every export of the property below is
/// written to `DIR/<hash>/`, to compile and run them on real Flink.
fn keep(e: &export::Export) {
    let Some(root) = std::env::var_os("CKPTSIM_EXPORT_KEEP") else {
        return;
    };
    let job = &e
        .files
        .iter()
        .find(|f| f.0 == "java/CkptsimJob.java")
        .unwrap()
        .1;
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(job, &mut h);
    let dir = Path::new(&root).join(format!("{:016x}", std::hash::Hasher::finish(&h)));
    write(e, &dir);
}

/// Writes every file of an export under `dir`.
fn write(e: &export::Export, dir: &Path) {
    for (name, text) in &e.files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// Generated scenarios per run of the property below (more with
/// `CKPTSIM_EXPORT_CASES`).
fn export_cases() -> u32 {
    std::env::var("CKPTSIM_EXPORT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: export_cases(),
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any generated scenario exports, or is refused with its reasons; an
    /// export declares every stream before it reads it, has a data file per
    /// source and an expected row per record the oracle commits.
    #[test]
    fn any_generated_scenario_exports_or_is_refused(
        g in ckptsim::strategies::scenario(ckptsim::scenario::Algorithm::Unaligned),
        seed in proptest::prelude::any::<u64>(),
    ) {
        let mut o = options(&g.scenario);
        o.seed = seed;
        o.algorithm = ckptsim::scenario::Algorithm::Unaligned;
        match export::export(&g.scenario, &o) {
            Err(why) => proptest::prop_assert!(why.iter().all(|w| w.contains(": "))),
            Ok(e) => {
                let file = |n: &str| e.files.iter().find(|f| f.0 == n).map(|f| f.1.clone()).unwrap_or_default();
                let job = file("java/CkptsimJob.java");
                let mut declared = std::collections::BTreeSet::new();
                for line in job.lines() {
                    let words = line.split(|c: char| !c.is_ascii_alphanumeric());
                    let used: Vec<&str> = words
                        .filter(|w| w.len() > 2 && w.starts_with("op") && w[2..].bytes().all(|b| b.is_ascii_digit()))
                        .collect();
                    let declares = used.first().is_some_and(|v| line.contains(&format!("{v} = ")));
                    for (i, v) in used.iter().enumerate() {
                        if !(declares && i == 0) {
                            proptest::prop_assert!(declared.contains(*v), "{} read before it is declared:\n{}", v, job);
                        }
                    }
                    if declares {
                        declared.insert(used[0].to_string());
                    }
                }
                keep(&e);
                let sources = g.scenario.operators.iter().filter(|op| op.kind.is_source()).count();
                let data = e.files.iter().filter(|f| f.0.starts_with("data/")).count();
                proptest::prop_assert_eq!(data, sources);
                proptest::prop_assert!(e.manifest.crashes.len() as u64 <= 1_000);
            }
        }
    }
}

/// The release a job is for: a scenario asking for another release's task
/// thread is refused unless told otherwise, and then the mapping says so;
/// `run.sh` fetches the release asked for.
#[test]
fn the_export_targets_a_release_and_refuses_another_task_thread() {
    use ckptsim::scenario::FlinkVersion;
    let s = crate::common::load("tiny");
    assert_eq!(s.checkpoint.flink_version, FlinkVersion::V2_3);
    let mut o = options(&s);
    o.release = FlinkVersion::V2_0;
    let refused = export::export(&s, &o)
        .err()
        .expect("2.3 asked, 2.0 targeted");
    assert!(
        refused.iter().any(
            |r| r.starts_with("checkpoint.flink_version:") && r.contains("--any-flink-version")
        ),
        "{refused:?}"
    );
    o.any_version = true;
    let e = export::export(&s, &o).expect("told otherwise");
    let file = |name: &str| &e.files.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(file("run.sh").contains("version=${CKPTSIM_FLINK_VERSION:-2.0.2}"));
    assert!(file("MAPPING.md").starts_with("# tiny exported to Flink 2.0.2"));
    assert!(file("MAPPING.md").contains("| `checkpoint.flink_version` | approximate |"));
    // 2.2 behaves as 2.3 wherever the simulator models releases.
    o.any_version = false;
    o.release = FlinkVersion::V2_2;
    let e = export::export(&s, &o).expect("2.2 models as 2.3");
    let file = |name: &str| &e.files.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(file("MAPPING.md").contains("| `checkpoint.flink_version` | exact |"));
    // 2.1 does not: its readers keep an idle split's watermark.
    o.release = FlinkVersion::V2_1;
    let refused = export::export(&s, &o)
        .err()
        .expect("2.3 asked, 2.1 targeted");
    assert!(
        refused.iter().any(|r| r.contains("FLINK-38454")),
        "{refused:?}"
    );
    // No Flink 2.x job for 1.20.
    o.release = FlinkVersion::V1_20;
    assert!(export::export(&s, &o).is_err());
}

/// `run.sh` takes Flink's jars from what pip fetched: a wheel (2.2 and
/// later: `pyflink/lib/`) or a source distribution (2.0 and 2.1:
/// `deps/lib/`). Its extraction step runs here on a small fake of each.
#[test]
fn run_sh_takes_the_jars_from_a_wheel_or_a_source_distribution() {
    let s = crate::common::load("tiny");
    let e = export::export(&s, &options(&s)).expect("tiny exports");
    let run = &e.files.iter().find(|(n, _)| n == "run.sh").unwrap().1;
    let start = run.find("<<'PY'\n").expect("the extraction step") + "<<'PY'\n".len();
    let extract = &run[start..start + run[start..].find("\nPY\n").expect("its end")];
    let fake = r#"
import io, os, sys, tarfile, zipfile
home, kind = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(home, "wheel")); os.makedirs(os.path.join(home, "lib"))
if kind == "wheel":
    with zipfile.ZipFile(os.path.join(home, "wheel", "apache_flink_libraries-2.3.0-py2.py3-none-any.whl"), "w") as z:
        z.writestr("pyflink/lib/flink-dist-2.3.0.jar", "dist")
        z.writestr("pyflink/opt/flink-python-2.3.0.jar", "not on the classpath")
else:
    with tarfile.open(os.path.join(home, "wheel", "apache_flink_libraries-2.0.2.tar.gz"), "w:gz") as t:
        for name, data in [("apache_flink_libraries-2.0.2/deps/lib/flink-dist-2.0.2.jar", b"dist"),
                           ("apache_flink_libraries-2.0.2/deps/opt/flink-python-2.0.2.jar", b"no")]:
            info = tarfile.TarInfo(name); info.size = len(data)
            t.addfile(info, io.BytesIO(data))
"#;
    let dir = tempdir("run-sh-extract");
    for (kind, jar) in [
        ("wheel", "flink-dist-2.3.0.jar"),
        ("sdist", "flink-dist-2.0.2.jar"),
    ] {
        let home = dir.join(kind);
        let python = |script: &str, args: &[&str]| {
            let o = std::process::Command::new("python3")
                .arg("-c")
                .arg(script)
                .arg(&home)
                .args(args)
                .output()
                .expect("python3 (run.sh needs it too)");
            assert!(
                o.status.success(),
                "{kind}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        python(fake, &[kind]);
        python(extract, &[]);
        let lib: Vec<String> = std::fs::read_dir(home.join("lib"))
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(lib, [jar], "{kind}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
