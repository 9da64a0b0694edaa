//! `stop-the-world`: the synchronous baseline. The coordinator pauses the
//! sources, waits until every channel has drained, has every task snapshot,
//! then resumes the sources. It is the textbook "quiesce, then snapshot"
//! checkpoint that asynchronous barrier snapshots (Carbone et al., 2015) were
//! designed to avoid, kept here as the reference point for pause cost.
//!
//! This handler is the task's side of the drain. Once paused, each source
//! sends one drain marker per output channel behind its last data record.
//! Channels are FIFO, so when a task has read the marker on every input,
//! nothing is in flight towards it; it forwards the marker (`Drained`), and a
//! task without outputs reports to the coordinator. The snapshot itself is
//! requested by the coordinator afterwards, so there is no `Checkpoint`
//! action here, no channel capture and no blocking: nothing follows a marker
//! while the sources are paused.
//!
//! The bookkeeping is the one of Flink's `SingleCheckpointBarrierHandler`: a
//! marker of a newer id subsumes a pending drain, a cancellation marker
//! aborts it (only the first marker of an id has an effect), and markers of
//! older or finished drains are ignored.

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, HandlerAction, Round};
use crate::engine::SimTime;

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "stop-the-world",
    description: "pause the sources, drain every channel, snapshot every task, resume: the synchronous baseline",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: Some(1),
    coordination: super::registry::Coordination::StopTheWorld,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (140, 86, 75),
    handler: |c| Box::new(DrainHandler::new(c.inputs)),
};

pub struct DrainHandler {
    round: Round,
}

impl DrainHandler {
    pub fn new(inputs: u32) -> DrainHandler {
        DrainHandler {
            round: Round::new(inputs),
        }
    }

    fn abort(&mut self, id: CheckpointId, reason: AbortReason, out: &mut Vec<HandlerAction>) {
        self.round.abort(id);
        out.push(HandlerAction::Abort(id, reason));
    }
}

