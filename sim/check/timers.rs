//! Timers: every timer fires exactly once in effect, and a processing-time
//! timer fires when its time comes.
//!
//! The run logs every timer that fires with its task's schedule
//! (`ScheduleLog::fired`), so the firings *in effect* are those of the
//! effective schedules: a firing whose output a restore rolled back is
//! not one. The oracle replays the same schedules on operators that never
//! fail, so its firings are the failure-free run's: a timer the run fired
//! less often was lost (not in a snapshot, dropped by a rescale), one it
//! fired more often fired twice into the output. After a finished job
//! every event-time timer has fired (`MAX_WATERMARK` reaches them all),
//! so the oracle's firings past the run's schedules count too.
//!
//! Processing-time timers fire through the task's mailbox: when a task
//! starts a step with a processing-time timer past due and no mail queued,
//! its processing-time service was not armed for it (or its mail was
//! lost), and the timer waits for a registration that may never come.
//!
//! A restore gives every operator back as many timers as it held at the
//! snapshot restored (each snapshot of this run records the count; a
//! snapshot from a file does not): a timer left out of a snapshot or
//! dropped by a restore is named at the restore, with its task and
//! checkpoint, under any algorithm.
//!
//! The firings are judged when the oracle replayed the run's schedules and
//! the run promises exactly-once state (with duplicates allowed, the run's
//! reads are not the oracle's).

use super::{Finding, Input};
use crate::model::timers::FiredTimer;
use crate::verdict::{CheckId, Violation};

/// Examples of each kind of difference named.
const EXAMPLES: usize = 3;

pub fn check(input: &Input) -> Finding {
    let ev = &input.run.evidence.timers;
    let mut violations = Vec::new();
    let mut judged = 0;
    if let Some(fired) = ev.fired.as_ref().filter(|_| judged_here(input)) {
        judged = fired.len() as u64;
        exactly_once(input, fired, &mut violations);
    }
    for o in &ev.first_overdue {
        violations.push(Violation {
            check: CheckId::Timers,
            time_ns: o.time_ns,
            message: format!(
                "task {} started a step at {} with a processing-time timer of {} due at {} ms and no mail queued to fire it: its processing-time service is not armed for it",
                o.task,
                crate::engine::SimDuration(o.time_ns),
                o.operator,
                o.due_ms
            ),
        });
    }
    let more = ev.overdue.saturating_sub(ev.first_overdue.len() as u64);
    if let Some(last) = violations.last_mut().filter(|_| more > 0) {
        last.message
            .push_str(&format!(" ({more} more step starts with a timer past due)"));
    }
    for s in &ev.first_short {
        violations.push(Violation {
            check: CheckId::Timers,
            time_ns: s.time_ns,
            message: format!(
                "task {} was restored from checkpoint {} with {} of operator `{}`, whose snapshot held {}",
                s.task,
                s.checkpoint,
                crate::engine::count(s.restored, "timer"),
                s.operator,
                s.held
            ),
        });
    }
    let more = ev
        .restores_short
        .saturating_sub(ev.first_short.len() as u64);
    if let Some(last) = violations.last_mut().filter(|_| more > 0) {
        last.message
            .push_str(&format!(" ({more} more restores short of timers)"));
    }
    Finding {
        violations,
        reach: vec![
            ("timers fired in effect (judged)", judged),
            ("timers restored", input.run.counters.timers_restored),
            ("restores judged for their timers", ev.restores_judged),
            ("processing-time timers judged at step starts", ev.checks),
        ],
    }
}

fn judged_here(input: &Input) -> bool {
    input.oracle.replayed && input.exact_state_promised()
}

/// The run's firings in effect against the oracle's.
fn exactly_once(input: &Input, fired: &[FiredTimer], violations: &mut Vec<Violation>) {
    let oracle = input.oracle;
    let mut expected = oracle.timers_fired.clone();
    if input.finished {
        expected.extend_from_slice(&oracle.timers_fired_after);
        expected.sort_unstable();
    }
    let (mut lost, mut twice) = (Vec::new(), Vec::new());
    let (mut n_lost, mut n_twice) = (0u64, 0u64);
    for (timer, run, want) in differences(fired, &expected) {
        if run < want {
            n_lost += want - run;
            if lost.len() < EXAMPLES {
                lost.push(describe(input, timer, run, want));
            }
        } else {
            n_twice += run - want;
            if twice.len() < EXAMPLES {
                twice.push(describe(input, timer, run, want));
            }
        }
    }
    for (n, examples, what) in [
        (n_lost, lost, "missing in effect (a timer lost)"),
        (
            n_twice,
            twice,
            "more in effect than in the failure-free run (a timer fired twice)",
        ),
    ] {
        if n > 0 {
            violations.push(Violation {
                check: CheckId::Timers,
                time_ns: 0,
                message: format!(
                    "{} {what}, e.g. {}",
                    crate::engine::count(n, "timer firing"),
                    examples.join("; ")
                ),
            });
        }
    }
}

fn describe(input: &Input, t: FiredTimer, run: u64, want: u64) -> String {
    let op = input
        .scenario
        .operators
        .get(t.operator as usize)
        .map_or("?", |o| o.id.as_str());
    format!(
        "`{op}`: {} timer of key {} at {} ms fired {run}× in effect, {want}× in the failure-free run",
        t.domain.name(),
        t.key,
        t.time
    )
}

/// Each timer whose count differs between two sorted lists, with both
/// counts.
fn differences(a: &[FiredTimer], b: &[FiredTimer]) -> Vec<(FiredTimer, u64, u64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        let t = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => *x.min(y),
            (Some(x), None) => *x,
            (None, Some(y)) => *y,
            (None, None) => break,
        };
        let (mut na, mut nb) = (0u64, 0u64);
        while a.get(i) == Some(&t) {
            na += 1;
            i += 1;
        }
        while b.get(j) == Some(&t) {
            nb += 1;
            j += 1;
        }
        if na != nb {
            out.push((t, na, nb));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::timers::Domain;

    fn t(key: u64, time: i64) -> FiredTimer {
        FiredTimer {
            operator: 1,
            key,
            domain: Domain::Event,
            time,
        }
    }

    #[test]
    fn differences_name_each_timer_with_both_counts() {
        let run = [t(1, 5), t(1, 5), t(2, 7)];
        let oracle = [t(1, 5), t(2, 7), t(3, 9)];
        assert_eq!(
            differences(&run, &oracle),
            vec![(t(1, 5), 2, 1), (t(3, 9), 0, 1)]
        );
        assert!(differences(&oracle, &oracle).is_empty());
    }
}
