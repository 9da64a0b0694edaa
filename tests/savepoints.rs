//! Savepoints, retained checkpoints and rescaling: run → snapshot → restore
//! at a new parallelism → finish keeps exactly-once output and state
//! against the uninterrupted failure-free oracle; the refusals say exactly
//! what is wrong.

use crate::common::load;
use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::harness::{execute_job, Execution};
use ckptsim::model::store::TxnState;
use ckptsim::runtime::{JobOptions, RunConfig, RunOutcome, SnapshotKind};
use ckptsim::savepoint::{self, rescale, Image};
use ckptsim::scenario::{Algorithm, RandomCrashes, SavepointSpec, Scenario};
use std::sync::Arc;

fn cfg(s: &Scenario, seed: u64) -> RunConfig {
    RunConfig {
        seed,
        algorithm: s.checkpoint.algorithm,
        mutants: ckptsim::mutant::Mutants::NONE,
        record_trace: false,
    }
}

fn failures(e: &Execution) -> String {
    e.verdict
        .violations()
        .map(|v| format!("{}: {}", v.check, v.message))
        .collect::<Vec<_>>()
        .join("\n")
}

fn with_parallelism(s: &Scenario, p: &[(&str, u32)]) -> Scenario {
    let mut s = s.clone();
    for (id, n) in p {
        let op = s.operators.iter_mut().find(|o| o.id == *id).expect(id);
        op.parallelism = *n;
    }
    s
}

fn crashes(s: &mut Scenario, window_end_ms: u64, max: u32) {
    s.faults.random = Some(RandomCrashes {
        mean_interval: SimDuration::from_millis(300),
        window_start: SimTime::ZERO,
        window_end: SimTime(window_end_ms * 1_000_000),
        max_crashes: max,
    });
}

/// Run 1 up to its savepoint (taken at `at`, crashes only before it),
/// returning the run and the image of the savepoint it took.
fn take_savepoint(s: &Scenario, seed: u64, sp: SavepointSpec) -> (Execution, Image) {
    let mut s1 = s.clone();
    // Crashes only before the savepoint, detected before it too (a
    // failover while it is pending fails it, as in Flink).
    crashes(&mut s1, sp.at.0 / 1_000_000 - 60, 2);
    s1.savepoints = vec![sp.clone()];
    let job = JobOptions {
        cancel_after_savepoint: !sp.stop,
        keep_snapshots: true,
        ..JobOptions::default()
    };
    let e = execute_job(&s1, &cfg(&s1, seed), &job, seed);
    assert!(
        e.verdict.passed,
        "seed {seed}: run 1 failed:\n{}",
        failures(&e)
    );
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|x| x.kind == SnapshotKind::Savepoint)
        .unwrap_or_else(|| panic!("seed {seed}: no savepoint ({:?})", e.output.outcome))
        .clone();
    let expected = if sp.stop {
        RunOutcome::Stopped(snap.id)
    } else {
        RunOutcome::Cancelled
    };
    assert_eq!(e.output.outcome, expected, "seed {seed}");
    let image = Image::from_run(&s1, &snap, &e.output.store, seed, 0).expect("image");
    (e, image)
}

/// Run 2: `s2` started from `image`, with its own crashes, to the end.
fn restore_and_finish(s2: &Scenario, image: &Image, seed: u64) -> Execution {
    let plan = rescale::assign(image, s2, false).unwrap_or_else(|e| panic!("{e}"));
    let job = JobOptions {
        restore: Some(Arc::new(plan.restore)),
        ..JobOptions::default()
    };
    execute_job(s2, &cfg(s2, seed), &job, image.meta.input_seed)
}

#[test]
fn savepoint_then_restore_at_changed_parallelism_is_exactly_once_over_200_seeds() {
    let base = load("wordcount");
    let up = [("source", 3), ("split", 3), ("count", 5), ("sink", 3)];
    let down = [("source", 1), ("split", 1), ("count", 2), ("sink", 1)];
    let (mut crashes_before, mut crashes_after, mut in_flight_kinds, mut stops) = (0, 0, 0, 0);
    let mut recoveries_from_savepoint = 0;
    for seed in 0..200u64 {
        let sp = SavepointSpec {
            at: SimTime((200 + (seed % 5) * 60) * 1_000_000),
            stop: seed % 3 != 0,
            drain: seed % 3 == 2,
        };
        stops += u64::from(sp.stop);
        let (run1, image) = take_savepoint(&base, seed, sp);
        crashes_before += run1.output.counters.crashes;
        let mut s2 = with_parallelism(&base, if seed % 2 == 0 { &up } else { &down });
        s2.savepoints.clear();
        crashes(&mut s2, 600, 3);
        let run2 = restore_and_finish(&s2, &image, seed + 10_000);
        assert!(
            run2.verdict.passed,
            "seed {seed}: restored run failed:\n{}",
            failures(&run2)
        );
        assert_eq!(run2.output.outcome, RunOutcome::Finished, "seed {seed}");
        let c = &run2.output.counters;
        crashes_after += c.crashes;
        assert_eq!(c.restored_from_snapshot, 1);
        assert!(c.records_routing_checked > 0);
        // A failover before the restored job's first checkpoint goes back
        // to the savepoint.
        if c.recoveries > 0 && c.recoveries_from_scratch == 0 {
            recoveries_from_savepoint += 1;
        }
        in_flight_kinds += u64::from(image.operators.iter().any(|o| o.parallelism == 2));
    }
    assert!(crashes_before > 50, "crashes before: {crashes_before}");
    assert!(crashes_after > 100, "crashes after: {crashes_after}");
    assert!(
        recoveries_from_savepoint > 20,
        "{recoveries_from_savepoint}"
    );
    assert!(stops > 100 && in_flight_kinds == 200);
}

