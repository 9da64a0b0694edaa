//! A checkpoint algorithm of one's own, run through every ckptsim command.
//!
//! `early-snapshot` is barrier alignment with one change: the task takes
//! its snapshot when the *first* barrier of a checkpoint arrives, not the
//! last. It still blocks each input at its barrier and forwards nothing
//! until every input delivered it, so it looks careful; but the records
//! that arrive on the other inputs before their barriers are processed
//! after the snapshot and belong to no checkpoint. After a restore nobody
//! sends them again: their effect on state and output is lost. The checks
//! catch it; `aligned-again` (the same file's correct variant) passes.
//!
//!   cargo run --release --example early_snapshot -- list
//!   cargo run --release --example early_snapshot -- sweep scenarios/alignment-crash.toml --algorithm early-snapshot --seeds 0..200
//!   cargo run --release --example early_snapshot -- shrink scenarios/alignment-crash.toml --algorithm early-snapshot --seed SEED --out repro.toml
//!
//! The replay lines it prints name this program, so they run this code.
//! docs/algorithms.md ("Your own algorithm") walks through it.

use ckptsim::cli::{main_with, Registry};
use ckptsim::engine::SimTime;
use ckptsim::protocol::{
    AbortReason, AlgorithmInfo, Barrier, BarrierHandler, BarrierKind, CheckpointId, Coordination,
    Guarantee, HandlerAction,
};
use std::process::ExitCode;

/// Blocks each input at its barrier; snapshots at the first barrier
/// (`early`) or the last (the correct alignment).
struct Align {
    early: bool,
    /// The newest checkpoint seen, and the newest finished or aborted.
    current: CheckpointId,
    done: CheckpointId,
    seen: Vec<bool>,
}

impl Align {
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

impl BarrierHandler for Align {
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
            if self.early {
                // The mistake: the other inputs' records before their
                // barriers are not in this snapshot.
                out.push(HandlerAction::Checkpoint(b));
            }
        }
        self.seen[input as usize] = true;
        out.push(HandlerAction::Block(input));
        if self.seen.iter().all(|&s| s) {
            self.seen.iter_mut().for_each(|s| *s = false);
            self.done = b.id;
            out.push(HandlerAction::AlignmentEnd(b.id));
            if !self.early {
                out.push(HandlerAction::Checkpoint(b));
            }
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

/// The correct alignment, for comparison.
static ALIGNED_AGAIN: AlgorithmInfo = AlgorithmInfo {
    name: "aligned-again",
    description: "barrier alignment written outside ckptsim (example early_snapshot)",
    promise: Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: BarrierKind::Aligned,
    max_concurrent: None,
    coordination: Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: true,
    colour: (90, 90, 90),
    handler: |c| {
        Box::new(Align {
            early: false,
            current: 0,
            done: 0,
            seen: vec![false; c.inputs as usize],
        })
    },
};

/// The same with the snapshot at the first barrier.
static EARLY_SNAPSHOT: AlgorithmInfo = AlgorithmInfo {
    name: "early-snapshot",
    description: "alignment that snapshots at the first barrier (a bug; example early_snapshot)",
    colour: (200, 60, 60),
    handler: |c| {
        Box::new(Align {
            early: true,
            current: 0,
            done: 0,
            seen: vec![false; c.inputs as usize],
        })
    },
    ..ALIGNED_AGAIN
};

fn main() -> ExitCode {
    main_with(
        Registry::new()
            .algorithm(&ALIGNED_AGAIN)
            .algorithm(&EARLY_SNAPSHOT),
    )
}
