//! Tasks that finish (FLIP-147): each task exits after its own final
//! checkpoint while the job checkpoints on, a restored finished subtask
//! stays finished, the finishing mutants are caught, and the recorded run
//! of the same scenario on Flink 2.3 passes.

use crate::common::{check_alg, ckptsim, failed_checks, load, stdout};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::Algorithm;

#[test]
fn tasks_exit_one_by_one_while_the_job_checkpoints_on() {
    let sc = load("finishing-sources");
    for a in crate::common::exactly_once() {
        let e = check_alg(&sc, 1, a, &[]);
        assert!(e.verdict.passed, "{}: {:?}", a.name(), failed_checks(&e));
        let c = &e.output.counters;
        let name = a.name();
        assert!(c.tasks_finished_while_others_ran > 0, "{name}: {c:?}");
        assert!(c.checkpoints_with_finished_tasks > 0, "{name}: {c:?}");
        assert!(
            c.final_checkpoints_taken >= 12,
            "{name}: every task took one"
        );
    }
}

#[test]
fn a_subtask_restored_as_finished_stays_finished_and_commits_nothing_twice() {
    let sc = load("finishing-sources");
    let mut restored = 0;
    for seed in 0..40 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
        restored += e.output.counters.tasks_restored_finished;
    }
    assert!(restored > 0, "some restore found a finished subtask");
}

/// The finishing check's violation at the first of `seeds` seeds where
/// mutant `m` fails `sc` under `alg` (the finishing check among the
/// failed ones).
fn finishing_violation(
    sc: &ckptsim::scenario::Scenario,
    alg: Algorithm,
    m: Mutant,
    seeds: u64,
) -> ckptsim::verdict::Violation {
    let e = (0..seeds)
        .map(|seed| check_alg(sc, seed, alg, &[m]))
        .find(|e| !e.verdict.passed)
        .unwrap_or_else(|| panic!("{} survived {seeds} seeds", m.info().name));
    let v = e
        .verdict
        .violations()
        .find(|v| v.check == ckptsim::check::CheckId::Finishing);
    v.cloned()
        .unwrap_or_else(|| panic!("finishing did not fail: {:?}", failed_checks(&e)))
}

#[test]
fn a_finished_subtask_restored_running_is_caught_by_the_finishing_check() {
    let sc = load("finishing-sources");
    let m = Mutant::FinishedOperatorRestoredRunning;
    let v = finishing_violation(&sc, Algorithm::Aligned, m, 40);
    assert!(
        v.message.contains("had finished in checkpoint")
            && v.message.contains("runs its operators again"),
        "{}",
        v.message
    );
}

#[test]
fn a_task_that_exits_without_its_final_notification_loses_its_last_transaction() {
    let e = check_alg(
        &load("wordcount"),
        0,
        Algorithm::Aligned,
        &[Mutant::FinalNotificationNotAwaited],
    );
    assert!(!e.verdict.passed);
    assert!(failed_checks(&e).contains(&"exactly-once-output"));
}

/// `ckptsim flink-export scenarios/finishing-sources.toml --seed 1`, run on
/// Flink 2.3.0: four crashes injected, tasks finishing at different times;
/// every sink committed the failure-free run's records.
#[test]
fn the_recorded_finishing_run_passes_on_flink() {
    let dir = "tests/flink/finishing-1";
    let o = ckptsim(&["flink-check", dir]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "every sink committed exactly the failure-free run's records, by key and value"
        ),
        "{text}"
    );
    let o = ckptsim(&["flink-check", dir, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["flink_version"], "2.3.0");
    assert_eq!(v["crashes_injected"], 4, "every crash fired");
}

