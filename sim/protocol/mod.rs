//! Checkpoint algorithms as sans-IO state machines.
//!
//! A [`BarrierHandler`] lives in each task. The task feeds it what arrives on
//! its input channels (barriers, cancellation markers, end of partition) and
//! performs the [`HandlerAction`]s it answers with: block or unblock a
//! channel, take the snapshot, abort. **Invariant:** a handler never reads a
//! clock, draws randomness or touches a queue; the simulator owns all three.
//! One file per algorithm; adding one never touches the others.

pub mod aligned;
pub mod aligned_timeout;
pub mod at_least_once;
pub mod chandy_lamport;
pub mod cic_bcs;
pub mod cic_hmnr;
pub mod local;
pub mod none;
pub mod registry;
pub mod stop_the_world;
#[cfg(test)]
mod testkit;
pub mod unaligned;
pub mod uncoordinated;

pub use registry::{Algorithm, AlgorithmInfo, Coordination, Guarantee, REGISTRY};

use crate::engine::SimTime;
use crate::mutant::Mutants;

/// A checkpoint id. Ids start at 1 and increase within a run.
pub type CheckpointId = u64;
use serde::{Deserialize, Serialize};

/// How a barrier travels and what the receiver may do with it (Flink's
/// `CheckpointOptions.AlignmentType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BarrierKind {
    /// In line behind data; the receiver aligns (or, for the non-blocking
    /// variants, just counts).
    Aligned,
    /// Aligned, but may turn unaligned once the checkpoint is older than
    /// the alignment timeout (`aligned-timeout`).
    Timeoutable,
    /// A priority event: overtakes queued data at the sender and the
    /// receiver; what it overtakes becomes channel state.
    Unaligned,
}

/// A checkpoint barrier as it travels through the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Barrier {
    pub id: CheckpointId,
    /// Trigger time at the coordinator (Flink's `barrier.timestamp`).
    pub timestamp: SimTime,
    pub kind: BarrierKind,
}

impl Barrier {
    /// The same barrier as an unaligned (priority) one.
    pub fn as_unaligned(self) -> Barrier {
        Barrier {
            kind: BarrierKind::Unaligned,
            ..self
        }
    }
}

/// Why a task aborted a checkpoint (Flink's decline reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbortReason {
    /// A barrier of a newer checkpoint arrived first (`CHECKPOINT_DECLINED_SUBSUMED`).
    Subsumed,
    /// A cancellation marker arrived (`CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER`).
    CancellationMarker,
    /// The trigger reached a task that exited after the checkpoint was
    /// planned (FLIP-147; Flink fails the trigger of a task no longer
    /// running).
    TaskFinished,
}

/// What a handler asks its task to do. A task performs the actions of one
/// call in order, within the same instant.
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
    /// Take the operator snapshot now and forward the barrier downstream
    /// (its kind says whether it overtakes queued output).
    Checkpoint(Barrier),
    /// Record this input channel's in-flight records for the checkpoint:
    /// the data queued ahead of the channel's barrier now, and every data
    /// buffer that arrives until the barrier does.
    CaptureInput(CheckpointId, u32),
    /// Every input delivered the checkpoint's barrier: close the channel
    /// state and acknowledge once the snapshot is written.
    AllBarriers(CheckpointId),
    /// Call [`BarrierHandler::on_timer`] with this id at this virtual time.
    ArmTimer(CheckpointId, SimTime),
    /// Decline the checkpoint to the coordinator, drop any channel state
    /// captured for it and broadcast a cancellation marker downstream.
    Abort(CheckpointId, AbortReason),
    /// `stop-the-world`: every input delivered the drain marker; forward it
    /// (a task without outputs reports "drained" to the coordinator).
    Drained(Barrier),
}

/// The bookkeeping of handlers that follow one checkpoint at a time (Flink's
/// `currentCheckpointId`, `lastCancelledOrCompletedCheckpointId` and the set
/// of inputs that delivered the current barrier).
pub(crate) struct Round {
    /// Highest checkpoint id seen (0 = none yet).
    pub current: CheckpointId,
    /// Highest id whose barriers all arrived here, or that was aborted.
    pub last_done: CheckpointId,
    /// Which inputs delivered the current barrier.
    seen: Vec<bool>,
    pub count: u32,
}

