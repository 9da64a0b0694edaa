//! The scenario file format as serde types: what a file may say, key by key,
//! with every default. Tables whose keys are all optional reuse the
//! [`Scenario`]'s own types (`[network]`, `[cluster]`, `[limits]`, ...);
//! the others have a file-shaped type here, where operators, tasks and edges
//! are named, required keys are `Option`s and context-dependent defaults
//! (a source's cost, the first checkpoint delay, storage latency) are
//! methods. [`super::validate`] turns a [`File`] into a [`Scenario`];
//! `File::from(&Scenario)` goes back, writing every key.
//!
//! Deserialization is strict: `deny_unknown_fields` everywhere, durations
//! through [`parse_duration`], names through serde's kebab-case renames.
//! Nothing here checks ranges or cross-references; validation does.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use super::{
    Algorithm, ClusterSpec, Expect, FailoverStrategy, KeyDistribution, Limits, MemoryLoss,
    NetworkSpec, NotificationFaults, OperatorId, OperatorKind, Partitioning, RandomCrashes,
    RestartStrategy, Scenario, StorageFaults, StorageKind, FORMAT_VERSION,
};
use crate::engine::{parse_duration, SimDuration, SimTime};

/// A duration or a time as files write it: `"500ms"`, `"1.5s"`, `"100us"`.
/// Read with [`parse_duration`]; written exactly, as an integer in the
/// largest unit that holds it (`"5ms"`, `"1337ns"`, `"0s"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub SimDuration);

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Duration {
    pub fn time(self) -> SimTime {
        SimTime(self.0 .0)
    }
}

impl From<SimTime> for Duration {
    fn from(t: SimTime) -> Self {
        Duration(SimDuration(t.0))
    }
}

/// The exact text of a duration: an integer in the largest unit that holds
/// it exactly (`"2h"`, `"90s"`, `"1001us"`, `"3000000007ns"`), `"0s"` for
/// zero. [`parse_duration`] reads it back to the same value.
pub fn duration_text(d: SimDuration) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ];
    let n = d.nanos();
    if n == 0 {
        return "0s".to_string();
    }
    let (unit, scale) = UNITS
        .into_iter()
        .find(|(_, scale)| n.is_multiple_of(*scale))
        .unwrap_or(("ns", 1));
    format!("{}{unit}", n / scale)
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&duration_text(self.0))
    }
}

/// Reads a string through `read` inside the deserializer, so that a
/// refused value is placed at itself (an array element, not the array).
struct Text<F>(F);

impl<T, F: FnOnce(&str) -> Result<T, String>> de::Visitor<'_> for Text<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let read = |text: &str| parse_duration(text).map(Duration);
        d.deserialize_str(Text(read))
    }
}

/// `#[serde(with)]` for the `SimDuration` fields of reused scenario types.
pub(super) mod duration {
    use super::*;
    pub fn serialize<S: Serializer>(d: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        Duration(*d).serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        Duration::deserialize(d).map(|d| d.0)
    }
}

/// `#[serde(with)]` for the `SimTime` fields of reused scenario types.
pub(super) mod time {
    use super::*;
    pub fn serialize<S: Serializer>(t: &SimTime, s: S) -> Result<S::Ok, S::Error> {
        Duration::from(*t).serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimTime, D::Error> {
        Duration::deserialize(d).map(Duration::time)
    }
}

/// `interval`: a duration, or `"none"` for no periodic checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval(pub Option<SimDuration>);

impl Serialize for Interval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(d) => Duration(d).serialize(s),
            None => s.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let read = |text: &str| match text.trim() {
            "none" => Ok(Interval(None)),
            _ => parse_duration(text).map(|d| Interval(Some(d))),
        };
        d.deserialize_str(Text(read))
    }
}

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct File {
    pub version: Option<u32>,
    pub name: Option<String>,
    pub description: String,
    pub max_parallelism: u32,
    pub cancel_at: Option<Duration>,
    pub network: NetworkSpec,
    pub operators: Vec<Operator>,
    pub edges: Vec<Edge>,
    pub checkpoint: Checkpoint,
    pub cluster: Option<ClusterSpec>,
    pub faults: Faults,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub savepoints: Vec<Savepoint>,
    pub limits: Limits,
    pub expect: Expect,
    pub swarm: Option<Swarm>,
}

