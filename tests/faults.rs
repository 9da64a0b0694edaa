//! The richer fault model (docs/faults.md): restart strategies and the
//! job-failed outcome, lost notifications, checkpoint storage faults,
//! coordinator crashes, stragglers — each exactly-once over many seeds for
//! every exactly-once algorithm, with evidence that the fault struck in the
//! interesting windows.

use crate::common::{check_alg, failed_checks};
use ckptsim::harness::{execute, Execution};
use ckptsim::runtime::{Counters, RunConfig, RunOutcome};
use ckptsim::scenario::{parse_str, Algorithm, Guarantee, Scenario};

/// A small keyed job (source → map → hash → keyed count → rebalance →
/// 2PC sink), `extra` appended (fault tables).
pub fn job(faults: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"
version = 1
name = "faults"
max_parallelism = 32
# Every operator a task of its own, so that each fault meets a channel
# between any two of them (chains: tests/chains.rs, scenarios/faults.toml).
operator_chaining = false

[network]
buffer_records = 4
buffer_credits = 2
output_buffers = 1
latency_min = "50us"
latency_max = "400us"
flush_timeout = "1ms"

[[operators]]
id = "source"
kind = "source"
parallelism = 2
partitions = 2
records_per_partition = 300
keys = 40
cost = "200us"

[[operators]]
id = "split"
kind = "map"
parallelism = 2
cost = "10us"

[[operators]]
id = "count"
kind = "keyed-count"
parallelism = 2
cost = "40us"

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 2
cost = "20us"

[[edges]]
from = "source"
to = "split"
partitioning = "forward"

[[edges]]
from = "split"
to = "count"
partitioning = "hash"

[[edges]]
from = "count"
to = "sink"
partitioning = "rebalance"

[checkpoint]
algorithm = "aligned"
interval = "10ms"
timeout = "1s"
alignment_timeout = "2ms"
rpc_latency = "1ms"
{extra}

[faults]
detection_delay = "5ms"
restart_delay = "5ms"
{faults}

[limits]
max_events = 2_000_000
max_time = "20s"
"#
    );
    parse_str(&text, "faults.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn run_traced(sc: &Scenario, seed: u64) -> Execution {
    let cfg = RunConfig {
        seed,
        algorithm: sc.checkpoint.algorithm,
        mutants: ckptsim::mutant::Mutants::NONE,
        record_trace: true,
    };
    execute(sc, &cfg)
}

/// Seeds per (fault kind, algorithm): `CKPTSIM_SEEDS` or 500.
pub fn seeds() -> u64 {
    std::env::var("CKPTSIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// Runs `sc` over the seeds under every exactly-once algorithm; panics with
/// the replay line of the first failure; returns the summed counters per
/// algorithm.
pub fn sweep_all(sc: &Scenario, what: &str) -> Vec<(Algorithm, Counters)> {
    sweep_each(&|_| sc.clone(), what)
}

/// [`sweep_all`] with a scenario per algorithm.
pub fn sweep_each(
    scenario: &dyn Fn(Algorithm) -> Scenario,
    what: &str,
) -> Vec<(Algorithm, Counters)> {
    let n = seeds();
    crate::common::exactly_once()
        .into_iter()
        .map(|a| {
            let sc = &scenario(a);
            let mut total = Counters::default();
            for seed in 0..n {
                let e = check_alg(sc, seed, a, &[]);
                assert!(
                    e.verdict.passed && e.verdict.guarantee == Guarantee::ExactlyOnce,
                    "{what}, {} seed {seed}: {:?} {:?} ({:?})",
                    a.name(),
                    failed_checks(&e),
                    e.verdict.violations().next(),
                    e.output.outcome
                );
                assert_eq!(
                    e.output.outcome,
                    RunOutcome::Finished,
                    "{what} {} {seed}",
                    a.name()
                );
                total += &e.output.counters;
            }
            eprintln!("{what}, {}, {n} seeds: {total:?}", a.name());
            // With a 2 ms alignment timeout, aligned-timeout really goes
            // unaligned wherever an edge allows it.
            let timeoutable = sc
                .edges
                .iter()
                .any(|e| e.partitioning != ckptsim::scenario::Partitioning::Forward);
            if a == Algorithm::AlignedTimeout && timeoutable && n >= 100 {
                assert!(total.switched_to_unaligned > 0, "{what}: {total:?}");
            }
            (a, total)
        })
        .collect()
}

// ------------------------------------------------------------ restart strategies

const THREE_CRASHES: &str = r#"
[[faults.crashes]]
at = "40ms"
task = "count[0]"

[[faults.crashes]]
at = "70ms"
task = "sink[1]"

[[faults.crashes]]
at = "100ms"
task = "source[0]"
"#;

#[test]
fn fixed_delay_gives_up_with_a_clear_job_failed_outcome() {
    let sc = job(&format!("max_restarts = 2\n{THREE_CRASHES}"), "");
    for a in crate::common::exactly_once() {
        let e = check_alg(&sc, 1, a, &[]);
        let RunOutcome::JobFailed(reason) = &e.output.outcome else {
            panic!("{}: {:?}", a.name(), e.output.outcome);
        };
        assert!(
            reason.starts_with("restart strategy fixed-delay gave up after 2 attempts (last failure: task source[0] failed)"),
            "{reason}"
        );
        // A reported outcome, not a violation; and nothing was duplicated.
        assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
        assert_eq!(e.output.counters.restart_strategy_gave_up, 1);
        assert_eq!(e.output.counters.recoveries, 2);
    }
    // With one more attempt allowed the same faults are survived.
    let sc = job(&format!("max_restarts = 3\n{THREE_CRASHES}"), "");
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[]);
    assert_eq!(e.output.outcome, RunOutcome::Finished);
    assert!(e.verdict.passed);
}

/// A task that fails in every attempt (`repeat = true`: its crash is
/// armed again at each restart): fixed-delay gives up after its attempts;
/// a strategy that keeps restarting (failure-rate over a short window)
/// makes a restart loop, which the progress check names and liveness
/// leaves to it.
#[test]
fn a_task_failing_in_every_attempt_gives_up_or_loops() {
    let always = "[[faults.crashes]]\ntask = \"count[1]\"\non = \"trigger\"\ndelay = \"0s\"\nrepeat = true\n";
    let sc = job(&format!("max_restarts = 4\n{always}"), "");
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[]);
    let RunOutcome::JobFailed(reason) = &e.output.outcome else {
        panic!("{:?}", e.output.outcome);
    };
    assert!(reason.contains("gave up after 4 attempts"), "{reason}");
    assert_eq!(e.output.counters.recoveries, 4);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    let looping = job(
        &format!("{always}\n[faults.restart]\nstrategy = \"failure-rate\"\nmax_failures = 2\ninterval = \"5ms\"\n"),
        "",
    );
    let e = check_alg(&looping, 1, Algorithm::Aligned, &[]);
    assert_eq!(failed_checks(&e), ["progress"]);
    let v = e.verdict.violations().next().unwrap();
    assert!(
        v.message.starts_with("restart loop: ")
            && v.message.contains("with no checkpoint completed between them (restart_loop 10; restart strategy failure-rate"),
        "{}",
        v.message
    );
    // The loop is judged at the restart past the bound: the eleventh.
    assert_eq!(v.time_ns, e.output.restarts[10].time_ns);
    assert!(v
        .message
        .contains("the job was still restarting when the run ended at 20s"));
    // A scenario that expects the loop raises the bound.
    let mut allowed = ckptsim::scenario::ScenarioData::clone(&looping);
    allowed.limits.restart_loop = 100_000;
    let allowed = ckptsim::scenario::check(&allowed, "faults").unwrap();
    let e = check_alg(&allowed, 1, Algorithm::Aligned, &[]);
    assert_eq!(failed_checks(&e), ["liveness"]);
}

