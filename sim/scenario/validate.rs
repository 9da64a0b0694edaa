//! Validation: a [`File`] becomes a [`Scenario`], or every problem with it
//! is reported. Problems name a key path (`operators[2].cost`,
//! `faults.crashes[0].task`, `""` for the file as a whole), which the span
//! index turns into file:line:col when there is a file. The same function
//! checks a scenario built in memory (`File::from(&scenario)`): shrink
//! candidates, generated scenarios, `--vary` and `--parallelism`.
//!
//! What is checked: required keys, ranges and the limits on values
//! (docs/scenarios.md), operator ids and references to them, keys that do
//! not belong to an operator's kind or to the restart strategy, the job
//! graph rules, and everything that needs a `[cluster]`. A value with a
//! problem is replaced by its default for the checks that depend on it.

use std::ops::RangeInclusive;
use std::sync::Arc;

use super::schema::{self, name_of, Bytes, Duration, File, Kind, Operator};
use super::{
    ClusterSpec, EdgeSpec, NetworkSpec, OperatorId, OperatorKind, OperatorSpec, SavepointSpec,
    ScenarioData, SwarmSpec, FORMAT_VERSION, MAX_BUFFER_RECORDS, MAX_BYTES, MAX_COPIES,
    MAX_DURATION, MAX_DURATION_TEXT, MAX_PARALLELISM, MAX_RANDOM_CRASHES,
};
use crate::engine::{bytes_text, parse_duration, SimDuration, SimTime};

/// One problem, at a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
    pub help: Option<String>,
}

/// Upper bound on the channels of one job (each costs memory up front).
pub(super) const MAX_CHANNELS: u64 = 1_000_000;
/// Upper bound on the records of all sources (generated in memory up front).
pub const MAX_RECORDS: u64 = 200_000_000;
/// The help for a value above one of the limits on values.
pub const LIMIT_HELP: &str =
    "the largest value ckptsim supports; see \"Limits on values\" in docs/scenarios.md";
const U32: i64 = u32::MAX as i64;
const I64: i64 = i64::MAX;

/// The most `[replay] choices` a file may list.
const MAX_CHOICES: usize = 1_000_000;

/// The range of an integer key, by its name (a `worker` index has the
/// cluster's), and whether its upper bound is one of the limits on values.
fn range_of(key: &str) -> (RangeInclusive<i64>, bool) {
    let limit = |low, high: u32| (low..=i64::from(high), true);
    match key {
        "max_parallelism" | "parallelism" => limit(1, MAX_PARALLELISM),
        "buffer_records" | "batch" => limit(1, MAX_BUFFER_RECORDS),
        "copies" => limit(1, MAX_COPIES),
        "max_crashes" | "coordinator_crashes" | "worker_crashes" | "storage_crashes" => {
            limit(0, MAX_RANDOM_CRASHES)
        }
        "workers" | "slots_per_worker" => limit(1, 100_000),
        "factor" => limit(1, 1_000_000),
        "cost_percent" => (0..=100_000, false),
        "loss_percent" | "failure_percent" | "slow_percent" | "hot_key_percent" => (0..=100, false),
        "notification_loss_percent"
        | "storage_failure_percent"
        | "storage_slow_percent"
        | "operator_event_loss_percent" => (0..=100, false),
        "tolerable_failures" | "max_restarts" | "floating_buffers" | "initial_splits" => {
            (0..=U32, false)
        }
        "keep_below" | "seed" => (0..=I64, false),
        "records_per_second" => (0..=1_000_000_000, false),
        "source_rate" => (1..=1_000_000_000, false),
        "watermark_bound_percent" => (0..=1_000, false),
        "records_per_partition" | "keys" | "value_max" | "modulus" | "nodes" => (1..=I64, false),
        "degree" => (1..=8, false),
        "max_runs" => (1..=64, false),
        "storage_bytes_per_sec" | "max_events" => (1..=I64, false),
        // buffer_credits, output_buffers, partitions, size, max_concurrent,
        // retained, max_failures
        _ => (1..=U32, false),
    }
}

