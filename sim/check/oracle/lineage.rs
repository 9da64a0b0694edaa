//! Lineages in the oracle: the failure-free run's counts by source record,
//! per sink, for a judge outside the simulator (`export::lineage`, a real
//! run's committed lineage), and the sinks whose lineages a replayed
//! duplicate may move.

use super::{Oracle, Unjudged};
use crate::model::JobGraph;
use crate::scenario::Scenario;

impl Oracle {
    /// How often each source record reaches sink `sink` (an operator
    /// index) in the failure-free run: `(partition, offset, count)` for
    /// every count above zero, in lineage order.
    pub fn expected_by_lineage(&self, sink: u32) -> Vec<(u32, u64, u32)> {
        let Some(slot) = self.sinks.iter().position(|&s| s == sink) else {
            return vec![];
        };
        let mut out = Vec::new();
        for p in 0..self.partition_base.len() as u32 {
            let base = self.partition_base[p as usize];
            for i in base..self.partition_end(p) {
                let n = self.expected[slot * self.total_records + i];
                if n > 0 {
                    out.push((p, (i - base) as u64, n));
                }
            }
        }
        out
    }

    /// The run may duplicate (its expected guarantee is at-least-once) and
    /// replayed records: the sinks below an operator whose output lineages
    /// depend on arrival order are not judged (their lineages moved), the
    /// verdict says so instead of calling the output broken, and values
    /// are not compared (a duplicate's effect on state changes later
    /// values: that is what at-least-once allows).
    pub fn duplicates_reorder(&mut self) {
        self.duplicating = true;
        for (slot, &sink) in self.sinks.iter().enumerate() {
            if !self.upsert[slot] && self.reorderable.contains(&sink) {
                self.unjudged.insert(sink);
                self.unjudged_why
                    .entry(sink)
                    .or_insert(Unjudged::DuplicatesReordered);
            }
        }
        self.merge_digests();
    }

    /// The sinks downstream (through any path) of an operator whose output
    /// lineages depend on arrival order.
    pub(super) fn mark_reorderable(
        &mut self,
        scenario: &Scenario,
        job: &JobGraph,
        moves_lineage: &[bool],
    ) {
        // In topological order, each operator passes on what it is below
        // or does itself: linear in the job's size.
        let n = scenario.operators.len();
        let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in scenario.edges.iter().filter(|e| !e.feedback) {
            out[e.from.0 as usize].push(e.to.0 as usize);
        }
        let mut below = vec![false; n];
        for &op in &job.topo {
            let op = op.0 as usize;
            if below[op] || moves_lineage[op] {
                for &to in &out[op] {
                    below[to] = true;
                }
            }
        }
        for &sink in &self.sinks {
            if below[sink as usize] {
                self.reorderable.insert(sink);
            }
        }
    }
}
