//! Progress: what must keep moving keeps moving, within bounds the
//! scenario sets (`[limits]`, generous but finite by default), judged where
//! no fault interferes.
//!
//! - **Checkpoints complete**: between two completed checkpoints (or from
//!   the first trigger to the first completion, or from the last one to the
//!   end of the run) at most `checkpoint_gap` passes, counted from the
//!   last fault inside the window (a fault and its recovery legitimately
//!   stop checkpoints). The bound is at least twice the checkpoint
//!   interval. Algorithms without coordinated periodic checkpoints are not
//!   judged.
//! - **Transactions end**: every transaction of a sink is committed or
//!   aborted within `transaction_open` of being begun, and none is left
//!   open or pre-committed when the job finishes (an open transaction
//!   blocks every `read_committed` reader of a Kafka topic; a restarted
//!   sink must abort what its failed attempt left behind). Not judged for
//!   an algorithm that takes no checkpoints (`none`): nothing commits.
//! - **Restarts stop**: a job that did not end (finish, fail, stop) may
//!   not have ended its run in more than `restart_loop` restarts with no
//!   checkpoint completed after the first of them: a restart loop, as a
//!   task that fails in every attempt under a restart strategy that never
//!   gives up (it makes no progress and never reports failed). A run of
//!   restarts the job got out of is not a loop: injected faults may cause
//!   many. Liveness leaves a run in a restart loop to this check (one
//!   cause, one verdict).
//!
//! A violation names what stopped, where and since when. The first few of
//! each kind are named, the rest counted.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::model::store::{TxnSpan, TxnState};
use crate::runtime::coordinator::Outcome;
use crate::verdict::{CheckId, Violation};

/// Violations named per kind; the rest are counted in the last one.
const NAMED: usize = 3;

/// Keeps the first [`NAMED`] violations, the last of them saying how
/// many more there were.
fn first_of(mut found: Vec<Violation>) -> Vec<Violation> {
    let more = found.len().saturating_sub(NAMED);
    found.truncate(NAMED);
    if let (Some(last), true) = (found.last_mut(), more > 0) {
        last.message.push_str(&format!(" ({more} more like it)"));
    }
    found
}

/// Windows without a completed checkpoint longer than the bound, outside
/// faults: the violations, and how many windows were judged.
fn checkpoint_gaps(input: &Input) -> (Vec<Violation>, u64) {
    let run = input.run;
    let s = input.scenario;
    let info = run.config.algorithm.info();
    let Some(interval) = s.checkpoint.interval else {
        return (Vec::new(), 0);
    };
    // Without coordinated periodic checkpoints, or with a fault timeline
    // cut short (quiet windows unknown), nothing is judged.
    if !info.checkpoints || info.coordination.is_local() || run.fault_events_dropped > 0 {
        return (Vec::new(), 0);
    }
    let bound = s.limits.checkpoint_gap.0.max(interval.0.saturating_mul(2));
    let mut points: Vec<u64> = vec![s.checkpoint.first_delay.0];
    points.extend(
        run.checkpoint_stats
            .iter()
            .filter(|c| c.outcome == Outcome::Completed)
            .map(|c| c.end_ns),
    );
    points.sort_unstable();
    points.push(run.end_time.0.max(points[points.len() - 1]));
    let faults: Vec<u64> = run.fault_timeline.iter().map(|f| f.time_ns).collect();
    let mut found = Vec::new();
    let mut judged = 0;
    for w in points.windows(2) {
        let (from, to) = (w[0], w[1]);
        // From the last fault inside the window, if any.
        let start = faults
            .iter()
            .copied()
            .filter(|&f| f >= from && f <= to)
            .max()
            .unwrap_or(from);
        judged += 1;
        if to.saturating_sub(start) > bound {
            let cause = if start > from {
                format!("after a fault at {}", SimDuration(start))
            } else if from == s.checkpoint.first_delay.0 && found.is_empty() && judged == 1 {
                format!("from the first trigger at {}", SimDuration(from))
            } else {
                format!("after the checkpoint completed at {}", SimDuration(from))
            };
            found.push(Violation {
                check: CheckId::Progress,
                time_ns: start.saturating_add(bound),
                message: format!(
                    "no checkpoint completed for {} {cause}, until {} (checkpoint_gap {}), with no fault in between",
                    SimDuration(to - start),
                    SimDuration(to),
                    SimDuration(bound)
                ),
            });
        }
    }
    (first_of(found), judged)
}

/// Where a transaction lives, for messages.
fn sink_of(input: &Input, t: &TxnSpan) -> String {
    let op = input
        .scenario
        .operators
        .get(t.id.sink as usize)
        .map_or("?", |o| o.id.as_str());
    format!("{op}[{}]", t.id.subtask)
}

