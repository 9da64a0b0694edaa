//! The output comparison for upsert sinks (`sink-upsert`): effectively-once
//! by key. Repeated writes and rows going back to older values during a
//! replay are what an upsert sink does after a failover; they are counted,
//! not judged. What is judged is the table a finished run leaves: per key,
//! the value of its last write must be the failure-free run's.

use super::Oracle;
use crate::model::Payload;
use crate::runtime::RunOutput;
use crate::scenario::Guarantee;
use crate::verdict::{CheckId, Violation};
use std::collections::{BTreeMap, BTreeSet};

/// What the upsert sinks of a run wrote, against the failure-free run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpsertDiff {
    /// Writes of all upsert sinks.
    pub writes: u64,
    /// Writes beyond the failure-free run's per (sink, lineage): replays.
    /// A write whose lineage the failure-free run does not have counts too.
    pub repeated: u64,
    /// Writes that set a row back to a value it held before: a row already
    /// written from the same lineage, holding another value, overwritten by
    /// that lineage again (a replay going back in time).
    pub regressions: u64,
    /// Finished runs: writes the failure-free run makes that the run never
    /// made (per (sink, lineage)). An intermediate write missing leaves the
    /// table right; a final one does not.
    pub missing: u64,
    /// Finished runs: keys compared (the union of both tables' keys).
    pub keys: u64,
    /// Finished runs: keys whose final value differs (or that one table
    /// lacks).
    pub differing: u64,
    /// One per upsert sink whose finished table differs.
    pub violations: Vec<Violation>,
}

impl UpsertDiff {
    /// The guarantee the upsert output kept. A finished run whose tables
    /// match is exactly-once without repeated or missing writes, else
    /// effectively-once. A table that differs is a duplicated effect
    /// (at-least-once: every write was made, some value is wrong, as when
    /// duplicated state reaches the sink), or broken if writes are missing
    /// too. An unfinished run cannot show its final table: repeated writes
    /// make it effectively-once.
    pub fn guarantee(&self) -> Guarantee {
        match (self.differing > 0, self.missing > 0) {
            (true, false) => Guarantee::AtLeastOnce,
            (true, true) => Guarantee::Broken,
            (false, _) if self.repeated > 0 || self.missing > 0 => Guarantee::EffectivelyOnce,
            (false, _) => Guarantee::ExactlyOnce,
        }
    }
}

const MAX_EXAMPLES: usize = 5;

/// A row of an upsert table while the writes are read: its value and the
/// lineages (partition, offset) written to it so far.
type Row = ((i64, Payload), BTreeSet<(u32, u64)>);
/// A row's value: the record's value and payload.
type Cell = (i64, Payload);

impl Oracle {
    /// Compares the upsert sinks' writes with the failure-free run: `None`
    /// without upsert sinks. Tables and missing writes only when
    /// `finished` (the run's table is final).
    pub fn compare_upsert(&self, run: &RunOutput, finished: bool) -> Option<UpsertDiff> {
        if !self.upsert.contains(&true) {
            return None;
        }
        let mut diff = UpsertDiff::default();
        let mut actual = vec![0u32; self.expected.len()];
        // Per (sink, key): the row's value and the lineages written to it.
        let mut rows: BTreeMap<(u32, u64), Row> = BTreeMap::new();
        for r in run.store.committed().iter() {
            let Some(slot) = self.sinks.iter().position(|&s| s == r.sink) else {
                continue;
            };
            if !self.upsert[slot] {
                continue;
            }
            diff.writes += 1;
            if let Some(i) = self.slot_index(slot, r.lineage) {
                actual[i] += 1;
            } else {
                diff.repeated += 1;
            }
            let lineage = (r.lineage.partition, r.lineage.offset);
            let row = rows.entry((r.sink, r.key)).or_default();
            if row.1.contains(&lineage) && row.0 != (r.value, r.payload) {
                diff.regressions += 1;
            }
            row.0 = (r.value, r.payload);
            row.1.insert(lineage);
        }
        for (i, (&a, &e)) in actual.iter().zip(&self.expected).enumerate() {
            if !self.upsert[i / self.total_records.max(1)] {
                continue;
            }
            if a > e {
                diff.repeated += u64::from(a - e);
            } else if finished && a < e {
                diff.missing += u64::from(e - a);
            }
        }
        if !finished {
            return Some(diff);
        }
        let empty = BTreeMap::new();
        for (slot, &sink) in self.sinks.iter().enumerate() {
            if !self.upsert[slot] {
                continue;
            }
            let expected = self.upsert_tables.get(&sink).unwrap_or(&empty);
            let table: BTreeMap<u64, Cell> = rows
                .range((sink, 0)..=(sink, u64::MAX))
                .map(|(&(_, key), &(value, _))| (key, value))
                .collect();
            // Without the run's schedule, an aggregate whose input values
            // depend on arrival order (a sum of running sums) ends at a
            // value the oracle cannot know: its keys are compared only.
            let (table, expected) = match self.upsert_keys_only.contains(&sink) {
                true => (keys_of(&table), keys_of(expected)),
                false => (table, expected.clone()),
            };
            let (keys, differing, examples) = compare_tables(&table, &expected);
            diff.keys += keys;
            diff.differing += differing;
            if differing > 0 {
                diff.violations.push(Violation {
                    check: CheckId::ExactlyOnceOutput,
                    time_ns: 0,
                    message: format!(
                        "the finished table of upsert sink `{}` differs from the failure-free run's at {differing} of {} ({} missing), e.g. {}",
                        self.name(sink),
                        crate::engine::count(keys, "key"),
                        crate::engine::count(diff.missing, "write"),
                        examples.join("; ")
                    ),
                });
            }
        }
        Some(diff)
    }
}

