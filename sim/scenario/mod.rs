//! Scenarios: what to simulate. A TOML file is deserialized into the typed
//! [`schema::File`], validated into a [`Scenario`] with typed ids, and every
//! problem is reported at once with file, line and column. The rest of the
//! simulator only ever sees a validated `Scenario`.
//!
//! "Valid" is a type. A [`Scenario`] is an opaque view of a
//! [`ScenarioData`] (the typed fields, public for reading) that only
//! validation builds: its field is private to [`validate`], and it derefs to
//! its data but never mutably. So `scenario.network.latency_max` reads as
//! before everywhere, while nothing can change a valid scenario or make one
//! without validating it. Whatever edits a scenario (a swarm draw, `--vary`,
//! shrinking, the stall search, rescaling, `--parallelism`) edits a copy of
//! its data or its file form and validates again ([`check`],
//! [`from_value`]); an edit that makes it invalid is an error, never a run.
//! Why a view and not private fields with getters: about fifty readers
//! across the crate read the fields, and a view leaves every one of them as
//! it is; why the typed data and not only the file form for edits: shrinking
//! and the swarm reason about operators, subtasks and crash times by id and
//! as numbers, which the file form holds as names and text. Either way the
//! edit goes through [`validate`] (by way of `File`), so both forms give
//! the same scenario a file would.
//!
//! | module | what |
//! |---|---|
//! | [`schema`] | the file format as serde types, with every default; the validated tables declared with their file tables (`section!`), the operator kinds declared once (`operators!`); `Scenario` -> `File` |
//! | [`validate`] | every check on a `File`, against key paths; `File` -> `Scenario`, the only way to make one |
//! | `faults` | the checks of `[faults]` and its tables |
//! | `spans` | key paths -> file:line:col, values refused while deserializing, messages |
//! | [`mod@write`] | `Scenario` -> TOML text through serde |

mod checkpoint_rules;
mod faults;
mod graph_rules;
mod kinds;
mod local_rules;
mod log_sink;
mod log_source;
pub mod registry;
pub mod schema;
pub mod shipped;
mod spans;
pub mod validate;
pub mod write;

pub use local_rules::unsupported;
pub use schema::{
    CheckpointSpec, ClusterSpec, CoordinatorFaults, CustomOperator, FaultSpec, LatencySpike,
    LimitSpec as Limits, NetworkSpec, NotificationFaults, OperatorEventFaults, OperatorKind,
    PartitionSpec as Partition, RandomCrashes, ReplaySpec, SavepointSpec, SourceSpec,
    StorageFaultSpec as StorageFaults, TargetedFault, WorkerCrashSpec as WorkerCrash,
    OPERATOR_KINDS,
};
pub use spans::{known as did_you_mean, ScenarioError, ScenarioErrors};
pub use validate::Scenario;
mod backends;
mod broker_faults;
pub use backends::{FileMerging, SavepointFormat, StateBackend, StorageKind};
pub use broker_faults::{BrokerFault, BrokerFaultKind, BrokerRole, BrokerWindow};
pub use log_sink::{Delivery, TxnNaming};
pub use log_source::{LogIsolation, StartingOffsets};

use crate::engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The largest scenario file read.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads and parses the scenario file at `path`: a regular file (a FIFO or
/// device is never opened) of at most [`MAX_FILE_BYTES`]. A file that cannot
/// be read gives one error without a position.
pub fn load(path: &Path) -> Result<Scenario, ScenarioErrors> {
    let file = path.display().to_string();
    match crate::input::read_text(path, MAX_FILE_BYTES) {
        Ok(text) => parse_str(&text, &file),
        Err(why) => {
            let message = format!("cannot read scenario file: {why}");
            Err(spans::unplaced(&file, [(message, None)]))
        }
    }
}

/// Parses and validates scenario text; `file` is only used in error messages.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario, ScenarioErrors> {
    spans::parse(&spans::Source { file, text })
}

/// Validates a scenario built or changed in memory as if it were read from
/// a file, without writing one: `Ok` is the scenario that file would give.
/// The errors have no position; `file` names the scenario in them. This is
/// how an edit of a scenario (`ScenarioData::clone(&scenario)`, changed)
/// becomes a [`Scenario`] again.
pub fn check(scenario: &ScenarioData, file: &str) -> Result<Scenario, ScenarioErrors> {
    validated(&schema::File::from(scenario), file)
}

/// A scenario from its file form as a `toml::Value` (`File::from` a
/// scenario, then edited: `compare --vary`), validated; nothing goes through
/// text. A value serde refuses is reported against `key`, the edited one.
pub fn from_value(value: toml::Value, key: &str, file: &str) -> Result<Scenario, ScenarioErrors> {
    let refused = |e: toml::de::Error| {
        spans::unplaced(file, [spans::describe(validate::key_of(key), e.message())])
    };
    validated(&schema::File::deserialize(value).map_err(refused)?, file)
}

