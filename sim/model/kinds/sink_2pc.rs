//! `sink-2pc`: the two-phase-commit sink
//! (`model::operator::TwoPhaseCommitSink`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-2pc",
        description: "two-phase-commit sink: pre-commit at the barrier, commit on notify-complete",
        keyed: false,
        check: no_params,
    },
    role: Role::Sink(SinkRole::Transactional),
    holds: false,
    state: |_| StateLayout::Sink2pc,
    create: |_| Box::<crate::model::operator::TwoPhaseCommitSink>::default(),
    flink: |_| Flink::Maps {
        fidelity: Fidelity::Approximate,
        how: "Sink V2 writer + committer (commit in the committer operator, not in the sink)"
            .into(),
        java: Java::Sink {
            batch: 0,
            mode: "",
            v2: false,
        },
    },
};
