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
//! - **Queued mails**: every mail queued at a task runs before the task's
//!   thread starts its second default action (step) after the mail came.
//!   Flink's `MailboxProcessor` runs every queued mail between two default
//!   actions; a mail that came just after that look waits for one (a race
//!   Flink does not fix, a choice under `explore --mail-orders`), never
//!   through a second. The bound is exact: the mails queued at a task are
//!   at most those that came during one step. A mailbox that runs fewer
//!   lets a backlog build under steady input (notifications, triggers and
//!   split assignments run ever later) that no output shows.
//!
//! Checkpoint files (leaked, deleted while referred to, not durable) are
//! the checkpoint-files check's (`checkpoint_files.rs`).

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
    let mails = &run.evidence.mails;
    if let Some(first) = mails.first.first() {
        let task = &run.evidence.task_names[first.task as usize];
        violations.push(Violation {
            check: CheckId::Resources,
            time_ns: first.time_ns,
            message: format!(
                "a mail waited through a whole default action at {task}: \"{}\", queued at {}, was still in the mailbox ({} queued) when the task's thread started its {} step since, at {}; Flink's mailbox runs every queued mail between two default actions ({} step starts found a mail overdue in the run, at most {} queued at one task)",
                first.mail,
                SimDuration(first.queued_ns),
                crate::engine::count(first.queued as u64, "mail"),
                ordinal(first.steps),
                SimDuration(first.time_ns),
                mails.overdue,
                crate::engine::count(mails.peak as u64, "mail"),
            ),
        });
    }
    Finding {
        violations,
        reach: vec![
            ("checkpoints subsumed", run.subsumed),
            ("most checkpoints retained", peak as u64),
            ("mails that waited for a step", run.counters.mails_waited),
            ("most mails queued at a task", mails.peak as u64),
        ],
    }
}

/// `2` → "2nd".
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
