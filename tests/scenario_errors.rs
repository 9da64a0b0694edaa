//! Scenario parsing: positioned, complete error reports, and defaults on a
//! valid file. Every error case is the valid [`BASE`] scenario with one or a
//! few edits, so line and column numbers refer to `BASE`'s layout (guarded by
//! `base_layout_matches_the_line_numbers_used_here`).

use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::scenario::{
    parse_str, Algorithm, CrashSpec, Guarantee, KeyDistribution, OperatorId, OperatorKind,
    Partitioning, RandomCrashes, ScenarioError, SourceSpec, StorageKind,
};

/// A valid scenario touching every section. Line numbers in the tests below
/// refer to this text (line 1 is `version = 1`).
const BASE: &str = r#"version = 1
name = "wordcount"
description = "count words, crash once"
max_parallelism = 64

[network]
buffer_records = 8
latency_min = "20us"
latency_max = "100us"

[[operators]]
id = "source"
kind = "source"
parallelism = 2
records_per_partition = 500
keys = 10
key_distribution = "cyclic"

[[operators]]
id = "double"
kind = "map"
parallelism = 2
mul = 2

[[operators]]
id = "count"
kind = "keyed-count"
parallelism = 3
cost = "5us"

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 3

[[edges]]
from = "source"
to = "double"
partitioning = "forward"

[[edges]]
from = "double"
to = "count"
partitioning = "hash"

[[edges]]
from = "count"
to = "sink"
partitioning = "forward"

[checkpoint]
algorithm = "aligned"
interval = "500ms"
storage = "filesystem"

[faults]
restart_delay = "50ms"

[[faults.crashes]]
at = "1.2s"
task = "count[1]"

[faults.random]
mean_interval = "2s"
window_end = "4s"

[limits]
max_time = "1m"

[expect]
guarantee = "exactly-once"
"#;

/// `BASE` with the one occurrence of `from` replaced by `to`.
fn edit(from: &str, to: &str) -> String {
    assert_eq!(
        BASE.matches(from).count(),
        1,
        "`{from}` must occur once in BASE"
    );
    BASE.replacen(from, to, 1)
}

/// The errors for `text`, which must not parse.
fn errors(text: &str) -> Vec<ScenarioError> {
    match parse_str(text, "base.toml") {
        Ok(_) => panic!("expected errors, but the scenario parsed:\n{text}"),
        Err(errors) => errors.0,
    }
}

/// The single error for `text`.
fn only_error(text: &str) -> ScenarioError {
    let mut errors = errors(text);
    assert_eq!(errors.len(), 1, "expected exactly one error: {errors:#?}");
    errors.remove(0)
}

/// (line, column) of an error.
fn at(error: &ScenarioError) -> (usize, usize) {
    (
        error.line.expect("error has a line"),
        error.column.expect("error has a column"),
    )
}

fn help(error: &ScenarioError) -> &str {
    error.help.as_deref().unwrap_or("")
}

#[test]
fn base_layout_matches_the_line_numbers_used_here() {
    let line = |n: usize| BASE.lines().nth(n - 1).unwrap_or_default();
    assert_eq!(line(14), "parallelism = 2");
    assert_eq!(line(16), "keys = 10");
    assert_eq!(line(22), "parallelism = 2");
    assert_eq!(line(23), "mul = 2");
    assert_eq!(line(29), "cost = \"5us\"");
    assert_eq!(line(48), "to = \"sink\"");
    assert_eq!(line(49), "partitioning = \"forward\"");
    assert_eq!(line(52), "algorithm = \"aligned\"");
    assert_eq!(line(53), "interval = \"500ms\"");
    assert_eq!(line(60), "at = \"1.2s\"");
    assert_eq!(line(61), "task = \"count[1]\"");
    assert_eq!(line(71), "guarantee = \"exactly-once\"");
    assert_eq!(BASE.lines().count(), 71);
}

#[test]
fn toml_syntax_error_has_its_position() {
    let error = only_error(&edit("mul = 2", "mul 2"));
    assert_eq!(at(&error), (23, 5));
    assert!(error.message.contains('='), "{}", error.message);
    assert!(error
        .to_string()
        .starts_with("base.toml:23:5: error: expected"));
}

#[test]
fn unknown_key_is_named_with_the_expected_keys() {
    let error = only_error(&edit("cost = \"5us\"", "cots = \"5us\""));
    assert_eq!(at(&error), (29, 1));
    assert!(
        error.message.contains("unknown field `cots`"),
        "{}",
        error.message
    );
    // toml's message lists what is accepted.
    assert!(error.message.contains("`parallelism`"), "{}", error.message);
    assert_eq!(help(&error), "did you mean `cost`?");
}

