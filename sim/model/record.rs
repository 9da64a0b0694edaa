//! Records, their lineage, and key groups.

use crate::engine::{rng::splitmix64, SimTime};
use serde::{Deserialize, Serialize};

/// Where a record came from: a source partition (global index over all
/// source operators) and the offset within it. Every record derived from a
/// source record carries that record's lineage, so the checker can count how
/// often each input reached committed output.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Lineage {
    pub partition: u32,
    pub offset: u64,
}

/// One stream record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub key: u64,
    pub value: i64,
    pub lineage: Lineage,
    /// Virtual time the source emitted the originating record (for latency).
    pub emitted_at: SimTime,
}

/// The key group of a key: a fixed hash of the key modulo the number of key
/// groups (`max_parallelism`), as Flink's `KeyGroupRangeAssignment` does with
/// murmur hash. Keyed state moves between subtasks only as whole key groups.
#[inline]
pub fn key_group(key: u64, max_parallelism: u32) -> u32 {
    let (h, m) = (splitmix64(key), u64::from(max_parallelism));
    // A mask when the number of key groups is a power of two (the default
    // 128): the same value as `%`, without a division per record.
    (if m.is_power_of_two() {
        h & (m - 1)
    } else {
        h % m
    }) as u32
}

/// The key groups a subtask owns at a parallelism: `start..end`.
pub fn key_group_range(subtask: u32, parallelism: u32, max_parallelism: u32) -> (u32, u32) {
    let (s, p, m) = (
        u64::from(subtask),
        u64::from(parallelism),
        u64::from(max_parallelism),
    );
    // kg * p / m == s  <=>  ceil(s*m/p) <= kg < ceil((s+1)*m/p)
    (
        ((s * m).div_ceil(p)) as u32,
        (((s + 1) * m).div_ceil(p)) as u32,
    )
}

/// The subtask that owns a key group at a given parallelism.
#[inline]
pub fn subtask_for_key_group(key_group: u32, parallelism: u32, max_parallelism: u32) -> u32 {
    (u64::from(key_group) * u64::from(parallelism) / u64::from(max_parallelism)) as u32
}

/// The subtask that owns a key.
#[inline]
pub fn subtask_for_key(key: u64, parallelism: u32, max_parallelism: u32) -> u32 {
    subtask_for_key_group(
        key_group(key, max_parallelism),
        parallelism,
        max_parallelism,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_groups_cover_all_subtasks_contiguously() {
        let max_p = 128;
        for p in 1..=max_p {
            let owners: Vec<u32> = (0..max_p)
                .map(|kg| subtask_for_key_group(kg, p, max_p))
                .collect();
            assert!(owners.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(*owners.last().unwrap(), p - 1);
            assert_eq!(owners[0], 0);
            for s in 0..p {
                let (start, end) = key_group_range(s, p, max_p);
                let mine: Vec<u32> = (0..max_p).filter(|&kg| owners[kg as usize] == s).collect();
                assert_eq!(mine, (start..end).collect::<Vec<_>>(), "p {p} subtask {s}");
            }
        }
        for m in [1, 3, 100, 128, 1000] {
            for key in 0..500u64 {
                let kg = key_group(key, m);
                assert_eq!(u64::from(kg), splitmix64(key) % u64::from(m));
            }
        }
    }
}
