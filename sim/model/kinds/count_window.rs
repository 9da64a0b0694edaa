//! `count-window`: a count window per key, its open windows in keyed state
//! of its own encoding (the operator is `model::operator::CountWindow`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "count-window",
        description:
            "per-key count window of `size` records in key groups; emits (key, window sum), \
                      flushes open windows at end of input",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::KeyedBytes,
    create: |s| match *s.kind {
        OperatorKind::CountWindow { size } => {
            Box::new(crate::model::operator::CountWindow::new(size))
        }
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::CountWindow { size } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "keyed ListState, open windows flushed at endInput".into(),
            java: Java::Op {
                kind: "COUNT_WINDOW",
                a: i64::from(size),
                b: 0,
            },
        },
        ref k => not_mine(k),
    },
};
