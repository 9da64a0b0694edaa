//! What a checkpoint is made of: each task's snapshot and cut, the pending
//! checkpoint collecting them, the completed one, and its statistics.

use crate::engine::SimTime;
use crate::model::{ChannelId, CheckpointId, Record};
use serde::Serialize;

/// The channel positions a task recorded at its snapshot.
#[derive(Clone, Debug, Default)]
pub struct Cut {
    /// Records read from each input channel before the snapshot.
    pub inputs: Vec<(ChannelId, u64)>,
    /// Records sent on each output channel before the snapshot.
    pub outputs: Vec<(ChannelId, u64)>,
}

/// One channel's persisted in-flight records (unaligned, aligned-timeout
/// and Chandy–Lamport checkpoints), with the sequence number of the first.
#[derive(Clone, Debug, Default)]
pub struct ChannelState {
    pub ch: ChannelId,
    pub first_seq: u64,
    pub records: Vec<Record>,
    /// Bytes of `records` (their sizes, `model::RecordSizes`).
    pub bytes: u64,
    /// The captured buffers were not consecutive (reported by the cut check).
    pub gap: bool,
}

/// What a task persisted for one checkpoint: operator state, then input
/// channel state (records it had not consumed yet) and output channel state
/// (records a priority barrier overtook in its output queues).
#[derive(Clone, Debug, Default)]
pub struct TaskSnapshot {
    /// Operator state of each operator of the task's chain, head first.
    pub states: Vec<Vec<u8>>,
    pub inputs: Vec<ChannelState>,
    pub outputs: Vec<ChannelState>,
    /// Where each chained operator's schedule stood at the snapshot
    /// (`runtime::schedule`; empty for snapshots from files).
    pub log_pos: Vec<crate::runtime::schedule::LogPos>,
    /// Each chained operator's event-time clock at the snapshot (its
    /// timer service's watermark; empty without event time and for
    /// snapshots from files: every clock starts at `MIN_WATERMARK`).
    pub watermarks: Vec<i64>,
    /// How many timers each chained operator held at the snapshot (empty
    /// for snapshots from files): a restore must give them all back.
    pub timers: Vec<u64>,
    /// The task had exited when the checkpoint was planned (FLIP-147), or
    /// was deployed as finished: reported finished, with the state of its
    /// last snapshot after its end of data; restored from a checkpoint, it
    /// is deployed as finished (`world/exit.rs`).
    pub finished: bool,
}

impl TaskSnapshot {
    /// Bytes of operator state, every chained operator's.
    pub fn state_bytes(&self) -> u64 {
        self.states.iter().map(|s| s.len() as u64).sum()
    }
    pub fn in_flight_records(&self) -> u64 {
        self.inputs
            .iter()
            .chain(&self.outputs)
            .map(|c| c.records.len() as u64)
            .sum()
    }
    pub fn in_flight_bytes(&self) -> u64 {
        self.inputs
            .iter()
            .chain(&self.outputs)
            .map(|c| c.bytes)
            .sum()
    }
}

/// One task's contribution to a checkpoint.
pub struct TaskAck {
    pub snapshot: TaskSnapshot,
    pub cut: Cut,
    pub input_ended: bool,
    pub start_delay_ns: u64,
    pub alignment_ns: u64,
    /// Set when the acknowledgement reached the coordinator.
    pub arrived: bool,
    /// When the task's operator state and channel state were written
    /// (`memory`: sent with the ack).
    pub durable_at: SimTime,
    /// Operator state the snapshot wrote (with files, its backend's new
    /// files; else its whole state) and the whole of what it refers to.
    pub persisted_bytes: u64,
    pub full_bytes: u64,
}

pub struct Pending {
    pub id: CheckpointId,
    pub trigger_time: SimTime,
    pub acks: Vec<Option<TaskAck>>,
    pub remaining: u32,
    pub finalizing: bool,
    /// `stop-the-world`: tasks without outputs that reported drained.
    pub drained: u32,
    /// The task whose ack arrived last.
    pub last_ack: Option<u32>,
    /// The savepoint request, if this is a savepoint.
    pub savepoint: Option<crate::scenario::SavepointSpec>,
    /// The operator coordinators' checkpoints, taken at the trigger:
    /// `(operator, state)`.
    pub coordinators: Vec<(u32, Vec<u8>)>,
}

/// A completed checkpoint: the state of every task, restorable.
pub struct Completed {
    pub id: CheckpointId,
    pub trigger_time: SimTime,
    pub completed_at: SimTime,
    /// Snapshot per task (`None` if a task's ack was missing).
    pub states: Vec<Option<TaskSnapshot>>,
    pub state_bytes: u64,
    pub in_flight_bytes: u64,
    /// The operator coordinators' checkpoints: `(operator, state)`.
    pub coordinators: Vec<(u32, Vec<u8>)>,
    /// A recovery line of the uncoordinated families: each task's own
    /// checkpoint id (0: its initial state); `None` for a checkpoint
    /// every task took (`id`).
    pub lines: Option<Vec<CheckpointId>>,
}

