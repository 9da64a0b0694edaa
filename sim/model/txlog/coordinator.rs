//! The transaction coordinator under faults, and the producer's calls to
//! it, as Kafka's `TransactionManager` makes them: `InitProducerId`
//! (`initTransactions`) and `EndTxn` (`commitTransaction`) block the
//! caller's thread until the coordinator answers, at most `max.block.ms`
//! per call (then `TimeoutException`, a retriable error; the request stays
//! pending, and calling again waits for the same answer); the client
//! retries the request itself until it gets an answer (after
//! `retry.backoff.ms` on an error, after `request.timeout.ms` without
//! one), with no deadline. `AddPartitionsToTxn` is sent by the producer's
//! `Sender` before a transaction's first batch to a partition: the produce
//! request waits for it, and expires with it (`broker.rs`, `adds`).
//!
//! A coordinator fault (`[[faults.broker]]` with `role = "coordinator"`)
//! holds these requests up as a leaders' fault holds produce requests
//! ([`super::broker::fate`], without a delivery timeout). A `down` or
//! `lost` coordinator also aborts nothing on timeout while it lasts: once
//! back, it aborts what timed out meanwhile before it answers the
//! requests that waited, so a commit held up past its transaction's
//! timeout is refused, and its records are lost (the lost-commits check
//! names the outage). A `slow` one aborts on time.
//!
//! Flink's committer (`CommitterOperator`, since FLINK-36455) commits on
//! the task's thread, and retries a commit that threw a retriable error at
//! once, `sink.committer.retries` times; then the task fails.
//!
//! The task's thread waits for each answer (`Context::block_until`), and
//! the calls of one operator call are made one after the other: each is
//! sent when the one before was answered, and takes effect in the log as
//! of its answer ([`TxLog::as_of`]): its markers are stamped then, so a
//! reader sees the commit no earlier, and a transaction the coordinator
//! would have aborted on timeout by then is aborted first. So a restore
//! commits its checkpoint's transactions before its writer aborts what is
//! left open, as Flink's operators do, however long the coordinator
//! takes. Simplified: a call takes effect when the operator makes it,
//! though as of its answer, so another task's write made meanwhile lands
//! after it in the partition (and a reader sees it no earlier than the
//! answer either), and a commit made just before its task crashed still
//! lands.

use super::broker::{fate, BrokerFault, ProducerConfig};
use super::sink::Committable;
use super::{Client, LogError, TxLog};
use crate::engine::{SimDuration, SimTime};

/// The answer to a commit.
#[derive(Clone, Debug)]
pub struct CommitAnswer {
    pub client: Client,
    pub committable: Committable,
    /// The transaction timeout its sink set.
    pub timeout: SimDuration,
    /// When it was answered.
    pub at: SimTime,
    pub result: Result<(), LogError>,
}

/// How a blocking call to the coordinator ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Answered at `at`, after `timeouts` calls that each gave up after
    /// `max.block.ms` and were made again.
    Answered { at: SimTime, timeouts: u32 },
    /// Every call gave up: the last at `at`.
    GaveUp { at: SimTime },
}

impl TxLog {
    /// When the coordinator answers a request first sent at `sent`: at once
    /// without a fault, else at the first retry it answers (no deadline).
    pub fn coordinator_answer(&self, sent: SimTime, cfg: &ProducerConfig) -> SimTime {
        if self.coordinator_faults.is_empty() {
            return sent;
        }
        let forever = ProducerConfig {
            delivery_timeout: SimDuration(u64::MAX),
            ..*cfg
        };
        fate(&self.coordinator_faults, sent, &forever).at()
    }

    /// A blocking call to the coordinator sent at `sent`, waiting at most
    /// `max_block` each time, made at most `calls` times.
    pub fn coordinator_call(
        &self,
        sent: SimTime,
        max_block: SimDuration,
        calls: u32,
        cfg: &ProducerConfig,
    ) -> Call {
        let at = self.coordinator_answer(sent, cfg);
        let block = max_block.0.max(1);
        // The call that hears the answer: the k-th waits (k·block, (k+1)·block].
        let timeouts = at.since(sent).0.saturating_sub(1) / block;
        match timeouts < u64::from(calls) {
            true => Call::Answered {
                at,
                timeouts: u32::try_from(timeouts).unwrap_or(u32::MAX),
            },
            false => Call::GaveUp {
                at: sent.plus(SimDuration(block.saturating_mul(u64::from(calls)))),
            },
        }
    }

    /// Runs `f` as of `t`, a time a blocked call was answered: what it
    /// writes is stamped then.
    pub fn as_of<R>(&mut self, t: SimTime, f: impl FnOnce(&mut TxLog) -> R) -> R {
        let now = self.now;
        self.now = now.max(t);
        let r = f(self);
        self.now = now;
        r
    }

    /// `EndTxn` committing `producer`'s transaction of `id`, answered at
    /// `at`: if the coordinator's timeout scan had aborted it by then, it
    /// is aborted (as of then) and the commit refused.
    pub fn commit_as_of(
        &mut self,
        id: &str,
        producer: super::Producer,
        at: SimTime,
    ) -> Result<(), LogError> {
        let started = (self.txns.get(id))
            .filter(|m| m.status == super::TxnStatus::Ongoing)
            .and_then(|m| m.started_at.map(|s| (s, m.timeout)));
        if let Some((s, timeout)) = started.filter(|&(s, t)| self.timed_out_by(s, t, at)) {
            let aborted = self.aborts_at(s.plus(timeout).plus(SimDuration(1)));
            self.as_of(aborted, |log| log.expire_one(id));
        }
        self.as_of(at, |log| log.end_txn(id, producer, true))
    }

    /// Whether the coordinator's timeout scan has aborted, by `t`, a
    /// transaction started at `started` with `timeout`: it is older than
    /// its timeout, and the coordinator has been up since it became so.
    pub(super) fn timed_out_by(&self, started: SimTime, timeout: SimDuration, t: SimTime) -> bool {
        let due = started.plus(timeout).plus(SimDuration(1));
        t >= due && t >= self.aborts_at(due)
    }

    /// The first time at or after `due` the coordinator is neither down nor
    /// unreachable.
    fn aborts_at(&self, due: SimTime) -> SimTime {
        let mut t = due;
        while let Some(w) = (self.coordinator_faults.iter())
            .find(|w| w.from <= t && t < w.until && !matches!(w.fault, BrokerFault::Slow(_)))
        {
            t = w.until;
        }
        t
    }
}
