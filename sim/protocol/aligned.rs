//! `aligned`: Flink's exactly-once barrier alignment (asynchronous barrier
//! snapshots), following `SingleCheckpointBarrierHandler` with the aligned
//! state machine (`WaitingForFirstBarrier` / `CollectingBarriers`).
//!
//! Each channel is blocked when its barrier arrives; when barriers arrived on
//! all channels the task snapshots, forwards the barrier and unblocks all. A
//! barrier of a newer checkpoint aborts the pending one (subsumed); a
//! cancellation marker aborts it too; obsolete barriers are ignored (and
//! unblock their channel, as Flink's producer-side blocking requires).
//!
//! On a cycle (inputs that are feedback edges' channels) it is
//! Asynchronous Barrier Snapshotting's variant for cyclic dataflows
//! (Carbone et al. 2015, §4.3): it aligns on the other inputs only; a
//! feedback input whose barrier comes first is blocked like any; once the
//! others aligned it snapshots and forwards, and **logs** each feedback
//! input that has not delivered its barrier yet (its records up to the
//! barrier are channel state, `CaptureInput`), the barrier that went around
//! the loop closing the log (`AllBarriers` after the last). Mutants show the
//! naive ways: `aligned-waits-on-feedback` aligns on the feedback inputs too
//! (the barrier it waits for comes after its own snapshot: no checkpoint
//! ever completes), `feedback-not-logged` snapshots without the log (the
//! loop's records in transit are lost on a restore, Flink's forced mode on
//! iterations).

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, HandlerAction, HandlerConfig};
use crate::engine::SimTime;
use crate::mutant::{Mutant, Mutants};

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "aligned",
    description: "Flink exactly-once ABS: block each channel at its barrier until all arrived, then snapshot and forward",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: true,
    colour: (31, 119, 180),
    handler: |c| Box::new(AlignedHandler::for_task(c)),
};

pub struct AlignedHandler {
    /// Highest checkpoint id seen (0 = none yet).
    current: CheckpointId,
    /// Highest id that completed alignment or was cancelled here.
    last_done: CheckpointId,
    /// Which inputs delivered the current barrier.
    aligned: Vec<bool>,
    aligned_count: u32,
    pending: Option<Barrier>,
    mutants: Mutants,
    /// Per input: a feedback edge's channel (empty: none).
    feedback: Vec<bool>,
    /// Inputs that alignment waits for (all but the feedback ones).
    regular: u32,
    /// The checkpoint whose feedback inputs are being logged, and those
    /// still to deliver its barrier.
    logging: Option<(CheckpointId, u32)>,
}

impl AlignedHandler {
    pub fn new(inputs: u32) -> AlignedHandler {
        AlignedHandler::with_mutants(inputs, Mutants::NONE)
    }

    /// The handler of a task as its configuration describes it (its
    /// feedback inputs included).
    pub fn for_task(c: &HandlerConfig) -> AlignedHandler {
        let mut h = AlignedHandler::with_mutants(c.inputs, c.mutants);
        if c.feedback.iter().any(|&f| f) {
            if c.mutants.has(Mutant::AlignedWaitsOnFeedback) {
                crate::mutant::fired(Mutant::AlignedWaitsOnFeedback);
            } else {
                h.feedback = c.feedback.clone();
                h.regular = c.feedback.iter().filter(|&&f| !f).count() as u32;
            }
        }
        h
    }

    pub(crate) fn with_mutants(inputs: u32, mutants: Mutants) -> AlignedHandler {
        AlignedHandler {
            feedback: Vec::new(),
            regular: inputs,
            logging: None,
            current: 0,
            last_done: 0,
            aligned: vec![false; inputs as usize],
            aligned_count: 0,
            pending: None,
            mutants,
        }
    }

    fn is_pending(&self) -> bool {
        self.current != self.last_done && self.current > 0
    }

    fn reset_alignment(&mut self) {
        self.aligned.iter_mut().for_each(|a| *a = false);
        self.aligned_count = 0;
        self.pending = None;
    }

    fn is_feedback(&self, input: u32) -> bool {
        self.feedback.get(input as usize).copied().unwrap_or(false)
    }