/// `document` validated, its problems without a position.
fn validated(document: &schema::File, file: &str) -> Result<Scenario, ScenarioErrors> {
    let unplaced = |problems: Vec<validate::Problem>| {
        spans::unplaced(file, problems.into_iter().map(|p| (p.message, p.help)))
    };
    validate::validate(document, &|_| None).map_err(unplaced)
}

/// Current version of the scenario format (`version = 1` in the file).
pub const FORMAT_VERSION: u32 = 1;

// Upper bounds on values (docs/scenarios.md, "Limits on values"). The
// validator refuses anything larger, so the simulator can add a handful of
// durations to a virtual time, or size a buffer, without overflowing or
// requesting memory that cannot exist.

/// The longest duration or time a scenario may hold: 365 days of virtual
/// time. `u64` nanoseconds reach about 584 years, so a time plus a few such
/// durations never overflows.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(365 * 24 * 3600);
/// [`MAX_DURATION`] as written in messages.
pub const MAX_DURATION_TEXT: &str = "8760h (365 days)";
/// The highest parallelism of an operator, and the most key groups
/// (`max_parallelism`): Flink's upper bound, 2^15.
pub const MAX_PARALLELISM: u32 = 32_768;
/// The most records in one network buffer (`buffer_records`). Each buffer is
/// allocated at its full size.
pub const MAX_BUFFER_RECORDS: u32 = 65_536;
/// The largest `buffer_size` and `record_size`: 1 GiB.
pub const MAX_BYTES: u64 = 1 << 30;
/// The size of a record unless its source says otherwise (`record_size`):
/// what a record of the simulator holds (key, value, lineage, emit time).
pub const RECORD_BYTES: u64 = 32;
/// The most records a flat-map emits per input record (`copies`).
pub const MAX_COPIES: u32 = 1_000;
/// The most random crashes one random crash table may plan
/// (`max_crashes`); the plan is kept in memory before the run.
pub const MAX_RANDOM_CRASHES: u32 = 1_000_000;

/// What a scenario holds, typed: the fields a [`Scenario`] shows (through
/// `Deref`). A value of this type is not known to be valid: it runs only
/// once [`check`] made a [`Scenario`] of it.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioData {
    pub name: String,
    pub description: String,
    /// Number of key groups; the upper bound for any keyed operator's parallelism.
    pub max_parallelism: u32,
    /// Operators are chained into tasks (`operator_chaining`, default on).
    pub operator_chaining: bool,
    /// Operators in file order; `OperatorId(i)` indexes this vector.
    pub operators: Vec<OperatorSpec>,
    pub edges: Vec<EdgeSpec>,
    pub network: NetworkSpec,
    pub checkpoint: CheckpointSpec,
    pub faults: FaultSpec,
    pub limits: Limits,
    pub expect: Expect,
    /// `[replay]`: the default seed and mutants of `run` (a reproducer's).
    pub replay: ReplaySpec,
    /// `[swarm]`: ranges for swarm testing, if the scenario declares them.
    pub swarm: Option<SwarmSpec>,
    /// `[[savepoints]]`: savepoints taken by hand, in time order.
    pub savepoints: Vec<SavepointSpec>,
    /// `[cluster]`: workers and slots, if the scenario places subtasks.
    pub cluster: Option<ClusterSpec>,
    /// `cancel_at`: the job is cancelled at this virtual time (also
    /// `ckptsim run --cancel-at`, which takes precedence).
    pub cancel_at: Option<SimTime>,
}

/// How slots are chosen from the workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Slot `i` on worker `i % workers` (Flink's evenly-spread-out slots).
    Spread,
    /// Fill each worker's slots before the next (`i / slots_per_worker`).
    Pack,
}

impl ClusterSpec {
    /// The worker that runs slot `slot`.
    pub fn worker_of_slot(&self, slot: u32) -> u32 {
        match self.placement {
            Placement::Spread => slot % self.workers.max(1),
            Placement::Pack => slot / self.slots_per_worker.max(1),
        }
    }
}

/// Dense index of an operator in [`ScenarioData::operators`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct OperatorId(pub u32);

#[derive(Clone, Debug, Serialize)]
pub struct OperatorSpec {
    /// The operator's uid, as written in the file.
    pub id: String,
    pub kind: OperatorKind,
    pub parallelism: u32,
    /// Virtual time to process one record.
    pub cost: SimDuration,
    /// Extra cost drawn uniformly in `0..=cost_jitter` per step.
    pub cost_jitter: SimDuration,
    /// Whether it may join its predecessor's task.
    pub chaining: Chaining,
}

