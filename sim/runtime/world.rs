//! The event loop and everything it drives.

use super::coordinator::{
    ChannelState, Completed, Coordinator, Cut, Outcome as CpOutcome, Pending, TaskAck, TaskSnapshot,
};
use super::event::{Ev, Stamped, ANY_ATTEMPT};
use super::net::{Msg, Net};
use super::schedule::{ScheduleLog, Step};
use crate::check::Violation;
use crate::engine::{Fingerprint, SimDuration, SimRng, SimTime, Stream};
use crate::fault::{fault_phase_end, plan_crashes};
use crate::model::graph::OutputEdge;
use crate::model::operator::BuiltinFactory;
use crate::model::record::subtask_for_key;
use crate::model::record::subtask_for_key_group;
use crate::model::store::ExternalStore;
use crate::model::{
    ChannelId, CheckpointId, Context, ExecGraph, JobGraph, Operator, OperatorFactory, Record,
    SourcePoll, TaskId, Workload,
};
use crate::mutant::{fired, Mutant, Mutants};
use crate::protocol::{
    handler_for, AbortReason, Barrier, BarrierHandler, BarrierKind, HandlerAction, HandlerConfig,
};
use crate::scenario::{Algorithm, CrashSpec, Guarantee, Partitioning, SavepointSpec, Scenario};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

/// What a job starts from and how it ends besides running out of input:
/// the savepoint workflow (`docs/savepoints.md`).
#[derive(Clone, Default)]
pub struct JobOptions {
    /// Start from this snapshot (a savepoint or a retained checkpoint,
    /// already redistributed to the job's parallelism).
    pub restore: Option<Arc<Restore>>,
    /// Cancel the job at this virtual time (`run --cancel-at`).
    pub cancel_at: Option<SimTime>,
    /// Cancel the job as soon as a plain savepoint completes (`ckptsim savepoint`).
    pub cancel_after_savepoint: bool,
    /// A savepoint that fails is requested again at once (until one
    /// completes or the job ends), as a person at the CLI would.
    pub retry_failed_savepoints: bool,
    /// Keep the snapshots a run produces (savepoints, the checkpoint
    /// retained on cancel) in [`RunOutput::snapshots`].
    pub keep_snapshots: bool,
}

/// A snapshot to start a job from, per task of the job being started.
#[derive(Clone)]
pub struct Restore {
    /// The snapshot's checkpoint id: the job's checkpoint ids continue
    /// from `id + 1`, as Flink resets its counter on restore.
    pub id: CheckpointId,
    /// The restored job's generation (one more than the snapshot's): job
    /// attempts, and so sink transaction ids, start at `generation << 16`
    /// and never meet those of the job that took the snapshot.
    pub generation: u32,
    /// Per task: operator state and the in-flight records it replays first.
    pub states: Vec<Option<TaskSnapshot>>,
    /// The external store as the snapshot's job left it.
    pub store: ExternalStore,
}

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
}
mod faults;
mod recovery_time;
mod region;
mod warnings;
pub use warnings::Warning;

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

/// How to run a scenario.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub seed: u64,
    pub algorithm: Algorithm,
    pub mutants: Mutants,
    /// Keep every event (for `--check-determinism` diagnostics and traces).
    pub record_trace: bool,
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
            Outcome::Stalled => "stalled".to_string(),
            Outcome::Stopped(id) => format!("stopped with savepoint {id}"),
            Outcome::Cancelled => "cancelled".to_string(),
        }
    }
}

/// Reachability counters: evidence that the interesting situations happened.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    pub checkpoints_triggered: u64,
    pub checkpoints_completed: u64,
    pub checkpoints_aborted: u64,
    pub checkpoints_expired: u64,
    pub checkpoints_declined: u64,
    pub triggers_skipped: u64,
    pub snapshots: u64,
    pub alignments: u64,
    pub cancel_markers_sent: u64,
    /// Barriers of checkpoints the task already knew were aborted: no
    /// snapshot, a cancellation marker instead (FLINK-18238's path).
    pub aborted_checkpoints_skipped: u64,
    pub crashes: u64,
    pub crashes_ignored: u64,
    pub crashes_during_alignment: u64,
    pub crashes_between_snapshot_and_notify: u64,
    /// Crashes after the final checkpoint completed, while tasks were being
    /// notified of it and finishing (the failover restores the final
    /// checkpoint and must finish again without repeating its commits).
    pub crashes_after_final_checkpoint: u64,
    pub failovers: u64,
    pub recoveries: u64,
    pub recoveries_from_checkpoint: u64,
    pub recoveries_from_scratch: u64,
    pub recovery_commits: u64,
    pub records_emitted: u64,
    pub records_replayed: u64,
    pub records_processed: u64,
    pub backpressure_stalls: u64,
    pub notifications_ignored: u64,
    pub checkpoints_after_last_recovery: u64,
    /// Checkpoints completed after the fault phase ended (the quiet phase).
    pub checkpoints_in_quiet_phase: u64,
    /// Completed checkpoints that persisted in-flight data.
    pub unaligned_checkpoints: u64,
    /// In-flight records persisted in completed checkpoints.
    pub in_flight_records_persisted: u64,
    /// `aligned-timeout`: tasks that switched a checkpoint to unaligned.
    pub switched_to_unaligned: u64,
    /// Timeoutable barriers turned priority in an output queue.
    pub output_barriers_prioritized: u64,
    /// Crashes while an unaligned (or Chandy–Lamport) checkpoint was in
    /// progress with channel state already recorded.
    pub crashes_during_unaligned_capture: u64,
    /// Recoveries whose checkpoint carried channel state.
    pub recoveries_with_channel_state: u64,
    /// Records of channel state restored, and processed again after restore.
    pub in_flight_records_restored: u64,
    pub in_flight_records_replayed: u64,
    /// Periodic triggers skipped because restored in-flight data was still
    /// being replayed (Flink: tasks not yet RUNNING).
    pub triggers_skipped_recovering: u64,
    /// `stop-the-world`: times the sources were paused.
    pub sources_paused: u64,
    /// Channels whose receiver had consumed more than its sender had sent
    /// before the snapshots: duplicates after a restore (allowed only when
    /// the expected guarantee is at-least-once).
    pub cut_duplicates: u64,
    /// Savepoints triggered, completed and failed (aborted).
    pub savepoints_triggered: u64,
    pub savepoints_completed: u64,
    pub savepoints_failed: u64,
    /// Failures detected after a stop-with-savepoint completed (the job
    /// ends instead of failing over).
    pub failures_after_stop_savepoint: u64,
    /// Periodic triggers skipped because a savepoint was queued or pending.
    pub triggers_skipped_savepoint: u64,
    /// The job started from a savepoint or retained checkpoint.
    pub restored_from_snapshot: u64,
    /// Keyed records checked against their key group's owner.
    pub records_routing_checked: u64,
    // --- the richer fault model (`world/faults.rs`, docs/faults.md) ---
    /// The restart strategy gave up: the job failed.
    pub restart_strategy_gave_up: u64,
    /// Checkpoint-complete notifications lost on the way to a task.
    pub notifications_lost: u64,
    pub notifications_lost_during_alignment: u64,
    pub notifications_lost_during_recovery: u64,
    /// Tasks that committed a checkpoint whose notification they had lost,
    /// through a later notification (complete or, next, abort).
    pub lost_notifications_caught_up: u64,
    /// ... through an abort notification carrying the latest completed id.
    pub lost_notifications_caught_up_by_abort: u64,
    /// Checkpoint storage writes (task state or metadata) that failed.
    pub storage_write_failures: u64,
    pub storage_failures_during_alignment: u64,
    pub storage_failures_during_recovery: u64,
    /// Storage writes that were slow.
    pub storage_writes_slow: u64,
    /// Checkpoints aborted because a storage write failed.
    pub checkpoints_storage_failed: u64,
    pub coordinator_crashes: u64,
    pub coordinator_crashes_ignored: u64,
    pub coordinator_crashes_during_alignment: u64,
    pub coordinator_crashes_between_snapshot_and_notify: u64,
    pub coordinator_crashes_during_recovery: u64,
    /// New coordinators that took over.
    pub coordinator_failovers: u64,
    /// Completed checkpoints lost with the coordinator (`memory` storage).
    pub checkpoints_lost_with_coordinator: u64,
    pub coordinator_recoveries_from_checkpoint: u64,
    pub coordinator_recoveries_from_scratch: u64,
    /// Task steps taken while the task was a straggler.
    pub slow_task_steps: u64,
    /// Task crashes while some task had lost a notification it had not
    /// caught up with yet (its restore must commit it).
    pub crashes_with_lost_notification: u64,
    /// Task crashes while a straggler was slowed down.
    pub crashes_during_straggling: u64,
    /// Whole workers that crashed (every subtask on them at once).
    pub worker_crashes: u64,
    pub worker_crashes_ignored: u64,
    pub worker_crashes_during_alignment: u64,
    pub worker_crashes_between_snapshot_and_notify: u64,
    pub worker_crashes_during_recovery: u64,
    /// Subtasks killed by worker crashes.
    pub worker_tasks_killed: u64,
    /// Restarts that waited for a replacement worker.
    pub restarts_waiting_for_worker: u64,
    /// Latency spikes that began, and in which window.
    pub latency_spikes: u64,
    pub latency_spikes_during_alignment: u64,
    pub latency_spikes_between_snapshot_and_notify: u64,
    pub latency_spikes_during_recovery: u64,
    /// Messages a latency spike delayed.
    pub messages_delayed: u64,
    /// Network partitions that began, and in which window.
    pub partitions: u64,
    pub partitions_during_alignment: u64,
    pub partitions_between_snapshot_and_notify: u64,
    pub partitions_during_recovery: u64,
    /// Partitions longer than the heartbeat timeout: the cut-off side lost.
    pub partitions_lost: u64,
    /// Messages a partition held until it healed.
    pub messages_held: u64,
    /// Failovers that restarted only the failed task's region.
    pub region_failovers: u64,
    /// Tasks redeployed, over all restarts (global and region).
    pub tasks_restarted: u64,
    /// Faults while the coordinator was down (between its crash and its
    /// successor): task crashes (ignored: the tasks are cancelled), worker
    /// crashes and partitions (the restart waits for the workers).
    pub crashes_during_coordinator_failover: u64,
    pub worker_crashes_during_coordinator_failover: u64,
    pub partitions_during_coordinator_failover: u64,
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

/// Everything a run produced, for the checkers and the report.
pub struct RunOutput {
    pub outcome: Outcome,
    pub events: u64,
    pub end_time: SimTime,
    pub fingerprint: String,
    pub counters: Counters,
    pub store: ExternalStore,
    /// Final keyed state per operator (merged over subtasks), for finished runs.
    pub keyed_state: BTreeMap<u32, BTreeMap<u64, i64>>,
    /// Violations found while running (consistent cut, protocol).
    pub violations: Vec<Violation>,
    pub checkpoint_stats: Vec<super::coordinator::CheckpointStats>,
    pub completed_ids: Vec<CheckpointId>,
    pub aborted_ids: Vec<CheckpointId>,
    pub trace: Vec<TraceEntry>,
    // --- trace: begin ---
    /// Timeline facts for the Perfetto trace (`record_trace` only).
    pub timeline: Vec<TimelineMark>,
    /// The configuration the run was made with.
    pub config: RunConfig,
    // --- trace: end ---
    pub crash_plan: Vec<CrashSpec>,
    pub order_insensitive: bool,
    /// The guarantee the run must keep (the scenario's, weakened to what
    /// the algorithm promises).
    pub expected: Guarantee,
    /// End of the fault phase: no fault is planned after it.
    pub fault_phase_end: SimTime,
    /// When the last source ran out of input (throughput denominator).
    pub input_end: SimTime,
    /// Per failure: from the failure until the restarted job has
    /// re-emitted, in every source partition, everything emitted before it
    /// was stopped (recovery time; `world/recovery_time.rs`). Never less
    /// than detection plus the restart delay.
    pub recovery_ns: Vec<u64>,
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Dead,
    Finished,
    Cancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobStatus {
    Running,
    Restarting,
    Finished,
    Failed,
    Cancelled,
}

struct Task {
    operator_index: u32,
    subtask: u32,
    parallelism: u32,
    is_source: bool,
    operator: Box<dyn Operator>,
    handler: Box<dyn BarrierHandler>,
    status: Status,
    blocked: Vec<bool>,
    eod: Vec<bool>,
    eod_remaining: u32,
    input_ended: bool,
    last_checkpoint: CheckpointId,
    last_notified: CheckpointId,
    aborted: BTreeSet<CheckpointId>,
    rr: Vec<u32>,
    cost: u64,
    jitter: u64,
    /// Records taken from an input buffer per step (`step_quantum / cost`).
    step_records: usize,
    /// Time the current alignment's first barrier arrived.
    alignment_start: Option<(CheckpointId, SimTime)>,
    last_alignment_ns: u64,
    /// Checkpoint ids snapshotted (this attempt), for the protocol check.
    snapshotted: Vec<CheckpointId>,
    /// Per output channel (as in `task_outputs`): the edge may carry
    /// unaligned barriers (not forward/broadcast, receiver not forced to align).
    out_uc: Vec<bool>,
    /// A snapshot taken but not yet acknowledged (waiting for the last
    /// barrier or for held output barriers).
    pending_ack: Option<PartialAck>,
    /// Restored input channel state (per input), processed before any
    /// new input.
    recovered_input: VecDeque<(u32, Vec<Record>)>,
    /// `stop-the-world` source: paused for this checkpoint.
    paused: Option<CheckpointId>,
    /// Checkpoints this task started (this attempt) and those it closed on
    /// its outputs with their barrier or a cancellation marker, for the
    /// protocol check that every started checkpoint is closed downstream.
    started: BTreeSet<CheckpointId>,
    closed: BTreeSet<CheckpointId>,
    /// Source stopped by a stop-with-savepoint: emits nothing more.
    stopped: bool,
    /// Keyed operator whose every input is hash-partitioned: each record
    /// must belong to one of this subtask's key groups (routing check).
    check_routing: bool,
    /// The key groups this subtask owns: `start..end`.
    key_groups: (u32, u32),
    /// The job attempt this instance was deployed in: transactions it
    /// opened carry this attempt or a later one.
    deploy_attempt: u32,
    is_sink: bool,
    /// Checkpoints this instance declined, and those it sent cancellation
    /// markers for (the protocol check: at most once each).
    declined: BTreeSet<CheckpointId>,
    cancel_sent: BTreeSet<(CheckpointId, CancelCause)>,
}

/// Why a task sends a cancellation marker. Flink sends one of each for the
/// same checkpoint when a barrier of a checkpoint the coordinator already
/// aborted is skipped (`SubtaskCheckpointCoordinatorImpl.checkpointState`)
/// and the handler then aborts it too (`abortCheckpointOnBarrier`): the
/// protocol check allows one marker per cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CancelCause {
    Skipped,
    Declined,
}

