//! Keyed state as Flink's heap state backend holds it: one map per key
//! group (`StateTable.keyGroupedStateMaps`), so that a snapshot writes whole
//! key groups in order and a restore at another parallelism picks whole key
//! groups.
//!
//! The snapshot format is `KeyedSnapshot`: the non-empty key groups in
//! ascending order, each with its entries sorted by key. A key group's
//! encoding is kept until one of its entries changes, so a snapshot costs
//! the key groups written to since the last one (plus one copy of the
//! bytes), not the whole state; the bytes are the same as encoding
//! everything afresh.

use super::operator::decode;
use super::record::key_group;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Snapshot format of keyed state: entries grouped by key group, sorted, so
/// that a later restore at another parallelism can pick whole key groups.
#[derive(Serialize, Deserialize)]
pub(crate) struct KeyedSnapshot {
    pub key_groups: Vec<(u32, Vec<(u64, i64)>)>,
}

#[derive(Default)]
struct Group {
    /// Each key and the slot of its value; sorted by key unless `sorted`
    /// is false.
    keys: Vec<(u64, u32)>,
    sorted: bool,
    /// `(key group, entries)` encoded, valid while `changed` is false.
    encoded: Vec<u8>,
    changed: bool,
}

/// Key → value, by key group.
#[derive(Default)]
pub struct KeyedState {
    /// Key → the slot of its value, for keys below `dense.len()`
    /// ([`NONE`] where there is no such key). Small keys are common (a
    /// cyclic source's, a count's ids), and an array read is a fraction of
    /// a hash probe.
    dense: Vec<u32>,
    /// Key → its group (in `groups`) and the slot of its value, for every
    /// other key.
    index: FxHashMap<u64, (u32, u32)>,
    values: Vec<i64>,
    /// Per slot, its key's group.
    group_of: Vec<u32>,
    /// The groups that ever held a key, in the order they appeared.
    groups: Vec<Group>,
    /// Key group → its group in `groups`.
    by_key_group: BTreeMap<u32, u32>,
}

/// `(key group, entries)` as postcard writes `(u32, Vec<(u64, i64)>)`:
/// unsigned integers as LEB128 varints, signed ones zigzag-encoded first, a
/// sequence as its length then its elements (the unit test compares it with
/// postcard's own encoding).
fn encode_group(kg: u32, keys: &[(u64, u32)], values: &[i64]) -> Vec<u8> {
    // At most 5 bytes for the key group, 10 for the length, 10 for each key
    // and each value.
    let mut out = Vec::with_capacity(15 + 20 * keys.len());
    varint(&mut out, u64::from(kg));
    varint(&mut out, keys.len() as u64);
    for &(key, slot) in keys {
        let v = values[slot as usize];
        varint(&mut out, key);
        varint(&mut out, ((v << 1) ^ (v >> 63)) as u64);
    }
    out
}

/// An unsigned integer as postcard writes it: LEB128.
fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// No key in this slot of [`KeyedState::dense`].
const NONE: u32 = u32::MAX;

impl KeyedState {
    /// The value of `key` (0 if it has none yet), to change in place.
    #[inline]
    pub fn entry(&mut self, key: u64, max_parallelism: u32) -> &mut i64 {
        let (group, slot) = match self.find(key) {
            Some(at) => at,
            None => self.insert(key, key_group(key, max_parallelism), 0),
        };
        self.groups[group as usize].changed = true;
        &mut self.values[slot as usize]
    }

    /// The group and slot of `key`, if it has a value.
    #[inline]
    fn find(&self, key: u64) -> Option<(u32, u32)> {
        match usize::try_from(key).ok().and_then(|k| self.dense.get(k)) {
            Some(&NONE) => None,
            Some(&slot) => Some((self.group_of[slot as usize], slot)),
            None if self.index.is_empty() => None,
            None => self.index.get(&key).copied(),
        }
    }

    /// Notes where `key`'s value is: in `dense` if it covers the key or
    /// may grow to (at most 64 slots plus 8 per key held: 36 bytes a key
    /// at worst, about what the map takes), in the map otherwise. Growing
    /// moves the map's keys it now covers, so a key is only ever in one of
    /// the two.
    fn place(&mut self, key: u64, group: u32, slot: u32) {
        self.group_of.push(group);
        let limit = 64 + 8 * self.values.len() as u64;
        if key >= self.dense.len() as u64 && key < limit {
            let len = (key + 1).max(2 * self.dense.len() as u64).min(limit) as usize;
            self.dense.resize(len, NONE);
            if !self.index.is_empty() {
                let dense = &mut self.dense;
                self.index.retain(|&k, &mut (_, s)| {
                    match usize::try_from(k).ok().and_then(|k| dense.get_mut(k)) {
                        Some(d) => {
                            *d = s;
                            false
                        }
                        None => true,
                    }
                });
            }
        }
        match usize::try_from(key)
            .ok()
            .and_then(|k| self.dense.get_mut(k))
        {
            Some(d) => *d = slot,
            None => {
                self.index.insert(key, (group, slot));
            }
        }
    }

    fn insert(&mut self, key: u64, kg: u32, value: i64) -> (u32, u32) {
        let slot = self.values.len() as u32;
        self.values.push(value);
        let fresh = self.groups.len() as u32;
        let group = *self.by_key_group.entry(kg).or_insert(fresh);
        if group == fresh {
            self.groups.push(Group::default());
        }
        let g = &mut self.groups[group as usize];
        match g.keys.last() {
            None => g.sorted = true,
            Some(&(last, _)) if last > key => g.sorted = false,
            Some(_) => {}
        }
        g.keys.push((key, slot));
        g.changed = true;
        self.place(key, group, slot);
        (group, slot)
    }

