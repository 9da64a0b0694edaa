//! `sink-log`: Flink's Kafka sink (`KafkaSink`: its `KafkaWriter` and
//! `KafkaCommitter` as one operator, as they run chained) writing to a topic
//! of the transactional log ([`super::TxLog`]). The topic is the sink's
//! operator index; a record goes to partition `key % partitions`.
//!
//! Records wait in the producer's buffer until `batch` of them are there
//! (Kafka's `batch.size`); then they are appended. The delivery guarantee
//! (Flink's `DeliveryGuarantee`) decides what a checkpoint does:
//!
//! - **none**: nothing; a buffered batch is lost with its task, and the
//!   records after the restored checkpoint are written again.
//! - **at-least-once**: the buffer is flushed before the snapshot
//!   (`KafkaWriter.flush`), so a checkpoint covers what it wrote.
//! - **exactly-once**: records are written in a transaction of the
//!   subtask's current producer. The snapshot flushes and, if the
//!   transaction holds records, keeps it as a *committable* (transactional
//!   id, producer id and epoch) of the checkpoint, then begins the next
//!   transaction on the next producer. On notification of a completed
//!   checkpoint every committable up to it is committed by resuming its
//!   producer (`resumeTransaction`, no `InitProducerId`) and ending the
//!   transaction; a restore commits the restored committables the same
//!   way, then aborts what earlier attempts left open.
//!
//! A commit the log refuses because the broker aborted the transaction
//! (its timeout) or a newer producer fenced it is dropped with an error,
//! as `KafkaCommitter` does (`signalFailedWithKnownReason`): its records
//! are lost, and the store keeps a [`LostCommit`] for the judge. Any other
//! refusal fails the task (`signalFailedWithUnknownReason`).
//!
//! Transactional ids (Flink's `TransactionNamingStrategy`):
//!
//! - **incrementing** (the classic one): `prefix-subtask-checkpoint`, a new
//!   producer per checkpoint. Ids of checkpoints the sink never snapshotted
//!   are initialised too (`getTransactionalProducer` fills the gaps), so
//!   that the restore's abort (`TransactionAborter`) can probe ids from the
//!   restored checkpoint + 1 on, initialising each (which aborts what it
//!   holds) until one was never used (epoch 0), subtask after subtask
//!   (`subtask + k × parallelism`) until a subtask had none.
//! - **pooling**: `prefix-subtask-n`, a pool of producers reused once their
//!   transaction is committed and no snapshot that may still be restored
//!   lists it. The restore lists the log's ongoing transactions of the
//!   prefix (`ListTransactions`) and aborts those of its subtask.
//!
//! The producer is asynchronous (`broker.rs`): a full batch leaves as a
//! request, answered at once unless a broker fault delays it; an error its
//! callback gets (the request expired, or the transaction was fenced
//! before it landed) fails the task at the writer's next call
//! (`checkAsyncException`), and a flush (before every snapshot under
//! exactly-once and at-least-once, and at the end of input) blocks the
//! task's thread until every request is answered, then checks. Calls to
//! the transaction coordinator (`InitProducerId`, each commit) block the
//! thread until it answers, at most `max_block` each (`coordinator.rs`):
//! an `InitProducerId` that gives up fails the task, a commit is made again
//! up to `commit_retries` times (Flink's `CommitterOperator`), then fails
//! the task; every answer is settled as of when it came ([`settle`]).
//!
//! A restore at another parallelism deals the state as Flink's runtime
//! deals the connector's writer and committer list states (`rescale.rs`):
//! with pooled ids an instance owns the transactional-id subtasks its
//! writer entries name (`Ownership`).
//!
//! Simplified: the writer and committer are one operator, so a committable
//! never travels over a channel.

use super::broker::ProducerConfig;
use super::coordinator::{Call, CommitAnswer};
use super::{AbortCause, Client, LogError, Producer, TopicPartition, TxLog, TxnStatus};
use crate::engine::{SimDuration, SimTime};
use crate::model::operator::{decode, encode, CheckpointId, Context, Operator};
use crate::model::record::Record;
use crate::mutant::Mutant;
use crate::scenario::{Delivery, TxnNaming};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A transaction kept for its checkpoint's commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committable {
    pub checkpoint: CheckpointId,
    pub transactional_id: String,
    pub producer: Producer,
    pub records: u64,
    pub opened_at: SimTime,
}

/// A commit the log refused, whose records are lost: for the judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostCommit {
    /// The sink operator and subtask.
    pub sink: u32,
    pub subtask: u32,
    pub committable: Committable,
    /// When the commit was refused.
    pub at: SimTime,
    /// Why the broker had ended the transaction, and when, if it had.
    pub aborted: Option<(AbortCause, SimTime)>,
    pub timeout: SimDuration,
    pub error: String,
}

