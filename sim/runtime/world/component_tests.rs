//! Table tests of the components `World` holds, each without a `World`:
//! the faults' plan and trigger matching, the recovery clock, the
//! savepoints' books and the run plan's facts, built from shipped
//! scenarios.

use super::fault_state::{take_fired, Fate, Faults};
use super::plan::Plan;
use super::recovery_state::Recovery;
use super::savepoint_state::Savepoints;
use crate::engine::{SimDuration, SimTime};
use crate::model::operator::BuiltinFactory;
use crate::model::{ExecGraph, JobGraph, TaskId, Workload};
use crate::runtime::config::{JobOptions, RunConfig};
use crate::scenario::{parse_str, shipped::shipped, CrashTrigger, Scenario, TriggerEvent};
use std::sync::Arc;

fn scenario(name: &str) -> Scenario {
    let text = shipped(name).unwrap_or_else(|| panic!("no scenario {name}"));
    parse_str(text, name).unwrap_or_else(|e| panic!("{e}"))
}

fn exec(s: &Scenario) -> ExecGraph {
    ExecGraph::build(s, &JobGraph::build(s))
}

#[test]
fn a_connected_job_is_one_region_and_every_fault_starts_pending() {
    let s = scenario("checkmate");
    let e = exec(&s);
    let f = Faults::new(&s, 0, &e);
    assert_eq!(f.fx.region_of.len(), e.tasks.len());
    assert!(
        f.fx.region_of.iter().all(|&r| r == 0),
        "{:?}",
        f.fx.region_of
    );
    assert_eq!(f.log.crashes.len(), f.crash_plan.len());
    assert!(f.log.crashes.iter().all(|c| *c == Fate::Pending));
    assert_eq!(f.log.cancel, Fate::Pending);
    assert!(f.first_crash_point <= f.crash_plan.len());
    assert!(f.armed_crashes.is_empty() && f.armed_slow.is_empty());
}