    /// The snapshot of every key group (`KeyedSnapshot`, encoded). With
    /// `stale` (mutant `keyed-snapshot-stale-group`) a key group written to
    /// since its last encoding keeps that encoding.
    pub fn snapshot(&mut self, stale: bool) -> Vec<u8> {
        let mut len = 0;
        for (&kg, &group) in &self.by_key_group {
            let g = &mut self.groups[group as usize];
            if stale && g.changed && !g.encoded.is_empty() {
                crate::mutant::fired(crate::mutant::Mutant::KeyedSnapshotStaleGroup);
            } else if g.changed || g.encoded.is_empty() {
                if !g.sorted {
                    // A sorted run and the keys added since: merged.
                    g.keys.sort();
                    g.sorted = true;
                }
                g.encoded = encode_group(kg, &g.keys, &self.values);
                g.changed = false;
            }
            len += g.encoded.len();
        }
        // A sequence's length prefix, then its elements.
        let mut out = Vec::with_capacity(10 + len);
        varint(&mut out, self.by_key_group.len() as u64);
        for &group in self.by_key_group.values() {
            out.extend_from_slice(&self.groups[group as usize].encoded);
        }
        out
    }

    /// Replaces the state with a snapshot's.
    pub fn restore(&mut self, state: &[u8], what: &str) -> Result<(), String> {
        let snap: KeyedSnapshot = decode(state, what)?;
        *self = KeyedState::default();
        for (kg, entries) in snap.key_groups {
            for (key, value) in entries {
                match self.find(key) {
                    Some((_, slot)) => self.values[slot as usize] = value,
                    None => {
                        self.insert(key, kg, value);
                    }
                }
            }
        }
        Ok(())
    }

    /// Every key's value, by key.
    pub fn to_map(&self) -> BTreeMap<u64, i64> {
        // Key group after key group, each sorted: a few sorted runs, which
        // the map's bulk build merges (a hash order would need a full sort).
        let mut entries = Vec::with_capacity(self.values.len());
        for g in &self.groups {
            let from = entries.len();
            entries.extend(
                g.keys
                    .iter()
                    .map(|&(k, slot)| (k, self.values[slot as usize])),
            );
            if !g.sorted {
                entries[from..].sort_unstable_by_key(|&(k, _)| k);
            }
        }
        entries.into_iter().collect()
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const KeyedSnapshotStaleGroup: Mutant = Mutant::declare(&MutantInfo {
            name: "keyed-snapshot-stale-group",
            part: "keyed state snapshots",
            what: "a keyed snapshot writes the bytes of the previous snapshot for a key group that was written to since: a restore brings back older counts",
            modelled_on: "the class of incremental and copy-on-write snapshot bugs where state changed since the last snapshot is not written again (Flink's CopyOnWriteStateMap versions every entry so that a snapshot sees each write made before it, and incremental checkpoints must upload every changed file)",
            caught_by: "state",
            applies: &[("wordcount", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::operator::encode;
    use super::*;
    use crate::engine::rng::splitmix64;

    /// The snapshot as a whole encoding of every key group.
    fn afresh(map: &BTreeMap<u64, i64>, max_parallelism: u32) -> Vec<u8> {
        let mut groups: BTreeMap<u32, Vec<(u64, i64)>> = BTreeMap::new();
        for (&k, &v) in map {
            groups
                .entry(key_group(k, max_parallelism))
                .or_default()
                .push((k, v));
        }
        encode(&KeyedSnapshot {
            key_groups: groups.into_iter().collect(),
        })
    }

    /// Small keys in an array, others in a map, keys moving from the map
    /// into the array as it grows: the same values and snapshots as a map.
    #[test]
    fn small_and_large_keys_keep_their_values() {
        let mut state = KeyedState::default();
        let mut model = BTreeMap::new();
        for i in 0..20_000u64 {
            let r = splitmix64(i);
            let key = match r % 4 {
                0 => r >> 2 & 0xF,       // a few small keys
                1 => (r >> 2) % 5_000,   // small keys arriving out of order
                2 => (r >> 2) % 100_000, // beyond the array at first
                _ => r | (1 << 63),      // never in the array
            };
            *state.entry(key, 16) += 1;
            *model.entry(key).or_insert(0i64) += 1;
            if i % 5_000 == 0 {
                assert_eq!(state.snapshot(false), afresh(&model, 16));
            }
        }
        assert!(state.dense.len() > 5_000, "small keys are in the array");
        assert!(!state.index.is_empty(), "large keys are in the map");
        assert!(state.index.keys().all(|&k| k >= state.dense.len() as u64));
        assert_eq!(state.to_map(), model);
        assert_eq!(state.snapshot(false), afresh(&model, 16));
    }

    #[test]
    fn snapshots_are_the_encoding_of_the_whole_state() {
        for max_p in [1, 7, 128] {
            let mut state = KeyedState::default();
            let mut model = BTreeMap::new();
            for round in 0..20u64 {
                for i in 0..(round * 13 % 50) {
                    let key = splitmix64(round * 1000 + i) % 300;
                    // Values across i64's range, keys across u64's.
                    let key = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    let add = (splitmix64(key ^ round) as i64) >> (round % 64);
                    let v = state.entry(key, max_p);
                    *v = v.wrapping_add(add);
                    let m = model.entry(key).or_insert(0i64);
                    *m = m.wrapping_add(add);
                }
                let bytes = state.snapshot(false);
                assert_eq!(bytes, afresh(&model, max_p), "max_parallelism {max_p}");
                let mut restored = KeyedState::default();
                restored.restore(&bytes, "test").unwrap();
                assert_eq!(restored.to_map(), model);
                assert_eq!(restored.snapshot(false), bytes);
            }
            assert_eq!(state.to_map(), model);
        }
    }
}
