//! The external system that sinks write to (think Kafka with transactions, or
//! a key-value store). It lives outside the job, so it survives every crash.
//! Only committed data is visible to the checker.

use super::payload::Payloads;
use super::record::{Lineage, Payload, Record};
use super::txlog::coordinator::CommitAnswer;
use super::txlog::sink::{settle, LostCommit, Settled};
use super::txlog::TxLog;
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnState {
    Open,
    PreCommitted,
    Committed,
    Aborted,
}

#[derive(Clone, Serialize, Deserialize)]
struct Txn {
    state: TxnState,
    records: Vec<Record>,
    /// When it was begun, and when it was committed or aborted.
    #[serde(default)]
    opened_at: SimTime,
    #[serde(default)]
    resolved_at: Option<SimTime>,
}

/// One transaction's life, for the progress check: its state now, when
/// it was begun and when it was committed or aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnSpan {
    pub id: TxnId,
    pub state: TxnState,
    pub opened_at: SimTime,
    pub resolved_at: Option<SimTime>,
}

/// A record visible in the external store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommittedRecord {
    /// Operator index of the sink that wrote it.
    pub sink: u32,
    pub key: u64,
    pub value: i64,
    pub lineage: Lineage,
    pub emitted_at: SimTime,
    pub committed_at: SimTime,
    /// The record's event timestamp (milliseconds).
    pub timestamp: i64,
    /// The record's payload, if it carried one.
    pub payload: Payload,
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

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StoreStats {
    pub transactions_committed: u64,
    pub commits_repeated: u64,
    pub commits_refused: u64,
    pub transactions_aborted: u64,
    /// The transactional log's sinks: transactions committed, commits the
    /// log refused (their records lost), lingering transactions of earlier
    /// attempts aborted at a restore.
    #[serde(default)]
    pub log_commits: u64,
    #[serde(default)]
    pub log_commits_lost: u64,
    #[serde(default)]
    pub log_lingering_aborted: u64,
    /// The log's sources: records fetched, offsets committed to their
    /// consumer groups.
    #[serde(default)]
    pub log_records_fetched: u64,
    #[serde(default)]
    pub log_offsets_committed: u64,
    /// Calls of log sinks that blocked on the transaction coordinator, and
    /// commits made again after one gave up waiting (`max_block`).
    #[serde(default)]
    pub log_coordinator_waits: u64,
    #[serde(default)]
    pub log_commits_retried: u64,
}

/// Serialisable so a savepoint directory can carry the external world
/// along (`crate::savepoint`).
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct ExternalStore {
    /// Transaction index by id; the transactions themselves live in `slots`.
    txns: BTreeMap<TxnId, usize>,
    slots: Vec<Txn>,
    /// The last transaction written to: consecutive writes almost always go
    /// to the same one, so this skips the map lookup on the hot path.
    #[serde(skip)]
    last_write: Option<(TxnId, usize)>,
    /// Per sink subtask, how many records its last committed transaction
    /// held: the room its next one begins with (`begin`).
    #[serde(skip)]
    last_committed: BTreeMap<(u32, u32), usize>,
    committed: Committed,
    pub stats: StoreStats,
    /// Transactions whose commit was refused, for the checker.
    pub refused: Vec<TxnId>,
    /// Writes refused because their transaction was unknown or not open
    /// (a sink bug: the records are lost), for the checker. Not part of a
    /// savepoint's copy of the store: the run that made them judged them.
    #[serde(skip)]
    pub refused_writes: Vec<(TxnId, Option<TxnState>)>,
    /// Set by the simulator while an operator takes its snapshot for this
    /// checkpoint: a pre-commit then belongs to it.
    #[serde(skip)]
    pub precommit_scope: Option<u64>,
    /// Pre-committed transactions with their checkpoint (an index for the
    /// commit check, small however long the run).
    #[serde(skip)]
    precommitted: BTreeMap<TxnId, u64>,
    /// The bytes of the records' payloads (`crate::model::payload`): like
    /// the store, they survive crashes and travel in savepoints.
    pub payloads: Payloads,
    /// The transactional log (`sink-log`'s topics), outside the job too.
    #[serde(default)]
    pub log: TxLog,
    /// Commits the log refused, whose records are lost, for the judge.
    #[serde(skip)]
    pub log_losses: Vec<LostCommit>,
    /// Failures operators raised (operator, subtask, why): the runtime
    /// fails their tasks (an exception out of the operator, in Flink).
    #[serde(skip)]
    pub(crate) failures: Vec<OperatorFailure>,
    /// Calls that blocked their task's thread (operator, subtask, until):
    /// the runtime keeps the task busy until then.
    #[serde(skip)]
    pub(crate) blocks: Vec<(u32, u32, crate::engine::SimTime)>,
    /// Failures due later, with the job's attempt when they were raised: a
    /// blocked call that throws when it returns.
    #[serde(skip)]
    pub(crate) failures_at: Vec<(crate::engine::SimTime, u32, OperatorFailure)>,
}

