//! `sink-committer`: a Sink V2 committer (`model::sinkv2::SinkCommitter`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-committer",
        description: "Sink V2 committer: keeps committables per checkpoint id, commits those of completed \
                      checkpoints on notify-complete and recovered ones at restore; idempotent commits",
        keyed: false,
        check: no_params,
    },
    role: Role::Committer,
    holds: false,
    state: |_| StateLayout::SinkCommitter,
    create: |s| {
        // Validation gives a committer writers as its only inputs, and at
        // most a global committer as its output.
        Box::new(crate::model::sinkv2::SinkCommitter::new(
            writer_of(s.scenario, s.operator),
            forwards_commits(s.scenario, s.operator),
        ))
    },
    flink: |_| Flink::Maps {
        fidelity: Fidelity::Approximate,
        how: "Flink's committer operator of the writer's Sink V2 (always per writer subtask)"
            .into(),
        java: Java::Committer,
    },
};
