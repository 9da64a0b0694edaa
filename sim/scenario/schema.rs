//! The scenario file format as serde types: every table and key a file may
//! hold, with every default. Tables are declared with `table!` (a struct as
//! written), `section!` (a table whose validated form follows it key by
//! key) and `operators!` (the operator kinds), from `schema/keys.rs`.
//! [`super::validate`] turns a [`File`] into a [`Scenario`];
//! `File::from(&Scenario)` goes back, with every key written. A key's doc
//! comment and `#[key(type, default)]` are its row in docs/scenarios.md's
//! key tables, which [`docs`] generates.
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
    Algorithm, Chaining, CrashSpec, CrashTrigger, Delivery, Expect, FailoverStrategy, FlinkVersion,
    InputOrder, KeyDistribution, LogIsolation, MemoryLoss, OperatorId, Partitioning, Placement,
    Redistribution, RestartStrategy, SavepointFormat, Scenario, ScenarioData, SplitAssignment,
    StartingOffsets, StateBackend, StorageKind, SwarmSpec, TriggerEvent, TxnNaming, FORMAT_VERSION,
};
use crate::engine::{duration_text, SimDuration, SimTime};

#[macro_use]
mod keys;
pub use keys::*;
mod crash_tables;
pub use crash_tables::*;
pub mod docs;
pub mod flink;
mod limits;
pub use limits::*;
mod replay;
pub use replay::*;
mod cluster;
pub use cluster::*;
mod from_scenario;
mod kind_serde;
mod size;
pub use size::Bytes;
mod duration;
use duration::{ms, us, Text};
pub use duration::{Duration, Interval};

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
        /// Records per network buffer, the unit credits count. With `buffer_size`, the most
        /// records one buffer holds (by default no limit in practice, as in Flink).
        #[key("integer, 1–65536", "`16`; `65536` with `buffer_size`")]
        buffer_records: Opt<u32> = None,
        /// Bytes per network buffer (Flink's `taskmanager.memory.segment-size`, default
        /// `"32KiB"`). A buffer holds the records that fit: it ships when the next record
        /// would not fit (that record opens the next buffer) or when it is full. A record
        /// larger than a buffer travels alone in one buffer (a simplification: Flink spans
        /// it over several). Without it, buffers count records only (`buffer_records`), as
        /// before sizes existed.
        #[key("size, 1 B–1 GiB", "none")]
        #[serde(skip_serializing_if = "Option::is_none")]
        buffer_size: Custom<Option<Bytes>, Option<u64>> = None,
        /// Exclusive buffers a receiver holds for each input channel: the credits a channel
        /// starts with (Flink's `taskmanager.network.memory.buffers-per-channel`, default
        /// 2).
        #[key("integer, ≥ 1", "`2`")]
        buffer_credits: u32 = 2,
        /// Floating buffers per input gate (one gate per receiving subtask and input edge,
        /// shared by the channels from every upstream subtask), lent to the gate's channels
        /// with a backlog (Flink's `floating-buffers-per-gate`, default 8).
        #[key("integer, ≥ 0", "`0`")]
        floating_buffers: u32 = 0,
        /// Buffers a sender may queue per output channel before the task stops taking input
        /// (backpressure).
        #[key("integer, ≥ 1", "`1`")]
        output_buffers: u32 = 1,
        /// Smallest one-way delivery latency of a buffer.
        #[key("duration", "`\"50us\"`")]
        latency_min: Dur = us(50),
        /// Largest one-way latency; each buffer's latency is drawn from the seed within
        /// `[latency_min, latency_max]`.
        #[key("duration, ≥ `latency_min`", "`\"200us\"`")]
        latency_max: Dur = us(200),
        /// A partially filled buffer is shipped at the latest this long after the task last
        /// shipped output.
        #[key("duration, > 0", "`\"1ms\"`")]
        flush_timeout: Positive = ms(1),
        /// A task takes at most this much work (records × its `cost`, at least one record)
        /// from an input buffer before it looks for priority events (unaligned barriers)
        /// again. Flink looks between every two records; a coarser step simulates faster
        /// and delays unaligned barriers by up to one step.
        #[key("duration", "`\"1ms\"`")]
        step_quantum: Dur = ms(1),
        /// Which ready input a task reads next. `"fifo"` is Flink's: the inputs in the
        /// order their data became available (the gate's queue of channels with data; a
        /// channel read from goes to the back while it has data), so under even
        /// backpressure barriers arrive nearly together and alignment is near zero.
        /// `"random"` picks uniformly from the scheduling stream: an exploration strategy
        /// that reaches orders Flink rarely takes (long alignments, barriers far apart);
        /// `--swarm` draws one of the two per seed, and reproducers found under it pin it.
        #[key("`\"fifo\"` or `\"random\"`", "`\"fifo\"`")]
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
        /// `enumerator`: the enumerator pushes splits instead of answering
        /// requests (Kafka's enumerator): a reader gets every
        /// `parallelism`-th known split when it registers (its first
        /// request; one operator event per split), a split found later goes
        /// at once to its reader, and a reader that ran out is told there
        /// are no more once every split is found.
        push_splits: bool = false,
        /// `push_splits`: once every split is found, the enumerator tells
        /// each registered reader at once that no split will come (Kafka's
        /// enumerator with a bounded stopping offset), while it still
        /// reads its splits; otherwise a reader hears it when it has run
        /// out and asks.
        no_more_splits_at_assignment: bool = false,
        /// Event time: a partition's records are stamped with timestamps
        /// (milliseconds, as Flink's) that advance by this much per record
        /// (`model::workload`); a whole number of milliseconds.
        event_time_step: Positive = ms(1),
        /// Event time: each record's timestamp lies up to this much below
        /// its place in order (a draw per record): the disorder a
        /// bounded-out-of-orderness watermark strategy allows for.
        out_of_orderness: Dur = Duration::default(),
        /// Event time: each partition's timestamps start up to this much
        /// after the earliest's (a draw per partition): skew between
        /// partitions (splits).
        partition_skew: Dur = Duration::default(),
        /// Event time: the source emits watermarks every this much
        /// processing time (Flink's `pipeline.auto-watermark-interval`),
        /// each split's own from a bounded-out-of-orderness generator,
        /// combined over the reader's splits; 0: no watermarks (the
        /// source has no watermark strategy). A whole number of
        /// milliseconds.
        watermark_interval: Dur = Duration::default(),
        /// Event time: the watermark strategy's bound
        /// (`WatermarkStrategy.forBoundedOutOfOrderness`); by default
        /// `out_of_orderness`, so no record is late at the source. A
        /// whole number of milliseconds.
        watermark_bound: Opt<Dur> = None,
        /// Event time: the watermark strategy's idleness
        /// (`WatermarkStrategy.withIdleness`): a split from which no record
        /// came for this much processing time, not counting time the task
        /// was backpressured, is marked idle and leaves the reader's
        /// combined watermark until its next record; when every split is,
        /// the source sends an idle watermark status. 0: no idleness.
        /// Needs a `watermark_interval` (idleness is found at the periodic
        /// emits).
        idle_timeout: Dur = Duration::default(),
        /// Event time: watermark alignment (FLIP-182, FLIP-217,
        /// `WatermarkStrategy.withWatermarkAlignment`): the sources with the
        /// same group name keep their event time within
        /// `alignment_max_drift` of each other. Each reader reports its
        /// watermark to its source's coordinator every
        /// `alignment_update_interval`; the coordinator sends back the
        /// group's smallest watermark plus the drift, and the reader pauses
        /// the splits whose watermark is above it until it no longer is.
        /// Empty: no alignment. Needs `split_assignment = "enumerator"` and
        /// a `watermark_interval`.
        alignment_group: String = String::new(),
        /// Event time: the largest drift alignment allows (a whole number
        /// of milliseconds greater than zero, with `alignment_group`).
        alignment_max_drift: Dur = Duration::default(),
        /// Event time: how often readers report their watermark and the
        /// coordinator announces the group's maximum (Flink's default 1 s;
        /// a whole number of milliseconds).
        alignment_update_interval: Positive = ms(1000),
        /// Each record carries a payload (`model::payload`): its partition
        /// and offset, serialised, a stand-in for a record body of the
        /// job's own type, so payloads travel through channels, channel
        /// state, savepoints and sinks and are judged with the values.
        payloads: bool = false,
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
    /// Per-key event-time windows (Flink's `WindowOperator` with an
    /// `EventTimeTrigger`): tumbling windows of `window_size`, or sliding
    /// ones every `window_slide`, or (`session_gap`) sessions; a window's sum
    /// is emitted when the watermark passes its end, and again for each
    /// record up to `allowed_lateness` later; later records go to a
    /// `side_output = "late"` edge, or are dropped. Needs a source with
    /// watermarks.
    EventTimeWindow = "event-time-window",
        "per-key event-time windows of `window_size` (sliding every `window_slide`), or sessions \
         of `session_gap`, in keyed state with their timers; emits (key, window sum) when the \
         watermark passes a window's end, again per record up to `allowed_lateness` later; later \
         records go to a `side_output = \"late\"` edge or are dropped" {
        window_size: Positive = ms(1000),
        /// By default `window_size` (tumbling windows).
        window_slide: Opt<Dur> = None,
        allowed_lateness: Dur = Duration::default(),
        /// Session windows (`EventTimeSessionWindows.withGap`): a record
        /// opens `[timestamp, timestamp + gap)`, merged with the key's
        /// windows it touches. 0 (the default): tumbling or sliding windows.
        session_gap: Dur = Duration::default(),
    }, check super::kinds::event_time_window;
    /// Per-key running sum with timers (Flink's `KeyedProcessFunction`):
    /// every record registers an event-time timer `timer_delay` after its
    /// timestamp and, with `processing_delay`, a processing-time timer that
    /// long after it is processed; a timer that fires emits (key, sum).
    KeyedProcess = "keyed-process",
        "per-key running sum with timers in keyed state (a KeyedProcessFunction): each record \
         registers an event-time timer `timer_delay` after its timestamp and, with \
         `processing_delay`, a processing-time timer; a timer that fires emits (key, sum)" {
        timer_delay: Dur = ms(10),
        /// 0 (the default): no processing-time timers.
        processing_delay: Dur = Duration::default(),
    }, check super::kinds::keyed_process;
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
    /// Flink's Kafka sink over a topic of the transactional log
    /// (`model::txlog::sink`): records to partition `key % topic_partitions`,
    /// appended in batches of `producer_batch`; `delivery` exactly-once (a
    /// transaction per checkpoint and subtask, pre-committed at the
    /// snapshot, committed on notification; lingering transactions of
    /// earlier attempts aborted at a restore), at-least-once (flushed at
    /// every snapshot) or none; transactional ids `incrementing`
    /// (`prefix-subtask-checkpoint`) or `pooling`; the broker aborts a
    /// transaction open longer than `transaction_timeout`.
    SinkLog = "sink-log",
        "Kafka sink into a topic of the transactional log: delivery exactly-once (a transaction \
         per checkpoint, committed on notify-complete, lingering ones aborted at restore), \
         at-least-once or none; transactional ids incrementing or pooling; the broker aborts \
         transactions older than transaction_timeout" {
        #[serde(deserialize_with = "some_name")]
        delivery: Delivery = Delivery::ExactlyOnce,
        #[serde(deserialize_with = "some_name")]
        transaction_naming: TxnNaming = TxnNaming::Incrementing,
        /// The topic's partitions (1 to 1024).
        topic_partitions: u32 = 4,
        /// Records per producer batch (Kafka's `batch.size`), 1 to 100,000.
        producer_batch: u32 = 1,
        /// Kafka's `transaction.timeout.ms` (Flink's Kafka sink sets one hour).
        transaction_timeout: Positive = ms(3_600_000),
        /// Kafka's `delivery.timeout.ms`: a request not answered in time
        /// expires, its records dropped and its error kept for the writer.
        delivery_timeout: Positive = ms(120_000),
        /// Kafka's `request.timeout.ms`: how long the producer waits for an
        /// answer before it retries.
        request_timeout: Positive = ms(30_000),
        /// Kafka's `retry.backoff.ms`: the wait before a retry after an error.
        retry_backoff: Positive = ms(100),
        /// Kafka's `max.block.ms`: how long a call to the transaction
        /// coordinator blocks before it gives up.
        max_block: Positive = ms(60_000),
        /// Flink's `sink.committer.retries` (0 to 1,000).
        commit_retries: u32 = 10,
    }, check super::kinds::sink_log;
    /// Flink's Kafka source over a topic of the transactional log
    /// (`model::txlog::source`): the topic a `sink-log` of the same job
    /// writes (`topic`, its id); partition `p` read by subtask `p %
    /// parallelism`; `read-committed` (below the last stable offset,
    /// aborted data skipped) or `read-uncommitted`; offsets in its
    /// checkpoints, committed to its consumer group when a checkpoint
    /// completes; a fresh start from the `earliest` offsets or the group's
    /// `committed` ones; ends once the topic's writer has finished and it
    /// has read every partition to its end.
    SourceLog = "source-log",
        "Kafka source over the topic a sink-log of the job writes: read_committed (default) or \
         read_uncommitted, offsets in checkpoints and committed to the consumer group on \
         notify-complete, a fresh start from the earliest or the committed offsets" {
        /// The `sink-log` whose topic it reads (its id).
        topic: String = String::new(),
        #[serde(deserialize_with = "some_name")]
        isolation: LogIsolation = LogIsolation::ReadCommitted,
        #[serde(deserialize_with = "some_name")]
        starting_offsets: StartingOffsets = StartingOffsets::Earliest,
        /// How long a reader that found nothing to read waits before it
        /// fetches again.
        fetch_interval: Positive = ms(1),
    }, check super::kinds::source_log;
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
    /// Sink V2 global committer (the post-commit topology): reads the
    /// committables its committers forward as they commit, and publishes
    /// them one checkpoint at a time once every committer's have arrived.
    SinkGlobalCommitter = "sink-global-committer",
        "Sink V2 global committer: publishes, as their committables arrive, the checkpoints whose \
         committables every committer forwarded, oldest first, stopping at the first incomplete one";
}