/// How operators become tasks, for `ckptsim list`.
pub const JOB_STRUCTURE: &[(&str, &str)] = &[
    (
    "chained tasks",
    "operators joined by a forward edge of equal parallelism run as one task (Flink's operator chains): no channel between them, one thread, one snapshot of every operator at the barrier, one ack, notifications to every operator, one failure unit; operator_chaining = false, [[operators]] chaining = \"head\" | \"never\", [[edges]] chain = false",
    ),
    (
        "sink v2",
        "kinds sink-writer and sink-committer: the writer writes a transaction per checkpoint and hands it to the committer as a committable tagged with the checkpoint id before the barrier (prepareSnapshotPreBarrier) and at end of input (tagged with the next checkpoint's id); the committer commits committables of completed checkpoints, recovered ones at restore, idempotently; the writer -> committer edge is forward (chained by default) or into a global committer of parallelism 1, and never unaligned",
    ),
    (
        "flip-27 source",
        "kind source with split_assignment = \"enumerator\": the partitions are splits that a split enumerator in the source's operator coordinator assigns to readers on request through operator events (initial_splits known at the start, one more every discovery_interval); the coordinator's checkpoint is taken at the trigger, before the source barriers; events after it are held until the reader has snapshotted; sources are triggered once every earlier event is acknowledged; a lost event fails its reader; a region restart gives the enumerator back the splits assigned since the restored checkpoint, a global one resets it",
    ),
    (
        "operator state",
        "operator state beyond keyed state: list state (kind buffer, redistribution = \"split\": each subtask restores its own entries, a rescale deals them out in contiguous chunks; \"union\": every restore hands every subtask all entries, it keeps its share) and broadcast state (kind broadcast-process: a rule table set by broadcast inputs, one copy per subtask, a rescale hands copies round-robin); savepoints and rescaling carry both",
    ),
    (
        "operator coordinator",
        "the coordinator-side component of an operator (today the split enumerator): its own checkpoint in every checkpoint and savepoint, events to and from subtasks, reset to the restored checkpoint on a global failover and by a new coordinator after a coordinator crash, told of restored subtasks on a region failover; [faults.operator_events] loses events",
    ),
    (
        "iteration",
        "[[edges]] feedback = true closes a cycle (hash or rebalance, never chained, never backpressuring its sender); a loop ends when quiescent (every loop head read the end of its other inputs, nothing in flight between loop tasks); aligned checkpoints align on the other inputs and log the feedback inputs until their barrier comes back (ABS for cycles); kind min-label is an iteration's operator",
    ),
];

/// Whether an operator joins the task of the operator before it (Flink's
/// `ChainingStrategy`; `startNewChain()` is `head`, `disableChaining()` is
/// `never`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Chaining {
    /// Chained to its predecessor and to its successors where the edge allows.
    #[default]
    Always,
    /// Starts a new chain; its successors may join it.
    Head,
    /// A task of its own.
    Never,
}

impl SourceSpec {
    /// How many records partition `p` (of this source) holds.
    pub fn records_of(&self, p: u32) -> u64 {
        let listed = self.partition_records.get(p as usize);
        listed.copied().unwrap_or(self.records_per_partition)
    }

    /// The most records partition `p` offers per second (0: no limit).
    pub fn rate_of(&self, p: u32) -> u64 {
        let listed = self.partition_rates.get(p as usize);
        listed.copied().unwrap_or(self.records_per_second)
    }

    /// How many records all its partitions hold.
    pub fn total_records(&self) -> u64 {
        (0..self.partitions).fold(0u64, |n, p| n.saturating_add(self.records_of(p)))
    }
}

impl OperatorKind {
    pub fn is_source(&self) -> bool {
        matches!(
            self,
            OperatorKind::Source(_) | OperatorKind::SourceLog { .. }
        )
    }
    pub fn is_sink(&self) -> bool {
        matches!(
            self,
            OperatorKind::Sink2pc
                | OperatorKind::SinkAtLeastOnce { .. }
                | OperatorKind::SinkUpsert { .. }
                | OperatorKind::SinkWriter
                | OperatorKind::SinkLog { .. }
        )
    }
    /// A Sink V2 committer: it commits what writers wrote (it writes no
    /// records of its own).
    pub fn is_committer(&self) -> bool {
        matches!(self, OperatorKind::SinkCommitter)
    }
    /// A Sink V2 global committer: it publishes what committers forward.
    pub fn is_global_committer(&self) -> bool {
        matches!(self, OperatorKind::SinkGlobalCommitter)
    }
    pub fn is_keyed(&self) -> bool {
        match self {
            OperatorKind::Custom(c) => c.info.keyed,
            k => matches!(
                k,
                OperatorKind::KeyedCount
                    | OperatorKind::KeyedSum
                    | OperatorKind::CountWindow { .. }
                    | OperatorKind::EventTimeWindow { .. }
                    | OperatorKind::KeyedProcess { .. }
                    | OperatorKind::MinLabel { .. }
            ),
        }
    }
}

/// How a list state's entries are redistributed on restore (Flink's
/// `OperatorStateStore.getListState` and `getUnionListState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Redistribution {
    /// Each entry to one subtask.
    Split,
    /// Every entry to every subtask, which selects its share.
    Union,
}