/// The settings of one sink.
#[derive(Clone, Debug)]
pub struct LogSinkSpec {
    /// The transactional id prefix (the operator's name).
    pub prefix: String,
    pub delivery: Delivery,
    pub naming: TxnNaming,
    pub partitions: u32,
    pub timeout: SimDuration,
    pub batch: u32,
    /// The producer's request settings.
    pub producer: ProducerConfig,
    /// Kafka's `max.block.ms`: how long a call to the transaction
    /// coordinator blocks before it throws `TimeoutException`.
    pub max_block: SimDuration,
    /// Flink's `sink.committer.retries`: how often a commit that threw a
    /// retriable error is made again before the task fails.
    pub commit_retries: u32,
}

/// The transaction records go to.
struct Current {
    id: String,
    producer: Producer,
    records: u64,
    partitions: BTreeSet<u32>,
    opened_at: SimTime,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct LogSinkState {
    /// The checkpoint of the snapshot.
    pub(super) checkpoint: CheckpointId,
    pub(super) pending: Vec<Committable>,
    /// Pooling: ids created so far, and the ids the pool knew.
    pub(super) created: u32,
    pub(super) known: Vec<String>,
    /// Pooling: the pool's producers (id and epoch) at the snapshot.
    #[serde(default)]
    pub(super) producers: Vec<(String, Producer)>,
}

/// Pooling: which transactional-id subtasks an instance owns, as Flink's
/// `TransactionOwnership.EXPLICIT_BY_WRITER_STATE` has it (its
/// `KafkaWriterState`s): it names new ids after the first, and aborts the
/// lingering transactions of ids whose subtask modulo `total` it owns; a
/// rescale deals the owned ids out with the writer's state
/// (`rescale.rs`). `held`: ids of transactions another subtask commits at
/// this restore (pre-committed, dealt to another committer), that the
/// restore must neither abort nor reuse. Encoded after the state only when
/// it is not the default (owning its own subtask, `total` the parallelism,
/// nothing held), so a job never rescaled snapshots the same bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Ownership {
    pub(super) owned: Vec<u32>,
    pub(super) total: u32,
    pub(super) held: Vec<String>,
}

impl Ownership {
    /// An instance's own default: its subtask, of `parallelism`.
    pub(super) fn own(subtask: u32, parallelism: u32) -> Ownership {
        Ownership {
            owned: vec![subtask],
            total: parallelism.max(1),
            held: Vec::new(),
        }
    }
}

/// A sink's state bytes: the state, then its ownership if not `default`.
pub(super) fn encode_state(state: &LogSinkState, own: &Ownership, default: &Ownership) -> Vec<u8> {
    let mut bytes = encode(state);
    if own != default {
        bytes.extend(encode(own));
    }
    bytes
}

/// A sink's state bytes decoded: the state and its ownership, if written.
pub(super) fn decode_state(bytes: &[u8]) -> Result<(LogSinkState, Option<Ownership>), String> {
    let what = |e: postcard::Error| format!("cannot decode sink-log state: {e}");
    let (state, rest) = postcard::take_from_bytes::<LogSinkState>(bytes).map_err(what)?;
    let own = match rest.is_empty() {
        true => None,
        false => Some(decode::<Ownership>(rest, "sink-log ownership")?),
    };
    Ok((state, own))
}

/// The sink (see the module's docs).
pub struct LogSink {
    spec: LogSinkSpec,
    buffer: Vec<Record>,
    started: bool,
    current: Option<Current>,
    pending: Vec<Committable>,
    /// Incrementing: the highest checkpoint an id was made for.
    last_checkpoint: CheckpointId,
    /// Pooling: this instance's producers by id, the ids created, those
    /// free for a new transaction, and per snapshot that may still be
    /// restored the ids it listed as committables.
    producers: BTreeMap<String, Producer>,
    created: u32,
    free: Vec<String>,
    listed: BTreeMap<CheckpointId, Vec<String>>,
    /// The client this instance's producers send as.
    producer_client: Option<Client>,
    /// Where the task's thread is in the current call: a blocking call to
    /// the coordinator moves it on (`coordinator.rs`).
    thread_at: SimTime,
    /// A call to the coordinator gave up: the task fails when it returns,
    /// and the instance does nothing more.
    broken: bool,
    /// Pooling: the transactional-id subtasks this instance owns (set at
    /// its start; see [`Ownership`]).
    own: Ownership,
}