impl Default for File {
    fn default() -> Self {
        File {
            version: None,
            name: None,
            description: String::new(),
            max_parallelism: 128,
            cancel_at: None,
            network: NetworkSpec::default(),
            operators: Vec::new(),
            edges: Vec::new(),
            checkpoint: Checkpoint::default(),
            cluster: None,
            faults: Faults::default(),
            savepoints: Vec::new(),
            limits: Limits::default(),
            expect: Expect::default(),
            swarm: None,
        }
    }
}

/// The `kind` of an operator, as files name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Source,
    Map,
    Filter,
    FlatMap,
    KeyedCount,
    KeyedSum,
    CountWindow,
    #[serde(rename = "sink-2pc")]
    Sink2pc,
    SinkAtLeastOnce,
}

/// The name serde gives a unit variant: `"flat-map"` for [`Kind::FlatMap`].
pub fn name_of<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// `[[operators]]`: the common keys, then every kind's own keys (validation
/// refuses those of another kind).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    pub id: Option<String>,
    pub kind: Option<Kind>,
    pub parallelism: Option<u32>,
    pub cost: Option<Duration>,
    #[serde(default)]
    pub cost_jitter: Duration,
    pub partitions: Option<u32>,
    pub records_per_partition: Option<u64>,
    pub keys: Option<u64>,
    pub key_distribution: Option<KeyDistribution>,
    pub value_max: Option<u64>,
    pub mul: Option<i64>,
    pub add: Option<i64>,
    pub modulus: Option<u64>,
    pub keep_below: Option<u64>,
    pub copies: Option<u32>,
    pub size: Option<u32>,
    pub batch: Option<u32>,
}

impl Operator {
    /// Kind-specific keys: (key, the kind it belongs to, whether it is set,
    /// its value if it is a number with a range).
    pub fn kind_keys(&self) -> [(&'static str, Kind, bool, Option<i128>); 12] {
        let n = |v: Option<u64>| v.map(i128::from);
        let m = |v: Option<u32>| v.map(i128::from);
        [
            (
                "partitions",
                Kind::Source,
                self.partitions.is_some(),
                m(self.partitions),
            ),
            (
                "records_per_partition",
                Kind::Source,
                self.records_per_partition.is_some(),
                n(self.records_per_partition),
            ),
            ("keys", Kind::Source, self.keys.is_some(), n(self.keys)),
            (
                "key_distribution",
                Kind::Source,
                self.key_distribution.is_some(),
                None,
            ),
            (
                "value_max",
                Kind::Source,
                self.value_max.is_some(),
                n(self.value_max),
            ),
            ("mul", Kind::Map, self.mul.is_some(), None),
            ("add", Kind::Map, self.add.is_some(), None),
            (
                "modulus",
                Kind::Filter,
                self.modulus.is_some(),
                n(self.modulus),
            ),
            (
                "keep_below",
                Kind::Filter,
                self.keep_below.is_some(),
                n(self.keep_below),
            ),
            (
                "copies",
                Kind::FlatMap,
                self.copies.is_some(),
                m(self.copies),
            ),
            ("size", Kind::CountWindow, self.size.is_some(), m(self.size)),
            (
                "batch",
                Kind::SinkAtLeastOnce,
                self.batch.is_some(),
                m(self.batch),
            ),
        ]
    }

    /// The operator kind with its parameters, defaults filled in.
    pub fn kind_spec(&self, kind: Kind) -> OperatorKind {
        match kind {
            Kind::Source => OperatorKind::Source(super::SourceSpec {
                partitions: self.partitions.or(self.parallelism).unwrap_or(1),
                records_per_partition: self.records_per_partition.unwrap_or(1000),
                keys: self.keys.unwrap_or(100),
                key_distribution: self.key_distribution.unwrap_or_default(),
                value_max: self.value_max.unwrap_or(1),
            }),
            Kind::Map => OperatorKind::Map {
                mul: self.mul.unwrap_or(1),
                add: self.add.unwrap_or(0),
            },
            Kind::Filter => OperatorKind::Filter {
                modulus: self.modulus.unwrap_or(2),
                keep_below: self.keep_below.unwrap_or(1),
            },
            Kind::FlatMap => OperatorKind::FlatMap {
                copies: self.copies.unwrap_or(2),
            },
            Kind::KeyedCount => OperatorKind::KeyedCount,
            Kind::KeyedSum => OperatorKind::KeyedSum,
            Kind::CountWindow => OperatorKind::CountWindow {
                size: self.size.unwrap_or(10),
            },
            Kind::Sink2pc => OperatorKind::Sink2pc,
            Kind::SinkAtLeastOnce => OperatorKind::SinkAtLeastOnce {
                batch: self.batch.unwrap_or(1),
            },
        }
    }

    /// `cost`, by default 10us for a source and 1us for the others.
    pub fn cost(&self) -> SimDuration {
        let default = match self.kind {
            Some(Kind::Source) => SimDuration::from_micros(10),
            _ => SimDuration::from_micros(1),
        };
        self.cost.map_or(default, |d| d.0)
    }
}

/// `[[edges]]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: Option<String>,
    pub to: Option<String>,
    pub partitioning: Option<Partitioning>,
}