/// How a source's partitions reach its subtasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SplitAssignment {
    /// Partition `i` is read by subtask `i % parallelism`, fixed.
    Static,
    /// FLIP-27: a split enumerator in an operator coordinator assigns the
    /// partitions (splits) to readers on request.
    Enumerator,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyDistribution {
    /// Each key drawn uniformly from the workload stream.
    Uniform,
    /// Keys cycle `0, 1, …, keys-1` over the global record index, so each key
    /// occurs equally often.
    Cyclic,
    /// Skewed towards low keys (hot keys): `u` uniform in `0..keys`, then
    /// the key uniform in `0..=u`, so key k has probability
    /// `(H(keys) - H(k)) / keys` (harmonic numbers); key 0 is about
    /// `ln(keys)` times as frequent as the average. Integer draws only.
    Skewed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Partitioning {
    Forward,
    Hash,
    Rebalance,
    Broadcast,
}

impl Partitioning {
    pub fn name(self) -> &'static str {
        match self {
            Partitioning::Forward => "forward",
            Partitioning::Hash => "hash",
            Partitioning::Rebalance => "rebalance",
            Partitioning::Broadcast => "broadcast",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdgeSpec {
    pub from: OperatorId,
    pub to: OperatorId,
    pub partitioning: Partitioning,
    /// `chain = false`: the two operators are never chained over this edge.
    pub chain: bool,
    /// An iteration's feedback edge (`feedback = true`): it closes a cycle;
    /// never chained.
    pub feedback: bool,
    /// `side_output = "late"`: the edge carries its `from` window's late
    /// records (Flink's `sideOutputLateData`), never its results; never
    /// chained.
    pub side_output_late: bool,
    /// Its channels' latency bounds and exclusive buffers, when they are
    /// not `[network]`'s (`NetworkSpec::of_edge` resolves them).
    pub latency_min: Option<SimDuration>,
    pub latency_max: Option<SimDuration>,
    pub buffer_credits: Option<u32>,
    /// Bytes per buffer on its channels, when not `[network]`'s.
    pub buffer_size: Option<u64>,
}

impl NetworkSpec {
    /// Edge `e`'s channels: latency bounds and exclusive buffers. Without
    /// its own, an edge has the network's; an edge's `latency_min` above the
    /// network's `latency_max` raises its maximum to it.
    pub fn of_edge(&self, e: &EdgeSpec) -> (SimDuration, SimDuration, u32) {
        let min = e.latency_min.unwrap_or(self.latency_min);
        let max = e.latency_max.unwrap_or(self.latency_max.max(min));
        (min, max, e.buffer_credits.unwrap_or(self.buffer_credits))
    }

    /// Edge `e`'s buffers, if it has a size of its own: bytes and the most
    /// records one holds (the network's `buffer_records` when the network's
    /// buffers have a size too, else no limit, as for the network's).
    pub fn buffer_of_edge(&self, e: &EdgeSpec) -> Option<(u64, usize)> {
        let records = match self.buffer_size {
            Some(_) => self.buffer_records,
            None => MAX_BUFFER_RECORDS,
        };
        e.buffer_size.map(|b| (b, records as usize))
    }
}

/// Which ready input a task reads next (`[network] input_order`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputOrder {
    /// Flink's: the inputs in the order their data became available (the
    /// input gate's queue of channels with data); a channel that still has
    /// data after a read goes to the back of the queue.
    #[default]
    Fifo,
    /// Uniformly at random among the ready inputs, from the scheduling
    /// stream: an exploration strategy that reaches orders Flink rarely
    /// takes.
    Random,
}

impl InputOrder {
    pub const ALL: [InputOrder; 2] = [InputOrder::Fifo, InputOrder::Random];

    pub fn name(self) -> &'static str {
        match self {
            InputOrder::Fifo => "fifo",
            InputOrder::Random => "random",
        }
    }
}

pub use crate::protocol::{Algorithm, Guarantee};

/// Where the Sink V2 committers of a swarm draw run (`[swarm]
/// committer`): as written (`chained`: Flink chains a committer to its
/// writer), behind a network edge (`unchained`: `chain = false`, the
/// committables travel as records), or as one global committer that reads
/// every writer (`global`: parallelism 1 over a `rebalance` edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommitterPlacement {
    Chained,
    Unchained,
    Global,
}

impl CommitterPlacement {
    pub const ALL: [CommitterPlacement; 3] = [
        CommitterPlacement::Chained,
        CommitterPlacement::Unchained,
        CommitterPlacement::Global,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CommitterPlacement::Chained => "chained",
            CommitterPlacement::Unchained => "unchained",
            CommitterPlacement::Global => "global",
        }
    }
}

/// The Flink release whose task-thread behaviour a run follows
/// (`[checkpoint] flink_version`), where releases differ. The default is
/// the newest. Each behaviour the key switches is one method here, with the
/// Flink change behind it (docs/scenarios.md lists them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FlinkVersion {
    #[serde(rename = "1.20")]
    V1_20,
    #[serde(rename = "2.0")]
    V2_0,
    #[serde(rename = "2.1")]
    V2_1,
    #[serde(rename = "2.2")]
    V2_2,
    #[default]
    #[serde(rename = "2.3")]
    V2_3,
    /// The development line after 2.3: the newest release plus the open
    /// fixes ckptsim models (each method below names its change). No
    /// release runs it.
    #[serde(rename = "next")]
    Next,
}