/// The coordinator hears of an exit one RPC later, as Flink's JobManager
/// does: with checkpoints every 5 ms, some are planned with a task that
/// has just exited, and fail when their trigger reaches it (as 4 of 9 did
/// in the recorded run on Flink 2.3). The job still finishes, exactly once.
#[test]
fn a_trigger_that_reaches_a_task_that_exited_after_the_plan_fails_its_checkpoint() {
    let text = std::fs::read_to_string(crate::common::scenario_path("finishing-sources"))
        .unwrap()
        .replace("interval = \"20ms\"", "interval = \"5ms\"");
    let sc = ckptsim::scenario::parse_str(&text, "finishing-5ms.toml").unwrap();
    let mut failed = 0;
    for seed in 0..10 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
        failed += e.output.counters.checkpoints_failed_task_finished;
    }
    assert!(failed > 0, "some trigger reached a task that had exited");
}

/// A stop-with-savepoint without drain ends every task's data without
/// finishing an operator (Flink's `StopMode.NO_DRAIN`): the count windows
/// keep what they hold in the savepoint where a drain flushes it into the
/// output, a Sink V2 committer still reads the committables its writer
/// hands over after that end of data, and the tasks exit one by one once
/// notified of the savepoint.
#[test]
fn a_stop_without_drain_finishes_no_operator_and_every_task_waits_for_the_savepoint() {
    use ckptsim::engine::SimTime;
    use ckptsim::scenario::SavepointSpec;
    let spec = |drain| SavepointSpec {
        at: SimTime(300_000_000),
        stop: true,
        drain,
        format: ckptsim::scenario::SavepointFormat::Canonical,
    };
    let windows = load("windows");
    let mut held = 0;
    for seed in 0..6 {
        let (kept, _) = crate::savepoints::take_savepoint(&windows, seed, spec(false));
        let (flushed, _) = crate::savepoints::take_savepoint(&windows, seed, spec(true));
        let (k, f) = (&kept.output.counters, &flushed.output.counters);
        assert!(
            k.tasks_stopped_without_drain >= 7,
            "seed {seed}: every task"
        );
        assert_eq!(f.tasks_stopped_without_drain, 0, "seed {seed}");
        assert!(k.tasks_finished_while_others_ran > 0, "seed {seed}: {k:?}");
        let committed = |e: &ckptsim::harness::Execution| e.output.store.committed().len();
        held += usize::from(committed(&kept) < committed(&flushed));
    }
    assert!(
        held >= 5,
        "windows held their contents in {held} of 6 seeds"
    );
    let sink_v2 = load("sink-v2");
    for seed in 0..6 {
        let (e, _) = crate::savepoints::take_savepoint(&sink_v2, seed, spec(false));
        let c = &e.output.counters;
        assert_eq!(c.records_dropped_after_end_of_data, 0, "seed {seed}");
        assert!(c.tasks_stopped_without_drain > 0, "seed {seed}");
    }
}

/// A task whose input ended while its barrier waited in a full output
/// queue (aligned-timeout) exits only after that snapshot's ack: the job
/// finishes, and the mutant that exits at once is named by the finishing
/// check (and leaves the coordinator waiting: liveness).
#[test]
fn a_task_waits_for_its_held_barriers_ack_before_it_exits() {
    let sc = load("finishing-backpressure");
    let mut waited = 0;
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::AlignedTimeout, &[]);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
        waited += e.output.counters.exits_waiting_for_ack;
    }
    assert!(waited > 0, "some exit waited for an ack");
    let m = Mutant::ExitsWithAckPending;
    let v = finishing_violation(&sc, Algorithm::AlignedTimeout, m, 20);
    assert!(v.message.contains("not acknowledged"), "{}", v.message);
}

/// A task owes an acknowledgement only for the newest barrier it took: here
/// `sink[0]` takes barrier 145, then 149 (those of 146 to 148 never reach
/// it), skips 149 (the coordinator had aborted it) and exits while 148 is
/// still pending at the coordinator. It never took 148's barrier and owes
/// nothing; the finishing check stays quiet.
#[test]
fn a_task_that_never_took_a_pending_checkpoints_barrier_owes_no_ack() {
    let o = ckptsim(&[
        "run",
        "scenarios/faults.toml",
        "--seed",
        "440",
        "--algorithm",
        "aligned",
        "--swarm",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("finishing            pass"), "{out}");
}