#[test]
fn a_restart_setting_in_the_wrong_place_points_to_faults() {
    let restart = "restart settings are in [faults] (`restart_delay`, `max_restarts`, `failover`) \
                   and [faults.restart] (`strategy`, `max_backoff`, `backoff_multiplier`, \
                   `reset_threshold`, `max_failures`, `interval`)";
    let flink = "; or Flink's configuration keys (`restart-strategy.…`) go in a [flink] table; \
                 docs/scenarios.md lists those ckptsim reads";
    for (key, line, help_after) in [
        ("restart_strategy = \"fixed-delay\"", 54, ""),
        ("restart-strategy.fixed-delay.attempts = 3", 54, flink),
    ] {
        let error = only_error(&edit(
            "interval = \"500ms\"",
            &format!("interval = \"500ms\"\n{key}"),
        ));
        assert_eq!(at(&error).0, line, "{key}");
        assert!(
            error.message.starts_with("unknown field `restart"),
            "{}",
            error.message
        );
        assert_eq!(help(&error), format!("{restart}{help_after}"), "{key}");
    }
}

#[test]
fn edge_to_unknown_operator_points_at_the_value_and_lists_ids() {
    let error = only_error(&edit("to = \"sink\"", "to = \"snik\""));
    assert_eq!(at(&error), (48, 6));
    assert_eq!(error.message, "unknown operator `snik`");
    assert!(
        help(&error).contains("did you mean `sink`?"),
        "{}",
        help(&error)
    );
    assert!(
        help(&error).contains("known operators: source, double, count, sink"),
        "{}",
        help(&error)
    );
}

#[test]
fn parallelism_zero_is_rejected() {
    let error = only_error(&edit(
        "kind = \"map\"\nparallelism = 2",
        "kind = \"map\"\nparallelism = 0",
    ));
    assert_eq!(at(&error), (22, 15));
    assert_eq!(error.message, "parallelism must be at least 1");
}

#[test]
fn cycle_is_reported_at_the_edge_that_closes_it() {
    let text =
        format!("{BASE}\n[[edges]]\nfrom = \"count\"\nto = \"double\"\npartitioning = \"hash\"\n");
    let error = only_error(&text);
    assert_eq!(at(&error), (73, 1));
    assert_eq!(
        error.message,
        "the job graph has a cycle: double -> count -> double"
    );
    assert_eq!(
        help(&error),
        "mark the edge that goes back to an earlier operator with feedback = true"
    );
}

#[test]
fn self_loop_is_a_cycle() {
    let text = format!(
        "{BASE}\n[[edges]]\nfrom = \"double\"\nto = \"double\"\npartitioning = \"forward\"\n"
    );
    let error = only_error(&text);
    assert_eq!(at(&error), (73, 1));
    assert_eq!(error.message, "the job graph has a cycle: double -> double");
}

#[test]
fn unknown_algorithm_lists_the_known_ones() {
    let error = only_error(&edit(
        "algorithm = \"aligned\"",
        "algorithm = \"chandy-lamprey\"",
    ));
    assert_eq!(at(&error), (52, 13));
    assert_eq!(error.message, "unknown algorithm `chandy-lamprey`");
    let known = format!("known algorithms: {}", Algorithm::names());
    assert!(help(&error).contains(&known), "{}", help(&error));
}

#[test]
fn unaligned_refuses_concurrent_checkpoints() {
    let text = edit(
        "algorithm = \"aligned\"",
        "algorithm = \"unaligned\"\nmax_concurrent = 2",
    );
    let error = only_error(&text);
    assert_eq!(at(&error).0, 53);
    assert!(
        error.message.contains("at most 1 concurrent checkpoint"),
        "{}",
        error.message
    );
    assert!(
        help(&error).contains("max_concurrent = 1"),
        "{}",
        help(&error)
    );
}

#[test]
fn rpc_jitter_needs_a_maximum_above_the_latency() {
    let text = edit(
        "algorithm = \"aligned\"",
        "algorithm = \"aligned\"\nrpc_latency = \"1ms\"\nrpc_latency_max = \"500us\"",
    );
    let error = only_error(&text);
    assert_eq!(at(&error).0, 54);
    assert!(
        error
            .message
            .contains("rpc_latency_max (500us) must not be below rpc_latency (1ms)"),
        "{}",
        error.message
    );
}

#[test]
fn forward_edge_needs_equal_parallelism() {
    let error = only_error(&edit(
        "kind = \"sink-2pc\"\nparallelism = 3",
        "kind = \"sink-2pc\"\nparallelism = 2",
    ));
    assert_eq!(at(&error), (49, 16));
    assert_eq!(
        error.message,
        "forward edge count -> sink connects parallelism 3 to parallelism 2"
    );
    assert_eq!(
        help(&error),
        "use `rebalance` or `hash`, or make the parallelisms equal"
    );
}

