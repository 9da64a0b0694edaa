//! Extreme values. A shipped scenario (or [`EVERY_KIND`], for the filter,
//! flat-map and keyed-sum keys) with one numeric or duration key set to an
//! extreme — 0, 1, a limit and one past it, the integer type limits,
//! durations up to and past `u64::MAX` nanoseconds, swarm ranges in and out
//! of order — is written to a file and loaded. It is either refused as bad
//! input, or it runs to a verdict, plainly and with a swarm draw (its own
//! `[swarm]` ranges, or the default ones of `--swarm`), and both the scenario
//! and the drawn one write back to files that parse again (shrinking and
//! `compare --vary` rely on that). Nothing panics, aborts or overflows (the
//! test profile checks overflow).
//!
//! Runs stop after [`MAX_EVENTS`] events; a valid scenario whose input would
//! take long to check (billions of records) is only loaded, not run.
//!
//! The property runs 64 cases; for a longer search set `CKPTSIM_FUZZ_CASES`:
//!
//! ```sh
//! CKPTSIM_FUZZ_CASES=5000 cargo test extremes
//! ```
//!
//! A failing case prints its scenario, key and value: add it to
//! [`REGRESSIONS`].

use crate::common::scenario_path;
use ckptsim::harness::execute;
use ckptsim::mutant::Mutants;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{self, write::to_toml, Algorithm, OperatorKind, Partitioning, Scenario};
use ckptsim::swarm;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Events per run: enough to start, checkpoint and fail, short enough for CI.
const MAX_EVENTS: u64 = 2_000;

/// Valid scenarios with a bigger input than this (records reaching the
/// sinks, roughly) are loaded but not run.
const MAX_RECORDS_RUN: u64 = 2_000_000;

const SHIPPED: &[&str] = &[
    "alignment-crash",
    "backpressure",
    "bench",
    "checkpointing-time",
    "faults",
    "record-bytes",
    "rescale",
    "savepoints",
    "throughput",
    "timeouts",
    "wordcount",
];

/// Every operator kind, every optional table: the keys the shipped
/// scenarios do not have.
const EVERY_KIND: &str = r#"
version = 1
name = "every-kind"

[[operators]]
id = "source"
kind = "source"
parallelism = 2
records_per_partition = 100
keys = 20
value_max = 10

[[operators]]
id = "filter"
kind = "filter"
parallelism = 2
modulus = 3
keep_below = 2

[[operators]]
id = "fan"
kind = "flat-map"
parallelism = 2
copies = 2

[[operators]]
id = "map"
kind = "map"
parallelism = 2
mul = 3
add = 1

[[operators]]
id = "sum"
kind = "keyed-sum"
parallelism = 2

[[operators]]
id = "sink"
kind = "sink-at-least-once"
parallelism = 2

[[edges]]
from = "source"
to = "filter"
partitioning = "forward"

[[edges]]
from = "filter"
to = "fan"
partitioning = "rebalance"

[[edges]]
from = "fan"
to = "map"
partitioning = "broadcast"

[[edges]]
from = "map"
to = "sum"
partitioning = "hash"

[[edges]]
from = "sum"
to = "sink"
partitioning = "forward"

[checkpoint]
interval = "10ms"

[cluster]
workers = 2

[faults.random]
mean_interval = "20ms"
window_end = "100ms"
max_crashes = 2

[faults.restart]
strategy = "failure-rate"
max_failures = 5
interval = "1s"

[faults.random_workers]
mean_interval = "50ms"
window_end = "100ms"
max_crashes = 1

[[faults.latency_spikes]]
until = "50ms"
extra = "1ms"
worker = 0

[[savepoints]]
at = "30ms"

[swarm]
max_crashes = [0, 2]

[limits]
max_time = "10s"

[expect]
guarantee = "at-least-once"
"#;

/// What a key holds.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Int,
    /// An integer that sizes the input: only values that are refused or
    /// small (a valid huge input is a long run, not an edge case).
    Size,
    Duration,
    /// A list of times.
    Times,
    IntRange,
    DurationRange,
}