impl LogSink {
    pub fn new(spec: LogSinkSpec) -> LogSink {
        LogSink {
            spec,
            buffer: Vec::new(),
            started: false,
            current: None,
            pending: Vec::new(),
            last_checkpoint: 0,
            producers: BTreeMap::new(),
            created: 0,
            free: Vec::new(),
            listed: BTreeMap::new(),
            producer_client: None,
            thread_at: SimTime::ZERO,
            broken: false,
            own: Ownership::default(),
        }
    }

    /// Pooling: whether this instance owns the ids of `subtask`.
    fn owns(&self, subtask: u32) -> bool {
        (self.own.owned).contains(&(subtask % self.own.total.max(1)))
    }

    /// Pooling: whether `id` is one this instance names new transactions
    /// with (its first owned subtask's), so its pool may reuse it.
    fn reusable(&self, id: &str) -> bool {
        let prefix = format!("{}-", self.spec.prefix);
        let first = self.own.owned.first().copied();
        (id.strip_prefix(&prefix).and_then(pooled_index)).is_some_and(|(s, _)| Some(s) == first)
    }

    fn exactly_once(&self) -> bool {
        self.spec.delivery == Delivery::ExactlyOnce
    }

    fn client(ctx: &Context) -> Client {
        Client {
            operator: ctx.operator,
            subtask: ctx.subtask,
            attempt: ctx.attempt,
        }
    }

    /// This instance's producers' client (as its first call named it: the
    /// job's attempt moves on under region failover without redeploying it).
    fn me(&self, ctx: &Context) -> Client {
        self.producer_client.unwrap_or_else(|| Self::client(ctx))
    }

    fn incrementing_id(&self, subtask: u32, checkpoint: CheckpointId) -> String {
        format!("{}-{subtask}-{checkpoint}", self.spec.prefix)
    }

    /// The writer's initialisation (at the first call, or at the restore of
    /// `restored`): the topic, the abort of what earlier attempts left
    /// open, the first transaction.
    fn start(&mut self, restored: Option<CheckpointId>, known: &[String], ctx: &mut Context) {
        if self.started {
            return;
        }
        self.started = true;
        let inherited = !self.own.owned.is_empty()
            && self.own.owned != [ctx.subtask]
            && self.spec.naming == TxnNaming::Pooling;
        if inherited && ctx.mutant(Mutant::RemovedSubtasksNotAborted) {
            // Mutant: the restored ownership is ignored; only the ids of
            // this subtask's own index are this instance's.
            self.own.owned = vec![ctx.subtask];
            self.own.total = u32::MAX;
        } else if self.own.owned.is_empty() || self.spec.naming == TxnNaming::Incrementing {
            // The incrementing naming's ownership is implicit: the subtask.
            let held = std::mem::take(&mut self.own.held);
            self.own = Ownership {
                held,
                ..Ownership::own(ctx.subtask, ctx.parallelism)
            };
        }
        ctx.store.log.tick(ctx.now);
        self.producer_client = Some(Self::client(ctx));
        ctx.store.log.abandon(Self::client(ctx));
        ctx.store
            .log
            .create_topic(ctx.operator, self.spec.partitions);
        if !self.exactly_once() {
            return;
        }
        let from = restored.unwrap_or(0);
        self.last_checkpoint = from;
        if ctx.attempt > 0 && ctx.mutant(Mutant::LogLingeringNotAborted) {
            // Mutant: what earlier attempts left open stays open.
            self.next_transaction(from + 1, ctx);
            return;
        }
        match self.spec.naming {
            TxnNaming::Incrementing => self.abort_incrementing(from + 1, ctx),
            TxnNaming::Pooling => self.abort_pooled(known, ctx),
        }
        self.next_transaction(from + 1, ctx);
    }

    /// `TransactionAborter`: from checkpoint `start` on, each id of the
    /// subtask initialised (aborting what it holds) until one was never
    /// used; then the subtask `parallelism` higher, until a subtask had none.
    fn abort_incrementing(&mut self, start: CheckpointId, ctx: &mut Context) {
        let mut subtask = ctx.subtask;
        loop {
            let mut aborted = 0u64;
            for checkpoint in start.. {
                let id = self.incrementing_id(subtask, checkpoint);
                let open = ctx.store.log.status(&id).map(|s| s.0) == Some(TxnStatus::Ongoing);
                ctx.store.stats.log_lingering_aborted += u64::from(open);
                let Some(p) = self.init(&id, ctx) else {
                    return;
                };
                if p.epoch == 0 {
                    break;
                }
                aborted += 1;
            }
            if aborted == 0 {
                return;
            }
            subtask += ctx.parallelism.max(1);
            let next = self.incrementing_id(subtask, start);
            if ctx.store.log.status(&next).is_some()
                && ctx.mutant(Mutant::RemovedSubtasksNotAborted)
            {
                // Mutant: no probe beyond this subtask's own ids.
                return;
            }
        }
    }

