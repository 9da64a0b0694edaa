//! The operator interface and the built-in operators.
//!
//! Operators are real code: the simulator calls them for every record, asks
//! them for snapshots at barriers, restores them on recovery, and tells them
//! when checkpoints complete or abort. The [`Operator`] trait is public so
//! users can run their own operators under the simulator (see
//! `tests/user_operator.rs`). An operator never reads a clock or a random
//! source of its own: `Context::now` is virtual time, and its input is
//! whatever the simulator hands it.

use super::flip27::OperatorEvent;
use super::record::{Lineage, Payload, Record};
use super::store::{ExternalStore, TxnId};
use super::workload::Workload;
use crate::engine::SimTime;
use crate::mutant::{Mutant, Mutants};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::protocol::CheckpointId;

/// What an operator sees of the world while it runs.
pub struct Context<'a> {
    /// This subtask's index and its operator's parallelism.
    pub subtask: u32,
    pub parallelism: u32,
    /// Index of the operator in the scenario.
    pub operator: u32,
    pub max_parallelism: u32,
    /// How many times the job has been restarted (0 for the first run).
    pub attempt: u32,
    pub now: SimTime,
    /// In `restore`: the checkpoint (or savepoint) being restored, when
    /// known (Flink's `getRestoredCheckpointId`); it completed. Under the
    /// uncoordinated and communication-induced families, this task's own
    /// checkpoint in the recovery line (`None`: rolled back to its start).
    pub restored: Option<CheckpointId>,
    /// The operator's current event-time watermark (its timer service's,
    /// Flink's `currentWatermark`): [`crate::model::event_time::MIN_WATERMARK`]
    /// until one arrives, and again after a restore (no checkpoint holds it).
    pub watermark: i64,
    /// The external system sinks write to; it survives crashes.
    pub store: &'a mut ExternalStore,
    pub(crate) out: &'a mut Vec<Record>,
    /// Records for the late-data side output (`emit_late`).
    pub(crate) late: &'a mut Vec<Record>,
    /// The timers that fired during this call (for the `timers` check).
    pub(crate) fired: &'a mut Vec<crate::model::timers::FiredTimer>,
    pub(crate) mutants: Mutants,
}

impl Context<'_> {
    /// Emits a record downstream.
    #[inline]
    pub fn emit(&mut self, record: Record) {
        self.out.push(record);
    }

    /// Emits a record into the late-data side output (Flink's
    /// `sideOutputLateData` output tag): it leaves on the operator's edges
    /// marked `side_output = "late"`, and is dropped (and counted) without
    /// one. Only while processing a record (the runtime routes it right
    /// after the call).
    #[inline]
    pub fn emit_late(&mut self, record: Record) {
        self.late.push(record);
    }

    /// A payload holding `value`, serialised with postcard, for a record to
    /// carry (`Record { payload, ..r }`). Equal values give equal payloads,
    /// in the simulation and the oracle alike; keep hash-ordered containers
    /// out of `T`, the bytes must be the same on every run.
    pub fn payload<T: serde::Serialize>(&mut self, value: &T) -> Payload {
        let bytes = postcard::to_stdvec(value)
            .expect("a payload type serialises with postcard (no sequence of unknown length)");
        self.store.payloads.put(bytes)
    }

    /// The value a record's payload holds: `None` for a record without
    /// one, or whose payload is not a `T`.
    pub fn read<T: serde::de::DeserializeOwned>(&self, payload: Payload) -> Option<T> {
        let bytes = self.store.payloads.get(payload)?;
        postcard::from_bytes(bytes).ok()
    }

    /// Whether a deliberate bug is switched on (see `crate::mutant`). Call
    /// it where the broken path is taken: a `true` answer records that the
    /// mutant took effect in this run.
    #[inline]
    pub(crate) fn mutant(&self, m: Mutant) -> bool {
        let on = self.mutants.has(m);
        if on {
            crate::mutant::fired(m);
        }
        on
    }

    /// A timer of this operator fired (`onTimer` runs now).
    pub fn timer_fired(&mut self, key: u64, domain: crate::model::timers::Domain, time: i64) {
        self.fired.push(crate::model::timers::FiredTimer {
            operator: self.operator,
            key,
            domain,
            time,
        });
    }

    /// Processing time in milliseconds (Flink's
    /// `currentProcessingTime`): the simulated clock.
    pub fn processing_time(&self) -> i64 {
        i64::try_from(self.now.nanos() / 1_000_000).unwrap_or(i64::MAX)
    }
}

