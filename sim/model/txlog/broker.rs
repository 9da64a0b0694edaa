//! The brokers under faults, and the asynchronous producer's requests to
//! them, as Kafka's `KafkaProducer` sends them: records wait in the
//! accumulator, leave as a produce request, and the request is answered
//! later (`Sender`), retried after `retry.backoff.ms` on an error response
//! or after `request.timeout.ms` without one, until the batch is older
//! than `delivery.timeout.ms`: then it **expires** and its records are
//! dropped, and the send's callback receives the error. Nothing throws at
//! the caller: the error waits for the writer to look (Flink's
//! `KafkaWriter` keeps it as `asyncProducerException` and throws it at its
//! next call, `checkAsyncException`). `flush` waits until every request
//! sent so far is answered or expired, and returns without throwing.
//!
//! Broker faults (`[[faults.broker]]`) are windows of time, known before
//! the run: **down** (the partitions' leaders are unavailable: every
//! request is answered at once with a retriable error), **lost** (requests
//! reach no broker: the client waits `request.timeout.ms` for each) and
//! **slow** (each response takes `extra` longer). A request's fate is then
//! a function of when it was sent ([`fate`]), and the log keeps the request
//! until its answer is due: it lands then (entries stamped with that time),
//! or the producer's client gets the error. A request lands as its
//! producer's epoch allows when it lands: a transaction the coordinator
//! aborted on timeout meanwhile refuses it (the producer is fenced).
//!
//! Simplified: one broker leads every partition, and a request carries a
//! whole flush (one batch per partition); retries keep the request's
//! order (Kafka's idempotent producer keeps it with at most five requests
//! in flight). A producer of a failed task is closed when its task is
//! redeployed: what it still had in flight then is dropped
//! ([`TxLog::abandon`]); requests answered between the crash and the
//! redeploy still land, as requests on the wire do.

use super::{BrokerRole, Client, LogError, Producer, TopicPartition, TxLog};
use crate::engine::{SimDuration, SimTime};
use crate::model::record::Record;
pub use crate::scenario::{BrokerFault, BrokerWindow};
use serde::{Deserialize, Serialize};

/// A producer's settings for its requests (Kafka's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    /// `delivery.timeout.ms`: a batch older than this expires.
    pub delivery_timeout: SimDuration,
    /// `request.timeout.ms`: how long the client waits for an answer.
    pub request_timeout: SimDuration,
    /// `retry.backoff.ms`: the wait before a retry after an error.
    pub retry_backoff: SimDuration,
}

/// How a request sent at a time ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Appended at `at`, after `retries` retries.
    Lands { at: SimTime, retries: u32 },
    /// Expired at `at` (its delivery timeout), after `retries` retries.
    Expires { at: SimTime, retries: u32 },
}

impl Fate {
    /// When the producer hears of it.
    pub fn at(self) -> SimTime {
        match self {
            Fate::Lands { at, .. } | Fate::Expires { at, .. } => at,
        }
    }

    fn retries(self) -> u32 {
        match self {
            Fate::Lands { retries, .. } | Fate::Expires { retries, .. } => retries,
        }
    }
}

/// The fault in force at `t`, if any (the first window that holds it).
fn fault_at(windows: &[BrokerWindow], t: SimTime) -> Option<(BrokerWindow, BrokerFault)> {
    (windows.iter())
        .find(|w| w.from <= t && t < w.until)
        .map(|w| (*w, w.fault))
}

