//! The example programs under `examples/`, run as their users run them:
//! `early_snapshot` registers two algorithms of its own through
//! `cli::main_with`; every command knows them, the checks catch the wrong
//! one, and its replay lines and reproducers name the example's binary.

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
