//! Validation: a [`File`] becomes a [`Scenario`], or every problem with it
//! is reported. Problems name a key path (`operators[2].cost`,
//! `faults.crashes[0].task`, `""` for the file as a whole); the span index
//! turns paths into file:line:col when there is a file. The same function
//! checks a scenario built in memory (`File::from(&scenario)`): shrink
//! candidates, generated scenarios, `--vary` and `--parallelism`.
//!
//! What is checked: required keys, ranges and the limits on values
//! (docs/scenarios.md), operator ids and references to them, keys that do
//! not belong to an operator's kind or to the restart strategy, the job
//! graph rules, and everything that needs a `[cluster]`.

use std::ops::RangeInclusive;

use super::schema::{name_of, Duration, File, Kind, Random, Strategy, Swarm};
use super::{
    CheckpointSpec, ClusterSpec, CoordinatorFaults, CrashSpec, EdgeSpec, FaultSpec, LatencySpike,
    OperatorId, OperatorKind, OperatorSpec, Partition, Partitioning, RandomCrashes,
    RestartStrategy, SavepointSpec, Scenario, SlowTask, SwarmSpec, WorkerCrash, FORMAT_VERSION,
    MAX_BUFFER_RECORDS, MAX_COPIES, MAX_DURATION, MAX_DURATION_TEXT, MAX_PARALLELISM,
    MAX_RANDOM_CRASHES,
};
use crate::engine::{SimDuration, SimTime};

/// One problem, at a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
    pub help: Option<String>,
}

/// Upper bound on the channels of one job (each costs memory up front).
const MAX_CHANNELS: u64 = 1_000_000;
/// Upper bound on the records of all sources (generated in memory up front).
const MAX_RECORDS: u64 = 200_000_000;
/// The help for a value above one of the limits on values.
pub const LIMIT_HELP: &str =
    "the largest value ckptsim supports; see \"Limits on values\" in docs/scenarios.md";