/// The fate of a request first sent at `sent` under `windows`.
pub fn fate(windows: &[BrokerWindow], sent: SimTime, cfg: &ProducerConfig) -> Fate {
    let deadline = sent.plus(cfg.delivery_timeout);
    let mut t = sent;
    let mut retries: u32 = 0;
    loop {
        let (window, wait) = match fault_at(windows, t) {
            None => return lands(t, SimDuration::ZERO, deadline, retries),
            Some((_, BrokerFault::Slow(extra))) => return lands(t, extra, deadline, retries),
            Some((w, BrokerFault::Down)) => (w, cfg.retry_backoff),
            Some((w, BrokerFault::Lost)) => (w, cfg.request_timeout),
        };
        // Every attempt inside the window fails the same way: jump to the
        // first attempt at or past its end.
        let wait = SimDuration(wait.0.max(1));
        let left = window.until.since(t).0;
        let n = left.div_ceil(wait.0).max(1);
        let next = SimTime(t.0.saturating_add(n.saturating_mul(wait.0)));
        // The retries made before the deadline.
        let made = n.min(deadline.since(t).0 / wait.0);
        retries = retries.saturating_add(u32::try_from(made).unwrap_or(u32::MAX));
        if next > deadline {
            return Fate::Expires {
                at: deadline,
                retries,
            };
        }
        t = next;
    }
}

fn lands(t: SimTime, extra: SimDuration, deadline: SimTime, retries: u32) -> Fate {
    let at = t.plus(extra);
    match at > deadline {
        true => Fate::Expires {
            at: deadline,
            retries,
        },
        false => Fate::Lands { at, retries },
    }
}

/// A produce request waiting for its answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct InFlight {
    client: Client,
    sent: SimTime,
    /// The transaction it writes in, if any.
    txn: Option<(String, Producer)>,
    records: Vec<(TopicPartition, Record)>,
    /// When it lands, or `None`: it expires at `due`.
    lands: bool,
    due: SimTime,
}

/// An error the producer's callback received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryError {
    pub records: u64,
    pub at: SimTime,
    pub why: String,
    /// A broker fault delayed the request (it expired, or its transaction
    /// timed out while it was held up): the fault's doing, not the job's.
    pub by_fault: bool,
}

impl TxLog {
    /// The broker faults of the run (set before it starts): those of the
    /// partitions' leaders, and those of the transaction coordinator.
    pub fn set_broker_faults(&mut self, windows: Vec<BrokerWindow>) {
        let (coordinator, leaders) = windows
            .into_iter()
            .partition(|w| w.role == BrokerRole::Coordinator);
        self.broker_faults = leaders;
        self.coordinator_faults = coordinator;
    }

    /// `send`: `client`'s records leave as one request at `now`, in the
    /// transaction `txn` (its partitions added already) or without one;
    /// `adds`: the request waits for an `AddPartitionsToTxn` of the
    /// transaction coordinator first (the producer's `Sender` sends that
    /// before a transaction's first batch to a partition), so the
    /// coordinator's faults hold it up too. Returns when its answer is due;
    /// a request answered at once (no fault in force) lands now.
    pub fn send(
        &mut self,
        client: Client,
        txn: Option<(String, Producer)>,
        records: Vec<(TopicPartition, Record)>,
        adds: bool,
        cfg: &ProducerConfig,
        now: SimTime,
    ) -> SimTime {
        self.tick(now);
        let fate = match adds && !self.coordinator_faults.is_empty() {
            false => fate(&self.broker_faults, now, cfg),
            true => {
                let both: Vec<BrokerWindow> = (self.coordinator_faults.iter())
                    .chain(&self.broker_faults)
                    .copied()
                    .collect();
                fate(&both, now, cfg)
            }
        };
        self.stats.retries += u64::from(fate.retries());
        let request = InFlight {
            client,
            sent: now,
            txn,
            records,
            lands: matches!(fate, Fate::Lands { .. }),
            due: fate.at(),
        };
        match fate {
            Fate::Lands { at, .. } if at <= now => self.answer(request),
            _ => {
                let seq = self.next_request;
                self.next_request += 1;
                self.in_flight.insert((fate.at(), seq), request);
            }
        }
        fate.at()
    }

    /// No broker fault, no request in flight, no error waiting.
    pub(super) fn clear_broker_state(&mut self) {
        self.broker_faults.clear();
        self.coordinator_faults.clear();
        self.in_flight.clear();
        self.errors.clear();
    }