/// Every numeric and duration key of the format, as a path: `table.key`,
/// `array[].key` (the first element, created if missing) or
/// `operators[kind].key` (the first operator of that kind).
const KEYS: &[(&str, Kind)] = &[
    ("max_parallelism", Kind::Int),
    ("network.buffer_records", Kind::Int),
    ("network.buffer_credits", Kind::Int),
    ("network.floating_buffers", Kind::Int),
    ("network.output_buffers", Kind::Int),
    ("network.latency_min", Kind::Duration),
    ("network.latency_max", Kind::Duration),
    ("network.flush_timeout", Kind::Duration),
    ("network.step_quantum", Kind::Duration),
    ("operators[].parallelism", Kind::Int),
    ("operators[].cost", Kind::Duration),
    ("operators[].cost_jitter", Kind::Duration),
    ("operators[source].partitions", Kind::Size),
    ("operators[source].records_per_partition", Kind::Size),
    ("operators[source].keys", Kind::Int),
    ("operators[source].value_max", Kind::Int),
    ("operators[map].mul", Kind::Int),
    ("operators[map].add", Kind::Int),
    ("operators[filter].modulus", Kind::Int),
    ("operators[filter].keep_below", Kind::Int),
    ("operators[flat-map].copies", Kind::Int),
    ("checkpoint.interval", Kind::Duration),
    ("checkpoint.first_delay", Kind::Duration),
    ("checkpoint.min_pause", Kind::Duration),
    ("checkpoint.timeout", Kind::Duration),
    ("checkpoint.max_concurrent", Kind::Int),
    ("checkpoint.alignment_timeout", Kind::Duration),
    ("checkpoint.tolerable_failures", Kind::Int),
    ("checkpoint.retained", Kind::Int),
    ("checkpoint.storage_latency", Kind::Duration),
    ("checkpoint.storage_bytes_per_sec", Kind::Int),
    ("checkpoint.rpc_latency", Kind::Duration),
    ("cluster.workers", Kind::Int),
    ("cluster.slots_per_worker", Kind::Int),
    ("cluster.heartbeat_timeout", Kind::Duration),
    ("cluster.replacement_delay", Kind::Duration),
    ("faults.detection_delay", Kind::Duration),
    ("faults.restart_delay", Kind::Duration),
    ("faults.max_restarts", Kind::Int),
    ("faults.restart.max_backoff", Kind::Duration),
    ("faults.restart.reset_threshold", Kind::Duration),
    ("faults.restart.max_failures", Kind::Int),
    ("faults.restart.interval", Kind::Duration),
    ("faults.random.mean_interval", Kind::Duration),
    ("faults.random.window_start", Kind::Duration),
    ("faults.random.window_end", Kind::Duration),
    ("faults.random.max_crashes", Kind::Int),
    ("faults.random_workers.mean_interval", Kind::Duration),
    ("faults.random_workers.window_end", Kind::Duration),
    ("faults.random_workers.max_crashes", Kind::Int),
    ("faults.notifications.loss_percent", Kind::Int),
    ("faults.storage.failure_percent", Kind::Int),
    ("faults.storage.slow_percent", Kind::Int),
    ("faults.storage.slow_latency", Kind::Duration),
    ("faults.coordinator.failover_delay", Kind::Duration),
    ("faults.coordinator.crashes", Kind::Times),
    ("faults.coordinator.random.mean_interval", Kind::Duration),
    ("faults.coordinator.random.window_start", Kind::Duration),
    ("faults.coordinator.random.window_end", Kind::Duration),
    ("faults.coordinator.random.max_crashes", Kind::Int),
    ("faults.crashes[].at", Kind::Duration),
    ("faults.worker_crashes[].at", Kind::Duration),
    ("faults.worker_crashes[].worker", Kind::Int),
    ("faults.latency_spikes[].from", Kind::Duration),
    ("faults.latency_spikes[].until", Kind::Duration),
    ("faults.latency_spikes[].extra", Kind::Duration),
    ("faults.latency_spikes[].worker", Kind::Int),
    ("faults.partitions[].from", Kind::Duration),
    ("faults.partitions[].until", Kind::Duration),
    ("faults.slow_tasks[].from", Kind::Duration),
    ("faults.slow_tasks[].until", Kind::Duration),
    ("faults.slow_tasks[].factor", Kind::Int),
    ("savepoints[].at", Kind::Duration),
    ("limits.max_events", Kind::Int),
    ("limits.max_time", Kind::Duration),
    ("limits.checkpoint_gap", Kind::Duration),
    ("limits.transaction_open", Kind::Duration),
    ("limits.restart_loop", Kind::Int),
    ("limits.blocked_input", Kind::Duration),
    ("limits.output_latency", Kind::Duration),
    ("swarm.latency_max", Kind::DurationRange),
    ("swarm.buffer_records", Kind::IntRange),
    ("swarm.buffer_credits", Kind::IntRange),
    ("swarm.floating_buffers", Kind::IntRange),
    ("swarm.interval", Kind::DurationRange),
    ("swarm.timeout", Kind::DurationRange),
    ("swarm.cost_percent", Kind::IntRange),
    ("swarm.crash_mean_interval", Kind::DurationRange),
    ("swarm.max_crashes", Kind::IntRange),
    ("swarm.crash_window_end", Kind::DurationRange),
    ("swarm.notification_loss_percent", Kind::IntRange),
    ("swarm.storage_failure_percent", Kind::IntRange),
    ("swarm.storage_slow_percent", Kind::IntRange),
    ("swarm.coordinator_crashes", Kind::IntRange),
    ("swarm.worker_crashes", Kind::IntRange),
    ("swarm.latency_spike_extra", Kind::DurationRange),
    ("swarm.partition_duration", Kind::DurationRange),
    ("swarm.operator_event_loss_percent", Kind::IntRange),
];

