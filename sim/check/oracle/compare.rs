//! The oracle's comparisons: committed output against the expected
//! output (by lineage, then by value digest), the commit promise of sink
//! tasks, and final keyed state; each example says where the record went.

use super::{MultisetDigest, Oracle, OutputDiff, MAX_EXAMPLES, VALUES_DIFFER};
use crate::model::Payload;
use crate::runtime::RunOutput;
use crate::verdict::{CheckId, Violation};
use std::collections::BTreeMap;

impl Oracle {
    /// The commit check's end part: every record a sink task read before
    /// the snapshot of the last checkpoint it was notified of (or restored
    /// from) is committed, whatever the ending (a cancel, a stop without
    /// drain, a failed job). Returns the violations and how many records
    /// were promised.
    pub fn compare_promised(&self, run: &RunOutput) -> (Vec<Violation>, u64) {
        if self.promised.is_empty() {
            return (Vec::new(), 0);
        }
        let mut actual = vec![0u32; self.expected.len()];
        for r in run.store.committed().iter() {
            let Some(slot) = self.sinks.iter().position(|&s| s == r.sink) else {
                continue;
            };
            if let Some(i) = self.slot_index(slot, r.lineage) {
                actual[i] += 1;
            }
        }
        let mut missing = 0u64;
        let mut examples = Vec::new();
        let mut promised = 0u64;
        for (i, (&p, &a)) in self.promised.iter().zip(&actual).enumerate() {
            promised += u64::from(p);
            if a < p {
                missing += u64::from(p - a);
                if examples.len() < MAX_EXAMPLES {
                    examples.push(self.describe_in(run, i, a, p));
                }
            }
        }
        let mut violations = Vec::new();
        if missing > 0 {
            violations.push(Violation {
                check: CheckId::Commit,
                time_ns: run.end_time.0,
                message: format!(
                    "never committed: {}, which sink tasks had read before the snapshot of a checkpoint they were notified of (or restored from), e.g. {}",
                    crate::engine::count(missing, "record"),
                    examples.join("; ")
                ),
            });
        }
        (violations, promised)
    }

    /// Compares committed output with the expected output. With
    /// `finished == false` only duplicates count (the run was cut short).
    pub fn compare_output(&self, run: &RunOutput, finished: bool) -> OutputDiff {
        let all: Vec<u64>;
        let below = if finished {
            all = vec![u64::MAX; self.partition_base.len()];
            Some(all.as_slice())
        } else {
            None
        };
        self.compare_output_below(run, below, &[])
    }

    /// Compares committed output with the expected output, counting as lost
    /// only the missing records whose source offset is below `below[p]` for
    /// their partition `p` (everything: `u64::MAX`; nothing: `None`), and
    /// whose lineage is not in the sorted `exempt`.
    pub fn compare_output_below(
        &self,
        run: &RunOutput,
        below: Option<&[u64]>,
        exempt: &[crate::model::Lineage],
    ) -> OutputDiff {
        let finished = below.is_some_and(|b| b.iter().all(|&o| o == u64::MAX));
        let (actual, digest, strays) = self.count_committed(run);
        let mut diff = OutputDiff {
            duplicates: strays,
            losses: 0,
            violations: Vec::new(),
        };
        let mut dup_examples = Vec::new();
        let mut loss_examples = Vec::new();
        // Slot by slot: each slot's counts are `total_records` long.
        let per_slot = self.total_records.max(1);
        let slots = actual.chunks(per_slot).zip(self.expected.chunks(per_slot));
        for (slot, (actual, expected)) in slots.enumerate() {
            if self.upsert[slot] || self.unjudged.contains(&self.sinks[slot]) {
                continue;
            }
            let base = slot * per_slot;
            for (j, (&a, &e)) in actual.iter().zip(expected).enumerate() {
                if a == e {
                    continue;
                }
                let i = base + j;
                if a > e {
                    diff.duplicates += u64::from(a - e);
                    if dup_examples.len() < MAX_EXAMPLES {
                        dup_examples.push(self.describe_in(run, i, a, e));
                    }
                } else if a < e
                    && below.is_some_and(|b| self.is_below(i, b))
                    && (exempt.is_empty() || exempt.binary_search(&self.lineage_of(i)).is_err())
                {
                    diff.losses += u64::from(e - a);
                    if loss_examples.len() < MAX_EXAMPLES {
                        loss_examples.push(self.describe_in(run, i, a, e));
                    }
                }
            }
        }
        if diff.duplicates > 0 {
            diff.violations.push(Violation {
                check: CheckId::ExactlyOnceOutput,
                time_ns: 0,
                message: format!(
                    "{} more than expected (by lineage), e.g. {}",
                    crate::engine::count(diff.duplicates, "committed record"),
                    dup_examples.join("; ")
                ),
            });
        }
        if diff.losses > 0 {
            diff.violations.push(Violation {
                check: CheckId::ExactlyOnceOutput,
                time_ns: 0,
                message: format!(
                    "{} never committed (by lineage), e.g. {}",
                    crate::engine::count(diff.losses, "expected record"),
                    loss_examples.join("; ")
                ),
            });
        }
        if finished
            && diff.violations.is_empty()
            && (run.order_insensitive || self.replayed)
            && !self.duplicating
            && digest != self.digest
        {
            let first = self.first_value_difference(run);
            diff.duplicates += 1;
            diff.losses += 1;
            diff.violations.push(Violation {
                check: CheckId::ExactlyOnceOutput,
                time_ns: 0,
                message: format!("{VALUES_DIFFER}: {first}"),
            });
        }
        diff
    }

