//! The example programs under `examples/`, run as their users run them:
//! `early_snapshot` registers two algorithms of its own, `dedup` and
//! `orders` an operator kind of their own through `cli::main_with`; every command knows
//! them, the checks catch the wrong variants, and replay lines and
//! reproducers name the example's binary.

use std::path::PathBuf;
use std::process::{Command, Output};

/// An example's binary, built by `cargo test` next to the `ckptsim` one.
fn example(name: &str) -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ckptsim"));
    bin.parent().unwrap().join("examples").join(name)
}

fn run(program: &std::path::Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_users_algorithms_run_through_every_command() {
    let bin = example("early_snapshot");
    let shown = bin.display().to_string();
    let list = text(&run(&bin, &["list"]));
    assert!(
        list.contains("aligned-again") && list.contains("early-snapshot"),
        "{list}"
    );

    // The correct variant passes; the early snapshot is caught, and each
    // failing seed's replay line runs this binary and fails again.
    let good = run(
        &bin,
        &[
            "sweep",
            "scenarios/alignment-crash.toml",
            "--algorithm",
            "aligned-again",
            "--seeds",
            "0..12",
        ],
    );
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    let bad = run(
        &bin,
        &[
            "sweep",
            "scenarios/alignment-crash.toml",
            "--algorithm",
            "early-snapshot",
            "--seeds",
            "0..12",
        ],
    );
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let out = text(&bad);
    assert!(out.contains("consistent-cut"), "{out}");
    let replay = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&format!("{shown} run ")))
        .unwrap_or_else(|| panic!("no replay line naming {shown}:\n{out}"));
    let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
    assert_eq!(run(&bin, &args).status.code(), Some(1), "{replay}");
    assert!(args
        .windows(2)
        .any(|w| w == ["--algorithm", "early-snapshot"]));

    // Shrinking works on it too, and says how to replay with this binary.
    let dir = std::env::temp_dir().join(format!("ckptsim-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let repro = dir.join("repro.toml").display().to_string();
    let seed = args[args.iter().position(|a| *a == "--seed").unwrap() + 1];
    let shrunk = run(
        &bin,
        &[
            "shrink",
            "scenarios/alignment-crash.toml",
            "--algorithm",
            "early-snapshot",
            "--seed",
            seed,
            "--out",
            &repro,
            "--budget",
            "60",
        ],
    );
    assert_eq!(
        shrunk.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shrunk.stderr)
    );
    let report = text(&shrunk);
    let replay = report
        .lines()
        .find_map(|l| l.strip_prefix("replay       "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        replay.starts_with(&format!("{shown} run {repro}")),
        "{replay}"
    );
    let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
    assert_eq!(run(&bin, &args).status.code(), Some(1), "{replay}");

    // compare puts them side by side with a built-in.
    let report_dir = dir.join("compare").display().to_string();
    let compared = run(
        &bin,
        &[
            "compare",
            "scenarios/alignment-crash.toml",
            "--algorithms",
            "aligned,early-snapshot",
            "--seeds",
            "0..3",
            "--out",
            &report_dir,
        ],
    );
    assert!(
        compared.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&compared.stderr)
    );
    let readme = std::fs::read_to_string(dir.join("compare/README.md")).unwrap();
    assert!(readme.contains("early-snapshot"));
    std::fs::remove_dir_all(&dir).ok();

    // The plain ckptsim binary does not know them.
    let plain = run(
        std::path::Path::new(env!("CARGO_BIN_EXE_ckptsim")),
        &[
            "run",
            "scenarios/alignment-crash.toml",
            "--algorithm",
            "early-snapshot",
        ],
    );
    assert_eq!(plain.status.code(), Some(2));
}

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_users_operator_kind_runs_through_every_command() {
    let bin = example("dedup");
    let shown = bin.display().to_string();
    let list = text(&run(&bin, &["list"]));
    assert!(list.contains("dedup"), "{list}");

    // The full snapshot passes under crashes; the delta snapshot is caught.
    let good = run(&bin, &["sweep", "examples/dedup.toml", "--seeds", "0..40"]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    let bad = run(
        &bin,
        &["sweep", "examples/dedup-delta.toml", "--seeds", "0..40"],
    );
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let out = text(&bad);
    assert!(out.contains("failing exactly-once-output"), "{out}");
    let shrink = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("shrink  "))
        .unwrap_or_else(|| panic!("no shrink line:\n{out}"));
    assert!(shrink.starts_with(&format!("{shown} shrink ")), "{shrink}");

    // Shrinking keeps the kind and its params; the reproducer fails alone.
    let dir = scratch("dedup");
    let repro = dir.join("repro.toml").display().to_string();
    let mut args: Vec<&str> = shrink.split_whitespace().skip(1).collect();
    let out_at = args.iter().position(|a| *a == "--out").unwrap();
    args[out_at + 1] = &repro;
    args.extend(["--budget", "60"]);
    let shrunk = run(&bin, &args);
    assert_eq!(shrunk.status.code(), Some(0), "{}", stderr(&shrunk));
    let written = std::fs::read_to_string(&repro).unwrap();
    assert!(written.contains("kind = \"dedup\""), "{written}");
    assert!(written.contains("snapshot = \"delta\""), "{written}");
    assert_eq!(run(&bin, &["run", &repro]).status.code(), Some(1));

    // compare varies the kind's parameter.
    let report = dir.join("compare").display().to_string();
    let compared = run(
        &bin,
        &[
            "compare",
            "examples/dedup.toml",
            "--algorithms",
            "aligned",
            "--vary",
            "operators.dedup.params.snapshot=full,delta",
            "--seeds",
            "0..6",
            "--out",
            &report,
        ],
    );
    assert!(
        compared.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&compared)
    );
    let readme = std::fs::read_to_string(dir.join("compare/README.md")).unwrap();
    assert!(readme.contains("| aligned | full |"), "{readme}");
    assert!(readme.contains("| aligned | delta |"), "{readme}");

    // Savepoints keep its bytes and restore them at the same parallelism.
    let sp = dir.join("sp").display().to_string();
    let taken = run(
        &bin,
        &[
            "savepoint",
            "examples/dedup.toml",
            "--at",
            "60ms",
            "--out",
            &sp,
        ],
    );
    assert_eq!(taken.status.code(), Some(0), "{}", stderr(&taken));
    let resumed = run(
        &bin,
        &["run", "examples/dedup.toml", "--from-savepoint", &sp],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let rescaled = run(
        &bin,
        &[
            "run",
            "examples/dedup.toml",
            "--from-savepoint",
            &sp,
            "--parallelism",
            "dedup=3",
        ],
    );
    assert_eq!(rescaled.status.code(), Some(2));
    assert!(
        stderr(&rescaled)
            .contains("operator `dedup` of kind `dedup` was snapshotted at parallelism 2, not 3"),
        "{}",
        stderr(&rescaled)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `params.state = "union"`: dedup's pairs in union list state, which
/// ckptsim redistributes itself, so its savepoints restore at another
/// parallelism; its buggy `delta` snapshot is still caught and shrunk.
#[test]
fn a_users_operator_kind_with_union_list_state_rescales() {
    let bin = example("dedup");
    let good = run(
        &bin,
        &["sweep", "examples/dedup-union.toml", "--seeds", "0..40"],
    );
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    let dir = scratch("dedup-union");
    let delta = dir.join("dedup-union-delta.toml");
    let text_of = std::fs::read_to_string("examples/dedup-union.toml").unwrap();
    std::fs::write(
        &delta,
        text_of.replace("snapshot = \"full\"", "snapshot = \"delta\""),
    )
    .unwrap();
    let delta = delta.display().to_string();
    let bad = run(&bin, &["sweep", &delta, "--seeds", "0..40"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let out = text(&bad);
    let shrink = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("shrink  "))
        .unwrap_or_else(|| panic!("no shrink line:\n{out}"));
    let repro = dir.join("repro.toml").display().to_string();
    let mut args: Vec<&str> = shrink.split_whitespace().skip(1).collect();
    let out_at = args.iter().position(|a| *a == "--out").unwrap();
    args[out_at + 1] = &repro;
    args.extend(["--budget", "60"]);
    let shrunk = run(&bin, &args);
    assert_eq!(shrunk.status.code(), Some(0), "{}", stderr(&shrunk));
    let written = std::fs::read_to_string(&repro).unwrap();
    assert!(written.contains("state = \"union\""), "{written}");
    assert_eq!(run(&bin, &["run", &repro]).status.code(), Some(1));

    // A savepoint restores at the old parallelism and at others.
    let sp = dir.join("sp").display().to_string();
    let at = ["savepoint", "examples/dedup-union.toml", "--at", "60ms"];
    let taken = run(&bin, &[&at[..], &["--out", &sp]].concat());
    assert_eq!(taken.status.code(), Some(0), "{}", stderr(&taken));
    for p in ["dedup=2", "dedup=3", "dedup=1"] {
        let resumed = run(
            &bin,
            &[
                "run",
                "examples/dedup-union.toml",
                "--from-savepoint",
                &sp,
                "--parallelism",
                p,
            ],
        );
        assert_eq!(resumed.status.code(), Some(0), "{p}: {}", text(&resumed));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `orders`: a keyed two-input kind whose state is a `ValueState` of a
/// serde struct. It passes under crashes; a savepoint of it restores at
/// other parallelisms (its key groups move) and the judge passes; its
/// variant that counts payments outside its keyed state is caught, in a
/// sweep and across a rescale.
#[test]
fn a_users_keyed_two_input_kind_rescales_from_a_savepoint() {
    let bin = example("orders");
    let good = run(&bin, &["sweep", "examples/orders.toml", "--seeds", "0..40"]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    let dir = scratch("orders");
    let sp = dir.join("sp").display().to_string();
    let at = ["savepoint", "examples/orders.toml", "--at", "30ms"];
    let taken = run(&bin, &[&at[..], &["--out", &sp]].concat());
    assert_eq!(taken.status.code(), Some(0), "{}", stderr(&taken));
    let verified = run(&bin, &["verify-snapshot", &sp]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    for (p, note) in [
        ("open=3", Some("open: parallelism 2 → 3")),
        ("open=1", Some("open: parallelism 2 → 1")),
        ("open=2", None),
    ] {
        // Seed 1 crashes the restored job too.
        let args = ["run", "examples/orders.toml", "--from-savepoint", &sp];
        let more = ["--parallelism", p, "--seed", "1"];
        let resumed = run(&bin, &[&args[..], &more[..]].concat());
        let out = text(&resumed);
        assert_eq!(resumed.status.code(), Some(0), "{p}: {out}");
        assert!(out.contains("verdict      PASS"), "{p}: {out}");
        assert!(out.contains("keyed entries compared: 40"), "{p}: {out}");
        if let Some(note) = note {
            let err = stderr(&resumed);
            assert!(err.contains(note), "{p}: {err}");
        }
    }

    // Payments counted in a field of the operator are lost at a restore.
    let field = dir.join("orders-field.toml");
    let text_of = std::fs::read_to_string("examples/orders.toml").unwrap();
    let wrong = text_of.replace("payments = \"state\"", "payments = \"field\"");
    assert_ne!(wrong, text_of);
    std::fs::write(&field, wrong).unwrap();
    let field = field.display().to_string();
    let bad = run(&bin, &["sweep", &field, "--seeds", "0..40"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let out = text(&bad);
    assert!(out.contains("exactly-once-output"), "{out}");
    let sp_field = dir.join("sp-field").display().to_string();
    let at = ["savepoint", &field, "--at", "30ms", "--out", &sp_field];
    assert_eq!(run(&bin, &at).status.code(), Some(0));
    let args = ["run", &field, "--from-savepoint", &sp_field];
    let rescaled = run(&bin, &[&args[..], &["--parallelism", "open=3"]].concat());
    let out = text(&rescaled);
    assert_eq!(rescaled.status.code(), Some(1), "{out}");
    assert!(out.contains("state                FAIL"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_users_operator_kind_checks_its_params_where_they_are_written() {
    let bin = example("dedup");
    let dir = scratch("dedup-params");
    let base = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/dedup.toml"),
    )
    .unwrap();
    let line = base
        .lines()
        .position(|l| l.starts_with("params = "))
        .unwrap()
        + 1;
    let cases = [
        (
            "params = { snapshot = \"delta\" }",
            "params = { snapshot = \"half\" }",
            format!(".toml:{line}:23: error: `snapshot` is \"full\" or \"delta\", not \"half\""),
        ),
        (
            "params = { snapshot = \"delta\" }",
            "params = { snapshot = \"full\", ttl = 3 }",
            format!(
                ".toml:{line}:37: error: unknown parameter `ttl` of dedup (known: snapshot, state)"
            ),
        ),
        (
            "kind = \"dedup\"",
            "kind = \"dedupe\"",
            "error: unknown operator kind `dedupe`".to_string(),
        ),
        (
            "kind = \"dedup\"",
            "kind = \"map\"",
            "error: key `params` does not apply to an operator of kind `map`".to_string(),
        ),
    ];
    for (i, (from, to, expected)) in cases.iter().enumerate() {
        let text = base
            .replace(
                "params = { snapshot = \"full\" }",
                "params = { snapshot = \"delta\" }",
            )
            .replace(from, to);
        let file = dir.join(format!("case-{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = run(&bin, &["run", &file.display().to_string()]);
        assert_eq!(out.status.code(), Some(2), "{to}");
        let err = stderr(&out);
        assert!(
            err.contains(expected.as_str()),
            "{to}: expected `{expected}` in\n{err}"
        );
    }
    // An unknown kind lists the registered one and suggests it.
    let file = dir.join("case-2.toml").display().to_string();
    let err = stderr(&run(&bin, &["run", &file]));
    assert!(err.contains("did you mean `dedup`?"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `mutants FILE` from a user's program (its own operator kind in the
/// file): ckptsim's mutants run over the user's scenario, and a kill's
/// replay line names this program and runs as printed.
#[test]
fn mutants_run_over_a_users_scenario_from_the_users_program() {
    let bin = example("dedup");
    let o = run(
        &bin,
        &[
            "mutants",
            "examples/dedup.toml",
            "--only",
            "no-source-rewind",
            "--seeds",
            "0..20",
            "--shrink-budget",
            "0",
            "--jobs",
            "2",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &m["rows"][0];
    assert_eq!(row["killed"], true, "{m}");
    assert_eq!(row["scenario"], "examples/dedup.toml");
    let replay = row["replay"].as_str().unwrap();
    assert!(
        replay.starts_with(&format!(
            "{} run examples/dedup.toml --seed ",
            bin.display()
        )),
        "{replay}"
    );
    let again = Command::new("sh")
        .args(["-c", replay])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{replay}: {}", text(&again));
}

/// Every command an example's header shows (`cargo run --release --example
/// NAME -- ARGS`) is one its binary accepts and runs: exit 0 or 1, never 2.
/// Seed ranges shrink to three seeds and `--out` goes to a scratch folder
/// (a later `--from-savepoint` of that folder follows it), so the test
/// runs each line quickly; a line with a placeholder (`SEED`)
/// is left to its reader.
#[test]
fn the_commands_in_example_headers_run() {
    let dir = scratch("headers");
    let mut ran = 0;
    for file in ["dedup", "early_snapshot", "orders"] {
        // A folder a line writes, and where this test put it instead.
        let mut moved = std::collections::BTreeMap::new();
        let source =
            std::fs::read_to_string(format!("{}/examples/{file}.rs", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let prefix = format!("cargo run --release --example {file} -- ");
        for line in source.lines().filter_map(|l| l.strip_prefix("//!")) {
            let Some(args) = line.trim().strip_prefix(&prefix) else {
                continue;
            };
            let mut args: Vec<String> = args.split_whitespace().map(String::from).collect();
            if args.iter().any(|a| a == "SEED") {
                continue;
            }
            for i in 1..args.len() {
                match args[i - 1].as_str() {
                    "--seeds" => args[i] = "0..3".to_string(),
                    "--out" => {
                        let to = dir.join(format!("out-{ran}")).display().to_string();
                        moved.insert(std::mem::replace(&mut args[i], to.clone()), to);
                    }
                    "--from-savepoint" => {
                        if let Some(to) = moved.get(&args[i]) {
                            args[i] = to.clone();
                        }
                    }
                    _ => {}
                }
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&example(file), &args);
            assert!(
                matches!(o.status.code(), Some(0 | 1)),
                "{file}: {line}\n{}",
                stderr(&o)
            );
            ran += 1;
        }
    }
    assert!(ran >= 9, "only {ran} header commands found");
    std::fs::remove_dir_all(&dir).ok();
}
