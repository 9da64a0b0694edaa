//! A log with transactions, as Kafka's brokers and transaction coordinator
//! keep it: the external system most Flink jobs read from and write to.
//! It lives outside the job and survives every crash of it.
//!
//! As Kafka's code has it:
//!
//! - **Partitions** of topics hold entries at consecutive offsets: data
//!   records and transaction **markers** (control records, one per
//!   partition a transaction touched, written when it ends). The high
//!   watermark is the log's end here (every write is replicated at once).
//! - A **transactional id** has one producer id and an **epoch**
//!   (`TransactionMetadata`). `InitProducerId` with the id aborts a
//!   transaction it has ongoing, bumps the epoch and so **fences** every
//!   producer with an older one: their writes and `EndTxn` fail with
//!   `ProducerFenced` (`INVALID_PRODUCER_EPOCH`).
//! - A transaction starts when its first partition is added
//!   (`AddPartitionsToTxn`; `txnStartTimestamp`), holds data written under
//!   its producer id and epoch, and ends with `EndTxn`: a marker in each of
//!   its partitions, commit or abort. `EndTxn` on a transaction that added
//!   no partition is `INVALID_TXN_STATE` (the broker has none to end).
//! - The coordinator **aborts** an ongoing transaction once it is older
//!   than its `transaction.timeout.ms` (`abortTimedOutTransactions`, on its
//!   own schedule: [`TxLog::expire`]) and bumps the epoch, so the producer
//!   that opened it, or a committer resuming it after a restore, is fenced:
//!   whatever it held is lost. While the coordinator is down or
//!   unreachable (`coordinator.rs`) it aborts nothing; once back, it aborts
//!   what timed out meanwhile before it answers anything.
//! - The **last stable offset** of a partition is the first offset of its
//!   earliest open transaction (the log's end without one). A
//!   `read_committed` consumer reads below it and skips the data of aborted
//!   transactions (the broker's aborted-transaction index); a
//!   `read_uncommitted` one reads to the high watermark, aborted data
//!   included. Neither sees markers. A transaction left open stalls every
//!   `read_committed` reader of its partitions until it ends.
//! - Consumer groups commit offsets per partition (`OffsetCommit`).
//!
//! Simplified: a transaction's prepare and complete phases are one step
//! (markers appear at `EndTxn`, not after the coordinator's log write); no
//! producer id is reassigned when its epoch runs out (the epoch saturates);
//! idempotent sequence numbers are not modelled (a request lands once, in
//! order, or not at all: `broker.rs` has the requests, their retries and
//! the brokers' faults); there are no replicas, no leader changes and no
//! retention.

use super::record::Record;
use crate::engine::{SimDuration, SimTime};
pub use crate::scenario::BrokerRole;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

pub mod broker;
pub mod coordinator;
mod read;
pub mod rescale;
pub mod sink;
pub mod source;

#[cfg(test)]
mod tests;

/// A producer id, as the transaction coordinator assigns it.
pub type ProducerId = u64;
/// A producer epoch: each `InitProducerId` of the same transactional id
/// and each abort by timeout bumps it.
pub type Epoch = u16;

/// One partition of one topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic: u32,
    pub partition: u32,
}

/// What a consumer may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Below the last stable offset, aborted data skipped.
    ReadCommitted,
    /// To the high watermark, aborted data included.
    ReadUncommitted,
}

/// A transactional producer's identity: its producer id and epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Producer {
    pub id: ProducerId,
    pub epoch: Epoch,
}

/// Where a transactional id's transaction is (`TransactionState`, its
/// prepare phases folded into the complete ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnStatus {
    /// No transaction since the last one ended (or ever).
    Empty,
    Ongoing,
    CompleteCommit,
    CompleteAbort,
}

/// Why a transaction was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AbortCause {
    /// Its producer asked (`EndTxn` with abort).
    Requested,
    /// A producer initialised the same transactional id (`InitProducerId`).
    NewProducer,
    /// It was older than its transaction timeout.
    TimedOut,
}

