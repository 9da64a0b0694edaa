//! Liveness: after the fault phase (a quiet phase with no new faults)
//! checkpoints complete again, and a bounded job finishes within its
//! limits. An ending the configuration asked for (a stop, a cancel, a
//! restart strategy giving up on the injected faults) or a limit of the
//! machine is not a verdict on the job's liveness; a job that failed
//! because its own operators threw (a log sink whose commit the broker
//! refused, over and over) is.

use super::{Finding, Input};
use crate::runtime::RunOutcome;
use crate::verdict::{CheckId, Violation};

/// Why the run's ending breaks liveness, if it does.
fn not_live(outcome: &RunOutcome) -> Option<&'static str> {
    match outcome {
        RunOutcome::Finished => None,
        // The restart strategy gave up (or the coordinator lost the
        // checkpoints and was told to fail): a reported outcome of the
        // configuration, not a broken promise. Output is still checked for
        // duplicates; losses are expected, the job did not finish.
        RunOutcome::JobFailed(_) => None,
        RunOutcome::EventLimit => Some("the job did not finish within max_events"),
        RunOutcome::TimeLimit => Some("the job did not finish within max_time"),
        RunOutcome::Stalled => Some("the job stalled: no event left and not finished"),
        // Ended on request: a stop-with-savepoint, or a cancel.
        RunOutcome::Stopped(_) | RunOutcome::Cancelled => None,
        // Ended by a limit of the machine, not of the scenario: not a
        // verdict on the job's liveness (what it committed is still
        // checked for duplicates, like any unfinished run).
        RunOutcome::WallLimit | RunOutcome::MemoryLimit => None,
    }
}

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let c = &run.counters;
    let mut violations = Vec::new();
    let looping = super::progress::restart_loop(run, input.scenario.limits.restart_loop).is_some();
    // A restart loop is the progress check's verdict (one cause, one
    // verdict): the job cannot finish while it loops.
    let own = match (&run.outcome, run.evidence.operator_failures.first()) {
        (RunOutcome::JobFailed(reason), Some((at, first))) => Some(format!(
            "the job failed ({reason}), and its own operators raised {} of its failures, the first at {}: {first}",
            c.operator_failures,
            crate::engine::SimDuration(*at)
        )),
        _ => None,
    };
    if let Some(message) = own {
        violations.push(Violation {
            check: CheckId::Liveness,
            time_ns: input.end_ns(),
            message,
        });
    } else if let Some(why) = not_live(&run.outcome).filter(|_| !looping) {
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
        // What was still pending when it ended: the first place to look.
        let pending = match run.evidence.pending_at_end.as_slice() {
            [] => String::new(),
            all => format!("; at the end {}", all.join("; ")),
        };
        violations.push(Violation {
            check: CheckId::Liveness,
            time_ns: input.end_ns(),
            message: format!("{why}{stuck}{pending}"),
        });
    }
    Finding {
        violations,
        reach: vec![
            (
                "checkpoints after last recovery",
                c.checkpoints_after_last_recovery,
            ),
            ("checkpoints in quiet phase", c.checkpoints_in_quiet_phase),
            ("finished", u64::from(input.finished)),
        ],
    }
}