/// A failure an operator raised (an exception out of it, in Flink).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OperatorFailure {
    pub operator: u32,
    pub subtask: u32,
    pub why: String,
    /// An injected fault made it give up, not the job's code.
    pub injected: bool,
}

impl ExternalStore {
    /// Settles the answer to a log sink's commit (`txlog::sink::settle`):
    /// counted, or kept as a lost commit for the judge; the text of the
    /// failure if the committer's task fails.
    pub fn settle_commit(&mut self, answer: CommitAnswer) -> Option<String> {
        match settle(&self.log, &answer) {
            Settled::Committed => self.stats.log_commits += 1,
            Settled::Again => {}
            Settled::Lost(lost) => {
                self.stats.log_commits_lost += 1;
                self.log_losses.push(lost);
            }
            Settled::Failed(why) => return Some(why),
        }
        None
    }

    /// How many failures operators raised so far and not yet raised by
    /// the runtime: a call that threw makes it grow.
    pub(crate) fn thrown(&self) -> usize {
        self.failures.len() + self.failures_at.len()
    }

    pub fn begin(&mut self, id: TxnId, now: SimTime) {
        if !self.txns.contains_key(&id) {
            // Room for as many records as the subtask's last committed
            // transaction held (transactions between checkpoints at an
            // interval hold about as many): it fills without the copies of
            // growing.
            let room = self.last_committed.get(&(id.sink, id.subtask));
            self.txns.insert(id, self.slots.len());
            self.slots.push(Txn {
                state: TxnState::Open,
                records: Vec::with_capacity(room.copied().unwrap_or(0)),
                opened_at: now,
                resolved_at: None,
            });
        }
    }

    /// The transactions of sink subtask `(sink, subtask)` of `parallelism`
    /// (and of the subtasks of an earlier parallelism it takes over, as
    /// Flink's Kafka sink probes `subtask + k × parallelism`) that attempts
    /// before `attempt` left behind and no restore of checkpoint `restored`
    /// (`None`: from scratch) will commit: those still open, and those
    /// pre-committed for a later checkpoint (one pre-committed outside a
    /// snapshot, whose checkpoint the store does not know, is kept). A restarted transactional
    /// sink aborts them (Kafka's lingering transactions, which block
    /// `read_committed` readers until they time out).
    pub fn lingering(
        &self,
        (sink, subtask, parallelism): (u32, u32, u32),
        attempt: u32,
        restored: Option<u64>,
    ) -> Vec<TxnId> {
        let from = TxnId {
            sink,
            subtask: 0,
            attempt: 0,
            seq: 0,
        };
        self.txns
            .range(from..)
            .take_while(|(id, _)| id.sink == sink)
            .filter(|(id, _)| id.subtask % parallelism.max(1) == subtask)
            .filter(|(id, _)| id.attempt < attempt)
            .filter(|&(id, &slot)| match self.slots[slot].state {
                TxnState::Open => true,
                // Only one known to belong to a later checkpoint: one whose
                // checkpoint the store was not told may be a restored
                // checkpoint's, which its committer still commits.
                TxnState::PreCommitted => self
                    .precommitted
                    .get(id)
                    .is_some_and(|&cp| restored.is_none_or(|c| cp > c)),
                _ => false,
            })
            .map(|(&id, _)| id)
            .collect()
    }

