//! Sink V2 (Flink's `SinkWriterOperator` and `CommitterOperator`): a
//! writer that writes into transactions and hands each one downstream as a
//! **committable** tagged with its checkpoint id, and a committer that keeps
//! committables per checkpoint id and commits them once that checkpoint
//! completed.
//!
//! - The writer pre-commits its transaction and emits the committable in
//!   `prepare_snapshot_pre_barrier`, so it travels ahead of the barrier; at
//!   end of input it hands over its last transaction tagged with the id
//!   after the last checkpoint it saw (or restored from): the checkpoint
//!   that will hold it (FLINK-37605; a constant "end of input" id, [`EOI`],
//!   let a notification of an older checkpoint commit it, see the mutant
//!   `eoi-committable-constant`).
//! - The committer, notified of checkpoint `n`, commits every committable
//!   tagged `n` or lower; a committable arriving for a checkpoint it already
//!   saw complete is committed at once.
//!   Its state is the committables not yet committed; on restore it commits
//!   them at once (FLINK-24131: they belong to the restored checkpoint,
//!   which completed). Commits are idempotent: the store reports a
//!   transaction already committed.
//!
//! A committable is a [`Record`] on the writer → committer edge: its key is
//! the transaction's sequence number, its value the checkpoint id, and its
//! lineage names the writer subtask and attempt (partition [`COMMITTABLE`]).

use super::operator::{decode, encode, open_txn, CheckpointId, Context, Operator};
use super::record::{Lineage, Record};
use super::store::TxnId;
use crate::mutant::Mutant;
use serde::{Deserialize, Serialize};

/// The checkpoint id Flink before FLINK-37605 gave the committables of end
/// of input (`Long.MAX_VALUE`); after its end of input the committer
/// committed everything on the next notification (mutant
/// `eoi-committable-constant`).
pub const EOI: CheckpointId = CheckpointId::MAX;

/// The lineage partition that marks a committable.
pub const COMMITTABLE: u32 = u32::MAX;

/// The committable of transaction `txn` for `checkpoint`.
fn committable(txn: TxnId, checkpoint: CheckpointId, ctx: &Context) -> Record {
    Record {
        key: txn.seq,
        value: checkpoint as i64,
        lineage: Lineage {
            partition: COMMITTABLE,
            offset: (u64::from(txn.subtask) << 32) | u64::from(txn.attempt),
        },
        emitted_at: ctx.now,
        timestamp: 0,
        payload: crate::model::Payload::NONE,
    }
}

/// The transaction a committable names, of writer operator `writer`, and
/// its checkpoint (`None` for a record that is no committable).
pub fn committable_txn(record: &Record, writer: u32) -> Option<(TxnId, CheckpointId)> {
    (record.lineage.partition == COMMITTABLE).then(|| {
        let txn = TxnId {
            sink: writer,
            subtask: (record.lineage.offset >> 32) as u32,
            attempt: record.lineage.offset as u32,
            seq: record.key,
        };
        (txn, record.value as CheckpointId)
    })
}

/// `sink-writer`: records into one transaction per checkpoint.
#[derive(Default)]
pub struct SinkWriter {
    current: Option<TxnId>,
    next_seq: u64,
    /// The last checkpoint it handed a committable over for, or restored
    /// from.
    last_checkpoint: CheckpointId,
    /// Its input ended: it handed over its last transaction then, and
    /// hands over nothing at later barriers (Flink's `endOfInput` flag).
    ended: bool,
}

#[derive(Serialize, Deserialize)]
struct WriterState {
    next_seq: u64,
    checkpoint: CheckpointId,
}

impl SinkWriter {
    /// Pre-commits the open transaction and hands it downstream.
    fn hand_over(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        if let Some(txn) = self.current.take() {
            // The store learns the checkpoint the transaction belongs to
            // (outside a snapshot, at end of input, from its tag).
            let scope = ctx.store.precommit_scope;
            ctx.store.precommit_scope = Some(scope.unwrap_or(checkpoint));
            ctx.store.pre_commit(txn);
            ctx.store.precommit_scope = scope;
            ctx.out.push(committable(txn, checkpoint, ctx));
        }
    }
}

