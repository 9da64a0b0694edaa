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

use super::schema::{name_of, Duration, File, Kind, Operator, Random, Strategy, Swarm};
use super::{
    CheckpointSpec, ClusterSpec, CoordinatorFaults, CrashSpec, EdgeSpec, FaultSpec,
    KeyDistribution, LatencySpike, Limits, NetworkSpec, NotificationFaults, OperatorId,
    OperatorKind, OperatorSpec, Partition, Partitioning, RandomCrashes, RestartStrategy,
    SavepointSpec, Scenario, SlowTask, SourceSpec, StorageFaults, SwarmSpec, WorkerCrash,
    FORMAT_VERSION, MAX_BUFFER_RECORDS, MAX_COPIES, MAX_DURATION, MAX_DURATION_TEXT,
    MAX_PARALLELISM, MAX_RANDOM_CRASHES,
};
use crate::engine::{parse_duration, SimDuration, SimTime};

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
const U32: i64 = u32::MAX as i64;
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

    fn written(&self, path: &str) -> bool {
        (self.line_of)(path).is_some()
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

    /// `n` as a `T` if it lies in `range`; otherwise a problem, which says
    /// so when `n` is above one of the limits on values.
    fn checked<T: TryFrom<i64>>(
        &mut self,
        path: &str,
        n: i64,
        range: RangeInclusive<i64>,
    ) -> Option<T> {
        let key = key_of(path);
        let (message, help) = if n < *range.start() {
            (format!("{key} must be at least {}", range.start()), None)
        } else if n > *range.end() {
            let help = LIMITED.contains(&key).then(|| LIMIT_HELP.to_string());
            (format!("{key} must be at most {}", range.end()), help)
        } else {
            return T::try_from(n).ok();
        };
        self.report(path, message, help);
        None
    }

    /// Like [`Self::checked`], `default` after a problem.
    fn int<T: TryFrom<i64>>(
        &mut self,
        path: &str,
        n: i64,
        range: RangeInclusive<i64>,
        default: T,
    ) -> T {
        self.checked(path, n, range).unwrap_or(default)
    }

    /// An optional integer: `default` when absent or after a problem.
    fn opt_int<T: TryFrom<i64>>(
        &mut self,
        path: &str,
        n: Option<i64>,
        range: RangeInclusive<i64>,
        default: T,
    ) -> T {
        match n {
            Some(n) => self.int(path, n, range, default),
            None => default,
        }
    }

    /// Every duration and time is at most [`MAX_DURATION`].
    fn checked_dur(&mut self, path: &str, d: SimDuration) -> Option<SimDuration> {
        if d <= MAX_DURATION {
            return Some(d);
        }
        let message = format!("{} must be at most {MAX_DURATION_TEXT}", key_of(path));
        self.report(path, message, help(LIMIT_HELP));
        None
    }

    /// A duration, `default` after a problem.
    fn dur(&mut self, path: &str, d: Duration, default: Duration) -> SimDuration {
        self.checked_dur(path, d.0).unwrap_or(default.0)
    }

    /// An optional duration: `default` when absent or after a problem.
    fn opt_dur(&mut self, path: &str, d: Option<Duration>, default: SimDuration) -> SimDuration {
        d.and_then(|d| self.checked_dur(path, d.0))
            .unwrap_or(default)
    }

    /// A duration greater than zero, `default` after a problem.
    fn positive(&mut self, path: &str, d: Duration, default: Duration) -> SimDuration {
        if d.0 == SimDuration::ZERO {
            let message = format!("{} must be greater than 0", key_of(path));
            self.report(path, message, None);
            return default.0;
        }
        self.dur(path, d, default)
    }

    fn required_dur(
        &mut self,
        d: &Option<Duration>,
        table: &str,
        key: &str,
    ) -> Option<SimDuration> {
        let d = self.required(d, table, key)?.0;
        self.checked_dur(&join(table, key), d)
    }

    /// A duration written as text inside an array.
    fn text_dur(&mut self, path: &str, text: &str) -> Option<SimDuration> {
        match parse_duration(text) {
            Ok(d) => self.checked_dur(path, d),
            Err(message) => {
                self.report(path, message, None);
                None
            }
        }
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
            Some(n) if n != i64::from(FORMAT_VERSION) => {
                self.report("version", unsupported_version(n), None)
            }
            Some(_) => {}
        }
        if let Some(name) = self.required(&f.name, "", "name") {
            if name.trim().is_empty() {
                self.report("name", "name must not be empty".to_string(), None);
            }
        }
        let range = 1..=MAX_PARALLELISM.into();
        let max_parallelism = self.checked("max_parallelism", f.max_parallelism, range);
        let network = self.network(f);
        let operators = self.operators(f, max_parallelism);
        let edges = self.edges(f);
        let checkpoint = self.checkpoint(f);
        let cluster = f.cluster.as_ref().map(|c| self.cluster(c, &operators));
        let workers = cluster.as_ref().map(|c| c.workers);
        let faults = self.faults(f, workers);
        let l = (&f.limits, super::schema::Limits::default());
        let limits = Limits {
            max_events: self.int(
                "limits.max_events",
                l.0.max_events,
                1..=i64::MAX,
                50_000_000,
            ),
            max_time: SimTime(
                self.positive("limits.max_time", l.0.max_time, l.1.max_time)
                    .nanos(),
            ),
        };
        let swarm = f.swarm.as_ref().map(|s| self.swarm(s));
        let mut savepoints = Vec::new();
        for (i, sp) in f.savepoints.iter().enumerate() {
            let table = format!("savepoints[{i}]");
            let at = self.required_dur(&sp.at, &table, "at");
            if sp.drain && !sp.stop {
                self.report(
                    join(&table, "drain"),
                    "drain applies only to stop-with-savepoint".to_string(),
                    help("add `stop = true` to this savepoint, or remove `drain`"),
                );
            }
            if let Some(at) = at {
                let (stop, drain) = (sp.stop, sp.drain);
                savepoints.push(SavepointSpec {
                    at: SimTime(at.nanos()),
                    stop,
                    drain,
                });
            }
        }
        savepoints.sort_by_key(|s| s.at);
        let cancel_at = f
            .cancel_at
            .map(|d| self.dur("cancel_at", d, Duration::default()));
        Scenario {
            name: f.name.clone().unwrap_or_default(),
            description: f.description.clone(),
            max_parallelism: max_parallelism.unwrap_or(128),
            operators,
            edges,
            network,
            checkpoint,
            faults,
            limits,
            expect: super::Expect {
                guarantee: f.expect.guarantee,
            },
            swarm,
            savepoints,
            cluster,
            cancel_at: cancel_at.map(|d| SimTime(d.nanos())),
        }
    }

    fn network(&mut self, f: &File) -> NetworkSpec {
        let (n, d) = (&f.network, super::schema::Network::default());
        let latency_min = self.dur("network.latency_min", n.latency_min, d.latency_min);
        let latency_max = self.dur("network.latency_max", n.latency_max, d.latency_max);
        if latency_max < latency_min {
            // At latency_max, unless only latency_min is written.
            let at_max =
                self.written("network.latency_max") || !self.written("network.latency_min");
            let key = if at_max {
                "network.latency_max"
            } else {
                "network.latency_min"
            };
            let message =
                format!("latency_max ({latency_max}) must be at least latency_min ({latency_min})");
            self.report(key, message, None);
        }
        let records = 1..=MAX_BUFFER_RECORDS.into();
        NetworkSpec {
            buffer_records: self.int("network.buffer_records", n.buffer_records, records, 16),
            buffer_credits: self.int("network.buffer_credits", n.buffer_credits, 1..=U32, 2),
            output_buffers: self.int("network.output_buffers", n.output_buffers, 1..=U32, 1),
            latency_min,
            latency_max,
            flush_timeout: self.positive("network.flush_timeout", n.flush_timeout, d.flush_timeout),
            step_quantum: self.dur("network.step_quantum", n.step_quantum, d.step_quantum),
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
            let path = join(&table, "parallelism");
            let range = 1..=MAX_PARALLELISM.into();
            let parallelism = match self.required(&op.parallelism, &table, "parallelism") {
                Some(&p) => self.checked(&path, p, range),
                None => None,
            };
            let kind = kind.map(|kind| self.kind(&table, op, kind, parallelism));
            let keyed = kind.as_ref().is_some_and(OperatorKind::is_keyed);
            if let (true, Some(p), Some(max)) = (keyed, parallelism, max_parallelism) {
                if p > max {
                    self.report(
                        path,
                        format!("parallelism {p} of keyed operator `{id}` exceeds max_parallelism {max}"),
                        help("keyed state is split into max_parallelism key groups: raise max_parallelism or lower the parallelism"),
                    );
                }
            }
            let default_cost = match kind {
                Some(OperatorKind::Source(_)) => SimDuration::from_micros(10),
                _ => SimDuration::from_micros(1),
            };
            specs.push(OperatorSpec {
                id: id.to_string(),
                kind: kind.clone().unwrap_or(OperatorKind::KeyedCount),
                parallelism: parallelism.unwrap_or(1),
                cost: self.opt_dur(&join(&table, "cost"), op.cost, default_cost),
                cost_jitter: self.dur(
                    &join(&table, "cost_jitter"),
                    op.cost_jitter,
                    Duration::default(),
                ),
            });
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

    /// The operator's kind with its keys: those of another kind are
    /// mistakes, the others checked, absent ones at their defaults.
    fn kind(
        &mut self,
        table: &str,
        op: &Operator,
        kind: Kind,
        parallelism: Option<u32>,
    ) -> OperatorKind {
        use Kind::*;
        let keys = [
            ("partitions", Source, op.partitions.is_some()),
            (
                "records_per_partition",
                Source,
                op.records_per_partition.is_some(),
            ),
            ("keys", Source, op.keys.is_some()),
            ("key_distribution", Source, op.key_distribution.is_some()),
            ("value_max", Source, op.value_max.is_some()),
            ("mul", Map, op.mul.is_some()),
            ("add", Map, op.add.is_some()),
            ("modulus", Filter, op.modulus.is_some()),
            ("keep_below", Filter, op.keep_below.is_some()),
            ("copies", FlatMap, op.copies.is_some()),
            ("size", CountWindow, op.size.is_some()),
            ("batch", SinkAtLeastOnce, op.batch.is_some()),
        ];
        let name = name_of(&kind);
        for (key, owner, set) in keys {
            if set && owner != kind {
                self.report(
                    join(table, key),
                    format!("key `{key}` does not apply to an operator of kind `{name}`"),
                    Some(format!(
                        "`{key}` only applies to operators of kind `{}`; remove it",
                        name_of(&owner)
                    )),
                );
            }
        }
        let path = |key: &str| join(table, key);
        const I64: i64 = i64::MAX;
        match kind {
            Source => OperatorKind::Source(SourceSpec {
                partitions: self.opt_int(
                    &path("partitions"),
                    op.partitions,
                    1..=U32,
                    parallelism.unwrap_or(1),
                ),
                records_per_partition: self.opt_int(
                    &path("records_per_partition"),
                    op.records_per_partition,
                    1..=I64,
                    1000,
                ),
                keys: self.opt_int(&path("keys"), op.keys, 1..=I64, 100),
                key_distribution: op.key_distribution.unwrap_or(KeyDistribution::Uniform),
                value_max: self.opt_int(&path("value_max"), op.value_max, 1..=I64, 1),
            }),
            Map => OperatorKind::Map {
                mul: op.mul.unwrap_or(1),
                add: op.add.unwrap_or(0),
            },
            Filter => {
                let modulus = op
                    .modulus
                    .map_or(Some(2), |n| self.checked(&path("modulus"), n, 1..=I64));
                let keep_below = op
                    .keep_below
                    .map_or(Some(1), |n| self.checked(&path("keep_below"), n, 0..=I64));
                if let (Some(m), Some(k), true) = (modulus, keep_below, op.keep_below.is_some()) {
                    if k > m {
                        self.report(
                            path("keep_below"),
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
            FlatMap => OperatorKind::FlatMap {
                copies: self.opt_int(&path("copies"), op.copies, 1..=MAX_COPIES.into(), 2),
            },
            KeyedCount => OperatorKind::KeyedCount,
            KeyedSum => OperatorKind::KeyedSum,
            CountWindow => OperatorKind::CountWindow {
                size: self.opt_int(&path("size"), op.size, 1..=U32, 10),
            },
            Sink2pc => OperatorKind::Sink2pc,
            SinkAtLeastOnce => OperatorKind::SinkAtLeastOnce {
                batch: self.opt_int(&path("batch"), op.batch, 1..=MAX_BUFFER_RECORDS.into(), 1),
            },
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
        let (c, d) = (&f.checkpoint, super::schema::Checkpoint::default());
        let path = |key: &str| join("checkpoint", key);
        let default_interval = SimDuration::from_secs(1);
        let interval = c
            .interval
            .0
            .map(|i| match self.checked_dur(&path("interval"), i) {
                Some(SimDuration::ZERO) => {
                    self.report(
                        path("interval"),
                        "interval must be greater than 0".to_string(),
                        help("write interval = \"none\" to disable periodic checkpoints"),
                    );
                    default_interval
                }
                i => i.unwrap_or(default_interval),
            });
        let first_delay = interval.unwrap_or(SimDuration::ZERO);
        let first_delay = self.opt_dur(&path("first_delay"), c.first_delay, first_delay);
        let max_concurrent = self.int(&path("max_concurrent"), c.max_concurrent, 1..=U32, 1);
        if let Some(limit) = c.algorithm.max_concurrent().filter(|&l| max_concurrent > l) {
            self.report(
                path("max_concurrent"),
                format!(
                    "algorithm `{}` allows at most {limit} concurrent checkpoint, not {max_concurrent}",
                    c.algorithm.name()
                ),
                Some(format!(
                    "set max_concurrent = {limit} (Flink refuses more with unaligned checkpoints)"
                )),
            );
        }
        let (latency, bandwidth) = super::schema::Checkpoint::storage_speed(c.storage);
        CheckpointSpec {
            algorithm: c.algorithm,
            interval,
            first_delay,
            min_pause: self.dur(&path("min_pause"), c.min_pause, d.min_pause),
            timeout: self.positive(&path("timeout"), c.timeout, d.timeout),
            max_concurrent,
            alignment_timeout: self.dur(
                &path("alignment_timeout"),
                c.alignment_timeout,
                d.alignment_timeout,
            ),
            tolerable_failures: self.int(
                &path("tolerable_failures"),
                c.tolerable_failures,
                0..=U32,
                0,
            ),
            retained: self.int(&path("retained"), c.retained, 1..=U32, 1),
            retain_on_cancel: c.retain_on_cancel,
            storage: c.storage,
            storage_latency: self.opt_dur(&path("storage_latency"), c.storage_latency, latency),
            storage_bytes_per_sec: self.opt_int(
                &path("storage_bytes_per_sec"),
                c.storage_bytes_per_sec,
                1..=i64::MAX,
                bandwidth,
            ),
            rpc_latency: self.dur(&path("rpc_latency"), c.rpc_latency, d.rpc_latency),
        }
    }

    /// `[cluster]`: enough slots for the highest parallelism.
    fn cluster(&mut self, c: &super::schema::Cluster, operators: &[OperatorSpec]) -> ClusterSpec {
        let d = super::schema::Cluster::default();
        let workers = self.int("cluster.workers", c.workers, 1..=100_000, 2);
        let slots_per_worker = self.int(
            "cluster.slots_per_worker",
            c.slots_per_worker,
            1..=100_000,
            1,
        );
        let needed = operators.iter().map(|o| o.parallelism).max().unwrap_or(1);
        let slots = u64::from(workers) * u64::from(slots_per_worker);
        if slots < u64::from(needed) {
            self.report(
                "cluster",
                format!(
                    "the cluster has {slots} slots ({workers} workers × {slots_per_worker}) but the highest parallelism is {needed}"
                ),
                help("with slot sharing, slot i runs subtask i of every operator: add workers or slots_per_worker"),
            );
        }
        ClusterSpec {
            workers,
            slots_per_worker,
            placement: c.placement,
            heartbeat_timeout: self.dur(
                "cluster.heartbeat_timeout",
                c.heartbeat_timeout,
                d.heartbeat_timeout,
            ),
            replacement_delay: self.dur(
                "cluster.replacement_delay",
                c.replacement_delay,
                d.replacement_delay,
            ),
        }
    }

    /// `[faults]` and its tables; `workers` is the cluster's, if it has one.
    fn faults(&mut self, f: &File, workers: Option<u32>) -> FaultSpec {
        let x = &f.faults;
        let mut worker_crashes = Vec::new();
        for (i, w) in x.worker_crashes.iter().enumerate() {
            let table = format!("faults.worker_crashes[{i}]");
            let at = self.required_dur(&w.at, &table, "at");
            let Some(workers) = self.cluster_for(workers, &table, "worker crashes need") else {
                continue;
            };
            let worker = self.required(&w.worker, &table, "worker").copied();
            let worker = worker.and_then(|n| self.worker(&table, n, workers));
            if let (Some(at), Some(worker)) = (at, worker) {
                let at = SimTime(at.nanos());
                worker_crashes.push(WorkerCrash { at, worker });
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
                (Some(n), Some(workers)) => self.worker(&table, n, workers).map(Some),
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
            let mut cut: Vec<u32> = Vec::new();
            for &w in list {
                match u32::try_from(w).ok().filter(|&w| w < workers) {
                    Some(w) if !cut.contains(&w) => cut.push(w),
                    Some(_) => {}
                    None => {
                        let last = workers - 1;
                        let message = format!(
                            "worker {w} does not exist: the cluster has workers 0 to {last}"
                        );
                        self.report(path.clone(), message, None);
                    }
                }
            }
            let bad = list
                .iter()
                .any(|&w| u32::try_from(w).map_or(true, |w| w >= workers));
            if !bad && (cut.is_empty() || cut.len() as u64 >= u64::from(workers)) {
                let message = "a partition cuts off some workers, not none or all".to_string();
                self.report(path, message, None);
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
        let d = super::schema::Faults::default();
        let detection_delay = self.dur(
            "faults.detection_delay",
            x.detection_delay,
            d.detection_delay,
        );
        let restart_delay = self.dur("faults.restart_delay", x.restart_delay, d.restart_delay);
        let max_restarts = self.int("faults.max_restarts", x.max_restarts, 0..=U32, 1000);
        let mut crashes = Vec::new();
        for (i, c) in x.crashes.iter().enumerate() {
            let table = format!("faults.crashes[{i}]");
            let at = self.required_dur(&c.at, &table, "at");
            if let (Some(at), Some((operator, subtask))) = (at, self.task(&table, &c.task)) {
                let at = SimTime(at.nanos());
                crashes.push(CrashSpec {
                    at,
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
        let notifications = x.notifications.as_ref().map(|n| NotificationFaults {
            loss_percent: self.int(
                "faults.notifications.loss_percent",
                n.loss_percent,
                0..=100,
                0,
            ),
        });
        let storage = x.storage.as_ref().map(|s| StorageFaults {
            failure_percent: self.int(
                "faults.storage.failure_percent",
                s.failure_percent,
                0..=100,
                0,
            ),
            slow_percent: self.int("faults.storage.slow_percent", s.slow_percent, 0..=100, 0),
            slow_latency: self.dur(
                "faults.storage.slow_latency",
                s.slow_latency,
                super::schema::StorageFaults::default().slow_latency,
            ),
        });
        let coordinator = x.coordinator.as_ref().map(|c| {
            let table = "faults.coordinator";
            let crashes = c.crashes.iter().enumerate();
            let crashes =
                crashes.filter_map(|(i, t)| self.text_dur(&format!("{table}.crashes[{i}]"), t));
            let crashes = crashes.map(|d| SimTime(d.nanos())).collect();
            let random = c
                .random
                .as_ref()
                .and_then(|r| self.random(r, "faults.coordinator.random"));
            let default = super::schema::Coordinator::default().failover_delay;
            CoordinatorFaults {
                failover_delay: self.dur(&join(table, "failover_delay"), c.failover_delay, default),
                on_memory_loss: c.on_memory_loss,
                crashes,
                random,
            }
        });
        let mut slow_tasks = Vec::new();
        for (i, s) in x.slow_tasks.iter().enumerate() {
            let table = format!("faults.slow_tasks[{i}]");
            let from = self.checked_dur(&join(&table, "from"), s.from.0);
            let until = self.required_dur(&s.until, &table, "until");
            let factor = self.int(&join(&table, "factor"), s.factor, 1..=1_000_000, 10);
            if let (Some(from), Some(until)) = (from, until) {
                if until <= from {
                    let message = format!("until ({until}) must be after from ({from})");
                    self.report(join(&table, "until"), message, None);
                }
            }
            let task = self.task(&table, &s.task);
            if let (Some(from), Some(until), Some((operator, subtask))) = (from, until, task) {
                slow_tasks.push(SlowTask {
                    operator,
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
            let message = format!("{what} a [cluster] section");
            self.report(table, message, help(CLUSTER_HELP));
        }
        workers
    }

    /// `worker` in `table`: an index below `workers`.
    fn worker(&mut self, table: &str, n: i64, workers: u32) -> Option<u32> {
        self.checked(&join(table, "worker"), n, 0..=i64::from(workers) - 1)
    }

    /// A `from`/`until` window: `until` is required and after `from`.
    fn window(
        &mut self,
        table: &str,
        from: Duration,
        until: &Option<Duration>,
    ) -> Option<(SimTime, SimTime)> {
        let from = self.checked_dur(&join(table, "from"), from.0);
        let until = self.required_dur(until, table, "until");
        let (from, until) = (from?, until?);
        if until <= from {
            let message = format!("until ({until}) must be after from ({from})");
            self.report(join(table, "until"), message, None);
            return None;
        }
        Some((SimTime(from.nanos()), SimTime(until.nanos())))
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
        let start = self.checked_dur(&join(table, "window_start"), r.window_start.0);
        let end = self.required_dur(&r.window_end, table, "window_end");
        if let (Some(start), Some(end)) = (start, end) {
            if end <= start {
                let message = format!("window_end ({end}) must be after window_start ({start})");
                self.report(join(table, "window_end"), message, None);
            }
        }
        let range = 0..=MAX_RANDOM_CRASHES.into();
        let max_crashes = self.int(&join(table, "max_crashes"), r.max_crashes, range, 3);
        Some(RandomCrashes {
            mean_interval: mean?,
            window_start: SimTime(start?.nanos()),
            window_end: SimTime(end?.nanos()),
            max_crashes,
        })
    }

    /// `[faults.restart]`; keys of another strategy are mistakes.
    fn restart(&mut self, f: &File) -> RestartStrategy {
        use Strategy::{ExponentialDelay as Exp, FailureRate as Rate};
        let (r, table) = (&f.faults.restart, "faults.restart");
        let keys = [
            ("max_backoff", Exp, r.max_backoff.is_some()),
            ("backoff_multiplier", Exp, r.backoff_multiplier.is_some()),
            ("reset_threshold", Exp, r.reset_threshold.is_some()),
            ("max_failures", Rate, r.max_failures.is_some()),
            ("interval", Rate, r.interval.is_some()),
        ];
        for (key, owner, set) in keys {
            if set && owner != r.strategy {
                let (owner, strategy) = (name_of(&owner), name_of(&r.strategy));
                self.report(
                    join(table, key),
                    format!("{key} belongs to the {owner} restart strategy, not {strategy}"),
                    Some(format!("remove {key}, or set strategy = \"{owner}\"")),
                );
            }
        }
        let secs = SimDuration::from_secs;
        match r.strategy {
            Strategy::FixedDelay => RestartStrategy::FixedDelay,
            Exp => {
                let multiplier_permille = match r.backoff_multiplier {
                    Some(m) if !(1.0..=1000.0).contains(&m) => {
                        let message = format!("backoff_multiplier must lie in 1..=1000, not {m}");
                        self.report(join(table, "backoff_multiplier"), message, None);
                        1500
                    }
                    Some(m) => (m * 1000.0).round() as u32,
                    None => 1500,
                };
                RestartStrategy::ExponentialDelay {
                    max_backoff: self.opt_dur(&join(table, "max_backoff"), r.max_backoff, secs(60)),
                    multiplier_permille,
                    reset_threshold: self.opt_dur(
                        &join(table, "reset_threshold"),
                        r.reset_threshold,
                        secs(3_600),
                    ),
                }
            }
            Rate => RestartStrategy::FailureRate {
                max_failures: self.opt_int(
                    &join(table, "max_failures"),
                    r.max_failures,
                    1..=U32,
                    1,
                ),
                interval: self.positive(
                    &join(table, "interval"),
                    r.interval.unwrap_or(Duration(secs(60))),
                    Duration(secs(60)),
                ),
            },
        }
    }

    fn swarm(&mut self, s: &Swarm) -> SwarmSpec {
        let (records, crashes) = (MAX_BUFFER_RECORDS.into(), MAX_RANDOM_CRASHES.into());
        SwarmSpec {
            enabled: s.enabled,
            latency_max: self.durations("latency_max", &s.latency_max, false),
            buffer_records: self.ints("buffer_records", &s.buffer_records, 1..=records),
            buffer_credits: self.ints("buffer_credits", &s.buffer_credits, 1..=U32),
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

    /// A `[min, max]` range of `[swarm]`: two elements, checked by `check`,
    /// in order.
    fn range<T: Clone, U: PartialOrd + std::fmt::Display>(
        &mut self,
        key: &str,
        value: &Option<Vec<T>>,
        check: impl Fn(&mut Self, &str, T) -> Option<U>,
    ) -> Option<(U, U)> {
        let path = format!("swarm.{key}");
        let [a, b] = value.as_deref()? else {
            self.report(
                path,
                format!("{key} must be a range of two values, [min, max]"),
                Some(format!("for example {key} = [1, 8]")),
            );
            return None;
        };
        let a = check(self, &path, a.clone())?;
        let b = check(self, &path, b.clone())?;
        if a > b {
            let message = format!("{key} range is empty: {a} > {b}");
            self.report(path, message, help("write [min, max]"));
            return None;
        }
        Some((a, b))
    }

    fn ints(
        &mut self,
        key: &str,
        value: &Option<Vec<i64>>,
        range: RangeInclusive<i64>,
    ) -> Option<(u32, u32)> {
        self.range(key, value, |v, path, n| {
            if range.contains(&n) {
                return u32::try_from(n).ok();
            }
            let (lo, hi) = (range.start(), range.end());
            let help = (n > *hi && LIMITED.contains(&key)).then(|| LIMIT_HELP.to_string());
            v.report(
                path,
                format!("{key} bounds must lie in {lo}..={hi}, not {n}"),
                help,
            );
            None
        })
    }

    fn durations(
        &mut self,
        key: &str,
        value: &Option<Vec<String>>,
        positive: bool,
    ) -> Option<(SimDuration, SimDuration)> {
        self.range(key, value, |v, path, text| {
            let (message, help) = match parse_duration(&text) {
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
            v.report(path, message, help);
            None
        })
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