    /// Every transaction's life, by id.
    pub fn spans(&self) -> impl Iterator<Item = TxnSpan> + '_ {
        self.txns.iter().map(|(&id, &slot)| {
            let t = &self.slots[slot];
            TxnSpan {
                id,
                state: t.state,
                opened_at: t.opened_at,
                resolved_at: t.resolved_at,
            }
        })
    }

    /// The records transaction `id` holds (an aborted one keeps them).
    pub fn txn_records(&self, id: &TxnId) -> Option<&[Record]> {
        let slot = *self.txns.get(id)?;
        Some(&self.slots[slot].records)
    }

    fn get_mut(&mut self, id: &TxnId) -> Option<&mut Txn> {
        let slot = *self.txns.get(id)?;
        Some(&mut self.slots[slot])
    }

    /// Writes into an open transaction. Writing to a transaction that is
    /// unknown or not open is a bug of the sink under test: the write is
    /// refused (the record is lost) and recorded for the protocol check.
    #[inline]
    pub fn write(&mut self, id: TxnId, record: Record) {
        let slot = match self.last_write {
            Some((last, slot)) if last == id => slot,
            _ => match self.txns.get(&id) {
                Some(&slot) => {
                    self.last_write = Some((id, slot));
                    slot
                }
                None => {
                    self.refuse_write(id, None);
                    return;
                }
            },
        };
        let txn = &mut self.slots[slot];
        if txn.state != TxnState::Open {
            let state = txn.state;
            self.refuse_write(id, Some(state));
            return;
        }
        txn.records.push(record);
    }

    #[cold]
    fn refuse_write(&mut self, id: TxnId, state: Option<TxnState>) {
        // One entry per transaction and state is enough to name the bug.
        if !self.refused_writes.contains(&(id, state)) && self.refused_writes.len() < 100 {
            self.refused_writes.push((id, state));
        }
    }

    pub fn pre_commit(&mut self, id: TxnId) {
        let scope = self.precommit_scope;
        if let Some(txn) = self.get_mut(&id) {
            if txn.state == TxnState::Open {
                txn.state = TxnState::PreCommitted;
                if let Some(cp) = scope {
                    self.precommitted.insert(id, cp);
                }
            }
        }
    }

    /// Transactions of one sink subtask, opened in attempt `min_attempt` or
    /// later, still pre-committed for a checkpoint at or below `upto`.
    pub fn precommitted_up_to(
        &self,
        sink: u32,
        subtask: u32,
        min_attempt: u32,
        upto: u64,
    ) -> Vec<(TxnId, u64)> {
        let from = TxnId {
            sink,
            subtask,
            attempt: min_attempt,
            seq: 0,
        };
        self.precommitted
            .range(from..)
            .take_while(|(id, _)| id.sink == sink && id.subtask == subtask)
            .filter(|&(_, &cp)| cp <= upto)
            .map(|(&id, &cp)| (id, cp))
            .collect()
    }

    pub fn commit(&mut self, id: TxnId, now: SimTime) -> CommitOutcome {
        let Some(slot) = self.txns.get(&id).copied() else {
            self.stats.commits_refused += 1;
            self.refused.push(id);
            return CommitOutcome::NotCommittable;
        };
        let txn = &mut self.slots[slot];
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
                txn.resolved_at = Some(now);
                self.precommitted.remove(&id);
                self.stats.transactions_committed += 1;
                let records = std::mem::take(&mut txn.records);
                self.last_committed
                    .insert((id.sink, id.subtask), records.len());
                self.committed.push_batch(id, now, records);
                CommitOutcome::Committed
            }
        }
    }

    /// Aborts a transaction that is not committed; a no-op otherwise.
    pub fn abort(&mut self, id: TxnId, now: SimTime) {
        if let Some(txn) = self.get_mut(&id) {
            if matches!(txn.state, TxnState::Open | TxnState::PreCommitted) {
                txn.state = TxnState::Aborted;
                txn.resolved_at = Some(now);
                // The records stay (invisible to readers): a lost record's
                // diagnosis names the aborted transaction that held it.
                self.stats.transactions_aborted += 1;
                self.precommitted.remove(&id);
            }
        }
    }

    /// What a `read_committed` reader of each of `sinks`' topics reads in
    /// the end, once the broker has aborted every transaction still open,
    /// becomes the sink's committed output, each record at the time it
    /// became readable; returns how many records, and how many
    /// transactions were open.
    pub fn publish_log(&mut self, sinks: &[u32]) -> (u64, u64) {
        // The readers' view once the broker has aborted what is still open
        // (at its timeout), taken on a copy: the log itself goes on as it is
        // (a savepoint's image carries it to the next job).
        let mut eventual = self.log.clone();
        let open = eventual.abort_all_ongoing();
        let mut read = 0;
        for &sink in sinks {
            // A store restored from a savepoint holds the earlier job's view
            // of the same topic: the topic is read again, whole.
            self.committed.remove_sink(sink);
            for (record, at) in eventual.committed_view(sink) {
                self.committed.push(sink, at, record);
                read += 1;
            }
        }
        (read, open)
    }

    /// The external system a failure-free run of the same job reads: this
    /// one's log as the failure-free run's (`TxLog::into_failure_free`),
    /// with the payloads its records carry; nothing else.
    pub fn log_input(&self) -> ExternalStore {
        let mut input = ExternalStore {
            log: self.log.clone().into_failure_free(),
            ..ExternalStore::default()
        };
        for (_, bytes) in self.payloads.iter() {
            input.payloads.put(bytes.to_vec());
        }
        input
    }

    /// A non-transactional write, visible at once.
    pub fn write_direct(&mut self, sink: u32, record: Record, now: SimTime) {
        self.committed.push(sink, now, record);
    }

    /// The table `sink`'s upserts left: per key, the value of its last write
    /// (an upsert sink writes with `write_direct`; the store keeps every
    /// write in order).
    pub fn upsert_table(&self, sink: u32) -> BTreeMap<u64, i64> {
        let mut table = BTreeMap::new();
        for r in self.committed.iter().filter(|r| r.sink == sink) {
            table.insert(r.key, r.value);
        }
        table
    }

    pub fn state(&self, id: TxnId) -> Option<TxnState> {
        self.txns
            .get(&id)
            .and_then(|&slot| self.slots.get(slot))
            .map(|t| t.state)
    }

    /// Every transaction with its state and records, by id.
    pub fn transactions(&self) -> impl Iterator<Item = (TxnId, TxnState, &[Record])> {
        self.txns.iter().filter_map(|(&id, &slot)| {
            let t = self.slots.get(slot)?;
            Some((id, t.state, t.records.as_slice()))
        })
    }

    /// Whether a store read from a file is whole: every transaction id names
    /// its own slot, and every slot is named once.
    pub fn check(&self) -> Result<(), String> {
        let mut named = vec![false; self.slots.len()];
        for (id, &slot) in &self.txns {
            match named.get_mut(slot) {
                None => return Err(format!("{id} names slot {slot}, of {}", self.slots.len())),
                Some(true) => return Err(format!("{id} names slot {slot}, named already")),
                Some(seen) => *seen = true,
            }
        }
        match named.iter().position(|&n| !n) {
            Some(slot) => Err(format!("transaction slot {slot} has no id")),
            None => Ok(()),
        }
    }

    /// Everything visible to a reader, in commit order.
    pub fn committed(&self) -> &Committed {
        &self.committed
    }

    /// Transactions still open or pre-committed (never resolved).
    pub fn unresolved(&self) -> usize {
        self.slots
            .iter()
            .filter(|t| matches!(t.state, TxnState::Open | TxnState::PreCommitted))
            .count()
    }
}

