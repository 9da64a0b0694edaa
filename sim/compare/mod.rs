//! Comparing algorithm variants: the same scenario and seeds (so the same
//! input records and crash times, by the per-concern random streams) under
//! several algorithms, optionally along one configuration axis
//! (`--vary KEY=v1,v2,…`), with per-checkpoint and per-run metrics
//! aggregated across seeds. [`output`] writes the results directory: a
//! README with tables and a reading, `results.json`, `results.csv` and SVG
//! charts.
//!
//! A run that panics (a bug of ckptsim itself) is a failed run with its
//! message and replay line, left out of every metric; the comparison goes
//! on with the other runs.

pub mod output;

use crate::harness::execute;
use crate::mutant::Mutants;
use crate::panics::{self, Panicked, PANIC};
use crate::report::{percentile, replay_command};
use crate::runtime::coordinator::Outcome as CpOutcome;
use crate::runtime::RunConfig;
use crate::scenario::{self, did_you_mean, schema::File, Algorithm, Scenario};
use crate::sweep::SeedRange;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One configuration axis: a key path in the scenario file and its values.
/// Several `--vary` make one axis of every combination of their values
/// ([`Vary::product`]): its key is theirs joined by ` × `, each value one
/// combination, the first axis varying slowest.
#[derive(Clone, Debug, Serialize)]
pub struct Vary {
    /// `table.key` (e.g. `checkpoint.interval`, `network.buffer_credits`) or
    /// `operators.ID.key` (e.g. `operators.sink.cost`), or
    /// `operators.ID.params.key` for a registered kind's parameter.
    pub key: String,
    pub values: Vec<String>,
    /// The axes a product is made of (empty for a single axis).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub axes: Vec<Vary>,
}

/// What joins the keys and the values of a product axis.
pub const PRODUCT: &str = " × ";

impl Vary {
    /// Parses `KEY=v1,v2,…`.
    pub fn parse(text: &str) -> Result<Vary, String> {
        let (key, values) = text.split_once('=').ok_or_else(|| {
            format!(
                "invalid --vary `{text}`: expected KEY=v1,v2,… e.g. checkpoint.interval=100ms,1s"
            )
        })?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if key.trim().is_empty() || values.iter().any(String::is_empty) {
            return Err(format!("invalid --vary `{text}`: empty key or value"));
        }
        Ok(Vary {
            key: key.trim().to_string(),
            values,
            axes: Vec::new(),
        })
    }

    /// One axis of every combination of `axes`' values (`None` for none,
    /// the axis itself for one). A key given twice is refused.
    pub fn product(axes: Vec<Vary>) -> Result<Option<Vary>, String> {
        if let Some(k) = axes
            .iter()
            .enumerate()
            .find(|(i, a)| axes[..*i].iter().any(|b| b.key == a.key))
        {
            return Err(format!("--vary {} is given twice", k.1.key));
        }
        if axes.len() < 2 {
            return Ok(axes.into_iter().next());
        }
        let mut values = vec![String::new()];
        for a in &axes {
            values = values
                .iter()
                .flat_map(|v| {
                    a.values.iter().map(move |x| match v.is_empty() {
                        true => x.clone(),
                        false => format!("{v}{PRODUCT}{x}"),
                    })
                })
                .collect();
        }
        Ok(Some(Vary {
            key: axes
                .iter()
                .map(|a| a.key.as_str())
                .collect::<Vec<_>>()
                .join(PRODUCT),
            values,
            axes,
        }))
    }

    /// Each `(key, value)` the `index`-th value sets.
    pub fn settings(&self, index: usize) -> Vec<(&str, &str)> {
        if self.axes.is_empty() {
            return vec![(&self.key, &self.values[index])];
        }
        let mut rest = index;
        let mut out = Vec::with_capacity(self.axes.len());
        for a in self.axes.iter().rev() {
            out.push((a.key.as_str(), a.values[rest % a.values.len()].as_str()));
            rest /= a.values.len();
        }
        out.reverse();
        out
    }
}