/// A task's snapshot on its way to an acknowledgement.
struct PartialAck {
    id: CheckpointId,
    snapshot: TaskSnapshot,
    cut: Cut,
    input_ended: bool,
    start_delay_ns: u64,
    alignment_ns: u64,
    /// Not every input delivered the barrier yet (channel state still open).
    waiting_barriers: bool,
}

struct World<'a> {
    scenario: Arc<Scenario>,
    exec: ExecGraph,
    cfg: RunConfig,
    factory: &'a dyn OperatorFactory,
    tasks: Vec<Task>,
    /// Output channels of each task, flattened.
    task_outputs: Vec<Vec<ChannelId>>,
    net: Net,
    sched_rng: SimRng,
    store: ExternalStore,
    coord: Coordinator,
    job: JobStatus,
    failed_reason: Option<String>,
    restarts: u32,
    fp: Fingerprint,
    trace: Vec<TraceEntry>,
    timeline: Vec<TimelineMark>, // trace
    counters: Counters,
    violations: Vec<Violation>,
    crash_plan: Vec<CrashSpec>,
    /// Highest offset + 1 ever emitted per global partition.
    high_water: Vec<u64>,
    out: Vec<Record>,
    actions: Vec<HandlerAction>,
    ready: Vec<u32>,
    /// Per operator: an input edge is forward or broadcast (Flink forces
    /// such a node to align even with unaligned checkpoints).
    forced_aligned: Vec<bool>,
    /// Tasks without output channels (the drain reports of stop-the-world).
    sink_tasks: u32,
    /// Restored in-flight records not yet processed again.
    recovery_pending: u64,
    /// Per channel: restored output-state records still ahead in line.
    recovered_out_left: Vec<u64>,
    expected: Guarantee,
    fault_phase_end: SimTime,
    input_end: SimTime,
    /// The crash a recovery started from, until sources are past it.
    recovering_since: Option<SimTime>,
    recovery_ns: Vec<u64>,
    /// The progress a recovery must regain (`world/recovery_time.rs`).
    recovery: recovery_time::RecoveryClock,
    job_opts: JobOptions,
    /// Savepoint requests not yet triggered, in time order.
    savepoint_queue: VecDeque<SavepointSpec>,
    /// The request (index into `savepoint_reports`) of each queued entry.
    savepoint_queue_request: VecDeque<usize>,
    /// Per savepoint request, what became of it.
    savepoint_reports: Vec<SavepointReport>,
    /// The request each triggered savepoint id belongs to.
    savepoint_request_of: BTreeMap<CheckpointId, usize>,
    /// A retry of the queued savepoint is scheduled.
    savepoint_retry: bool,
    /// Savepoint ids and their requests (for barrier kinds and completion).
    savepoints: BTreeMap<CheckpointId, SavepointSpec>,
    /// A stop-with-savepoint completed: the job is finishing.
    stopped_with: Option<CheckpointId>,
    snapshots: Vec<SnapshotOut>,
    /// Per operator: keyed with only hash inputs (see `Task::check_routing`).
    routed_by_key: Vec<bool>,
    complete_below: Option<Vec<u64>>,
    complete_exempt: Vec<crate::model::Lineage>,
    /// The richer fault model's state (`world/faults.rs`).
    fx: faults::FaultState,
    /// What became of each planned fault (`world/warnings.rs`).
    fx_log: warnings::FiredLog,
    /// Every task's schedule, for the oracle's replay (`runtime::schedule`).
    schedule: ScheduleLog,
    /// Every global failover of a running job: time and reason.
    failovers: Vec<(u64, String)>,
    /// The job started from a snapshot of another run: its tasks' history
    /// before the snapshot is unknown, so the schedule is not returned.
    schedule_partial: bool,
}

/// Runs a scenario with the built-in operators (no checks; see
/// `crate::harness` for a checked run).
pub fn run(scenario: &Scenario, cfg: &RunConfig) -> RunOutput {
    let scenario = Arc::new(scenario.clone());
    let workload = Arc::new(Workload::generate(&scenario, cfg.seed));
    let factory = BuiltinFactory::new(scenario.clone(), workload.clone());
    run_with(scenario, workload.partition_count(), &factory, cfg)
}

/// Runs a scenario whose operators come from `factory` (user-defined operators).
pub fn run_with(
    scenario: Arc<Scenario>,
    partitions: usize,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
) -> RunOutput {
    run_job(scenario, partitions, factory, cfg, &JobOptions::default())
}

/// Runs a scenario as a job started (or not) from a snapshot, with the
/// savepoint workflow's options.
pub fn run_job(
    scenario: Arc<Scenario>,
    partitions: usize,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
    job: &JobOptions,
) -> RunOutput {
    let mut w = World::new(scenario, partitions, factory, cfg.clone(), job.clone());
    w.main_loop()
}

/// Time from a task's snapshot until its ack reaches the coordinator: the
/// state write (latency + size / bandwidth of the configured storage; with
/// `memory` the state travels inside the ack) plus the ack RPC.
fn storage_delay(s: &Scenario, bytes: u64) -> SimDuration {
    let c = &s.checkpoint;
    let transfer = bytes as u128 * 1_000_000_000u128 / u128::from(c.storage_bytes_per_sec.max(1));
    let transfer = u64::try_from(transfer).unwrap_or(u64::MAX);
    SimDuration(
        c.storage_latency
            .0
            .saturating_add(transfer)
            .saturating_add(c.rpc_latency.0),
    )
}

