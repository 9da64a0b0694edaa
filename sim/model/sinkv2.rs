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
//!   saw complete waits for the next notification (Flink 2.x's
//!   `processElement` only collects).
//!   Its state is the committables not yet committed; on restore it commits
//!   them at once (FLINK-24131: they belong to the restored checkpoint,
//!   which completed). Commits are idempotent: the store reports a
//!   transaction already committed.
//!
//! - A committer that feeds a global committer (Flink's post-commit
//!   topology, `SupportsPostCommitTopology`) does not publish: what it
//!   commits of checkpoint `n` it emits downstream, a summary (its subtask,
//!   its parallelism, `n`, how many) and then each committable, and the
//!   global committer publishes them (a table commit, as Iceberg, Delta
//!   Lake and Paimon do). Its writer then sends a summary before each
//!   hand-over, empty ones included, as Flink's does at every barrier, and
//!   the committer keeps one entry per checkpoint it heard of, so that it
//!   sends a summary for each.
//! - The global committer (Flink's `GlobalCommitterOperator`; behind a
//!   committer Flink builds it with `commitOnInput`, the translator's
//!   `isBatch || !checkpointing || hasUpstreamCommitter`) collects
//!   summaries and committables per checkpoint; at each of them (its
//!   checkpoint `n` completed: its committer forwards only then), notified
//!   of `n`, or at a restore of `n`, it commits the checkpoints up to `n`
//!   in order and stops at the first whose committables have not all
//!   arrived from every committer subtask (`hasGloballyReceivedAll`). Its
//!   state is what it collected and has not committed.
//!
//! A committable is a [`Record`] on the writer → committer edge: its key is
//! the transaction's sequence number, its value the checkpoint id, and its
//! lineage names the writer subtask and attempt (partition [`COMMITTABLE`]).
//! Forwarded to a global committer it is the same record with the
//! forwarding committer's subtask as its timestamp; a summary is partition
//! [`SUMMARY`] (key: the committer's subtask, value: the checkpoint, offset:
//! its parallelism above 32 bits and the number of committables below).

use super::operator::{decode, encode, open_txn, CheckpointId, Context, Operator};
use super::record::{Lineage, Record};
use super::store::{ExternalStore, TxnId, TxnState};
use crate::mutant::Mutant;
use serde::{Deserialize, Serialize};

/// The checkpoint id Flink before FLINK-37605 gave the committables of end
/// of input (`Long.MAX_VALUE`); after its end of input the committer
/// committed everything on the next notification (mutant
/// `eoi-committable-constant`).
pub const EOI: CheckpointId = CheckpointId::MAX;

/// The lineage partition that marks a committable.
pub const COMMITTABLE: u32 = u32::MAX;

/// The lineage partition that marks a committer's summary of a checkpoint.
pub const SUMMARY: u32 = u32::MAX - 1;

/// A committer's summary of `checkpoint` for the global committer.
fn summary(
    subtask: u32,
    parallelism: u32,
    checkpoint: CheckpointId,
    n: u32,
    ctx: &Context,
) -> Record {
    Record {
        key: u64::from(subtask),
        value: checkpoint as i64,
        lineage: Lineage {
            partition: SUMMARY,
            offset: (u64::from(parallelism) << 32) | u64::from(n),
        },
        emitted_at: ctx.now,
        timestamp: 0,
        payload: crate::model::Payload::NONE,
    }
}

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
    /// Its committer feeds a global committer: a summary precedes each
    /// hand-over, empty ones included (Flink's writer always sends one;
    /// only the global committer counts them).
    summaries: bool,
}

#[derive(Serialize, Deserialize)]
struct WriterState {
    next_seq: u64,
    checkpoint: CheckpointId,
}

impl SinkWriter {
    /// A writer whose committer feeds a global committer (`summaries`).
    pub fn new(summaries: bool) -> SinkWriter {
        SinkWriter {
            summaries,
            ..SinkWriter::default()
        }
    }