impl FlinkVersion {
    /// The releases (a swarm draws among them; `next` is chosen by name).
    pub const ALL: [FlinkVersion; 5] = [
        FlinkVersion::V1_20,
        FlinkVersion::V2_0,
        FlinkVersion::V2_1,
        FlinkVersion::V2_2,
        FlinkVersion::V2_3,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FlinkVersion::V1_20 => "1.20",
            FlinkVersion::V2_0 => "2.0",
            FlinkVersion::V2_1 => "2.1",
            FlinkVersion::V2_2 => "2.2",
            FlinkVersion::V2_3 => "2.3",
            FlinkVersion::Next => "next",
        }
    }

    /// The Flink release an exported job of this version runs on (what
    /// `run.sh` fetches); `None` for 1.20 (the exported job is Flink 2.x).
    pub fn release(self) -> Option<&'static str> {
        match self {
            FlinkVersion::V1_20 => None,
            FlinkVersion::V2_0 => Some("2.0.2"),
            FlinkVersion::V2_1 => Some("2.1.0"),
            FlinkVersion::V2_2 => Some("2.2.1"),
            FlinkVersion::V2_3 => Some("2.3.0"),
            FlinkVersion::Next => None,
        }
    }

    /// The default, the newest release the key knows.
    pub fn is_newest(&self) -> bool {
        *self == FlinkVersion::default()
    }

    /// The trigger of an unaligned checkpoint at a source task is an urgent
    /// mail that jumps the task's mailbox, ahead of the mails already
    /// queued (FLINK-35051, Flink 2.1: `StreamTask.triggerCheckpointAsync`
    /// with `MailOptions.urgent()`); before, every trigger is an ordinary
    /// mail, run in order.
    pub fn urgent_unaligned_trigger(self) -> bool {
        self >= FlinkVersion::V2_1
    }

    /// Whether a source reader whose splits are all idle flushes the
    /// largest of their watermarks (FLINK-38454, Flink 2.2:
    /// `CombinedWatermarkStatus.updateCombinedWatermark` takes the maximum
    /// when every partial is idle, and the multiplexer then marks the
    /// output idle in the same update); before, the combined watermark
    /// stays where the last active split left it.
    pub fn flushes_idle_splits(self) -> bool {
        self >= FlinkVersion::V2_2
    }

    /// Whether watermark alignment leaves idle splits alone (FLINK-39073,
    /// in 2.2.1: `SourceOperator` pauses no idle split, and checks a split
    /// again when it turns active); before, an idle split is paused and
    /// resumed like any other.
    pub fn alignment_skips_idle_splits(self) -> bool {
        self >= FlinkVersion::V2_2
    }

    /// Whether a task whose committer feeds a global committer sends
    /// `EndOfData` only after its final checkpoint's committables (the open
    /// fix of FLINK-38614, apache/flink#28476); up to 2.3 it sends it at
    /// its end of input, before the notification that makes the committer
    /// forward them, and the global committer may exit without them.
    pub fn defers_committer_end_of_data(self) -> bool {
        self >= FlinkVersion::Next
    }
}

/// What a task failure restarts (Flink's `jobmanager.execution.failover-strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailoverStrategy {
    /// Every task (global failover).
    Full,
    /// Only the failed task's pipelined region: the tasks connected to it
    /// by channels. A job whose operators are linked only by forward edges
    /// splits into one region per subtask index; any other edge joins
    /// everything into one region, and region failover restarts it all.
    Region,
}

/// How the job restarts after a failure, and when it gives up (Flink's
/// restart strategies). Every strategy waits `restart_delay` (the first
/// backoff, for `exponential-delay`) before redeploying.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "strategy")]
pub enum RestartStrategy {
    /// Restart after `restart_delay`; give up after `max_restarts` restarts.
    #[default]
    FixedDelay,
    /// The k-th restart since the last reset waits
    /// `min(restart_delay × multiplier^(k-1), max_backoff)`; the count resets
    /// after the job ran `reset_threshold` without a failure; give up after
    /// `max_restarts` restarts since the last reset.
    ExponentialDelay {
        max_backoff: SimDuration,
        /// The multiplier in thousandths (1500 = ×1.5).
        multiplier_permille: u32,
        reset_threshold: SimDuration,
    },
    /// Restart after `restart_delay`; give up when more than `max_failures`
    /// failures fall within any `interval` (`max_restarts` is not used).
    FailureRate {
        max_failures: u32,
        interval: SimDuration,
    },
}