/// What a source did when polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourcePoll {
    /// Emitted this many records (at least one).
    Emitted(usize),
    /// Nothing to read now; the next record is there at this time (a
    /// partition with a rate, `records_per_second`). Polled again then.
    IdleUntil(SimTime),
    /// No more records, ever: the source has reached the end of its input.
    Exhausted,
    /// Nothing to read now, more may come: a FLIP-27 reader waiting for a
    /// split. It is polled again when an operator event reaches it.
    Idle,
    /// This operator is not a source.
    NotASource,
}

/// A stream operator. One instance runs per subtask, single-threaded.
pub trait Operator {
    /// Processes one input record, emitting any number of records.
    fn process(&mut self, record: Record, ctx: &mut Context);

    /// The operator's input watermark advanced to `watermark` (Flink's
    /// `processWatermark`; `ctx.watermark` already holds it): event-time
    /// timers up to it fire here, emitting what they emit. The task then
    /// forwards the watermark downstream itself; an operator never emits
    /// one.
    fn process_watermark(&mut self, _watermark: i64, _ctx: &mut Context) {}

    /// The task's processing-time service calls at `time` (ms): the
    /// operator's processing-time timers due by then fire (a mail of the
    /// task's thread, `InternalTimerServiceImpl.onProcessingTime`).
    fn on_processing_time(&mut self, _time: i64, _ctx: &mut Context) {}

    /// The earliest processing-time timer the operator holds (ms), which
    /// the task's processing-time service is armed for.
    fn next_processing_timer(&self) -> Option<i64> {
        None
    }

    /// Whether the operator reads processing time (`Context::now`) to
    /// decide what it does; its schedule then records the time of each
    /// step, which the oracle replays.
    fn uses_processing_time(&self) -> bool {
        false
    }

    /// How many timers the operator holds (coverage: counted after a
    /// restore).
    fn timers_held(&self) -> u64 {
        0
    }

    /// What it still holds that nothing will commit or hand on once its
    /// task exits (a committer's committables, a global committer's
    /// checkpoints not fully received), in words for the finishing check;
    /// `None` when nothing. Transactions `store` has committed already do
    /// not count.
    fn held_at_exit(&self, _store: &ExternalStore) -> Option<String> {
        None
    }

    /// Processes one record that came from operator `from` (an operator
    /// with several kinds of input tells them apart here, as Flink's
    /// two-input operators have one method per input).
    fn process_from(&mut self, _from: u32, record: Record, ctx: &mut Context) {
        self.process(record, ctx);
    }

    /// Sources only: emit up to `max_records` records.
    fn poll_source(&mut self, _max_records: usize, _ctx: &mut Context) -> SourcePoll {
        SourcePoll::NotASource
    }

    /// All inputs have ended; flush anything buffered.
    fn end_of_input(&mut self, _ctx: &mut Context) {}

    /// An event from the operator's coordinator reached this subtask (a
    /// FLIP-27 reader's split assignment, `model::flip27`).
    fn handle_operator_event(&mut self, _event: OperatorEvent, _ctx: &mut Context) {}

    /// The events this subtask sends its operator's coordinator, taken
    /// after each call of an operator that has one.
    fn take_operator_events(&mut self) -> Vec<OperatorEvent> {
        Vec::new()
    }

    /// A FLIP-27 reader stops reading the splits in `pause` and reads
    /// those in `resume` again (Flink's `SourceReader.pauseOrResumeSplits`,
    /// for watermark alignment); a paused split keeps its place and its
    /// offset. A reader that cannot pause splits ignores it.
    fn pause_or_resume_splits(&mut self, _pause: &[u32], _resume: &[u32]) {}

    /// Called at the barrier, before it is forwarded and before any
    /// operator of the task snapshots (Flink's `prepareSnapshotPreBarrier`):
    /// what it emits travels ahead of the barrier. A Sink V2 writer hands
    /// over its committables here.
    fn prepare_snapshot_pre_barrier(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) {}

