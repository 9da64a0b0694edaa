//! `aligned-timeout`: Flink's aligned checkpoints with an alignment timeout,
//! following the alternating state machine of `SingleCheckpointBarrierHandler`
//! (`AlternatingWaitingForFirstBarrier` → `AlternatingCollectingBarriers` →
//! `AlternatingCollectingBarriersUnaligned`).
//!
//! A checkpoint starts aligned: each channel is blocked at its barrier. Once
//! the checkpoint is older than the timeout, counted from its **trigger
//! time** (`barrier.timestamp`, as Flink's `BarrierAlignmentUtil` does), the
//! task switches to unaligned for what remains: it snapshots now, records the
//! channels still waiting for their barrier (their queued barriers turn into
//! priority events), and acknowledges after the last barrier. Channels that
//! already delivered their aligned barrier stay blocked until then
//! (FLINK-22638). The switch happens on the timer, or on a barrier that
//! arrives already late, or when an upstream task sends an unaligned barrier.
//!
//! A timeoutable barrier that arrives behind queued data is **announced** at
//! once (Flink's `EventAnnouncement`): the announcement starts the
//! checkpoint here and arms the timer, so a task still busy with the data
//! ahead of its first barrier also switches at the timeout; switching then
//! turns the announced barriers into priority events.

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, BarrierKind, HandlerAction};
use crate::engine::{SimDuration, SimTime};
use crate::mutant::{Mutant, Mutants};

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "aligned-timeout",
    description: "starts aligned; past `alignment_timeout` from the trigger it switches to unaligned for what remains",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Timeoutable,
    max_concurrent: Some(1),
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: true,
    blocks_upstream: true,
    colour: (44, 160, 44),
    handler: |c| Box::new(AlignedTimeoutHandler::with_mutants(c.inputs, c.alignment_timeout, c.mutants)),
};

pub struct AlignedTimeoutHandler {
    current: CheckpointId,
    last_done: CheckpointId,
    seen: Vec<bool>,
    count: u32,
    pending: Option<Barrier>,
    /// The current checkpoint switched to unaligned.
    unaligned: bool,
    timeout: SimDuration,
    mutants: Mutants,
}

impl AlignedTimeoutHandler {
    pub fn new(inputs: u32, timeout: SimDuration) -> AlignedTimeoutHandler {
        AlignedTimeoutHandler::with_mutants(inputs, timeout, Mutants::NONE)
    }

    pub(crate) fn with_mutants(
        inputs: u32,
        timeout: SimDuration,
        mutants: Mutants,
    ) -> AlignedTimeoutHandler {
        AlignedTimeoutHandler {
            current: 0,
            last_done: 0,
            seen: vec![false; inputs as usize],
            count: 0,
            pending: None,
            unaligned: false,
            timeout,
            mutants,
        }
    }

    fn is_pending(&self) -> bool {
        self.current != self.last_done && self.current > 0
    }

    fn reset(&mut self) {
        self.seen.iter_mut().for_each(|s| *s = false);
        self.count = 0;
        self.pending = None;
        self.unaligned = false;
    }

    fn abort(&mut self, id: CheckpointId, reason: AbortReason, out: &mut Vec<HandlerAction>) {
        self.current = self.current.max(id);
        self.last_done = self.last_done.max(id);
        self.reset();
        out.push(HandlerAction::UnblockAll);
        out.push(HandlerAction::Abort(id, reason));
    }

    fn deadline(&self, b: Barrier) -> SimTime {
        b.timestamp.plus(self.timeout)
    }

    /// Continue the pending checkpoint unaligned: snapshot now and record
    /// the channels that have not delivered their barrier (plus `overtaken`,
    /// whose priority barrier overtook queued data).
    fn switch(&mut self, overtaken: Option<u32>, out: &mut Vec<HandlerAction>) {
        let Some(b) = self.pending else { return };
        self.unaligned = true;
        out.push(HandlerAction::Checkpoint(b.as_unaligned()));
        if self.mutants.has(Mutant::TimeoutSwitchNoCapture) {
            if self.seen.iter().any(|s| !s) || overtaken.is_some() {
                crate::mutant::fired(Mutant::TimeoutSwitchNoCapture);
            }
            return;
        }
        for (i, &seen) in self.seen.iter().enumerate() {
            if !seen || overtaken == Some(i as u32) {
                out.push(HandlerAction::CaptureInput(b.id, i as u32));
            }
        }
    }

