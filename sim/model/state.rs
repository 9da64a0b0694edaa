//! Flink-style state for an operator kind of a user's own: keyed state of
//! any serde type ([`ValueState`], Flink's `ValueState<T>` for every key of
//! a subtask at once; a `ValueState<Vec<T>>` is a keyed `ListState<T>`, a
//! `ValueState<BTreeMap<K, V>>` a `MapState<K, V>`), kept by key group so
//! that a savepoint restores it at any parallelism, and the index of the
//! input a record came from ([`Inputs`], for two-input operators such as
//! Flink's `KeyedCoProcessFunction`).
//!
//! A kind whose state is a `ValueState` declares
//! [`StateLayout::KeyedBytes`](super::kinds::StateLayout::KeyedBytes):
//! savepoints keep its key groups, a restore at another parallelism hands
//! each new subtask the key groups it owns, and `verify-snapshot` checks
//! that every key is in its key group. Values are encoded with postcard
//! from the type's `Serialize`: the bytes must be the same on every run
//! (no hash-ordered containers inside `T`), since their length is the
//! state's size and write time. This module never decides where a key
//! group goes: the savepoint's rescale does, and [`ValueState::restore`]
//! refuses a key group its subtask does not own.

use super::kinds::Setup;
use super::operator::{decode, encode, keyed_byte_groups, keyed_byte_state, Context};
use super::record::{key_group, key_group_range};
use crate::scenario::Scenario;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

/// One value of a serde type per key, by key group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueState<T> {
    /// Key order, so that iterating and snapshotting are deterministic.
    values: BTreeMap<u64, T>,
}

impl<T> Default for ValueState<T> {
    fn default() -> Self {
        ValueState {
            values: BTreeMap::new(),
        }
    }
}

/// A key group's entries as a [`ValueState`] writes them: each key with its
/// value's own encoding, so that the keys can be read (and checked against
/// their key group) without knowing the value's type.
type Entries = Vec<(u64, Vec<u8>)>;

impl<T: Serialize + DeserializeOwned> ValueState<T> {
    /// Empty state.
    pub fn new() -> ValueState<T> {
        ValueState::default()
    }

    /// The value of `key` (Flink's `value()`), if it has one.
    pub fn get(&self, key: u64) -> Option<&T> {
        self.values.get(&key)
    }

    /// The value of `key` to change in place, the default if it has none.
    pub fn entry(&mut self, key: u64) -> &mut T
    where
        T: Default,
    {
        self.values.entry(key).or_default()
    }

    /// Sets the value of `key` (Flink's `update`).
    pub fn update(&mut self, key: u64, value: T) {
        self.values.insert(key, value);
    }

    /// Removes the value of `key` (Flink's `clear`), returning it.
    pub fn clear(&mut self, key: u64) -> Option<T> {
        self.values.remove(&key)
    }

    /// Every key with its value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.values.iter().map(|(&k, v)| (k, v))
    }

    /// How many keys have a value.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every key's value mapped to an `i64`: what `Operator::keyed_state`
    /// returns for the state check.
    pub fn to_map(&self, f: impl Fn(&T) -> i64) -> BTreeMap<u64, i64> {
        self.values.iter().map(|(&k, v)| (k, f(v))).collect()
    }

    /// The snapshot of every key group (the `KeyedBytes` layout): what
    /// `Operator::snapshot` returns.
    pub fn snapshot(&self, ctx: &Context) -> Vec<u8> {
        let mut groups: BTreeMap<u32, Entries> = BTreeMap::new();
        for (&key, value) in &self.values {
            let kg = key_group(key, ctx.max_parallelism);
            groups.entry(kg).or_default().push((key, encode(value)));
        }
        let groups = groups.into_iter().map(|(kg, e)| (kg, encode(&e)));
        keyed_byte_state(groups.collect())
    }

    /// Replaces the state with a snapshot's (`Operator::restore`). Empty
    /// bytes are empty state. Refuses a key group this subtask does not
    /// own at its parallelism, a key outside its key group, and a value
    /// that does not decode as `T`.
    pub fn restore(&mut self, state: &[u8], ctx: &Context) -> Result<(), String> {
        self.values.clear();
        if state.is_empty() {
            return Ok(());
        }
        let groups = keyed_byte_groups(state).ok_or("keyed state does not decode")?;
        let (first, end) = key_group_range(ctx.subtask, ctx.parallelism, ctx.max_parallelism);
        for (kg, bytes) in groups {
            if !(first..end).contains(&kg) {
                return Err(format!(
                    "key group {kg} restored into subtask {} of {}, which owns key groups {first}..{end}",
                    ctx.subtask, ctx.parallelism
                ));
            }
            for key in group_keys(kg, &bytes, ctx.max_parallelism)? {
                let value = decode(&key.1, "keyed value")
                    .map_err(|e| format!("key {} of key group {kg}: {e}", key.0))?;
                self.values.insert(key.0, value);
            }
        }
        Ok(())
    }
}

/// The entries of one key group of a [`ValueState`] snapshot, each key
/// checked to be in key group `kg` (out of `max_parallelism`).
fn group_keys(kg: u32, bytes: &[u8], max_parallelism: u32) -> Result<Entries, String> {
    let entries: Entries = decode(bytes, "keyed").map_err(|e| format!("key group {kg}: {e}"))?;
    for (key, _) in &entries {
        let actual = key_group(*key, max_parallelism);
        if actual != kg {
            return Err(format!("key {key} belongs to key group {actual}, not {kg}"));
        }
    }
    Ok(entries)
}

