//! What a run produces: its outcome, the savepoint reports, the trace and
//! timeline, and [`RunOutput`], everything the checkers and reports read.

use super::config::RunConfig;
use super::coordinator::{CheckpointStats, TaskSnapshot};
use super::counters::Counters;
use super::event::Ev;
use super::schedule::Step;
use crate::engine::{SimDuration, SimTime};
use crate::model::store::{ExternalStore, TxnId};
use crate::model::{ChannelId, CheckpointId, TaskId};
use crate::protocol::{AbortReason, BarrierKind};
use crate::scenario::{CrashSpec, Guarantee};
use crate::verdict::Violation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a snapshot a run produced is a savepoint or a retained checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapshotKind {
    Savepoint,
    Checkpoint,
}

/// A savepoint or retained checkpoint as the run produced it (per task of
/// its execution graph); `crate::savepoint` turns it into files.
#[derive(Clone, Debug)]
pub struct SnapshotOut {
    pub kind: SnapshotKind,
    pub id: CheckpointId,
    /// Stop-with-savepoint (and whether it drained).
    pub stop: bool,
    pub drain: bool,
    pub completed_at: SimTime,
    pub states: Vec<Option<TaskSnapshot>>,
    /// The operator coordinators' checkpoints: `(operator, state)`.
    pub coordinators: Vec<(u32, Vec<u8>)>,
}

/// What became of one savepoint request (`[[savepoints]]`, or the
/// `savepoint` command's): it completed, or it failed with a reason. Every
/// request ends in one of the two; nothing is lost silently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SavepointReport {
    pub requested_at_ns: u64,
    pub stop: bool,
    pub drain: bool,
    /// The savepoint ids triggered for it (several when failed attempts
    /// were retried), each with how it ended.
    pub attempts: Vec<(CheckpointId, String)>,
    /// The id that completed.
    pub completed: Option<CheckpointId>,
    /// Why it failed (set when it did not complete).
    pub failure: Option<String>,
}

impl SavepointReport {
    /// One line for reports.
    pub fn describe(&self) -> String {
        let what = match (self.stop, self.drain) {
            (false, _) => "savepoint",
            (true, false) => "stop-with-savepoint",
            (true, true) => "stop-with-savepoint (drain)",
        };
        let at = SimDuration(self.requested_at_ns);
        match (self.completed, &self.failure) {
            (Some(id), _) => format!("{what} requested at {at}: completed as {id}"),
            (None, Some(why)) => format!("{what} requested at {at} FAILED: {why}"),
            (None, None) => format!("{what} requested at {at}: unresolved"),
        }
    }
}

/// How the run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "detail")]
pub enum Outcome {
    /// Every task finished after a final checkpoint covering all input.
    Finished,
    /// The restart strategy gave up.
    JobFailed(String),
    /// `max_events` reached.
    EventLimit,
    /// `max_time` reached.
    TimeLimit,
    /// The run took longer than `--max-wall` (wall-clock time: the one
    /// outcome that depends on the machine).
    WallLimit,
    /// The run's memory estimate passed `--max-memory` as its history grew
    /// (see `runtime::limits`).
    MemoryLimit,
    /// Nothing left to do but the job did not finish (a deadlock).
    Stalled,
    /// Stopped with a savepoint (stop-with-savepoint): every task finished
    /// after the savepoint completed.
    Stopped(CheckpointId),
    /// Cancelled at a requested time or after a savepoint.
    Cancelled,
}

impl Outcome {
    /// One line for reports.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Finished => "finished".to_string(),
            Outcome::JobFailed(r) => format!("job failed: {r}"),
            Outcome::EventLimit => "stopped at max_events".to_string(),
            Outcome::TimeLimit => "stopped at max_time".to_string(),
            Outcome::WallLimit => "stopped at --max-wall (wall-clock limit)".to_string(),
            Outcome::MemoryLimit => "stopped at --max-memory (memory limit)".to_string(),
            Outcome::Stalled => "stalled".to_string(),
            Outcome::Stopped(id) => format!("stopped with savepoint {id}"),
            Outcome::Cancelled => "cancelled".to_string(),
        }
    }
}

