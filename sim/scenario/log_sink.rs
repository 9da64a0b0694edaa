//! The `sink-log` kind's settings as the scenario knows them: its delivery
//! guarantee and transaction naming, and the warning a scenario gets before
//! it runs when its transaction timeout lets the broker lose data.

use super::{OperatorKind, RestartStrategy, ScenarioData};
use crate::engine::SimDuration;
use crate::protocol::Guarantee;
use serde::{Deserialize, Serialize};

/// What a `sink-log` promises (Flink's `DeliveryGuarantee`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Transactions committed with checkpoints.
    ExactlyOnce,
    /// Flushed before every snapshot: duplicates on replay.
    AtLeastOnce,
    /// Neither: a failure may lose or duplicate records.
    None,
}

impl Delivery {
    /// What the sink's readers may expect of its topic.
    pub fn guarantee(self) -> Guarantee {
        match self {
            Delivery::ExactlyOnce => Guarantee::ExactlyOnce,
            Delivery::AtLeastOnce => Guarantee::AtLeastOnce,
            Delivery::None => Guarantee::Broken,
        }
    }
}

/// How a `sink-log` names its transactions (Flink's
/// `TransactionNamingStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxnNaming {
    /// `prefix-subtask-checkpoint`, a new producer per checkpoint.
    Incrementing,
    /// `prefix-subtask-n` from a pool of producers reused after commit.
    Pooling,
}

impl ScenarioData {
    /// Whether some operator is an exactly-once `sink-log`.
    pub fn has_exactly_once_log_sink(&self) -> bool {
        (self.operators.iter()).any(|o| {
            matches!(
                o.kind,
                OperatorKind::SinkLog {
                    delivery: Delivery::ExactlyOnce,
                    ..
                }
            )
        })
    }

    /// Warnings before a run: each exactly-once `sink-log` whose
    /// transaction timeout does not exceed the checkpoint interval plus the
    /// time to recover (failure detection and the restart delay, at most
    /// `max_backoff` under `exponential-delay`): the broker may abort a
    /// transaction a completed checkpoint holds before it is committed, and
    /// its records are lost (Flink's Kafka connector documentation warns of
    /// this). Likewise when the timeout does not exceed the interval plus
    /// the longest outage of the transaction coordinator: a commit it holds
    /// up may find its transaction aborted once it is back.
    pub fn log_sink_warnings(&self) -> Vec<String> {
        let Some(interval) = self.checkpoint.interval else {
            return Vec::new();
        };
        let f = &self.faults;
        let restart = match f.restart {
            RestartStrategy::ExponentialDelay { max_backoff, .. } => {
                SimDuration(f.restart_delay.0.max(max_backoff.0))
            }
            _ => f.restart_delay,
        };
        let recover = SimDuration(f.detection_delay.0.saturating_add(restart.0));
        let needed = SimDuration(interval.0.saturating_add(recover.0));
        let mut out = Vec::new();
        for op in &self.operators {
            if let OperatorKind::SinkLog {
                delivery: Delivery::ExactlyOnce,
                transaction_timeout,
                ..
            } = op.kind
            {
                if transaction_timeout <= needed {
                    out.push(format!(
                        "warning: sink `{}`: its transaction timeout ({transaction_timeout}) does not exceed the checkpoint interval ({interval}) plus the time to recover from a failure ({recover}: failure detection {} + restart delay {restart}); the broker may abort a transaction that a completed checkpoint holds before it is committed, and its records are lost",
                        op.id, f.detection_delay
                    ));
                }
                let outage = self.longest_coordinator_outage();
                if outage > SimDuration::ZERO
                    && transaction_timeout <= SimDuration(interval.0.saturating_add(outage.0))
                {
                    out.push(format!(
                        "warning: sink `{}`: its transaction timeout ({transaction_timeout}) does not exceed the checkpoint interval ({interval}) plus the longest outage of the transaction coordinator ({outage}); a commit held up by the outage may find its transaction aborted on timeout when the coordinator is back, and its records are lost",
                        op.id
                    ));
                }
            }
        }
        out
    }

    /// The longest `[[faults.broker]]` window in which the transaction
    /// coordinator is down or lost (a slow one still answers, and aborts on
    /// time).
    fn longest_coordinator_outage(&self) -> SimDuration {
        use crate::scenario::{BrokerFault, BrokerRole};
        (self.faults.broker.iter())
            .filter(|w| {
                w.role == BrokerRole::Coordinator && !matches!(w.fault, BrokerFault::Slow(_))
            })
            .map(|w| w.until.since(w.from))
            .max()
            .unwrap_or(SimDuration::ZERO)
    }
}
