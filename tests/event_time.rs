//! Event time (docs/event-time.md): watermarks travel among the records,
//! through every task's valve, into event-time windows whose results the
//! oracle replays exactly through crashes; the watermarks check sees every
//! watermark in order and event time reaching its end; the event-time
//! mutants are caught.

use crate::common::{
    assert_caught, check, check_alg, exactly_once, failed_checks, load, seeds_or, sweep, valid,
};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::ScenarioData;

fn reach(e: &ckptsim::harness::Execution, check: &str, what: &str) -> u64 {
    let c = e.verdict.checks.iter().find(|c| c.name == check).unwrap();
    c.reach.iter().find(|(w, _)| *w == what).unwrap().1
}

#[test]
fn event_time_windows_are_exact_through_crashes_under_every_exactly_once_algorithm() {
    let sc = load("event-time");
    for a in exactly_once() {
        let counters = sweep(&sc, "scenarios/event-time.toml", a, 0..seeds_or(4));
        assert!(counters.crashes > 0, "{}", a.name());
    }
}

#[test]
fn watermarks_reach_every_operator_and_the_end_of_event_time() {
    let e = check(&load("event-time"), 1, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    assert!(reach(&e, "watermarks", "watermarks emitted") > 10);
    // 4 source subtasks, 3 windows, 2 sinks.
    assert!(reach(&e, "watermarks", "operators that reached MAX_WATERMARK") >= 9);
    // Without event time the check has nothing to see.
    let plain = check(&load("wordcount"), 1, &[]);
    assert_eq!(reach(&plain, "watermarks", "watermarks emitted"), 0);
}

#[test]
fn late_records_are_dropped_as_the_failure_free_run_drops_them() {
    // With the generator's bound at the data's disorder nothing is late;
    // below it, records are, and the output changes — the same in the run
    // and the oracle, through crashes.
    let sc = load("event-time");
    let mut exact = ScenarioData::clone(&sc);
    for op in &mut exact.operators {
        if let ckptsim::scenario::OperatorKind::Source(s) = &mut op.kind {
            s.watermark_bound = s.out_of_orderness;
        }
    }
    let exact = valid(&exact);
    let (late, on_time) = (check(&sc, 3, &[]), check(&exact, 3, &[]));
    assert!(late.verdict.passed && on_time.verdict.passed);
    let sums = |e: &ckptsim::harness::Execution| -> Vec<(u64, i64, i64)> {
        let mut v: Vec<_> = (e.output.store.committed().iter())
            .map(|r| (r.key, r.timestamp, r.value))
            .collect();
        v.sort_unstable();
        v
    };
    assert_ne!(
        sums(&late),
        sums(&on_time),
        "a bound below the disorder makes records late"
    );
}

#[test]
fn unaligned_checkpoints_carry_watermarks_in_their_channel_state() {
    let sc = load("event-time");
    let mut inflight = 0;
    for seed in 0..seeds_or(6) {
        let e = check_alg(&sc, seed, ckptsim::scenario::Algorithm::Unaligned, &[]);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
        inflight += e.output.counters.in_flight_records_restored;
    }
    assert!(inflight > 0, "no restore read in-flight data");
}

#[test]
fn a_record_late_before_a_failure_is_late_after_it() {
    assert_caught(
        &load("event-time"),
        Mutant::WindowClockNotRestored,
        300,
        "exactly-once-output",
    );
}

#[test]
fn a_split_holds_the_watermark_from_its_assignment() {
    assert_caught(
        &load("event-time"),
        Mutant::SplitWatermarkAtFirstRecord,
        100,
        "exactly-once-output",
    );
}

#[test]
fn a_lost_final_watermark_is_named_with_the_channel_holding_it_back() {
    let e = check(
        &load("event-time"),
        0,
        &[Mutant::SplitlessSourceNoFinalWatermark],
    );
    let failed = failed_checks(&e);
    assert!(failed.contains(&"watermarks"), "{failed:?}");
    let message = e
        .verdict
        .violations()
        .find(|v| v.check == ckptsim::verdict::CheckId::Watermarks)
        .unwrap()
        .message
        .clone();
    assert!(
        message.contains("never reached its end")
            && message.contains("held back by channel clicks["),
        "{message}"
    );
}
