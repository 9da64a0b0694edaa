//! FLIP-27 sources (`scenarios/flip27.toml`, `flip27-regions.toml`): a
//! split enumerator in an operator coordinator hands splits to readers
//! through operator events. Exactly-once under every exactly-once algorithm
//! with task crashes, a coordinator crash, lost events and region
//! failovers, and through a savepoint restored at other parallelisms; the
//! five ways Flink broke the protocol are caught; the source's keys are
//! validated.

use crate::common::{check, exactly_once, failed_checks, load, sweep};
use crate::savepoints::{failures, restore_and_finish, take_savepoint, with_parallelism};
use ckptsim::engine::SimTime;
use ckptsim::mutant::Mutant;
use ckptsim::runtime::RunOutcome;
use ckptsim::scenario::{self, SavepointSpec};

/// Seeds per exactly-once algorithm (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    crate::common::seeds_or(60)
}

#[test]
fn an_enumerated_source_is_exactly_once_with_crashes_and_lost_events() {
    let sc = load("flip27");
    for a in exactly_once() {
        let c = sweep(&sc, "scenarios/flip27.toml", a, 0..seeds());
        let name = a.name();
        assert!(c.crashes > 0 && c.coordinator_crashes > 0, "{name}");
        assert!(c.coordinator_recoveries_from_checkpoint > 0, "{name}");
        assert!(
            c.operator_events_sent > 0 && c.operator_events_lost > 0,
            "{name}"
        );
        assert!(c.operator_event_failures > 0, "{name}");
        assert!(c.triggers_waiting_for_events > 0, "{name}");
    }
}

#[test]
fn region_failovers_give_the_enumerator_its_splits_back() {
    let sc = load("flip27-regions");
    for a in exactly_once() {
        let c = sweep(&sc, "scenarios/flip27-regions.toml", a, 0..seeds());
        assert!(c.region_failovers > 0, "{}", a.name());
    }
}

#[test]
fn the_five_historical_bugs_are_caught() {
    for (m, scenario, check_name) in [
        (
            Mutant::SplitsBackUncheckpointedOnly,
            "flip27-regions",
            "consistent-cut",
        ),
        (Mutant::LostOperatorEventIgnored, "flip27", "consistent-cut"),
        (
            Mutant::CheckpointIgnoresUnackedEvents,
            "flip27",
            "consistent-cut",
        ),
        (Mutant::OperatorEventsNotHeld, "flip27", "consistent-cut"),
        (Mutant::NoMoreSplitsOnce, "flip27-regions", "liveness"),
    ] {
        let sc = load(scenario);
        crate::common::assert_caught(&sc, m, 200, check_name);
    }
}

#[test]
fn a_lost_split_is_also_missing_output() {
    // The cut check sees it first; the output check sees it too.
    let sc = load("flip27");
    let m = Mutant::LostOperatorEventIgnored;
    let lost = (0..200)
        .find(|&seed| failed_checks(&check(&sc, seed, &[m])).contains(&"exactly-once-output"));
    assert!(lost.is_some(), "no seed lost output in 200");
}

#[test]
fn a_savepoint_carries_splits_and_the_enumerator_to_other_parallelisms() {
    let mut base = ckptsim::scenario::ScenarioData::clone(&load("flip27"));
    // A failover fails a pending savepoint: none while it is taken (the
    // restored job has them all).
    base.faults.coordinator = None;
    base.faults.operator_events = None;
    let reader_sizes = [1, 3, 4];
    for seed in 0..seeds() / 3 {
        for a in exactly_once() {
            let mut s1 = ckptsim::scenario::ScenarioData::clone(&base);
            s1.checkpoint.algorithm = a;
            let sp = SavepointSpec {
                at: SimTime((180 + (seed % 5) * 40) * 1_000_000),
                stop: seed % 2 == 0,
                drain: false,
                format: ckptsim::scenario::SavepointFormat::Canonical,
            };
            let (_, image) = take_savepoint(&crate::common::valid(&s1), seed, sp);
            let n = reader_sizes[seed as usize % 3];
            let mut s2 = with_parallelism(
                &load("flip27"),
                &[("source", n), ("map", n), ("filter", n), ("count", n + 1)],
            );
            for op in ["writer", "committer"] {
                s2 = with_parallelism(&s2, &[(op, n + 1)]);
            }
            let mut s2 = ckptsim::scenario::ScenarioData::clone(&s2);
            s2.checkpoint.algorithm = a;
            s2.savepoints.clear();
            let run = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
            assert!(
                run.verdict.passed,
                "{} seed {seed}:\n{}",
                a.name(),
                failures(&run)
            );
            assert_eq!(run.output.outcome, RunOutcome::Finished, "seed {seed}");
        }
    }
}

