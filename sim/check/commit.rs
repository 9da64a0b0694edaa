//! Commit: what completed checkpoints promise is committed, in time (at
//! each notification, which the runtime still reports while it runs) and
//! complete (at the end, whatever the ending). The end part replays the
//! sinks' schedules on the oracle's data, which is the run's data only when
//! the cut was exactly-once; a run allowed to duplicate (at-least-once)
//! reads records the oracle does not have, so it is judged only in time.

use super::{Finding, Input};

pub fn check(input: &Input) -> Finding {
    let (violations, promised) = if input.exact_state_promised() {
        input.oracle.compare_promised(input.run)
    } else {
        (Vec::new(), 0)
    };
    Finding {
        violations,
        reach: vec![
            ("sink notifications", input.oracle.sink_notifications),
            ("records promised", promised),
        ],
    }
}