impl RestartStrategy {
    pub fn name(&self) -> &'static str {
        match self {
            RestartStrategy::FixedDelay => "fixed-delay",
            RestartStrategy::ExponentialDelay { .. } => "exponential-delay",
            RestartStrategy::FailureRate { .. } => "failure-rate",
        }
    }
}

/// What the new coordinator does when checkpoint storage is `memory` and
/// the completed checkpoints were lost with the old one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryLoss {
    /// Restart the job from scratch (empty state, sources from the start).
    RestartFromScratch,
    /// Fail the job.
    Fail,
}

/// A straggler: between `from` and `until` the task's processing cost is
/// multiplied by `factor`. With a `trigger`, `from` is 0 and `until` the
/// window's length, both counted from `delay` after the event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SlowTask {
    pub operator: OperatorId,
    pub subtask: u32,
    pub from: SimTime,
    pub until: SimTime,
    pub factor: u32,
    pub trigger: Option<CrashTrigger>,
}

/// Fault kinds beyond subtask crashes, for `ckptsim list`.
pub const FAULT_KINDS: &[(&str, &str)] = &[
    ("region-failover", "[faults] failover = \"region\": a task failure restarts only its pipelined region (tasks connected by channels)"),
    ("restart-strategy", "[faults.restart]: fixed-delay, exponential-delay or failure-rate; when it gives up the job fails (a reported outcome)"),
    ("lost-notification", "[faults.notifications] at a rate, [[faults.lost_notifications]] for one checkpoint: a checkpoint-complete notification to a task is lost; the next abort or completion catches up"),
    ("lost-operator-event", "[faults.operator_events]: an operator event from a coordinator to a subtask (a split assignment) is lost; the coordinator learns it from the failed RPC and fails the subtask"),
    ("storage", "[faults.storage] at a rate, [[faults.storage_failures]] for one checkpoint's write: a checkpoint storage write fails (a counted checkpoint failure) or is slow"),
    ("coordinator-crash", "[faults.coordinator]: the coordinator crashes; pending checkpoints are lost, completed ones survive only with filesystem storage"),
    ("worker-crash", "[[faults.worker_crashes]] / [faults.random_workers] with [cluster]: every subtask of a worker dies at once; noticed after the heartbeat timeout; the job restarts once a replacement worker is ready"),
    ("latency-spike", "[[faults.latency_spikes]]: messages on chosen channels (an edge, a worker, or all) take longer for a while"),
    ("partition", "[[faults.partitions]] with [cluster]: workers cut off; data across waits until it heals; longer than the heartbeat timeout, the cut-off side is lost"),
    ("broker", "[[faults.broker]] with a sink-log: the transactional log's brokers are down, lose requests or answer late for a while; producers retry until their delivery timeout"),
    ("slow-task", "[[faults.slow_tasks]]: a straggler processes records `factor` times slower for a while"),
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrashSpec {
    /// When, for a crash at a fixed time (unused with a `trigger`).
    pub at: SimTime,
    pub operator: OperatorId,
    pub subtask: u32,
    /// A crash relative to an event of the run, instead of at `at`.
    pub trigger: Option<CrashTrigger>,
    /// `repeat = true` (with a trigger): armed again at every restart, so
    /// the task fails in every attempt (a task that always fails).
    pub repeat: bool,
}

/// `on = …`: the crash happens `delay` after the first time the event
/// occurs (for checkpoint `checkpoint` if given, at task `of`, by default
/// the crashing task, for the events of one task).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrashTrigger {
    pub on: TriggerEvent,
    pub checkpoint: Option<u64>,
    pub of: Option<(OperatorId, u32)>,
    pub delay: SimDuration,
}

/// The events a crash may follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TriggerEvent {
    /// The coordinator triggers a checkpoint.
    Trigger,
    /// A task starts aligning a checkpoint (its first barrier blocks an input).
    Alignment,
    /// A task takes its snapshot (a 2PC sink pre-commits).
    Snapshot,
    /// The coordinator receives a task's acknowledgement.
    Ack,
    /// A checkpoint completes.
    Complete,
    /// A task is notified that a checkpoint completed (a 2PC sink commits).
    Notify,
    /// The job restarts (restoring checkpoint `checkpoint`, if given).
    Restart,
    /// A task reads its first restored in-flight buffer after a restore.
    Replay,
    /// A task takes its final checkpoint: the first snapshot after the end
    /// of its data (FLIP-147).
    FinalSnapshot,
    /// A task is notified of a checkpoint that lets it exit (its final
    /// checkpoint or a newer one), before it exits.
    FinalNotify,
}

impl TriggerEvent {
    /// Whether the event is one task's (so `of` applies).
    pub fn is_a_tasks(self) -> bool {
        matches!(
            self,
            TriggerEvent::Alignment
                | TriggerEvent::Snapshot
                | TriggerEvent::Ack
                | TriggerEvent::Notify
                | TriggerEvent::Replay
                | TriggerEvent::FinalSnapshot
                | TriggerEvent::FinalNotify
        )
    }
}