/// A request the log refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogError {
    /// The request's epoch is older than the transactional id's.
    ProducerFenced { epoch: Epoch, current: Epoch },
    /// `EndTxn` or a write in a state that does not allow it.
    InvalidTxnState(TxnStatus),
    /// The producer id is not the transactional id's (or unknown).
    UnknownProducer(ProducerId),
    /// A transactional write to a partition not added to the transaction.
    PartitionNotAdded(TopicPartition),
    /// No such topic or partition.
    UnknownPartition(TopicPartition),
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::ProducerFenced { epoch, current } => write!(
                f,
                "producer fenced: epoch {epoch} is older than the transactional id's {current}"
            ),
            LogError::InvalidTxnState(s) => write!(f, "invalid transaction state {s:?}"),
            LogError::UnknownProducer(p) => write!(f, "unknown producer id {p}"),
            LogError::PartitionNotAdded(tp) => write!(
                f,
                "partition {}-{} was not added to the transaction",
                tp.topic, tp.partition
            ),
            LogError::UnknownPartition(tp) => {
                write!(f, "no partition {}-{}", tp.topic, tp.partition)
            }
        }
    }
}

/// An entry of a partition.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Entry {
    /// A data record, written by a transactional producer or not.
    Data {
        producer: Option<Producer>,
        record: Record,
        at: SimTime,
    },
    /// A transaction's end in this partition.
    Marker {
        producer: ProducerId,
        commit: bool,
        at: SimTime,
    },
}

/// One partition's log.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct PartitionLog {
    entries: Vec<Entry>,
    /// Per producer with a transaction open here: its first offset.
    open: BTreeMap<ProducerId, u64>,
    /// Aborted transactions' ranges: producer, first offset, marker offset.
    aborted: Vec<(ProducerId, u64, u64)>,
    /// Every ended transaction, by producer and first offset: its marker's
    /// offset, whether it committed, and when (for reads as of a time,
    /// `read.rs`).
    #[serde(default)]
    ended: BTreeMap<(ProducerId, u64), (u64, bool, SimTime)>,
}

impl PartitionLog {
    fn end(&self) -> u64 {
        self.entries.len() as u64
    }

    fn last_stable(&self) -> u64 {
        self.open.values().copied().min().unwrap_or(self.end())
    }

    fn is_aborted(&self, producer: ProducerId, offset: u64) -> bool {
        self.aborted
            .iter()
            .any(|&(p, first, marker)| p == producer && (first..marker).contains(&offset))
    }
}

/// The transaction coordinator's view of one transactional id.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct TxnMeta {
    producer: Producer,
    status: TxnStatus,
    partitions: BTreeSet<TopicPartition>,
    started_at: Option<SimTime>,
    timeout: SimDuration,
    last_abort: Option<AbortCause>,
    /// The client that initialised the producer last.
    client: Client,
}

/// Who initialised a producer: the sink operator, its subtask and the job
/// attempt (Kafka's `client.id`, as Flink's sink names its producers), so a
/// transaction left open can be traced to the attempt that opened it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub operator: u32,
    pub subtask: u32,
    pub attempt: u32,
}

/// A transaction still open in a partition, for the messages of a reader
/// that stalls behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTxn {
    pub transactional_id: String,
    pub producer: Producer,
    pub first_offset: u64,
    pub started_at: Option<SimTime>,
    pub client: Client,
    pub timeout: SimDuration,
    /// Every partition the transaction wrote to.
    pub partitions: Vec<TopicPartition>,
}

/// The log (see the module's docs).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TxLog {
    partitions: BTreeMap<TopicPartition, PartitionLog>,
    txns: BTreeMap<String, TxnMeta>,
    /// Producer id → its transactional id.
    owners: BTreeMap<ProducerId, String>,
    /// The transactional ids with a transaction ongoing (an index: the
    /// timeout scan runs at every request).
    #[serde(default)]
    ongoing: BTreeSet<String>,
    next_producer: ProducerId,
    offsets: BTreeMap<(String, TopicPartition), u64>,
    /// Every transaction aborted by its timeout: transactional id, producer
    /// (before the bump), when.
    pub timed_out: Vec<(String, Producer, SimTime)>,
    /// The broker's clock: the time of the last request ([`TxLog::tick`]).
    now: SimTime,
    /// Per topic, the intervals in which it was closed: its writer had
    /// finished (`read.rs`).
    #[serde(default)]
    closed: BTreeMap<u32, Vec<(SimTime, Option<SimTime>)>>,
    /// The log of the failure-free run (the oracle's copy): no reader reads
    /// the data of a transaction that ended aborted, `read_uncommitted`
    /// readers included (`read.rs`).
    #[serde(skip)]
    failure_free: bool,
    /// The run's faults of the partitions' leaders (`broker.rs`) and of
    /// the transaction coordinator (`coordinator.rs`).
    #[serde(skip)]
    broker_faults: Vec<broker::BrokerWindow>,
    #[serde(skip)]
    coordinator_faults: Vec<broker::BrokerWindow>,
    /// Produce requests waiting for their answer, by when it is due.
    #[serde(skip)]
    in_flight: BTreeMap<(SimTime, u64), broker::InFlight>,
    #[serde(skip)]
    next_request: u64,
    /// Per sink subtask, the errors its producers' callbacks received, with
    /// the attempt of the producer.
    #[serde(skip)]
    errors: BTreeMap<(u32, u32), Vec<(u32, broker::DeliveryError)>>,
    /// Requests retried and expired.
    #[serde(skip)]
    pub stats: BrokerStats,
}

