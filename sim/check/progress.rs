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

/// Inputs held on purpose (an aligned barrier blocking a channel, a paused
/// source) longer than the bound with no fault in the hold, or still held
/// when a run that did not end stopped: the violations, and how many holds
/// were judged.
fn holds(input: &Input) -> (Vec<Violation>, u64) {
    let run = input.run;
    if run.fault_events_dropped > 0 {
        return (Vec::new(), 0);
    }
    use crate::runtime::output::Holds;
    let blocked = Holds::blocked_bound(input.scenario);
    let paused = Holds::pause_bound(input.scenario);
    let end = run.end_time.0;
    let cut_short = matches!(
        run.outcome,
        crate::runtime::RunOutcome::TimeLimit
            | crate::runtime::RunOutcome::EventLimit
            | crate::runtime::RunOutcome::Stalled
    );
    let faults: Vec<u64> = run.fault_timeline.iter().map(|f| f.time_ns).collect();
    let mut found = Vec::new();
    for h in &run.holds.long {
        // A hold still open when a job ended (finished, failed, stopped)
        // ended with it.
        if h.until_ns.is_none() && !cut_short {
            continue;
        }
        let bound = if h.paused { paused } else { blocked };
        let to = h.until_ns.unwrap_or(end);
        let start = faults
            .iter()
            .copied()
            .filter(|&f| f >= h.since_ns && f <= to)
            .max()
            .unwrap_or(h.since_ns);
        if to.saturating_sub(start) <= bound {
            continue;
        }
        let since = if start > h.since_ns {
            format!(
                "since {} (after a fault at {})",
                SimDuration(h.since_ns),
                SimDuration(start)
            )
        } else {
            format!("since {}", SimDuration(h.since_ns))
        };
        let until = match h.until_ns {
            Some(u) => format!("until {}", SimDuration(u)),
            None => format!("and still when the run ended at {}", SimDuration(end)),
        };
        found.push(Violation {
            check: CheckId::Progress,
            time_ns: start.saturating_add(bound),
            message: format!(
                "{} {since} {until}: {} with no fault, longer than {}",
                h.what,
                SimDuration(to - start),
                if h.paused {
                    format!(
                        "a pause may last (the checkpoint timeout plus the slowest RPC: {})",
                        SimDuration(bound)
                    )
                } else {
                    format!(
                        "an alignment may block a channel (blocked_input {})",
                        SimDuration(bound)
                    )
                }
            ),
        });
    }
    found.sort_by_key(|v| v.time_ns);
    (first_of(found), run.holds.judged)
}

/// Sinks whose records pass only through operators that emit as they read
/// (no window, buffer or loop upstream): by operator index.
fn prompt_sinks(input: &Input) -> Vec<bool> {
    let ops = &input.scenario.operators;
    // Fixpoint: an operator holds, or is fed by one that holds.
    let mut late: Vec<bool> = ops.iter().map(|o| o.kind.info().holds).collect();
    loop {
        let mut changed = false;
        for e in &input.scenario.edges {
            let (f, t) = (e.from.0 as usize, e.to.0 as usize);
            if f < late.len() && t < late.len() && late[f] && !late[t] {
                late[t] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    late.iter().map(|l| !l).collect()
}

/// Committed records of sinks fed only by operators that emit as they read,
/// committed later than `output_latency` after the completion of the first
/// checkpoint triggered after their source emitted them (that checkpoint
/// covers them: its barrier left the source behind them), with no fault in
/// between (after a fault: the first checkpoint triggered after it). The
/// violations, and how many records were judged.
fn output_latency(input: &Input) -> (Vec<Violation>, u64) {
    let run = input.run;
    let info = run.config.algorithm.info();
    // Without coordinated checkpoints, with a fault timeline cut short, in
    // a run restored from another's snapshot (its records' times are the
    // other run's), or when checkpoints captured in-flight records (a record
    // may then be overtaken by any number of barriers: only its way through
    // the channels bounds its commit), nothing is judged.
    if !info.checkpoints
        || info.coordination.is_local()
        || run.fault_events_dropped > 0
        || run.schedule.is_none()
        || run.counters.in_flight_records_persisted > 0
    {
        return (Vec::new(), 0);
    }
    // The notification's way to the sink is part of it.
    let cp = &input.scenario.checkpoint;
    let rpc = cp.rpc_latency_max.0.max(cp.rpc_latency.0);
    let slack = input.scenario.limits.output_latency.0;
    let prompt = prompt_sinks(input);
    // A plain savepoint notifies nobody: it commits nothing.
    let plain_savepoints: Vec<u64> = run
        .savepoints
        .iter()
        .filter(|sp| !sp.stop)
        .flat_map(|sp| sp.attempts.iter().map(|a| a.0))
        .collect();
    // (trigger, completion) of every completed checkpoint, by trigger.
    let mut done: Vec<(u64, u64)> = run
        .checkpoint_stats
        .iter()
        .filter(|c| c.outcome == Outcome::Completed && !plain_savepoints.contains(&c.id))
        .map(|c| (c.trigger_ns, c.end_ns))
        .collect();
    done.sort_unstable();
    // The earliest completion among checkpoints triggered at or after `t`.
    let mut earliest = vec![u64::MAX; done.len() + 1];
    for i in (0..done.len()).rev() {
        earliest[i] = earliest[i + 1].min(done[i].1);
    }
    let covered_by = |t: u64| {
        let i = done.partition_point(|&(trigger, _)| trigger < t);
        earliest[i]
    };
    let mut faults: Vec<u64> = run.fault_timeline.iter().map(|f| f.time_ns).collect();
    faults.sort_unstable();
    let mut found = Vec::new();
    let mut judged = 0;
    for r in run.store.committed().iter() {
        if !prompt.get(r.sink as usize).copied().unwrap_or(false) {
            continue;
        }
        let (emitted, committed) = (r.emitted_at.0, r.committed_at.0);
        // From the last fault before the commit, if one came after the
        // record was emitted.
        let last_fault = faults[..faults.partition_point(|&f| f <= committed)]
            .last()
            .copied()
            .filter(|&f| f >= emitted);
        let from = last_fault.unwrap_or(emitted);
        let cover = covered_by(from);
        if cover == u64::MAX {
            continue; // committed by the end of the job, or never covered
        }
        judged += 1;
        let due = cover.saturating_add(rpc).saturating_add(slack);
        if committed <= due {
            continue;
        }
        let since = match last_fault {
            Some(f) => format!("after a fault at {}", SimDuration(f)),
            None => format!("emitted at {}", SimDuration(emitted)),
        };
        found.push(Violation {
            check: CheckId::Progress,
            time_ns: due,
            message: format!(
                "committed output lagged: the record {}:{} of sink {} ({since}) was committed only at {}, {} after the checkpoint that covered it completed at {} (output_latency {} after the slowest RPC, {})",
                r.lineage.partition,
                r.lineage.offset,
                input
                    .scenario
                    .operators
                    .get(r.sink as usize)
                    .map_or("?", |o| o.id.as_str()),
                SimDuration(committed),
                SimDuration(committed - cover),
                SimDuration(cover),
                SimDuration(slack),
                SimDuration(rpc)
            ),
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
    let (held, holds_judged) = holds(input);
    violations.extend(held);
    let (lagged, records_judged) = output_latency(input);
    violations.extend(lagged);
    violations.sort_by_key(|v| v.time_ns);
    Finding {
        violations,
        reach: vec![
            ("checkpoint windows judged", windows),
            ("transactions judged", judged),
            ("restarts judged", restarts_judged),
            ("holds judged", holds_judged),
            ("committed records judged", records_judged),
        ],
    }
}
