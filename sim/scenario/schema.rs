//! The scenario file format as serde types: every table and key a file may
//! hold, with every default. Tables are declared with `table!` (a struct as
//! written), `section!` (a table whose validated form follows it key by
//! key) and `operators!` (the operator kinds), from `schema/keys.rs`.
//! [`super::validate`] turns a [`File`] into a [`Scenario`];
//! `File::from(&Scenario)` goes back, with every key written.
//!
//! Deserialization is strict (unknown keys are refused) but knows no rules:
//! integers are TOML's `i64`, so that validation reports a value out of
//! range together with every other problem; names (kebab-case enums) are
//! read as strings. A key whose default depends on another (a source's cost
//! and partitions, the first checkpoint delay, the storage speed) and a key
//! that is required or belongs to one operator kind or restart strategy is
//! an `Option`. Durations inside arrays (coordinator crashes, swarm ranges)
//! stay text: validation reads them, so each is reported where it is.

use serde::de::{self, value::StrDeserializer, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

use super::validate::Validator;
use super::{
    Algorithm, Chaining, CrashSpec, CrashTrigger, Expect, FailoverStrategy, InputOrder,
    KeyDistribution, MemoryLoss, OperatorId, Partitioning, Placement, Redistribution,
    RestartStrategy, Scenario, ScenarioData, SplitAssignment, StorageKind, SwarmSpec, TriggerEvent,
    FORMAT_VERSION,
};
use crate::engine::{bytes_text, duration_text, parse_bytes, parse_duration, SimDuration, SimTime};

#[macro_use]
mod keys;
pub use keys::*;
mod crash_tables;
pub use crash_tables::*;
mod from_scenario;

/// A duration or a time as files write it: `"500ms"`, `"1.5s"`, `"100us"`.
/// Read with [`parse_duration`]; written exactly by [`duration_text`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub SimDuration);

impl Duration {
    pub fn time(self) -> SimTime {
        SimTime(self.0.nanos())
    }
}

impl From<SimTime> for Duration {
    fn from(t: SimTime) -> Self {
        Duration(SimDuration(t.0))
    }
}

const fn us(n: u64) -> Duration {
    Duration(SimDuration::from_micros(n))
}
const fn ms(n: u64) -> Duration {
    Duration(SimDuration::from_millis(n))
}

/// Reads a string through a function inside the deserializer, so that a
/// value it refuses is placed at itself.
/// The second field says what the text is, for a value of another type
/// ("expected a duration such as \"500ms\"").
struct Text<F>(F, &'static str);

/// What a duration is, in messages.
const A_DURATION: &str = "a duration such as \"500ms\" (a string)";

impl<T, F: FnOnce(&str) -> Result<T, String>> de::Visitor<'_> for Text<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.1)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&duration_text(self.0))
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Text(
            |text: &str| parse_duration(text).map(Duration),
            A_DURATION,
        ))
    }
}

/// A size in bytes as files write it: an integer (`32768`) or text with a
/// binary unit (`"32KiB"`, `"5MiB"`, `"1.5KiB"`, `"100B"`). Read with
/// [`parse_bytes`]; written by [`bytes_text`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&bytes_text(self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size: an integer number of bytes or a string such as \"32KiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom(format!("a size must not be negative, not {v}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_bytes(v).map(Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `interval`: a duration, or `"none"` for no periodic checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
        d.deserialize_str(Text(read, "a duration such as \"500ms\", or \"none\""))
    }
}

/// `deserialize_with` for names (kebab-case enums): read as a string, so
/// that another type is "expected a string" like any text, and an unknown
/// name is serde's "unknown variant" at the name itself.
pub(super) fn name<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<T, D::Error> {
    let read = |s: &str| T::deserialize(StrDeserializer::<de::value::Error>::new(s));
    d.deserialize_str(Text(
        |s: &str| read(s).map_err(|e| e.to_string()),
        "a string",
    ))
}

fn some_name<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    name(d).map(Some)
}

/// The name serde gives a unit variant: `"flat-map"` for [`Kind::FlatMap`].
pub fn name_of<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

