//! Fault plans. Every crash time is a virtual time chosen before the run,
//! from the scenario's explicit list and from the seed's fault stream, so two
//! algorithms run on the same seed meet the same crashes. A job restored
//! from a snapshot file takes the faults that come after the snapshot on
//! the job's clock ([`after_restore`]).

pub mod restart;

use crate::engine::{SimRng, SimTime, Stream};
use crate::scenario::{CrashSpec, FaultSpec, OperatorId, RandomCrashes, Scenario, WorkerCrash};

/// Slot length for random crashes: each 1 ms slot of the window crashes with
/// probability `1ms / mean_interval` (integer arithmetic, no exponentials).
const SLOT_NS: u64 = 1_000_000;

/// The crashes of a run, sorted by time (ties keep plan order).
pub fn plan_crashes(scenario: &Scenario, seed: u64) -> Vec<CrashSpec> {
    let mut plan = scenario.faults.crashes.clone();
    if let Some(r) = &scenario.faults.random {
        let mut rng = SimRng::new(seed, Stream::Faults);
        // Every operator's subtasks, or only those of `operators`.
        let chosen =
            |i: usize| r.operators.is_empty() || r.operators.contains(&OperatorId(i as u32));
        let tasks: Vec<(OperatorId, u32)> = scenario
            .operators
            .iter()
            .enumerate()
            .filter(|(i, _)| chosen(*i))
            .flat_map(|(i, op)| (0..op.parallelism).map(move |s| (OperatorId(i as u32), s)))
            .collect();
        let mut added = 0;
        let mut slot = r.window_start.0;
        let mean = r.mean_interval.0.max(1);
        while slot < r.window_end.0 && added < r.max_crashes {
            // Draw the same number of values per slot whatever the outcome,
            // so the plan of later slots does not depend on earlier hits.
            let hit = rng.below(mean) < SLOT_NS;
            let offset = rng.below(SLOT_NS);
            let which = rng.below(tasks.len() as u64) as usize;
            if hit {
                let at = (slot + offset).min(r.window_end.0.saturating_sub(1));
                let (operator, subtask) = tasks[which];
                plan.push(CrashSpec {
                    at: SimTime(at),
                    operator,
                    subtask,
                    trigger: None,
                    repeat: false,
                });
                added += 1;
            }
            slot += SLOT_NS;
        }
    }
    plan.sort_by_key(|c| c.at);
    plan
}

/// When the fault phase ends: at the last planned crash (0 without any).
/// After it comes the quiet phase, in which no new fault happens and
/// checkpoints must complete again.
pub fn fault_phase_end(plan: &[CrashSpec]) -> SimTime {
    // A triggered crash moves the end when it fires (its time is not
    // known before the run).
    plan.iter()
        .filter(|c| c.trigger.is_none())
        .map(|c| c.at)
        .max()
        .unwrap_or(SimTime::ZERO)
}

/// The coordinator's crash times, sorted: the explicit ones and those drawn
/// from the seed's own stream (`Stream::CoordinatorFaults`), so enabling them
/// shifts no other draw.
pub fn plan_coordinator_crashes(scenario: &Scenario, seed: u64) -> Vec<SimTime> {
    let Some(c) = &scenario.faults.coordinator else {
        return Vec::new();
    };
    let mut plan = c.crashes.clone();
    if let Some(r) = &c.random {
        let mut rng = SimRng::new(seed, Stream::CoordinatorFaults);
        let mut added = 0;
        let mut slot = r.window_start.0;
        let mean = r.mean_interval.0.max(1);
        while slot < r.window_end.0 && added < r.max_crashes {
            let hit = rng.below(mean) < SLOT_NS;
            let offset = rng.below(SLOT_NS);
            if hit {
                plan.push(SimTime(
                    (slot + offset).min(r.window_end.0.saturating_sub(1)),
                ));
                added += 1;
            }
            slot += SLOT_NS;
        }
    }
    plan.sort();
    plan
}

/// The worker crashes of a run, sorted by time: the explicit ones and those
/// drawn from `Stream::WorkerFaults` (time and worker, three draws a slot).
pub fn plan_worker_crashes(scenario: &Scenario, seed: u64) -> Vec<WorkerCrash> {
    let mut plan = scenario.faults.worker_crashes.clone();
    if let (Some(r), Some(c)) = (&scenario.faults.random_workers, &scenario.cluster) {
        let mut rng = SimRng::new(seed, Stream::WorkerFaults);
        let mut added = 0;
        let mut slot = r.window_start.0;
        let mean = r.mean_interval.0.max(1);
        while slot < r.window_end.0 && added < r.max_crashes {
            let hit = rng.below(mean) < SLOT_NS;
            let offset = rng.below(SLOT_NS);
            // Any worker, or one of `workers` (one draw either way).
            let worker = match r.workers.len() {
                0 => rng.below(u64::from(c.workers.max(1))) as u32,
                n => r.workers[rng.below(n as u64) as usize],
            };
            if hit {
                let at = SimTime((slot + offset).min(r.window_end.0.saturating_sub(1)));
                plan.push(WorkerCrash {
                    at,
                    worker,
                    trigger: None,
                });
                added += 1;
            }
            slot += SLOT_NS;
        }
    }
    plan.sort_by_key(|c| c.at);
    plan
}