/// Sets `key` to `value` in the scenario's file form ([`File`], as a
/// `toml::Value`: no text is written or parsed) and validates the result
/// like a file. The key may be one the file does not set, if the schema
/// knows it. The value takes the type the schema gives the key, not the
/// type of the file's current value: it is read as a TOML boolean, integer
/// or float where it looks like one and as a string otherwise, and the
/// first reading the schema accepts is the one used (`true` for a flag,
/// `100` for a count, `100ms` for a duration, quotes optional).
pub fn apply(scenario: &Scenario, key: &str, value: &str) -> Result<Scenario, String> {
    let mut doc = toml::Table::try_from(File::from(scenario)).map_err(|e| e.to_string())?;
    // A key whose default follows the varied one moves with it, unless the
    // scenario set it apart: the first trigger's delay is the interval.
    let c = &scenario.checkpoint;
    if key == "checkpoint.interval" && c.interval.unwrap_or_default() == c.first_delay {
        if let Some(t) = doc.get_mut("checkpoint").and_then(|v| v.as_table_mut()) {
            t.remove("first_delay");
        }
    }
    let doc = doc;
    let edited = key.rsplit('.').next().unwrap_or(key);
    let mut type_error = None;
    let mut value_error = None;
    for reading in readings(value) {
        let whole = toml::Value::Table(with_value(&doc, key, reading)?);
        // Whether the schema takes this type for the key (deserializing
        // checks types and names, not values).
        let typed = File::deserialize(whole.clone()).is_ok();
        match scenario::from_value(whole, edited, "varied") {
            Ok(sc) => return Ok(sc),
            Err(e) if typed => {
                value_error.get_or_insert(e);
            }
            Err(e) => {
                type_error.get_or_insert(e);
            }
        }
    }
    if value_error.is_none() {
        if let Some(unknown) = type_error.as_ref().and_then(|e| unknown_key(key, e)) {
            return Err(unknown);
        }
    }
    let e = value_error
        .or(type_error)
        .map_or(String::new(), |e| e.to_string());
    Err(format!("--vary {key}={value}: {e}"))
}

/// A key the schema does not know (serde's "unknown field `k`, expected
/// one of `a`, …" for the key itself), said as where it was looked for,
/// with the closest known key.
fn unknown_key(key: &str, e: &scenario::ScenarioErrors) -> Option<String> {
    let k = key.rsplit('.').next().unwrap_or(key);
    let message = &e.0.first()?.message;
    let expected = message.strip_prefix(&format!("unknown field `{k}`, expected "))?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let hint = did_you_mean(k, &known, "keys");
    let parts: Vec<&str> = key.split('.').collect();
    Some(match parts.as_slice() {
        ["operators", id, ..] => format!("--vary {key}: operator `{id}` has no key `{k}`; {hint}"),
        [table, _] => format!("--vary {key}: no key `{k}` in [{table}]; {hint}"),
        _ => format!("--vary {key}: no key `{k}`; {hint}"),
    })
}

/// The ways a `--vary` value may be read, in the order tried: a boolean,
/// an integer (`_` separators allowed) or a float where it looks like one,
/// then always a string (a `"`-quoted value only as that string).
fn readings(value: &str) -> Vec<toml::Value> {
    let mut out = Vec::new();
    if let Some(quoted) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return vec![toml::Value::String(quoted.to_string())];
    }
    match value {
        "true" => out.push(toml::Value::Boolean(true)),
        "false" => out.push(toml::Value::Boolean(false)),
        _ => {}
    }
    let digits = value.replace('_', "");
    if let Ok(n) = digits.parse::<i64>() {
        out.push(toml::Value::Integer(n));
    } else if let Ok(x) = digits.parse::<f64>() {
        if x.is_finite() && value.chars().any(|c| c.is_ascii_digit()) {
            out.push(toml::Value::Float(x));
        }
    }
    out.push(toml::Value::String(value.to_string()));
    out
}