#[test]
fn retained_unaligned_checkpoint_with_channel_state_restores_at_new_parallelism() {
    let base = load("rescale");
    assert_eq!(base.checkpoint.algorithm, Algorithm::Unaligned);
    let mut with_state = 0;
    let mut moved_records = 0;
    for seed in 0..40u64 {
        let mut s1 = base.clone();
        crashes(&mut s1, 250, 2);
        let job = JobOptions {
            cancel_at: Some(SimTime(300_000_000)),
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let run1 = execute_job(&s1, &cfg(&s1, seed), &job, seed);
        assert!(run1.verdict.passed, "seed {seed}: {}", failures(&run1));
        assert_eq!(run1.output.outcome, RunOutcome::Cancelled);
        let Some(snap) = run1.output.snapshots.last() else {
            // Crashes kept every checkpoint from completing before the
            // cancel: nothing to retain.
            assert_eq!(run1.output.counters.checkpoints_completed, 0);
            continue;
        };
        assert_eq!(snap.kind, SnapshotKind::Checkpoint);
        let image = Image::from_run(&s1, snap, &run1.output.store, seed, 0).unwrap();
        // Through the files and back.
        let dir =
            std::env::temp_dir().join(format!("ckptsim-retained-{}-{seed}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        savepoint::write_dir(&dir, &image).unwrap();
        let image = savepoint::read_dir(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        if image.in_flight_records() > 0 {
            with_state += 1;
        }
        let p = if seed % 2 == 0 { 3 } else { 1 };
        let mut s2 = with_parallelism(&base, &[("source", p), ("count", p + 1), ("sink", p)]);
        crashes(&mut s2, 400, 2);
        let plan = rescale::assign(&image, &s2, false).unwrap();
        moved_records += plan
            .notes
            .iter()
            .filter(|n| n.contains("in-flight records restored"))
            .count();
        let run2 = restore_and_finish(&s2, &image, seed + 500);
        assert!(run2.verdict.passed, "seed {seed}: {}", failures(&run2));
        assert_eq!(run2.output.outcome, RunOutcome::Finished);
        if image.in_flight_records() > 0 {
            assert!(run2.output.counters.in_flight_records_restored > 0);
        }
    }
    assert!(
        with_state >= 30,
        "only {with_state} of 40 had channel state"
    );
    assert!(moved_records >= 30);
}

#[test]
fn stop_with_savepoint_and_drain_leaves_the_2pc_output_complete() {
    let base = load("wordcount");
    for seed in 0..20u64 {
        for drain in [false, true] {
            let sp = SavepointSpec {
                at: SimTime(250_000_000),
                stop: true,
                drain,
            };
            let (run1, image) = take_savepoint(&base, seed, sp);
            // Everything the stopped sources read is committed exactly once
            // (the output check compared against that prefix and passed),
            // and nothing is left pre-committed.
            let below = run1.output.complete_below.clone().expect("source offsets");
            let read: u64 = below.iter().sum();
            assert!(read > 0 && read < 12_000, "seed {seed}: read {read}");
            let committed = run1.output.store.committed().len() as u64;
            assert_eq!(
                committed, read,
                "seed {seed} drain {drain}: {:?} {:?}",
                run1.output.outcome, run1.output.counters
            );
            assert!(image.meta.stop && image.meta.drain == drain);
        }
    }
}

#[test]
fn a_plain_savepoint_commits_nothing_and_is_not_used_for_recovery() {
    let base = load("wordcount");
    let mut checked = 0;
    for seed in 0..20u64 {
        let mut s = base.clone();
        s.faults.random = None;
        s.savepoints = vec![SavepointSpec {
            at: SimTime(305_000_000),
            stop: false,
            drain: false,
        }];
        // A crash right after the savepoint completes, before the next
        // checkpoint: recovery goes to the checkpoint before the savepoint.
        let job = JobOptions {
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let probe = execute_job(&s, &cfg(&s, seed), &job, seed);
        let sp = &probe.output.snapshots[0];
        let sp_stats = probe
            .output
            .checkpoint_stats
            .iter()
            .find(|c| c.id == sp.id)
            .unwrap();
        assert!(sp_stats.savepoint);
        let next = probe
            .output
            .checkpoint_stats
            .iter()
            .find(|c| c.id > sp.id && !c.savepoint)
            .map(|c| c.trigger_ns)
            .unwrap();
        s.faults.crashes = vec![ckptsim::scenario::CrashSpec {
            at: SimTime((sp.completed_at.0 + next) / 2),
            operator: ckptsim::scenario::OperatorId(2),
            subtask: 0,
        }];
        let e = execute_job(&s, &cfg(&s, seed), &job, seed);
        assert!(e.verdict.passed, "seed {seed}: {}", failures(&e));
        let c = &e.output.counters;
        assert_eq!(c.crashes, 1);
        assert_eq!(c.savepoints_completed, 1);
        // Recovered from a checkpoint older than the savepoint.
        let sp = &e.output.snapshots[0];
        assert!(e.output.completed_ids.iter().all(|&id| id != sp.id));
        // The savepoint's own transactions were never committed.
        let sink_states: Vec<_> = sp.states.iter().flatten().collect();
        for snap in sink_states {
            if let Some(pending) = ckptsim::model::operator::sink_pending(&snap.state) {
                for (cp, txn) in pending.iter().filter(|(cp, _)| *cp == sp.id) {
                    assert_ne!(
                        e.output.store.state(*txn),
                        Some(TxnState::Committed),
                        "seed {seed}: savepoint {cp}'s {txn} committed"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}