#[test]
fn failure_rate_gives_up_only_when_failures_are_dense() {
    let dense = job(
        &format!("{THREE_CRASHES}\n[faults.restart]\nstrategy = \"failure-rate\"\nmax_failures = 2\ninterval = \"1s\"\n"),
        "",
    );
    let e = check_alg(&dense, 2, Algorithm::Aligned, &[]);
    let RunOutcome::JobFailed(reason) = &e.output.outcome else {
        panic!("{:?}", e.output.outcome);
    };
    assert!(
        reason.starts_with("restart strategy failure-rate gave up: 3 failures within 1s"),
        "{reason}"
    );
    assert!(e.verdict.passed);
    // The same three failures, but the window is shorter than their spacing.
    let sparse = job(
        &format!("{THREE_CRASHES}\n[faults.restart]\nstrategy = \"failure-rate\"\nmax_failures = 2\ninterval = \"50ms\"\n"),
        "",
    );
    let e = check_alg(&sparse, 2, Algorithm::Aligned, &[]);
    assert_eq!(e.output.outcome, RunOutcome::Finished);
    assert!(e.verdict.passed && e.verdict.guarantee == Guarantee::ExactlyOnce);
    assert_eq!(e.output.counters.recoveries, 3);
}

/// Detection → restart delays in the trace: 5 ms, ×2, capped at 12 ms.
#[test]
fn exponential_delay_backs_off_and_stays_exactly_once() {
    let crashes = r#"
[[faults.crashes]]
at = "30ms"
task = "count[0]"

[[faults.crashes]]
at = "60ms"
task = "sink[1]"

[[faults.crashes]]
at = "100ms"
task = "source[0]"

[[faults.crashes]]
at = "130ms"
task = "split[1]"

[faults.restart]
strategy = "exponential-delay"
max_backoff = "12ms"
backoff_multiplier = 2.0
reset_threshold = "10s"
"#;
    let sc = job(crashes, "");
    let e = run_traced(&sc, 3);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    assert_eq!(e.output.outcome, RunOutcome::Finished);
    let mut detected = None;
    let mut delays = Vec::new();
    for t in &e.output.trace {
        match t.event {
            "failure-detected" => detected = Some(t.time_ns),
            "restart" => delays.push(t.time_ns - detected.take().expect("detected first")),
            _ => {}
        }
    }
    assert_eq!(delays, vec![5_000_000, 10_000_000, 12_000_000, 12_000_000]);
}

/// The text summary (what `ckptsim run` prints) states the outcome and why.
#[test]
fn job_failed_is_printed_with_its_reason() {
    let sc = job(&format!("max_restarts = 0\n{THREE_CRASHES}"), "");
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[]);
    let text = ckptsim::report::Summary::new("faults.toml", 1, "aligned", &[], &e).to_text(false);
    assert!(
        text.contains("outcome      job failed: restart strategy fixed-delay gave up after 0 attempts (last failure: task count[0] failed)"),
        "{text}"
    );
    assert!(text.contains("verdict      PASS"), "{text}");
}

// ------------------------------------------------------------ lost notifications

/// Random task crashes in the job's first 80 ms, as a backdrop that puts
/// the other faults into recoveries.
const RANDOM_CRASHES: &str = r#"
[faults.random]
mean_interval = "60ms"
window_start = "0s"
window_end = "80ms"
max_crashes = 2
"#;

#[test]
fn lost_notifications_are_caught_up_and_exactly_once() {
    // Some checkpoints expire, so that abort notifications carry the
    // catch-up too (stop-the-world's checkpoints take longer).
    let scenario = |a: Algorithm| {
        let sc = job(
            &format!("{RANDOM_CRASHES}\n[faults.notifications]\nloss_percent = 30\n"),
            "",
        );
        let ms = if a == Algorithm::StopTheWorld { 6 } else { 4 };
        let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
        sc.checkpoint.timeout = ckptsim::engine::SimDuration::from_millis(ms);
        sc.checkpoint.tolerable_failures = 1_000_000;
        crate::common::valid(&sc)
    };
    for (a, c) in sweep_each(&scenario, "lost notifications") {
        let name = a.name();
        assert!(
            c.notifications_lost > 1000,
            "{name}: {}",
            c.notifications_lost
        );
        assert!(c.lost_notifications_caught_up > 500, "{name}: {c:?}");
        assert!(c.lost_notifications_caught_up_by_abort > 0, "{name}: {c:?}");
        assert!(c.notifications_lost_during_recovery > 0, "{name}");
        assert!(c.crashes_with_lost_notification > 0, "{name}: {c:?}");
        assert!(c.crashes_between_snapshot_and_notify > 0, "{name}");
    }
}

// ------------------------------------------------------------ storage faults

