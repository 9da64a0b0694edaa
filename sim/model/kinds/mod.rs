//! The operator kinds, one entry each: everything ckptsim knows about a kind
//! beyond its keys in scenario files comes from its [`OperatorKindInfo`]:
//! how scenario files know it ([`KindInfo`]: name, `ckptsim list` line,
//! keyed or not, a check of a registered kind's `params`), its role in the
//! job, the layout of its state (which decides how savepoints store it, how
//! a restore at another parallelism redistributes it, and what the oracle
//! can follow), its constructor, and its Flink mapping or why there is none.
//!
//! The built-in kinds are in [`REGISTRY`], one file each in this directory;
//! a user's kinds register at run time ([`register`]) with the same entry
//! and may declare any layout but the native ones of sources and sinks. The
//! runtime, the oracle, savepoints and the export ask the entry
//! ([`OperatorKind::info`], [`OperatorKind::state_layout`]); none of them
//! matches on a kind. This module never runs an operator itself.
//!
//! A built-in kind's keys are declared with the scenario schema
//! (`scenario::schema`, `operators!`), which this layer sits above.

mod broadcast_process;
mod buffer;
pub(crate) mod count_window;
mod event_time_window;
mod filter;
mod flat_map;
mod keyed_count;
mod keyed_process;
mod keyed_sum;
mod map;
mod min_label;
mod sink_2pc;
mod sink_at_least_once;
mod sink_committer;
mod sink_global_committer;
mod sink_log;
mod sink_upsert;
mod sink_writer;
mod source;
mod source_log;

pub use self::event_time_window::{EventTimeWindow, SessionWindows};
pub use self::filter::Filter;
pub use self::flat_map::FlatMap;
pub use self::keyed_sum::KeyedSum;
pub use self::map::Map;
use super::operator::Operator;
use super::workload::Workload;
pub use crate::scenario::registry::{KindInfo, ParamError, Params};
use crate::scenario::{OperatorKind, Redistribution, Scenario};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

/// Every built-in operator kind, in the order of `ckptsim list`.
pub static REGISTRY: &[&OperatorKindInfo] = &[
    &source::KIND,
    &map::KIND,
    &filter::KIND,
    &flat_map::KIND,
    &keyed_count::KIND,
    &keyed_sum::KIND,
    &count_window::KIND,
    &event_time_window::KIND,
    &keyed_process::KIND,
    &min_label::KIND,
    &buffer::KIND,
    &broadcast_process::KIND,
    &sink_2pc::KIND,
    &sink_at_least_once::KIND,
    &sink_upsert::KIND,
    &sink_log::KIND,
    &source_log::KIND,
    &sink_writer::KIND,
    &sink_committer::KIND,
    &sink_global_committer::KIND,
];

/// Whether committer `op` forwards what it commits to a global committer
/// (it has an output: validation allows only that one).
pub(crate) fn forwards_commits(scenario: &Scenario, op: u32) -> bool {
    scenario.edges.iter().any(|e| e.from.0 == op)
}

/// The writer operator feeding committer `op` (`u32::MAX` if none).
pub(crate) fn writer_of(scenario: &Scenario, op: u32) -> u32 {
    scenario
        .edges
        .iter()
        .find(|e| e.to.0 == op)
        .map_or(u32::MAX, |e| e.from.0)
}

/// One operator kind: everything ckptsim knows about it.
pub struct OperatorKindInfo {
    /// How scenario files and `ckptsim list` know it.
    pub kind: KindInfo,
    /// What it is in the job. A registered kind is a [`Role::Transform`].
    pub role: Role,
    /// It may keep a record it read and emit what follows from it later,
    /// when other records came or input ended (a window, a buffer, a loop):
    /// the progress check then cannot bound the time from a source to the
    /// commit of the records through it. `false`: it emits as it reads.
    pub holds: bool,
    /// The layout of its state, given its keys (or `params`).
    pub state: fn(&OperatorKind) -> StateLayout,
    /// A fresh instance for one subtask (at the start, at every restart,
    /// and in the oracle). Called only with keys that validation accepted.
    pub create: fn(&Setup) -> Box<dyn Operator>,
    /// How the exported Flink job runs it, or why it cannot.
    pub flink: fn(&OperatorKind) -> Flink,
}

/// What a kind's constructor is told, per subtask.
pub struct Setup<'a> {
    /// A registered kind's `params` (empty for a built-in).
    pub params: &'a Params,
    pub subtask: u32,
    pub parallelism: u32,
    /// The operator's index in the scenario, its validated kind, the
    /// scenario and the generated input.
    pub operator: u32,
    pub kind: &'a OperatorKind,
    pub scenario: &'a Scenario,
    pub workload: &'a Arc<Workload>,
}

/// What an operator of a kind is in the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Polled for records from the workload's partitions.
    Source,
    /// Records in, records out.
    Transform,
    /// Writes to the external store; the oracle counts what reaches it.
    Sink(SinkRole),
    /// Commits what Sink V2 writers hand it; writes no records of its own.
    Committer,
    /// Publishes what Sink V2 committers forward (the post-commit
    /// topology); writes no records of its own.
    GlobalCommitter,
}