    /// A barrier (or its announcement) of a newer checkpoint: subsume the
    /// pending one and start this one (Flink's `checkNewCheckpoint`).
    fn start(&mut self, b: Barrier, out: &mut Vec<HandlerAction>) {
        if self.is_pending() {
            self.abort(self.current, AbortReason::Subsumed, out);
        }
        self.current = b.id;
        self.reset();
        self.pending = Some(b);
        if b.kind == BarrierKind::Timeoutable {
            out.push(HandlerAction::ArmTimer(b.id, self.deadline(b)));
        }
    }

    fn finish(&mut self, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        out.push(HandlerAction::AlignmentEnd(id));
        if let (false, Some(b)) = (self.unaligned, self.pending) {
            out.push(HandlerAction::Checkpoint(b));
        }
        out.push(HandlerAction::AllBarriers(id));
        out.push(HandlerAction::UnblockAll);
        self.reset();
        self.last_done = self.current;
    }
}

impl BarrierHandler for AlignedTimeoutHandler {
    fn on_barrier(&mut self, input: u32, b: Barrier, now: SimTime, out: &mut Vec<HandlerAction>) {
        let priority = b.kind == BarrierKind::Unaligned;
        if self.current > b.id || (self.current == b.id && !self.is_pending()) {
            if !priority {
                out.push(HandlerAction::Unblock(input));
            }
            return;
        }
        if b.id > self.current {
            self.start(b, out);
        }
        let i = input as usize;
        if !self.seen[i] {
            self.seen[i] = true;
            self.count += 1;
            if self.count == 1 {
                out.push(HandlerAction::AlignmentStart(b.id));
            }
        }
        if !priority {
            // The producer is held until the checkpoint ends, aligned or not.
            out.push(HandlerAction::Block(input));
        }
        let all = self.count as usize == self.seen.len();
        if !self.unaligned {
            if priority {
                // Upstream already went unaligned: so does this task.
                self.switch(Some(input), out);
            } else if !all && now > self.deadline(b) && b.kind == BarrierKind::Timeoutable {
                // The barrier itself arrived after the timeout.
                self.switch(None, out);
            }
        }
        if all {
            self.finish(b.id, out);
        }
    }

    fn on_cancel(&mut self, _input: u32, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        if id > self.current || (id == self.current && self.count > 0) {
            self.abort(id, AbortReason::CancellationMarker, out);
        }
    }

    fn on_announcement(
        &mut self,
        _input: u32,
        b: Barrier,
        now: SimTime,
        out: &mut Vec<HandlerAction>,
    ) {
        if b.id <= self.current || b.kind != BarrierKind::Timeoutable {
            return; // obsolete, or already started here
        }
        self.start(b, out);
        if now > self.deadline(b) {
            self.switch(None, out);
        }
    }

    fn on_timer(&mut self, id: CheckpointId, out: &mut Vec<HandlerAction>) {
        if id == self.current && self.is_pending() && !self.unaligned {
            self.switch(None, out);
        }
    }

    fn aligning(&self) -> Option<CheckpointId> {
        (self.is_pending() && self.count > 0).then_some(self.current)
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const TimeoutSwitchNoCapture: Mutant = Mutant::declare(&MutantInfo {
            name: "timeout-switch-no-capture",
            part: "aligned-timeout switch",
            what: "switching to unaligned at the alignment timeout does not record the channels still waiting for their barrier",
            modelled_on: "FLINK-22638 / FLINK-27251-era bugs in the aligned-to-unaligned switch",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "aligned-timeout")],
        });
    }
}

#[cfg(test)]
mod tests {
    //! Table-driven: a sequence of inputs per case, the exact actions out.
    use super::*;
    use crate::protocol::testkit::{self, timeoutable as bar, unaligned as ubar, Case, Timed};
    use HandlerAction::*;

    const TIMEOUT: SimDuration = SimDuration(50);
    const KIND: BarrierKind = BarrierKind::Timeoutable;

