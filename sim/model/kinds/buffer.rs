//! `buffer`: holds records in list state, split or union
//! (`model::opstate::ListBuffer`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "buffer",
        description:
            "holds records in list state, emits them in batches of `capacity` and at end of input; \
                      redistribution = \"split\" or \"union\" list state",
        keyed: false,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |k| match *k {
        OperatorKind::Buffer { redistribution, .. } => StateLayout::List(redistribution),
        ref k => not_mine(k),
    },
    create: |s| match *s.kind {
        OperatorKind::Buffer {
            capacity,
            redistribution,
        } => Box::new(crate::model::opstate::ListBuffer::new(
            capacity,
            redistribution,
        )),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::Buffer {
            capacity,
            redistribution,
        } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "operator ListState (split or union)".into(),
            java: Java::Op {
                kind: match redistribution {
                    Redistribution::Split => "BUFFER_SPLIT",
                    Redistribution::Union => "BUFFER_UNION",
                },
                a: i64::from(capacity),
                b: 0,
            },
        },
        ref k => not_mine(k),
    },
};
