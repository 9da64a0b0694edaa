//! Deliberate bugs must be caught. Each test switches a mutant on and looks
//! for the first seed the checkers reject, within a small budget; the same
//! seeds pass without the mutant (so the failure is the mutant's doing).

use crate::common::{check, failed_checks, load};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::Guarantee;

/// The first seed in `0..budget` at which `mutant` fails the run, and the
/// checks that failed.
fn first_kill(name: &str, mutant: Mutant, budget: u64) -> (u64, Vec<&'static str>, Guarantee) {
    let sc = load(name);
    for seed in 0..budget {
        let e = check(&sc, seed, &[mutant]);
        if !e.verdict.passed {
            let clean = check(&sc, seed, &[]);
            assert!(
                clean.verdict.passed,
                "seed {seed} fails without the mutant too"
            );
            return (seed, failed_checks(&e), e.verdict.guarantee);
        }
    }
    panic!("mutant {} survived {budget} seeds of {name}", mutant.name());
}

#[test]
fn source_that_does_not_rewind_loses_records() {
    let (_, failed, guarantee) = first_kill("wordcount", Mutant::NoSourceRewind, 50);
    assert!(failed.contains(&"exactly-once-output"), "{failed:?}");
    assert!(
        matches!(guarantee, Guarantee::AtMostOnce | Guarantee::Broken),
        "{guarantee:?}"
    );
}

#[test]
fn sink_committing_at_the_barrier_duplicates_output() {
    let (_, failed, guarantee) = first_kill("wordcount", Mutant::SinkCommitOnBarrier, 100);
    assert!(failed.contains(&"exactly-once-output"), "{failed:?}");
    assert_eq!(guarantee, Guarantee::AtLeastOnce);
}

#[test]
fn aligned_handler_that_does_not_block_breaks_the_cut() {
    let (_, failed, _) = first_kill("backpressure", Mutant::AlignedNoBlock, 10);
    assert!(failed.contains(&"consistent-cut"), "{failed:?}");
}

#[test]
fn aligned_barrier_overtaking_data_breaks_the_cut() {
    let (_, failed, _) = first_kill("alignment-crash", Mutant::AlignedPriorityBarrier, 10);
    assert!(failed.contains(&"consistent-cut"), "{failed:?}");
}

#[test]
fn coordinator_completing_with_a_missing_ack_is_caught() {
    let (_, failed, _) = first_kill("alignment-crash", Mutant::CompleteWithMissingAck, 10);
    assert!(failed.contains(&"consistent-cut"), "{failed:?}");
}

/// The kill matrix on a bounded budget: every registered mutant is killed
/// within the first 200 seeds of the scenarios it applies to, by the check
/// the registry names, in a run that passes without the mutant.
#[test]
fn kill_matrix_kills_every_mutant_on_a_bounded_budget() {
    use ckptsim::killmatrix::{build, KillSpec};
    use ckptsim::sweep::SeedRange;
    let dir = crate::common::scenario_path("x")
        .parent()
        .unwrap()
        .to_path_buf();
    let spec = KillSpec {
        seeds: SeedRange { start: 0, end: 200 },
        jobs: 2,
        shrink_budget: 0,
        only: Vec::new(),
    };
    let m = build(&spec, &dir).unwrap();
    assert!(m.rows.len() >= 15);
    for r in &m.rows {
        assert!(r.killed, "{} survived 200 seeds", r.info.name);
        assert!(
            r.checks.iter().any(|c| c == r.info.caught_by),
            "{} was caught by {:?}, the registry says {}",
            r.info.name,
            r.checks,
            r.info.caught_by
        );
    }
    assert_eq!(m.survived, 0);
}

