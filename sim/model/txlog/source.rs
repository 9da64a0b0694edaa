//! `source-log`: Flink's Kafka source (`KafkaSource`: its
//! `KafkaSourceReader` and split reader) over a topic of the transactional
//! log ([`super::TxLog`]) that a `sink-log` of the same job writes.
//!
//! - **Splits** are the topic's partitions; partition `p` is read by
//!   subtask `p % parallelism` (Kafka's enumerator assigns a partition to
//!   reader `(start + p) % parallelism`, `start` from the topic's name; here
//!   0). A split's state is the offset to fetch next.
//! - A **fetch** at `now` sees what the broker wrote before `now`
//!   ([`super::TxLog::read_as_of`]): `read_committed` up to the last stable
//!   offset, the data of aborted transactions skipped; `read_uncommitted`
//!   every data record. Nothing to read: the reader fetches again after
//!   `fetch_interval`.
//! - The **snapshot** holds each split's offset and files the offsets
//!   under the checkpoint (`offsetsToCommit`); when the checkpoint
//!   completes, they are **committed** to the reader's consumer group (the
//!   operator's id) and every earlier entry is dropped. Committed offsets
//!   never restore a checkpointed reader: a **fresh start** (no state: the
//!   job's first attempt, or a restart with no completed checkpoint) begins
//!   at the `earliest` offsets or at the group's `committed` ones.
//! - A split ends once the topic is closed (its writer finished) and the
//!   reader has read it to its end; a reader whose splits all ended ends
//!   its input.
//!
//! - A restore at another parallelism deals the splits to the new readers
//!   as Flink's runtime deals the reader's split list state (`rescale.rs`):
//!   a reader may get none; none is assigned twice.
//!
//! Simplified: splits are assigned statically, at the start, without an
//! operator coordinator (the FLIP-27 enumerator is the `source` kind's);
//! a commit of offsets never fails; records keep the key, value, lineage,
//! timestamp and payload they were written with and leave at the fetch's
//! time.

use super::{Isolation, TopicPartition};
use crate::engine::{SimDuration, SimTime};
use crate::model::operator::{decode, encode, CheckpointId, Context, Operator, SourcePoll};
use crate::model::record::Record;
use crate::mutant::Mutant;
use crate::scenario::StartingOffsets;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The settings of one reader.
#[derive(Clone, Debug)]
pub struct LogSourceSpec {
    /// The topic (its writer's operator index) and its partitions.
    pub topic: u32,
    pub partitions: u32,
    /// The consumer group (the operator's id).
    pub group: String,
    pub isolation: Isolation,
    pub starting: StartingOffsets,
    pub fetch_interval: SimDuration,
}

#[derive(Serialize, Deserialize)]
struct LogSourceState {
    /// Per split: the partition and the offset to fetch next.
    splits: Vec<(u32, u64)>,
}

/// The reader (see the module's docs).
pub struct LogSource {
    spec: LogSourceSpec,
    started: bool,
    splits: Vec<(u32, u64)>,
    /// The split the next poll starts with (round robin).
    next: usize,
    /// Per snapshot not yet known complete: its offsets.
    to_commit: BTreeMap<CheckpointId, Vec<(u32, u64)>>,
}

impl LogSource {
    pub fn new(spec: LogSourceSpec) -> LogSource {
        LogSource {
            spec,
            started: false,
            splits: Vec::new(),
            next: 0,
            to_commit: BTreeMap::new(),
        }
    }

    fn tp(&self, partition: u32) -> TopicPartition {
        TopicPartition {
            topic: self.spec.topic,
            partition,
        }
    }

    /// The reader's start: its splits at `restored` offsets, or (a fresh
    /// start) at the starting offsets.
    fn start(&mut self, restored: Option<Vec<(u32, u64)>>, ctx: &mut Context) {
        if self.started {
            return;
        }
        self.started = true;
        let log = &mut ctx.store.log;
        log.create_topic(self.spec.topic, self.spec.partitions);
        self.splits = match restored {
            Some(splits) => splits,
            None => (0..self.spec.partitions)
                .filter(|p| p % ctx.parallelism.max(1) == ctx.subtask)
                .map(|p| {
                    let offset = match self.spec.starting {
                        StartingOffsets::Earliest => 0,
                        StartingOffsets::Committed => {
                            (log.committed_offset(&self.spec.group, self.tp(p))).unwrap_or(0)
                        }
                    };
                    (p, offset)
                })
                .collect(),
        };
    }

