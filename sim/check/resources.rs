//! Resources: what the job keeps stays within what its configuration
//! allows, with the numbers in the message.
//!
//! - **Retained checkpoints**: the completed-checkpoint store never holds
//!   more checkpoints than `[checkpoint] retained` (Flink's
//!   `state.checkpoints.num-retained`): each completion subsumes the oldest
//!   beyond it, and with it the data only it refers to. A store that keeps
//!   them grows without bound while every output stays right, so no other
//!   check sees it.
//!
//! Not judged yet: checkpoint files (ckptsim keeps checkpoint data as
//! values, not files: leaked or early-deleted files need the file model of
//! the state backends), pending timers (no event time yet) and queued
//! mails.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::runtime::coordinator::Outcome;
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let policy = input.scenario.checkpoint.retained.max(1) as usize;
    let peak = run.retained_peak;
    let mut violations = Vec::new();
    if let Some(id) = run.retained_over {
        // At the completion that first left the store over the policy.
        let at = run
            .checkpoint_stats
            .iter()
            .find(|c| c.id == id && c.outcome == Outcome::Completed)
            .map_or(input.end_ns(), |c| c.end_ns);
        violations.push(Violation {
            check: CheckId::Resources,
            time_ns: at,
            message: format!(
                "the completed-checkpoint store held more than {policy} checkpoints (retained {policy}) once checkpoint {id} completed at {}, and up to {peak}: the older ones were not subsumed ({} subsumed in the run)",
                SimDuration(at),
                run.subsumed
            ),
        });
    }
    Finding {
        violations,
        reach: vec![
            ("checkpoints subsumed", run.subsumed),
            ("most checkpoints retained", peak as u64),
        ],
    }
}
