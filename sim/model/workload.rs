//! The input data: every source partition's records, generated from the
//! seed's workload stream before the run. Two runs with the same seed (any
//! algorithm, any faults) read identical logs.

use crate::engine::rng::splitmix64;
use crate::engine::{SimRng, SimTime, Stream};
use crate::scenario::{KeyDistribution, OperatorKind, Scenario};

pub struct Workload {
    /// `(key, value)` per offset, per global partition.
    partitions: Vec<Vec<(u64, i64)>>,
    /// First global partition index of each operator (unused for non-sources).
    first_partition: Vec<u32>,
    /// Per global partition: the most records it offers per second of
    /// virtual time (0: no limit).
    rates: Vec<u64>,
    /// Per global partition: how its records' timestamps are made.
    clocks: Vec<EventClock>,
    /// Per global partition: its records carry payloads (`payloads`).
    payloads: Vec<bool>,
    /// Salt of the timestamps' draws (the seed's [`Stream::EventTimes`]).
    salt: u64,
}

/// How one partition stamps its records with event time (milliseconds):
/// record `o` is at `start + o × step`, less a draw in `0..=jitter`.
#[derive(Clone, Copy, Debug)]
struct EventClock {
    start: i64,
    step: i64,
    jitter: u64,
}

const MS: u64 = 1_000_000;

