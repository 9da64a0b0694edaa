//! Event time in an exported job: how a real run's output below an
//! event-time operator is judged, and the mapping rows of the event-time
//! keys.
//!
//! A window fires when the watermark passes its end. When no record can
//! arrive behind the watermark (below, [`late_records`] says when that
//! holds), every window holds all its records when it fires, whatever the
//! timing: its result is the failure-free run's, and the real run's window
//! results are compared with the oracle's value by value. When records can
//! be late, which ones are depends on the real run's timing (when each
//! watermark was emitted, how far data in flight lagged behind): a late
//! record fires its window again or goes to the side output, so neither the
//! values nor the number of results can be predicted, and such a sink is
//! not judged (the check says why). A keyed process function's timer emits
//! its key's sum when it fires, which depends on what arrived before it:
//! its results are judged by key and count, unless processing-time timers
//! (wall time) or late records (a timer registered again after it fired)
//! make the count a matter of timing too.

use super::{Fidelity, Mapping};
use crate::engine::SimDuration;
use crate::model::operator::OperatorFactory;
use crate::scenario::{OperatorKind, Scenario, SplitAssignment};
use std::collections::BTreeSet;

/// Why a record can be behind the watermark at an event-time operator on
/// real Flink (`None`: it never is).
pub fn late_records(scenario: &Scenario) -> Option<String> {
    for op in &scenario.operators {
        let Some(s) = op.kind.source_spec() else {
            continue;
        };
        if s.watermark_interval == SimDuration::ZERO {
            continue;
        }
        let id = &op.id;
        if s.watermark_bound < s.out_of_orderness {
            return Some(format!(
                "operators.{id}.watermark_bound is below its out_of_orderness"
            ));
        }
        if s.idle_timeout > SimDuration::ZERO {
            return Some(format!(
                "operators.{id}.idle_timeout: a split idle and then active again can be behind the watermark"
            ));
        }
        if s.split_assignment == SplitAssignment::Enumerator
            && (!s.push_splits || s.initial_splits < s.partitions)
        {
            return Some(format!(
                "operators.{id}: a split assigned after its reader's watermark advanced can be behind it"
            ));
        }
    }
    None
}

/// Every operator `op` reads from, directly or not.
fn upstream(scenario: &Scenario, op: usize) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![op];
    while let Some(o) = todo.pop() {
        for e in scenario.edges.iter().filter(|e| e.to.0 as usize == o) {
            if seen.insert(e.from.0 as usize) {
                todo.push(e.from.0 as usize);
            }
        }
    }
    seen
}

/// How sink `sink`'s output is judged when an event-time operator is
/// upstream of it: `(values exact, why it is not judged)`, or `None` when
/// none is (the oracle's marks decide).
pub fn sink_judgement(
    scenario: &Scenario,
    sink: usize,
    factory: &dyn OperatorFactory,
) -> Option<(bool, Option<String>)> {
    let above = upstream(scenario, sink);
    let mut event_time_op = false;
    let mut values_exact = true;
    let mut timing = None;
    let late = late_records(scenario);
    for &o in &above {
        match scenario.operators[o].kind {
            OperatorKind::EventTimeWindow { .. } => {
                event_time_op = true;
                if let Some(why) = &late {
                    timing = Some(format!("records can be late ({why})"));
                }
            }
            OperatorKind::KeyedProcess {
                processing_delay, ..
            } => {
                event_time_op = true;
                values_exact = false;
                if processing_delay > SimDuration::ZERO {
                    timing = Some(format!(
                        "operators.{}: processing-time timers fire by the real run's wall clock",
                        scenario.operators[o].id
                    ));
                } else if let Some(why) = &late {
                    timing = Some(format!("records can be late ({why})"));
                }
            }
            _ => {
                let op = factory.create(o as u32, 0);
                values_exact &= op.order_insensitive_output()
                    && !scenario.operators[o].kind.state_layout().is_union();
            }
        }
    }
    let late_output = scenario.edges.iter().any(|e| {
        e.side_output_late && (e.to.0 as usize == sink || above.contains(&(e.to.0 as usize)))
    });
    if late_output {
        if let Some(why) = &late {
            timing = Some(format!("it takes late records, and {why}"));
        }
    }
    event_time_op.then_some((values_exact, timing))
}