    /// Takes a snapshot of the operator's state for `checkpoint`, as bytes.
    /// Called after the barrier was forwarded (what it emits follows the
    /// barrier), after all records before it were processed.
    fn snapshot(&mut self, checkpoint: CheckpointId, ctx: &mut Context) -> Vec<u8>;

    /// Restores from bytes produced by `snapshot`. Called once, on a fresh
    /// instance, before any record, when the job restarts from a checkpoint.
    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String>;

    /// The checkpoint completed everywhere (best effort: may be skipped, and
    /// then a later id covers it).
    fn notify_checkpoint_complete(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) {}

    /// The checkpoint was aborted.
    fn notify_checkpoint_aborted(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) {}

    /// Keyed state as `key → value`, for the state-equivalence checker.
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        BTreeMap::new()
    }

    /// Whether `snapshot` only reads the operator: it emits nothing, and
    /// nothing the operator does later depends on it having run. The oracle
    /// (a failure-free execution, which never restores a non-source
    /// operator) then skips it. The default, false, is always safe.
    fn snapshot_is_read_only(&self) -> bool {
        false
    }

    /// Whether this operator's output, as a multiset, is independent of the
    /// order its input arrives in (true for stateless operators and counts,
    /// false for running sums). Decides whether the output checker compares
    /// values as well as lineage.
    fn order_insensitive_output(&self) -> bool {
        true
    }

    /// Whether every record this operator emits carries the lineage of the
    /// input record it was processing when it emitted it (maps, filters,
    /// running counts and sums: a duplicate input gives outputs with the
    /// duplicate's lineage); false when which input's lineage an output
    /// carries depends on arrival order (a count window's closing record,
    /// a dedup's first record of a pair). Decides whether a run that may
    /// duplicate can be judged by lineage below this operator. The
    /// default follows [`Operator::order_insensitive_output`]: output that
    /// does not depend on order cannot move lineages either.
    fn lineage_follows_input(&self) -> bool {
        self.order_insensitive_output()
    }
}

/// Builds operator instances for subtasks; the simulator calls it at start
/// and at every restart, and the oracle calls it too.
pub trait OperatorFactory {
    fn create(&self, operator: u32, subtask: u32) -> Box<dyn Operator>;
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("operator state serialises")
}

pub(crate) fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("cannot decode {what} state: {e}"))
}

// ---------------------------------------------------------------- source

/// A replayable partitioned log (Kafka-like). The records of every partition
/// are fixed by the seed before the run; the source's only state is its
/// offset per assigned partition.
pub struct Source {
    workload: Arc<Workload>,
    /// Global partition index and next offset, per assigned partition.
    offsets: Vec<(u32, u64)>,
    next: usize,
}

#[derive(Serialize, Deserialize)]
struct SourceState {
    offsets: Vec<(u32, u64)>,
}

/// The `(partition, offset)` pairs in a built-in source's state (`None` if
/// the bytes are not a source's state).
pub fn source_offsets(state: &[u8]) -> Option<Vec<(u32, u64)>> {
    postcard::from_bytes::<SourceState>(state)
        .ok()
        .map(|s| s.offsets)
}

// ---------------------------------------------------------------- layouts
//
// The built-in state layouts, for savepoints and rescaling
// (`crate::savepoint`): a source's offsets are operator state split by
// partition, keyed state moves by key group, a 2PC sink's pending
// transactions are list state split round-robin.

/// A source's state holding exactly these offsets.
pub fn source_state(offsets: Vec<(u32, u64)>) -> Vec<u8> {
    encode(&SourceState { offsets })
}

/// Keyed state of one key group: `(key group, sorted (key, value) entries)`.
pub type KeyGroupState = (u32, Vec<(u64, i64)>);

/// Keyed state as key groups (`None` if not keyed state).
pub fn keyed_groups(state: &[u8]) -> Option<Vec<KeyGroupState>> {
    postcard::from_bytes::<KeyedSnapshot>(state)
        .ok()
        .map(|s| s.key_groups)
}

/// Keyed state holding these key groups (sorted by key group).
pub fn keyed_state(mut key_groups: Vec<KeyGroupState>) -> Vec<u8> {
    key_groups.sort_unstable_by_key(|(kg, _)| *kg);
    encode(&KeyedSnapshot { key_groups })
}

