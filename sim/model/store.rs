//! The external system that sinks write to (think Kafka with transactions, or
//! a key-value store). It lives outside the job, so it survives every crash.
//! Only committed data is visible to the checker.

use super::record::{Lineage, Record};
use crate::engine::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A transaction id, unique across the whole run: the sink operator, its
/// subtask, the job attempt that opened it, and a per-subtask counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TxnId {
    pub sink: u32,
    pub subtask: u32,
    pub attempt: u32,
    pub seq: u64,
}

impl std::fmt::Display for TxnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "txn(sink {} subtask {} attempt {} #{})",
            self.sink, self.subtask, self.attempt, self.seq
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnState {
    Open,
    PreCommitted,
    Committed,
    Aborted,
}

struct Txn {
    state: TxnState,
    records: Vec<Record>,
}

/// A record visible in the external store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommittedRecord {
    /// Operator index of the sink that wrote it.
    pub sink: u32,
    pub key: u64,
    pub value: i64,
    pub lineage: Lineage,
    pub emitted_at: SimTime,
    pub committed_at: SimTime,
}

/// What happened to a commit request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitOutcome {
    Committed,
    /// Already committed: commits are idempotent, as Flink's contract demands.
    AlreadyCommitted,
    /// The transaction was aborted (or never existed): its data is lost.
    NotCommittable,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct StoreStats {
    pub transactions_committed: u64,
    pub commits_repeated: u64,
    pub commits_refused: u64,
    pub transactions_aborted: u64,
}

#[derive(Default)]
pub struct ExternalStore {
    txns: BTreeMap<TxnId, Txn>,
    committed: Vec<CommittedRecord>,
    pub stats: StoreStats,
    /// Transactions whose commit was refused, for the checker.
    pub refused: Vec<TxnId>,
}

impl ExternalStore {
    pub fn begin(&mut self, id: TxnId) {
        self.txns.entry(id).or_insert(Txn {
            state: TxnState::Open,
            records: Vec::new(),
        });
    }

    /// Writes into an open transaction. Writing to a transaction that is not
    /// open is a bug in the sink, so it is refused loudly.
    pub fn write(&mut self, id: TxnId, record: Record) {
        let txn = self
            .txns
            .get_mut(&id)
            .unwrap_or_else(|| panic!("write to unknown {id}"));
        assert_eq!(
            txn.state,
            TxnState::Open,
            "write to {id} in state {:?}",
            txn.state
        );
        txn.records.push(record);
    }

    pub fn pre_commit(&mut self, id: TxnId) {
        if let Some(txn) = self.txns.get_mut(&id) {
            if txn.state == TxnState::Open {
                txn.state = TxnState::PreCommitted;
            }
        }
    }

    pub fn commit(&mut self, id: TxnId, now: SimTime) -> CommitOutcome {
        let Some(txn) = self.txns.get_mut(&id) else {
            self.stats.commits_refused += 1;
            self.refused.push(id);
            return CommitOutcome::NotCommittable;
        };
        match txn.state {
            TxnState::Committed => {
                self.stats.commits_repeated += 1;
                CommitOutcome::AlreadyCommitted
            }
            TxnState::Aborted => {
                self.stats.commits_refused += 1;
                self.refused.push(id);
                CommitOutcome::NotCommittable
            }
            TxnState::Open | TxnState::PreCommitted => {
                txn.state = TxnState::Committed;
                self.stats.transactions_committed += 1;
                let records = std::mem::take(&mut txn.records);
                self.committed
                    .extend(records.into_iter().map(|r| committed(id.sink, r, now)));
                CommitOutcome::Committed
            }
        }
    }

    /// Aborts a transaction that is not committed; a no-op otherwise.
    pub fn abort(&mut self, id: TxnId) {
        if let Some(txn) = self.txns.get_mut(&id) {
            if matches!(txn.state, TxnState::Open | TxnState::PreCommitted) {
                txn.state = TxnState::Aborted;
                txn.records = Vec::new();
                self.stats.transactions_aborted += 1;
            }
        }
    }

    /// A non-transactional write, visible at once.
    pub fn write_direct(&mut self, sink: u32, record: Record, now: SimTime) {
        self.committed.push(committed(sink, record, now));
    }

    pub fn state(&self, id: TxnId) -> Option<TxnState> {
        self.txns.get(&id).map(|t| t.state)
    }

    /// Everything visible to a reader, in commit order.
    pub fn committed(&self) -> &[CommittedRecord] {
        &self.committed
    }

    /// Transactions still open or pre-committed (never resolved).
    pub fn unresolved(&self) -> usize {
        self.txns
            .values()
            .filter(|t| matches!(t.state, TxnState::Open | TxnState::PreCommitted))
            .count()
    }
}

fn committed(sink: u32, r: Record, now: SimTime) -> CommittedRecord {
    CommittedRecord {
        sink,
        key: r.key,
        value: r.value,
        lineage: r.lineage,
        emitted_at: r.emitted_at,
        committed_at: now,
    }
}
