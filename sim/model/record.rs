//! Records, their lineage, and key groups.

use crate::engine::{rng::splitmix64, SimRng, SimTime, Stream};
use crate::scenario::{OperatorKind, Scenario, RECORD_BYTES};
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

impl Lineage {
    /// The partition named by a stream element that is not a record: a
    /// watermark travelling among a channel's records
    /// ([`Record::watermark`]). No source has it.
    pub const ELEMENT: u32 = u32::MAX;
}

/// One stream record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub key: u64,
    pub value: i64,
    pub lineage: Lineage,
    /// Virtual time the source emitted the originating record (for latency).
    pub emitted_at: SimTime,
    /// The record's event timestamp in milliseconds (Flink's
    /// `StreamRecord.getTimestamp`): a source record's from its partition
    /// (`Workload::timestamp`); a derived record keeps its input's unless
    /// the operator sets another (a window's result, its window's end).
    pub timestamp: i64,
    /// A value of the user's own type, if an operator attached one
    /// ([`crate::model::Context::payload`]); sources attach none.
    pub payload: Payload,
}

/// A record's payload: the serialised bytes of a value of the user's type,
/// named by their content. The bytes live in the run's payload table
/// ([`crate::model::payload::Payloads`], kept with the external store so
/// that it survives crashes and travels in savepoints); a record carries
/// only the name, so records stay small and copyable, and two records
/// with equal payloads have equal names in the simulation and the oracle
/// alike.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Payload(pub u64);

impl Record {
    /// A watermark as a stream element (Flink serialises a `Watermark`
    /// into the same buffers as records): it keeps its place among the
    /// records of a channel, has a sequence number like them, and is
    /// captured, restored and logged with them; the tasks and the oracle
    /// take it out of the stream before any operator sees it
    /// (docs/event-time.md).
    pub const fn watermark(timestamp: i64) -> Record {
        Record {
            key: 0,
            value: 0,
            lineage: Lineage {
                partition: Lineage::ELEMENT,
                offset: 0,
            },
            emitted_at: SimTime(u64::MAX),
            timestamp,
            payload: Payload::NONE,
        }
    }

    /// A watermark status as a stream element (Flink's `WatermarkStatus`,
    /// serialised among the records like a watermark): `idle` marks the
    /// channel's sender idle, else active again.
    pub const fn watermark_status(idle: bool) -> Record {
        let mut r = Record::watermark(0);
        r.lineage.offset = if idle { Element::IDLE } else { Element::ACTIVE };
        r
    }

    /// Whether this is a stream element (a watermark or a watermark
    /// status), not a record.
    #[inline]
    pub fn is_element(&self) -> bool {
        self.lineage.partition == Lineage::ELEMENT && self.emitted_at.0 == u64::MAX
    }

    /// The stream element this is, if it is one.
    #[inline]
    pub fn element(&self) -> Option<Element> {
        if !self.is_element() {
            return None;
        }
        Some(match self.lineage.offset {
            Element::IDLE => Element::Status { idle: true },
            Element::ACTIVE => Element::Status { idle: false },
            _ => Element::Watermark(self.timestamp),
        })
    }
}

/// A stream element that is not a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    Watermark(i64),
    /// A watermark status: idle, or active again.
    Status {
        idle: bool,
    },
}

impl Element {
    /// The lineage offsets that mark a status element.
    const IDLE: u64 = 1;
    const ACTIVE: u64 = 2;
}

impl Payload {
    /// No payload.
    pub const NONE: Payload = Payload(0);

    pub fn is_none(self) -> bool {
        self == Payload::NONE
    }
}

/// The size in bytes of every record, by its lineage: a record derived from
/// a source record (a map's output, a count, a flat-map copy) has that
/// record's size. A source with a size range gives each record a size
/// uniform in it, from a hash of the seed's [`Stream::RecordSizes`] value,
/// the partition and the offset: the same record has the same size on
/// replay, and no other stream moves.
#[derive(Clone, Debug)]
pub struct RecordSizes {
    salt: u64,
    /// Per global source partition: the smallest and largest size.
    ranges: Vec<(u64, u64)>,
    /// Every record has this size (no lookups).
    fixed: Option<u64>,
}

impl RecordSizes {
    pub fn new(scenario: &Scenario, seed: u64) -> RecordSizes {
        let mut ranges = Vec::new();
        for op in &scenario.operators {
            if let OperatorKind::Source(src) = &op.kind {
                let range = (src.record_size, src.record_size_max);
                ranges.extend(std::iter::repeat_n(range, src.partitions as usize));
            }
        }
        let fixed = match ranges.first() {
            None => Some(RECORD_BYTES),
            Some(&(lo, hi)) if lo == hi && ranges.iter().all(|&r| r == (lo, hi)) => Some(lo),
            Some(_) => None,
        };
        RecordSizes {
            salt: SimRng::new(seed, Stream::RecordSizes).next_u64(),
            ranges,
            fixed,
        }
    }