    /// Pre-commits the open transaction and hands it downstream.
    fn hand_over(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        if self.summaries {
            let n = u32::from(self.current.is_some());
            let head = summary(ctx.subtask, ctx.parallelism, checkpoint, n, ctx);
            ctx.out.push(head);
        }
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
    /// It feeds a global committer: it emits what it commits instead of
    /// publishing it.
    forwards: bool,
    /// With `forwards`: the checkpoints it holds an entry for (its
    /// writer's summary or a committable seen), each owed a summary.
    checkpoints: Vec<CheckpointId>,
}

/// A committer's state. A forwarding committer's adds its checkpoints
/// after the committables (a plain committer's bytes are a prefix of it).
#[derive(Serialize, Deserialize)]
struct CommitterState {
    pending: Vec<(CheckpointId, TxnId)>,
}

#[derive(Serialize, Deserialize)]
struct ForwardingState {
    pending: Vec<(CheckpointId, TxnId)>,
    checkpoints: Vec<CheckpointId>,
}

impl SinkCommitter {
    /// The committer of writer operator `writer`; `forwards`: it feeds a
    /// global committer.
    pub fn new(writer: u32, forwards: bool) -> SinkCommitter {
        SinkCommitter {
            writer,
            pending: Vec::new(),
            last_completed: 0,
            ended: false,
            forwards,
            checkpoints: Vec::new(),
        }
    }

    fn commit_up_to(&mut self, upto: CheckpointId, ctx: &mut Context) {
        if self.forwards {
            return self.forward_up_to(upto, ctx);
        }
        let now = ctx.now;
        self.pending.retain(|&(cp, txn)| {
            let due = cp <= upto;
            if due {
                ctx.store.commit(txn, now);
            }
            !due
        });
    }

    /// Notes an entry for `checkpoint` (a forwarding committer's).
    fn saw(&mut self, checkpoint: CheckpointId) {
        if self.forwards && !self.checkpoints.contains(&checkpoint) {
            self.checkpoints.push(checkpoint);
            self.checkpoints.sort_unstable();
        }
    }

    /// Flink's `commitAndEmitCheckpoints` with a post-commit topology: per
    /// checkpoint up to `upto`, oldest first, a summary and then its
    /// committables, downstream.
    fn forward_up_to(&mut self, upto: CheckpointId, ctx: &mut Context) {
        let due: Vec<CheckpointId> = self
            .checkpoints
            .iter()
            .copied()
            .filter(|&c| c <= upto)
            .collect();
        self.checkpoints.retain(|&c| c > upto);
        for cp in due {
            let txns: Vec<TxnId> = self
                .pending
                .iter()
                .filter(|p| p.0 == cp)
                .map(|p| p.1)
                .collect();
            self.pending.retain(|p| p.0 != cp);
            let (subtask, parallelism) = (ctx.subtask, ctx.parallelism);
            let head = summary(subtask, parallelism, cp, txns.len() as u32, ctx);
            ctx.out.push(head);
            for txn in txns {
                let mut r = committable(txn, cp, ctx);
                r.timestamp = i64::from(subtask);
                ctx.out.push(r);
            }
        }
    }
}

impl Operator for SinkCommitter {
    fn process(&mut self, record: Record, _ctx: &mut Context) {
        if record.lineage.partition == SUMMARY {
            self.saw(record.value as CheckpointId);
            return;
        }
        let Some((txn, checkpoint)) = committable_txn(&record, self.writer) else {
            return;
        };
        // Even a committable whose checkpoint already completed waits for
        // the next notification: Flink's `CommitterOperator.processElement`
        // only collects (`CommittableCollector.addMessage`), in every 2.x
        // release (2.0.2, 2.1.0, 2.2.1, 2.3.0).
        self.saw(checkpoint);
        self.pending.push((checkpoint, txn));
    }

    fn held_at_exit(&self, store: &ExternalStore) -> Option<String> {
        let open = |txn: &TxnId| store.state(*txn) != Some(TxnState::Committed);
        let pending: Vec<&(CheckpointId, TxnId)> =
            self.pending.iter().filter(|p| open(&p.1)).collect();
        if pending.is_empty() {
            return None;
        }
        let mut checkpoints: Vec<CheckpointId> = pending.iter().map(|p| p.0).collect();
        checkpoints.sort_unstable();
        checkpoints.dedup();
        let what = if self.forwards {
            "never sent on to its global committer"
        } else {
            "never committed"
        };
        Some(format!(
            "{} of {} {} {what}",
            crate::engine::count(pending.len() as u64, "committable"),
            crate::engine::text::noun(checkpoints.len() as u64, "checkpoint"),
            ids(&checkpoints),
        ))
    }

