//! Commit: what completed checkpoints promise is committed, in time and
//! complete.
//!
//! In time: once a sink task is notified of checkpoint N, nothing its
//! current instance pre-committed for N or earlier stays pre-committed; the
//! runtime records each notification with what was still pre-committed
//! ([`crate::runtime::output::SinkNotification`]).
//!
//! Complete: at the end, whatever the ending, everything each sink task
//! read before the snapshot of the last checkpoint it was notified of (or
//! restored from) is committed. This replays the sinks' schedules on the
//! oracle's data, which is the run's data only when the cut was
//! exactly-once; a run allowed to duplicate (at-least-once) reads records
//! the oracle does not have, so it is judged only in time.

use super::{Finding, Input};
use crate::verdict::{CheckId, Violation};

/// A violation per notification after which something stayed
/// pre-committed.
fn late<'a>(input: &'a Input<'a>) -> impl Iterator<Item = Violation> + 'a {
    let evidence = &input.run.evidence;
    evidence.sink_notifications.iter().filter_map(|n| {
        let (txn, cp) = n.precommitted.first()?;
        let name = &evidence.task_names[n.task as usize];
        let more = match n.precommitted.len() {
            1 => String::new(),
            k => format!(" (and {} more)", k - 1),
        };
        Some(Violation {
            check: CheckId::Commit,
            time_ns: n.time_ns,
            message: format!(
                "sink {name} was notified that checkpoint {} completed, but {txn}, pre-committed for checkpoint {cp}, is still not committed{more}",
                n.checkpoint
            ),
        })
    })
}

pub fn check(input: &Input) -> Finding {
    let mut violations: Vec<Violation> = late(input).collect();
    let mut promised = 0;
    if input.exact_state_promised() {
        let (found, n) = input.oracle.compare_promised(input.run);
        violations.extend(found);
        promised = n;
    }
    Finding {
        violations,
        reach: vec![
            ("sink notifications", input.oracle.sink_notifications),
            ("records promised", promised),
        ],
    }
}
