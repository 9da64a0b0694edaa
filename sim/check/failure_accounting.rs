//! Failure accounting: checkpoint failures are counted as Flink's
//! `CheckpointFailureManager` counts them, from the run's record of every
//! checkpoint's outcome, and each time they exceed `tolerable_failures` the
//! job must fail over at that moment; a failover for checkpoint failures
//! must never happen otherwise.
//!
//! The count, recomputed here independently of the coordinator's counter:
//! expired checkpoints and checkpoint-storage failures count (savepoints
//! never do), each checkpoint at most once and only if its id is newer than
//! the last completed checkpoint; a completed checkpoint resets the count,
//! and so does the failover the count triggers.

use super::{Finding, Input};
use crate::runtime::coordinator::Outcome;
use crate::runtime::RunOutput;
use crate::verdict::{CheckId, Violation};
use std::collections::BTreeSet;

/// The reason `World::count_failure` gives its failover.
const REASON: &str = "consecutive checkpoint failures";

/// What the check found: violations, failures counted, failovers expected.
pub struct Accounting {
    pub violations: Vec<Violation>,
    pub counted: u64,
    pub failovers: u64,
}

pub fn check(input: &Input) -> Finding {
    let a = account(input.run);
    Finding {
        violations: a.violations,
        reach: vec![
            ("checkpoint failures counted", a.counted),
            ("failovers for checkpoint failures", a.failovers),
        ],
    }
}

/// Counts the run's checkpoint failures as Flink does and compares the
/// failovers they call for with the run's.
pub fn account(run: &RunOutput) -> Accounting {
    let tolerable = run.tolerable_failures;
    let mut counter: u32 = 0;
    let mut last_completed = 0;
    let mut counted_ids = BTreeSet::new();
    let mut expected: Vec<u64> = Vec::new();
    for s in run.checkpoint_stats.iter().filter(|s| !s.savepoint) {
        match s.outcome {
            Outcome::Completed => {
                counter = 0;
                last_completed = last_completed.max(s.id);
            }
            Outcome::Expired | Outcome::StorageFailed | Outcome::StateTooLarge
                if s.id > last_completed && counted_ids.insert(s.id) =>
            {
                counter += 1;
                if counter > tolerable {
                    expected.push(s.end_ns);
                    counter = 0;
                }
            }
            _ => {}
        }
    }
    let actual: Vec<u64> = run
        .failovers
        .iter()
        .filter(|(_, reason)| reason.contains(REASON))
        .map(|&(t, _)| t)
        .collect();
    let mut violations = Vec::new();
    let mut missing = expected.iter().filter(|t| !actual.contains(t));
    if let Some(&t) = missing.next() {
        violations.push(Violation {
            check: CheckId::FailureAccounting,
            time_ns: t,
            message: format!(
                "more than {tolerable} consecutive checkpoint failures were counted by then, but the job did not fail over{}",
                match missing.count() {
                    0 => String::new(),
                    n => format!(" (and {n} more times)"),
                }
            ),
        });
    }
    if let Some(&t) = actual.iter().find(|t| !expected.contains(t)) {
        violations.push(Violation {
            check: CheckId::FailureAccounting,
            time_ns: t,
            message: format!(
                "the job failed over for checkpoint failures, but by Flink's count they had not exceeded tolerable_failures = {tolerable}"
            ),
        });
    }
    Accounting {
        violations,
        counted: counted_ids.len() as u64,
        failovers: expected.len() as u64,
    }
}
