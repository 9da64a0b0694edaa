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