    /// Every regular input delivered the barrier: snapshot and forward,
    /// then log the feedback inputs whose barrier is still on its way.
    fn aligned(&mut self, b: Barrier, out: &mut Vec<HandlerAction>) {
        out.push(HandlerAction::AlignmentEnd(b.id));
        out.push(HandlerAction::Checkpoint(b));
        let mut open = 0;
        for input in 0..self.aligned.len() as u32 {
            if self.is_feedback(input) && !self.aligned[input as usize] {
                if self.mutants.has(Mutant::FeedbackNotLogged) {
                    crate::mutant::fired(Mutant::FeedbackNotLogged);
                    continue;
                }
                out.push(HandlerAction::CaptureInput(b.id, input));
                open += 1;
            }
        }
        match open {
            0 => out.push(HandlerAction::AllBarriers(b.id)),
            n => self.logging = Some((b.id, n)),
        }
        out.push(HandlerAction::UnblockAll);
        self.reset_alignment();
        self.last_done = self.current;
    }

    fn abort(&mut self, id: CheckpointId, reason: AbortReason, out: &mut Vec<HandlerAction>) {
        self.logging = None;
        self.current = self.current.max(id);
        self.last_done = self.last_done.max(id);
        let held = self.aligned_count > 0;
        self.reset_alignment();
        if !self.mutants.has(Mutant::AbortKeepsBlocked) {
            out.push(HandlerAction::UnblockAll);
        } else if held {
            crate::mutant::fired(Mutant::AbortKeepsBlocked);
        }
        out.push(HandlerAction::Abort(id, reason));
    }
}

impl BarrierHandler for AlignedHandler {
    fn on_barrier(&mut self, input: u32, b: Barrier, _now: SimTime, out: &mut Vec<HandlerAction>) {
        if let Some((id, open)) = self.logging.filter(|(id, _)| *id == b.id) {
            if self.is_feedback(input) {
                // The barrier came around the loop: this input's log ends.
                out.push(HandlerAction::Unblock(input));
                match open {
                    1 => {
                        self.logging = None;
                        out.push(HandlerAction::AllBarriers(id));
                    }
                    n => self.logging = Some((id, n - 1)),
                }
                return;
            }
        }
        if let Some((id, _)) = self.logging.filter(|(id, _)| b.id > *id) {
            // A newer checkpoint before the loop brought the last one's
            // barrier back: the older one is subsumed.
            self.logging = None;
            out.push(HandlerAction::Abort(id, AbortReason::Subsumed));
        }
        if self.current > b.id || (self.current == b.id && !self.is_pending()) {
            // Obsolete: ignore, but release the channel it would have held.
            out.push(HandlerAction::Unblock(input));
            return;
        }
        if b.id > self.current {
            if self.is_pending() {
                self.abort(self.current, AbortReason::Subsumed, out);
            }
            self.current = b.id;
            self.reset_alignment();
            self.pending = Some(b);
        }
        let slot = &mut self.aligned[input as usize];
        if !*slot {
            *slot = true;
            self.aligned_count += 1;
            if self.aligned_count == 1 {
                out.push(HandlerAction::AlignmentStart(b.id));
            }
        }
        out.push(HandlerAction::Block(input));
        let regular_aligned = match self.feedback.is_empty() {
            true => self.aligned_count as usize == self.aligned.len(),
            false => (0..self.aligned.len()).all(|i| self.aligned[i] || self.feedback[i]),
        };
        if regular_aligned {
            self.aligned(b, out);
        }
    }

