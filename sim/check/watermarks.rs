//! Watermarks: event time never goes back, and it reaches its end.
//!
//! The runtime compares every watermark an operator emits with the one
//! before it in the same deployment (`runtime::watermarks`): a watermark
//! that goes back lets a window fire on data it already judged complete.
//! When the job finished, every task's input watermark must have reached
//! `MAX_WATERMARK`: every source ended, so every channel carried its end
//! of event time; a task short of it lost a watermark, and the channel
//! holding it back is named. A split a source marks idle must have had
//! no record there to read for the idle timeout (`withIdleness` marks a
//! split idle when no record *came* for that long): one whose next record
//! was waiting was not idle, and the watermark runs ahead of the records
//! the source holds (FLINK-35886). Without event time in the job there is
//! nothing to judge (the counters stay 0).

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::model::event_time::{MAX_WATERMARK, MIN_WATERMARK};
use crate::runtime::watermarks::WatermarkEvidence;
use crate::verdict::{CheckId, Violation};

/// A watermark for a message.
fn text(w: i64) -> String {
    match w {
        MIN_WATERMARK => "Long.MIN_VALUE".to_string(),
        MAX_WATERMARK => "MAX_WATERMARK".to_string(),
        w => format!("{w}"),
    }
}

/// ", held back by <channel> at <watermark>", or nothing.
fn held_back(input: &Input, holding_back: Option<(u32, i64)>) -> String {
    holding_back.map_or(String::new(), |(ch, w)| {
        let name = &input.run.evidence.channel_names[ch as usize];
        format!(", held back by {name} at {}", text(w))
    })
}

pub fn check(input: &Input) -> Finding {
    let ev = &input.run.evidence.watermarks;
    let mut violations = Vec::new();
    backwards(ev, &mut violations);
    if input.finished && ev.on {
        short_of_the_end(input, &mut violations);
    }
    stalls(input, &mut violations);
    idle_while_ready(ev, &mut violations);
    ignored(input, &mut violations);
    stuck_pauses(ev, input.end_ns(), &mut violations);
    Finding {
        violations,
        reach: vec![
            ("watermarks emitted", ev.emitted),
            ("operators that reached MAX_WATERMARK", ev.reached_max),
            ("reads judged for a stall", ev.stall_checks),
            ("splits marked idle (judged)", ev.splits_idled),
            ("watermark statuses sent", ev.statuses),
            ("valve minima over no aligned channel", ev.none_aligned),
            ("splits paused for alignment (judged)", ev.splits_paused),
        ],
    }
}

fn violation(time_ns: u64, message: String) -> Violation {
    Violation {
        check: CheckId::Watermarks,
        time_ns,
        message,
    }
}

/// The examples kept (`kept` of `all`) are in `violations`: the last one
/// says how many more there were.
fn and_more(violations: &mut [Violation], all: u64, kept: usize, what: &str) {
    let more = all.saturating_sub(kept as u64);
    if let Some(last) = violations.last_mut().filter(|_| more > 0) {
        last.message.push_str(&format!(" ({more} more {what})"));
    }
}

/// Watermarks that went back within a deployment.
fn backwards(ev: &WatermarkEvidence, violations: &mut Vec<Violation>) {
    for b in &ev.first_backwards {
        let message = format!(
            "operator {} emitted watermark {} at {} after {}: its watermark went back",
            b.operator,
            text(b.watermark),
            SimDuration(b.time_ns),
            text(b.before)
        );
        violations.push(violation(b.time_ns, message));
    }
    and_more(
        violations,
        ev.backwards,
        ev.first_backwards.len(),
        "went back",
    );
}

/// A finished job's tasks short of `MAX_WATERMARK`.
fn short_of_the_end(input: &Input, violations: &mut Vec<Violation>) {
    let ev = &input.run.evidence.watermarks;
    let short = ev.at_end.iter().filter(|t| t.watermark < MAX_WATERMARK);
    for t in short.take(5) {
        let held = held_back(input, t.holding_back);
        let message = format!(
            "the job finished with task {} at watermark {}{held}: its event time never reached its end (MAX_WATERMARK)",
            t.task,
            text(t.watermark)
        );
        violations.push(violation(input.end_ns(), message));
    }
}

/// Tasks that read records with their watermark standing still.
fn stalls(input: &Input, violations: &mut Vec<Violation>) {
    for s in &input.run.evidence.watermarks.first_stalls {
        let held = held_back(input, s.holding_back);
        let message = format!(
            "task {} read records from {} to {} with its watermark at {}{held}, no fault in between: event time stood still longer than [limits] watermark_stall ({})",
            s.task,
            SimDuration(s.since_ns),
            SimDuration(s.time_ns),
            text(s.watermark),
            input.scenario.limits.watermark_stall
        );
        violations.push(violation(s.time_ns, message));
    }
}

/// Splits marked idle while a record of theirs waited.
fn idle_while_ready(ev: &WatermarkEvidence, violations: &mut Vec<Violation>) {
    for i in &ev.first_idle_while_ready {
        let message = format!(
            "source {} marked split {} idle at {} although its record at offset {} had been there to read since {}, longer than its idle_timeout ({}): a split with a record waiting is not idle, and the watermark runs ahead of it",
            i.source,
            i.split,
            SimDuration(i.time_ns),
            i.offset,
            SimDuration(i.ready_ns),
            SimDuration(i.timeout_ns)
        );
        violations.push(violation(i.time_ns, message));
    }
    let kept = ev.first_idle_while_ready.len();
    and_more(violations, ev.idle_while_ready, kept, "such splits");
}

/// Splits left paused for alignment although their group allowed them.
fn stuck_pauses(ev: &WatermarkEvidence, end_ns: u64, violations: &mut Vec<Violation>) {
    for s in &ev.first_stuck_pauses {
        let what = match s.split {
            Some(split) => format!("held split {split} paused"),
            None => "waited as a whole".to_string(),
        };
        let message = format!(
            "reader {} still {what} for watermark alignment when the run ended at {}, at watermark {}: its coordinator had allowed up to {} since {}, but the reader last heard {}, so no alignment event resumed it and its event time stood still",
            s.source,
            SimDuration(end_ns),
            text(s.watermark),
            text(s.allowed),
            SimDuration(s.since_ns),
            text(s.max_desired),
        );
        violations.push(violation(end_ns, message));
    }
    let kept = ev.first_stuck_pauses.len();
    and_more(violations, ev.stuck_pauses, kept, "such splits");
}

/// Watermarks read on a channel held idle.
fn ignored(input: &Input, violations: &mut Vec<Violation>) {
    let ev = &input.run.evidence.watermarks;
    for i in &ev.first_ignored {
        let name = &input.run.evidence.channel_names[i.channel as usize];
        let message = format!(
            "task {} read watermark {} at {} on {name}, which it held idle: a sender sends no watermark while idle, so the status it holds is stale (a status lost, or one restored from in-flight data that the redeployed sender never took back), and the channel's event time is ignored",
            i.task,
            text(i.watermark),
            SimDuration(i.time_ns),
        );
        violations.push(violation(i.time_ns, message));
    }
    and_more(violations, ev.ignored, ev.first_ignored.len(), "ignored");
}