#[test]
fn bad_duration_reports_parse_duration_message() {
    let error = only_error(&edit("interval = \"500ms\"", "interval = \"500msec\""));
    assert_eq!(at(&error), (53, 12));
    assert!(
        error
            .message
            .contains("duration `500msec` has unknown unit `msec`"),
        "{}",
        error.message
    );
}

#[test]
fn several_errors_are_all_reported_in_file_order() {
    let text = BASE
        .replacen("parallelism = 2", "parallelism = 0", 1) // line 14, the source
        .replacen("algorithm = \"aligned\"", "algorithm = \"nope\"", 1) // line 52
        .replacen("at = \"1.2s\"", "at = \"soon\"", 1) // line 60
        .replacen("task = \"count[1]\"", "task = \"count[7]\"", 1) // line 61
        .replacen("guarantee = \"exactly-once\"", "guarantee = \"maybe\"", 1); // line 71
    let errors = errors(&text);
    let found: Vec<((usize, usize), &str)> =
        errors.iter().map(|e| (at(e), e.message.as_str())).collect();
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert_eq!(found[0], ((14, 15), "parallelism must be at least 1"));
    assert_eq!(found[1], ((52, 13), "unknown algorithm `nope`"));
    assert_eq!(found[2].0, (60, 6));
    assert!(found[2].1.contains("`soon`"), "{}", found[2].1);
    assert_eq!(
        found[3],
        (
            (61, 8),
            "task `count[7]` does not exist: operator `count` has parallelism 3"
        )
    );
    assert_eq!(found[4], ((71, 13), "unknown guarantee `maybe`"));
}

#[test]
fn key_for_another_kind_is_rejected() {
    let error = only_error(&edit("keys = 10", "copies = 10"));
    assert_eq!(at(&error), (16, 10));
    assert_eq!(
        error.message,
        "key `copies` does not apply to an operator of kind `source`"
    );
    assert!(help(&error).contains("`flat-map`"), "{}", help(&error));
}

