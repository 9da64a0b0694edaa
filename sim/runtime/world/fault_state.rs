//! The faults component: every fault a run plans (task crashes, crash
//! points, worker and coordinator crashes, network faults, stragglers), those
//! armed for an event that has not happened yet, the failover regions and
//! the restart strategy, the degraded windows, and what became of each
//! planned fault (`FiredLog`, read by `world/warnings.rs`).
//!
//! It holds state and plans; when a fault fires and what it does to the job
//! is decided in `world/faults.rs`, `world/degraded.rs`, `world/region.rs`
//! and `world/recovery.rs`.

use crate::engine::{SimDuration, SimRng, SimTime, Stream};
use crate::fault::restart::RestartTracker;
use crate::fault::{plan_coordinator_crashes, plan_worker_crashes};
use crate::model::{CheckpointId, ExecGraph, TaskId};
use crate::scenario::{CrashSpec, Scenario, TriggerEvent, WorkerCrash};

/// The faults of a run (see the module's docs).
pub(super) struct Faults {
    pub(super) crash_plan: Vec<CrashSpec>,
    /// Entries of `crash_plan` from here on are crash points: fired by a
    /// choice, never scheduled.
    pub(super) first_crash_point: usize,
    /// Crashes planned after an event (`on = …`) that has not happened yet,
    /// by index into `crash_plan`.
    pub(super) armed_crashes: Vec<u32>,
    /// Worker crashes waiting for their event (indexes into the worker plan).
    pub(super) armed_workers: Vec<u32>,
    /// Coordinator crashes waiting for their event (indexes into
    /// `[[faults.coordinator.crash_on]]`).
    pub(super) armed_coordinator: Vec<u32>,
    /// Latency spikes and partitions waiting for their event (indexes as
    /// `Ev::NetworkFault`'s: spikes, then partitions).
    pub(super) armed_network: Vec<u32>,
    /// Stragglers waiting for their event (indexes into
    /// `[[faults.slow_tasks]]`), and every straggler's window (a triggered
    /// one's once it started).
    pub(super) armed_slow: Vec<u32>,
    pub(super) slow_windows: Vec<(SimTime, SimTime)>,
    /// The end of the planned faults (`crate::fault::fault_phase_end`).
    pub(super) phase_end: SimTime,
    /// Workers, coordinator, regions, restarts (`FaultState`).
    pub(super) fx: FaultState,
    /// What became of each planned fault.
    pub(super) log: FiredLog,
}

impl Faults {
    /// The faults `scenario` plans for a run with `seed`; `crash_points`
    /// (`[replay] crash_points`) follow the planned crashes in `crash_plan`.
    pub(super) fn new(scenario: &Scenario, seed: u64, exec: &ExecGraph) -> Faults {
        let mut crash_plan = crate::fault::plan_crashes(scenario, seed);
        let phase_end = crate::fault::fault_phase_end(&crash_plan);
        // Crash points: one plan entry each, at no time; a scripted run's
        // choice fires it at a step.
        let first_crash_point = crash_plan.len();
        for &(operator, subtask) in &scenario.replay.crash_points {
            crash_plan.push(CrashSpec {
                at: SimTime::ZERO,
                operator,
                subtask,
                trigger: None,
                repeat: false,
            });
        }
        let fx = FaultState::new(scenario, seed, exec);
        let f = &scenario.faults;
        let log = FiredLog::new(
            crash_plan.len(),
            fx.worker_plan_len(),
            fx.coordinator_plan.len(),
            f.latency_spikes.len() + f.partitions.len(),
            f.slow_tasks.len(),
            (f.storage_failures.len(), f.lost_notifications.len()),
        );
        Faults {
            crash_plan,
            first_crash_point,
            armed_crashes: Vec::new(),
            armed_workers: Vec::new(),
            armed_coordinator: Vec::new(),
            armed_network: Vec::new(),
            armed_slow: Vec::new(),
            slow_windows: Vec::new(),
            phase_end,
            fx,
            log,
        }
    }
}

/// Fault state the world keeps beside its own.
pub(super) struct FaultState {
    pub(super) restart: RestartTracker,
    pub(super) notify_rng: SimRng,
    pub(super) storage_rng: SimRng,
    /// Planned coordinator crash times.
    pub(super) coordinator_plan: Vec<SimTime>,
    /// The coordinator is down (between a crash and its successor).
    pub(super) coordinator_down: bool,
    /// The crash lost completed checkpoints (memory storage).
    pub(super) lost_checkpoints: bool,
    /// Per task: the newest checkpoint whose notification to it was lost.
    pub(super) lost_notification: Vec<CheckpointId>,
    /// Per task: the worker it runs on (empty without `[cluster]`).
    pub(super) worker_of: Vec<u32>,
    /// Planned worker crashes.
    pub(super) worker_plan: Vec<WorkerCrash>,
    /// Replacement workers are all ready at this time.
    pub(super) workers_ready_at: SimTime,
    /// When the scheduled restart happens.
    pub(super) restart_at: SimTime,
    /// Region failover: the region of each task (connected components of
    /// the channel graph), and the regions waiting for their restart.
    pub(super) region_of: Vec<u32>,
    pub(super) pending_regions: Vec<u32>,
    /// Events stamped before this attempt are stale for every task, and
    /// before `valid_from[t]` for task `t` (region restarts).
    pub(super) global_from: u32,
    pub(super) valid_from: Vec<u32>,
}

