//! The input data: every source partition's records, generated from the
//! seed's workload stream before the run. Two runs with the same seed (any
//! algorithm, any faults) read identical logs.

use crate::engine::{SimRng, Stream};
use crate::scenario::{KeyDistribution, OperatorKind, Scenario};

pub struct Workload {
    /// `(key, value)` per offset, per global partition.
    partitions: Vec<Vec<(u64, i64)>>,
    /// First global partition index of each operator (unused for non-sources).
    first_partition: Vec<u32>,
}

impl Workload {
    pub fn generate(scenario: &Scenario, seed: u64) -> Workload {
        let mut rng = SimRng::new(seed, Stream::Workload);
        let mut partitions = Vec::new();
        let mut first_partition = Vec::with_capacity(scenario.operators.len());
        for op in &scenario.operators {
            first_partition.push(partitions.len() as u32);
            let OperatorKind::Source(src) = &op.kind else {
                continue;
            };
            let n = src.partitions as u64;
            for p in 0..n {
                let mut log = Vec::with_capacity(src.records_per_partition as usize);
                for offset in 0..src.records_per_partition {
                    let key = match src.key_distribution {
                        KeyDistribution::Uniform => rng.below(src.keys),
                        KeyDistribution::Cyclic => (offset * n + p) % src.keys,
                        KeyDistribution::Skewed => {
                            let u = rng.below(src.keys);
                            rng.below(u + 1)
                        }
                    };
                    let value = if src.value_max <= 1 {
                        1
                    } else {
                        rng.between(1, src.value_max) as i64
                    };
                    log.push((key, value));
                }
                partitions.push(log);
            }
        }
        Workload {
            partitions,
            first_partition,
        }
    }

    pub fn partition(&self, global: u32) -> &[(u64, i64)] {
        &self.partitions[global as usize]
    }

    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    pub fn total_records(&self) -> u64 {
        self.partitions.iter().map(|p| p.len() as u64).sum()
    }

    /// Global partitions read by one source subtask: partition `i` of the
    /// operator goes to subtask `i % parallelism`.
    pub fn partitions_of(&self, operator: u32, subtask: u32, parallelism: u32) -> Vec<u32> {
        let first = self.first_partition[operator as usize];
        let end = self
            .first_partition
            .get(operator as usize + 1)
            .copied()
            .unwrap_or(self.partitions.len() as u32);
        (first..end)
            .filter(|g| (g - first) % parallelism == subtask)
            .collect()
    }
}