    /// The committed records counted per expected slot (a sink and a
    /// source record), the digest of their values, and the strays: records
    /// whose lineage no source record has. Upsert and unjudged sinks are
    /// left out.
    fn count_committed(&self, run: &RunOutput) -> (Vec<u32>, MultisetDigest, u64) {
        let mut actual = vec![0u32; self.expected.len()];
        let mut digest = MultisetDigest::default();
        let mut strays = 0u64;
        for r in run.store.committed().iter() {
            let slot = self.sinks.iter().position(|&s| s == r.sink);
            if slot.is_some_and(|slot| self.upsert[slot]) {
                continue; // judged by its table (`compare_upsert`)
            }
            if self.unjudged.contains(&r.sink) {
                continue;
            }
            match slot.and_then(|slot| self.slot_index(slot, r.lineage)) {
                Some(i) => actual[i] += 1,
                None => strays += 1,
            }
            if !self.lineage_only.contains(&r.sink) {
                digest.add(r.sink, r.key, r.value, r.payload);
            }
        }
        (actual, digest, strays)
    }

    /// Only when the digests differ are the values collected and sorted, to
    /// name the first difference.
    fn first_value_difference(&self, run: &RunOutput) -> String {
        let mut values: Vec<(u32, u64, i64, Payload)> = run
            .store
            .committed()
            .iter()
            .filter(|r| {
                let slot = self.sinks.iter().position(|&s| s == r.sink);
                !slot.is_some_and(|slot| self.upsert[slot]) && !self.lineage_only.contains(&r.sink)
            })
            .map(|r| (r.sink, r.key, r.value, r.payload))
            .collect();
        values.sort_unstable();
        match &self.values {
            Some(expected) => {
                let mut expected = expected.clone();
                expected.sort_unstable();
                values
                    .iter()
                    .zip(&expected)
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| {
                        format!(
                            "committed ({}) where the oracle has ({})",
                            output_value(a),
                            output_value(b)
                        )
                    })
                    .unwrap_or_else(|| {
                        format!(
                            "{} values committed, {} expected",
                            values.len(),
                            expected.len()
                        )
                    })
            }
            None => format!("{} values committed, their digest differs", values.len()),
        }
    }

    fn lineage_of(&self, flat: usize) -> crate::model::Lineage {
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        crate::model::Lineage {
            partition: partition as u32,
            offset: (rest - self.partition_base[partition]) as u64,
        }
    }

    /// The flat index's source offset is below its partition's limit.
    fn is_below(&self, flat: usize, below: &[u64]) -> bool {
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        let offset = (rest - self.partition_base[partition]) as u64;
        below.get(partition).is_some_and(|&l| offset < l)
    }

    /// [`Oracle::describe`], with where the record went in the run: the
    /// transactions that committed it (their attempt tells which replay
    /// wrote each) or, when none did, the transactions that hold it
    /// uncommitted.
    fn describe_in(&self, run: &RunOutput, flat: usize, actual: u32, expected: u32) -> String {
        let what = self.describe(flat, actual, expected);
        let slot = flat / self.total_records.max(1);
        let (sink, lineage) = (self.sinks[slot], self.lineage_of(flat));
        let mut commits = Vec::new();
        // A log sink's records are what a read_committed reader read.
        let log = !run.store.log.topic_offsets(sink).is_empty();
        for (r, txn) in run.store.committed().with_txns() {
            if r.sink == sink && r.lineage == lineage && commits.len() < 4 {
                let at = crate::engine::SimDuration(r.committed_at.0);
                commits.push(match txn {
                    Some(t) => format!("{t} at {at}{}", replay_of(run, t.attempt)),
                    None if log => format!("{at}"),
                    None => format!("a direct write at {at}"),
                });
            }
        }
        if !commits.is_empty() && log {
            let times = commits.join(", ");
            return format!("{what}: in its topic, readable to read_committed from {times}");
        }
        if !commits.is_empty() {
            return format!("{what}: committed by {}", commits.join(", "));
        }
        let held: Vec<String> = run
            .store
            .transactions()
            .filter(|(id, _, records)| {
                id.sink == sink && records.iter().any(|r| r.lineage == lineage)
            })
            .take(4)
            .map(|(id, state, _)| {
                let state = match state {
                    crate::model::store::TxnState::Open => "open",
                    crate::model::store::TxnState::PreCommitted => "pre-committed",
                    crate::model::store::TxnState::Committed => "committed",
                    crate::model::store::TxnState::Aborted => "aborted",
                };
                let ended = match (state, ended_by(run, id.attempt)) {
                    ("committed", _) | (_, None) => String::new(),
                    (_, Some(r)) => format!("; its attempt ended before {}", r.describe()),
                };
                format!("{id} ({state}{ended})")
            })
            .collect();
        let in_log: Vec<String> = (run.store.log.records_of(sink, lineage, 4).into_iter())
            .map(|(tp, offset, id, state)| match id {
                Some(id) => format!(
                    "transaction `{id}` ({state}) at partition {} offset {offset}",
                    tp.partition
                ),
                None => format!("partition {} offset {offset}", tp.partition),
            })
            .collect();
        match (held.is_empty(), in_log.is_empty()) {
            (true, true) => format!(
                "{what}: in no transaction of the sink (lost before it was written{})",
                restarted(run)
            ),
            (true, false) => format!(
                "{what}: in its topic only in {}{}",
                in_log.join(", "),
                restarted(run)
            ),
            (false, _) => format!("{what}: written only into {}", held.join(", ")),
        }
    }

    fn describe(&self, flat: usize, actual: u32, expected: u32) -> String {
        let slot = flat / self.total_records.max(1);
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        let offset = rest - self.partition_base[partition];
        format!(
            "source partition {partition} offset {offset} committed {actual}× at sink `{}` (expected {expected}×)",
            self.name(self.sinks[slot])
        )
    }

    /// Compares final keyed state; returns how many entries were compared.
    pub fn compare_state(&self, run: &RunOutput, out: &mut Vec<Violation>) -> u64 {
        let mut compared = 0;
        for (op, expected) in &self.keyed_state {
            let empty = BTreeMap::new();
            let actual = run.keyed_state.get(op).unwrap_or(&empty);
            compared += expected.len() as u64;
            // Both maps in key order, side by side: keys the oracle has
            // (missing or different in the run) are named first, then keys
            // only the run has.
            let (mut bad, mut extra) = (Vec::new(), Vec::new());
            let mut n = 0;
            let keys_only = self.order_dependent.contains(op);
            let mut a_iter = actual.iter().peekable();
            for (k, e) in expected {
                while let Some((ak, av)) = a_iter.next_if(|(ak, _)| *ak < k) {
                    n += 1;
                    if extra.len() < MAX_EXAMPLES {
                        extra.push(format!("key {ak}: {av} (oracle has no such key)"));
                    }
                }
                let a = a_iter.next_if(|(ak, _)| *ak == k).map(|(_, v)| v);
                let differs = if keys_only { a.is_none() } else { a != Some(e) };
                if differs {
                    n += 1;
                    if bad.len() < MAX_EXAMPLES {
                        bad.push(format!(
                            "key {k}: {} (oracle {e})",
                            a.map_or("missing".into(), |v| v.to_string())
                        ));
                    }
                }
            }
            for (ak, av) in a_iter {
                n += 1;
                if extra.len() < MAX_EXAMPLES {
                    extra.push(format!("key {ak}: {av} (oracle has no such key)"));
                }
            }
            bad.extend(extra);
            bad.truncate(MAX_EXAMPLES);
            if n > 0 {
                let restored = match run.restarts.last() {
                    Some(r) => format!("; the state was last restored by {}", r.describe()),
                    None => String::new(),
                };
                out.push(Violation {
                    check: CheckId::State,
                    time_ns: 0,
                    message: format!(
                        "operator `{}`: its state differs from the oracle's at {}, e.g. {}{restored}",
                        self.name(*op),
                        crate::engine::count(n, "key"),
                        bad.join("; ")
                    ),
                });
            }
        }
        compared
    }
}

