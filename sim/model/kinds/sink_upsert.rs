//! `sink-upsert`: overwrites each key's row, buffered
//! (`model::operator::DirectSink`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-upsert",
        description: "upsert sink: overwrites the key's row with the value, buffering `buffer_rows` \
                      records, flushed when full, at every snapshot and at end of input; effectively-once",
        keyed: false,
        check: no_params,
    },
    role: Role::Sink(SinkRole::Upsert),
    holds: false,
    state: |_| StateLayout::Stateless,
    create: |s| match *s.kind {
        OperatorKind::SinkUpsert { buffer_rows } => {
            Box::new(crate::model::operator::DirectSink::upsert(buffer_rows))
        }
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::SinkUpsert { buffer_rows } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "Sink V2 writer without committer writing upserts (store/upsert/), flushed every buffer_rows and at every checkpoint; judged by the table it leaves".into(),
            java: Java::Sink {
                batch: buffer_rows.max(1),
                mode: ".upsert()",
                v2: false,
            },
        },
        ref k => not_mine(k),
    },
};