/// Storage writes fail (5 %) or are slow (10 %, +3 ms, so that some
/// checkpoints also expire); failures count against a tolerance of 2, so
/// some runs also fail over because of them.
#[test]
fn storage_faults_count_against_the_tolerance_and_stay_exactly_once() {
    let scenario = |a: Algorithm| {
        let sc = job(
            &format!(
                "{RANDOM_CRASHES}\n[faults.storage]\nfailure_percent = 5\nslow_percent = 10\nslow_latency = \"3ms\"\n"
            ),
            "tolerable_failures = 2\nstorage = \"filesystem\"\nstorage_latency = \"1ms\"",
        );
        let ms = if a == Algorithm::StopTheWorld { 9 } else { 5 };
        let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
        sc.checkpoint.timeout = ckptsim::engine::SimDuration::from_millis(ms);
        crate::common::valid(&sc)
    };
    for (a, c) in sweep_each(&scenario, "storage faults") {
        let name = a.name();
        assert!(c.storage_write_failures > 500, "{name}: {c:?}");
        assert!(c.checkpoints_storage_failed > 200, "{name}: {c:?}");
        assert!(c.storage_writes_slow > 1000, "{name}: {c:?}");
        assert!(c.checkpoints_expired > 0, "{name}: {c:?}");
        assert!(c.storage_failures_during_recovery > 0, "{name}: {c:?}");
        // More than `tolerable_failures` consecutive failures failed the job over.
        assert!(c.failovers > c.crashes, "{name}: {c:?}");
        if a != Algorithm::StopTheWorld {
            assert!(c.storage_failures_during_alignment > 0, "{name}: {c:?}");
        }
    }
}

/// Flink's accounting, checkpoint by checkpoint: with every state write
/// failing, each checkpoint fails once, and the job fails over after
/// `tolerable_failures + 1` of them.
#[test]
fn storage_failures_fail_the_job_over_past_the_tolerance() {
    let sc = job(
        "max_restarts = 1\n[faults.storage]\nfailure_percent = 100\n",
        "tolerable_failures = 3",
    );
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    let RunOutcome::JobFailed(reason) = &e.output.outcome else {
        panic!("{:?}", e.output.outcome);
    };
    assert!(
        reason.ends_with("(last failure: more than 3 consecutive checkpoint failures)"),
        "{reason}"
    );
    let c = &e.output.counters;
    // Two failovers (the second one gave up), four counted failures each.
    assert_eq!(c.failovers, 2);
    assert_eq!(c.checkpoints_storage_failed, 8);
    assert_eq!(c.checkpoints_completed, 0);
    assert!(e.verdict.passed);
}

// ------------------------------------------------------------ coordinator crashes

fn coordinator_job(storage: &str, on_loss: &str, at: &str) -> Scenario {
    job(
        &format!("\n[faults.coordinator]\nfailover_delay = \"20ms\"\non_memory_loss = \"{on_loss}\"\ncrashes = [\"{at}\"]\n"),
        &format!("storage = \"{storage}\""),
    )
}

/// With `filesystem` storage the new coordinator finds the completed
/// checkpoints and resumes from the latest: exactly-once, every algorithm.
#[test]
fn coordinator_crash_with_filesystem_storage_resumes_from_the_latest_checkpoint() {
    let sc = coordinator_job("filesystem", "fail", "45ms");
    for a in crate::common::exactly_once() {
        let e = check_alg(&sc, 4, a, &[]);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        assert_eq!(e.output.outcome, RunOutcome::Finished);
        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
        let c = &e.output.counters;
        assert_eq!((c.coordinator_crashes, c.coordinator_failovers), (1, 1));
        assert_eq!(c.coordinator_recoveries_from_checkpoint, 1, "{}", a.name());
        assert_eq!(c.checkpoints_lost_with_coordinator, 0);
        // Stop-the-world's sources are paused from their snapshot until
        // the notification: a crash in between restores exactly where they
        // stand, and nothing is read twice.
        let paused =
            a == Algorithm::StopTheWorld && c.coordinator_crashes_between_snapshot_and_notify > 0;
        assert!(c.records_replayed > 0 || paused, "{}: {c:?}", a.name());
    }
}

/// With `memory` storage the completed checkpoints die with the
/// coordinator. `on_memory_loss = "fail"`: the job fails, with the reason,
/// and nothing was committed twice.
#[test]
fn coordinator_crash_with_memory_storage_fails_the_job_when_configured() {
    let sc = coordinator_job("memory", "fail", "45ms");
    for a in crate::common::exactly_once() {
        let e = check_alg(&sc, 4, a, &[]);
        let RunOutcome::JobFailed(reason) = &e.output.outcome else {
            panic!("{}: {:?}", a.name(), e.output.outcome);
        };
        assert!(
            reason.contains("completed checkpoints were lost with memory storage"),
            "{reason}"
        );
        assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
        assert!(e.output.counters.checkpoints_lost_with_coordinator > 0);
        assert!(
            !e.output.store.committed().is_empty(),
            "some output was committed before"
        );
    }
}

/// `on_memory_loss = "restart-from-scratch"`: before the first checkpoint
/// completed nothing is lost and the run is exactly-once; after commits,
/// replaying the input from the start duplicates committed output — the
/// reason Flink needs a durable store (HA) for exactly-once across
/// coordinator failures — and the checker says so.
#[test]
fn coordinator_crash_with_memory_storage_restarts_from_scratch() {
    let early = coordinator_job("memory", "restart-from-scratch", "6ms");
    for a in crate::common::exactly_once() {
        let e = check_alg(&early, 4, a, &[]);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
        let c = &e.output.counters;
        assert_eq!(c.coordinator_recoveries_from_scratch, 1);
        assert_eq!(c.recoveries_from_scratch, 1);
    }
    let late = coordinator_job("memory", "restart-from-scratch", "45ms");
    let e = check_alg(&late, 4, Algorithm::Aligned, &[]);
    assert_eq!(e.output.outcome, RunOutcome::Finished);
    assert_eq!(e.output.counters.coordinator_recoveries_from_scratch, 1);
    assert_eq!(e.verdict.guarantee, Guarantee::AtLeastOnce);
    assert_eq!(failed_checks(&e), vec!["exactly-once-output"]);
}

