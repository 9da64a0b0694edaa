//! The scenario format end to end: the writer's round trips (every kind
//! and non-default value, the shipped scenarios, the documented example)
//! and its layout. The parser's rules on small files are in
//! `scenario_rules`; positioned error messages have their own chapter
//! (`scenario_errors`).

use crate::scenario_sample::sample;
use ckptsim::engine::{parse_duration, SimDuration, SimTime};
use ckptsim::scenario::write::{duration, to_toml, HEADER};
use ckptsim::scenario::{
    load, parse_str, Algorithm, Guarantee, MemoryLoss, OperatorId, OperatorKind, RestartStrategy,
    Scenario, ScenarioData, ScenarioErrors, StorageKind, SwarmSpec, MAX_BUFFER_RECORDS,
    MAX_DURATION,
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

fn json(s: &ScenarioData) -> serde_json::Value {
    serde_json::to_value(s).expect("Scenario serializes")
}

/// Writes, parses, compares, and checks that writing again is a no-op.
fn round_trip(s: &ScenarioData, what: &str) {
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
        "operator_chaining",
        "network",
        "operators",
        "edges",
        "checkpoint",
        "faults",
        "limits",
        "expect",
        "replay",
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
            sorted(&["at", "stop", "drain", "format"]),
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
            "local_channels",
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
        "floating_buffers",
        "output_buffers",
        "latency_min",
        "latency_max",
        "flush_timeout",
        "step_quantum",
        "input_order",
    ];
    let mut network = sorted(&network);
    if table(&doc["network"]).contains_key("buffer_size") {
        network.push("buffer_size".to_string());
        network.sort();
    }
    assert_eq!(keys(&table(&doc["network"])), network, "{what}");
    for op in array(doc.get("operators")) {
        let own: &[&str] = match op["kind"].as_str().expect("kind") {
            "source" => &[
                "partitions",
                "records_per_partition",
                "records_per_second",
                "keys",
                "key_distribution",
                "hot_key_percent",
                "value_max",
                "record_size",
                "record_size_max",
                "split_assignment",
                "initial_splits",
                "discovery_interval",
                "push_splits",
                "no_more_splits_at_assignment",
                "event_time_step",
                "out_of_orderness",
                "partition_skew",
                "watermark_interval",
                "watermark_bound",
                "idle_timeout",
                "alignment_group",
                "alignment_max_drift",
                "alignment_update_interval",
                "payloads",
            ],
            "map" => &["mul", "add"],
            "filter" => &["modulus", "keep_below"],
            "flat-map" => &["copies"],
            "count-window" => &["size"],
            // Sessions have a gap and no size or slide.
            "event-time-window" if op.get("session_gap").is_some() => {
                &["session_gap", "allowed_lateness"]
            }
            "event-time-window" => &["window_size", "window_slide", "allowed_lateness"],
            "keyed-process" => &["timer_delay", "processing_delay"],
            "sink-at-least-once" => &["batch"],
            "sink-upsert" => &["buffer_rows"],
            "sink-log" => &[
                "delivery",
                "transaction_naming",
                "topic_partitions",
                "producer_batch",
                "transaction_timeout",
                "delivery_timeout",
                "request_timeout",
                "retry_backoff",
                "max_block",
                "commit_retries",
            ],
            "source-log" => &["topic", "isolation", "starting_offsets", "fetch_interval"],
            "buffer" => &["capacity", "redistribution"],
            "broadcast-process" => &["rules"],
            "min-label" => &["nodes", "degree"],
            _ => &[],
        };
        let mut all = vec![
            "id",
            "kind",
            "parallelism",
            "cost",
            "cost_jitter",
            "chaining",
        ];
        all.extend_from_slice(own);
        // A source's lengths and rates: `records_per_partition` and
        // `records_per_second`, or one per partition in `partition_records`
        // and `partition_rates`.
        let mut k = keys(&op);
        for (list, one) in [
            ("partition_records", "records_per_partition"),
            ("partition_rates", "records_per_second"),
        ] {
            if let Some(at) = k.iter().position(|key| key == list) {
                k[at] = one.to_string();
                k.sort();
            }
        }
        assert_eq!(k, sorted(&all), "{what}: operator");
    }
    for edge in array(doc.get("edges")) {
        // An edge's own network settings only when it has them.
        let mut k = keys(&edge);
        let own = [
            "latency_min",
            "latency_max",
            "buffer_credits",
            "buffer_size",
            "feedback",
            "side_output",
        ];
        k.retain(|key| !own.contains(&key.as_str()));
        assert_eq!(k, sorted(&["from", "to", "partitioning", "chain"]));
    }
    let checkpoint = [
        "algorithm",
        "interval",
        "first_delay",
        "local_jitter",
        "min_pause",
        "timeout",
        "max_concurrent",
        "alignment_timeout",
        "tolerable_failures",
        "retained",
        "retain_on_cancel",
        "during_recovery",
        "flink_version",
        "state_backend",
        "max_runs",
        "materialization_interval",
        "changelog_replay_cost",
        "storage_sync",
        "storage",
        "storage_latency",
        "storage_bytes_per_sec",
        "rpc_latency",
        "max_subtasks_per_channel_state_file",
        "file_merging",
        "file_merging_across_checkpoints",
        "rpc_latency_max",
    ];
    let mut checkpoint = sorted(&checkpoint);
    if doc["checkpoint"]["storage"].as_str() == Some("memory") {
        // Memory storage's size limit, an error with a file system.
        checkpoint.push("max_state_size".to_string());
        checkpoint.sort();
    }
    if doc["checkpoint"]["file_merging"].as_bool() == Some(true) {
        // File merging's file size, an error without it.
        checkpoint.push("file_merging_max_file_size".to_string());
        checkpoint.sort();
    }
    assert_eq!(keys(&table(&doc["checkpoint"])), checkpoint);
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
        "operator_events",
        "storage",
        "coordinator",
        "slow_tasks",
        "worker_crashes",
        "random_workers",
        "latency_spikes",
        "partitions",
        "storage_failures",
        "lost_notifications",
        "broker",
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
        // `operators` only when it restricts the crashes.
        let mut k = keys(&table(&faults["random"]));
        k.retain(|key| key != "operators");
        let random = ["mean_interval", "window_start", "window_end", "max_crashes"];
        assert_eq!(k, sorted(&random));
    }
    assert_eq!(keys(&faults), sorted(&expected), "{what}: faults");
    for crash in array(faults.get("crashes")) {
        // At a time, or after an event (`checkpoint`, `of` and `repeat`
        // when set).
        let mut k = keys(&crash);
        if k.contains(&"on".to_string()) {
            k.retain(|key| key != "checkpoint" && key != "of" && key != "repeat");
            assert_eq!(k, sorted(&["on", "task", "delay"]));
        } else {
            assert_eq!(k, sorted(&["at", "task"]));
        }
    }
    assert_eq!(
        keys(&table(&doc["limits"])),
        sorted(&[
            "max_events",
            "max_time",
            "checkpoint_gap",
            "transaction_open",
            "restart_loop",
            "blocked_input",
            "output_latency",
            "watermark_stall"
        ])
    );
    assert_eq!(keys(&table(&doc["expect"])), sorted(&["guarantee"]));
    // A schedule only when it has one.
    let mut replay = keys(&table(&doc["replay"]));
    replay.retain(|k| k != "choices" && k != "crash_points" && k != "mail_orders");
    assert_eq!(replay, sorted(&["seed", "mutants"]));
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