/// `[checkpoint]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Checkpoint {
    pub algorithm: Algorithm,
    pub interval: Interval,
    pub first_delay: Option<Duration>,
    pub min_pause: Duration,
    pub timeout: Duration,
    pub max_concurrent: u32,
    pub alignment_timeout: Duration,
    pub tolerable_failures: u32,
    pub retained: u32,
    pub retain_on_cancel: bool,
    pub storage: StorageKind,
    pub storage_latency: Option<Duration>,
    pub storage_bytes_per_sec: Option<u64>,
    pub rpc_latency: Duration,
}

impl Default for Checkpoint {
    fn default() -> Self {
        Checkpoint {
            algorithm: Algorithm::Aligned,
            interval: Interval(Some(SimDuration::from_secs(1))),
            first_delay: None,
            min_pause: Duration(SimDuration::ZERO),
            timeout: Duration(SimDuration::from_secs(600)),
            max_concurrent: 1,
            alignment_timeout: Duration(SimDuration::from_millis(100)),
            tolerable_failures: 0,
            retained: 1,
            retain_on_cancel: false,
            storage: StorageKind::Memory,
            storage_latency: None,
            storage_bytes_per_sec: None,
            rpc_latency: Duration(SimDuration::from_micros(200)),
        }
    }
}

impl Checkpoint {
    /// `first_delay`, by default the interval (0 without one).
    pub fn first_delay(&self) -> SimDuration {
        let default = self.interval.0.unwrap_or(SimDuration::ZERO);
        self.first_delay.map_or(default, |d| d.0)
    }

    /// `storage_latency` and `storage_bytes_per_sec`, by default those of
    /// the storage kind.
    pub fn storage_speed(&self) -> (SimDuration, u64) {
        let (latency, bandwidth) = match self.storage {
            StorageKind::Memory => (SimDuration::from_micros(100), 1_000_000_000),
            StorageKind::Filesystem => (SimDuration::from_millis(5), 200_000_000),
        };
        (
            self.storage_latency.map_or(latency, |d| d.0),
            self.storage_bytes_per_sec.unwrap_or(bandwidth),
        )
    }
}

/// `[faults]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    pub failover: FailoverStrategy,
    pub detection_delay: Duration,
    pub restart_delay: Duration,
    pub max_restarts: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crashes: Vec<Crash>,
    pub random: Option<Random>,
    pub restart: Restart,
    pub notifications: Option<NotificationFaults>,
    pub storage: Option<StorageFaults>,
    pub coordinator: Option<Coordinator>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worker_crashes: Vec<WorkerCrash>,
    pub random_workers: Option<Random>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_spikes: Vec<Spike>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slow_tasks: Vec<SlowTask>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            failover: FailoverStrategy::Full,
            detection_delay: Duration(SimDuration::from_millis(100)),
            restart_delay: Duration(SimDuration::from_millis(100)),
            max_restarts: 1000,
            crashes: Vec::new(),
            random: None,
            restart: Restart::default(),
            notifications: None,
            storage: None,
            coordinator: None,
            worker_crashes: Vec::new(),
            random_workers: None,
            latency_spikes: Vec::new(),
            partitions: Vec::new(),
            slow_tasks: Vec::new(),
        }
    }
}