/// Everything committed, in commit order. A committed transaction's records
/// stay the batch they were written as (no copy per record); a reader sees
/// each as a [`CommittedRecord`]. Serialized as the flat list of those.
#[derive(Clone, Debug, Default)]
pub struct Committed {
    batches: Vec<Batch>,
    len: usize,
}

#[derive(Clone, Debug)]
struct Batch {
    sink: u32,
    at: SimTime,
    /// The transaction committed (none: direct writes, or a store read
    /// from a file, which keeps no transaction per record).
    txn: Option<TxnId>,
    records: Vec<Record>,
}

impl Committed {
    fn push_batch(&mut self, txn: TxnId, at: SimTime, records: Vec<Record>) {
        if records.is_empty() {
            return;
        }
        self.len += records.len();
        self.batches.push(Batch {
            sink: txn.sink,
            at,
            txn: Some(txn),
            records,
        });
    }

    /// Forgets every record of `sink`.
    fn remove_sink(&mut self, sink: u32) {
        self.batches.retain(|b| b.sink != sink);
        self.len = self.batches.iter().map(|b| b.records.len()).sum();
    }

    /// A direct write (no transaction): it joins the batch before when that
    /// is one of direct writes of the same sink at the same time.
    fn push(&mut self, sink: u32, at: SimTime, record: Record) {
        self.len += 1;
        match self.batches.last_mut() {
            Some(b) if b.sink == sink && b.at == at && b.txn.is_none() => b.records.push(record),
            _ => self.batches.push(Batch {
                sink,
                at,
                txn: None,
                records: vec![record],
            }),
        }
    }