/// What the brokers' faults did to the producers' requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BrokerStats {
    /// Retries of produce requests (an error answer, or none in time).
    pub retries: u64,
    /// Requests that expired (their delivery timeout passed).
    pub expired: u64,
}

impl TxLog {
    pub fn new() -> TxLog {
        TxLog::default()
    }

    /// Creates `topic` with `partitions` partitions (none if it exists).
    pub fn create_topic(&mut self, topic: u32, partitions: u32) {
        for partition in 0..partitions {
            let tp = TopicPartition { topic, partition };
            self.partitions.entry(tp).or_default();
        }
    }

    /// `InitProducerId` for `transactional_id` with `timeout`: a
    /// transaction it has ongoing is aborted, the epoch bumped (every older
    /// producer fenced). A new id gets a new producer id at epoch 0.
    pub fn init_producer(&mut self, transactional_id: &str, timeout: SimDuration) -> Producer {
        self.init_producer_for(transactional_id, timeout, Client::default())
    }

    /// [`TxLog::init_producer`] by `client`.
    pub fn init_producer_for(
        &mut self,
        transactional_id: &str,
        timeout: SimDuration,
        client: Client,
    ) -> Producer {
        if !self.txns.contains_key(transactional_id) {
            let producer = Producer {
                id: self.next_producer,
                epoch: 0,
            };
            self.next_producer += 1;
            self.owners
                .insert(producer.id, transactional_id.to_string());
            self.txns.insert(
                transactional_id.to_string(),
                TxnMeta {
                    producer,
                    status: TxnStatus::Empty,
                    partitions: BTreeSet::new(),
                    started_at: None,
                    timeout,
                    last_abort: None,
                    client,
                },
            );
            return producer;
        }
        if self.txns[transactional_id].status == TxnStatus::Ongoing {
            self.end(transactional_id, false, AbortCause::NewProducer);
        }
        let meta = self.txns.get_mut(transactional_id).expect("known id");
        meta.producer.epoch = meta.producer.epoch.saturating_add(1);
        meta.timeout = timeout;
        meta.client = client;
        meta.producer
    }

    /// The transactional id's coordinator state, for a request from
    /// `producer`: fenced if its epoch is older.
    fn meta_for(
        &mut self,
        transactional_id: &str,
        producer: Producer,
    ) -> Result<&mut TxnMeta, LogError> {
        let meta = self
            .txns
            .get_mut(transactional_id)
            .ok_or(LogError::UnknownProducer(producer.id))?;
        if meta.producer.id != producer.id {
            return Err(LogError::UnknownProducer(producer.id));
        }
        if producer.epoch < meta.producer.epoch {
            return Err(LogError::ProducerFenced {
                epoch: producer.epoch,
                current: meta.producer.epoch,
            });
        }
        Ok(meta)
    }

    /// `AddPartitionsToTxn`: the transaction starts (at `now`) with its
    /// first partition.
    pub fn add_partition(
        &mut self,
        transactional_id: &str,
        producer: Producer,
        tp: TopicPartition,
        now: SimTime,
    ) -> Result<(), LogError> {
        if !self.partitions.contains_key(&tp) {
            return Err(LogError::UnknownPartition(tp));
        }
        self.now = self.now.max(now);
        let meta = self.meta_for(transactional_id, producer)?;
        let starts = meta.status != TxnStatus::Ongoing;
        if starts {
            meta.status = TxnStatus::Ongoing;
            meta.partitions.clear();
            meta.started_at = Some(now);
        }
        meta.partitions.insert(tp);
        if starts {
            self.ongoing.insert(transactional_id.to_string());
        }
        Ok(())
    }

