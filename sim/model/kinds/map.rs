//! `map`: `value = value * mul + add`, stateless.

use super::*;
use crate::model::operator::{CheckpointId, Context};
use crate::model::Record;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "map",
        description: "value = value * mul + add",
        keyed: false,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::Stateless,
    create: |s| match *s.kind {
        OperatorKind::Map { mul, add } => Box::new(Map { mul, add }),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::Map { mul, add } => one_input(Java::Op {
            kind: "MAP",
            a: mul,
            b: add,
        }),
        ref k => not_mine(k),
    },
};

/// A stateless one-input operator in the exported job.
pub(super) fn one_input(java: Java) -> Flink {
    Flink::Maps {
        fidelity: Fidelity::Exact,
        how: "a one-input operator".into(),
        java,
    }
}

pub struct Map {
    pub mul: i64,
    pub add: i64,
}

impl Operator for Map {
    #[inline]
    fn process(&mut self, mut record: Record, ctx: &mut Context) {
        record.value = record.value.wrapping_mul(self.mul).wrapping_add(self.add);
        ctx.emit(record);
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        Vec::new()
    }
    fn restore(&mut self, _: &[u8], _: &mut Context) -> Result<(), String> {
        Ok(())
    }
}