/// One processed event, kept only when `record_trace` is on.
#[derive(Clone, Debug, Serialize)]
pub struct TraceEntry {
    pub index: u64,
    pub time_ns: u64,
    pub event: &'static str,
    pub a: u64,
    pub b: u64,
    // --- trace: begin (fields for `report::trace`) ---
    /// The job attempt when the event was processed (0 before the first
    /// failover; +1 per failover).
    pub attempt: u32,
    /// The event itself, with every field (for the named fields of
    /// `report::trace::write_jsonl`).
    #[serde(skip)]
    pub ev: Ev,
    // --- trace: end ---
}

// --- trace: begin (timeline recording for `report::trace`) ---
impl PartialEq for TraceEntry {
    fn eq(&self, o: &TraceEntry) -> bool {
        let key = |e: &TraceEntry| (e.index, e.time_ns, e.event, e.a, e.b, e.attempt);
        // `Ev` has no `PartialEq`; its `Debug` text names every field.
        key(self) == key(o) && format!("{:?}", self.ev) == format!("{:?}", o.ev)
    }
}
impl Eq for TraceEntry {}

/// A fact of the run that the event list does not show (a task's busy
/// period, an alignment, a snapshot, a crash's effect), recorded only with
/// `record_trace`. Recording schedules nothing and draws nothing: the run
/// and its fingerprint are the same with and without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineMark {
    pub time_ns: u64,
    pub what: Timeline,
}

/// What happened at a [`TimelineMark`]'s time. Tasks and channels are ids
/// of the run's `ExecGraph`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Timeline {
    /// A task step: `records` records processed (emitted, for a source), of
    /// which `replayed` were restored in-flight records; the task is busy
    /// until `until_ns`.
    Step {
        task: TaskId,
        records: u64,
        replayed: u64,
        until_ns: u64,
    },
    /// The task read a barrier from input channel `ch`.
    BarrierRead {
        task: TaskId,
        ch: ChannelId,
        id: CheckpointId,
        kind: BarrierKind,
    },
    /// The task read a cancellation marker from input channel `ch`.
    CancelRead {
        task: TaskId,
        ch: ChannelId,
        id: CheckpointId,
    },
    /// The handler's `AlignmentStart` (first barrier of `id`).
    AlignmentStart { task: TaskId, id: CheckpointId },
    /// The handler's `AlignmentEnd` (last barrier of `id`).
    AlignmentEnd { task: TaskId, id: CheckpointId },
    /// The task-side checkpoint: operator snapshot taken, barriers sent on.
    Snapshot {
        task: TaskId,
        id: CheckpointId,
        kind: BarrierKind,
        state_bytes: u64,
    },
    /// The snapshot is complete (every barrier in, channel state closed).
    /// Its ack reaches the coordinator at `ack_at_ns`; `None`: the
    /// checkpoint had already ended, no ack was sent.
    SnapshotDone {
        task: TaskId,
        id: CheckpointId,
        state_bytes: u64,
        in_flight_bytes: u64,
        ack_at_ns: Option<u64>,
    },
    /// The handler aborted `id` (decline sent, cancellation markers on).
    Declined {
        task: TaskId,
        id: CheckpointId,
        reason: AbortReason,
    },
    /// The task consumed all its input (it sends end-of-data downstream).
    InputEnded { task: TaskId },
    /// The task finished (notified of the final checkpoint).
    Finished { task: TaskId },
    /// A planned crash hit a running task (ignored crashes are not marked).
    Crash { task: TaskId },
    /// Global failover: pending checkpoints aborted, the other tasks
    /// cancelled; `job_failed` if the restart strategy gave up.
    Failover { reason: String, job_failed: bool },
    /// Every task redeployed from checkpoint `from` (`None`: from scratch)
    /// with `restored_records` records of channel state.
    Restart {
        from: Option<CheckpointId>,
        restored_records: u64,
    },
    /// The coordinator triggered checkpoint `id`.
    Triggered { id: CheckpointId },
}
// --- trace: end ---