/// The rows of the event-time keys a scenario uses.
pub fn mapping_rows(scenario: &Scenario, rows: &mut Vec<Mapping>) {
    use Fidelity::*;
    let mut row = |key: &str, fidelity: Fidelity, flink: String| {
        rows.push(Mapping {
            key: key.to_string(),
            fidelity,
            flink,
        })
    };
    let sources: Vec<_> = scenario
        .operators
        .iter()
        .filter_map(|o| o.kind.source_spec().map(|s| (o, s)))
        .filter(|(_, s)| s.watermark_interval > SimDuration::ZERO)
        .collect();
    if sources.is_empty() {
        return;
    }
    row(
        "operators.event_time_step, out_of_orderness, partition_skew",
        Exact,
        "each record's simulated timestamp is in data/<source>.txt and collected with it (SourceOutput.collect(record, timestamp)) on its split's own output".into(),
    );
    let intervals: BTreeSet<u64> = sources
        .iter()
        .map(|(_, s)| s.watermark_interval.nanos() / 1_000_000)
        .collect();
    row(
        "operators.watermark_interval",
        if intervals.len() == 1 { Exact } else { Approximate },
        format!(
            "pipeline.auto-watermark-interval = {} ms (one interval for the job: the shortest source's)",
            intervals.first().copied().unwrap_or(0)
        ),
    );
    row(
        "operators.watermark_bound",
        Exact,
        "WatermarkStrategy.forBoundedOutOfOrderness, per split (SourceOperator's split outputs), combined by Flink".into(),
    );
    if sources
        .iter()
        .any(|(_, s)| s.idle_timeout > SimDuration::ZERO)
    {
        row(
            "operators.idle_timeout",
            Exact,
            "WatermarkStrategy.withIdleness".into(),
        );
    }
    if sources.iter().any(|(_, s)| !s.alignment_group.is_empty()) {
        row(
            "operators.alignment_group, alignment_max_drift, alignment_update_interval",
            Exact,
            "WatermarkStrategy.withWatermarkAlignment; the reader pauses and resumes its splits (pauseOrResumeSplits)".into(),
        );
    }
    if scenario.edges.iter().any(|e| e.side_output_late) {
        row(
            "edges.side_output",
            Exact,
            "WindowedStream.sideOutputLateData, read with getSideOutput".into(),
        );
    }
    let how = match late_records(scenario) {
        None => "no record can be behind the watermark: window results are compared value by value".to_string(),
        Some(why) => format!("records can be late ({why}): which ones depends on the real run's timing, so sinks below the windows are not judged"),
    };
    row("event time (judging)", Approximate, how);
    row(
        "watermark lag",
        Approximate,
        "an operator chained to each source notes when it emits each watermark; the sink writers' writeWatermark measure the lag".into(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(source_keys: &str) -> Scenario {
        let text = format!(
            "version = 1\nname = \"t\"\n\
             [[operators]]\nid = \"source\"\nkind = \"source\"\nparallelism = 2\npartitions = 4\n\
             watermark_interval = \"20ms\"\nout_of_orderness = \"10ms\"\n{source_keys}\n\
             [[operators]]\nid = \"window\"\nkind = \"event-time-window\"\nparallelism = 2\n\
             window_size = \"50ms\"\n\
             [[operators]]\nid = \"sink\"\nkind = \"sink-2pc\"\nparallelism = 2\n\
             [[edges]]\nfrom = \"source\"\nto = \"window\"\npartitioning = \"hash\"\n\
             [[edges]]\nfrom = \"window\"\nto = \"sink\"\npartitioning = \"forward\"\n"
        );
        crate::scenario::parse_str(&text, "t").unwrap()
    }

    #[test]
    fn records_are_late_only_where_a_split_can_start_behind_the_watermark() {
        let late = |keys: &str| late_records(&scenario(keys));
        assert_eq!(late(""), None, "static: every split at once");
        let pushed = "split_assignment = \"enumerator\"\npush_splits = true";
        assert_eq!(late(pushed), None, "pushed, all known at the start");
        let found_later = format!("{pushed}\ninitial_splits = 2");
        assert!(late(&found_later)
            .unwrap()
            .contains("a split assigned after"));
        let requested = "split_assignment = \"enumerator\"";
        assert!(late(requested).unwrap().contains("a split assigned after"));
        let below = "watermark_bound = \"5ms\"";
        assert!(late(below).unwrap().contains("watermark_bound is below"));
        let idle = "idle_timeout = \"100ms\"";
        assert!(late(idle).unwrap().contains("idle_timeout"));
    }

    #[test]
    fn a_window_sink_is_judged_by_value_only_where_nothing_is_late() {
        let judge = |keys: &str| {
            let s = std::sync::Arc::new(scenario(keys));
            let workload = std::sync::Arc::new(crate::model::Workload::generate(&s, 1));
            let factory = crate::model::operator::BuiltinFactory::new(s.clone(), workload);
            sink_judgement(&s, 2, &factory)
        };
        assert_eq!(judge(""), Some((true, None)));
        let (exact, why) = judge("watermark_bound = \"5ms\"").unwrap();
        assert!(exact && why.unwrap().starts_with("records can be late"));
    }
}