    /// Pooling: every ongoing transaction of the prefix whose id's subtask
    /// this instance owns is aborted (its id initialised anew), except
    /// those another subtask commits at this restore (`held`).
    fn abort_pooled(&mut self, known: &[String], ctx: &mut Context) {
        let prefix = format!("{}-", self.spec.prefix);
        let listed = ctx.store.log.list_transactions(&prefix);
        for (id, status) in listed {
            let Some((subtask, n)) = pooled_index(&id[prefix.len()..]) else {
                continue;
            };
            if status != TxnStatus::Ongoing || !self.owns(subtask) || self.own.held.contains(&id) {
                continue;
            }
            if !known.contains(&id) && ctx.mutant(Mutant::PooledAbortKnownOnly) {
                continue;
            }
            if self.producers.contains_key(&id) {
                // Taken over already (only the mutant below resumes one).
                continue;
            }
            let Some(p) = self.init(&id, ctx) else {
                return;
            };
            // A new id never takes the name of one in the pool.
            if self.reusable(&id) {
                self.created = self.created.max(n.saturating_add(1));
            }
            self.producers.insert(id, p);
            ctx.store.stats.log_lingering_aborted += 1;
        }
    }

    /// Begins the transaction for the checkpoint after `checkpoint - 1`:
    /// incrementing, the producer of id `checkpoint` (the ids of skipped
    /// checkpoints initialised on the way); pooling, a free producer or a
    /// new one.
    fn next_transaction(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        let (id, producer) = match self.spec.naming {
            TxnNaming::Incrementing => {
                let mut made = None;
                let gap = self.last_checkpoint + 1 < checkpoint;
                let first = match gap && ctx.mutant(Mutant::TransactionalIdGaps) {
                    true => checkpoint,
                    false => (self.last_checkpoint + 1).min(checkpoint),
                };
                for c in first..=checkpoint {
                    let id = self.incrementing_id(ctx.subtask, c);
                    let Some(p) = self.init(&id, ctx) else {
                        return;
                    };
                    made = Some((id, p));
                }
                self.last_checkpoint = checkpoint;
                made.expect("at least one id")
            }
            TxnNaming::Pooling => {
                let id = match self.free.pop() {
                    Some(id) => id,
                    None => {
                        self.created += 1;
                        let subtask = self.own.owned.first().copied().unwrap_or(ctx.subtask);
                        format!("{}-{subtask}-{}", self.spec.prefix, self.created - 1)
                    }
                };
                let p = match self.producers.get(&id) {
                    Some(&p) => p,
                    None => match self.init(&id, ctx) {
                        Some(p) => p,
                        None => return,
                    },
                };
                self.producers.insert(id.clone(), p);
                (id, p)
            }
        };
        self.current = Some(Current {
            id,
            producer,
            records: 0,
            partitions: BTreeSet::new(),
            opened_at: ctx.now,
        });
    }

    /// Sends the buffered records as one request: in the current
    /// transaction (its new partitions added first, a request to the
    /// coordinator), or without one. A request answered at once is checked
    /// at once; a later answer is checked at the writer's next call.
    fn flush(&mut self, ctx: &mut Context) {
        if self.buffer.is_empty() || self.broken {
            return;
        }
        ctx.store.log.tick(ctx.now);
        let topic = ctx.operator;
        let mut records = Vec::with_capacity(self.buffer.len());
        let mut adds = false;
        for record in std::mem::take(&mut self.buffer) {
            let partition = (record.key % u64::from(self.spec.partitions.max(1))) as u32;
            let tp = TopicPartition { topic, partition };
            if let Some(c) = self.current.as_mut() {
                if c.partitions.insert(partition) {
                    adds = true;
                    if let Err(e) = ctx.store.log.add_partition(&c.id, c.producer, tp, ctx.now) {
                        ctx.fail(format!("a write to {} failed: {e}", self.spec.prefix));
                        return;
                    }
                }
                c.records += 1;
            }
            records.push((tp, record));
        }
        let txn = self.current.as_ref().map(|c| (c.id.clone(), c.producer));
        let client = self.me(ctx);
        let cfg = &self.spec.producer;
        let due = (ctx.store.log).send(client, txn, records, adds, cfg, ctx.now);
        if due <= ctx.now {
            self.check_async(ctx);
        }
    }