/// The mutants of the late-commit, channel-order, progress and resources
/// checks: each killed by its check alone (the output stays complete and exact).
#[test]
fn mutants_of_the_new_checks_are_killed_by_their_check_alone() {
    for (scenario, mutant, by, budget) in [
        (
            "wordcount",
            Mutant::RecoveredCommitDeferred,
            "late-commit",
            40,
        ),
        (
            "recovery-checkpoints",
            Mutant::NewDataBeforeRecovered,
            "channel-order",
            20,
        ),
        (
            "wordcount",
            Mutant::LingeringTransactionsKept,
            "progress",
            20,
        ),
        (
            "wordcount",
            Mutant::TriggerBacksOffAfterFailover,
            "progress",
            20,
        ),
        ("failing-task", Mutant::RestartNeverGivesUp, "progress", 3),
        ("wordcount", Mutant::SubsumedCheckpointsKept, "resources", 3),
        ("timeouts", Mutant::AbortedPauseKept, "progress", 3),
        ("wordcount", Mutant::NotificationsSkipped, "progress", 3),
        ("flip27-split-loss", Mutant::OneMailPerStep, "resources", 3),
        (
            "flip27-timing",
            Mutant::TriggersWhileTriggering,
            "consistent-cut",
            20,
        ),
    ] {
        let sc = load(scenario);
        let alg = if scenario == "recovery-checkpoints" {
            ckptsim::scenario::Algorithm::Unaligned
        } else if scenario == "flip27-split-loss" {
            // Its own algorithm finds the split loss of Flink 2.1-2.3.
            ckptsim::scenario::Algorithm::Aligned
        } else if mutant.name() == "aborted-pause-kept" {
            ckptsim::scenario::Algorithm::StopTheWorld
        } else {
            sc.checkpoint.algorithm
        };
        let seed = (0..budget)
            .find(|&s| {
                !crate::common::check_alg(&sc, s, alg, &[mutant])
                    .verdict
                    .passed
            })
            .unwrap_or_else(|| panic!("{} survived {budget} seeds", mutant.name()));
        let e = crate::common::check_alg(&sc, seed, alg, &[mutant]);
        assert_eq!(failed_checks(&e), [by], "{} at seed {seed}", mutant.name());
        assert!(crate::common::check_alg(&sc, seed, alg, &[]).verdict.passed);
    }
}

/// `mutants FILE...` tries every mutant on the user's own scenario (here a
/// copy of a shipped one, under a name that needs shell quoting): the
/// table and the survivors name that file, a kill's replay line runs as
/// printed and fails again, a mutant the scenario never exercises is
/// untested rather than a survivor, and one declared only for algorithms
/// the scenario cannot run is not applicable.
#[test]
fn mutants_over_a_users_scenario_name_it_and_replay_as_printed() {
    let dir = std::env::temp_dir().join(format!("ckptsim-mutants-own-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let shipped = crate::common::scenario_path("savepoints");
    std::fs::copy(&shipped, dir.join("my job.toml")).unwrap();
    let mutants = |extra: &[&str]| {
        let mut args = vec![
            "mutants",
            "my job.toml",
            "--seeds",
            "0..6",
            "--shrink-budget",
            "0",
            "--jobs",
            "2",
        ];
        for m in [
            "no-source-rewind",
            "chain-notifies-head-only",
            "upsert-batch-reordered",
            "line-ignores-orphans",
        ] {
            args.extend(["--only", m]);
        }
        args.extend(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_ckptsim"))
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let o = mutants(&["--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", crate::common::stderr(&o));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = |name: &str| {
        m["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {m}"))
            .clone()
    };
    let killed = row("no-source-rewind");
    assert_eq!(killed["killed"], true, "{killed}");
    assert_eq!(killed["scenario"], "my job.toml");
    let replay = killed["replay"].as_str().unwrap();
    assert!(replay.contains(" run 'my job.toml' --seed "), "{replay}");
    // As from a shell where ckptsim is installed (on PATH).
    let again = crate::common::shell_with_ckptsim(replay)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{replay}");
    assert!(
        crate::common::stdout(&again).contains("exactly-once-output"),
        "{}",
        crate::common::stdout(&again)
    );
    let survivor = row("chain-notifies-head-only");
    assert_eq!(survivor["killed"], false);
    assert!(survivor["seeds_fired"].as_u64().unwrap() > 0, "{survivor}");
    assert_eq!(
        survivor["tried"],
        serde_json::json!(["my job.toml (aligned)"])
    );
    let untested = row("upsert-batch-reordered");
    assert_eq!(untested["untested"], true, "{untested}");
    assert_eq!(untested["seeds_fired"], 0);
    assert_eq!(
        (m["killed"].as_u64(), m["survived"].as_u64()),
        (Some(1), Some(1))
    );
    // Uncoordinated checkpointing cannot run a scenario with savepoints.
    assert_eq!(
        m["not_applicable"],
        serde_json::json!(["line-ignores-orphans"])
    );

    let o = mutants(&[]);
    let out = crate::common::stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("survivor chain-notifies-head-only: ")
            && out.contains(" — tried my job.toml (aligned); it took effect in "),
        "{out}"
    );
    assert!(
        out.contains("\nuntested 1: upsert-batch-reordered ("),
        "{out}"
    );
    assert!(
        out.contains("\nnot applicable 1: line-ignores-orphans ("),
        "{out}"
    );
    assert!(out.contains("killed 1/2 over seeds 0..6"), "{out}");
    assert!(!out.contains("scenarios/"), "{out}");

    // A file that is not a scenario, or files with --scenarios: exit 2.
    let o = mutants(&["no-such.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::common::stderr(&o).starts_with("no-such.toml: error: "));
    let o = mutants(&["--scenarios", "."]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}