    /// Whether some producer's callback got an error no writer took yet.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Whether a request waits for its answer.
    pub fn has_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Answers every request due by `now`, in the order they are due.
    pub fn deliver(&mut self, now: SimTime) {
        while let Some(entry) = self.in_flight.first_entry() {
            if entry.key().0 > now {
                return;
            }
            let request = entry.remove();
            self.tick(request.due);
            self.answer(request);
        }
    }

    /// Answers every request still in flight (the run ended: the broker
    /// answers them after it).
    pub fn deliver_all(&mut self) {
        self.deliver(SimTime(u64::MAX));
    }

    /// The last time an answer is due to `client`'s requests in flight.
    pub fn in_flight_until(&self, client: Client) -> Option<SimTime> {
        (self.in_flight.iter())
            .filter(|(_, r)| r.client == client)
            .map(|(&(due, _), _)| due)
            .max()
    }

    /// The errors `client`'s requests in flight will get (expired, or
    /// refused because the transaction will have timed out before they
    /// land): as [`fate`] and the coordinator's timeout decide them now.
    pub fn in_flight_errors(&self, client: Client) -> Vec<DeliveryError> {
        let own = self.in_flight.values().filter(|r| r.client == client);
        own.filter_map(|r| self.error_of(r)).collect()
    }

    fn error_of(&self, r: &InFlight) -> Option<DeliveryError> {
        let records = r.records.len() as u64;
        if !r.lands {
            let why = format!("{records} record(s) expired: the delivery timeout passed");
            return Some(DeliveryError {
                records,
                at: r.due,
                why,
                by_fault: true,
            });
        }
        let (id, _) = r.txn.as_ref()?;
        let meta = self.txns.get(id)?;
        let timed_out = meta
            .started_at
            .is_some_and(|s| self.timed_out_by(s, meta.timeout, r.due));
        timed_out.then(|| DeliveryError {
            records,
            at: r.due,
            why: format!("transaction {id} timed out before its records landed (producer fenced)"),
            by_fault: r.due > r.sent,
        })
    }

    /// Takes the errors `client`'s callbacks received; those of earlier
    /// attempts of its subtask are dropped (their producers are closed).
    pub fn take_errors(&mut self, client: Client) -> Vec<DeliveryError> {
        let key = (client.operator, client.subtask);
        let mut all = self.errors.remove(&key).unwrap_or_default();
        all.retain(|(attempt, _)| *attempt == client.attempt);
        all.into_iter().map(|(_, e)| e).collect()
    }

    /// The subtask's producers of attempts before `client`'s are closed:
    /// their requests still in flight are dropped, their errors too.
    pub fn abandon(&mut self, client: Client) {
        self.in_flight.retain(|_, r| {
            !(r.client.operator == client.operator
                && r.client.subtask == client.subtask
                && r.client.attempt < client.attempt)
        });
        if let Some(e) = self.errors.get_mut(&(client.operator, client.subtask)) {
            e.retain(|(attempt, _)| *attempt >= client.attempt);
        }
    }

    /// The answer to `request`: its records appended, or its error kept
    /// for its client.
    fn answer(&mut self, request: InFlight) {
        let records = request.records.len() as u64;
        let error = match request.lands {
            false => Some(
                self.error_of(&request)
                    .expect("an expired request has an error"),
            ),
            true => {
                let txn = request.txn.as_ref().map(|(id, p)| (id.as_str(), *p));
                let mut refused: Option<LogError> = None;
                for &(tp, record) in &request.records {
                    if let Err(e) = self.produce(tp, txn, record) {
                        refused = Some(e);
                        break;
                    }
                }
                refused.map(|e| DeliveryError {
                    records,
                    at: request.due,
                    why: format!("a write was refused: {e}"),
                    by_fault: request.due > request.sent,
                })
            }
        };
        if let Some(e) = error {
            self.stats.expired += u64::from(!request.lands);
            let c = request.client;
            let list = self.errors.entry((c.operator, c.subtask)).or_default();
            list.push((c.attempt, e));
        }
    }
}