/// `doc` with `key` (`KEY` at the top level, `table.key`,
/// `operators.ID.key` or `operators.ID.params.key`) set to `value`; a
/// table on the way that the file does not have is added. Whether the
/// schema knows the key is the deserializer's to say.
fn with_value(doc: &toml::Table, key: &str, value: toml::Value) -> Result<toml::Table, String> {
    let mut doc = doc.clone();
    let parts: Vec<&str> = key.split('.').collect();
    let table: &mut toml::Table = match parts.as_slice() {
        ["operators", id, rest @ ..] if matches!(rest, [_] | ["params", _]) => {
            let ops = doc
                .get_mut("operators")
                .and_then(|v| v.as_array_mut())
                .ok_or("the scenario has no operators")?;
            let ids: Vec<String> = ops
                .iter()
                .filter_map(|o| o.get("id").and_then(|v| v.as_str()).map(String::from))
                .collect();
            let op = ops
                .iter_mut()
                .find(|o| o.get("id").and_then(|v| v.as_str()) == Some(id))
                .ok_or_else(|| {
                    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                    format!(
                        "--vary {key}: no operator `{id}`; {}",
                        did_you_mean(id, &ids, "operators")
                    )
                })?;
            let op = op.as_table_mut().ok_or("an operator is not a table")?;
            match rest {
                ["params", _] => subtable(op, "params", key)?,
                _ => op,
            }
        }
        [_] => &mut doc,
        [table, _] => subtable(&mut doc, table, key)?,
        _ => {
            return Err(format!(
                "--vary {key}: expected KEY, table.key, operators.ID.key or operators.ID.params.key"
            ))
        }
    };
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(doc)
}

/// The table `name` of `t`, added empty if `t` has none.
fn subtable<'a>(
    t: &'a mut toml::Table,
    name: &str,
    key: &str,
) -> Result<&'a mut toml::Table, String> {
    t.entry(name.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("--vary {key}: `{name}` is not a table"))
}

/// Every axis value applied to the scenario, in order; the first that does
/// not apply is an error, before any run.
pub fn varied(spec: &CompareSpec) -> Result<Vec<(Option<String>, Scenario)>, String> {
    match &spec.vary {
        Some(vary) => vary
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut sc = spec.scenario.clone();
                for (key, value) in vary.settings(i) {
                    sc = apply(&sc, key, value)?;
                }
                Ok((Some(v.clone()), sc))
            })
            .collect(),
        None => Ok(vec![(None, spec.scenario.clone())]),
    }
}

/// The metrics of one run (one algorithm, one seed, one axis value).
#[derive(Clone, Debug, Serialize)]
pub struct RunMetrics {
    pub algorithm: String,
    pub seed: u64,
    /// The axis value, when varying.
    pub vary: Option<String>,
    pub passed: bool,
    pub guarantee: String,
    pub checkpoints_completed: u64,
    pub checkpoints_aborted: u64,
    /// Per completed checkpoint.
    pub duration_ns: Vec<u64>,
    pub alignment_ns: Vec<u64>,
    pub start_delay_ns: Vec<u64>,
    pub state_bytes: Vec<u64>,
    /// What the snapshots wrote for the checkpoint and the bytes of every
    /// file it refers to (`CheckpointStats::persisted_bytes`, `full_bytes`).
    pub persisted_bytes: Vec<u64>,
    pub full_bytes: Vec<u64>,
    pub in_flight_bytes: Vec<u64>,
    /// Records the sinks took in per virtual second, until they took in
    /// their last one (replays after a failure count, as in Flink's
    /// `numRecordsInPerSecond`; `records_replayed` says how many).
    pub throughput_rps: f64,
    /// Records the sources emitted per virtual second, until the last
    /// source ran out of input (`report::input_rps`): what the job read,
    /// which a window or a filter does not thin out as it does the sinks'.
    pub input_rps: f64,
    /// Source emit → committed, over committed records.
    pub latency_p50_ns: u64,
    pub latency_p99_ns: u64,
    /// Watermark lag (`runtime::watermarks::WatermarkLag`): a source's
    /// emit of a watermark → a sink's input reached it, over the
    /// watermarks that reached a sink; none without event time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watermark_lag_p50_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watermark_lag_p99_ns: Option<u64>,
    /// Per failure: failure → every source partition re-emitted what it had
    /// emitted when the job was stopped.
    pub recovery_ns: Vec<u64>,
    /// Per restore from checkpoint files: its slowest task's time reading
    /// and replaying its state (`RunOutput::restore_ns`).
    pub restore_ns: Vec<u64>,
    pub records_replayed: u64,
    /// The uncoordinated families: checkpoints their rule forced, those a
    /// recovery line rolled back over (CheckMate's "useless"), and the
    /// bytes of their protocol (message logs and piggybacks).
    pub forced_checkpoints: u64,
    pub rolled_back_checkpoints: u64,
    pub protocol_bytes: u64,
    pub virtual_time_ns: u64,
    pub events: u64,
    /// The checks that failed (`["panic"]` for a run that panicked).
    pub failed_checks: Vec<String>,
    /// The run panicked instead of returning: every metric above is empty
    /// and the run is left out of the group's metrics.
    pub panic: Option<Panicked>,
    /// `ckptsim run` line of a failed run (with `--vary`, a comment names
    /// the axis value to set in the scenario file).
    pub replay: Option<String>,
}

