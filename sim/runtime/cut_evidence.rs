//! What a completed checkpoint's cut was, recorded by the runtime for the
//! consistent-cut check (`check/consistent_cut.rs`): per channel, what the
//! sender had sent and the receiver had consumed before their snapshots and
//! the channel state each captured; per FLIP-27 source, where each split
//! was (the enumerator's unassigned splits, each reader's snapshot).
//!
//! Facts, never verdicts: the one classification here
//! ([`ChannelCut::class`]) is shared by the check and by the runtime's
//! counter of duplicating cuts, so both read a cut the same way.

use crate::model::CheckpointId;
use std::collections::BTreeMap;

/// One completed checkpoint (or savepoint): its cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedCut {
    pub checkpoint: CheckpointId,
    /// When it completed.
    pub time_ns: u64,
    /// By channel id.
    pub channels: Vec<ChannelCut>,
    /// One per FLIP-27 source whose enumerator's checkpoint is in it.
    pub splits: Vec<SplitCut>,
}

/// One channel in a completed checkpoint. `None`: that end's snapshot is
/// not in the checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelCut {
    /// Records the sender had sent before its snapshot.
    pub sent: Option<u64>,
    /// Records the receiver had consumed before its snapshot.
    pub received: Option<u64>,
    /// The receiver's input channel state, if it captured any.
    pub input: Option<Span>,
    /// The sender's output channel state, if it captured any.
    pub output: Option<Span>,
}

/// Channel state by sequence number: `[first, first + len)`, `gap` if a
/// record in it is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub first: u64,
    pub len: u64,
    pub gap: bool,
}

/// How a channel's cut reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutClass {
    /// Sent = consumed, then input state, then output state: consecutive,
    /// no overlap, no gap.
    Consistent,
    /// The receiver consumed more than was sent and nothing was captured:
    /// duplicates after a restore, which only a duplicating guarantee allows.
    Duplicates,
    /// Anything else (or an end without a snapshot).
    Broken,
}

impl ChannelCut {
    /// The channel's cut, read with `duplicates_allowed` (the run was
    /// expected to be at-least-once or weaker).
    pub fn class(&self, duplicates_allowed: bool) -> CutClass {
        let (Some(s), Some(r)) = (self.sent, self.received) else {
            return CutClass::Broken;
        };
        let (input, output) = self.spans();
        let consistent = !input.gap
            && !output.gap
            && input.first == r
            && output.first == r + input.len
            && output.first + output.len == s;
        if consistent {
            CutClass::Consistent
        } else if duplicates_allowed && input.len == 0 && output.len == 0 && r > s {
            CutClass::Duplicates
        } else {
            CutClass::Broken
        }
    }

    /// The input and output spans, empty ones where nothing was captured
    /// (at the receiver's position, and after the input span).
    pub fn spans(&self) -> (Span, Span) {
        let r = self.received.unwrap_or(0);
        let input = self.input.unwrap_or(Span {
            first: r,
            len: 0,
            gap: false,
        });
        let output = self.output.unwrap_or(Span {
            first: r + input.len,
            len: 0,
            gap: false,
        });
        (input, output)
    }
}

/// Where each split of one FLIP-27 source was in a completed checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitCut {
    /// The source operator's id.
    pub operator: String,
    /// The splits its enumerator had discovered.
    pub known: Vec<u32>,
    /// Every place a split was: "the enumerator" (unassigned) or a reader
    /// task's name.
    pub places: BTreeMap<u32, Vec<String>>,
    /// Every reader's snapshot was there (a split in no place counts only
    /// then).
    pub complete: bool,
}