impl Completed {
    /// The checkpoint task `t`'s snapshot belongs to.
    pub fn id_of(&self, t: usize) -> CheckpointId {
        self.lines
            .as_ref()
            .and_then(|l| l.get(t).copied())
            .unwrap_or(self.id)
    }

    /// Operator `op`'s coordinator state in this checkpoint.
    pub fn coordinator(&self, op: u32) -> Option<&[u8]> {
        self.coordinators
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, s)| s.as_slice())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Completed,
    /// Timed out (`CHECKPOINT_EXPIRED`, counted as a failure).
    Expired,
    /// A task declined: a newer barrier or a cancellation marker.
    Declined,
    /// Subsumed by a newer completed checkpoint.
    Subsumed,
    /// The job failed over while it was pending.
    Failover,
    /// The job was cancelled while it was pending.
    Cancelled,
    /// A checkpoint storage write failed (counted as a failure).
    StorageFailed,
    /// A task's state exceeded memory storage's `max_state_size` (counted
    /// as a failure).
    StateTooLarge,
}

impl Outcome {
    /// How a checkpoint (or savepoint) ended, as a phrase.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Expired => "expired (checkpoint timeout)",
            Outcome::Declined => "was declined by a task",
            Outcome::Subsumed => "was subsumed by a newer completed checkpoint",
            Outcome::Failover => "was aborted by a failover",
            Outcome::Cancelled => "was aborted: the job was cancelled",
            Outcome::StorageFailed => "failed: a checkpoint storage write failed",
            Outcome::StateTooLarge => {
                "failed: a task's state is larger than memory storage's max_state_size"
            }
        }
    }
}

/// Metrics of one checkpoint (DESIGN.md §6).
#[derive(Clone, Debug, Serialize)]
pub struct CheckpointStats {
    pub id: CheckpointId,
    pub trigger_ns: u64,
    pub end_ns: u64,
    pub duration_ns: u64,
    pub outcome: Outcome,
    /// Operator state, summed over the acknowledged tasks.
    pub state_bytes: u64,
    /// Operator state the snapshots wrote for this checkpoint (Flink's
    /// "checkpointed data size": with an incremental or changelog backend,
    /// what changed) and the bytes of every file they refer to, shared ones
    /// included (Flink's "full checkpoint data size"), summed over tasks.
    pub persisted_bytes: u64,
    pub full_bytes: u64,
    /// Persisted in-flight data (channel state), summed over tasks.
    pub in_flight_bytes: u64,
    /// Some task persisted in-flight data (Flink's per-subtask
    /// `unalignedCheckpoint` flag is `persistedData > 0`).
    pub unaligned: bool,
    pub acks: u32,
    pub start_delay_max_ns: u64,
    pub alignment_max_ns: u64,
    /// Per task, in task order (`None` where no ack arrived).
    pub start_delay_ns: Vec<Option<u64>>,
    pub alignment_ns: Vec<Option<u64>>,
    /// A savepoint, not a checkpoint.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub savepoint: bool,
}

/// The statistics of a checkpoint that ended at `end` with `outcome`.
pub fn stats_of(p: &Pending, end: SimTime, outcome: Outcome) -> CheckpointStats {
    let arrived = |a: &&TaskAck| a.arrived;
    let acks = p.acks.iter().flatten().filter(arrived);
    let (mut bytes, mut in_flight, mut n, mut delay, mut align) = (0, 0, 0, 0, 0);
    let (mut persisted, mut full) = (0, 0);
    for a in acks {
        bytes += a.snapshot.state_bytes();
        persisted += a.persisted_bytes;
        full += a.full_bytes;
        in_flight += a.snapshot.in_flight_bytes();
        n += 1;
        delay = delay.max(a.start_delay_ns);
        align = align.max(a.alignment_ns);
    }
    let per_task = |f: fn(&TaskAck) -> u64| {
        p.acks
            .iter()
            .map(|a| a.as_ref().filter(arrived).map(f))
            .collect()
    };
    CheckpointStats {
        id: p.id,
        trigger_ns: p.trigger_time.0,
        end_ns: end.0,
        duration_ns: end.since(p.trigger_time).0,
        outcome,
        state_bytes: bytes,
        persisted_bytes: persisted,
        full_bytes: full,
        in_flight_bytes: in_flight,
        unaligned: in_flight > 0,
        acks: n,
        start_delay_max_ns: delay,
        alignment_max_ns: align,
        start_delay_ns: per_task(|a| a.start_delay_ns),
        alignment_ns: per_task(|a| a.alignment_ns),
        savepoint: false,
    }
}
