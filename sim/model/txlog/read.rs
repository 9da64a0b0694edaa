//! Reading the log as a consumer saw it at a time, and topics that end.
//!
//! A consumer's fetch at `now` sees what the broker had written **before**
//! `now` (entries stamped earlier; what is written at the same instant
//! arrives with the next fetch). Reading as of a time on the log a run
//! left gives the failure-free run (the oracle) exactly what the run's
//! readers saw when they polled: entries are stamped with the broker's
//! clock, every transaction keeps its end (marker offset, commit or abort,
//! time), so the last stable offset as of any earlier time is known.
//!
//! A topic is **closed** while every subtask of the operator writing it
//! has finished (the runtime says when, and when a restore redeploys one):
//! a reader that has read a closed topic's partitions to their end has
//! read them all (Kafka's bounded reads stop at offsets taken when the
//! writing job had finished).

use super::{Entry, Isolation, PartitionLog, ProducerId, TopicPartition, TxLog};
use crate::engine::SimTime;
use crate::model::record::Record;

/// Where a transactional entry's transaction stands as of a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxnAsOf {
    Open,
    Committed,
    Aborted,
}

impl PartitionLog {
    /// The transaction of `producer`'s data entry at `offset` as of `now`
    /// (its end only if stamped before `now`), and whether it ever ended
    /// aborted.
    fn txn_as_of(&self, producer: ProducerId, offset: u64, now: SimTime) -> (TxnAsOf, bool) {
        let end = (self.ended.range((producer, 0)..=(producer, offset)))
            .next_back()
            .map(|(_, &end)| end)
            .filter(|&(marker, _, _)| marker > offset);
        let ever_aborted = end.is_some_and(|(_, commit, _)| !commit);
        let as_of = match end {
            Some((_, true, at)) if at < now => TxnAsOf::Committed,
            Some((_, false, at)) if at < now => TxnAsOf::Aborted,
            _ => TxnAsOf::Open,
        };
        (as_of, ever_aborted)
    }
}

impl TxLog {
    /// This log as the failure-free run reads it (see the field), its
    /// consumer groups without offsets (its readers commit their own), its
    /// brokers without faults.
    pub fn into_failure_free(mut self) -> TxLog {
        self.failure_free = true;
        self.offsets.clear();
        // No broker fails in the failure-free run: its producers' requests
        // are answered at once.
        self.clear_broker_state();
        self
    }

    /// Reads `tp` from `from` as a consumer fetching at `now` does, at
    /// most `max` data records: each with its offset, and the offset to
    /// fetch from next (past skipped entries; at a `read_committed`
    /// reader's last stable offset it stops).
    pub fn read_as_of(
        &self,
        tp: TopicPartition,
        from: u64,
        isolation: Isolation,
        max: usize,
        now: SimTime,
    ) -> (Vec<(u64, Record)>, u64) {
        let Some(log) = self.partitions.get(&tp) else {
            return (Vec::new(), from);
        };
        let mut out = Vec::new();
        let mut at = from;
        while (at as usize) < log.entries.len() && out.len() < max {
            match log.entries[at as usize] {
                Entry::Marker { at: t, .. } if t >= now => break,
                Entry::Marker { .. } => {}
                Entry::Data { at: t, .. } if t >= now => break,
                Entry::Data {
                    producer: None,
                    record,
                    ..
                } => out.push((at, record)),
                Entry::Data {
                    producer: Some(p),
                    record,
                    ..
                } => {
                    let (as_of, ever_aborted) = log.txn_as_of(p.id, at, now);
                    match isolation {
                        Isolation::ReadCommitted => match as_of {
                            TxnAsOf::Committed => out.push((at, record)),
                            TxnAsOf::Aborted => {}
                            // The last stable offset as of `now`.
                            TxnAsOf::Open => break,
                        },
                        Isolation::ReadUncommitted => {
                            if !(self.failure_free && ever_aborted) {
                                out.push((at, record));
                            }
                        }
                    }
                }
            }
            at += 1;
        }
        (out, at)
    }

    /// The number of partitions of `topic` (0: no such topic yet).
    pub fn partition_count(&self, topic: u32) -> u32 {
        let first = TopicPartition {
            topic,
            partition: 0,
        };
        (self.partitions.range(first..))
            .take_while(|(tp, _)| tp.topic == topic)
            .count() as u32
    }

    /// Whether a consumer fetching at `now` has read all of `tp` at
    /// `position`: the topic was closed before `now`, and nothing lies at
    /// or after `position`.
    pub fn read_to_end(&self, tp: TopicPartition, position: u64, now: SimTime) -> bool {
        self.closed_as_of(tp.topic, now) && position >= self.high_watermark(tp)
    }

    /// Whether `topic` was closed as of `now` (closed before it, not
    /// reopened before it).
    pub fn closed_as_of(&self, topic: u32, now: SimTime) -> bool {
        (self.closed.get(&topic).into_iter().flatten())
            .any(|&(from, until)| from < now && until.is_none_or(|u| now <= u))
    }

    /// The log as a job restored from a snapshot of another run finds it:
    /// that job's clock starts again at zero, and everything written
    /// before it started is there from its start (every entry, marker and
    /// ended transaction as of zero, an ongoing transaction's timeout
    /// counted from zero: a little longer than the broker's, which counts
    /// the time between the runs too); its writers run again, so no topic
    /// is closed. Without it a reader of the restored job would see the
    /// earlier run's records only once its clock passed their times, and a
    /// topic closed when the earlier job stopped as closed while the new
    /// one writes it.
    pub fn carry_into_new_job(&mut self) {
        for log in self.partitions.values_mut() {
            for e in &mut log.entries {
                match e {
                    Entry::Data { at, .. } | Entry::Marker { at, .. } => *at = SimTime::ZERO,
                }
            }
            for ended in log.ended.values_mut() {
                ended.2 = SimTime::ZERO;
            }
        }
        for meta in self.txns.values_mut() {
            if meta.started_at.is_some() {
                meta.started_at = Some(SimTime::ZERO);
            }
        }
        self.now = SimTime::ZERO;
        self.closed.clear();
    }

    /// The topic's writer has finished, at `now` (nothing if closed).
    pub fn close_topic(&mut self, topic: u32, now: SimTime) {
        let intervals = self.closed.entry(topic).or_default();
        if intervals.last().is_none_or(|&(_, until)| until.is_some()) {
            intervals.push((now, None));
        }
    }

    /// A subtask of the topic's writer runs again, at `now`.
    pub fn reopen_topic(&mut self, topic: u32, now: SimTime) {
        if let Some((_, until)) = self.closed.get_mut(&topic).and_then(|i| i.last_mut()) {
            if until.is_none() {
                *until = Some(now);
            }
        }
    }
}
