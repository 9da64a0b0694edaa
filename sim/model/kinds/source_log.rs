//! `source-log`: Flink's Kafka source over the topic a `sink-log` of the
//! job writes (`model::txlog::source::LogSource`).

use super::*;
use crate::model::txlog::source::{LogSource, LogSourceSpec};
use crate::model::txlog::Isolation;
use crate::scenario::LogIsolation;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "source-log",
        description: "Kafka source over the topic a sink-log of the job writes: read_committed \
         (default) or read_uncommitted, offsets in checkpoints and committed to the consumer \
         group on notify-complete, a fresh start from the earliest or the committed offsets",
        keyed: false,
        check: no_params,
    },
    role: Role::Source,
    holds: false,
    state: |_| StateLayout::LogSource,
    create: |s| match *s.kind {
        OperatorKind::SourceLog {
            isolation,
            starting_offsets,
            fetch_interval,
            ..
        } => {
            let (topic, partitions) = (s.scenario)
                .log_topic_of(s.operator as usize)
                .expect("validation: a source-log reads a sink-log's topic");
            Box::new(LogSource::new(LogSourceSpec {
                topic,
                partitions,
                group: s.scenario.operators[s.operator as usize].id.clone(),
                isolation: match isolation {
                    LogIsolation::ReadCommitted => Isolation::ReadCommitted,
                    LogIsolation::ReadUncommitted => Isolation::ReadUncommitted,
                },
                starting: starting_offsets,
                fetch_interval,
            }))
        }
        ref k => not_mine(k),
    },
    flink: |_| {
        Flink::Refused(
            "a source-log reads ckptsim's transactional log; the exported job has no broker \
             to read from (docs/flink.md maps it to Flink's KafkaSource for a cluster with one)",
        )
    },
};
