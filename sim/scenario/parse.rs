//! Scenario files: TOML text → raw serde structs → a validated [`Scenario`].
//!
//! Phase 1 (syntax and shape) hands the text to `toml`, deserializing it into
//! the private `Raw*` structs below. They deny unknown keys and keep the byte
//! span of every value that phase 2 checks. A syntax error, an unknown key or a
//! value of the wrong TOML type stops here with one positioned error.
//!
//! Phase 2 (validation) checks ranges, names, durations and the job graph and
//! applies defaults. It collects *every* problem, each with the line and column
//! (1-based, columns in characters) of the offending value or table and, where
//! the fix is obvious, a `help` line. The format itself is documented in
//! `docs/scenarios.md`.
//!
//! This module reads untrusted input: it must never panic, whatever the text.
//! No `unwrap` on anything derived from the file, no unchecked slicing, no
//! arithmetic on user numbers that can overflow.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};
use std::path::Path;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use super::{
    Algorithm, CheckpointSpec, ClusterSpec, CoordinatorFaults, CrashSpec, EdgeSpec, Expect,
    FaultSpec, Guarantee, KeyDistribution, Limits, MemoryLoss, NetworkSpec, NotificationFaults,
    OperatorId, OperatorKind, OperatorSpec, Partitioning, Placement, RandomCrashes,
    RestartStrategy, SavepointSpec, Scenario, SlowTask, SourceSpec, StorageFaults, StorageKind,
    SwarmSpec, WorkerCrash, FORMAT_VERSION, MAX_BUFFER_RECORDS, MAX_COPIES, MAX_DURATION,
    MAX_DURATION_TEXT, MAX_PARALLELISM, MAX_RANDOM_CRASHES, OPERATOR_KINDS,
};
use super::{FailoverStrategy, LatencySpike, Partition};
use crate::engine::{parse_duration, SimDuration, SimTime};

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// One problem in a scenario file, with its position when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`parse_str`] (or the path given to [`load`]).
    pub file: String,
    /// 1-based line; `None` for problems not tied to a place (e.g. IO errors).
    pub line: Option<usize>,
    /// 1-based column, counted in characters.
    pub column: Option<usize>,
    pub message: String,
    /// How to fix it, when that is obvious.
    pub help: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "{}:{line}:{column}: error: {}", self.file, self.message)?
            }
            _ => write!(f, "{}: error: {}", self.file, self.message)?,
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Every problem found in a scenario file, in file order.
#[derive(Debug, Clone)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/// Upper bound on the channels of one job (each costs memory up front).
const MAX_CHANNELS: u64 = 1_000_000;
/// Upper bound on the records of all sources (generated in memory up front).
const MAX_RECORDS: u64 = 200_000_000;
/// The help for a value above one of the limits on values.
const LIMIT_HELP: &str =
    "the largest value ckptsim supports; see \"Limits on values\" in docs/scenarios.md";

/// Reads and parses the scenario file at `path`. A file that cannot be read
/// gives one error without a position.
pub fn load(path: &Path) -> Result<Scenario, ScenarioErrors> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&text, &file),
        Err(err) => Err(ScenarioErrors(vec![ScenarioError {
            file,
            line: None,
            column: None,
            message: format!("cannot read scenario file: {err}"),
            help: None,
        }])),
    }
}

/// Parses and validates scenario text; `file` is only used in error messages.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario, ScenarioErrors> {
    let source = Source { file, text };
    // A file written for another format version would mostly produce noise
    // (unknown keys), so the version is checked on its own first.
    if let Some(error) = source.version_mismatch() {
        return Err(ScenarioErrors(vec![error]));
    }
    let raw: RawScenario =
        toml::from_str(text).map_err(|err| ScenarioErrors(vec![source.toml_error(&err)]))?;
    Validator::new(source).scenario(raw)
}

// ---------------------------------------------------------------------------
// Positions
// ---------------------------------------------------------------------------

/// The text being parsed, for turning byte spans into positioned errors.
#[derive(Clone, Copy)]
struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl Source<'_> {
    /// 1-based (line, column) of a byte offset; columns count characters.
    /// Offsets past the end or inside a character are clamped, never a panic.
    fn position(&self, offset: usize) -> (usize, usize) {
        let mut end = offset.min(self.text.len());
        // Offset 0 is always a boundary, so this stops.
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let before = self.text.get(..end).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
        (line, column)
    }

    /// An error at the start of `span`, or without a position.
    fn error(
        &self,
        span: Option<Range<usize>>,
        message: String,
        help: Option<String>,
    ) -> ScenarioError {
        let (line, column) = match span {
            Some(span) => {
                let (line, column) = self.position(span.start);
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message,
            help,
        }
    }

    /// A phase-1 error from `toml`, keeping its message (for an unknown key,
    /// that message already lists the expected keys).
    fn toml_error(&self, err: &toml::de::Error) -> ScenarioError {
        let message = err.message().trim_end().to_string();
        let help = unknown_key_help(&message);
        self.error(err.span(), message, help)
    }

    /// `Some(error)` if the text declares an integer `version` other than the
    /// one this build reads. Everything else is left to the full parse.
    fn version_mismatch(&self) -> Option<ScenarioError> {
        /// Only the `version` key; other keys are ignored here.
        #[derive(Deserialize)]
        struct VersionProbe {
            version: Option<Spanned<toml::Value>>,
        }
        let probe: VersionProbe = toml::from_str(self.text).ok()?;
        let version = probe.version?;
        match version.get_ref() {
            toml::Value::Integer(n) if *n != i64::from(FORMAT_VERSION) => {
                Some(self.error(Some(version.span()), unsupported_version(*n), None))
            }
            _ => None,
        }
    }
}

fn unsupported_version(n: i64) -> String {
    format!("unsupported scenario version {n}; this ckptsim reads version {FORMAT_VERSION}")
}

/// For toml's "unknown field `x`, expected one of `a`, `b`": suggests the
/// closest expected key, if one is close.
fn unknown_key_help(message: &str) -> Option<String> {
    if !message.starts_with("unknown field `") {
        return None;
    }
    // Odd-numbered pieces between backticks are the quoted names.
    let mut quoted = message.split('`').skip(1).step_by(2);
    let unknown = quoted.next()?;
    let close = closest(unknown, quoted)?;
    Some(format!("did you mean `{close}`?"))
}

// ---------------------------------------------------------------------------
// Phase 1: raw shapes
// ---------------------------------------------------------------------------

