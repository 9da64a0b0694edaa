//! A task's way out (FLIP-147, `world/exit.rs`): what it waits for between
//! the end of its input and its exit, held per task and reset with it.
//!
//! Flink's `StreamTask` ends its data (`endData`: `endInput` and `finish`
//! on every operator, `EndOfData` on every output), takes part in
//! checkpoints on, and exits only once (`afterInvoke`):
//! - every input delivered `EndOfPartition` (its upstream tasks exited),
//! - every output's receiver consumed its `EndOfData`
//!   (`ResultPartitionWriter.getAllDataProcessedFuture`), and
//! - it was notified of a checkpoint at least as new as the first one it
//!   snapshotted after its end of data (`finalCheckpointMinId`), or, if it
//!   snapshotted a stop-with-savepoint, of that savepoint
//!   (`syncSavepoint`).

use crate::model::CheckpointId;
use crate::protocol::Barrier;

#[derive(Clone, Debug, Default)]
pub(super) struct ExitState {
    /// The first checkpoint snapshotted after the end of data (Flink's
    /// `finalCheckpointMinId`): a notification of it or a newer one lets
    /// the task exit.
    pub(super) final_min: Option<CheckpointId>,
    /// When the coordinator learns that it exited (its report's RPC
    /// arrives): from then on it plans checkpoints with the task finished.
    pub(super) reported_at: Option<crate::engine::SimTime>,
    /// Checkpoints triggered in the run when its data ended.
    pub(super) triggers_at_end: u64,
    /// Per input: `EndOfPartition` read (the upstream task exited).
    pub(super) eop: Vec<bool>,
    /// Inputs that still owe `EndOfPartition` (feedback inputs never do).
    pub(super) eop_remaining: u32,
    /// Outputs whose receiver has not read this task's `EndOfData` yet
    /// (feedback outputs are not waited for).
    pub(super) eod_unconsumed: u32,
    /// Per input: the newest barrier it delivered to the handler, real or
    /// stood in for (0: none).
    pub(super) input_barrier: Vec<CheckpointId>,
    /// The newest barrier the handler took on any input.
    pub(super) last_barrier: Option<Barrier>,
    /// Its latest snapshot after the end of its data (operator states,
    /// event-time clocks, timers): what a checkpoint that reports it
    /// finished holds for it.
    pub(super) end_state: Option<Box<crate::runtime::coordinator::TaskSnapshot>>,
    /// Deployed as finished: it runs no operator code, and its snapshots
    /// report it finished (Flink's `TaskStateSnapshot.FINISHED_ON_RESTORE`),
    /// so a later restore deploys it finished again.
    pub(super) deployed_finished: bool,
    /// The checkpoint restored had this subtask finished (the judge's
    /// record, kept apart from how it was deployed): running operator code
    /// again is a violation of the finishing check.
    pub(super) was_finished: Option<CheckpointId>,
    /// The violation for running again was reported (once per deployment).
    pub(super) reran_noted: bool,
    /// Its `EndOfData` waits for the notification of its final checkpoint
    /// (a committer that feeds a global committer, on the development
    /// line: FLINK-38614's fix).
    pub(super) eod_deferred: bool,
    /// It snapshotted this stop-with-savepoint (Flink's `syncSavepoint`):
    /// only that savepoint's notification lets it exit, whatever it
    /// waited for before.
    pub(super) sync_savepoint: Option<CheckpointId>,
    /// The notification of `sync_savepoint` arrived.
    pub(super) sync_notified: bool,
    /// Its barrier handler's actions are being applied (nesting depth):
    /// the task's thread is inside one mailbox action, so it cannot exit
    /// before the last of them (Flink's task leaves its mailbox loop only
    /// between mails).
    pub(super) in_actions: u32,
    /// An exit was tried while `in_actions`: tried again after them.
    pub(super) exit_held: bool,
}

impl ExitState {
    /// A task with `inputs` inputs, `feedback` of them feedback inputs, and
    /// `outputs` outputs not feeding back.
    pub(super) fn new(inputs: u32, feedback: u32, outputs: u32) -> ExitState {
        ExitState {
            eop: vec![false; inputs as usize],
            eop_remaining: inputs - feedback,
            eod_unconsumed: outputs,
            input_barrier: vec![0; inputs as usize],
            ..ExitState::default()
        }
    }
}