/// An operator of a registered kind: the kind and its `params` table.
#[derive(Clone, Debug)]
pub struct CustomOperator {
    pub info: &'static crate::scenario::registry::KindInfo,
    pub params: crate::scenario::registry::Params,
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
        /// `"late"`: the edge carries the late records of its `from`, an
        /// `event-time-window` (Flink's `sideOutputLateData`), not its
        /// results. Never chained.
        #[serde(skip_serializing_if = "String::is_empty")]
        side_output: String = String::new(),
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
        /// The checkpoint algorithm: `aligned`, `unaligned`, `aligned-timeout`,
        /// `at-least-once`, `chandy-lamport`, `stop-the-world`, `uncoordinated`, `cic-bcs`,
        /// `cic-hmnr` or `none` (`ckptsim list` prints them; [algorithms.md](algorithms.md)
        /// describes them). `--algorithm` on the command line overrides it. The
        /// uncoordinated families (`uncoordinated`, `cic-bcs`, `cic-hmnr`) refuse
        /// savepoints, Sink V2 writers and committers, FLIP-27 enumerators and union list
        /// state, each where it is written (or on the command line, exit 2).
        #[key("string", "`\"aligned\"`")]
        algorithm: Algorithm = Algorithm::Aligned,
        /// Time between periodic checkpoint triggers. `"none"` disables periodic
        /// checkpoints.
        #[key("duration > 0, or `\"none\"`", "`\"1s\"`")]
        interval: Custom<Interval, Option<SimDuration>> = Interval(Some(SimDuration::from_secs(1))),
        /// When the first checkpoint is triggered.
        #[key("duration", "the interval (`0` with `\"none\"`)")]
        first_delay: Opt<Dur> = None,
        /// The uncoordinated families: each task's checkpoint timer fires every `interval`,
        /// give or take this much (uniform, per task and per timer; the first at
        /// `first_delay`, give or take as much).
        #[key("duration (at most the interval counts)", "a fifth of the interval")]
        #[serde(skip_serializing_if = "Option::is_none")]
        local_jitter: Opt<Dur> = None,
        /// Least time between the end of one checkpoint and the start of the next.
        #[key("duration", "`\"0ms\"`")]
        min_pause: Dur = Duration::default(),
        /// A checkpoint not complete after this long is declared failed.
        #[key("duration, > 0", "`\"10m\"`")]
        timeout: Positive = Duration(SimDuration::from_secs(600)),
        /// Checkpoints that may be in flight at once. `unaligned`, `aligned-timeout`,
        /// `chandy-lamport` and `stop-the-world` allow 1: a scenario declaring one of them
        /// with more is refused; chosen with `--algorithm`, they use 1.
        #[key("integer, ≥ 1", "`1`")]
        max_concurrent: u32 = 1,
        /// `aligned-timeout`: once a checkpoint is this old (counted from its trigger, as
        /// Flink does), tasks still aligning switch to unaligned, and barriers still queued
        /// in output queues turn priority.
        #[key("duration", "`\"100ms\"`")]
        alignment_timeout: Dur = ms(100),
        /// Consecutive checkpoint failures tolerated; one more fails the job over (restart
        /// from the latest completed checkpoint), like Flink's `CheckpointFailureManager`.
        #[key("integer, ≥ 0", "`0`")]
        tolerable_failures: u32 = 0,
        /// Completed checkpoints kept for recovery.
        #[key("integer, ≥ 1", "`1`")]
        retained: u32 = 1,
        /// A cancelled job (`run --cancel-at`) keeps its latest completed checkpoint, and
        /// `--checkpoint-dir` writes it (Flink's `RETAIN_ON_CANCELLATION`); see
        /// [savepoints.md](savepoints.md).
        #[key("boolean", "`false`")]
        retain_on_cancel: bool = false,
        /// Checkpoints may run while restored in-flight data is still being replayed (Flink
        /// 2.x `execution.checkpointing.during-recovery.enabled`, FLIP-547; off by default,
        /// as in Flink, and impossible in Flink ≤ 1.20). Off: after a restore with channel
        /// state the task reads every restored buffer first and triggers are skipped until
        /// it did. On: each channel's restored buffers are the head of that channel, read
        /// in the usual input order; a checkpoint may start at once, a priority barrier
        /// overtakes restored buffers, and an unaligned checkpoint persists the restored
        /// buffers not read yet as channel state. `--swarm` draws it (`[swarm]
        /// during_recovery`). See
        /// [ARCHITECTURE.md](ARCHITECTURE.md#how-failure-and-recovery-flow).
        #[key("boolean", "`false`")]
        during_recovery: bool = false,
        /// The Flink release whose behaviour the run follows where releases differ: from
        /// `"2.1"` the trigger of an unaligned checkpoint at a source task is an urgent mail
        /// that runs ahead of the mails already queued in the task's mailbox (operator
        /// events, notifications; FLINK-35051); up to `"2.0"` it runs in order. From `"2.2"`
        /// a source reader whose splits are all idle flushes the largest of their watermarks
        /// (FLINK-38454); up to `"2.1"` its watermark stays. `--swarm` draws it (`[swarm] flink_version`). See
        /// [ARCHITECTURE.md](ARCHITECTURE.md#the-task-thread-and-its-mailbox).
        #[key("`\"1.20\"`, `\"2.0\"`, `\"2.1\"`, `\"2.2\"` or `\"2.3\"`", "`\"2.3\"`")]
        #[serde(deserialize_with = "name")]
        flink_version: FlinkVersion = FlinkVersion::V2_3,
        /// Where snapshots go. `memory` (Flink's `JobManagerCheckpointStorage`): nothing is
        /// written to files; once every barrier arrived, a task sends its operator state
        /// and channel state inside its acknowledgement to the coordinator's heap, and a
        /// state above `max_state_size` fails the checkpoint. `filesystem`
        /// (`FileSystemCheckpointStorage`): each task writes its operator state to a
        /// durable file from the moment of its snapshot; channel state is written as it is
        /// captured, into a file of its own or one shared with the operator's other
        /// subtasks on its worker (`max_subtasks_per_channel_state_file`); the task
        /// acknowledges when both are written. See "How long a checkpoint's writes take" in
        /// [ARCHITECTURE.md](ARCHITECTURE.md).
        #[key("`\"memory\"` or `\"filesystem\"`", "`\"memory\"`")]
        #[serde(deserialize_with = "name")]
        storage: StorageKind = StorageKind::Memory,
        /// How a task's keyed state goes into its snapshot (with `filesystem` storage, into
        /// files the checkpoint storage keeps, [ARCHITECTURE.md](ARCHITECTURE.md#checkpoint-storage-as-files)).
        /// `hashmap` (Flink's `HashMapStateBackend`): every snapshot writes the task's whole
        /// state into a file of its own. `incremental` (Flink's RocksDB backend with
        /// `execution.checkpointing.incremental`; needs `filesystem`): a snapshot writes one
        /// immutable run holding the key groups changed since the last confirmed checkpoint
        /// and refers to the earlier runs for the rest; the shared-state registry deletes a
        /// run once no retained checkpoint refers to it; past `max_runs` runs a task writes
        /// one compacted run instead. `changelog` (Flink's changelog state backend,
        /// FLIP-158; needs `filesystem`): keyed state changes go into a log; every
        /// `materialization_interval` the state as of a point of the log is written into a
        /// file, and a snapshot is the last materialization plus the log's tail since, the
        /// tail uploaded as segments later snapshots refer to again; a restore replays the
        /// tail. `--swarm` draws it (`[swarm] state_backend`).
        #[key("`\"hashmap\"`, `\"incremental\"` or `\"changelog\"`", "`\"hashmap\"`")]
        #[serde(deserialize_with = "name")]
        state_backend: StateBackend = StateBackend::Hashmap,
        /// `incremental`: the most runs one task's snapshot refers to; a snapshot that would
        /// refer to more writes a single compacted run of every key group instead (RocksDB's
        /// level-0 compaction trigger is 4).
        #[key("integer, 1–64", "`4`")]
        max_runs: u32 = 4,
        /// `changelog`: time between a task's materialization triggers (Flink's
        /// `state.changelog.periodic-materialize.interval`): the first comes after a delay of
        /// the task's own below it, the next one this long after a trigger that started
        /// nothing or after the upload of the one it started ended. A trigger
        /// is skipped while the last materialization is neither in a checkpoint the task
        /// was notified of nor failed, and when nothing was logged since.
        #[key("duration > 0", "three times the checkpoint interval (`\"3s\"` without one)")]
        #[serde(skip_serializing_if = "Option::is_none")]
        materialization_interval: Opt<Dur> = None,
        /// `changelog`: task-thread time a restore spends applying one logged state change
        /// of the restored tail to the backend (the replay of
        /// `ChangelogBackendRestoreOperation`). A restore from files keeps the task's
        /// thread busy for `storage_latency`, then every byte of the files the snapshot
        /// refers to at `storage_bytes_per_sec`, then this per change replayed.
        #[key("duration", "`\"2us\"`")]
        changelog_replay_cost: Dur = us(2),
        /// `filesystem`: from the end of a file's write until it is synced (durable). A
        /// task acknowledges only once its files are synced; a storage crash
        /// (`[faults.storage] crashes`) loses every file not synced yet.
        #[key("duration", "`\"0s\"`")]
        storage_sync: Dur = Duration::default(),
        /// Latency of opening a state file (a task's operator state, at its snapshot; a
        /// channel-state file, at its first subtask's snapshot), of the metadata write, or,
        /// with `memory`, of sending the state with the acknowledgement.
        #[key("duration", "`\"100us\"` (memory), `\"5ms\"` (filesystem)")]
        storage_latency: Opt<Dur> = None,
        /// Bytes per virtual second of one writer: a task's operator-state file and a
        /// channel-state file are each written at this rate, or, with `memory`, the state
        /// travels at it.
        #[key("integer, ≥ 1", "`1_000_000_000` (memory), `200_000_000` (filesystem)")]
        storage_bytes_per_sec: Opt<u64> = None,
        /// `memory` only (an error with `filesystem`): a task whose operator state, or
        /// whose channel state, is larger makes the checkpoint fail (outcome
        /// `state-too-large`, "a task's state is larger than memory storage's
        /// max_state_size"), counted against `tolerable_failures` like a storage failure.
        /// Flink's `JobManagerCheckpointStorage` default max state size.
        #[key("size, ≥ 1 B", "`\"5MiB\"`")]
        #[serde(skip_serializing_if = "Option::is_none")]
        max_state_size: Custom<Option<Bytes>, u64> = None,
        /// One-way latency of coordinator ↔ task RPCs.
        #[key("duration", "`\"200us\"`")]
        rpc_latency: Dur = us(200),
        /// `filesystem` storage, unaligned and aligned-timeout checkpoints: the subtasks of
        /// one operator on one worker (`[cluster]`; without it every subtask is on a worker
        /// of its own) share a channel-state writer and file, this many per file, and each
        /// acknowledges only when the shared file is closed (Flink's
        /// `execution.checkpointing.unaligned.max-subtasks-per-channel-state-file`,
        /// FLINK-26803). `1`: a file per subtask. See "How long a checkpoint's writes take"
        /// in [ARCHITECTURE.md](ARCHITECTURE.md).
        #[key("integer, ≥ 1", "`5`")]
        max_subtasks_per_channel_state_file: u32 = 5,
        /// `filesystem` storage: Flink's unified checkpoint file merging (FLIP-306,
        /// `execution.checkpointing.file-merging.enabled`). A subtask's snapshot files go
        /// as segments into shared physical files, one pool per subtask and lane (keyed
        /// runs, operator state, channel state); a physical file lives while a segment in
        /// it is in use, counted by the subtask's file-merging manager, which a restore on
        /// a new worker rebuilds from the restored snapshot. Savepoints and the changelog
        /// backend's files are not merged. See "File merging" in
        /// [ARCHITECTURE.md](ARCHITECTURE.md#checkpoint-storage-as-files). `--swarm` draws
        /// it (`[swarm] file_merging`).
        #[key("`true` or `false`", "`false`")]
        file_merging: bool = false,
        /// `file_merging`: segments of later checkpoints may go into a physical file an
        /// earlier checkpoint opened (Flink's
        /// `execution.checkpointing.file-merging.across-checkpoint-boundary`).
        #[key("`true` or `false`", "`false`")]
        file_merging_across_checkpoints: bool = false,
        /// `file_merging`: a physical file takes no segment that would make it larger
        /// (Flink's `execution.checkpointing.file-merging.max-file-size`); a larger segment
        /// gets a file of its own.
        #[key("size, ≥ 1 B", "`\"32MiB\"`")]
        #[serde(skip_serializing_if = "Option::is_none")]
        file_merging_max_file_size: Custom<Option<Bytes>, u64> = None,
        /// The longest one-way latency of a coordinator → task RPC (trigger, complete and
        /// abort notifications). Each is drawn per task in `[rpc_latency, rpc_latency_max]`
        /// from its own stream (no draw when equal), so RPCs to different tasks overtake
        /// each other as Flink's to different task managers do: an abort notification can
        /// reach a task after the next checkpoint's barrier. Task → coordinator RPCs (acks,
        /// declines) keep `rpc_latency`.
        #[key("duration ≥ `rpc_latency`", "`rpc_latency`")]
        rpc_latency_max: Opt<Dur> = None,
    }
}