impl Workload {
    pub fn generate(scenario: &Scenario, seed: u64) -> Workload {
        let mut rng = SimRng::new(seed, Stream::Workload);
        let mut partitions = Vec::new();
        let mut first_partition = Vec::with_capacity(scenario.operators.len());
        let mut rates = Vec::new();
        let mut clocks = Vec::new();
        let mut payloads = Vec::new();
        let salt = SimRng::new(seed, Stream::EventTimes).next_u64();
        for op in &scenario.operators {
            first_partition.push(partitions.len() as u32);
            let OperatorKind::Source(src) = &op.kind else {
                continue;
            };
            let n = src.partitions as u64;
            for p in 0..n {
                rates.push(src.rate_of(p as u32));
                payloads.push(src.payloads);
                // A draw of a hash, not of the workload stream: the keys
                // and values of every seed stay what they were.
                let skew = src.partition_skew.nanos() / MS;
                let global = clocks.len() as u64;
                let late = src.out_of_orderness.nanos() / MS;
                clocks.push(EventClock {
                    start: (late + splitmix64(salt ^ splitmix64(global)) % (skew + 1)) as i64,
                    step: (src.event_time_step.nanos() / MS) as i64,
                    jitter: late,
                });
                let records = src.records_of(p as u32);
                let mut log = Vec::with_capacity(records as usize);
                let hot = u64::from(src.hot_key_percent);
                for offset in 0..records {
                    // Drawn only when asked for: other workloads keep their
                    // streams.
                    let key = if hot > 0 && rng.below(100) < hot {
                        0
                    } else {
                        match src.key_distribution {
                            KeyDistribution::Uniform => rng.below(src.keys),
                            KeyDistribution::Cyclic => (offset * n + p) % src.keys,
                            KeyDistribution::Skewed => {
                                let u = rng.below(src.keys);
                                rng.below(u + 1)
                            }
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
            rates,
            clocks,
            payloads,
            salt,
        }
    }

    /// Whether partition `global`'s records carry payloads.
    pub fn carries_payloads(&self, global: u32) -> bool {
        self.payloads.get(global as usize).copied().unwrap_or(false)
    }

    /// The event timestamp (milliseconds) of partition `global`'s record at
    /// `offset`: a function of the seed, the partition and the offset, so
    /// the same record has the same timestamp in every run and replay.
    pub fn timestamp(&self, global: u32, offset: u64) -> i64 {
        let Some(c) = self.clocks.get(global as usize) else {
            return 0;
        };
        let in_order = c.start.saturating_add(c.step.saturating_mul(offset as i64));
        let late = match c.jitter {
            0 => 0,
            j => splitmix64(self.salt ^ splitmix64((u64::from(global) << 40) ^ offset)) % (j + 1),
        };
        in_order - late as i64
    }

    /// From when partition `global`'s record at `offset` is there to read
    /// (`records_per_second`, `partition_rates`: record `o` of a partition
    /// at rate `r` is there from `o / r` seconds; without a rate, from the
    /// start).
    pub fn ready_at(&self, global: u32, offset: u64) -> SimTime {
        ready_at(
            self.rates.get(global as usize).copied().unwrap_or(0),
            offset,
        )
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
        // Every `parallelism`-th from the subtask's first: linear in what
        // it reads, not in the operator's partitions.
        (first.saturating_add(subtask)..end)
            .step_by(parallelism.max(1) as usize)
            .collect()
    }
}

/// From when the record at `offset` of a partition offering `rate`
/// records per second (0: no limit) is there to read.
pub fn ready_at(rate: u64, offset: u64) -> SimTime {
    match rate {
        0 => SimTime::ZERO,
        rate => {
            let ns = u128::from(offset) * 1_000_000_000;
            SimTime(u64::try_from(ns.div_ceil(u128::from(rate))).unwrap_or(u64::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(extra: &str) -> Scenario {
        let text = format!(
            "version = 1\nname = \"w\"\n[[operators]]\nid = \"s\"\nkind = \"source\"\n\
             parallelism = 2\nrecords_per_partition = 5000\nkeys = 50\n{extra}\n\
             [[operators]]\nid = \"k\"\nkind = \"sink-2pc\"\nparallelism = 1\n\
             [[edges]]\nfrom = \"s\"\nto = \"k\"\npartitioning = \"rebalance\"\n"
        );
        crate::scenario::parse_str(&text, "w.toml").unwrap()
    }

    fn hot_share(w: &Workload) -> f64 {
        let all: Vec<u64> = (0..w.partition_count())
            .flat_map(|p| w.partition(p as u32).iter().map(|&(k, _)| k))
            .collect();
        all.iter().filter(|&&k| k == 0).count() as f64 / all.len() as f64
    }

    #[test]
    fn a_hot_key_carries_its_percent_of_the_records() {
        let plain = Workload::generate(&source(""), 7);
        let zero = Workload::generate(&source("hot_key_percent = 0"), 7);
        assert_eq!(plain.partitions, zero.partitions, "0 draws nothing extra");
        for (percent, low, high) in [(50, 0.47, 0.54), (90, 0.88, 0.92), (100, 1.0, 1.0)] {
            let w = Workload::generate(&source(&format!("hot_key_percent = {percent}")), 7);
            let share = hot_share(&w);
            assert!((low..=high).contains(&share), "{percent}%: {share}");
        }
        assert!(hot_share(&plain) < 0.05);
    }

    #[test]
    fn timestamps_follow_the_step_within_the_disorder_and_the_skew() {
        let plain = Workload::generate(&source(""), 7);
        // By default: one millisecond a record, in order, no skew.
        assert!((0..100).all(|o| plain.timestamp(1, o) == o as i64));
        let keys =
            "event_time_step = \"3ms\"\nout_of_orderness = \"40ms\"\npartition_skew = \"500ms\"";
        let w = Workload::generate(&source(keys), 7);
        assert_eq!(
            w.partitions, plain.partitions,
            "keys and values are unchanged"
        );
        let mut late = 0;
        for p in 0..2u32 {
            let start = w.timestamp(p, 0) - 40;
            let mut max_seen = i64::MIN;
            for o in 0..5000u64 {
                let t = w.timestamp(p, o);
                assert!(t >= 0);
                // Never more than the disorder below the largest before it.
                assert!(
                    t > max_seen.saturating_sub(3 + 40),
                    "partition {p} offset {o}: {t} after {max_seen}"
                );
                late += u64::from(t < max_seen);
                max_seen = max_seen.max(t);
            }
            assert!(
                (-40..=500).contains(&start),
                "partition {p} starts at {start}"
            );
        }
        assert!(late > 1000, "{late} records out of order");
        assert_ne!(
            w.timestamp(0, 0),
            w.timestamp(1, 0),
            "the partitions are skewed"
        );
        // Same seed, same timestamps; another seed, others.
        let again = Workload::generate(&source(keys), 7);
        let other = Workload::generate(&source(keys), 8);
        assert!((0..200).all(|o| w.timestamp(1, o) == again.timestamp(1, o)));
        assert!((0..200).any(|o| w.timestamp(1, o) != other.timestamp(1, o)));
    }
}