#[test]
fn valid_scenario_parses_with_defaults_applied() {
    let s = parse_str(BASE, "base.toml").expect("BASE is valid");
    assert_eq!(s.name, "wordcount");
    assert_eq!(s.description, "count words, crash once");
    assert_eq!(s.max_parallelism, 64);

    // Network: set keys, and defaults for the rest.
    assert_eq!(s.network.buffer_records, 8);
    assert_eq!(s.network.buffer_credits, 2);
    assert_eq!(s.network.output_buffers, 1);
    assert_eq!(s.network.latency_min, SimDuration::from_micros(20));
    assert_eq!(s.network.latency_max, SimDuration::from_micros(100));
    assert_eq!(s.network.flush_timeout, SimDuration::from_millis(1));

    // Operators in file order, OperatorId = index.
    let ids: Vec<&str> = s.operators.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["source", "double", "count", "sink"]);
    let source = s.op(OperatorId(0));
    assert_eq!(
        source.kind,
        OperatorKind::Source(SourceSpec {
            partitions: 2, // defaults to the parallelism
            records_per_partition: 500,
            partition_records: Vec::new(),
            records_per_second: 0,
            partition_rates: Vec::new(),
            keys: 10,
            key_distribution: KeyDistribution::Cyclic,
            hot_key_percent: 0,
            value_max: 1,
            record_size: 32, // what a record of the simulator holds
            record_size_max: 32,
            split_assignment: ckptsim::scenario::SplitAssignment::Static,
            initial_splits: 2,
            discovery_interval: SimDuration::from_millis(20),
            push_splits: false,
            no_more_splits_at_assignment: false,
            event_time_step: SimDuration::from_millis(1),
            out_of_orderness: SimDuration::ZERO,
            partition_skew: SimDuration::ZERO,
            watermark_interval: SimDuration::ZERO,
            watermark_bound: SimDuration::ZERO,
            idle_timeout: SimDuration::ZERO,
            alignment_group: String::new(),
            alignment_max_drift: SimDuration::ZERO,
            alignment_update_interval: SimDuration::from_secs(1),
            payloads: false,
        })
    );
    assert_eq!(source.parallelism, 2);
    assert_eq!(source.cost, SimDuration::from_micros(10));
    assert_eq!(source.cost_jitter, SimDuration::ZERO);
    let double = s.op(OperatorId(1));
    assert_eq!(double.kind, OperatorKind::Map { mul: 2, add: 0 });
    assert_eq!(double.cost, SimDuration::from_micros(1));
    let count = s.op(OperatorId(2));
    assert_eq!(count.kind, OperatorKind::KeyedCount);
    assert_eq!(count.parallelism, 3);
    assert_eq!(count.cost, SimDuration::from_micros(5));
    assert_eq!(s.op(OperatorId(3)).kind, OperatorKind::Sink2pc);

    let edges: Vec<(u32, u32, Partitioning)> = s
        .edges
        .iter()
        .map(|e| (e.from.0, e.to.0, e.partitioning))
        .collect();
    assert_eq!(
        edges,
        [
            (0, 1, Partitioning::Forward),
            (1, 2, Partitioning::Hash),
            (2, 3, Partitioning::Forward),
        ]
    );

    // Checkpointing: filesystem storage brings its own defaults.
    let c = &s.checkpoint;
    assert_eq!(c.algorithm, Algorithm::Aligned);
    assert_eq!(c.interval, Some(SimDuration::from_millis(500)));
    assert_eq!(c.first_delay, SimDuration::from_millis(500));
    assert_eq!(c.min_pause, SimDuration::ZERO);
    assert_eq!(c.timeout, SimDuration::from_secs(600));
    assert_eq!(c.max_concurrent, 1);
    assert_eq!(c.tolerable_failures, 0);
    assert_eq!(c.retained, 1);
    assert_eq!(c.storage, StorageKind::Filesystem);
    assert_eq!(c.storage_latency, SimDuration::from_millis(5));
    assert_eq!(c.storage_bytes_per_sec, 200_000_000);
    assert_eq!(c.rpc_latency, SimDuration::from_micros(200));

    let f = &s.faults;
    assert_eq!(f.detection_delay, SimDuration::from_millis(100));
    assert_eq!(f.restart_delay, SimDuration::from_millis(50));
    assert_eq!(f.max_restarts, 1000);
    assert_eq!(
        f.crashes,
        [CrashSpec {
            at: SimTime(1_200_000_000),
            operator: OperatorId(2),
            subtask: 1,
            trigger: None,
            repeat: false,
        }]
    );
    assert_eq!(
        f.random,
        Some(RandomCrashes {
            mean_interval: SimDuration::from_secs(2),
            window_start: SimTime::ZERO,
            window_end: SimTime(4_000_000_000),
            max_crashes: 3,
            operators: Vec::new(),
            workers: Vec::new(),
        })
    );

    assert_eq!(s.limits.max_events, 50_000_000);
    assert_eq!(s.limits.max_time, SimTime(60_000_000_000));
    assert_eq!(s.expect.guarantee, Guarantee::ExactlyOnce);
}

#[test]
fn interval_none_disables_periodic_checkpoints() {
    let s = parse_str(
        &edit("interval = \"500ms\"", "interval = \"none\""),
        "base.toml",
    )
    .expect("valid");
    assert_eq!(s.checkpoint.interval, None);
    assert_eq!(s.checkpoint.first_delay, SimDuration::ZERO);
}

#[test]
fn swarm_ranges_are_checked() {
    let text = format!("{BASE}\n[swarm]\nbuffer_credits = [8, 2]\ninterval = [\"1s\"]\n");
    let errs = errors(&text);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0]
        .message
        .contains("buffer_credits range is empty: 8 > 2"));
    assert!(errs[1]
        .message
        .contains("interval must be a range of two values"));
    let ok = format!("{BASE}\n[swarm]\nenabled = true\nlatency_max = [\"50us\", \"2ms\"]\n");
    let sc = ckptsim::scenario::parse_str(&ok, "base.toml").unwrap();
    let swarm = sc.swarm.clone().unwrap();
    assert!(swarm.enabled);
    assert_eq!(
        swarm.latency_max,
        Some((
            ckptsim::engine::SimDuration::from_micros(50),
            ckptsim::engine::SimDuration::from_millis(2)
        ))
    );
}

/// `[swarm] input_order` lists the orders to draw from: not empty, and
/// only known names.
#[test]
fn swarm_input_orders_are_checked() {
    let errs = errors(&format!("{BASE}\n[swarm]\ninput_order = []\n"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0]
        .message
        .contains("input_order must list at least one order"));
    let errs = errors(&format!(
        "{BASE}\n[swarm]\ninput_order = [\"fifo\", \"lifo\"]\n"
    ));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].message.contains("lifo"), "{errs:?}");
    let ok = format!("{BASE}\n[swarm]\ninput_order = [\"random\"]\n");
    let sc = ckptsim::scenario::parse_str(&ok, "base.toml").unwrap();
    let spec = sc.swarm.clone().unwrap();
    assert_eq!(
        spec.input_order,
        Some(vec![ckptsim::scenario::InputOrder::Random])
    );
    for seed in 0..4 {
        let (drawn, _) = ckptsim::swarm::draw(&sc, &spec, seed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            drawn.network.input_order,
            ckptsim::scenario::InputOrder::Random
        );
    }
}

