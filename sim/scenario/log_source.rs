//! The `source-log` kind's settings as the scenario knows them (its
//! isolation level and starting offsets), and the rules that tie it to the
//! `sink-log` whose topic it reads.

use super::validate::{help, Validator};
use super::{OperatorKind, ScenarioData};
use crate::protocol::Guarantee;
use serde::{Deserialize, Serialize};

/// What a `source-log` reads (Kafka's `isolation.level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogIsolation {
    /// Below the last stable offset, aborted data skipped.
    ReadCommitted,
    /// To the log's end, data of open and aborted transactions included.
    ReadUncommitted,
}

impl LogIsolation {
    /// What the job's output may promise when its source reads this way:
    /// a `read_uncommitted` reader sees the records of transactions that
    /// are aborted and written again after a failure (duplicates).
    pub fn guarantee(self) -> Guarantee {
        match self {
            LogIsolation::ReadCommitted => Guarantee::ExactlyOnce,
            LogIsolation::ReadUncommitted => Guarantee::AtLeastOnce,
        }
    }
}

/// Where a `source-log` starts without a checkpoint (Flink's
/// `OffsetsInitializer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartingOffsets {
    /// Every partition from its first offset (`earliest()`).
    Earliest,
    /// From the offsets its consumer group committed, the first offset
    /// where it committed none (`committedOffsets(EARLIEST)`).
    Committed,
}

impl ScenarioData {
    /// The operator index of the `sink-log` whose topic `source-log` `op`
    /// reads, and its topic's partitions.
    pub fn log_topic_of(&self, op: usize) -> Option<(u32, u32)> {
        let OperatorKind::SourceLog { topic, .. } = &self.operators.get(op)?.kind else {
            return None;
        };
        let (i, writer) = (self.operators.iter().enumerate()).find(|(_, o)| o.id == *topic)?;
        match writer.kind {
            OperatorKind::SinkLog {
                topic_partitions, ..
            } => Some((i as u32, topic_partitions)),
            _ => None,
        }
    }

    /// Whether some operator reads a topic of the log.
    pub fn has_log_source(&self) -> bool {
        (self.operators.iter()).any(|o| matches!(o.kind, OperatorKind::SourceLog { .. }))
    }
}

impl Validator<'_, '_> {
    /// Each `source-log` names a `sink-log` of the job as its topic, and
    /// no event-time operator reads from it (it emits no watermarks).
    pub(super) fn log_sources(&mut self, successors: &[Vec<usize>]) {
        for i in 0..self.ops.len() {
            self.no_event_time_below(i, successors);
            let Some(OperatorKind::SourceLog { topic, .. }) = &self.ops[i].kind else {
                continue;
            };
            let topic = topic.clone();
            let at = format!("operators[{i}].topic");
            let writer = self.by_id.get(topic.as_str()).map(|&w| &self.ops[w].kind);
            let message = match writer {
                Some(Some(OperatorKind::SinkLog { .. })) => continue,
                _ if topic.is_empty() => "a source-log needs the topic it reads".to_string(),
                Some(Some(_)) => format!("`{topic}` is not a sink-log: it has no topic"),
                Some(None) => continue, // its kind was reported already
                None => format!("no operator `{topic}`"),
            };
            let help = help("set topic to the id of a sink-log of this job");
            self.report(&at, message, help);
        }
    }

    /// An event-time operator below `source-log` `i` would wait for
    /// watermarks that never come.
    fn no_event_time_below(&mut self, i: usize, successors: &[Vec<usize>]) {
        if !matches!(self.ops[i].kind, Some(OperatorKind::SourceLog { .. })) {
            return;
        }
        let mut seen = vec![false; self.ops.len()];
        let mut stack = vec![i];
        while let Some(op) = stack.pop() {
            for &to in &successors[op] {
                if std::mem::replace(&mut seen[to], true) {
                    continue;
                }
                stack.push(to);
                let event_time = matches!(
                    self.ops[to].kind,
                    Some(OperatorKind::EventTimeWindow { .. } | OperatorKind::KeyedProcess { .. })
                );
                if event_time {
                    let message = format!(
                        "`{}` reads event time below source-log `{}`, which emits no watermarks",
                        self.ops[to].id, self.ops[i].id
                    );
                    let help = help("read the log into operators that do not wait for watermarks");
                    self.report(&format!("operators[{to}].kind"), message, help);
                }
            }
        }
    }
}
