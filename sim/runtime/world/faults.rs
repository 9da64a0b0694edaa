//! The richer fault model's part of the event loop: planned and triggered
//! worker and coordinator crashes, restart strategies, network faults
//! (latency spikes and partitions). Stragglers, lost notifications and
//! storage faults are in `degraded`. `World`'s own methods call in here
//! through small hooks.

use super::fault_state::take_fired;
use super::fault_state::Fate;
use super::{JobStatus, Mutant, Status, World};
use crate::engine::{SimDuration, SimTime};
use crate::fault::planned_faults_end;
use crate::fault::restart::{Decision, RestartTracker};
use crate::model::TaskId;
use crate::runtime::coordinator::Outcome as CpOutcome;
use crate::runtime::event::Ev;
use crate::scenario::{MemoryLoss, StorageKind, TriggerEvent};

/// Which interesting window the run is in when a fault strikes.
pub(super) struct Windows {
    pub(super) aligning: bool,
    pub(super) snapshot_unnotified: bool,
    pub(super) recovering: bool,
}

impl World<'_> {
    /// `on` happened: every worker crash armed for it is scheduled `delay`
    /// from now, once (hook in `crash_trigger`). Without `of`, a task
    /// event of any task counts.
    pub(super) fn worker_crash_trigger(&mut self, on: TriggerEvent, task: Option<TaskId>, id: u64) {
        let now = self.net.now;
        let plan = &self.faults.fx.worker_plan;
        let event = (on, task, id);
        let fired = take_fired(
            &mut self.faults.armed_workers,
            event,
            &self.plan.exec,
            |i| {
                let tr = plan[i as usize].trigger.as_ref()?;
                Some((tr, tr.of))
            },
        );
        for (index, delay) in fired {
            let at = now.plus(delay);
            self.faults.phase_end = self.faults.phase_end.max(at);
            self.faults.fx.worker_plan[index as usize].at = at;
            self.schedule_any(at, Ev::WorkerCrash { index });
        }
    }

    /// `on` happened: every coordinator crash armed for it joins the plan
    /// and is scheduled `delay` from now, once (hook in `crash_trigger`).
    pub(super) fn coordinator_crash_trigger(
        &mut self,
        on: TriggerEvent,
        task: Option<TaskId>,
        id: u64,
    ) {
        let now = self.net.now;
        let Some(c) = self.plan.scenario.faults.coordinator.as_ref() else {
            return;
        };
        let event = (on, task, id);
        let fired = take_fired(
            &mut self.faults.armed_coordinator,
            event,
            &self.plan.exec,
            |i| {
                let tr = &c.crash_on[i as usize];
                Some((tr, tr.of))
            },
        );
        for (_, delay) in fired {
            let at = now.plus(delay);
            let index = self.faults.fx.coordinator_plan.len() as u32;
            self.faults.fx.coordinator_plan.push(at);
            self.faults.log.coordinator_crashes.push(Fate::Pending);
            self.faults.phase_end = self.faults.phase_end.max(at);
            self.schedule_any(at, Ev::CoordinatorCrash { index });
        }
    }

    /// The `i`-th planned worker crash: its worker and time.
    pub(super) fn planned_worker_crash(&self, i: usize) -> (u32, SimTime) {
        let w = &self.faults.fx.worker_plan[i];
        (w.worker, w.at)
    }

    /// Schedules the planned faults other than task crashes (hook in
    /// `main_loop`), and widens the fault phase to cover them.
    pub(super) fn schedule_planned_faults(&mut self) {
        let plan = self.faults.fx.coordinator_plan.clone();
        for (i, &at) in plan.iter().enumerate() {
            self.schedule_any(at, Ev::CoordinatorCrash { index: i as u32 });
        }
        let storage = self.plan.scenario.faults.storage.as_ref();
        let storage_crashes = storage.map_or(Vec::new(), |s| s.crashes.clone());
        for (i, &at) in storage_crashes.iter().enumerate() {
            self.schedule_any(at, Ev::StorageCrash { index: i as u32 });
        }
        let triggered = self.plan.scenario.faults.coordinator.as_ref();
        self.faults.armed_coordinator =
            (0..triggered.map_or(0, |c| c.crash_on.len()) as u32).collect();
        let workers = self.faults.fx.worker_plan.clone();
        for (i, w) in workers.iter().enumerate() {
            match w.trigger {
                None => self.schedule_any(w.at, Ev::WorkerCrash { index: i as u32 }),
                Some(_) => self.faults.armed_workers.push(i as u32),
            }
        }
        self.faults.phase_end = planned_faults_end(
            &self.plan.scenario,
            &self.faults.crash_plan,
            &plan,
            &workers,
        );
        self.plan_network_faults();
        let slow = &self.plan.scenario.faults.slow_tasks;
        self.faults.slow_windows = slow
            .iter()
            .map(|s| match s.trigger {
                None => (s.from, s.until),
                Some(_) => (SimTime(u64::MAX), SimTime(u64::MAX)),
            })
            .collect();
        self.faults.armed_slow = (0..slow.len() as u32)
            .filter(|&i| slow[i as usize].trigger.is_some())
            .collect();
    }

    /// The fault events (hook in `dispatch`).
    pub(super) fn dispatch_fault(&mut self, ev: Ev) {
        match ev {
            Ev::StorageWriteFailed { task, id, .. } if self.is_local() => {
                self.local_write_failed(task, id)
            }
            Ev::StorageWriteFailed { id, too_large, .. } => match too_large {
                Some(_) => self.state_too_large(id),
                None => self.storage_failed(id),
            },
            Ev::FinalizeFailed { id } => self.storage_failed(id),
            Ev::CoordinatorCrash { index } => self.coordinator_crash(index),
            Ev::StorageCrash { index } => self.storage_crash(index),
            Ev::CoordinatorRecovered => self.coordinator_recovered(),
            Ev::WorkerCrash { index } => self.worker_crash(index),
            Ev::NetworkFault { index, lost } => self.network_fault(index, lost),
            Ev::WorkerLost { worker } => {
                if self.force_global_restart() {
                    return;
                }
                let tasks: Vec<String> = (0..self.tasks.list.len())
                    .filter(|&t| self.faults.fx.worker_of.get(t) == Some(&worker))
                    .map(|t| self.plan.exec.tasks[t].name.clone())
                    .collect();
                self.failover(format!(
                    "worker {worker} lost (heartbeat timeout; tasks {})",
                    tasks.join(", ")
                ));
            }
            _ => {}
        }
    }

    pub(super) fn windows(&self) -> Windows {
        let aligning = self
            .tasks
            .list
            .iter()
            .any(|t| t.status == Status::Running && t.handler.aligning().is_some());
        let snapshot_unnotified = self.tasks.list.iter().any(|t| {
            t.last_checkpoint > t.last_notified
                && !self.coord.aborted_ids.contains(&t.last_checkpoint)
        });
        let recovering = self.recovery.since.is_some() || self.recovery.pending > 0;
        Windows {
            aligning,
            snapshot_unnotified,
            recovering,
        }
    }

    /// A planned task crash comes up (hook in `dispatch`, before `crash`).
    pub(super) fn note_crash_event(&mut self) {
        if self.faults.fx.coordinator_down {
            self.rec.counters.crashes_during_coordinator_failover += 1;
        }
    }

    /// A task crash (hook in `crash`): the fault-model windows it hit.
    pub(super) fn note_crash(&mut self, _t: TaskId) {
        let outstanding = self
            .tasks
            .list
            .iter()
            .zip(&self.faults.fx.lost_notification)
            .any(|(task, &lost)| lost > task.last_notified);
        if outstanding {
            self.rec.counters.crashes_with_lost_notification += 1;
        }
        let now = self.net.now;
        if self
            .faults
            .slow_windows
            .iter()
            .any(|&(from, until)| from <= now && now < until)
        {
            self.rec.counters.crashes_during_straggling += 1;
        }
    }

    // ------------------------------------------------------------ restarts

    /// Asks the restart strategy about a failure (hook in `failover`):
    /// `Some(delay)` to restart, `None` when it gave up (the job failed).
    pub(super) fn restart_decision(&mut self, reason: &str) -> Option<SimDuration> {
        // A global failover: every task restarts, whatever region restart
        // was pending.
        self.faults.fx.global_from = self.net.attempt;
        self.faults.fx.pending_regions.clear();
        self.rec.counters.tasks_restarted += self.tasks.list.len() as u64;
        self.decide_restart(reason)
    }

    /// The restart strategy's answer, for any kind of failover.
    pub(super) fn decide_restart(&mut self, reason: &str) -> Option<SimDuration> {
        match self.faults.fx.restart.on_failure(self.net.now) {
            Decision::Restart(delay) => Some(delay),
            Decision::GiveUp(_) if self.plan.cfg.mutants.has(Mutant::RestartNeverGivesUp) => {
                // Mutant: the strategy's limit is not enforced; the job
                // restarts after the configured delay, forever.
                crate::mutant::fired(Mutant::RestartNeverGivesUp);
                Some(self.plan.scenario.faults.restart_delay)
            }
            Decision::GiveUp(why) => {
                self.rec.counters.restart_strategy_gave_up += 1;
                self.job.status = JobStatus::Failed;
                self.job.failed_reason = Some(format!("{why} (last failure: {reason})"));
                None
            }
        }
    }

    /// When a restart after `delay` happens (hook in `failover`): not before
    /// the replacement workers are ready.
    pub(super) fn restart_time(&mut self, delay: SimDuration) -> SimTime {
        let at = self.net.now.plus(delay);
        let at = if self.faults.fx.workers_ready_at > at {
            self.rec.counters.restarts_waiting_for_worker += 1;
            self.faults.fx.workers_ready_at
        } else {
            at
        };
        self.faults.fx.restart_at = at;
        at
    }

    // ------------------------------------------------------------ workers

    /// A whole worker crashes: every subtask on it dies at once; the
    /// coordinator notices after the heartbeat timeout; a replacement is
    /// ready after the replacement delay.
    fn worker_crash(&mut self, index: u32) {
        let Some(cluster) = self.plan.scenario.cluster.clone() else {
            return;
        };
        let worker = self.faults.fx.worker_plan[index as usize].worker;
        if matches!(
            self.job.status,
            JobStatus::Finished | JobStatus::Failed | JobStatus::Cancelled
        ) {
            self.rec.counters.worker_crashes_ignored += 1;
            let why = self.job_not_running();
            self.note_fault(|| format!("crash of worker {worker} took no effect: {why}"));
            self.faults.log.worker_crashes[index as usize] = Fate::Ignored(why);
            return;
        }
        if self.job.status == JobStatus::Running
            && self.sp.stopped_with.is_none()
            && !(0..self.tasks.list.len()).any(|t| {
                self.faults.fx.worker_of[t] == worker
                    && self.tasks.list[t].status == Status::Running
            })
        {
            // An idle worker (its tasks finished, or none placed on it):
            // losing it fails nothing (Flink releases its slots).
            self.rec.counters.worker_crashes_ignored += 1;
            let at = SimDuration(self.net.now.0);
            let why = format!("no running subtask was on worker {worker} at {at}");
            self.note_fault(|| format!("crash of worker {worker} took no effect: {why}"));
            self.faults.log.worker_crashes[index as usize] = Fate::Ignored(why);
            return;
        }
        self.faults.log.worker_crashes[index as usize] = Fate::Fired;
        self.note_fault(|| format!("crash of worker {worker}"));
        self.rec.counters.worker_crashes += 1;
        if self.faults.fx.coordinator_down {
            self.rec.counters.worker_crashes_during_coordinator_failover += 1;
        }
        let w = self.windows();
        if w.aligning {
            self.rec.counters.worker_crashes_during_alignment += 1;
        }
        if w.snapshot_unnotified {
            self.rec.counters.worker_crashes_between_snapshot_and_notify += 1;
        }
        if w.recovering || self.job.status == JobStatus::Restarting {
            self.rec.counters.worker_crashes_during_recovery += 1;
        }
        // The worker's file-merging manager goes with it.
        for t in 0..self.tasks.list.len() as TaskId {
            if self.faults.fx.worker_of[t as usize] == worker {
                self.storage.manager_lost(t);
            }
        }
        let now = self.net.now;
        let ready = now.plus(cluster.replacement_delay);
        self.faults.fx.workers_ready_at = self.faults.fx.workers_ready_at.max(ready);
        if self.recovery.since.is_none() {
            self.recovery.since = Some(now);
        }
        if self.job.status == JobStatus::Restarting {
            // No task runs on it now, but the redeployment must wait for
            // the replacement (unless a new coordinator is still coming,
            // which waits by itself). A pending region restart becomes global.
            if !self.faults.fx.pending_regions.is_empty() {
                self.faults.fx.workers_ready_at = self.faults.fx.workers_ready_at.max(ready);
                self.faults.fx.restart_at = self.faults.fx.restart_at.max(ready);
                self.force_global_restart();
                return;
            }
            if !self.faults.fx.coordinator_down && self.faults.fx.restart_at < ready {
                self.net.attempt += 1;
                self.faults.fx.global_from = self.net.attempt;
                self.faults.fx.restart_at = ready;
                self.rec.counters.restarts_waiting_for_worker += 1;
                self.net.schedule(ready, Ev::Restart);
            }
            return;
        }
        let mut killed = 0;
        for t in 0..self.tasks.list.len() as TaskId {
            let ti = t as usize;
            if self.faults.fx.worker_of[ti] != worker
                || self.tasks.list[ti].status != Status::Running
            {
                continue;
            }
            self.tasks.set_status(ti, Status::Dead);
            let outputs = self.plan.task_outputs[ti].clone();
            self.net.kill_task_outputs(t, &outputs);
            killed += 1;
        }
        self.rec.counters.worker_tasks_killed += killed;
        self.mark_worker_crash(worker);
        let at = now.plus(cluster.heartbeat_timeout);
        self.net.schedule(at, Ev::WorkerLost { worker });
    }

    /// Timeline marks for the tasks a worker crash killed (trace only).
    fn mark_worker_crash(&mut self, worker: u32) {
        for t in 0..self.tasks.list.len() as TaskId {
            if self.faults.fx.worker_of[t as usize] == worker
                && self.tasks.list[t as usize].status == Status::Dead
            {
                self.mark(|| super::Timeline::Crash { task: t });
            }
        }
    }

    // ------------------------------------------------------------ network

    /// Hands the latency spikes and partitions to the network and schedules
    /// their start (for the counters) and the partitions' heartbeat loss.
    fn plan_network_faults(&mut self) {
        let f = self.plan.scenario.faults.clone();
        let spikes = f.latency_spikes.len();
        let nch = self.plan.exec.channels.len();
        for (i, s) in f.latency_spikes.iter().enumerate() {
            let channels: Vec<bool> = (0..nch)
                .map(|ch| {
                    let c = &self.plan.exec.channels[ch];
                    let (from, to) = (c.from as usize, c.to as usize);
                    let edge_ok = s.edge.is_none_or(|(a, b)| c.from_op == a && c.to_op == b);
                    let worker_ok = s.worker.is_none_or(|w| {
                        self.faults.fx.worker_of.get(from) == Some(&w)
                            || self.faults.fx.worker_of.get(to) == Some(&w)
                    });
                    edge_ok && worker_ok
                })
                .collect();
            // A triggered spike waits, inactive, for its event.
            let (from, until) = match s.trigger {
                None => (s.from, s.until),
                Some(_) => (SimTime(u64::MAX), SimTime(u64::MAX)),
            };
            self.net.delays.push(crate::runtime::net::ChannelDelay {
                from,
                until,
                extra: s.extra.nanos(),
                hold: false,
                channels,
            });
            let index = i as u32;
            match s.trigger {
                None => {
                    self.schedule_any(s.from, Ev::NetworkFault { index, lost: false });
                    self.faults.phase_end = self.faults.phase_end.max(s.until);
                }
                Some(_) => self.faults.armed_network.push(index),
            }
        }
        for (i, p) in f.partitions.iter().enumerate() {
            let cut = |t: u32| p.workers.contains(&self.faults.fx.worker_of[t as usize]);
            let channels: Vec<bool> = self
                .plan
                .exec
                .channels
                .iter()
                .map(|c| cut(c.from) != cut(c.to))
                .collect();
            let index = (spikes + i) as u32;
            let (from, until) = match p.trigger {
                None => (p.from, p.until),
                Some(_) => (SimTime(u64::MAX), SimTime(u64::MAX)),
            };
            self.net.delays.push(crate::runtime::net::ChannelDelay {
                from,
                until,
                extra: 0,
                hold: true,
                channels,
            });
            match p.trigger {
                None => self.start_network_fault(index, p.from, p.until),
                Some(_) => self.faults.armed_network.push(index),
            }
        }
    }

    /// Network fault `index` (spikes, then partitions) holds from `from` to
    /// `until`: its start (and a partition's loss at the heartbeat timeout)
    /// scheduled, the fault phase widened.
    fn start_network_fault(&mut self, index: u32, from: SimTime, until: SimTime) {
        self.net.delays[index as usize].from = from;
        self.net.delays[index as usize].until = until;
        self.schedule_any(from, Ev::NetworkFault { index, lost: false });
        let spikes = self.plan.scenario.faults.latency_spikes.len();
        if index as usize >= spikes {
            let heartbeat = self
                .plan
                .scenario
                .cluster
                .as_ref()
                .map_or(SimDuration::ZERO, |c| c.heartbeat_timeout);
            let lost_at = from.plus(heartbeat);
            if until > lost_at {
                self.schedule_any(lost_at, Ev::NetworkFault { index, lost: true });
            }
        }
        self.faults.phase_end = self.faults.phase_end.max(until);
    }

    /// `on` happened: every network fault armed for it starts `delay` from
    /// now and lasts its `duration`, once (hook in `crash_trigger`).
    pub(super) fn network_fault_trigger(
        &mut self,
        on: TriggerEvent,
        task: Option<TaskId>,
        id: u64,
    ) {
        let now = self.net.now;
        let f = &self.plan.scenario.faults;
        let spikes = f.latency_spikes.len();
        let window = |i: usize| match i < spikes {
            true => (&f.latency_spikes[i].trigger, f.latency_spikes[i].until),
            false => (
                &f.partitions[i - spikes].trigger,
                f.partitions[i - spikes].until,
            ),
        };
        let event = (on, task, id);
        let fired = take_fired(
            &mut self.faults.armed_network,
            event,
            &self.plan.exec,
            |i| {
                let tr = window(i as usize).0.as_ref()?;
                Some((tr, tr.of))
            },
        );
        let windows: Vec<(u32, SimTime, SimTime)> = fired
            .into_iter()
            .map(|(index, delay)| {
                let from = now.plus(delay);
                (
                    index,
                    from,
                    from.plus(SimDuration(window(index as usize).1 .0)),
                )
            })
            .collect();
        for (index, from, until) in windows {
            self.start_network_fault(index, from, until);
        }
    }

    fn network_fault(&mut self, index: u32, lost: bool) {
        let spikes = self.plan.scenario.faults.latency_spikes.len();
        if !lost {
            let what = match (index as usize) < spikes {
                true => format!("latency spike {}", index + 1),
                false => format!("network partition {}", index as usize - spikes + 1),
            };
            let fate = match self.job.status {
                JobStatus::Running | JobStatus::Restarting => Fate::Fired,
                _ => Fate::Ignored(self.job_not_running()),
            };
            self.note_fault(|| match &fate {
                Fate::Ignored(why) => format!("{what} took no effect: {why}"),
                _ => format!("{what} begins"),
            });
            self.faults.log.network[index as usize] = fate;
        }
        let w = self.windows();
        let recovering = w.recovering || self.job.status == JobStatus::Restarting;
        let c = &mut self.rec.counters;
        if (index as usize) < spikes {
            c.latency_spikes += 1;
            c.latency_spikes_during_alignment += u64::from(w.aligning);
            c.latency_spikes_between_snapshot_and_notify += u64::from(w.snapshot_unnotified);
            c.latency_spikes_during_recovery += u64::from(recovering);
            return;
        }
        let mut p = self.plan.scenario.faults.partitions[index as usize - spikes].clone();
        // Its actual window (a triggered one's is known once it started).
        p.until = self.net.delays[index as usize].until;
        if !lost {
            c.partitions += 1;
            c.partitions_during_coordinator_failover += u64::from(self.faults.fx.coordinator_down);
            c.partitions_during_alignment += u64::from(w.aligning);
            c.partitions_between_snapshot_and_notify += u64::from(w.snapshot_unnotified);
            c.partitions_during_recovery += u64::from(recovering);
            return;
        }
        // The partition outlasted the heartbeat timeout: the coordinator
        // (on the other side) declares the cut-off workers lost. They rejoin
        // when the partition heals.
        if self.job.status != JobStatus::Running {
            // Not running (restarting, finished): nothing to fail; a restart
            // still waits for the workers to come back.
            if self.job.status == JobStatus::Restarting
                && !self.faults.fx.pending_regions.is_empty()
            {
                self.faults.fx.workers_ready_at = self.faults.fx.workers_ready_at.max(p.until);
                self.faults.fx.restart_at = self.faults.fx.restart_at.max(p.until);
                self.force_global_restart();
                return;
            }
            if self.job.status == JobStatus::Restarting {
                // A new coordinator still to come waits for them by itself.
                self.faults.fx.workers_ready_at = self.faults.fx.workers_ready_at.max(p.until);
            }
            if self.job.status == JobStatus::Restarting
                && !self.faults.fx.coordinator_down
                && self.faults.fx.restart_at < p.until
            {
                self.net.attempt += 1;
                self.faults.fx.global_from = self.net.attempt;
                self.faults.fx.restart_at = p.until;
                self.rec.counters.restarts_waiting_for_worker += 1;
                self.net.schedule(p.until, Ev::Restart);
            }
            return;
        }
        self.rec.counters.partitions_lost += 1;
        if self.recovery.since.is_none() {
            self.recovery.since = Some(self.net.now);
        }
        self.faults.fx.workers_ready_at = self.faults.fx.workers_ready_at.max(p.until);
        for t in 0..self.tasks.list.len() as TaskId {
            let ti = t as usize;
            if p.workers.contains(&self.faults.fx.worker_of[ti])
                && self.tasks.list[ti].status == Status::Running
            {
                self.tasks.set_status(ti, Status::Dead);
                let outputs = self.plan.task_outputs[ti].clone();
                self.net.kill_task_outputs(t, &outputs);
                self.mark(|| super::Timeline::Crash { task: t });
            }
        }
        let list: Vec<String> = p.workers.iter().map(|w| w.to_string()).collect();
        self.failover(format!(
            "workers {} unreachable: network partition longer than the heartbeat timeout",
            list.join(", ")
        ));
    }

    /// While a region restart is pending, a failure that needs every task
    /// restarted turns it into a global restart at the same time (or later,
    /// if a replacement worker is not ready). False when no region restart
    /// is pending.
    fn force_global_restart(&mut self) -> bool {
        if self.job.status != JobStatus::Restarting || self.faults.fx.pending_regions.is_empty() {
            return false;
        }
        self.escalate_to_global();
        self.net.attempt += 1;
        self.faults.fx.global_from = self.net.attempt;
        let at = self.faults.fx.restart_at.max(self.net.now);
        self.faults.fx.restart_at = at;
        self.net.schedule(at, Ev::Restart);
        true
    }

    /// Copies counters the network keeps into the run's (hook in `finish`).
    pub(super) fn sync_fault_counters(&mut self) {
        self.rec.counters.messages_delayed = self.net.delayed_messages;
        self.rec.counters.messages_held = self.net.held_messages;
        self.rec.counters.upstream_blocks = self.net.upstream_blocks;
        self.rec.counters.credit_messages = self.net.credit_messages;
        self.rec.counters.recovered_records_persisted = self.net.recovered_persisted;
    }

    // ------------------------------------------------------------ coordinator

    /// The coordinator crashes: pending checkpoints are lost, every task is
    /// cancelled, and with `memory` storage the completed checkpoints too.
    fn coordinator_crash(&mut self, index: u32) {
        if matches!(
            self.job.status,
            JobStatus::Finished | JobStatus::Failed | JobStatus::Cancelled
        ) || self.faults.fx.coordinator_down
            || self.sp.stopped_with.is_some()
        {
            self.rec.counters.coordinator_crashes_ignored += 1;
            let why = if self.faults.fx.coordinator_down {
                format!(
                    "the coordinator was already down at {}",
                    SimDuration(self.net.now.0)
                )
            } else {
                self.job_not_running()
            };
            self.note_fault(|| format!("coordinator crash took no effect: {why}"));
            self.faults.log.coordinator_crashes[index as usize] = Fate::Ignored(why);
            return;
        }
        self.faults.log.coordinator_crashes[index as usize] = Fate::Fired;
        self.note_fault(|| "coordinator crash".to_string());
        self.rec.counters.coordinator_crashes += 1;
        let w = self.windows();
        if w.aligning {
            self.rec.counters.coordinator_crashes_during_alignment += 1;
        }
        if w.snapshot_unnotified {
            self.rec
                .counters
                .coordinator_crashes_between_snapshot_and_notify += 1;
        }
        if w.recovering || self.job.status == JobStatus::Restarting {
            self.rec.counters.coordinator_crashes_during_recovery += 1;
        }
        if self.recovery.since.is_none() {
            self.recovery.since = Some(self.net.now);
        }
        self.check_closed();
        self.stop_all_tasks(CpOutcome::Failover);
        self.recovery_stopped(None);
        self.coord.finishing = false;
        self.coord.final_id = None;
        self.faults.fx.global_from = self.net.attempt;
        self.faults.fx.pending_regions.clear();
        self.rec.counters.tasks_restarted += self.tasks.list.len() as u64;
        self.job.status = JobStatus::Restarting;
        self.faults.fx.coordinator_down = true;
        // Mutant: the new coordinator does not recover the durable store.
        let forget = self
            .plan
            .cfg
            .mutants
            .has(crate::mutant::Mutant::CoordinatorForgetsCheckpoints);
        if (self.plan.scenario.checkpoint.storage == StorageKind::Memory || forget)
            && !self.coord.retained.is_empty()
        {
            if self.plan.scenario.checkpoint.storage != StorageKind::Memory {
                crate::mutant::fired(crate::mutant::Mutant::CoordinatorForgetsCheckpoints);
            }
            self.rec.counters.checkpoints_lost_with_coordinator += self.coord.retained.len() as u64;
            self.coord.retained.clear();
            self.faults.fx.lost_checkpoints = true;
            // A job started from a savepoint is submitted with it: the new
            // coordinator restores that snapshot again, not nothing.
            if let Some(r) = self.plan.job_opts.restore.clone() {
                self.coord
                    .retained
                    .push_back(Self::restore_completed(&r, &self.net.sizes));
            }
        }
        if self.is_local() && self.plan.scenario.checkpoint.storage == StorageKind::Memory {
            self.local_lost();
        }
        let delay = self
            .plan
            .scenario
            .faults
            .coordinator
            .as_ref()
            .map_or(SimDuration::ZERO, |c| c.failover_delay);
        let at = self.net.now.plus(delay);
        self.schedule_any(at, Ev::CoordinatorRecovered);
    }

    /// A new coordinator takes over: it restores the job from the latest
    /// completed checkpoint it finds in durable storage (none with `memory`),
    /// or fails the job if so configured.
    fn coordinator_recovered(&mut self) {
        if !self.faults.fx.coordinator_down {
            return;
        }
        self.faults.fx.coordinator_down = false;
        self.rec.counters.coordinator_failovers += 1;
        // A new coordinator starts with a fresh restart strategy.
        self.faults.fx.restart = RestartTracker::new(&self.plan.scenario.faults);
        let lost = std::mem::take(&mut self.faults.fx.lost_checkpoints);
        let fail = self
            .plan
            .scenario
            .faults
            .coordinator
            .as_ref()
            .is_some_and(|c| c.on_memory_loss == MemoryLoss::Fail);
        if lost && fail {
            self.note_fault(|| {
                "coordinator failover: the completed checkpoints were lost with memory storage; the job failed".to_string()
            });
            self.job.status = JobStatus::Failed;
            self.job.failed_reason = Some(
                "the coordinator crashed and its completed checkpoints were lost with memory storage (on_memory_loss = \"fail\")"
                    .to_string(),
            );
            return;
        }
        self.files_coordinator_recovered();
        let latest = self.coord.latest().map(|c| c.id);
        self.note_fault(|| match latest {
            Some(id) => format!(
                "coordinator failover: the new leader restarts the job from checkpoint {id}"
            ),
            None => {
                "coordinator failover: the new leader restarts the job from scratch".to_string()
            }
        });
        if self.coord.latest().is_some() {
            self.rec.counters.coordinator_recoveries_from_checkpoint += 1;
        } else {
            self.rec.counters.coordinator_recoveries_from_scratch += 1;
        }
        if self.faults.fx.workers_ready_at > self.net.now {
            // A replacement worker is not ready yet.
            let at = self.faults.fx.workers_ready_at;
            self.faults.fx.restart_at = at;
            self.rec.counters.restarts_waiting_for_worker += 1;
            self.net.schedule(at, Ev::Restart);
            return;
        }
        self.restart();
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CoordinatorForgetsCheckpoints: Mutant = Mutant::declare(&MutantInfo {
            name: "coordinator-forgets-checkpoints",
            part: "coordinator failover",
            what: "a new coordinator does not recover the completed checkpoints from durable (filesystem) storage and restarts the job from scratch",
            modelled_on: "a JobManager failover that does not recover the completed-checkpoint store from HA, restarting with empty state",
            caught_by: "exactly-once-output",
            applies: &[("faults", "aligned")],
        });
        pub const RestartNeverGivesUp: Mutant = Mutant::declare(&MutantInfo {
            name: "restart-never-gives-up",
            part: "restart strategy",
            what: "the restart strategy never gives up: a job with a task that fails in every attempt restarts forever instead of failing",
            modelled_on: "restart strategies whose attempt limit is lost on the way to the scheduler (a failure that does not count as an attempt, an unbounded default), leaving a job in a restart loop that never reports failed",
            caught_by: "progress",
            applies: &[("failing-task", "aligned")],
        });
    }
}