    fn snapshot(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) -> Vec<u8> {
        if !self.forwards {
            return encode(&CommitterState {
                pending: self.pending.clone(),
            });
        }
        encode(&ForwardingState {
            pending: self.pending.clone(),
            checkpoints: self.checkpoints.clone(),
        })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        let (state, listed) = match self.forwards {
            // A plain committer's bytes (a savepoint's merge) list no
            // checkpoints: each committable's is owed a summary anyway.
            true => match decode::<ForwardingState>(state, "sink-committer") {
                Ok(f) => (CommitterState { pending: f.pending }, f.checkpoints),
                Err(_) => (decode(state, "sink-committer")?, Vec::new()),
            },
            false => (
                decode::<CommitterState>(state, "sink-committer")?,
                Vec::new(),
            ),
        };
        for cp in listed.into_iter().chain(state.pending.iter().map(|p| p.0)) {
            self.saw(cp);
        }
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

/// `sink-global-committer`: publishes what every committer forwarded, one
/// checkpoint at a time (Flink's `GlobalCommitterOperator` behind a
/// committer, in streaming mode).
pub struct SinkGlobalCommitter {
    /// The writer operator whose transactions the committables name.
    writer: u32,
    collected: Collected,
    last_completed: CheckpointId,
    /// Mutant `global-commit-on-notify`: the newest checkpoint it counted
    /// done; later committables of it or older are dropped.
    published: CheckpointId,
}

/// Per checkpoint, what each committer subtask announced and sent (Flink's
/// `CommittableCollector`): the global committer's state.
#[derive(Clone, Default, Serialize, Deserialize)]
struct Collected {
    checkpoints: std::collections::BTreeMap<CheckpointId, Received>,
}

/// One checkpoint's summaries and committables.
#[derive(Clone, Default, Serialize, Deserialize)]
struct Received {
    /// How many committer subtasks send (the latest summary's word).
    subtasks: u32,
    /// Per committer subtask: the committables its summary announced.
    announced: std::collections::BTreeMap<u32, u32>,
    /// Per committer subtask: the transactions it sent.
    sent: std::collections::BTreeMap<u32, Vec<TxnId>>,
}

impl Received {
    /// Flink's `hasGloballyReceivedAll`: a summary from every committer
    /// subtask, and every committable each announced.
    fn complete(&self) -> bool {
        self.subtasks > 0
            && self.announced.len() as u32 >= self.subtasks
            && self
                .announced
                .iter()
                .all(|(s, &n)| self.sent.get(s).map_or(0, Vec::len) as u32 >= n)
    }
}

impl SinkGlobalCommitter {
    pub fn new(writer: u32) -> SinkGlobalCommitter {
        SinkGlobalCommitter {
            writer,
            collected: Collected::default(),
            last_completed: 0,
            published: 0,
        }
    }

    /// Flink's `commit`: the checkpoints up to the newest completed one,
    /// oldest first, stopping at the first not fully received.
    fn commit(&mut self, upto: CheckpointId, ctx: &mut Context) {
        self.last_completed = self.last_completed.max(upto);
        let now = ctx.now;
        if ctx.mutant(Mutant::GlobalCommitOnNotify) {
            // Mutant: each checkpoint up to the notified one is published
            // with what arrived so far, and counted done.
            while let Some(entry) = self.collected.checkpoints.first_entry() {
                if *entry.key() > self.last_completed {
                    break;
                }
                let (cp, received) = entry.remove_entry();
                self.published = self.published.max(cp);
                for txn in received.sent.into_values().flatten() {
                    ctx.store.commit(txn, now);
                }
            }
            return;
        }
        while let Some(entry) = self.collected.checkpoints.first_entry() {
            if *entry.key() > self.last_completed || !entry.get().complete() {
                return;
            }
            for txn in entry.remove().sent.into_values().flatten() {
                ctx.store.commit(txn, now);
            }
        }
    }
}

impl Operator for SinkGlobalCommitter {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let cp = if record.lineage.partition == SUMMARY {
            let cp = record.value as CheckpointId;
            if cp <= self.published {
                return; // (mutant `global-commit-on-notify` only)
            }
            let e = self.collected.checkpoints.entry(cp).or_default();
            e.subtasks = (record.lineage.offset >> 32) as u32;
            e.announced
                .insert(record.key as u32, record.lineage.offset as u32);
            cp
        } else if let Some((txn, cp)) = committable_txn(&record, self.writer) {
            if cp <= self.published {
                return; // (mutant `global-commit-on-notify` only)
            }
            let e = self.collected.checkpoints.entry(cp).or_default();
            let sent = e.sent.entry(record.timestamp as u32).or_default();
            if !sent.contains(&txn) {
                sent.push(txn);
            }
            cp
        } else {
            return;
        };
        // Behind a committer Flink builds it with `commitOnInput` (the
        // translator's `isBatch || !checkpointing || hasUpstreamCommitter`):
        // every message commits up to its checkpoint, which its committer
        // forwarded only once it completed. (The mutant waits for a
        // notification.)
        if !ctx.mutant(Mutant::GlobalCommitOnNotify) {
            self.commit(cp, ctx);
        }
    }

    fn snapshot(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) -> Vec<u8> {
        encode(&self.collected)
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if !state.is_empty() {
            self.collected = decode(state, "sink-global-committer")?;
        }
        // Flink re-commits what it restored at once, up to the restored
        // checkpoint.
        if let Some(id) = ctx.restored {
            self.commit(id, ctx);
        }
        Ok(())
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        self.commit(checkpoint, ctx);
    }

    fn held_at_exit(&self, store: &ExternalStore) -> Option<String> {
        let (&cp, first) = self.collected.checkpoints.first_key_value()?;
        let open = |txn: &&TxnId| store.state(**txn) != Some(TxnState::Committed);
        let held = (self.collected.checkpoints.values())
            .flat_map(|r| r.sent.values().flatten())
            .filter(open)
            .count();
        if held == 0 {
            // Empty checkpoints, or what was committed otherwise: nothing
            // is lost.
            return None;
        }
        let missing: Vec<u32> = (0..first.subtasks)
            .filter(|s| !first.announced.contains_key(s))
            .collect();
        let why = if first.subtasks == 0 {
            "no committer subtask's summary came".to_string()
        } else if !missing.is_empty() {
            format!(
                "no summary came from committer {} {} of {}; a writer sends none after its end of input, so a committer whose writer ended at an earlier checkpoint never completes a later one",
                crate::engine::text::noun(missing.len() as u64, "subtask"),
                ids(&missing),
                first.subtasks
            )
        } else {
            "committables its summaries announced never came".to_string()
        };
        Some(format!(
            "{} of {} never published: checkpoint {cp}, the oldest, was never fully received (Flink's hasGloballyReceivedAll): {why}",
            crate::engine::count(held as u64, "committable"),
            crate::engine::count(self.collected.checkpoints.len() as u64, "checkpoint"),
        ))
    }
}

/// Numbers as `1, 2 and 3`.
fn ids<T: std::fmt::Display>(xs: &[T]) -> String {
    let words: Vec<String> = xs.iter().map(T::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => words.concat(),
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

/// The transactions a global committer's state holds (an error if the
/// bytes are not such state).
pub fn global_committer_txns(state: &[u8]) -> Result<Vec<TxnId>, String> {
    let c: Collected = decode(state, "sink-global-committer")?;
    Ok(c.checkpoints
        .into_values()
        .flat_map(|r| r.sent.into_values().flatten())
        .collect())
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
        pub const GlobalCommitOnNotify: Mutant = Mutant::declare(&MutantInfo {
            name: "global-commit-on-notify",
            part: "Sink V2",
            what: "the global committer publishes, at each notification, what it has received of every checkpoint up to the notified one and counts those checkpoints done, without waiting for every committer's committables: the committers forward a checkpoint's committables only when they are notified themselves, so they arrive after the global committer's notification and are dropped",
            modelled_on: "FLINK-24530 (the GlobalCommitter committed on notifyCheckpointComplete, which may come before every committer forwarded its committables, and so committed an incomplete set; since then it waits until it has received them all, hasGloballyReceivedAll)",
            caught_by: "exactly-once-output",
            applies: &[("sink-v2-global", "aligned")],
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