    /// `checkAsyncException`: an error a callback received fails the task.
    fn check_async(&mut self, ctx: &mut Context) {
        let errors = ctx.store.log.take_errors(self.me(ctx));
        let Some(first) = errors.first() else {
            return;
        };
        if ctx.mutant(Mutant::LogAsyncErrorSwallowed) {
            // Mutant: the mail that rethrows the callback's error loses it.
            return;
        }
        let why = format!("a write to {} failed: {}", self.spec.prefix, first.why);
        match first.by_fault {
            true => ctx.fail_by_fault(why),
            false => ctx.fail(why),
        }
    }

    /// `flush` and `checkAsyncException` (Flink's `KafkaWriter.flush`):
    /// the buffer is sent, and the task's thread waits until every request
    /// in flight is answered or expired; then an error any of them got
    /// fails the task.
    fn flush_and_wait(&mut self, ctx: &mut Context) {
        self.flush(ctx);
        let client = self.me(ctx);
        let Some(until) = ctx.store.log.in_flight_until(client) else {
            self.check_async(ctx);
            return;
        };
        if ctx.mutant(Mutant::LogFlushSkipsRetries) {
            // Mutant: the flush returns while requests are still being
            // retried; what they hold is not in the log when the snapshot
            // is taken, and an expiry surfaces at a later write.
            self.check_async(ctx);
            return;
        }
        ctx.block_until(until);
        self.thread_at = self.thread_at.max(until);
        self.check_async(ctx);
        if let Some(e) = ctx.store.log.in_flight_errors(client).first() {
            // The flush returns at `until`, and throws then.
            let why = format!("a write to {} failed: {}", self.spec.prefix, e.why);
            ctx.fail_at(until, why, e.by_fault);
        }
    }

    /// Where the task's thread is in this call.
    fn thread(&self, ctx: &Context) -> SimTime {
        self.thread_at.max(ctx.now)
    }

    /// The thread, at `sent`, waits for an answer until `until`.
    fn wait(&mut self, sent: SimTime, until: SimTime, ctx: &mut Context) {
        if until > sent {
            self.thread_at = until;
            ctx.block_until(until);
            ctx.store.stats.log_coordinator_waits += 1;
        }
    }

    /// `InitProducerId` for `id` (`initTransactions`): the thread blocks
    /// until the coordinator answers; after `max_block` it throws, and the
    /// task fails then (the fault's doing).
    fn init(&mut self, id: &str, ctx: &mut Context) -> Option<Producer> {
        if self.broken {
            return None;
        }
        let sent = self.thread(ctx);
        let cfg = &self.spec.producer;
        match (ctx.store.log).coordinator_call(sent, self.spec.max_block, 1, cfg) {
            Call::Answered { at, .. } => {
                self.wait(sent, at, ctx);
                let (client, timeout) = (Self::client(ctx), self.spec.timeout);
                let log = &mut ctx.store.log;
                Some(log.as_of(at, |log| log.init_producer_for(id, timeout, client)))
            }
            Call::GaveUp { at } => {
                self.wait(sent, at, ctx);
                self.broken = true;
                let why = format!(
                    "{}: InitProducerId for {id} timed out after max_block ({})",
                    self.spec.prefix, self.spec.max_block
                );
                ctx.fail_at(at, why, true);
                None
            }
        }
    }

    /// Commits `c` (resuming its producer: `EndTxn`), blocking the thread
    /// until the coordinator answers, the call made again after each
    /// `max_block` up to `commit_retries` times (then the task fails, the
    /// fault's doing); the answer takes effect as of when it comes
    /// ([`TxLog::commit_as_of`]) and is settled then ([`settle`]).
    fn commit(&mut self, c: &Committable, ctx: &mut Context) {
        if self.broken {
            return;
        }
        ctx.store.log.tick(ctx.now);
        let sent = self.thread(ctx);
        let calls = self.spec.commit_retries.saturating_add(1);
        let (block, cfg) = (self.spec.max_block, &self.spec.producer);
        let at = match (ctx.store.log).coordinator_call(sent, block, calls, cfg) {
            Call::Answered { at, timeouts } => {
                ctx.store.stats.log_commits_retried += u64::from(timeouts);
                if timeouts > 0 && ctx.mutant(Mutant::CommitTimeoutDropped) {
                    // Mutant: the committable whose commit threw a
                    // retriable error is dropped, its transaction left open.
                    self.wait(sent, sent.plus(block), ctx);
                    return;
                }
                at
            }
            Call::GaveUp { at } => {
                ctx.store.stats.log_commits_retried += u64::from(calls - 1);
                self.wait(sent, at, ctx);
                self.broken = true;
                let why = format!(
                    "the commit of transaction {} (checkpoint {}) failed after {calls} call(s): the transaction coordinator did not answer within max_block ({block}) of any",
                    c.transactional_id, c.checkpoint
                );
                ctx.fail_at(at, why, true);
                return;
            }
        };
        self.wait(sent, at, ctx);
        let (client, timeout) = (self.me(ctx), self.spec.timeout);
        let result = match at > ctx.now {
            true => (ctx.store.log).commit_as_of(&c.transactional_id, c.producer, at),
            false => (ctx.store.log).end_txn(&c.transactional_id, c.producer, true),
        };
        let answer = CommitAnswer {
            client,
            committable: c.clone(),
            timeout,
            at,
            result,
        };
        if let Some(why) = ctx.store.settle_commit(answer) {
            match at > ctx.now {
                true => ctx.fail_at(at, why, false),
                false => ctx.fail(why),
            }
        }
    }