    fn on_cancel(&mut self, _input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        let logged = self.logging.is_some_and(|(l, _)| l == id);
        if logged || id > self.current || (id == self.current && self.aligned_count > 0) {
            self.abort(id, AbortReason::CancellationMarker, out);
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        match self.logging {
            Some((id, _)) => Some(id),
            None => (self.is_pending() && self.aligned_count > 0).then_some(self.current),
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const AbortKeepsBlocked: Mutant = Mutant::declare(&MutantInfo {
            name: "abort-keeps-blocked",
            part: "cancellation and abort paths",
            what: "aborting an alignment (subsumed or cancelled) does not unblock the channels it blocked",
            modelled_on: "channels left blocked after an aborted or timed-out alignment (FLINK-22638 and resumeConsumption bugs)",
            caught_by: "liveness",
            applies: &[("timeouts", "aligned")],
        });
        pub const AlignedWaitsOnFeedback: Mutant = Mutant::declare(&MutantInfo {
            name: "aligned-waits-on-feedback",
            part: "iterations (aligned)",
            what: "on a cycle the aligned handler waits for the barrier of its feedback inputs too, which only comes back after its own snapshot: no checkpoint ever completes",
            modelled_on: "plain barrier alignment on a cyclic dataflow (Carbone et al. 2015, §4.3: ABS excludes back-edges from alignment); Flink refuses exactly-once checkpoints on iterations for this reason",
            caught_by: "liveness",
            applies: &[("iterate", "aligned")],
        });
        pub const FeedbackNotLogged: Mutant = Mutant::declare(&MutantInfo {
            name: "feedback-not-logged",
            part: "iterations (aligned)",
            what: "on a cycle the aligned handler snapshots once its other inputs aligned but does not log its feedback inputs until their barrier comes back: the loop's records in transit belong to no snapshot and are lost on a restore",
            modelled_on: "Flink's forced checkpointing mode on iterations (`enableCheckpointing(interval, mode, force = true)`), whose documentation warns that records in transit in the loop are lost on failure",
            caught_by: "consistent-cut",
            applies: &[("iterate", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    //! Table-driven: a sequence of inputs per case, the exact actions out.
    use super::*;
    use crate::protocol::testkit::{self, aligned as bar, Case, In};
    use crate::protocol::BarrierKind;
    use HandlerAction::*;

    const KIND: BarrierKind = BarrierKind::Aligned;

    /// On a cycle: input 2 is a feedback edge's channel (ABS for cyclic
    /// dataflows); the mutants align on it, or do not log it.
    #[test]
    fn a_feedback_input_is_logged_not_aligned() {
        use In::*;
        let feedback = |mutants: Mutants| {
            move |inputs: u32| {
                let mut c = HandlerConfig::new(inputs, false, crate::engine::SimDuration::ZERO);
                c.feedback = vec![false, false, true];
                c.mutants = mutants;
                AlignedHandler::for_task(&c)
            }
        };
        let cases: Vec<Case> = vec![
            (
                "the regular inputs align, the feedback input is logged until its barrier",
                3,
                vec![B(0, 1), B(1, 1), B(2, 1)],
                vec![
                    vec![AlignmentStart(1), Block(0)],
                    vec![
                        Block(1),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 2),
                        UnblockAll,
                    ],
                    vec![Unblock(2), AllBarriers(1)],
                ],
            ),
            (
                "a feedback barrier before the snapshot blocks its input, nothing to log",
                3,
                vec![B(2, 1), B(0, 1), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Block(2)],
                    vec![Block(0)],
                    vec![
                        Block(1),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        AllBarriers(1),
                        UnblockAll,
                    ],
                ],
            ),
            (
                "a cancellation marker ends the log; a newer checkpoint subsumes it",
                3,
                vec![B(0, 1), B(1, 1), C(2, 1), B(0, 2), B(1, 2), B(0, 3)],
                vec![
                    vec![AlignmentStart(1), Block(0)],
                    vec![
                        Block(1),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 2),
                        UnblockAll,
                    ],
                    vec![UnblockAll, Abort(1, testkit::CM)],
                    vec![AlignmentStart(2), Block(0)],
                    vec![
                        Block(1),
                        AlignmentEnd(2),
                        Checkpoint(bar(2)),
                        CaptureInput(2, 2),
                        UnblockAll,
                    ],
                    vec![Abort(2, AbortReason::Subsumed), AlignmentStart(3), Block(0)],
                ],
            ),
        ];
        testkit::check_table(feedback(Mutants::NONE), KIND, cases);
        let waits = vec![(
            "aligned-waits-on-feedback: the feedback input is waited for",
            3,
            vec![B(0, 1), B(1, 1)],
            vec![vec![AlignmentStart(1), Block(0)], vec![Block(1)]],
        )];
        let m = Mutants::NONE.with(Mutant::AlignedWaitsOnFeedback);
        testkit::check_table(feedback(m), KIND, waits);
        let unlogged = vec![(
            "feedback-not-logged: no capture of the feedback input",
            3,
            vec![B(0, 1), B(1, 1)],
            vec![
                vec![AlignmentStart(1), Block(0)],
                vec![
                    Block(1),
                    AlignmentEnd(1),
                    Checkpoint(bar(1)),
                    AllBarriers(1),
                    UnblockAll,
                ],
            ],
        )];
        let m = Mutants::NONE.with(Mutant::FeedbackNotLogged);
        testkit::check_table(feedback(m), KIND, unlogged);
    }

    #[test]
    fn table() {
        use In::*;
        let cases: Vec<Case> = vec![
            (
                "single input: align and snapshot at once",
                1,
                vec![B(0, 1)],
                vec![vec![
                    AlignmentStart(1),
                    Block(0),
                    AlignmentEnd(1),
                    Checkpoint(bar(1)),
                    AllBarriers(1),
                    UnblockAll,
                ]],
            ),
            (
                "two inputs: block the first, snapshot at the second",
                2,
                vec![B(1, 1), B(0, 1)],
                vec![
                    vec![AlignmentStart(1), Block(1)],
                    vec![
                        Block(0),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        AllBarriers(1),
                        UnblockAll,
                    ],
                ],
            ),
            (
                "duplicate barrier on one channel does not count twice",
                2,
                vec![B(0, 1), B(0, 1), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Block(0)],
                    vec![Block(0)],
                    vec![
                        Block(1),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        AllBarriers(1),
                        UnblockAll,
                    ],
                ],
            ),
            (
                "newer barrier subsumes the pending checkpoint",
                2,
                vec![B(0, 1), B(1, 2), B(0, 2), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Block(0)],
                    vec![
                        UnblockAll,
                        Abort(1, AbortReason::Subsumed),
                        AlignmentStart(2),
                        Block(1),
                    ],
                    vec![
                        Block(0),
                        AlignmentEnd(2),
                        Checkpoint(bar(2)),
                        AllBarriers(2),
                        UnblockAll,
                    ],
                    vec![Unblock(1)],
                ],
            ),
            (
                "cancellation marker during alignment aborts and unblocks",
                3,
                vec![B(0, 1), C(1, 1), B(2, 1), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Block(0)],
                    vec![UnblockAll, Abort(1, AbortReason::CancellationMarker)],
                    vec![Unblock(2)],
                    vec![Unblock(1)],
                ],
            ),
            (
                "only the first marker of a checkpoint has an effect",
                2,
                vec![C(0, 3), C(1, 3), B(0, 3)],
                vec![
                    vec![UnblockAll, Abort(3, AbortReason::CancellationMarker)],
                    vec![],
                    vec![Unblock(0)],
                ],
            ),
            (
                "a completed checkpoint's late barrier is obsolete",
                1,
                vec![B(0, 1), B(0, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Block(0),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        AllBarriers(1),
                        UnblockAll,
                    ],
                    vec![Unblock(0)],
                ],
            ),
            (
                // Finished upstream tasks keep forwarding barriers here (no
                // EndOfPartition), so the barrier counts like any other.
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(1, 5), B(0, 5)],
                vec![
                    vec![AlignmentStart(5), Block(1)],
                    vec![
                        Block(0),
                        AlignmentEnd(5),
                        Checkpoint(bar(5)),
                        AllBarriers(5),
                        UnblockAll,
                    ],
                ],
            ),
            (
                "marker for an older checkpoint is ignored",
                2,
                vec![B(0, 2), C(1, 1), B(1, 2)],
                vec![
                    vec![AlignmentStart(2), Block(0)],
                    vec![],
                    vec![
                        Block(1),
                        AlignmentEnd(2),
                        Checkpoint(bar(2)),
                        AllBarriers(2),
                        UnblockAll,
                    ],
                ],
            ),
        ];
        testkit::check_table(AlignedHandler::new, KIND, cases);
    }

    #[test]
    fn aligning_reports_the_pending_checkpoint() {
        let mut h = AlignedHandler::new(2);
        let mut out = Vec::new();
        assert_eq!(h.aligning(), None);
        h.on_barrier(0, bar(4), SimTime(0), &mut out);
        assert_eq!(h.aligning(), Some(4));
        h.on_barrier(1, bar(4), SimTime(0), &mut out);
        assert_eq!(h.aligning(), None);
    }
}
