//! The transactional log's brokers under faults: asynchronous producers
//! that retry until their delivery timeout, flushes that block the task's
//! thread until every request is answered, expired requests that fail the
//! task; the `[[faults.broker]]` table, and the mutants its checks catch.

use crate::common::{assert_caught, check, exactly_once, load, seeds_or, sweep, valid};
use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{
    parse_str, BrokerFault, BrokerRole, BrokerWindow, Guarantee, ScenarioData,
};

/// Both sinks keep their promise under every exactly-once algorithm while
/// the brokers are down, lose requests and answer late: requests retry,
/// expire, fail their task; flushes wait.
#[test]
fn the_log_keeps_its_guarantees_while_the_brokers_fail() {
    let s = load("log-broker");
    assert_eq!(
        s.expected_guarantee(s.checkpoint.algorithm),
        Guarantee::AtLeastOnce
    );
    for a in exactly_once() {
        let c = sweep(&s, "log-broker", a, 0..seeds_or(3));
        assert!(c.log_requests_retried > 0, "{}", a.name());
        assert!(c.log_requests_expired > 0, "{}", a.name());
        assert!(c.log_flushes_blocked > 0, "{}", a.name());
        assert!(c.operator_failures_by_faults > 0, "{}", a.name());
        assert_eq!(c.operator_failures, 0, "{}", a.name());
    }
}

/// The scenario with its broker faults replaced by `windows`, and every
/// random crash removed.
fn with_windows(windows: Vec<BrokerWindow>) -> ScenarioData {
    let mut d = ScenarioData::clone(&load("log-broker"));
    d.faults.broker = windows;
    d.faults.random = None;
    d
}

fn ms(n: u64) -> SimTime {
    SimTime(n * 1_000_000)
}

