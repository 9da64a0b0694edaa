//! Operator state that is not keyed: list state, redistributed on restore
//! by Flink's two modes (`OperatorStateStore.getListState` and
//! `getUnionListState`).
//!
//! - **Split** (`SPLIT_DISTRIBUTE`): each entry goes to one subtask. A
//!   restore at the same parallelism gives each subtask its own list; a
//!   rescale deals the concatenated lists out in contiguous chunks.
//! - **Union** (`UNION`): at every restore, each subtask gets every
//!   subtask's entries (the runtime assembles them, `union`), and selects
//!   its share itself.
//!
//! The `buffer` operator uses it (Flink's `BufferingSink` pattern): it
//! holds records in list state and emits them in batches of `capacity`,
//! the rest at end of input. After a union restore it keeps the entries at
//! positions `i` with `i % parallelism == subtask`.
//!
//! **Broadcast state** (`BROADCAST`): every subtask holds the same map,
//! updated only by records of its broadcast inputs (Flink's
//! `BroadcastProcessFunction`). Each subtask snapshots its copy; a restore
//! at the same parallelism gives each its own, a rescale gives new subtask
//! `i` the copy of old subtask `i mod p_old`. The `broadcast-process`
//! operator uses it as a rule table.

use super::operator::{decode, encode, CheckpointId, Context, Operator};
use super::record::Record;
use crate::mutant::Mutant;
use crate::scenario::Redistribution;
use serde::{Deserialize, Serialize};

/// A list state's entries, as snapshots and savepoints hold them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListState {
    pub entries: Vec<Record>,
}

impl ListState {
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }
    pub fn decode(bytes: &[u8]) -> Result<ListState, String> {
        decode(bytes, "list")
    }
}

/// The union of the subtasks' list states, in subtask order (empty states
/// are empty lists); an error names the state that does not decode.
pub fn union(states: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut all = ListState::default();
    for (i, bytes) in states.iter().enumerate() {
        if bytes.is_empty() {
            continue;
        }
        let s = ListState::decode(bytes).map_err(|e| format!("subtask {i}: {e}"))?;
        all.entries.extend(s.entries);
    }
    Ok(all.encode())
}

/// `entries` split into `p` contiguous chunks of nearly equal length
/// (Flink's round-robin repartitioner of split list state, [`even_split`]).
pub fn split(entries: &[Record], p: u32) -> Vec<Vec<u8>> {
    even_split(entries.len(), p)
        .into_iter()
        .map(|r| {
            ListState {
                entries: entries[r].to_vec(),
            }
            .encode()
        })
        .collect()
}

/// How `n` entries of split list state (every old subtask's, in subtask
/// order) are dealt to `p` new subtasks: contiguous runs, `n / p` each,
/// one more for each of the first `n mod p` (Flink's
/// `RoundRobinOperatorStateRepartitioner.repartitionSplitState`). So an
/// upscale gives state to the lowest subtasks only.
pub fn even_split(n: usize, p: u32) -> Vec<std::ops::Range<usize>> {
    let p = p.max(1) as usize;
    let (base, extra) = (n / p, n % p);
    let mut from = 0;
    (0..p)
        .map(|i| {
            let to = from + base + usize::from(i < extra);
            let r = from..to;
            from = to;
            r
        })
        .collect()
}

/// Holds records in list state and emits them in batches.
pub struct ListBuffer {
    capacity: usize,
    mode: Redistribution,
    held: Vec<Record>,
}

impl ListBuffer {
    pub fn new(capacity: u32, mode: Redistribution) -> ListBuffer {
        ListBuffer {
            capacity: capacity.max(1) as usize,
            mode,
            held: Vec::new(),
        }
    }

    fn flush(&mut self, ctx: &mut Context) {
        for r in self.held.drain(..) {
            ctx.emit(r);
        }
    }
}

impl Operator for ListBuffer {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        self.held.push(record);
        if self.held.len() >= self.capacity {
            self.flush(ctx);
        }
    }

    fn end_of_input(&mut self, ctx: &mut Context) {
        self.flush(ctx);
    }

    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        ListState {
            entries: self.held.clone(),
        }
        .encode()
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        let entries = ListState::decode(state)?.entries;
        self.held = match self.mode {
            Redistribution::Split => entries,
            // Mutant: the whole union is kept, by every subtask.
            Redistribution::Union if ctx.mutant(Mutant::UnionStateKeptWhole) => entries,
            Redistribution::Union => entries
                .into_iter()
                .enumerate()
                .filter(|(i, _)| *i as u32 % ctx.parallelism == ctx.subtask)
                .map(|(_, r)| r)
                .collect(),
        };
        Ok(())
    }
}