// ------------------------------------------------------------ the fault model

#[test]
fn unknown_restart_strategy_lists_the_strategies() {
    let text = format!("{BASE}\n[faults.restart]\nstrategy = \"exponential\"\n");
    let error = only_error(&text);
    assert_eq!(at(&error), (74, 12));
    assert_eq!(error.message, "unknown restart strategy `exponential`");
    assert!(
        help(&error)
            .contains("known restart strategies: fixed-delay, exponential-delay, failure-rate"),
        "{}",
        help(&error)
    );
}

#[test]
fn restart_key_of_another_strategy_is_rejected() {
    let text =
        format!("{BASE}\n[faults.restart]\nstrategy = \"fixed-delay\"\nmax_backoff = \"1s\"\n");
    let error = only_error(&text);
    assert_eq!(at(&error), (75, 15));
    assert_eq!(
        error.message,
        "max_backoff belongs to the exponential-delay restart strategy, not fixed-delay"
    );
    assert_eq!(
        help(&error),
        "remove max_backoff, or set strategy = \"exponential-delay\""
    );
}

#[test]
fn fault_percentages_and_factors_are_checked() {
    let text = format!(
        "{BASE}\n[faults.notifications]\nloss_percent = 101\n\n[faults.storage]\nfailure_percent = -1\n\n[[faults.slow_tasks]]\ntask = \"count[7]\"\nuntil = \"1s\"\nfactor = 0\n"
    );
    let errors = errors(&text);
    let messages: Vec<(usize, usize, &str)> = errors
        .iter()
        .map(|e| (e.line.unwrap(), e.column.unwrap(), e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (74, 16, "loss_percent must be at most 100"),
            (77, 19, "failure_percent must be at least 0"),
            (
                80,
                8,
                "task `count[7]` does not exist: operator `count` has parallelism 3"
            ),
            (82, 10, "factor must be at least 1"),
        ]
    );
}

#[test]
fn coordinator_faults_report_bad_choices_and_durations() {
    let text = format!(
        "{BASE}\n[faults.coordinator]\non_memory_loss = \"panic\"\ncrashes = [\"1s\", \"soon\"]\n"
    );
    let errors = errors(&text);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(at(&errors[0]), (74, 18));
    assert_eq!(errors[0].message, "unknown on_memory_loss choice `panic`");
    assert!(help(&errors[0]).contains("restart-from-scratch, fail"));
    assert_eq!(at(&errors[1]), (75, 18));
}

#[test]
fn fault_tables_parse_with_defaults() {
    use ckptsim::scenario::{MemoryLoss, RestartStrategy};
    let text = format!(
        "{BASE}\n[faults.restart]\nstrategy = \"exponential-delay\"\n\n[faults.coordinator]\ncrashes = [\"2s\"]\n\n[faults.storage]\nslow_percent = 5\n"
    );
    let s = parse_str(&text, "base.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.faults.restart,
        RestartStrategy::ExponentialDelay {
            max_backoff: SimDuration::from_secs(60),
            multiplier_permille: 1500,
            reset_threshold: SimDuration::from_secs(3600),
        }
    );
    let c = s.faults.coordinator.clone().expect("coordinator");
    assert_eq!(c.on_memory_loss, MemoryLoss::RestartFromScratch);
    assert_eq!(c.failover_delay, SimDuration::from_millis(200));
    assert_eq!(c.crashes, vec![SimTime(2_000_000_000)]);
    let st = s.faults.storage.clone().expect("storage");
    assert_eq!((st.failure_percent, st.slow_percent), (0, 5));
    assert_eq!(st.slow_latency, SimDuration::from_millis(50));
    assert!(s.faults.notifications.is_none() && s.faults.slow_tasks.is_empty());
}

#[test]
fn cluster_needs_enough_slots_and_worker_crashes_need_a_cluster() {
    // BASE's highest parallelism is 3.
    let text = format!("{BASE}\n[cluster]\nworkers = 1\nslots_per_worker = 2\n");
    let error = only_error(&text);
    assert_eq!(at(&error), (73, 1));
    assert_eq!(
        error.message,
        "the cluster has 2 slots (1 workers × 2) but the highest parallelism is 3"
    );
    assert!(help(&error).contains("slot i runs subtask i of every operator"));

    let text = format!("{BASE}\n[[faults.worker_crashes]]\nat = \"1s\"\nworker = 0\n");
    let error = only_error(&text);
    assert_eq!(at(&error), (73, 1));
    assert_eq!(error.message, "worker crashes need a [cluster] section");

    let text = format!(
        "{BASE}\n[cluster]\nworkers = 3\nplacement = \"random\"\n\n[[faults.worker_crashes]]\nat = \"1s\"\nworker = 3\n"
    );
    let errors = errors(&text);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(errors[0].message, "unknown placement `random`");
    assert_eq!(at(&errors[1]), (79, 10));
    assert_eq!(errors[1].message, "worker must be at most 2");
}