/// One 2PC sink state merging several (pending transactions concatenated,
/// the largest sequence counter); an error names the state that does not
/// decode.
pub fn merge_sink_states(states: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut merged = TwoPhaseState {
        current: None,
        pending: Vec::new(),
        next_seq: 0,
    };
    for (i, bytes) in states.iter().enumerate() {
        let s: TwoPhaseState =
            decode(bytes, "sink-2pc").map_err(|e| format!("subtask {i}: {e}"))?;
        merged.pending.extend(s.pending);
        merged.next_seq = merged.next_seq.max(s.next_seq);
    }
    merged.pending.sort_unstable();
    Ok(encode(&merged))
}

/// The transactions a 2PC sink state names: its open one, then its
/// pending ones (an error if the bytes are not such state).
pub fn sink_txns(state: &[u8]) -> Result<Vec<TxnId>, String> {
    let s: TwoPhaseState = decode(state, "sink-2pc")?;
    Ok(s.current
        .into_iter()
        .chain(s.pending.into_iter().map(|(_, t)| t))
        .collect())
}

/// A 2PC sink state's open transaction, pending list and sequence counter.
pub type SinkStateParts = (Option<TxnId>, Vec<(CheckpointId, TxnId)>, u64);

/// A 2PC sink state's parts: its open transaction, its pending
/// `(checkpoint, transaction)` list and its sequence counter (the next
/// transaction's number), or why the bytes are not such state.
pub fn sink_state_parts(state: &[u8]) -> Result<SinkStateParts, String> {
    let s: TwoPhaseState = decode(state, "sink-2pc")?;
    Ok((s.current, s.pending, s.next_seq))
}

/// The transactions a 2PC sink state lists as pending (pre-committed).
pub fn sink_pending(state: &[u8]) -> Option<Vec<(CheckpointId, TxnId)>> {
    postcard::from_bytes::<TwoPhaseState>(state)
        .ok()
        .map(|s| s.pending)
}

/// What [`poll_round_robin`] did: how many records it emitted (0 with no
/// `wait` and nothing `paused`: every partition is read to its end); of
/// the partitions it had to skip for their rate, when the first next
/// record is there; whether a paused partition has records left.
pub(crate) struct Polled {
    pub emitted: usize,
    pub wait: Option<SimTime>,
    pub paused: bool,
}

/// Emits up to `max_records` records from the partitions (or splits) in
/// `offsets`, one record of each in turn from `next` on, advancing their
/// offsets and skipping partitions at their end, in `paused`, or whose
/// next record is not there yet (a rate).
pub(crate) fn poll_round_robin(
    workload: &Workload,
    offsets: &mut [(u32, u64)],
    paused: &[u32],
    next: &mut usize,
    max_records: usize,
    ctx: &mut Context,
) -> Polled {
    let mut held = false;
    let mut emitted = 0;
    let n = offsets.len();
    let mut idle = 0;
    let mut wait: Option<SimTime> = None;
    while emitted < max_records && idle < n {
        let (partition, offset) = &mut offsets[*next];
        *next += 1;
        if *next == n {
            *next = 0;
        }
        let record = workload.partition(*partition).get(*offset as usize);
        if record.is_some() && paused.contains(partition) {
            held = true;
            idle += 1;
            continue;
        }
        let ready = match record {
            Some(_) => workload.ready_at(*partition, *offset),
            None => SimTime::ZERO,
        };
        if ready > ctx.now {
            wait = Some(wait.map_or(ready, |w| w.min(ready)));
            idle += 1;
            continue;
        }
        match record {
            Some(&(key, value)) => {
                let payload = match workload.carries_payloads(*partition) {
                    true => ctx.payload(&(*partition, *offset)),
                    false => Payload::NONE,
                };
                ctx.emit(Record {
                    key,
                    value,
                    lineage: Lineage {
                        partition: *partition,
                        offset: *offset,
                    },
                    emitted_at: ctx.now,
                    timestamp: workload.timestamp(*partition, *offset),
                    payload,
                });
                *offset += 1;
                emitted += 1;
                idle = 0;
            }
            None => idle += 1,
        }
    }
    Polled {
        emitted,
        wait,
        paused: held,
    }
}

impl Source {
    pub fn new(workload: Arc<Workload>, partitions: Vec<u32>) -> Source {
        Source {
            workload,
            offsets: partitions.into_iter().map(|p| (p, 0)).collect(),
            next: 0,
        }
    }

