//! The simulator's events. Task- and channel-level events are stamped with
//! the job attempt that scheduled them and dropped if the job restarted since
//! (the tasks they were for were cancelled).

use crate::model::flip27::OperatorEvent;
use crate::model::{ChannelId, CheckpointId, TaskId};
use crate::protocol::{AbortReason, Barrier};

#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// A task may take its next step.
    Wake { task: TaskId },
    /// The uncoordinated families: a task's timer for its next basic
    /// checkpoint.
    LocalTimer { task: TaskId },
    /// A source task's periodic watermark timer (event time).
    WatermarkTimer { task: TaskId },
    /// The changelog backend: a task's materialization timer.
    MaterializeTimer { task: TaskId },
    /// The changelog backend: the file of a task's materialization `id` is
    /// written and synced.
    Materialized { task: TaskId, id: u64 },
    /// A reader's watermark alignment timer: its report to the coordinator.
    WatermarkReport { task: TaskId },
    /// A coordinator's watermark alignment announcement.
    AlignmentAnnounce { slot: u32, generation: u32 },
    /// The processing-time service of a task's chain member fires (the
    /// timer it was armed for, `world/timers.rs`).
    ProcessingTimer { task: TaskId, member: u32 },
    /// The head message on a channel's wire arrives.
    Deliver { ch: ChannelId },
    /// A task's flush timer fires: ship partially filled buffers.
    Flush { task: TaskId },
    /// The coordinator's periodic trigger.
    PeriodicTrigger { generation: u32 },
    /// A trigger RPC reaches a source task.
    TriggerSource { task: TaskId, barrier: Barrier },
    /// A task's acknowledgement (with its persisted state) reaches the coordinator.
    Ack { task: TaskId, id: CheckpointId },
    /// A task declined a checkpoint.
    Decline {
        task: TaskId,
        id: CheckpointId,
        reason: AbortReason,
    },
    /// A pending checkpoint's timeout.
    CheckpointTimeout { id: CheckpointId },
    /// The checkpoint's metadata is written: it is complete.
    Finalized { id: CheckpointId },
    /// Checkpoint-complete notification reaches a task.
    NotifyComplete { task: TaskId, id: CheckpointId },
    /// Checkpoint-aborted notification (with the latest completed id) reaches a task.
    NotifyAborted {
        task: TaskId,
        id: CheckpointId,
        latest_completed: CheckpointId,
    },
    /// A planned crash.
    Crash { index: u32 },
    /// The coordinator notices a failure.
    FailureDetected { task: TaskId },
    /// Redeploy all tasks from the latest checkpoint.
    Restart,
    /// A barrier handler's timer (the alignment timeout, input side).
    AlignmentTimer { task: TaskId, id: CheckpointId },
    /// The alignment timeout on a task's output side: timeoutable barriers
    /// still queued turn into priority barriers.
    OutputTimeout { task: TaskId, id: CheckpointId },
    /// `stop-the-world`: a task without outputs reports that everything
    /// upstream of it is drained.
    Drained { task: TaskId, id: CheckpointId },
    /// `stop-the-world`: the coordinator asks a task for its snapshot.
    SnapshotTask { task: TaskId, barrier: Barrier },
    /// A task's state write to checkpoint storage failed (injected), or
    /// (`too_large`: the bytes) its state exceeds memory storage's
    /// `max_state_size`.
    StorageWriteFailed {
        task: TaskId,
        id: CheckpointId,
        too_large: Option<u64>,
    },
    /// The checkpoint's metadata write failed (injected).
    FinalizeFailed { id: CheckpointId },
    /// A planned coordinator crash.
    CoordinatorCrash { index: u32 },
    /// The checkpoint storage crashes (`[faults.storage] crashes`).
    StorageCrash { index: u32 },
    /// A new coordinator took over after a crash.
    CoordinatorRecovered,
    /// A planned worker crash (index into the worker crash plan).
    WorkerCrash { index: u32 },
    /// The coordinator notices a lost worker (heartbeat timeout).
    WorkerLost { worker: u32 },
    /// A network fault (latency spike `index`, or partition `index` past
    /// the spikes) starts, or (`lost`) a partition outlasts the heartbeat
    /// timeout and its cut-off workers are lost.
    NetworkFault { index: u32, lost: bool },
    /// A savepoint request is due (or retried): trigger it when the job
    /// runs and no checkpoint is pending.
    SavepointDue,
    /// Cancel the job (`run --cancel-at`).
    Cancel,
    /// A plain savepoint completed: the task resumes what it paused for
    /// it (stop-the-world sources); no commit, no notification.
    SavepointDone { task: TaskId, id: CheckpointId },
    /// The receiver's `resumeConsumption` reaches the sender of a channel
    /// that a barrier blocked.
    ResumeConsumption { ch: ChannelId },
    /// The head credit message of a channel (`AddCredit`) reaches its
    /// sender.
    Credit { ch: ChannelId },
    /// An operator event from its coordinator reaches a subtask (`lost`:
    /// its RPC failed on the way).
    ToSubtask {
        task: TaskId,
        event: OperatorEvent,
        lost: bool,
    },
    /// The RPC result of an operator event reaches the coordinator: received
    /// (`ok`) or failed.
    EventAck { task: TaskId, ok: bool },
    /// A subtask's operator event reaches its coordinator.
    ToCoordinator { task: TaskId, event: OperatorEvent },
    /// A subtask's word that it snapshotted checkpoint `id` reaches its
    /// coordinator, which sends it the events it held back since its own
    /// checkpoint (Flink's `AcknowledgeCheckpointEvent`).
    SubtaskCheckpointed { task: TaskId, id: CheckpointId },
    /// An operator coordinator's periodic work (split discovery); ignored if
    /// its generation is stale.
    CoordinatorTick { slot: u32, generation: u32 },
}

