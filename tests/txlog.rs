//! The transactional log as a sink: Flink's Kafka sink exactly-once under
//! crashes with both namings of its transactional ids, at-least-once and
//! none, the judge's rules on the log (open transactions, commits lost to
//! the broker's timeout) and the mutants they catch.

use crate::common::{
    assert_caught, check, ckptsim, exactly_once, failed_checks, load, reach, seeds_or, stderr,
    sweep, valid,
};
use ckptsim::engine::SimDuration;
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{Delivery, Guarantee, OperatorKind, Scenario, ScenarioData};

/// The scenario with its sink's keys changed by `edit`.
fn with_sink(s: &Scenario, edit: impl Fn(&mut OperatorKind)) -> Scenario {
    let mut d = ScenarioData::clone(s);
    let sink = d.operators.iter_mut().find(|o| o.id == "out").unwrap();
    edit(&mut sink.kind);
    valid(&d)
}

fn timeout(s: &Scenario, t: SimDuration) -> Scenario {
    with_sink(s, |k| {
        if let OperatorKind::SinkLog {
            transaction_timeout,
            ..
        } = k
        {
            *transaction_timeout = t;
        }
    })
}

/// Both namings keep exactly-once through crashes, failed checkpoint
/// writes and lost notifications under every exactly-once algorithm: the
/// restores commit what their checkpoints hold and abort what the failed
/// attempts left open; nothing stays open, no commit is refused.
#[test]
fn the_log_sink_is_exactly_once_under_every_algorithm_with_both_namings() {
    for name in ["log", "log-pooling"] {
        let s = load(name);
        for a in exactly_once() {
            let c = sweep(&s, name, a, 0..seeds_or(6));
            assert!(c.log_commits > 0, "{name} {}: no commit", a.name());
            assert!(c.log_records_read_committed > 0, "{name} {}", a.name());
            assert_eq!(c.log_commits_lost, 0, "{name} {}", a.name());
        }
        let c = sweep(&s, name, s.checkpoint.algorithm, 0..seeds_or(20));
        assert!(
            c.log_lingering_aborted > 0,
            "{name}: no lingering transaction aborted"
        );
        assert!(c.recoveries > 0, "{name}");
    }
}