    /// Appends `record` to `tp`: under a transactional producer, in its
    /// ongoing transaction (the partition added to it); returns its offset.
    pub fn produce(
        &mut self,
        tp: TopicPartition,
        producer: Option<(&str, Producer)>,
        record: Record,
    ) -> Result<u64, LogError> {
        if !self.partitions.contains_key(&tp) {
            return Err(LogError::UnknownPartition(tp));
        }
        if let Some((id, p)) = producer {
            let meta = self.meta_for(id, p)?;
            if meta.status != TxnStatus::Ongoing {
                return Err(LogError::InvalidTxnState(meta.status));
            }
            if !meta.partitions.contains(&tp) {
                return Err(LogError::PartitionNotAdded(tp));
            }
        }
        let log = self.partitions.get_mut(&tp).expect("checked");
        let offset = log.end();
        if let Some((_, p)) = producer {
            log.open.entry(p.id).or_insert(offset);
        }
        log.entries.push(Entry::Data {
            producer: producer.map(|(_, p)| p),
            record,
            at: self.now,
        });
        Ok(offset)
    }

    /// `EndTxn`: commits or aborts `producer`'s transaction, a marker in
    /// each of its partitions. A transaction that added no partition (or
    /// already ended) cannot end: `INVALID_TXN_STATE`.
    pub fn end_txn(
        &mut self,
        transactional_id: &str,
        producer: Producer,
        commit: bool,
    ) -> Result<(), LogError> {
        let meta = self.meta_for(transactional_id, producer)?;
        if meta.status != TxnStatus::Ongoing {
            return Err(LogError::InvalidTxnState(meta.status));
        }
        self.end(transactional_id, commit, AbortCause::Requested);
        Ok(())
    }

    /// Writes the markers of `transactional_id`'s ongoing transaction.
    fn end(&mut self, transactional_id: &str, commit: bool, cause: AbortCause) {
        self.ongoing.remove(transactional_id);
        let meta = self.txns.get_mut(transactional_id).expect("known id");
        let pid = meta.producer.id;
        for tp in std::mem::take(&mut meta.partitions) {
            let log = self
                .partitions
                .get_mut(&tp)
                .expect("added partitions exist");
            let marker = log.end();
            if let Some(first) = log.open.remove(&pid) {
                if !commit {
                    log.aborted.push((pid, first, marker));
                }
                log.ended.insert((pid, first), (marker, commit, self.now));
            }
            log.entries.push(Entry::Marker {
                producer: pid,
                commit,
                at: self.now,
            });
        }
        meta.status = match commit {
            true => TxnStatus::CompleteCommit,
            false => TxnStatus::CompleteAbort,
        };
        meta.started_at = None;
        meta.last_abort = (!commit).then_some(cause);
    }

    /// The coordinator's timeout scan at `now`: every transaction ongoing
    /// for longer than its timeout is aborted and its epoch bumped (its
    /// producer fenced). Returns the transactional ids it aborted.
    pub fn expire(&mut self, now: SimTime) -> Vec<String> {
        self.now = self.now.max(now);
        let due: Vec<String> = (self.ongoing.iter())
            .filter(|id| {
                let m = &self.txns[id.as_str()];
                m.started_at
                    .is_some_and(|s| self.timed_out_by(s, m.timeout, now))
            })
            .cloned()
            .collect();
        for id in &due {
            self.expire_one(id);
        }
        due
    }

    /// The timeout scan aborts `id`'s ongoing transaction (at the log's
    /// time) and bumps its epoch.
    fn expire_one(&mut self, id: &str) {
        let producer = self.txns[id].producer;
        self.end(id, false, AbortCause::TimedOut);
        let meta = self.txns.get_mut(id).expect("known id");
        meta.producer.epoch = meta.producer.epoch.saturating_add(1);
        self.timed_out.push((id.to_string(), producer, self.now));
    }