impl BarrierHandler for DrainHandler {
    fn on_barrier(&mut self, input: u32, b: Barrier, _now: SimTime, out: &mut Vec<HandlerAction>) {
        let r = &self.round;
        if r.is_obsolete(b.id) {
            // Obsolete: an older drain, or this one already done or aborted.
            return;
        }
        if b.id > r.current {
            // First marker of a new drain.
            if r.is_pending() {
                self.abort(self.round.current, AbortReason::Subsumed, out);
            }
            self.round.start(b.id);
            out.push(HandlerAction::AlignmentStart(b.id));
        }
        if !self.round.mark(input) {
            return; // a repeated marker on the same input counts once
        }
        if self.round.all_marked() {
            out.push(HandlerAction::AlignmentEnd(b.id));
            out.push(HandlerAction::Drained(b));
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

    /// What the completing marker answers.
    fn drained(id: CheckpointId) -> Vec<HandlerAction> {
        vec![AlignmentEnd(id), Drained(bar(id))]
    }

    #[test]
    fn table() {
        use In::*;
        let cases: Vec<Case> = vec![
            (
                "single input: drained at once",
                1,
                vec![B(0, 1)],
                vec![vec![AlignmentStart(1), AlignmentEnd(1), Drained(bar(1))]],
            ),
            (
                "three inputs: drained at the last marker, a duplicate counts once",
                3,
                vec![B(2, 1), B(0, 1), B(0, 1), B(1, 1)],
                vec![vec![AlignmentStart(1)], vec![], vec![], drained(1)],
            ),
            (
                "a newer marker subsumes the pending drain",
                2,
                vec![B(0, 1), B(1, 2), B(0, 2), B(0, 1)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![Abort(1, AbortReason::Subsumed), AlignmentStart(2)],
                    drained(2),
                    vec![],
                ],
            ),
            (
                "a cancellation marker during the drain aborts it once",
                2,
                vec![B(0, 1), C(1, 1), B(1, 1), C(0, 1)],
                vec![vec![AlignmentStart(1)], vec![Abort(1, CM)], vec![], vec![]],
            ),
            (
                "a cancellation marker for a newer id aborts it before its markers",
                2,
                vec![C(0, 2), B(1, 2), B(0, 2), B(0, 3), B(1, 3)],
                vec![
                    vec![Abort(2, CM)],
                    vec![],
                    vec![],
                    vec![AlignmentStart(3)],
                    drained(3),
                ],
            ),
            (
                "an obsolete marker after the drain is ignored",
                2,
                vec![B(0, 2), B(1, 2), B(0, 2), B(1, 1), C(1, 2)],
                vec![vec![AlignmentStart(2)], drained(2), vec![], vec![], vec![]],
            ),
            (
                "a cancellation marker for an older drain is ignored",
                2,
                vec![B(0, 2), C(1, 1), B(1, 2)],
                vec![vec![AlignmentStart(2)], vec![], drained(2)],
            ),
            (
                // Input 0's upstream task has finished (sent EndOfData) but
                // keeps forwarding markers: its marker counts as usual.
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(1, 1), B(0, 1), B(0, 2), B(1, 2)],
                vec![
                    vec![AlignmentStart(1)],
                    drained(1),
                    vec![AlignmentStart(2)],
                    drained(2),
                ],
            ),
        ];
        testkit::check_table(DrainHandler::new, KIND, cases);
    }

    /// Exhaustive over short sequences: only alignment marks, `Drained` and
    /// `Abort` come out; `Drained` needs a marker from every input; each id
    /// starts at most once and ends (drained or aborted) at most once;
    /// `aligning` is the drain in progress.
    #[test]
    fn exhaustive_small_sequences() {
        for (inputs, len) in [(1, 4), (2, 5), (3, 4)] {
            let alphabet = alphabet(inputs);
            for steps in sequences(&alphabet, len) {
                let mut h = DrainHandler::new(inputs);
                let mut last_start = 0;
                let mut last_end = 0;
                let mut open: Option<CheckpointId> = None;
                let mut delivered = vec![vec![false; inputs as usize]; 4];
                for &s in &steps {
                    let actions = testkit::step(&mut h, KIND, s);
                    if let In::B(c, id) = s {
                        delivered[id as usize][c as usize] = true;
                    }
                    for a in &actions {
                        match *a {
                            AlignmentStart(id) => {
                                assert!(id > last_start, "{steps:?}");
                                assert_eq!(open, None, "{steps:?}");
                                last_start = id;
                                open = Some(id);
                            }
                            Drained(b) => {
                                assert_eq!(open, Some(b.id), "{steps:?}");
                                assert!(delivered[b.id as usize].iter().all(|&d| d));
                                assert!(b.id > last_end, "{steps:?}");
                                last_end = b.id;
                                open = None;
                            }
                            Abort(id, reason) => {
                                if reason == AbortReason::Subsumed {
                                    assert_eq!(open, Some(id), "{steps:?}");
                                }
                                assert!(id > last_end, "{steps:?}");
                                last_end = id;
                                // A newer cancellation marker also ends the
                                // drain in progress.
                                if open.is_some_and(|o| o <= id) {
                                    open = None;
                                }
                            }
                            AlignmentEnd(_) => {}
                            other => panic!("{other:?} from {steps:?}"),
                        }
                    }
                    assert_eq!(h.aligning(), open, "{steps:?}");
                }
            }
        }
    }

    #[test]
    fn aligning_reports_the_drain_in_progress() {
        let mut h = DrainHandler::new(2);
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(1, 3));
        assert_eq!(h.aligning(), Some(3));
        testkit::step(&mut h, KIND, In::B(0, 3));
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(0, 4));
        testkit::step(&mut h, KIND, In::C(1, 4));
        assert_eq!(h.aligning(), None);
    }
}
