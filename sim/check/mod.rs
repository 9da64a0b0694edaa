//! The checkers: they decide whether a run kept its promise. A verdict is
//! data (a list of violations, each with the virtual time, the invariant and
//! an explanation), never a panic. Every check reports reachability counters
//! beside its verdict, so that a pass cannot be vacuous.

pub mod accounting;
pub mod oracle;

use crate::runtime::{RunOutcome, RunOutput};
use crate::scenario::Guarantee;
// Re-exported so that `check::Violation` and `check::CHECKS` keep working;
// they live in `verdict`, below the runtime, which reports violations too.
pub use crate::verdict::{Violation, CHECKS};
use oracle::Oracle;
use serde::Serialize;
use std::collections::BTreeMap;

/// The result of one check.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub name: &'static str,
    pub passed: bool,
    /// Evidence the check looked at something: `(what, how many)`.
    pub reach: Vec<(&'static str, u64)>,
    pub violations: Vec<Violation>,
}

/// The verdict of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub checks: Vec<CheckResult>,
    pub guarantee: Guarantee,
    pub expected: Guarantee,
    pub passed: bool,
}

impl Verdict {
    pub fn violations(&self) -> impl Iterator<Item = &Violation> {
        self.checks.iter().flat_map(|c| c.violations.iter())
    }
}

