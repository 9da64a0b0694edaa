//! `flat-map`: emits `copies` records per input, stateless.

use super::*;
use crate::model::operator::{CheckpointId, Context};
use crate::model::Record;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "flat-map",
        description: "emits `copies` records per input",
        keyed: false,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::Stateless,
    create: |s| match *s.kind {
        OperatorKind::FlatMap { copies } => Box::new(FlatMap { copies }),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::FlatMap { copies } => super::map::one_input(Java::Op {
            kind: "FLAT_MAP",
            a: i64::from(copies),
            b: 0,
        }),
        ref k => not_mine(k),
    },
};

pub struct FlatMap {
    pub copies: u32,
}

impl Operator for FlatMap {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        for i in 0..self.copies {
            ctx.emit(Record {
                value: record.value.wrapping_add(i64::from(i)),
                ..record
            });
        }
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        Vec::new()
    }
    fn restore(&mut self, _: &[u8], _: &mut Context) -> Result<(), String> {
        Ok(())
    }
}
