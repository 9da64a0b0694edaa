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
    let mut violations: Vec<Violation> = ev
        .first_backwards
        .iter()
        .map(|b| Violation {
            check: CheckId::Watermarks,
            time_ns: b.time_ns,
            message: format!(
                "operator {} emitted watermark {} at {} after {}: its watermark went back",
                b.operator,
                text(b.watermark),
                SimDuration(b.time_ns),
                text(b.before)
            ),
        })
        .collect();
    if ev.backwards > ev.first_backwards.len() as u64 {
        if let Some(last) = violations.last_mut() {
            let more = ev.backwards - ev.first_backwards.len() as u64;
            last.message.push_str(&format!(" ({more} more went back)"));
        }
    }
    if input.finished && ev.on {
        let short = ev.at_end.iter().filter(|t| t.watermark < MAX_WATERMARK);
        for t in short.take(5) {
            let held = held_back(input, t.holding_back);
            violations.push(Violation {
                check: CheckId::Watermarks,
                time_ns: input.end_ns(),
                message: format!(
                    "the job finished with task {} at watermark {}{held}: its event time never reached its end (MAX_WATERMARK)",
                    t.task,
                    text(t.watermark)
                ),
            });
        }
    }
    for s in &ev.first_stalls {
        let held = held_back(input, s.holding_back);
        violations.push(Violation {
            check: CheckId::Watermarks,
            time_ns: s.time_ns,
            message: format!(
                "task {} read records from {} to {} with its watermark at {}{held}, no fault in between: event time stood still longer than [limits] watermark_stall ({})",
                s.task,
                SimDuration(s.since_ns),
                SimDuration(s.time_ns),
                text(s.watermark),
                input.scenario.limits.watermark_stall
            ),
        });
    }
    for i in &ev.first_idle_while_ready {
        violations.push(Violation {
            check: CheckId::Watermarks,
            time_ns: i.time_ns,
            message: format!(
                "source {} marked split {} idle at {} although its record at offset {} had been there to read since {}, longer than its idle_timeout ({}): a split with a record waiting is not idle, and the watermark runs ahead of it",
                i.source,
                i.split,
                SimDuration(i.time_ns),
                i.offset,
                SimDuration(i.ready_ns),
                SimDuration(i.timeout_ns)
            ),
        });
    }
    if ev.idle_while_ready > ev.first_idle_while_ready.len() as u64 {
        if let Some(last) = violations.last_mut() {
            let more = ev.idle_while_ready - ev.first_idle_while_ready.len() as u64;
            last.message
                .push_str(&format!(" ({more} more such splits)"));
        }
    }
    for i in &ev.first_ignored {
        let name = &input.run.evidence.channel_names[i.channel as usize];
        violations.push(Violation {
            check: CheckId::Watermarks,
            time_ns: i.time_ns,
            message: format!(
                "task {} read watermark {} at {} on {name}, which it held idle: a sender sends no watermark while idle, so the status it holds is stale (a status lost, or one restored from in-flight data that the redeployed sender never took back), and the channel's event time is ignored",
                i.task,
                text(i.watermark),
                SimDuration(i.time_ns),
            ),
        });
    }
    if ev.ignored > ev.first_ignored.len() as u64 {
        if let Some(last) = violations.last_mut() {
            let more = ev.ignored - ev.first_ignored.len() as u64;
            last.message.push_str(&format!(" ({more} more ignored)"));
        }
    }
    Finding {
        violations,
        reach: vec![
            ("watermarks emitted", ev.emitted),
            ("operators that reached MAX_WATERMARK", ev.reached_max),
            ("reads judged for a stall", ev.stall_checks),
            ("splits marked idle (judged)", ev.splits_idled),
            ("watermark statuses sent", ev.statuses),
        ],
    }
}