/// Median, 99th percentile, minimum and maximum of a metric.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Stat {
    pub n: u64,
    pub p50: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    pub fn of(values: &[f64]) -> Stat {
        if values.is_empty() {
            return Stat::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let pct = |p: u64| {
            let rank = (p * v.len() as u64).div_ceil(100).max(1);
            v[(rank - 1) as usize]
        };
        Stat {
            n: v.len() as u64,
            p50: pct(50),
            p99: pct(99),
            min: v[0],
            max: v[v.len() - 1],
        }
    }
}

/// The metrics of a [`Group`] of a job with event time, after [`METRICS`].
pub const WATERMARK_METRICS: &[(&str, &str)] = &[
    (
        "watermark_lag_p50_ms",
        "watermark lag p50 (ms, per run): a source emits a watermark → a sink's input reaches it",
    ),
    ("watermark_lag_p99_ms", "watermark lag p99 (ms, per run)"),
];

/// The metrics names of a [`Group`], in report order.
pub const METRICS: &[(&str, &str)] = &[
    (
        "checkpoint_duration_ms",
        "checkpoint duration (ms, per completed checkpoint)",
    ),
    (
        "alignment_ms",
        "alignment, slowest task (ms, per completed checkpoint)",
    ),
    (
        "start_delay_ms",
        "start delay, slowest task (ms, per completed checkpoint)",
    ),
    (
        "state_kib",
        "operator state (KiB, per completed checkpoint)",
    ),
    (
        "in_flight_kib",
        "persisted in-flight data (KiB, per completed checkpoint)",
    ),
    (
        "checkpointed_kib",
        "operator state written for the checkpoint (KiB, per completed checkpoint; Flink's checkpointed data size: what an incremental or changelog backend wrote new)",
    ),
    (
        "full_kib",
        "every file the checkpoint refers to, shared ones included (KiB, per completed checkpoint; Flink's full checkpoint data size)",
    ),
    (
        "throughput_rps",
        "throughput (records into the sinks per virtual second, per run)",
    ),
    (
        "input_rps",
        "input throughput (records the sources emitted per virtual second, per run)",
    ),
    ("latency_p50_ms", "end-to-end latency p50 (ms, per run)"),
    ("latency_p99_ms", "end-to-end latency p99 (ms, per run)"),
    (
        "recovery_ms",
        "recovery time (ms, failure → every source partition back at its pre-failure position, per failure)",
    ),
    (
        "restore_ms",
        "restore time (ms, per restore from checkpoint files: the slowest task reading its files and replaying its changelog)",
    ),
    ("records_replayed", "records replayed (per run)"),
    ("checkpoints_completed", "checkpoints completed (per run)"),
    (
        "forced_checkpoints",
        "checkpoints a communication-induced rule forced (per run)",
    ),
    (
        "rolled_back_checkpoints",
        "checkpoints a recovery line rolled back over (per run)",
    ),
    (
        "protocol_kib",
        "message log and piggyback bytes (KiB, per run)",
    ),
];

/// Some checkpoint wrote files (its state written differs from its
/// state, or a restore read files): the tables then carry the storage
/// columns (checkpointed and full size, restore time).
pub(crate) fn has_files(c: &Comparison) -> bool {
    c.runs
        .iter()
        .any(|r| !r.restore_ns.is_empty() || r.persisted_bytes != r.state_bytes)
}

/// Some run measured watermark lag (the job has event time).
pub(crate) fn has_event_time(c: &Comparison) -> bool {
    c.runs.iter().any(|r| r.watermark_lag_p50_ns.is_some())
}

/// Whether a comparison holds an uncoordinated algorithm: its tables then
/// carry their columns (forced and rolled-back checkpoints, protocol
/// bytes).
pub(crate) fn has_local(algorithms: impl IntoIterator<Item = impl AsRef<str>>) -> bool {
    algorithms.into_iter().any(|a| {
        crate::protocol::Algorithm::from_name(a.as_ref())
            .is_some_and(|a| a.info().coordination.is_local())
    })
}

