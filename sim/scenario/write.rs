//! Scenario → TOML: renders a validated [`Scenario`] as a standalone scenario
//! file in the format of `docs/scenarios.md` (version 1).
//!
//! Every key is written, defaults included, so the file means the same thing
//! whatever the defaults become. Durations and times are written exactly, as
//! an integer in the largest unit that holds the value (`"5ms"`, `"1337ns"`),
//! and strings as single-line TOML basic strings. Parsing the output with
//! [`super::parse_str`] gives back an equal scenario, and writing that again
//! gives back the same text.

use std::fmt::Write as _;

use super::FailoverStrategy;
use super::{
    CheckpointSpec, EdgeSpec, FaultSpec, KeyDistribution, Limits, MemoryLoss, NetworkSpec,
    OperatorId, OperatorKind, OperatorSpec, Placement, RestartStrategy, Scenario, StorageKind,
    SwarmSpec, FORMAT_VERSION,
};
use crate::engine::{SimDuration, SimTime};

/// The first line of every written file. Callers may put their own comment
/// lines before it.
pub const HEADER: &str = "# written by ckptsim; every key is explicit, none relies on a default";

/// Renders `s` as a scenario file. Tables and keys come in the order of
/// `docs/scenarios.md`, separated by blank lines; `[swarm]`, when the
/// scenario has one, comes last.
///
/// The output parses back to an equal scenario whenever `s` is one the parser
/// could have produced. Values no file can hold are still written as they are
/// (never silently changed), so the parser reports them: an integer above
/// `i64::MAX` in a `u64` field, an edge or crash naming an operator index
/// that does not exist, or anything validation refuses (an invalid operator
/// id, a zero `interval`, ...).
pub fn to_toml(s: &Scenario) -> String {
    let mut w = Writer::default();
    w.line(HEADER);
    w.int("version", FORMAT_VERSION);
    w.string("name", &s.name);
    w.string("description", &s.description);
    w.int("max_parallelism", s.max_parallelism);
    if let Some(at) = s.cancel_at {
        w.time("cancel_at", at);
    }

    w.table("[network]");
    network(&mut w, &s.network);

    for op in &s.operators {
        w.table("[[operators]]");
        operator(&mut w, op);
    }

    for edge in &s.edges {
        w.table("[[edges]]");
        self::edge(&mut w, s, edge);
    }

    w.table("[checkpoint]");
    checkpoint(&mut w, &s.checkpoint);

    if let Some(c) = &s.cluster {
        w.table("[cluster]");
        w.int("workers", c.workers);
        w.int("slots_per_worker", c.slots_per_worker);
        let placement = match c.placement {
            Placement::Spread => "spread",
            Placement::Pack => "pack",
        };
        w.string("placement", placement);
        w.duration("heartbeat_timeout", c.heartbeat_timeout);
        w.duration("replacement_delay", c.replacement_delay);
    }

    faults(&mut w, s, &s.faults);

    for sp in &s.savepoints {
        w.table("[[savepoints]]");
        w.time("at", sp.at);
        w.raw("stop", if sp.stop { "true" } else { "false" });
        w.raw("drain", if sp.drain { "true" } else { "false" });
    }

    w.table("[limits]");
    limits(&mut w, &s.limits);

    w.table("[expect]");
    w.raw("guarantee", &quote(s.expect.guarantee.name()));

    if let Some(spec) = &s.swarm {
        w.table("[swarm]");
        swarm(&mut w, spec);
    }
    w.out
}

fn network(w: &mut Writer, n: &NetworkSpec) {
    w.int("buffer_records", n.buffer_records);
    w.int("buffer_credits", n.buffer_credits);
    w.int("output_buffers", n.output_buffers);
    w.duration("latency_min", n.latency_min);
    w.duration("latency_max", n.latency_max);
    w.duration("flush_timeout", n.flush_timeout);
    w.duration("step_quantum", n.step_quantum);
}

fn operator(w: &mut Writer, op: &OperatorSpec) {
    w.string("id", &op.id);
    w.string("kind", op.kind.name());
    w.int("parallelism", op.parallelism);
    w.duration("cost", op.cost);
    w.duration("cost_jitter", op.cost_jitter);
    match &op.kind {
        OperatorKind::Source(src) => {
            w.int("partitions", src.partitions);
            w.int("records_per_partition", src.records_per_partition);
            w.int("keys", src.keys);
            let distribution = match src.key_distribution {
                KeyDistribution::Uniform => "uniform",
                KeyDistribution::Cyclic => "cyclic",
                KeyDistribution::Skewed => "skewed",
            };
            w.string("key_distribution", distribution);
            w.int("value_max", src.value_max);
        }
        OperatorKind::Map { mul, add } => {
            w.int("mul", *mul);
            w.int("add", *add);
        }
        OperatorKind::Filter {
            modulus,
            keep_below,
        } => {
            w.int("modulus", *modulus);
            w.int("keep_below", *keep_below);
        }
        OperatorKind::FlatMap { copies } => w.int("copies", *copies),
        OperatorKind::CountWindow { size } => w.int("size", *size),
        OperatorKind::SinkAtLeastOnce { batch } => w.int("batch", *batch),
        OperatorKind::KeyedCount | OperatorKind::KeyedSum | OperatorKind::Sink2pc => {}
    }
}

fn edge(w: &mut Writer, s: &Scenario, edge: &EdgeSpec) {
    w.string("from", &operator_name(s, edge.from));
    w.string("to", &operator_name(s, edge.to));
    w.string("partitioning", edge.partitioning.name());
}