/// An event of a checkpoint, and the faults it fires with their delays (ms).
type Row = ((TriggerEvent, u64), &'static [(u32, u64)]);

#[test]
fn a_fault_fires_on_its_event_and_checkpoint_once() {
    let s = scenario("checkmate");
    let e = exec(&s);
    let trigger = |on, checkpoint, ms: u64| CrashTrigger {
        on,
        checkpoint,
        of: None,
        delay: SimDuration(ms * 1_000_000),
    };
    let triggers = [
        trigger(TriggerEvent::Complete, Some(2), 1),
        trigger(TriggerEvent::Complete, None, 2),
        trigger(TriggerEvent::Trigger, None, 3),
    ];
    // (event, checkpoint) → the faults that fire, with their delays.
    let table: &[Row] = &[
        ((TriggerEvent::Restart, 1), &[]),
        ((TriggerEvent::Complete, 1), &[(1, 2)]),
        ((TriggerEvent::Complete, 2), &[(0, 1)]),
        ((TriggerEvent::Complete, 3), &[]),
        ((TriggerEvent::Trigger, 4), &[(2, 3)]),
    ];
    let mut armed = vec![0, 1, 2];
    for &((on, id), want) in table {
        let fired = take_fired(&mut armed, (on, None, id), &e, |i| {
            Some((&triggers[i as usize], None))
        });
        let want: Vec<(u32, SimDuration)> = want
            .iter()
            .map(|&(i, ms)| (i, SimDuration(ms * 1_000_000)))
            .collect();
        assert_eq!(fired, want, "{on:?} of {id}");
    }
    assert!(armed.is_empty());
    // A fault without a trigger leaves the armed list without firing.
    let mut armed = vec![7];
    assert!(take_fired(&mut armed, (TriggerEvent::Trigger, None, 1), &e, |_| None).is_empty());
    assert!(armed.is_empty());
}

#[test]
fn a_task_event_fires_only_the_fault_aimed_at_its_task() {
    let s = scenario("checkmate");
    let e = exec(&s);
    let op = e.tasks[0].operator;
    let tr = CrashTrigger {
        on: TriggerEvent::Snapshot,
        checkpoint: None,
        of: Some((op, 0)),
        delay: SimDuration(0),
    };
    let at = |task: TaskId| {
        let mut armed = vec![0];
        take_fired(
            &mut armed,
            (TriggerEvent::Snapshot, Some(task), 1),
            &e,
            |_| Some((&tr, tr.of)),
        )
        .len()
    };
    let aimed = e.task_of(op, 0);
    assert_eq!(at(aimed), 1);
    let other = (0..e.tasks.len() as TaskId).find(|&t| t != aimed).unwrap();
    assert_eq!(at(other), 0);
}

#[test]
fn the_recovery_clock_reaches_each_partition_once() {
    let mut r = Recovery::new(3, 4);
    assert_eq!((r.pending, r.since, r.out_left.len()), (0, None, 3));
    assert_eq!(r.clock.behind, 0);
    r.clock.reached = vec![false; 4];
    r.clock.behind = 4;
    for (p, behind) in [(0, 3), (0, 3), (3, 2), (1, 1), (2, 0)] {
        r.clock.reach(p);
        assert_eq!(r.clock.behind, behind, "after partition {p}");
    }
}

#[test]
fn savepoint_requests_queue_in_order_each_with_its_report() {
    let s = scenario("savepoints");
    assert!(s.savepoints.len() >= 3);
    let sp = Savepoints::new(&s.savepoints);
    assert_eq!(sp.queue.len(), s.savepoints.len());
    assert_eq!(
        sp.queue_request.iter().copied().collect::<Vec<_>>(),
        (0..s.savepoints.len()).collect::<Vec<_>>()
    );
    for (r, want) in sp.reports.iter().zip(&s.savepoints) {
        assert_eq!(r.requested_at_ns, want.at.0);
        assert_eq!((r.stop, r.drain), (want.stop, want.drain));
        assert!(r.completed.is_none() && r.failure.is_none() && r.attempts.is_empty());
    }
    assert!(sp.stopped_with.is_none() && sp.by_id.is_empty() && !sp.retry);
    assert_eq!(sp.queue[0].at, SimTime(250_000_000));
}

#[test]
fn the_plan_knows_each_tasks_outputs_and_which_operators_align() {
    let s = Arc::new(scenario("checkmate"));
    let e = exec(&s);
    let workload = Arc::new(Workload::generate(&s, 0));
    let factory = BuiltinFactory::new(s.clone(), workload);
    let plan = Plan::new(
        s.clone(),
        e,
        &factory,
        RunConfig {
            seed: 0,
            algorithm: s.checkpoint.algorithm,
            mutants: crate::mutant::Mutants::NONE,
            record_trace: false,
        },
        JobOptions::default(),
    );
    let e = &plan.exec;
    for (t, outs) in plan.task_outputs.iter().enumerate() {
        let want: usize = e.tasks[t].outputs.iter().map(|o| o.channels.len()).sum();
        assert_eq!(outs.len(), want, "task {t}");
        for &ch in outs {
            assert_eq!(e.channels[ch as usize].from, t as TaskId);
        }
    }
    assert!(
        plan.task_outputs.iter().any(|o| o.is_empty()),
        "a sink task"
    );
    assert!(plan.rated_sources, "checkmate's source has a rate");
    assert_eq!(plan.forced_aligned.len(), s.operators.len());
    assert_eq!(plan.routed_by_key.len(), s.operators.len());
    for (i, op) in s.operators.iter().enumerate() {
        if plan.routed_by_key[i] {
            assert!(op.kind.is_keyed(), "{}", op.id);
        }
        if op.kind.is_committer() {
            assert!(plan.forced_aligned[i], "{}", op.id);
        }
    }
}