    #[test]
    fn table() {
        use Timed::*;
        let cases: Vec<Case<Timed>> = vec![
            (
                "aligned within the timeout: like aligned",
                2,
                vec![B(0, 1, 110), B(1, 1, 120)],
                vec![
                    vec![ArmTimer(1, SimTime(150)), AlignmentStart(1), Block(0)],
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
                "the timeout fires mid-alignment: snapshot unaligned, record the rest, keep blocked",
                3,
                vec![B(0, 1, 110), Timer(1), B(2, 1, 170), B(1, 1, 180)],
                vec![
                    vec![ArmTimer(1, SimTime(150)), AlignmentStart(1), Block(0)],
                    vec![
                        Checkpoint(ubar(1)),
                        CaptureInput(1, 1),
                        CaptureInput(1, 2),
                    ],
                    vec![Block(2)],
                    vec![Block(1), AlignmentEnd(1), AllBarriers(1), UnblockAll],
                ],
            ),
            (
                "a barrier arriving after the timeout switches at once",
                2,
                vec![B(1, 1, 160), B(0, 1, 170)],
                vec![
                    vec![
                        ArmTimer(1, SimTime(150)),
                        AlignmentStart(1),
                        Block(1),
                        Checkpoint(ubar(1)),
                        CaptureInput(1, 0),
                    ],
                    vec![Block(0), AlignmentEnd(1), AllBarriers(1), UnblockAll],
                ],
            ),
            (
                "an unaligned barrier from upstream switches; its channel records what it overtook",
                2,
                vec![U(1, 1, 120), U(0, 1, 130)],
                vec![
                    vec![
                        AlignmentStart(1),
                        Checkpoint(ubar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                    ],
                    vec![AlignmentEnd(1), AllBarriers(1), UnblockAll],
                ],
            ),
            (
                "the timer of a finished checkpoint does nothing",
                1,
                vec![B(0, 1, 110), Timer(1)],
                vec![
                    vec![
                        ArmTimer(1, SimTime(150)),
                        AlignmentStart(1),
                        Block(0),
                        AlignmentEnd(1),
                        Checkpoint(bar(1)),
                        AllBarriers(1),
                        UnblockAll,
                    ],
                    vec![],
                ],
            ),
            (
                "a newer barrier while an older checkpoint is pending subsumes it",
                2,
                vec![B(0, 1, 110), B(1, 2, 210), Timer(1), B(0, 2, 220)],
                vec![
                    vec![ArmTimer(1, SimTime(150)), AlignmentStart(1), Block(0)],
                    vec![
                        UnblockAll,
                        Abort(1, AbortReason::Subsumed),
                        ArmTimer(2, SimTime(250)),
                        AlignmentStart(2),
                        Block(1),
                    ],
                    vec![],
                    vec![
                        Block(0),
                        AlignmentEnd(2),
                        Checkpoint(bar(2)),
                        AllBarriers(2),
                        UnblockAll,
                    ],
                ],
            ),
            (
                "a cancellation marker during alignment aborts and unblocks",
                2,
                vec![B(0, 1, 110), C(1, 1), B(1, 1, 120), Timer(1)],
                vec![
                    vec![ArmTimer(1, SimTime(150)), AlignmentStart(1), Block(0)],
                    vec![UnblockAll, Abort(1, AbortReason::CancellationMarker)],
                    vec![Unblock(1)],
                    vec![],
                ],
            ),
            (
                "a cancellation marker after the switch aborts the unaligned checkpoint",
                2,
                vec![B(0, 1, 110), Timer(1), C(1, 1)],
                vec![
                    vec![ArmTimer(1, SimTime(150)), AlignmentStart(1), Block(0)],
                    vec![Checkpoint(ubar(1)), CaptureInput(1, 1)],
                    vec![UnblockAll, Abort(1, AbortReason::CancellationMarker)],
                ],
            ),
            (
                "an announcement starts the checkpoint; the timeout switches before any barrier is read",
                2,
                vec![A(0, 1, 110), Timer(1), B(0, 1, 160), B(1, 1, 170)],
                vec![
                    vec![ArmTimer(1, SimTime(150))],
                    vec![
                        Checkpoint(ubar(1)),
                        CaptureInput(1, 0),
                        CaptureInput(1, 1),
                    ],
                    vec![AlignmentStart(1), Block(0)],
                    vec![Block(1), AlignmentEnd(1), AllBarriers(1), UnblockAll],
                ],
            ),
            (
                "a late announcement switches at once; a repeated one does nothing",
                1,
                vec![A(0, 1, 160), A(0, 1, 170)],
                vec![
                    vec![
                        ArmTimer(1, SimTime(150)),
                        Checkpoint(ubar(1)),
                        CaptureInput(1, 0),
                    ],
                    vec![],
                ],
            ),
            (
                "a barrier on a channel whose upstream has finished still counts",
                2,
                vec![B(1, 3, 310), B(0, 3, 320)],
                vec![
                    vec![ArmTimer(3, SimTime(350)), AlignmentStart(3), Block(1)],
                    vec![
                        Block(0),
                        AlignmentEnd(3),
                        Checkpoint(bar(3)),
                        AllBarriers(3),
                        UnblockAll,
                    ],
                ],
            ),
        ];
        testkit::check_table(|n| AlignedTimeoutHandler::new(n, TIMEOUT), KIND, cases);
    }
}
