//! Checkpoint algorithms as sans-IO state machines.
//!
//! A [`BarrierHandler`] lives in each task. The task feeds it what arrives on
//! its input channels (barriers, cancellation markers, end of partition) and
//! performs the [`HandlerAction`]s it answers with: block or unblock a
//! channel, take the snapshot, abort. **Invariant:** a handler never reads a
//! clock, draws randomness or touches a queue; the simulator owns all three.
//! One file per algorithm; adding one never touches the others.

pub mod aligned;

use crate::engine::SimTime;
use crate::model::CheckpointId;
use crate::mutant::Mutants;
use crate::scenario::Algorithm;
use serde::{Deserialize, Serialize};

/// A checkpoint barrier as it travels through the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Barrier {
    pub id: CheckpointId,
    /// Trigger time at the coordinator (Flink's `barrier.timestamp`).
    pub timestamp: SimTime,
}

/// Why a task aborted a checkpoint (Flink's decline reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbortReason {
    /// A barrier of a newer checkpoint arrived first (`CHECKPOINT_DECLINED_SUBSUMED`).
    Subsumed,
    /// A cancellation marker arrived (`CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER`).
    CancellationMarker,
}

/// What a handler asks its task to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerAction {
    /// Stop reading this input channel.
    Block(u32),
    /// Resume reading this input channel.
    Unblock(u32),
    /// Resume reading every input channel.
    UnblockAll,
    /// The first barrier of this checkpoint arrived (alignment starts).
    AlignmentStart(CheckpointId),
    /// The last barrier arrived (alignment ends).
    AlignmentEnd(CheckpointId),
    /// Take the snapshot now, forward the barrier, acknowledge.
    Checkpoint(Barrier),
    /// Decline the checkpoint to the coordinator and broadcast a
    /// cancellation marker downstream.
    Abort(CheckpointId, AbortReason),
}

/// The per-task barrier handler of one algorithm.
pub trait BarrierHandler {
    /// A barrier was read from input channel `input`.
    fn on_barrier(&mut self, input: u32, barrier: Barrier, out: &mut Vec<HandlerAction>);
    /// A cancellation marker for `id` was read from `input`.
    fn on_cancel(&mut self, input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>);
    /// The checkpoint this task is aligning, if any (for reachability counters).
    fn aligning(&self) -> Option<CheckpointId>;
}

/// Creates the handler for a task with `inputs` input channels.
pub fn handler_for(algorithm: Algorithm, inputs: u32, mutants: Mutants) -> Box<dyn BarrierHandler> {
    match algorithm {
        Algorithm::Aligned => Box::new(aligned::AlignedHandler::new(inputs, mutants)),
    }
}
