//! The points at which a sink task owes commits, written down as evidence
//! for the late-commit check (`check/late_commit.rs`): a notification of a
//! completed checkpoint (everything pre-committed for it or earlier is
//! due), a restore (what the restored snapshot held pre-committed is due),
//! and a committable that reaches a committer for a checkpoint it already
//! knew complete (due at once).
//!
//! At each point it records how many transactions were due and which were
//! still pre-committed right after. It never judges: a transaction left
//! pre-committed is evidence, the check decides and words it.

use super::*;
use crate::model::kinds::{Role, SinkRole};
use crate::model::store::{TxnId, TxnState};

impl World<'_> {
    /// What member `m` of task `t` owes for checkpoints at or below `upto`
    /// and is still pre-committed: `None` for a member that commits
    /// nothing.
    ///
    /// A 2PC sink answers for the transactions of its current instance; a
    /// Sink V2 committer with one input channel (or chained to its writer)
    /// for those of the writer subtasks it serves (their committables
    /// preceded the barrier on that channel); a committer with several
    /// inputs for the committables it received (with several inputs an
    /// algorithm that snapshots before every barrier arrived, such as
    /// Chandy–Lamport, may still have some in flight); a writer commits
    /// nothing itself.
    pub(super) fn owed(
        &self,
        t: TaskId,
        m: usize,
        upto: CheckpointId,
    ) -> Option<Vec<(TxnId, u64)>> {
        let ti = t as usize;
        let index = self.tasks.list[ti].members[m].index;
        let kind = &self.plan.scenario.operators[index as usize].kind;
        let owners: Vec<(u32, u32, u32)> = match kind.role() {
            Role::Sink(SinkRole::Transactional) => {
                let task = &self.tasks.list[ti];
                vec![(index, task.subtask, task.deploy_attempt)]
            }
            Role::Committer
                if m == 0
                    && self.plan.exec.tasks[ti].inputs.len() != 1
                    && !crate::model::kinds::forwards_commits(&self.plan.scenario, index) =>
            {
                let store = &self.tasks.store;
                return Some(
                    self.ledger.received[ti]
                        .iter()
                        .filter(|&(&txn, &cp)| {
                            cp <= upto && store.state(txn) == Some(TxnState::PreCommitted)
                        })
                        .map(|(&txn, &cp)| (txn, cp))
                        .collect(),
                );
            }
            // One that feeds a global committer publishes nothing itself;
            // the global committer publishes a checkpoint only once every
            // committer's committables of it arrived, after the
            // notification, so no point makes them due (the output checks
            // judge what it leaves).
            Role::Committer
                if crate::model::kinds::forwards_commits(&self.plan.scenario, index) =>
            {
                return None;
            }
            Role::Committer => {
                let e = self.plan.scenario.edges.iter().find(|e| e.to.0 == index)?;
                let (writer, subtask) = (e.from, self.tasks.list[ti].subtask);
                let writers = self.plan.scenario.op(writer).parallelism;
                let p = self.plan.scenario.operators[index as usize].parallelism;
                crate::model::sinkv2::served_writers(subtask, p, writers)
                    .into_iter()
                    .map(|s| {
                        let wt = self.plan.exec.task_of(writer, s) as usize;
                        (writer.0, s, self.tasks.list[wt].deploy_attempt)
                    })
                    .collect()
            }
            _ => return None,
        };
        let mut owed = Vec::new();
        for (op, subtask, attempt) in owners {
            owed.extend(
                self.tasks
                    .store
                    .precommitted_up_to(op, subtask, attempt, upto),
            );
        }
        Some(owed)
    }

    /// Member `m` of task `t` is notified that `id` completed: the
    /// operator's `notifyCheckpointComplete`, with what was due before it
    /// and what stayed pre-committed after.
    pub(super) fn notify_member(&mut self, t: TaskId, m: usize, id: CheckpointId) {
        let ti = t as usize;
        let before = self.owed(t, m, id);
        let (member, mut ctx) = self.ctx_parts(t, m);
        member.op.notify_checkpoint_complete(id, &mut ctx);
        if let Some(before) = before {
            let after = self.owed(t, m, id).unwrap_or_default();
            self.note_due(t, DueCause::Notified, id, before.len(), after);
            let store = &self.tasks.store;
            self.ledger.received[ti]
                .retain(|&txn, _| store.state(txn) == Some(TxnState::PreCommitted));
        }
    }

    /// Task `t` took its snapshot of checkpoint `id`: what each member
    /// holds pre-committed for `id` or earlier, which a restore of `id`
    /// must commit.
    pub(super) fn note_promised(&mut self, t: TaskId, id: CheckpointId) {
        let mut promised = Vec::new();
        for m in 0..self.tasks.list[t as usize].members.len() {
            promised.extend(self.owed(t, m, id).unwrap_or_default());
        }
        if !promised.is_empty() {
            self.ledger.promised.insert((t, id), promised);
        }
    }

    /// Task `t` was restarted, from checkpoint `restored` (or from
    /// nothing): what that snapshot held pre-committed was due at the
    /// restore; what a committer had received belongs to the old instance.
    pub(super) fn note_restored(&mut self, t: TaskId, restored: Option<CheckpointId>) {
        let ti = t as usize;
        self.ledger.received[ti].clear();
        self.abort_lingering(t, restored);
        let Some(id) = restored else { return };
        let Some(due) = self.ledger.promised.get(&(t, id)) else {
            return;
        };
        let store = &self.tasks.store;
        let late: Vec<(TxnId, u64)> = due
            .iter()
            .copied()
            .filter(|&(txn, _)| store.state(txn) == Some(TxnState::PreCommitted))
            .collect();
        let n = due.len();
        self.note_due(t, DueCause::Restored, id, n, late);
    }

    /// Task `t` restarted (from checkpoint `restored`, or from scratch):
    /// each transactional sink of its chain aborts the transactions its
    /// earlier attempts left open, or pre-committed for a checkpoint the
    /// restore does not include (Flink's Kafka sink aborts such lingering
    /// transactions at `initializeState`; left alone, they block every
    /// `read_committed` reader until the broker times them out).
    fn abort_lingering(&mut self, t: TaskId, restored: Option<CheckpointId>) {
        let ti = t as usize;
        let task = &self.tasks.list[ti];
        let (subtask, attempt) = (task.subtask, task.deploy_attempt);
        for m in 0..task.members.len() {
            let index = self.tasks.list[ti].members[m].index;
            let kind = &self.plan.scenario.operators[index as usize].kind;
            if !matches!(kind.role(), Role::Sink(r) if r.transactional()) {
                continue;
            }
            let parallelism = self.plan.scenario.operators[index as usize].parallelism;
            let lingering =
                self.tasks
                    .store
                    .lingering((index, subtask, parallelism), attempt, restored);
            if lingering.is_empty() {
                continue;
            }
            if self.plan.cfg.mutants.has(Mutant::LingeringTransactionsKept) {
                fired(Mutant::LingeringTransactionsKept);
                continue;
            }
            self.rec.counters.transactions_aborted_at_restore += lingering.len() as u64;
            for txn in lingering {
                self.tasks.store.abort(txn, self.net.now);
            }
        }
    }

    /// Committer task `t` (its member reading from writer operator
    /// `writer`) processed record `r`: its committable is owed from now on,
    /// at the next notification, even one for a checkpoint it knew complete
    /// (Flink 2.x's `CommitterOperator.processElement` only collects).
    pub(super) fn note_committable(&mut self, t: TaskId, writer: u32, r: &Record) {
        let Some((txn, cp)) = crate::model::sinkv2::committable_txn(r, writer) else {
            return;
        };
        if self.tasks.store.state(txn) == Some(TxnState::PreCommitted) {
            self.ledger.received[t as usize].insert(txn, cp);
        }
    }

    /// Records one point at which `due` transactions were due.
    fn note_due(
        &mut self,
        t: TaskId,
        cause: DueCause,
        checkpoint: CheckpointId,
        due: usize,
        precommitted: Vec<(TxnId, u64)>,
    ) {
        if due == 0 && precommitted.is_empty() {
            return;
        }
        self.rec.counters.commits_checked += due as u64;
        self.rec.evidence.commits_due.push(CommitDue {
            time_ns: self.net.now.0,
            task: t,
            cause,
            checkpoint,
            due: due as u32,
            precommitted,
        });
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const LingeringTransactionsKept: Mutant = Mutant::declare(&MutantInfo {
            name: "lingering-transactions-kept",
            part: "2PC sink recovery",
            what: "a restarted transactional sink leaves the transactions its failed attempt had open (or pre-committed past the restored checkpoint) unresolved",
            modelled_on: "Kafka sinks that do not abort lingering transactions on restore (transactional ids not probed or not reused): an open transaction pins the partition's last stable offset and blocks every read_committed consumer until transaction.timeout.ms",
            caught_by: "progress",
            applies: &[("wordcount", "aligned"), ("sink-v2", "aligned")],
        });
    }
}
