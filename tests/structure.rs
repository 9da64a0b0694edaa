//! The code's structure as its documentation states it: the layers listed in
//! `sim/lib.rs` hold (a module names only modules of lower layers, so there
//! is no cycle), the list and the module map name every module, and the
//! links between the markdown files resolve, anchors included.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir` (or `dir` itself), sorted.
fn rust_files(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            out.extend(rust_files(&e));
        }
    } else if path.extension().is_some_and(|x| x == "rs") {
        out.push(path.to_path_buf());
    }
    out
}

/// The `pub mod` declarations of `sim/lib.rs`.
fn modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

/// The names in backticked brackets (`` [`name`] ``) of a piece of text.
fn linked_names(text: &str) -> Vec<String> {
    text.split("[`")
        .skip(1)
        .filter_map(|t| t.split_once("`]").map(|(name, _)| name.to_string()))
        .collect()
}

/// The numbered list of layers in `sim/lib.rs`'s docs: module → layer.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut items: Vec<String> = Vec::new();
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let text = doc.trim();
        let numbered = text
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered {
            items.push(text.to_string());
        } else if doc.starts_with("    ") && !items.is_empty() && !text.is_empty() {
            items.last_mut().unwrap().push_str(text);
        } else if !items.is_empty() {
            break;
        }
    }
    let mut layer = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        for name in linked_names(item) {
            assert!(
                layer.insert(name.clone(), i).is_none(),
                "{name} is in two layers"
            );
        }
    }
    layer
}

/// Rust source without its comments (line comments only: the code has no
/// block comments), so that prose naming a module is not a use of it.
fn code(source: &str) -> String {
    source
        .lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path the code names after `crate::`, grouped imports expanded one
/// level (`crate::{a::B, c}` gives `a::B` and `c`).
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `ckptsim_crate::`, not ours
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                let p: String = part.trim().chars().take_while(|&c| ident(c)).collect();
                if !p.is_empty() {
                    out.push(p);
                }
            }
        } else {
            out.push(rest.chars().take_while(|&c| ident(c)).collect());
        }
    }
    out
}