/// Flink's default max state size of `JobManagerCheckpointStorage`.
pub const MAX_STATE_SIZE: Bytes = Bytes(5 << 20);
/// Flink's default `execution.checkpointing.file-merging.max-file-size`.
pub const MAX_MERGED_FILE_SIZE: Bytes = Bytes(32 << 20);

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
        /// What a task failure restarts: every task, or only its pipelined region.
        #[key("`\"full\"` or `\"region\"`", "`\"full\"`")]
        #[serde(deserialize_with = "name")]
        failover: FailoverStrategy = FailoverStrategy::Full,
        /// Time from a crash until the coordinator notices it (heartbeat timeout).
        #[key("duration", "`\"100ms\"`")]
        detection_delay: Dur = ms(100),
        /// Time from detection until the job is redeployed (the first backoff of
        /// `exponential-delay`).
        #[key("duration", "`\"100ms\"`")]
        restart_delay: Dur = ms(100),
        /// `fixed-delay`: the job fails after this many restarts; `exponential-delay`:
        /// after this many since the last reset.
        #[key("integer, ≥ 0", "`1000`")]
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
        /// `[[faults.broker]]`: the transactional log's brokers fail, lose or
        /// slow the producers' requests for a while.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        broker: Custom<Vec<BrokerFaults>, Vec<super::BrokerWindow>> = Vec::new(),
    }
}