    /// Pooling: the ids no pending committable, no current transaction
    /// and no listed snapshot hold go back to the pool.
    fn release(&mut self) {
        let busy: BTreeSet<&String> = (self.pending.iter().map(|c| &c.transactional_id))
            .chain(self.current.iter().map(|c| &c.id))
            .chain(self.listed.values().flatten())
            .chain(self.free.iter())
            .collect();
        let mut back: Vec<String> = (self.producers.keys())
            .filter(|id| !busy.contains(id) && self.reusable(id))
            .cloned()
            .collect();
        back.sort();
        back.reverse();
        self.free.extend(back);
    }

    fn commit_up_to(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        let due: Vec<Committable> = (self.pending.iter())
            .filter(|c| c.checkpoint <= checkpoint)
            .cloned()
            .collect();
        self.pending.retain(|c| c.checkpoint > checkpoint);
        for c in &due {
            self.commit(c, ctx);
        }
    }
}

/// What the answer to a commit comes to.
#[derive(Clone, Debug)]
pub enum Settled {
    Committed,
    /// Committed before: a restore commits again what was committed
    /// before the failure.
    Again,
    /// Refused because the broker ended the transaction or a newer
    /// producer fenced it: its records are lost (`KafkaCommitter`'s
    /// `signalFailedWithKnownReason`).
    Lost(LostCommit),
    /// Refused otherwise: the task fails (`signalFailedWithUnknownReason`).
    Failed(String),
}

/// The answer to a commit, as `KafkaCommitter` takes it.
pub fn settle(log: &TxLog, a: &CommitAnswer) -> Settled {
    let c = &a.committable;
    let error = match &a.result {
        Ok(()) => return Settled::Committed,
        Err(LogError::InvalidTxnState(TxnStatus::CompleteCommit)) => return Settled::Again,
        Err(e @ LogError::ProducerFenced { .. })
        | Err(e @ LogError::InvalidTxnState(TxnStatus::CompleteAbort)) => e,
        Err(e) => {
            return Settled::Failed(format!(
                "the commit of transaction {} (checkpoint {}) failed: {e}",
                c.transactional_id, c.checkpoint
            ))
        }
    };
    let aborted = match log.status(&c.transactional_id) {
        Some((_, _, Some(AbortCause::TimedOut))) => (log.timed_out.iter().rev())
            .find(|(id, p, _)| *id == c.transactional_id && p.id == c.producer.id)
            .map(|&(_, _, at)| (AbortCause::TimedOut, at)),
        Some((_, _, Some(cause))) => Some((cause, a.at)),
        _ => None,
    };
    Settled::Lost(LostCommit {
        sink: a.client.operator,
        subtask: a.client.subtask,
        committable: c.clone(),
        at: a.at,
        aborted,
        timeout: a.timeout,
        error: error.to_string(),
    })
}

/// The subtask and index of a pooled id's tail `subtask-n`.
fn pooled_index(tail: &str) -> Option<(u32, u32)> {
    let (subtask, n) = tail.split_once('-')?;
    Some((subtask.parse().ok()?, n.parse().ok()?))
}