    pub fn offsets(&self) -> &[(u32, u64)] {
        &self.offsets
    }
}

impl Operator for Source {
    fn process(&mut self, _record: Record, _ctx: &mut Context) {
        unreachable!("a source has no inputs")
    }

    fn poll_source(&mut self, max_records: usize, ctx: &mut Context) -> SourcePoll {
        let polled = poll_round_robin(
            &self.workload,
            &mut self.offsets,
            &[],
            &mut self.next,
            max_records,
            ctx,
        );
        match (polled.emitted, polled.wait) {
            (0, Some(at)) => SourcePoll::IdleUntil(at),
            (0, None) => SourcePoll::Exhausted,
            (emitted, _) => SourcePoll::Emitted(emitted),
        }
    }

    fn snapshot(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) -> Vec<u8> {
        encode(&SourceState {
            offsets: self.offsets.clone(),
        })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        let state: SourceState = decode(state, "source")?;
        let skip = u64::from(ctx.mutant(Mutant::SourceOffsetOffByOne));
        for (partition, offset) in state.offsets {
            let offset = offset + skip;
            match self.offsets.iter_mut().find(|(p, _)| *p == partition) {
                Some(slot) => slot.1 = offset,
                None => {
                    return Err(format!(
                        "restored offset for unassigned partition {partition}"
                    ))
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- stateless

pub use super::kinds::{Filter, FlatMap, Map};

// ---------------------------------------------------------------- keyed

use super::keyed::{KeyedSnapshot, KeyedState};
pub use super::kinds::KeyedSum;

/// Per-key running count; emits `(key, count)`.
#[derive(Default)]
pub struct KeyedCount {
    counts: KeyedState,
}

impl Operator for KeyedCount {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let c = self.counts.entry(record.key, ctx.max_parallelism);
        *c += 1;
        ctx.emit(Record {
            value: *c,
            ..record
        });
    }
    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.counts
            .snapshot(ctx.mutants.has(Mutant::KeyedSnapshotStaleGroup))
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.counts.restore(state, "keyed-count")
    }
    fn snapshot_is_read_only(&self) -> bool {
        true
    }
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.counts.to_map()
    }
}

// ---------------------------------------------------------------- sinks

/// Two-phase-commit sink (Flink's `TwoPhaseCommitSinkFunction`): writes go
/// into an open transaction; at the barrier the transaction is pre-committed
/// and remembered under the checkpoint id; on notify-complete every pending
/// transaction up to that id is committed; on restore the pending ones listed
/// in the state are re-committed (idempotently) and the open one aborted.
#[derive(Default)]
pub struct TwoPhaseCommitSink {
    current: Option<TxnId>,
    pending: Vec<(CheckpointId, TxnId)>,
    next_seq: u64,
}

#[derive(Serialize, Deserialize)]
struct TwoPhaseState {
    current: Option<TxnId>,
    pending: Vec<(CheckpointId, TxnId)>,
    next_seq: u64,
}

/// The open transaction `current` of a transactional sink subtask, or a
/// new one (numbered by `next_seq`) begun in the store.
pub(crate) fn open_txn(
    current: &mut Option<TxnId>,
    next_seq: &mut u64,
    ctx: &mut Context,
) -> TxnId {
    if let Some(t) = *current {
        return t;
    }
    let id = TxnId {
        sink: ctx.operator,
        subtask: ctx.subtask,
        attempt: ctx.attempt,
        seq: *next_seq,
    };
    *next_seq += 1;
    ctx.store.begin(id, ctx.now);
    *current = Some(id);
    id
}

impl TwoPhaseCommitSink {
    fn commit_up_to(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        let now = ctx.now;
        let behind = self.pending.iter().any(|&(cp, _)| cp == checkpoint)
            && ctx.mutant(Mutant::SinkCommitsOneBehind);
        self.pending.retain(|&(cp, txn)| {
            if cp < checkpoint || (cp == checkpoint && !behind) {
                ctx.store.commit(txn, now);
                false
            } else {
                true
            }
        });
    }
}

impl Operator for TwoPhaseCommitSink {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let txn = open_txn(&mut self.current, &mut self.next_seq, ctx);
        ctx.store.write(txn, record);
    }

    fn snapshot(&mut self, checkpoint: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        if let Some(txn) = self.current.take() {
            ctx.store.pre_commit(txn);
            if ctx.mutant(Mutant::SinkCommitOnBarrier) {
                ctx.store.commit(txn, ctx.now);
            } else {
                self.pending.push((checkpoint, txn));
            }
        }
        encode(&TwoPhaseState {
            current: None,
            pending: self.pending.clone(),
            next_seq: self.next_seq,
        })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        let state: TwoPhaseState = decode(state, "sink-2pc")?;
        self.next_seq = state.next_seq;
        if let Some(open) = state.current {
            ctx.store.abort(open, ctx.now);
        }
        if !state.pending.is_empty() && ctx.mutant(Mutant::RecoveredCommitDeferred) {
            // Mutant: the recovered transactions wait for the next notification.
            self.pending = state.pending;
            self.current = None;
            return Ok(());
        }
        let now = ctx.now;
        for (_, txn) in &state.pending {
            if ctx.mutant(Mutant::SinkAbortsRecoveredTxns) {
                ctx.store.abort(*txn, now);
            } else {
                ctx.store.commit(*txn, now);
            }
        }
        self.pending.clear();
        self.current = None;
        Ok(())
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        self.commit_up_to(checkpoint, ctx);
    }
}

/// Writes to the store without transactions, in batches: a batch of
/// `batch` records is written when full, and whatever is buffered is
/// flushed before the snapshot is taken (so before the checkpoint is
/// acknowledged) and at end of input. A batch still buffered when the task
/// fails is lost with it, and its records are replayed only if no completed
/// checkpoint covers them: hence the flush at the snapshot. (A write
/// completes at once: the model has no asynchronous requests.) Two sinks:
///
/// - **at-least-once** (Flink's `AsyncSinkWriter`): exactly-once only
///   without failures; duplicates on replay.
/// - **upsert** (Flink's JDBC or Elasticsearch upsert sinks): every record
///   overwrites its key's row of the external table (`key → value`),
///   written in arrival order. Its input comes from a keyed running
///   aggregate through a hash edge, so each key is written by one subtask in
///   the key's order. A replay writes the records after the restored
///   checkpoint again: a row may go back to an older value for a while and
///   writes repeat, but the finished table holds, per key, the last value
///   of the key's exactly-once order.
pub struct DirectSink {
    batch: usize,
    buffer: Vec<Record>,
    upsert: bool,
}

impl DirectSink {
    pub fn at_least_once(batch: u32) -> DirectSink {
        DirectSink {
            batch: batch.max(1) as usize,
            buffer: Vec::new(),
            upsert: false,
        }
    }