/// Stamp meaning "valid in every attempt" (coordinator-level events).
pub const ANY_ATTEMPT: u32 = u32::MAX;

pub struct Stamped {
    pub attempt: u32,
    pub ev: Ev,
}

impl Ev {
    /// A stable tag and two fields for the fingerprint.
    pub fn encode(&self) -> (u8, u64, u64) {
        match *self {
            Ev::Wake { task } => (1, task.into(), 0),
            Ev::Deliver { ch } => (2, ch.into(), 0),
            Ev::Flush { task } => (3, task.into(), 0),
            Ev::PeriodicTrigger { generation } => (4, generation.into(), 0),
            Ev::TriggerSource { task, barrier } => (5, task.into(), barrier.id),
            Ev::Ack { task, id } => (6, task.into(), id),
            Ev::Decline { task, id, .. } => (7, task.into(), id),
            Ev::CheckpointTimeout { id } => (8, id, 0),
            Ev::Finalized { id } => (9, id, 0),
            Ev::NotifyComplete { task, id } => (10, task.into(), id),
            Ev::NotifyAborted { task, id, .. } => (11, task.into(), id),
            Ev::Crash { index } => (12, index.into(), 0),
            Ev::FailureDetected { task } => (13, task.into(), 0),
            Ev::Restart => (14, 0, 0),
            Ev::AlignmentTimer { task, id } => (15, task.into(), id),
            Ev::OutputTimeout { task, id } => (16, task.into(), id),
            Ev::Drained { task, id } => (17, task.into(), id),
            Ev::SnapshotTask { task, barrier } => (18, task.into(), barrier.id),
            Ev::StorageWriteFailed { task, id, .. } => (19, task.into(), id),
            Ev::FinalizeFailed { id } => (20, id, 0),
            Ev::CoordinatorCrash { index } => (21, index.into(), 0),
            Ev::CoordinatorRecovered => (22, 0, 0),
            Ev::WorkerCrash { index } => (23, index.into(), 0),
            Ev::WorkerLost { worker } => (24, worker.into(), 0),
            Ev::NetworkFault { index, lost } => (25, index.into(), lost.into()),
            Ev::SavepointDue => (26, 0, 0),
            Ev::Cancel => (27, 0, 0),
            Ev::SavepointDone { task, id } => (28, task.into(), id),
            Ev::ResumeConsumption { ch } => (29, ch.into(), 0),
            Ev::Credit { ch } => (30, ch.into(), 0),
            Ev::ToSubtask { task, event, lost } => {
                (31, task.into(), event_code(event) | u64::from(lost) << 63)
            }
            Ev::EventAck { task, ok } => (32, task.into(), ok.into()),
            Ev::ToCoordinator { task, event } => (33, task.into(), event_code(event)),
            Ev::SubtaskCheckpointed { task, id } => (34, task.into(), id),
            Ev::CoordinatorTick { slot, generation } => (35, slot.into(), generation.into()),
            Ev::LocalTimer { task } => (36, task.into(), 0),
            Ev::WatermarkTimer { task } => (37, task.into(), 0),
            Ev::ProcessingTimer { task, member } => (38, task.into(), member.into()),
            Ev::WatermarkReport { task } => (39, task.into(), 0),
            Ev::AlignmentAnnounce { slot, generation } => (40, slot.into(), generation.into()),
            Ev::StorageCrash { index } => (41, index.into(), 0),
            Ev::MaterializeTimer { task } => (42, task.into(), 0),
            Ev::Materialized { task, id } => (43, task.into(), id),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Ev::Wake { .. } => "wake",
            Ev::Deliver { .. } => "deliver",
            Ev::Flush { .. } => "flush",
            Ev::PeriodicTrigger { .. } => "periodic-trigger",
            Ev::TriggerSource { .. } => "trigger-source",
            Ev::Ack { .. } => "ack",
            Ev::Decline { .. } => "decline",
            Ev::CheckpointTimeout { .. } => "checkpoint-timeout",
            Ev::Finalized { .. } => "finalized",
            Ev::NotifyComplete { .. } => "notify-complete",
            Ev::NotifyAborted { .. } => "notify-aborted",
            Ev::Crash { .. } => "crash",
            Ev::FailureDetected { .. } => "failure-detected",
            Ev::Restart => "restart",
            Ev::AlignmentTimer { .. } => "alignment-timer",
            Ev::OutputTimeout { .. } => "output-timeout",
            Ev::Drained { .. } => "drained",
            Ev::SnapshotTask { .. } => "snapshot-task",
            Ev::StorageWriteFailed { .. } => "storage-write-failed",
            Ev::FinalizeFailed { .. } => "finalize-failed",
            Ev::CoordinatorCrash { .. } => "coordinator-crash",
            Ev::StorageCrash { .. } => "storage-crash",
            Ev::CoordinatorRecovered => "coordinator-recovered",
            Ev::WorkerCrash { .. } => "worker-crash",
            Ev::WorkerLost { .. } => "worker-lost",
            Ev::NetworkFault { .. } => "network-fault",
            Ev::SavepointDue => "savepoint-due",
            Ev::Cancel => "cancel",
            Ev::SavepointDone { .. } => "savepoint-done",
            Ev::ResumeConsumption { .. } => "resume-consumption",
            Ev::Credit { .. } => "credit",
            Ev::ToSubtask { .. } => "to-subtask",
            Ev::EventAck { .. } => "event-ack",
            Ev::ToCoordinator { .. } => "to-coordinator",
            Ev::SubtaskCheckpointed { .. } => "subtask-checkpointed",
            Ev::CoordinatorTick { .. } => "coordinator-tick",
            Ev::LocalTimer { .. } => "local-timer",
            Ev::WatermarkTimer { .. } => "watermark-timer",
            Ev::MaterializeTimer { .. } => "materialize-timer",
            Ev::Materialized { .. } => "materialized",
            Ev::ProcessingTimer { .. } => "processing-timer",
            Ev::WatermarkReport { .. } => "watermark-report",
            Ev::AlignmentAnnounce { .. } => "alignment-announce",
        }
    }
}

/// An operator event as one number, for the fingerprint.
fn event_code(event: OperatorEvent) -> u64 {
    match event {
        OperatorEvent::RequestSplit => 1,
        OperatorEvent::AddSplit(split) => 2 | u64::from(split) << 8,
        OperatorEvent::NoMoreSplits => 3,
        OperatorEvent::ReportedWatermark(w) => 4 ^ (w as u64).rotate_left(8),
        OperatorEvent::WatermarkAlignment(w) => 5 ^ (w as u64).rotate_left(8),
    }
}
