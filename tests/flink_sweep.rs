//! `ckptsim flink-sweep`: a recorded differential sweep (`tests/flink/sweep/`:
//! the first two cases of a 300-case sweep, each run on Flink 2.0.2 and
//! 2.3.0) classified without a JVM (`--no-run`); its folder, its lines, its
//! refusals; and the events a crash is placed at on Flink.

use crate::common::{ckptsim, stderr, stdout};
use crate::flink::{copy, tempdir};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/flink/sweep")
}

fn lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_recorded_sweep_is_classified_without_a_jvm() {
    let dir = tempdir("flink-sweep-recorded");
    copy(&fixture(), &dir);
    let d = dir.display().to_string();
    let out = ckptsim(&[
        "flink-sweep",
        "--out",
        &d,
        "--cases",
        "2",
        "--seed",
        "0",
        "--no-run",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let recorded = lines(&dir);
    assert_eq!(recorded.len(), 2);
    for (l, case) in recorded.iter().zip(["0000-aligned", "0001-unaligned"]) {
        assert_eq!(l["case"], case);
        assert_eq!(l["class"], "agree-pass", "{l}");
        for release in ["2.0.2", "2.3.0"] {
            assert_eq!(l["releases"][release]["verdict"], "pass", "{l}");
            assert_eq!(l["simulated"][release]["verdict"], "pass", "{l}");
            // The metrics both sides report, simulated against real.
            assert!(
                !l["fidelity"][release].as_array().unwrap().is_empty(),
                "{l}"
            );
        }
        assert_eq!(l["sweep"]["seed"], 0);
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("| agree-pass | 2 |"), "{summary}");
    assert!(summary.contains("## Disagreements (0)"), "{summary}");
    assert!(stdout(&out).contains("agree-pass: 2"), "{}", stdout(&out));
    // A real run that says otherwise is a disagreement: exit 1, a RERUN.md.
    let run = dir.join("cases/0001-unaligned/2.3.0/real/run.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    v["ended"] = "failed".into();
    std::fs::write(&run, v.to_string()).unwrap();
    let out = ckptsim(&[
        "flink-sweep",
        "--out",
        &d,
        "--cases",
        "2",
        "--seed",
        "0",
        "--no-run",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let l = &lines(&dir)[1];
    assert_eq!(l["class"], "releases-differ", "{l}");
    let rerun = std::fs::read_to_string(dir.join("cases/0001-unaligned/RERUN.md")).unwrap();
    assert!(
        rerun.contains("cases/0001-unaligned/2.3.0/run.sh"),
        "{rerun}"
    );
    assert!(!dir.join("cases/0000-aligned/RERUN.md").exists());
}

#[test]
fn a_folder_of_another_sweep_or_of_something_else_is_refused() {
    let dir = tempdir("flink-sweep-other");
    copy(&fixture(), &dir);
    let d = dir.display().to_string();
    let out = ckptsim(&[
        "flink-sweep",
        "--out",
        &d,
        "--cases",
        "1",
        "--seed",
        "1",
        "--no-run",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds a sweep with other parameters"),
        "{}",
        stderr(&out)
    );
    let foreign = tempdir("flink-sweep-foreign");
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let f = foreign.display().to_string();
    let out = ckptsim(&["flink-sweep", "--out", &f, "--cases", "1", "--no-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
    for bad in [
        &["--release", "1.20"][..],
        &["--algorithm", "chandy-lamport"],
        &["--jobs", "0"],
    ] {
        let mut args = vec!["flink-sweep", "--out", &f, "--no-run"];
        args.extend(bad);
        assert_eq!(ckptsim(&args).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn a_fresh_sweep_without_runs_exports_every_case_for_every_release() {
    let dir = tempdir("flink-sweep-fresh");
    let d = dir.display().to_string();
    let out = ckptsim(&[
        "flink-sweep",
        "--out",
        &d,
        "--cases",
        "4",
        "--seed",
        "5",
        "--no-run",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fresh = lines(&dir);
    assert_eq!(fresh.len(), 4);
    for l in &fresh {
        assert_eq!(l["class"], "incomplete", "{l}");
        let case = l["case"].as_str().unwrap();
        for release in ["2.0.2", "2.3.0"] {
            let export = dir.join("cases").join(case).join(release);
            assert!(export.join("run.sh").is_file());
            let s = std::fs::read_to_string(export.join("scenario.toml")).unwrap();
            let minor = &release[..3];
            assert!(s.contains(&format!("flink_version = \"{minor}\"")), "{s}");
            assert_eq!(l["releases"][release]["verdict"], "not-run");
            assert_eq!(l["simulated"][release]["verdict"], "pass", "{l}");
        }
    }
}

/// The exported job places each crash at the event the simulated run had
/// it at: `batching` at seed 34 crashes map[0] 16 records after its first
/// snapshot, which the Java job counts (`Crash.snapshot`).
#[test]
fn a_crash_is_exported_at_its_event() {
    let scenario = crate::common::load("batching");
    let opts = ckptsim::export::Options::new(34, scenario.checkpoint.algorithm);
    let e = ckptsim::export::export(&scenario, &opts).unwrap();
    let first = &e.manifest.crashes[0];
    let a = &first.anchors[0];
    assert_eq!((a.nth, a.records), (1, 16), "{:?}", first.anchors);
    let job = &e
        .files
        .iter()
        .find(|(n, _)| n == "java/CkptsimJob.java")
        .unwrap()
        .1;
    assert!(job.contains("\"0:0:536:s:1:16;1:1:116\""), "{job}");
    let mapping = &e.files.iter().find(|(n, _)| n == "MAPPING.md").unwrap().1;
    assert!(mapping.contains("stands still for the delay"), "{mapping}");
}
