//! Triage: failing seeds grouped by cause (the abstracted fault and
//! recovery events before their first violation) beside the grouping by
//! message shape; `sweep --shrink-failures` writes one reproducer per
//! cause, each replayed here as printed.

use crate::common::load;
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::sweep::{self, SeedRange, Shard, SweepSpec, SweepSummary};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

/// wordcount under `no-source-rewind`: sources keep their pre-failure
/// offsets on restore, so every seed whose crash took effect fails
/// exactly-once-output, after a restart from a checkpoint or from scratch.
fn spec(seeds: std::ops::Range<u64>) -> SweepSpec {
    let sc = load("wordcount");
    SweepSpec {
        algorithm: sc.checkpoint.algorithm,
        scenario: sc,
        path: "scenarios/wordcount.toml".to_string(),
        seeds: SeedRange {
            start: seeds.start,
            end: seeds.end,
        },
        shard: None,
        mutants: Mutants::NONE.with(Mutant::NoSourceRewind),
        swarm: None,
        check_determinism: false,
        guided: None,
    }
}

fn quiet(_: u64, _: bool) {}

/// The cause group of `seed`.
fn group_of(s: &SweepSummary, seed: u64) -> usize {
    let at = s.cause_groups.iter().position(|g| g.seeds.contains(&seed));
    at.unwrap_or_else(|| panic!("seed {seed} is in no cause group"))
}

#[test]
fn causes_separate_what_shapes_merge_and_merge_what_shapes_separate() {
    let results = sweep::run(&spec(0..30), 2, &quiet);
    let s = SweepSummary::of(&results).unwrap();
    assert!(s.seeds_failed >= 10, "{} failing seeds", s.seeds_failed);
    for r in &results {
        assert_eq!(
            r.cause.is_some(),
            !r.passed,
            "seed {}: a cause iff it failed",
            r.seed
        );
    }
    let grouped: usize = s.cause_groups.iter().map(|g| g.seeds.len()).sum();
    assert_eq!(
        grouped as u64, s.seeds_failed,
        "every failing seed in one group"
    );

    // The same cause, a first message of another shape: seeds 0 and 8 lost
    // records after a crash between checkpoints and a restart from a
    // checkpoint, but their messages name different examples.
    let shape_of = |seed| {
        s.failure_groups
            .iter()
            .position(|g| g.seeds.contains(&seed))
    };
    assert_ne!(shape_of(0), shape_of(8), "two message shapes");
    assert_eq!(group_of(&s, 0), group_of(&s, 8), "one cause");
    assert_eq!(
        s.cause_groups[group_of(&s, 0)].events,
        ["a crash between checkpoints", "restart from checkpoint N"]
    );

    // The same checks and message shape, different causes: seed 19 lost
    // its records after a restart from scratch, seed 8 after a restart
    // from a checkpoint, seed 21 after a crash during a checkpoint.
    assert_eq!(shape_of(8), shape_of(19), "one message shape");
    let groups: BTreeSet<usize> = [8, 19, 21].iter().map(|&seed| group_of(&s, seed)).collect();
    assert_eq!(groups.len(), 3, "three causes: {:#?}", s.cause_groups);
    assert_eq!(
        s.cause_groups[group_of(&s, 19)].events,
        ["a crash between checkpoints", "restart from scratch"]
    );
    assert_eq!(
        s.cause_groups[group_of(&s, 21)].events,
        ["a crash during a checkpoint", "restart from checkpoint N"]
    );

    // In the text, with the events listed under each group; no event is
    // in all three causes.
    let text = s.to_text(None);
    assert!(text.contains("failure causes"), "{text}");
    assert!(text.contains("    - restart from scratch"), "{text}");
    assert!(!text.contains("every cause includes"), "{text}");
}

#[test]
fn causes_do_not_depend_on_jobs_or_shards() {
    let whole = spec(10..24);
    let one = sweep::run(&whole, 1, &quiet);
    let two = sweep::run(&whole, 2, &quiet);
    assert_eq!(one, two, "--jobs 1 and --jobs 2 give the same lines");
    let summary = SweepSummary::of(&one).unwrap();
    assert!(summary.cause_groups.len() >= 2);
    // Shards written as lines and read back: the same groups.
    let mut merged = Vec::new();
    for i in 0..2 {
        let shard = SweepSpec {
            shard: Some(Shard { index: i, count: 2 }),
            ..whole.clone()
        };
        let text: String = sweep::run(&shard, 2, &quiet)
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        assert!(text.contains("\"cause\":[\"a crash "), "lines carry causes");
        merged.extend(sweep::read_jsonl("shard.jsonl", &text).unwrap());
    }
    assert_eq!(
        SweepSummary::of(&merged).unwrap().cause_groups,
        summary.cause_groups
    );
}