/// One algorithm at one axis value, aggregated over seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    pub algorithm: String,
    pub vary: Option<String>,
    pub runs: u64,
    /// Runs that failed their checks or panicked.
    pub failed_runs: u64,
    /// Runs that panicked (counted in `failed_runs`, left out of `metrics`).
    pub panicked_runs: u64,
    /// Keyed by the names in [`METRICS`].
    pub metrics: BTreeMap<String, Stat>,
}

/// A whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub scenario: String,
    /// The command that produced it.
    pub command: String,
    pub algorithms: Vec<String>,
    /// Mutants switched on in every run (`--mutant`).
    pub mutants: Vec<String>,
    pub seeds: String,
    pub vary: Option<Vary>,
    /// Each seed drew its configuration (`--swarm`).
    pub swarm: bool,
    pub groups: Vec<Group>,
    pub runs: Vec<RunMetrics>,
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct CompareSpec {
    pub scenario: Scenario,
    pub path: String,
    pub algorithms: Vec<Algorithm>,
    pub seeds: SeedRange,
    pub vary: Option<Vary>,
    /// Deliberate bugs switched on in every run (normally none).
    pub mutants: Mutants,
    /// Swarm ranges: each seed's run (every algorithm's, at every axis
    /// value) draws its configuration from them, after the axis value is
    /// set.
    pub swarm: Option<crate::scenario::SwarmSpec>,
    pub command: String,
}

fn run_one(
    spec: &CompareSpec,
    sc: &Scenario,
    algorithm: Algorithm,
    seed: u64,
    vary: Option<String>,
) -> RunMetrics {
    let cfg = RunConfig {
        seed,
        algorithm,
        mutants: spec.mutants,
        record_trace: false,
    };
    let mut replay = replay_command(&spec.path, seed, algorithm.name(), &spec.mutants.names());
    if spec.swarm.is_some() {
        replay.push_str(" --swarm");
    }
    if let (Some(v), Some(axis)) = (&vary, &spec.vary) {
        let i = axis.values.iter().position(|x| x == v).unwrap_or(0);
        let set: Vec<String> = axis
            .settings(i)
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        replay.push_str(&format!("  # with {}", set.join(", ")));
    }
    let e = match panics::catch(|| {
        let drawn = spec
            .swarm
            .as_ref()
            .map(|ranges| match crate::swarm::draw(sc, ranges, seed) {
                Ok((drawn, _)) => drawn,
                // Never run: the seed fails as this message.
                Err(invalid) => panic!("{invalid}"),
            });
        execute(drawn.as_ref().unwrap_or(sc), &cfg)
    }) {
        Ok(e) => e,
        Err(p) => return RunMetrics::panicked(algorithm, seed, vary, p, replay),
    };
    RunMetrics::measured(algorithm, seed, vary, &e, replay)
}

impl RunMetrics {
    /// A run that panicked: it measured nothing and fails as a panic.
    fn panicked(
        algorithm: Algorithm,
        seed: u64,
        vary: Option<String>,
        p: Panicked,
        replay: String,
    ) -> RunMetrics {
        RunMetrics {
            algorithm: algorithm.name().to_string(),
            seed,
            vary,
            passed: false,
            guarantee: "unknown".to_string(),
            checkpoints_completed: 0,
            checkpoints_aborted: 0,
            duration_ns: Vec::new(),
            alignment_ns: Vec::new(),
            start_delay_ns: Vec::new(),
            state_bytes: Vec::new(),
            persisted_bytes: Vec::new(),
            full_bytes: Vec::new(),
            in_flight_bytes: Vec::new(),
            throughput_rps: 0.0,
            input_rps: 0.0,
            latency_p50_ns: 0,
            latency_p99_ns: 0,
            watermark_lag_p50_ns: None,
            watermark_lag_p99_ns: None,
            recovery_ns: Vec::new(),
            restore_ns: Vec::new(),
            records_replayed: 0,
            forced_checkpoints: 0,
            rolled_back_checkpoints: 0,
            protocol_bytes: 0,
            virtual_time_ns: 0,
            events: 0,
            failed_checks: vec![PANIC.to_string()],
            panic: Some(p),
            replay: Some(replay),
        }
    }

