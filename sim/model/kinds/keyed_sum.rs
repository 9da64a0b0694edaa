//! `keyed-sum`: per-key running sum in key groups.

use super::*;
use crate::model::keyed::KeyedState;
use crate::model::operator::{CheckpointId, Context};
use crate::model::Record;
use crate::mutant::Mutant;
use std::collections::BTreeMap;

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
    create: |_| Box::<KeyedSum>::default(),
    flink: |_| super::keyed_count::value_state("KEYED_SUM"),
};

/// Per-key running sum; emits `(key, sum)`. Running sums depend on arrival
/// order, so only lineage (not values) is compared at the sink.
#[derive(Default)]
pub struct KeyedSum {
    sums: KeyedState,
}

impl Operator for KeyedSum {
    #[inline]
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let s = self.sums.entry(record.key, ctx.max_parallelism);
        *s = s.wrapping_add(record.value);
        ctx.emit(Record {
            value: *s,
            ..record
        });
    }
    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.sums
            .snapshot(ctx.mutants.has(Mutant::KeyedSnapshotStaleGroup))
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.sums.restore(state, "keyed-sum")
    }
    fn snapshot_is_read_only(&self) -> bool {
        true
    }
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.sums.to_map()
    }
    fn order_insensitive_output(&self) -> bool {
        false
    }
    fn lineage_follows_input(&self) -> bool {
        true // one running sum per input, with its lineage
    }
}
