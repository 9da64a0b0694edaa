//! The sinks in the oracle: never run, their schedules counted. What a
//! sink task read before the snapshot of the last checkpoint it was
//! notified of (or restored from) is promised; an upsert sink's table
//! follows its reading order.

use super::queues::Queues;
use super::{Exec, Oracle};
use crate::model::Record;
use crate::runtime::schedule::Step;
use std::collections::BTreeMap;

/// The records of `runs` (`(channel, from, n)`), in order.
fn read_runs<'a>(
    queues: &'a Queues,
    runs: &'a [(u32, usize, usize)],
) -> impl Iterator<Item = &'a Record> + 'a {
    runs.iter()
        .flat_map(|&(ch, from, n)| queues.range(ch, from, n))
}

impl Exec<'_> {
    /// A sink task's schedule, counted, not run: what it read before the
    /// snapshot of the last checkpoint it was notified of (or restored
    /// from) is promised. A Sink V2 writer's checkpoints are known from
    /// its committer's schedule (`commits`): the committer commits.
    pub(super) fn replay_sink(
        &mut self,
        t: usize,
        slot: usize,
        steps: &[Step],
        commits: Option<&[Step]>,
        oracle: &mut Oracle,
    ) {
        let inputs = self.exec.tasks[t].inputs.clone();
        // What the sink read, in order, as runs `(channel, from, n)` of its
        // channels' queues (read in place, not copied).
        let mut runs: Vec<(u32, usize, usize)> = Vec::new();
        let mut cursor = vec![0usize; inputs.len()];
        let mut total = 0;
        let mut marks: BTreeMap<u64, usize> = BTreeMap::new();
        let mut known = 0;
        // `known` before the last notification or restore, for `Untaken`.
        let mut before = 0;
        for &step in steps {
            match step {
                Step::Read { input, n } => {
                    let Some(&ch) = inputs.get(input as usize) else {
                        continue;
                    };
                    let at = &mut cursor[input as usize];
                    let left = self.queues.len(ch) - *at;
                    let n = usize::try_from(n).unwrap_or(usize::MAX).min(left);
                    if n > 0 {
                        runs.push((ch, *at, n));
                        *at += n;
                        total += n;
                    }
                }
                Step::Snapshot(id) => {
                    marks.insert(id, total);
                }
                Step::Complete(id) if commits.is_none() => {
                    (before, known) = (known, known.max(id));
                    oracle.sink_notifications += 1;
                }
                Step::Restart(Some(id)) if commits.is_none() => {
                    (before, known) = (known, known.max(id))
                }
                Step::Untaken if commits.is_none() => known = before,
                _ => {}
            }
        }
        for &step in commits.unwrap_or_default() {
            match step {
                Step::Complete(id) => {
                    (before, known) = (known, known.max(id));
                    oracle.sink_notifications += 1;
                }
                Step::Restart(Some(id)) => (before, known) = (known, known.max(id)),
                Step::Untaken => known = before,
                _ => {}
            }
        }
        if oracle.upsert[slot] {
            // The table follows the sink's reading order; whatever the
            // schedule never read is read after it, channel after channel.
            let table = oracle.upsert_tables.entry(oracle.sinks[slot]).or_default();
            let queues = &self.queues;
            let rest = inputs
                .iter()
                .zip(&cursor)
                .flat_map(|(&ch, &at)| queues.range(ch, at, usize::MAX));
            for r in read_runs(queues, &runs).chain(rest) {
                if r.is_element() {
                    continue;
                }
                table.insert(r.key, (r.value, r.payload));
            }
        }
        let Some((_, &upto)) = marks.range(..=known).next_back() else {
            return;
        };
        for r in read_runs(&self.queues, &runs).take(upto) {
            if let Some(i) = oracle.slot_index(slot, r.lineage) {
                oracle.promised[i] += 1;
            }
        }
    }
}