    /// A run's metrics from its execution.
    fn measured(
        algorithm: Algorithm,
        seed: u64,
        vary: Option<String>,
        e: &crate::harness::Execution,
        replay: String,
    ) -> RunMetrics {
        let o = &e.output;
        let done: Vec<_> = o
            .checkpoint_stats
            .iter()
            .filter(|s| s.outcome == CpOutcome::Completed)
            .collect();
        let mut latency: Vec<u64> = o
            .store
            .committed()
            .iter()
            .map(|r| r.committed_at.since(r.emitted_at).0)
            .collect();
        latency.sort_unstable();
        let mut lag = o.evidence.watermarks.lag.lags_ns.clone();
        lag.sort_unstable();
        let lag_at = |p: u64| (!lag.is_empty()).then(|| percentile(&lag, p));
        // Throughput is measured where the job delivers (sources fill
        // channel buffers long before backpressure slows them, so a
        // source-side rate overstates what the sinks can absorb), and the
        // input rate next to it (a window emits fewer records than it reads,
        // so the sinks' rate alone understates what it processed).
        RunMetrics {
            algorithm: algorithm.name().to_string(),
            seed,
            vary,
            passed: e.verdict.passed,
            guarantee: e.verdict.guarantee.name().to_string(),
            checkpoints_completed: o.counters.checkpoints_completed,
            checkpoints_aborted: o.counters.checkpoints_aborted,
            duration_ns: done.iter().map(|s| s.duration_ns).collect(),
            alignment_ns: done.iter().map(|s| s.alignment_max_ns).collect(),
            start_delay_ns: done.iter().map(|s| s.start_delay_max_ns).collect(),
            state_bytes: done.iter().map(|s| s.state_bytes).collect(),
            persisted_bytes: done.iter().map(|s| s.persisted_bytes).collect(),
            full_bytes: done.iter().map(|s| s.full_bytes).collect(),
            in_flight_bytes: done.iter().map(|s| s.in_flight_bytes).collect(),
            throughput_rps: crate::report::output_rps(o),
            input_rps: crate::report::input_rps(o),
            latency_p50_ns: percentile(&latency, 50),
            latency_p99_ns: percentile(&latency, 99),
            watermark_lag_p50_ns: lag_at(50),
            watermark_lag_p99_ns: lag_at(99),
            recovery_ns: o.recovery_ns.clone(),
            restore_ns: o.restore_ns.clone(),
            records_replayed: o.counters.records_replayed,
            forced_checkpoints: o.counters.local_checkpoints_forced,
            rolled_back_checkpoints: o.counters.local_checkpoints_rolled_back,
            protocol_bytes: o.counters.log_bytes + o.counters.piggyback_bytes,
            virtual_time_ns: o.end_time.0,
            events: o.events,
            failed_checks: e
                .verdict
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name.to_string())
                .collect(),
            panic: None,
            replay: (!e.verdict.passed).then_some(replay),
        }
    }
}

/// The metrics pooled from one value per checkpoint, restore or failure of
/// each run ([`series`]), and the scale from their unit (ns, bytes).
const PER_CHECKPOINT: &[(&str, f64)] = &[
    ("checkpoint_duration_ms", 1e6),
    ("alignment_ms", 1e6),
    ("start_delay_ms", 1e6),
    ("state_kib", 1024.0),
    ("in_flight_kib", 1024.0),
    ("checkpointed_kib", 1024.0),
    ("full_kib", 1024.0),
    ("restore_ms", 1e6),
    ("recovery_ms", 1e6),
];

/// A run's values of the [`PER_CHECKPOINT`] metric `name`.
fn series<'a>(r: &'a RunMetrics, name: &str) -> &'a [u64] {
    match name {
        "checkpoint_duration_ms" => &r.duration_ns,
        "alignment_ms" => &r.alignment_ns,
        "start_delay_ms" => &r.start_delay_ns,
        "state_kib" => &r.state_bytes,
        "in_flight_kib" => &r.in_flight_bytes,
        "checkpointed_kib" => &r.persisted_bytes,
        "full_kib" => &r.full_bytes,
        "restore_ms" => &r.restore_ns,
        "recovery_ms" => &r.recovery_ns,
        _ => unreachable!("{name} is not a per-checkpoint metric"),
    }
}