/// Random coordinator crashes (filesystem storage) on top of random task
/// crashes, over the seeds.
#[test]
fn random_coordinator_crashes_are_exactly_once() {
    let sc = job(
        &format!(
            "{RANDOM_CRASHES}\n[faults.coordinator]\nfailover_delay = \"8ms\"\n\n[faults.coordinator.random]\nmean_interval = \"40ms\"\nwindow_start = \"0s\"\nwindow_end = \"90ms\"\nmax_crashes = 2\n"
        ),
        "storage = \"filesystem\"\nstorage_latency = \"1ms\"",
    );
    for (a, c) in sweep_all(&sc, "coordinator crashes") {
        let name = a.name();
        assert!(c.coordinator_crashes > 400, "{name}: {c:?}");
        assert!(
            c.coordinator_recoveries_from_checkpoint > 100,
            "{name}: {c:?}"
        );
        assert!(
            c.coordinator_crashes_between_snapshot_and_notify > 0,
            "{name}: {c:?}"
        );
        assert!(c.coordinator_crashes_during_recovery > 0, "{name}: {c:?}");
        if a != Algorithm::StopTheWorld {
            assert!(c.coordinator_crashes_during_alignment > 0, "{name}: {c:?}");
        }
    }
}

// ------------------------------------------------------------ stragglers and skew

/// A straggler (`count[1]` ten times slower for 60 ms) and hot keys: the
/// alignment waits on the slow input, while crashes strike.
#[test]
fn stragglers_and_skewed_keys_are_exactly_once() {
    let sc = job(
        &format!(
            "{RANDOM_CRASHES}\n[[faults.slow_tasks]]\ntask = \"count[1]\"\nfrom = \"5ms\"\nuntil = \"65ms\"\nfactor = 10\n\n[[faults.slow_tasks]]\ntask = \"source[0]\"\nfrom = \"20ms\"\nuntil = \"40ms\"\nfactor = 3\n"
        ),
        "",
    );
    let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
    if let ckptsim::scenario::OperatorKind::Source(src) = &mut sc.operators[0].kind {
        src.key_distribution = ckptsim::scenario::KeyDistribution::Skewed;
    }
    let sc = crate::common::valid(&sc);
    let base = job(RANDOM_CRASHES, "");
    for (a, c) in sweep_all(&sc, "stragglers") {
        let name = a.name();
        assert!(c.slow_task_steps > 10_000, "{name}: {c:?}");
        assert!(c.crashes_during_straggling > 200, "{name}: {c:?}");
        assert!(c.crashes_during_alignment > 0, "{name}: {c:?}");
        // The straggler makes alignments longer than without it.
        let slow = check_alg(&sc, 1, a, &[]);
        let fast = check_alg(&base, 1, a, &[]);
        assert!(slow.output.end_time > fast.output.end_time, "{name}");
    }
}

#[test]
fn skewed_keys_make_hot_keys() {
    let sc = job("", "");
    let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
    if let ckptsim::scenario::OperatorKind::Source(src) = &mut sc.operators[0].kind {
        src.key_distribution = ckptsim::scenario::KeyDistribution::Skewed;
    }
    let sc = crate::common::valid(&sc);
    let w = ckptsim::model::Workload::generate(&sc, 9);
    let mut counts = [0u64; 40];
    for p in 0..w.partition_count() as u32 {
        for &(k, _) in w.partition(p) {
            counts[k as usize] += 1;
        }
    }
    // 600 records over 40 keys: 15 on average; key 0 gets about ln(40) ≈ 3.7 times that.
    assert!(counts[0] > 40, "{counts:?}");
    assert!(counts[0] > 4 * counts[39].max(1), "{counts:?}");
}

// ------------------------------------------------------------ workers

/// Two workers with one slot each (spread): worker 0 runs subtask 0 of
/// every operator.
const CLUSTER: &str = r#"
[cluster]
workers = 2
slots_per_worker = 1
placement = "spread"
heartbeat_timeout = "10ms"
replacement_delay = "60ms"
"#;

#[test]
fn worker_crash_kills_its_subtasks_and_restart_waits_for_a_replacement() {
    let sc = job(
        &format!("\n[[faults.worker_crashes]]\nat = \"30ms\"\nworker = 0\n{CLUSTER}"),
        "",
    );
    for a in crate::common::exactly_once() {
        let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
        sc.checkpoint.algorithm = a;
        let e = run_traced(&crate::common::valid(&sc), 5);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
        let c = &e.output.counters;
        assert_eq!(
            (c.worker_crashes, c.worker_tasks_killed),
            (1, 4),
            "{}",
            a.name()
        );
        assert_eq!(c.restarts_waiting_for_worker, 1);
        let at = |name: &str| {
            e.output
                .trace
                .iter()
                .find(|t| t.event == name)
                .map(|t| t.time_ns)
        };
        assert_eq!(at("worker-lost"), Some(40_000_000), "heartbeat timeout");
        assert_eq!(at("restart"), Some(90_000_000), "replacement worker ready");
    }
}

#[test]
fn random_worker_crashes_are_exactly_once() {
    let sc = job(
        &format!(
            "{RANDOM_CRASHES}\n[faults.random_workers]\nmean_interval = \"50ms\"\nwindow_start = \"0s\"\nwindow_end = \"90ms\"\nmax_crashes = 2\n{}",
            CLUSTER.replace("60ms", "15ms")
        ),
        "",
    );
    for (a, c) in sweep_all(&sc, "worker crashes") {
        let name = a.name();
        assert!(c.worker_crashes > 400, "{name}: {c:?}");
        // Most crashes kill all four subtasks of the worker at once.
        assert!(
            c.worker_tasks_killed > 3 * c.worker_crashes,
            "{name}: {c:?}"
        );
        assert!(
            c.worker_crashes_between_snapshot_and_notify > 0,
            "{name}: {c:?}"
        );
        assert!(c.worker_crashes_during_recovery > 0, "{name}: {c:?}");
        assert!(c.worker_crashes_during_alignment > 0, "{name}: {c:?}");
        assert!(c.restarts_waiting_for_worker > 0, "{name}: {c:?}");
    }
}

// ------------------------------------------------------------ network faults

#[test]
fn latency_spikes_are_exactly_once() {
    let spikes = r#"
[[faults.latency_spikes]]
from = "5ms"
until = "25ms"
extra = "4ms"
edge = "split->count"

[[faults.latency_spikes]]
from = "30ms"
until = "45ms"
extra = "2ms"
worker = 1

[[faults.latency_spikes]]
from = "60ms"
until = "70ms"
extra = "6ms"
"#;
    let sc = job(&format!("{RANDOM_CRASHES}\n{spikes}\n{CLUSTER}"), "");
    for (a, c) in sweep_all(&sc, "latency spikes") {
        let name = a.name();
        assert!(c.latency_spikes >= 1000, "{name}: {c:?}");
        assert!(c.messages_delayed > 10_000, "{name}: {c:?}");
        assert!(
            c.latency_spikes_between_snapshot_and_notify > 0,
            "{name}: {c:?}"
        );
        assert!(c.latency_spikes_during_recovery > 0, "{name}: {c:?}");
        assert!(c.latency_spikes_during_alignment > 0, "{name}: {c:?}");
    }
}

