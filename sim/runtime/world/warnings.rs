//! What a run was asked to do but did not: planned faults that never took
//! effect, mutants that never changed anything, savepoint requests that
//! failed, a cancel that came too late, fault kinds configured at a rate
//! that happened zero times. Each becomes a [`Warning`] in the run's output
//! (the summary, `--json`, every sweep line, the kill matrix), so that a
//! pass never hides a test that did not happen.

use super::fault_state::Fate;
use super::{JobStatus, Outcome, Status, World};
use crate::engine::{SimDuration, SimTime};
use crate::model::TaskId;
use crate::mutant::MUTANTS;
use crate::runtime::output::Warning;

impl World<'_> {
    /// Adds `what` at the current time to the fault timeline (the summary's
    /// `timeline`), up to `MAX_FAULT_EVENTS` entries.
    pub(super) fn note_fault(&mut self, what: impl FnOnce() -> String) {
        self.rec.last_fault_ns = self.net.now.0;
        if self.rec.fault_timeline.len() < crate::runtime::output::MAX_FAULT_EVENTS {
            let what = what();
            self.rec
                .fault_timeline
                .push(crate::runtime::output::FaultEvent {
                    time_ns: self.net.now.0,
                    what,
                });
        } else {
            self.rec.fault_events_dropped += 1;
        }
    }

    /// "the snapshot of checkpoint 3 at sink[0]": a trigger's event.
    fn trigger_text(&self, tr: &crate::scenario::CrashTrigger) -> String {
        let event = crate::scenario::schema::name_of(&tr.on);
        let checkpoint = tr
            .checkpoint
            .map_or(String::new(), |n| format!(" of checkpoint {n}"));
        let of = match (tr.on.is_a_tasks(), tr.of) {
            (true, Some((o, n))) => {
                let t = self.plan.exec.task_of(o, n);
                format!(" at {}", self.plan.exec.tasks[t as usize].name)
            }
            _ => String::new(),
        };
        format!("the {event}{checkpoint}{of}")
    }

    /// Why a fault striking now changes nothing: the job is not running.
    pub(super) fn job_not_running(&self) -> String {
        let at = SimDuration(self.net.now.0);
        match self.job.status {
            JobStatus::Running if self.sp.stopped_with.is_some() => {
                format!("the job was stopping with a savepoint at {at}")
            }
            JobStatus::Running => format!("the job was running at {at}"),
            JobStatus::Restarting => format!("the job was restarting at {at}"),
            JobStatus::Finished => format!("the job had finished at {at}"),
            JobStatus::Failed => format!("the job had failed at {at}"),
            JobStatus::Cancelled => format!("the job had been cancelled at {at}"),
        }
    }

    /// Why a task crash striking `t` now changes nothing.
    pub(super) fn crash_ignored_reason(&self, t: TaskId) -> String {
        if self.job.status != JobStatus::Running || self.sp.stopped_with.is_some() {
            return self.job_not_running();
        }
        let at = SimDuration(self.net.now.0);
        match self.tasks.list[t as usize].status {
            Status::Dead => format!("the task was already dead at {at}"),
            Status::Finished => format!("the task had finished at {at}"),
            Status::Cancelled => format!("the task was cancelled at {at}"),
            Status::Running => format!("the task was running at {at}"),
        }
    }

    /// The warnings of the run that ended with `outcome`.
    pub(super) fn warnings(&self, outcome: &Outcome) -> Vec<Warning> {
        let mut out = Vec::new();
        let end = SimDuration(self.net.now.0);
        let ended = format!("the run ended ({}) at {end}", outcome.describe());
        let mut push = |kind: &str, message: String| {
            out.push(Warning {
                kind: kind.to_string(),
                message,
            })
        };
        let fate = Fated { ended: &ended };
        self.crash_warnings(&fate, &mut push);
        self.worker_crash_warnings(&fate, &mut push);
        self.coordinator_crash_warnings(&fate, &mut push);
        self.network_fault_warnings(&fate, &mut push);
        self.straggler_warnings(&fate, &mut push);
        self.aimed_fault_warnings(&fate, &mut push);
        self.rate_fault_warnings(&mut push);
        self.request_warnings(&fate, &mut push);
        self.mutant_warnings(&mut push);
        self.checkpoint_warnings(&mut push);
        out
    }

    /// Planned task crashes and crash points that did not take effect.
    fn crash_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        for (i, f) in self.faults.log.crashes.iter().enumerate() {
            if i >= self.faults.first_crash_point && *f == Fate::Pending {
                continue; // a crash point the run chose not to take
            }
            let c = &self.faults.crash_plan[i];
            let t = self.plan.exec.task_of(c.operator, c.subtask);
            let what = format!("crash of {}", self.plan.exec.tasks[t as usize].name);
            let armed = self.faults.armed_crashes.contains(&(i as u32));
            if let (Some(tr), Fate::Pending, true) = (&c.trigger, f, armed) {
                let on = self.trigger_text(tr);
                push(
                    "crash",
                    format!("{what} on {on} never happened: the event never came before {ended}"),
                );
                continue;
            }
            if let Some(m) = fate.of(f, what, c.at) {
                push("crash", m);
            }
        }
    }

    /// Planned worker crashes that did not take effect.
    fn worker_crash_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        for (i, f) in self.faults.log.worker_crashes.iter().enumerate() {
            let (worker, at) = self.planned_worker_crash(i);
            let trigger = &self.faults.fx.worker_plan(i).trigger;
            let armed = self.faults.armed_workers.contains(&(i as u32));
            if let (Some(tr), Fate::Pending, true) = (trigger, f, armed) {
                let on = self.trigger_text(tr);
                push(
                    "worker-crash",
                    format!("crash of worker {worker} on {on} never happened: the event never came before {ended}"),
                );
                continue;
            }
            if let Some(m) = fate.of(f, format!("crash of worker {worker}"), at) {
                push("worker-crash", m);
            }
        }
    }

    /// Coordinator crashes armed for an event that never came, and planned ones that did not take effect.
    fn coordinator_crash_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        if let Some(c) = &self.plan.scenario.faults.coordinator {
            for &i in &self.faults.armed_coordinator {
                let on = self.trigger_text(&c.crash_on[i as usize]);
                push(
                    "coordinator-crash",
                    format!("coordinator crash on {on} never happened: the event never came before {ended}"),
                );
            }
        }
        for (i, f) in self.faults.log.coordinator_crashes.iter().enumerate() {
            let at = self.faults.fx.coordinator_plan[i];
            if let Some(m) = fate.of(f, "coordinator crash".to_string(), at) {
                push("coordinator-crash", m);
            }
        }
    }

    /// Latency spikes and partitions that did not take effect.
    fn network_fault_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        let faults = &self.plan.scenario.faults;
        let spikes = faults.latency_spikes.len();
        for (i, f) in self.faults.log.network.iter().enumerate() {
            let (kind, at, trigger) = if i < spikes {
                let s = &faults.latency_spikes[i];
                ("latency-spike", s.from, &s.trigger)
            } else {
                let p = &faults.partitions[i - spikes];
                ("partition", p.from, &p.trigger)
            };
            let what = kind.replace('-', " ");
            if let (Some(tr), true) = (trigger, self.faults.armed_network.contains(&(i as u32))) {
                let on = self.trigger_text(tr);
                push(
                    kind,
                    format!("{what} on {on} never happened: the event never came before {ended}"),
                );
                continue;
            }
            // A triggered window that started: its actual start.
            let at = match trigger {
                Some(_) => self.net.delays[i].from,
                None => at,
            };
            if let Some(m) = fate.of(f, what, at) {
                push(kind, m);
            }
        }
    }

    /// Stragglers whose event never came or that slowed no step.
    fn straggler_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        let faults = &self.plan.scenario.faults;
        for (i, s) in faults.slow_tasks.iter().enumerate() {
            let t = self.plan.exec.task_of(s.operator, s.subtask);
            let name = &self.plan.exec.tasks[t as usize].name;
            if let (Some(tr), true) = (&s.trigger, self.faults.armed_slow.contains(&(i as u32))) {
                let on = self.trigger_text(tr);
                push(
                    "straggler",
                    format!("straggler {name} on {on} never happened: the event never came before {ended}"),
                );
                continue;
            }
            if !self.faults.log.stragglers[i] {
                let (from, until) = self.faults.slow_windows[i];
                push(
                    "straggler",
                    format!(
                        "straggler {name} (×{}) from {} until {} slowed no step: the task took no step in that window",
                        s.factor,
                        SimDuration(from.0),
                        SimDuration(until.0)
                    ),
                );
            }
        }
    }

    /// Storage failures and notification losses aimed at one checkpoint that never struck.
    fn aimed_fault_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        let ended = fate.ended;
        let faults = &self.plan.scenario.faults;
        let whose = |of: Option<(crate::scenario::OperatorId, u32)>, none: &str| match of {
            Some((o, n)) => self.plan.exec.tasks[self.plan.exec.task_of(o, n) as usize]
                .name
                .clone(),
            None => none.to_string(),
        };
        for (x, &struck) in faults
            .storage_failures
            .iter()
            .zip(&self.faults.log.storage_failures)
        {
            if !struck {
                let id = x.checkpoint;
                let write = match x.of {
                    Some(_) => format!("the state write of checkpoint {id} by {}", whose(x.of, "")),
                    None => format!("the metadata write of checkpoint {id}"),
                };
                push(
                    "storage",
                    format!("storage failure of {write} never happened: that write never came before {ended}"),
                );
            }
        }
        for (x, &struck) in faults
            .lost_notifications
            .iter()
            .zip(&self.faults.log.lost_notifications)
        {
            if !struck {
                let to = whose(x.of, "any task");
                push(
                    "notification-loss",
                    format!("loss of the notification of checkpoint {} to {to} never happened: it was never sent before {ended}", x.checkpoint),
                );
            }
        }
    }

    /// Fault kinds configured at a rate that happened zero times.
    fn rate_fault_warnings(&self, push: &mut impl FnMut(&str, String)) {
        let faults = &self.plan.scenario.faults;
        let c = &self.rec.counters;
        if let Some(n) = &faults.notifications {
            if n.loss_percent > 0 && c.notifications_lost == 0 {
                push(
                    "notification-loss",
                    format!(
                        "notifications are lost at {}%, but none was lost in this run",
                        n.loss_percent
                    ),
                );
            }
        }
        if let Some(s) = &faults.storage {
            if s.failure_percent > 0 && c.storage_write_failures == 0 {
                push(
                    "storage-failure",
                    format!(
                        "storage writes fail at {}%, but none failed in this run",
                        s.failure_percent
                    ),
                );
            }
            if s.slow_percent > 0 && c.storage_writes_slow == 0 {
                push(
                    "storage-slowness",
                    format!(
                        "storage writes are slow at {}%, but none was slow in this run",
                        s.slow_percent
                    ),
                );
            }
        }
    }

    /// Savepoint requests that failed and a cancel that came too late.
    fn request_warnings(&self, fate: &Fated, push: &mut impl FnMut(&str, String)) {
        for r in &self.sp.reports {
            if r.completed.is_none() {
                push("savepoint", r.describe());
            }
        }
        if let Some(at) = self
            .plan
            .job_opts
            .cancel_at
            .or(self.plan.scenario.cancel_at)
        {
            if let Some(m) = fate.of(&self.faults.log.cancel, "cancel".to_string(), at) {
                push("cancel", m);
            }
        }
    }

    /// Mutants whose broken path never ran.
    fn mutant_warnings(&self, push: &mut impl FnMut(&str, String)) {
        let fired = crate::mutant::fired_in_this_run();
        for m in MUTANTS {
            if self.plan.cfg.mutants.has(*m) && !fired.has(*m) {
                push(
                    "mutant",
                    format!(
                        "mutant {} never took effect: the code it breaks ({}) never ran its broken path under {} in this run",
                        m.name,
                        m.part,
                        self.plan.cfg.algorithm.name()
                    ),
                );
            }
        }
    }

    /// Checkpoints were taken but none could ever complete: a timeout shorter than the checkpoint can be (a swarm draw, or a typo).
    fn checkpoint_warnings(&self, push: &mut impl FnMut(&str, String)) {
        // Checkpoints were taken but none could ever complete: a timeout
        // shorter than the checkpoint can be (a swarm draw, or a typo).
        let c = &self.rec.counters;
        if c.checkpoints_completed == 0 && c.checkpoints_expired > 0 {
            let cp = &self.plan.scenario.checkpoint;
            let hint = match cp.timeout <= cp.storage_latency {
                true => format!(
                    "; the timeout is not longer than one storage write (storage_latency {})",
                    cp.storage_latency
                ),
                false => String::new(),
            };
            push(
                "checkpoint",
                format!(
                    "no checkpoint completed: {} of {} expired (timeout {}){hint}",
                    c.checkpoints_expired,
                    crate::engine::count(c.checkpoints_triggered, "checkpoint"),
                    cp.timeout
                ),
            );
        }
    }
}

/// How a planned fault's fate reads in a warning, for a run that ended as
/// `ended` says.
struct Fated<'e> {
    ended: &'e str,
}

impl Fated<'_> {
    /// The warning for `what`, planned at `at`, if it did not fire.
    fn of(&self, f: &Fate, what: String, at: SimTime) -> Option<String> {
        let ended = self.ended;
        match f {
            Fate::Fired => None,
            Fate::Pending => Some(format!(
                "{what} planned at {} never happened: {ended} first",
                SimDuration(at.0)
            )),
            Fate::Ignored(why) => Some(format!(
                "{what} at {} took no effect: {why}",
                SimDuration(at.0)
            )),
        }
    }
}
