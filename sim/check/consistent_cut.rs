//! Consistent cut: per completed checkpoint and channel, by sequence
//! number, records sent before the sender's snapshot equal records consumed
//! before the receiver's snapshot, then input channel state, then output
//! channel state; each split a FLIP-27 source's enumerator had discovered
//! is in exactly one place. Judged from the cuts the runtime records
//! (`RunOutput::evidence.cuts`, [`crate::runtime::cut_evidence`]); the
//! uncoordinated families' recovery lines are still checked by the runtime
//! while it runs, and reach this check as violations filed under its id.

use super::{Finding, Input};
use crate::protocol::Guarantee;
use crate::runtime::cut_evidence::{ChannelCut, CutClass, SplitCut};
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let c = &input.run.counters;
    let evidence = &input.run.evidence;
    let expected = input.run.expected;
    let dup_ok = matches!(expected, Guarantee::AtLeastOnce | Guarantee::Broken);
    let mut violations = Vec::new();
    for cut in &evidence.cuts {
        let at = |message: String| Violation {
            check: CheckId::ConsistentCut,
            time_ns: cut.time_ns,
            message: format!("checkpoint {}: {message}", cut.checkpoint),
        };
        for (ch, channel) in cut.channels.iter().enumerate() {
            if channel.class(dup_ok) == CutClass::Broken {
                let name = &evidence.channel_names[ch];
                violations.push(at(format!("{name}: {}", broken_channel(channel))));
            }
        }
        if expected != Guarantee::Broken {
            for split in &cut.splits {
                violations.extend(misplaced_splits(split).into_iter().map(at));
            }
        }
    }
    Finding {
        violations,
        reach: vec![
            ("checkpoints completed", c.checkpoints_completed),
            ("alignments", c.alignments),
            ("unaligned checkpoints", c.unaligned_checkpoints),
            ("in-flight records persisted", c.in_flight_records_persisted),
            (
                "restored records persisted again",
                c.recovered_records_persisted,
            ),
        ],
    }
}

/// What is wrong with a channel whose cut is broken.
fn broken_channel(c: &ChannelCut) -> String {
    let (Some(s), Some(r)) = (c.sent, c.received) else {
        return "completed without a snapshot from both ends".to_string();
    };
    let (input, output) = c.spans();
    let mut msg = format!(
        "sender sent {s} records before its snapshot; receiver consumed {r} before its snapshot"
    );
    for (side, span) in [("input", input), ("output", output)] {
        if span.len > 0 || span.gap {
            let gap = if span.gap { " with a gap" } else { "" };
            let end = span.first + span.len;
            msg.push_str(&format!(
                "; {side} channel state [{}, {end}){gap}",
                span.first
            ));
        }
    }
    if input.len == 0 && output.len == 0 {
        msg.push_str(" (no in-flight records captured)");
    }
    msg
}

/// Each split of one source that is not in exactly one place: in none
/// (when every reader's snapshot is there), in several, or somewhere
/// although its enumerator had not discovered it.
fn misplaced_splits(s: &SplitCut) -> Vec<String> {
    let id = &s.operator;
    let mut found = Vec::new();
    for split in &s.known {
        match s.places.get(split).map_or(0, Vec::len) {
            1 => {}
            0 if s.complete => found.push(format!(
                "split {split} of {id} is neither unassigned in the enumerator's checkpoint nor in any reader's snapshot"
            )),
            0 => {}
            _ => found.push(format!(
                "split {split} of {id} is in more than one place: {}",
                s.places[split].join(", ")
            )),
        }
    }
    for (split, places) in &s.places {
        if !s.known.contains(split) {
            found.push(format!(
                "split {split} of {id} is in {} but the enumerator had not discovered it",
                places.join(", ")
            ));
        }
    }
    found
}
