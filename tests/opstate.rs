//! Operator state beyond keyed state (`scenarios/operator-state.toml`):
//! list state restored by Flink's split and union redistribution, and
//! broadcast state, through crashes, a coordinator crash and savepoints at
//! other parallelisms; mixing up the list modes and a rule table kept out
//! of the broadcast state are caught.

use crate::common::{exactly_once, load, sweep};
use crate::savepoints::{failures, restore_and_finish, take_savepoint, with_parallelism};
use ckptsim::engine::SimTime;
use ckptsim::mutant::Mutant;
use ckptsim::runtime::RunOutcome;
use ckptsim::savepoint::OperatorState;
use ckptsim::scenario::{self, SavepointSpec};

/// Seeds per exactly-once algorithm (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    crate::common::seeds_or(40)
}

#[test]
fn split_and_union_list_state_are_exactly_once_with_crashes() {
    let sc = load("operator-state");
    for a in exactly_once() {
        let c = sweep(&sc, "scenarios/operator-state.toml", a, 0..seeds());
        assert!(c.recoveries_from_checkpoint > 0, "{}", a.name());
        assert!(c.coordinator_crashes > 0, "{}", a.name());
    }
}

#[test]
fn mixing_up_the_modes_and_an_unsnapshotted_rule_table_are_caught() {
    let sc = load("operator-state");
    for m in [
        Mutant::UnionStateKeptWhole,
        Mutant::UnionStateRestoredAsSplit,
        Mutant::BroadcastStateNotSnapshotted,
    ] {
        crate::common::assert_caught(&sc, m, 100, "exactly-once-output");
    }
}

#[test]
fn a_savepoint_carries_list_and_broadcast_state_to_other_parallelisms() {
    let mut base = ckptsim::scenario::ScenarioData::clone(&load("operator-state"));
    base.faults.coordinator = None; // a failover fails a pending savepoint
    let mut held = 0;
    for seed in 0..seeds() / 2 {
        let sp = SavepointSpec {
            at: SimTime((230 + (seed % 5) * 50) * 1_000_000),
            stop: seed % 3 == 0,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (_, image) = take_savepoint(&crate::common::valid(&base), seed, sp);
        for op in &image.operators {
            match &op.state {
                OperatorState::List { entries } => held += entries.len(),
                OperatorState::Broadcast { copies } => assert_eq!(copies.len(), 2),
                _ => {}
            }
        }
        let n = 1 + seed as u32 % 4;
        let mut s2 = with_parallelism(
            &crate::common::valid(&base),
            &[("split", n), ("union", 5 - n), ("apply", n)],
        );
        s2.savepoints.clear();
        let run = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(run.verdict.passed, "seed {seed}:\n{}", failures(&run));
        assert_eq!(run.output.outcome, RunOutcome::Finished, "seed {seed}");
    }
    assert!(held > 0, "no savepoint held buffered records");
}

#[test]
fn redistribution_is_a_name_of_the_two_modes() {
    let text = std::fs::read_to_string(crate::common::scenario_path("operator-state")).unwrap();
    let e = scenario::parse_str(
        &text.replace(
            "redistribution = \"union\"",
            "redistribution = \"broadcast\"",
        ),
        "operator-state.toml",
    )
    .expect_err("refused");
    assert!(e.to_string().contains("redistribution"), "{e}");
}