/// How a sink writes, as the oracle must judge it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinkRole {
    /// Records appended in transactions committed with checkpoints.
    Transactional,
    /// Records appended without transactions.
    Direct,
    /// Every record overwrites its key's row: judged by the table it leaves.
    Upsert,
    /// A Sink V2 writer: its committer commits what it wrote.
    Writer,
    /// Appends to a topic of the transactional log (`model::txlog`): judged
    /// by what a `read_committed` reader of the topic sees.
    Log,
}

impl SinkRole {
    /// Its records reach the store in transactions.
    pub fn transactional(self) -> bool {
        matches!(self, SinkRole::Transactional | SinkRole::Writer)
    }
}

/// How an operator's state is laid out: what a savepoint keeps of it
/// (`savepoint::OperatorState`), how a restore at another parallelism
/// redistributes it, and whether the oracle's replay can follow a restore.
/// A registered kind may declare any layout but the native ones of sources
/// and sinks ([`StateLayout::is_native`]); its `snapshot` then returns the
/// layout's encoding (named at each variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateLayout {
    /// No state: `snapshot` returns nothing worth keeping.
    Stateless,
    /// Keyed state of `i64` values by key group
    /// (`model::operator::keyed_state`): moves by key group.
    Keyed,
    /// Keyed state of the kind's own values, one byte string per key group
    /// (`model::operator::keyed_byte_state`; a registered kind's are a
    /// `model::state::ValueState`'s): moves by key group.
    KeyedBytes,
    /// Operator list state of records (`model::opstate::ListState`): split
    /// (dealt in contiguous chunks) or union (every subtask gets every
    /// entry at every restore and keeps its share).
    List(Redistribution),
    /// Broadcast state (`model::opstate::BroadcastState`): each subtask's
    /// copy; new subtask `i` gets old copy `i mod` the old parallelism.
    Broadcast,
    /// The kind's own bytes, kept per subtask and restored at the same
    /// parallelism only (ckptsim cannot split them).
    Opaque,
    /// A static source's offsets by partition (native).
    SourceOffsets,
    /// A FLIP-27 source's splits and its enumerator's checkpoint (native).
    SplitSource,
    /// A 2PC sink's pending transactions, dealt round-robin (native).
    Sink2pc,
    /// A Sink V2 writer's counters, merged into every subtask (native).
    SinkWriter,
    /// A Sink V2 committer's committables, dealt round-robin (native).
    SinkCommitter,
    /// A Kafka sink's committables and transactional-id ownership, dealt as
    /// its writer's and committer's list states (native,
    /// `model::txlog::rescale`).
    LogSink,
    /// A Kafka source's splits, dealt as its readers' list state (native,
    /// `model::txlog::rescale`).
    LogSource,
}

impl StateLayout {
    /// A layout only sources and sinks have: their state is the workload's
    /// offsets or the external store's transactions.
    pub fn is_native(self) -> bool {
        matches!(
            self,
            StateLayout::SourceOffsets
                | StateLayout::SplitSource
                | StateLayout::Sink2pc
                | StateLayout::SinkWriter
                | StateLayout::SinkCommitter
                | StateLayout::LogSink
                | StateLayout::LogSource
        )
    }

    /// Union list state: a restore moves entries between subtasks, which a
    /// replay subtask by subtask (the oracle's) cannot follow.
    pub fn is_union(self) -> bool {
        self == StateLayout::List(Redistribution::Union)
    }
}

/// How one scenario key reaches the Flink job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fidelity {
    /// The same setting, with the same meaning.
    Exact,
    /// Flink's nearest equivalent, or the same effect by other means.
    Approximate,
    /// Nothing in the exported job corresponds to it.
    NotAtAll,
}

impl Fidelity {
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Exact => "exact",
            Fidelity::Approximate => "approximate",
            Fidelity::NotAtAll => "not at all",
        }
    }
}

/// A kind's Flink mapping (`flink-export`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flink {
    /// The exported job cannot run it, for this reason.
    Refused(&'static str),
    /// The exported job runs it as `java`, with this fidelity, described
    /// by `how` in the mapping table.
    Maps {
        fidelity: Fidelity,
        how: String,
        java: Java,
    },
}

/// What the generated Java job builds for an operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Java {
    /// A `RecordSource` over the operator's partitions.
    Source,
    /// A `StoreSink` with a batch size (0: transactional), a mode suffix
    /// (`.atLeastOnce()`, `.upsert()` or none), and whether it is a Sink
    /// V2 writer.
    Sink {
        batch: u32,
        mode: &'static str,
        v2: bool,
    },
    /// Nothing: Flink adds the writer's committer itself.
    Committer,
    /// A `CkptOp` of this `CkptOp.Kind` with its two arguments.
    Op { kind: &'static str, a: i64, b: i64 },
    /// Flink's `WindowOperator` (`Windows.java`): a tumbling
    /// (`slide_ms == size_ms`), sliding or (`gap_ms > 0`) session assigner,
    /// allowed lateness, a sum.
    Window {
        size_ms: i64,
        slide_ms: i64,
        gap_ms: i64,
        lateness_ms: i64,
    },
    /// A `KeyedProcessFunction` (`TimerSum.java`): an event-time timer
    /// `delay_ms` after each record, a processing-time one
    /// `processing_ms` after now (0: none).
    Process { delay_ms: i64, processing_ms: i64 },
}

