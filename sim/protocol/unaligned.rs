//! `unaligned`: Flink's unaligned checkpoints, following
//! `SingleCheckpointBarrierHandler` in its unaligned states
//! (`AlternatingWaitingForFirstBarrierUnaligned` /
//! `AlternatingCollectingBarriersUnaligned`).
//!
//! Barriers are priority events: they overtake queued data at the sender and
//! at the receiver. The task snapshots at the **first** barrier and starts
//! recording every input channel: what is queued ahead of the channel's
//! barrier and what arrives before it becomes input channel state (and is
//! processed as usual). Nothing is ever blocked. When the last barrier
//! arrived, channel state is closed and the task acknowledges. A newer
//! barrier subsumes a pending checkpoint; a cancellation marker aborts it.
//!
//! A barrier of kind `Aligned` is a savepoint's (Flink never takes a
//! savepoint unaligned): for it the handler aligns, as Flink's alternating
//! handler does for barriers whose options are aligned: each channel is
//! blocked at its barrier, the snapshot follows the last one.

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, BarrierKind, HandlerAction, Round};
use crate::engine::SimTime;

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "unaligned",
    description: "Flink unaligned: priority barriers overtake buffered data, snapshot at the first barrier, overtaken records persisted as channel state",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Unaligned,
    max_concurrent: Some(1),
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: true,
    blocks_upstream: true,
    colour: (255, 127, 14),
    handler: |c| Box::new(UnalignedHandler::new(c.inputs)),
};

pub struct UnalignedHandler {
    round: Round,
    /// The current checkpoint aligns (a savepoint's aligned barrier).
    aligned: bool,
}

impl UnalignedHandler {
    pub fn new(inputs: u32) -> UnalignedHandler {
        UnalignedHandler {
            round: Round::new(inputs),
            aligned: false,
        }
    }

    fn abort(&mut self, id: CheckpointId, reason: AbortReason, out: &mut Vec<HandlerAction>) {
        self.round.abort(id);
        if std::mem::take(&mut self.aligned) {
            out.push(HandlerAction::UnblockAll);
        }
        out.push(HandlerAction::Abort(id, reason));
    }
}

impl BarrierHandler for UnalignedHandler {
    fn on_barrier(&mut self, input: u32, b: Barrier, _now: SimTime, out: &mut Vec<HandlerAction>) {
        let aligned = b.kind == BarrierKind::Aligned;
        if self.round.is_obsolete(b.id) {
            if aligned {
                // An aligned barrier blocks its channel: release it.
                out.push(HandlerAction::Unblock(input));
            }
            return; // obsolete; an unaligned barrier blocked nothing
        }
        if b.id > self.round.current {
            if self.round.is_pending() {
                self.abort(self.round.current, AbortReason::Subsumed, out);
            }
            self.round.start(b.id);
            self.aligned = aligned;
            self.round.mark(input);
            out.push(HandlerAction::AlignmentStart(b.id));
            if aligned {
                out.push(HandlerAction::Block(input));
            } else {
                out.push(HandlerAction::Checkpoint(b.as_unaligned()));
                // Every channel, the barrier's own included: its barrier
                // overtook data that is still queued.
                for i in 0..self.round.inputs() {
                    out.push(HandlerAction::CaptureInput(b.id, i));
                }
            }
        } else {
            self.round.mark(input);
            if self.aligned {
                out.push(HandlerAction::Block(input));
            }
        }
        if self.round.all_marked() {
            out.push(HandlerAction::AlignmentEnd(b.id));
            if std::mem::take(&mut self.aligned) {
                out.push(HandlerAction::Checkpoint(b));
                out.push(HandlerAction::AllBarriers(b.id));
                out.push(HandlerAction::UnblockAll);
            } else {
                out.push(HandlerAction::AllBarriers(b.id));
            }
            self.round.finish();
        }
    }

    fn on_cancel(&mut self, _input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        let r = &self.round;
        if id > r.current || (id == r.current && r.count > 0) {
            self.abort(id, AbortReason::CancellationMarker, out);
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        let r = &self.round;
        (r.is_pending() && r.count > 0).then_some(r.current)
    }
}

#[cfg(test)]
mod tests {
    //! Table-driven: a sequence of inputs per case, the exact actions out.
    use super::*;
    use crate::protocol::testkit::{self, aligned as sp, unaligned as bar, Case, In};
    use HandlerAction::*;

