//! `[[faults.broker]]`: faults of the transactional log's brokers, windows
//! of time in which the producers' requests fail, are lost or are slow,
//! either those to the partitions' leaders (produce requests) or those to
//! the transaction coordinator (`InitProducerId`, `AddPartitionsToTxn`,
//! `EndTxn`): `model::txlog::broker` and `model::txlog::coordinator` say
//! what a producer does about it.

use super::schema;
use super::validate::{help, Validator};
use crate::engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// What a broker fault does to the requests in its window, as files name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokerFaultKind {
    /// The partitions' leader is unavailable: every request is answered at
    /// once with a retriable error.
    Down,
    /// Requests reach no broker: no answer until the client's request
    /// timeout.
    Lost,
    /// Each answer takes `extra` longer.
    Slow,
}

/// Which brokers a fault hits, as files name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokerRole {
    /// The partitions' leaders: produce requests.
    #[default]
    Leader,
    /// The transaction coordinator: `InitProducerId`, `AddPartitionsToTxn`
    /// and `EndTxn` (and its own timeout aborts, which wait for it).
    Coordinator,
}

/// What a broker fault does, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BrokerFault {
    Down,
    Lost,
    Slow(SimDuration),
}

/// A broker fault between `from` and `until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerWindow {
    pub from: SimTime,
    pub until: SimTime,
    pub fault: BrokerFault,
    /// The brokers it hits.
    #[serde(default)]
    pub role: BrokerRole,
}

impl BrokerWindow {
    /// The fault's kind, as files name it.
    pub fn fault_kind(&self) -> BrokerFaultKind {
        match self.fault {
            BrokerFault::Down => BrokerFaultKind::Down,
            BrokerFault::Lost => BrokerFaultKind::Lost,
            BrokerFault::Slow(_) => BrokerFaultKind::Slow,
        }
    }
}

impl Validator<'_, '_> {
    /// `[[faults.broker]]`: `from`, `until` (required, after `from`),
    /// `fault` (required), for `slow` only `extra` (required), and `role`
    /// (`leader` by default, or `coordinator`).
    pub(super) fn broker_faults(&mut self, list: &[schema::BrokerFaults]) -> Vec<BrokerWindow> {
        let kinds = || self.ops.iter().map(|o| o.kind.as_ref());
        let writer = kinds().any(|k| matches!(k, Some(super::OperatorKind::SinkLog { .. })));
        if !list.is_empty() && !writer && kinds().all(|k| k.is_some()) {
            let help = help("add a sink-log, or remove [[faults.broker]]");
            let message = "broker faults act on the producers of a sink-log, and this job has none";
            self.report("faults.broker", message, help);
        }
        self.each("faults.broker", list, |v, b| {
            let window = v.window(b.from.unwrap_or_default(), &b.until);
            let kind = v.required("fault", &b.fault).copied();
            let fault = match (kind, b.extra) {
                (Some(BrokerFaultKind::Slow), extra) => {
                    v.required_dur("extra", &extra).map(BrokerFault::Slow)
                }
                (Some(k), Some(_)) => {
                    let message = "`extra` applies only to fault = \"slow\"".to_string();
                    let name = schema::name_of(&k);
                    v.report(
                        "extra",
                        message,
                        help(&format!("remove it, or make the {name} fault slow")),
                    );
                    None
                }
                (Some(BrokerFaultKind::Down), None) => Some(BrokerFault::Down),
                (Some(BrokerFaultKind::Lost), None) => Some(BrokerFault::Lost),
                (None, _) => None,
            };
            let (from, until) = window?;
            Some(BrokerWindow {
                from,
                until,
                fault: fault?,
                role: b.role.unwrap_or_default(),
            })
        })
    }
}