impl<'a> World<'a> {
    fn new(
        scenario: Arc<Scenario>,
        partitions: usize,
        factory: &'a dyn OperatorFactory,
        cfg: RunConfig,
        job_opts: JobOptions,
    ) -> World<'a> {
        let job = JobGraph::build(&scenario);
        let exec = ExecGraph::build(&scenario, &job);
        let n = &scenario.network;
        let mut net = Net::new(
            exec.channels
                .iter()
                .map(|c| (c.from, c.to, c.input_index))
                .collect(),
            exec.tasks.len(),
            SimRng::new(cfg.seed, Stream::Network),
            n.buffer_records,
            n.buffer_credits,
            n.output_buffers,
            (n.latency_min, n.latency_max),
            n.flush_timeout,
        );
        net.priority_barriers = cfg.mutants.has(Mutant::AlignedPriorityBarrier);
        let task_outputs = exec
            .tasks
            .iter()
            .map(|t| {
                t.outputs
                    .iter()
                    .flat_map(|o| o.channels.iter().copied())
                    .collect()
            })
            .collect();
        let crash_plan = plan_crashes(&scenario, cfg.seed);
        let fault_phase_end = fault_phase_end(&crash_plan);
        let mut forced_aligned = vec![false; scenario.operators.len()];
        for e in &scenario.edges {
            if matches!(
                e.partitioning,
                Partitioning::Forward | Partitioning::Broadcast
            ) {
                forced_aligned[e.to.0 as usize] = true;
            }
        }
        let routed_by_key = (0..scenario.operators.len())
            .map(|i| {
                let mut inputs = scenario.edges.iter().filter(|e| e.to.0 as usize == i);
                scenario.operators[i].kind.is_keyed()
                    && inputs.all(|e| e.partitioning == Partitioning::Hash)
            })
            .collect();
        let sink_tasks = exec.tasks.iter().filter(|t| t.outputs.is_empty()).count() as u32;
        let nch = exec.channels.len();
        let expected = scenario.expected_guarantee(cfg.algorithm);
        let fx = faults::FaultState::new(&scenario, cfg.seed, &exec);
        let f = &scenario.faults;
        let fx_log = warnings::FiredLog::new(
            crash_plan.len(),
            fx.worker_plan_len(),
            fx.coordinator_plan.len(),
            f.latency_spikes.len() + f.partitions.len(),
            f.slow_tasks.len(),
        );
        crate::mutant::reset_fired();
        let mut w = World {
            fx,
            fx_log,
            schedule: ScheduleLog::new(exec.tasks.len()),
            failovers: Vec::new(),
            schedule_partial: false,
            forced_aligned,
            sink_tasks,
            recovery_pending: 0,
            recovered_out_left: vec![0; nch],
            expected,
            fault_phase_end,
            input_end: SimTime::ZERO,
            recovering_since: None,
            recovery_ns: Vec::new(),
            recovery: recovery_time::RecoveryClock::new(partitions),
            savepoint_queue: scenario.savepoints.iter().cloned().collect(),
            savepoint_queue_request: (0..scenario.savepoints.len()).collect(),
            savepoint_reports: scenario
                .savepoints
                .iter()
                .map(|sp| SavepointReport {
                    requested_at_ns: sp.at.0,
                    stop: sp.stop,
                    drain: sp.drain,
                    attempts: Vec::new(),
                    completed: None,
                    failure: None,
                })
                .collect(),
            savepoint_request_of: BTreeMap::new(),
            savepoint_retry: false,
            savepoints: BTreeMap::new(),
            stopped_with: None,
            snapshots: Vec::new(),
            routed_by_key,
            complete_below: None,
            complete_exempt: Vec::new(),
            job_opts,
            coord: Coordinator::new(scenario.checkpoint.retained),
            tasks: Vec::new(),
            task_outputs,
            net,
            sched_rng: SimRng::new(cfg.seed, Stream::Scheduling),
            store: ExternalStore::default(),
            job: JobStatus::Running,
            failed_reason: None,
            restarts: 0,
            fp: Fingerprint::default(),
            trace: Vec::new(),
            timeline: Vec::new(), // trace
            counters: Counters::default(),
            violations: Vec::new(),
            crash_plan,
            high_water: vec![0; partitions],
            out: Vec::with_capacity(64),
            actions: Vec::with_capacity(8),
            ready: Vec::with_capacity(16),
            scenario,
            exec,
            cfg,
            factory,
        };
        w.tasks = (0..w.exec.tasks.len() as TaskId)
            .map(|t| w.fresh_task(t))
            .collect();
        w
    }

    fn fresh_task(&self, t: TaskId) -> Task {
        let info = &self.exec.tasks[t as usize];
        let spec = self.scenario.op(info.operator);
        let inputs = info.inputs.len() as u32;
        let mut out_uc = Vec::new();
        for o in &info.outputs {
            let uc = !matches!(
                o.partitioning,
                Partitioning::Forward | Partitioning::Broadcast
            );
            for &ch in &o.channels {
                let to = self.exec.channels[ch as usize].to;
                let to_op = self.exec.tasks[to as usize].operator.0 as usize;
                out_uc.push(uc && !self.forced_aligned[to_op]);
            }
        }
        Task {
            operator_index: info.operator.0,
            subtask: info.subtask,
            parallelism: spec.parallelism,
            is_source: spec.kind.is_source(),
            operator: self.factory.create(info.operator.0, info.subtask),
            handler: handler_for(
                self.cfg.algorithm,
                HandlerConfig {
                    inputs,
                    forced_aligned: self.forced_aligned[info.operator.0 as usize],
                    alignment_timeout: self.scenario.checkpoint.alignment_timeout,
                    mutants: self.cfg.mutants,
                },
            ),
            status: Status::Running,
            blocked: vec![false; inputs as usize],
            eod: vec![false; inputs as usize],
            eod_remaining: inputs,
            input_ended: false,
            last_checkpoint: 0,
            last_notified: 0,
            aborted: BTreeSet::new(),
            rr: vec![info.subtask; info.outputs.len()],
            cost: spec.cost.0,
            jitter: spec.cost_jitter.0,
            step_records: match spec.cost.0 {
                0 => usize::MAX,
                c => (self.scenario.network.step_quantum.0 / c).max(1) as usize,
            },
            alignment_start: None,
            last_alignment_ns: 0,
            snapshotted: Vec::new(),
            out_uc,
            pending_ack: None,
            recovered_input: VecDeque::new(),
            paused: None,
            started: BTreeSet::new(),
            closed: BTreeSet::new(),
            stopped: false,
            check_routing: self.routed_by_key[info.operator.0 as usize],
            key_groups: crate::model::record::key_group_range(
                info.subtask,
                spec.parallelism,
                self.scenario.max_parallelism,
            ),
            deploy_attempt: self.net.attempt,
            is_sink: spec.kind.is_sink(),
            declined: BTreeSet::new(),
            cancel_sent: BTreeSet::new(),
        }
    }

    fn now(&self) -> SimTime {
        self.net.now
    }

    fn schedule_any(&mut self, at: SimTime, ev: Ev) {
        self.net.queue.push(
            at,
            Stamped {
                attempt: ANY_ATTEMPT,
                ev,
            },
        );
    }

    fn violation(&mut self, check: &'static str, message: String) {
        let time_ns = self.now().0;
        self.violations.push(Violation {
            check,
            time_ns,
            message,
        });
    }

    // --- trace: begin ---
    /// Records a timeline fact (`record_trace` only; one branch otherwise).
    #[inline]
    fn mark(&mut self, what: impl FnOnce() -> Timeline) {
        if self.cfg.record_trace {
            let time_ns = self.net.now.0;
            let what = what();
            self.timeline.push(TimelineMark { time_ns, what });
        }
    }
    // --- trace: end ---

    // ------------------------------------------------------------ main loop

    fn main_loop(&mut self) -> RunOutput {
        if let Some(r) = self.job_opts.restore.clone() {
            self.start_from(&r);
        }
        for at in self
            .savepoint_queue
            .iter()
            .map(|s| s.at)
            .collect::<Vec<_>>()
        {
            self.schedule_any(at, Ev::SavepointDue);
        }
        if let Some(at) = self.job_opts.cancel_at.or(self.scenario.cancel_at) {
            self.schedule_any(at, Ev::Cancel);
        }
        let cp = &self.scenario.checkpoint;
        if cp.interval.is_some() && self.cfg.algorithm != Algorithm::None {
            let first = SimTime(cp.first_delay.0);
            self.schedule_any(first, Ev::PeriodicTrigger { generation: 0 });
        }
        for (i, c) in self.crash_plan.clone().iter().enumerate() {
            self.schedule_any(c.at, Ev::Crash { index: i as u32 });
        }
        self.schedule_planned_faults();
        for t in 0..self.tasks.len() as TaskId {
            self.net.poke(t);
        }
        let limits = self.scenario.limits.clone();
        let mut events: u64 = 0;
        let outcome = loop {
            if self.job == JobStatus::Finished {
                match self.stopped_with {
                    Some(id) => break Outcome::Stopped(id),
                    None => break Outcome::Finished,
                }
            }
            if self.job == JobStatus::Cancelled {
                break Outcome::Cancelled;
            }
            if self.job == JobStatus::Failed {
                break Outcome::JobFailed(self.failed_reason.clone().unwrap_or_default());
            }
            let Some((time, stamped)) = self.net.queue.pop() else {
                break Outcome::Stalled;
            };
            if time > limits.max_time {
                self.net.now = limits.max_time;
                break Outcome::TimeLimit;
            }
            if events >= limits.max_events {
                break Outcome::EventLimit;
            }
            debug_assert!(time >= self.net.now, "time went backwards");
            self.net.now = time;
            if stamped.attempt != ANY_ATTEMPT && self.is_stale(&stamped) {
                continue;
            }
            events += 1;
            let (tag, a, b) = stamped.ev.encode();
            self.fp.event(time.0, tag, a, b);
            if self.cfg.record_trace {
                self.trace.push(TraceEntry {
                    index: events - 1,
                    time_ns: time.0,
                    event: stamped.ev.name(),
                    a,
                    b,
                    attempt: self.net.attempt, // trace
                    ev: stamped.ev,            // trace
                });
            }
            self.dispatch(stamped.ev);
            while let Some(t) = self.net.released.pop() {
                if self.tasks[t as usize].status == Status::Running {
                    self.maybe_ack(t);
                }
            }
            if !self.net.announced.is_empty() {
                self.announce();
            }
        };
        self.finish(outcome, events)
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Wake { task } => self.wake(task),
            Ev::Deliver { ch } => self.net.deliver(ch),
            Ev::Flush { task } => self.flush(task),
            Ev::PeriodicTrigger { generation } => self.periodic_trigger(generation),
            Ev::TriggerSource { task, barrier } => self.trigger_source(task, barrier),
            Ev::Ack { task, id } => self.ack(task, id),
            Ev::Decline { id, .. } => {
                if self.coord.pending.contains_key(&id) {
                    self.counters.checkpoints_declined += 1;
                    self.abort_pending(id, CpOutcome::Declined);
                }
            }
            Ev::CheckpointTimeout { id } => {
                if self.coord.pending.contains_key(&id) {
                    self.counters.checkpoints_expired += 1;
                    self.abort_pending(id, CpOutcome::Expired);
                    // Savepoint failures never count (Flink: JM-side ones).
                    if !self.savepoints.contains_key(&id) {
                        self.count_failure(id);
                    }
                }
            }
            Ev::Finalized { id } => self.finalized(id),
            Ev::NotifyComplete { task, id } => self.notify_complete(task, id),
            Ev::NotifyAborted {
                task,
                id,
                latest_completed,
            } => self.notify_aborted(task, id, latest_completed),
            Ev::Crash { index } => {
                self.note_crash_event();
                self.crash(index);
            }
            Ev::FailureDetected { task } => {
                if self.region_failover(task) {
                    return;
                }
                let name = self.exec.tasks[task as usize].name.clone();
                self.failover(format!("task {name} failed"));
            }
            Ev::Restart => self.restart(),
            Ev::AlignmentTimer { task, id } => {
                if self.tasks[task as usize].status == Status::Running {
                    let mut actions = std::mem::take(&mut self.actions);
                    self.tasks[task as usize].handler.on_timer(id, &mut actions);
                    self.apply_actions(task, &mut actions);
                    self.actions = actions;
                    // The switch may have turned queued barriers into
                    // priority events: the task reads them even when
                    // backpressured (Flink's mailbox runs the priority
                    // action), not when an output frees up.
                    self.net.poke(task);
                }
            }
            Ev::OutputTimeout { task, id } => self.output_timeout(task, id),
            Ev::Drained { id, .. } => self.drained(id),
            Ev::SnapshotTask { task, barrier } => {
                if self.tasks[task as usize].status == Status::Running {
                    self.checkpoint(task, barrier);
                    self.all_barriers(task, barrier.id);
                }
            }
            Ev::SavepointDue => self.try_savepoint(),
            Ev::Cancel => self.cancel(),
            Ev::SavepointDone { task, id } => {
                if self.tasks[task as usize].status == Status::Running {
                    self.resume_source(task, id);
                }
            }
            Ev::StorageWriteFailed { .. }
            | Ev::FinalizeFailed { .. }
            | Ev::CoordinatorCrash { .. }
            | Ev::CoordinatorRecovered
            | Ev::WorkerCrash { .. }
            | Ev::WorkerLost { .. }
            | Ev::NetworkFault { .. } => self.dispatch_fault(ev),
        }
    }

    // ------------------------------------------------------------ tasks

    fn ctx_parts(&mut self, t: TaskId) -> (&mut Task, Context<'_>) {
        let task = &mut self.tasks[t as usize];
        let ctx = Context {
            subtask: task.subtask,
            parallelism: task.parallelism,
            operator: task.operator_index,
            max_parallelism: self.scenario.max_parallelism,
            attempt: self.net.attempt,
            now: self.net.now,
            store: &mut self.store,
            out: &mut self.out,
            mutants: self.cfg.mutants,
        };
        (task, ctx)
    }

    fn wake(&mut self, t: TaskId) {
        let ti = t as usize;
        self.net.sched[ti].wake_pending = false;
        if self.tasks[ti].status != Status::Running {
            return;
        }
        if self.net.sched[ti].busy_until > self.net.now {
            // Woken early (an output drained while the task was still busy
            // with its last step): come back when the step is over.
            self.net.poke(t);
            return;
        }
        let backpressured = self.net.sched[ti].full_outputs > 0;
        if backpressured && !self.priority_input(ti) {
            self.counters.backpressure_stalls += 1;
            return;
        }
        if self.tasks[ti].is_source {
            self.source_step(t);
            return;
        }
        if backpressured {
            // Only priority events (unaligned barriers) get through.
        } else if let Some((input, buf)) = self.tasks[ti].recovered_input.pop_front() {
            // Restored input channel state goes first (Flink's
            // RecoveredInputChannel), before anything on the real channels.
            let n = buf.len() as u64;
            self.schedule.read(t, input, n);
            for &r in &buf {
                self.process_record(t, r);
            }
            self.counters.records_processed += n;
            self.counters.in_flight_records_replayed += n;
            self.recovery_pending -= n;
            self.busy(t, n, n);
            return;
        }
        loop {
            let task = &self.tasks[ti];
            let inputs = &self.exec.tasks[ti].inputs;
            // Priority events first (Flink processes them eagerly).
            let mut pick = None;
            for (i, &ch) in inputs.iter().enumerate() {
                if !task.blocked[i] && self.net.has_priority(ch) {
                    pick = Some(i as u32);
                    break;
                }
            }
            let pick = match pick {
                Some(p) => p,
                None if self.net.sched[ti].full_outputs > 0 => return,
                None => {
                    self.ready.clear();
                    for (i, &ch) in inputs.iter().enumerate() {
                        if !task.blocked[i] && !self.net.channels[ch as usize].in_queue.is_empty() {
                            self.ready.push(i as u32);
                        }
                    }
                    match self.ready.len() {
                        0 => return,
                        1 => self.ready[0],
                        n => self.ready[self.sched_rng.below(n as u64) as usize],
                    }
                }
            };
            let ch = inputs[pick as usize];
            let step = self.tasks[ti].step_records;
            let msg = self
                .net
                .take_input(ch, step)
                .expect("ready channel has input");
            match msg {
                Msg::Data { buf, .. } => {
                    let n = buf.len() as u64;
                    self.schedule.read(t, pick, n);
                    for &r in &buf {
                        self.process_record(t, r);
                    }
                    self.net.recycle(buf);
                    self.counters.records_processed += n;
                    let left = &mut self.recovered_out_left[ch as usize];
                    let mut replayed = 0; // trace
                    if *left > 0 {
                        let k = n.min(*left);
                        *left -= k;
                        self.recovery_pending -= k;
                        self.counters.in_flight_records_replayed += k;
                        replayed = k;
                    }
                    self.busy(t, n, replayed);
                    return;
                }
                Msg::Barrier(b) => {
                    self.mark(|| Timeline::BarrierRead {
                        task: t,
                        ch,
                        id: b.id,
                        kind: b.kind,
                    });
                    let mut actions = std::mem::take(&mut self.actions);
                    let now = self.net.now;
                    self.tasks[ti]
                        .handler
                        .on_barrier(pick, b, now, &mut actions);
                    self.apply_actions(t, &mut actions);
                    self.actions = actions;
                }
                Msg::Cancel(id) => {
                    self.mark(|| Timeline::CancelRead { task: t, ch, id });
                    let mut actions = std::mem::take(&mut self.actions);
                    self.tasks[ti].handler.on_cancel(pick, id, &mut actions);
                    self.apply_actions(t, &mut actions);
                    self.actions = actions;
                }
                Msg::EndOfData => {
                    let task = &mut self.tasks[ti];
                    if !task.eod[pick as usize] {
                        task.eod[pick as usize] = true;
                        task.eod_remaining -= 1;
                        if task.eod_remaining == 0 {
                            self.end_of_input(t);
                        }
                    }
                }
            }
            if self.tasks[ti].status != Status::Running {
                return;
            }
        }
    }

    /// Hands announced timeoutable barriers to their receivers' handlers.
    fn announce(&mut self) {
        let announced = std::mem::take(&mut self.net.announced);
        for &(ch, b) in &announced {
            let c = &self.exec.channels[ch as usize];
            let (t, input) = (c.to, c.input_index);
            if self.tasks[t as usize].status != Status::Running {
                continue;
            }
            let mut actions = std::mem::take(&mut self.actions);
            let now = self.net.now;
            self.tasks[t as usize]
                .handler
                .on_announcement(input, b, now, &mut actions);
            self.apply_actions(t, &mut actions);
            self.actions = actions;
            self.net.poke(t);
        }
        let mut announced = announced;
        announced.clear();
        if self.net.announced.is_empty() {
            self.net.announced = announced;
        }
    }

    /// A priority event waits on an unblocked input of a non-source task.
    fn priority_input(&self, ti: usize) -> bool {
        let task = &self.tasks[ti];
        !task.is_source
            && self.exec.tasks[ti]
                .inputs
                .iter()
                .enumerate()
                .any(|(i, &ch)| !task.blocked[i] && self.net.has_priority(ch))
    }

    /// The task is busy processing `n` records from now (`replayed` of them
    /// restored in-flight records, for the trace).
    fn busy(&mut self, t: TaskId, n: u64, replayed: u64) {
        let task = &self.tasks[t as usize];
        let mut cost = task.cost.saturating_mul(n);
        if task.jitter > 0 {
            cost = cost.saturating_add(self.sched_rng.below(task.jitter.saturating_add(1)));
        }
        let cost = self.straggle(t, cost);
        let s = &mut self.net.sched[t as usize];
        s.busy_until = self.net.now.plus(SimDuration(cost));
        let until_ns = s.busy_until.0;
        self.net.poke(t);
        self.mark(|| Timeline::Step {
            task: t,
            records: n,
            replayed,
            until_ns,
        });
    }

    fn process_record(&mut self, t: TaskId, r: Record) {
        if self.tasks[t as usize].check_routing {
            self.check_routing(t, r.key);
        }
        let (task, mut ctx) = self.ctx_parts(t);
        task.operator.process(r, &mut ctx);
        self.route_out(t);
    }

    /// Routing: a keyed record reached the subtask that owns its key group
    /// at the current parallelism (after a rescale too).
    fn check_routing(&mut self, t: TaskId, key: u64) {
        self.counters.records_routing_checked += 1;
        let task = &self.tasks[t as usize];
        let max_p = self.scenario.max_parallelism;
        let kg = crate::model::record::key_group(key, max_p);
        if kg < task.key_groups.0 || kg >= task.key_groups.1 {
            let owner = subtask_for_key_group(kg, task.parallelism, max_p);
            let n = self
                .violations
                .iter()
                .filter(|v| v.check == "routing")
                .count();
            if n < 5 {
                let name = self.exec.tasks[t as usize].name.clone();
                let p = task.parallelism;
                self.violation(
                    "routing",
                    format!("task {name} received key {key} of key group {kg}, which subtask {owner} owns at parallelism {p}"),
                );
            }
        }
    }

    /// Routes everything the operator emitted to the output channels.
    fn route_out(&mut self, t: TaskId) {
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        let max_p = self.scenario.max_parallelism;
        let outputs: &[OutputEdge] = &self.exec.tasks[t as usize].outputs;
        for (e, edge) in outputs.iter().enumerate() {
            for &r in &out {
                match edge.partitioning {
                    Partitioning::Forward => self.net.emit(edge.channels[0], r),
                    Partitioning::Hash => {
                        let p = edge.channels.len() as u32;
                        let s = subtask_for_key(r.key, p, max_p);
                        self.net.emit(edge.channels[s as usize], r);
                    }
                    Partitioning::Rebalance => {
                        let rr = &mut self.tasks[t as usize].rr[e];
                        let s = *rr as usize % edge.channels.len();
                        *rr = rr.wrapping_add(1);
                        self.net.emit(edge.channels[s], r);
                    }
                    Partitioning::Broadcast => {
                        for &ch in &edge.channels {
                            self.net.emit(ch, r);
                        }
                    }
                }
            }
        }
        out.clear();
        self.out = out;
    }

    fn source_step(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks[ti].input_ended || self.tasks[ti].paused.is_some() || self.tasks[ti].stopped {
            return;
        }
        let batch = self.net.buffer_records;
        let poll = {
            let (task, mut ctx) = self.ctx_parts(t);
            task.operator.poll_source(batch, &mut ctx)
        };
        match poll {
            SourcePoll::Emitted(n) => {
                self.schedule.emit(t, n as u64);
                for i in 0..self.out.len() {
                    let l = self.out[i].lineage;
                    if l.partition as usize >= self.high_water.len() {
                        self.bad_lineage(t, l);
                        continue;
                    }
                    let hw = &mut self.high_water[l.partition as usize];
                    if l.offset < *hw {
                        self.counters.records_replayed += 1;
                    } else {
                        *hw = l.offset + 1;
                    }
                    self.recovery_emitted(t, l.partition, l.offset);
                }
                self.counters.records_emitted += n as u64;
                self.route_out(t);
                self.busy(t, n as u64, 0);
            }
            SourcePoll::Exhausted | SourcePoll::NotASource => {
                self.recovery_source_exhausted(t);
                self.end_of_input(t)
            }
        }
    }

    /// A source emitted a record whose lineage names a partition the input
    /// does not have (a bug of a user's source).
    #[cold]
    fn bad_lineage(&mut self, t: TaskId, l: crate::model::Lineage) {
        if self
            .violations
            .iter()
            .filter(|v| v.check == "protocol")
            .count()
            < 5
        {
            let name = self.exec.tasks[t as usize].name.clone();
            self.violation(
                "protocol",
                format!(
                    "source {name} emitted a record of partition {} (offset {}), which the input does not have",
                    l.partition, l.offset
                ),
            );
        }
    }

    /// All input consumed: flush the operator and tell downstream.
    fn end_of_input(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks[ti].input_ended {
            return;
        }
        if !self.tasks[ti].is_source {
            self.schedule.push(t, Step::EndOfInput);
            let (task, mut ctx) = self.ctx_parts(t);
            task.operator.end_of_input(&mut ctx);
            self.route_out(t);
        }
        self.tasks[ti].input_ended = true;
        if self.tasks[ti].is_source {
            self.input_end = self.input_end.max(self.net.now);
        }
        let stopping = self
            .coord
            .pending
            .keys()
            .any(|id| self.savepoints.get(id).is_some_and(|sp| sp.stop));
        if self.cfg.algorithm == Algorithm::None
            && !stopping
            && self.tasks.iter().all(|t| t.input_ended)
        {
            // No checkpoints, so no final one: the job ends with its input
            // (a pending stop-with-savepoint is its final one: the tasks
            // finish when it completes).
            self.job = JobStatus::Finished;
        }
        self.mark(|| Timeline::InputEnded { task: t });
        for i in 0..self.task_outputs[ti].len() {
            let ch = self.task_outputs[ti][i];
            self.net.send_event(ch, Msg::EndOfData, false);
        }
    }

    fn flush(&mut self, t: TaskId) {
        self.net.sched[t as usize].flush_pending = false;
        if self.tasks[t as usize].status != Status::Running {
            return;
        }
        for i in 0..self.task_outputs[t as usize].len() {
            let ch = self.task_outputs[t as usize][i];
            self.net.ship_partial(ch);
        }
    }

    fn apply_actions(&mut self, t: TaskId, actions: &mut Vec<HandlerAction>) {
        let ti = t as usize;
        let late = self.cfg.mutants.has(Mutant::UnalignedLateSnapshot);
        // Mutant: a snapshot put off until the capture has started.
        let mut deferred: Option<Barrier> = None;
        for a in actions.drain(..) {
            if let HandlerAction::Block(i)
            | HandlerAction::Unblock(i)
            | HandlerAction::CaptureInput(_, i) = a
            {
                if i as usize >= self.exec.tasks[ti].inputs.len() {
                    // A handler naming an input the task does not have: a
                    // bug of the algorithm under test, not of the simulator.
                    let name = self.exec.tasks[ti].name.clone();
                    let n = self.exec.tasks[ti].inputs.len();
                    self.violation(
                        "protocol",
                        format!("the barrier handler of task {name} asked for {a:?}, but the task has {n} inputs"),
                    );
                    continue;
                }
            }
            if let Some(b) = deferred {
                if !matches!(a, HandlerAction::CaptureInput(..)) {
                    deferred = None;
                    self.late_snapshot(t, b);
                }
            }
            match a {
                HandlerAction::Block(i) => self.tasks[ti].blocked[i as usize] = true,
                HandlerAction::Unblock(i) => self.tasks[ti].blocked[i as usize] = false,
                HandlerAction::UnblockAll => {
                    self.tasks[ti].blocked.iter_mut().for_each(|b| *b = false)
                }
                HandlerAction::AlignmentStart(id) => {
                    self.tasks[ti].started.insert(id);
                    self.mark(|| Timeline::AlignmentStart { task: t, id });
                    self.tasks[ti].alignment_start = Some((id, self.net.now));
                    self.tasks[ti].last_alignment_ns = 0;
                    if self.tasks[ti].blocked.len() > 1 {
                        self.counters.alignments += 1;
                    }
                }
                HandlerAction::AlignmentEnd(id) => {
                    self.mark(|| Timeline::AlignmentEnd { task: t, id });
                    let task = &mut self.tasks[ti];
                    task.last_alignment_ns = match task.alignment_start {
                        Some((sid, start)) if sid == id => self.net.now.since(start).0,
                        _ => 0,
                    };
                }
                HandlerAction::Checkpoint(b) => {
                    if b.kind == BarrierKind::Unaligned
                        && self.cfg.algorithm == Algorithm::AlignedTimeout
                    {
                        self.counters.switched_to_unaligned += 1;
                    }
                    if late && b.kind == BarrierKind::Unaligned {
                        deferred = Some(b);
                    } else {
                        self.checkpoint(t, b);
                    }
                }
                HandlerAction::CaptureInput(id, i) => {
                    let ch = self.exec.tasks[ti].inputs[i as usize];
                    self.net.start_capture(ch, id);
                }
                HandlerAction::AllBarriers(id) => self.all_barriers(t, id),
                HandlerAction::ArmTimer(id, at) => {
                    let at = at.max(self.net.now);
                    self.net.schedule(at, Ev::AlignmentTimer { task: t, id });
                }
                HandlerAction::Abort(id, reason) => {
                    self.mark(|| Timeline::Declined {
                        task: t,
                        id,
                        reason,
                    });
                    for i in 0..self.exec.tasks[ti].inputs.len() {
                        let ch = self.exec.tasks[ti].inputs[i];
                        self.net.drop_capture(ch, id);
                    }
                    if self.tasks[ti]
                        .pending_ack
                        .as_ref()
                        .is_some_and(|p| p.id <= id)
                    {
                        self.tasks[ti].pending_ack = None;
                    }
                    self.decline(t, id, reason);
                }
                HandlerAction::Drained(b) => self.forward_drain_marker(t, b),
            }
        }
        if let Some(b) = deferred {
            self.late_snapshot(t, b);
        }
        // Mutant: acknowledge at the first barrier, captures still open.
        if self.cfg.mutants.has(Mutant::UnalignedAckAtFirstBarrier) {
            if let Some(p) = &self.tasks[ti].pending_ack {
                if p.waiting_barriers && !self.tasks[ti].is_source {
                    fired(Mutant::UnalignedAckAtFirstBarrier);
                    let id = p.id;
                    self.all_barriers(t, id);
                }
            }
        }
    }

    /// Mutant `unaligned-late-snapshot`: process one more queued buffer
    /// after the channel capture started, then snapshot.
    fn late_snapshot(&mut self, t: TaskId, b: Barrier) {
        let ti = t as usize;
        let inputs = &self.exec.tasks[ti].inputs;
        let next = inputs.iter().position(|&ch| {
            matches!(
                self.net.channels[ch as usize].in_queue.front(),
                Some(Msg::Data { .. })
            )
        });
        if let Some(i) = next {
            let ch = inputs[i];
            if let Some(Msg::Data { buf, .. }) = self.net.take_input(ch, usize::MAX) {
                fired(Mutant::UnalignedLateSnapshot);
                self.schedule.read(t, i as u32, buf.len() as u64);
                for &r in &buf {
                    self.process_record(t, r);
                }
                self.counters.records_processed += buf.len() as u64;
                self.net.recycle(buf);
            }
        }
        self.checkpoint(t, b);
    }

    /// The kind of barrier this task forwards for a checkpoint whose barrier
    /// arrived as `b` (before per-edge forced alignment).
    fn out_kind(&self, b: Barrier) -> BarrierKind {
        if self.savepoints.contains_key(&b.id) {
            return BarrierKind::Aligned; // savepoints are never unaligned
        }
        match self.cfg.algorithm {
            Algorithm::Unaligned => BarrierKind::Unaligned,
            Algorithm::AlignedTimeout if b.kind == BarrierKind::Unaligned => BarrierKind::Unaligned,
            Algorithm::AlignedTimeout => BarrierKind::Timeoutable,
            _ => BarrierKind::Aligned,
        }
    }

    /// The task-side checkpoint: snapshot the operator and forward the
    /// barrier, as one indivisible step on the task thread (Flink's
    /// `checkpointState`). An unaligned barrier overtakes the queued output,
    /// which becomes output channel state. The acknowledgement follows in
    /// [`World::maybe_ack`] once every input delivered the barrier.
    fn checkpoint(&mut self, t: TaskId, b: Barrier) {
        let ti = t as usize;
        if b.id <= self.tasks[ti].last_checkpoint {
            return; // out of order (aborted previously?)
        }
        self.tasks[ti].started.insert(b.id);
        if self.tasks[ti].aborted.remove(&b.id) {
            // The coordinator already aborted it: cancel downstream instead.
            self.counters.aborted_checkpoints_skipped += 1;
            self.broadcast_cancel(t, b.id, CancelCause::Skipped);
            return;
        }
        self.tasks[ti].last_checkpoint = b.id;
        if self.cfg.algorithm != Algorithm::StopTheWorld {
            self.tasks[ti].closed.insert(b.id);
        }
        if self.tasks[ti].snapshotted.contains(&b.id) {
            let name = self.exec.tasks[ti].name.clone();
            self.violation(
                "protocol",
                format!("task {name} snapshotted checkpoint {} twice", b.id),
            );
        }
        self.tasks[ti].snapshotted.push(b.id);
        for i in 0..self.task_outputs[ti].len() {
            let ch = self.task_outputs[ti][i];
            self.net.ship_partial(ch);
        }
        self.store.precommit_scope = Some(b.id);
        let state = {
            let (task, mut ctx) = self.ctx_parts(t);
            task.operator.snapshot(b.id, &mut ctx)
        };
        self.store.precommit_scope = None;
        self.schedule.push(t, Step::Snapshot(b.id));
        self.route_out(t); // snapshot() should emit nothing; route anything it did
        let info = &self.exec.tasks[ti];
        let cut = Cut {
            inputs: info
                .inputs
                .iter()
                .map(|&ch| (ch, self.net.channels[ch as usize].received))
                .collect(),
            outputs: self.task_outputs[ti]
                .iter()
                .map(|&ch| (ch, self.net.channels[ch as usize].sent))
                .collect(),
        };
        let mut snapshot = TaskSnapshot {
            state,
            log_pos: Some(self.schedule.pos(t)),
            ..TaskSnapshot::default()
        };
        // Stop-the-world forwards nothing: the drain markers went first.
        if self.cfg.algorithm != Algorithm::StopTheWorld {
            let kind = self.out_kind(b);
            for j in 0..self.task_outputs[ti].len() {
                let ch = self.task_outputs[ti][j];
                let kind = if self.tasks[ti].out_uc[j] {
                    kind
                } else if kind != BarrierKind::Aligned
                    && self.cfg.mutants.has(Mutant::PriorityOnForcedEdge)
                {
                    fired(Mutant::PriorityOnForcedEdge);
                    kind
                } else {
                    BarrierKind::Aligned // Flink's FORCED_ALIGNED edge
                };
                let out = Barrier { kind, ..b };
                match kind {
                    BarrierKind::Unaligned => {
                        let cap = self.net.send_priority_barrier(ch, out);
                        if !cap.records.is_empty() || cap.gap {
                            snapshot.outputs.push(ChannelState {
                                ch,
                                first_seq: cap.first_seq,
                                records: cap.records,
                                gap: cap.gap,
                            });
                        }
                    }
                    BarrierKind::Timeoutable => {
                        self.net.sched[ti].held_barriers += 1;
                        self.net.send_event(ch, Msg::Barrier(out), false);
                    }
                    BarrierKind::Aligned => {
                        let priority = self.net.priority_barriers;
                        if priority && !self.net.channels[ch as usize].out_queue.is_empty() {
                            fired(Mutant::AlignedPriorityBarrier);
                        }
                        self.net.send_event(ch, Msg::Barrier(out), priority);
                    }
                }
            }
        }
        self.counters.snapshots += 1;
        let state_bytes = snapshot.state.len() as u64; // trace
        self.mark(|| Timeline::Snapshot {
            task: t,
            id: b.id,
            kind: b.kind,
            state_bytes,
        });
        if self.net.sched[ti].held_barriers > 0 {
            let at = b
                .timestamp
                .plus(self.scenario.checkpoint.alignment_timeout)
                .max(self.net.now);
            self.net
                .schedule(at, Ev::OutputTimeout { task: t, id: b.id });
        }
        let task = &self.tasks[ti];
        let start = task
            .alignment_start
            .filter(|(id, _)| *id == b.id)
            .map(|(_, s)| s)
            .unwrap_or(self.net.now);
        self.tasks[ti].pending_ack = Some(PartialAck {
            id: b.id,
            snapshot,
            cut,
            input_ended: task.input_ended,
            start_delay_ns: start.since(b.timestamp).0,
            alignment_ns: 0,
            waiting_barriers: true,
        });
    }

    /// Every input delivered the barrier: close the input channel state.
    fn all_barriers(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        let drop_inflight = self.cfg.mutants.has(Mutant::UnalignedDropInflight);
        let pending = self.tasks[ti].pending_ack.as_mut().filter(|p| p.id == id);
        let inputs = &self.exec.tasks[ti].inputs;
        match pending {
            Some(p) => {
                for &ch in inputs {
                    let Some(cap) = self.net.take_capture(ch, id) else {
                        continue;
                    };
                    if (!cap.records.is_empty() || cap.gap) && drop_inflight {
                        fired(Mutant::UnalignedDropInflight);
                    } else if !cap.records.is_empty() || cap.gap {
                        p.snapshot.inputs.push(ChannelState {
                            ch,
                            first_seq: cap.first_seq,
                            records: cap.records,
                            gap: cap.gap,
                        });
                    }
                }
                p.waiting_barriers = false;
                let task = &self.tasks[ti];
                let alignment = match task.alignment_start {
                    Some((sid, _)) if sid == id => task.last_alignment_ns,
                    _ => 0,
                };
                if let Some(p) = self.tasks[ti].pending_ack.as_mut() {
                    p.alignment_ns = alignment;
                }
                self.maybe_ack(t);
            }
            None => {
                for &ch in inputs {
                    self.net.drop_capture(ch, id);
                }
            }
        }
    }

    /// Acknowledges the pending snapshot once every input delivered its
    /// barrier and no timeoutable barrier is held in an output queue; the
    /// ack reaches the coordinator after the state (and channel state) is
    /// written.
    fn maybe_ack(&mut self, t: TaskId) {
        let ti = t as usize;
        match &self.tasks[ti].pending_ack {
            Some(p) if !p.waiting_barriers && self.net.sched[ti].held_barriers == 0 => {}
            _ => return,
        }
        let Some(p) = self.tasks[ti].pending_ack.take() else {
            return;
        };
        let bytes = p.snapshot.state.len() as u64 + p.snapshot.in_flight_bytes();
        let delay = storage_delay(&self.scenario, bytes);
        // trace: what the snapshot wrote, and when its ack arrives.
        let (id, in_flight_bytes) = (p.id, p.snapshot.in_flight_bytes());
        let mut ack_at_ns = None;
        if let Some(pending) = self.coord.pending.get_mut(&p.id) {
            pending.acks[ti] = Some(TaskAck {
                snapshot: p.snapshot,
                cut: p.cut,
                input_ended: p.input_ended,
                start_delay_ns: p.start_delay_ns,
                alignment_ns: p.alignment_ns,
                arrived: false,
            });
            let at = self.schedule_ack(t, p.id, delay);
            ack_at_ns = Some(at.0);
        }
        self.mark(|| Timeline::SnapshotDone {
            task: t,
            id,
            state_bytes: bytes - in_flight_bytes,
            in_flight_bytes,
            ack_at_ns,
        });
    }

    /// The output side of the alignment timeout: barriers of `id` still
    /// queued behind data turn into priority barriers; the data they
    /// overtake becomes output channel state.
    fn output_timeout(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        if self.tasks[ti].status != Status::Running {
            return;
        }
        if self.tasks[ti]
            .pending_ack
            .as_ref()
            .is_none_or(|p| p.id != id)
        {
            return;
        }
        for j in 0..self.task_outputs[ti].len() {
            let ch = self.task_outputs[ti][j];
            let Some(cap) = self.net.prioritize_queued_barrier(ch, id) else {
                continue;
            };
            self.counters.output_barriers_prioritized += 1;
            let drop = self.cfg.mutants.has(Mutant::OutputTimeoutDropsOvertaken);
            if drop && !cap.records.is_empty() {
                fired(Mutant::OutputTimeoutDropsOvertaken);
            }
            if let Some(p) = self.tasks[ti].pending_ack.as_mut().filter(|_| !drop) {
                if !cap.records.is_empty() || cap.gap {
                    p.snapshot.outputs.push(ChannelState {
                        ch,
                        first_seq: cap.first_seq,
                        records: cap.records,
                        gap: cap.gap,
                    });
                }
            }
        }
        self.maybe_ack(t);
    }

    /// `stop-the-world`: everything upstream of this task is drained; pass
    /// the marker on, or tell the coordinator if this task has no outputs.
    fn forward_drain_marker(&mut self, t: TaskId, b: Barrier) {
        let ti = t as usize;
        self.tasks[ti].started.insert(b.id);
        self.tasks[ti].closed.insert(b.id);
        for i in 0..self.task_outputs[ti].len() {
            let ch = self.task_outputs[ti][i];
            self.net.send_event(ch, Msg::Barrier(b), false);
        }
        if self.task_outputs[ti].is_empty() {
            let at = self.net.now.plus(self.scenario.checkpoint.rpc_latency);
            self.net.schedule(at, Ev::Drained { task: t, id: b.id });
        }
    }

    /// `stop-the-world`: a drain report reached the coordinator; once every
    /// task without outputs reported, ask every task for its snapshot.
    fn drained(&mut self, id: CheckpointId) {
        let sinks = self.sink_tasks;
        let Some(p) = self.coord.pending.get_mut(&id) else {
            return;
        };
        p.drained += 1;
        if p.drained < sinks {
            return;
        }
        let barrier = Barrier {
            id,
            timestamp: p.trigger_time,
            kind: BarrierKind::Aligned,
        };
        let at = self.net.now.plus(self.scenario.checkpoint.rpc_latency);
        for t in 0..self.tasks.len() as TaskId {
            self.net.schedule(at, Ev::SnapshotTask { task: t, barrier });
        }
    }

    fn broadcast_cancel(&mut self, t: TaskId, id: CheckpointId, cause: CancelCause) {
        if self.cfg.mutants.has(Mutant::SkipCancelMarker) {
            if !self.task_outputs[t as usize].is_empty() {
                fired(Mutant::SkipCancelMarker);
            }
            return;
        }
        let ti = t as usize;
        self.tasks[ti].closed.insert(id);
        if !self.tasks[ti].cancel_sent.insert((id, cause)) && !self.task_outputs[ti].is_empty() {
            let name = self.exec.tasks[ti].name.clone();
            self.violation(
                "protocol",
                format!("task {name} sent a second cancellation marker for checkpoint {id} on each output"),
            );
        }
        for i in 0..self.task_outputs[ti].len() {
            let ch = self.task_outputs[ti][i];
            self.net.send_event(ch, Msg::Cancel(id), false);
            self.counters.cancel_markers_sent += 1;
        }
    }

    /// Commit timeliness: once a sink task was told that checkpoint `id`
    /// completed, nothing its current instance pre-committed for `id` or an
    /// earlier checkpoint may stay pre-committed (Flink's 2PC contract:
    /// notify-complete commits everything up to the id).
    fn check_commit_timeliness(&mut self, t: TaskId, id: CheckpointId) {
        let task = &self.tasks[t as usize];
        let late = self.store.precommitted_up_to(
            task.operator_index,
            task.subtask,
            task.deploy_attempt,
            id,
        );
        if let Some((txn, cp)) = late.first() {
            let name = self.exec.tasks[t as usize].name.clone();
            let more = match late.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            self.violation(
                "commit",
                format!(
                    "sink {name} was notified that checkpoint {id} completed, but {txn}, pre-committed for checkpoint {cp}, is still not committed{more}"
                ),
            );
        }
    }

    /// The handler aborted a checkpoint: decline it and cancel downstream.
    fn decline(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        self.decline_once(t, id, reason);
        if self.cfg.mutants.has(Mutant::DeclineTwice) {
            // Mutant: the abort happens twice.
            fired(Mutant::DeclineTwice);
            self.decline_once(t, id, reason);
        }
    }

    fn decline_once(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        if !self.tasks[t as usize].declined.insert(id) {
            let name = self.exec.tasks[t as usize].name.clone();
            self.violation(
                "protocol",
                format!("task {name} declined checkpoint {id} twice"),
            );
        }
        let at = self.net.now.plus(self.scenario.checkpoint.rpc_latency);
        self.net.schedule(
            at,
            Ev::Decline {
                task: t,
                id,
                reason,
            },
        );
        self.broadcast_cancel(t, id, CancelCause::Declined);
    }

    fn trigger_source(&mut self, t: TaskId, b: Barrier) {
        if self.tasks[t as usize].status != Status::Running {
            return;
        }
        if let Some(sp) = self.savepoints.get(&b.id).filter(|sp| sp.stop) {
            // Stop-with-savepoint: the source emits nothing after this
            // barrier; with drain it ends its input first, so every
            // operator downstream flushes before the barrier reaches it.
            let drain = sp.drain;
            self.tasks[t as usize].stopped = true;
            if drain {
                self.end_of_input(t);
            }
        }
        self.tasks[t as usize].alignment_start = Some((b.id, self.net.now));
        self.tasks[t as usize].last_alignment_ns = 0;
        if self.cfg.algorithm == Algorithm::StopTheWorld {
            // Pause, and send the drain marker behind the last records.
            self.counters.sources_paused += 1;
            self.tasks[t as usize].paused = Some(b.id);
            self.forward_drain_marker(t, b);
            return;
        }
        self.checkpoint(t, b);
        self.all_barriers(t, b.id);
    }

    /// `stop-the-world`: a paused source resumes once its checkpoint is
    /// complete or aborted.
    fn resume_source(&mut self, t: TaskId, id: CheckpointId) {
        let task = &mut self.tasks[t as usize];
        if task.paused.is_some_and(|p| id >= p) {
            task.paused = None;
            self.net.poke(t);
        }
    }

    fn notify_complete(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        if self.tasks[ti].status != Status::Running {
            return;
        }
        if id <= self.tasks[ti].last_notified {
            self.counters.notifications_ignored += 1;
            return;
        }
        if self.coord.aborted_ids.contains(&id) {
            let name = self.exec.tasks[ti].name.clone();
            self.violation(
                "protocol",
                format!("task {name} notified complete for aborted checkpoint {id}"),
            );
        }
        self.note_catch_up(t, id);
        self.tasks[ti].last_notified = id;
        self.resume_source(t, id);
        self.schedule.push(t, Step::Complete(id));
        {
            let (task, mut ctx) = self.ctx_parts(t);
            task.operator.notify_checkpoint_complete(id, &mut ctx);
        }
        if self.tasks[ti].is_sink {
            self.check_commit_timeliness(t, id);
        }
        self.route_out(t);
        // The job's final checkpoint covered all input everywhere: finish.
        let task = &mut self.tasks[ti];
        if self.coord.final_id.is_some_and(|f| id >= f) {
            task.status = Status::Finished;
            self.net.sched[ti].alive = false;
            self.mark(|| Timeline::Finished { task: t });
            if self.tasks.iter().all(|t| t.status == Status::Finished) {
                self.job = JobStatus::Finished;
            }
        }
    }

    fn notify_aborted(&mut self, t: TaskId, id: CheckpointId, latest_completed: CheckpointId) {
        let ti = t as usize;
        if self.tasks[ti].status != Status::Running {
            return;
        }
        // Flink's catch-up: an abort carries the latest completed id.
        if latest_completed > self.tasks[ti].last_notified {
            self.note_abort_catch_up(t, latest_completed);
            self.notify_complete(t, latest_completed);
            if self.tasks[ti].status != Status::Running {
                return;
            }
        }
        self.resume_source(t, id);
        self.schedule.push(t, Step::Aborted(id));
        {
            let (task, mut ctx) = self.ctx_parts(t);
            task.operator.notify_checkpoint_aborted(id, &mut ctx);
        }
        self.route_out(t);
        if id > self.tasks[ti].last_checkpoint {
            self.tasks[ti].aborted.insert(id);
        }
    }

    // ------------------------------------------------------------ coordinator

    fn periodic_trigger(&mut self, generation: u32) {
        if generation != self.coord.periodic_generation {
            return;
        }
        let cp = self.scenario.checkpoint.clone();
        let Some(interval) = cp.interval else { return };
        let now = self.net.now;
        self.schedule_any(now.plus(interval), Ev::PeriodicTrigger { generation });
        if self.job != JobStatus::Running || self.coord.finishing {
            self.counters.triggers_skipped += 1;
            return;
        }
        if self.coord.pending.len() >= self.scenario.max_concurrent(self.cfg.algorithm) as usize {
            self.counters.triggers_skipped += 1;
            return;
        }
        let savepoint_due = self.savepoint_queue.front().is_some_and(|s| s.at <= now);
        if savepoint_due
            || self
                .coord
                .pending
                .keys()
                .any(|id| self.savepoints.contains_key(id))
        {
            // A requested savepoint goes first (Flink's request queue puts
            // savepoints ahead of periodic checkpoints), and none runs
            // beside a savepoint here.
            self.counters.triggers_skipped += 1;
            self.counters.triggers_skipped_savepoint += 1;
            return;
        }
        if self.recovery_pending > 0 && self.cfg.mutants.has(Mutant::CheckpointDuringRecovery) {
            fired(Mutant::CheckpointDuringRecovery);
        } else if self.recovery_pending > 0 {
            // Restored in-flight data is still being replayed: the tasks are
            // not RUNNING yet, and Flink declines to trigger.
            self.counters.triggers_skipped += 1;
            self.counters.triggers_skipped_recovering += 1;
            return;
        }
        if let Some(last) = self.coord.last_completion {
            let earliest = last.plus(cp.min_pause);
            if earliest > now {
                // Flink reschedules the periodic trigger to the end of the pause.
                self.counters.triggers_skipped += 1;
                self.coord.periodic_generation += 1;
                let g = self.coord.periodic_generation;
                self.schedule_any(earliest, Ev::PeriodicTrigger { generation: g });
                return;
            }
        }
        self.trigger(None);
    }

    /// Starts a checkpoint, or the savepoint `savepoint`: a pending entry
    /// with its timeout, and the trigger RPC to every source.
    fn trigger(&mut self, savepoint: Option<SavepointSpec>) {
        let cp = self.scenario.checkpoint.clone();
        let now = self.net.now;
        let id = self.coord.next_id;
        self.coord.next_id += 1;
        self.counters.checkpoints_triggered += 1;
        self.mark(|| Timeline::Triggered { id });
        let n = self.tasks.len();
        self.coord.pending.insert(
            id,
            Pending {
                id,
                trigger_time: now,
                acks: (0..n).map(|_| None).collect(),
                remaining: n as u32,
                finalizing: false,
                drained: 0,
                last_ack: None,
            },
        );
        self.schedule_any(now.plus(cp.timeout), Ev::CheckpointTimeout { id });
        let kind = match self.cfg.algorithm {
            _ if savepoint.is_some() => BarrierKind::Aligned,
            Algorithm::Unaligned => BarrierKind::Unaligned,
            Algorithm::AlignedTimeout => BarrierKind::Timeoutable,
            _ => BarrierKind::Aligned,
        };
        if let Some(sp) = savepoint {
            self.counters.savepoints_triggered += 1;
            self.savepoints.insert(id, sp);
        }
        let barrier = Barrier {
            id,
            timestamp: now,
            kind,
        };
        let at = now.plus(cp.rpc_latency);
        for t in 0..n as TaskId {
            if self.tasks[t as usize].is_source {
                self.net
                    .schedule(at, Ev::TriggerSource { task: t, barrier });
            }
        }
    }

    fn ack(&mut self, t: TaskId, id: CheckpointId) {
        let missing_ok = self.cfg.mutants.has(Mutant::CompleteWithMissingAck);
        let Some(p) = self.coord.pending.get_mut(&id) else {
            return;
        };
        let Some(a) = p.acks[t as usize].as_mut() else {
            return;
        };
        if a.arrived {
            return;
        }
        a.arrived = true;
        p.remaining -= 1;
        p.last_ack = Some(t);
        let early = missing_ok && p.remaining == 1 && p.acks.len() > 1;
        let done = p.remaining == 0 || early;
        if done && !p.finalizing {
            if early {
                fired(Mutant::CompleteWithMissingAck);
            }
            p.finalizing = true;
            self.schedule_finalize(id);
        }
    }

    fn finalized(&mut self, id: CheckpointId) {
        let Some(p) = self.coord.pending.remove(&id) else {
            return;
        };
        if let Some(sp) = self.savepoints.get(&id).cloned() {
            self.savepoint_completed(p, sp);
            return;
        }
        let now = self.net.now;
        self.counters.checkpoints_completed += 1;
        self.counters.checkpoints_after_last_recovery += 1;
        if now >= self.fault_phase_end {
            self.counters.checkpoints_in_quiet_phase += 1;
        }
        let stats = Coordinator::stats_of(&p, now, CpOutcome::Completed);
        self.coord.stats.push(stats);
        if let Some(&last) = self.coord.completed_ids.last() {
            if id <= last {
                self.violation(
                    "protocol",
                    format!("checkpoint {id} completed after checkpoint {last}"),
                );
            }
        }
        self.check_cut(&p);
        // The final checkpoint: every task had consumed all its input, and
        // nothing was in flight.
        let all_ended = p.acks.iter().all(|a| {
            a.as_ref()
                .is_some_and(|a| a.input_ended && a.snapshot.in_flight_records() == 0)
        });
        let (mut state_bytes, mut in_flight_bytes, mut in_flight_records) = (0, 0, 0);
        let lost = match p.last_ack {
            Some(t) if self.cfg.mutants.has(Mutant::StorageLosesStateWrite) => Some(t as usize),
            _ => None,
        };
        let mut states: Vec<Option<TaskSnapshot>> = p
            .acks
            .into_iter()
            .map(|a| {
                a.filter(|a| a.arrived).map(|a| {
                    state_bytes += a.snapshot.state.len() as u64;
                    in_flight_bytes += a.snapshot.in_flight_bytes();
                    in_flight_records += a.snapshot.in_flight_records();
                    a.snapshot
                })
            })
            .collect();
        if let Some(t) = lost {
            // Mutant: the write never became durable; the coordinator
            // restores that task as if it had no state.
            if states[t].take().is_some() {
                fired(Mutant::StorageLosesStateWrite);
            }
        }
        if in_flight_records > 0 {
            self.counters.unaligned_checkpoints += 1;
            self.counters.in_flight_records_persisted += in_flight_records;
        }
        self.store_completed(Completed {
            id,
            trigger_time: p.trigger_time,
            completed_at: now,
            states,
            state_bytes,
            in_flight_bytes,
        });
        self.coord.last_completion = Some(now);
        self.coord.failure_counter = 0;
        if all_ended {
            self.coord.finishing = true;
            self.coord.final_id = Some(id);
        }
        // Subsume older pending checkpoints.
        let older: Vec<CheckpointId> = self.coord.pending.range(..id).map(|(&k, _)| k).collect();
        for o in older {
            self.abort_pending(o, CpOutcome::Subsumed);
        }
        if self.coord.periodic_stopped {
            // Mutant: the trigger comes back only with a completion.
            self.coord.periodic_stopped = false;
            if let Some(interval) = self.scenario.checkpoint.interval {
                let g = self.coord.periodic_generation;
                self.schedule_any(now.plus(interval), Ev::PeriodicTrigger { generation: g });
            }
        }
        if all_ended && self.cfg.mutants.has(Mutant::FinalNotifyDropped) {
            // Mutant: the job ends without notifying the final checkpoint.
            fired(Mutant::FinalNotifyDropped);
            for (ti, task) in self.tasks.iter_mut().enumerate() {
                task.status = Status::Finished;
                self.net.sched[ti].alive = false;
            }
            self.job = JobStatus::Finished;
            return;
        }
        let at = now.plus(self.scenario.checkpoint.rpc_latency);
        for t in 0..self.tasks.len() as TaskId {
            self.send_notify_complete(at, t, id);
        }
    }

    fn abort_pending(&mut self, id: CheckpointId, outcome: CpOutcome) {
        let Some(p) = self.coord.pending.remove(&id) else {
            return;
        };
        let now = self.net.now;
        self.counters.checkpoints_aborted += 1;
        let savepoint = self.savepoints.get(&id).cloned();
        let mut stats = Coordinator::stats_of(&p, now, outcome);
        stats.savepoint = savepoint.is_some();
        self.coord.stats.push(stats);
        self.coord.aborted_ids.push(id);
        if let Some(sp) = &savepoint {
            self.counters.savepoints_failed += 1;
            let request = self.savepoint_request_of[&id];
            let report = &mut self.savepoint_reports[request];
            report.attempts.push((id, outcome.describe().to_string()));
            if !self.job_opts.retry_failed_savepoints {
                report.failure = Some(format!("savepoint {id} {}", outcome.describe()));
            }
            if self.job_opts.retry_failed_savepoints {
                self.savepoint_queue.push_front(SavepointSpec {
                    at: now,
                    ..sp.clone()
                });
                self.savepoint_queue_request.push_front(request);
                if !self.savepoint_retry {
                    self.savepoint_retry = true;
                    self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
                }
            }
        }
        if self.cfg.mutants.has(Mutant::PeriodicTriggerStopsOnAbort) && !self.coord.periodic_stopped
        {
            // Mutant: an abort cancels the periodic trigger.
            fired(Mutant::PeriodicTriggerStopsOnAbort);
            self.coord.periodic_generation += 1;
            self.coord.periodic_stopped = true;
        }
        if matches!(outcome, CpOutcome::Failover | CpOutcome::Cancelled) {
            return; // the tasks are being cancelled; nobody to notify
        }
        let latest = self.coord.last_completed_id;
        let at = now.plus(self.scenario.checkpoint.rpc_latency);
        for t in 0..self.tasks.len() as TaskId {
            self.net.schedule(
                at,
                Ev::NotifyAborted {
                    task: t,
                    id,
                    latest_completed: latest,
                },
            );
        }
        if savepoint.is_some_and(|sp| sp.stop) {
            // Flink: "Stop-with-savepoint failed." fails the job over.
            self.failover(format!("stop-with-savepoint {id} failed ({outcome:?})"));
        }
    }

    /// Adds a completed checkpoint to the store (evicting the oldest beyond
    /// `retained`). Protocol: a savepoint never enters it.
    fn store_completed(&mut self, c: Completed) {
        if self.savepoints.contains_key(&c.id) {
            let evicted = match self.coord.retained.front() {
                Some(old) if self.coord.retained.len() >= self.coord.num_retained => {
                    format!(", evicting checkpoint {}", old.id)
                }
                _ => String::new(),
            };
            self.violation(
                "protocol",
                format!(
                    "savepoint {} entered the completed-checkpoint store{evicted}",
                    c.id
                ),
            );
        }
        self.coord.add_completed(c);
    }

    /// Protocol: a failover restores a checkpoint, never a savepoint taken
    /// by this job.
    fn check_restore_source(&mut self, from: Option<CheckpointId>) {
        if let Some(id) = from.filter(|id| self.savepoints.contains_key(id)) {
            self.violation(
                "protocol",
                format!("the job was restarted from savepoint {id}: savepoints are never used for recovery"),
            );
        }
    }

    /// Flink's `CheckpointFailureManager`: count a failure once per id, only
    /// if newer than the last success; past the tolerance, fail the job over.
    fn count_failure(&mut self, id: CheckpointId) {
        if id <= self.coord.last_completed_id {
            return;
        }
        self.coord.failure_counter += 1;
        let tolerable = self.scenario.checkpoint.tolerable_failures;
        let mut limit = tolerable;
        if self.cfg.mutants.has(Mutant::TolerableFailuresOffByOne) {
            // Mutant: the threshold is one too high.
            limit = tolerable.saturating_add(1);
            if self.coord.failure_counter == tolerable.saturating_add(1) {
                fired(Mutant::TolerableFailuresOffByOne);
            }
        }
        if self.coord.failure_counter > limit {
            self.coord.failure_counter = 0;
            self.failover(format!(
                "more than {} consecutive checkpoint failures",
                self.scenario.checkpoint.tolerable_failures
            ));
        }
    }

    /// Consistent cut, per channel and by sequence number: the records the
    /// sender had sent before its snapshot are exactly the records the
    /// receiver had consumed before its snapshot, then the receiver's input
    /// channel state, then the sender's output channel state — consecutive,
    /// in order, no overlap, no gap. (Aligned: both channel states empty.)
    /// A receiver that consumed more than was sent (post-barrier records in
    /// the snapshot) means duplicates after a restore: counted, and allowed
    /// only when the run is expected to be at-least-once.
    fn check_cut(&mut self, p: &Pending) {
        let nch = self.net.channels.len();
        let mut sent = vec![None; nch];
        let mut recv = vec![None; nch];
        let mut in_state: Vec<Option<&ChannelState>> = vec![None; nch];
        let mut out_state: Vec<Option<&ChannelState>> = vec![None; nch];
        for a in p.acks.iter().flatten().filter(|a| a.arrived) {
            for &(ch, n) in &a.cut.outputs {
                sent[ch as usize] = Some(n);
            }
            for &(ch, n) in &a.cut.inputs {
                recv[ch as usize] = Some(n);
            }
            for c in &a.snapshot.inputs {
                in_state[c.ch as usize] = Some(c);
            }
            for c in &a.snapshot.outputs {
                out_state[c.ch as usize] = Some(c);
            }
        }
        let dup_ok = matches!(self.expected, Guarantee::AtLeastOnce | Guarantee::Broken);
        let mut found = Vec::new();
        for ch in 0..nch {
            let (Some(s), Some(r)) = (sent[ch], recv[ch]) else {
                found.push((
                    ch,
                    "completed without a snapshot from both ends".to_string(),
                ));
                continue;
            };
            let span = |c: Option<&ChannelState>, from: u64| match c {
                Some(c) => (c.first_seq, c.records.len() as u64, c.gap),
                None => (from, 0, false),
            };
            let (in_first, in_len, in_gap) = span(in_state[ch], r);
            let (out_first, out_len, out_gap) = span(out_state[ch], r + in_len);
            let ok = !in_gap
                && !out_gap
                && in_first == r
                && out_first == r + in_len
                && out_first + out_len == s;
            if ok {
                continue;
            }
            if dup_ok && in_len == 0 && out_len == 0 && r > s {
                self.counters.cut_duplicates += 1;
                continue;
            }
            let mut msg = format!(
                "sender sent {s} records before its snapshot; receiver consumed {r} before its snapshot"
            );
            if in_len > 0 || in_gap {
                let _ = std::fmt::Write::write_fmt(
                    &mut msg,
                    format_args!(
                        "; input channel state [{in_first}, {}){}",
                        in_first + in_len,
                        if in_gap { " with a gap" } else { "" }
                    ),
                );
            }
            if out_len > 0 || out_gap {
                let _ = std::fmt::Write::write_fmt(
                    &mut msg,
                    format_args!(
                        "; output channel state [{out_first}, {}){}",
                        out_first + out_len,
                        if out_gap { " with a gap" } else { "" }
                    ),
                );
            }
            if in_len == 0 && out_len == 0 {
                msg.push_str(" (no in-flight records captured)");
            }
            found.push((ch, msg));
        }
        for (ch, msg) in found {
            let c = &self.exec.channels[ch];
            let msg = format!(
                "checkpoint {}: channel {} -> {}: {msg}",
                p.id, self.exec.tasks[c.from as usize].name, self.exec.tasks[c.to as usize].name
            );
            self.violation("consistent-cut", msg);
        }
    }

    // ------------------------------------------------------------ savepoints

    /// Triggers the first due savepoint request if the job runs, nothing is
    /// pending and no restored in-flight data is still replaying; otherwise
    /// tries again in a millisecond (Flink queues the request).
    fn try_savepoint(&mut self) {
        self.savepoint_retry = false;
        let now = self.net.now;
        if self.savepoint_queue.front().is_none_or(|s| s.at > now) {
            return;
        }
        match self.job {
            JobStatus::Running | JobStatus::Restarting => {}
            _ => return,
        }
        let ready = self.job == JobStatus::Running
            && !self.coord.finishing
            && self.stopped_with.is_none()
            && self.coord.pending.is_empty()
            && self.recovery_pending == 0;
        if !ready {
            // Keep trying even while the job is finishing: a failover can
            // undo that, and a queued request holds back periodic triggers.
            self.savepoint_retry = true;
            self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
            return;
        }
        let sp = self.savepoint_queue.pop_front().expect("a due request");
        let request = self
            .savepoint_queue_request
            .pop_front()
            .expect("every queued request has an index");
        self.savepoint_request_of
            .insert(self.coord.next_id, request);
        self.trigger(Some(sp));
        if self.savepoint_queue.front().is_some_and(|s| s.at <= now) && !self.savepoint_retry {
            self.savepoint_retry = true;
            self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
        }
    }

    /// A savepoint's metadata is written. A plain savepoint notifies
    /// nobody (its transactions stay pre-committed until a later checkpoint
    /// commits them), subsumes nothing and is never used for recovery; a
    /// stop-with-savepoint notifies every task, which then finishes.
    fn savepoint_completed(&mut self, p: Pending, sp: SavepointSpec) {
        let now = self.net.now;
        let id = p.id;
        self.counters.savepoints_completed += 1;
        let request = self.savepoint_request_of[&id];
        self.savepoint_reports[request].completed = Some(id);
        self.savepoint_reports[request]
            .attempts
            .push((id, format!("completed at {}", SimDuration(now.0))));
        let mut stats = Coordinator::stats_of(&p, now, CpOutcome::Completed);
        stats.savepoint = true;
        self.coord.stats.push(stats);
        self.check_cut(&p);
        self.coord.last_completion = Some(now);
        if !sp.stop && self.cfg.mutants.has(Mutant::SavepointEntersStore) {
            // Mutant: the savepoint is stored like a checkpoint.
            fired(Mutant::SavepointEntersStore);
            let states: Vec<Option<TaskSnapshot>> = p
                .acks
                .iter()
                .map(|a| a.as_ref().filter(|a| a.arrived).map(|a| a.snapshot.clone()))
                .collect();
            self.store_completed(Completed {
                id,
                trigger_time: p.trigger_time,
                completed_at: now,
                states,
                state_bytes: 0,
                in_flight_bytes: 0,
            });
        }
        if sp.stop && sp.drain && self.cfg.algorithm != Algorithm::ChandyLamport {
            // Drained: everything the stopped sources read must be
            // committed. (Without drain, operators may still hold records
            // in their state, as windows do in Flink.) The stopped sources'
            // positions come from their built-in source state. Only for an
            // aligned savepoint: there the end of input reaches every
            // operator before the savepoint's barrier, so every operator
            // flushed before its snapshot. A Chandy–Lamport savepoint
            // snapshots at the first marker, possibly before the end of
            // input arrived on another input: what the operator flushes
            // then is after its snapshot. (The commit check still holds
            // the sinks to what they had read before the savepoint.)
            let mut below = vec![0; self.high_water.len()];
            let mut known = true;
            for (ti, a) in p.acks.iter().enumerate() {
                if !self.tasks[ti].is_source {
                    continue;
                }
                match a
                    .as_ref()
                    .and_then(|a| crate::model::operator::source_offsets(&a.snapshot.state))
                {
                    Some(offsets) => {
                        for (partition, offset) in offsets {
                            below[partition as usize] = offset;
                        }
                    }
                    None => known = false,
                }
            }
            self.complete_below = known.then_some(below);
            for a in p.acks.iter().flatten() {
                for cs in a.snapshot.inputs.iter().chain(&a.snapshot.outputs) {
                    self.complete_exempt
                        .extend(cs.records.iter().map(|r| r.lineage));
                }
            }
            self.complete_exempt.sort_unstable();
        }
        if self.job_opts.keep_snapshots {
            let states = p
                .acks
                .into_iter()
                .map(|a| a.filter(|a| a.arrived).map(|a| a.snapshot))
                .collect();
            self.snapshots.push(SnapshotOut {
                kind: SnapshotKind::Savepoint,
                id,
                stop: sp.stop,
                drain: sp.drain,
                completed_at: now,
                states,
            });
        }
        let at = now.plus(self.scenario.checkpoint.rpc_latency);
        if sp.stop {
            self.stopped_with = Some(id);
            self.coord.finishing = true;
            self.coord.final_id = Some(id);
            for t in 0..self.tasks.len() as TaskId {
                self.net.schedule(at, Ev::NotifyComplete { task: t, id });
            }
            return;
        }
        for t in 0..self.tasks.len() as TaskId {
            self.net.schedule(at, Ev::SavepointDone { task: t, id });
            if self.cfg.mutants.has(Mutant::SavepointNotifies) {
                // Mutant: the savepoint's side effects are committed.
                fired(Mutant::SavepointNotifies);
                self.net.schedule(at, Ev::NotifyComplete { task: t, id });
            }
        }
        if self.job_opts.cancel_after_savepoint {
            self.cancel();
        }
    }

    /// Aborts every pending checkpoint (`outcome`: failover or cancel, so no
    /// notification goes out) and cancels every live task; the attempt
    /// stamp increments, so everything scheduled for them is now stale.
    fn stop_all_tasks(&mut self, outcome: CpOutcome) {
        let pending: Vec<CheckpointId> = self.coord.pending.keys().copied().collect();
        for id in pending {
            self.abort_pending(id, outcome);
        }
        for t in &mut self.tasks {
            if t.status != Status::Dead {
                t.status = Status::Cancelled;
            }
        }
        for s in &mut self.net.sched {
            s.alive = false;
        }
        self.net.attempt += 1;
    }

    /// Cancels the job: pending checkpoints are aborted, every task stops.
    /// With `retain_on_cancel` the latest completed checkpoint is kept.
    fn cancel(&mut self) {
        if !matches!(self.job, JobStatus::Running | JobStatus::Restarting) {
            self.fx_log.cancel = warnings::Fate::Ignored(self.job_not_running());
            return;
        }
        self.fx_log.cancel = warnings::Fate::Fired;
        self.check_closed();
        self.stop_all_tasks(CpOutcome::Cancelled);
        self.job = JobStatus::Cancelled;
        if self.scenario.checkpoint.retain_on_cancel && self.job_opts.keep_snapshots {
            if let Some(c) = self.coord.latest() {
                self.snapshots.push(SnapshotOut {
                    kind: SnapshotKind::Checkpoint,
                    id: c.id,
                    stop: false,
                    drain: false,
                    completed_at: c.completed_at,
                    states: c.states.clone(),
                });
            }
        }
    }

    /// A snapshot to start from, as a completed checkpoint.
    fn restore_completed(r: &Restore) -> Rc<Completed> {
        let (mut state_bytes, mut in_flight_bytes) = (0, 0);
        for s in r.states.iter().flatten() {
            state_bytes += s.state.len() as u64;
            in_flight_bytes += s.in_flight_bytes();
        }
        Rc::new(Completed {
            id: r.id,
            trigger_time: SimTime::ZERO,
            completed_at: SimTime::ZERO,
            states: r.states.clone(),
            state_bytes,
            in_flight_bytes,
        })
    }

    /// The job starts from a snapshot: ids continue after it, it is the
    /// latest completed checkpoint (for a failover before the first new
    /// one), and every task restores from it.
    fn start_from(&mut self, r: &Restore) {
        self.coord.next_id = r.id + 1;
        self.coord.last_completed_id = r.id;
        self.store = r.store.clone();
        self.net.attempt = r.generation << 16;
        let c = Self::restore_completed(r);
        self.coord.retained.push_back(c.clone());
        self.counters.restored_from_snapshot += 1;
        self.schedule_partial = true;
        self.deploy(Some(&c), false);
    }

    // ------------------------------------------------------------ faults

    fn crash(&mut self, index: u32) {
        let c = self.crash_plan[index as usize].clone();
        let t = self.exec.task_of(c.operator, c.subtask);
        let ti = t as usize;
        if self.job != JobStatus::Running
            || self.tasks[ti].status != Status::Running
            || self.stopped_with.is_some()
        {
            // After a stop-with-savepoint completed the job is shutting down.
            self.counters.crashes_ignored += 1;
            self.fx_log.crashes[index as usize] =
                warnings::Fate::Ignored(self.crash_ignored_reason(t));
            return;
        }
        self.fx_log.crashes[index as usize] = warnings::Fate::Fired;
        self.counters.crashes += 1;
        if self.coord.final_id.is_some() {
            self.counters.crashes_after_final_checkpoint += 1;
        }
        if self.recovering_since.is_none() {
            self.recovering_since = Some(self.net.now);
        }
        self.mark(|| Timeline::Crash { task: t });
        if self
            .tasks
            .iter()
            .any(|t| t.status == Status::Running && t.handler.aligning().is_some())
        {
            self.counters.crashes_during_alignment += 1;
        }
        // Some task snapshotted a checkpoint that is not aborted and that it
        // has not been told is complete (pending, or complete but unnotified).
        let snapshot_unnotified = self.tasks.iter().any(|t| {
            t.last_checkpoint > t.last_notified
                && !self.coord.aborted_ids.contains(&t.last_checkpoint)
        });
        if self.capture_in_progress() {
            self.counters.crashes_during_unaligned_capture += 1;
        }
        if snapshot_unnotified {
            self.counters.crashes_between_snapshot_and_notify += 1;
        }
        self.note_crash(t);
        self.tasks[ti].status = Status::Dead;
        let outputs = self.task_outputs[ti].clone();
        self.net.kill_task_outputs(t, &outputs);
        let at = self.net.now.plus(self.scenario.faults.detection_delay);
        self.net.schedule(at, Ev::FailureDetected { task: t });
    }

    /// An unaligned or Chandy–Lamport checkpoint is in progress and some
    /// channel state is already recorded (in a channel, in a task's pending
    /// snapshot, or in an ack the coordinator holds).
    fn capture_in_progress(&self) -> bool {
        let in_channels = self.net.channels.iter().any(|c| {
            c.capture
                .as_ref()
                .is_some_and(|cap| !cap.records.is_empty())
        });
        let in_tasks = self.tasks.iter().any(|t| {
            t.pending_ack
                .as_ref()
                .is_some_and(|p| p.snapshot.in_flight_records() > 0)
        });
        let in_acks = self.coord.pending.values().any(|p| {
            p.acks
                .iter()
                .flatten()
                .any(|a| a.snapshot.in_flight_records() > 0)
        });
        in_channels || in_tasks || in_acks
    }

    /// Global failover: cancel every task, abort pending checkpoints, and
    /// restart when the restart strategy says (or fail the job).
    fn failover(&mut self, reason: String) {
        if self.job != JobStatus::Running {
            return;
        }
        self.failovers.push((self.net.now.0, reason.clone()));
        if self.stopped_with.is_some() {
            // A failure after the stop-with-savepoint completed, while tasks
            // commit its side effects: Flink does not fail over (FLINK-26783,
            // a restart from the latest checkpoint would duplicate what the
            // savepoint committed); the job ends, and what some sinks did not
            // commit yet is committed by a restore from the savepoint.
            self.counters.failures_after_stop_savepoint += 1;
            self.complete_below = None;
            self.complete_exempt.clear();
            self.job = JobStatus::Finished;
            return;
        }
        if self.cfg.mutants.has(Mutant::SimulatorPanic) {
            fired(Mutant::SimulatorPanic);
            panic!("simulator-panic mutant: failover of {reason}");
        }
        self.check_closed();
        self.counters.failovers += 1;
        self.stop_all_tasks(CpOutcome::Failover);
        self.recovery_stopped(None);
        self.coord.finishing = false;
        self.coord.final_id = None;
        self.restarts += 1;
        let delay = self.restart_decision(&reason);
        let job_failed = delay.is_none(); // trace
        self.mark(|| Timeline::Failover {
            reason: reason.clone(),
            job_failed,
        });
        let Some(delay) = delay else {
            return; // the restart strategy gave up: the job failed
        };
        self.job = JobStatus::Restarting;
        let at = self.restart_time(delay);
        self.net.schedule(at, Ev::Restart);
    }

    fn restart(&mut self) {
        if self.restart_pending_region() {
            return;
        }
        if self.job != JobStatus::Restarting {
            return;
        }
        // Mutant: the failed attempt's in-flight buffers survive the restart.
        let stale: Vec<Vec<Record>> = if self.cfg.mutants.has(Mutant::RestartKeepsStaleBuffers) {
            self.net
                .channels
                .iter()
                .map(|c| {
                    c.in_queue
                        .iter()
                        .chain(c.wire.iter().map(|(_, m)| m))
                        .flat_map(|m| match m {
                            Msg::Data { buf, .. } => buf.clone(),
                            _ => Vec::new(),
                        })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        self.net.reset();
        if stale.iter().any(|r| !r.is_empty()) {
            fired(Mutant::RestartKeepsStaleBuffers);
        }
        for (ch, records) in stale.iter().enumerate() {
            self.net.restore_output(ch as ChannelId, records);
        }
        let latest = self.coord.latest();
        self.check_restore_source(latest.as_ref().map(|c| c.id));
        let before = self.store.stats.transactions_committed;
        let restored = self.deploy(latest.as_deref(), true);
        self.counters.recovery_commits += self.store.stats.transactions_committed - before;
        self.counters.recoveries += 1;
        self.counters.checkpoints_after_last_recovery = 0;
        let from_checkpoint = latest.as_ref().map(|c| c.id); // trace
        match latest {
            Some(_) => self.counters.recoveries_from_checkpoint += 1,
            None => self.counters.recoveries_from_scratch += 1,
        }
        self.job = JobStatus::Running;
        for t in 0..self.tasks.len() as TaskId {
            self.net.poke(t);
        }
        self.mark(|| Timeline::Restart {
            from: from_checkpoint,
            restored_records: restored,
        });
        self.recovery_restarted(from_checkpoint);
    }

    /// Redeploys every task from `latest` (from scratch if `None`), in
    /// Flink's order: recovered output channel state goes back into the
    /// output queues, operator state is restored, recovered input channel
    /// state is queued ahead of any new input. `failover`: after a failure
    /// (the source-rewind mutant applies).
    fn deploy(&mut self, latest: Option<&Completed>, failover: bool) -> u64 {
        self.recovered_out_left.iter_mut().for_each(|n| *n = 0);
        self.recovery_pending = 0;
        let no_rewind = failover && self.cfg.mutants.has(Mutant::NoSourceRewind);
        // Flink's order: recovered output channel state goes back into the
        // output queues first, then operator state is restored, then the
        // recovered input channel state is queued ahead of any new input.
        let mut restored = 0;
        let drop_channel_state = self.cfg.mutants.has(Mutant::RestoreDropsChannelState);
        if drop_channel_state
            && latest.is_some_and(|c| c.states.iter().flatten().any(|s| s.in_flight_records() > 0))
        {
            fired(Mutant::RestoreDropsChannelState);
        }
        if let Some(c) = latest.filter(|_| !drop_channel_state) {
            for snap in c.states.iter().flatten() {
                for cs in &snap.outputs {
                    self.net.restore_output(cs.ch, &cs.records);
                    self.recovered_out_left[cs.ch as usize] += cs.records.len() as u64;
                    restored += cs.records.len() as u64;
                }
            }
        }
        for t in 0..self.tasks.len() as TaskId {
            let ti = t as usize;
            // Mutant: a source continues from its pre-failure position.
            let live_offsets = if no_rewind && self.tasks[ti].is_source {
                fired(Mutant::NoSourceRewind);
                let (task, mut ctx) = self.ctx_parts(t);
                Some(task.operator.snapshot(0, &mut ctx))
            } else {
                None
            };
            self.tasks[ti] = self.fresh_task(t);
            let snap = latest.and_then(|c| c.states[ti].as_ref());
            self.schedule.restart(
                t,
                latest.filter(|_| snap.is_some()).map(|c| c.id),
                snap.and_then(|s| s.log_pos),
            );
            let state = match (live_offsets, snap) {
                (Some(live), _) => Some(live),
                (None, Some(s)) => Some(s.state.clone()),
                (None, None) => None,
            };
            if let Some(bytes) = state {
                let result = {
                    let (task, mut ctx) = self.ctx_parts(t);
                    task.operator.restore(&bytes, &mut ctx)
                };
                if let Err(e) = result {
                    let name = self.exec.tasks[ti].name.clone();
                    self.violation(
                        "protocol",
                        format!("task {name} could not restore its state: {e}"),
                    );
                }
                self.out.clear();
                if self.tasks[ti].is_source {
                    self.recovery_source_restored(&bytes);
                }
            }
            if let Some(snap) = snap.filter(|_| !drop_channel_state) {
                let batch = self.net.buffer_records.max(1);
                for cs in &snap.inputs {
                    let input = self.exec.channels[cs.ch as usize].input_index;
                    for chunk in cs.records.chunks(batch) {
                        self.tasks[ti]
                            .recovered_input
                            .push_back((input, chunk.to_vec()));
                    }
                    restored += cs.records.len() as u64;
                }
            }
        }
        self.recovery_pending = restored;
        if restored > 0 {
            self.counters.recoveries_with_channel_state += 1;
            self.counters.in_flight_records_restored += restored;
        }
        restored
    }

    // ------------------------------------------------------------ end

    /// Protocol: a checkpoint a task started (read a barrier of, or was
    /// triggered for) must be closed on its outputs — by its barrier or by a
    /// cancellation marker — before the task moves on to a newer one, so
    /// that downstream alignments end (FLINK-18238). Flink's at-least-once
    /// tracker drops superseded checkpoints silently by design, so it is
    /// exempt. Checked for superseded ids of every live task, at each
    /// failover and at the end.
    fn check_closed(&mut self) {
        if self.cfg.algorithm == Algorithm::AtLeastOnce {
            return;
        }
        let mut found = Vec::new();
        for (ti, task) in self.tasks.iter().enumerate() {
            if task.status == Status::Dead || self.task_outputs[ti].is_empty() {
                continue;
            }
            let Some(&newest) = task.started.iter().next_back() else {
                continue;
            };
            for &id in task.started.range(..newest) {
                if !task.closed.contains(&id) {
                    found.push(format!(
                        "task {} started checkpoint {id} but sent neither its barrier nor a cancellation marker downstream before starting checkpoint {newest}",
                        self.exec.tasks[ti].name
                    ));
                }
            }
        }
        for msg in found {
            self.violation("protocol", msg);
        }
    }

    fn finish(&mut self, outcome: Outcome, events: u64) -> RunOutput {
        self.check_closed();
        self.sync_fault_counters();
        for (i, r) in self.savepoint_reports.iter_mut().enumerate() {
            if r.completed.is_some() || r.failure.is_some() {
                continue;
            }
            let end = SimDuration(self.net.now.0);
            let pending = self
                .savepoint_request_of
                .iter()
                .find(|(id, &req)| req == i && self.coord.pending.contains_key(id))
                .map(|(&id, _)| id);
            r.failure = Some(match pending {
                Some(id) => format!(
                    "the run ended ({}) at {end} while savepoint {id} was pending",
                    outcome.describe()
                ),
                _ if r.requested_at_ns > self.net.now.0 => format!(
                    "the run ended ({}) at {end}, before the request was due",
                    outcome.describe()
                ),
                _ => format!(
                    "the run ended ({}) at {end} before the savepoint could be triggered",
                    outcome.describe()
                ),
            });
        }
        let warnings = self.warnings(&outcome);
        let mut keyed_state: BTreeMap<u32, BTreeMap<u64, i64>> = BTreeMap::new();
        let mut order_insensitive = true;
        for t in &self.tasks {
            order_insensitive &= t.operator.order_insensitive_output();
            let s = t.operator.keyed_state();
            if !s.is_empty()
                || self.scenario.operators[t.operator_index as usize]
                    .kind
                    .is_keyed()
            {
                keyed_state.entry(t.operator_index).or_default().extend(s);
            }
        }
        RunOutput {
            outcome,
            events,
            end_time: self.net.now,
            fingerprint: self.fp.finish(),
            counters: std::mem::take(&mut self.counters),
            store: std::mem::take(&mut self.store),
            keyed_state,
            violations: std::mem::take(&mut self.violations),
            checkpoint_stats: std::mem::take(&mut self.coord.stats),
            completed_ids: std::mem::take(&mut self.coord.completed_ids),
            aborted_ids: std::mem::take(&mut self.coord.aborted_ids),
            trace: std::mem::take(&mut self.trace),
            timeline: std::mem::take(&mut self.timeline), // trace
            config: self.cfg.clone(),                     // trace
            crash_plan: std::mem::take(&mut self.crash_plan),
            order_insensitive,
            expected: self.expected,
            fault_phase_end: self.fault_phase_end,
            input_end: self.input_end,
            recovery_ns: std::mem::take(&mut self.recovery_ns),
            snapshots: std::mem::take(&mut self.snapshots),
            complete_below: self.complete_below.take(),
            complete_exempt: std::mem::take(&mut self.complete_exempt),
            savepoints: std::mem::take(&mut self.savepoint_reports),
            warnings,
            schedule: (!self.schedule_partial).then(|| self.schedule.effective_all()),
            failovers: std::mem::take(&mut self.failovers),
            tolerable_failures: self.scenario.checkpoint.tolerable_failures,
        }
    }
}
