//! `count-window`: a count window per key, its open windows in keyed state
//! of its own encoding.

use super::*;
use crate::engine::SimTime;
use crate::model::operator::{
    decode, encode, keyed_byte_groups, keyed_byte_state, CheckpointId, Context,
};
use crate::model::record::{key_group, Lineage, Payload, Record};
use crate::mutant::Mutant;
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::hash::BuildHasherDefault;

/// The timestamp of a count window's result: Flink's count windows are
/// `GlobalWindows`, whose `maxTimestamp()` is `Long.MAX_VALUE`.
const GLOBAL_WINDOW_END: i64 = i64::MAX;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "count-window",
        description:
            "per-key count window of `size` records in key groups; emits (key, window sum), \
                      flushes open windows at end of input",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::KeyedBytes,
    create: |s| match *s.kind {
        OperatorKind::CountWindow { size } => Box::new(CountWindow::new(size)),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::CountWindow { size } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "keyed ListState, open windows flushed at endInput".into(),
            java: Java::Op {
                kind: "COUNT_WINDOW",
                a: i64::from(size),
                b: 0,
            },
        },
        ref k => not_mine(k),
    },
};

/// One key's count window: records in the open window, their sum, the last
/// record's lineage and emit time (what a flushed window carries), and the
/// records the key has seen in all (its keyed state for the checker).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Window {
    seen: i64,
    open: u32,
    sum: i64,
    last: Lineage,
    last_emitted: u64,
}

/// The keys of one key group of a count window's state, each with the
/// lineage its window carries (an error if the bytes do not decode).
pub fn count_window_entries(bytes: &[u8]) -> Result<Vec<(u64, Lineage)>, String> {
    let entries: Vec<(u64, Window)> = decode(bytes, "count-window")?;
    Ok(entries.into_iter().map(|(k, w)| (k, w.last)).collect())
}

/// A count window per key: every `size` records of a key it emits their sum
/// with the lineage of the record that closed the window; at end of input
/// it flushes every open window with the lineage of its last record. What
/// an open window holds is in the snapshot, so a restore neither loses nor
/// repeats a window.
pub struct CountWindow {
    size: u32,
    windows: IndexMap<u64, Window, BuildHasherDefault<rustc_hash::FxHasher>>,
}

impl CountWindow {
    pub fn new(size: u32) -> CountWindow {
        CountWindow {
            size: size.max(1),
            windows: IndexMap::default(),
        }
    }
}

impl Operator for CountWindow {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let w = self.windows.entry(record.key).or_default();
        w.seen += 1;
        w.open += 1;
        w.sum = w.sum.wrapping_add(record.value);
        w.last = record.lineage;
        w.last_emitted = record.emitted_at.0;
        if w.open >= self.size {
            let sum = w.sum;
            w.open = 0;
            w.sum = 0;
            ctx.emit(Record {
                value: sum,
                timestamp: GLOBAL_WINDOW_END,
                ..record
            });
        }
    }

    fn end_of_input(&mut self, ctx: &mut Context) {
        if ctx.mutant(Mutant::WindowNoFlushAtEnd) {
            return; // Mutant: the open windows are never emitted.
        }
        let mut keys: Vec<u64> = self
            .windows
            .iter()
            .filter(|(_, w)| w.open > 0)
            .map(|(&k, _)| k)
            .collect();
        keys.sort_unstable();
        for key in keys {
            let w = &mut self.windows[&key];
            let (sum, lineage, at) = (w.sum, w.last, w.last_emitted);
            w.open = 0;
            w.sum = 0;
            ctx.emit(Record {
                key,
                value: sum,
                lineage,
                emitted_at: SimTime(at),
                timestamp: GLOBAL_WINDOW_END,
                payload: Payload::NONE,
            });
        }
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        let mut groups: BTreeMap<u32, Vec<(u64, Window)>> = BTreeMap::new();
        for (&k, &w) in &self.windows {
            groups
                .entry(key_group(k, ctx.max_parallelism))
                .or_default()
                .push((k, w));
        }
        let key_groups = groups
            .into_iter()
            .map(|(kg, mut entries)| {
                entries.sort_unstable_by_key(|(k, _)| *k);
                (kg, encode(&entries))
            })
            .collect();
        keyed_byte_state(key_groups)
    }

    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        let groups = keyed_byte_groups(state)
            .ok_or_else(|| "cannot decode count-window state".to_string())?;
        self.windows.clear();
        for (kg, bytes) in groups {
            let entries: Vec<(u64, Window)> =
                decode(&bytes, "count-window").map_err(|e| format!("key group {kg}: {e}"))?;
            self.windows.extend(entries);
        }
        Ok(())
    }

    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.windows.iter().map(|(&k, w)| (k, w.seen)).collect()
    }

    fn order_insensitive_output(&self) -> bool {
        false // which records share a window depends on arrival order
    }
}