/// One entry of a run's fault timeline: a fault that fired or took no
/// effect, a failover, a restart and what it restored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FaultEvent {
    pub time_ns: u64,
    pub what: String,
}

/// The most entries a fault timeline keeps; `RunOutput::fault_events_dropped`
/// counts the rest.
pub const MAX_FAULT_EVENTS: usize = 1000;

/// Everything a run produced, for the checkers and the report.
/// One chain of operators as tasks: its operators and, per operator, the
/// state bytes of its subtasks in the latest completed checkpoint (summed).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TaskReport {
    /// `"source->map"`.
    pub name: String,
    pub subtasks: u32,
    pub operators: Vec<String>,
    pub state_bytes: Vec<u64>,
}

pub struct RunOutput {
    pub outcome: Outcome,
    pub events: u64,
    pub end_time: SimTime,
    pub fingerprint: String,
    pub counters: Counters,
    pub store: ExternalStore,
    /// Final keyed state per operator (merged over subtasks), for finished runs.
    pub keyed_state: BTreeMap<u32, BTreeMap<u64, i64>>,
    /// What the run saw that the checks judge (`sim/check/`).
    pub evidence: Evidence,
    pub checkpoint_stats: Vec<CheckpointStats>,
    pub completed_ids: Vec<CheckpointId>,
    /// The job's tasks, one entry per chain, with state per operator.
    pub tasks: Vec<TaskReport>,
    pub aborted_ids: Vec<CheckpointId>,
    pub trace: Vec<TraceEntry>,
    // --- trace: begin ---
    /// Timeline facts for the Perfetto trace (`record_trace` only).
    pub timeline: Vec<TimelineMark>,
    /// The configuration the run was made with.
    pub config: RunConfig,
    // --- trace: end ---
    pub crash_plan: Vec<CrashSpec>,
    /// What the faults did, in time order (always recorded), then the
    /// planned faults that never fired; at most [`MAX_FAULT_EVENTS`].
    pub fault_timeline: Vec<FaultEvent>,
    pub fault_events_dropped: u64,
    pub order_insensitive: bool,
    /// The guarantee the run must keep (the scenario's, weakened to what
    /// the algorithm promises).
    pub expected: Guarantee,
    /// End of the fault phase: no fault is planned after it.
    pub fault_phase_end: SimTime,
    /// When the last source ran out of input.
    pub input_end: SimTime,
    /// When a sink last finished taking in records: the denominator of
    /// throughput (records the sinks took in per virtual second).
    pub sink_end: SimTime,
    /// Per failure: from the failure until the restarted job has
    /// re-emitted, in every source partition, everything emitted before it
    /// was stopped (recovery time; `world/recovery_time.rs`). Never less
    /// than detection plus the restart delay.
    pub recovery_ns: Vec<u64>,
    /// Per restore from checkpoint files (a failover's, a region's, a job
    /// started from a snapshot): how long its slowest task's thread read
    /// and replayed its state before running (`World::restore_time`).
    pub restore_ns: Vec<u64>,
    /// Savepoints taken and the checkpoint retained on cancel, with
    /// `JobOptions::keep_snapshots`.
    pub snapshots: Vec<SnapshotOut>,
    /// After a stop-with-savepoint: per global source partition, the offset
    /// the stopped source had reached; everything below it must be
    /// committed, except what the savepoint holds as in-flight records
    /// (`chandy-lamport` savepoints carry channel state).
    pub complete_below: Option<Vec<u64>>,
    pub complete_exempt: Vec<crate::model::Lineage>,
    /// Every savepoint request and what became of it.
    pub savepoints: Vec<SavepointReport>,
    /// What the run was asked to do but did not (faults that never took
    /// effect, mutants that never fired, failed savepoints, a late cancel).
    pub warnings: Vec<Warning>,
    /// Per task, its effective schedule (`runtime::schedule`), which the
    /// oracle replays; `None` for a job started from a snapshot file.
    pub schedule: Option<Vec<Vec<Step>>>,
    /// Every global failover of a running job (time, reason), for the
    /// failure-accounting check.
    pub failovers: Vec<(u64, String)>,
    /// The scenario's `tolerable_failures`.
    pub tolerable_failures: u32,
    /// Every restart, global or of a region, in order: what the oracle's
    /// examples name as the replay that wrote a record again.
    pub restarts: Vec<RestartNote>,
    /// The most checkpoints the completed-checkpoint store held, and the
    /// first completion that left it holding more than `retained`.
    pub retained_peak: usize,
    pub retained_over: Option<CheckpointId>,
    /// Checkpoints the store subsumed.
    pub subsumed: u64,
    /// Inputs held on purpose (blocked by an alignment, a paused source):
    /// how many, and the long ones whole.
    pub holds: Holds,
    /// Every crash of a task that took effect, in order, where its task was
    /// (what `flink-export` injects into a real job).
    pub crash_points: Vec<CrashPoint>,
}

