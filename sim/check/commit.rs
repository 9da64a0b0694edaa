//! Commit: what completed checkpoints promise is committed, complete.
//!
//! At the end, whatever the ending, everything each sink task read before
//! the snapshot of the last checkpoint it was notified of (or restored
//! from) is committed. This replays the sinks' schedules on the oracle's
//! data, which is the run's data only when the cut was exactly-once; a run
//! allowed to duplicate (at-least-once) reads records the oracle does not
//! have, so it is not judged here. Whether each commit came in time is the
//! late-commit check's question (`late_commit.rs`).

use super::{Finding, Input};

pub fn check(input: &Input) -> Finding {
    let mut violations = Vec::new();
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