/// Keys whose upper bound is one of the limits on values.
const LIMITED: &[&str] = &[
    "max_parallelism",
    "parallelism",
    "buffer_records",
    "copies",
    "batch",
    "max_crashes",
    "coordinator_crashes",
    "worker_crashes",
    "workers",
    "slots_per_worker",
    "factor",
];
const U32: i128 = u32::MAX as i128;
const I64: i128 = i64::MAX as i128;
const CLUSTER_HELP: &str = "add [cluster] with workers and slots_per_worker";

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
    };
    let scenario = v.scenario(file);
    if v.problems.is_empty() {
        Ok(scenario)
    } else {
        Err(v.problems)
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

fn join(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

fn help(text: &str) -> Option<String> {
    Some(text.to_string())
}

/// What an operator is known to be, for the graph and fault checks.
struct Op<'f> {
    id: &'f str,
    /// Edges and tasks can name it: it has an id and is the first with it.
    referable: bool,
    /// `None` when missing or unknown.
    kind: Option<OperatorKind>,
    /// `None` when missing or invalid.
    parallelism: Option<u32>,
}

struct Validator<'a, 'f> {
    problems: Vec<Problem>,
    line_of: &'a dyn Fn(&str) -> Option<usize>,
    ops: Vec<Op<'f>>,
}

impl<'f> Validator<'_, 'f> {
    fn report(&mut self, path: impl Into<String>, message: String, help: Option<String>) {
        let path = path.into();
        self.problems.push(Problem {
            path,
            message,
            help,
        });
    }

    fn missing(&mut self, table: &str, key: &str) {
        let message = match table.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
            _ if table.is_empty() => format!("missing required key `{key}`"),
            Some((array, _)) => format!("missing required key `{key}` in [[{array}]]"),
            None => format!("missing required key `{key}` in [{table}]"),
        };
        self.report(join(table, key), message, None);
    }

    fn required<'v, T>(&mut self, value: &'v Option<T>, table: &str, key: &str) -> Option<&'v T> {
        if value.is_none() {
            self.missing(table, key);
        }
        value.as_ref()
    }

    /// An integer in `range`; above a limit on values, the problem says so.
    fn int(&mut self, path: String, n: impl Into<i128>, range: RangeInclusive<i128>) -> bool {
        let (n, key) = (n.into(), key_of(&path).to_string());
        if n < *range.start() {
            self.report(
                path,
                format!("{key} must be at least {}", range.start()),
                None,
            );
        } else if n > *range.end() {
            let help = LIMITED
                .contains(&key.as_str())
                .then(|| LIMIT_HELP.to_string());
            self.report(path, format!("{key} must be at most {}", range.end()), help);
        } else {
            return true;
        }
        false
    }

    /// Every duration and time is at most [`MAX_DURATION`].
    fn dur(&mut self, path: String, d: SimDuration) -> bool {
        if d <= MAX_DURATION {
            return true;
        }
        let message = format!("{} must be at most {MAX_DURATION_TEXT}", key_of(&path));
        self.report(path, message, help(LIMIT_HELP));
        false
    }

    fn durs(&mut self, table: &str, durations: &[(&str, SimDuration)]) {
        for &(key, d) in durations {
            self.dur(join(table, key), d);
        }
    }

    fn positive(&mut self, path: String, d: SimDuration) -> bool {
        if d == SimDuration::ZERO {
            let message = format!("{} must be greater than 0", key_of(&path));
            self.report(path, message, None);
            return false;
        }
        self.dur(path, d)
    }

    fn required_dur(
        &mut self,
        d: &Option<Duration>,
        table: &str,
        key: &str,
    ) -> Option<SimDuration> {
        let d = self.required(d, table, key)?.0;
        self.dur(join(table, key), d).then_some(d)
    }

    fn scenario(&mut self, f: &'f File) -> Scenario {
        match f.version {
            None => self.report(
                "",
                "missing required key `version`".to_string(),
                Some(format!(
                    "add `version = {FORMAT_VERSION}` at the top of the file"
                )),
            ),
            Some(n) if n != FORMAT_VERSION => {
                self.report("version", unsupported_version(n.into()), None)
            }
            Some(_) => {}
        }
        if let Some(name) = self.required(&f.name, "", "name") {
            if name.trim().is_empty() {
                self.report("name", "name must not be empty".to_string(), None);
            }
        }
        let max_parallelism = f.max_parallelism;
        let max_ok = self.int(
            "max_parallelism".into(),
            max_parallelism,
            1..=MAX_PARALLELISM.into(),
        );
        if let Some(d) = f.cancel_at {
            self.dur("cancel_at".into(), d.0);
        }
        self.network(f);
        let operators = self.operators(f, max_ok.then_some(max_parallelism));
        let edges = self.edges(f);
        let checkpoint = self.checkpoint(f);
        let cluster = f.cluster.as_ref().map(|c| self.cluster(c, &operators));
        let faults = self.faults(f, cluster.as_ref().map(|c| c.workers));
        let mut savepoints = Vec::new();
        for (i, sp) in f.savepoints.iter().enumerate() {
            let table = format!("savepoints[{i}]");
            if sp.drain && !sp.stop {
                self.report(
                    join(&table, "drain"),
                    "drain applies only to stop-with-savepoint".to_string(),
                    help("add `stop = true` to this savepoint, or remove `drain`"),
                );
            }
            if let Some(at) = self.required_dur(&sp.at, &table, "at") {
                let (stop, drain) = (sp.stop, sp.drain);
                savepoints.push(SavepointSpec {
                    at: SimTime(at.0),
                    stop,
                    drain,
                });
            }
        }
        savepoints.sort_by_key(|s| s.at);
        self.int("limits.max_events".into(), f.limits.max_events, 1..=I64);
        self.positive("limits.max_time".into(), SimDuration(f.limits.max_time.0));
        let swarm = f.swarm.as_ref().map(|s| self.swarm(s));
        Scenario {
            name: f.name.clone().unwrap_or_default(),
            description: f.description.clone(),
            max_parallelism,
            operators,
            edges,
            network: f.network.clone(),
            checkpoint,
            faults,
            limits: f.limits.clone(),
            expect: f.expect.clone(),
            swarm,
            savepoints,
            cluster,
            cancel_at: f.cancel_at.map(Duration::time),
        }
    }

    fn network(&mut self, f: &File) {
        let n = &f.network;
        let buffer_records = MAX_BUFFER_RECORDS.into();
        self.int(
            "network.buffer_records".into(),
            n.buffer_records,
            1..=buffer_records,
        );
        self.int("network.buffer_credits".into(), n.buffer_credits, 1..=U32);
        self.int("network.output_buffers".into(), n.output_buffers, 1..=U32);
        self.positive("network.flush_timeout".into(), n.flush_timeout);
        self.dur("network.step_quantum".into(), n.step_quantum);
        let min_ok = self.dur("network.latency_min".into(), n.latency_min);
        let max_ok = self.dur("network.latency_max".into(), n.latency_max);
        if min_ok && max_ok && n.latency_max < n.latency_min {
            // At latency_max, unless only latency_min is written.
            let written = |key: &str| (self.line_of)(&format!("network.{key}")).is_some();
            let key = match written("latency_max") || !written("latency_min") {
                true => "network.latency_max",
                false => "network.latency_min",
            };
            let message = format!(
                "latency_max ({}) must be at least latency_min ({})",
                n.latency_max, n.latency_min
            );
            self.report(key, message, None);
        }
    }

    fn operators(&mut self, f: &'f File, max_parallelism: Option<u32>) -> Vec<OperatorSpec> {
        if f.operators.is_empty() {
            self.report(
                "",
                "the job has no operators".to_string(),
                help("add an [[operators]] table with kind = \"source\""),
            );
        }
        let mut specs = Vec::new();
        for (i, op) in f.operators.iter().enumerate() {
            let table = format!("operators[{i}]");
            let id = self
                .required(&op.id, &table, "id")
                .map_or("", String::as_str);
            let mut referable = false;
            if op.id.is_some() {
                self.check_id(&table, id);
                match self.ops.iter().position(|o| o.referable && o.id == id) {
                    Some(first) => {
                        let help = (self.line_of)(&format!("operators[{first}].id")).map(|line| {
                            format!("operator ids must be unique; `{id}` is first defined on line {line}")
                        });
                        let message = format!("duplicate operator id `{id}`");
                        self.report(join(&table, "id"), message, help);
                    }
                    None => referable = true,
                }
            }
            let kind = self.required(&op.kind, &table, "kind").copied();
            let parallelism = self
                .required(&op.parallelism, &table, "parallelism")
                .copied();
            let path = join(&table, "parallelism");
            let limit = MAX_PARALLELISM.into();
            let parallelism = parallelism.filter(|&p| self.int(path.clone(), p, 1..=limit));
            let spec = kind.map(|k| op.kind_spec(k));
            if let Some(kind) = kind {
                self.kind_keys(&table, op, kind);
            }
            let keyed = spec.as_ref().is_some_and(OperatorKind::is_keyed);
            if let (true, Some(p), Some(max)) = (keyed, parallelism, max_parallelism) {
                if p > max {
                    self.report(
                        path,
                        format!("parallelism {p} of keyed operator `{id}` exceeds max_parallelism {max}"),
                        help("keyed state is split into max_parallelism key groups: raise max_parallelism or lower the parallelism"),
                    );
                }
            }
            let cost = op.cost.map(|d| ("cost", d.0));
            self.durs(&table, &[("cost_jitter", op.cost_jitter.0)]);
            self.durs(&table, cost.as_slice());
            specs.push(OperatorSpec {
                id: id.to_string(),
                kind: spec.clone().unwrap_or(OperatorKind::KeyedCount),
                parallelism: op.parallelism.unwrap_or(1),
                cost: op.cost(),
                cost_jitter: op.cost_jitter.0,
            });
            let kind = spec;
            self.ops.push(Op {
                id,
                referable,
                kind,
                parallelism,
            });
        }
        specs
    }

    fn check_id(&mut self, table: &str, id: &str) {
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let message = if id.is_empty() {
            "operator id must not be empty".to_string()
        } else if !id.chars().all(allowed) {
            format!("operator id `{id}` may only contain ASCII letters, digits, `_` and `-`")
        } else {
            return;
        };
        self.report(join(table, "id"), message, None);
    }

    /// Kind-specific keys: set only on their kind, and in range.
    fn kind_keys(&mut self, table: &str, op: &super::schema::Operator, kind: Kind) {
        let mut ok = true;
        for (key, owner, set, number) in op.kind_keys() {
            if set && owner != kind {
                self.report(
                    join(table, key),
                    format!(
                        "key `{key}` does not apply to an operator of kind `{}`",
                        name_of(&kind)
                    ),
                    Some(format!(
                        "`{key}` only applies to operators of kind `{}`; remove it",
                        name_of(&owner)
                    )),
                );
            } else if let Some(n) = number.filter(|_| owner == kind) {
                let range = match key {
                    "copies" => 1..=MAX_COPIES.into(),
                    "batch" => 1..=MAX_BUFFER_RECORDS.into(),
                    "partitions" | "size" => 1..=U32,
                    "keep_below" => 0..=I64,
                    _ => 1..=I64,
                };
                ok &= self.int(join(table, key), n, range);
            }
        }
        if let (
            true,
            OperatorKind::Filter {
                modulus,
                keep_below,
            },
        ) = (ok, op.kind_spec(kind))
        {
            if keep_below > modulus && op.keep_below.is_some() {
                self.report(
                    join(table, "keep_below"),
                    format!("keep_below ({keep_below}) must be at most modulus ({modulus})"),
                    Some(format!(
                        "the filter keeps records with key % {modulus} < keep_below; \
                         keep_below = {modulus} already keeps every record"
                    )),
                );
            }
        }
    }

    /// An operator by name; an unknown one is reported at `path` with the
    /// known ids (in file order) and the closest match.
    fn resolve(&mut self, name: &str, path: &str) -> Option<usize> {
        if let Some(i) = self.ops.iter().position(|op| op.referable && op.id == name) {
            return Some(i);
        }
        let defined: Vec<&'f str> = self
            .ops
            .iter()
            .filter(|op| op.referable)
            .map(|op| op.id)
            .collect();
        let help = match defined.is_empty() {
            true => "no operators are defined".to_string(),
            false => super::spans::known(name, &defined, "operators"),
        };
        self.report(path, format!("unknown operator `{name}`"), Some(help));
        None
    }

    fn edges(&mut self, f: &File) -> Vec<EdgeSpec> {
        let mut specs = Vec::new();
        let mut resolved = Vec::new();
        let mut all_resolved = true;
        for (i, e) in f.edges.iter().enumerate() {
            let table = format!("edges[{i}]");
            let end = |v: &mut Self, key: &str, name: &Option<String>| {
                let name = v.required(name, &table, key)?;
                v.resolve(name, &join(&table, key))
            };
            let (from, to) = (end(self, "from", &e.from), end(self, "to", &e.to));
            if e.partitioning.is_none() {
                self.report(
                    join(&table, "partitioning"),
                    "missing required key `partitioning` in [[edges]]".to_string(),
                    help("one of: forward, hash, rebalance, broadcast"),
                );
            }
            let (Some(from), Some(to)) = (from, to) else {
                all_resolved = false;
                continue;
            };
            if let Some(partitioning) = e.partitioning {
                let (from, to) = (dense_id(from), dense_id(to));
                specs.push(EdgeSpec {
                    from,
                    to,
                    partitioning,
                });
            }
            resolved.push((i, from, to, e.partitioning));
        }
        self.graph(&resolved, all_resolved);
        specs
    }

    /// The job-graph rules, for the edges whose ends are known (index,
    /// from, to, partitioning): sources have no inputs, everything else has
    /// one, sinks have no outputs, forward and keyed inputs fit, no
    /// duplicates, no cycles, and bounded channels and records.
    fn graph(&mut self, edges: &[(usize, usize, usize, Option<Partitioning>)], all_resolved: bool) {
        let n = self.ops.len();
        let name = |v: &Self, i: usize| v.ops[i].id.to_string();
        let kind = |v: &Self, i: usize| v.ops[i].kind.clone();
        let parallelism = |v: &Self, i: usize| v.ops[i].parallelism;
        // Accepted edges so far (no duplicates, no cycle closers): acyclic.
        let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut has_input = vec![false; n];
        for (k, &(index, from, to, partitioning)) in edges.iter().enumerate() {
            let table = format!("edges[{index}]");
            let (a, b) = (name(self, from), name(self, to));
            has_input[to] = true;
            if let Some(&(first, ..)) = edges[..k].iter().find(|e| (e.1, e.2) == (from, to)) {
                let help = (self.line_of)(&format!("edges[{first}]"))
                    .map(|line| format!("the first {a} -> {b} edge is on line {line}; remove one"));
                self.report(table, format!("duplicate edge {a} -> {b}"), help);
                continue;
            }
            if kind(self, to).is_some_and(|k| k.is_source()) {
                self.report(
                    join(&table, "to"),
                    format!("source `{b}` cannot have inputs"),
                    help("sources read their own log: remove this edge"),
                );
            }
            if let Some(k) = kind(self, from).filter(OperatorKind::is_sink) {
                self.report(
                    join(&table, "from"),
                    format!("sink `{a}` cannot have outputs"),
                    Some(format!(
                        "a `{}` operator writes to the external store: remove this edge",
                        k.name()
                    )),
                );
            }
            let path = join(&table, "partitioning");
            if let (Some(Partitioning::Forward), Some(pf), Some(pt)) =
                (partitioning, parallelism(self, from), parallelism(self, to))
            {
                if pf != pt {
                    self.report(
                        path.clone(),
                        format!(
                            "forward edge {a} -> {b} connects parallelism {pf} to parallelism {pt}"
                        ),
                        help("use `rebalance` or `hash`, or make the parallelisms equal"),
                    );
                }
            }
            if let Some(p) = partitioning.filter(|p| *p != Partitioning::Hash) {
                if kind(self, to).is_some_and(|k| k.is_keyed()) {
                    self.report(
                        path,
                        format!(
                            "keyed operator `{b}` reads a `{}` edge from `{a}`",
                            p.name()
                        ),
                        help("keyed operators read keyed streams: use partitioning = \"hash\""),
                    );
                }
            }
            // Does this edge close a cycle? Only if `to` already reaches `from`.
            let cycle = match from == to {
                true => Some(vec![from]),
                false => shortest_path(&successors, to, from),
            };
            let Some(mut cycle) = cycle else {
                successors[from].push(to);
                continue;
            };
            // to .. from is the path; start at the operator defined first.
            cycle.rotate_right(1);
            let start = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(start);
            cycle.push(cycle[0]);
            let names: Vec<String> = cycle.iter().map(|&i| name(self, i)).collect();
            self.report(
                table,
                format!("the job graph has a cycle: {}", names.join(" -> ")),
                help("cyclic dataflows are not supported yet"),
            );
        }
        for (i, has_input) in has_input.into_iter().enumerate() {
            // With an unresolved edge around, a missing input is most likely
            // that edge: do not pile a second error on the first.
            let needs_input = kind(self, i).is_some_and(|k| !k.is_source());
            if needs_input && !has_input && all_resolved && self.ops[i].referable {
                let id = name(self, i);
                self.report(
                    format!("operators[{i}].id"),
                    format!("operator `{id}` has no inputs"),
                    Some(format!("add an [[edges]] table with to = \"{id}\"")),
                );
            }
        }
        let kinds_known = self.ops.iter().all(|op| op.kind.is_some());
        let any_source = self
            .ops
            .iter()
            .any(|op| op.kind.as_ref().is_some_and(OperatorKind::is_source));
        if n > 0 && kinds_known && !any_source {
            self.report(
                "",
                "the job has no source operator".to_string(),
                help("add an [[operators]] table with kind = \"source\""),
            );
        }
        // Every channel is allocated up front and the input generated in
        // memory: bound both, so that a typo is an error, not an abort.
        let channels: u64 = edges
            .iter()
            .map(|&(_, from, to, p)| {
                let up = u64::from(parallelism(self, from).unwrap_or(1));
                let down = u64::from(parallelism(self, to).unwrap_or(1));
                if p == Some(Partitioning::Forward) {
                    up
                } else {
                    up * down
                }
            })
            .sum();
        if channels > MAX_CHANNELS {
            self.report(
                "",
                format!("the job has {channels} channels; at most {MAX_CHANNELS} are supported"),
                help("lower the parallelism of operators joined by hash, rebalance or broadcast edges"),
            );
        }
        let records = self.ops.iter().filter_map(|op| match &op.kind {
            Some(OperatorKind::Source(s)) => {
                Some(u64::from(s.partitions).saturating_mul(s.records_per_partition))
            }
            _ => None,
        });
        let records = records.fold(0, u64::saturating_add);
        if records > MAX_RECORDS {
            self.report(
                "",
                format!("the sources hold {records} records in all; at most {MAX_RECORDS} are supported"),
                help("lower records_per_partition or partitions"),
            );
        }
    }

    fn checkpoint(&mut self, f: &File) -> CheckpointSpec {
        let c = &f.checkpoint;
        match c.interval.0 {
            Some(SimDuration::ZERO) => self.report(
                "checkpoint.interval",
                "interval must be greater than 0".to_string(),
                help("write interval = \"none\" to disable periodic checkpoints"),
            ),
            Some(d) => self.durs("checkpoint", &[("interval", d)]),
            None => {}
        }
        let optional = [
            ("first_delay", c.first_delay),
            ("storage_latency", c.storage_latency),
        ];
        for (key, d) in optional {
            self.durs("checkpoint", d.map(|d| (key, d.0)).as_slice());
        }
        let durations = [
            ("min_pause", c.min_pause.0),
            ("alignment_timeout", c.alignment_timeout.0),
            ("rpc_latency", c.rpc_latency.0),
        ];
        self.durs("checkpoint", &durations);
        self.positive("checkpoint.timeout".into(), c.timeout.0);
        let limit = c
            .algorithm
            .max_concurrent()
            .filter(|&l| c.max_concurrent > l);
        if let (true, Some(limit)) = (
            self.int(
                "checkpoint.max_concurrent".into(),
                c.max_concurrent,
                1..=U32,
            ),
            limit,
        ) {
            self.report(
                "checkpoint.max_concurrent",
                format!(
                    "algorithm `{}` allows at most {limit} concurrent checkpoint, not {}",
                    c.algorithm.name(),
                    c.max_concurrent
                ),
                Some(format!(
                    "set max_concurrent = {limit} (Flink refuses more with unaligned checkpoints)"
                )),
            );
        }
        self.int("checkpoint.retained".into(), c.retained, 1..=U32);
        if let Some(bandwidth) = c.storage_bytes_per_sec {
            self.int(
                "checkpoint.storage_bytes_per_sec".into(),
                bandwidth,
                1..=I64,
            );
        }
        let (storage_latency, storage_bytes_per_sec) = c.storage_speed();
        CheckpointSpec {
            algorithm: c.algorithm,
            interval: c.interval.0,
            first_delay: c.first_delay(),
            min_pause: c.min_pause.0,
            timeout: c.timeout.0,
            max_concurrent: c.max_concurrent,
            alignment_timeout: c.alignment_timeout.0,
            tolerable_failures: c.tolerable_failures,
            retained: c.retained,
            retain_on_cancel: c.retain_on_cancel,
            storage: c.storage,
            storage_latency,
            storage_bytes_per_sec,
            rpc_latency: c.rpc_latency.0,
        }
    }

    /// `[cluster]`: enough slots for the highest parallelism.
    fn cluster(&mut self, c: &ClusterSpec, operators: &[OperatorSpec]) -> ClusterSpec {
        let workers_ok = self.int("cluster.workers".into(), c.workers, 1..=100_000);
        let slots_ok = self.int(
            "cluster.slots_per_worker".into(),
            c.slots_per_worker,
            1..=100_000,
        );
        let durations = [
            ("heartbeat_timeout", c.heartbeat_timeout),
            ("replacement_delay", c.replacement_delay),
        ];
        self.durs("cluster", &durations);
        let needed = operators.iter().map(|o| o.parallelism).max().unwrap_or(1);
        let slots = u64::from(c.workers) * u64::from(c.slots_per_worker);
        if workers_ok && slots_ok && slots < u64::from(needed) {
            self.report(
                "cluster",
                format!(
                    "the cluster has {slots} slots ({} workers × {}) but the highest parallelism is {needed}",
                    c.workers, c.slots_per_worker
                ),
                help("with slot sharing, slot i runs subtask i of every operator: add workers or slots_per_worker"),
            );
        }
        c.clone()
    }

    /// `[faults]` and its tables; `workers` is the cluster's, if it has one.
    fn faults(&mut self, f: &File, workers: Option<u32>) -> FaultSpec {
        let x = &f.faults;
        self.durs(
            "faults",
            &[
                ("detection_delay", x.detection_delay.0),
                ("restart_delay", x.restart_delay.0),
            ],
        );
        let mut crashes = Vec::new();
        for (i, c) in x.crashes.iter().enumerate() {
            let table = format!("faults.crashes[{i}]");
            let at = self.required_dur(&c.at, &table, "at");
            if let (Some(at), Some((operator, subtask))) = (at, self.task(&table, &c.task)) {
                crashes.push(CrashSpec {
                    at: SimTime(at.0),
                    operator,
                    subtask,
                });
            }
        }
        let random = x
            .random
            .as_ref()
            .and_then(|r| self.random(r, "faults.random"));
        let restart = self.restart(f);
        if let Some(n) = &x.notifications {
            self.int(
                "faults.notifications.loss_percent".into(),
                n.loss_percent,
                0..=100,
            );
        }
        if let Some(s) = &x.storage {
            self.int(
                "faults.storage.failure_percent".into(),
                s.failure_percent,
                0..=100,
            );
            self.int(
                "faults.storage.slow_percent".into(),
                s.slow_percent,
                0..=100,
            );
            self.durs("faults.storage", &[("slow_latency", s.slow_latency)]);
        }
        let coordinator = x.coordinator.as_ref().map(|c| {
            self.durs(
                "faults.coordinator",
                &[("failover_delay", c.failover_delay.0)],
            );
            for (i, t) in c.crashes.iter().enumerate() {
                self.dur(format!("faults.coordinator.crashes[{i}]"), t.0);
            }
            CoordinatorFaults {
                failover_delay: c.failover_delay.0,
                on_memory_loss: c.on_memory_loss,
                crashes: c.crashes.iter().map(|t| t.time()).collect(),
                random: c
                    .random
                    .as_ref()
                    .and_then(|r| self.random(r, "faults.coordinator.random")),
            }
        });
        let mut worker_crashes = Vec::new();
        for (i, w) in x.worker_crashes.iter().enumerate() {
            let table = format!("faults.worker_crashes[{i}]");
            let at = self.required_dur(&w.at, &table, "at");
            let Some(workers) = self.cluster_for(workers, &table, "worker crashes need") else {
                continue;
            };
            let worker = self.required(&w.worker, &table, "worker").copied();
            let worker = worker.filter(|&n| self.worker(&table, n, workers));
            if let (Some(at), Some(worker)) = (at, worker) {
                worker_crashes.push(WorkerCrash {
                    at: SimTime(at.0),
                    worker,
                });
            }
        }
        let random_workers = x.random_workers.as_ref().and_then(|r| {
            self.cluster_for(workers, "faults.random_workers", "worker crashes need");
            self.random(r, "faults.random_workers")
        });
        let mut latency_spikes = Vec::new();
        for (i, s) in x.latency_spikes.iter().enumerate() {
            let table = format!("faults.latency_spikes[{i}]");
            let window = self.window(&table, s.from, &s.until);
            let extra = self.required_dur(&s.extra, &table, "extra");
            let edge = match &s.edge {
                None => Some(None),
                Some(text) => self.spike_edge(text, &join(&table, "edge")).map(Some),
            };
            let worker = match (s.worker, workers) {
                (None, _) => Some(None),
                (Some(_), None) => {
                    let message = "a latency spike on a worker needs a [cluster] section";
                    self.report(table.clone(), message.to_string(), None);
                    None
                }
                (Some(n), Some(workers)) => self.worker(&table, n, workers).then_some(Some(n)),
            };
            if let (Some((from, until)), Some(extra), Some(edge), Some(worker)) =
                (window, extra, edge, worker)
            {
                latency_spikes.push(LatencySpike {
                    from,
                    until,
                    extra,
                    edge,
                    worker,
                });
            }
        }
        let mut partitions = Vec::new();
        for (i, p) in x.partitions.iter().enumerate() {
            let table = format!("faults.partitions[{i}]");
            let window = self.window(&table, p.from, &p.until);
            let Some(workers) = self.cluster_for(workers, &table, "a partition needs") else {
                continue;
            };
            let Some(list) = self.required(&p.workers, &table, "workers") else {
                continue;
            };
            let path = join(&table, "workers");
            let mut cut = Vec::new();
            for &w in list {
                match u32::try_from(w).ok().filter(|&w| w < workers) {
                    Some(w) => cut.push(w),
                    None => {
                        let last = workers.saturating_sub(1);
                        let message = format!(
                            "worker {w} does not exist: the cluster has workers 0 to {last}"
                        );
                        self.report(path.clone(), message, None);
                    }
                }
            }
            if cut.len() < list.len() {
                continue;
            }
            cut.sort_unstable();
            cut.dedup();
            if cut.is_empty() || cut.len() as u64 >= u64::from(workers) {
                let message = "a partition cuts off some workers, not none or all".to_string();
                self.report(path, message, None);
            } else if let Some((from, until)) = window {
                partitions.push(Partition {
                    from,
                    until,
                    workers: cut,
                });
            }
        }
        let mut slow_tasks = Vec::new();
        for (i, s) in x.slow_tasks.iter().enumerate() {
            let table = format!("faults.slow_tasks[{i}]");
            let window = self.window(&table, s.from, &s.until);
            self.int(join(&table, "factor"), s.factor, 1..=1_000_000);
            if let (Some((from, until)), Some((operator, subtask))) =
                (window, self.task(&table, &s.task))
            {
                let factor = s.factor;
                slow_tasks.push(SlowTask {
                    operator,
                    subtask,
                    from,
                    until,
                    factor,
                });
            }
        }
        FaultSpec {
            detection_delay: x.detection_delay.0,
            restart_delay: x.restart_delay.0,
            max_restarts: x.max_restarts,
            crashes,
            random,
            restart,
            notifications: x.notifications.clone(),
            storage: x.storage.clone(),
            coordinator,
            slow_tasks,
            worker_crashes,
            random_workers,
            latency_spikes,
            partitions,
            failover: x.failover,
        }
    }

    /// The cluster's workers, or a problem at `table`: "`what` a [cluster] section".
    fn cluster_for(&mut self, workers: Option<u32>, table: &str, what: &str) -> Option<u32> {
        if workers.is_none() {
            self.report(
                table,
                format!("{what} a [cluster] section"),
                help(CLUSTER_HELP),
            );
        }
        workers
    }

    /// `worker` in `table`: an index below `workers`.
    fn worker(&mut self, table: &str, n: u32, workers: u32) -> bool {
        self.int(join(table, "worker"), n, 0..=i128::from(workers) - 1)
    }

    /// A `from`/`until` window: `until` is required and after `from`.
    fn window(
        &mut self,
        table: &str,
        from: Duration,
        until: &Option<Duration>,
    ) -> Option<(SimTime, SimTime)> {
        let from_ok = self.dur(join(table, "from"), from.0);
        let until = self.required_dur(until, table, "until")?;
        if from_ok && until <= from.0 {
            let message = format!("until ({until}) must be after from ({})", from.0);
            self.report(join(table, "until"), message, None);
        }
        (from_ok && until > from.0).then(|| (from.time(), SimTime(until.0)))
    }

    /// `edge = "from->to"` of a latency spike.
    fn spike_edge(&mut self, text: &str, path: &str) -> Option<(OperatorId, OperatorId)> {
        let Some((a, b)) = text.split_once("->") else {
            self.report(
                path,
                format!("edge `{text}` is not `from->to`"),
                help("write e.g. edge = \"split->count\""),
            );
            return None;
        };
        let (a, b) = (self.resolve(a.trim(), path), self.resolve(b.trim(), path));
        Some((dense_id(a?), dense_id(b?)))
    }

    /// The required `task = "op[n]"` of `table`: an operator and one of its subtasks.
    fn task(&mut self, table: &str, task: &Option<String>) -> Option<(OperatorId, u32)> {
        let text = self.required(task, table, "task")?;
        let path = join(table, "task");
        let parsed = text
            .strip_suffix(']')
            .and_then(|inner| inner.rsplit_once('['))
            .and_then(|(op, n)| Some((op, n.parse::<u32>().ok()?)))
            .filter(|(op, _)| !op.is_empty());
        let Some((name, subtask)) = parsed else {
            self.report(
                path,
                format!("task `{text}` is not an operator id followed by a subtask index"),
                help("write e.g. task = \"count[0]\" (subtasks are numbered from 0)"),
            );
            return None;
        };
        let operator = self.resolve(name, &path)?;
        let parallelism = self.ops[operator].parallelism?;
        if subtask >= parallelism {
            self.report(
                path,
                format!(
                    "task `{text}` does not exist: operator `{name}` has parallelism {parallelism}"
                ),
                Some(format!(
                    "subtasks of `{name}` are numbered 0 to {}",
                    parallelism - 1
                )),
            );
            return None;
        }
        Some((dense_id(operator), subtask))
    }

    /// A random crash table.
    fn random(&mut self, r: &Random, table: &str) -> Option<RandomCrashes> {
        let mean = self.required_dur(&r.mean_interval, table, "mean_interval");
        if mean == Some(SimDuration::ZERO) {
            let message = "mean_interval must be greater than 0".to_string();
            self.report(join(table, "mean_interval"), message, None);
        }
        let start_ok = self.dur(join(table, "window_start"), r.window_start.0);
        let end = self.required_dur(&r.window_end, table, "window_end");
        if let (true, Some(end)) = (start_ok, end) {
            if end <= r.window_start.0 {
                let message = format!(
                    "window_end ({end}) must be after window_start ({})",
                    r.window_start.0
                );
                self.report(join(table, "window_end"), message, None);
            }
        }
        self.int(
            join(table, "max_crashes"),
            r.max_crashes,
            0..=MAX_RANDOM_CRASHES.into(),
        );
        Some(RandomCrashes {
            mean_interval: mean?,
            window_start: r.window_start.time(),
            window_end: SimTime(end?.0),
            max_crashes: r.max_crashes,
        })
    }

    /// `[faults.restart]`; keys of another strategy are mistakes.
    fn restart(&mut self, f: &File) -> RestartStrategy {
        let r = &f.faults.restart;
        let table = "faults.restart";
        for (key, owner, set) in r.strategy_keys() {
            if set && owner != r.strategy {
                let (owner, strategy) = (name_of(&owner), name_of(&r.strategy));
                self.report(
                    join(table, key),
                    format!("{key} belongs to the {owner} restart strategy, not {strategy}"),
                    Some(format!("remove {key}, or set strategy = \"{owner}\"")),
                );
            }
        }
        let or = |d: Option<Duration>, secs: u64| d.map_or(SimDuration::from_secs(secs), |d| d.0);
        match r.strategy {
            Strategy::FixedDelay => RestartStrategy::FixedDelay,
            Strategy::ExponentialDelay => {
                let multiplier = r.backoff_multiplier.unwrap_or(1.5);
                if !(1.0..=1000.0).contains(&multiplier) {
                    let message =
                        format!("backoff_multiplier must lie in 1..=1000, not {multiplier}");
                    self.report(join(table, "backoff_multiplier"), message, None);
                }
                let (max_backoff, reset_threshold) =
                    (or(r.max_backoff, 60), or(r.reset_threshold, 3_600));
                self.durs(
                    table,
                    &[
                        ("max_backoff", max_backoff),
                        ("reset_threshold", reset_threshold),
                    ],
                );
                let multiplier_permille = (multiplier * 1000.0).round() as u32;
                RestartStrategy::ExponentialDelay {
                    max_backoff,
                    multiplier_permille,
                    reset_threshold,
                }
            }
            Strategy::FailureRate => {
                let (max_failures, interval) = (r.max_failures.unwrap_or(1), or(r.interval, 60));
                self.int(join(table, "max_failures"), max_failures, 1..=U32);
                self.positive(join(table, "interval"), interval);
                RestartStrategy::FailureRate {
                    max_failures,
                    interval,
                }
            }
        }
    }

    fn swarm(&mut self, s: &Swarm) -> SwarmSpec {
        let (records, crashes) = (MAX_BUFFER_RECORDS.into(), MAX_RANDOM_CRASHES.into());
        SwarmSpec {
            enabled: s.enabled,
            latency_max: self.durations("latency_max", &s.latency_max, false),
            buffer_records: self.ints("buffer_records", &s.buffer_records, 1..=records),
            buffer_credits: self.ints("buffer_credits", &s.buffer_credits, 1..=u32::MAX.into()),
            interval: self.durations("interval", &s.interval, true),
            timeout: self.durations("timeout", &s.timeout, true),
            cost_percent: self.ints("cost_percent", &s.cost_percent, 0..=100_000),
            crash_mean_interval: self.durations(
                "crash_mean_interval",
                &s.crash_mean_interval,
                true,
            ),
            max_crashes: self.ints("max_crashes", &s.max_crashes, 0..=crashes),
            crash_window_end: self.durations("crash_window_end", &s.crash_window_end, false),
            notification_loss_percent: self.ints(
                "notification_loss_percent",
                &s.notification_loss_percent,
                0..=100,
            ),
            storage_failure_percent: self.ints(
                "storage_failure_percent",
                &s.storage_failure_percent,
                0..=100,
            ),
            storage_slow_percent: self.ints(
                "storage_slow_percent",
                &s.storage_slow_percent,
                0..=100,
            ),
            coordinator_crashes: self.ints(
                "coordinator_crashes",
                &s.coordinator_crashes,
                0..=crashes,
            ),
            worker_crashes: self.ints("worker_crashes", &s.worker_crashes, 0..=crashes),
            latency_spike_extra: self.durations(
                "latency_spike_extra",
                &s.latency_spike_extra,
                false,
            ),
            partition_duration: self.durations("partition_duration", &s.partition_duration, false),
        }
    }

    /// A `[min, max]` range of `[swarm]`: two elements, in order.
    fn pair<T: Copy + PartialOrd + std::fmt::Display>(
        &mut self,
        key: &str,
        value: &Option<Vec<T>>,
    ) -> Option<(T, T)> {
        let path = format!("swarm.{key}");
        match *value.as_deref()? {
            [a, b] if a > b => {
                let message = format!("{key} range is empty: {a} > {b}");
                self.report(path, message, help("write [min, max]"));
                None
            }
            [a, b] => Some((a, b)),
            _ => {
                self.report(
                    path,
                    format!("{key} must be a range of two values, [min, max]"),
                    Some(format!("for example {key} = [1, 8]")),
                );
                None
            }
        }
    }

    fn ints(
        &mut self,
        key: &str,
        value: &Option<Vec<i64>>,
        range: RangeInclusive<i64>,
    ) -> Option<(u32, u32)> {
        if let Some(&[a, b]) = value.as_deref() {
            // The first bound out of range is the one reported.
            if let Some(n) = [a, b].into_iter().find(|n| !range.contains(n)) {
                let help =
                    (n > *range.end() && LIMITED.contains(&key)).then(|| LIMIT_HELP.to_string());
                let (lo, hi) = (range.start(), range.end());
                let message = format!("{key} bounds must lie in {lo}..={hi}, not {n}");
                self.report(format!("swarm.{key}"), message, help);
                return None;
            }
        }
        let (a, b) = self.pair(key, value)?;
        Some((u32::try_from(a).ok()?, u32::try_from(b).ok()?))
    }

    fn durations(
        &mut self,
        key: &str,
        value: &Option<Vec<Duration>>,
        positive: bool,
    ) -> Option<(SimDuration, SimDuration)> {
        if let Some(&[a, b]) = value.as_deref() {
            for d in [a.0, b.0] {
                if positive && d == SimDuration::ZERO {
                    let message = format!("{key} bounds must be greater than 0");
                    self.report(format!("swarm.{key}"), message, None);
                    return None;
                }
                if d > MAX_DURATION {
                    let message = format!("{key} bounds must be at most {MAX_DURATION_TEXT}");
                    self.report(format!("swarm.{key}"), message, help(LIMIT_HELP));
                    return None;
                }
            }
        }
        let (a, b) = self.pair(key, value)?;
        Some((a.0, b.0))
    }
}

/// The [`OperatorId`] of the operator at `index` in file order.
fn dense_id(index: usize) -> OperatorId {
    OperatorId(u32::try_from(index).unwrap_or(u32::MAX))
}

/// Shortest path `start ..= goal` following `successors` (BFS, so the
/// result is deterministic for a given edge order).
fn shortest_path(successors: &[Vec<usize>], start: usize, goal: usize) -> Option<Vec<usize>> {
    let mut parent: Vec<Option<usize>> = vec![None; successors.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    let mut visited = vec![false; successors.len()];
    visited[start] = true;
    while let Some(node) = queue.pop_front() {
        if node == goal {
            let mut path = vec![goal];
            while let Some(p) = parent[*path.last()?] {
                path.push(p);
            }
            path.reverse();
            return Some(path);
        }
        for &next in &successors[node] {
            if !std::mem::replace(&mut visited[next], true) {
                parent[next] = Some(node);
                queue.push_back(next);
            }
        }
    }
    None
}
