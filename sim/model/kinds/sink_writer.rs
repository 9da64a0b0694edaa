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
    create: |s| {
        // Its committer (validation gives it one) may feed a global one.
        let committer = s.scenario.edges.iter().find(|e| e.from.0 == s.operator);
        let summaries = committer.is_some_and(|e| forwards_commits(s.scenario, e.to.0));
        Box::new(crate::model::sinkv2::SinkWriter::new(summaries))
    },
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
