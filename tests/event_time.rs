//! Event time (docs/event-time.md): watermarks travel among the records,
//! through every task's valve, into event-time windows whose results the
//! oracle replays exactly through crashes; the watermarks check sees every
//! watermark in order and event time reaching its end; the event-time
//! mutants are caught.

use crate::common::{
    assert_caught, check, check_alg, exactly_once, failed_checks, load, reach, seeds_or, sweep,
    valid,
};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::ScenarioData;

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
    // FLINK-36663: a window fires again after a restore; the timers check
    // names the timer that fired twice in effect.
    let sc = load("event-time");
    assert_caught(&sc, Mutant::WindowClockNotRestored, 300, "timers");
    let e = check(&sc, 79, &[Mutant::WindowClockNotRestored]);
    let v = e.verdict.violations().find(|v| v.check == "timers");
    let message = &v.expect("a timers violation").message;
    assert!(
        message.contains("`window`: event-time timer of key")
            && message.contains("fired 2× in effect, 1× in the failure-free run"),
        "{message}"
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
fn a_stalled_watermark_is_named_with_the_channel_and_the_time() {
    let mut d = ScenarioData::clone(&load("event-time"));
    d.limits.watermark_stall = ckptsim::engine::SimDuration::from_millis(500);
    let sc = valid(&d);
    let e = check(&sc, 0, &[Mutant::SplitlessSourceNoFinalWatermark]);
    let stall = e
        .verdict
        .violations()
        .find(|v| v.message.contains("stood still"))
        .unwrap_or_else(|| panic!("{:?}", e.verdict.violations().collect::<Vec<_>>()))
        .message
        .clone();
    assert!(stall.contains("held back by channel clicks["), "{stall}");
    // The same bound without the mutant: event time moves.
    let fine = check(&sc, 0, &[]);
    assert!(fine.verdict.passed, "{:?}", failed_checks(&fine));
    assert!(reach(&fine, "watermarks", "reads judged for a stall") > 0);
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

#[test]
fn a_retained_unaligned_checkpoint_with_watermarks_in_flight_verifies_and_restores() {
    use crate::common::{ckptsim, stderr, stdout};
    let dir = std::env::temp_dir().join(format!("ckptsim-et-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Watermarks every millisecond, small buffers: the channel state of an
    // unaligned checkpoint holds some.
    let text = std::fs::read_to_string("scenarios/event-time.toml")
        .unwrap()
        .replace(
            "watermark_interval = \"20ms\"",
            "watermark_interval = \"1ms\"",
        )
        .replace(
            "interval = \"25ms\"",
            "interval = \"25ms\"\nretain_on_cancel = true",
        )
        .replace(
            "buffer_records = 8",
            "buffer_records = 2\noutput_buffers = 1",
        );
    let file = dir.join("event-time.toml");
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let mut found = false;
    for seed in 0..30u64 {
        let chk = dir.join(format!("chk-{seed}"));
        let seed = seed.to_string();
        let o = ckptsim(&[
            "run",
            file,
            "--seed",
            &seed,
            "--algorithm",
            "unaligned",
            "--cancel-at",
            "60ms",
            "--checkpoint-dir",
            chk.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let Some(taken) = std::fs::read_dir(&chk).unwrap().flatten().next() else {
            continue;
        };
        let image = ckptsim::savepoint::read_dir(&taken.path()).unwrap();
        let in_flight = image.channels.iter().flat_map(|c| &c.records);
        if !in_flight.into_iter().any(|r| r.is_element()) {
            continue;
        }
        found = true;
        let path = taken.path();
        let o = ckptsim(&["verify-snapshot", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let o = ckptsim(&["run", file, "--from-savepoint", path.to_str().unwrap()]);
        assert_ne!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        break;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(found, "no retained checkpoint held a watermark in flight");
}

#[test]
fn idle_splits_and_an_idle_reader_are_exact_through_crashes() {
    let sc = load("event-time-idle");
    for a in exactly_once() {
        let counters = sweep(&sc, "scenarios/event-time-idle.toml", a, 0..seeds_or(3));
        assert!(counters.crashes > 0, "{}", a.name());
        assert!(
            counters.splits_idled > 0,
            "{}: no split went idle",
            a.name()
        );
    }
    let e = check(&sc, 1, &[]);
    assert!(reach(&e, "watermarks", "watermark statuses sent") > 0);
}

#[test]
fn a_split_with_a_record_waiting_is_not_idle() {
    // FLINK-35886: the idleness clock ran on while the task was
    // backpressured.
    let sc = load("event-time-idle");
    assert_caught(
        &sc,
        Mutant::IdlenessClockRunsUnderBackpressure,
        50,
        "watermarks",
    );
    let e = check(&sc, 0, &[Mutant::IdlenessClockRunsUnderBackpressure]);
    let message = e
        .verdict
        .violations()
        .find(|v| v.message.contains("idle"))
        .unwrap()
        .message
        .clone();
    assert!(
        message.starts_with("source source[") && message.contains("had been there to read since"),
        "{message}"
    );
}

#[test]
fn idle_statuses_in_flight_are_channel_state() {
    let sc = load("event-time-idle");
    let unaligned = ckptsim::scenario::Algorithm::Unaligned;
    // Rare since the reader without a split exits after its final
    // checkpoint (FLIP-147): the first seed with a status restored is 1036.
    let seed = (1000..1100)
        .find(|&seed| {
            let e = check_alg(&sc, seed, unaligned, &[]);
            assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
            e.output.counters.statuses_restored > 0
        })
        .expect("a restore with a watermark status in flight");
    let e = check_alg(
        &sc,
        seed,
        unaligned,
        &[Mutant::ChannelStateDropsWatermarkStatus],
    );
    assert!(
        failed_checks(&e).contains(&"consistent-cut"),
        "seed {seed}: {:?}",
        failed_checks(&e)
    );
}

#[test]
fn a_restored_idle_status_makes_the_window_ignore_its_source() {
    // reports/findings/idle-status-after-restore, confirmed on Flink 2.2.1
    // and 2.3.0: an idle status in unaligned channel state outlives the
    // redeployed sender, which starts active without saying so.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/reports/findings/idle-status-after-restore/idle-status-after-restore.toml"
    );
    let sc = ckptsim::scenario::load(std::path::Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    let unaligned = check_alg(&sc, 12, ckptsim::scenario::Algorithm::Unaligned, &[]);
    let message = unaligned
        .verdict
        .violations()
        .find(|v| v.check == ckptsim::verdict::CheckId::Watermarks)
        .unwrap_or_else(|| panic!("{:?}", failed_checks(&unaligned)))
        .message
        .clone();
    assert!(
        message.contains("on channel source[1] -> window[0], which it held idle"),
        "{message}"
    );
    assert!(unaligned.output.counters.statuses_restored > 0);
    // No channel state, no stale status.
    let aligned = check_alg(&sc, 12, ckptsim::scenario::Algorithm::Aligned, &[]);
    assert!(aligned.verdict.passed, "{:?}", failed_checks(&aligned));
}
