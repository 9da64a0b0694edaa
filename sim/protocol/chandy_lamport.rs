//! `chandy-lamport`: the classic marker algorithm for consistent global
//! snapshots over FIFO channels (K. M. Chandy and L. Lamport, "Distributed
//! Snapshots: Determining Global States of Distributed Systems", ACM TOCS
//! 3(1), 1985), with checkpoint barriers as the markers.
//!
//! On the **first** marker of a checkpoint a task records its own state
//! (snapshots), sends the marker on every output (the snapshot forwards the
//! barrier) and starts recording every *other* input channel: the records
//! that arrive on it until its marker does are that channel's state. The
//! channel that delivered the first marker has empty state. When every input
//! has delivered the marker, recording stops and the task acknowledges.
//! Nothing is ever blocked; unlike Flink's unaligned checkpoints the markers
//! travel in line with the data, so the snapshot comes when the first one
//! is *read*, not when it arrives.
//!
//! The original algorithm runs one snapshot at a time. Here, as in Flink's
//! `SingleCheckpointBarrierHandler`, a marker of a newer checkpoint subsumes
//! a pending one (abort, then start the new one), a cancellation marker
//! aborts the pending checkpoint (only the first marker of an id has an
//! effect), and markers of older or finished checkpoints are ignored.

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, HandlerAction, Round};
use crate::engine::SimTime;

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "chandy-lamport",
    description: "classic markers over FIFO channels: snapshot at the first marker, record each other channel until its marker",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: Some(1),
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: false,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (148, 103, 189),
    handler: |c| Box::new(MarkerHandler::new(c.inputs)),
};

pub struct MarkerHandler {
    round: Round,
}

impl MarkerHandler {
    pub fn new(inputs: u32) -> MarkerHandler {
        MarkerHandler {
            round: Round::new(inputs),
        }
    }

    fn abort(&mut self, id: CheckpointId, reason: AbortReason, out: &mut Vec<HandlerAction>) {
        self.round.abort(id);
        out.push(HandlerAction::Abort(id, reason));
    }
}

impl BarrierHandler for MarkerHandler {
    fn on_barrier(&mut self, input: u32, b: Barrier, _now: SimTime, out: &mut Vec<HandlerAction>) {
        let r = &self.round;
        if r.is_obsolete(b.id) {
            // Obsolete: an older checkpoint, or this one already completed
            // or aborted here.
            return;
        }
        if b.id > r.current {
            // First marker of a new checkpoint.
            if r.is_pending() {
                self.abort(self.round.current, AbortReason::Subsumed, out);
            }
            self.round.start(b.id);
            self.round.mark(input);
            out.push(HandlerAction::AlignmentStart(b.id));
            out.push(HandlerAction::Checkpoint(b));
            // Record every other channel until its marker arrives.
            for i in (0..self.round.inputs()).filter(|&i| i != input) {
                out.push(HandlerAction::CaptureInput(b.id, i));
            }
        } else if !self.round.mark(input) {
            // A later marker closes that channel's state; a repeated one on
            // the same input changes nothing.
            return;
        }
        if self.round.all_marked() {
            out.push(HandlerAction::AlignmentEnd(b.id));
            out.push(HandlerAction::AllBarriers(b.id));
            self.round.finish();
        }
    }

    fn on_cancel(&mut self, _input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        // Only the first marker of a checkpoint has an effect.
        let r = &self.round;
        if id > r.current || (id == r.current && r.is_pending()) {
            self.abort(id, AbortReason::CancellationMarker, out);
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        self.round.is_pending().then_some(self.round.current)
    }
}

#[cfg(test)]
mod tests {
    //! Table-driven: a sequence of inputs per case, the exact actions out.
    use super::*;
    use crate::protocol::testkit::{self, aligned as bar, alphabet, sequences, Case, In, CM};
    use crate::protocol::BarrierKind;
    use HandlerAction::*;

    const KIND: BarrierKind = BarrierKind::Aligned;