#[test]
fn modules_use_only_lower_layers() {
    let lib = read(&root().join("sim/lib.rs"));
    let layer = layers(&lib);
    let mods = modules(&lib);
    let listed: BTreeSet<&String> = layer.keys().collect();
    let declared: BTreeSet<&String> = mods.iter().collect();
    assert_eq!(
        listed, declared,
        "the layers in sim/lib.rs must list every `pub mod`, once"
    );
    let mut wrong = Vec::new();
    for m in &mods {
        let dir = root().join("sim").join(m);
        let path = if dir.is_dir() {
            dir
        } else {
            root().join(format!("sim/{m}.rs"))
        };
        let files = rust_files(&path);
        assert!(!files.is_empty(), "no source for module {m}");
        for file in files {
            let code = code(&read(&file));
            for used in crate_paths(&code) {
                let target = used.split("::").next().unwrap_or_default();
                if target == m || target.is_empty() {
                    continue;
                }
                let Some(&to) = layer.get(target) else {
                    continue; // `crate::` of a macro or a path we do not know
                };
                if to < layer[m] {
                    continue;
                }
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                wrong.push(format!(
                    "{rel}: {m} (layer {}) uses crate::{used} (layer {})",
                    layer[m] + 1,
                    to + 1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "modules using a module of the same or a higher layer (see the layers in sim/lib.rs):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_module_map_names_every_module() {
    let lib = read(&root().join("sim/lib.rs"));
    let mapped: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - "))
        .flat_map(|l| linked_names(l.split_once(':').map_or(l, |(head, _)| head)))
        .collect();
    for m in modules(&lib) {
        assert!(
            mapped.contains(&m),
            "the module map in sim/lib.rs lacks {m}"
        );
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (but `-`
/// and `_`), spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a markdown file outside fenced code blocks.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let a = anchor(heading.trim_start_matches('#'));
        let n = seen.entry(a.clone()).or_insert(0);
        out.insert(if *n == 0 {
            a.clone()
        } else {
            format!("{a}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of the inline links (`[text](target)`) of a line.
fn link_targets(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .filter(|t| !t.contains(' '))
        .collect()
}

#[test]
fn markdown_links_resolve() {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = read(file);
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                if !dest.exists() {
                    broken.push(format!("{rel}:{n}: {target}: no such file"));
                } else if !fragment.is_empty()
                    && dest.extension().is_some_and(|x| x == "md")
                    && !anchors(&read(&dest)).contains(fragment)
                {
                    broken.push(format!("{rel}:{n}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The algorithms table of docs/algorithms.md, as the registry writes it.
fn algorithms_table() -> String {
    let mut t = String::from("| name | promises | what it does | file |\n|---|---|---|---|\n");
    for a in ckptsim::protocol::Algorithm::all() {
        let promise = serde_json::to_value(a.promise()).unwrap();
        let file = a.name().replace('-', "_");
        t.push_str(&format!(
            "| [`{n}`](#{n}) | {p} | {d} | `sim/protocol/{file}.rs` |\n",
            n = a.name(),
            p = promise.as_str().unwrap(),
            d = a.info().description,
        ));
    }
    t
}

#[test]
fn the_algorithms_table_is_the_registry() {
    let doc = read(&root().join("docs/algorithms.md"));
    let want = algorithms_table();
    assert!(
        doc.contains(&want),
        "docs/algorithms.md must hold the registry's table (protocol::registry), exactly:\n\n{want}"
    );
    for a in ckptsim::protocol::Algorithm::all() {
        let file = root().join(format!("sim/protocol/{}.rs", a.name().replace('-', "_")));
        assert!(
            file.is_file(),
            "{} has no file {}",
            a.name(),
            file.display()
        );
    }
}

/// The operator kinds table of docs/operators.md, as the registry writes it.
fn operator_kinds_table() -> String {
    let mut t = String::from("| kind | keyed | what it does | file |\n|---|---|---|---|\n");
    for k in ckptsim::model::kinds::REGISTRY {
        t.push_str(&format!(
            "| `{n}` | {keyed} | {d} | `sim/model/kinds/{file}.rs` |\n",
            n = k.kind.name,
            keyed = if k.kind.keyed { "yes" } else { "no" },
            d = k.kind.description,
            file = k.kind.name.replace('-', "_"),
        ));
    }
    t
}

#[test]
fn the_operator_kinds_table_is_the_registry() {
    let doc = read(&root().join("docs/operators.md"));
    let want = operator_kinds_table();
    assert!(
        doc.contains(&want),
        "docs/operators.md must hold the registry's table (model::kinds), exactly:\n\n{want}"
    );
    for k in ckptsim::model::kinds::REGISTRY {
        let file = root().join(format!(
            "sim/model/kinds/{}.rs",
            k.kind.name.replace('-', "_")
        ));
        assert!(
            file.is_file(),
            "{} has no file {}",
            k.kind.name,
            file.display()
        );
    }
}

/// The scenarios built into the library are exactly the shipped files.
#[test]
fn the_built_in_scenarios_are_the_shipped_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let built: Vec<String> = ckptsim::scenario::shipped::SHIPPED
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(built, files, "regenerate sim/scenario/shipped.rs");
}

/// `cargo bench` runs the bench alone: every other target of the package
/// says `bench = false`, so no test harness prints "running 0 tests" for it.
#[test]
fn cargo_bench_runs_only_the_bench() {
    let manifest: toml::Table = read(&root().join("Cargo.toml")).parse().unwrap();
    let lib = manifest["lib"].as_table().unwrap();
    assert_eq!(lib.get("bench").and_then(|b| b.as_bool()), Some(false));
    for kind in ["bin", "test"] {
        for target in manifest[kind].as_array().unwrap() {
            let name = target["name"].as_str().unwrap();
            assert_eq!(
                target.get("bench").and_then(|b| b.as_bool()),
                Some(false),
                "[[{kind}]] {name}"
            );
        }
    }
    let benches = manifest["bench"].as_array().unwrap();
    assert!(benches
        .iter()
        .all(|b| b["harness"].as_bool() == Some(false)));
}

/// The module path of a source file under `sim/`:
/// `sim/runtime/world/mod.rs` is `runtime::world`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("sim")).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        segs.push(stem.to_string());
    }
    segs
}

/// Source without comments and without its test module (everything from
/// the first `#[cfg(test)]` on): what the product code names.
fn product_code(source: &str) -> String {
    let code = code(source);
    match code.find("#[cfg(test)]") {
        Some(at) => code[..at].to_string(),
        None => code,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths named at `at` in `code` (`a::b::C`, `a::{b, c::D}`, nested
/// groups expanded), each as its segments; `at` is past the last one.
fn parse_path(code: &[u8], mut at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segs = prefix.to_vec();
    loop {
        while at < code.len() && code[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < code.len() && code[at] == b'{' {
            at += 1;
            loop {
                at = parse_path(code, at, &segs, out);
                while at < code.len() && code[at] != b',' && code[at] != b'}' {
                    at += 1; // ` as Name`
                }
                if at >= code.len() || code[at] == b'}' {
                    return at + 1;
                }
                at += 1;
            }
        }
        let start = at;
        while at < code.len() && (is_ident(code[at]) || code[at] == b'*') {
            at += 1;
        }
        if start == at {
            break;
        }
        segs.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            break;
        }
    }
    if segs.len() > prefix.len() {
        out.push(segs);
    }
    at
}

/// Every path of two or more segments the code names (`use` or inline),
/// as segments: `super::World`, `crate::runtime::net::Net`, `faults::Fate`.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let starts = is_ident(bytes[at])
            && !bytes[at].is_ascii_digit()
            && (at == 0 || !(is_ident(bytes[at - 1]) || bytes[at - 1] == b':'));
        if !starts {
            at += 1;
            continue;
        }
        let mut found = Vec::new();
        let next = parse_path(bytes, at, &[], &mut found);
        out.extend(found.into_iter().filter(|p| p.len() > 1));
        at = next.max(at + 1);
    }
    out
}

/// The modules under `sim/<dir>` and, for each, the modules of the same tree
/// it names (not itself): an import graph by module path.
fn import_graph(dir: &str) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files: Vec<PathBuf> = rust_files(&root().join("sim").join(dir))
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .collect();
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_of(file);
        let mut uses = BTreeSet::new();
        for path in named_paths(&product_code(&read(file))) {
            let mut base: Vec<String> = match path[0].as_str() {
                "crate" => Vec::new(),
                "self" => me.clone(),
                "super" => me[..me.len().saturating_sub(1)].to_vec(),
                child => {
                    let mut m = me.clone();
                    m.push(child.to_string());
                    if !known.contains(&m) {
                        continue; // a type, a crate, an enum variant
                    }
                    m
                }
            };
            for seg in &path[1..] {
                if seg == "super" {
                    base.pop();
                    continue;
                }
                let mut longer = base.clone();
                longer.push(seg.clone());
                if !known.contains(&longer) {
                    break;
                }
                base = longer;
            }
            if known.contains(&base) && base != me {
                uses.insert(base);
            }
        }
        graph.insert(me, uses);
    }
    graph
}

/// A cycle of `graph`, if it has one, as the modules along it.
fn find_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        m: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        done: &mut BTreeSet<Vec<String>>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == m) {
            let mut cycle: Vec<String> = stack[at..].iter().map(|s| s.join("::")).collect();
            cycle.push(m.join("::"));
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.clone());
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(c) = visit(m, graph, &mut done, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_runtime_has_no_import_cycle() {
    let graph = import_graph("runtime");
    assert!(
        graph.len() > 30,
        "the runtime's modules were not found: {:?}",
        graph.keys()
    );
    // The finder finds what it must: world's files name `World` in
    // `world/mod.rs`, and `world/mod.rs` names the network.
    let world = vec!["runtime".to_string(), "world".to_string()];
    let task = vec!["runtime".into(), "world".into(), "task".to_string()];
    assert!(graph[&task].contains(&world), "{:?}", graph[&task]);
    assert!(graph[&world].contains(&vec!["runtime".to_string(), "net".to_string()]));
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "modules of sim/runtime import each other in a circle: {}\n\
             (a type several files share goes to a leaf module that imports none of them)",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let m = |s: &str| vec![s.to_string()];
    let mut graph = BTreeMap::new();
    graph.insert(m("a"), BTreeSet::from([m("b")]));
    graph.insert(m("b"), BTreeSet::from([m("c")]));
    graph.insert(m("c"), BTreeSet::from([m("a")]));
    graph.insert(m("d"), BTreeSet::from([m("a")]));
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    graph.get_mut(&m("c")).unwrap().clear();
    assert_eq!(find_cycle(&graph), None);
    let paths =
        named_paths("use super::{a::{B, c}, d as E};\nlet x = crate::runtime::net::Net::new();");
    let want: Vec<Vec<String>> = [
        &["super", "a", "B"][..],
        &["super", "a", "c"],
        &["super", "d"],
        &["crate", "runtime", "net", "Net", "new"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(paths, want);
}

/// The runtime and the judge ask an operator kind for its facts (the kinds
/// registry, `model/facts.rs`); neither matches on a kind, so a kind added
/// to the registry needs no edit there.
#[test]
fn the_runtime_and_the_judge_never_match_on_an_operator_kind() {
    let mut found = Vec::new();
    for dir in ["sim/runtime", "sim/check"] {
        for f in rust_files(&root().join(dir)) {
            for (i, line) in code(&read(&f)).lines().enumerate() {
                if line.contains("OperatorKind::") {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "matches on an operator kind:\n{}",
        found.join("\n")
    );
    // The scan sees what it must: the kinds module does match on kinds.
    let facts = code(&read(&root().join("sim/model/facts.rs")));
    assert!(facts.contains("OperatorKind::"), "the scan reads no code");
}
