//! Lost commits of the transactional log: every transaction a completed
//! checkpoint holds is committed, never refused.
//!
//! A log sink keeps each checkpoint's transaction open (pre-committed)
//! until the checkpoint is known complete, and commits it then by resuming
//! its producer. If the broker aborted it meanwhile because it was open
//! longer than its transaction timeout, or a newer producer of the same
//! transactional id fenced it, the commit is refused and Flink's
//! `KafkaCommitter` drops it with an error: its records are lost, though
//! the checkpoint promised them. The sink keeps each refusal
//! ([`crate::model::txlog::sink::LostCommit`]); this check names it, with
//! the timeout and the checkpoint interval when the timeout was the cause
//! (the timeout must exceed the interval plus the time to recover), and the
//! transaction coordinator's outage when one held the commit up past it.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::model::txlog::sink::LostCommit;
use crate::model::txlog::AbortCause;
use crate::scenario::BrokerRole;
use crate::verdict::{CheckId, Violation};

fn message(input: &Input, l: &LostCommit) -> String {
    let c = &l.committable;
    let sink = &input.scenario.operators[l.sink as usize].id;
    let what = format!(
        "checkpoint {} completed, but its transaction `{}` of {sink}[{}] ({} opened at {})",
        c.checkpoint,
        c.transactional_id,
        l.subtask,
        crate::engine::count(c.records, "record"),
        SimDuration(c.opened_at.0),
    );
    match l.aborted {
        Some((AbortCause::TimedOut, at)) => {
            let interval = match input.scenario.checkpoint.interval {
                Some(i) => format!("the checkpoint interval ({})", SimDuration(i.0)),
                None => "the time between checkpoints".to_string(),
            };
            let outage = (input.scenario.faults.broker.iter())
                .filter(|w| {
                    let deadline = c.opened_at.plus(l.timeout);
                    w.role == BrokerRole::Coordinator && w.from <= l.at && deadline < w.until
                })
                .map(|w| {
                    format!(
                        " The transaction coordinator was {} from {} to {}: the commit waited for it, and the transaction's timeout passed meanwhile; the timeout must exceed {interval} plus the longest outage of the coordinator.",
                        crate::scenario::schema::name_of(&w.fault_kind()),
                        SimDuration(w.from.0),
                        SimDuration(w.until.0),
                    )
                })
                .next()
                .unwrap_or_default();
            format!(
                "{what} was aborted by the broker at {} after its transaction timeout of {}, before the commit at {}: its records are lost. The transaction timeout must exceed {interval} plus the time to recover from a failure.{outage}",
                SimDuration(at.0),
                l.timeout,
                SimDuration(l.at.0),
            )
        }
        Some((AbortCause::NewProducer, _)) => format!(
            "{what} was aborted because a new producer initialised its transactional id before the commit at {}: its records are lost ({})",
            SimDuration(l.at.0),
            l.error
        ),
        _ => format!(
            "{what} could not be committed at {}: {}; its records are lost",
            SimDuration(l.at.0),
            l.error
        ),
    }
}

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let violations = (run.store.log_losses.iter())
        .map(|l| Violation {
            check: CheckId::LostCommits,
            time_ns: l.at.0,
            message: message(input, l),
        })
        .collect();
    Finding {
        violations,
        reach: vec![
            ("log transactions committed", run.counters.log_commits),
            (
                "transactions the broker timed out",
                run.counters.log_transactions_timed_out,
            ),
        ],
    }
}