/// 0, 1, the limits on values and one past each, the integer type limits.
const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    100,
    101,
    1_000,
    1_001,
    32_768,
    32_769,
    65_536,
    65_537,
    100_000,
    100_001,
    1_000_000,
    1_000_001,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
];

/// Input sizes: refused, or small.
const SIZES: &[i64] = &[
    0,
    1,
    -1,
    2,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
];

/// Durations from nothing to past `u64::MAX` nanoseconds (18446744073.709551615s).
const DURATIONS: &[&str] = &[
    "0",
    "1ns",
    "999us",
    "1ms",
    "8759h",
    "8760h",
    "31536000.000000001s",
    "1000000h",
    "5124095h",
    "18446744073s",
    "18446744073.709551615s",
    "18446744073.709551616s",
    "18446744073.999999999s",
];

/// One extreme edit: key `KEYS[key]` of scenario `scenario` (an index into
/// [`SHIPPED`], or its length for [`EVERY_KIND`]) set to value `a` (and `b`,
/// for ranges) of the key's list.
#[derive(Clone, Copy, Debug)]
struct Case {
    scenario: usize,
    key: usize,
    a: usize,
    b: usize,
    seed: u64,
    algorithm: usize,
}

/// Cases found by this test and by hand; each once panicked, aborted or
/// hung: (scenario, key, value).
const REGRESSIONS: &[(&str, &str, &str)] = &[
    // `buffer_records` buffers were allocated at full size (an 85 GB
    // allocation aborted), and `--swarm` doubled it in u32.
    ("faults", "network.buffer_records", "2147483648"),
    ("faults", "network.buffer_records", "4294967295"),
    ("faults", "swarm.buffer_records", "[1, 4294967295]"),
    // `cost_jitter + 1` overflowed when a task became busy.
    (
        "faults",
        "operators[].cost_jitter",
        "\"18446744073.709551615s\"",
    ),
    // latency + transfer + RPC overflowed in the state write delay.
    (
        "faults",
        "checkpoint.storage_latency",
        "\"18446744073.709551615s\"",
    ),
    // The fraction of a duration overflowed while it was parsed.
    (
        "faults",
        "network.latency_min",
        "\"18446744073.999999999s\"",
    ),
    // `--swarm` drew the interval from an inverted default range.
    ("faults", "checkpoint.interval", "\"1ns\""),
    ("wordcount", "checkpoint.interval", "\"100us\""),
    // Each record fanned out to four billion copies in one step.
    ("every-kind", "operators[flat-map].copies", "4294967295"),
];