fn group(algorithm: &str, vary: Option<&String>, all: &[&RunMetrics]) -> Group {
    // A run that panicked measured nothing.
    let runs: Vec<&RunMetrics> = all.iter().copied().filter(|r| r.panic.is_none()).collect();
    let ms = |v: u64| v as f64 / 1e6;
    let kib = |v: u64| v as f64 / 1024.0;
    let pooled = |f: &dyn Fn(&RunMetrics) -> Vec<f64>| -> Vec<f64> {
        runs.iter().flat_map(|r| f(r)).collect()
    };
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: Vec<f64>| {
        m.insert(k.to_string(), Stat::of(&v));
    };
    for &(name, scale) in PER_CHECKPOINT {
        put(
            name,
            pooled(&|r| series(r, name).iter().map(|&v| v as f64 / scale).collect()),
        );
    }
    put("throughput_rps", pooled(&|r| vec![r.throughput_rps]));
    put("input_rps", pooled(&|r| vec![r.input_rps]));
    put(
        "latency_p50_ms",
        pooled(&|r| {
            if r.latency_p50_ns > 0 {
                vec![ms(r.latency_p50_ns)]
            } else {
                vec![]
            }
        }),
    );
    put(
        "latency_p99_ms",
        pooled(&|r| {
            if r.latency_p99_ns > 0 {
                vec![ms(r.latency_p99_ns)]
            } else {
                vec![]
            }
        }),
    );
    if runs.iter().any(|r| r.watermark_lag_p50_ns.is_some()) {
        put(
            "watermark_lag_p50_ms",
            pooled(&|r| r.watermark_lag_p50_ns.map(ms).into_iter().collect()),
        );
        put(
            "watermark_lag_p99_ms",
            pooled(&|r| r.watermark_lag_p99_ns.map(ms).into_iter().collect()),
        );
    }
    put(
        "records_replayed",
        pooled(&|r| vec![r.records_replayed as f64]),
    );
    put(
        "checkpoints_completed",
        pooled(&|r| vec![r.checkpoints_completed as f64]),
    );
    put(
        "forced_checkpoints",
        pooled(&|r| vec![r.forced_checkpoints as f64]),
    );
    put(
        "rolled_back_checkpoints",
        pooled(&|r| vec![r.rolled_back_checkpoints as f64]),
    );
    put("protocol_kib", pooled(&|r| vec![kib(r.protocol_bytes)]));
    Group {
        algorithm: algorithm.to_string(),
        vary: vary.cloned(),
        runs: all.len() as u64,
        failed_runs: all.iter().filter(|r| !r.passed).count() as u64,
        panicked_runs: (all.len() - runs.len()) as u64,
        metrics: m,
    }
}

/// Runs every (axis value, algorithm, seed) in parallel and aggregates,
/// calling `progress` with the number of runs done (from any thread).
/// Panics are caught per run and not printed (see [`crate::panics`]).
pub fn compare(spec: &CompareSpec, progress: &(dyn Fn(u64) + Sync)) -> Result<Comparison, String> {
    let _capture = panics::Capture::install();
    let scenarios = varied(spec)?;
    let values: Vec<Option<String>> = scenarios.iter().map(|(v, _)| v.clone()).collect();
    let mut jobs = Vec::new();
    for (v, sc) in &scenarios {
        for &a in &spec.algorithms {
            for seed in spec.seeds.start..spec.seeds.end {
                jobs.push((v.clone(), sc, a, seed));
            }
        }
    }
    let done = std::sync::atomic::AtomicU64::new(0);
    let runs: Vec<RunMetrics> = jobs
        .par_iter()
        .map(|(v, sc, a, seed)| {
            let r = run_one(spec, sc, *a, *seed, v.clone());
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            r
        })
        .collect();
    let mut groups = Vec::new();
    for v in &values {
        for a in &spec.algorithms {
            let these: Vec<&RunMetrics> = runs
                .iter()
                .filter(|r| r.algorithm == a.name() && r.vary == *v)
                .collect();
            groups.push(group(a.name(), v.as_ref(), &these));
        }
    }
    Ok(Comparison {
        scenario: spec.path.clone(),
        command: spec.command.clone(),
        algorithms: spec
            .algorithms
            .iter()
            .map(|a| a.name().to_string())
            .collect(),
        mutants: spec.mutants.names().iter().map(|m| m.to_string()).collect(),
        seeds: format!("{}..{}", spec.seeds.start, spec.seeds.end),
        vary: spec.vary.clone(),
        swarm: spec.swarm.is_some(),
        groups,
        runs,
    })
}