/// Validates `file`. `line_of` gives the line a key path is written on,
/// when there is a file: for help texts that point elsewhere, and to tell a
/// written key from a default.
pub fn validate(
    file: &File,
    line_of: &dyn Fn(&str) -> Option<usize>,
) -> Result<Scenario, Vec<Problem>> {
    let mut v = Validator {
        problems: Vec::new(),
        line_of,
        ops: Vec::new(),
        by_id: std::collections::BTreeMap::new(),
        at: String::new(),
    };
    let scenario = v.scenario(file);
    if v.problems.is_empty() {
        v.spike_edges(&scenario);
    }
    match v.problems.is_empty() {
        true => Ok(Scenario(Arc::new(scenario))),
        false => Err(v.problems),
    }
}

/// A valid scenario: a [`ScenarioData`] that [`validate`] accepted, and
/// the only form the simulator runs.
///
/// Its one field is private to this module, so [`validate`] is the only
/// way to make one, and it derefs to its data but never mutably, so no one
/// can change it once it is valid. An edit goes through a copy of the data
/// and back through validation ([`super::check`]):
///
/// ```
/// # use ckptsim::scenario::{check, parse_str, ScenarioData};
/// # let text = "version = 1\nname = \"x\"\n[[operators]]\nid = \"src\"\nkind = \"source\"\nparallelism = 1\n";
/// let scenario = parse_str(text, "x.toml").unwrap();
/// let mut edit = ScenarioData::clone(&scenario);
/// edit.network.buffer_credits = 0; // credits must be at least 1
/// assert!(check(&edit, "edited").is_err());
/// edit.network.buffer_credits = 4;
/// assert_eq!(check(&edit, "edited").unwrap().network.buffer_credits, 4);
/// ```
///
/// Changing a valid scenario in place does not compile:
///
/// ```compile_fail,E0594
/// fn edit(scenario: &mut ckptsim::scenario::Scenario) {
///     scenario.network.buffer_credits = 0;
/// }
/// ```
///
/// and nor does making one from data without validating it:
///
/// ```compile_fail,E0423
/// fn forge(data: ckptsim::scenario::ScenarioData) -> ckptsim::scenario::Scenario {
///     ckptsim::scenario::Scenario(std::sync::Arc::new(data))
/// }
/// ```
///
/// (`Arc`: copies of a scenario, one per seed of a sweep, share it.)
#[derive(Clone)]
pub struct Scenario(Arc<ScenarioData>);

impl std::ops::Deref for Scenario {
    type Target = ScenarioData;
    fn deref(&self) -> &ScenarioData {
        &self.0
    }
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl serde::Serialize for Scenario {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

pub(super) fn unsupported_version(n: i64) -> String {
    format!("unsupported scenario version {n}; this ckptsim reads version {FORMAT_VERSION}")
}

/// The key a path ends in, without an index: `crashes` for
/// `faults.coordinator.crashes[1]`.
pub(super) fn key_of(path: &str) -> &str {
    let last = path.rsplit('.').next().unwrap_or(path);
    last.split('[').next().unwrap_or(last)
}

/// `table.key`; `key` alone at the top, `table` alone for an empty key.
pub(super) fn join(table: &str, key: &str) -> String {
    match (table, key) {
        ("", _) => key.to_string(),
        (_, "") => table.to_string(),
        _ => format!("{table}.{key}"),
    }
}

pub(super) fn help(text: &str) -> Option<String> {
    Some(text.to_string())
}

pub(super) fn time(d: SimDuration) -> SimTime {
    SimTime(d.nanos())
}

/// The [`OperatorId`] of the operator at `index` in file order.
pub(super) fn dense_id(index: usize) -> OperatorId {
    OperatorId(u32::try_from(index).unwrap_or(u32::MAX))
}

/// What an operator is known to be, for the graph and fault checks.
pub(super) struct Op<'f> {
    pub(super) id: &'f str,
    /// Edges and tasks can name it: it has an id and is the first with it.
    pub(super) referable: bool,
    /// `None` when missing or unknown.
    pub(super) kind: Option<OperatorKind>,
    /// `None` when missing or invalid.
    pub(super) parallelism: Option<u32>,
}

pub(super) struct Validator<'a, 'f> {
    problems: Vec<Problem>,
    pub(super) line_of: &'a dyn Fn(&str) -> Option<usize>,
    pub(super) ops: Vec<Op<'f>>,
    /// The index in `ops` of each referable operator, by id (a lookup per
    /// edge end that stays logarithmic in jobs of many operators).
    pub(super) by_id: std::collections::BTreeMap<&'f str, usize>,
    /// The table being checked: its keys are reported as `at.key`.
    pub(super) at: String,
}

impl<'f> Validator<'_, 'f> {
    /// A problem at `key` of the current table (`""`: the table itself).
    pub(super) fn report(&mut self, key: &str, message: impl Into<String>, help: Option<String>) {
        let (path, message) = (join(&self.at, key), message.into());
        self.problems.push(Problem {
            path,
            message,
            help,
        });
    }