/// `[[faults.crashes]]`: `task` is `"op[n]"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    pub at: Option<Duration>,
    pub task: Option<String>,
}

/// A random crash table: `[faults.random]`, `[faults.random_workers]`,
/// `[faults.coordinator.random]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Random {
    pub mean_interval: Option<Duration>,
    pub window_start: Duration,
    pub window_end: Option<Duration>,
    pub max_crashes: u32,
}

impl Default for Random {
    fn default() -> Self {
        Random {
            mean_interval: None,
            window_start: Duration::default(),
            window_end: None,
            max_crashes: 3,
        }
    }
}

/// The restart strategies, as files name them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    #[default]
    FixedDelay,
    ExponentialDelay,
    FailureRate,
}

/// `[faults.restart]`: the strategy and the keys of every strategy
/// (validation refuses those of another).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Restart {
    pub strategy: Strategy,
    pub max_backoff: Option<Duration>,
    pub backoff_multiplier: Option<f64>,
    pub reset_threshold: Option<Duration>,
    pub max_failures: Option<u32>,
    pub interval: Option<Duration>,
}

impl Restart {
    /// Keys of a strategy other than `fixed-delay`: (key, strategy, set).
    pub fn strategy_keys(&self) -> [(&'static str, Strategy, bool); 5] {
        use Strategy::{ExponentialDelay as Exp, FailureRate as Rate};
        [
            ("max_backoff", Exp, self.max_backoff.is_some()),
            ("backoff_multiplier", Exp, self.backoff_multiplier.is_some()),
            ("reset_threshold", Exp, self.reset_threshold.is_some()),
            ("max_failures", Rate, self.max_failures.is_some()),
            ("interval", Rate, self.interval.is_some()),
        ]
    }
}

/// `[faults.coordinator]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Coordinator {
    pub failover_delay: Duration,
    pub on_memory_loss: MemoryLoss,
    pub crashes: Vec<Duration>,
    pub random: Option<Random>,
}

impl Default for Coordinator {
    fn default() -> Self {
        Coordinator {
            failover_delay: Duration(SimDuration::from_millis(200)),
            on_memory_loss: MemoryLoss::RestartFromScratch,
            crashes: Vec::new(),
            random: None,
        }
    }
}

/// `[[faults.worker_crashes]]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerCrash {
    pub at: Option<Duration>,
    pub worker: Option<u32>,
}

/// `[[faults.latency_spikes]]`: `edge` is `"from->to"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spike {
    #[serde(default)]
    pub from: Duration,
    pub until: Option<Duration>,
    pub extra: Option<Duration>,
    pub edge: Option<String>,
    pub worker: Option<u32>,
}

/// `[[faults.partitions]]`; workers as written (validation names the
/// ones that do not exist).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    #[serde(default)]
    pub from: Duration,
    pub until: Option<Duration>,
    pub workers: Option<Vec<i64>>,
}

/// `[[faults.slow_tasks]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlowTask {
    pub task: Option<String>,
    pub from: Duration,
    pub until: Option<Duration>,
    pub factor: u32,
}

impl Default for SlowTask {
    fn default() -> Self {
        SlowTask {
            task: None,
            from: Duration::default(),
            until: None,
            factor: 10,
        }
    }
}

/// `[[savepoints]]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Savepoint {
    pub at: Option<Duration>,
    pub stop: bool,
    pub drain: bool,
}

/// `[swarm]`: `[min, max]` ranges as written (validation checks their
/// length, bounds and order).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Swarm {
    pub enabled: bool,
    pub latency_max: Option<Vec<Duration>>,
    pub buffer_records: Option<Vec<i64>>,
    pub buffer_credits: Option<Vec<i64>>,
    pub interval: Option<Vec<Duration>>,
    pub timeout: Option<Vec<Duration>>,
    pub cost_percent: Option<Vec<i64>>,
    pub crash_mean_interval: Option<Vec<Duration>>,
    pub max_crashes: Option<Vec<i64>>,
    pub crash_window_end: Option<Vec<Duration>>,
    pub notification_loss_percent: Option<Vec<i64>>,
    pub storage_failure_percent: Option<Vec<i64>>,
    pub storage_slow_percent: Option<Vec<i64>>,
    pub coordinator_crashes: Option<Vec<i64>>,
    pub worker_crashes: Option<Vec<i64>>,
    pub latency_spike_extra: Option<Vec<Duration>>,
    pub partition_duration: Option<Vec<Duration>>,
}

