//! `sink-at-least-once`: batched writes without transactions
//! (`model::operator::DirectSink`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-at-least-once",
        description:
            "writes to the external store in batches of `batch` records, flushed when full, \
                      at every snapshot and at end of input",
        keyed: false,
        check: no_params,
    },
    role: Role::Sink(SinkRole::Direct),
    holds: false,
    state: |_| StateLayout::Stateless,
    create: |s| match *s.kind {
        OperatorKind::SinkAtLeastOnce { batch } => {
            Box::new(crate::model::operator::DirectSink::at_least_once(batch))
        }
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::SinkAtLeastOnce { batch } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "Sink V2 writer without committer, flushed per batch and at every checkpoint"
                .into(),
            java: Java::Sink {
                batch: batch.max(1),
                mode: ".atLeastOnce()",
                v2: false,
            },
        },
        ref k => not_mine(k),
    },
};