fn cases() -> u32 {
    std::env::var("CKPTSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn base_text(scenario: usize) -> (String, String) {
    match SHIPPED.get(scenario) {
        Some(name) => {
            let path = scenario_path(name);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (name.to_string(), text)
        }
        None => ("every-kind".to_string(), EVERY_KIND.to_string()),
    }
}

/// The TOML value of a case.
fn value(kind: Kind, a: usize, b: usize) -> toml::Value {
    let int = |i: usize| toml::Value::Integer(INTS[i % INTS.len()]);
    let duration = |i: usize| toml::Value::String(DURATIONS[i % DURATIONS.len()].to_string());
    match kind {
        Kind::Int => int(a),
        Kind::Size => toml::Value::Integer(SIZES[a % SIZES.len()]),
        Kind::Duration => duration(a),
        Kind::Times => toml::Value::Array(vec![duration(a), duration(b)]),
        Kind::IntRange => toml::Value::Array(vec![int(a), int(b)]),
        Kind::DurationRange => toml::Value::Array(vec![duration(a), duration(b)]),
    }
}

/// `text` with the key at `path` set to `value`; tables and array elements
/// are created as needed. `array[]` is element `pick` (modulo the length).
fn edit(text: &str, path: &str, value: toml::Value, pick: usize) -> String {
    let mut doc: toml::Table = text.parse().expect("the base scenario is TOML");
    let parts: Vec<&str> = path.split('.').collect();
    let (last, tables) = parts.split_last().expect("a key");
    let mut table = &mut doc;
    for part in tables {
        table = match part.split_once('[') {
            Some((name, selector)) => {
                let selector = selector.trim_end_matches(']');
                let array = table
                    .entry(name.to_string())
                    .or_insert_with(|| toml::Value::Array(Vec::new()))
                    .as_array_mut()
                    .expect("an array of tables");
                if array.is_empty() {
                    array.push(toml::Value::Table(toml::Table::new()));
                }
                let index = if selector.is_empty() {
                    pick % array.len()
                } else {
                    array
                        .iter()
                        .position(|op| op.get("kind").and_then(|k| k.as_str()) == Some(selector))
                        .unwrap_or(0)
                };
                array[index].as_table_mut().expect("a table")
            }
            None => table
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .expect("a table"),
        };
    }
    table.insert(last.to_string(), value);
    toml::to_string(&doc).expect("serializable")
}

/// Roughly how many records reach the sinks: the sources' records, times
/// every flat-map's copies and every broadcast's fan-out.
fn input_size(s: &Scenario) -> u64 {
    let mut size: u64 = s.source_records();
    for op in &s.operators {
        if let OperatorKind::FlatMap { copies } = op.kind {
            size = size.saturating_mul(u64::from(copies));
        }
    }
    for e in s
        .edges
        .iter()
        .filter(|e| e.partitioning == Partitioning::Broadcast)
    {
        size = size.saturating_mul(u64::from(s.op(e.to).parallelism));
    }
    size
}

static FILES: AtomicU64 = AtomicU64::new(0);
/// Cases valid enough to run.
static RAN: AtomicU64 = AtomicU64::new(0);

/// Writes `text` to a fresh file.
fn write(text: &str) -> PathBuf {
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("ckptsim-extreme-{}-{n}.toml", std::process::id()));
    std::fs::write(&path, text).expect("temp file written");
    path
}

/// Loads `text` from a file and, if valid, writes it back, runs it plainly
/// and with a swarm draw, and writes the draw back. `Err` says what panicked.
fn check(text: &str, seed: u64, algorithm: Algorithm) -> Result<(), String> {
    let path = write(text);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Ok(s) = scenario::load(&path) else {
            return;
        };
        let again = to_toml(&s);
        if let Err(e) = scenario::parse_str(&again, "written.toml") {
            panic!("the scenario does not parse once written back: {e}\n{again}");
        }
        let mut s = scenario::ScenarioData::clone(&s);
        s.limits.max_events = s.limits.max_events.min(MAX_EVENTS);
        let s = crate::common::valid(&s);
        if input_size(&s) > MAX_RECORDS_RUN {
            return;
        }
        let cfg = RunConfig {
            seed,
            algorithm,
            mutants: Mutants::NONE,
            record_trace: false,
        };
        let _ = execute(&s, &cfg);
        RAN.fetch_add(1, Ordering::Relaxed);
        let spec = s.swarm.clone().unwrap_or_else(|| swarm::default_ranges(&s));
        let (drawn, _) = swarm::draw(&s, &spec, seed).unwrap_or_else(|e| panic!("{e}"));
        let again = to_toml(&drawn);
        if let Err(e) = scenario::parse_str(&again, "drawn.toml") {
            panic!("the drawn scenario does not parse once written: {e}");
        }
        if input_size(&drawn) <= MAX_RECORDS_RUN {
            let _ = execute(&drawn, &cfg);
        }
    }));
    let _ = std::fs::remove_file(&path);
    outcome.map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".to_string())
    })
}