/// The end of the fault phase counting every planned fault kind: task,
/// coordinator and worker crashes and the end of straggler windows.
pub fn planned_faults_end(
    scenario: &Scenario,
    crashes: &[CrashSpec],
    coordinator: &[SimTime],
    workers: &[WorkerCrash],
) -> SimTime {
    // A triggered straggler moves the end when it starts.
    let slow = scenario.faults.slow_tasks.iter();
    let slow = slow.filter(|s| s.trigger.is_none()).map(|s| s.until);
    fault_phase_end(crashes)
        .max(coordinator.iter().copied().max().unwrap_or(SimTime::ZERO))
        .max(
            // A triggered crash moves the end when it fires.
            workers
                .iter()
                .filter(|w| w.trigger.is_none())
                .map(|w| w.at)
                .max()
                .unwrap_or(SimTime::ZERO),
        )
        .max(slow.max().unwrap_or(SimTime::ZERO))
}

/// The faults of a job restored at `at` on the job's clock (when its
/// snapshot completed, counted from the job's first start), on the restored
/// run's clock, whose time 0 is the restore: a planned time `t` after `at`
/// becomes `t - at`; one at or before `at` was the first run's past and is
/// dropped; a random table draws afresh (from the restored run's seed, with
/// its whole `max_crashes`) over what remains of its window; a straggler,
/// latency spike or partition keeps what remains of its span. Faults
/// triggered by an event, and rates, are unchanged. Returns how many planned
/// faults were dropped.
pub fn after_restore(faults: &mut FaultSpec, at: SimTime) -> usize {
    let before = count_timed(faults);
    let point = |t: SimTime| (t > at).then(|| SimTime(t.0 - at.0));
    // A span keeps what remains of it after the restore.
    let span = |from: SimTime, until: SimTime| {
        (until > at).then(|| {
            (
                SimTime(from.0.saturating_sub(at.0)),
                SimTime(until.0 - at.0),
            )
        })
    };
    faults
        .crashes
        .retain_mut(|c| c.trigger.is_some() || point(c.at).map(|t| c.at = t).is_some());
    faults
        .worker_crashes
        .retain_mut(|c| c.trigger.is_some() || point(c.at).map(|t| c.at = t).is_some());
    faults.slow_tasks.retain_mut(|s| {
        s.trigger.is_some()
            || span(s.from, s.until)
                .map(|(f, u)| (s.from, s.until) = (f, u))
                .is_some()
    });
    faults.latency_spikes.retain_mut(|s| {
        s.trigger.is_some()
            || span(s.from, s.until)
                .map(|(f, u)| (s.from, s.until) = (f, u))
                .is_some()
    });
    faults.partitions.retain_mut(|p| {
        p.trigger.is_some()
            || span(p.from, p.until)
                .map(|(f, u)| (p.from, p.until) = (f, u))
                .is_some()
    });
    let window = |r: &mut Option<RandomCrashes>| {
        let Some(t) = r else { return };
        match span(t.window_start, t.window_end) {
            Some((start, end)) => (t.window_start, t.window_end) = (start, end),
            None => *r = None,
        }
    };
    window(&mut faults.random);
    window(&mut faults.random_workers);
    if let Some(c) = &mut faults.coordinator {
        c.crashes = c.crashes.iter().filter_map(|&t| point(t)).collect();
        window(&mut c.random);
    }
    before - count_timed(faults)
}

/// Faults planned at a time (not on an event), and random tables.
fn count_timed(f: &FaultSpec) -> usize {
    let timed = |t: &Option<crate::scenario::CrashTrigger>| t.is_none();
    f.crashes.iter().filter(|c| timed(&c.trigger)).count()
        + f.worker_crashes
            .iter()
            .filter(|c| timed(&c.trigger))
            .count()
        + f.slow_tasks.iter().filter(|s| timed(&s.trigger)).count()
        + f.latency_spikes
            .iter()
            .filter(|s| timed(&s.trigger))
            .count()
        + f.partitions.iter().filter(|p| timed(&p.trigger)).count()
        + usize::from(f.random.is_some())
        + usize::from(f.random_workers.is_some())
        + f.coordinator
            .as_ref()
            .map_or(0, |c| c.crashes.len() + usize::from(c.random.is_some()))
}
