//! Deliberate bugs, switched on by name (`--mutant NAME`), to prove that the
//! checkers catch what they claim to. Each is modelled on a real class of
//! checkpointing bug. When no mutant is on, each check is one branch on a
//! bit set that is always false.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[repr(u8)]
pub enum Mutant {
    /// Sources do not rewind to their checkpointed offsets on restore; they
    /// continue from where they were when the job failed (records lost).
    NoSourceRewind,
    /// The 2PC sink commits its transaction at the barrier instead of on
    /// notify-complete (duplicates when the checkpoint then fails).
    SinkCommitOnBarrier,
    /// The aligned handler does not block channels whose barrier arrived, so
    /// post-barrier records are processed before the snapshot.
    AlignedNoBlock,
    /// Aligned barriers are sent as priority events that overtake queued
    /// output data, although the checkpoint is aligned.
    AlignedPriorityBarrier,
    /// An aborted alignment does not send its cancellation marker downstream.
    SkipCancelMarker,
    /// The coordinator completes a checkpoint when all but one ack arrived.
    CompleteWithMissingAck,
    /// An unaligned task starts recording its input channels at the first
    /// barrier but processes one more buffer before it snapshots: those
    /// records are in the operator state and in the channel state.
    UnalignedLateSnapshot,
    /// An unaligned task drops the recorded input channel state instead of
    /// persisting it (the overtaken records are lost on recovery).
    UnalignedDropInflight,
}

/// Every mutant: name, what it breaks, the invariant that should catch it.
pub const MUTANTS: &[(Mutant, &str, &str, &str)] = &[
    (
        Mutant::NoSourceRewind,
        "no-source-rewind",
        "sources keep their pre-failure offsets on restore instead of rewinding",
        "exactly-once-output",
    ),
    (
        Mutant::SinkCommitOnBarrier,
        "sink-commit-on-barrier",
        "the 2PC sink commits at the barrier instead of on notify-complete",
        "exactly-once-output",
    ),
    (
        Mutant::AlignedNoBlock,
        "aligned-no-block",
        "the aligned handler never blocks a channel after its barrier",
        "consistent-cut",
    ),
    (
        Mutant::AlignedPriorityBarrier,
        "aligned-priority-barrier",
        "aligned barriers overtake queued output data",
        "consistent-cut",
    ),
    (
        Mutant::SkipCancelMarker,
        "skip-cancel-marker",
        "an aborted alignment does not broadcast its cancellation marker",
        "liveness",
    ),
    (
        Mutant::CompleteWithMissingAck,
        "complete-with-missing-ack",
        "the coordinator completes a checkpoint with one ack missing",
        "protocol",
    ),
    (
        Mutant::UnalignedLateSnapshot,
        "unaligned-late-snapshot",
        "an unaligned task processes a buffer between starting its channel capture and its snapshot",
        "consistent-cut",
    ),
    (
        Mutant::UnalignedDropInflight,
        "unaligned-drop-inflight",
        "an unaligned task drops its recorded input channel state",
        "consistent-cut",
    ),
];

impl Mutant {
    pub fn name(self) -> &'static str {
        MUTANTS
            .iter()
            .find(|m| m.0 == self)
            .map(|m| m.1)
            .unwrap_or("?")
    }
    pub fn from_name(name: &str) -> Option<Mutant> {
        MUTANTS.iter().find(|m| m.1 == name).map(|m| m.0)
    }
    pub fn names() -> String {
        MUTANTS.iter().map(|m| m.1).collect::<Vec<_>>().join(", ")
    }
}

/// A set of mutants (a bit set; empty in every normal run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mutants(u64);

impl Mutants {
    pub const NONE: Mutants = Mutants(0);

    pub fn with(self, m: Mutant) -> Mutants {
        Mutants(self.0 | (1 << m as u8))
    }
    #[inline(always)]
    pub fn has(self, m: Mutant) -> bool {
        self.0 & (1 << m as u8) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn names(self) -> Vec<&'static str> {
        MUTANTS
            .iter()
            .filter(|m| self.has(m.0))
            .map(|m| m.1)
            .collect()
    }
}