/// An outage longer than the delivery timeout fails the task when the
/// flush returns, once the first request expired, not when the flush
/// began: every expiry is reported at least a delivery timeout after the
/// outage began.
#[test]
fn an_expired_request_fails_the_task_when_its_answer_was_due() {
    let s = valid(&with_windows(vec![BrokerWindow {
        from: ms(100),
        until: ms(400),
        fault: BrokerFault::Down,
        role: BrokerRole::Leader,
    }]));
    let e = check(&s, 0, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    assert!(e.output.counters.operator_failures_by_faults > 0);
    let timeline = &e.output.fault_timeline;
    let expired: Vec<u64> = (timeline.iter())
        .filter(|f| f.what.contains("expired"))
        .map(|f| f.time_ns)
        .collect();
    assert!(!expired.is_empty(), "{timeline:?}");
    assert!(expired.iter().all(|&at| at >= ms(112).0), "{timeline:?}");
}

/// Slow answers (within the delivery timeout) lose nothing and fail
/// nothing, but the flush before each snapshot waits for them: the
/// checkpoints taken while the answers are late last that much longer.
#[test]
fn a_flush_blocks_its_checkpoint_until_the_answers_come() {
    let slow = |extra| {
        valid(&with_windows(vec![BrokerWindow {
            from: ms(0),
            until: ms(600),
            fault: BrokerFault::Slow(SimDuration::from_millis(extra)),
            role: BrokerRole::Leader,
        }]))
    };
    let longest = |s| {
        let e = check(s, 0, &[]);
        assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
        assert_eq!(e.output.counters.operator_failures, 0);
        (e.output.checkpoint_stats.iter())
            .map(|c| c.duration_ns)
            .max()
            .unwrap()
    };
    let (quick, slow) = (longest(&slow(0)), longest(&slow(8)));
    assert!(quick < SimDuration::from_millis(5).0, "{quick}");
    assert!(slow >= SimDuration::from_millis(8).0, "{slow}");
}

fn refused(text: &str) -> String {
    parse_str(text, "bad.toml")
        .expect_err("refused")
        .to_string()
}

/// A broker fault names its kind, its window in order, and `extra` only
/// when slow; each problem where it stands.
#[test]
fn a_broker_fault_is_checked_where_it_stands() {
    let text = std::fs::read_to_string(crate::common::scenario_path("log-broker")).unwrap();
    let down = "from = \"62ms\"\nuntil = \"76ms\"\nfault = \"down\"";
    assert!(text.contains(down));
    let line = 1 + text.lines().position(|l| l == "until = \"76ms\"").unwrap();
    let e = refused(&text.replace(down, "from = \"62ms\"\nuntil = \"60ms\"\nfault = \"down\""));
    assert!(
        e.contains(&format!("bad.toml:{line}:")) && e.contains("must be after from"),
        "{e}"
    );
    let e = refused(&text.replace(down, "from = \"62ms\"\nuntil = \"76ms\"\nfault = \"gone\""));
    assert!(e.contains("gone") && e.contains("slow"), "{e}");
    let e = refused(&text.replace(down, "from = \"62ms\"\nuntil = \"76ms\""));
    assert!(e.contains("fault"), "{e}");
    let extra = "from = \"62ms\"\nuntil = \"76ms\"\nfault = \"down\"\nextra = \"1ms\"";
    let e = refused(&text.replace(down, extra));
    assert!(
        e.contains("`extra` applies only to fault = \"slow\""),
        "{e}"
    );
    let slow = "from = \"400ms\"\nuntil = \"450ms\"\nfault = \"slow\"\nextra = \"4ms\"";
    assert!(text.contains(slow));
    let e = refused(&text.replace(
        slow,
        "from = \"400ms\"\nuntil = \"450ms\"\nfault = \"slow\"",
    ));
    assert!(e.contains("extra"), "{e}");
    let no_log = std::fs::read_to_string(crate::common::scenario_path("wordcount")).unwrap();
    let e = refused(&format!(
        "{no_log}\n[[faults.broker]]\nuntil = \"1s\"\nfault = \"down\"\n"
    ));
    assert!(e.contains("this job has none"), "{e}");
    let e = refused(&text.replace("request_timeout = \"5ms\"", "request_timeout = \"50ms\""));
    assert!(
        e.contains("delivery_timeout (12ms) must be at least request_timeout (50ms)"),
        "{e}"
    );
}

/// A flush that returns while requests are still retried lets a
/// checkpoint complete without their records (FLINK-33545).
#[test]
fn a_flush_that_skips_retries_loses_records() {
    assert_caught(
        &load("log-broker"),
        Mutant::LogFlushSkipsRetries,
        60,
        "exactly-once-output",
    );
}

/// A callback's error cleared without failing the task loses its records
/// (FLINK-35749).
#[test]
fn a_swallowed_producer_error_loses_records() {
    assert_caught(
        &load("log-broker"),
        Mutant::LogAsyncErrorSwallowed,
        60,
        "exactly-once-output",
    );
}

/// A task that dies while the flush of its snapshot blocks it never
/// acknowledges that checkpoint: the snapshot's call did not return. Every
/// flush here waits 8 ms for slow answers, and the count's chain dies at
/// 44 ms, inside the flush of checkpoint 2 (triggered at 40 ms): checkpoint
/// 2 does not complete, and the job restarts from checkpoint 1.
#[test]
fn a_task_that_dies_in_a_blocked_flush_acknowledges_nothing() {
    let mut d = with_windows(vec![BrokerWindow {
        from: ms(0),
        until: ms(600),
        fault: BrokerFault::Slow(SimDuration::from_millis(8)),
        role: BrokerRole::Leader,
    }]);
    d.faults.crashes = vec![ckptsim::scenario::CrashSpec {
        at: ms(44),
        operator: ckptsim::scenario::OperatorId(1),
        subtask: 0,
        trigger: None,
        repeat: false,
    }];
    let s = valid(&d);
    let e = check(&s, 0, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    let second = (e.output.checkpoint_stats.iter())
        .find(|c| c.id == 2)
        .expect("checkpoint 2 was triggered");
    assert_ne!(
        second.outcome,
        ckptsim::runtime::coordinator::Outcome::Completed
    );
    let timeline = &e.output.fault_timeline;
    assert!(
        timeline
            .iter()
            .any(|f| f.what == "restart from checkpoint 1"),
        "{timeline:?}"
    );
}
