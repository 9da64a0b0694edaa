//! `min-label`: connected components by min-label propagation, the operator
//! of an iteration (`model::iterate`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "min-label",
        description: "connected components by min-label propagation over `nodes` nodes with `degree` \
                      neighbours each; a record from upstream seeds its key, one over its own feedback \
                      edge proposes its value; an improved label goes to every neighbour",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::Keyed,
    create: |s| match *s.kind {
        OperatorKind::MinLabel { nodes, degree } => Box::new(
            crate::model::iterate::MinLabel::new(s.operator, nodes, degree),
        ),
        ref k => not_mine(k),
    },
    flink: |_| Flink::Refused("an iteration's operator (Flink 2.x has no DataStream iterations)"),
};