fn checkpoint(w: &mut Writer, c: &CheckpointSpec) {
    w.string("algorithm", c.algorithm.name());
    match c.interval {
        Some(interval) => w.duration("interval", interval),
        None => w.string("interval", "none"),
    }
    w.duration("first_delay", c.first_delay);
    w.duration("min_pause", c.min_pause);
    w.duration("timeout", c.timeout);
    w.int("max_concurrent", c.max_concurrent);
    w.duration("alignment_timeout", c.alignment_timeout);
    w.int("tolerable_failures", c.tolerable_failures);
    w.int("retained", c.retained);
    w.raw(
        "retain_on_cancel",
        if c.retain_on_cancel { "true" } else { "false" },
    );
    let storage = match c.storage {
        StorageKind::Memory => "memory",
        StorageKind::Filesystem => "filesystem",
    };
    w.string("storage", storage);
    w.duration("storage_latency", c.storage_latency);
    w.int("storage_bytes_per_sec", c.storage_bytes_per_sec);
    w.duration("rpc_latency", c.rpc_latency);
}

fn faults(w: &mut Writer, s: &Scenario, f: &FaultSpec) {
    w.table("[faults]");
    let failover = match f.failover {
        FailoverStrategy::Full => "full",
        FailoverStrategy::Region => "region",
    };
    w.string("failover", failover);
    w.duration("detection_delay", f.detection_delay);
    w.duration("restart_delay", f.restart_delay);
    w.int("max_restarts", f.max_restarts);
    for crash in &f.crashes {
        w.table("[[faults.crashes]]");
        w.time("at", crash.at);
        let task = format!("{}[{}]", operator_name(s, crash.operator), crash.subtask);
        w.string("task", &task);
    }
    if let Some(random) = &f.random {
        w.table("[faults.random]");
        w.duration("mean_interval", random.mean_interval);
        w.time("window_start", random.window_start);
        w.time("window_end", random.window_end);
        w.int("max_crashes", random.max_crashes);
    }
    w.table("[faults.restart]");
    w.string("strategy", f.restart.name());
    match &f.restart {
        RestartStrategy::FixedDelay => {}
        RestartStrategy::ExponentialDelay {
            max_backoff,
            multiplier_permille,
            reset_threshold,
        } => {
            w.duration("max_backoff", *max_backoff);
            w.raw("backoff_multiplier", &permille(*multiplier_permille));
            w.duration("reset_threshold", *reset_threshold);
        }
        RestartStrategy::FailureRate {
            max_failures,
            interval,
        } => {
            w.int("max_failures", *max_failures);
            w.duration("interval", *interval);
        }
    }
    if let Some(n) = &f.notifications {
        w.table("[faults.notifications]");
        w.int("loss_percent", n.loss_percent);
    }
    if let Some(st) = &f.storage {
        w.table("[faults.storage]");
        w.int("failure_percent", st.failure_percent);
        w.int("slow_percent", st.slow_percent);
        w.duration("slow_latency", st.slow_latency);
    }
    if let Some(c) = &f.coordinator {
        w.table("[faults.coordinator]");
        w.duration("failover_delay", c.failover_delay);
        let loss = match c.on_memory_loss {
            MemoryLoss::RestartFromScratch => "restart-from-scratch",
            MemoryLoss::Fail => "fail",
        };
        w.string("on_memory_loss", loss);
        let times: Vec<String> = c
            .crashes
            .iter()
            .map(|t| quote(&duration(SimDuration(t.nanos()))))
            .collect();
        w.raw("crashes", &format!("[{}]", times.join(", ")));
        if let Some(random) = &c.random {
            w.table("[faults.coordinator.random]");
            w.duration("mean_interval", random.mean_interval);
            w.time("window_start", random.window_start);
            w.time("window_end", random.window_end);
            w.int("max_crashes", random.max_crashes);
        }
    }
    for wc in &f.worker_crashes {
        w.table("[[faults.worker_crashes]]");
        w.time("at", wc.at);
        w.int("worker", wc.worker);
    }
    if let Some(random) = &f.random_workers {
        w.table("[faults.random_workers]");
        w.duration("mean_interval", random.mean_interval);
        w.time("window_start", random.window_start);
        w.time("window_end", random.window_end);
        w.int("max_crashes", random.max_crashes);
    }
    for sp in &f.latency_spikes {
        w.table("[[faults.latency_spikes]]");
        w.time("from", sp.from);
        w.time("until", sp.until);
        w.duration("extra", sp.extra);
        if let Some((a, b)) = sp.edge {
            let edge = format!("{}->{}", operator_name(s, a), operator_name(s, b));
            w.string("edge", &edge);
        }
        if let Some(worker) = sp.worker {
            w.int("worker", worker);
        }
    }
    for p in &f.partitions {
        w.table("[[faults.partitions]]");
        w.time("from", p.from);
        w.time("until", p.until);
        let list: Vec<String> = p.workers.iter().map(|w| w.to_string()).collect();
        w.raw("workers", &format!("[{}]", list.join(", ")));
    }
    for st in &f.slow_tasks {
        w.table("[[faults.slow_tasks]]");
        let task = format!("{}[{}]", operator_name(s, st.operator), st.subtask);
        w.string("task", &task);
        w.time("from", st.from);
        w.time("until", st.until);
        w.int("factor", st.factor);
    }
}