/// A partition shorter than the heartbeat timeout only holds the data that
/// crosses it; a longer one loses the cut-off worker, and the job restarts
/// once the partition heals.
#[test]
fn partitions_hold_data_or_lose_the_cut_off_side() {
    let short = job(
        &format!(
            "\n[[faults.partitions]]\nfrom = \"20ms\"\nuntil = \"28ms\"\nworkers = [1]\n{CLUSTER}"
        ),
        "",
    );
    let long = job(
        &format!(
            "\n[[faults.partitions]]\nfrom = \"20ms\"\nuntil = \"50ms\"\nworkers = [1]\n{CLUSTER}"
        ),
        "",
    );
    for a in crate::common::exactly_once() {
        let mut sc = ckptsim::scenario::ScenarioData::clone(&short);
        sc.checkpoint.algorithm = a;
        let e = run_traced(&crate::common::valid(&sc), 6);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        let c = &e.output.counters;
        assert_eq!(
            (c.partitions, c.partitions_lost, c.failovers),
            (1, 0, 0),
            "{}",
            a.name()
        );
        assert!(c.messages_held > 0);

        let mut sc = ckptsim::scenario::ScenarioData::clone(&long);
        sc.checkpoint.algorithm = a;
        let e = run_traced(&crate::common::valid(&sc), 6);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
        let c = &e.output.counters;
        assert_eq!(
            (c.partitions, c.partitions_lost, c.failovers),
            (1, 1, 1),
            "{}",
            a.name()
        );
        let restart = e.output.trace.iter().find(|t| t.event == "restart");
        assert_eq!(
            restart.map(|t| t.time_ns),
            Some(50_000_000),
            "restart when healed"
        );
    }
}

#[test]
fn random_partitions_are_exactly_once() {
    // Partitions of 4 to 24 ms (the heartbeat timeout is 10 ms) at times
    // drawn per seed, beside random task crashes.
    let n = seeds();
    for a in crate::common::exactly_once() {
        let mut total = Counters::default();
        for seed in 0..n {
            let start = 5 + seed % 60;
            let len = 4 + (seed * 7) % 21;
            let sc = job(
                &format!(
                    "{RANDOM_CRASHES}\n[[faults.partitions]]\nfrom = \"{start}ms\"\nuntil = \"{}ms\"\nworkers = [{}]\n{CLUSTER}",
                    start + len,
                    seed % 2
                ),
                "",
            );
            let e = check_alg(&sc, seed, a, &[]);
            assert!(
                e.verdict.passed && e.verdict.guarantee == Guarantee::ExactlyOnce,
                "partitions, {} seed {seed}: {:?} {:?}",
                a.name(),
                failed_checks(&e),
                e.verdict.violations().next()
            );
            total += &e.output.counters;
        }
        let name = a.name();
        eprintln!("partitions, {name}, {n} seeds: {total:?}");
        assert!(total.partitions_lost > 100, "{name}: {total:?}");
        assert!(total.messages_held > 1000, "{name}: {total:?}");
        assert!(
            total.partitions_between_snapshot_and_notify > 0,
            "{name}: {total:?}"
        );
        assert!(total.partitions_during_recovery > 0, "{name}: {total:?}");
        if a != Algorithm::StopTheWorld {
            assert!(total.partitions_during_alignment > 0, "{name}: {total:?}");
        }
    }
}

// ------------------------------------------------------------ region failover