/// Compares a run's final table with the expected one: keys compared (the
/// union), keys differing, and the first differences described.
pub(crate) fn compare_tables(
    actual: &BTreeMap<u64, Cell>,
    expected: &BTreeMap<u64, Cell>,
) -> (u64, u64, Vec<String>) {
    let keys: BTreeSet<u64> = actual.keys().chain(expected.keys()).copied().collect();
    let mut differing = 0;
    let mut examples = Vec::new();
    for key in &keys {
        let (a, e) = (actual.get(key), expected.get(key));
        if a == e {
            continue;
        }
        differing += 1;
        if examples.len() < MAX_EXAMPLES {
            let show = |v: Option<&Cell>| match v {
                None => "no row".to_string(),
                Some((v, p)) if p.is_none() => format!("{v}"),
                Some((v, p)) => format!("{v} (payload {:016x})", p.0),
            };
            examples.push(format!(
                "key {key} holds {} where the failure-free run has {}",
                show(a),
                show(e)
            ));
        }
    }
    (keys.len() as u64, differing, examples)
}

/// A table with every value 0: its keys only.
fn keys_of(table: &BTreeMap<u64, Cell>) -> BTreeMap<u64, Cell> {
    table.keys().map(|&k| (k, (0, Payload::NONE))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(u64, i64)]) -> BTreeMap<u64, Cell> {
        rows.iter().map(|&(k, v)| (k, (v, Payload::NONE))).collect()
    }

    #[test]
    fn equal_tables_have_no_difference() {
        let t = table(&[(1, 3), (2, 5)]);
        assert_eq!(compare_tables(&t, &t), (2, 0, vec![]));
    }

    #[test]
    fn a_stale_value_a_missing_row_and_an_extra_row_differ() {
        let actual = table(&[(1, 2), (3, 1)]);
        let expected = table(&[(1, 3), (2, 5)]);
        let (keys, differing, examples) = compare_tables(&actual, &expected);
        assert_eq!((keys, differing), (3, 3));
        assert_eq!(
            examples,
            vec![
                "key 1 holds 2 where the failure-free run has 3",
                "key 2 holds no row where the failure-free run has 5",
                "key 3 holds 1 where the failure-free run has no row",
            ]
        );
    }

    #[test]
    fn the_guarantee_follows_the_table_then_the_writes() {
        let mut d = UpsertDiff::default();
        assert_eq!(d.guarantee(), Guarantee::ExactlyOnce);
        d.repeated = 4;
        d.regressions = 2;
        assert_eq!(d.guarantee(), Guarantee::EffectivelyOnce);
        d.differing = 1;
        assert_eq!(d.guarantee(), Guarantee::AtLeastOnce);
        d.missing = 1;
        assert_eq!(d.guarantee(), Guarantee::Broken);
        d.differing = 0;
        assert_eq!(d.guarantee(), Guarantee::EffectivelyOnce);
    }
}