fn run_case(c: Case) -> Result<(), String> {
    let (name, text) = base_text(c.scenario);
    let (path, kind) = KEYS[c.key % KEYS.len()];
    let v = value(kind, c.a, c.b);
    let algorithm = Algorithm::all()
        .nth(c.algorithm % Algorithm::all().count())
        .unwrap();
    check(&edit(&text, path, v.clone(), c.b), c.seed, algorithm).map_err(|panic| {
        format!(
            "scenario {name}, {path} = {v}, seed {}, algorithm {}: panicked: {panic}\n\
             add (\"{name}\", \"{path}\", {:?}) to REGRESSIONS",
            c.seed,
            algorithm.name(),
            v.to_string()
        )
    })
}

#[test]
fn extreme_values_are_refused_or_run() {
    let strategy = (
        0..=SHIPPED.len(),
        0..KEYS.len(),
        0..INTS.len().max(DURATIONS.len()),
        0..INTS.len().max(DURATIONS.len()),
        any::<u64>(),
        0..Algorithm::all().count(),
    )
        .prop_map(|(scenario, key, a, b, seed, algorithm)| Case {
            scenario,
            key,
            a,
            b,
            seed,
            algorithm,
        });
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |c| {
        run_case(c).map_err(proptest::test_runner::TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // Some extreme values are valid: a loader that refused everything would
    // pass the property without running anything.
    let ran = RAN.load(Ordering::Relaxed);
    assert!(ran > 0 || cases() < 16, "no case ran");
}

#[test]
fn found_extremes_are_refused_or_run() {
    for &(name, path, value) in REGRESSIONS {
        let scenario = SHIPPED
            .iter()
            .position(|s| *s == name)
            .unwrap_or(SHIPPED.len());
        let (_, text) = base_text(scenario);
        let v: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .expect("a TOML value")
            .remove("v")
            .expect("v");
        for seed in 0..2 {
            let edited = edit(&text, path, v.clone(), 0);
            if let Err(panic) = check(&edited, seed, Algorithm::Aligned) {
                panic!("{name}, {path} = {value}, seed {seed}: {panic}");
            }
        }
    }
}

/// A chain of 10,000 maps (one task: the source and every map chained, and
/// the sink) builds, runs and passes in a thread of 2 MiB of stack: pushing
/// a record through chained operators takes no native stack per member (a
/// recursion per member overflowed it and aborted the process at about
/// 8,000 members).
#[test]
fn a_chain_of_ten_thousand_maps_runs_in_a_small_stack() {
    const MAPS: usize = 10_000;
    let mut text = String::from(
        "version = 1\nname = \"long-chain\"\n[network]\nbuffer_records = 32\n\
         latency_min = \"50us\"\nlatency_max = \"200us\"\n\
         [[operators]]\nid = \"source\"\nkind = \"source\"\nparallelism = 1\n\
         partitions = 1\nrecords_per_partition = 50\nkeys = 10\n",
    );
    for i in 0..MAPS {
        text += &format!("[[operators]]\nid = \"m{i}\"\nkind = \"map\"\nparallelism = 1\n");
    }
    text += "[[operators]]\nid = \"sink\"\nkind = \"sink-2pc\"\nparallelism = 1\n";
    let mut prev = "source".to_string();
    for i in 0..MAPS {
        text +=
            &format!("[[edges]]\nfrom = \"{prev}\"\nto = \"m{i}\"\npartitioning = \"forward\"\n");
        prev = format!("m{i}");
    }
    text += &format!("[[edges]]\nfrom = \"{prev}\"\nto = \"sink\"\npartitioning = \"forward\"\n");
    text += "[checkpoint]\nalgorithm = \"aligned\"\ninterval = \"1ms\"\n";
    let run = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let s = scenario::parse_str(&text, "long-chain.toml")
                .expect("the chain is a valid scenario");
            let cfg = RunConfig {
                seed: 3,
                algorithm: s.checkpoint.algorithm,
                mutants: Mutants::default(),
                record_trace: false,
            };
            let e = execute(&s, &cfg);
            (e.verdict.passed, e.output.counters.chained_records)
        })
        .unwrap()
        .join()
        .expect("the run must not panic");
    assert!(run.0, "the chain must pass");
    // Every record crossed every chained member after the source.
    assert_eq!(run.1, 50 * (MAPS as u64 + 1));
}
