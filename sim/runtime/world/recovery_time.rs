//! Recovery time (`RunOutput::recovery_ns`): from a failure until the
//! restarted job has regained its pre-failure progress, that is, until every
//! source partition has emitted again everything it had emitted when the job
//! (or the failed region) was stopped.
//!
//! The clock starts at the failure (a crash, a lost worker, a coordinator
//! crash: `recovering_since`), so it includes failure detection, the restart
//! delay and the replay; it can never be shorter than detection plus the
//! restart delay. A second failure before the job recovered extends the same
//! recovery: the target grows to what had been emitted when it struck.

use super::World;
use crate::model::{CheckpointId, TaskId};

impl World<'_> {
    /// The job (every task, or only `region` tasks) was stopped after a
    /// failure: what it had emitted by now is the progress to regain.
    pub(super) fn recovery_stopped(&mut self, region: Option<&[TaskId]>) {
        if self.recovery.since.is_none() {
            return;
        }
        let rc = &mut self.recovery.clock;
        rc.restarted = false;
        for p in 0..rc.target.len() {
            let restarts = match (region, rc.owner[p]) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(tasks), Some(t)) => tasks.contains(&t),
            };
            if !restarts {
                continue;
            }
            rc.target[p] = rc.target[p].max(self.tasks.high_water[p]);
            if rc.target[p] > 0 && rc.reached[p] {
                rc.reached[p] = false;
                rc.behind += 1;
            }
        }
    }

    /// A source emitted `offset` of `partition` (every emission).
    #[inline]
    pub(super) fn recovery_emitted(&mut self, t: TaskId, partition: u32, offset: u64) {
        let p = partition as usize;
        let rc = &mut self.recovery.clock;
        if rc.owner[p].is_none() {
            rc.owner[p] = Some(t);
        }
        if self.recovery.since.is_some() && offset + 1 >= rc.target[p] {
            rc.reach(p);
            self.recovery_maybe_done();
        }
    }

    /// A restored source starts at these offsets: partitions already at or
    /// past their target have nothing to re-emit.
    pub(super) fn recovery_source_restored(&mut self, state: &[u8]) {
        if self.recovery.since.is_none() {
            return;
        }
        if let Some(offsets) = crate::model::operator::source_offsets(state) {
            for (p, offset) in offsets {
                let p = p as usize;
                if p < self.recovery.clock.target.len() && offset >= self.recovery.clock.target[p] {
                    self.recovery.clock.reach(p);
                }
            }
        }
    }

    /// A source task ran out of input: its partitions are all emitted.
    pub(super) fn recovery_source_exhausted(&mut self, t: TaskId) {
        if self.recovery.since.is_none() {
            return;
        }
        for p in 0..self.recovery.clock.owner.len() {
            if self.recovery.clock.owner[p] == Some(t) {
                self.recovery.clock.reach(p);
            }
        }
        self.recovery_maybe_done();
    }

    /// The job (or the failed region) was redeployed from `_from`.
    pub(super) fn recovery_restarted(&mut self, _from: Option<CheckpointId>) {
        if self.recovery.since.is_none() {
            return;
        }
        self.recovery.clock.restarted = true;
        self.recovery_maybe_done();
    }

    fn recovery_maybe_done(&mut self) {
        if !self.recovery.clock.restarted || self.recovery.clock.behind > 0 {
            return;
        }
        if let Some(since) = self.recovery.since.take() {
            self.recovery.times_ns.push(self.net.now.since(since).0);
        }
        self.recovery.clock.restarted = false;
    }
}