    pub(super) fn written(&self, key: &str) -> bool {
        (self.line_of)(&join(&self.at, key)).is_some()
    }

    pub(super) fn required<'v, T>(&mut self, key: &str, value: &'v Option<T>) -> Option<&'v T> {
        if value.is_none() {
            let t = &self.at;
            let message = match t.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
                _ if t.is_empty() => format!("missing required key `{key}`"),
                Some((array, _)) => format!("missing required key `{key}` in [[{array}]]"),
                None => format!("missing required key `{key}` in [{t}]"),
            };
            self.report(key, message, None);
        }
        value.as_ref()
    }

    /// `n` as a `T` if it lies in `range` (by default [`range_of`] the
    /// key); otherwise a problem, which says so when `n` is above one of the
    /// limits on values.
    pub(super) fn checked<T: TryFrom<i64>>(
        &mut self,
        key: &str,
        n: i64,
        range: Option<RangeInclusive<i64>>,
    ) -> Option<T> {
        let (default_range, limited) = range_of(key);
        let range = range.unwrap_or(default_range);
        if n < *range.start() {
            self.report(
                key,
                format!("{key} must be at least {}", range.start()),
                None,
            );
        } else if n > *range.end() {
            let help = limited.then(|| LIMIT_HELP.to_string());
            self.report(key, format!("{key} must be at most {}", range.end()), help);
        } else {
            return T::try_from(n).ok();
        }
        None
    }

    /// An integer, `default` when absent or after a problem (every
    /// default lies in its range, and the range in `T`'s).
    pub(super) fn int<T: TryFrom<i64> + Default>(
        &mut self,
        key: &str,
        n: impl Into<Option<i64>>,
        default: i64,
    ) -> T {
        let n = n.into().and_then(|n| self.checked(key, n, None));
        n.or(T::try_from(default).ok()).unwrap_or_default()
    }

    /// The table `key` of the current table, if written, through `f`, with
    /// the validator at it.
    pub(super) fn nested<T, U>(
        &mut self,
        key: &str,
        table: Option<&T>,
        f: impl FnOnce(&mut Self, &T) -> U,
    ) -> Option<U> {
        let inner = join(&self.at, key);
        let outer = std::mem::replace(&mut self.at, inner);
        let result = table.map(|t| f(self, t));
        self.at = outer;
        result
    }

    /// Each table of the array `path` through `f`, with the validator at
    /// it; what `f` gives.
    pub(super) fn each<'t, T, U>(
        &mut self,
        path: &str,
        tables: &'t [T],
        mut f: impl FnMut(&mut Self, &'t T) -> Option<U>,
    ) -> Vec<U> {
        let mut each = |(i, t)| {
            self.at = format!("{path}[{i}]");
            f(self, t)
        };
        tables.iter().enumerate().filter_map(&mut each).collect()
    }

    /// Every duration and time is at most [`MAX_DURATION`].
    pub(super) fn bounded(&mut self, key: &str, d: SimDuration) -> Option<SimDuration> {
        if d > MAX_DURATION {
            let message = format!("{} must be at most {MAX_DURATION_TEXT}", key_of(key));
            self.report(key, message, help(LIMIT_HELP));
            return None;
        }
        Some(d)
    }

    /// A duration, `default` when absent or after a problem.
    pub(super) fn dur(
        &mut self,
        key: &str,
        d: impl Into<Option<Duration>>,
        default: Duration,
    ) -> SimDuration {
        let d = d.into().unwrap_or(default).0;
        self.bounded(key, d).unwrap_or(default.0)
    }

    /// A duration greater than zero, `default` after a problem.
    pub(super) fn positive(&mut self, key: &str, d: Duration, default: Duration) -> SimDuration {
        if d.0 == SimDuration::ZERO {
            let message = format!("{} must be greater than 0", key_of(key));
            self.report(key, message, None);
            return default.0;
        }
        self.dur(key, d, default)
    }

    /// A size in bytes, at least 1 and at most `max`; `default` when
    /// absent, `None` after a problem.
    pub(super) fn bytes(
        &mut self,
        key: &str,
        b: Option<Bytes>,
        default: u64,
        max: u64,
    ) -> Option<u64> {
        let n = b.map_or(default, |b| b.0);
        if n == 0 {
            self.report(
                key,
                format!("{} must be at least 1 byte", key_of(key)),
                None,
            );
            return None;
        }
        if n > max {
            let message = format!("{} must be at most {}", key_of(key), bytes_text(max));
            self.report(key, message, help(LIMIT_HELP));
            return None;
        }
        Some(n)
    }

    pub(super) fn required_dur(&mut self, key: &str, d: &Option<Duration>) -> Option<SimDuration> {
        let d = self.required(key, d)?.0;
        self.bounded(key, d)
    }

    /// A duration written as text inside an array.
    pub(super) fn text_dur(&mut self, key: &str, text: &str) -> Option<SimDuration> {
        match parse_duration(text) {
            Ok(d) => self.bounded(key, d),
            Err(message) => {
                self.report(key, message, None);
                None
            }
        }
    }

    fn scenario(&mut self, f: &'f File) -> ScenarioData {
        match f.version {
            None => {
                let help = format!("add `version = {FORMAT_VERSION}` at the top of the file");
                self.report("", "missing required key `version`", Some(help));
            }
            Some(n) if n != i64::from(FORMAT_VERSION) => {
                self.report("version", unsupported_version(n), None)
            }
            Some(_) => {}
        }
        if let Some(name) = self.required("name", &f.name) {
            if name.trim().is_empty() {
                self.report("name", "name must not be empty", None);
            }
        }
        let max_parallelism = self.checked("max_parallelism", f.max_parallelism, None);
        let network = self.network(f);
        let operators = self.operators(f, max_parallelism);
        let edges = self.edges(f);
        let checkpoint = self.checkpoint(f);
        let cluster = f.cluster.as_ref().map(|c| self.cluster(c, &operators));
        let faults = self.faults(f, cluster.as_ref().map(|c| c.workers));
        self.at = "limits".into();
        let limits = f.limits.check(self);
        let replay = self.replay(f);
        let swarm = f.swarm.as_ref().map(|s| self.swarm(s));
        let mut savepoints = self.each("savepoints", &f.savepoints, |v, sp| {
            let spec = sp.check(v);
            let at = v.required_dur("at", &sp.at);
            if sp.drain && !sp.stop {
                let help = help("add `stop = true` to this savepoint, or remove `drain`");
                v.report("drain", "drain applies only to stop-with-savepoint", help);
            }
            let at = time(at?);
            Some(SavepointSpec { at, ..spec })
        });
        savepoints.sort_by_key(|s| s.at);
        self.at.clear();
        self.local_rules(f, &operators, checkpoint.algorithm);
        self.at.clear();
        let cancel_at = f
            .cancel_at
            .map(|d| time(self.dur("cancel_at", d, Duration::default())));
        ScenarioData {
            name: f.name.clone().unwrap_or_default(),
            description: f.description.clone(),
            max_parallelism: max_parallelism.unwrap_or(128),
            operator_chaining: f.operator_chaining,
            operators,
            edges,
            network,
            checkpoint,
            faults,
            limits,
            expect: f.expect.clone(),
            replay,
            swarm,
            savepoints,
            cluster,
            cancel_at,
        }
    }

    /// A latency spike on an edge needs the edge, as a channel: a chained
    /// edge has none. (Run on a valid scenario, whose spikes are the file's.)
    fn spike_edges(&mut self, scenario: &ScenarioData) {
        let chained = scenario.chained_edges();
        // An edge's own network settings need a channel.
        for (i, e) in scenario
            .edges
            .iter()
            .enumerate()
            .filter(|(i, _)| chained[*i])
        {
            let set = [
                ("latency_min", e.latency_min.is_some()),
                ("latency_max", e.latency_max.is_some()),
                ("buffer_credits", e.buffer_credits.is_some()),
                ("buffer_size", e.buffer_size.is_some()),
            ];
            if let Some((key, _)) = set.iter().find(|k| k.1) {
                self.at = format!("edges[{i}]");
                let (x, y) = (&scenario.op(e.from).id, &scenario.op(e.to).id);
                self.report(
                    key,
                    format!("edge {x} -> {y} is chained: {x} and {y} run in one task, with no channel for `{key}`"),
                    help("add chain = false to this edge, or remove the key"),
                );
            }
        }
        for (i, spike) in scenario.faults.latency_spikes.iter().enumerate() {
            let Some((a, b)) = spike.edge else { continue };
            self.at = format!("faults.latency_spikes[{i}]");
            let (x, y) = (&scenario.op(a).id, &scenario.op(b).id);
            match scenario.edges.iter().position(|e| (e.from, e.to) == (a, b)) {
                None => self.report("edge", format!("the job has no edge {x} -> {y}"), None),
                Some(e) if chained[e] => self.report(
                    "edge",
                    format!("edge {x} -> {y} is chained: {x} and {y} run in one task, with no channel to delay"),
                    help("add chain = false to that [[edges]] table, or put the spike on another edge"),
                ),
                Some(_) => {}
            }
        }
    }

    fn network(&mut self, f: &File) -> NetworkSpec {
        let n = &f.network;
        self.at = "network".into();
        let mut spec = n.check(self);
        let (latency_min, latency_max) = (spec.latency_min, spec.latency_max);
        if latency_max < latency_min {
            // At latency_max, unless only latency_min is written.
            let max = self.written("latency_max") || !self.written("latency_min");
            let key = if max { "latency_max" } else { "latency_min" };
            let message =
                format!("latency_max ({latency_max}) must be at least latency_min ({latency_min})");
            self.report(key, message, None);
        }
        spec.buffer_size = n
            .buffer_size
            .and_then(|b| self.bytes("buffer_size", Some(b), 0, MAX_BYTES));
        // A byte-sized buffer holds what fits: no record limit unless one is
        // written.
        let records = match n.buffer_size {
            Some(_) => MAX_BUFFER_RECORDS.into(),
            None => 16,
        };
        spec.buffer_records = self.int("buffer_records", n.buffer_records, records);
        spec
    }

    fn operators(&mut self, f: &'f File, max_parallelism: Option<u32>) -> Vec<OperatorSpec> {
        self.at.clear();
        if f.operators.is_empty() {
            let help = help("add an [[operators]] table with kind = \"source\"");
            self.report("", "the job has no operators", help);
        }
        self.each("operators", &f.operators, |v, op| {
            let id = v.required("id", &op.id).map_or("", String::as_str);
            let mut referable = false;
            if op.id.is_some() {
                let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
                if id.is_empty() {
                    v.report("id", "operator id must not be empty", None);
                } else if !id.chars().all(allowed) {
                    let message = format!(
                        "operator id `{id}` may only contain ASCII letters, digits, `_` and `-`"
                    );
                    v.report("id", message, None);
                }
                match v.by_id.get(id).copied() {
                    Some(first) => {
                        let help = (v.line_of)(&format!("operators[{first}].id")).map(|line| {
                            format!("operator ids must be unique; `{id}` is first defined on line {line}")
                        });
                        v.report("id", format!("duplicate operator id `{id}`"), help);
                    }
                    None => referable = true,
                }
            }
            let kind = v.required("kind", &op.kind).copied();
            let parallelism = match v.required("parallelism", &op.parallelism) {
                Some(&p) => v.checked("parallelism", p, None),
                None => None,
            };
            let kind = kind.map(|kind| v.kind(op, kind, parallelism));
            let keyed = kind.as_ref().is_some_and(OperatorKind::is_keyed);
            if let (true, Some(p), Some(max)) = (keyed, parallelism, max_parallelism) {
                if p > max {
                    v.report(
                        "parallelism",
                        format!("parallelism {p} of keyed operator `{id}` exceeds max_parallelism {max}"),
                        help("keyed state is split into max_parallelism key groups: raise max_parallelism or lower the parallelism"),
                    );
                }
            }
            let cost = match kind {
                Some(OperatorKind::Source(_)) => schema::SOURCE_COST,
                _ => schema::COST,
            };
            let spec = OperatorSpec {
                id: id.to_string(),
                kind: kind.clone().unwrap_or(OperatorKind::KeyedCount),
                parallelism: parallelism.unwrap_or(1),
                cost: v.dur("cost", op.cost, cost),
                cost_jitter: v.dur("cost_jitter", op.cost_jitter, Duration::default()),
                chaining: op.chaining,
            };
            let op = Op {
                id,
                referable,
                kind,
                parallelism,
            };
            if referable {
                v.by_id.insert(id, v.ops.len());
            }
            v.ops.push(op);
            Some(spec)
        })
    }

    /// `[replay]`: the seed, and mutants by their registered names.
    fn replay(&mut self, f: &File) -> super::ReplaySpec {
        self.at = "replay".into();
        let mut spec = f.replay.check(self);
        for (i, name) in f.replay.mutants.iter().enumerate() {
            if crate::mutant::Mutant::from_name(name).is_none() {
                let known = format!("known mutants: {}", crate::mutant::Mutant::names());
                self.report(
                    &format!("mutants[{i}]"),
                    format!("unknown mutant `{name}`"),
                    Some(known),
                );
            }
        }
        spec.mutants = f.replay.mutants.clone();
        if f.replay.choices.len() > MAX_CHOICES {
            let message = format!(
                "choices lists {} choices; at most {MAX_CHOICES}",
                f.replay.choices.len()
            );
            self.report("choices", message, None);
        }
        for (i, text) in f.replay.crash_points.iter().enumerate() {
            let key = format!("crash_points[{i}]");
            if let Some(task) = self.task_at(&key, &Some(text.clone())) {
                spec.crash_points.push(task);
            }
        }
        spec.choices = f
            .replay
            .choices
            .iter()
            .enumerate()
            .filter_map(|(i, &n)| self.checked::<u32>(&format!("choices[{i}]"), n, Some(0..=255)))
            .collect();
        spec
    }

    /// The operator's kind with its keys: those of another kind are
    /// mistakes, the others checked, absent ones at their defaults.
    fn kind(&mut self, op: &Operator, kind: Kind, parallelism: Option<u32>) -> OperatorKind {
        for (key, owner) in op.kind_keys().into_iter().filter(|k| k.1 != kind) {
            let (kind, owner) = (name_of(&kind), name_of(&owner));
            let message = format!("key `{key}` does not apply to an operator of kind `{kind}`");
            let help = format!("`{key}` only applies to operators of kind `{owner}`; remove it");
            self.report(key, message, Some(help));
        }
        if op.params.is_some() && !matches!(kind, Kind::Custom(_)) {
            let message = format!(
                "key `params` does not apply to an operator of kind `{}`",
                kind.name()
            );
            let help = "`params` holds the parameters of a registered operator kind; remove it";
            self.report("params", message, Some(help.to_string()));
        }
        op.check_kind(self, kind, parallelism)
    }

    /// No problem was reported at any of `keys` of the current table.
    pub(super) fn clean(&self, keys: &[&str]) -> bool {
        let paths: Vec<String> = keys.iter().map(|k| join(&self.at, k)).collect();
        !self.problems.iter().any(|p| paths.contains(&p.path))
    }

    /// An operator by name; an unknown one is reported at `key` with the
    /// known ids (in file order) and the closest match.
    pub(super) fn resolve(&mut self, name: &str, key: &str) -> Option<usize> {
        if let Some(&i) = self.by_id.get(name) {
            return Some(i);
        }
        let ops = self.ops.iter().filter(|op| op.referable);
        let defined: Vec<&'f str> = ops.map(|op| op.id).collect();
        let help = match defined.is_empty() {
            true => "no operators are defined".to_string(),
            false => super::spans::known(name, &defined, "operators"),
        };
        self.report(key, format!("unknown operator `{name}`"), Some(help));
        None
    }

    fn edges(&mut self, f: &File) -> Vec<EdgeSpec> {
        let mut specs = Vec::new();
        let mut resolved = Vec::new();
        let mut all_resolved = true;
        for (i, e) in f.edges.iter().enumerate() {
            self.at = format!("edges[{i}]");
            let mut end = |key: &str, name: &Option<String>| {
                let name = self.required(key, name)?;
                self.resolve(name, key)
            };
            let (from, to) = (end("from", &e.from), end("to", &e.to));
            if e.partitioning.is_none() {
                let message = "missing required key `partitioning` in [[edges]]";
                let help = help("one of: forward, hash, rebalance, broadcast");
                self.report("partitioning", message, help);
            }
            let (Some(from), Some(to)) = (from, to) else {
                all_resolved = false;
                continue;
            };
            let latency_min = e.latency_min.and_then(|d| self.bounded("latency_min", d.0));
            let latency_max = e.latency_max.and_then(|d| self.bounded("latency_max", d.0));
            if let (Some(min), Some(max)) = (latency_min, latency_max) {
                if max < min {
                    let message = format!("latency_max {max} is below latency_min {min}");
                    self.report("latency_max", message, None);
                }
            }
            let buffer_credits = e
                .buffer_credits
                .and_then(|n| self.checked::<u32>("buffer_credits", n, None));
            let buffer_size = e
                .buffer_size
                .and_then(|b| self.bytes("buffer_size", Some(b), 0, MAX_BYTES));
            let side_output_late = self.side_output(e, from);
            if let Some(partitioning) = e.partitioning {
                let (from, to) = (dense_id(from), dense_id(to));
                specs.push(EdgeSpec {
                    from,
                    to,
                    partitioning,
                    chain: e.chain,
                    feedback: e.feedback,
                    side_output_late,
                    latency_min,
                    latency_max,
                    buffer_credits,
                    buffer_size,
                });
            }
            resolved.push((i, from, to, e.partitioning, e.feedback));
        }
        self.graph(&resolved, all_resolved);
        specs
    }

    /// An edge's `side_output`: empty, or `"late"` from an event-time
    /// window.
    fn side_output(&mut self, e: &schema::Edge, from: usize) -> bool {
        match e.side_output.as_str() {
            "" => false,
            "late"
                if !matches!(
                    self.ops[from].kind,
                    Some(OperatorKind::EventTimeWindow { .. })
                ) =>
            {
                let message = format!(
                    "side output \"late\" from `{}`, which is not an event-time-window",
                    self.ops[from].id
                );
                self.report(
                    "side_output",
                    message,
                    help("late records come from an event-time-window"),
                );
                false
            }
            "late" if e.feedback => {
                let message = "a feedback edge cannot be a side output";
                self.report(
                    "side_output",
                    message,
                    help("remove side_output or feedback"),
                );
                false
            }
            "late" => true,
            other => {
                let message = format!("unknown side output `{other}`");
                self.report(
                    "side_output",
                    message,
                    help("the one side output is \"late\""),
                );
                false
            }
        }
    }

    /// `[cluster]`: enough slots for the highest parallelism.
    fn cluster(&mut self, c: &schema::Cluster, operators: &[OperatorSpec]) -> ClusterSpec {
        self.at = "cluster".into();
        let spec = c.check(self);
        let (workers, slots_per_worker) = (spec.workers, spec.slots_per_worker);
        let needed = operators.iter().map(|o| o.parallelism).max().unwrap_or(1);
        let slots = u64::from(workers) * u64::from(slots_per_worker);
        if slots < u64::from(needed) {
            self.report(
                "",
                format!(
                    "the cluster has {slots} slots ({workers} workers × {slots_per_worker}) but the highest parallelism is {needed}"
                ),
                help("with slot sharing, slot i runs subtask i of every operator: add workers or slots_per_worker"),
            );
        }
        spec
    }

    fn swarm(&mut self, s: &schema::Swarm) -> SwarmSpec {
        self.at = "swarm".into();
        let durations = |v: &mut Self, key: &str, value: &Vec<String>| {
            let positive = matches!(key, "interval" | "timeout" | "crash_mean_interval");
            v.range(key, value, |v, text| {
                let (message, help) = match parse_duration(text) {
                    Ok(d) if positive && d == SimDuration::ZERO => {
                        (format!("{key} bounds must be greater than 0"), None)
                    }
                    Ok(d) if d > MAX_DURATION => (
                        format!("{key} bounds must be at most {MAX_DURATION_TEXT}"),
                        help(LIMIT_HELP),
                    ),
                    Ok(d) => return Some(d),
                    Err(message) => (format!("{key}: {message}"), None),
                };
                v.report(key, message, help);
                None
            })
        };
        let ints = |v: &mut Self, key: &str, value: &Vec<i64>| {
            let (range, limited) = range_of(key);
            v.range(key, value, |v, &n| {
                if range.contains(&n) {
                    return u32::try_from(n).ok();
                }
                let (lo, hi) = (range.start(), range.end());
                let help = (n > *hi && limited).then(|| LIMIT_HELP.to_string());
                v.report(
                    key,
                    format!("{key} bounds must lie in {lo}..={hi}, not {n}"),
                    help,
                );
                None
            })
        };
        let spec = s.map(self, durations, ints);
        if s.input_order.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example input_order = [\"fifo\", \"random\"]");
            self.report(
                "input_order",
                "input_order must list at least one order",
                help,
            );
        }
        if s.during_recovery.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example during_recovery = [false, true]");
            self.report(
                "during_recovery",
                "during_recovery must list at least one value",
                help,
            );
        }
        if s.flink_version.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example flink_version = [\"2.0\", \"2.3\"]");
            self.report(
                "flink_version",
                "flink_version must list at least one release",
                help,
            );
        }
        if s.file_merging.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example file_merging = [\"off\", \"across-checkpoints\"]");
            self.report(
                "file_merging",
                "file_merging must list at least one setting",
                help,
            );
        }
        if s.state_backend.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example state_backend = [\"hashmap\", \"incremental\"]");
            self.report(
                "state_backend",
                "state_backend must list at least one backend",
                help,
            );
        }
        if s.committer.as_ref().is_some_and(Vec::is_empty) {
            let help = help("for example committer = [\"chained\", \"global\"]");
            self.report(
                "committer",
                "committer must list at least one placement",
                help,
            );
        }
        spec
    }

    /// A `[min, max]` range of `[swarm]`: two elements, each checked by
    /// `check`, in order.
    fn range<T, U: PartialOrd + std::fmt::Display>(
        &mut self,
        key: &str,
        value: &[T],
        check: impl Fn(&mut Self, &T) -> Option<U>,
    ) -> Option<(U, U)> {
        let [a, b] = value else {
            let message = format!("{key} must be a range of two values, [min, max]");
            self.report(key, message, Some(format!("for example {key} = [1, 8]")));
            return None;
        };
        let (a, b) = (check(self, a)?, check(self, b)?);
        if a > b {
            let message = format!("{key} range is empty: {a} > {b}");
            self.report(key, message, help("write [min, max]"));
            return None;
        }
        Some((a, b))
    }
}