    pub fn upsert(batch: u32) -> DirectSink {
        DirectSink {
            upsert: true,
            ..DirectSink::at_least_once(batch)
        }
    }

    fn flush(&mut self, ctx: &mut Context) {
        if self.upsert && self.buffer.len() > 1 && ctx.mutant(Mutant::UpsertBatchReordered) {
            // Mutant: the batch's statements run newest first, so an older
            // value of a key overwrites a newer one of the same batch.
            self.buffer.reverse();
        }
        for r in self.buffer.drain(..) {
            ctx.store.write_direct(ctx.operator, r, ctx.now);
        }
    }
}

impl Operator for DirectSink {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        if self.batch == 1 {
            ctx.store.write_direct(ctx.operator, record, ctx.now);
            return;
        }
        self.buffer.push(record);
        if self.buffer.len() >= self.batch {
            self.flush(ctx);
        }
    }
    fn end_of_input(&mut self, ctx: &mut Context) {
        self.flush(ctx);
    }
    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        if !self.upsert && !self.buffer.is_empty() && ctx.mutant(Mutant::SinkAckWithoutFlush) {
            // Mutant: the open batch stays buffered across the checkpoint.
            return Vec::new();
        }
        self.flush(ctx);
        Vec::new()
    }
    fn restore(&mut self, _: &[u8], _: &mut Context) -> Result<(), String> {
        Ok(())
    }
}

// ---------------------------------------------------------------- keyed bytes

/// Keyed state whose per-key values are an operator's own encoding: one
/// byte string per key group (the encoding of that group's sorted entries),
/// so a restore at another parallelism can still move whole key groups.
pub type KeyGroupBytes = (u32, Vec<u8>);

