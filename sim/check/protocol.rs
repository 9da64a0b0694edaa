//! Protocol: per task and checkpoint at most one snapshot, one decline and
//! one cancellation marker per output and cause; never notified complete
//! after an abort; completed ids increase; restores succeed; no commit or
//! sink write is refused; no savepoint enters the completed-checkpoint
//! store or is restored by a failover. The external store's refusals are
//! judged here; the runtime still reports the other facts as violations
//! while it runs.

use super::{Finding, Input};
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let end = input.end_ns();
    let mut violations = Vec::new();
    for (txn, state) in &run.store.refused_writes {
        let state = match state {
            Some(s) => format!("in state {s:?}"),
            None => "that was never opened".to_string(),
        };
        violations.push(Violation {
            check: CheckId::Protocol,
            time_ns: end,
            message: format!(
                "a sink wrote to {txn} {state}: the write was refused (its records are lost)"
            ),
        });
    }
    for txn in &run.store.refused {
        violations.push(Violation {
            check: CheckId::Protocol,
            time_ns: end,
            message: format!(
                "commit of {txn} refused: it was aborted or never opened (its records are lost)"
            ),
        });
    }
    let c = &run.counters;
    Finding {
        violations,
        reach: vec![
            ("snapshots", c.snapshots),
            ("checkpoints aborted", c.checkpoints_aborted),
        ],
    }
}