section! {
    /// A random crash table (`[faults.random]`, `[faults.random_workers]`,
    /// `[faults.coordinator.random]`): crashes drawn from the seed before the
    /// run. The window is cut into 1 ms slots and each slot crashes a
    /// uniformly chosen subtask with probability `1ms / mean_interval`, up to
    /// `max_crashes`.
    Random => RandomCrashes {
        /// Mean time between random crashes.
        #[key("duration, > 0", "required")]
        mean_interval: Opt<Dur> = None,
        /// Start of the window in which crashes may happen.
        #[key("time", "`\"0s\"`")]
        window_start: Hand<Dur<SimTime>> = Duration::default(),
        /// End of that window.
        #[key("time, > `window_start`", "required")]
        window_end: Opt<Dur<SimTime>> = None,
        /// At most this many random crashes.
        #[key("integer, 0–1000000", "`3`")]
        max_crashes: u32 = 3,
        /// Only subtasks of these operators crash (`operators = ["count", "sink"]`). Not in
        /// `[faults.coordinator.random]` or `[faults.random_workers]`.
        #[key("list of operator ids", "every operator")]
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
        /// `[faults.notifications]`: each checkpoint-complete notification is lost with
        /// this probability (never the final checkpoint's). `[faults.operator_events]`:
        /// each operator event from a coordinator to a subtask (a FLIP-27 split assignment)
        /// is lost with this probability, drawn from its own stream; the coordinator learns
        /// it from the failed RPC and fails the subtask.
        #[key("integer, 0–100", "`0`")]
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
        /// Each storage write (task state, checkpoint metadata) fails with this
        /// probability; a failure counts against `tolerable_failures`.
        #[key("integer, 0–100", "`0`")]
        failure_percent: u32 = 0,
        /// Each storage write is slow with this probability ...
        #[key("integer, 0–100", "`0`")]
        slow_percent: u32 = 0,
        /// ... and then takes this much longer.
        #[key("duration", "`\"50ms\"`")]
        slow_latency: Dur = ms(50),
        /// When the checkpoint storage crashes (`filesystem` only): every file not synced
        /// yet is lost; a pending checkpoint that wrote one fails (`storage-failed`).
        #[key("list of times", "`[]`")]
        crashes: Hand<Vec<TimeText>> = Vec::new(),
    }
}