/// What the runtime saw that the checks judge (`sim/check/`): facts, never
/// verdicts. Each check reads the part it needs and decides; the runtime
/// records facts cheaply on its hot paths (counts and the first few
/// examples) and never reads them back.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Each task's name, by task id, for the checks' messages.
    pub task_names: Vec<String>,
    /// Keyed reads over hash edges that reached a subtask that does not
    /// own their key group (the routing check).
    pub misrouted: Misrouted,
    /// Every point at which a sink task owed commits (a notification of a
    /// completed checkpoint, a restore, a committable for a checkpoint it
    /// knew complete), with what it owed and what was still pre-committed
    /// after it (the late-commit check).
    pub commits_due: Vec<CommitDue>,
    /// Buffers receivers read out of their channel's order (the
    /// channel-order check).
    pub channel_order: ChannelOrder,
    /// Every completed checkpoint's and savepoint's cut, in completion
    /// order (the consistent-cut check).
    pub cuts: Vec<super::cut_evidence::CompletedCut>,
    /// Each channel's name, by channel id, for the checks' messages.
    pub channel_names: Vec<String>,
    /// Mails still queued when their task's thread started a second default
    /// action after they were put, and the most mails queued at a task at
    /// once (the resources check).
    pub mails: MailWaits,
    /// Watermarks emitted, any that went back, and each task's at the end
    /// (the watermarks check).
    pub watermarks: crate::runtime::watermarks::WatermarkEvidence,
    /// Timers that fired in effect, and processing-time timers past due
    /// (the timers check).
    pub timers: crate::runtime::timers::TimerEvidence,
    /// Tasks that ended their data and had not exited when the run ended,
    /// each with what it still waited for (the finishing check).
    pub not_exited: Vec<String>,
    /// The checkpoints still pending when the run ended, each with what it
    /// waited for (the liveness check's account of a job that did not
    /// finish).
    pub pending_at_end: Vec<String>,
    /// Buffers of records a task read after the end of its input and
    /// dropped (Flink's `FinishedDataOutput`): when, and what (the
    /// finishing check).
    pub dropped_after_end_of_data: Vec<(u64, String)>,
    /// Operators whose task exited (not for a stop-with-savepoint, whose
    /// savepoint keeps it) holding work nothing will finish: when, and
    /// what (the finishing check).
    pub held_at_exit: Vec<(u64, String)>,
    /// The checkpoint storage's files: findings and counts (the
    /// checkpoint-files check).
    pub storage: crate::runtime::storage::StorageEvidence,
    /// Failures the job's own operators raised (an exception out of an
    /// operator: a log sink's write or commit refused), the first ten:
    /// when, and the task's message (the liveness check).
    pub operator_failures: Vec<(u64, String)>,
    /// Transactions of the log's sinks open when they should not be: each
    /// one's first sighting (the open-transactions check).
    pub log_open: Vec<StaleTxn>,
    /// Broken promises the runtime still finds itself while it runs (the
    /// protocol facts; the consistent cut of the uncoordinated families'
    /// recovery lines), in time order.
    pub violations: Vec<Violation>,
}