#[derive(Serialize, Deserialize)]
struct KeyedBytesSnapshot {
    key_groups: Vec<KeyGroupBytes>,
}

/// Keyed state as opaque key groups (`None` if not such state).
pub fn keyed_byte_groups(state: &[u8]) -> Option<Vec<KeyGroupBytes>> {
    postcard::from_bytes::<KeyedBytesSnapshot>(state)
        .ok()
        .map(|s| s.key_groups)
}

/// Keyed state holding these opaque key groups (sorted by key group).
pub fn keyed_byte_state(mut key_groups: Vec<KeyGroupBytes>) -> Vec<u8> {
    key_groups.sort_unstable_by_key(|(kg, _)| *kg);
    encode(&KeyedBytesSnapshot { key_groups })
}

pub use super::kinds::count_window::{count_window_entries, CountWindow};

// ---------------------------------------------------------------- factory

/// Creates the built-in operators a scenario names.
pub struct BuiltinFactory {
    scenario: Arc<Scenario>,
    workload: Arc<Workload>,
}

impl BuiltinFactory {
    pub fn new(scenario: Arc<Scenario>, workload: Arc<Workload>) -> BuiltinFactory {
        BuiltinFactory { scenario, workload }
    }
}

impl OperatorFactory for BuiltinFactory {
    fn create(&self, operator: u32, subtask: u32) -> Box<dyn Operator> {
        let spec = &self.scenario.operators[operator as usize];
        (spec.kind.info().create)(&super::kinds::Setup {
            params: spec.kind.params(),
            subtask,
            parallelism: spec.parallelism,
            operator,
            kind: &spec.kind,
            scenario: &self.scenario,
            workload: &self.workload,
        })
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const SourceOffsetOffByOne: Mutant = Mutant::declare(&MutantInfo {
            name: "source-offset-off-by-one",
            part: "source rewind",
            what: "a restored source resumes one record past its checkpointed offset",
            modelled_on:
                "off-by-one offset bookkeeping in source readers (last-read vs next-to-read offset)",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned")],
        });
        pub const SinkCommitOnBarrier: Mutant = Mutant::declare(&MutantInfo {
            name: "sink-commit-on-barrier",
            part: "2PC sink commit",
            what: "the 2PC sink commits its transaction at the barrier instead of on notify-complete",
            modelled_on: "sinks committing in snapshotState rather than notifyCheckpointComplete (TwoPhaseCommitSinkFunction contract)",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned")],
        });
        pub const SinkAbortsRecoveredTxns: Mutant = Mutant::declare(&MutantInfo {
            name: "sink-aborts-recovered-txns",
            part: "2PC sink recovery",
            what: "on restore the 2PC sink aborts the pre-committed transactions its state lists instead of committing them",
            modelled_on: "TwoPhaseCommitSinkFunction.recoverAndCommit contract violations (Kafka transactional-id reuse aborting pending transactions)",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned"), ("alignment-crash", "aligned")],
        });
        pub const SinkCommitsOneBehind: Mutant = Mutant::declare(&MutantInfo {
            name: "sink-commits-one-behind",
            part: "2PC sink commit",
            what: "on checkpoint-complete for N the 2PC sink commits only the transactions of checkpoints before N, so every commit comes one checkpoint late",
            modelled_on: "off-by-one commit ranges in two-phase-commit sinks (committing pendingCommitTransactions headMap(N) instead of up to N): output delayed by a checkpoint, lost when the job ends without a final one",
            caught_by: "late-commit",
            applies: &[("wordcount", "aligned")],
        });
        pub const RecoveredCommitDeferred: Mutant = Mutant::declare(&MutantInfo {
            name: "recovered-commit-deferred",
            part: "2PC sink recovery",
            what: "on restore the 2PC sink keeps the pre-committed transactions its state lists and commits them with the next completed checkpoint instead of at the restore",
            modelled_on: "recovered committables committed only on the next notifyCheckpointComplete (recoverAndCommit skipped, the pending list carried over): the restored checkpoint's output waits for another checkpoint, and is lost if none completes",
            caught_by: "late-commit",
            applies: &[("wordcount", "aligned"), ("alignment-crash", "aligned")],
        });
        pub const SinkAckWithoutFlush: Mutant = Mutant::declare(&MutantInfo {
            name: "sink-ack-without-flush",
            part: "buffering sink",
            what: "the batching at-least-once sink acknowledges a checkpoint without flushing its open batch, whose records are lost in a failover",
            modelled_on: "async sink writers that snapshot without flushing in-flight requests (AsyncSinkWriter.flush(true) skipped in prepareCommit)",
            caught_by: "exactly-once-output",
            applies: &[("batching", "aligned")],
        });
        pub const WindowNoFlushAtEnd: Mutant = Mutant::declare(&MutantInfo {
            name: "window-no-flush-at-end",
            part: "buffering operator",
            what: "the count window does not emit its open windows at end of input, so the last records of each key never reach the sink",
            modelled_on: "operators that lose buffered records when the input ends (windows and buffers not flushed before FLIP-147's endInput/finish handling)",
            caught_by: "exactly-once-output",
            applies: &[("windows", "aligned")],
        });
        pub const UpsertBatchReordered: Mutant = Mutant::declare(&MutantInfo {
            name: "upsert-batch-reordered",
            part: "upsert sink",
            what: "the upsert sink writes each flushed batch newest first, so an older value of a key overwrites a newer one of the same batch and the finished table is stale",
            modelled_on: "upsert sinks that apply a buffered batch out of order per key: Flink's JDBC BufferReduceStatementExecutor ran a batch's upserts and then its deletes, so two changes of one key in a batch were applied out of order (reported in the review of FLINK-18461, apache/flink PR 12803); Elasticsearch bulk requests for one document id sent concurrently",
            caught_by: "exactly-once-output",
            applies: &[("upsert", "aligned")],
        });
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

    /// Runs `f` on `sink` with a context writing to `store`.
    fn with(
        sink: &mut DirectSink,
        store: &mut ExternalStore,
        mutants: Mutants,
        f: impl FnOnce(&mut DirectSink, &mut Context),
    ) {
        let mut out = Vec::new();
        let mut ctx = Context {
            subtask: 0,
            parallelism: 1,
            operator: 7,
            max_parallelism: 128,
            attempt: 0,
            now: SimTime::ZERO,
            restored: None,
            watermark: i64::MIN,
            store,
            out: &mut out,
            late: &mut Vec::new(),
            fired: &mut Vec::new(),
            mutants,
        };
        f(sink, &mut ctx);
        assert!(out.is_empty(), "a sink emits nothing");
    }

    #[test]
    fn the_upsert_sink_buffers_and_flushes_in_order_before_the_snapshot() {
        let mut store = ExternalStore::default();
        let mut sink = DirectSink::upsert(3);
        with(&mut sink, &mut store, Mutants::NONE, |s, ctx| {
            s.process(rec(1, 1, 0), ctx);
            s.process(rec(1, 2, 1), ctx);
        });
        assert!(store.committed().is_empty(), "buffered until full");
        with(&mut sink, &mut store, Mutants::NONE, |s, ctx| {
            assert!(s.snapshot(1, ctx).is_empty());
        });
        assert_eq!(store.committed().len(), 2, "flushed at the snapshot");
        assert_eq!(store.upsert_table(7).get(&1), Some(&2));
        with(&mut sink, &mut store, Mutants::NONE, |s, ctx| {
            for (i, v) in [3, 4, 5].into_iter().enumerate() {
                s.process(rec(1, v, 2 + i as u64), ctx);
            }
            s.process(rec(2, 1, 5), ctx);
            s.end_of_input(ctx);
        });
        assert_eq!(store.committed().len(), 6);
        let table: Vec<_> = store.upsert_table(7).into_iter().collect();
        assert_eq!(table, vec![(1, 5), (2, 1)]);
    }

    #[test]
    fn a_reordered_batch_leaves_an_older_value() {
        let mut store = ExternalStore::default();
        let mut sink = DirectSink::upsert(2);
        let mutants = Mutants::NONE.with(Mutant::UpsertBatchReordered);
        with(&mut sink, &mut store, mutants, |s, ctx| {
            s.process(rec(1, 1, 0), ctx);
            s.process(rec(1, 2, 1), ctx);
        });
        assert_eq!(store.upsert_table(7).get(&1), Some(&1));
    }
}
