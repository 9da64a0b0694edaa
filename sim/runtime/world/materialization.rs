//! The changelog backend's periodic materialization on the task thread
//! (Flink's `PeriodicMaterializationManager`): a timer puts a mail in the
//! task's mailbox; the mail runs the trigger (`initMaterialization`), whose
//! file is written and synced asynchronously; its result is a second mail
//! (`handleMaterializationResult`). The first timer fires after a delay of
//! the task's own below `materialization_interval`; the next one an
//! interval after a trigger that started nothing, or after the upload of
//! the one it started ended. A restarted task arms a new timer; the old
//! execution's timer and upload end with it (their events are stale).
//! The mechanism and the judge's account are in `runtime::storage`'s
//! changelog.

use super::channel_files::state_written;
use super::*;
use crate::runtime::storage::Trigger;
use crate::scenario::StateBackend;

impl World<'_> {
    /// Whether task `t` keeps a changelog: the changelog backend writing
    /// files, and a keyed member.
    fn keeps_changelog(&self, t: TaskId) -> bool {
        self.writes_files()
            && self.plan.scenario.checkpoint.state_backend == StateBackend::Changelog
            && self.storage.keyed(t)
    }

    /// A deployed task with a changelog arms its materialization timer: the
    /// first after a delay of its own below the interval (Flink spreads the
    /// tasks by a hash of the subtask's id, "to avoid thundering herd").
    pub(super) fn arm_materialization(&mut self, t: TaskId) {
        let interval = self.plan.scenario.checkpoint.materialization_interval;
        let initial = crate::engine::rng::splitmix64(u64::from(t)) % interval.0.max(1);
        self.arm_materialization_in(t, SimDuration(initial));
    }

    /// The next trigger of task `t`, `delay` from now.
    fn arm_materialization_in(&mut self, t: TaskId, delay: SimDuration) {
        if self.keeps_changelog(t) {
            let at = self.net.now.plus(delay);
            self.net.schedule(at, Ev::MaterializeTimer { task: t });
        }
    }

    /// The timer fires: the trigger goes to the task's mailbox.
    pub(super) fn materialize_timer(&mut self, t: TaskId) {
        if self.tasks.list[t as usize].status == Status::Running {
            self.post(t, Mail::Materialize);
        }
    }

    /// The trigger, run as a mail: a materialization starts, its file
    /// written from now at the storage's speed and synced `storage_sync`
    /// later, when its result is due.
    pub(super) fn materialize(&mut self, t: TaskId) {
        let interval = self.plan.scenario.checkpoint.materialization_interval;
        let Trigger::Started { id, file, bytes } = self.storage.materialize(self.net.now, t) else {
            // Nothing started: the next trigger an interval from now.
            self.arm_materialization_in(t, interval);
            return;
        };
        let s = &self.plan.scenario;
        let done = state_written(s, self.net.now, bytes).plus(s.checkpoint.storage_sync);
        self.storage.files[file as usize].synced_at = Some(done);
        self.net.schedule(done, Ev::Materialized { task: t, id });
    }

    /// The upload of materialization `id` ended: its result goes to the
    /// task's mailbox.
    pub(super) fn materialization_uploaded(&mut self, t: TaskId, id: u64) {
        if self.tasks.list[t as usize].status == Status::Running {
            self.post(t, Mail::Materialized(id));
            let interval = self.plan.scenario.checkpoint.materialization_interval;
            self.arm_materialization_in(t, interval);
        }
    }

    /// The result, run as a mail: the materialization becomes the base of
    /// the task's snapshots (or failed, its file lost).
    pub(super) fn materialization_done(&mut self, t: TaskId, id: u64) {
        let truncate = self
            .plan
            .cfg
            .mutants
            .has(Mutant::ChangelogTruncatedBeforeSubsumed);
        self.storage.materialized(self.net.now, t, id, truncate);
    }
}
