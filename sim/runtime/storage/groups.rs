//! A keyed snapshot by key group (a leaf of the storage): the two keyed
//! encodings (`KeyedSnapshot`, `KeyedBytesSnapshot`) split into their key
//! groups' bytes and joined back.

use std::rc::Rc;

/// How a member's state is keyed, for splitting it into key groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyedLayout {
    /// `(key, value)` varint pairs per key group (`StateLayout::Keyed`).
    Pairs,
    /// Opaque bytes per key group (`StateLayout::KeyedBytes`).
    Bytes,
}

/// A keyed snapshot's key groups as byte strings (each group's whole
/// encoding: its key group, its length, its entries), or `None` if the
/// bytes are not such a snapshot (every value is read as the
/// `KeyedSnapshot` and `KeyedBytesSnapshot` encodings write it).
pub fn split_groups(state: &[u8], layout: KeyedLayout) -> Option<Vec<(u32, &[u8])>> {
    let mut at = 0;
    let n = varint(state, &mut at)?;
    let mut out = Vec::with_capacity(usize::try_from(n).ok()?.min(state.len()));
    for _ in 0..n {
        let from = at;
        let kg = u32::try_from(varint(state, &mut at)?).ok()?;
        let len = varint(state, &mut at)?;
        match layout {
            KeyedLayout::Pairs => {
                for _ in 0..len {
                    varint(state, &mut at)?;
                    varint(state, &mut at)?;
                }
            }
            KeyedLayout::Bytes => {
                at = at.checked_add(usize::try_from(len).ok()?)?;
                if at > state.len() {
                    return None;
                }
            }
        }
        out.push((kg, &state[from..at]));
    }
    (at == state.len()).then_some(out)
}

/// The snapshot holding these key groups' encodings (in key group order).
pub fn join_groups(groups: &[Rc<[u8]>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(10 + groups.iter().map(|g| g.len()).sum::<usize>());
    let mut n = groups.len() as u64;
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    for g in groups {
        out.extend_from_slice(g);
    }
    out
}

/// A LEB128 varint at `at` (advanced past it).
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..70).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(n);
        }
    }
    None
}

/// The bytes a log of per-key changes holds for a key group that went from
/// `old` to `new` (each a group's whole encoding, as [`split_groups`] cuts
/// it): with `(key, value)` pairs, each key whose value is new or changed
/// costs its key and value, each key removed its key — the last update of
/// each changed key, as Flink's changelog logs a `put` or a `remove`; with
/// opaque bytes (or an encoding that does not read), the whole new group.
pub fn changed_bytes(old: Option<&[u8]>, new: &[u8], layout: Option<KeyedLayout>) -> u64 {
    let whole = new.len() as u64;
    if layout != Some(KeyedLayout::Pairs) {
        return whole;
    }
    let (Some(new_pairs), Some(old_pairs)) = (pairs(new), old.map_or(Some(Vec::new()), pairs))
    else {
        return whole;
    };
    let old: std::collections::BTreeMap<&[u8], &[u8]> = old_pairs.into_iter().collect();
    let mut kept = std::collections::BTreeSet::new();
    let mut bytes = 0u64;
    for (k, v) in new_pairs {
        if old.get(k) != Some(&v) {
            bytes += (k.len() + v.len()) as u64;
        }
        kept.insert(k);
    }
    let removed = old.keys().filter(|k| !kept.contains(*k));
    bytes + removed.map(|k| k.len() as u64).sum::<u64>()
}

/// A `Pairs` group's `(key, value)` encodings (an empty group: none).
fn pairs(group: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    if group.is_empty() {
        return Some(Vec::new());
    }
    let mut at = 0;
    varint(group, &mut at)?; // its key group
    let len = varint(group, &mut at)?;
    let mut out = Vec::with_capacity(usize::try_from(len).ok()?.min(group.len()));
    for _ in 0..len {
        let k = at;
        varint(group, &mut at)?;
        let v = at;
        varint(group, &mut at)?;
        out.push((&group[k..v], &group[v..at]));
    }
    (at == group.len()).then_some(out)
}