impl Round {
    pub fn new(inputs: u32) -> Round {
        Round {
            current: 0,
            last_done: 0,
            seen: vec![false; inputs as usize],
            count: 0,
        }
    }

    pub fn inputs(&self) -> u32 {
        self.seen.len() as u32
    }

    /// The current checkpoint started here and is not finished or aborted.
    pub fn is_pending(&self) -> bool {
        self.current != self.last_done && self.current > 0
    }

    /// A barrier of an older checkpoint, or of one finished or aborted here.
    pub fn is_obsolete(&self, id: CheckpointId) -> bool {
        id < self.current || (id == self.current && !self.is_pending())
    }

    /// Starts following checkpoint `id` with no input marked.
    pub fn start(&mut self, id: CheckpointId) {
        self.current = id;
        self.reset();
    }

    /// Marks `input`; false if it was already marked.
    pub fn mark(&mut self, input: u32) -> bool {
        let slot = &mut self.seen[input as usize];
        if *slot {
            return false;
        }
        *slot = true;
        self.count += 1;
        true
    }

    pub fn all_marked(&self) -> bool {
        self.count as usize == self.seen.len()
    }

    /// Every input delivered the current barrier.
    pub fn finish(&mut self) {
        self.reset();
        self.last_done = self.current;
    }

    /// `id` is aborted here: it and everything older become obsolete.
    pub fn abort(&mut self, id: CheckpointId) {
        self.current = self.current.max(id);
        self.last_done = self.last_done.max(id);
        self.reset();
    }

    fn reset(&mut self) {
        self.seen.iter_mut().for_each(|s| *s = false);
        self.count = 0;
    }
}

/// The per-task barrier handler of one algorithm.
pub trait BarrierHandler {
    /// A barrier was read from input channel `input` at virtual time `now`.
    fn on_barrier(
        &mut self,
        input: u32,
        barrier: Barrier,
        now: SimTime,
        out: &mut Vec<HandlerAction>,
    );
    /// A cancellation marker for `id` was read from `input`.
    fn on_cancel(&mut self, input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>);
    /// A timeoutable barrier arrived on `input` but waits behind queued data
    /// (Flink's `EventAnnouncement`, a priority event that tells the task
    /// early). Only `aligned-timeout` cares.
    fn on_announcement(
        &mut self,
        _input: u32,
        _barrier: Barrier,
        _now: SimTime,
        _out: &mut Vec<HandlerAction>,
    ) {
    }
    /// A timer armed with [`HandlerAction::ArmTimer`] fired.
    fn on_timer(&mut self, _id: CheckpointId, _out: &mut Vec<HandlerAction>) {}
    /// The checkpoint this task is aligning or capturing, if any (for
    /// reachability counters).
    fn aligning(&self) -> Option<CheckpointId>;
}

/// What the handler of one task needs to know besides the algorithm.
#[derive(Clone, Debug)]
pub struct HandlerConfig {
    pub inputs: u32,
    /// Per input: it is a feedback edge's channel (an iteration's; empty:
    /// none is).
    pub feedback: Vec<bool>,
    /// An input edge is forward or broadcast: Flink forces this node to
    /// align even when checkpoints are unaligned.
    pub forced_aligned: bool,
    pub alignment_timeout: crate::engine::SimDuration,
    /// Deliberate bugs are switched on by the simulator only (through
    /// `RunConfig::mutants`), never by a handler built outside the crate.
    pub(crate) mutants: Mutants,
}

impl HandlerConfig {
    /// A configuration with no mutant switched on.
    pub fn new(
        inputs: u32,
        forced_aligned: bool,
        alignment_timeout: crate::engine::SimDuration,
    ) -> HandlerConfig {
        HandlerConfig {
            inputs,
            feedback: Vec::new(),
            forced_aligned,
            alignment_timeout,
            mutants: Mutants::NONE,
        }
    }
}

/// Creates the handler for a task: the algorithm's own, or the aligned
/// handler where Flink forces alignment and the algorithm obeys it.
pub fn handler_for(algorithm: Algorithm, cfg: HandlerConfig) -> Box<dyn BarrierHandler> {
    let info = algorithm.info();
    if cfg.forced_aligned && info.forced_alignment {
        return Box::new(aligned::AlignedHandler::for_task(&cfg));
    }
    (info.handler)(&cfg)
}