#[test]
fn a_static_snapshot_does_not_restore_into_an_enumerated_source() {
    let mut base = ckptsim::scenario::ScenarioData::clone(&load("flip27"));
    base.faults.coordinator = None;
    let sp = SavepointSpec {
        at: SimTime(200_000_000),
        stop: false,
        drain: false,
        format: ckptsim::scenario::SavepointFormat::Canonical,
    };
    let (_, image) = take_savepoint(&crate::common::valid(&base), 1, sp);
    let text = std::fs::read_to_string(crate::common::scenario_path("flip27")).unwrap();
    let text = text
        .replace("split_assignment = \"enumerator\"\n", "")
        .replace("initial_splits = 6\n", "")
        .replace("discovery_interval = \"70ms\"\n", "");
    let s2 = scenario::parse_str(&text, "static.toml").unwrap_or_else(|e| panic!("{e}"));
    let err = ckptsim::savepoint::rescale::assign(&image, &s2, false)
        .err()
        .expect("refused");
    assert!(err.message.contains("split_assignment"), "{}", err.message);
}

#[test]
fn the_source_keys_are_validated() {
    let text = std::fs::read_to_string(crate::common::scenario_path("flip27")).unwrap();
    let refused = |text: String, needle: &str| {
        let e = scenario::parse_str(&text, "flip27.toml").expect_err(needle);
        let all = e.to_string();
        assert!(all.contains(needle), "{all}");
    };
    refused(
        text.replace("initial_splits = 6", "initial_splits = 13"),
        "initial_splits (13) must be at most partitions (12)",
    );
    refused(
        text.replace("split_assignment = \"enumerator\"\n", ""),
        "initial_splits needs split_assignment = \"enumerator\"",
    );
    refused(
        text.replace("initial_splits = 6\n", "")
            .replace("split_assignment = \"enumerator\"\n", ""),
        "discovery_interval needs split_assignment = \"enumerator\"",
    );
    refused(
        text.replace("loss_percent = 2", "loss_percent = 101"),
        "loss_percent must be at most 100",
    );
}

/// Concurrent checkpoints with slow operator-event acknowledgements: the
/// gateways are closed per checkpoint and one checkpoint is triggered at a
/// time, as in Flink, so every cut holds each split once
/// (`scenarios/flip27-timing.toml`, which failed 28 of 40 seeds before:
/// `reports/findings/model-gap-flip27-concurrent/`). The sweep reaches
/// the timings it was built for.
#[test]
fn concurrent_checkpoints_keep_every_split_in_the_cut() {
    let sc = load("flip27-timing");
    let path = "scenarios/flip27-timing.toml";
    let c = sweep(&sc, path, sc.checkpoint.algorithm, 0..seeds().min(40));
    assert!(c.enumerator_checkpoints_concurrent > 0, "{c:?}");
    assert!(c.checkpoints_expired_waiting_for_events > 0, "{c:?}");
    assert!(c.committables_through_network > 0, "{c:?}");
}

/// A committer restored from checkpoint N knows N complete, as Flink's
/// `CommitterOperator` takes the restored checkpoint id: a committable of
/// N that comes back as restored in-flight data (chandy-lamport captures
/// the unchained writer → committer edge) is committed at once, not at
/// the next notification (late-commit failed on this seed before).
#[test]
fn a_restored_committer_commits_restored_committables_at_once() {
    let sc = load("flip27-timing");
    let (drawn, draw) =
        ckptsim::swarm::draw(&sc, &ckptsim::swarm::default_ranges(&sc), 177).unwrap();
    assert!(draw.to_string().contains("committer=unchained"), "{draw}");
    let e = crate::common::check_alg(
        &drawn,
        177,
        ckptsim::scenario::Algorithm::ChandyLamport,
        &[],
    );
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    assert!(e.output.counters.recoveries > 0);
}
