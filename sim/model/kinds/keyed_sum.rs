//! `keyed-sum`: per-key running sum in key groups (the operator is
//! `model::operator::KeyedSum`).

use super::*;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "keyed-sum",
        description: "per-key running sum in key groups; emits (key, sum)",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::Keyed,
    create: |_| Box::<crate::model::operator::KeyedSum>::default(),
    flink: |_| super::keyed_count::value_state("KEYED_SUM"),
};