section! {
    /// `[faults.coordinator]`: coordinator (JobManager) crashes.
    Coordinator => CoordinatorFaults {
        /// From a coordinator crash until its successor restarts the job.
        #[key("duration", "`\"200ms\"`")]
        failover_delay: Dur = ms(200),
        /// With `memory` storage the completed checkpoints die with the coordinator:
        /// restart from scratch, or fail the job.
        #[key("`\"restart-from-scratch\"` or `\"fail\"`", "`\"restart-from-scratch\"`")]
        #[serde(deserialize_with = "name")]
        on_memory_loss: MemoryLoss = MemoryLoss::RestartFromScratch,
        /// When the coordinator crashes.
        #[key("list of times", "`[]`")]
        crashes: Hand<Vec<TimeText>> = Vec::new(),
        /// Crashes drawn from the seed (the random table's `max_crashes`).
        random: Hand<Option<Random>> = None,
        /// `[[faults.coordinator.crash_on]]`: crashes after an event.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        crash_on: Custom<Vec<CoordinatorCrash>, Vec<CrashTrigger>> = Vec::new(),
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
        /// When the savepoint is requested. It is triggered once the job runs and no
        /// checkpoint is pending.
        #[key("time", "required")]
        at: Opt<Dur<SimTime>> = None,
        /// Stop-with-savepoint: the sources stop and end their data before its barrier;
        /// every task that takes it waits for its notification and then exits. A plain
        /// savepoint notifies nobody and is not used for recovery.
        #[key("boolean", "`false`")]
        stop: bool = false,
        /// With `stop`: the end of data is a drained one, so every operator finishes
        /// (flushes, fires its timers at the end of event time) before the barrier; without,
        /// no operator finishes and the savepoint keeps what they hold. `drain` without
        /// `stop` is an error.
        #[key("boolean", "`false`")]
        drain: bool = false,
        /// The savepoint's format: `canonical` (every backend's own state, written whole) or
        /// `native` (the backend's format; Flink's `--type native`). The files are the same
        /// whole state either way; with the `changelog` backend a native savepoint is a
        /// snapshot of the nested backend, which no notification ever follows.
        #[key("`\"canonical\"` or `\"native\"`", "`\"canonical\"`")]
        #[serde(deserialize_with = "name")]
        format: SavepointFormat = SavepointFormat::Canonical,
    }
}

/// A count as a file integer. One above `i64::MAX`, which no valid scenario
/// holds and no file can, becomes `i64::MIN`, which validation refuses.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MIN)
}