/// A transaction of a log sink found open where nothing will end it: when
/// a checkpoint of a later attempt completed (the task that opened it was
/// restarted), or when the job finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaleTxn {
    pub time_ns: u64,
    /// The completed checkpoint (`None`: the job finished).
    pub checkpoint: Option<u64>,
    pub transactional_id: String,
    pub epoch: u16,
    /// The sink operator's name, subtask and the attempt that opened it.
    pub sink: String,
    pub subtask: u32,
    pub attempt: u32,
    pub started_ns: Option<u64>,
    pub timeout_ns: u64,
    /// Per partition it stalls: partition, last stable offset, high watermark.
    pub stalled: Vec<(u32, u64, u64)>,
}

/// How long mails waited in the task mailboxes, in default actions (steps)
/// of their task's thread: Flink's `MailboxProcessor` runs every queued
/// mail between two default actions, so none waits through a whole one.
#[derive(Clone, Debug, Default)]
pub struct MailWaits {
    /// The most mails queued at one task at once.
    pub peak: usize,
    /// Steps that started with a mail queued since before the last step.
    pub overdue: u64,
    /// The first [`MailWaits::KEPT`] of them.
    pub first: Vec<OverdueMail>,
}

/// A step of task `task` started at `time_ns` while `mail` (put at
/// `queued_ns`) was still queued, `steps` step starts after it was put,
/// with `queued` mails in the mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverdueMail {
    pub time_ns: u64,
    pub task: TaskId,
    pub mail: String,
    pub queued_ns: u64,
    pub steps: u64,
    pub queued: usize,
}

impl MailWaits {
    /// Examples kept: the check names at most this many.
    pub const KEPT: usize = 5;
}

/// Misrouted keyed reads: how many, and the first [`Misrouted::KEPT`].
#[derive(Clone, Debug, Default)]
pub struct Misrouted {
    pub count: u64,
    pub first: Vec<MisroutedRead>,
}

impl Misrouted {
    /// Examples kept: the check names at most this many.
    pub const KEPT: usize = 5;

    /// Notes a misrouted read; cheap once enough examples are kept.
    pub fn note(&mut self, read: impl FnOnce() -> MisroutedRead) {
        self.count += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(read());
        }
    }
}

/// A keyed record a task read although its key group is not among the key
/// groups `[owned.0, owned.1)` the task owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MisroutedRead {
    pub time_ns: u64,
    pub task: TaskId,
    pub key: u64,
    pub owned: (u32, u32),
    /// The task's operator's parallelism at the time.
    pub parallelism: u32,
}

/// What receivers read out of their channel's order: a buffer whose first
/// sequence number was not the next one the receiver had to read (records
/// of a channel are read in the order they were sent; after a restore, the
/// channel's restored in-flight records hold the numbers below its new
/// data, so they come first). Counts and the first
/// [`ChannelOrder::KEPT`] examples.
#[derive(Clone, Debug, Default)]
pub struct ChannelOrder {
    /// Records whose order was checked.
    pub checked: u64,
    /// Buffers read out of order.
    pub breaks: u64,
    pub first: Vec<OrderBreak>,
}

/// A buffer read out of order: on `channel`, at `time_ns`, the receiver
/// expected sequence number `expected` and read `got` (`records` of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderBreak {
    pub time_ns: u64,
    pub channel: ChannelId,
    pub expected: u64,
    pub got: u64,
    pub records: u64,
}

impl ChannelOrder {
    /// Examples kept: the check names at most this many.
    pub const KEPT: usize = 5;

    /// The receiver of `channel`, having read `expected` records of it,
    /// reads `records` records from sequence number `got`.
    #[inline]
    pub fn read(
        &mut self,
        now: SimTime,
        channel: ChannelId,
        expected: u64,
        got: u64,
        records: u64,
    ) {
        self.checked += records;
        if got != expected {
            self.breaks += 1;
            if self.first.len() < Self::KEPT {
                self.first.push(OrderBreak {
                    time_ns: now.0,
                    channel,
                    expected,
                    got,
                    records,
                });
            }
        }
    }
}

/// Why a sink task owed commits at a point of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DueCause {
    /// It was notified that `checkpoint` completed: everything pre-committed
    /// for it or an earlier checkpoint is due (Flink's 2PC contract).
    Notified,
    /// It restored `checkpoint`, which completed: the transactions its
    /// snapshot of that checkpoint held pre-committed are due at the
    /// restore (`recoverAndCommit`).
    Restored,
}