#[test]
fn every_kind_and_non_default_value_round_trips() {
    let s = sample();
    let kinds: Vec<&str> = s.operators.iter().map(|o| o.kind.name()).collect();
    for (name, _) in ckptsim::scenario::OPERATOR_KINDS {
        assert!(kinds.contains(name), "sample lacks kind {name}");
    }
    round_trip(&s, "sample");
}

#[test]
fn without_faults_or_edges_of_some_kinds() {
    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.faults.crashes.clear();
    s.faults.random = None;
    round_trip(&s, "no faults");

    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.faults.random = None;
    round_trip(&s, "crashes only");

    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.faults.crashes.clear();
    round_trip(&s, "random only");

    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.faults.notifications = None;
    s.faults.storage = None;
    s.faults.coordinator = None;
    s.faults.slow_tasks.clear();
    s.faults.restart = RestartStrategy::FixedDelay;
    round_trip(&s, "fixed delay, no new fault kinds");

    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
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
    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.checkpoint.interval = None;
    round_trip(&s, "interval none");
    assert!(to_toml(&s).contains("\ninterval = \"none\"\n"));
    s.checkpoint.first_delay = SimDuration::ZERO;
    round_trip(&s, "interval none, no first delay");
}

#[test]
fn every_algorithm_storage_and_guarantee_round_trips() {
    for algorithm in Algorithm::all() {
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.checkpoint.algorithm = algorithm;
        s.checkpoint.max_concurrent = algorithm.max_concurrent().unwrap_or(5);
        if ckptsim::scenario::unsupported(&s, algorithm).is_some() {
            // The uncoordinated families refuse parts of the sample: a job
            // they run instead.
            let mut s = ckptsim::scenario::ScenarioData::clone(&crate::common::load("wordcount"));
            s.checkpoint.algorithm = algorithm;
            round_trip(&s, algorithm.name());
            continue;
        }
        round_trip(&s, algorithm.name());
    }
    for storage in [StorageKind::Memory, StorageKind::Filesystem] {
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.checkpoint.storage = storage;
        if storage == StorageKind::Memory {
            // Files only on a file system.
            s.checkpoint.state_backend = ckptsim::scenario::StateBackend::Hashmap;
            s.checkpoint.storage_sync = SimDuration::ZERO;
            s.checkpoint.file_merging = false;
            s.checkpoint.file_merging_across_checkpoints = false;
            s.checkpoint.file_merging_max_file_size = 32 << 20; // written only with it
        }
        round_trip(&s, "storage");
    }
    for guarantee in [
        Guarantee::ExactlyOnce,
        Guarantee::AtLeastOnce,
        Guarantee::AtMostOnce,
        Guarantee::Broken,
    ] {
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
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
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
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
        s.checkpoint.rpc_latency_max = d;
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
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.description = description.to_string();
        s.name = format!("n {description} x");
        round_trip(&s, description);
    }
}

