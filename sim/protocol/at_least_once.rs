//! `at-least-once`: Flink's barrier tracking for `AT_LEAST_ONCE` mode, a port
//! of `CheckpointBarrierTracker` (flink-runtime,
//! `streaming/runtime/io/checkpointing`).
//!
//! The tracker **never blocks** an input. It only counts which inputs have
//! delivered the barrier of each checkpoint, and snapshots when the last one
//! arrives. Records that arrive on a fast input after its barrier are
//! processed before the snapshot, so they are part of the snapshot's effects
//! *and* replayed after a restore: that is where at-least-once duplicates
//! come from.
//!
//! Since nothing waits, several checkpoints can be in progress at once. The
//! tracker keeps a deque of them, oldest first, at most
//! [`MAX_CHECKPOINTS_TO_TRACK`]; beyond that the oldest is dropped.
//!
//! * Completing a checkpoint removes it **and every older tracked one**,
//!   silently: as in Flink, the older ones are subsumed without an abort.
//! * The first barrier of an id that is not newer than the newest id seen is
//!   ignored: "there cannot be a successful checkpoint for that id any more".
//! * A cancellation marker aborts every older tracked checkpoint and its own,
//!   each at most once (FLINK-5285). Its entry stays and keeps counting so
//!   that it can be removed once every input has delivered something for it;
//!   a marker for an id newer than anything seen is remembered as an aborted
//!   entry at the front.
//! * A task with a single input takes a fast path: a newer barrier snapshots
//!   at once, a newer marker aborts at once, nothing is tracked.
//!
//! Deviations from Flink: the number of inputs is fixed (this simulator keeps
//! forwarding barriers from finished upstream tasks, so there is no
//! `EndOfPartition` path here), and the single-input fast path records the id
//! as the newest seen, so a repeated barrier cannot snapshot twice. Flink
//! measures only one alignment at a time (`markAlignmentEnd` only for the
//! newest id); here every completed checkpoint reports `AlignmentEnd(id)` and
//! the task decides which start it belongs to.

use std::collections::VecDeque;

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, HandlerAction};
use crate::engine::SimTime;

/// How many checkpoints with some, but not all, barriers are tracked at once
/// (Flink's `MAX_CHECKPOINTS_TO_TRACK`).
pub const MAX_CHECKPOINTS_TO_TRACK: usize = 50;

/// One tracked checkpoint (Flink's `CheckpointBarrierCount`).
struct Tracked {
    id: CheckpointId,
    /// Which inputs delivered a barrier (or cancellation marker) for it.
    seen: Vec<bool>,
    count: u32,
    /// A cancellation marker arrived: it will never snapshot here.
    aborted: bool,
}

impl Tracked {
    fn new(id: CheckpointId, inputs: u32, first: u32, aborted: bool) -> Tracked {
        let mut t = Tracked {
            id,
            seen: vec![false; inputs as usize],
            count: 0,
            aborted,
        };
        t.mark(first);
        t
    }

    /// Counts `input` once; a repeated delivery on the same input is ignored.
    fn mark(&mut self, input: u32) {
        let slot = &mut self.seen[input as usize];
        if !*slot {
            *slot = true;
            self.count += 1;
        }
    }

    /// Marks the checkpoint aborted; true the first time only.
    fn mark_aborted(&mut self) -> bool {
        let first = !self.aborted;
        self.aborted = true;
        first
    }
}

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "at-least-once",
    description: "Flink's barrier tracker: no blocking, snapshot at the last barrier; duplicates after recovery",
    promise: super::registry::Guarantee::AtLeastOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: false,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (214, 39, 40),
    handler: |c| Box::new(BarrierTracker::new(c.inputs)),
};

pub struct BarrierTracker {
    inputs: u32,
    /// Checkpoints with some but not all barriers, oldest (lowest id) first.
    tracked: VecDeque<Tracked>,
    /// Highest checkpoint id seen in a barrier or marker (0 = none yet).
    latest_pending: CheckpointId,
}

impl BarrierTracker {
    pub fn new(inputs: u32) -> BarrierTracker {
        BarrierTracker {
            inputs,
            tracked: VecDeque::new(),
            latest_pending: 0,
        }
    }
}