    /// Every record has `size` bytes.
    pub fn uniform(size: u64) -> RecordSizes {
        RecordSizes {
            salt: 0,
            ranges: Vec::new(),
            fixed: Some(size),
        }
    }

    /// The size of a record of this lineage ([`RECORD_BYTES`] for a
    /// partition no source has).
    #[inline]
    pub fn of(&self, lineage: Lineage) -> u64 {
        if let Some(n) = self.fixed {
            return n;
        }
        match self.ranges.get(lineage.partition as usize) {
            None => RECORD_BYTES,
            Some(&(lo, hi)) if lo == hi => lo,
            Some(&(lo, hi)) => {
                let h = splitmix64(self.salt ^ splitmix64(u64::from(lineage.partition)));
                lo + splitmix64(h ^ lineage.offset) % (hi - lo + 1)
            }
        }
    }

    /// The bytes of these records.
    pub fn total(&self, records: &[Record]) -> u64 {
        match self.fixed {
            Some(n) => n * records.len() as u64,
            None => records.iter().map(|r| self.of(r.lineage)).sum(),
        }
    }

    /// The size of every record, if all have one.
    pub fn fixed(&self) -> Option<u64> {
        self.fixed
    }
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

    fn job(sizes: &str) -> Scenario {
        let text = format!(
            "version = 1\nname = \"s\"\n[[operators]]\nid = \"a\"\nkind = \"source\"\nparallelism = 2\n{sizes}\n\
             [[operators]]\nid = \"b\"\nkind = \"source\"\nparallelism = 1\n\
             [[operators]]\nid = \"k\"\nkind = \"sink-2pc\"\nparallelism = 1\n\
             [[edges]]\nfrom = \"a\"\nto = \"k\"\npartitioning = \"rebalance\"\n\
             [[edges]]\nfrom = \"b\"\nto = \"k\"\npartitioning = \"rebalance\"\n"
        );
        crate::scenario::parse_str(&text, "s.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn record_sizes_follow_the_sources_and_the_seed() {
        let l = |partition, offset| Lineage { partition, offset };
        // No size keys: every record is RECORD_BYTES, with no lookup.
        let plain = RecordSizes::new(&job(""), 1);
        assert_eq!(plain.fixed(), Some(RECORD_BYTES));
        assert_eq!(plain.of(l(2, 7)), RECORD_BYTES);
        // A range on source `a` (partitions 0 and 1); `b` (partition 2) keeps
        // the default; an unknown partition counts the default too.
        let s = job("record_size = 100\nrecord_size_max = 199");
        let (x, y) = (RecordSizes::new(&s, 1), RecordSizes::new(&s, 2));
        assert_eq!(x.fixed(), None);
        let sizes: Vec<u64> = (0..2000).map(|o| x.of(l(o % 2, u64::from(o)))).collect();
        assert!(sizes.iter().all(|n| (100..=199).contains(n)));
        let distinct: std::collections::BTreeSet<_> = sizes.iter().collect();
        assert!(distinct.len() > 90, "{} distinct sizes", distinct.len());
        let mean = sizes.iter().sum::<u64>() / sizes.len() as u64;
        assert!((140..=159).contains(&mean), "mean {mean}");
        assert_eq!(x.of(l(2, 5)), RECORD_BYTES);
        assert_eq!(x.of(l(9, 5)), RECORD_BYTES);
        // The same record has the same size; another seed, other sizes.
        assert_eq!(x.of(l(1, 33)), RecordSizes::new(&s, 1).of(l(1, 33)));
        assert!((0..100).any(|o| x.of(l(0, o)) != y.of(l(0, o))));
        let r = |partition, offset| Record {
            key: 0,
            value: 0,
            lineage: l(partition, offset),
            ..Record::default()
        };
        assert_eq!(x.total(&[r(0, 1), r(2, 1)]), x.of(l(0, 1)) + RECORD_BYTES);
        // One size everywhere is fixed.
        let one = RecordSizes::new(&job("record_size = \"1KiB\""), 3);
        assert_eq!(one.fixed(), None, "source b keeps 32 bytes");
        assert_eq!(one.of(l(1, 4)), 1024);
        assert_eq!(one.total(&[r(0, 1), r(1, 2)]), 2048);
    }

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