/// A multiplier in thousandths as a TOML float (`1500` → `1.5`).
fn permille(n: u32) -> String {
    let frac = format!("{:03}", n % 1000);
    let frac = frac.trim_end_matches('0');
    let frac = if frac.is_empty() { "0" } else { frac };
    format!("{}.{frac}", n / 1000)
}

/// `[swarm]` (not in docs/scenarios.md yet; last, after `[expect]`). A knob
/// without a range has no key: absent means "keep the scenario's value", so
/// nothing here relies on a default either.
fn swarm(w: &mut Writer, s: &SwarmSpec) {
    w.raw("enabled", if s.enabled { "true" } else { "false" });
    w.duration_range("latency_max", s.latency_max);
    w.int_range("buffer_records", s.buffer_records);
    w.int_range("buffer_credits", s.buffer_credits);
    w.duration_range("interval", s.interval);
    w.duration_range("timeout", s.timeout);
    w.int_range("cost_percent", s.cost_percent);
    w.duration_range("crash_mean_interval", s.crash_mean_interval);
    w.int_range("max_crashes", s.max_crashes);
    w.duration_range("crash_window_end", s.crash_window_end);
    w.int_range("notification_loss_percent", s.notification_loss_percent);
    w.int_range("storage_failure_percent", s.storage_failure_percent);
    w.int_range("storage_slow_percent", s.storage_slow_percent);
    w.int_range("coordinator_crashes", s.coordinator_crashes);
    w.int_range("worker_crashes", s.worker_crashes);
    w.duration_range("latency_spike_extra", s.latency_spike_extra);
    w.duration_range("partition_duration", s.partition_duration);
}

fn limits(w: &mut Writer, l: &Limits) {
    w.int("max_events", l.max_events);
    w.time("max_time", l.max_time);
}

/// The id the file uses for an operator. An index past the operator list
/// (impossible in a validated scenario) is written as `#<index>`, which the
/// parser rejects as an unknown operator rather than resolving it wrongly.
fn operator_name(s: &Scenario, id: OperatorId) -> String {
    match s.operators.get(id.0 as usize) {
        Some(op) => op.id.clone(),
        None => format!("#{}", id.0),
    }
}

/// Accumulates the file: `key = value` lines and table headers, each table
/// preceded by a blank line.
#[derive(Default)]
struct Writer {
    out: String,
}

impl Writer {
    /// A line written as it is (a `#` comment).
    fn line(&mut self, text: &str) {
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn table(&mut self, header: &str) {
        self.out.push('\n');
        self.out.push_str(header);
        self.out.push('\n');
    }

    /// `key = value` with `value` already in TOML syntax.
    fn raw(&mut self, key: &str, value: &str) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.out, "{key} = {value}");
    }

    fn string(&mut self, key: &str, value: &str) {
        self.raw(key, &quote(value));
    }

    fn int(&mut self, key: &str, value: impl Into<i128>) {
        self.raw(key, &integer(value.into()));
    }

    fn duration(&mut self, key: &str, value: SimDuration) {
        self.raw(key, &quote(&duration(value)));
    }

    fn time(&mut self, key: &str, value: SimTime) {
        self.duration(key, SimDuration(value.nanos()));
    }

    /// `key = [min, max]` of integers; nothing when `None`.
    fn int_range(&mut self, key: &str, range: Option<(u32, u32)>) {
        if let Some((min, max)) = range {
            let value = format!("[{}, {}]", integer(min.into()), integer(max.into()));
            self.raw(key, &value);
        }
    }

    /// `key = ["min", "max"]` of durations; nothing when `None`.
    fn duration_range(&mut self, key: &str, range: Option<(SimDuration, SimDuration)>) {
        if let Some((min, max)) = range {
            let value = format!("[{}, {}]", quote(&duration(min)), quote(&duration(max)));
            self.raw(key, &value);
        }
    }
}

/// The exact text of a duration: an integer in the largest unit that holds
/// it exactly (`"2h"`, `"90s"`, `"1001us"`, `"3000000007ns"`), `"0s"` for
/// zero. [`crate::engine::parse_duration`] reads it back to the same value.
pub fn duration(d: SimDuration) -> String {
    const UNITS: [(&str, u64); 6] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let n = d.nanos();
    if n == 0 {
        return "0s".to_string();
    }
    let (unit, scale) = UNITS
        .into_iter()
        .find(|(_, scale)| n.is_multiple_of(*scale))
        .unwrap_or(("ns", 1));
    format!("{}{unit}", n / scale)
}

/// A TOML integer, digits grouped by `_` in thousands from 10 000 up
/// (`50_000_000`). Values outside `i64` are written as they are, and the
/// parser refuses them.
fn integer(n: i128) -> String {
    let digits = n.unsigned_abs().to_string();
    let sign = if n < 0 { "-" } else { "" };
    if digits.len() <= 4 {
        return format!("{sign}{digits}");
    }
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push('_');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}")
}