impl BarrierHandler for BarrierTracker {
    fn on_barrier(&mut self, input: u32, b: Barrier, _now: SimTime, out: &mut Vec<HandlerAction>) {
        // Fast path: with one input the first barrier of a newer checkpoint
        // is also its last.
        if self.inputs == 1 {
            if b.id > self.latest_pending {
                self.latest_pending = b.id;
                out.push(HandlerAction::AlignmentStart(b.id));
                out.push(HandlerAction::AlignmentEnd(b.id));
                out.push(HandlerAction::Checkpoint(b));
                out.push(HandlerAction::AllBarriers(b.id));
            }
            return;
        }

        if let Some(pos) = self.tracked.iter().position(|t| t.id == b.id) {
            let entry = &mut self.tracked[pos];
            entry.mark(input);
            if entry.count == self.inputs {
                // Complete (or aborted and fully seen): drop it and every
                // older checkpoint, which it subsumes. No abort for those.
                let aborted = entry.aborted;
                self.tracked.drain(..=pos);
                if !aborted {
                    // Every barrier of an id is the same, so the one that
                    // completes it stands for the first (Flink keeps that).
                    out.push(HandlerAction::AlignmentEnd(b.id));
                    out.push(HandlerAction::Checkpoint(b));
                    out.push(HandlerAction::AllBarriers(b.id));
                }
            }
        } else if b.id > self.latest_pending {
            // First barrier of a new checkpoint.
            self.latest_pending = b.id;
            self.tracked
                .push_back(Tracked::new(b.id, self.inputs, input, false));
            out.push(HandlerAction::AlignmentStart(b.id));
            while self.tracked.len() > MAX_CHECKPOINTS_TO_TRACK {
                self.tracked.pop_front();
            }
        }
        // Otherwise: the first barrier of an id not newer than the newest
        // seen. That checkpoint was completed, subsumed, cancelled or dropped
        // here; it cannot succeed any more.
    }

