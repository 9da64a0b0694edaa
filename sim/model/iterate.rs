//! `min-label`: connected components by min-label propagation, the
//! operator of an iteration. The graph is given by a rule, not by input:
//! node `k` (of `nodes`) has `degree` neighbours ([`neighbours`]). A record
//! from another operator seeds its key with its own id as label; a record
//! from the operator itself (over its feedback edge) proposes its value as
//! the key's label. A label below the key's current one (or a key's first)
//! is kept and proposed to every neighbour: a record per neighbour, with the
//! label as value and the input's lineage. Labels only go down, so the loop
//! ends; the final state is every reached node's smallest seed label
//! reaching it, whatever the order (the state check compares it exactly).
//! Nothing is emitted at the end of input.

use super::keyed::KeyedState;
use super::operator::{Context, Operator};
use super::{CheckpointId, Record};
use crate::mutant::Mutant;
use std::collections::BTreeMap;

/// Node `k`'s `i`-th neighbour among `nodes`.
pub fn neighbours(k: u64, nodes: u64, degree: u32) -> impl Iterator<Item = u64> {
    (0..u64::from(degree)).map(move |i| {
        k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9))
            .rotate_left(17)
            % nodes.max(1)
    })
}

pub struct MinLabel {
    /// Its own operator index: records from it are proposals.
    me: u32,
    nodes: u64,
    degree: u32,
    /// Per key: label + 1 (0: not reached yet).
    labels: KeyedState,
}

impl MinLabel {
    pub fn new(me: u32, nodes: u64, degree: u32) -> MinLabel {
        MinLabel {
            me,
            nodes,
            degree,
            labels: KeyedState::default(),
        }
    }
}

impl Operator for MinLabel {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        self.process_from(u32::MAX, record, ctx);
    }

    fn process_from(&mut self, from: u32, record: Record, ctx: &mut Context) {
        let label = match from == self.me {
            true => record.value,
            false => record.key as i64,
        };
        let current = self.labels.entry(record.key, ctx.max_parallelism);
        if *current != 0 && label + 1 >= *current {
            return;
        }
        *current = label + 1;
        for n in neighbours(record.key, self.nodes, self.degree) {
            ctx.emit(Record {
                key: n,
                value: label,
                ..record
            });
        }
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.labels
            .snapshot(ctx.mutants.has(Mutant::KeyedSnapshotStaleGroup))
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.labels.restore(state, "min-label")
    }
    fn snapshot_is_read_only(&self) -> bool {
        true
    }
    /// Each reached node and its label.
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        let mut m = self.labels.to_map();
        m.values_mut().for_each(|v| *v -= 1);
        m
    }
    fn order_insensitive_output(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_in_range_and_fixed() {
        let a: Vec<u64> = neighbours(5, 100, 3).collect();
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|&n| n < 100));
        assert_eq!(a, neighbours(5, 100, 3).collect::<Vec<_>>());
    }
}