#[test]
fn swarm_round_trips() {
    let full = SwarmSpec {
        enabled: true,
        latency_max: Some((SimDuration::ZERO, SimDuration(3_000_000_007))),
        buffer_records: Some((1, MAX_BUFFER_RECORDS)),
        buffer_credits: Some((2, 2)),
        floating_buffers: Some((0, 17)),
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
        rpc_latency_max: Some((SimDuration::from_micros(200), SimDuration::from_millis(4))),
        operator_event_loss_percent: Some((1, 7)),
        source_rate: Some((10, 5_000)),
        max_concurrent: Some((1, 4)),
        max_restarts: Some((0, 9)),
        watermark_interval: Some((SimDuration::from_millis(1), SimDuration::from_millis(200))),
        out_of_orderness: Some((SimDuration::ZERO, SimDuration::from_millis(40))),
        partition_skew: Some((SimDuration::from_millis(3), SimDuration::from_secs(1))),
        watermark_bound_percent: Some((0, 150)),
        idle_timeout: Some((SimDuration::from_millis(5), SimDuration::from_millis(90))),
        timer_delay: Some((SimDuration::ZERO, SimDuration::from_millis(60))),
        processing_delay: Some((SimDuration::from_millis(1), SimDuration::from_millis(30))),
        alignment_max_drift: Some((SimDuration::from_millis(5), SimDuration::from_millis(80))),
        alignment_update_interval: Some((
            SimDuration::from_millis(2),
            SimDuration::from_millis(40),
        )),
        storage_crashes: Some((0, 3)),
        storage_sync: Some((SimDuration::ZERO, SimDuration::from_micros(700))),
        broker_outage: Some((SimDuration::ZERO, SimDuration::from_millis(45))),
        input_order: Some(vec![
            ckptsim::scenario::InputOrder::Random,
            ckptsim::scenario::InputOrder::Fifo,
        ]),
        during_recovery: Some(vec![true]),
        flink_version: Some(vec![
            ckptsim::scenario::FlinkVersion::V2_3,
            ckptsim::scenario::FlinkVersion::V1_20,
        ]),
        committer: Some(vec![
            ckptsim::scenario::CommitterPlacement::Global,
            ckptsim::scenario::CommitterPlacement::Chained,
        ]),
        state_backend: Some(vec![
            ckptsim::scenario::StateBackend::Incremental,
            ckptsim::scenario::StateBackend::Hashmap,
        ]),
        file_merging: Some(vec![
            ckptsim::scenario::FileMerging::AcrossCheckpoints,
            ckptsim::scenario::FileMerging::Off,
        ]),
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
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.swarm = Some(spec);
        round_trip(&s, what);
        assert!(to_toml(&s).contains("\n\n[swarm]\nenabled = "), "{what}");
    }
    assert!(!to_toml(&sample()).contains("[swarm]"));
}