    fn on_cancel(&mut self, input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        let abort = |id, out: &mut Vec<HandlerAction>| {
            out.push(HandlerAction::Abort(id, AbortReason::CancellationMarker));
        };

        if self.inputs == 1 {
            if id > self.latest_pending {
                self.latest_pending = id;
                abort(id, out);
            }
            return;
        }

        // Every older tracked checkpoint is aborted by this marker.
        while let Some(front) = self.tracked.front_mut() {
            if front.id >= id {
                break;
            }
            if front.mark_aborted() {
                abort(front.id, out);
            }
            self.tracked.pop_front();
        }

        match self.tracked.front_mut() {
            Some(front) if front.id == id => {
                if front.mark_aborted() {
                    abort(id, out);
                }
                // Keep counting so the entry goes once every input has
                // delivered its barrier or marker.
                front.mark(input);
                if front.count == self.inputs {
                    self.tracked.pop_front();
                }
            }
            _ if id > self.latest_pending => {
                // Newer than anything seen (so nothing is tracked any more):
                // abort it and remember it as aborted.
                abort(id, out);
                self.latest_pending = id;
                self.tracked
                    .push_front(Tracked::new(id, self.inputs, input, true));
            }
            // A trailing marker of a checkpoint already cancelled, completed
            // or given up here.
            _ => {}
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        self.tracked.iter().rev().find(|t| !t.aborted).map(|t| t.id)
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

    /// What one completing barrier answers.
    fn done(id: CheckpointId) -> Vec<HandlerAction> {
        vec![AlignmentEnd(id), Checkpoint(bar(id)), AllBarriers(id)]
    }

    /// What a barrier answers on the single-input fast path.
    fn fast(id: CheckpointId) -> Vec<HandlerAction> {
        vec![
            AlignmentStart(id),
            AlignmentEnd(id),
            Checkpoint(bar(id)),
            AllBarriers(id),
        ]
    }

    #[test]
    fn table() {
        use In::*;
        let cases: Vec<Case> = vec![
            (
                "two inputs: snapshot only at the last barrier, no blocking",
                2,
                vec![B(1, 1), B(0, 1)],
                vec![vec![AlignmentStart(1)], done(1)],
            ),
            (
                "single input fast path: every newer barrier snapshots at once",
                1,
                vec![B(0, 1), B(0, 2), B(0, 4)],
                vec![fast(1), fast(2), fast(4)],
            ),
            (
                "single input: a repeated or older barrier is ignored",
                1,
                vec![B(0, 2), B(0, 2), B(0, 1)],
                vec![fast(2), vec![], vec![]],
            ),
            (
                "single input: a newer cancellation marker aborts once",
                1,
                vec![C(0, 1), C(0, 1), B(0, 1), B(0, 2)],
                vec![vec![Abort(1, CM)], vec![], vec![], fast(2)],
            ),
            (
                "duplicate barrier on one input does not count twice",
                2,
                vec![B(0, 1), B(0, 1), B(1, 1)],
                vec![vec![AlignmentStart(1)], vec![], done(1)],
            ),
            (
                "concurrent checkpoints complete in order",
                2,
                vec![B(0, 1), B(0, 2), B(1, 1), B(1, 2)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![AlignmentStart(2)],
                    done(1),
                    done(2),
                ],
            ),
            (
                "a newer checkpoint completing silently drops an older incomplete one",
                2,
                vec![B(0, 1), B(0, 2), B(1, 2), B(1, 1)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![AlignmentStart(2)],
                    done(2),
                    // No abort for 1 at any point; its late barrier is ignored.
                    vec![],
                ],
            ),
            (
                "an id lower than the newest seen, seen for the first time, is ignored",
                2,
                vec![B(0, 3), B(1, 2), B(0, 2), B(1, 3)],
                vec![vec![AlignmentStart(3)], vec![], vec![], done(3)],
            ),
            (
                "a cancellation marker aborts older tracked ones and this one, each once",
                3,
                vec![
                    B(0, 1),
                    B(0, 2),
                    B(0, 3),
                    C(1, 2),
                    C(2, 2),
                    C(1, 1),
                    B(1, 3),
                    B(2, 3),
                ],
                vec![
                    vec![AlignmentStart(1)],
                    vec![AlignmentStart(2)],
                    vec![AlignmentStart(3)],
                    vec![Abort(1, CM), Abort(2, CM)],
                    vec![],
                    vec![],
                    vec![],
                    done(3),
                ],
            ),
            (
                "a later barrier for an aborted id produces no Checkpoint",
                3,
                vec![B(0, 1), C(1, 1), B(2, 1), B(0, 2), B(1, 2), B(2, 2)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![Abort(1, CM)],
                    // Counted (the entry is now complete and removed), no snapshot.
                    vec![],
                    vec![AlignmentStart(2)],
                    vec![],
                    done(2),
                ],
            ),
            (
                "a marker for a new id is remembered as aborted; its barriers do nothing",
                2,
                vec![C(0, 5), B(1, 5), B(0, 5), B(0, 6), B(1, 6)],
                vec![
                    vec![Abort(5, CM)],
                    vec![],
                    vec![],
                    vec![AlignmentStart(6)],
                    done(6),
                ],
            ),
            (
                "a marker for a new id aborts every tracked older one first",
                2,
                vec![B(0, 1), B(1, 2), C(0, 3), B(1, 1), B(0, 2)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![AlignmentStart(2)],
                    vec![Abort(1, CM), Abort(2, CM), Abort(3, CM)],
                    vec![],
                    vec![],
                ],
            ),
            (
                "a marker between tracked ids aborts only the older ones",
                2,
                vec![B(0, 1), B(0, 3), C(1, 2), B(1, 3)],
                vec![
                    vec![AlignmentStart(1)],
                    vec![AlignmentStart(3)],
                    vec![Abort(1, CM)],
                    done(3),
                ],
            ),
            (
                "a marker after completion is ignored",
                2,
                vec![B(0, 1), B(1, 1), C(0, 1)],
                vec![vec![AlignmentStart(1)], done(1), vec![]],
            ),
            (
                // Input 1's upstream task has finished (sent EndOfData) but
                // keeps forwarding barriers: the tracker sees ordinary ones.
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(1, 1), B(0, 1), B(1, 2), B(0, 2)],
                vec![
                    vec![AlignmentStart(1)],
                    done(1),
                    vec![AlignmentStart(2)],
                    done(2),
                ],
            ),
        ];
        testkit::check_table(BarrierTracker::new, KIND, cases);
    }

    #[test]
    fn records_are_never_blocked() {
        use In::*;
        // Hand-written sequences: overlapping checkpoints, duplicates,
        // markers before, between and after barriers, out-of-order ids.
        let sequences: Vec<(u32, Vec<In>)> = vec![
            (2, vec![B(0, 1), B(1, 1), B(0, 2), B(1, 2)]),
            (
                2,
                vec![B(0, 1), B(0, 2), B(0, 3), B(1, 3), B(1, 2), B(1, 1)],
            ),
            (3, vec![B(2, 4), C(0, 4), B(1, 4), B(0, 4), B(2, 5)]),
            (
                3,
                vec![C(1, 2), C(1, 2), B(0, 1), B(0, 3), C(2, 3), B(1, 3)],
            ),
            (
                4,
                vec![B(3, 1), B(2, 1), B(1, 2), B(0, 1), B(1, 1), B(0, 2)],
            ),
            (
                4,
                vec![B(0, 7), C(3, 6), B(1, 7), B(2, 7), B(3, 7), C(0, 7)],
            ),
            (
                1,
                vec![B(0, 1), C(0, 2), B(0, 2), B(0, 3), B(0, 3), C(0, 3)],
            ),
            (
                2,
                vec![C(0, 1), C(1, 1), B(0, 1), B(1, 1), B(1, 2), C(0, 2)],
            ),
        ];
        for (inputs, steps) in sequences {
            for (i, actions) in testkit::run(&mut BarrierTracker::new(inputs), KIND, &steps)
                .iter()
                .enumerate()
            {
                for a in actions {
                    assert!(
                        !matches!(a, Block(_) | Unblock(_) | UnblockAll),
                        "{a:?} at step {i} of {steps:?}"
                    );
                }
            }
        }
    }

    /// Exhaustive over short sequences: no blocking, no capture; each id is
    /// decided (snapshot or abort) at most once, in increasing id order; a
    /// snapshot needs a barrier from every input and no earlier marker for
    /// it or a newer checkpoint.
    #[test]
    fn exhaustive_small_sequences() {
        for (inputs, len) in [(1, 4), (2, 5), (3, 4)] {
            let alphabet = alphabet(inputs);
            for steps in sequences(&alphabet, len) {
                let mut h = BarrierTracker::new(inputs);
                let mut last_decided = 0;
                let mut delivered = vec![vec![false; inputs as usize]; 4];
                let mut highest_marker = 0;
                for &s in &steps {
                    let actions = testkit::step(&mut h, KIND, s);
                    if let In::B(c, id) = s {
                        delivered[id as usize][c as usize] = true;
                    }
                    for a in &actions {
                        match *a {
                            Checkpoint(b) => {
                                assert!(b.id > last_decided, "{steps:?}");
                                last_decided = b.id;
                                assert!(delivered[b.id as usize].iter().all(|&d| d), "{steps:?}");
                                assert!(highest_marker < b.id, "{steps:?}");
                            }
                            Abort(id, reason) => {
                                assert_eq!(reason, CM);
                                assert!(id > last_decided, "{steps:?}");
                                last_decided = id;
                            }
                            AlignmentStart(_) | AlignmentEnd(_) | AllBarriers(_) => {}
                            other => panic!("{other:?} from {steps:?}"),
                        }
                    }
                    if let In::C(_, id) = s {
                        highest_marker = highest_marker.max(id);
                    }
                    assert!(h.tracked.len() <= MAX_CHECKPOINTS_TO_TRACK);
                }
            }
        }
    }

    #[test]
    fn tracks_at_most_50_checkpoints() {
        let mut h = BarrierTracker::new(2);
        for id in 1..=51 {
            assert_eq!(
                testkit::step(&mut h, KIND, In::B(0, id)),
                vec![AlignmentStart(id)]
            );
        }
        assert_eq!(h.tracked.len(), MAX_CHECKPOINTS_TO_TRACK);
        assert_eq!(h.tracked.front().map(|t| t.id), Some(2));
        // Checkpoint 1 was dropped: its last barrier looks like an old first one.
        assert_eq!(testkit::step(&mut h, KIND, In::B(1, 1)), vec![]);
        // 2 is still tracked and completes.
        assert_eq!(testkit::step(&mut h, KIND, In::B(1, 2)), done(2));
        assert_eq!(h.tracked.len(), MAX_CHECKPOINTS_TO_TRACK - 1);
        assert_eq!(h.aligning(), Some(51));
    }

    #[test]
    fn aligning_reports_the_newest_live_checkpoint() {
        let mut h = BarrierTracker::new(2);
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(0, 1));
        assert_eq!(h.aligning(), Some(1));
        testkit::step(&mut h, KIND, In::B(0, 2));
        assert_eq!(h.aligning(), Some(2));
        // A marker for 2 aborts 1 and 2: nothing live is left.
        testkit::step(&mut h, KIND, In::C(1, 2));
        assert_eq!(h.aligning(), None);
        testkit::step(&mut h, KIND, In::B(1, 3));
        assert_eq!(h.aligning(), Some(3));
        testkit::step(&mut h, KIND, In::B(0, 3));
        assert_eq!(h.aligning(), None);
        // Single input: nothing is ever tracked.
        let mut h = BarrierTracker::new(1);
        testkit::step(&mut h, KIND, In::B(0, 1));
        assert_eq!(h.aligning(), None);
    }
}