    /// The records with the transaction that committed each (none for a
    /// direct write), in commit order.
    pub fn with_txns(&self) -> impl Iterator<Item = (CommittedRecord, Option<TxnId>)> + '_ {
        self.batches.iter().flat_map(|b| {
            b.records.iter().map(move |r| {
                let c = CommittedRecord {
                    sink: b.sink,
                    key: r.key,
                    value: r.value,
                    lineage: r.lineage,
                    emitted_at: r.emitted_at,
                    committed_at: b.at,
                    timestamp: r.timestamp,
                    payload: r.payload,
                };
                (c, b.txn)
            })
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The records, in commit order.
    pub fn iter(&self) -> impl Iterator<Item = CommittedRecord> + '_ {
        self.with_txns().map(|(c, _)| c)
    }
}

impl PartialEq for Committed {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Serialize for Committed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        // The length first (postcard needs it; `flat_map` cannot tell).
        let mut seq = s.serialize_seq(Some(self.len))?;
        for r in self.iter() {
            seq.serialize_element(&r)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Committed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let flat = Vec::<CommittedRecord>::deserialize(d)?;
        let mut c = Committed::default();
        for r in flat {
            let record = Record {
                key: r.key,
                value: r.value,
                lineage: r.lineage,
                emitted_at: r.emitted_at,
                timestamp: r.timestamp,
                payload: r.payload,
            };
            c.push(r.sink, r.committed_at, record);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: u64, value: i64, offset: u64) -> Record {
        Record {
            key,
            value,
            lineage: Lineage {
                partition: 0,
                offset,
            },
            emitted_at: SimTime::ZERO,
            timestamp: 0,
            payload: Payload::NONE,
        }
    }

    #[test]
    fn an_upsert_overwrites_its_keys_row_and_keeps_every_write() {
        let mut store = ExternalStore::default();
        store.write_direct(3, rec(1, 10, 0), SimTime::ZERO);
        store.write_direct(3, rec(2, 20, 1), SimTime::ZERO);
        store.write_direct(3, rec(1, 11, 2), SimTime::ZERO);
        // A replayed write: the row goes back to the older value.
        store.write_direct(3, rec(1, 10, 0), SimTime::ZERO);
        store.write_direct(4, rec(1, 99, 0), SimTime::ZERO);
        assert_eq!(store.committed().len(), 5);
        let table: Vec<_> = store.upsert_table(3).into_iter().collect();
        assert_eq!(table, vec![(1, 10), (2, 20)]);
        assert_eq!(
            store.upsert_table(4).into_iter().collect::<Vec<_>>(),
            vec![(1, 99)]
        );
    }

    #[test]
    fn committed_records_round_trip_as_a_flat_list() {
        let mut store = ExternalStore::default();
        let t = TxnId {
            sink: 2,
            subtask: 0,
            attempt: 0,
            seq: 0,
        };
        store.begin(t, SimTime(1));
        store.write(t, rec(5, 50, 0));
        store.write(t, rec(6, 60, 1));
        store.pre_commit(t);
        assert_eq!(store.commit(t, SimTime(7)), CommitOutcome::Committed);
        store.write_direct(3, rec(1, 10, 2), SimTime(9));
        store.write_direct(3, rec(1, 11, 3), SimTime(9));
        let flat: Vec<CommittedRecord> = store.committed().iter().collect();
        assert_eq!(flat.len(), 4);
        assert_eq!(
            (flat[1].sink, flat[1].key, flat[1].committed_at),
            (2, 6, SimTime(7))
        );
        assert_eq!((flat[3].sink, flat[3].value), (3, 11));
        let bytes = postcard::to_stdvec(store.committed()).unwrap();
        assert_eq!(bytes, postcard::to_stdvec(&flat).unwrap());
        let back: Committed = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(&back, store.committed());
    }
}