    /// The end of time for the readers: every transaction still ongoing is
    /// aborted, as the coordinator will once its timeout passes (a job
    /// that ended no longer ends them). Returns how many.
    pub fn abort_all_ongoing(&mut self) -> u64 {
        let ongoing: Vec<String> = self.ongoing.iter().cloned().collect();
        for id in &ongoing {
            self.end(id, false, AbortCause::TimedOut);
        }
        ongoing.len() as u64
    }

    /// The transactional id's status, producer and why it last aborted.
    pub fn status(
        &self,
        transactional_id: &str,
    ) -> Option<(TxnStatus, Producer, Option<AbortCause>)> {
        self.txns
            .get(transactional_id)
            .map(|m| (m.status, m.producer, m.last_abort))
    }

    /// The high watermark (the log's end) of `tp`.
    pub fn high_watermark(&self, tp: TopicPartition) -> u64 {
        self.partitions.get(&tp).map_or(0, PartitionLog::end)
    }

    /// The last stable offset of `tp`: its earliest open transaction's
    /// first offset, or its end.
    pub fn last_stable_offset(&self, tp: TopicPartition) -> u64 {
        self.partitions
            .get(&tp)
            .map_or(0, PartitionLog::last_stable)
    }

    /// Reads `tp` from `from` on, at most `max` data records: each with its
    /// offset, and the offset to read from next (past skipped entries).
    pub fn read(
        &self,
        tp: TopicPartition,
        from: u64,
        isolation: Isolation,
        max: usize,
    ) -> (Vec<(u64, Record)>, u64) {
        let Some(log) = self.partitions.get(&tp) else {
            return (Vec::new(), from);
        };
        let limit = match isolation {
            Isolation::ReadCommitted => log.last_stable(),
            Isolation::ReadUncommitted => log.end(),
        };
        let mut out = Vec::new();
        let mut at = from;
        while at < limit && out.len() < max {
            if let Entry::Data {
                producer, record, ..
            } = &log.entries[at as usize]
            {
                let aborted = producer.is_some_and(|p| log.is_aborted(p.id, at));
                if !aborted || isolation == Isolation::ReadUncommitted {
                    out.push((at, *record));
                }
            }
            at += 1;
        }
        (out, at)
    }

    /// The markers written to `tp`, in offset order: each one's offset,
    /// producer id and whether it committed.
    pub fn markers(&self, tp: TopicPartition) -> Vec<(u64, ProducerId, bool)> {
        let Some(log) = self.partitions.get(&tp) else {
            return Vec::new();
        };
        (log.entries.iter().enumerate())
            .filter_map(|(at, e)| match *e {
                Entry::Marker {
                    producer, commit, ..
                } => Some((at as u64, producer, commit)),
                Entry::Data { .. } => None,
            })
            .collect()
    }

    /// The transactions open in `tp`, earliest first.
    pub fn open_transactions(&self, tp: TopicPartition) -> Vec<OpenTxn> {
        let Some(log) = self.partitions.get(&tp) else {
            return Vec::new();
        };
        let mut open: Vec<OpenTxn> = log
            .open
            .iter()
            .map(|(&pid, &first)| {
                let id = self.owners[&pid].clone();
                let meta = &self.txns[&id];
                OpenTxn {
                    transactional_id: id,
                    producer: meta.producer,
                    first_offset: first,
                    started_at: meta.started_at,
                    client: meta.client,
                    timeout: meta.timeout,
                    partitions: meta.partitions.iter().copied().collect(),
                }
            })
            .collect();
        open.sort_by_key(|t| t.first_offset);
        open
    }

    /// A request reaches the broker at `now`: its clock moves on, and the
    /// coordinator's timeout scan runs first ([`TxLog::expire`]; Kafka runs
    /// it on a schedule, here at every request, so no request sees a
    /// transaction past its timeout still open).
    pub fn tick(&mut self, now: SimTime) {
        self.now = self.now.max(now);
        if !self.ongoing.is_empty() {
            self.expire(self.now);
        }
    }

    /// `ListTransactions`: every transactional id starting with `prefix`,
    /// with its status (Flink's pooled naming lists them to find the
    /// transactions a failed attempt left open).
    pub fn list_transactions(&self, prefix: &str) -> Vec<(String, TxnStatus)> {
        (self.txns.range(prefix.to_string()..))
            .take_while(|(id, _)| id.starts_with(prefix))
            .map(|(id, m)| (id.clone(), m.status))
            .collect()
    }

