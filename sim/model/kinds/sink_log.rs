//! `sink-log`: Flink's Kafka sink over a topic of the transactional log
//! (`model::txlog::sink::LogSink`).

use super::*;
use crate::model::txlog::broker::ProducerConfig;
use crate::model::txlog::sink::{LogSink, LogSinkSpec};

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-log",
        description: "Kafka sink into a topic of the transactional log: delivery exactly-once (a transaction \
         per checkpoint, committed on notify-complete, lingering ones aborted at restore), \
         at-least-once or none; transactional ids incrementing or pooling; the broker aborts \
         transactions older than transaction_timeout",
        keyed: false,
        check: no_params,
    },
    role: Role::Sink(SinkRole::Log),
    holds: false,
    state: |_| StateLayout::LogSink,
    create: |s| match *s.kind {
        OperatorKind::SinkLog {
            delivery,
            transaction_naming,
            topic_partitions,
            producer_batch,
            transaction_timeout,
            delivery_timeout,
            request_timeout,
            retry_backoff,
            max_block,
            commit_retries,
        } => Box::new(LogSink::new(LogSinkSpec {
            prefix: s.scenario.operators[s.operator as usize].id.clone(),
            delivery,
            naming: transaction_naming,
            partitions: topic_partitions,
            timeout: transaction_timeout,
            batch: producer_batch,
            producer: ProducerConfig {
                delivery_timeout,
                request_timeout,
                retry_backoff,
            },
            max_block,
            commit_retries,
        })),
        ref k => not_mine(k),
    },
    flink: |_| {
        Flink::Refused(
            "a sink-log writes to ckptsim's transactional log; the exported job has no broker \
             to write to (docs/flink.md maps it to Flink's KafkaSink for a cluster with one)",
        )
    },
};