/// A rule table in broadcast state: a record of a broadcast input sets
/// rule `key % rules` to its value (and emits nothing); a record of any
/// other input is emitted with its value multiplied by its rule (1 while
/// unset).
pub struct BroadcastProcess {
    rules: u64,
    /// The operators whose records arrive over broadcast edges.
    control: Vec<u32>,
    table: std::collections::BTreeMap<u64, i64>,
}

/// A broadcast state's map, as snapshots and savepoints hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BroadcastState {
    pub table: Vec<(u64, i64)>,
}

impl BroadcastState {
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }
    pub fn decode(bytes: &[u8]) -> Result<BroadcastState, String> {
        decode(bytes, "broadcast")
    }
}

impl BroadcastProcess {
    pub fn new(rules: u64, control: Vec<u32>) -> BroadcastProcess {
        BroadcastProcess {
            rules: rules.max(1),
            control,
            table: std::collections::BTreeMap::new(),
        }
    }
}

impl Operator for BroadcastProcess {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let rule = self.table.get(&(record.key % self.rules)).copied();
        ctx.emit(Record {
            value: record.value.wrapping_mul(rule.unwrap_or(1)),
            ..record
        });
    }

    fn process_from(&mut self, from: u32, record: Record, ctx: &mut Context) {
        if self.control.contains(&from) {
            self.table.insert(record.key % self.rules, record.value);
        } else {
            self.process(record, ctx);
        }
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        if ctx.mutant(Mutant::BroadcastStateNotSnapshotted) {
            return BroadcastState::default().encode();
        }
        BroadcastState {
            table: self.table.iter().map(|(&k, &v)| (k, v)).collect(),
        }
        .encode()
    }

    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        if !state.is_empty() {
            self.table = BroadcastState::decode(state)?.table.into_iter().collect();
        }
        Ok(())
    }

    fn order_insensitive_output(&self) -> bool {
        false // a record's value depends on the rules that arrived before it
    }
    fn lineage_follows_input(&self) -> bool {
        true // each record goes out once, with its own lineage
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const UnionStateKeptWhole: Mutant = Mutant::declare(&MutantInfo {
            name: "union-state-kept-whole",
            part: "operator state",
            what: "an operator with union list state keeps every restored entry instead of selecting its share, so each entry is restored by every subtask and emitted once per subtask",
            modelled_on: "the union-list-state contract (OperatorStateStore.getUnionListState: every subtask receives the complete list and must pick its part, as FlinkKafkaConsumerBase.initializeState filters the restored partitions by its assignment)",
            caught_by: "exactly-once-output",
            applies: &[("operator-state", "aligned")],
        });
        pub const BroadcastStateNotSnapshotted: Mutant = Mutant::declare(&MutantInfo {
            name: "broadcast-state-not-snapshotted",
            part: "operator state",
            what: "a broadcast-process operator keeps its rule table outside its checkpointed state: a restore starts with no rules, though the broadcast records that set them are before the restored checkpoint and never replayed",
            modelled_on: "the broadcast-state pattern's contract (BroadcastProcessFunction must keep what broadcast elements set in the broadcast state of its context, which is checkpointed and redistributed; a plain field is lost on restore)",
            caught_by: "exactly-once-output",
            applies: &[("operator-state", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Lineage;

    fn r(offset: u64) -> Record {
        Record {
            key: offset,
            value: 1,
            lineage: Lineage {
                partition: 0,
                offset,
            },
            emitted_at: crate::engine::SimTime::ZERO,
            timestamp: 0,
            payload: crate::model::Payload::NONE,
        }
    }

    #[test]
    fn split_deals_contiguous_chunks_and_union_joins_them_again() {
        let entries: Vec<Record> = (0..7).map(r).collect();
        let parts = split(&entries, 3);
        let sizes: Vec<usize> = parts
            .iter()
            .map(|b| ListState::decode(b).unwrap().entries.len())
            .collect();
        // Flink's rule: the first `7 mod 3` subtasks take one more.
        assert_eq!(sizes, [3, 2, 2]);
        // An upscale gives state to the lowest subtasks only.
        assert_eq!(even_split(2, 4), [0..1, 1..2, 2..2, 2..2]);
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let all = ListState::decode(&union(&refs).unwrap()).unwrap();
        assert_eq!(all.entries, entries);
        assert!(union(&[&[0xff, 0xff, 0xff]]).is_err());
    }
}