impl Operator for SinkWriter {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let txn = open_txn(&mut self.current, &mut self.next_seq, ctx);
        ctx.store.write(txn, record);
    }

    fn prepare_snapshot_pre_barrier(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        self.last_checkpoint = self.last_checkpoint.max(checkpoint);
        if !self.ended && !ctx.mutant(Mutant::CommittableAfterBarrier) {
            self.hand_over(checkpoint, ctx);
        }
    }

    fn snapshot(&mut self, checkpoint: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        if !self.ended && ctx.mutant(Mutant::CommittableAfterBarrier) {
            // From snapshotState: the committable trails the barrier.
            self.hand_over(checkpoint, ctx);
        }
        encode(&WriterState {
            next_seq: self.next_seq,
            checkpoint,
        })
    }

    fn restore(&mut self, state: &[u8], _ctx: &mut Context) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        let state: WriterState = decode(state, "sink-writer")?;
        self.next_seq = state.next_seq;
        self.last_checkpoint = state.checkpoint;
        Ok(())
    }

    fn end_of_input(&mut self, ctx: &mut Context) {
        self.ended = true;
        if ctx.mutant(Mutant::WriterKeepsLastTransaction) {
            return;
        }
        let tag = match ctx.mutant(Mutant::EoiCommittableConstant) {
            true => EOI,
            false => self.last_checkpoint + 1,
        };
        self.hand_over(tag, ctx);
    }
}

/// `sink-committer`: commits the committables of completed checkpoints.
pub struct SinkCommitter {
    /// The writer operator whose committables it reads.
    writer: u32,
    pending: Vec<(CheckpointId, TxnId)>,
    last_completed: CheckpointId,
    ended: bool,
}

#[derive(Serialize, Deserialize)]
struct CommitterState {
    pending: Vec<(CheckpointId, TxnId)>,
}

impl SinkCommitter {
    pub fn new(writer: u32) -> SinkCommitter {
        SinkCommitter {
            writer,
            pending: Vec::new(),
            last_completed: 0,
            ended: false,
        }
    }

    fn commit_up_to(&mut self, upto: CheckpointId, ctx: &mut Context) {
        let now = ctx.now;
        self.pending.retain(|&(cp, txn)| {
            let due = cp <= upto;
            if due {
                ctx.store.commit(txn, now);
            }
            !due
        });
    }
}

impl Operator for SinkCommitter {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let Some((txn, checkpoint)) = committable_txn(&record, self.writer) else {
            return;
        };
        if checkpoint <= self.last_completed {
            // Its checkpoint already completed (Flink's CommitterOperator
            // commits such a late committable at once).
            ctx.store.commit(txn, ctx.now);
        } else {
            self.pending.push((checkpoint, txn));
        }
    }

    fn snapshot(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) -> Vec<u8> {
        encode(&CommitterState {
            pending: self.pending.clone(),
        })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        let state: CommitterState = decode(state, "sink-committer")?;
        // The restored checkpoint completed (Flink's CommitterOperator
        // takes it as the last completed one): what it holds is due now,
        // and so is a committable of it that arrives later (from restored
        // in-flight data, where the edge's channel state was captured).
        self.last_completed = state
            .pending
            .iter()
            .map(|&(cp, _)| cp)
            .filter(|&cp| cp != EOI)
            .chain(ctx.restored)
            .max()
            .unwrap_or(0);
        self.pending = state.pending;
        self.commit_up_to(EOI, ctx);
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut Context) {
        self.ended = true;
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        self.last_completed = self.last_completed.max(checkpoint);
        // Mutant: before FLINK-37605, any notification after end of input
        // was taken for the final checkpoint's and committed everything.
        let upto = match self.ended && ctx.mutant(Mutant::EoiCommittableConstant) {
            true => EOI,
            false => self.last_completed,
        };
        self.commit_up_to(upto, ctx);
    }
}

/// The writer subtasks whose committables reach committer `subtask`
/// (`forward`: its own index; a committer of parallelism 1: all).
pub fn served_writers(subtask: u32, committer_parallelism: u32, writers: u32) -> Vec<u32> {
    match committer_parallelism {
        1 => (0..writers).collect(),
        _ => vec![subtask],
    }
}