// ---------------------------------------------------------------------------
// Scenario -> File: every key written, so a file means the same whatever the
// defaults become.
// ---------------------------------------------------------------------------

impl From<&Scenario> for File {
    fn from(s: &Scenario) -> File {
        // An index past the operators (never in a validated scenario) is
        // written as `#<index>`, which validation refuses.
        let name = |id: OperatorId| match s.operators.get(id.0 as usize) {
            Some(op) => op.id.clone(),
            None => format!("#{}", id.0),
        };
        let task = |id: OperatorId, subtask: u32| Some(format!("{}[{subtask}]", name(id)));
        let d = |d: SimDuration| Some(Duration(d));
        let t = |t: SimTime| Some(Duration::from(t));
        let random = |r: &RandomCrashes| Random {
            mean_interval: d(r.mean_interval),
            window_start: r.window_start.into(),
            window_end: t(r.window_end),
            max_crashes: r.max_crashes,
        };
        let c = &s.checkpoint;
        let f = &s.faults;
        File {
            version: Some(FORMAT_VERSION),
            name: Some(s.name.clone()),
            description: s.description.clone(),
            max_parallelism: s.max_parallelism,
            cancel_at: s.cancel_at.map(Duration::from),
            network: s.network.clone(),
            operators: s.operators.iter().map(operator).collect(),
            edges: s
                .edges
                .iter()
                .map(|e| Edge {
                    from: Some(name(e.from)),
                    to: Some(name(e.to)),
                    partitioning: Some(e.partitioning),
                })
                .collect(),
            checkpoint: Checkpoint {
                algorithm: c.algorithm,
                interval: Interval(c.interval),
                first_delay: d(c.first_delay),
                min_pause: Duration(c.min_pause),
                timeout: Duration(c.timeout),
                max_concurrent: c.max_concurrent,
                alignment_timeout: Duration(c.alignment_timeout),
                tolerable_failures: c.tolerable_failures,
                retained: c.retained,
                retain_on_cancel: c.retain_on_cancel,
                storage: c.storage,
                storage_latency: d(c.storage_latency),
                storage_bytes_per_sec: Some(c.storage_bytes_per_sec),
                rpc_latency: Duration(c.rpc_latency),
            },
            cluster: s.cluster.clone(),
            faults: Faults {
                failover: f.failover,
                detection_delay: Duration(f.detection_delay),
                restart_delay: Duration(f.restart_delay),
                max_restarts: f.max_restarts,
                crashes: f
                    .crashes
                    .iter()
                    .map(|c| Crash {
                        at: t(c.at),
                        task: task(c.operator, c.subtask),
                    })
                    .collect(),
                random: f.random.as_ref().map(random),
                restart: restart(&f.restart),
                notifications: f.notifications.clone(),
                storage: f.storage.clone(),
                coordinator: f.coordinator.as_ref().map(|c| Coordinator {
                    failover_delay: Duration(c.failover_delay),
                    on_memory_loss: c.on_memory_loss,
                    crashes: c.crashes.iter().map(|&at| at.into()).collect(),
                    random: c.random.as_ref().map(random),
                }),
                worker_crashes: f
                    .worker_crashes
                    .iter()
                    .map(|w| WorkerCrash {
                        at: t(w.at),
                        worker: Some(w.worker),
                    })
                    .collect(),
                random_workers: f.random_workers.as_ref().map(random),
                latency_spikes: f
                    .latency_spikes
                    .iter()
                    .map(|sp| Spike {
                        from: sp.from.into(),
                        until: t(sp.until),
                        extra: d(sp.extra),
                        edge: sp.edge.map(|(a, b)| format!("{}->{}", name(a), name(b))),
                        worker: sp.worker,
                    })
                    .collect(),
                partitions: f
                    .partitions
                    .iter()
                    .map(|p| Partition {
                        from: p.from.into(),
                        until: t(p.until),
                        workers: Some(p.workers.iter().map(|&w| i64::from(w)).collect()),
                    })
                    .collect(),
                slow_tasks: f
                    .slow_tasks
                    .iter()
                    .map(|st| SlowTask {
                        task: task(st.operator, st.subtask),
                        from: st.from.into(),
                        until: t(st.until),
                        factor: st.factor,
                    })
                    .collect(),
            },
            savepoints: s
                .savepoints
                .iter()
                .map(|sp| Savepoint {
                    at: t(sp.at),
                    stop: sp.stop,
                    drain: sp.drain,
                })
                .collect(),
            limits: s.limits.clone(),
            expect: s.expect.clone(),
            swarm: s.swarm.as_ref().map(swarm),
        }
    }
}