/// `[swarm]`, its keys each with `D` (a duration range) or `I` (an integer
/// range): the struct, and `map`, every range through one of two functions.
macro_rules! swarm {
    ($(#[$m:meta])* Swarm { $($(#[doc = $doc:literal])* $key:ident: $r:ident,)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct Swarm<D, I> {
            /// Swarm every run of the scenario (without it, only with `--swarm`).
            pub enabled: bool,
            $($(#[doc = $doc])* pub $key: Option<$r>,)*
            /// The input orders to draw from (one per seed).
            pub input_order: Option<Vec<InputOrder>>,
            /// Whether checkpoints may run during recovery: the values to
            /// draw from (one per seed).
            pub during_recovery: Option<Vec<bool>>,
            /// The Flink releases to draw from (one per seed).
            pub flink_version: Option<Vec<FlinkVersion>>,
            /// Where Sink V2 committers run, to draw from (one per seed).
            pub committer: Option<Vec<CommitterPlacement>>,
            /// The state backends to draw from (one per seed; `incremental`
            /// with `memory` storage turns it to `filesystem`).
            pub state_backend: Option<Vec<StateBackend>>,
            /// File merging's settings to draw from (one per seed, where
            /// snapshots go into files).
            pub file_merging: Option<Vec<FileMerging>>,
        }

        impl<D, I> Swarm<D, I> {
            /// Every range through `d` (durations) or `i` (integers), with its
            /// key, in the file's order; `None` drops the range.
            pub fn map<C, D2, I2>(
                &self,
                cx: &mut C,
                d: impl Fn(&mut C, &'static str, &D) -> Option<D2>,
                i: impl Fn(&mut C, &'static str, &I) -> Option<I2>,
            ) -> Swarm<D2, I2> {
                macro_rules! pick {
                    (D) => { d };
                    (I) => { i };
                }
                Swarm {
                    enabled: self.enabled,
                    $($key: self.$key.as_ref().and_then(|r| pick!($r)(cx, stringify!($key), r)),)*
                    input_order: self.input_order.clone(),
                    during_recovery: self.during_recovery.clone(),
                    flink_version: self.flink_version.clone(),
                    committer: self.committer.clone(),
                    state_backend: self.state_backend.clone(),
                    file_merging: self.file_merging.clone(),
                }
            }
        }
    };
}

swarm! {
    /// Swarm testing: each seed also draws its own configuration within these
    /// ranges (inclusive). A knob without a range keeps the scenario's value.
    /// See `crate::swarm`. The file's `[swarm]` holds each range as written,
    /// `D` for durations and `I` for integers ([`schema::Swarm`]); validated,
    /// they are [`SwarmSpec`].
    Swarm {
        latency_max: D,
        buffer_records: I,
        buffer_credits: I,
        floating_buffers: I,
        interval: D,
        timeout: D,
        /// Every operator's cost, scaled by a percentage drawn per operator.
        cost_percent: I,
        /// Random crashes: mean interval, most crashes, end of the window.
        crash_mean_interval: D,
        max_crashes: I,
        crash_window_end: D,
        /// The richer fault model, each kind off when the seed draws 0:
        /// notification loss and storage failure and slowness (percent), and
        /// how many coordinator and worker crashes fall in the crash window.
        notification_loss_percent: I,
        storage_failure_percent: I,
        storage_slow_percent: I,
        coordinator_crashes: I,
        worker_crashes: I,
        /// A latency spike on every channel, a quarter of the crash window
        /// long, starting at a drawn time, with a drawn extra latency (0: none).
        latency_spike_extra: D,
        /// A partition cutting off one drawn worker, starting at a drawn time
        /// in the crash window, lasting a drawn duration (0: none; needs
        /// `[cluster]` with two workers or more).
        partition_duration: D,
        /// The longest coordinator → task RPC latency (`[checkpoint]
        /// rpc_latency_max`; never below `rpc_latency`).
        rpc_latency_max: D,
        /// Lost operator events (`[faults.operator_events] loss_percent`;
        /// 0: none for the seed).
        operator_event_loss_percent: I,
        /// Every source partition's rate (`records_per_second`) on half the
        /// seeds, drawn per seed; the other half keep the scenario's rates.
        source_rate: I,
        /// `[checkpoint] max_concurrent`, where the scenario's algorithm
        /// allows more than one pending checkpoint.
        max_concurrent: I,
        /// `[faults] max_restarts`, drawn last of all, where the restart
        /// strategy counts restarts (fixed and exponential delay).
        max_restarts: I,
        /// Event time, drawn after everything else where a source emits
        /// watermarks: every such source's `watermark_interval`, every
        /// source's `out_of_orderness` and `partition_skew` (whole
        /// milliseconds), and the strategy's bound as a percentage of the
        /// drawn disorder (below 100: late records).
        watermark_interval: D,
        out_of_orderness: D,
        partition_skew: D,
        watermark_bound_percent: I,
        /// Event time, drawn last: on half the seeds every watermark
        /// source's `idle_timeout` (whole milliseconds), off on the others.
        idle_timeout: D,
        /// Timers, drawn after event time where a keyed process function
        /// runs: every one's `timer_delay`, and on half the seeds its
        /// `processing_delay` (whole milliseconds), none on the others.
        timer_delay: D,
        processing_delay: D,
        /// Watermark alignment, drawn last where a source is in an
        /// alignment group: every such source's `alignment_max_drift` and
        /// `alignment_update_interval` (whole milliseconds).
        alignment_max_drift: D,
        alignment_update_interval: D,
        /// Checkpoint storage, drawn after everything else where snapshots
        /// go into files (`filesystem` storage, or the `incremental` backend
        /// drawn): how many storage crashes fall in the crash window (each
        /// at a drawn time) and `storage_sync`.
        storage_crashes: I,
        storage_sync: D,
        /// Broker faults, drawn last of all where a `sink-log` writes: a
        /// `[[faults.broker]]` window of a drawn length (0: none), kind and
        /// start in the crash window.
        broker_outage: D,
    }
}

/// The validated `[swarm]`: `(min, max)` ranges.
pub type SwarmSpec = Swarm<(SimDuration, SimDuration), (u32, u32)>;

/// `[expect]`, as written and validated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Expect {
    /// The weakest guarantee the run must keep; anything weaker is a violation.
    #[serde(deserialize_with = "schema::name")]
    pub guarantee: Guarantee,
}

impl Default for Expect {
    fn default() -> Self {
        let guarantee = Guarantee::ExactlyOnce;
        Expect { guarantee }
    }
}

impl ScenarioData {
    pub fn op(&self, id: OperatorId) -> &OperatorSpec {
        &self.operators[id.0 as usize]
    }

    /// The guarantee a run of `algorithm` must keep: the scenario's declared
    /// one, weakened to what the algorithm promises.
    ///
    /// A job with an upsert sink (`sink-upsert`) promises at most
    /// effectively-once: replays repeat its writes, the finished table
    /// converges.
    pub fn expected_guarantee(&self, algorithm: Algorithm) -> Guarantee {
        let mut expected = self.expect.guarantee.weaker(algorithm.promise());
        for op in &self.operators {
            match op.kind {
                OperatorKind::SinkLog { delivery, .. } => {
                    expected = expected.weaker(delivery.guarantee());
                }
                OperatorKind::SourceLog { isolation, .. } => {
                    expected = expected.weaker(isolation.guarantee());
                }
                _ => {}
            }
        }
        if self.has_upsert_sink() {
            expected.weaker(Guarantee::EffectivelyOnce)
        } else {
            expected
        }
    }

    /// Whether some operator is a `sink-upsert`.
    pub fn has_upsert_sink(&self) -> bool {
        self.operators
            .iter()
            .any(|o| matches!(o.kind, OperatorKind::SinkUpsert { .. }))
    }

    /// How many records the sources hold in all (saturating).
    pub fn source_records(&self) -> u64 {
        self.operators
            .iter()
            .filter_map(|op| match &op.kind {
                OperatorKind::Source(src) => Some(src.total_records()),
                _ => None,
            })
            .fold(0, u64::saturating_add)
    }

    /// The first global partition of operator `op`'s input: sources'
    /// partitions are numbered source after source, in operator order (as
    /// `model::Workload` generates them).
    pub fn first_partition(&self, op: OperatorId) -> u32 {
        self.operators[..op.0 as usize]
            .iter()
            .filter_map(|o| match &o.kind {
                OperatorKind::Source(s) => Some(s.partitions),
                _ => None,
            })
            .sum()
    }

    /// Per edge (in `edges` order): whether its two operators run chained
    /// in one task, by Flink's rule (`StreamingJobGraphGenerator.isChainable`):
    /// chaining is on, the edge is `forward` and not `chain = false`, both
    /// ends have the same parallelism, the downstream operator has this one
    /// input and `chaining = "always"`, and the upstream one is not
    /// `chaining = "never"`.
    pub fn chained_edges(&self) -> Vec<bool> {
        let mut inputs = vec![0usize; self.operators.len()];
        for e in &self.edges {
            inputs[e.to.0 as usize] += 1;
        }
        self.edges
            .iter()
            .map(|e| {
                let (from, to) = (self.op(e.from), self.op(e.to));
                self.operator_chaining
                    && e.chain
                    && !e.feedback
                    && !e.side_output_late
                    && e.partitioning == Partitioning::Forward
                    && from.parallelism == to.parallelism
                    && to.chaining == Chaining::Always
                    && from.chaining != Chaining::Never
                    && inputs[e.to.0 as usize] == 1
            })
            .collect()
    }

    /// Concurrent checkpoints in effect for `algorithm`.
    pub fn max_concurrent(&self, algorithm: Algorithm) -> u32 {
        let limit = algorithm.max_concurrent().unwrap_or(u32::MAX);
        self.checkpoint.max_concurrent.min(limit)
    }
}