#[test]
fn network_faults_are_validated() {
    let text = format!(
        "{BASE}\n[[faults.latency_spikes]]\nfrom = \"2s\"\nuntil = \"1s\"\nextra = \"1ms\"\nedge = \"double=>count\"\n\n[[faults.partitions]]\nuntil = \"1s\"\nworkers = [0]\n"
    );
    let errors = errors(&text);
    let messages: Vec<(usize, usize, &str)> = errors
        .iter()
        .map(|e| (e.line.unwrap(), e.column.unwrap(), e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (75, 9, "until (1s) must be after from (2s)"),
            (77, 8, "edge `double=>count` is not `from->to`"),
            (79, 1, "a partition needs a [cluster] section"),
        ]
    );
}

// ------------------------------------------------------------ limits on values

const LIMIT_HELP: &str =
    "the largest value ckptsim supports; see \"Limits on values\" in docs/scenarios.md";

#[test]
fn durations_are_at_most_a_year() {
    let error = only_error(&edit("cost = \"5us\"", "cost = \"8761h\""));
    assert_eq!(at(&error), (29, 8));
    assert_eq!(error.message, "cost must be at most 8760h (365 days)");
    assert_eq!(help(&error), LIMIT_HELP);

    // Exactly a year is accepted, wherever a duration or time goes.
    let year = edit("interval = \"500ms\"", "interval = \"8760h\"")
        .replace("max_time = \"1m\"", "max_time = \"8760h\"");
    let s = parse_str(&year, "base.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.checkpoint.interval, Some(ckptsim::scenario::MAX_DURATION));
    assert_eq!(s.limits.max_time.0, ckptsim::scenario::MAX_DURATION.0);
}

#[test]
fn a_duration_past_u64_nanoseconds_is_too_large() {
    // The whole seconds fit in u64 nanoseconds, the fraction does not.
    let error = only_error(&edit(
        "interval = \"500ms\"",
        "interval = \"18446744073.999999999s\"",
    ));
    assert_eq!(at(&error), (53, 12));
    assert_eq!(
        error.message,
        "duration `18446744073.999999999s` is too large"
    );
    let error = only_error(&edit(
        "interval = \"500ms\"",
        "interval = \"18446744073.709551615s\"",
    ));
    assert_eq!(error.message, "interval must be at most 8760h (365 days)");
}

#[test]
fn limits_on_values_are_all_reported_in_file_order() {
    let text = BASE
        .replacen("buffer_records = 8", "buffer_records = 65537", 1) // line 7
        .replacen("parallelism = 2", "parallelism = 32769", 1) // line 14
        .replacen("kind = \"map\"", "kind = \"flat-map\"", 1) // line 21
        .replacen("mul = 2", "copies = 1001", 1) // line 23
        .replacen(
            "cost = \"5us\"",
            "cost_jitter = \"18446744073.709551615s\"",
            1,
        ) // line 29
        .replacen(
            "window_end = \"4s\"",
            "window_end = \"4s\"\nmax_crashes = 1000001",
            1,
        ) // line 66
        .replacen("max_time = \"1m\"", "max_time = \"9000h\"", 1); // line 69
    let errors = errors(&text);
    let found: Vec<((usize, usize), &str, &str)> = errors
        .iter()
        .map(|e| (at(e), e.message.as_str(), help(e)))
        .collect();
    assert_eq!(
        found,
        vec![
            ((7, 18), "buffer_records must be at most 65536", LIMIT_HELP),
            ((14, 15), "parallelism must be at most 32768", LIMIT_HELP),
            ((23, 10), "copies must be at most 1000", LIMIT_HELP),
            (
                (29, 15),
                "cost_jitter must be at most 8760h (365 days)",
                LIMIT_HELP
            ),
            ((66, 15), "max_crashes must be at most 1000000", LIMIT_HELP),
            (
                (69, 12),
                "max_time must be at most 8760h (365 days)",
                LIMIT_HELP
            ),
        ]
    );
}

#[test]
fn swarm_ranges_and_time_lists_keep_the_limits() {
    let text = format!(
        "{BASE}\n[faults.coordinator]\ncrashes = [\"1s\", \"9000h\"]\n\n[swarm]\ninterval = [\"1ms\", \"8761h\"]\nbuffer_records = [1, 65537]\nmax_crashes = [-1, 1000001]\ncoordinator_crashes = [0, 1000001, 2]\n"
    );
    let errors = errors(&text);
    let found: Vec<((usize, usize), &str, &str)> = errors
        .iter()
        .map(|e| (at(e), e.message.as_str(), help(e)))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                (74, 18),
                "crashes must be at most 8760h (365 days)",
                LIMIT_HELP
            ),
            (
                (77, 12),
                "interval bounds must be at most 8760h (365 days)",
                LIMIT_HELP
            ),
            (
                (78, 18),
                "buffer_records bounds must lie in 1..=65536, not 65537",
                LIMIT_HELP
            ),
            // Below the range: no word of limits.
            (
                (79, 15),
                "max_crashes bounds must lie in 0..=1000000, not -1",
                ""
            ),
            (
                (80, 23),
                "coordinator_crashes must be a range of two values, [min, max]",
                "for example coordinator_crashes = [1, 8]"
            ),
        ]
    );
}