/// A point at which sink task `task` owed commits: why, the checkpoint
/// that made them due, how many transactions were due, and those (each
/// with the checkpoint it was pre-committed for) still only pre-committed
/// right after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitDue {
    pub time_ns: u64,
    pub task: TaskId,
    pub cause: DueCause,
    pub checkpoint: CheckpointId,
    pub due: u32,
    pub precommitted: Vec<(TxnId, u64)>,
}

/// Where a crashed task was: the head operator of its chain, its subtask,
/// how many times it had been redeployed, and the records it had taken
/// (read, or emitted by a source) since.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CrashPoint {
    pub operator: u32,
    pub subtask: u32,
    pub attempt: u32,
    pub records: u64,
    pub time_ns: u64,
    /// Where the crash was relative to checkpoint events, latest first:
    /// the job's latest snapshot or notification before it (of whichever
    /// task had it), then the crashed task's own last ones in its attempt;
    /// so that a real run can crash at the same *event* (the same number
    /// of records after the same snapshot or notification) where its
    /// record counts differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<CrashAnchor>,
}

pub use super::schedule::{AnchorEvent, CrashAnchor};

/// The inputs tasks held on purpose in a run (aligned barriers blocking
/// their channels, `stop-the-world` pauses), for the progress check: how
/// many holds ended, and whole those longer than the run's bound.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holds {
    pub judged: u64,
    pub long: Vec<HoldSpan>,
}

impl Holds {
    /// The longest an aligned barrier may block a channel with no fault
    /// in the block, in ns: `[limits] blocked_input`. An alignment lasts
    /// until the checkpoint's last barrier arrives, however slow the other
    /// channels are: an expired checkpoint does not release it (Flink's
    /// barrier handlers do not either), so no timeout bounds it.
    pub fn blocked_bound(s: &crate::scenario::Scenario) -> u64 {
        s.limits.blocked_input.0
    }

    /// The longest a `stop-the-world` source may stay paused with no fault
    /// in the pause, in ns: the checkpoint timeout plus the slowest RPC
    /// (its completion or its abort, once it expired, resumes it).
    pub fn pause_bound(s: &crate::scenario::Scenario) -> u64 {
        let cp = &s.checkpoint;
        let rpc = cp.rpc_latency_max.0.max(cp.rpc_latency.0);
        cp.timeout.0.saturating_add(rpc)
    }
}

/// One long hold: what was held, since when and until when (`None`: still
/// held when the run ended).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldSpan {
    /// `"input 1 of map[0] (from source[2]), blocked"`, `"the source
    /// source[0], paused"`.
    pub what: String,
    /// A paused source (else a blocked channel).
    pub paused: bool,
    pub since_ns: u64,
    pub until_ns: Option<u64>,
}

/// One restart of a run: the attempt its tasks (and their transactions)
/// run under, when, and from which checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestartNote {
    pub attempt: u32,
    pub time_ns: u64,
    /// The checkpoint restored; `None`: from scratch.
    pub from: Option<CheckpointId>,
    /// Tasks restarted, when only a region was.
    pub region: Option<u32>,
}

impl RestartNote {
    /// "the restart at 140.233ms from checkpoint 6" (or "the region
    /// restart …", "… from scratch").
    pub fn describe(&self) -> String {
        let from = self.from.map_or("from scratch".to_string(), |id| {
            format!("from checkpoint {id}")
        });
        let what = match self.region {
            Some(_) => "region restart",
            None => "restart",
        };
        let at = crate::engine::SimDuration(self.time_ns);
        format!("the {what} at {at} {from}")
    }
}

/// Something the run was asked to do that did not happen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// `crash`, `worker-crash`, `coordinator-crash`, `latency-spike`,
    /// `partition`, `straggler`, `notification-loss`, `storage-failure`,
    /// `storage-slowness`, `savepoint`, `cancel`, `mutant` or `checkpoint`
    /// (every checkpoint expired).
    pub kind: String,
    pub message: String,
}
