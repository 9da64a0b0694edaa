//! Exactly-once output: the committed sink output equals the failure-free
//! oracle's, by lineage and by value; upsert sinks are judged by their
//! finished table. The comparison also measures the guarantee the run kept
//! (duplicates make it at-least-once, losses at-most-once), which the
//! verdict reports and the state check reads.

use super::oracle::{Oracle, OutputDiff, UpsertDiff};
use super::{Finding, Input};
use crate::runtime::{RunOutcome, RunOutput};
use crate::scenario::Guarantee;
use crate::verdict::Violation;

/// The output compared with the oracle's, once per judgement.
pub struct Compared {
    pub diff: OutputDiff,
    /// Upsert sinks: effectively-once by key, judged by the finished table.
    pub upsert: Option<UpsertDiff>,
    /// The guarantee the output kept.
    pub guarantee: Guarantee,
}

/// Compares the run's committed output with the oracle's. A job stopped
/// with a savepoint must have committed everything its sources read before
/// the stop; any other unfinished run, no duplicate.
pub fn compare(oracle: &Oracle, run: &RunOutput, finished: bool) -> Compared {
    let diff = match (&run.outcome, &run.complete_below) {
        (RunOutcome::Stopped(_), Some(below)) => {
            oracle.compare_output_below(run, Some(below), &run.complete_exempt)
        }
        _ => oracle.compare_output(run, finished),
    };
    let guarantee = match (diff.duplicates > 0, diff.losses > 0) {
        (false, false) => Guarantee::ExactlyOnce,
        (true, false) => Guarantee::AtLeastOnce,
        (false, true) => Guarantee::AtMostOnce,
        (true, true) => Guarantee::Broken,
    };
    let upsert = oracle.compare_upsert(run, finished);
    let guarantee = match &upsert {
        Some(u) => guarantee.weaker(u.guarantee()),
        None => guarantee,
    };
    Compared {
        diff,
        upsert,
        guarantee,
    }
}

pub fn check(input: &Input) -> Finding {
    let Compared {
        diff,
        upsert,
        guarantee,
    } = &input.output;
    let run = input.run;
    let c = &run.counters;
    let mut violations = Vec::new();
    if !guarantee.satisfies(run.expected) {
        let upserts = upsert.iter().flat_map(|u| &u.violations);
        violations = diff
            .violations
            .iter()
            .chain(upserts)
            .map(|v| Violation {
                time_ns: input.end_ns(),
                ..v.clone()
            })
            .collect();
    }
    // Payloads are compared by name: a name two different values share
    // could hide a difference, so such a run is not passed.
    let collisions = run.store.payloads.collisions() + input.oracle.payload_collisions();
    if collisions > 0 {
        violations.push(Violation {
            check: crate::verdict::CheckId::ExactlyOnceOutput,
            time_ns: input.end_ns(),
            message: format!(
                "{} of different payloads share a name, so the output cannot be judged on its payloads (a 64-bit name; a limit of the judge, not a fault of the job)",
                crate::engine::count(collisions, "pair")
            ),
        });
    }
    let mut reach = vec![
        ("records committed", run.store.committed().len() as u64),
        ("records replayed", c.records_replayed),
        ("recoveries", c.recoveries),
        ("recovery commits", c.recovery_commits),
        ("in-flight records replayed", c.in_flight_records_replayed),
    ];
    if !run.store.payloads.is_empty() {
        reach.push(("payloads", run.store.payloads.len() as u64));
    }
    if input.oracle.duplicating {
        // At-least-once with replays: lineages only (docs/checkers.md).
        reach.push(("values not compared (duplicates allowed)", 1));
    }
    if !input.oracle.unjudged.is_empty() {
        reach.push(("sinks not compared", input.oracle.unjudged.len() as u64));
    }
    if let Some(u) = upsert {
        reach.extend([
            ("upsert writes", u.writes),
            ("upsert writes repeated", u.repeated),
            ("upsert regressions", u.regressions),
            ("upsert writes missing", u.missing),
            ("upsert keys compared", u.keys),
        ]);
    }
    Finding { violations, reach }
}