impl Operator for LogSink {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        self.start(None, &[], ctx);
        if self.broken {
            return;
        }
        if ctx.store.log.has_errors() {
            self.check_async(ctx);
        }
        self.buffer.push(record);
        if self.buffer.len() >= self.spec.batch.max(1) as usize {
            self.flush(ctx);
        }
    }

    fn end_of_input(&mut self, ctx: &mut Context) {
        self.start(None, &[], ctx);
        self.flush_and_wait(ctx);
    }

    fn snapshot(&mut self, checkpoint: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.start(None, &[], ctx);
        if self.spec.delivery != Delivery::None {
            self.flush_and_wait(ctx);
        }
        if let Some(c) = self.current.take() {
            if c.records > 0 || ctx.mutant(Mutant::EmptyTransactionCommitted) {
                self.pending.push(Committable {
                    checkpoint,
                    transactional_id: c.id,
                    producer: c.producer,
                    records: c.records,
                    opened_at: c.opened_at,
                });
            } else if self.spec.naming == TxnNaming::Pooling {
                // An empty transaction's producer goes straight back.
                self.free.push(c.id);
            }
            self.next_transaction(checkpoint + 1, ctx);
        }
        if self.spec.naming == TxnNaming::Pooling {
            let ids = self.pending.iter().map(|c| c.transactional_id.clone());
            self.listed.insert(checkpoint, ids.collect());
        }
        let state = LogSinkState {
            checkpoint,
            pending: self.pending.clone(),
            created: self.created,
            known: (self.producers.keys().chain(&self.free).cloned())
                .collect::<BTreeSet<String>>()
                .into_iter()
                .collect(),
            producers: (self.producers.iter())
                .map(|(id, &p)| (id.clone(), p))
                .collect(),
        };
        let own = Ownership {
            held: Vec::new(),
            ..self.own.clone()
        };
        encode_state(&state, &own, &Ownership::own(ctx.subtask, ctx.parallelism))
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        let (state, own) = match state.is_empty() {
            true => (LogSinkState::default(), None),
            false => decode_state(state)?,
        };
        if let Some(own) = own {
            self.own = own;
        }
        let restored = ctx.restored.or(Some(state.checkpoint).filter(|&c| c > 0));
        self.created = state.created;
        ctx.store.log.tick(ctx.now);
        // The committer first (operators initialise from the chain's end):
        // the restored committables are committed.
        for c in &state.pending {
            self.commit(c, ctx);
        }
        if self.spec.naming == TxnNaming::Pooling {
            // Until a later checkpoint is known complete, a second restore
            // of this one commits them again (or another subtask does, the
            // held ones): their ids stay out of the pool.
            let ids = state.pending.iter().map(|c| c.transactional_id.clone());
            let ids = ids.chain(self.own.held.iter().cloned());
            self.listed.insert(restored.unwrap_or(0), ids.collect());
            if !state.producers.is_empty() && ctx.mutant(Mutant::RestoredProducerNotFenced) {
                // Mutant: the pool's producers resumed from the state, not
                // initialised: nothing fences the failed attempt's.
                self.producers.extend(state.producers.iter().cloned());
            }
        }
        self.start(restored, &state.known, ctx);
        if self.spec.naming == TxnNaming::Pooling {
            let pending: Vec<&String> = state.pending.iter().map(|c| &c.transactional_id).collect();
            let idle: Vec<String> = (state.known.iter())
                .filter(|id| {
                    !pending.contains(id)
                        && !self.own.held.contains(id)
                        && !self.producers.contains_key(*id)
                        && self.reusable(id)
                })
                .cloned()
                .collect();
            self.free.extend(idle);
            self.release();
        }
        Ok(())
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        self.listed.retain(|&c, _| c >= checkpoint);
        self.commit_up_to(checkpoint, ctx);
        if self.spec.naming == TxnNaming::Pooling {
            self.release();
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const PooledAbortKnownOnly: Mutant = Mutant::declare(&MutantInfo {
            name: "pooled-abort-known-only",
            part: "log sink",
            what: "with pooled transactional ids, the restore aborts only the ongoing transactions of ids its restored state knew: an id the failed attempt added to the pool after the checkpoint keeps its transaction open, and every read_committed reader of its partitions stalls at it until the broker's timeout",
            modelled_on: "FLINK-40626 (pooled transactional ids: a newer transaction left open after recovery, read_committed consumers stall)",
            caught_by: "open-transactions",
            applies: &[("log-pooling", "aligned")],
        });
        pub const RestoredProducerNotFenced: Mutant = Mutant::declare(&MutantInfo {
            name: "restored-producer-not-fenced",
            part: "log sink",
            what: "a restored writer with pooled transactional ids resumes its pool's producers from its state (producer id and epoch) instead of initialising them: the failed attempt's open transaction on such an id is neither aborted nor fenced, and the new attempt's records join it, so the failed attempt's records after the checkpoint are committed with the replayed ones",
            modelled_on: "Kafka's fencing contract: a new producer instance must call initTransactions (InitProducerId bumps the epoch and aborts what the id had open); Flink's FlinkKafkaInternalProducer.resumeTransaction sets producer id and epoch only to commit a recovered transaction, never to write",
            caught_by: "open-transactions",
            applies: &[("log-pooling", "aligned")],
        });
        pub const LogLingeringNotAborted: Mutant = Mutant::declare(&MutantInfo {
            name: "log-lingering-not-aborted",
            part: "log sink",
            what: "a restored exactly-once log sink does not abort the transactions earlier attempts left open (no TransactionAborter probe, no listing): those its new producers do not happen to initialise stay open, and every read_committed reader of their partitions stalls until the broker's timeout",
            modelled_on: "KafkaWriter's abortLingeringTransactions at initialisation (TransactionAborter with the incrementing naming, ListTransactions with pooling), without which Flink's Kafka sink documentation says read_committed consumers block",
            caught_by: "open-transactions",
            applies: &[("log-pooling", "aligned")],
        });
        pub const LogFlushSkipsRetries: Mutant = Mutant::declare(&MutantInfo {
            name: "log-flush-skips-retries",
            part: "log sink",
            what: "the writer's flush before a snapshot returns while the producer still retries requests a broker outage failed: at-least-once, the checkpoint completes although those records are in no partition, and when they expire the error fails the task at a later write, whose restore no longer replays them",
            modelled_on: "FLINK-33545 (KafkaSink at-least-once loses data during a broker outage: records still retrying in the producer after the pre-barrier flush are lost when the retries fail, the checkpoint having completed)",
            caught_by: "exactly-once-output",
            applies: &[("log-broker", "aligned")],
        });
        pub const LogAsyncErrorSwallowed: Mutant = Mutant::declare(&MutantInfo {
            name: "log-async-error-swallowed",
            part: "log sink",
            what: "the error a producer callback got (a request expired during a broker outage) is cleared by the mail meant to rethrow it, without failing the task: the records are dropped and nothing replays them",
            modelled_on: "FLINK-35749 (Kafka sink loses data while the cluster is unavailable for a while: WriterCallback submitted checkAsyncException with mailboxExecutor.submit, whose future swallowed the exception after the field was cleared)",
            caught_by: "exactly-once-output",
            applies: &[("log-broker", "aligned")],
        });
        pub const CommitTimeoutDropped: Mutant = Mutant::declare(&MutantInfo {
            name: "commit-timeout-dropped",
            part: "log sink",
            what: "a commit the transaction coordinator does not answer within max_block (it throws a retriable TimeoutException) is dropped instead of made again: its transaction stays open until the broker's timeout aborts it, and the checkpoint's records are lost",
            modelled_on: "FLINK-23896 (the Sink committers did not retry failed committables: KafkaCommitter's retriable commit failures were dropped, a missing piece to guarantee no data loss; committables are retried since)",
            caught_by: "exactly-once-output",
            applies: &[("log-coordinator", "aligned")],
        });
        pub const RemovedSubtasksNotAborted: Mutant = Mutant::declare(&MutantInfo {
            name: "removed-subtasks-not-aborted",
            part: "log sink",
            what: "a log sink restored at a lower parallelism aborts only the lingering transactions of its own subtask's ids: with the incrementing naming it does not probe subtask + k × parallelism, with pooled ids it ignores the ownership its restored writer state hands it; what the removed subtasks left open stays open, and every read_committed reader of their partitions stalls until the broker's timeout",
            modelled_on: "KafkaWriter's abortLingeringTransactions after a downscale: TransactionAborter probes the ids of subtask + k × parallelism (incrementing naming), and TransactionOwnership.EXPLICIT_BY_WRITER_STATE gives a removed subtask's ids to the subtask that restores its writer state (pooled naming)",
            caught_by: "open-transactions",
            applies: &[("log-rescale", "aligned")],
        });
        pub const TransactionalIdGaps: Mutant = Mutant::declare(&MutantInfo {
            name: "transactional-id-gaps",
            part: "log sink",
            what: "the incrementing naming initialises only the id of the checkpoint it begins a transaction for, not those of checkpoints the sink never snapshotted: the restore's abort stops at the first id never used, and a transaction behind that gap stays open",
            modelled_on: "KafkaWriter.getTransactionalProducer, which fills the gaps of aborted checkpoints with initialised (empty) transactions so that TransactionAborter's probe, which stops at the first unused id, reaches every lingering one",
            caught_by: "open-transactions",
            applies: &[("log", "aligned")],
        });
        pub const EmptyTransactionCommitted: Mutant = Mutant::declare(&MutantInfo {
            name: "empty-transaction-committed",
            part: "log sink",
            what: "the writer hands over a committable for a transaction that holds no record: committing it, the broker answers INVALID_TXN_STATE (no partition was added), the committer fails the task, and every restore commits it again",
            modelled_on: "FLINK-31363 (KafkaSink failed to commit empty transactions: InvalidTxnStateException, the job restarting; since then only transactions with records become committables)",
            caught_by: "liveness",
            applies: &[("log", "aligned")],
        });
    }
}