/// `s` as a single-line TOML basic string: `"` and `\` escaped, control
/// characters (including newlines and DEL) as `\n`-style or `\uXXXX` escapes,
/// everything else verbatim. One line whatever the text, so a file whose line
/// endings are converted still reads back the same string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() && u32::from(c) <= 0x7f => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parse_duration;
    use crate::scenario::{
        load, parse_str, Algorithm, CrashSpec, Expect, Guarantee, Partitioning, RandomCrashes,
        SavepointSpec, ScenarioErrors, SourceSpec, SwarmSpec, MAX_BUFFER_RECORDS, MAX_DURATION,
    };
    use std::path::{Path, PathBuf};

    /// Parses written text, failing with the text and every error.
    fn reparse(text: &str, what: &str) -> Scenario {
        match parse_str(text, what) {
            Ok(s) => s,
            Err(ScenarioErrors(errors)) => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                panic!(
                    "written scenario `{what}` does not parse:\n{}\n--- text ---\n{text}",
                    list.join("\n")
                )
            }
        }
    }

    fn json(s: &Scenario) -> serde_json::Value {
        serde_json::to_value(s).expect("Scenario serializes")
    }

    /// Writes, parses, compares, and checks that writing again is a no-op.
    fn round_trip(s: &Scenario, what: &str) {
        let text = to_toml(s);
        let back = reparse(&text, what);
        assert_eq!(
            json(&back),
            json(s),
            "`{what}` changed in the round trip; text:\n{text}"
        );
        assert_eq!(to_toml(&back), text, "`{what}`: writing is not idempotent");
        assert_every_key_written(&text, what);
    }

    /// Every key of the format is present, so nothing relies on a default.
    fn assert_every_key_written(text: &str, what: &str) {
        let doc: toml::Table = toml::from_str(text).expect("written text is TOML");
        let keys = |table: &toml::Table| -> Vec<String> {
            let mut v: Vec<String> = table.keys().cloned().collect();
            v.sort();
            v
        };
        let sorted = |list: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = list.iter().map(|k| k.to_string()).collect();
            v.sort();
            v
        };
        let table = |value: &toml::Value| value.as_table().expect("a table").clone();
        let array = |value: Option<&toml::Value>| -> Vec<toml::Table> {
            value
                .and_then(toml::Value::as_array)
                .map(|a| a.iter().map(table).collect())
                .unwrap_or_default()
        };

        let top = [
            "version",
            "name",
            "description",
            "max_parallelism",
            "network",
            "operators",
            "edges",
            "checkpoint",
            "faults",
            "limits",
            "expect",
        ];
        let mut expected_top = sorted(&top);
        if !doc.contains_key("edges") {
            expected_top.retain(|k| k != "edges");
        }
        if doc.contains_key("savepoints") {
            expected_top.push("savepoints".to_string());
            expected_top.sort();
        }
        if doc.contains_key("cancel_at") {
            expected_top.push("cancel_at".to_string());
            expected_top.sort();
        }
        for sp in array(doc.get("savepoints")) {
            assert_eq!(
                keys(&sp),
                sorted(&["at", "stop", "drain"]),
                "{what}: savepoint"
            );
        }
        if let Some(cluster) = doc.get("cluster") {
            expected_top.push("cluster".to_string());
            expected_top.sort();
            let keys_cluster = [
                "workers",
                "slots_per_worker",
                "placement",
                "heartbeat_timeout",
                "replacement_delay",
            ];
            assert_eq!(
                keys(&table(cluster)),
                sorted(&keys_cluster),
                "{what}: cluster"
            );
        }
        if let Some(swarm) = doc.get("swarm") {
            expected_top.push("swarm".to_string());
            expected_top.sort();
            assert!(table(swarm).contains_key("enabled"), "{what}: swarm");
        }
        assert_eq!(keys(&doc), expected_top, "{what}: top level");
        let network = [
            "buffer_records",
            "buffer_credits",
            "output_buffers",
            "latency_min",
            "latency_max",
            "flush_timeout",
            "step_quantum",
        ];
        assert_eq!(keys(&table(&doc["network"])), sorted(&network), "{what}");
        for op in array(doc.get("operators")) {
            let own: &[&str] = match op["kind"].as_str().expect("kind") {
                "source" => &[
                    "partitions",
                    "records_per_partition",
                    "keys",
                    "key_distribution",
                    "value_max",
                ],
                "map" => &["mul", "add"],
                "filter" => &["modulus", "keep_below"],
                "flat-map" => &["copies"],
                "count-window" => &["size"],
                "sink-at-least-once" => &["batch"],
                _ => &[],
            };
            let mut all = vec!["id", "kind", "parallelism", "cost", "cost_jitter"];
            all.extend_from_slice(own);
            assert_eq!(keys(&op), sorted(&all), "{what}: operator");
        }
        for edge in array(doc.get("edges")) {
            assert_eq!(keys(&edge), sorted(&["from", "to", "partitioning"]));
        }
        let checkpoint = [
            "algorithm",
            "interval",
            "first_delay",
            "min_pause",
            "timeout",
            "max_concurrent",
            "alignment_timeout",
            "tolerable_failures",
            "retained",
            "retain_on_cancel",
            "storage",
            "storage_latency",
            "storage_bytes_per_sec",
            "rpc_latency",
        ];
        assert_eq!(keys(&table(&doc["checkpoint"])), sorted(&checkpoint));
        let faults = table(&doc["faults"]);
        let mut expected = vec![
            "failover",
            "detection_delay",
            "restart_delay",
            "max_restarts",
            "restart",
        ];
        for optional in [
            "notifications",
            "storage",
            "coordinator",
            "slow_tasks",
            "worker_crashes",
            "random_workers",
            "latency_spikes",
            "partitions",
        ] {
            if faults.contains_key(optional) {
                expected.push(optional);
            }
        }
        let restart = table(&faults["restart"]);
        let restart_keys: &[&str] = match restart["strategy"].as_str().expect("strategy") {
            "exponential-delay" => &[
                "strategy",
                "max_backoff",
                "backoff_multiplier",
                "reset_threshold",
            ],
            "failure-rate" => &["strategy", "max_failures", "interval"],
            _ => &["strategy"],
        };
        assert_eq!(keys(&restart), sorted(restart_keys), "{what}: restart");
        if faults.contains_key("crashes") {
            expected.push("crashes");
        }
        if faults.contains_key("random") {
            expected.push("random");
            let random = ["mean_interval", "window_start", "window_end", "max_crashes"];
            assert_eq!(keys(&table(&faults["random"])), sorted(&random));
        }
        assert_eq!(keys(&faults), sorted(&expected), "{what}: faults");
        for crash in array(faults.get("crashes")) {
            assert_eq!(keys(&crash), sorted(&["at", "task"]));
        }
        assert_eq!(
            keys(&table(&doc["limits"])),
            sorted(&["max_events", "max_time"])
        );
        assert_eq!(keys(&table(&doc["expect"])), sorted(&["guarantee"]));
    }

    fn shipped() -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("scenarios directory")
            .map(|entry| entry.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        paths.sort();
        paths
    }

    #[test]
    fn shipped_scenarios_round_trip() {
        let paths = shipped();
        assert!(!paths.is_empty(), "no shipped scenarios found");
        for path in paths {
            let what = path.display().to_string();
            let scenario = load(&path).unwrap_or_else(|e| panic!("{e}"));
            round_trip(&scenario, &what);
        }
    }

    /// The complete example of docs/scenarios.md, which sets every key.
    #[test]
    fn documented_example_round_trips() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenarios.md");
        let text = std::fs::read_to_string(docs).expect("docs/scenarios.md");
        let example = text
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a toml block");
        round_trip(&reparse(example, "docs example"), "docs example");
    }

    fn op(id: &str, kind: OperatorKind, parallelism: u32) -> OperatorSpec {
        OperatorSpec {
            id: id.to_string(),
            kind,
            parallelism,
            cost: SimDuration::from_micros(7),
            cost_jitter: SimDuration::from_nanos(3),
        }
    }

    fn edge(from: u32, to: u32, partitioning: Partitioning) -> EdgeSpec {
        EdgeSpec {
            from: OperatorId(from),
            to: OperatorId(to),
            partitioning,
        }
    }

    /// A valid scenario with every operator kind and partitioning, where
    /// every value differs from its default.
    fn sample() -> Scenario {
        Scenario {
            name: "every-kind".to_string(),
            description: "all kinds, nothing default".to_string(),
            max_parallelism: 64,
            operators: vec![
                op(
                    "src",
                    OperatorKind::Source(SourceSpec {
                        partitions: 3,
                        records_per_partition: 1234,
                        keys: 17,
                        key_distribution: KeyDistribution::Cyclic,
                        value_max: 9,
                    }),
                    2,
                ),
                op("map", OperatorKind::Map { mul: -3, add: 42 }, 2),
                op(
                    "filter",
                    OperatorKind::Filter {
                        modulus: 5,
                        keep_below: 3,
                    },
                    3,
                ),
                op("flat_map", OperatorKind::FlatMap { copies: 4 }, 2),
                op("count", OperatorKind::KeyedCount, 4),
                op("sink-2pc", OperatorKind::Sink2pc, 4),
                op("sum", OperatorKind::KeyedSum, 3),
                op("alo", OperatorKind::SinkAtLeastOnce { batch: 4 }, 1),
                op(
                    "src2",
                    OperatorKind::Source(SourceSpec {
                        partitions: 1,
                        records_per_partition: 10,
                        keys: 100,
                        key_distribution: KeyDistribution::Uniform,
                        value_max: 1,
                    }),
                    1,
                ),
                op("window", OperatorKind::CountWindow { size: 5 }, 2),
            ],
            edges: vec![
                edge(0, 1, Partitioning::Forward),
                edge(1, 2, Partitioning::Rebalance),
                edge(2, 3, Partitioning::Broadcast),
                edge(3, 4, Partitioning::Hash),
                edge(4, 5, Partitioning::Forward),
                edge(2, 6, Partitioning::Hash),
                edge(8, 6, Partitioning::Hash),
                edge(6, 7, Partitioning::Rebalance),
                edge(8, 9, Partitioning::Hash),
                edge(9, 7, Partitioning::Rebalance),
            ],
            network: NetworkSpec {
                buffer_records: 7,
                buffer_credits: 3,
                output_buffers: 2,
                latency_min: SimDuration::from_micros(20),
                latency_max: SimDuration::from_micros(1_001),
                flush_timeout: SimDuration::from_micros(500),
                step_quantum: SimDuration::from_nanos(1),
            },
            checkpoint: CheckpointSpec {
                algorithm: Algorithm::Aligned,
                interval: Some(SimDuration::from_millis(250)),
                first_delay: SimDuration::from_millis(30),
                min_pause: SimDuration::from_millis(5),
                timeout: SimDuration::from_secs(7),
                max_concurrent: 3,
                alignment_timeout: SimDuration::from_millis(40),
                tolerable_failures: 2,
                retained: 4,
                retain_on_cancel: true,
                storage: StorageKind::Filesystem,
                storage_latency: SimDuration::from_millis(3),
                storage_bytes_per_sec: 123_456_789,
                rpc_latency: SimDuration::from_micros(150),
            },
            faults: FaultSpec {
                detection_delay: SimDuration::from_millis(20),
                restart_delay: SimDuration::from_millis(30),
                max_restarts: 7,
                crashes: vec![
                    CrashSpec {
                        at: SimTime(430_000_000),
                        operator: OperatorId(6),
                        subtask: 2,
                    },
                    CrashSpec {
                        at: SimTime(1),
                        operator: OperatorId(0),
                        subtask: 0,
                    },
                    CrashSpec {
                        at: SimTime(1),
                        operator: OperatorId(5),
                        subtask: 3,
                    },
                ],
                random: Some(RandomCrashes {
                    mean_interval: SimDuration::from_millis(1_500),
                    window_start: SimTime(100_000_000),
                    window_end: SimTime(3_000_000_007),
                    max_crashes: 5,
                }),
                restart: RestartStrategy::ExponentialDelay {
                    max_backoff: SimDuration::from_secs(3),
                    multiplier_permille: 1250,
                    reset_threshold: SimDuration::from_secs(20),
                },
                notifications: Some(crate::scenario::NotificationFaults { loss_percent: 13 }),
                storage: Some(crate::scenario::StorageFaults {
                    failure_percent: 4,
                    slow_percent: 9,
                    slow_latency: SimDuration::from_millis(70),
                }),
                coordinator: Some(crate::scenario::CoordinatorFaults {
                    failover_delay: SimDuration::from_millis(333),
                    on_memory_loss: MemoryLoss::Fail,
                    crashes: vec![SimTime(1_500_000_000), SimTime(7)],
                    random: Some(RandomCrashes {
                        mean_interval: SimDuration::from_millis(900),
                        window_start: SimTime(0),
                        window_end: SimTime(2_000_000_000),
                        max_crashes: 2,
                    }),
                }),
                slow_tasks: vec![crate::scenario::SlowTask {
                    operator: OperatorId(1),
                    subtask: 0,
                    from: SimTime(1_000_000),
                    until: SimTime(2_000_000_000),
                    factor: 25,
                }],
                worker_crashes: vec![crate::scenario::WorkerCrash {
                    at: SimTime(3_000_000),
                    worker: 2,
                }],
                random_workers: Some(RandomCrashes {
                    mean_interval: SimDuration::from_millis(700),
                    window_start: SimTime(5),
                    window_end: SimTime(1_000_000_000),
                    max_crashes: 1,
                }),
                latency_spikes: vec![
                    crate::scenario::LatencySpike {
                        from: SimTime(0),
                        until: SimTime(9_000_000),
                        extra: SimDuration::from_micros(700),
                        edge: Some((OperatorId(1), OperatorId(2))),
                        worker: Some(1),
                    },
                    crate::scenario::LatencySpike {
                        from: SimTime(10),
                        until: SimTime(11),
                        extra: SimDuration(1),
                        edge: None,
                        worker: None,
                    },
                ],
                partitions: vec![crate::scenario::Partition {
                    from: SimTime(2_000_000),
                    until: SimTime(50_000_000),
                    workers: vec![0, 2],
                }],
                failover: FailoverStrategy::Region,
            },
            limits: Limits {
                max_events: 1_000_000,
                max_time: SimTime(90_000_000_000),
            },
            expect: Expect {
                guarantee: Guarantee::AtLeastOnce,
            },
            swarm: None,
            savepoints: vec![
                SavepointSpec {
                    at: SimTime(1_500_000_000),
                    stop: false,
                    drain: false,
                },
                SavepointSpec {
                    at: SimTime(2_000_000_001),
                    stop: true,
                    drain: true,
                },
            ],
            cluster: Some(crate::scenario::ClusterSpec {
                workers: 3,
                slots_per_worker: 3,
                placement: Placement::Pack,
                heartbeat_timeout: SimDuration::from_millis(77),
                replacement_delay: SimDuration::from_millis(250),
            }),
            cancel_at: Some(SimTime(9_000_000_007)),
        }
    }

    #[test]
    fn every_kind_and_non_default_value_round_trips() {
        let s = sample();
        let kinds: Vec<&str> = s.operators.iter().map(|o| o.kind.name()).collect();
        for (name, _) in crate::scenario::OPERATOR_KINDS {
            assert!(kinds.contains(name), "sample lacks kind {name}");
        }
        round_trip(&s, "sample");
    }

    #[test]
    fn without_faults_or_edges_of_some_kinds() {
        let mut s = sample();
        s.faults.crashes.clear();
        s.faults.random = None;
        round_trip(&s, "no faults");

        let mut s = sample();
        s.faults.random = None;
        round_trip(&s, "crashes only");

        let mut s = sample();
        s.faults.crashes.clear();
        round_trip(&s, "random only");

        let mut s = sample();
        s.faults.notifications = None;
        s.faults.storage = None;
        s.faults.coordinator = None;
        s.faults.slow_tasks.clear();
        s.faults.restart = RestartStrategy::FixedDelay;
        round_trip(&s, "fixed delay, no new fault kinds");

        let mut s = sample();
        s.faults.restart = RestartStrategy::FailureRate {
            max_failures: 3,
            interval: SimDuration::from_secs(10),
        };
        if let Some(c) = s.faults.coordinator.as_mut() {
            c.crashes.clear();
            c.random = None;
            c.on_memory_loss = MemoryLoss::RestartFromScratch;
        }
        round_trip(&s, "failure rate, coordinator without crashes");
    }

    #[test]
    fn interval_none_round_trips() {
        let mut s = sample();
        s.checkpoint.interval = None;
        round_trip(&s, "interval none");
        assert!(to_toml(&s).contains("\ninterval = \"none\"\n"));
        s.checkpoint.first_delay = SimDuration::ZERO;
        round_trip(&s, "interval none, no first delay");
    }

    #[test]
    fn every_algorithm_storage_and_guarantee_round_trips() {
        for algorithm in Algorithm::all() {
            let mut s = sample();
            s.checkpoint.algorithm = algorithm;
            s.checkpoint.max_concurrent = algorithm.max_concurrent().unwrap_or(5);
            round_trip(&s, algorithm.name());
        }
        for storage in [StorageKind::Memory, StorageKind::Filesystem] {
            let mut s = sample();
            s.checkpoint.storage = storage;
            round_trip(&s, "storage");
        }
        for guarantee in [
            Guarantee::ExactlyOnce,
            Guarantee::AtLeastOnce,
            Guarantee::AtMostOnce,
            Guarantee::Broken,
        ] {
            let mut s = sample();
            s.expect.guarantee = guarantee;
            round_trip(&s, guarantee.name());
        }
    }

    #[test]
    fn odd_durations_round_trip() {
        let odd = [
            SimDuration(1),
            SimDuration::from_micros(1_001),
            SimDuration(3_000_000_007),
            SimDuration(1_337),
            SimDuration::ZERO,
            SimDuration::from_secs(90),
            SimDuration::from_secs(7_200),
            SimDuration::from_secs(3_601),
            SimDuration(MAX_DURATION.0 - 1),
            MAX_DURATION,
        ];
        for d in odd {
            let mut s = sample();
            s.operators[3].cost = d;
            s.operators[0].cost_jitter = d;
            s.network.step_quantum = d;
            s.network.latency_min = d;
            s.network.latency_max = d;
            s.checkpoint.first_delay = d;
            s.checkpoint.min_pause = d;
            s.checkpoint.alignment_timeout = d;
            s.checkpoint.storage_latency = d;
            s.checkpoint.rpc_latency = d;
            s.faults.detection_delay = d;
            s.faults.restart_delay = d;
            s.faults.crashes[0].at = SimTime(d.nanos());
            if d > SimDuration::ZERO {
                s.network.flush_timeout = d;
                s.checkpoint.interval = Some(d);
                s.checkpoint.timeout = d;
                s.limits.max_time = SimTime(d.nanos());
                let random = s.faults.random.as_mut().expect("random");
                random.mean_interval = d;
                random.window_start = SimTime(d.nanos() - 1);
                random.window_end = SimTime(d.nanos());
            }
            round_trip(&s, &format!("{d:?}"));
        }
    }

    #[test]
    fn awkward_strings_round_trip() {
        for description in [
            "",
            "say \"hi\"",
            "C:\\path\\to\\file \\n not a newline",
            "two\nlines\r\nand a tab\there",
            "'single' '''triple''' \"\"\"triple\"\"\"",
            "# not a comment ] [table] = x",
            "unicode: µs ünï 日本 🦀",
            "controls: \u{0}\u{1}\u{8}\u{c}\u{1b}\u{7f}\u{85}",
            "trailing backslash \\",
        ] {
            let mut s = sample();
            s.description = description.to_string();
            s.name = format!("n {description} x");
            round_trip(&s, description);
            assert_eq!(
                to_toml(&s).lines().count(),
                to_toml(&sample()).lines().count(),
                "strings are written on one line"
            );
        }
    }

    #[test]
    fn swarm_round_trips() {
        let full = SwarmSpec {
            enabled: true,
            latency_max: Some((SimDuration::ZERO, SimDuration(3_000_000_007))),
            buffer_records: Some((1, MAX_BUFFER_RECORDS)),
            buffer_credits: Some((2, 2)),
            interval: Some((SimDuration(1), SimDuration::from_millis(1_001))),
            timeout: Some((SimDuration::from_secs(1), SimDuration::from_secs(600))),
            cost_percent: Some((0, 100_000)),
            crash_mean_interval: Some((SimDuration::from_millis(5), SimDuration::from_secs(2))),
            max_crashes: Some((0, 12_345)),
            crash_window_end: Some((SimDuration::ZERO, MAX_DURATION)),
            notification_loss_percent: Some((0, 100)),
            storage_failure_percent: Some((0, 5)),
            storage_slow_percent: Some((3, 3)),
            coordinator_crashes: Some((0, 2)),
            worker_crashes: Some((1, 4)),
            latency_spike_extra: Some((SimDuration::ZERO, SimDuration::from_millis(9))),
            partition_duration: Some((SimDuration(1), SimDuration::from_millis(30))),
        };
        let partial = SwarmSpec {
            buffer_credits: Some((1, 4)),
            timeout: Some((SimDuration(7), SimDuration(7))),
            ..SwarmSpec::default()
        };
        for (what, spec) in [
            ("full swarm", full),
            ("partial swarm", partial),
            ("empty swarm", SwarmSpec::default()),
        ] {
            let mut s = sample();
            s.swarm = Some(spec);
            round_trip(&s, what);
            assert!(to_toml(&s).contains("\n\n[swarm]\nenabled = "), "{what}");
        }
        assert!(!to_toml(&sample()).contains("[swarm]"));
    }

    #[test]
    fn extreme_integers_round_trip() {
        let mut s = sample();
        s.max_parallelism = 32_768;
        s.operators[1].kind = OperatorKind::Map {
            mul: i64::MIN,
            add: i64::MAX,
        };
        s.operators[2].kind = OperatorKind::Filter {
            modulus: i64::MAX as u64,
            keep_below: 0,
        };
        if let OperatorKind::Source(src) = &mut s.operators[0].kind {
            src.keys = i64::MAX as u64;
            src.value_max = i64::MAX as u64;
            src.records_per_partition = 66_000_000;
        }
        s.network.buffer_records = MAX_BUFFER_RECORDS;
        s.checkpoint.max_concurrent = u32::MAX;
        s.checkpoint.retained = u32::MAX;
        s.checkpoint.tolerable_failures = u32::MAX;
        s.checkpoint.storage_bytes_per_sec = i64::MAX as u64;
        s.faults.max_restarts = 0;
        s.limits.max_events = i64::MAX as u64;
        round_trip(&s, "extreme integers");
        let text = to_toml(&s);
        assert!(
            text.contains("\nmul = -9_223_372_036_854_775_808\n"),
            "{text}"
        );
        assert!(text.contains("\nmax_events = 9_223_372_036_854_775_807\n"));
    }

    #[test]
    fn out_of_range_values_are_written_not_changed() {
        // Not representable: the parser refuses it instead of reading another value.
        let mut s = sample();
        s.limits.max_events = u64::MAX;
        let text = to_toml(&s);
        assert!(text.contains("\nmax_events = 18_446_744_073_709_551_615\n"));
        assert!(parse_str(&text, "big").is_err());

        // Past the limits on values: written as is, refused when read.
        let mut s = sample();
        s.network.latency_max = SimDuration(u64::MAX);
        let text = to_toml(&s);
        assert!(text.contains("\nlatency_max = \"18446744073709551615ns\"\n"));
        assert!(parse_str(&text, "long").is_err());

        let mut s = sample();
        s.edges[0].to = OperatorId(99);
        assert!(parse_str(&to_toml(&s), "dangling").is_err());
    }

    #[test]
    fn layout_follows_the_docs() {
        let text = to_toml(&sample());
        assert!(text.starts_with(&format!("{HEADER}\nversion = 1\nname = \"every-kind\"\n")));
        let headers: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
        let mut expected = vec!["[network]"];
        expected.extend(["[[operators]]"; 10]);
        expected.extend(["[[edges]]"; 10]);
        expected.extend(["[checkpoint]", "[cluster]", "[faults]"]);
        expected.extend(["[[faults.crashes]]"; 3]);
        expected.extend([
            "[faults.random]",
            "[faults.restart]",
            "[faults.notifications]",
            "[faults.storage]",
            "[faults.coordinator]",
            "[faults.coordinator.random]",
            "[[faults.worker_crashes]]",
            "[faults.random_workers]",
            "[[faults.latency_spikes]]",
            "[[faults.latency_spikes]]",
            "[[faults.partitions]]",
            "[[faults.slow_tasks]]",
            "[[savepoints]]",
            "[[savepoints]]",
            "[limits]",
            "[expect]",
        ]);
        assert_eq!(headers, expected);
        for (i, line) in text.lines().enumerate() {
            if line.starts_with('[') {
                assert_eq!(
                    text.lines().nth(i - 1),
                    Some(""),
                    "blank line before {line}"
                );
            }
        }
        assert!(text.contains("\ntask = \"sum[2]\"\n"));
        assert!(text.contains("\nat = \"430ms\"\n"));
        assert!(text.contains("\nwindow_end = \"3000000007ns\"\n"));
        assert!(text.contains("\nmax_time = \"90s\"\n"));
        assert!(text.ends_with("[expect]\nguarantee = \"at-least-once\"\n"));
    }

    #[test]
    fn durations_are_exact_in_the_largest_unit() {
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (1_337, "1337ns"),
            (250_000, "250us"),
            (1_001_000, "1001us"),
            (5_000_000, "5ms"),
            (1_000_000_000, "1s"),
            (3_000_000_007, "3000000007ns"),
            (90_000_000_000, "90s"),
            (600_000_000_000, "10m"),
            (7_200_000_000_000, "2h"),
            (u64::MAX, "18446744073709551615ns"),
        ] {
            assert_eq!(duration(SimDuration(nanos)), text);
            assert_eq!(parse_duration(text), Ok(SimDuration(nanos)), "{text}");
        }
    }

    #[test]
    fn integers_are_grouped() {
        for (n, text) in [
            (0, "0"),
            (-5, "-5"),
            (9_999, "9999"),
            (10_000, "10_000"),
            (-123_456, "-123_456"),
            (1_000_000_000, "1_000_000_000"),
        ] {
            assert_eq!(integer(n), text);
            let doc: toml::Table = toml::from_str(&format!("k = {text}")).expect(text);
            assert_eq!(i128::from(doc["k"].as_integer().expect("int")), n);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn any_duration_round_trips(nanos in proptest::prelude::any::<u64>()) {
            let d = SimDuration(nanos);
            proptest::prop_assert_eq!(parse_duration(&duration(d)), Ok(d));
        }

        #[test]
        fn any_string_round_trips(s in "\\PC*|[\\x00-\\x7f\\u{80}-\\u{9f}]*") {
            let doc: toml::Table = toml::from_str(&format!("k = {}", quote(&s)))
                .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(doc["k"].as_str(), Some(s.as_str()));
            proptest::prop_assert!(!quote(&s).contains('\n'));
        }

        #[test]
        fn any_integer_round_trips(n in proptest::prelude::any::<i64>()) {
            let doc: toml::Table = toml::from_str(&format!("k = {}", integer(n.into())))
                .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(doc["k"].as_integer(), Some(n));
        }
    }
}
