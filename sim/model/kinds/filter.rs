//! `filter`: keeps records with `key % modulus < keep_below`, stateless.

use super::*;
use crate::model::operator::{CheckpointId, Context};
use crate::model::Record;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "filter",
        description: "keeps records with key % modulus < keep_below",
        keyed: false,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::Stateless,
    create: |s| match *s.kind {
        OperatorKind::Filter {
            modulus,
            keep_below,
        } => Box::new(Filter {
            modulus,
            keep_below,
        }),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::Filter {
            modulus,
            keep_below,
        } => super::map::one_input(Java::Op {
            kind: "FILTER",
            a: modulus as i64,
            b: keep_below as i64,
        }),
        ref k => not_mine(k),
    },
};

pub struct Filter {
    pub modulus: u64,
    pub keep_below: u64,
}

impl Operator for Filter {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        if record.key % self.modulus < self.keep_below {
            ctx.emit(record);
        }
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        Vec::new()
    }
    fn restore(&mut self, _: &[u8], _: &mut Context) -> Result<(), String> {
        Ok(())
    }
}