table! {
    /// A whole scenario file, its keys in the order unknown-key messages
    /// list them (and the written file has them).
    File {
        version: Option<i64> = None,
        name: Option<String> = None,
        description: String = String::new(),
        max_parallelism: i64 = 128,
        /// Chain operators into tasks (Flink's
        /// `pipeline.operator-chaining.enabled`).
        operator_chaining: bool = true,
        network: Network = Network::default(),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        operators: Vec<Operator> = Vec::new(),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        edges: Vec<Edge> = Vec::new(),
        checkpoint: Checkpoint = Checkpoint::default(),
        faults: Faults = Faults::default(),
        limits: Limits = Limits::default(),
        expect: Expect = Expect::default(),
        replay: Replay = Replay::default(),
        swarm: Option<Swarm> = None,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        savepoints: Vec<Savepoint> = Vec::new(),
        cluster: Option<Cluster> = None,
        cancel_at: Option<Duration> = None,
    }
}

section! {
    /// `[network]`.
    Network => NetworkSpec {
        /// Records per network buffer (the unit that credits count); with
        /// `buffer_size`, the most records one buffer holds. By default 16,
        /// or no limit (65536) with `buffer_size`.
        buffer_records: Opt<u32> = None,
        /// Bytes per network buffer: a buffer holds the records that fit (at
        /// least one). By default none: buffers count records only.
        #[serde(skip_serializing_if = "Option::is_none")]
        buffer_size: Custom<Option<Bytes>, Option<u64>> = None,
        /// Exclusive buffers a receiver holds for each input channel (Flink's
        /// `buffers-per-channel`): the credits a channel starts with.
        buffer_credits: u32 = 2,
        /// Floating buffers per input gate, shared by its channels on demand
        /// (Flink's `floating-buffers-per-gate`).
        floating_buffers: u32 = 0,
        /// Buffers a sender may queue per output channel before the task stops
        /// taking input (backpressure).
        output_buffers: u32 = 1,
        latency_min: Dur = us(50),
        latency_max: Dur = us(200),
        /// A partially filled buffer is shipped at the latest this long after a
        /// task last shipped its output.
        flush_timeout: Positive = ms(1),
        /// A task takes at most this much work (records × cost, at least one
        /// record) from an input buffer before it looks for priority events
        /// again. Flink looks between every two records; coarser steps are
        /// faster to simulate.
        step_quantum: Dur = ms(1),
        /// Which ready input a task reads next.
        input_order: InputOrder = InputOrder::Fifo,
    }
}

