//! The failure-free run's counts by source record, per sink, for a judge
//! outside the simulator (`export::lineage`, a real run's committed lineage).

use super::Oracle;

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
}