#[test]
fn extreme_integers_round_trip() {
    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
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
    assert!(text.contains("\nmul = -9223372036854775808\n"), "{text}");
    assert!(text.contains("\nmax_events = 9223372036854775807\n"));
}

#[test]
fn out_of_range_values_are_written_not_changed() {
    // Not representable in TOML: written as a value that is refused,
    // instead of reading as another valid one.
    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.limits.max_events = u64::MAX;
    let text = to_toml(&s);
    assert!(
        text.contains("\nmax_events = -9223372036854775808\n"),
        "{text}"
    );
    assert!(parse_str(&text, "big").is_err());

    // Past the limits on values: written as is, refused when read.
    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.network.latency_max = SimDuration(u64::MAX);
    let text = to_toml(&s);
    assert!(text.contains("\nlatency_max = \"18446744073709551615ns\"\n"));
    assert!(parse_str(&text, "long").is_err());

    let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
    s.edges[0].to = OperatorId(99);
    let errors = parse_str(&to_toml(&s), "dangling").expect_err("dangling edge");
    assert_eq!(errors.0[0].message, "unknown operator `#99`");
}

#[test]
fn layout_follows_the_docs() {
    let text = to_toml(&sample());
    assert!(text.starts_with(&format!("{HEADER}\nversion = 1\nname = \"every-kind\"\n")));
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    let mut expected = vec!["[network]"];
    expected.extend(["[[operators]]"; 22]);
    expected.extend(["[[edges]]"; 30]);
    expected.extend(["[checkpoint]", "[faults]"]);
    expected.extend(["[[faults.crashes]]"; 5]);
    expected.extend([
        "[faults.random]",
        "[faults.restart]",
        "[faults.notifications]",
        "[faults.operator_events]",
        "[faults.storage]",
        "[faults.coordinator]",
        "[faults.coordinator.random]",
        "[[faults.coordinator.crash_on]]",
        "[[faults.slow_tasks]]",
        "[[faults.slow_tasks]]",
        "[[faults.worker_crashes]]",
        "[[faults.worker_crashes]]",
        "[faults.random_workers]",
        "[[faults.latency_spikes]]",
        "[[faults.latency_spikes]]",
        "[[faults.partitions]]",
        "[[faults.storage_failures]]",
        "[[faults.storage_failures]]",
        "[[faults.lost_notifications]]",
        "[[faults.broker]]",
        "[[faults.broker]]",
        "[limits]",
        "[expect]",
        "[replay]",
        "[[savepoints]]",
        "[[savepoints]]",
        "[cluster]",
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
    assert!(text.contains("\n[expect]\nguarantee = \"at-least-once\"\n"));
    assert!(text.ends_with("local_channels = true\n"), "{text}");
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

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn any_duration_round_trips(nanos in proptest::prelude::any::<u64>()) {
        let d = SimDuration(nanos);
        proptest::prop_assert_eq!(parse_duration(&duration(d)), Ok(d));
    }

    #[test]
    fn any_string_round_trips(text in "\\PC*|[\\x00-\\x7f\\u{80}-\\u{9f}]*") {
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.description = text.clone();
        let back = reparse(&to_toml(&s), "any string");
        proptest::prop_assert_eq!(&back.description, &text);
    }

    #[test]
    fn any_integer_round_trips(n in proptest::prelude::any::<i64>()) {
        let mut s = ckptsim::scenario::ScenarioData::clone(&sample());
        s.operators[1].kind = OperatorKind::Map { mul: n, add: n };
        let back = reparse(&to_toml(&s), "any integer");
        proptest::prop_assert_eq!(&back.operators[1].kind, &s.operators[1].kind);
    }
}