operators! {
    /// `[[operators]]`: the common keys, then every kind's own (validation
    /// refuses those of another kind).
    Operator {
        id: Option<String> = None,
        #[serde(deserialize_with = "some_name")]
        kind: Option<Kind> = None,
        parallelism: Option<i64> = None,
        /// By default [`SOURCE_COST`] or [`COST`].
        cost: Option<Duration> = None,
        cost_jitter: Duration = Duration::default(),
        /// Whether the operator joins its predecessor's task (Flink's
        /// `ChainingStrategy`).
        #[serde(deserialize_with = "name")]
        chaining: Chaining = Chaining::Always,
        /// The parameters of an operator of a registered kind
        /// (`model::registry`), checked by the kind.
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<toml::Table> = None,
    }
    Source = "source", "replayable partitioned log generated from the seed; offsets are its state"
    (SourceSpec {
        /// By default the operator's parallelism.
        partitions: Hand<u32>,
        records_per_partition: u64 = 1000,
        /// Records per partition, one number per partition, in place of
        /// `records_per_partition` (empty: every partition has that many).
        #[serde(skip_serializing_if = "Option::is_none")]
        partition_records: Hand<Vec<u64>>,
        /// The most records each partition offers per second of virtual
        /// time (record `o` is there from `o / rate` seconds after the job
        /// starts); 0: no limit, every record is there from the start.
        records_per_second: u64 = 0,
        /// One rate per partition, in place of `records_per_second` (0: no
        /// limit for that partition).
        #[serde(skip_serializing_if = "Option::is_none")]
        partition_rates: Hand<Vec<u64>>,
        keys: u64 = 100,
        #[serde(deserialize_with = "some_name")]
        key_distribution: KeyDistribution = KeyDistribution::Uniform,
        /// Percent of records (0 to 100) that carry key 0, the hot key
        /// (CheckMate's skew); the others draw their key by
        /// `key_distribution`.
        hot_key_percent: u32 = 0,
        /// Values are drawn uniformly in `1..=value_max`.
        value_max: u64 = 1,
        /// Bytes per record: uniform in `record_size..=record_size_max`, per
        /// record (equal: every record has this size). Records derived from a
        /// source record have its size. By default [`super::RECORD_BYTES`],
        /// what a record of the simulator holds.
        record_size: Size = Bytes(super::RECORD_BYTES),
        /// By default `record_size`.
        record_size_max: Hand<Size>,
        /// How partitions reach the subtasks: `static` (partition `i` read
        /// by subtask `i % parallelism`, no coordinator) or `enumerator` (a
        /// FLIP-27 source: each partition is a split that a split
        /// enumerator in an operator coordinator assigns to readers on
        /// request, through operator events).
        #[serde(deserialize_with = "some_name")]
        split_assignment: SplitAssignment = SplitAssignment::Static,
        /// `enumerator`: the splits known at the start (by default all);
        /// the enumerator discovers one more every `discovery_interval`.
        initial_splits: Hand<u32>,
        /// `enumerator`: the split discovery period.
        discovery_interval: Positive = DISCOVERY_INTERVAL,
    }), check super::kinds::source;
    /// `value = value * mul + add`.
    Map = "map", "value = value * mul + add" {
        mul: i64 = 1,
        add: i64 = 0,
    };
    /// Keeps records with `key % modulus < keep_below`.
    Filter = "filter", "keeps records with key % modulus < keep_below" {
        modulus: u64 = 2,
        keep_below: u64 = 1,
    }, check super::kinds::filter;
    /// Emits `copies` records per input, each with the input's lineage.
    FlatMap = "flat-map", "emits `copies` records per input" {
        copies: u32 = 2,
    };
    /// Per-key running count; emits `(key, count)`.
    KeyedCount = "keyed-count", "per-key running count in key groups; emits (key, count)";
    /// Per-key running sum of values; emits `(key, sum)`.
    KeyedSum = "keyed-sum", "per-key running sum in key groups; emits (key, sum)";
    /// Per-key count window: every `size` records of a key it emits their
    /// sum (with the lineage of the record that closed the window); at end
    /// of input it flushes the open windows. Buffers records in its state.
    CountWindow = "count-window",
        "per-key count window of `size` records in key groups; emits (key, window sum), \
         flushes open windows at end of input" {
        size: u32 = 10,
    };
    /// Connected components by min-label propagation over `nodes` nodes of
    /// `degree` neighbours each (`model::iterate`): the operator of an
    /// iteration, fed back to itself over a feedback edge.
    MinLabel = "min-label",
        "connected components by min-label propagation over `nodes` nodes with `degree` \
         neighbours each; a record from upstream seeds its key, one over its own feedback \
         edge proposes its value; an improved label goes to every neighbour" {
        nodes: u64 = 1000,
        degree: u32 = 2,
    };
    /// Holds records in list state and emits them in batches of `capacity`
    /// (the rest at end of input); `redistribution` says how its list state
    /// is redistributed on restore.
    Buffer = "buffer",
        "holds records in list state, emits them in batches of `capacity` and at end of input; \
         redistribution = \"split\" or \"union\" list state" {
        capacity: u32 = 10,
        #[serde(deserialize_with = "some_name")]
        redistribution: Redistribution = Redistribution::Split,
    };
    /// A rule table in broadcast state: records of its `broadcast` inputs
    /// set rule `key % rules` to their value; records of its other inputs
    /// go out with their value multiplied by their rule.
    BroadcastProcess = "broadcast-process",
        "rule table in broadcast state: broadcast inputs set rule key % rules, other inputs \
         are emitted with value × rule; each subtask snapshots its copy" {
        rules: u64 = 8,
    };
    /// Two-phase-commit sink: transactions committed on checkpoint completion.
    Sink2pc = "sink-2pc",
        "two-phase-commit sink: pre-commit at the barrier, commit on notify-complete";
    /// Writes to the external store in batches of `batch` records, flushed
    /// when full, at every snapshot and at end of input (`batch = 1`: every
    /// record at once): duplicates on replay.
    SinkAtLeastOnce = "sink-at-least-once",
        "writes to the external store in batches of `batch` records, flushed when full, \
         at every snapshot and at end of input" {
        batch: u32 = 1,
    };
    /// Upsert (idempotent) sink: every record overwrites its key's row in
    /// the external table, without transactions, buffered up to
    /// `buffer_rows` records (Flink JDBC's `sink.buffer-flush.max-rows`),
    /// flushed in arrival order when full, at every snapshot and at end of
    /// input. Replays repeat writes; the finished table converges. Its
    /// inputs must be `hash` edges.
    SinkUpsert = "sink-upsert",
        "upsert sink: overwrites the key's row with the value, buffering `buffer_rows` \
         records, flushed when full, at every snapshot and at end of input; effectively-once" {
        buffer_rows: u32 = 1,
    };
    /// Sink V2 writer: writes into a transaction per checkpoint, hands it to
    /// the committer as a committable before the barrier (and at end of
    /// input). Its outputs go to `sink-committer`s only.
    SinkWriter = "sink-writer",
        "Sink V2 writer: one transaction per checkpoint, handed to the committer as a committable \
         tagged with the checkpoint id before the barrier and at end of input";
    /// Sink V2 committer: keeps committables per checkpoint id, commits
    /// them once their checkpoint completed, and recovered ones at restore.
    SinkCommitter = "sink-committer",
        "Sink V2 committer: keeps committables per checkpoint id, commits those of completed \
         checkpoints on notify-complete and recovered ones at restore; idempotent commits";
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Kind {}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A built-in name or a registered one; an unknown name lists them all.
impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Kind::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = crate::scenario::registry::all_kinds()
                .into_iter()
                .map(|k| k.0)
                .collect();
            de::Error::custom(format!(
                "unknown operator kind `{name}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

/// An operator of a registered kind: the kind and its `params` table.
#[derive(Clone, Debug)]
pub struct CustomOperator {
    pub info: &'static crate::scenario::registry::KindInfo,
    pub params: crate::scenario::registry::Params,
}

impl PartialEq for CustomOperator {
    fn eq(&self, other: &CustomOperator) -> bool {
        self.info.name == other.info.name && self.params == other.params
    }
}

impl Serialize for CustomOperator {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CustomOperator", 2)?;
        st.serialize_field("name", self.info.name)?;
        st.serialize_field("params", &self.params)?;
        st.end()
    }
}

/// `cost` of a source.
pub const SOURCE_COST: Duration = us(10);
/// `discovery_interval` of a source.
pub const DISCOVERY_INTERVAL: Duration = ms(20);
/// `cost` of any other operator.
pub const COST: Duration = us(1);

table! {
    /// `[[edges]]`.
    Edge {
        from: Option<String> = None,
        to: Option<String> = None,
        #[serde(deserialize_with = "some_name")]
        partitioning: Option<Partitioning> = None,
        /// `false`: never chain the two operators of this edge.
        chain: bool = true,
        /// An iteration's feedback edge: it goes back to an operator that
        /// reaches its `from` (or to `from` itself), closing a cycle. Its
        /// records are the loop's; the loop ends once it is quiescent.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        feedback: bool = false,
        /// This edge's channels' latency bounds and exclusive buffers, in
        /// place of `[network]`'s.
        #[serde(skip_serializing_if = "Option::is_none")]
        latency_min: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        latency_max: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        buffer_credits: Option<i64> = None,
        /// Bytes per buffer on this edge's channels, in place of
        /// `[network]`'s `buffer_size`.
        #[serde(skip_serializing_if = "Option::is_none")]
        buffer_size: Option<Bytes> = None,
    }
}

section! {
    /// `[checkpoint]`.
    Checkpoint => CheckpointSpec {
        algorithm: Algorithm = Algorithm::Aligned,
        /// `"none"` (`None`) disables periodic checkpoints.
        interval: Custom<Interval, Option<SimDuration>> = Interval(Some(SimDuration::from_secs(1))),
        /// By default the interval (0 without one).
        first_delay: Opt<Dur> = None,
        /// The uncoordinated families: each task's timer fires every
        /// interval, give or take this much (uniform). By default a fifth of
        /// the interval.
        #[serde(skip_serializing_if = "Option::is_none")]
        local_jitter: Opt<Dur> = None,
        min_pause: Dur = Duration::default(),
        timeout: Positive = Duration(SimDuration::from_secs(600)),
        max_concurrent: u32 = 1,
        /// `aligned-timeout`: age of a checkpoint (from its trigger) after which
        /// alignment gives up and the checkpoint continues unaligned.
        alignment_timeout: Dur = ms(100),
        tolerable_failures: u32 = 0,
        retained: u32 = 1,
        /// A cancelled job leaves its latest completed checkpoint behind
        /// (Flink's externalized `RETAIN_ON_CANCELLATION`), for `run --cancel-at
        /// T --checkpoint-dir DIR`.
        retain_on_cancel: bool = false,
        /// Checkpoints may run while restored in-flight data is still being
        /// replayed (Flink 2.x `execution.checkpointing.during-recovery.enabled`,
        /// FLIP-547): each channel replays its recovered buffers ahead of its
        /// new data, barriers may already arrive, and an unaligned checkpoint
        /// persists the recovered buffers not yet consumed as channel state.
        /// Off (Flink's default, and all Flink ≤ 1.20 can do): no checkpoint is
        /// triggered until every restored buffer was consumed.
        during_recovery: bool = false,
        #[serde(deserialize_with = "name")]
        storage: StorageKind = StorageKind::Memory,
        /// Latency of one state write (or of the ack RPC with `memory`). By
        /// default 100us for memory, 5ms for a file system.
        storage_latency: Opt<Dur> = None,
        /// Bytes per virtual second written to checkpoint storage. By default
        /// 1 GB/s for memory, 200 MB/s for a file system.
        storage_bytes_per_sec: Opt<u64> = None,
        /// `memory` storage: a task whose operator state or channel state is
        /// larger fails the checkpoint (Flink's `JobManagerCheckpointStorage`
        /// max state size, 5 MiB by default). No limit with `filesystem`.
        #[serde(skip_serializing_if = "Option::is_none")]
        max_state_size: Custom<Option<Bytes>, u64> = None,
        /// One-way latency of coordinator ↔ task RPCs.
        rpc_latency: Dur = us(200),
        /// With `filesystem` storage, the subtasks of one operator on one
        /// worker write the channel state of an unaligned (or aligned-timeout)
        /// checkpoint into one shared file, this many per file, through one
        /// writer; every subtask's write completes when the file is closed
        /// (Flink's `execution.checkpointing.unaligned.max-subtasks-per-channel-state-file`,
        /// default 5, FLINK-26803). 1: a file per subtask.
        max_subtasks_per_channel_state_file: u32 = 5,
        /// The longest one-way latency of a coordinator → task RPC (trigger,
        /// notifications); each is drawn in `[rpc_latency, rpc_latency_max]`
        /// per task, so a notification can reach one task after the next
        /// checkpoint's barrier did. By default `rpc_latency` (no jitter).
        rpc_latency_max: Opt<Dur> = None,
    }
}

/// Flink's default max state size of `JobManagerCheckpointStorage`.
pub const MAX_STATE_SIZE: Bytes = Bytes(5 << 20);

impl Checkpoint {
    /// The defaults of `storage_latency` and `storage_bytes_per_sec` for
    /// `storage`.
    pub fn storage_speed(storage: StorageKind) -> (Duration, i64) {
        match storage {
            StorageKind::Memory => (us(100), 1_000_000_000),
            StorageKind::Filesystem => (ms(5), 200_000_000),
        }
    }
}

section! {
    /// `[faults]`.
    Faults => FaultSpec {
        /// What a task failure restarts.
        #[serde(deserialize_with = "name")]
        failover: FailoverStrategy = FailoverStrategy::Full,
        /// Time from a crash until the coordinator notices it (heartbeat timeout).
        detection_delay: Dur = ms(100),
        /// Fixed-delay restart: time from detection until the job is redeployed.
        restart_delay: Dur = ms(100),
        /// Give up (the job fails) after this many restarts.
        max_restarts: u32 = 1000,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        crashes: Custom<Vec<Crash>, Vec<CrashSpec>> = Vec::new(),
        random: Hand<Option<Random>> = None,
        /// `[faults.restart]`: the restart strategy (fixed-delay by default,
        /// with `restart_delay` and `max_restarts`).
        restart: Custom<Restart, RestartStrategy> = Restart::default(),
        /// `[faults.notifications]`: checkpoint-complete notifications lost.
        notifications: Hand<Option<Notifications>> = None,
        /// `[faults.operator_events]`: operator events to subtasks lost.
        operator_events: Hand<Option<OperatorEvents>> = None,
        /// `[faults.storage]`: checkpoint storage writes that fail or are slow.
        storage: Hand<Option<StorageFaults>> = None,
        /// `[faults.coordinator]`: coordinator crashes and their recovery.
        coordinator: Hand<Option<Coordinator>> = None,
        /// `[[faults.slow_tasks]]`: stragglers.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        slow_tasks: Custom<Vec<SlowTask>, Vec<super::SlowTask>> = Vec::new(),
        /// `[[faults.worker_crashes]]` (needs `[cluster]`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        worker_crashes: Custom<Vec<WorkerCrash>, Vec<WorkerCrashSpec>> = Vec::new(),
        /// `[faults.random_workers]`: worker crashes drawn from the seed.
        random_workers: Hand<Option<Random>> = None,
        /// `[[faults.latency_spikes]]`: extra network latency for a while.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        latency_spikes: Custom<Vec<Spike>, Vec<LatencySpike>> = Vec::new(),
        /// `[[faults.partitions]]`: workers cut off from the rest (needs `[cluster]`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        partitions: Custom<Vec<Partition>, Vec<PartitionSpec>> = Vec::new(),
        /// `[[faults.storage_failures]]`: one checkpoint's storage write fails.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        storage_failures: Custom<Vec<Targeted>, Vec<TargetedFault>> = Vec::new(),
        /// `[[faults.lost_notifications]]`: one checkpoint's completion
        /// notifications are lost.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        lost_notifications: Custom<Vec<Targeted>, Vec<TargetedFault>> = Vec::new(),
    }
}

section! {
    /// A random crash table (`[faults.random]`, `[faults.random_workers]`,
    /// `[faults.coordinator.random]`): crashes drawn from the seed before the
    /// run. The window is cut into 1 ms slots and each slot crashes a
    /// uniformly chosen subtask with probability `1ms / mean_interval`, up to
    /// `max_crashes`.
    Random => RandomCrashes {
        mean_interval: Opt<Dur> = None,
        window_start: Hand<Dur<SimTime>> = Duration::default(),
        window_end: Opt<Dur<SimTime>> = None,
        max_crashes: u32 = 3,
        /// `[faults.random]` only: crash only subtasks of these operators
        /// (by default any operator's).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        operators: Custom<Vec<String>, Vec<OperatorId>> = Vec::new(),
        /// `[faults.random_workers]` only: crash only these workers (by
        /// default any).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        workers: Custom<Vec<i64>, Vec<u32>> = Vec::new(),
    }
}

/// The restart strategies, as files name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    FixedDelay,
    ExponentialDelay,
    FailureRate,
}

table! {
    /// The defaults of the keys that belong to one restart strategy
    /// (`[faults.restart]` gives none).
    StrategyDefaults {
        max_backoff: Duration = Duration(SimDuration::from_secs(60)),
        /// `backoff_multiplier` (1.5) in thousandths.
        multiplier_permille: u32 = 1500,
        reset_threshold: Duration = Duration(SimDuration::from_secs(3_600)),
        max_failures: i64 = 1,
        /// `interval` of the failure-rate strategy.
        interval: Duration = Duration(SimDuration::from_secs(60)),
    }
}

table! {
    /// `[faults.restart]`: the strategy and the keys of every strategy
    /// (validation refuses those of another; their defaults are in
    /// [`StrategyDefaults`]).
    Restart {
        #[serde(deserialize_with = "name")]
        strategy: Strategy = Strategy::FixedDelay,
        max_backoff: Option<Duration> = None,
        backoff_multiplier: Option<f64> = None,
        reset_threshold: Option<Duration> = None,
        max_failures: Option<i64> = None,
        interval: Option<Duration> = None,
    }
}

section! {
    /// `[faults.notifications]`: lost checkpoint-complete notifications.
    Notifications => NotificationFaults {
        /// Each notify-complete RPC to a task is lost with this probability (%).
        /// The final checkpoint's notification is never lost.
        loss_percent: u32 = 0,
    }
}

section! {
    /// `[faults.operator_events]`: lost coordinator → subtask operator events
    /// (a FLIP-27 enumerator's split assignments).
    OperatorEvents => OperatorEventFaults {
        /// Each event is lost with this probability (%): its RPC fails, and
        /// the coordinator fails the target subtask.
        loss_percent: u32 = 0,
    }
}

section! {
    /// `[faults.storage]`: checkpoint storage faults, drawn per write.
    StorageFaults => StorageFaultSpec {
        /// A task's state write, or the checkpoint's metadata write, fails with
        /// this probability (%).
        failure_percent: u32 = 0,
        /// A write is slow with this probability (%) ...
        slow_percent: u32 = 0,
        /// ... and then takes this much longer.
        slow_latency: Dur = ms(50),
    }
}

section! {
    /// `[faults.coordinator]`: coordinator (JobManager) crashes.
    Coordinator => CoordinatorFaults {
        /// Time from the crash until a new coordinator restarts the job.
        failover_delay: Dur = ms(200),
        #[serde(deserialize_with = "name")]
        on_memory_loss: MemoryLoss = MemoryLoss::RestartFromScratch,
        /// Explicit crash times (durations as written in the file).
        crashes: Hand<Vec<TimeText>> = Vec::new(),
        /// Crashes drawn from the seed (the random table's `max_crashes`).
        random: Hand<Option<Random>> = None,
        /// `[[faults.coordinator.crash_on]]`: crashes after an event.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        crash_on: Custom<Vec<CoordinatorCrash>, Vec<CrashTrigger>> = Vec::new(),
    }
}

table! {
    /// `[[faults.slow_tasks]]`: between `from` and `until` (or for
    /// `duration` from `delay` after an event `on`).
    SlowTask {
        task: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<Duration> = None,
        factor: i64 = 10,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Duration> = None,
    }
}

section! {
    /// `[replay]`: what `run` and `shrink` take without `--seed`, and `run`,
    /// `sweep` and `shrink` without `--mutant`. A shrunk reproducer writes it (with its
    /// algorithm in `[checkpoint]`), so that the file alone fails as the
    /// run it was shrunk from.
    Replay => ReplaySpec {
        /// The seed `run` and `shrink` use without `--seed`.
        seed: u64 = 0,
        /// Mutants switched on without `--mutant` (names from `ckptsim
        /// list`).
        mutants: Hand<Vec<String>> = Vec::new(),
        /// A schedule `ckptsim explore` found: the ready input each of the
        /// run's first choices between two or more reads (an index into
        /// them, lowest input first); after the last, the lowest ready input.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        choices: Hand<Vec<u32>> = Vec::new(),
        /// Subtasks (`"op[i]"`) that may crash, once, at any step of a
        /// scripted run: before each step, whether to crash there is a
        /// choice (`ckptsim explore --crash`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        crash_points: Custom<Vec<String>, Vec<(OperatorId, u32)>> = Vec::new(),
    }
}

section! {
    /// `[limits]`.
    Limits => LimitSpec {
        max_events: u64 = 50_000_000,
        max_time: Positive<SimTime> = Duration(SimDuration::from_secs(600)),
    }
}

/// `[swarm]`: `[min, max]` ranges as written (validation checks their
/// length, bounds and order).
pub type Swarm = super::Swarm<Vec<String>, Vec<i64>>;

section! {
    /// `[[savepoints]]`: a savepoint requested at a virtual time (or
    /// `ckptsim savepoint --at`). Always aligned; queued until no checkpoint
    /// is pending and the job runs; see `docs/savepoints.md`.
    Savepoint => SavepointSpec {
        at: Opt<Dur<SimTime>> = None,
        /// Stop the job with this savepoint (stop-with-savepoint): the tasks
        /// are notified and finish; a plain savepoint notifies nobody.
        stop: bool = false,
        /// With `stop`: the sources end their input first, so every operator
        /// flushes (`end_of_input`) before the savepoint's barrier.
        drain: bool = false,
    }
}

section! {
    /// `[cluster]`: workers with task slots. With slot sharing (Flink's
    /// default), slot `i` holds subtask `i` of every operator, so the job
    /// needs as many slots as its highest parallelism.
    Cluster => ClusterSpec {
        workers: u32 = 2,
        slots_per_worker: u32 = 1,
        /// How slots are chosen from the workers.
        #[serde(deserialize_with = "name")]
        placement: Placement = Placement::Spread,
        /// A lost worker is noticed this long after it crashed.
        heartbeat_timeout: Dur = ms(50),
        /// A replacement worker is ready this long after the crash; the job
        /// restarts no earlier.
        replacement_delay: Dur = ms(100),
    }
}

/// A count as a file integer. One above `i64::MAX`, which no valid scenario
/// holds and no file can, becomes `i64::MIN`, which validation refuses.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MIN)
}