/// An optional integer, kept as `i64` (TOML's integer type) so that phase 2
/// can report out-of-range values together with every other problem.
type Int = Option<Spanned<i64>>;
/// An optional string: a name, a choice or a duration.
type Text = Option<Spanned<String>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    version: Int,
    name: Text,
    description: Option<String>,
    max_parallelism: Int,
    network: Option<RawNetwork>,
    #[serde(default)]
    operators: Vec<Located<RawOperator>>,
    #[serde(default)]
    edges: Vec<Located<RawEdge>>,
    checkpoint: Option<RawCheckpoint>,
    faults: Option<RawFaults>,
    limits: Option<RawLimits>,
    expect: Option<RawExpect>,
    swarm: Option<Located<RawSwarm>>,
    #[serde(default)]
    savepoints: Vec<Located<RawSavepoint>>,
    cluster: Option<Located<RawCluster>>,
    cancel_at: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSavepoint {
    at: Text,
    stop: Option<Spanned<bool>>,
    drain: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    workers: Int,
    slots_per_worker: Int,
    placement: Text,
    heartbeat_timeout: Text,
    replacement_delay: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkerCrash {
    at: Text,
    worker: Int,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    buffer_records: Int,
    buffer_credits: Int,
    output_buffers: Int,
    latency_min: Text,
    latency_max: Text,
    flush_timeout: Text,
    step_quantum: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperator {
    id: Text,
    kind: Text,
    parallelism: Int,
    cost: Text,
    cost_jitter: Text,
    // source
    partitions: Int,
    records_per_partition: Int,
    keys: Int,
    key_distribution: Text,
    value_max: Int,
    // map
    mul: Int,
    add: Int,
    // filter
    modulus: Int,
    keep_below: Int,
    // flat-map
    copies: Int,
    // count-window
    size: Int,
    // sink-at-least-once
    batch: Int,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdge {
    from: Text,
    to: Text,
    partitioning: Text,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCheckpoint {
    algorithm: Text,
    interval: Text,
    first_delay: Text,
    min_pause: Text,
    timeout: Text,
    max_concurrent: Int,
    alignment_timeout: Text,
    tolerable_failures: Int,
    retained: Int,
    retain_on_cancel: Option<Spanned<bool>>,
    storage: Text,
    storage_latency: Text,
    storage_bytes_per_sec: Int,
    rpc_latency: Text,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFaults {
    failover: Text,
    detection_delay: Text,
    restart_delay: Text,
    max_restarts: Int,
    #[serde(default)]
    crashes: Vec<Located<RawCrash>>,
    random: Option<Located<RawRandom>>,
    restart: Option<Located<RawRestart>>,
    notifications: Option<Located<RawNotifications>>,
    storage: Option<Located<RawStorageFaults>>,
    coordinator: Option<Located<RawCoordinator>>,
    #[serde(default)]
    slow_tasks: Vec<Located<RawSlowTask>>,
    #[serde(default)]
    worker_crashes: Vec<Located<RawWorkerCrash>>,
    random_workers: Option<Located<RawRandom>>,
    #[serde(default)]
    latency_spikes: Vec<Located<RawSpike>>,
    #[serde(default)]
    partitions: Vec<Located<RawPartition>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpike {
    from: Text,
    until: Text,
    extra: Text,
    edge: Text,
    worker: Int,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPartition {
    from: Text,
    until: Text,
    workers: Option<Spanned<Vec<i64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRestart {
    strategy: Text,
    max_backoff: Text,
    backoff_multiplier: Option<Spanned<f64>>,
    reset_threshold: Text,
    max_failures: Int,
    interval: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNotifications {
    loss_percent: Int,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStorageFaults {
    failure_percent: Int,
    slow_percent: Int,
    slow_latency: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCoordinator {
    failover_delay: Text,
    on_memory_loss: Text,
    crashes: Option<Vec<Spanned<String>>>,
    random: Option<Located<RawRandom>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlowTask {
    task: Text,
    from: Text,
    until: Text,
    factor: Int,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCrash {
    at: Text,
    task: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRandom {
    mean_interval: Text,
    window_start: Text,
    window_end: Text,
    max_crashes: Int,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_events: Int,
    max_time: Text,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    guarantee: Text,
}

/// `[min, max]` of durations or of integers.
type TextRange = Option<Spanned<Vec<String>>>;
type IntRange = Option<Spanned<Vec<i64>>>;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSwarm {
    enabled: Option<Spanned<bool>>,
    latency_max: TextRange,
    buffer_records: IntRange,
    buffer_credits: IntRange,
    interval: TextRange,
    timeout: TextRange,
    cost_percent: IntRange,
    crash_mean_interval: TextRange,
    max_crashes: IntRange,
    crash_window_end: TextRange,
    notification_loss_percent: IntRange,
    storage_failure_percent: IntRange,
    storage_slow_percent: IntRange,
    coordinator_crashes: IntRange,
    worker_crashes: IntRange,
    latency_spike_extra: TextRange,
    partition_duration: TextRange,
}

// `toml` recognises `toml::Spanned` by these names (serde_spanned's protocol).
// Should they ever change, toml hands `Located` the plain table instead and
// every table span is `None`: positions degrade, parsing still works.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// A table with the byte span of its header (or inline braces), like
/// [`toml::Spanned`]. Unlike `Spanned`, a table toml cannot locate (one made
/// only of dotted keys, e.g. `random.mean_interval = "2s"` under `[faults]`)
/// still deserializes, with `span: None`, instead of failing with a baffling
/// "expected a borrowed string".
struct Located<T> {
    span: Option<Range<usize>>,
    value: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, LocatedVisitor(PhantomData))
    }
}

struct LocatedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LocatedVisitor<T> {
    type Value = Located<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located<T>, A::Error> {
        let first: Option<String> = map.next_key()?;
        if !first
            .as_deref()
            .is_some_and(|key| SPANNED_FIELDS.contains(&key))
        {
            // No span on offer: `map` is the table itself, first key included.
            let table = de::value::MapAccessDeserializer::new(Replay { first, rest: map });
            let value = T::deserialize(table)?;
            return Ok(Located { span: None, value });
        }
        let (mut start, mut end, mut value) = (None, None, None);
        let mut key = first;
        while let Some(k) = key {
            match k.as_str() {
                SPANNED_START => start = Some(map.next_value::<usize>()?),
                SPANNED_END => end = Some(map.next_value::<usize>()?),
                SPANNED_VALUE => value = Some(map.next_value::<T>()?),
                other => return Err(de::Error::unknown_field(other, SPANNED_FIELDS)),
            }
            key = map.next_key()?;
        }
        let value = value.ok_or_else(|| de::Error::missing_field(SPANNED_VALUE))?;
        let span = match (start, end) {
            (Some(start), Some(end)) if start <= end => Some(start..end),
            _ => None,
        };
        Ok(Located { span, value })
    }
}

/// A map whose first key was already read: yields it again, then the rest.
struct Replay<A> {
    first: Option<String>,
    rest: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.first.take() {
            Some(key) => {
                let key: de::value::StringDeserializer<A::Error> = key.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => self.rest.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.rest.next_value_seed(seed)
    }
}

// ---------------------------------------------------------------------------
// Phase 2: validation
// ---------------------------------------------------------------------------

/// What validation remembers about an operator for the graph and fault checks.
struct OpInfo {
    /// The id as written ("" when missing).
    id: String,
    /// Span of the id value; `None` when the id is missing.
    id_span: Option<Range<usize>>,
    /// Whether edges and tasks can name this operator: it has an id, and is
    /// the first with it (a duplicate gets one error, not a second one for
    /// its missing inputs).
    referable: bool,
    /// `None` when the kind is missing or unknown.
    kind: Option<OperatorKind>,
    /// `None` when missing or invalid.
    parallelism: Option<u32>,
}

/// An edge whose endpoints both name operators.
struct ResolvedEdge {
    from: usize,
    to: usize,
    partitioning: Option<Partitioning>,
    /// The `[[edges]]` table, or failing that the `from` value.
    span: Option<Range<usize>>,
    from_span: Range<usize>,
    to_span: Range<usize>,
    partitioning_span: Option<Range<usize>>,
}

/// Checks raw values and collects every problem found.
struct Validator<'a> {
    source: Source<'a>,
    errors: Vec<ScenarioError>,
}

/// The root table: problems with the whole file point at line 1, column 1.
fn root() -> Option<Range<usize>> {
    Some(0..0)
}

impl<'a> Validator<'a> {
    fn new(source: Source<'a>) -> Self {
        Validator {
            source,
            errors: Vec::new(),
        }
    }

    fn report(&mut self, span: Option<Range<usize>>, message: String, help: Option<String>) {
        self.errors.push(self.source.error(span, message, help));
    }

    /// Line of a span, for help texts that point elsewhere ("first defined on line 3").
    fn line_of(&self, span: &Option<Range<usize>>) -> Option<usize> {
        span.as_ref().map(|s| self.source.position(s.start).0)
    }

    fn missing(&mut self, key: &str, table: &str, span: Option<Range<usize>>) {
        let message = if table.is_empty() {
            format!("missing required key `{key}`")
        } else {
            format!("missing required key `{key}` in {table}")
        };
        self.report(span, message, None);
    }

    /// Validates the whole file; `Ok` only if no problem was found.
    fn scenario(mut self, raw: RawScenario) -> Result<Scenario, ScenarioErrors> {
        match &raw.version {
            None => self.report(
                root(),
                "missing required key `version`".to_string(),
                Some(format!(
                    "add `version = {FORMAT_VERSION}` at the top of the file"
                )),
            ),
            Some(v) if *v.get_ref() != i64::from(FORMAT_VERSION) => {
                self.report(Some(v.span()), unsupported_version(*v.get_ref()), None)
            }
            Some(_) => {}
        }
        let name = match &raw.name {
            None => {
                self.missing("name", "", root());
                String::new()
            }
            Some(name) => {
                if name.get_ref().trim().is_empty() {
                    self.report(
                        Some(name.span()),
                        "name must not be empty".to_string(),
                        None,
                    );
                }
                name.get_ref().clone()
            }
        };
        let max_parallelism_range = 1..=i64::from(MAX_PARALLELISM);
        let max_parallelism = self.int_checked(
            &raw.max_parallelism,
            "max_parallelism",
            128u32,
            max_parallelism_range.clone(),
        );
        self.limit_help(&raw.max_parallelism, &max_parallelism_range);
        let network = self.network(raw.network.unwrap_or_default());
        let (operators, ops, ids) = self.operators(&raw.operators, max_parallelism);
        let edges = self.edges(&raw.edges, &ops, &ids);
        let checkpoint = self.checkpoint(raw.checkpoint.unwrap_or_default());
        let raw_faults = raw.faults.unwrap_or_default();
        let cluster = raw.cluster.as_ref().map(|c| self.cluster(c, &operators));
        let (worker_crashes, random_workers) = self.worker_faults(&raw_faults, cluster.as_ref());
        let (latency_spikes, partitions) =
            self.network_faults(&raw_faults, cluster.as_ref(), &ops, &ids);
        let mut faults = self.faults(raw_faults, &ops, &ids);
        faults.worker_crashes = worker_crashes;
        faults.random_workers = random_workers;
        faults.latency_spikes = latency_spikes;
        faults.partitions = partitions;
        let limits = self.limits(raw.limits.unwrap_or_default());
        let swarm = raw.swarm.as_ref().map(|s| self.swarm(&s.value));
        let savepoints = self.savepoints(&raw.savepoints);
        let cancel_at = raw
            .cancel_at
            .is_some()
            .then(|| self.duration(&raw.cancel_at, "cancel_at", SimDuration::ZERO))
            .map(|d| SimTime(d.nanos()));
        let guarantee = self.choice(
            &raw.expect.unwrap_or_default().guarantee,
            ("guarantee", "guarantees"),
            &[
                ("exactly-once", Guarantee::ExactlyOnce),
                ("at-least-once", Guarantee::AtLeastOnce),
                ("at-most-once", Guarantee::AtMostOnce),
                ("broken", Guarantee::Broken),
            ],
            Guarantee::ExactlyOnce,
        );

        if !self.errors.is_empty() {
            // File order; positionless errors (there are none today) first.
            self.errors.sort_by_key(|e| (e.line, e.column));
            return Err(ScenarioErrors(self.errors));
        }
        Ok(Scenario {
            name,
            description: raw.description.unwrap_or_default(),
            max_parallelism: max_parallelism.unwrap_or(128),
            operators,
            edges,
            network,
            checkpoint,
            faults,
            limits,
            expect: Expect {
                guarantee: guarantee.unwrap_or(Guarantee::ExactlyOnce),
            },
            swarm,
            savepoints,
            cluster,
            cancel_at,
        })
    }

    /// `[cluster]`: enough slots for the highest parallelism.
    fn cluster(
        &mut self,
        located: &Located<RawCluster>,
        operators: &[OperatorSpec],
    ) -> ClusterSpec {
        let c = &located.value;
        let workers = self.limited_int(&c.workers, "workers", 2u32, 1..=100_000);
        let slots_per_worker =
            self.limited_int(&c.slots_per_worker, "slots_per_worker", 1u32, 1..=100_000);
        let placement = self
            .choice(
                &c.placement,
                ("placement", "placements"),
                &[("spread", Placement::Spread), ("pack", Placement::Pack)],
                Placement::Spread,
            )
            .unwrap_or(Placement::Spread);
        let needed = operators.iter().map(|o| o.parallelism).max().unwrap_or(1);
        let slots = u64::from(workers) * u64::from(slots_per_worker);
        if slots < u64::from(needed) {
            self.report(
                located.span.clone(),
                format!(
                    "the cluster has {slots} slots ({workers} workers × {slots_per_worker}) but the highest parallelism is {needed}"
                ),
                Some("with slot sharing, slot i runs subtask i of every operator: add workers or slots_per_worker".to_string()),
            );
        }
        ClusterSpec {
            workers,
            slots_per_worker,
            placement,
            heartbeat_timeout: self.duration(
                &c.heartbeat_timeout,
                "heartbeat_timeout",
                SimDuration::from_millis(50),
            ),
            replacement_delay: self.duration(
                &c.replacement_delay,
                "replacement_delay",
                SimDuration::from_millis(100),
            ),
        }
    }

    /// `[[faults.worker_crashes]]` and `[faults.random_workers]`.
    fn worker_faults(
        &mut self,
        raw: &RawFaults,
        cluster: Option<&ClusterSpec>,
    ) -> (Vec<WorkerCrash>, Option<RandomCrashes>) {
        let mut crashes = Vec::new();
        let need_cluster = |v: &mut Self, span: &Option<Range<usize>>| {
            v.report(
                span.clone(),
                "worker crashes need a [cluster] section".to_string(),
                Some("add [cluster] with workers and slots_per_worker".to_string()),
            );
        };
        for located in &raw.worker_crashes {
            let w = &located.value;
            let table = &located.span;
            let what = "[[faults.worker_crashes]]";
            let at = self.required_duration(&w.at, "at", what, table);
            let Some(cluster) = cluster else {
                need_cluster(self, table);
                continue;
            };
            let last = i64::from(cluster.workers) - 1;
            let worker = self.required_int::<u32>(&w.worker, "worker", what, table, 0..=last);
            if let (Some(at), Some(worker)) = (at, worker) {
                crashes.push(WorkerCrash {
                    at: SimTime(at.nanos()),
                    worker,
                });
            }
        }
        let random = raw.random_workers.as_ref().and_then(|located| {
            if cluster.is_none() {
                need_cluster(self, &located.span);
            }
            self.random_crashes(located, "[faults.random_workers]")
        });
        (crashes, random)
    }

    fn savepoints(&mut self, raw: &[Located<RawSavepoint>]) -> Vec<SavepointSpec> {
        let mut out = Vec::new();
        for located in raw {
            let sp = &located.value;
            let at = self.required_duration(&sp.at, "at", "[[savepoints]]", &located.span);
            let stop = sp.stop.as_ref().is_some_and(|b| *b.get_ref());
            let drain = sp.drain.as_ref().is_some_and(|b| *b.get_ref());
            if drain && !stop {
                self.report(
                    sp.drain.as_ref().map(Spanned::span),
                    "drain applies only to stop-with-savepoint".to_string(),
                    Some("add `stop = true` to this savepoint, or remove `drain`".to_string()),
                );
            }
            if let Some(at) = at {
                out.push(SavepointSpec {
                    at: SimTime(at.nanos()),
                    stop,
                    drain,
                });
            }
        }
        out.sort_by_key(|s| s.at);
        out
    }

    // --- value helpers -----------------------------------------------------

    /// An integer in `range` converted to `T`; `None` (and an error) when out
    /// of range.
    fn check_int<T: TryFrom<i64>>(
        &mut self,
        value: &Spanned<i64>,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Option<T> {
        let n = *value.get_ref();
        let message = if n < *range.start() {
            format!("{key} must be at least {}", range.start())
        } else if n > *range.end() {
            format!("{key} must be at most {}", range.end())
        } else {
            // Every range used here lies within `T`'s, so this cannot fail.
            return T::try_from(n).ok();
        };
        self.report(Some(value.span()), message, None);
        None
    }

    /// An optional integer: `Some(default)` when absent, `None` (and an
    /// error) when out of range.
    fn int_checked<T: TryFrom<i64>>(
        &mut self,
        value: &Int,
        key: &str,
        default: T,
        range: RangeInclusive<i64>,
    ) -> Option<T> {
        match value {
            None => Some(default),
            Some(value) => self.check_int(value, key, range),
        }
    }

    /// Like [`Self::int_checked`], falling back to `default` after an error
    /// (the value is then never used: the whole parse fails).
    fn int<T: TryFrom<i64> + Copy>(
        &mut self,
        value: &Int,
        key: &str,
        default: T,
        range: RangeInclusive<i64>,
    ) -> T {
        self.int_checked(value, key, default, range)
            .unwrap_or(default)
    }

    /// Like [`Self::int`], for a key whose upper end is one of the limits on
    /// values (docs/scenarios.md): a larger value's error says so.
    fn limited_int<T: TryFrom<i64> + Copy>(
        &mut self,
        value: &Int,
        key: &str,
        default: T,
        range: RangeInclusive<i64>,
    ) -> T {
        let n = self.int(value, key, default, range.clone());
        self.limit_help(value, &range);
        n
    }

    /// Adds the limits help to the error just reported for `value`, if it
    /// lies above `range`.
    fn limit_help(&mut self, value: &Int, range: &RangeInclusive<i64>) {
        if value.as_ref().is_some_and(|v| v.get_ref() > range.end()) {
            if let Some(error) = self.errors.last_mut() {
                error.help = Some(LIMIT_HELP.to_string());
            }
        }
    }

    /// A required integer: `None` (and an error) when missing or out of range.
    fn required_int<T: TryFrom<i64>>(
        &mut self,
        value: &Int,
        key: &str,
        table: &str,
        table_span: &Option<Range<usize>>,
        range: RangeInclusive<i64>,
    ) -> Option<T> {
        match value {
            None => {
                self.missing(key, table, table_span.clone());
                None
            }
            Some(value) => self.check_int(value, key, range),
        }
    }

    /// A duration: `Some(default)` when absent, `None` (and an error) when
    /// it does not parse or exceeds [`MAX_DURATION`].
    fn duration_checked(
        &mut self,
        value: &Text,
        key: &str,
        default: SimDuration,
    ) -> Option<SimDuration> {
        match value {
            None => Some(default),
            Some(value) => self.bounded_duration(value, key),
        }
    }

    /// A duration that is present: parsed, and at most [`MAX_DURATION`]
    /// (so that the simulator can add a few of them to a time).
    fn bounded_duration(&mut self, value: &Spanned<String>, key: &str) -> Option<SimDuration> {
        match parse_duration(value.get_ref()) {
            Ok(d) if d > MAX_DURATION => {
                self.report(
                    Some(value.span()),
                    format!("{key} must be at most {MAX_DURATION_TEXT}"),
                    Some(LIMIT_HELP.to_string()),
                );
                None
            }
            Ok(d) => Some(d),
            Err(message) => {
                self.report(Some(value.span()), message, None);
                None
            }
        }
    }

    fn duration(&mut self, value: &Text, key: &str, default: SimDuration) -> SimDuration {
        self.duration_checked(value, key, default)
            .unwrap_or(default)
    }

    /// A duration that must be greater than zero.
    fn positive_duration(&mut self, value: &Text, key: &str, default: SimDuration) -> SimDuration {
        match self.duration_checked(value, key, default) {
            Some(SimDuration::ZERO) => {
                let span = value.as_ref().map(Spanned::span);
                self.report(span, format!("{key} must be greater than 0"), None);
                default
            }
            Some(d) => d,
            None => default,
        }
    }

    /// A required duration; `None` (and an error) when missing, malformed or
    /// too long.
    fn required_duration(
        &mut self,
        value: &Text,
        key: &str,
        table: &str,
        table_span: &Option<Range<usize>>,
    ) -> Option<SimDuration> {
        if value.is_none() {
            self.missing(key, table, table_span.clone());
            return None;
        }
        self.duration_checked(value, key, SimDuration::ZERO)
    }

    /// One of a fixed set of names: `Some(default)` when absent, `None` (and
    /// an error listing the options) when unknown. `what` names one option in
    /// the message ("unknown algorithm `x`"), `plural` lists them in the help
    /// ("known algorithms: aligned").
    fn choice<T: Clone>(
        &mut self,
        value: &Text,
        (what, plural): (&str, &str),
        options: &[(&str, T)],
        default: T,
    ) -> Option<T> {
        let Some(value) = value else {
            return Some(default);
        };
        let text = value.get_ref().as_str();
        if let Some((_, found)) = options.iter().find(|(name, _)| *name == text) {
            return Some(found.clone());
        }
        let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
        let help = match closest(text, names.iter().copied()) {
            Some(close) => format!(
                "did you mean `{close}`? known {plural}: {}",
                names.join(", ")
            ),
            None => format!("known {plural}: {}", names.join(", ")),
        };
        self.report(
            Some(value.span()),
            format!("unknown {what} `{text}`"),
            Some(help),
        );
        None
    }

    // --- sections ----------------------------------------------------------

    fn network(&mut self, raw: RawNetwork) -> NetworkSpec {
        let latency_min = self.duration(
            &raw.latency_min,
            "latency_min",
            SimDuration::from_micros(50),
        );
        let latency_max = self.duration(
            &raw.latency_max,
            "latency_max",
            SimDuration::from_micros(200),
        );
        if latency_max < latency_min {
            let span = raw
                .latency_max
                .as_ref()
                .or(raw.latency_min.as_ref())
                .map(Spanned::span);
            self.report(
                span,
                format!("latency_max ({latency_max}) must be at least latency_min ({latency_min})"),
                None,
            );
        }
        NetworkSpec {
            buffer_records: self.limited_int(
                &raw.buffer_records,
                "buffer_records",
                16,
                1..=MAX_BUFFER_RECORDS.into(),
            ),
            buffer_credits: self.int(&raw.buffer_credits, "buffer_credits", 2, 1..=u32_max()),
            output_buffers: self.int(&raw.output_buffers, "output_buffers", 1, 1..=u32_max()),
            latency_min,
            latency_max,
            flush_timeout: self.positive_duration(
                &raw.flush_timeout,
                "flush_timeout",
                SimDuration::from_millis(1),
            ),
            step_quantum: self.duration(
                &raw.step_quantum,
                "step_quantum",
                SimDuration::from_millis(1),
            ),
        }
    }

    /// Operators in file order, what the later checks need to know about
    /// them, and the id → index map (first definition wins).
    fn operators(
        &mut self,
        raw: &[Located<RawOperator>],
        max_parallelism: Option<u32>,
    ) -> (Vec<OperatorSpec>, Vec<OpInfo>, BTreeMap<String, OperatorId>) {
        let mut specs = Vec::with_capacity(raw.len());
        let mut infos: Vec<OpInfo> = Vec::with_capacity(raw.len());
        let mut ids: BTreeMap<String, OperatorId> = BTreeMap::new();
        if raw.is_empty() {
            self.report(
                root(),
                "the job has no operators".to_string(),
                Some("add an [[operators]] table with kind = \"source\"".to_string()),
            );
        }
        for (index, located) in raw.iter().enumerate() {
            let op = &located.value;
            let table = &located.span;

            let mut id = String::new();
            let mut id_span = None;
            let mut referable = false;
            match &op.id {
                None => self.missing("id", "[[operators]]", table.clone()),
                Some(value) => {
                    id = value.get_ref().clone();
                    id_span = Some(value.span());
                    self.check_id(value);
                    match ids.get(&id) {
                        Some(first) => {
                            let first_span = infos
                                .get(first.0 as usize)
                                .and_then(|info| info.id_span.clone());
                            let help = self.line_of(&first_span).map(|line| {
                                format!("operator ids must be unique; `{id}` is first defined on line {line}")
                            });
                            self.report(
                                Some(value.span()),
                                format!("duplicate operator id `{id}`"),
                                help,
                            );
                        }
                        None => {
                            ids.insert(id.clone(), dense_id(index));
                            referable = true;
                        }
                    }
                }
            }

            let kind = match &op.kind {
                None => {
                    self.missing("kind", "[[operators]]", table.clone());
                    None
                }
                Some(_) => {
                    // Listed kinds this parser cannot build count as unknown,
                    // rather than slipping through.
                    let options: Vec<(&str, OperatorKind)> = OPERATOR_KINDS
                        .iter()
                        .filter_map(|(name, _)| Some((*name, kind_from_name(name)?)))
                        .collect();
                    // The default is unused: the key is present.
                    self.choice(
                        &op.kind,
                        ("operator kind", "operator kinds"),
                        &options,
                        OperatorKind::KeyedCount,
                    )
                }
            };

            let parallelism_range = 1..=i64::from(MAX_PARALLELISM);
            let parallelism: Option<u32> = self.required_int(
                &op.parallelism,
                "parallelism",
                "[[operators]]",
                table,
                parallelism_range.clone(),
            );
            self.limit_help(&op.parallelism, &parallelism_range);

            let kind = kind.map(|kind| {
                self.check_kind_keys(op, kind.name());
                let kind = self.configure_kind(op, kind, parallelism);
                if let (true, Some(p), Some(max), Some(value)) =
                    (kind.is_keyed(), parallelism, max_parallelism, &op.parallelism)
                {
                    if p > max {
                        self.report(
                            Some(value.span()),
                            format!(
                                "parallelism {p} of keyed operator `{id}` exceeds max_parallelism {max}"
                            ),
                            Some(
                                "keyed state is split into max_parallelism key groups: \
                                 raise max_parallelism or lower the parallelism"
                                    .to_string(),
                            ),
                        );
                    }
                }
                kind
            });

            let default_cost = match &kind {
                Some(OperatorKind::Source(_)) => SimDuration::from_micros(10),
                _ => SimDuration::from_micros(1),
            };
            specs.push(OperatorSpec {
                id: id.clone(),
                // Only returned when there are no errors, so the placeholder
                // for an unknown kind never escapes.
                kind: kind.clone().unwrap_or(OperatorKind::KeyedCount),
                parallelism: parallelism.unwrap_or(1),
                cost: self.duration(&op.cost, "cost", default_cost),
                cost_jitter: self.duration(&op.cost_jitter, "cost_jitter", SimDuration::ZERO),
            });
            infos.push(OpInfo {
                id,
                id_span,
                referable,
                kind,
                parallelism,
            });
        }
        (specs, infos, ids)
    }

    fn check_id(&mut self, value: &Spanned<String>) {
        let id = value.get_ref();
        if id.is_empty() {
            self.report(
                Some(value.span()),
                "operator id must not be empty".to_string(),
                None,
            );
        } else if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            self.report(
                Some(value.span()),
                format!("operator id `{id}` may only contain ASCII letters, digits, `_` and `-`"),
                None,
            );
        }
    }

    /// Reports kind-specific keys set on an operator of another kind.
    fn check_kind_keys(&mut self, op: &RawOperator, kind: &str) {
        let int = |v: &Int| v.as_ref().map(Spanned::span);
        let text = |v: &Text| v.as_ref().map(Spanned::span);
        let keys = [
            ("partitions", "source", int(&op.partitions)),
            (
                "records_per_partition",
                "source",
                int(&op.records_per_partition),
            ),
            ("keys", "source", int(&op.keys)),
            ("key_distribution", "source", text(&op.key_distribution)),
            ("value_max", "source", int(&op.value_max)),
            ("mul", "map", int(&op.mul)),
            ("add", "map", int(&op.add)),
            ("modulus", "filter", int(&op.modulus)),
            ("keep_below", "filter", int(&op.keep_below)),
            ("copies", "flat-map", int(&op.copies)),
            ("size", "count-window", int(&op.size)),
            ("batch", "sink-at-least-once", int(&op.batch)),
        ];
        for (key, applies_to, span) in keys {
            if let Some(span) = span {
                if applies_to != kind {
                    self.report(
                        Some(span),
                        format!("key `{key}` does not apply to an operator of kind `{kind}`"),
                        Some(format!(
                            "`{key}` only applies to operators of kind `{applies_to}`; remove it"
                        )),
                    );
                }
            }
        }
    }

    /// Fills in a kind's parameters from the operator's keys and defaults.
    fn configure_kind(
        &mut self,
        op: &RawOperator,
        kind: OperatorKind,
        parallelism: Option<u32>,
    ) -> OperatorKind {
        match kind {
            OperatorKind::Source(_) => OperatorKind::Source(SourceSpec {
                partitions: self.int(
                    &op.partitions,
                    "partitions",
                    parallelism.unwrap_or(1),
                    1..=u32_max(),
                ),
                records_per_partition: self.int(
                    &op.records_per_partition,
                    "records_per_partition",
                    1000,
                    1..=i64::MAX,
                ),
                keys: self.int(&op.keys, "keys", 100, 1..=i64::MAX),
                key_distribution: self
                    .choice(
                        &op.key_distribution,
                        ("key distribution", "key distributions"),
                        &[
                            ("uniform", KeyDistribution::Uniform),
                            ("cyclic", KeyDistribution::Cyclic),
                            ("skewed", KeyDistribution::Skewed),
                        ],
                        KeyDistribution::Uniform,
                    )
                    .unwrap_or(KeyDistribution::Uniform),
                value_max: self.int(&op.value_max, "value_max", 1, 1..=i64::MAX),
            }),
            OperatorKind::Map { .. } => OperatorKind::Map {
                mul: op.mul.as_ref().map_or(1, |v| *v.get_ref()),
                add: op.add.as_ref().map_or(0, |v| *v.get_ref()),
            },
            OperatorKind::Filter { .. } => {
                let modulus = self.int_checked(&op.modulus, "modulus", 2u64, 1..=i64::MAX);
                let keep_below = self.int_checked(&op.keep_below, "keep_below", 1u64, 0..=i64::MAX);
                if let (Some(m), Some(k), Some(value)) = (modulus, keep_below, &op.keep_below) {
                    if k > m {
                        self.report(
                            Some(value.span()),
                            format!("keep_below ({k}) must be at most modulus ({m})"),
                            Some(format!(
                                "the filter keeps records with key % {m} < keep_below; \
                                 keep_below = {m} already keeps every record"
                            )),
                        );
                    }
                }
                OperatorKind::Filter {
                    modulus: modulus.unwrap_or(2),
                    keep_below: keep_below.unwrap_or(1),
                }
            }
            OperatorKind::FlatMap { .. } => OperatorKind::FlatMap {
                copies: self.limited_int(&op.copies, "copies", 2, 1..=MAX_COPIES.into()),
            },
            OperatorKind::CountWindow { .. } => OperatorKind::CountWindow {
                size: self.int(&op.size, "size", 10, 1..=u32_max()),
            },
            OperatorKind::SinkAtLeastOnce { .. } => OperatorKind::SinkAtLeastOnce {
                batch: self.limited_int(&op.batch, "batch", 1, 1..=MAX_BUFFER_RECORDS.into()),
            },
            other => other,
        }
    }

    /// Resolves an operator reference; reports unknown ids with the list of
    /// known ones and the closest match.
    fn resolve(
        &mut self,
        name: &str,
        span: Range<usize>,
        ops: &[OpInfo],
        ids: &BTreeMap<String, OperatorId>,
    ) -> Option<usize> {
        if let Some(id) = ids.get(name) {
            return Some(id.0 as usize);
        }
        // Listed and suggested in file order, so ties go to the earlier operator.
        let defined: Vec<&str> = ops
            .iter()
            .filter(|op| op.referable)
            .map(|op| op.id.as_str())
            .collect();
        let help = if defined.is_empty() {
            "no operators are defined".to_string()
        } else {
            let list = defined.join(", ");
            match closest(name, defined.iter().copied()) {
                Some(close) => format!("did you mean `{close}`? known operators: {list}"),
                None => format!("known operators: {list}"),
            }
        };
        self.report(Some(span), format!("unknown operator `{name}`"), Some(help));
        None
    }

    fn edges(
        &mut self,
        raw: &[Located<RawEdge>],
        ops: &[OpInfo],
        ids: &BTreeMap<String, OperatorId>,
    ) -> Vec<EdgeSpec> {
        let mut specs = Vec::new();
        let mut resolved = Vec::new();
        let mut all_resolved = true;
        for located in raw {
            let edge = &located.value;
            let table = &located.span;
            let endpoint = |v: &mut Self, key: &str, value: &Text| match value {
                None => {
                    v.missing(key, "[[edges]]", table.clone());
                    None
                }
                Some(value) => v
                    .resolve(value.get_ref(), value.span(), ops, ids)
                    .map(|op| (op, value.span())),
            };
            let from = endpoint(self, "from", &edge.from);
            let to = endpoint(self, "to", &edge.to);
            let partitioning = match &edge.partitioning {
                None => {
                    self.report(
                        table.clone(),
                        "missing required key `partitioning` in [[edges]]".to_string(),
                        Some("one of: forward, hash, rebalance, broadcast".to_string()),
                    );
                    None
                }
                Some(_) => self.choice(
                    &edge.partitioning,
                    ("partitioning", "partitioning schemes"),
                    &[
                        ("forward", Partitioning::Forward),
                        ("hash", Partitioning::Hash),
                        ("rebalance", Partitioning::Rebalance),
                        ("broadcast", Partitioning::Broadcast),
                    ],
                    Partitioning::Forward,
                ),
            };
            let (Some((from, from_span)), Some((to, to_span))) = (from, to) else {
                all_resolved = false;
                continue;
            };
            if let Some(partitioning) = partitioning {
                specs.push(EdgeSpec {
                    from: dense_id(from),
                    to: dense_id(to),
                    partitioning,
                });
            }
            resolved.push(ResolvedEdge {
                from,
                to,
                partitioning,
                span: table.clone().or(Some(from_span.clone())),
                from_span,
                to_span,
                partitioning_span: edge.partitioning.as_ref().map(Spanned::span),
            });
        }
        self.check_graph(&resolved, ops, all_resolved);
        specs
    }

    /// The job-graph rules: sources have no inputs, everything else has one,
    /// sinks have no outputs, forward and keyed inputs fit, no duplicates, no
    /// cycles. Every violation is reported.
    fn check_graph(&mut self, edges: &[ResolvedEdge], ops: &[OpInfo], all_resolved: bool) {
        let name = |i: usize| ops.get(i).map_or("", |op| op.id.as_str());
        let kind = |i: usize| ops.get(i).and_then(|op| op.kind.as_ref());
        let parallelism = |i: usize| ops.get(i).and_then(|op| op.parallelism);

        // Accepted edges so far (no duplicates, no cycle closers): acyclic.
        let mut successors: Vec<Vec<usize>> = vec![Vec::new(); ops.len()];
        let mut seen: BTreeMap<(usize, usize), Option<Range<usize>>> = BTreeMap::new();
        let mut has_input = vec![false; ops.len()];

        for edge in edges {
            let (from, to) = (edge.from, edge.to);
            if let Some(slot) = has_input.get_mut(to) {
                *slot = true;
            }
            if let Some(first) = seen.get(&(from, to)) {
                let help = self.line_of(first).map(|line| {
                    format!(
                        "the first {} -> {} edge is on line {line}; remove one",
                        name(from),
                        name(to)
                    )
                });
                self.report(
                    edge.span.clone(),
                    format!("duplicate edge {} -> {}", name(from), name(to)),
                    help,
                );
                continue;
            }
            seen.insert((from, to), edge.span.clone());

            if kind(to).is_some_and(OperatorKind::is_source) {
                self.report(
                    Some(edge.to_span.clone()),
                    format!("source `{}` cannot have inputs", name(to)),
                    Some("sources read their own log: remove this edge".to_string()),
                );
            }
            if let Some(k) = kind(from).filter(|k| k.is_sink()) {
                self.report(
                    Some(edge.from_span.clone()),
                    format!("sink `{}` cannot have outputs", name(from)),
                    Some(format!(
                        "a `{}` operator writes to the external store: remove this edge",
                        k.name()
                    )),
                );
            }
            if let (Some(Partitioning::Forward), Some(pf), Some(pt)) =
                (edge.partitioning, parallelism(from), parallelism(to))
            {
                if pf != pt {
                    self.report(
                        edge.partitioning_span.clone(),
                        format!(
                            "forward edge {} -> {} connects parallelism {pf} to parallelism {pt}",
                            name(from),
                            name(to)
                        ),
                        Some(
                            "use `rebalance` or `hash`, or make the parallelisms equal".to_string(),
                        ),
                    );
                }
            }
            if let Some(p) = edge.partitioning.filter(|p| *p != Partitioning::Hash) {
                if kind(to).is_some_and(OperatorKind::is_keyed) {
                    self.report(
                        edge.partitioning_span.clone(),
                        format!(
                            "keyed operator `{}` reads a `{}` edge from `{}`",
                            name(to),
                            p.name(),
                            name(from)
                        ),
                        Some(
                            "keyed operators read keyed streams: use partitioning = \"hash\""
                                .to_string(),
                        ),
                    );
                }
            }

            // Does this edge close a cycle? Only if `to` already reaches `from`.
            let cycle = if from == to {
                Some(vec![from])
            } else {
                path(&successors, to, from).map(|mut p| {
                    // p = to .. from; the cycle is from -> to -> .. -> from.
                    p.pop();
                    p.insert(0, from);
                    p
                })
            };
            match cycle {
                Some(mut nodes) => {
                    // Start at the operator defined first, for a stable message.
                    let first_defined = nodes.iter().enumerate().min_by_key(|(_, &n)| n);
                    if let Some((start, _)) = first_defined {
                        nodes.rotate_left(start);
                    }
                    if let Some(&first) = nodes.first() {
                        nodes.push(first);
                    }
                    let rendered: Vec<&str> = nodes.iter().map(|&i| name(i)).collect();
                    self.report(
                        edge.span.clone(),
                        format!("the job graph has a cycle: {}", rendered.join(" -> ")),
                        Some("cyclic dataflows are not supported yet".to_string()),
                    );
                }
                None => {
                    if let Some(next) = successors.get_mut(from) {
                        next.push(to);
                    }
                }
            }
        }

        let mut any_source = false;
        let mut kinds_known = true;
        for (i, op) in ops.iter().enumerate() {
            let Some(kind) = &op.kind else {
                kinds_known = false;
                continue;
            };
            any_source |= kind.is_source();
            // With an unresolved edge around, a missing input is most likely
            // that edge: do not pile a second error on the first.
            let no_input = !has_input.get(i).copied().unwrap_or(true);
            if !kind.is_source() && no_input && all_resolved && op.referable {
                if let Some(span) = &op.id_span {
                    self.report(
                        Some(span.clone()),
                        format!("operator `{}` has no inputs", op.id),
                        Some(format!("add an [[edges]] table with to = \"{}\"", op.id)),
                    );
                }
            }
        }
        if !ops.is_empty() && kinds_known && !any_source {
            self.report(
                root(),
                "the job has no source operator".to_string(),
                Some("add an [[operators]] table with kind = \"source\"".to_string()),
            );
        }
        // Every channel is allocated up front: bound them so that a typo in a
        // parallelism is an error, not an out-of-memory crash.
        let channels: u64 = edges
            .iter()
            .map(|e| {
                let up = u64::from(parallelism(e.from).unwrap_or(1));
                let down = u64::from(parallelism(e.to).unwrap_or(1));
                match e.partitioning {
                    Some(Partitioning::Forward) => up,
                    _ => up * down,
                }
            })
            .sum();
        if channels > MAX_CHANNELS {
            self.report(
                root(),
                format!("the job has {channels} channels; at most {MAX_CHANNELS} are supported"),
                Some("lower the parallelism of operators joined by hash, rebalance or broadcast edges".to_string()),
            );
        }
        // The input is generated in memory before the run.
        let records: u64 = (0..ops.len())
            .filter_map(|i| match kind(i) {
                Some(OperatorKind::Source(src)) => {
                    Some(u64::from(src.partitions).saturating_mul(src.records_per_partition))
                }
                _ => None,
            })
            .fold(0u64, u64::saturating_add);
        if records > MAX_RECORDS {
            self.report(
                root(),
                format!("the sources hold {records} records in all; at most {MAX_RECORDS} are supported"),
                Some("lower records_per_partition or partitions".to_string()),
            );
        }
    }

    fn checkpoint(&mut self, raw: RawCheckpoint) -> CheckpointSpec {
        let options: Vec<(&str, Algorithm)> = Algorithm::all().map(|a| (a.name(), a)).collect();
        let algorithm = self
            .choice(
                &raw.algorithm,
                ("algorithm", "algorithms"),
                &options,
                Algorithm::Aligned,
            )
            .unwrap_or(Algorithm::Aligned);

        let default_interval = SimDuration::from_secs(1);
        let interval = match &raw.interval {
            Some(v) if v.get_ref().trim() == "none" => None,
            value => match self.duration_checked(value, "interval", default_interval) {
                Some(SimDuration::ZERO) => {
                    self.report(
                        value.as_ref().map(Spanned::span),
                        "interval must be greater than 0".to_string(),
                        Some(
                            "write interval = \"none\" to disable periodic checkpoints".to_string(),
                        ),
                    );
                    Some(default_interval)
                }
                Some(d) => Some(d),
                None => Some(default_interval),
            },
        };
        let first_delay = self.duration(
            &raw.first_delay,
            "first_delay",
            interval.unwrap_or(SimDuration::ZERO),
        );

        let storage = self
            .choice(
                &raw.storage,
                ("storage", "storage kinds"),
                &[
                    ("memory", StorageKind::Memory),
                    ("filesystem", StorageKind::Filesystem),
                ],
                StorageKind::Memory,
            )
            .unwrap_or(StorageKind::Memory);
        let max_concurrent = self.int(&raw.max_concurrent, "max_concurrent", 1, 1..=u32_max());
        if let Some(limit) = algorithm.max_concurrent() {
            if max_concurrent > limit {
                self.report(
                    raw.max_concurrent.as_ref().map(Spanned::span),
                    format!(
                        "algorithm `{}` allows at most {limit} concurrent checkpoint, not {max_concurrent}",
                        algorithm.name()
                    ),
                    Some(format!(
                        "set max_concurrent = {limit} (Flink refuses more with unaligned checkpoints)"
                    )),
                );
            }
        }
        let (default_latency, default_bandwidth) = match storage {
            StorageKind::Memory => (SimDuration::from_micros(100), 1_000_000_000),
            StorageKind::Filesystem => (SimDuration::from_millis(5), 200_000_000),
        };

        CheckpointSpec {
            algorithm,
            interval,
            first_delay,
            min_pause: self.duration(&raw.min_pause, "min_pause", SimDuration::ZERO),
            timeout: self.positive_duration(&raw.timeout, "timeout", SimDuration::from_secs(600)),
            max_concurrent,
            alignment_timeout: self.duration(
                &raw.alignment_timeout,
                "alignment_timeout",
                SimDuration::from_millis(100),
            ),
            tolerable_failures: self.int(
                &raw.tolerable_failures,
                "tolerable_failures",
                0,
                0..=u32_max(),
            ),
            retained: self.int(&raw.retained, "retained", 1, 1..=u32_max()),
            retain_on_cancel: raw.retain_on_cancel.as_ref().is_some_and(|b| *b.get_ref()),
            storage,
            storage_latency: self.duration(
                &raw.storage_latency,
                "storage_latency",
                default_latency,
            ),
            storage_bytes_per_sec: self.int(
                &raw.storage_bytes_per_sec,
                "storage_bytes_per_sec",
                default_bandwidth,
                1..=i64::MAX,
            ),
            rpc_latency: self.duration(
                &raw.rpc_latency,
                "rpc_latency",
                SimDuration::from_micros(200),
            ),
        }
    }

    fn faults(
        &mut self,
        raw: RawFaults,
        ops: &[OpInfo],
        ids: &BTreeMap<String, OperatorId>,
    ) -> FaultSpec {
        let detection_delay = self.duration(
            &raw.detection_delay,
            "detection_delay",
            SimDuration::from_millis(100),
        );
        let restart_delay = self.duration(
            &raw.restart_delay,
            "restart_delay",
            SimDuration::from_millis(100),
        );
        let max_restarts = self.int(&raw.max_restarts, "max_restarts", 1000, 0..=u32_max());

        let mut crashes = Vec::new();
        for located in &raw.crashes {
            let crash = &located.value;
            let table = &located.span;
            let at = self.required_duration(&crash.at, "at", "[[faults.crashes]]", table);
            let Some(task) = &crash.task else {
                self.missing("task", "[[faults.crashes]]", table.clone());
                continue;
            };
            let target = self.task(task, ops, ids);
            if let (Some(at), Some((operator, subtask))) = (at, target) {
                crashes.push(CrashSpec {
                    at: SimTime(at.nanos()),
                    operator: dense_id(operator),
                    subtask,
                });
            }
        }

        let random = raw
            .random
            .and_then(|located| self.random_crashes(&located, "[faults.random]"));
        let restart = match &raw.restart {
            Some(located) => self.restart_strategy(located),
            None => RestartStrategy::FixedDelay,
        };
        let notifications = raw.notifications.as_ref().map(|l| NotificationFaults {
            loss_percent: self.int(&l.value.loss_percent, "loss_percent", 0, 0..=100),
        });
        let storage = raw.storage.as_ref().map(|l| StorageFaults {
            failure_percent: self.int(&l.value.failure_percent, "failure_percent", 0, 0..=100),
            slow_percent: self.int(&l.value.slow_percent, "slow_percent", 0, 0..=100),
            slow_latency: self.duration(
                &l.value.slow_latency,
                "slow_latency",
                SimDuration::from_millis(50),
            ),
        });
        let coordinator = raw.coordinator.as_ref().map(|l| self.coordinator_faults(l));
        let mut slow_tasks = Vec::new();
        for located in &raw.slow_tasks {
            let st = &located.value;
            let table = &located.span;
            let what = "[[faults.slow_tasks]]";
            let from = self.duration_checked(&st.from, "from", SimDuration::ZERO);
            let until = self.required_duration(&st.until, "until", what, table);
            let factor = self.limited_int(&st.factor, "factor", 10, 1..=1_000_000);
            if let (Some(from), Some(until)) = (from, until) {
                if until <= from {
                    self.report(
                        st.until.as_ref().map(Spanned::span),
                        format!("until ({until}) must be after from ({from})"),
                        None,
                    );
                }
            }
            let Some(task) = &st.task else {
                self.missing("task", what, table.clone());
                continue;
            };
            let target = self.task(task, ops, ids);
            if let (Some(from), Some(until), Some((operator, subtask))) = (from, until, target) {
                slow_tasks.push(SlowTask {
                    operator: dense_id(operator),
                    subtask,
                    from: SimTime(from.nanos()),
                    until: SimTime(until.nanos()),
                    factor,
                });
            }
        }

        FaultSpec {
            detection_delay,
            restart_delay,
            max_restarts,
            crashes,
            random,
            restart,
            notifications,
            storage,
            coordinator,
            slow_tasks,
            worker_crashes: Vec::new(),
            random_workers: None,
            latency_spikes: Vec::new(),
            partitions: Vec::new(),
            failover: self
                .choice(
                    &raw.failover,
                    ("failover strategy", "failover strategies"),
                    &[
                        ("full", FailoverStrategy::Full),
                        ("region", FailoverStrategy::Region),
                    ],
                    FailoverStrategy::Full,
                )
                .unwrap_or(FailoverStrategy::Full),
        }
    }

    /// A `from`/`until` window: `from` defaults to 0, `until` is required
    /// and must come after `from`.
    fn window(
        &mut self,
        from: &Text,
        until: &Text,
        what: &str,
        table: &Option<Range<usize>>,
    ) -> Option<(SimTime, SimTime)> {
        let start = self.duration_checked(from, "from", SimDuration::ZERO);
        let end = self.required_duration(until, "until", what, table);
        let (start, end) = (start?, end?);
        if end <= start {
            self.report(
                until.as_ref().map(Spanned::span),
                format!("until ({end}) must be after from ({start})"),
                None,
            );
            return None;
        }
        Some((SimTime(start.nanos()), SimTime(end.nanos())))
    }

    /// `[[faults.latency_spikes]]` and `[[faults.partitions]]`.
    fn network_faults(
        &mut self,
        raw: &RawFaults,
        cluster: Option<&ClusterSpec>,
        ops: &[OpInfo],
        ids: &BTreeMap<String, OperatorId>,
    ) -> (Vec<LatencySpike>, Vec<Partition>) {
        let workers = cluster.map_or(0, |c| c.workers);
        let mut spikes = Vec::new();
        for located in &raw.latency_spikes {
            let s = &located.value;
            let what = "[[faults.latency_spikes]]";
            let window = self.window(&s.from, &s.until, what, &located.span);
            let extra = self.required_duration(&s.extra, "extra", what, &located.span);
            let edge = match &s.edge {
                None => Some(None),
                Some(text) => match text.get_ref().split_once("->") {
                    Some((a, b)) => {
                        let a = self.resolve(a.trim(), text.span(), ops, ids);
                        let b = self.resolve(b.trim(), text.span(), ops, ids);
                        match (a, b) {
                            (Some(a), Some(b)) => Some(Some((dense_id(a), dense_id(b)))),
                            _ => None,
                        }
                    }
                    None => {
                        self.report(
                            Some(text.span()),
                            format!("edge `{}` is not `from->to`", text.get_ref()),
                            Some("write e.g. edge = \"split->count\"".to_string()),
                        );
                        None
                    }
                },
            };
            let worker = match &s.worker {
                None => Some(None),
                Some(_) if cluster.is_none() => {
                    self.report(
                        located.span.clone(),
                        "a latency spike on a worker needs a [cluster] section".to_string(),
                        None,
                    );
                    None
                }
                Some(_) => {
                    let last = i64::from(workers) - 1;
                    self.required_int::<u32>(&s.worker, "worker", what, &located.span, 0..=last)
                        .map(Some)
                }
            };
            if let (Some((from, until)), Some(extra), Some(edge), Some(worker)) =
                (window, extra, edge, worker)
            {
                spikes.push(LatencySpike {
                    from,
                    until,
                    extra,
                    edge,
                    worker,
                });
            }
        }
        let mut partitions = Vec::new();
        for located in &raw.partitions {
            let p = &located.value;
            let what = "[[faults.partitions]]";
            let window = self.window(&p.from, &p.until, what, &located.span);
            if cluster.is_none() {
                self.report(
                    located.span.clone(),
                    "a partition needs a [cluster] section".to_string(),
                    Some("add [cluster] with workers and slots_per_worker".to_string()),
                );
                continue;
            }
            let Some(list) = &p.workers else {
                self.missing("workers", what, located.span.clone());
                continue;
            };
            let mut cut = Vec::new();
            let mut bad = false;
            for &w in list.get_ref() {
                if w < 0 || w >= i64::from(workers) {
                    bad = true;
                    self.report(
                        Some(list.span()),
                        format!(
                            "worker {w} does not exist: the cluster has workers 0 to {}",
                            workers - 1
                        ),
                        None,
                    );
                } else if !cut.contains(&(w as u32)) {
                    cut.push(w as u32);
                }
            }
            if !bad && (cut.is_empty() || cut.len() as u32 >= workers) {
                self.report(
                    Some(list.span()),
                    "a partition cuts off some workers, not none or all".to_string(),
                    None,
                );
                continue;
            }
            if let Some((from, until)) = window.filter(|_| !bad) {
                cut.sort_unstable();
                partitions.push(Partition {
                    from,
                    until,
                    workers: cut,
                });
            }
        }
        (spikes, partitions)
    }

    /// `[faults.restart]`.
    fn restart_strategy(&mut self, located: &Located<RawRestart>) -> RestartStrategy {
        let r = &located.value;
        let strategy = self
            .choice(
                &r.strategy,
                ("restart strategy", "restart strategies"),
                &[
                    ("fixed-delay", 0u8),
                    ("exponential-delay", 1),
                    ("failure-rate", 2),
                ],
                0,
            )
            .unwrap_or(0);
        // Keys of another strategy are mistakes, not silently ignored.
        let exponential_keys = [
            ("max_backoff", r.max_backoff.as_ref().map(Spanned::span)),
            (
                "backoff_multiplier",
                r.backoff_multiplier.as_ref().map(Spanned::span),
            ),
            (
                "reset_threshold",
                r.reset_threshold.as_ref().map(Spanned::span),
            ),
        ];
        let rate_keys = [
            ("max_failures", r.max_failures.as_ref().map(Spanned::span)),
            ("interval", r.interval.as_ref().map(Spanned::span)),
        ];
        let name = ["fixed-delay", "exponential-delay", "failure-rate"][strategy as usize];
        for (owner, keys) in [(1u8, &exponential_keys[..]), (2, &rate_keys[..])] {
            if owner == strategy {
                continue;
            }
            let owner_name = ["fixed-delay", "exponential-delay", "failure-rate"][owner as usize];
            for (key, span) in keys {
                if let Some(span) = span {
                    self.report(
                        Some(span.clone()),
                        format!("{key} belongs to the {owner_name} restart strategy, not {name}"),
                        Some(format!("remove {key}, or set strategy = \"{owner_name}\"")),
                    );
                }
            }
        }
        match strategy {
            1 => {
                let multiplier_permille = match &r.backoff_multiplier {
                    None => 1500,
                    Some(m) => {
                        let v = *m.get_ref();
                        if !(1.0..=1000.0).contains(&v) {
                            self.report(
                                Some(m.span()),
                                format!("backoff_multiplier must lie in 1..=1000, not {v}"),
                                None,
                            );
                            1500
                        } else {
                            (v * 1000.0).round() as u32
                        }
                    }
                };
                RestartStrategy::ExponentialDelay {
                    max_backoff: self.duration(
                        &r.max_backoff,
                        "max_backoff",
                        SimDuration::from_secs(60),
                    ),
                    multiplier_permille,
                    reset_threshold: self.duration(
                        &r.reset_threshold,
                        "reset_threshold",
                        SimDuration::from_secs(3_600),
                    ),
                }
            }
            2 => RestartStrategy::FailureRate {
                max_failures: self.int(&r.max_failures, "max_failures", 1, 1..=u32_max()),
                interval: self.positive_duration(
                    &r.interval,
                    "interval",
                    SimDuration::from_secs(60),
                ),
            },
            _ => RestartStrategy::FixedDelay,
        }
    }

    /// `[faults.coordinator]`.
    fn coordinator_faults(&mut self, located: &Located<RawCoordinator>) -> CoordinatorFaults {
        let c = &located.value;
        let on_memory_loss = self
            .choice(
                &c.on_memory_loss,
                ("on_memory_loss choice", "choices"),
                &[
                    ("restart-from-scratch", MemoryLoss::RestartFromScratch),
                    ("fail", MemoryLoss::Fail),
                ],
                MemoryLoss::RestartFromScratch,
            )
            .unwrap_or(MemoryLoss::RestartFromScratch);
        let mut crashes = Vec::new();
        for at in c.crashes.iter().flatten() {
            if let Some(d) = self.bounded_duration(at, "crashes") {
                crashes.push(SimTime(d.nanos()));
            }
        }
        let random = c
            .random
            .as_ref()
            .and_then(|l| self.random_crashes(l, "[faults.coordinator.random]"));
        CoordinatorFaults {
            failover_delay: self.duration(
                &c.failover_delay,
                "failover_delay",
                SimDuration::from_millis(200),
            ),
            on_memory_loss,
            crashes,
            random,
        }
    }

    /// A random crash table (`[faults.random]`, `[faults.coordinator.random]`).
    fn random_crashes(
        &mut self,
        located: &Located<RawRandom>,
        what: &str,
    ) -> Option<RandomCrashes> {
        {
            let r = &located.value;
            let table = &located.span;
            let mean_interval =
                self.required_duration(&r.mean_interval, "mean_interval", what, table);
            if mean_interval == Some(SimDuration::ZERO) {
                self.report(
                    r.mean_interval.as_ref().map(Spanned::span),
                    "mean_interval must be greater than 0".to_string(),
                    None,
                );
            }
            let window_start =
                self.duration_checked(&r.window_start, "window_start", SimDuration::ZERO);
            let window_end = self.required_duration(&r.window_end, "window_end", what, table);
            if let (Some(start), Some(end)) = (window_start, window_end) {
                if end <= start {
                    self.report(
                        r.window_end.as_ref().map(Spanned::span),
                        format!("window_end ({end}) must be after window_start ({start})"),
                        None,
                    );
                }
            }
            let max_crashes = self.limited_int(
                &r.max_crashes,
                "max_crashes",
                3,
                0..=MAX_RANDOM_CRASHES.into(),
            );
            Some(RandomCrashes {
                mean_interval: mean_interval?,
                window_start: SimTime(window_start?.nanos()),
                window_end: SimTime(window_end?.nanos()),
                max_crashes,
            })
        }
    }

    /// Resolves `task = "op[n]"` to (operator index, subtask).
    fn task(
        &mut self,
        value: &Spanned<String>,
        ops: &[OpInfo],
        ids: &BTreeMap<String, OperatorId>,
    ) -> Option<(usize, u32)> {
        let text = value.get_ref();
        let parsed = text
            .strip_suffix(']')
            .and_then(|inner| inner.rsplit_once('['))
            .and_then(|(op, n)| Some((op, n.parse::<u32>().ok()?)))
            .filter(|(op, _)| !op.is_empty());
        let Some((op_name, subtask)) = parsed else {
            self.report(
                Some(value.span()),
                format!("task `{text}` is not an operator id followed by a subtask index"),
                Some("write e.g. task = \"count[0]\" (subtasks are numbered from 0)".to_string()),
            );
            return None;
        };
        let operator = self.resolve(op_name, value.span(), ops, ids)?;
        let parallelism = ops.get(operator).and_then(|op| op.parallelism)?;
        if subtask >= parallelism {
            self.report(
                Some(value.span()),
                format!("task `{text}` does not exist: operator `{op_name}` has parallelism {parallelism}"),
                Some(format!(
                    "subtasks of `{op_name}` are numbered 0 to {}",
                    parallelism.saturating_sub(1)
                )),
            );
            return None;
        }
        Some((operator, subtask))
    }

    fn swarm(&mut self, raw: &RawSwarm) -> SwarmSpec {
        SwarmSpec {
            enabled: raw.enabled.as_ref().is_some_and(|e| *e.get_ref()),
            latency_max: self.duration_range(&raw.latency_max, "latency_max", false),
            buffer_records: self.limited_range(
                &raw.buffer_records,
                "buffer_records",
                1..=MAX_BUFFER_RECORDS.into(),
            ),
            buffer_credits: self.int_range(&raw.buffer_credits, "buffer_credits", 1..=u32_max()),
            interval: self.duration_range(&raw.interval, "interval", true),
            timeout: self.duration_range(&raw.timeout, "timeout", true),
            cost_percent: self.int_range(&raw.cost_percent, "cost_percent", 0..=100_000),
            crash_mean_interval: self.duration_range(
                &raw.crash_mean_interval,
                "crash_mean_interval",
                true,
            ),
            max_crashes: self.limited_range(
                &raw.max_crashes,
                "max_crashes",
                0..=MAX_RANDOM_CRASHES.into(),
            ),
            crash_window_end: self.duration_range(&raw.crash_window_end, "crash_window_end", false),
            notification_loss_percent: self.int_range(
                &raw.notification_loss_percent,
                "notification_loss_percent",
                0..=100,
            ),
            storage_failure_percent: self.int_range(
                &raw.storage_failure_percent,
                "storage_failure_percent",
                0..=100,
            ),
            storage_slow_percent: self.int_range(
                &raw.storage_slow_percent,
                "storage_slow_percent",
                0..=100,
            ),
            coordinator_crashes: self.limited_range(
                &raw.coordinator_crashes,
                "coordinator_crashes",
                0..=MAX_RANDOM_CRASHES.into(),
            ),
            worker_crashes: self.limited_range(
                &raw.worker_crashes,
                "worker_crashes",
                0..=MAX_RANDOM_CRASHES.into(),
            ),
            latency_spike_extra: self.duration_range(
                &raw.latency_spike_extra,
                "latency_spike_extra",
                false,
            ),
            partition_duration: self.duration_range(
                &raw.partition_duration,
                "partition_duration",
                false,
            ),
        }
    }

    /// A `[min, max]` pair: two elements, in order.
    fn pair<'v, T: Clone>(
        &mut self,
        value: &'v Option<Spanned<Vec<T>>>,
        key: &str,
    ) -> Option<(&'v Spanned<Vec<T>>, T, T)> {
        let v = value.as_ref()?;
        match v.get_ref().as_slice() {
            [a, b] => Some((v, a.clone(), b.clone())),
            _ => {
                self.report(
                    Some(v.span()),
                    format!("{key} must be a range of two values, [min, max]"),
                    Some(format!("for example {key} = [1, 8]")),
                );
                None
            }
        }
    }

    /// Like [`Self::int_range`], for a knob whose upper end is one of the
    /// limits on values: a larger bound's error says so.
    fn limited_range(
        &mut self,
        value: &IntRange,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Option<(u32, u32)> {
        let out = self.int_range(value, key, range.clone());
        // The error, if any, names the first bound out of range.
        let over = value.as_ref().is_some_and(|v| {
            let bounds = v.get_ref();
            let first_out = bounds.iter().find(|n| !range.contains(n));
            bounds.len() == 2 && first_out.is_some_and(|n| n > range.end())
        });
        if over {
            if let Some(error) = self.errors.last_mut() {
                error.help = Some(LIMIT_HELP.to_string());
            }
        }
        out
    }

    fn int_range(
        &mut self,
        value: &IntRange,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Option<(u32, u32)> {
        let (v, a, b) = self.pair(value, key)?;
        for n in [a, b] {
            if !range.contains(&n) {
                self.report(
                    Some(v.span()),
                    format!(
                        "{key} bounds must lie in {}..={}, not {n}",
                        range.start(),
                        range.end()
                    ),
                    None,
                );
                return None;
            }
        }
        if a > b {
            self.report(
                Some(v.span()),
                format!("{key} range is empty: {a} > {b}"),
                Some("write [min, max]".to_string()),
            );
            return None;
        }
        Some((u32::try_from(a).ok()?, u32::try_from(b).ok()?))
    }

    fn duration_range(
        &mut self,
        value: &TextRange,
        key: &str,
        positive: bool,
    ) -> Option<(SimDuration, SimDuration)> {
        let (v, a, b) = self.pair(value, key)?;
        let mut out = Vec::with_capacity(2);
        for text in [a, b] {
            match parse_duration(&text) {
                Ok(d) if positive && d == SimDuration::ZERO => {
                    self.report(
                        Some(v.span()),
                        format!("{key} bounds must be greater than 0"),
                        None,
                    );
                    return None;
                }
                Ok(d) if d > MAX_DURATION => {
                    self.report(
                        Some(v.span()),
                        format!("{key} bounds must be at most {MAX_DURATION_TEXT}"),
                        Some(LIMIT_HELP.to_string()),
                    );
                    return None;
                }
                Ok(d) => out.push(d),
                Err(message) => {
                    self.report(Some(v.span()), format!("{key}: {message}"), None);
                    return None;
                }
            }
        }
        if out[0] > out[1] {
            self.report(
                Some(v.span()),
                format!("{key} range is empty: {} > {}", out[0], out[1]),
                Some("write [min, max]".to_string()),
            );
            return None;
        }
        Some((out[0], out[1]))
    }

    fn limits(&mut self, raw: RawLimits) -> Limits {
        Limits {
            max_events: self.int(&raw.max_events, "max_events", 50_000_000, 1..=i64::MAX),
            max_time: SimTime(
                self.positive_duration(&raw.max_time, "max_time", SimDuration::from_secs(600))
                    .nanos(),
            ),
        }
    }
}

/// The [`OperatorId`] of the operator at `index` in file order. (No file
/// holds 2^32 operators; should one, the id saturates rather than panics.)
fn dense_id(index: usize) -> OperatorId {
    OperatorId(u32::try_from(index).unwrap_or(u32::MAX))
}

/// `u32::MAX` as an `i64` bound.
fn u32_max() -> i64 {
    i64::from(u32::MAX)
}

/// An operator kind with default parameters, by name; the parameters are
/// filled in by [`Validator::configure_kind`].
fn kind_from_name(name: &str) -> Option<OperatorKind> {
    Some(match name {
        "source" => OperatorKind::Source(SourceSpec {
            partitions: 1,
            records_per_partition: 1000,
            keys: 100,
            key_distribution: KeyDistribution::Uniform,
            value_max: 1,
        }),
        "map" => OperatorKind::Map { mul: 1, add: 0 },
        "filter" => OperatorKind::Filter {
            modulus: 2,
            keep_below: 1,
        },
        "flat-map" => OperatorKind::FlatMap { copies: 2 },
        "keyed-count" => OperatorKind::KeyedCount,
        "keyed-sum" => OperatorKind::KeyedSum,
        "sink-2pc" => OperatorKind::Sink2pc,
        "count-window" => OperatorKind::CountWindow { size: 10 },
        "sink-at-least-once" => OperatorKind::SinkAtLeastOnce { batch: 1 },
        _ => return None,
    })
}

/// Shortest path `start ..= goal` following `successors` (BFS, so the
/// result is deterministic for a given edge order).
fn path(successors: &[Vec<usize>], start: usize, goal: usize) -> Option<Vec<usize>> {
    let mut parent: Vec<Option<usize>> = vec![None; successors.len()];
    let mut visited = vec![false; successors.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    *visited.get_mut(start)? = true;
    while let Some(node) = queue.pop_front() {
        if node == goal {
            let mut path = vec![goal];
            let mut at = goal;
            while let Some(p) = parent.get(at).copied().flatten() {
                path.push(p);
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        for &next in successors.get(node).map_or(&[][..], Vec::as_slice) {
            if let Some(seen) = visited.get_mut(next) {
                if !*seen {
                    *seen = true;
                    if let Some(slot) = parent.get_mut(next) {
                        *slot = Some(node);
                    }
                    queue.push_back(next);
                }
            }
        }
    }
    None
}

/// The candidate closest to `word` by edit distance, if within 2 (and not
/// equal). Ties go to the earliest candidate.
fn closest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(word, candidate);
        if distance == 0 || distance > 2 {
            continue;
        }
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
version = 1
name = "t"

[[operators]]
id = "src"
kind = "source"
parallelism = 2

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 2

[[edges]]
from = "src"
to = "sink"
partitioning = "forward"
"#;

    fn errors(text: &str) -> Vec<ScenarioError> {
        match parse_str(text, "t.toml") {
            Ok(_) => panic!("expected errors for:\n{text}"),
            Err(ScenarioErrors(errors)) => errors,
        }
    }

    #[test]
    fn minimal_scenario_parses_with_defaults() {
        let scenario = parse_str(MINIMAL, "t.toml").expect("valid");
        assert_eq!(scenario.operators.len(), 2);
        assert_eq!(scenario.max_parallelism, 128);
        assert_eq!(scenario.operators[0].cost, SimDuration::from_micros(10));
        assert_eq!(scenario.operators[1].cost, SimDuration::from_micros(1));
        assert_eq!(
            scenario.checkpoint.interval,
            Some(SimDuration::from_secs(1))
        );
        assert_eq!(scenario.checkpoint.first_delay, SimDuration::from_secs(1));
        match &scenario.operators[0].kind {
            OperatorKind::Source(s) => assert_eq!(s.partitions, 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn positions_count_characters_and_clamp() {
        let source = Source {
            file: "f",
            text: "ab\nµµx\n",
        };
        assert_eq!(source.position(0), (1, 1));
        assert_eq!(source.position(3), (2, 1));
        // "µ" is two bytes: byte 7 is the `x`, the third character.
        assert_eq!(source.position(7), (2, 3));
        // Inside a character and past the end: clamped, no panic.
        assert_eq!(source.position(4), (2, 1));
        assert_eq!(source.position(1000), (3, 1));
    }

    #[test]
    fn every_listed_kind_is_parsed() {
        for (name, _) in OPERATOR_KINDS {
            let kind = kind_from_name(name).expect(name);
            assert_eq!(kind.name(), *name);
        }
    }

    #[test]
    fn every_listed_algorithm_is_parsed() {
        for a in Algorithm::all() {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
    }

    #[test]
    fn dotted_key_tables_parse() {
        // toml::Spanned fails on tables made only of dotted keys; Located must not.
        let text = format!(
            "{MINIMAL}\n[faults]\nrandom.mean_interval = \"2s\"\nrandom.window_end = \"4s\"\n"
        );
        let scenario = parse_str(&text, "t.toml").expect("valid");
        let random = scenario.faults.random.expect("random");
        assert_eq!(random.window_end, SimTime(4_000_000_000));
        assert_eq!(random.max_crashes, 3);

        // A located table missing a required key gets the table's position.
        let text = format!("{MINIMAL}\n[faults.random]\nwindow_end = \"4s\"\n");
        let errors = errors(&text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].line, Some(20));
        assert!(errors[0].message.contains("`mean_interval`"));
    }

    #[test]
    fn unknown_key_suggests_closest() {
        let text = MINIMAL.replace(
            "parallelism = 2\n\n[[operators]]",
            "paralelism = 2\n\n[[operators]]",
        );
        let errors = errors(&text);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.contains("unknown field `paralelism`"));
        assert_eq!(
            errors[0].help.as_deref(),
            Some("did you mean `parallelism`?")
        );
    }

    #[test]
    fn other_version_is_the_only_error() {
        let text = MINIMAL.replace("version = 1", "version = 2\nnew_key = 3");
        let errors = errors(&text);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].message,
            "unsupported scenario version 2; this ckptsim reads version 1"
        );
        assert_eq!((errors[0].line, errors[0].column), (Some(2), Some(11)));
    }

    #[test]
    fn cycle_message_starts_at_first_operator() {
        let text = r#"
version = 1
name = "c"
[[operators]]
id = "s"
kind = "source"
parallelism = 1
[[operators]]
id = "a"
kind = "map"
parallelism = 1
[[operators]]
id = "b"
kind = "map"
parallelism = 1
[[edges]]
from = "b"
to = "a"
partitioning = "forward"
[[edges]]
from = "s"
to = "a"
partitioning = "forward"
[[edges]]
from = "a"
to = "b"
partitioning = "forward"
"#;
        let errors = errors(text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].message, "the job graph has a cycle: a -> b -> a");
        assert_eq!(errors[0].line, Some(24));
    }

    #[test]
    fn graph_rules_are_each_reported() {
        let text = r#"version = 1
name = "g"
max_parallelism = 4
[[operators]]
id = "src"
kind = "source"
parallelism = 2
[[operators]]
id = "count"
kind = "keyed-count"
parallelism = 8
[[operators]]
id = "out"
kind = "sink-at-least-once"
parallelism = 2
[[operators]]
id = "lonely"
kind = "map"
parallelism = 1
[[edges]]
from = "src"
to = "count"
partitioning = "rebalance"
[[edges]]
from = "count"
to = "out"
partitioning = "hash"
[[edges]]
from = "count"
to = "out"
partitioning = "hash"
[[edges]]
from = "out"
to = "src"
partitioning = "forward"
"#;
        let found: Vec<(Option<usize>, String)> = errors(text)
            .into_iter()
            .map(|e| (e.line, e.message))
            .collect();
        let expected = [
            (
                Some(11),
                "parallelism 8 of keyed operator `count` exceeds max_parallelism 4",
            ),
            (Some(17), "operator `lonely` has no inputs"),
            (
                Some(23),
                "keyed operator `count` reads a `rebalance` edge from `src`",
            ),
            (Some(28), "duplicate edge count -> out"),
            (
                Some(32),
                "the job graph has a cycle: src -> count -> out -> src",
            ),
            (Some(33), "sink `out` cannot have outputs"),
            (Some(34), "source `src` cannot have inputs"),
        ];
        let expected: Vec<(Option<usize>, String)> = expected
            .iter()
            .map(|(line, message)| (*line, message.to_string()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn no_source_and_missing_keys() {
        let text =
            "version = 1\n[[operators]]\nid = \"m\"\nkind = \"map\"\n[[edges]]\nfrom = \"m\"\n";
        let found: Vec<(Option<usize>, Option<usize>, String)> = errors(text)
            .into_iter()
            .map(|e| (e.line, e.column, e.message))
            .collect();
        let expected = [
            (1, 1, "missing required key `name`"),
            (1, 1, "the job has no source operator"),
            (2, 1, "missing required key `parallelism` in [[operators]]"),
            (5, 1, "missing required key `to` in [[edges]]"),
            (5, 1, "missing required key `partitioning` in [[edges]]"),
        ];
        let expected: Vec<(Option<usize>, Option<usize>, String)> = expected
            .iter()
            .map(|(l, c, m)| (Some(*l), Some(*c), m.to_string()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn display_formats() {
        let e = ScenarioError {
            file: "f.toml".into(),
            line: Some(3),
            column: Some(7),
            message: "bad".into(),
            help: Some("fix".into()),
        };
        let plain = ScenarioError {
            line: None,
            column: None,
            help: None,
            ..e.clone()
        };
        assert_eq!(e.to_string(), "f.toml:3:7: error: bad\n  help: fix");
        assert_eq!(plain.to_string(), "f.toml: error: bad");
        assert_eq!(
            ScenarioErrors(vec![e, plain]).to_string(),
            "f.toml:3:7: error: bad\n  help: fix\nf.toml: error: bad"
        );
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("count", "cuont"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("µs", "us"), 1);
        assert_eq!(closest("cont", ["source", "count"]), Some("count"));
        assert_eq!(closest("zzzzzz", ["source", "count"]), None);
    }

    #[test]
    fn missing_file_is_an_unpositioned_error() {
        let errors = load(Path::new("/nonexistent/ckptsim/scenario.toml")).expect_err("missing");
        assert_eq!(errors.0.len(), 1);
        assert_eq!(errors.0[0].line, None);
        assert!(errors.0[0].message.starts_with("cannot read scenario file"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
            let _ = parse_str(&text, "p.toml");
        }

        #[test]
        fn never_panics_on_mangled_scenarios(
            cut in 0usize..400,
            len in 0usize..40,
            insert in "[\\[\\]=\"a-z0-9_.\n -]{0,12}",
        ) {
            let mut text: Vec<char> = MINIMAL.chars().collect();
            let start = cut.min(text.len());
            let end = (start + len).min(text.len());
            text.splice(start..end, insert.chars());
            let text: String = text.into_iter().collect();
            let _ = parse_str(&text, "p.toml");
        }
    }
}
