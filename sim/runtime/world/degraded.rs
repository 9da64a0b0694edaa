//! Faults that degrade a run without killing anything: stragglers (at a
//! time or an event), lost checkpoint-complete notifications and failed or
//! slow storage writes (at a rate or aimed at one checkpoint).

use super::World;
use crate::engine::{SimDuration, SimTime};
use crate::model::{CheckpointId, TaskId};
use crate::runtime::event::Ev;
use crate::scenario::TriggerEvent;

impl World<'_> {
    /// `on` happened: every straggler armed for it starts `delay` from now
    /// and lasts its `duration`, once (hook in `crash_trigger`).
    pub(super) fn slow_task_trigger(&mut self, on: TriggerEvent, task: Option<TaskId>, id: u64) {
        let now = self.net.now;
        let slow = &self.plan.scenario.faults.slow_tasks;
        let event = (on, task, id);
        let fired = super::fault_state::take_fired(
            &mut self.faults.armed_slow,
            event,
            &self.plan.exec,
            |i| {
                let s = &slow[i as usize];
                let tr = s.trigger.as_ref()?;
                Some((tr, Some(tr.of.unwrap_or((s.operator, s.subtask)))))
            },
        );
        for (i, delay) in fired {
            let s = &self.plan.scenario.faults.slow_tasks[i as usize];
            let from = now.plus(delay);
            let until = from.plus(SimDuration(s.until.0 - s.from.0));
            let t = self.plan.exec.task_of(s.operator, s.subtask);
            let (name, factor) = (self.plan.exec.tasks[t as usize].name.clone(), s.factor);
            self.faults.slow_windows[i as usize] = (from, until);
            self.faults.phase_end = self.faults.phase_end.max(until);
            self.note_fault(|| {
                format!(
                    "straggler {name} (×{factor}) from {} until {}",
                    SimDuration(from.0),
                    SimDuration(until.0)
                )
            });
        }
    }

    // ------------------------------------------------------------ stragglers

    /// A task's step cost, stretched while the task is a straggler (hook in
    /// `busy`).
    pub(super) fn straggle(&mut self, t: TaskId, cost: u64) -> u64 {
        let slow = &self.plan.scenario.faults.slow_tasks;
        if slow.is_empty() {
            return cost;
        }
        let info = &self.plan.exec.tasks[t as usize];
        let now = self.net.now;
        let mut factor = None;
        for (i, s) in slow.iter().enumerate() {
            let (from, until) = self.faults.slow_windows[i];
            // A straggling operator slows its whole task (one thread).
            if info.chain.contains(&s.operator)
                && s.subtask == info.subtask
                && from <= now
                && now < until
            {
                self.faults.log.stragglers[i] = true;
                factor = factor.max(Some(u64::from(s.factor)));
            }
        }
        match factor {
            Some(f) => {
                self.rec.counters.slow_task_steps += 1;
                cost.saturating_mul(f)
            }
            None => cost,
        }
    }

    // ------------------------------------------------------------ notifications

    /// Sends checkpoint-complete to a task, unless the notification is lost
    /// (hook in `finalized`). The final checkpoint's notification is never
    /// lost: the job only finishes once every task has it, and Flink's tasks
    /// wait for it too.
    pub(super) fn send_notify_complete(&mut self, at: SimTime, t: TaskId, id: CheckpointId) {
        let final_one = self.coord.final_id == Some(id) || self.local_final_notification(t, id);
        let aimed = match final_one {
            true => None,
            false => self.aimed(
                &self.plan.scenario.faults.lost_notifications,
                id,
                Some(t),
                true,
            ),
        };
        let rate = self.plan.scenario.faults.notifications.as_ref();
        let drawn = rate.is_some_and(|n| {
            self.faults
                .fx
                .notify_rng
                .chance(u64::from(n.loss_percent), 100)
        });
        if let Some(i) = aimed {
            self.faults.log.lost_notifications[i] = true;
        }
        if (drawn && !final_one) || aimed.is_some() {
            self.rec.counters.notifications_lost += 1;
            let name = self.plan.exec.tasks[t as usize].name.clone();
            self.note_fault(|| format!("notification of checkpoint {id} to {name} lost"));
            let w = self.windows();
            if w.recovering {
                self.rec.counters.notifications_lost_during_recovery += 1;
            }
            if w.aligning {
                self.rec.counters.notifications_lost_during_alignment += 1;
            }
            let lost = &mut self.faults.fx.lost_notification[t as usize];
            *lost = (*lost).max(id);
            return;
        }
        let at = self.rpc_arrival(at);
        self.net.schedule(at, Ev::NotifyComplete { task: t, id });
    }

    /// The first entry of `list` aimed at checkpoint `id` of task `task`
    /// (`None`: the coordinator). An entry without `of` aims at the
    /// coordinator, or with `every_task` at every task.
    fn aimed(
        &self,
        list: &[crate::scenario::TargetedFault],
        id: CheckpointId,
        task: Option<TaskId>,
        every_task: bool,
    ) -> Option<usize> {
        list.iter().position(|x| {
            x.checkpoint == id
                && match (x.of, task) {
                    (Some((o, n)), Some(t)) => self.plan.exec.task_of(o, n) == t,
                    (None, None) => true,
                    (None, Some(_)) => every_task,
                    (Some(_), None) => false,
                }
        })
    }

    /// A task commits a checkpoint whose own notification it lost, because
    /// a later notification covers it (hook in `notify_complete`).
    pub(super) fn note_catch_up(&mut self, t: TaskId, id: CheckpointId) {
        let lost = self.faults.fx.lost_notification[t as usize];
        if lost > 0 && lost > self.tasks.list[t as usize].last_notified && id >= lost {
            self.rec.counters.lost_notifications_caught_up += 1;
        }
    }

    /// The catch-up came with an abort notification (hook in
    /// `notify_aborted`, Flink's `notifyCheckpointAborted(id,
    /// latestCompletedCheckpointId)`).
    pub(super) fn note_abort_catch_up(&mut self, t: TaskId, latest: CheckpointId) {
        let lost = self.faults.fx.lost_notification[t as usize];
        if lost > 0 && lost > self.tasks.list[t as usize].last_notified && latest >= lost {
            self.rec.counters.lost_notifications_caught_up_by_abort += 1;
        }
    }

    // ------------------------------------------------------------ storage

    /// Draws whether a storage write fails and how slow it is: `(failed,
    /// extra latency)`. Two draws per write, whatever the outcome. The write
    /// of checkpoint `id` by task `task` (`None`: the coordinator's
    /// metadata) also fails when a `[[faults.storage_failures]]` entry aims
    /// at it, once.
    fn storage_write(&mut self, id: CheckpointId, task: Option<TaskId>) -> (bool, SimDuration) {
        let aimed = self.aimed(&self.plan.scenario.faults.storage_failures, id, task, false);
        let aimed = aimed.filter(|&i| !self.faults.log.storage_failures[i]);
        let (mut fail, mut extra) = (false, SimDuration::ZERO);
        if let Some(f) = &self.plan.scenario.faults.storage {
            fail = self
                .faults
                .fx
                .storage_rng
                .chance(u64::from(f.failure_percent), 100);
            if self
                .faults
                .fx
                .storage_rng
                .chance(u64::from(f.slow_percent), 100)
            {
                self.rec.counters.storage_writes_slow += 1;
                extra = f.slow_latency;
            }
        }
        if let Some(i) = aimed {
            self.faults.log.storage_failures[i] = true;
            fail = true;
        }
        if fail {
            self.rec.counters.storage_write_failures += 1;
            let whose = task.map(|t| self.plan.exec.tasks[t as usize].name.clone());
            self.note_fault(|| match whose {
                Some(name) => format!("the state write of checkpoint {id} by {name} failed"),
                None => format!("the metadata write of checkpoint {id} failed"),
            });
            let w = self.windows();
            if w.recovering {
                self.rec.counters.storage_failures_during_recovery += 1;
            }
            if w.aligning {
                self.rec.counters.storage_failures_during_alignment += 1;
            }
        }
        (fail, extra)
    }

    /// A task's state write and ack (hook in `maybe_ack`): the ack arrives
    /// after `delay`, or the write fails and the task declines. Returns when
    /// the ack (or failure) reaches the coordinator.
    pub(super) fn schedule_ack(
        &mut self,
        t: TaskId,
        id: CheckpointId,
        delay: SimDuration,
    ) -> SimTime {
        let (fail, extra) = self.storage_write(id, Some(t));
        let at = self.net.now.plus(delay).plus(extra);
        if fail {
            self.net.schedule(
                at,
                Ev::StorageWriteFailed {
                    task: t,
                    id,
                    too_large: None,
                },
            );
        } else {
            self.net.schedule(at, Ev::Ack { task: t, id });
        }
        at
    }

    /// The coordinator writes the checkpoint's metadata (hook in `ack`).
    pub(super) fn schedule_finalize(&mut self, id: CheckpointId) {
        let (fail, extra) = self.storage_write(id, None);
        let at = self
            .net
            .now
            .plus(self.plan.scenario.checkpoint.storage_latency)
            .plus(extra);
        if fail {
            self.schedule_any(at, Ev::FinalizeFailed { id });
        } else {
            self.schedule_any(at, Ev::Finalized { id });
        }
    }
}