/// The committables a committer's state holds (`None` if the bytes are not
/// a committer's state).
pub fn committables(state: &[u8]) -> Option<usize> {
    decode::<CommitterState>(state, "sink-committer")
        .ok()
        .map(|s| s.pending.len())
}

/// The transactions a committer's state holds (an error if the bytes are
/// not a committer's state).
pub fn committer_txns(state: &[u8]) -> Result<Vec<TxnId>, String> {
    let s: CommitterState = decode(state, "sink-committer")?;
    Ok(s.pending.into_iter().map(|(_, t)| t).collect())
}

/// A writer state's sequence counter (the next transaction's number) and
/// the checkpoint it was taken for (the last it handed a committable over
/// for), or why the bytes are not such state.
pub fn writer_state_parts(state: &[u8]) -> Result<(u64, CheckpointId), String> {
    decode::<WriterState>(state, "sink-writer").map(|s| (s.next_seq, s.checkpoint))
}

/// One writer state from several (a rescale): the highest sequence number
/// and checkpoint id; an error names the state that does not decode.
pub fn merge_writer_states(states: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut merged = WriterState {
        next_seq: 0,
        checkpoint: 0,
    };
    for (i, bytes) in states.iter().enumerate() {
        let s: WriterState =
            decode(bytes, "sink-writer").map_err(|e| format!("subtask {i}: {e}"))?;
        merged.next_seq = merged.next_seq.max(s.next_seq);
        merged.checkpoint = merged.checkpoint.max(s.checkpoint);
    }
    Ok(encode(&merged))
}

/// One committer state from several (a rescale): their committables.
pub fn merge_committer_states(states: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut pending = Vec::new();
    for (i, bytes) in states.iter().enumerate() {
        let s: CommitterState =
            decode(bytes, "sink-committer").map_err(|e| format!("subtask {i}: {e}"))?;
        pending.extend(s.pending);
    }
    pending.sort_unstable();
    Ok(encode(&CommitterState { pending }))
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CommittableAfterBarrier: Mutant = Mutant::declare(&MutantInfo {
            name: "committable-after-barrier",
            part: "Sink V2",
            what: "the Sink V2 writer hands over its committable in snapshotState, after the barrier was forwarded, instead of in prepareSnapshotPreBarrier: the committable is not in the committer's state for its checkpoint, and a restore from that checkpoint loses the transaction",
            modelled_on: "the Sink V2 contract that committables precede the barrier (SinkWriterOperator.prepareSnapshotPreBarrier emits them; records emitted from snapshotState trail it); FLINK-36287 / FLINK-37870 are its unaligned form, committables overtaken by an unaligned barrier",
            caught_by: "exactly-once-output",
            applies: &[("sink-v2", "aligned")],
        });
        pub const WriterKeepsLastTransaction: Mutant = Mutant::declare(&MutantInfo {
            name: "writer-keeps-last-transaction",
            part: "Sink V2",
            what: "at end of input the Sink V2 writer does not hand its last transaction to the committer, so the final data is never committed",
            modelled_on: "committables not emitted at end of input (SinkWriterOperator.endInput must emit the last committables, tagged EOI, which the final checkpoint then commits: FLIP-147)",
            caught_by: "exactly-once-output",
            applies: &[("sink-v2", "aligned")],
        });
        pub const EoiCommittableConstant: Mutant = Mutant::declare(&MutantInfo {
            name: "eoi-committable-constant",
            part: "Sink V2",
            what: "the writer tags its end-of-input committable with a constant (Long.MAX_VALUE) and the committer, once its input ended, commits everything on the next notification: a notification of a checkpoint taken before the end commits the final transaction, and a restore from that checkpoint replays its records",
            modelled_on: "FLINK-37605 (\"final doesn't mean final\": streaming jobs checkpoint on after end of input, so the EOI constant led to duplicate commits; since then the writer tags the last checkpoint id it saw + 1)",
            caught_by: "exactly-once-output",
            applies: &[("sink-v2", "aligned")],
        });
    }
}
