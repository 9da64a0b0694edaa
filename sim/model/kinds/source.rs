//! `source`: a replayable partitioned log, static (`model::operator::Source`)
//! or a FLIP-27 source (`model::flip27`).

use super::*;
use crate::scenario::SplitAssignment;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "source",
        description: "replayable partitioned log generated from the seed; offsets are its state",
        keyed: false,
        check: no_params,
    },
    role: Role::Source,
    holds: false,
    state: |k| match k {
        OperatorKind::Source(src) if src.split_assignment == SplitAssignment::Enumerator => {
            StateLayout::SplitSource
        }
        OperatorKind::Source(_) => StateLayout::SourceOffsets,
        k => not_mine(k),
    },
    create: |s| match s.kind {
        OperatorKind::Source(src) if src.split_assignment == SplitAssignment::Enumerator => {
            Box::new(crate::model::flip27::SourceReader::new(s.workload.clone()))
        }
        OperatorKind::Source(_) => Box::new(crate::model::operator::Source::new(
            s.workload.clone(),
            s.workload
                .partitions_of(s.operator, s.subtask, s.parallelism),
        )),
        k => not_mine(k),
    },
    flink: |k| match k {
        OperatorKind::Source(s) => {
            let how = match (s.split_assignment, s.push_splits) {
                (SplitAssignment::Static, _) => {
                    "splits assigned i % parallelism at registration, in one event"
                }
                (SplitAssignment::Enumerator, false) => "splits on request, discovered over time",
                (SplitAssignment::Enumerator, true) => {
                    "splits pushed to their readers as Kafka's enumerator does, one event per reader (the simulator: one per split)"
                }
            };
            Flink::Maps {
                fidelity: Fidelity::Approximate,
                how: format!("FLIP-27 source over the simulated records ({how}); rates in wall-clock ms from the first reader's start; record size as padding"),
                java: Java::Source,
            }
        }
        k => not_mine(k),
    },
};