    const KIND: BarrierKind = BarrierKind::Unaligned;

    #[test]
    fn table() {
        use In::*;
        let cases: Vec<Case> = vec![
            (
                "single input: snapshot, capture what the barrier overtook, done",
                1,
                vec![B(0, 1)],
                vec![vec![
                    AlignmentStart(1),
                    Checkpoint(bar(1)),
                    CaptureInput(1, 0),
                    AlignmentEnd(1),
                    AllBarriers(1),
                ]],
            ),
            (
                "snapshot at the first barrier, ack after the last, never block",
                3,
                vec![B(2, 1), B(0, 1), B(1, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                        CaptureInput(1, 2),
                    ],
                    vec![],
                    vec![AlignmentEnd(1), AllBarriers(1)],
                ],
            ),
            (
                "duplicate barrier on one channel does not count twice",
                2,
                vec![B(0, 1), B(0, 1), B(1, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                    ],
                    vec![],
                    vec![AlignmentEnd(1), AllBarriers(1)],
                ],
            ),
            (
                "a newer barrier while an older checkpoint is pending subsumes it",
                2,
                vec![B(0, 1), B(1, 2), B(1, 1), B(0, 2)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                    ],
                    vec![
                        Abort(1, AbortReason::Subsumed),
                        AlignmentStart(2),
                        Checkpoint(bar(2)),
                        CaptureInput(2, 0),
                        CaptureInput(2, 1),
                    ],
                    vec![],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                ],
            ),
            (
                "a cancellation marker during capture aborts; the late barrier is obsolete",
                2,
                vec![B(0, 1), C(1, 1), B(1, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                    ],
                    vec![Abort(1, AbortReason::CancellationMarker)],
                    vec![],
                ],
            ),
            (
                "a marker ahead of any barrier aborts that checkpoint before it starts",
                2,
                vec![C(1, 3), C(0, 3), B(0, 3)],
                vec![
                    vec![Abort(3, AbortReason::CancellationMarker)],
                    vec![],
                    vec![],
                ],
            ),
            (
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(1, 4), B(0, 4)],
                vec![
                    vec![
                        AlignmentStart(4),
                        Checkpoint(bar(4)),
                        CaptureInput(4, 0),
                        CaptureInput(4, 1),
                    ],
                    vec![AlignmentEnd(4), AllBarriers(4)],
                ],
            ),
        ];
        testkit::check_table(UnalignedHandler::new, KIND, cases);
    }

    /// `sp(id)` is a savepoint's barrier (kind `Aligned`).
    #[test]
    fn a_savepoint_barrier_aligns() {
        type Step = (u32, Barrier, Vec<HandlerAction>);
        let cases: Vec<(&str, Vec<Step>)> = vec![
            (
                "block each channel at its barrier, snapshot aligned after the last",
                vec![
                    (1, sp(3), vec![AlignmentStart(3), Block(1)]),
                    (
                        0,
                        sp(3),
                        vec![
                            Block(0),
                            AlignmentEnd(3),
                            Checkpoint(sp(3)),
                            AllBarriers(3),
                            UnblockAll,
                        ],
                    ),
                    // The next checkpoint is unaligned again.
                    (
                        0,
                        bar(4),
                        vec![
                            AlignmentStart(4),
                            Checkpoint(bar(4)),
                            CaptureInput(4, 0),
                            CaptureInput(4, 1),
                        ],
                    ),
                ],
            ),
            (
                "a newer unaligned barrier subsumes an aligning savepoint and unblocks",
                vec![
                    (0, sp(3), vec![AlignmentStart(3), Block(0)]),
                    (
                        1,
                        bar(4),
                        vec![
                            UnblockAll,
                            Abort(3, AbortReason::Subsumed),
                            AlignmentStart(4),
                            Checkpoint(bar(4)),
                            CaptureInput(4, 0),
                            CaptureInput(4, 1),
                        ],
                    ),
                    // The savepoint's late barrier is obsolete: release its channel.
                    (1, sp(3), vec![Unblock(1)]),
                ],
            ),
        ];
        for (name, steps) in cases {
            let mut h = UnalignedHandler::new(2);
            for (i, (input, b, expected)) in steps.into_iter().enumerate() {
                let mut out = Vec::new();
                h.on_barrier(input, b, SimTime(0), &mut out);
                assert_eq!(out, expected, "case: {name}, step {i}");
            }
        }
    }
}
