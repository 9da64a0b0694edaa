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
        // Validation gives a committer writers as its only inputs.
        let writer = s.scenario.edges.iter().find(|e| e.to.0 == s.operator);
        Box::new(crate::model::sinkv2::SinkCommitter::new(
            writer.map_or(u32::MAX, |e| e.from.0),
        ))
    },
    flink: |_| Flink::Maps {
        fidelity: Fidelity::Approximate,
        how: "Flink's committer operator of the writer's Sink V2 (always per writer subtask)"
            .into(),
        java: Java::Committer,
    },
};