    #[test]
    fn table() {
        use In::*;
        let cases: Vec<Case> = vec![
            (
                "single input: snapshot and all markers at once, no capture",
                1,
                vec![B(0, 1)],
                vec![vec![
                    AlignmentStart(1),
                    Checkpoint(bar(1)),
                    AlignmentEnd(1),
                    AllBarriers(1),
                ]],
            ),
            (
                "three inputs: snapshot at the first, capture the others, done at the last",
                3,
                vec![B(1, 1), B(0, 1), B(2, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 2),
                    ],
                    vec![],
                    vec![AlignmentEnd(1), AllBarriers(1)],
                ],
            ),
            (
                "duplicate marker on one input does not count twice",
                2,
                vec![B(0, 1), B(0, 1), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Checkpoint(bar(1)), CaptureInput(1, 1)],
                    vec![],
                    vec![AlignmentEnd(1), AllBarriers(1)],
                ],
            ),
            (
                "newer marker while an older checkpoint is pending subsumes it",
                2,
                vec![B(0, 1), B(1, 2), B(0, 2)],
                vec![
                    vec![AlignmentStart(1), Checkpoint(bar(1)), CaptureInput(1, 1)],
                    vec![
                        Abort(1, AbortReason::Subsumed),
                        AlignmentStart(2),
                        Checkpoint(bar(2)),
                        CaptureInput(2, 0),
                    ],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                ],
            ),
            (
                "the old checkpoint's late marker after subsumption is ignored",
                2,
                vec![B(0, 1), B(1, 2), B(1, 1), B(0, 1), B(0, 2)],
                vec![
                    vec![AlignmentStart(1), Checkpoint(bar(1)), CaptureInput(1, 1)],
                    vec![
                        Abort(1, AbortReason::Subsumed),
                        AlignmentStart(2),
                        Checkpoint(bar(2)),
                        CaptureInput(2, 0),
                    ],
                    vec![],
                    vec![],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                ],
            ),
            (
                "cancellation marker during capture aborts; the rest is ignored",
                3,
                vec![B(0, 1), C(1, 1), B(1, 1), B(2, 1), C(2, 1)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(bar(1)),
                        CaptureInput(1, 1),
                        CaptureInput(1, 2),
                    ],
                    vec![Abort(1, CM)],
                    vec![],
                    vec![],
                    vec![],
                ],
            ),
            (
                "a marker for a newer checkpoint aborts it before any snapshot",
                2,
                vec![C(0, 2), C(1, 2), B(1, 2), B(0, 3)],
                vec![
                    vec![Abort(2, CM)],
                    vec![],
                    vec![],
                    vec![AlignmentStart(3), Checkpoint(bar(3)), CaptureInput(3, 1)],
                ],
            ),
            (
                "a newer cancellation marker drops the pending checkpoint without its own abort",
                2,
                vec![B(0, 1), C(1, 2), B(1, 1)],
                vec![
                    vec![AlignmentStart(1), Checkpoint(bar(1)), CaptureInput(1, 1)],
                    // As in Flink's abortInternal, only the marker's id is
                    // declined; the pending 1 is just forgotten here.
                    vec![Abort(2, CM)],
                    vec![],
                ],
            ),
            (
                "an obsolete marker after completion is ignored",
                2,
                vec![B(0, 2), B(1, 2), B(0, 2), B(1, 1), C(0, 2)],
                vec![
                    vec![AlignmentStart(2), Checkpoint(bar(2)), CaptureInput(2, 1)],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                    vec![],
                    vec![],
                    vec![],
                ],
            ),
            (
                "a cancellation marker for an older checkpoint is ignored",
                2,
                vec![B(0, 2), C(1, 1), B(1, 2)],
                vec![
                    vec![AlignmentStart(2), Checkpoint(bar(2)), CaptureInput(2, 1)],
                    vec![],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                ],
            ),
            (
                // Input 1's upstream task has finished (sent EndOfData) but
                // keeps forwarding markers: its channel state is empty and its
                // marker closes the checkpoint as usual.
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(0, 1), B(1, 1), B(1, 2), B(0, 2)],
                vec![
                    vec![AlignmentStart(1), Checkpoint(bar(1)), CaptureInput(1, 1)],
                    vec![AlignmentEnd(1), AllBarriers(1)],
                    vec![AlignmentStart(2), Checkpoint(bar(2)), CaptureInput(2, 0)],
                    vec![AlignmentEnd(2), AllBarriers(2)],
                ],
            ),
        ];
        testkit::check_table(MarkerHandler::new, KIND, cases);
    }

    /// Exhaustive over short sequences: never blocks; snapshots in
    /// increasing id order, at the first marker, capturing exactly the other
    /// inputs; each snapshot is closed (all markers) or aborted at most once
    /// (in increasing id order) and only after it was taken; `aligning` is
    /// the open snapshot.
    #[test]
    fn exhaustive_small_sequences() {
        for (inputs, len) in [(1, 4), (2, 5), (3, 4)] {
            let alphabet = alphabet(inputs);
            for steps in sequences(&alphabet, len) {
                let mut h = MarkerHandler::new(inputs);
                let mut last_snapshot = 0;
                let mut last_end = 0;
                let mut open: Option<CheckpointId> = None;
                let mut delivered = vec![vec![false; inputs as usize]; 4];
                for &s in &steps {
                    let actions = testkit::step(&mut h, KIND, s);
                    if let In::B(c, id) = s {
                        delivered[id as usize][c as usize] = true;
                    }
                    let mut captured = Vec::new();
                    for a in &actions {
                        match *a {
                            Checkpoint(b) => {
                                assert!(b.id > last_snapshot, "{steps:?}");
                                assert_eq!(open, None, "{steps:?}");
                                assert!(matches!(s, In::B(_, id) if id == b.id));
                                last_snapshot = b.id;
                                open = Some(b.id);
                            }
                            CaptureInput(id, i) => {
                                assert_eq!(open, Some(id), "{steps:?}");
                                captured.push(i);
                            }
                            AllBarriers(id) => {
                                assert_eq!(open, Some(id), "{steps:?}");
                                assert!(delivered[id as usize].iter().all(|&d| d));
                                assert!(id > last_end, "{steps:?}");
                                last_end = id;
                                open = None;
                            }
                            Abort(id, reason) => {
                                if reason == AbortReason::Subsumed {
                                    assert_eq!(open, Some(id), "{steps:?}");
                                }
                                assert!(id > last_end, "{steps:?}");
                                last_end = id;
                                // A cancellation marker of a newer id also
                                // closes the pending snapshot.
                                if open.is_some_and(|o| o <= id) {
                                    open = None;
                                }
                            }
                            AlignmentStart(_) | AlignmentEnd(_) => {}
                            other => panic!("{other:?} from {steps:?}"),
                        }
                    }
                    if !captured.is_empty() || actions.iter().any(|a| matches!(a, Checkpoint(_))) {
                        let first = match s {
                            In::B(c, _) => c,
                            In::C(..) => panic!("a snapshot on a cancellation marker"),
                        };
                        let others: Vec<u32> = (0..inputs).filter(|&i| i != first).collect();
                        assert_eq!(captured, others, "{steps:?}");
                    }
                    assert_eq!(h.aligning(), open, "{steps:?}");
                }
            }
        }
    }

    #[test]
    fn aligning_reports_the_pending_checkpoint() {
        let mut h = MarkerHandler::new(2);
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(0, 4));
        assert_eq!(h.aligning(), Some(4));
        testkit::step(&mut h, KIND, In::B(1, 4));
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(1, 5));
        assert_eq!(h.aligning(), Some(5));
        testkit::step(&mut h, KIND, In::C(0, 5));
        assert_eq!(h.aligning(), None);
    }
}