/// " (a replay after the restart at … from checkpoint N)" for a
/// transaction of a restarted attempt; nothing for the first attempt.
fn replay_of(run: &RunOutput, attempt: u32) -> String {
    match run.restarts.iter().rev().find(|r| r.attempt == attempt) {
        Some(r) => format!(" (a replay after {})", r.describe()),
        None => String::new(),
    }
}

/// The first restart after `attempt`: the one that ended it.
fn ended_by(run: &RunOutput, attempt: u32) -> Option<&crate::runtime::output::RestartNote> {
    run.restarts.iter().find(|r| r.attempt > attempt)
}

/// "; the run restarted: …" (up to three restarts), or nothing.
fn restarted(run: &RunOutput) -> String {
    if run.restarts.is_empty() {
        return String::new();
    }
    let mut named: Vec<String> = run.restarts.iter().take(3).map(|r| r.describe()).collect();
    if run.restarts.len() > 3 {
        named.push(format!("{} more", run.restarts.len() - 3));
    }
    format!("; the run restarted: {}", named.join(", "))
}

/// One committed value as the verdict names it: a payload by its name.
fn output_value(&(sink, key, value, payload): &(u32, u64, i64, Payload)) -> String {
    match payload.is_none() {
        true => format!("sink {sink}, key {key}, value {value}"),
        false => format!(
            "sink {sink}, key {key}, value {value}, payload {:016x}",
            payload.0
        ),
    }
}
