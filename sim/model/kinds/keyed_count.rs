//! `keyed-count`: per-key running count in key groups (the operator is
//! `model::operator::KeyedCount`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "keyed-count",
        description: "per-key running count in key groups; emits (key, count)",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::Keyed,
    create: |_| Box::<crate::model::operator::KeyedCount>::default(),
    flink: |_| value_state("KEYED_COUNT"),
};

/// A keyed operator whose state is one `ValueState` per key.
pub(super) fn value_state(kind: &'static str) -> Flink {
    Flink::Maps {
        fidelity: Fidelity::Exact,
        how: "keyed ValueState".into(),
        java: Java::Op { kind, a: 0, b: 0 },
    }
}