/// One key group of a [`ValueState<T>`] snapshot: its keys and values, in
/// the order it lists them.
pub fn value_state_values<T: DeserializeOwned>(bytes: &[u8]) -> Result<Vec<(u64, T)>, String> {
    let entries: Entries = decode(bytes, "keyed")?;
    let values = entries
        .into_iter()
        .map(|(k, v)| Ok((k, decode(&v, "keyed value")?)));
    values.collect()
}

/// One key group of a [`ValueState<T>`] snapshot from its keys and values
/// (what [`value_state_values`] reads).
pub fn value_state_group<T: Serialize>(values: &[(u64, T)]) -> Vec<u8> {
    let entries: Entries = values.iter().map(|(k, v)| (*k, encode(v))).collect();
    encode(&entries)
}

/// The keys of one key group of a [`ValueState`] snapshot, in the order it
/// lists them (an error if the bytes are not such a key group).
pub fn value_state_keys(bytes: &[u8]) -> Result<Vec<u64>, String> {
    let entries: Entries = decode(bytes, "keyed")?;
    Ok(entries.into_iter().map(|(k, _)| k).collect())
}

/// The inputs of an operator, in the order the scenario's edges into it
/// are written: a record from the first edge's operator is of input 0
/// (Flink's `processElement1`), from the second's of input 1
/// (`processElement2`), and so on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    from: Vec<u32>,
}

impl Inputs {
    /// The inputs of the operator a constructor is building.
    pub fn of(setup: &Setup) -> Inputs {
        Inputs::of_operator(setup.scenario, setup.operator)
    }

    /// The inputs of the scenario's operator at index `operator`.
    pub fn of_operator(scenario: &Scenario, operator: u32) -> Inputs {
        let into = scenario.edges.iter().filter(|e| e.to.0 == operator);
        Inputs {
            from: into.map(|e| e.from.0).collect(),
        }
    }

    /// The input a record from operator `from` (`Operator::process_from`)
    /// arrives on, `None` if no edge comes from it.
    pub fn index(&self, from: u32) -> Option<usize> {
        self.from.iter().position(|&f| f == from)
    }

    /// How many inputs the operator has.
    pub fn len(&self) -> usize {
        self.from.len()
    }

    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::model::ExternalStore;
    use crate::mutant::Mutants;
    use serde::Deserialize;

    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    struct Tally {
        seen: u32,
        last: String,
    }

    /// Runs `f` with the context of `subtask` of `parallelism`.
    fn at<R>(subtask: u32, parallelism: u32, f: impl FnOnce(&Context) -> R) -> R {
        let (mut store, mut out) = (ExternalStore::default(), Vec::new());
        let ctx = Context {
            subtask,
            parallelism,
            operator: 0,
            max_parallelism: 16,
            attempt: 0,
            now: SimTime::ZERO,
            restored: None,
            watermark: i64::MIN,
            store: &mut store,
            out: &mut out,
            late: &mut Vec::new(),
            fired: &mut Vec::new(),
            mutants: Mutants::NONE,
        };
        f(&ctx)
    }

    #[test]
    fn a_value_state_moves_by_key_group() {
        let mut state = ValueState::<Tally>::new();
        for key in 0..200u64 {
            let t = state.entry(key % 50);
            t.seen += 1;
            t.last = format!("k{key}");
        }
        let bytes = at(0, 1, |ctx| state.snapshot(ctx));
        let mut same = ValueState::new();
        at(0, 1, |ctx| same.restore(&bytes, ctx)).unwrap();
        assert_eq!(same, state);
        // Split by key group over three subtasks, as a rescale does: each
        // takes its own key groups; together they are the whole state.
        let groups = keyed_byte_groups(&bytes).unwrap();
        let mut union = BTreeMap::new();
        for s in 0..3 {
            let (first, end) = key_group_range(s, 3, 16);
            let mine = groups.iter().filter(|(kg, _)| (first..end).contains(kg));
            let part = keyed_byte_state(mine.cloned().collect());
            let mut restored = ValueState::<Tally>::new();
            at(s, 3, |ctx| restored.restore(&part, ctx)).unwrap();
            union.extend(restored.values);
            // Another subtask's key groups are refused.
            let mut other = ValueState::<Tally>::new();
            let refused = at((s + 1) % 3, 3, |ctx| other.restore(&part, ctx));
            assert!(refused.unwrap_err().contains("restored into subtask"));
        }
        assert_eq!(union, state.values);
        let keys = value_state_keys(&groups[0].1).unwrap();
        assert!(keys.iter().all(|&k| key_group(k, 16) == groups[0].0));
        // A key in another key group, or a value of another type, is refused.
        let (kg, entries) = &groups[0];
        let moved = keyed_byte_state(vec![((kg + 1) % 16, entries.clone())]);
        let mut wrong = ValueState::<Tally>::new();
        let refused = at(0, 1, |ctx| wrong.restore(&moved, ctx)).unwrap_err();
        assert!(refused.contains("belongs to key group"), "{refused}");
        let mut other = ValueState::<(u32, String, String)>::new();
        assert!(at(0, 1, |ctx| other.restore(&bytes, ctx)).is_err());
    }

    #[test]
    fn inputs_are_numbered_in_the_order_of_the_edges() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/operator-state.toml");
        let sc = crate::scenario::load(std::path::Path::new(path)).unwrap();
        let at = |id: &str| sc.operators.iter().position(|o| o.id == id).unwrap() as u32;
        let inputs = Inputs::of_operator(&sc, at("apply"));
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs.index(at("source")), Some(0));
        assert_eq!(inputs.index(at("rules")), Some(1));
        assert_eq!(inputs.index(at("sum")), None);
    }
}
