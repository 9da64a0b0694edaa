//! `sink-writer`: a Sink V2 writer (`model::sinkv2::SinkWriter`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-writer",
        description: "Sink V2 writer: one transaction per checkpoint, handed to the committer as a committable \
                      tagged with the checkpoint id before the barrier and at end of input",
        keyed: false,
        check: no_params,
    },
    role: Role::Sink(SinkRole::Writer),
    holds: false,
    state: |_| StateLayout::SinkWriter,
    create: |_| Box::<crate::model::sinkv2::SinkWriter>::default(),
    flink: |_| Flink::Maps {
        fidelity: Fidelity::Exact,
        how: "Sink V2 writer".into(),
        java: Java::Sink {
            batch: 0,
            mode: "",
            v2: true,
        },
    },
};