fn ckptsim(args: &[&str]) -> Output {
    crate::common::ckptsim_command()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-triage-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

const SWEEP: [&str; 6] = [
    "sweep",
    "scenarios/wordcount.toml",
    "--mutant",
    "no-source-rewind",
    "--seeds",
    "19..22",
];

#[test]
fn shrink_failures_writes_reproducers_that_replay_as_printed() {
    let dir = temp("repro");
    let shown = dir.display().to_string();
    let mut args = SWEEP.to_vec();
    args.extend([
        "--shrink-failures",
        "--repro-dir",
        &shown,
        "--shrink-budget",
        "60",
        "--json",
    ]);
    let o = ckptsim(&args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let groups = v["summary"]["cause_groups"].as_array().unwrap();
    let reps = v["reproducers"].as_array().unwrap();
    assert!(groups.len() >= 2, "{v}");
    assert_eq!(reps.len(), groups.len(), "one reproducer per cause");
    for (g, r) in groups.iter().zip(reps) {
        assert_eq!(r["seed"], g["seeds"][0], "the group's lowest seed");
        let replay = r["replay"]
            .as_str()
            .unwrap_or_else(|| panic!("not shrunk: {r}"));
        let path = r["path"].as_str().unwrap();
        assert!(Path::new(path).starts_with(&dir));
        // The command as printed (its program is the binary under test).
        let words: Vec<&str> = replay.split(' ').collect();
        assert_eq!(words[..2], ["ckptsim", "run"]);
        let replayed = ckptsim(&words[1..]);
        assert_eq!(replayed.status.code(), Some(1), "{replay} fails");
        let mut json = words[1..].to_vec();
        json.push("--json");
        let run: serde_json::Value = serde_json::from_slice(&ckptsim(&json).stdout).unwrap();
        let failed: Vec<&str> = run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["passed"] == false)
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let fails: Vec<&str> = r["fails"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(failed, fails, "{replay} fails the same checks as the seed");
        // A shrunk reproducer keeps its cause's restart.
        let events = r["events"].as_array().unwrap();
        assert!(
            events
                .iter()
                .any(|e| e.as_str().unwrap().starts_with("restart from")),
            "{r}"
        );
    }
    // The text names each reproducer and its replay.
    std::fs::remove_dir_all(&dir).ok();
    let mut args = SWEEP.to_vec();
    args.extend([
        "--shrink-failures",
        "--repro-dir",
        &shown,
        "--shrink-budget",
        "10",
    ]);
    let text = String::from_utf8(ckptsim(&args).stdout).unwrap();
    assert!(
        text.contains("reproducers  one seed per failure cause shrunk"),
        "{text}"
    );
    assert!(
        text.contains(&format!("    replay  ckptsim run {shown}/cause-1-seed-")),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shrink_failures_refuses_folders_it_must_not_write() {
    let refused = |extra: &[&str], why: &str| {
        let mut args = SWEEP.to_vec();
        args.push("--shrink-failures");
        args.extend(extra);
        let o = ckptsim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(o.stdout.is_empty(), "refused before the sweep ran");
    };
    refused(&[], "needs a folder for the reproducers");
    let full = temp("full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("notes.txt"), "mine").unwrap();
    refused(
        &["--repro-dir", full.to_str().unwrap()],
        "exists and is not empty",
    );
    let link = temp("link");
    let empty = temp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::os::unix::fs::symlink(&empty, &link).unwrap();
    refused(
        &["--repro-dir", link.to_str().unwrap()],
        "is a symbolic link",
    );
    // The default folder sits next to --out FILE.
    let out = full.join("results.jsonl");
    std::fs::create_dir_all(full.join("results.repro")).unwrap();
    std::fs::write(full.join("results.repro/x"), "").unwrap();
    refused(
        &["--out", out.to_str().unwrap()],
        "results.repro: exists and is not empty",
    );
    assert_eq!(
        std::fs::read_to_string(full.join("notes.txt")).unwrap(),
        "mine"
    );
    for d in [full, link, empty] {
        std::fs::remove_file(&d).ok();
        std::fs::remove_dir_all(&d).ok();
    }
}