/// Connected components of the execution graph's channels, numbered in
/// order of their lowest task.
fn regions(exec: &ExecGraph) -> Vec<u32> {
    let n = exec.tasks.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for c in &exec.channels {
        let (a, b) = (
            find(&mut parent, c.from as usize),
            find(&mut parent, c.to as usize),
        );
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut next = 0;
    let mut out = Vec::with_capacity(n);
    for t in 0..n {
        let r = find(&mut parent, t);
        if id[r] == u32::MAX {
            id[r] = next;
            next += 1;
        }
        out.push(id[r]);
    }
    out
}

impl FaultState {
    pub(super) fn worker_plan(&self, i: usize) -> &WorkerCrash {
        &self.worker_plan[i]
    }

    pub(super) fn worker_plan_len(&self) -> usize {
        self.worker_plan.len()
    }

    pub(super) fn new(scenario: &Scenario, seed: u64, exec: &ExecGraph) -> FaultState {
        let tasks = exec.tasks.len();
        let worker_of = match &scenario.cluster {
            Some(c) => exec
                .tasks
                .iter()
                .map(|t| c.worker_of_slot(t.subtask))
                .collect(),
            None => Vec::new(),
        };
        FaultState {
            region_of: regions(exec),
            pending_regions: Vec::new(),
            global_from: 0,
            valid_from: vec![0; tasks],
            worker_of,
            worker_plan: plan_worker_crashes(scenario, seed),
            workers_ready_at: SimTime::ZERO,
            restart_at: SimTime::ZERO,
            restart: RestartTracker::new(&scenario.faults),
            notify_rng: SimRng::new(seed, Stream::Notifications),
            storage_rng: SimRng::new(seed, Stream::Storage),
            coordinator_plan: plan_coordinator_crashes(scenario, seed),
            coordinator_down: false,
            lost_checkpoints: false,
            lost_notification: vec![0; tasks],
        }
    }
}

/// What became of one planned fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Its time never came (the run ended first).
    Pending,
    Fired,
    /// It came but changed nothing, for this reason.
    Ignored(String),
}

/// The fate of every planned fault of a run.
pub(super) struct FiredLog {
    pub(super) crashes: Vec<Fate>,
    pub(super) worker_crashes: Vec<Fate>,
    pub(super) coordinator_crashes: Vec<Fate>,
    /// Latency spikes, then partitions (as `Ev::NetworkFault` indexes them).
    pub(super) network: Vec<Fate>,
    /// Per `[[faults.slow_tasks]]` entry: it slowed at least one step.
    pub(super) stragglers: Vec<bool>,
    /// Per `[[faults.storage_failures]]` and `[[faults.lost_notifications]]`
    /// entry: it struck.
    pub(super) storage_failures: Vec<bool>,
    pub(super) lost_notifications: Vec<bool>,
    pub(super) cancel: Fate,
}

impl FiredLog {
    pub(super) fn new(
        crashes: usize,
        workers: usize,
        coordinators: usize,
        network: usize,
        stragglers: usize,
        targeted: (usize, usize),
    ) -> FiredLog {
        FiredLog {
            crashes: vec![Fate::Pending; crashes],
            worker_crashes: vec![Fate::Pending; workers],
            coordinator_crashes: vec![Fate::Pending; coordinators],
            network: vec![Fate::Pending; network],
            stragglers: vec![false; stragglers],
            storage_failures: vec![false; targeted.0],
            lost_notifications: vec![false; targeted.1],
            cancel: Fate::Pending,
        }
    }
}

/// Whether event `on` (at `task` for one task's events, of checkpoint
/// `id`) is the one `tr` waits for: its event, its checkpoint if it names
/// one, and for one task's events the task `whose` (any task when `None`).
pub(super) fn fires(
    tr: &crate::scenario::CrashTrigger,
    whose: Option<(crate::scenario::OperatorId, u32)>,
    (on, task, id): (TriggerEvent, Option<TaskId>, u64),
    exec: &crate::model::ExecGraph,
) -> bool {
    tr.on == on
        && tr.checkpoint.is_none_or(|n| n == id)
        && (!on.is_a_tasks() || whose.is_none_or(|(o, n)| task == Some(exec.task_of(o, n))))
}

/// Takes out of `armed` every fault whose trigger event `event` fires:
/// `trigger(i)` gives fault `i`'s trigger and whose event it waits for (a
/// fault without a trigger leaves the list). Returns each fired fault with
/// its delay, in `armed`'s order.
pub(super) fn take_fired<'t>(
    armed: &mut Vec<u32>,
    event: (TriggerEvent, Option<TaskId>, u64),
    exec: &crate::model::ExecGraph,
    trigger: impl Fn(
        u32,
    ) -> Option<(
        &'t crate::scenario::CrashTrigger,
        Option<(crate::scenario::OperatorId, u32)>,
    )>,
) -> Vec<(u32, SimDuration)> {
    let mut fired = Vec::new();
    armed.retain(|&i| {
        let Some((tr, whose)) = trigger(i) else {
            return false;
        };
        let matches = fires(tr, whose, event, exec);
        if matches {
            fired.push((i, tr.delay));
        }
        !matches
    });
    fired
}