/// source → map → 2PC sink, forward edges only, parallelism 3: three
/// pipelined regions, one per subtask index.
fn forward_job(failover: &str, faults: &str) -> Scenario {
    let text = format!(
        r#"
version = 1
name = "forward"
max_parallelism = 32

[network]
buffer_records = 4
buffer_credits = 2
latency_min = "50us"
latency_max = "400us"
flush_timeout = "1ms"

[[operators]]
id = "source"
kind = "source"
parallelism = 3
partitions = 3
records_per_partition = 300
keys = 40
cost = "200us"

[[operators]]
id = "map"
kind = "map"
parallelism = 3
cost = "20us"
mul = 3

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 3
cost = "20us"

[[edges]]
from = "source"
to = "map"
partitioning = "forward"

[[edges]]
from = "map"
to = "sink"
partitioning = "forward"

[checkpoint]
algorithm = "aligned"
interval = "10ms"
timeout = "1s"
rpc_latency = "1ms"

[faults]
failover = "{failover}"
detection_delay = "5ms"
restart_delay = "5ms"
{faults}

[limits]
max_events = 2_000_000
max_time = "20s"
"#
    );
    parse_str(&text, "forward.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// One crash of `map[1]`: the forward edges chain each subtask index's
/// source, map and sink into one task, so region failover restarts that
/// one task and a full restart all three; both exactly-once, for every
/// algorithm.
#[test]
fn region_failover_restarts_fewer_tasks_and_stays_exactly_once() {
    let crash = "[[faults.crashes]]\nat = \"25ms\"\ntask = \"map[1]\"\n";
    for a in crate::common::exactly_once() {
        let mut region = ckptsim::scenario::ScenarioData::clone(&forward_job("region", crash));
        region.checkpoint.algorithm = a;
        let region = crate::common::valid(&region);
        let r = run_traced(&region, 8);
        assert!(
            r.verdict.passed,
            "{}: {:?}",
            a.name(),
            r.verdict.violations().next()
        );
        assert_eq!(r.verdict.guarantee, Guarantee::ExactlyOnce);
        let full = check_alg(&forward_job("full", crash), 8, a, &[]);
        assert!(full.verdict.passed);
        let (rc, fc) = (&r.output.counters, &full.output.counters);
        assert_eq!(
            (rc.region_failovers, rc.tasks_restarted),
            (1, 1),
            "{}",
            a.name()
        );
        assert_eq!(
            (fc.region_failovers, fc.tasks_restarted),
            (0, 3),
            "{}",
            a.name()
        );
        assert!(
            rc.records_replayed < fc.records_replayed,
            "{}: {rc:?} {fc:?}",
            a.name()
        );
        // The trace names the restarted tasks.
        let reason = r.output.timeline.iter().find_map(|m| match &m.what {
            ckptsim::runtime::Timeline::Failover { reason, .. } => Some(reason.clone()),
            _ => None,
        });
        assert_eq!(
            reason.as_deref(),
            Some("task source->map->sink[1] failed; region failover restarts source->map->sink[1]")
        );
    }
    // A hash edge joins everything into one region: a full restart.
    let sc = job(
        "failover = \"region\"\n[[faults.crashes]]\nat = \"25ms\"\ntask = \"count[0]\"\n",
        "",
    );
    let e = check_alg(&sc, 8, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    assert_eq!(
        (
            e.output.counters.region_failovers,
            e.output.counters.tasks_restarted
        ),
        (0, 8)
    );
}

#[test]
fn region_failover_is_exactly_once_over_the_seeds() {
    let random = r#"
[faults.random]
mean_interval = "30ms"
window_start = "0s"
window_end = "90ms"
max_crashes = 3
"#;
    let sc = forward_job("region", random);
    for (a, c) in sweep_all(&sc, "region failover") {
        let name = a.name();
        // Single-input tasks only: nothing to align in a forward-only job.
        assert!(c.region_failovers > 500, "{name}: {c:?}");
        assert!(c.tasks_restarted < 9 * c.failovers, "{name}: {c:?}");
        assert!(c.crashes_between_snapshot_and_notify > 0, "{name}: {c:?}");
        assert!(c.recovery_commits > 0, "{name}: {c:?}");
    }
}

// ------------------------------------------------------------ composition

/// Every fault kind at once, each drawn per seed by swarm ranges (0 turns a
/// kind off for the seed), beside random task crashes, stragglers, latency
/// spikes and a short partition: 500 seeds per exactly-once algorithm.
#[test]
fn mixed_swarm_of_every_fault_kind_is_exactly_once() {
    let faults = format!(
        r#"{RANDOM_CRASHES}
[[faults.slow_tasks]]
task = "count[1]"
from = "10ms"
until = "40ms"
factor = 5

[[faults.latency_spikes]]
from = "30ms"
until = "50ms"
extra = "2ms"

[[faults.partitions]]
from = "60ms"
until = "66ms"
workers = [0]

[faults.coordinator]
failover_delay = "8ms"
{CLUSTER}
[swarm]
enabled = true
latency_max = ["100us", "2ms"]
interval = ["5ms", "20ms"]
max_crashes = [0, 2]
notification_loss_percent = [0, 40]
storage_failure_percent = [0, 10]
storage_slow_percent = [0, 20]
coordinator_crashes = [0, 2]
worker_crashes = [0, 2]
latency_spike_extra = ["0s", "3ms"]
partition_duration = ["0s", "25ms"]
"#
    );
    let sc = job(
        &faults.replace("60ms\"\n", "15ms\"\n"),
        "storage = \"filesystem\"\nstorage_latency = \"1ms\"\ntolerable_failures = 3",
    );
    let spec = sc.swarm.clone().expect("swarm");
    let n = seeds();
    for a in crate::common::exactly_once() {
        let mut t = Counters::default();
        let mut kinds_per_seed = 0u64;
        for seed in 0..n {
            let (drawn, draw) =
                ckptsim::swarm::draw(&sc, &spec, seed).unwrap_or_else(|e| panic!("{e}"));
            let e = check_alg(&drawn, seed, a, &[]);
            assert!(
                e.verdict.passed && e.verdict.guarantee == Guarantee::ExactlyOnce,
                "mixed, {} seed {seed} ({draw}): {:?} {:?}",
                a.name(),
                failed_checks(&e),
                e.verdict.violations().next()
            );
            let c = &e.output.counters;
            kinds_per_seed += [
                c.crashes,
                c.notifications_lost,
                c.storage_write_failures,
                c.coordinator_crashes,
                c.worker_crashes,
            ]
            .iter()
            .filter(|&&x| x > 0)
            .count() as u64;
            t += c;
        }
        let name = a.name();
        eprintln!("mixed swarm, {name}, {n} seeds: {t:?}");
        for (kind, count) in [
            ("task crashes", t.crashes),
            ("lost notifications", t.notifications_lost),
            ("storage failures", t.storage_write_failures),
            ("slow writes", t.storage_writes_slow),
            ("coordinator crashes", t.coordinator_crashes),
            ("worker crashes", t.worker_crashes),
            ("straggler steps", t.slow_task_steps),
            ("latency spikes", t.latency_spikes),
            ("partitions", t.partitions),
        ] {
            assert!(count > 0, "{name}: no {kind}");
        }
        assert!(
            kinds_per_seed > 2 * n,
            "{name}: faults compose ({kinds_per_seed})"
        );
        assert!(t.coordinator_crashes_during_recovery > 0, "{name}: {t:?}");
        assert!(t.worker_crashes_during_recovery > 0, "{name}: {t:?}");
        assert!(
            t.crashes_during_coordinator_failover + t.worker_crashes_during_coordinator_failover
                > 0,
            "{name}: {t:?}"
        );
    }
}

/// Faults during a coordinator failover: a task crash (ignored, its task is
/// already cancelled), a worker crash whose replacement is ready only after
/// the new coordinator, and a partition. The job restarts once both are
/// there, from the latest checkpoint, exactly-once.
#[test]
fn faults_during_a_coordinator_failover() {
    let faults = format!(
        r#"
[[faults.crashes]]
at = "55ms"
task = "count[0]"

[faults.coordinator]
failover_delay = "30ms"
crashes = ["40ms"]

[[faults.worker_crashes]]
at = "50ms"
worker = 1

[[faults.partitions]]
from = "45ms"
until = "48ms"
workers = [0]
{CLUSTER}"#
    );
    let sc = job(&faults, "storage = \"filesystem\"");
    for a in crate::common::exactly_once() {
        let mut sc = ckptsim::scenario::ScenarioData::clone(&sc);
        sc.checkpoint.algorithm = a;
        let e = run_traced(&crate::common::valid(&sc), 2);
        assert!(
            e.verdict.passed,
            "{}: {:?}",
            a.name(),
            e.verdict.violations().next()
        );
        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
        let c = &e.output.counters;
        assert_eq!(c.crashes_during_coordinator_failover, 1, "{}", a.name());
        assert_eq!(c.worker_crashes_during_coordinator_failover, 1);
        assert_eq!(c.partitions_during_coordinator_failover, 1);
        assert_eq!(c.coordinator_recoveries_from_checkpoint, 1);
        let restart = e.output.trace.iter().find(|t| t.event == "restart");
        assert_eq!(
            restart.map(|t| t.time_ns),
            Some(110_000_000),
            "{}",
            a.name()
        );
    }
}

/// Two independent keyed pipelines (hash and rebalance edges inside each):
/// two regions, each with channel state under unaligned checkpoints. A
/// region restart restores its in-flight records while the other pipeline
/// runs on.
fn two_pipelines() -> Scenario {
    parse_str(&two_pipelines_text(), "two-pipelines.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn two_pipelines_text() -> String {
    let mut text = String::from(
        r#"
version = 1
name = "two-pipelines"
max_parallelism = 32

[network]
buffer_records = 2
buffer_credits = 1
output_buffers = 1
latency_min = "50us"
latency_max = "600us"
flush_timeout = "1ms"
"#,
    );
    for p in ["a", "b"] {
        text.push_str(&format!(
            r#"
[[operators]]
id = "source-{p}"
kind = "source"
parallelism = 2
partitions = 2
records_per_partition = 250
keys = 30
cost = "100us"

[[operators]]
id = "count-{p}"
kind = "keyed-count"
parallelism = 2
cost = "150us"

[[operators]]
id = "sink-{p}"
kind = "sink-2pc"
parallelism = 2
cost = "20us"

[[edges]]
from = "source-{p}"
to = "count-{p}"
partitioning = "hash"

[[edges]]
from = "count-{p}"
to = "sink-{p}"
partitioning = "rebalance"
"#
        ));
    }
    text.push_str(
        r#"
[checkpoint]
interval = "10ms"
timeout = "1s"
alignment_timeout = "2ms"
rpc_latency = "1ms"

[faults]
failover = "region"
detection_delay = "5ms"
restart_delay = "5ms"

[faults.random]
mean_interval = "30ms"
window_start = "0s"
window_end = "90ms"
max_crashes = 3

[limits]
max_events = 2_000_000
max_time = "20s"
"#,
    );
    text
}

#[test]
fn region_failover_restores_channel_state_of_its_region_only() {
    let sc = two_pipelines();
    for (a, c) in sweep_all(&sc, "two pipelines") {
        let name = a.name();
        assert!(c.region_failovers > 500, "{name}: {c:?}");
        // Each restart redeploys one pipeline's six tasks, never all twelve.
        assert_eq!(c.tasks_restarted, 6 * c.region_failovers, "{name}: {c:?}");
        assert!(c.crashes_during_alignment > 0, "{name}: {c:?}");
        if a == Algorithm::Unaligned || a == Algorithm::ChandyLamport {
            assert!(c.in_flight_records_restored > 0, "{name}: {c:?}");
        }
    }
}

/// Region failover among every other fault: worker crashes and partitions
/// (global restarts, also while a region restart is pending), coordinator
/// crashes, lost notifications and storage faults.
#[test]
fn region_failover_composes_with_every_fault_kind() {
    let text = format!(
        r#"{}
[cluster]
workers = 2
slots_per_worker = 1
heartbeat_timeout = "10ms"
replacement_delay = "20ms"

[faults.random_workers]
mean_interval = "60ms"
window_start = "0s"
window_end = "90ms"
max_crashes = 1

[faults.coordinator]
failover_delay = "10ms"

[faults.coordinator.random]
mean_interval = "80ms"
window_start = "0s"
window_end = "90ms"
max_crashes = 1

[faults.notifications]
loss_percent = 20

[faults.storage]
failure_percent = 5
slow_percent = 5
slow_latency = "3ms"

[[faults.partitions]]
from = "35ms"
until = "50ms"
workers = [1]
"#,
        two_pipelines_text()
    );
    let mut sc = ckptsim::scenario::ScenarioData::clone(
        &parse_str(&text, "combined.toml").unwrap_or_else(|e| panic!("{e}")),
    );
    sc.checkpoint.storage = ckptsim::scenario::StorageKind::Filesystem;
    sc.checkpoint.storage_latency = ckptsim::engine::SimDuration::from_millis(1);
    sc.checkpoint.tolerable_failures = 2;
    for (a, c) in sweep_all(
        &crate::common::valid(&sc),
        "region failover with every fault",
    ) {
        let name = a.name();
        for (kind, n) in [
            ("region failovers", c.region_failovers),
            ("worker crashes", c.worker_crashes),
            ("coordinator crashes", c.coordinator_crashes),
            ("lost partitions", c.partitions_lost),
            ("lost notifications", c.notifications_lost),
            ("storage failures", c.storage_write_failures),
        ] {
            assert!(n > 100, "{name}: {kind} {n}");
        }
    }
}

/// Restart strategies over the seeds: up to four random crashes against a
/// failure-rate strategy that tolerates two within 50 ms, and an
/// exponential-delay strategy with two attempts before its reset. Some seeds finish, some
/// give up; either way nothing is committed twice, and a run that gives up
/// says why.
#[test]
fn restart_strategies_over_the_seeds() {
    let crashes = r#"
[faults.random]
mean_interval = "20ms"
window_start = "0s"
window_end = "80ms"
max_crashes = 4
"#;
    let strategies = [
        (
            "failure-rate",
            "[faults.restart]\nstrategy = \"failure-rate\"\nmax_failures = 2\ninterval = \"50ms\"\n",
        ),
        (
            "exponential-delay",
            "max_restarts = 2\n[faults.restart]\nstrategy = \"exponential-delay\"\nmax_backoff = \"20ms\"\nbackoff_multiplier = 2.0\nreset_threshold = \"30ms\"\n",
        ),
    ];
    let n = seeds();
    for (strategy, table) in strategies {
        let sc = job(&format!("{table}\n{crashes}"), "");
        for a in crate::common::exactly_once() {
            let (mut finished, mut failed) = (0, 0);
            for seed in 0..n {
                let e = check_alg(&sc, seed, a, &[]);
                assert!(
                    e.verdict.passed,
                    "{strategy}, {} seed {seed}: {:?}",
                    a.name(),
                    e.verdict.violations().next()
                );
                match &e.output.outcome {
                    RunOutcome::Finished => {
                        assert_eq!(e.verdict.guarantee, Guarantee::ExactlyOnce);
                        finished += 1;
                    }
                    RunOutcome::JobFailed(reason) => {
                        assert!(
                            reason.starts_with(&format!("restart strategy {strategy} gave up")),
                            "{reason}"
                        );
                        assert!(reason.contains("(last failure: task "), "{reason}");
                        failed += 1;
                    }
                    other => panic!("{strategy} {} seed {seed}: {other:?}", a.name()),
                }
            }
            eprintln!(
                "{strategy}, {}: {finished} finished, {failed} gave up",
                a.name()
            );
            assert!(
                finished > n / 10 && failed > n / 20,
                "{strategy} {}: {finished}/{failed}",
                a.name()
            );
        }
    }
}

/// Shrinking a failure found under every fault kind drops the kinds the
/// failure does not need.
#[test]
fn shrinking_drops_fault_kinds_the_failure_does_not_need() {
    use ckptsim::mutant::{Mutant, Mutants};
    let sc = crate::common::load("faults");
    let mutants = Mutants::NONE.with(Mutant::NoSourceRewind);
    let shrunk = ckptsim::shrink::shrink(&sc, 3, Algorithm::Aligned, mutants, 300).unwrap();
    for step in [
        "no lost notifications",
        "no storage faults",
        "no stragglers",
    ] {
        assert!(shrunk.steps.iter().any(|s| s == step), "{:?}", shrunk.steps);
    }
    let f = &shrunk.scenario.faults;
    assert!(f.notifications.is_none() && f.storage.is_none() && f.slow_tasks.is_empty());
    assert!(!shrunk.execution.as_ref().unwrap().verdict.passed);
}

/// wordcount's text with its random crashes replaced by `crashes` (TOML).
fn wordcount_text(crashes: &str) -> String {
    let text = std::fs::read_to_string(crate::common::scenario_path("wordcount")).unwrap();
    let (head, rest) = text.split_once("[faults.random]").unwrap();
    let tail = &rest[rest.find("[limits]").unwrap()..];
    format!("{head}{crashes}\n{tail}")
}

fn wordcount_with(crashes: &str) -> Scenario {
    parse_str(&wordcount_text(crashes), "relative.toml").unwrap_or_else(|e| panic!("{e}"))
}

const RELATIVE: &str = r#"
[[faults.crashes]]
task = "sink[0]"
on = "snapshot"
checkpoint = 3

[[faults.crashes]]
task = "count[1]"
on = "restart"
delay = "5ms"

[[faults.crashes]]
task = "split[1]"
on = "notify"
of = "sink[1]"
checkpoint = 5
"#;

/// Crashes relative to events: each fires once, `delay` after the first
/// time its event happens, and the job stays exactly-once.
#[test]
fn event_relative_crashes_fire_at_their_events_and_stay_exactly_once() {
    let sc = wordcount_with(RELATIVE);
    for seed in 0..30 {
        let e = run_traced(&sc, seed);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
        assert_eq!(e.output.counters.crashes, 3, "seed {seed}");
        assert!(
            !e.output.warnings.iter().any(|w| w.kind == "crash"),
            "seed {seed}"
        );
        let times = |name: &str| -> Vec<u64> {
            e.output
                .trace
                .iter()
                .filter(|t| t.event == name)
                .map(|t| t.time_ns)
                .collect()
        };
        // The crash after the restart comes 5 ms after the first restart.
        let crash_of = |index: u64| {
            e.output
                .trace
                .iter()
                .find(|t| t.event == "crash" && t.a == index)
                .map(|t| t.time_ns)
                .unwrap()
        };
        let plan = &e.output.crash_plan;
        let after_restart = plan.iter().position(|c| {
            c.trigger
                .as_ref()
                .is_some_and(|t| t.on == ckptsim::scenario::TriggerEvent::Restart)
        });
        let index = after_restart.unwrap() as u64;
        assert_eq!(
            crash_of(index),
            times("restart")[0] + 5_000_000,
            "seed {seed}"
        );
        // The sink's crash is at its snapshot of checkpoint 3: before the
        // coordinator has its acknowledgement.
        let snapshot = plan
            .iter()
            .position(|c| {
                c.trigger
                    .as_ref()
                    .is_some_and(|t| t.on == ckptsim::scenario::TriggerEvent::Snapshot)
            })
            .unwrap();
        let ack3 = e
            .output
            .trace
            .iter()
            .find(|t| t.event == "ack" && t.b == 3)
            .map(|t| t.time_ns)
            .unwrap();
        assert!(crash_of(snapshot as u64) < ack3, "seed {seed}");
    }
}

/// A crash whose event never comes is reported, not silently skipped.
#[test]
fn a_crash_whose_event_never_comes_is_reported() {
    let sc = wordcount_with(
        "[[faults.crashes]]\ntask = \"sink[0]\"\non = \"snapshot\"\ncheckpoint = 999\n",
    );
    let e = run_traced(&sc, 1);
    assert!(e.verdict.passed);
    assert_eq!(e.output.counters.crashes, 0);
    let w: Vec<&str> = e
        .output
        .warnings
        .iter()
        .filter(|w| w.kind == "crash")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("crash of sink[0] on the snapshot of checkpoint 999 never happened"),
        "{}",
        w[0]
    );
}

/// The trigger keys are checked where they are written.
#[test]
fn trigger_keys_are_refused_where_they_do_not_apply() {
    let refuse = |crash: &str, needle: &str| {
        let err = parse_str(&wordcount_text(crash), "bad.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted: {crash}"))
            .to_string();
        assert!(err.contains(needle), "{crash}: {err}");
    };
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\nat = \"1s\"\non = \"snapshot\"\n",
        "`at` and `on` cannot both be given",
    );
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\non = \"trigger\"\nof = \"count[0]\"\n",
        "`of` does not apply to on = \"trigger\"",
    );
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\non = \"replay\"\ncheckpoint = 2\n",
        "`checkpoint` does not apply to on = \"replay\"",
    );
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\nat = \"1s\"\ndelay = \"5ms\"\n",
        "`delay` applies only to a crash with `on`",
    );
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\non = \"snapshto\"\n",
        "snapshot",
    );
    refuse(
        "[[faults.crashes]]\ntask = \"sink[0]\"\non = \"notify\"\nof = \"sink[7]\"\n",
        "task `sink[7]` does not exist",
    );
}
