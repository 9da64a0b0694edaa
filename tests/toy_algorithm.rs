//! An algorithm added from outside: one file (this one) holds a handler and
//! its registry entry, and `Algorithm::custom` stands in for the line in
//! `protocol::registry::REGISTRY`. The runtime, the coordinator and every
//! check run it like a built-in: a correct toy keeps exactly-once under
//! crashes, a wrong one is caught.

use crate::common::{self, failed_checks, sweep};
use ckptsim::engine::SimTime;
use ckptsim::protocol::{
    AbortReason, Algorithm, AlgorithmInfo, Barrier, BarrierHandler, BarrierKind, CheckpointId,
    Coordination, Guarantee, HandlerAction,
};

/// `lockstep`: barrier alignment written from scratch. Each channel is
/// blocked at its barrier; when every input delivered it, snapshot, forward
/// and release. A newer barrier or a cancellation marker aborts the pending
/// checkpoint; an obsolete barrier releases its channel.
struct Lockstep {
    current: CheckpointId,
    done: CheckpointId,
    seen: Vec<bool>,
}

impl Lockstep {
    fn pending(&self) -> bool {
        self.current > self.done
    }

    fn abort(&mut self, id: CheckpointId, why: AbortReason, out: &mut Vec<HandlerAction>) {
        self.current = self.current.max(id);
        self.done = self.current;
        self.seen.iter_mut().for_each(|s| *s = false);
        out.push(HandlerAction::UnblockAll);
        out.push(HandlerAction::Abort(id, why));
    }
}

impl BarrierHandler for Lockstep {
    fn on_barrier(&mut self, input: u32, b: Barrier, _: SimTime, out: &mut Vec<HandlerAction>) {
        if b.id < self.current || (b.id == self.current && !self.pending()) {
            out.push(HandlerAction::Unblock(input));
            return;
        }
        if b.id > self.current {
            if self.pending() {
                self.abort(self.current, AbortReason::Subsumed, out);
            }
            self.current = b.id;
            out.push(HandlerAction::AlignmentStart(b.id));
        }
        self.seen[input as usize] = true;
        out.push(HandlerAction::Block(input));
        if self.seen.iter().all(|&s| s) {
            self.seen.iter_mut().for_each(|s| *s = false);
            self.done = b.id;
            out.push(HandlerAction::AlignmentEnd(b.id));
            out.push(HandlerAction::Checkpoint(b));
            out.push(HandlerAction::AllBarriers(b.id));
            out.push(HandlerAction::UnblockAll);
        }
    }

    fn on_cancel(&mut self, _: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        if id > self.current || (id == self.current && self.pending()) {
            self.abort(id, AbortReason::CancellationMarker, out);
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        (self.pending() && self.seen.iter().any(|&s| s)).then_some(self.current)
    }
}

/// `eager`: snapshots at the first barrier and forwards it, never blocks and
/// records no channel state, yet promises exactly-once. Records that arrive
/// on the other channels before their barriers are in no snapshot.
struct Eager {
    current: CheckpointId,
    seen: Vec<bool>,
}

impl BarrierHandler for Eager {
    fn on_barrier(&mut self, input: u32, b: Barrier, _: SimTime, out: &mut Vec<HandlerAction>) {
        if b.id < self.current {
            return;
        }
        if b.id > self.current {
            self.current = b.id;
            self.seen.iter_mut().for_each(|s| *s = false);
            out.push(HandlerAction::Checkpoint(b));
        }
        self.seen[input as usize] = true;
        if self.seen.iter().all(|&s| s) {
            out.push(HandlerAction::AllBarriers(b.id));
        }
    }

    fn on_cancel(&mut self, _: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        if id > self.current {
            self.current = id;
            out.push(HandlerAction::Abort(id, AbortReason::CancellationMarker));
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        None
    }
}

/// The entries, as a line of `REGISTRY` would name them.
static LOCKSTEP: AlgorithmInfo = AlgorithmInfo {
    name: "lockstep",
    description: "barrier alignment written from scratch",
    promise: Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: BarrierKind::Aligned,
    max_concurrent: None,
    coordination: Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: true,
    colour: (0, 0, 0),
    handler: |c| {
        Box::new(Lockstep {
            current: 0,
            done: 0,
            seen: vec![false; c.inputs as usize],
        })
    },
};

static EAGER: AlgorithmInfo = AlgorithmInfo {
    name: "eager",
    description: "snapshot at the first barrier, no blocking, no channel state",
    blocks_upstream: false,
    handler: |c| {
        Box::new(Eager {
            current: 0,
            seen: vec![false; c.inputs as usize],
        })
    },
    ..LOCKSTEP
};

#[test]
fn a_correct_algorithm_added_outside_the_registry_is_exactly_once_under_crashes() {
    let lockstep = Algorithm::custom(&LOCKSTEP);
    assert_eq!(lockstep.name(), "lockstep");
    assert!(Algorithm::from_name("lockstep").is_none(), "not registered");
    for name in ["wordcount", "alignment-crash", "faults"] {
        let scenario = common::load(name);
        let c = sweep(&scenario, name, lockstep, 0..40);
        assert!(
            c.checkpoints_completed > 0,
            "{name}: no checkpoint completed"
        );
        assert!(c.crashes > 0, "{name}: no crash to recover from");
        assert!(c.alignments > 0, "{name}: never aligned");
    }
}

#[test]
fn a_wrong_algorithm_added_outside_the_registry_is_caught() {
    let eager = Algorithm::custom(&EAGER);
    let scenario = common::load("alignment-crash");
    let caught: Vec<u64> = (0..40)
        .filter(|&seed| {
            !common::check_alg(&scenario, seed, eager, &[])
                .verdict
                .passed
        })
        .collect();
    assert!(!caught.is_empty(), "eager never caught in 40 seeds");
    let e = common::check_alg(&scenario, caught[0], eager, &[]);
    let failed = failed_checks(&e);
    assert!(
        failed
            .iter()
            .any(|c| ["consistent-cut", "exactly-once-output", "state"].contains(c)),
        "seed {}: {failed:?}",
        caught[0]
    );
}