/// What the judge reads is what a read_committed reader reads: every
/// committed record of the run is a record of the sink's topic, and the
/// commit check's promise is kept by the log.
#[test]
fn the_committed_output_is_the_topic_read_committed() {
    let s = load("log");
    let e = check(&s, 3, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    let read = e.output.counters.log_records_read_committed;
    assert!(read > 0);
    assert_eq!(read as usize, e.output.store.committed().len());
    assert!(reach(&e, "lost-commits", "log transactions committed") > 0);
}

/// The transaction timeout's boundary: the sink crashes right after its
/// snapshot of checkpoint 5, so the restore commits that transaction about
/// an interval plus the time to recover after it began. A timeout below
/// that loses it, named with the timeout and the interval; one above keeps
/// every record.
#[test]
fn a_timeout_below_interval_plus_recovery_loses_data_and_is_named() {
    let s = load("log-timeout");
    // interval 20ms, detection 10ms, restart 10ms.
    for seed in 0..3 {
        let e = check(&timeout(&s, SimDuration::from_millis(35)), seed, &[]);
        let failed = failed_checks(&e);
        assert!(failed.contains(&"lost-commits"), "seed {seed}: {failed:?}");
        assert!(failed.contains(&"exactly-once-output"), "{failed:?}");
        let v = e
            .verdict
            .violations()
            .find(|v| v.check == "lost-commits")
            .unwrap();
        assert!(
            v.message.contains("transaction timeout of 35ms"),
            "{}",
            v.message
        );
        assert!(
            v.message.contains("checkpoint interval (20ms)"),
            "{}",
            v.message
        );
        assert!(e.output.counters.log_transactions_timed_out > 0);
        let e = check(&timeout(&s, SimDuration::from_millis(45)), seed, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
    }
}

/// Such a scenario is warned of before it runs; a safe one is not.
#[test]
fn a_short_transaction_timeout_is_warned_of_before_the_run() {
    let dir = std::env::temp_dir().join(format!("ckptsim-txlog-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(crate::common::scenario_path("log-timeout")).unwrap();
    let short = dir.join("short.toml");
    let edited = text.replace(
        "topic_partitions = 2",
        "topic_partitions = 2\ntransaction_timeout = \"35ms\"",
    );
    std::fs::write(&short, edited).unwrap();
    let o = ckptsim(&["run", short.to_str().unwrap(), "--seed", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.contains("warning: sink `out`: its transaction timeout (35ms)"),
        "{err}"
    );
    assert!(first.contains("checkpoint interval (20ms)"), "{first}");
    let o = ckptsim(&["run", "scenarios/log-timeout.toml", "--seed", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning: sink"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// At-least-once flushes before every snapshot: duplicates after a
/// restore, nothing lost, and the run expects no more. `none` expects
/// nothing of its output.
#[test]
fn at_least_once_and_none_are_judged_by_what_they_promise() {
    let s = load("log");
    let delivery = |d: Delivery| {
        with_sink(&s, move |k| {
            if let OperatorKind::SinkLog { delivery, .. } = k {
                *delivery = d;
            }
        })
    };
    let alo = delivery(Delivery::AtLeastOnce);
    assert_eq!(
        alo.expected_guarantee(alo.checkpoint.algorithm),
        Guarantee::AtLeastOnce
    );
    let c = sweep(
        &alo,
        "log (at-least-once)",
        alo.checkpoint.algorithm,
        0..seeds_or(10),
    );
    assert_eq!(c.log_commits, 0);
    let none = delivery(Delivery::None);
    assert_eq!(
        none.expected_guarantee(none.checkpoint.algorithm),
        Guarantee::Broken
    );
    sweep(
        &none,
        "log (none)",
        none.checkpoint.algorithm,
        0..seeds_or(4),
    );
}

/// The violation of `check` on the first of 60 seeds of scenario `name`
/// that mutant `m` fails; `check` must be among the checks that fail there.
fn first_violation(name: &str, m: Mutant, check_name: &str) -> ckptsim::verdict::Violation {
    let s = load(name);
    assert_caught(&s, m, 60, check_name);
    let seed = (0..60)
        .find(|&seed| !check(&s, seed, &[m]).verdict.passed)
        .unwrap();
    let e = check(&s, seed, &[m]);
    let v = e.verdict.violations().find(|v| v.check == check_name);
    v.unwrap().clone()
}

/// FLINK-40626: pooled ids whose restore aborts only what its state knew
/// leave a transaction open; readers stall, named with the id and the
/// attempt that opened it.
#[test]
fn a_transaction_left_open_by_pooled_ids_is_named() {
    let v = first_violation(
        "log-pooling",
        Mutant::PooledAbortKnownOnly,
        "open-transactions",
    );
    for part in [
        "transaction `out-",
        "opened by attempt",
        "read_committed reader of out is stuck",
    ] {
        assert!(v.message.contains(part), "{part}: {}", v.message);
    }
}

/// The incrementing naming must initialise the ids of the checkpoints its
/// sink never saw, or the restore's probe stops at the gap.
#[test]
fn gaps_in_incrementing_ids_leave_a_transaction_open() {
    assert_caught(
        &load("log"),
        Mutant::TransactionalIdGaps,
        60,
        "open-transactions",
    );
}

/// FLINK-31363: an empty transaction handed over for commit is refused by
/// the broker; the task fails on every restore until the job fails, which
/// liveness names with the operator's failure.
#[test]
fn committing_an_empty_transaction_fails_the_job_and_is_named() {
    let v = first_violation("log", Mutant::EmptyTransactionCommitted, "liveness");
    assert!(
        v.message.contains("invalid transaction state Empty"),
        "{}",
        v.message
    );
    assert!(
        v.message.contains("its own operators raised"),
        "{}",
        v.message
    );
}

/// A restored writer must initialise the producers it takes over: one
/// resumed from its state leaves the failed attempt's transaction open (the
/// broker still has it as the failed attempt's) and writes into it, and the
/// records it held are committed with the replayed ones.
#[test]
fn a_restored_producer_that_is_not_fenced_is_caught() {
    let s = load("log-pooling");
    let m = Mutant::RestoredProducerNotFenced;
    assert_caught(&s, m, 20, "open-transactions");
    let duplicated = (0..20).any(|seed| {
        let e = check(&s, seed, &[m]);
        failed_checks(&e).contains(&"exactly-once-output")
            && e.verdict
                .violations()
                .any(|v| v.message.contains("committed 2×"))
    });
    assert!(duplicated, "no seed committed a record twice");
}

/// A log job restored from a savepoint (stopped with it, or cancelled after
/// a plain one) carries the log along: the restore commits the image's
/// committables, the topic is read whole once; so does a restore at
/// another parallelism (`txlog_rescale` has more).
#[test]
fn a_log_job_restores_from_its_savepoints() {
    let dir = std::env::temp_dir().join(format!("ckptsim-txlog-sp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, stop) in [("log", false), ("log-pooling", true)] {
        let out = dir.join(name);
        let scenario = format!("scenarios/{name}.toml");
        let mut args = vec!["savepoint", &scenario, "--at", "150ms", "--seed", "3"];
        let out_text = out.to_str().unwrap().to_string();
        args.extend(["--out", &out_text]);
        if stop {
            args.extend(["--stop", "--drain"]);
        }
        let o = ckptsim(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let run = [
            "run",
            &scenario,
            "--from-savepoint",
            &out_text,
            "--seed",
            "3",
        ];
        let o = ckptsim(&run);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let mut rescaled = run.to_vec();
        rescaled.extend(["--parallelism", "out=2"]);
        let o = ckptsim(&rescaled);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("out: parallelism 3 → 2"),
            "{}",
            stderr(&o)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Under the uncoordinated and communication-induced families each task
/// restores its own checkpoint of the recovery line: the sink is told that
/// checkpoint (not the line's newest), so its abort probes the ids after
/// its own snapshot and nothing the failed attempt opened stays open.
#[test]
fn the_log_sink_keeps_exactly_once_under_the_uncoordinated_families() {
    for name in ["log", "log-pooling"] {
        let s = load(name);
        for a in crate::common::uncoordinated() {
            let c = sweep(&s, name, a, 0..seeds_or(4));
            assert!(c.recoveries > 0 && c.log_commits > 0, "{name} {}", a.name());
        }
    }
}