/// A value where a table or an array of tables belongs is refused at its
/// place, not read field by field (serde would take `[1, 2]` for a struct)
/// nor taken for an empty table.
#[test]
fn a_value_where_a_table_belongs_is_refused() {
    let text = format!("swarm = []\n{BASE}");
    let e = only_error(&text);
    assert_eq!(at(&e), (1, 9));
    assert!(
        e.message.contains("`swarm` must be a table"),
        "{}",
        e.message
    );
    assert!(help(&e).contains("[swarm]"), "{}", help(&e));

    let e = only_error("network = [\"1ms\", 2]\n");
    assert!(
        e.message.contains("`network` must be a table"),
        "{}",
        e.message
    );

    let e = only_error("operators = 3\n");
    assert_eq!(at(&e), (1, 13));
    assert!(
        e.message
            .contains("`operators` must be an array of tables, not integer"),
        "{}",
        e.message
    );
    assert!(help(&e).contains("[[operators]]"), "{}", help(&e));

    // An inline table is a table.
    let inline = edit("[limits]\nmax_time = \"1m\"\n", "").replacen(
        "[network]",
        "cluster = { workers = 2 }\n[network]",
        1,
    );
    if let Err(e) = ckptsim::scenario::parse_str(&inline, "base.toml") {
        assert!(!e.0.iter().any(|e| e.message.contains("must be")), "{e:?}");
    }
}

#[test]
fn byte_sizes_are_read_with_units_and_checked() {
    let text = edit(
        "keys = 10\n",
        "keys = 10\nrecord_size = \"1.5KiB\"\nrecord_size_max = 4096\n",
    );
    let text = text.replacen("buffer_records = 8\n", "buffer_size = \"32KiB\"\n", 1);
    let s = parse_str(&text, "base.toml").expect("valid");
    assert_eq!(s.network.buffer_size, Some(32 << 10));
    assert_eq!(
        s.network.buffer_records, 65_536,
        "no record limit by default"
    );
    match &s.op(OperatorId(0)).kind {
        OperatorKind::Source(src) => {
            assert_eq!((src.record_size, src.record_size_max), (1536, 4096))
        }
        other => panic!("{other:?}"),
    }
    // The memory limit's default, with memory storage.
    let s = parse_str(
        &edit("storage = \"filesystem\"", "storage = \"memory\""),
        "b",
    )
    .unwrap();
    assert_eq!(s.checkpoint.max_state_size, 5 << 20);

    // A size with an unknown unit, at the value.
    let e = only_error(&edit("keys = 10\n", "keys = 10\nrecord_size = \"1KB\"\n"));
    assert_eq!(at(&e), (17, 15), "{e}");
    assert!(e.message.contains("unknown unit `KB`"), "{e}");
    // Zero, and a range upside down.
    let e = only_error(&edit("buffer_records = 8", "buffer_size = 0"));
    assert_eq!(at(&e), (7, 15), "{e}");
    assert!(
        e.message.contains("buffer_size must be at least 1 byte"),
        "{e}"
    );
    let e = only_error(&edit(
        "keys = 10\n",
        "keys = 10\nrecord_size = \"2KiB\"\nrecord_size_max = \"1KiB\"\n",
    ));
    assert_eq!(at(&e).0, 18, "{e}");
    assert!(
        e.message
            .contains("record_size_max (1KiB) must be at least record_size (2KiB)"),
        "{e}"
    );
    // Past the limit on values.
    let e = only_error(&edit("buffer_records = 8", "buffer_size = \"2GiB\""));
    assert!(e.message.contains("at most 1GiB"), "{e}");
    assert!(help(&e).contains("Limits on values"), "{e}");
    // Sizes belong to sources.
    let e = only_error(&edit("mul = 2", "mul = 2\nrecord_size = 64"));
    assert!(
        e.message
            .contains("does not apply to an operator of kind `map`"),
        "{e}"
    );
    // The memory limit applies to memory storage only.
    let e = only_error(&edit(
        "storage = \"filesystem\"",
        "storage = \"filesystem\"\nmax_state_size = \"1MiB\"",
    ));
    assert_eq!(at(&e).0, 55, "{e}");
    assert!(e.message.contains("applies only to memory storage"), "{e}");
    assert!(help(&e).contains("storage = \"memory\""), "{e}");
}