/// Judges a run against the oracle.
pub fn judge(oracle: &Oracle, run: &RunOutput) -> Verdict {
    let finished = run.outcome == RunOutcome::Finished;
    let mut by_check: BTreeMap<&'static str, Vec<Violation>> = BTreeMap::new();
    for v in &run.violations {
        by_check.entry(v.check).or_default().push(v.clone());
    }
    let end = run.end_time.0;
    let c = &run.counters;

    // Exactly-once output, by lineage and by value.
    // A job stopped with a savepoint must have committed everything its
    // sources read before the stop; any other unfinished run, no duplicate.
    let out = match (&run.outcome, &run.complete_below) {
        (RunOutcome::Stopped(_), Some(below)) => {
            oracle.compare_output_below(run, Some(below), &run.complete_exempt)
        }
        _ => oracle.compare_output(run, finished),
    };
    let mut output_violations = out.violations.clone();
    for v in &mut output_violations {
        v.time_ns = end;
    }
    let guarantee = match (out.duplicates > 0, out.losses > 0) {
        (false, false) => Guarantee::ExactlyOnce,
        (true, false) => Guarantee::AtLeastOnce,
        (false, true) => Guarantee::AtMostOnce,
        (true, true) => Guarantee::Broken,
    };
    // Upsert sinks: effectively-once by key, judged by the finished table.
    let upsert = oracle.compare_upsert(run, finished);
    let guarantee = match &upsert {
        Some(u) => {
            for v in &u.violations {
                output_violations.push(Violation {
                    time_ns: end,
                    ..v.clone()
                });
            }
            guarantee.weaker(u.guarantee())
        }
        None => guarantee,
    };
    let expected = run.expected;
    let output_ok = guarantee.satisfies(expected);
    if output_ok {
        output_violations.clear();
    }

    // State equivalence.
    let mut state_violations = Vec::new();
    let mut state_entries = 0;
    if finished {
        state_entries = oracle.compare_state(run, &mut state_violations);
        for v in &mut state_violations {
            v.time_ns = end;
        }
    }
    let state_exact = matches!(
        expected,
        Guarantee::ExactlyOnce | Guarantee::EffectivelyOnce
    );
    if !state_exact && guarantee.satisfies(expected) {
        // Duplicated state effects are what a weaker declared guarantee allows.
        state_violations.clear();
    }

    // Liveness.
    let mut liveness = Vec::new();
    let why = match &run.outcome {
        RunOutcome::Finished => None,
        // The restart strategy gave up (or the coordinator lost the
        // checkpoints and was told to fail): a reported outcome of the
        // configuration, not a broken promise. Output is still checked for
        // duplicates; losses are expected, the job did not finish.
        RunOutcome::JobFailed(_) => None,
        RunOutcome::EventLimit => Some("the job did not finish within max_events".to_string()),
        RunOutcome::TimeLimit => Some("the job did not finish within max_time".to_string()),
        RunOutcome::Stalled => Some("the job stalled: no event left and not finished".to_string()),
        // Ended on request: a stop-with-savepoint, or a cancel.
        RunOutcome::Stopped(_) | RunOutcome::Cancelled => None,
        // Ended by a limit of the machine, not of the scenario: not a
        // verdict on the job's liveness (what it committed is still
        // checked for duplicates, like any unfinished run).
        RunOutcome::WallLimit | RunOutcome::MemoryLimit => None,
    };
    if let Some(why) = why {
        let quiet = run.fault_phase_end;
        let stuck = if run.end_time > quiet && c.checkpoints_in_quiet_phase == 0 {
            format!(
                " (in the quiet phase after the faults ended at {}, no checkpoint completed)",
                crate::engine::SimDuration(quiet.0)
            )
        } else if c.checkpoints_after_last_recovery == 0 && c.recoveries > 0 {
            " (no checkpoint completed after the last recovery)".to_string()
        } else {
            String::new()
        };
        liveness.push(Violation {
            check: "liveness",
            time_ns: end,
            message: format!("{why}{stuck}"),
        });
    }
    let mut protocol = by_check.remove("protocol").unwrap_or_default();
    for (txn, state) in &run.store.refused_writes {
        let state = match state {
            Some(s) => format!("in state {s:?}"),
            None => "that was never opened".to_string(),
        };
        protocol.push(Violation {
            check: "protocol",
            time_ns: end,
            message: format!(
                "a sink wrote to {txn} {state}: the write was refused (its records are lost)"
            ),
        });
    }
    for txn in &run.store.refused {
        protocol.push(Violation {
            check: "protocol",
            time_ns: end,
            message: format!(
                "commit of {txn} refused: it was aborted or never opened (its records are lost)"
            ),
        });
    }

    // Commit: in time (at each notification, found while running) and
    // complete (at the end, whatever the ending).
    // The end part replays the sinks' schedules on the oracle's data, which
    // is the run's data only when the cut was exactly-once; a run allowed
    // to duplicate (at-least-once) reads records the oracle does not have.
    let mut commit = by_check.remove("commit").unwrap_or_default();
    let (promised_violations, promised) = if state_exact {
        oracle.compare_promised(run)
    } else {
        (Vec::new(), 0)
    };
    commit.extend(promised_violations);
    let accounting = accounting::check(run);
    let mut output_reach = vec![
        ("records committed", run.store.committed().len() as u64),
        ("records replayed", c.records_replayed),
        ("recoveries", c.recoveries),
        ("recovery commits", c.recovery_commits),
        ("in-flight records replayed", c.in_flight_records_replayed),
    ];
    if !oracle.unjudged.is_empty() {
        output_reach.push(("sinks not compared", oracle.unjudged.len() as u64));
    }
    if let Some(u) = &upsert {
        output_reach.extend([
            ("upsert writes", u.writes),
            ("upsert writes repeated", u.repeated),
            ("upsert regressions", u.regressions),
            ("upsert writes missing", u.missing),
            ("upsert keys compared", u.keys),
        ]);
    }

    let checks = vec![
        CheckResult {
            name: "consistent-cut",
            passed: !by_check.contains_key("consistent-cut"),
            reach: vec![
                ("checkpoints completed", c.checkpoints_completed),
                ("alignments", c.alignments),
                ("unaligned checkpoints", c.unaligned_checkpoints),
                ("in-flight records persisted", c.in_flight_records_persisted),
                (
                    "restored records persisted again",
                    c.recovered_records_persisted,
                ),
            ],
            violations: by_check.remove("consistent-cut").unwrap_or_default(),
        },
        CheckResult {
            name: "exactly-once-output",
            passed: output_violations.is_empty(),
            reach: output_reach,
            violations: output_violations,
        },
        CheckResult {
            name: "state",
            passed: state_violations.is_empty(),
            reach: vec![("keyed entries compared", state_entries)],
            violations: state_violations,
        },
        CheckResult {
            name: "liveness",
            passed: liveness.is_empty(),
            reach: vec![
                (
                    "checkpoints after last recovery",
                    c.checkpoints_after_last_recovery,
                ),
                ("checkpoints in quiet phase", c.checkpoints_in_quiet_phase),
                ("finished", u64::from(finished)),
            ],
            violations: liveness,
        },
        CheckResult {
            name: "routing",
            passed: !by_check.contains_key("routing"),
            reach: vec![("keyed records checked", c.records_routing_checked)],
            violations: by_check.remove("routing").unwrap_or_default(),
        },
        CheckResult {
            name: "protocol",
            passed: protocol.is_empty(),
            reach: vec![
                ("snapshots", c.snapshots),
                ("checkpoints aborted", c.checkpoints_aborted),
            ],
            violations: protocol,
        },
        CheckResult {
            name: "commit",
            passed: commit.is_empty(),
            reach: vec![
                ("sink notifications", oracle.sink_notifications),
                ("records promised", promised),
            ],
            violations: commit,
        },
        CheckResult {
            name: "failure-accounting",
            passed: accounting.violations.is_empty(),
            reach: vec![
                ("checkpoint failures counted", accounting.counted),
                ("failovers for checkpoint failures", accounting.failovers),
            ],
            violations: accounting.violations,
        },
    ];
    let passed = checks.iter().all(|c| c.passed);
    Verdict {
        checks,
        guarantee,
        expected,
        passed,
    }
}
