//! `sink-global-committer`: a Sink V2 global committer
//! (`model::sinkv2::SinkGlobalCommitter`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "sink-global-committer",
        description:
            "Sink V2 global committer: publishes, as their committables arrive, the checkpoints \
                      whose committables every committer forwarded, oldest first, stopping at the \
                      first incomplete one",
        keyed: false,
        check: no_params,
    },
    role: Role::GlobalCommitter,
    holds: false,
    // Parallelism 1 always (validation): its bytes restore as they are.
    state: |_| StateLayout::Opaque,
    create: |s| {
        // Validation gives it one committer as its input.
        let committer = writer_of(s.scenario, s.operator);
        let writer = match committer {
            u32::MAX => u32::MAX,
            c => writer_of(s.scenario, c),
        };
        Box::new(crate::model::sinkv2::SinkGlobalCommitter::new(writer))
    },
    flink: |_| Flink::Maps {
        fidelity: Fidelity::Exact,
        how: "the global committer of the writer's Sink V2 (SupportsPostCommitTopology, \
              StandardSinkTopologies.addGlobalCommitter)"
            .into(),
        java: Java::Committer,
    },
};