#[test]
fn upsert_sink_needs_a_hash_edge() {
    let error = only_error(&edit("kind = \"sink-2pc\"", "kind = \"sink-upsert\""));
    assert_eq!(at(&error), (49, 16));
    assert_eq!(
        error.message,
        "upsert sink `sink` reads a `forward` edge from `count`"
    );
    assert_eq!(
        help(&error),
        "an upsert sink overwrites each key's row from one subtask, in the key's order: use partitioning = \"hash\" (by key)"
    );
    let fixed = edit("kind = \"sink-2pc\"", "kind = \"sink-upsert\"").replace(
        "to = \"sink\"\npartitioning = \"forward\"",
        "to = \"sink\"\npartitioning = \"hash\"",
    );
    assert!(parse_str(&fixed, "base.toml").is_ok());
}

/// An upsert sink fed by a stateless operator has no single right table:
/// a key's last value depends on how the channels interleave.
#[test]
fn upsert_sink_reads_a_keyed_running_aggregate() {
    let text = edit("kind = \"sink-2pc\"", "kind = \"sink-upsert\"")
        .replace(
            "from = \"count\"\nto = \"sink\"\npartitioning = \"forward\"",
            "from = \"double\"\nto = \"sink\"\npartitioning = \"hash\"",
        )
        .replace(
            "from = \"double\"\nto = \"count\"",
            "from = \"source\"\nto = \"count\"",
        );
    let error = only_error(&text);
    assert_eq!(
        error.message,
        "upsert sink `sink` reads from `double`, which is not a keyed running aggregate"
    );
    assert_eq!(at(&error), (47, 8), "{error}");
    assert!(help(&error).contains("keyed-count or keyed-sum"), "{error}");
}

/// A duration written as a number is refused saying what a duration looks
/// like.
#[test]
fn a_duration_given_as_a_number_says_what_a_duration_is() {
    let text = std::fs::read_to_string(crate::common::scenario_path("wordcount")).unwrap();
    let text = text.replace("latency_min = \"50us\"", "latency_min = 50");
    let err = ckptsim::scenario::parse_str(&text, "d.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "invalid type: integer `50`, expected a duration such as \"500ms\" (a string)"
        ),
        "{err}"
    );
}

#[test]
fn event_time_is_in_whole_milliseconds() {
    let error = only_error(&edit(
        "key_distribution = \"cyclic\"",
        "key_distribution = \"cyclic\"\nout_of_orderness = \"1500us\"",
    ));
    assert_eq!(at(&error), (18, 20));
    assert_eq!(
        error.message,
        "out_of_orderness (1.5ms) is not a whole number of milliseconds"
    );
    assert!(help(&error).contains("milliseconds, as Flink's"));
    // Whole milliseconds parse, a step of 0 does not.
    let text = edit(
        "key_distribution = \"cyclic\"",
        "key_distribution = \"cyclic\"\nevent_time_step = \"5ms\"\npartition_skew = \"2s\"",
    );
    parse_str(&text, "base.toml").unwrap_or_else(|e| panic!("{e}"));
    let error = only_error(&edit(
        "key_distribution = \"cyclic\"",
        "key_distribution = \"cyclic\"\nevent_time_step = \"0ms\"",
    ));
    assert!(
        error.message.contains("event_time_step"),
        "{}",
        error.message
    );
}

#[test]
fn idleness_needs_periodic_watermarks() {
    let error = only_error(&edit(
        "key_distribution = \"cyclic\"",
        "key_distribution = \"cyclic\"\nidle_timeout = \"100ms\"",
    ));
    assert_eq!(at(&error).0, 18);
    assert!(
        error
            .message
            .contains("idle_timeout needs watermark_interval"),
        "{}",
        error.message
    );
    let text = edit(
        "key_distribution = \"cyclic\"",
        "key_distribution = \"cyclic\"\nwatermark_interval = \"10ms\"\nidle_timeout = \"100ms\"",
    );
    parse_str(&text, "base.toml").unwrap_or_else(|e| panic!("{e}"));
}
