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

/// The mutants of the late-commit, channel-order and progress checks: each
/// killed by its check alone (the output stays complete and exact).
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