    /// Commits the offsets filed under `checkpoint` to the group.
    fn commit(&mut self, offsets: &[(u32, u64)], ctx: &mut Context) {
        for &(p, offset) in offsets {
            let tp = self.tp(p);
            ctx.store.log.commit_offset(&self.spec.group, tp, offset);
            ctx.store.stats.log_offsets_committed += 1;
        }
    }
}

impl Operator for LogSource {
    fn process(&mut self, _record: Record, _ctx: &mut Context) {
        unreachable!("a source has no inputs")
    }

    fn poll_source(&mut self, max_records: usize, ctx: &mut Context) -> SourcePoll {
        self.start(None, ctx);
        ctx.store.log.tick(ctx.now);
        let n = self.splits.len();
        let mut emitted = 0;
        for k in 0..n {
            if emitted >= max_records {
                break;
            }
            let i = (self.next + k) % n;
            let (p, from) = self.splits[i];
            let (records, to) = ctx.store.log.read_as_of(
                self.tp(p),
                from,
                self.spec.isolation,
                max_records - emitted,
                ctx.now,
            );
            self.splits[i].1 = to;
            emitted += records.len();
            for (_, record) in records {
                ctx.emit(Record {
                    emitted_at: ctx.now,
                    ..record
                });
            }
        }
        ctx.store.stats.log_records_fetched += emitted as u64;
        if emitted > 0 {
            // Only a poll that emitted moves the round robin on: the
            // schedule logs those, and the failure-free run replays them.
            self.next = (self.next + 1) % n;
            return SourcePoll::Emitted(emitted);
        }
        let log = &ctx.store.log;
        let ended = (self.splits.iter()).all(|&(p, at)| log.read_to_end(self.tp(p), at, ctx.now));
        if ended && log.closed_as_of(self.spec.topic, ctx.now) {
            return SourcePoll::Exhausted;
        }
        SourcePoll::IdleUntil(SimTime(
            ctx.now.0.saturating_add(self.spec.fetch_interval.nanos()),
        ))
    }

    fn snapshot(&mut self, checkpoint: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.start(None, ctx);
        let splits = self.splits.clone();
        if ctx.mutant(Mutant::SourceOffsetsCommittedEarly) {
            // Mutant: the offsets go to the group at the snapshot, before
            // the checkpoint is known complete.
            self.commit(&splits, ctx);
        } else {
            self.to_commit.insert(checkpoint, splits.clone());
        }
        encode(&LogSourceState { splits })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if state.is_empty() {
            self.start(None, ctx);
            return Ok(());
        }
        let state: LogSourceState = decode(state, "source-log")?;
        self.start(Some(state.splits), ctx);
        Ok(())
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: CheckpointId, ctx: &mut Context) {
        if let Some(offsets) = self.to_commit.get(&checkpoint).cloned() {
            self.commit(&offsets, ctx);
        }
        self.to_commit.retain(|&c, _| c > checkpoint);
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const SourceOffsetsCommittedEarly: Mutant = Mutant::declare(&MutantInfo {
            name: "source-offsets-committed-early",
            part: "log source",
            what: "the log source commits its offsets to its consumer group at the snapshot instead of when the checkpoint completes: a restart before any checkpoint completed starts from offsets whose records no committed output holds, and they are lost",
            modelled_on: "KafkaSourceReader, which files the offsets under the checkpoint at snapshotState and commits them only in notifyCheckpointComplete (offsets committed earlier are a known way to lose data with OffsetsInitializer.committedOffsets)",
            caught_by: "exactly-once-output",
            applies: &[("log-offsets", "aligned")],
        });
    }
}