/// A built-in kind's `params` check: built-in kinds take their keys from
/// the operator's table, never from `params` (validation refuses it).
/// A duration of event time or of a timer in whole milliseconds, as
/// Flink's timestamps are (validation refuses others).
/// For an operator kind whose keyed state holds timers: how many timers
/// one key group of its snapshot (layout `KeyedBytes`) holds and, with
/// `strip`, the key group without them (`None`: the kind keeps none).
pub fn group_timers(kind: &OperatorKind) -> Option<GroupTimers> {
    match kind {
        OperatorKind::KeyedProcess { .. } => Some(keyed_process::group_timers),
        OperatorKind::EventTimeWindow { session_gap, .. } => Some(match session_gap.0 {
            0 => event_time_window::group_timers::<i64>,
            _ => event_time_window::group_timers::<event_time_window::Session>,
        }),
        _ => None,
    }
}

/// See [`group_timers`].
pub type GroupTimers = fn(&[u8], bool) -> Result<(u64, Vec<u8>), String>;

pub(crate) fn ms(d: crate::engine::SimDuration) -> i64 {
    i64::try_from(d.nanos() / 1_000_000).unwrap_or(i64::MAX)
}

pub(crate) fn no_params(_: &Params) -> Result<(), Vec<ParamError>> {
    Ok(())
}

/// The variant a built-in constructor or hook was called with is its own
/// (the registry finds a kind's entry by its name).
#[track_caller]
pub(crate) fn not_mine(kind: &OperatorKind) -> ! {
    unreachable!("an entry was called for kind `{}`", kind.name())
}

/// Kinds registered at run time, in registration order.
static REGISTERED: RwLock<Vec<&'static OperatorKindInfo>> = RwLock::new(Vec::new());

/// Registers an operator kind of the caller's own: from then on scenario
/// files may name it. Refused when the name is not lowercase letters,
/// digits and dashes, or is taken, or when the kind is not a
/// transformation (sources and sinks talk to the workload and the external
/// store, whose contracts the checks rely on).
pub fn register(info: &'static OperatorKindInfo) -> Result<(), String> {
    if info.role != Role::Transform {
        return Err(format!(
            "operator kind `{}`: a registered kind is a transformation (role Transform)",
            info.kind.name
        ));
    }
    crate::scenario::registry::register(&info.kind)?;
    REGISTERED
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push(info);
    Ok(())
}

/// The entry of the kind called `name`: a built-in, or a registered one.
pub fn find(name: &str) -> Option<&'static OperatorKindInfo> {
    if let Some(k) = REGISTRY.iter().find(|k| k.kind.name == name) {
        return Some(k);
    }
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    registered.iter().copied().find(|k| k.kind.name == name)
}

impl OperatorKind {
    /// This kind's entry in the registry.
    pub fn info(&self) -> &'static OperatorKindInfo {
        find(self.name()).unwrap_or_else(|| panic!("operator kind `{}` has no code", self.name()))
    }

    /// The layout of this operator's state.
    pub fn state_layout(&self) -> StateLayout {
        let layout = (self.info().state)(self);
        assert!(
            !layout.is_native() || self.info().role != Role::Transform,
            "kind `{}` declares a native layout, {layout:?}, that only sources and sinks have",
            self.name()
        );
        layout
    }

    /// What this operator is in the job.
    pub fn role(&self) -> Role {
        self.info().role
    }

    /// A registered kind's `params` (empty for a built-in kind).
    pub fn params(&self) -> &Params {
        static NONE: std::sync::OnceLock<Params> = std::sync::OnceLock::new();
        match self {
            OperatorKind::Custom(c) => &c.params,
            _ => NONE.get_or_init(Params::new),
        }
    }

    /// A source's keys (`None` for any other kind).
    pub fn source_spec(&self) -> Option<&crate::scenario::SourceSpec> {
        match self {
            OperatorKind::Source(src) => Some(src),
            _ => None,
        }
    }

    /// How the exported Flink job runs this operator, or why it cannot.
    pub fn flink(&self) -> Flink {
        (self.info().flink)(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_the_schema_s_kinds() {
        let names: Vec<_> = REGISTRY.iter().map(|k| k.kind.name).collect();
        let schema: Vec<_> = crate::scenario::OPERATOR_KINDS
            .iter()
            .map(|k| k.0)
            .collect();
        assert_eq!(names, schema);
        for (k, (_, description)) in REGISTRY.iter().zip(crate::scenario::OPERATOR_KINDS) {
            assert_eq!(k.kind.description, *description, "{}", k.kind.name);
        }
    }
}