/// Transactions that stayed open or pre-committed too long, or were left
/// so at the end of a finished job: the violations, and how many
/// transactions were judged.
fn transactions(input: &Input) -> (Vec<Violation>, u64) {
    let run = input.run;
    // Without checkpoints nothing commits, by design (`none`).
    if !run.config.algorithm.info().checkpoints {
        return (Vec::new(), 0);
    }
    let bound = input.scenario.limits.transaction_open.0;
    let end = run.end_time.0;
    let mut found = Vec::new();
    let mut judged = 0;
    for t in run.store.spans() {
        judged += 1;
        let open = t.opened_at.0;
        let state = match t.state {
            TxnState::Open => "open",
            _ => "pre-committed",
        };
        let message = match t.resolved_at {
            Some(r) if r.0.saturating_sub(open) > bound => format!(
                "transaction {} of sink {} begun at {} was {} only at {}, {} later (transaction_open {})",
                t.id,
                sink_of(input, &t),
                SimDuration(open),
                if t.state == TxnState::Committed { "committed" } else { "aborted" },
                SimDuration(r.0),
                SimDuration(r.0 - open),
                SimDuration(bound)
            ),
            Some(_) => continue,
            None if input.finished => format!(
                "transaction {} of sink {} begun at {} was left {state} when the job finished at {}",
                t.id,
                sink_of(input, &t),
                SimDuration(open),
                SimDuration(end)
            ),
            None if end.saturating_sub(open) > bound => format!(
                "transaction {} of sink {} begun at {} was still {state} when the run ended at {}, {} later (transaction_open {})",
                t.id,
                sink_of(input, &t),
                SimDuration(open),
                SimDuration(end),
                SimDuration(end - open),
                SimDuration(bound)
            ),
            None => continue,
        };
        let time_ns = match t.resolved_at {
            Some(_) => open.saturating_add(bound),
            None if input.finished => end,
            None => open.saturating_add(bound),
        };
        found.push(Violation {
            check: CheckId::Progress,
            time_ns,
            message,
        });
    }
    found.sort_by_key(|v| v.time_ns);
    (first_of(found), judged)
}

/// A restart loop: the job did not end (finish, fail, stop) and its last
/// restarts, more than `restart_loop` of them, came with no checkpoint
/// completed between them: (restarts in the loop, first, last, the one
/// past the bound). A run of restarts the job got out of (a checkpoint
/// completed after it, or the job finished) is not a loop, however long:
/// injected faults may cause many.
pub fn restart_loop(run: &crate::runtime::RunOutput, bound: u32) -> Option<(usize, u64, u64, u64)> {
    use crate::runtime::RunOutcome;
    if !matches!(
        run.outcome,
        RunOutcome::TimeLimit | RunOutcome::EventLimit | RunOutcome::Stalled
    ) {
        return None;
    }
    let last_completion = run
        .checkpoint_stats
        .iter()
        .filter(|c| c.outcome == Outcome::Completed)
        .map(|c| c.end_ns)
        .max();
    // Restarts at the instant of a completion follow it.
    let tail: Vec<u64> = run
        .restarts
        .iter()
        .map(|r| r.time_ns)
        .filter(|&t| last_completion.is_none_or(|c| t >= c))
        .collect();
    (tail.len() > bound as usize).then(|| {
        (
            tail.len(),
            tail[0],
            tail[tail.len() - 1],
            tail[bound as usize],
        )
    })
}

/// A restart loop, as a violation; and how many restarts were judged.
fn restarts(input: &Input) -> (Vec<Violation>, u64) {
    let run = input.run;
    let bound = input.scenario.limits.restart_loop;
    let judged = run.restarts.len() as u64;
    let Some((n, first, last, past)) = restart_loop(run, bound) else {
        return (Vec::new(), judged);
    };
    let f = &input.scenario.faults;
    let message = format!(
        "restart loop: {n} restarts from {} to {} with no checkpoint completed between them (restart_loop {bound}; restart strategy {}, max_restarts {}), and the job was still restarting when the run ended at {}",
        SimDuration(first),
        SimDuration(last),
        f.restart.name(),
        f.max_restarts,
        SimDuration(run.end_time.0)
    );
    let v = Violation {
        check: CheckId::Progress,
        time_ns: past,
        message,
    };
    (vec![v], judged)
}

pub fn check(input: &Input) -> Finding {
    let (mut violations, windows) = checkpoint_gaps(input);
    let (loops, restarts_judged) = restarts(input);
    violations.extend(loops);
    let (txns, judged) = transactions(input);
    violations.extend(txns);
    violations.sort_by_key(|v| v.time_ns);
    Finding {
        violations,
        reach: vec![
            ("checkpoint windows judged", windows),
            ("transactions judged", judged),
            ("restarts judged", restarts_judged),
        ],
    }
}
