//! The checks on real Flink: exported jobs run on Flink 2.x by their
//! `run.sh`, then judged by `ckptsim flink-check`. Not part of `cargo
//! test`: it needs a JDK, `python3` with `pip`, about 1 GB of memory and
//! minutes. It runs the `ckptsim` binary of the same build, so build that
//! first:
//!
//!   cargo build --release && cargo run --release --example real_flink
//!
//! What it shows: the deadlock reproducer freezes under unaligned and not
//! under aligned; wordcount with a crash commits exactly once;
//! checkpointing-time runs; event-time-flink's window results through two
//! crashes are the oracle's, sessions and watermark alignment finish; five
//! of the exportable mutants are caught;
//! sink-v2 and upsert pass; six generated scenarios (the same every time,
//! aligned) pass on Flink. It exits 1 at the first claim that does not
//! hold, naming it.

use ckptsim::export::{self, Options};
use ckptsim::scenario::Algorithm;
use proptest::strategy::{Strategy, ValueTree};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The `ckptsim` binary next to this example's directory
/// (`target/release/examples/real_flink` → `target/release/ckptsim`).
fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the example's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    dir.join("ckptsim")
}

fn ckptsim(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(binary())
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run `cargo build --release` first)",
                binary().display()
            )
        });
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tempdir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-flink-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the export in `out` on real Flink (its run.sh), then checks it:
/// `flink-check`'s exit code and text.
fn run_and_check(out: &Path) -> Result<(i32, String), String> {
    let run = Command::new("sh")
        .arg(out.join("run.sh"))
        .output()
        .map_err(|e| format!("run.sh: {e}"))?;
    if !run.status.success() {
        return Err(format!("run.sh: {}", String::from_utf8_lossy(&run.stderr)));
    }
    let (code, text, _) = ckptsim(&["flink-check", out.to_str().unwrap()]);
    Ok((code, text))
}

/// Exports `scenario` with `extra` flags, runs it on real Flink and checks it.
fn real_run(scenario: &str, extra: &[&str], what: &str) -> Result<(i32, String), String> {
    let out = tempdir(what);
    let dir = out.to_str().unwrap();
    let mut args = vec!["flink-export", scenario, "--out", dir];
    args.extend_from_slice(extra);
    let (code, _, err) = ckptsim(&args);
    if code != 0 {
        return Err(format!("flink-export {scenario}: {err}"));
    }
    run_and_check(&out)
}

/// A run's claim: its exit code and a line its check must print.
fn expect(what: &str, run: (i32, String), code: i32, needle: &str) -> Result<(), String> {
    let (got, text) = run;
    match got == code && text.contains(needle) {
        true => {
            println!("ok   {what}");
            Ok(())
        }
        false => Err(format!("{what}: exit {got} (expected {code}):\n{text}")),
    }
}

fn deadlock_and_shipped() -> Result<(), String> {
    let reproducer = "tests/regressions/unaligned-forced-alignment-deadlock.toml";
    let repeat = ["--repeat", "--duration", "45s"];
    let unaligned = [&["--algorithm", "unaligned"][..], &repeat].concat();
    let r = real_run(reproducer, &unaligned, "dl-u")?;
    expect(
        "deadlock reproducer, unaligned: freezes",
        r,
        1,
        "FAIL liveness: the data flow froze",
    )?;
    let aligned = [&["--algorithm", "aligned"][..], &repeat].concat();
    let r = real_run(reproducer, &aligned, "dl-a")?;
    expect("deadlock reproducer, aligned: passes", r, 0, "")?;
    let r = real_run("scenarios/wordcount.toml", &["--seed", "7"], "wc")?;
    expect(
        "wordcount seed 7: exactly once",
        r,
        0,
        "ok   exactly-once-output",
    )?;
    let r = real_run(
        "scenarios/checkpointing-time.toml",
        &["--algorithm", "unaligned"],
        "ct",
    )?;
    expect("checkpointing-time, unaligned: passes", r, 0, "")?;
    let r = real_run("tests/flink/sink-v2-crashes.toml", &["--seed", "0"], "v2")?;
    expect("sink-v2 with crashes: passes", r, 0, "")?;
    let r = real_run("scenarios/upsert.toml", &["--seed", "1"], "upsert")?;
    expect("upsert: passes", r, 0, "")
}

/// Event time on Flink's own watermarks, windows and timers: the window
/// results of `event-time-flink` (no record can be late) are the oracle's,
/// value by value, through two crashes; sessions with late records and
/// watermark alignment with idleness finish (their sinks are not judged:
/// which records are late is the real run's timing).
fn event_time() -> Result<(), String> {
    let r = real_run("scenarios/event-time-flink.toml", &["--seed", "14"], "et")?;
    expect(
        "event-time-flink seed 14: the oracle's window results",
        r,
        0,
        "every sink committed exactly the failure-free run's records, by key and value",
    )?;
    let r = real_run(
        "scenarios/event-time-sessions.toml",
        &["--seed", "1"],
        "ets",
    )?;
    expect("event-time-sessions: finishes", r, 0, "ok   liveness")?;
    let r = real_run(
        "scenarios/event-time-alignment.toml",
        &["--seed", "1"],
        "eta",
    )?;
    expect("event-time-alignment: finishes", r, 0, "ok   liveness")
}

/// The mutants that carry over to the Java job, each caught on Flink by
/// the check that catches it in the simulator.
fn mutants() -> Result<(), String> {
    let mutants = [
        (
            "tests/flink/sink-v2-crashes.toml",
            "0",
            "writer-keeps-last-transaction",
        ),
        ("scenarios/checkmate.toml", "0", "window-no-flush-at-end"),
        ("scenarios/wordcount.toml", "7", "source-offset-off-by-one"),
        ("scenarios/wordcount.toml", "7", "no-source-rewind"),
        ("scenarios/upsert.toml", "1", "upsert-batch-reordered"),
    ];
    for (scenario, seed, mutant) in mutants {
        let r = real_run(scenario, &["--seed", seed, "--mutant", mutant], mutant)?;
        expect(
            &format!("mutant {mutant}: caught"),
            r,
            1,
            "FAIL exactly-once-output",
        )?;
    }
    Ok(())
}

/// Generated scenarios (the same ones every time): each exported job keeps
/// its promises on Flink as in the simulator. Aligned: under unaligned
/// checkpoints the third of them hits the split loss of
/// reports/findings/flink-split-loss in about one run in five.
fn generated() -> Result<(), String> {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = ckptsim::strategies::scenario(Algorithm::Aligned);
    let mut ran = 0;
    while ran < 6 {
        let g = strategy.new_tree(&mut runner).unwrap().current();
        let s = &g.scenario;
        let o = Options::new(s.replay.seed, Algorithm::Aligned);
        let Ok(e) = export::export(s, &o) else {
            continue;
        };
        let out = tempdir(&format!("generated-{ran}"));
        for (name, text) in &e.files {
            let p = out.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let r = run_and_check(&out)?;
        expect(&format!("generated scenario {}: passes", s.name), r, 0, "")?;
        ran += 1;
    }
    Ok(())
}

fn main() -> ExitCode {
    match deadlock_and_shipped()
        .and_then(|()| event_time())
        .and_then(|()| mutants())
        .and_then(|()| generated())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("FAIL {e}");
            ExitCode::FAILURE
        }
    }
}