fn operator(op: &super::OperatorSpec) -> Operator {
    let mut o = Operator {
        id: Some(op.id.clone()),
        parallelism: Some(op.parallelism),
        cost: Some(Duration(op.cost)),
        cost_jitter: Duration(op.cost_jitter),
        ..Operator::default()
    };
    o.kind = Some(match &op.kind {
        OperatorKind::Source(src) => {
            o.partitions = Some(src.partitions);
            o.records_per_partition = Some(src.records_per_partition);
            o.keys = Some(src.keys);
            o.key_distribution = Some(src.key_distribution);
            o.value_max = Some(src.value_max);
            Kind::Source
        }
        OperatorKind::Map { mul, add } => {
            (o.mul, o.add) = (Some(*mul), Some(*add));
            Kind::Map
        }
        OperatorKind::Filter {
            modulus,
            keep_below,
        } => {
            (o.modulus, o.keep_below) = (Some(*modulus), Some(*keep_below));
            Kind::Filter
        }
        OperatorKind::FlatMap { copies } => {
            o.copies = Some(*copies);
            Kind::FlatMap
        }
        OperatorKind::KeyedCount => Kind::KeyedCount,
        OperatorKind::KeyedSum => Kind::KeyedSum,
        OperatorKind::CountWindow { size } => {
            o.size = Some(*size);
            Kind::CountWindow
        }
        OperatorKind::Sink2pc => Kind::Sink2pc,
        OperatorKind::SinkAtLeastOnce { batch } => {
            o.batch = Some(*batch);
            Kind::SinkAtLeastOnce
        }
    });
    o
}

fn restart(r: &RestartStrategy) -> Restart {
    match *r {
        RestartStrategy::FixedDelay => Restart::default(),
        RestartStrategy::ExponentialDelay {
            max_backoff,
            multiplier_permille,
            reset_threshold,
        } => Restart {
            strategy: Strategy::ExponentialDelay,
            max_backoff: Some(Duration(max_backoff)),
            backoff_multiplier: Some(f64::from(multiplier_permille) / 1000.0),
            reset_threshold: Some(Duration(reset_threshold)),
            ..Restart::default()
        },
        RestartStrategy::FailureRate {
            max_failures,
            interval,
        } => Restart {
            strategy: Strategy::FailureRate,
            max_failures: Some(max_failures),
            interval: Some(Duration(interval)),
            ..Restart::default()
        },
    }
}

fn swarm(s: &super::SwarmSpec) -> Swarm {
    let ints = |r: Option<(u32, u32)>| r.map(|(a, b)| vec![i64::from(a), i64::from(b)]);
    let durations =
        |r: Option<(SimDuration, SimDuration)>| r.map(|(a, b)| vec![Duration(a), Duration(b)]);
    Swarm {
        enabled: s.enabled,
        latency_max: durations(s.latency_max),
        buffer_records: ints(s.buffer_records),
        buffer_credits: ints(s.buffer_credits),
        interval: durations(s.interval),
        timeout: durations(s.timeout),
        cost_percent: ints(s.cost_percent),
        crash_mean_interval: durations(s.crash_mean_interval),
        max_crashes: ints(s.max_crashes),
        crash_window_end: durations(s.crash_window_end),
        notification_loss_percent: ints(s.notification_loss_percent),
        storage_failure_percent: ints(s.storage_failure_percent),
        storage_slow_percent: ints(s.storage_slow_percent),
        coordinator_crashes: ints(s.coordinator_crashes),
        worker_crashes: ints(s.worker_crashes),
        latency_spike_extra: durations(s.latency_spike_extra),
        partition_duration: durations(s.partition_duration),
    }
}
