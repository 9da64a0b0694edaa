//! Channel order: the records of a channel are read in the order they
//! were sent, and after a restore its restored in-flight records are read
//! before anything new on it.
//!
//! Every data buffer carries the sequence number of its first record; the
//! runtime compares it, at every read, with the number of records the
//! receiver has read from the channel in its current attempt (restored
//! records hold the numbers below the channel's new data), and keeps the
//! first breaks ([`crate::runtime::output::ChannelOrder`]). A reordering
//! that leaves every value the same (an order-insensitive operator) shows
//! here and nowhere else.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let evidence = &input.run.evidence;
    let order = &evidence.channel_order;
    let more = order.breaks.saturating_sub(order.first.len() as u64);
    let violations = order
        .first
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let name = &evidence.channel_names[b.channel as usize];
            let what = if b.got > b.expected {
                format!(
                    "records {}..{} are not read yet (lost, or read later)",
                    b.expected, b.got
                )
            } else {
                "it read them before".to_string()
            };
            let tail = match (i + 1 == order.first.len(), more) {
                (true, m) if m > 0 => format!(" ({m} more buffers out of order)"),
                _ => String::new(),
            };
            Violation {
                check: CheckId::ChannelOrder,
                time_ns: b.time_ns,
                message: format!(
                    "channel {name}: at {} the receiver read {} records from sequence number {} where {} was next: {what}{tail}",
                    SimDuration(b.time_ns),
                    b.records,
                    b.got,
                    b.expected
                ),
            }
        })
        .collect();
    Finding {
        violations,
        reach: vec![("records checked", order.checked)],
    }
}
