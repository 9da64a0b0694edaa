//! Region failover (Flink's `RestartPipelinedRegionFailoverStrategy` for a
//! streaming job): a task failure restarts only the tasks connected to the
//! failed one by channels, from the latest completed checkpoint, while the
//! other regions keep running.
//!
//! Events are stamped with the attempt that scheduled them. A region
//! restart bumps the attempt and marks only the region's tasks as restarted
//! from it (`valid_from`), so the surviving regions' events stay valid.

use super::{JobStatus, Status, Timeline, World};
use crate::model::{ChannelId, CheckpointId, TaskId};
use crate::runtime::coordinator::Outcome as CpOutcome;
use crate::runtime::event::{Ev, Stamped};
use crate::scenario::FailoverStrategy;

impl World<'_> {
    /// Whether a stamped event belongs to a cancelled attempt of its task
    /// (hook in `main_loop`). Without region restarts this is exactly
    /// "stamped with an older attempt than the current one".
    pub(super) fn is_stale(&self, stamped: &Stamped) -> bool {
        if self.plan.scenario.faults.failover != FailoverStrategy::Region {
            return stamped.attempt != self.net.attempt;
        }
        let task = match stamped.ev {
            Ev::Wake { task }
            | Ev::Flush { task }
            | Ev::TriggerSource { task, .. }
            | Ev::Ack { task, .. }
            | Ev::Decline { task, .. }
            | Ev::NotifyComplete { task, .. }
            | Ev::NotifyAborted { task, .. }
            | Ev::FailureDetected { task }
            | Ev::AlignmentTimer { task, .. }
            | Ev::OutputTimeout { task, .. }
            | Ev::Drained { task, .. }
            | Ev::SnapshotTask { task, .. }
            | Ev::StorageWriteFailed { task, .. }
            | Ev::ToSubtask { task, .. }
            | Ev::EventAck { task, .. }
            | Ev::ToCoordinator { task, .. }
            | Ev::SubtaskCheckpointed { task, .. }
            | Ev::WatermarkTimer { task }
            | Ev::MaterializeTimer { task }
            | Ev::Materialized { task, .. }
            | Ev::WatermarkReport { task }
            | Ev::ProcessingTimer { task, .. } => Some(task),
            Ev::Deliver { ch } | Ev::Credit { ch } => Some(self.plan.exec.channels[ch as usize].to),
            Ev::ResumeConsumption { ch } => Some(self.plan.exec.channels[ch as usize].from),
            _ => None,
        };
        let from = match task {
            Some(t) => self
                .faults
                .fx
                .global_from
                .max(self.faults.fx.valid_from[t as usize]),
            None => self.faults.fx.global_from,
        };
        stamped.attempt < from
    }

    /// The tasks of the given regions, in task order.
    fn region_tasks(&self, regions: &[u32]) -> Vec<TaskId> {
        (0..self.tasks.list.len() as TaskId)
            .filter(|&t| regions.contains(&self.faults.fx.region_of[t as usize]))
            .collect()
    }

    /// A task failure under `failover = "region"` (hook in `dispatch`):
    /// cancel and later restart only its region. Returns false when a
    /// global failover must handle it instead (full strategy, a job with a
    /// single region, or the job not running).
    pub(super) fn region_failover(&mut self, failed: TaskId) -> bool {
        if self.plan.scenario.faults.failover != FailoverStrategy::Region
            || self.sp.stopped_with.is_some()
            || self.is_local()
        {
            return false; // (after a stop-with-savepoint: `failover` ends the job)
        }
        let region = self.faults.fx.region_of[failed as usize];
        let regions_total = self.faults.fx.region_of.iter().max().map_or(1, |m| m + 1);
        if regions_total <= 1 {
            return false;
        }
        let name = self.plan.exec.tasks[failed as usize].name.clone();
        match self.job.status {
            JobStatus::Running => {}
            JobStatus::Restarting if !self.faults.fx.pending_regions.is_empty() => {
                // Another region restart is pending: this region joins it.
                if !self.faults.fx.pending_regions.contains(&region) {
                    // A new attempt for this region's tasks: what they
                    // scheduled so far is stale.
                    self.net.attempt += 1;
                    self.faults.fx.pending_regions.push(region);
                    self.cancel_region(region);
                    let stopped = self.region_tasks(&[region]);
                    self.recovery_stopped(Some(&stopped));
                    self.rec.counters.region_failovers += 1;
                    self.rec.counters.failovers += 1;
                    self.note_fault(|| {
                        format!("task {name} failed; its region joins the pending region restart")
                    });
                }
                return true;
            }
            _ => return false,
        }
        self.check_closed();
        self.rec.counters.failovers += 1;
        self.rec.counters.region_failovers += 1;
        // Flink aborts every pending checkpoint on any restart
        // (JOB_FAILOVER_REGION, not counted); the surviving tasks are told.
        let pending: Vec<CheckpointId> = self.coord.pending.keys().copied().collect();
        for id in pending {
            let mut out = Vec::new();
            self.coord
                .abort(self.net.now, id, CpOutcome::Failover, &mut out);
            self.perform(out);
            self.notify_survivors_aborted(region, id);
        }
        // Once the final checkpoint completed, the job is finishing: the
        // region restores from it and is told about it again (the other
        // regions may have finished already, so no newer checkpoint could
        // ever complete).
        if self.coord.final_id.is_none() {
            self.coord.finishing = false;
        }
        self.net.attempt += 1;
        self.job.restarts += 1;
        self.faults.fx.pending_regions = vec![region];
        self.cancel_region(region);
        let stopped = self.region_tasks(&[region]);
        self.recovery_stopped(Some(&stopped));
        let tasks: Vec<String> = self
            .region_tasks(&[region])
            .iter()
            .map(|&t| self.plan.exec.tasks[t as usize].name.clone())
            .collect();
        let reason = format!(
            "task {name} failed; region failover restarts {}",
            tasks.join(", ")
        );
        let delay = self.decide_restart(&reason);
        let job_failed = delay.is_none(); // trace
        self.note_fault(|| match job_failed {
            true => format!("failover ({reason}); the restart strategy gave up: the job failed"),
            false => format!("failover ({reason})"),
        });
        self.mark(|| Timeline::Failover {
            reason: reason.clone(),
            job_failed,
        });
        let Some(delay) = delay else {
            return true; // the restart strategy gave up: the job failed
        };
        // No checkpoint is triggered while a region is down (Flink:
        // NOT_ALL_REQUIRED_TASKS_RUNNING).
        self.job.status = JobStatus::Restarting;
        let at = self.restart_time(delay);
        self.net.schedule(at, Ev::Restart);
        true
    }

    /// Cancels a region's tasks; their pending events become stale.
    fn cancel_region(&mut self, region: u32) {
        for t in self.region_tasks(&[region]) {
            let ti = t as usize;
            if self.tasks.list[ti].status != Status::Dead {
                self.tasks.set_status(ti, Status::Cancelled);
            }
            self.net.sched[ti].alive = false;
            self.faults.fx.valid_from[ti] = self.net.attempt;
        }
    }

    /// Abort notifications (with the latest completed id, for the catch-up)
    /// to the tasks outside `region`.
    fn notify_survivors_aborted(&mut self, region: u32, id: CheckpointId) {
        let latest = self.coord.last_completed_id;
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        for t in 0..self.tasks.list.len() as TaskId {
            if self.faults.fx.region_of[t as usize] != region {
                self.net.schedule(
                    at,
                    Ev::NotifyAborted {
                        task: t,
                        id,
                        latest_completed: latest,
                    },
                );
            }
        }
    }

    /// Redeploys the pending regions from the latest completed checkpoint
    /// (hook at the top of `restart`). False when no region restart is
    /// pending (a global restart).
    pub(super) fn restart_pending_region(&mut self) -> bool {
        if self.faults.fx.pending_regions.is_empty() || self.job.status != JobStatus::Restarting {
            return false;
        }
        let regions = std::mem::take(&mut self.faults.fx.pending_regions);
        let tasks = self.region_tasks(&regions);
        let channels: Vec<ChannelId> = (0..self.plan.exec.channels.len() as ChannelId)
            .filter(|&ch| {
                let to = self.plan.exec.channels[ch as usize].to;
                regions.contains(&self.faults.fx.region_of[to as usize])
            })
            .collect();
        // Restored in-flight data of these tasks not replayed yet is gone.
        for &ch in &channels {
            let left = std::mem::take(&mut self.recovery.out_left[ch as usize]);
            self.recovery.pending -= left;
        }
        for &ch in &channels {
            self.recovery.pending -= self.net.recovered_records(ch);
        }
        self.net.reset_some(&channels, &tasks);
        let latest = self.coord.latest();
        self.check_restore_source(latest.as_ref().map(|c| c.id));
        let before = self.tasks.store.stats.transactions_committed;
        self.reset_subtasks(&tasks, latest.as_ref().map(|c| c.id));
        let restored = self.restore_tasks(&tasks, latest.as_deref(), true);
        if self.job.status == JobStatus::Failed {
            return true; // the restore needed a file that is gone
        }
        self.recovery.pending += restored;
        self.rec.counters.recovery_commits +=
            self.tasks.store.stats.transactions_committed - before;
        self.rec.counters.recoveries += 1;
        self.rec.counters.tasks_restarted += tasks.len() as u64;
        self.rec.counters.checkpoints_after_last_recovery = 0;
        self.rearm_repeating_crashes();
        let from = latest.as_ref().map_or(0, |c| c.id);
        self.rec
            .restart_notes
            .push(crate::runtime::output::RestartNote {
                attempt: self.net.attempt,
                time_ns: self.net.now.0,
                from: latest.as_ref().map(|c| c.id),
                region: Some(tasks.len() as u32),
            });
        self.note_fault(|| {
            let what = match from {
                0 => "from scratch".to_string(),
                id => format!("from checkpoint {id}"),
            };
            let n = crate::engine::count(tasks.len() as u64, "task");
            match restored {
                0 => format!("region restart of {n} {what}"),
                r => format!(
                    "region restart of {n} {what} ({} restored)",
                    crate::engine::count(r, "in-flight record")
                ),
            }
        });
        match latest {
            Some(_) => self.rec.counters.recoveries_from_checkpoint += 1,
            None => self.rec.counters.recoveries_from_scratch += 1,
        }
        self.job.status = JobStatus::Running;
        self.crash_trigger(crate::scenario::TriggerEvent::Restart, None, from);
        for &t in &tasks {
            self.net.poke(t);
        }
        if let Some(id) = self.coord.final_id {
            let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
            for &t in &tasks {
                self.net.schedule(at, Ev::NotifyComplete { task: t, id });
            }
        }
        let from = self.coord.latest().map(|c| c.id); // trace
        self.mark(|| Timeline::Restart {
            from,
            restored_records: restored,
        });
        self.recovery_restarted(from);
        true
    }

    /// A fault that needs every task restarted arrived while a region
    /// restart was pending: cancel everything, the restart becomes global.
    pub(super) fn escalate_to_global(&mut self) {
        if self.faults.fx.pending_regions.is_empty() {
            return;
        }
        self.faults.fx.pending_regions.clear();
        self.tasks.cancel_live();
        for s in &mut self.net.sched {
            s.alive = false;
        }
        self.rec.counters.tasks_restarted += self.tasks.list.len() as u64;
        self.recovery_stopped(None);
    }
}