    /// Every transaction open in some partition of `topic`, earliest first
    /// by start, each once.
    pub fn open_in_topic(&self, topic: u32) -> Vec<OpenTxn> {
        let mut open: Vec<OpenTxn> = Vec::new();
        for (&tp, _) in self.topic_partitions(topic) {
            for t in self.open_transactions(tp) {
                if !open
                    .iter()
                    .any(|o| o.transactional_id == t.transactional_id)
                {
                    open.push(t);
                }
            }
        }
        open.sort_by(|a, b| {
            (a.started_at, &a.transactional_id).cmp(&(b.started_at, &b.transactional_id))
        });
        open
    }

    fn topic_partitions(
        &self,
        topic: u32,
    ) -> impl Iterator<Item = (&TopicPartition, &PartitionLog)> {
        let first = TopicPartition {
            topic,
            partition: 0,
        };
        self.partitions
            .range(first..)
            .take_while(move |(tp, _)| tp.topic == topic)
    }

    /// Each partition of `topic`: its last stable offset and high watermark.
    pub fn topic_offsets(&self, topic: u32) -> Vec<(u32, u64, u64)> {
        self.topic_partitions(topic)
            .map(|(tp, log)| (tp.partition, log.last_stable(), log.end()))
            .collect()
    }

    /// Where `topic` holds data records of `lineage`, for a lost record's
    /// message: partition, offset, the transactional id that wrote it
    /// (none: a write without a transaction) and how its transaction
    /// stands at the end (`committed`, `aborted` or `open`). At most `max`.
    pub fn records_of(
        &self,
        topic: u32,
        lineage: crate::model::Lineage,
        max: usize,
    ) -> Vec<(TopicPartition, u64, Option<String>, &'static str)> {
        let mut out = Vec::new();
        for (tp, log) in self.topic_partitions(topic) {
            for (at, e) in log.entries.iter().enumerate() {
                let Entry::Data {
                    producer, record, ..
                } = e
                else {
                    continue;
                };
                if record.lineage != lineage || out.len() >= max {
                    continue;
                }
                let at = at as u64;
                let (id, state) = match producer {
                    None => (None, "committed"),
                    Some(p) => {
                        let open = log.open.get(&p.id).is_some_and(|&first| first <= at);
                        let state = match (open, log.is_aborted(p.id, at)) {
                            (true, _) => "open",
                            (false, true) => "aborted",
                            (false, false) => "committed",
                        };
                        (self.owners.get(&p.id).cloned(), state)
                    }
                };
                out.push((*tp, at, id, state));
            }
        }
        out
    }

    /// What a `read_committed` consumer of `topic` reads from the start, partition
    /// after partition: each record with the time it became readable (its
    /// transaction's commit marker, or its own write without a transaction).
    pub fn committed_view(&self, topic: u32) -> Vec<(Record, SimTime)> {
        let mut out = Vec::new();
        for (_, log) in self.topic_partitions(topic) {
            // Backwards: the first commit marker after a record is its producer's
            // latest one seen so far.
            let mut marker: BTreeMap<ProducerId, SimTime> = BTreeMap::new();
            let mut part = Vec::new();
            let stable = log.last_stable() as usize;
            for (at, e) in log.entries.iter().enumerate().rev() {
                match *e {
                    Entry::Marker {
                        producer,
                        commit,
                        at: t,
                    } => {
                        if commit {
                            marker.insert(producer, t);
                        } else {
                            marker.remove(&producer);
                        }
                    }
                    Entry::Data {
                        producer,
                        record,
                        at: t,
                    } if at < stable => match producer {
                        None => part.push((record, t)),
                        Some(p) => {
                            if let Some(&c) = marker.get(&p.id) {
                                part.push((record, c));
                            }
                        }
                    },
                    Entry::Data { .. } => {}
                }
            }
            part.reverse();
            out.extend(part);
        }
        out
    }

    /// `OffsetCommit` of consumer group `group` for `tp`.
    pub fn commit_offset(&mut self, group: &str, tp: TopicPartition, offset: u64) {
        self.offsets.insert((group.to_string(), tp), offset);
    }

    /// The offset `group` last committed for `tp`.
    pub fn committed_offset(&self, group: &str, tp: TopicPartition) -> Option<u64> {
        self.offsets.get(&(group.to_string(), tp)).copied()
    }
}
