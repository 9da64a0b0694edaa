//! Faults aimed at chosen targets and events: `[faults.random] operators`
//! crashes only those operators' subtasks, `[faults.random_workers]
//! workers` only those workers, and `[[faults.worker_crashes]]` takes `on`
//! like a task crash; the plans keep to them over many seeds, the runs stay
//! exactly-once, the writer keeps the keys, and the keys are refused where
//! they do not apply.

use crate::common::{check_alg, scenario_path};
use ckptsim::engine::SimDuration;
use ckptsim::fault::{plan_crashes, plan_worker_crashes};
use ckptsim::scenario::{parse_str, Algorithm, OperatorId, Scenario};

fn wordcount_with(random_extra: &str) -> Scenario {
    let text = std::fs::read_to_string(scenario_path("wordcount"))
        .unwrap()
        .replace(
            "max_crashes = 3",
            &format!("max_crashes = 6\n{random_extra}"),
        );
    parse_str(&text, "targets.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn random_crashes_hit_only_the_chosen_operators() {
    let sc = wordcount_with("operators = [\"count\", \"sink\"]");
    let id =
        |name: &str| OperatorId(sc.operators.iter().position(|o| o.id == name).unwrap() as u32);
    let (count, sink) = (id("count"), id("sink"));
    let mut hit = [0u32; 2];
    for seed in 0..300 {
        for c in plan_crashes(&sc, seed) {
            assert!(
                c.operator == count || c.operator == sink,
                "seed {seed}: {c:?}"
            );
            hit[usize::from(c.operator == sink)] += 1;
        }
    }
    assert!(hit[0] > 100 && hit[1] > 100, "{hit:?}");
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
    }
    // Written back as it was read.
    let text = ckptsim::scenario::write::to_toml(&sc);
    assert!(text.contains("operators = [\"count\", \"sink\"]"), "{text}");
    let again = parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.faults.random, sc.faults.random);
}

#[test]
fn random_worker_crashes_hit_only_the_chosen_workers() {
    let text = std::fs::read_to_string(scenario_path("faults"))
        .unwrap()
        .replace(
            "[faults.random]",
            "[faults.random_workers]\nmean_interval = \"50ms\"\nwindow_end = \"200ms\"\nmax_crashes = 4\nworkers = [1]\n\n[faults.random]",
        );
    let sc = parse_str(&text, "workers.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut crashes = 0;
    for seed in 0..200 {
        for w in plan_worker_crashes(&sc, seed) {
            if w.at.0 > 0 && sc.faults.worker_crashes.iter().all(|p| p.at != w.at) {
                assert_eq!(w.worker, 1, "seed {seed}");
                crashes += 1;
            }
        }
    }
    assert!(crashes > 100, "{crashes}");
}

#[test]
fn target_keys_are_refused_where_they_do_not_apply() {
    let cases = [
        (
            wordcount_text("operators = [\"cnt\"]"),
            "error: unknown operator `cnt`",
            "did you mean `count`?",
        ),
        (
            wordcount_text("workers = [0]"),
            "error: `workers` does not apply to [faults.random]",
            "`workers` restricts [faults.random_workers] to some workers",
        ),
    ];
    for (text, message, help) in cases {
        let errors = parse_str(&text, "t.toml").expect_err("refused").to_string();
        assert!(errors.contains(message), "{errors}");
        assert!(errors.contains(help), "{errors}");
    }
}

fn wordcount_text(random_extra: &str) -> String {
    std::fs::read_to_string(scenario_path("wordcount"))
        .unwrap()
        .replace(
            "max_crashes = 3",
            &format!("max_crashes = 3\n{random_extra}"),
        )
}

fn faults_with_worker_crash(crash: &str) -> Scenario {
    let text = std::fs::read_to_string(scenario_path("faults"))
        .unwrap()
        .replace(
            "[[faults.worker_crashes]]\nat = \"120ms\"\nworker = 1",
            crash,
        );
    parse_str(&text, "worker-on.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// When checkpoint `id` completed in `e`, if it did.
fn completed(e: &ckptsim::harness::Execution, id: u64) -> Option<u64> {
    let done = ckptsim::runtime::coordinator::Outcome::Completed;
    let stats = &e.output.checkpoint_stats;
    stats
        .iter()
        .find(|c| c.id == id && c.outcome == done)
        .map(|c| c.end_ns)
}

/// When the first fault timeline entry starting with `what` happened.
fn noted(e: &ckptsim::harness::Execution, what: &str) -> Option<u64> {
    let timeline = &e.output.fault_timeline;
    timeline
        .iter()
        .find(|f| f.what.starts_with(what))
        .map(|f| f.time_ns)
}

#[test]
fn a_worker_crash_follows_its_event() {
    let sc = faults_with_worker_crash(
        "[[faults.worker_crashes]]\nworker = 1\non = \"complete\"\ncheckpoint = 3\ndelay = \"2ms\"",
    );
    let mut fired = 0;
    for seed in 0..30 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        match (completed(&e, 3), noted(&e, "crash of worker 1")) {
            (Some(done), Some(at)) => {
                assert_eq!(at, done + 2_000_000, "seed {seed}");
                fired += 1;
            }
            (None, None) => {}
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(fired >= 10, "{fired}");
    // Written back with its trigger.
    let text = ckptsim::scenario::write::to_toml(&sc);
    let again = parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.faults.worker_crashes, sc.faults.worker_crashes);

    // An event that never comes is a warning that names it.
    let sc = faults_with_worker_crash(
        "[[faults.worker_crashes]]\nworker = 1\non = \"complete\"\ncheckpoint = 100000",
    );
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    let w = e
        .output
        .warnings
        .iter()
        .find(|w| w.kind == "worker-crash")
        .expect("warning");
    assert!(
        w.message.starts_with(
            "crash of worker 1 on the complete of checkpoint 100000 never happened: the event never came before the run ended"
        ),
        "{}",
        w.message
    );

    // `at` with `on` is refused, as for a task crash.
    let text = std::fs::read_to_string(scenario_path("faults"))
        .unwrap()
        .replace(
            "at = \"120ms\"\nworker = 1",
            "at = \"120ms\"\nworker = 1\non = \"ack\"",
        );
    let errors = parse_str(&text, "t.toml").expect_err("refused").to_string();
    assert!(
        errors.contains("`at` and `on` cannot both be given"),
        "{errors}"
    );
}

#[test]
fn a_coordinator_crash_follows_its_event() {
    let with = |crash_on: &str| {
        // Checkpoints on a file system survive the coordinator (with
        // `memory` they die with it, and a restart from scratch duplicates
        // what the 2PC sink committed).
        let text = std::fs::read_to_string(scenario_path("wordcount"))
            .unwrap()
            .replace("storage = \"memory\"", "storage = \"filesystem\"")
            .replace(
                "[faults.random]",
                &format!("[faults.coordinator]\nfailover_delay = \"30ms\"\n\n{crash_on}\n[faults.random]"),
            );
        parse_str(&text, "coordinator-on.toml").unwrap_or_else(|e| panic!("{e}"))
    };
    let sc = with(
        "[[faults.coordinator.crash_on]]\non = \"complete\"\ncheckpoint = 3\ndelay = \"1ms\"\n",
    );
    let mut fired = 0;
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        let crash = noted(&e, "coordinator crash");
        if let (Some(done), Some(at)) = (completed(&e, 3), crash) {
            assert_eq!(at, done + 1_000_000, "seed {seed}");
            fired += 1;
        }
        assert_eq!(
            e.output.counters.coordinator_crashes + e.output.counters.coordinator_crashes_ignored,
            u64::from(crash.is_some()),
            "seed {seed}"
        );
    }
    assert!(fired >= 15, "{fired}");
    let text = ckptsim::scenario::write::to_toml(&sc);
    assert!(text.contains("[[faults.coordinator.crash_on]]"), "{text}");
    let again = parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.faults.coordinator, sc.faults.coordinator);

    let sc = with("[[faults.coordinator.crash_on]]\non = \"trigger\"\ncheckpoint = 100000\n");
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    let w = e
        .output
        .warnings
        .iter()
        .find(|w| w.kind == "coordinator-crash")
        .expect("warning");
    assert!(
        w.message
            .starts_with("coordinator crash on the trigger of checkpoint 100000 never happened"),
        "{}",
        w.message
    );
}

#[test]
fn latency_spikes_and_partitions_follow_their_events() {
    let text = std::fs::read_to_string(scenario_path("faults"))
        .unwrap()
        .replace(
            "from = \"40ms\"\nuntil = \"90ms\"\nextra = \"3ms\"",
            "on = \"trigger\"\ncheckpoint = 2\ndelay = \"1ms\"\nduration = \"20ms\"\nextra = \"3ms\"",
        )
        .replace(
            "from = \"150ms\"\nuntil = \"160ms\"\nworkers = [0]",
            "on = \"complete\"\ncheckpoint = 4\nduration = \"10ms\"\nworkers = [0]",
        );
    let sc = parse_str(&text, "network-on.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut started = [0; 2];
    for seed in 0..30 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        let stats = &e.output.checkpoint_stats;
        let triggered = stats.iter().find(|c| c.id == 2).map(|c| c.trigger_ns);
        if let (Some(t), Some(at)) = (triggered, noted(&e, "latency spike 1 begins")) {
            assert_eq!(at, t + 1_000_000, "seed {seed}");
            started[0] += 1;
        }
        if let (Some(t), Some(at)) = (completed(&e, 4), noted(&e, "network partition 1 begins")) {
            assert_eq!(at, t, "seed {seed}");
            started[1] += 1;
        }
    }
    assert!(started[0] >= 15 && started[1] >= 10, "{started:?}");
    let again = parse_str(&ckptsim::scenario::write::to_toml(&sc), "again.toml").unwrap();
    assert_eq!(again.faults.latency_spikes, sc.faults.latency_spikes);
    assert_eq!(again.faults.partitions, sc.faults.partitions);

    // `until` with `on`, and `duration` without it, are refused.
    let both = text.replace("duration = \"20ms\"", "until = \"20ms\"");
    let e = parse_str(&both, "t.toml").unwrap_err().to_string();
    assert!(e.contains("`until` and `on` cannot both be given"), "{e}");
    assert!(e.contains("missing required key `duration`"), "{e}");
    let stray = std::fs::read_to_string(scenario_path("faults"))
        .unwrap()
        .replace("until = \"160ms\"", "until = \"160ms\"\nduration = \"5ms\"");
    let e = parse_str(&stray, "t.toml").unwrap_err().to_string();
    assert!(
        e.contains("`duration` applies only to a window with `on`"),
        "{e}"
    );
}

/// A straggler may start at an event too: `delay` after checkpoint 2's
/// trigger it slows its task for `duration`, noted in the fault timeline;
/// the writer keeps it relative, and an event that never comes is a
/// warning.
#[test]
fn a_straggler_follows_its_event() {
    let relative = |checkpoint: u64| {
        let text = std::fs::read_to_string(scenario_path("faults"))
            .unwrap()
            .replace(
                "task = \"count[0]\"\nfrom = \"20ms\"\nuntil = \"100ms\"",
                &format!("task = \"count[0]\"\non = \"trigger\"\ncheckpoint = {checkpoint}\ndelay = \"1ms\"\nduration = \"30ms\""),
            );
        parse_str(&text, "slow-on.toml").unwrap_or_else(|e| panic!("{e}"))
    };
    let sc = relative(2);
    let mut started = 0;
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        let stats = &e.output.checkpoint_stats;
        let Some(t) = stats.iter().find(|c| c.id == 2).map(|c| c.trigger_ns) else {
            continue;
        };
        let (from, until) = (SimDuration(t + 1_000_000), SimDuration(t + 31_000_000));
        let what = format!("straggler count[0] (×5) from {from} until {until}");
        assert_eq!(noted(&e, &what), Some(t), "seed {seed}");
        started += 1;
    }
    assert!(started >= 15, "{started}");
    let again = parse_str(&ckptsim::scenario::write::to_toml(&sc), "again.toml").unwrap();
    assert_eq!(again.faults.slow_tasks, sc.faults.slow_tasks);
    assert!(again.faults.slow_tasks[0].trigger.is_some());

    let e = check_alg(&relative(100_000), 0, Algorithm::Aligned, &[]);
    let w = e.output.warnings.iter().find(|w| w.kind == "straggler");
    assert!(
        w.expect("warning").message.starts_with(
            "straggler count[0] on the trigger of checkpoint 100000 never happened: the event never came before"
        ),
        "{w:?}"
    );
}

/// wordcount with `tables` appended to its `[faults]` (random crashes off).
fn wordcount_faults(tables: &str) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(scenario_path("wordcount"))
        .unwrap()
        .replace("max_crashes = 3", &format!("max_crashes = 0\n\n{tables}"));
    parse_str(&text, "aimed.toml").map_err(|e| e.to_string())
}

/// `[[faults.storage_failures]]` fails exactly the write it names: a
/// task's state write of one checkpoint, or (without `of`) the metadata
/// write; that checkpoint fails, the others complete, the timeline says
/// which write it was; the writer keeps the tables.
#[test]
fn a_storage_failure_strikes_the_write_it_names() {
    let failed = |e: &ckptsim::harness::Execution| -> Vec<u64> {
        let done = ckptsim::runtime::coordinator::Outcome::Completed;
        let stats = &e.output.checkpoint_stats;
        stats
            .iter()
            .filter(|c| c.outcome != done)
            .map(|c| c.id)
            .collect()
    };
    let cases = [
        (
            "[[faults.storage_failures]]\ncheckpoint = 3\nof = \"count[1]\"",
            "the state write of checkpoint 3 by count[1] failed",
        ),
        (
            "[[faults.storage_failures]]\ncheckpoint = 2",
            "the metadata write of checkpoint 2 failed",
        ),
    ];
    for (table, what) in cases {
        let sc = wordcount_faults(table).unwrap();
        let id = sc.faults.storage_failures[0].checkpoint;
        for seed in 0..5 {
            let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
            assert!(e.verdict.passed, "seed {seed}");
            assert_eq!(failed(&e), [id], "seed {seed}");
            let notes: Vec<&str> = e
                .output
                .fault_timeline
                .iter()
                .map(|f| f.what.as_str())
                .collect();
            assert!(notes.contains(&what), "seed {seed}: {notes:?}");
            assert_eq!(e.output.counters.storage_write_failures, 1, "seed {seed}");
        }
        let again = parse_str(&ckptsim::scenario::write::to_toml(&sc), "again.toml").unwrap();
        assert_eq!(again.faults.storage_failures, sc.faults.storage_failures);
    }
    let never = wordcount_faults("[[faults.storage_failures]]\ncheckpoint = 100000").unwrap();
    let e = check_alg(&never, 0, Algorithm::Aligned, &[]);
    let w = e.output.warnings.iter().find(|w| w.kind == "storage");
    assert!(
        w.expect("warning").message.starts_with(
            "storage failure of the metadata write of checkpoint 100000 never happened: that write never came before the run ended"
        ),
        "{w:?}"
    );
    for (table, error) in [
        (
            "[[faults.storage_failures]]\nof = \"count[0]\"",
            "missing required key `checkpoint`",
        ),
        (
            "[[faults.storage_failures]]\ncheckpoint = 0",
            "checkpoint must be at least 1",
        ),
        (
            "[[faults.lost_notifications]]\ncheckpoint = 2\nof = \"count[9]\"",
            "task `count[9]` does not exist",
        ),
    ] {
        let e = wordcount_faults(table).unwrap_err();
        assert!(e.contains(error), "{table}: {e}");
    }
}

/// `[[faults.lost_notifications]]` loses exactly the notifications it
/// names: one task's, or every task's of one checkpoint; the job stays
/// exactly-once (a later notification catches up).
#[test]
fn a_lost_notification_strikes_the_task_it_names() {
    let lost = |e: &ckptsim::harness::Execution| -> Vec<String> {
        let timeline = &e.output.fault_timeline;
        let lost = timeline
            .iter()
            .filter(|f| f.what.starts_with("notification of"));
        lost.map(|f| f.what.clone()).collect()
    };
    let one = wordcount_faults("[[faults.lost_notifications]]\ncheckpoint = 2\nof = \"sink[0]\"")
        .unwrap();
    let every = wordcount_faults("[[faults.lost_notifications]]\ncheckpoint = 3").unwrap();
    for seed in 0..5 {
        let e = check_alg(&one, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        assert_eq!(
            lost(&e),
            ["notification of checkpoint 2 to sink[0] lost"],
            "seed {seed}"
        );
        let e = check_alg(&every, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        let all = lost(&e);
        assert_eq!(all.len(), 7, "seed {seed}: {all:?}");
        assert!(all
            .iter()
            .all(|w| w.starts_with("notification of checkpoint 3 to ")));
    }
    let again = parse_str(&ckptsim::scenario::write::to_toml(&one), "again.toml").unwrap();
    assert_eq!(
        again.faults.lost_notifications,
        one.faults.lost_notifications
    );
}

/// wordcount with its source's `records_per_partition` line replaced.
fn wordcount_lengths(lengths: &str) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(scenario_path("wordcount"))
        .unwrap()
        .replace("records_per_partition = 3000", lengths);
    parse_str(&text, "lengths.toml").map_err(|e| e.to_string())
}

/// Partitions of different lengths: the workload has them, the runs stay
/// exactly-once, savepoints carry them, and the writer keeps them.
#[test]
fn partitions_may_have_lengths_of_their_own() {
    let sc = wordcount_lengths("partition_records = [4000, 100, 1500, 7]").unwrap();
    let w = ckptsim::model::Workload::generate(&sc, 3);
    let lengths: Vec<usize> = (0..4).map(|p| w.partition(p).len()).collect();
    assert_eq!(lengths, [4000, 100, 1500, 7]);
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        assert_eq!(e.output.store.committed().len(), 5607, "seed {seed}");
    }
    let text = ckptsim::scenario::write::to_toml(&sc);
    assert!(
        text.contains("partition_records = [4000, 100, 1500, 7]"),
        "{text}"
    );
    assert!(!text.contains("records_per_partition"), "{text}");
    let again = parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.operators[0].kind, sc.operators[0].kind);
    let image = ckptsim::savepoint::source_inputs(&sc);
    assert_eq!(image[0].partition_records, [4000, 100, 1500, 7]);

    let e = wordcount_lengths("partition_records = [1, 2, 3]").unwrap_err();
    assert!(
        e.contains("partition_records lists 3 lengths for 4 partitions"),
        "{e}"
    );
    let e = wordcount_lengths("records_per_partition = 3\npartition_records = [1, 2, 3, 4]")
        .unwrap_err();
    assert!(
        e.contains("records_per_partition and partition_records cannot both be given"),
        "{e}"
    );
    let e = wordcount_lengths("partition_records = [1, 0, 3, 4]").unwrap_err();
    assert!(e.contains("partition_records[1]"), "{e}");
}

/// Partitions with rates: no record is read before it is there (record
/// `o` at rate `r` from `o / r` seconds), sources wait for the slow
/// partitions and the job ends when the slowest is read, every seed stays
/// exactly-once under crashes and every algorithm, the writer keeps the
/// rates, and bad rates are refused.
#[test]
fn partitions_may_have_rates_of_their_own() {
    let sc = wordcount_lengths(
        "partition_records = [3000, 600, 1500, 300]\npartition_rates = [6000, 300, 0, 150]",
    )
    .unwrap();
    let w = ckptsim::model::Workload::generate(&sc, 0);
    assert_eq!(w.ready_at(0, 3), ckptsim::engine::SimTime(500_000));
    assert_eq!(w.ready_at(1, 1), ckptsim::engine::SimTime(3_333_334));
    assert_eq!(w.ready_at(2, 1499), ckptsim::engine::SimTime::ZERO);
    for seed in 0..12 {
        for alg in [Algorithm::Aligned, Algorithm::Unaligned] {
            let e = check_alg(&sc, seed, alg, &[]);
            assert!(e.verdict.passed, "seed {seed} {alg:?}");
            let committed = e.output.store.committed();
            assert_eq!(committed.len(), 5400, "seed {seed}");
            for r in committed.iter() {
                let ready = w.ready_at(r.lineage.partition, r.lineage.offset);
                assert!(r.emitted_at >= ready, "seed {seed}: {r:?} before {ready:?}");
            }
            // The trickling partitions end the input: 299 / 150 s and
            // 599 / 300 s, just under two seconds.
            assert!(e.output.input_end.0 >= 1_993_333_334, "seed {seed}");
        }
    }
    let text = ckptsim::scenario::write::to_toml(&sc);
    assert!(
        text.contains("partition_rates = [6000, 300, 0, 150]"),
        "{text}"
    );
    assert!(!text.contains("records_per_second"), "{text}");
    let again = parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.operators[0].kind, sc.operators[0].kind);

    let one = wordcount_lengths("records_per_partition = 3000\nrecords_per_second = 5000").unwrap();
    let e = check_alg(&one, 1, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    assert!(
        e.output.input_end.0 >= 599_800_000,
        "{}",
        e.output.input_end.0
    );

    for (keys, error) in [
        (
            "partition_rates = [1, 2, 3]",
            "partition_rates lists 3 rates for 4 partitions",
        ),
        (
            "records_per_partition = 30\nrecords_per_second = 5\npartition_rates = [1, 2, 3, 4]",
            "records_per_second and partition_rates cannot both be given",
        ),
        ("partition_rates = [1, -1, 3, 4]", "partition_rates[1]"),
        ("records_per_second = 1000000001", "records_per_second"),
    ] {
        let e = wordcount_lengths(keys).unwrap_err();
        assert!(e.contains(error), "{keys}: {e}");
    }
}

/// Swarm mode draws source rates on about half the seeds, within the
/// default range, and such seeds stay exactly-once with no record read
/// before it was there.
#[test]
fn the_swarm_draws_source_rates() {
    let sc = crate::common::load("faults");
    let range = ckptsim::swarm::default_ranges(&sc)
        .source_rate
        .expect("a range");
    let mut rated = 0;
    for seed in 0..24 {
        let (drawn, draw) = ckptsim::swarm::draw(&sc, &ckptsim::swarm::default_ranges(&sc), seed)
            .unwrap_or_else(|e| panic!("{e}"));
        let knob = draw.knobs.iter().find(|(k, _)| k == "source_rate");
        let ckptsim::scenario::OperatorKind::Source(src) = &drawn.operators[0].kind else {
            panic!("faults starts with its source");
        };
        match knob {
            Some((_, v)) => {
                rated += 1;
                let rate: u64 = v.parse().unwrap();
                assert_eq!(src.records_per_second, rate);
                assert!((u64::from(range.0)..=u64::from(range.1)).contains(&rate));
                let e = check_alg(&drawn, seed, Algorithm::Aligned, &[]);
                assert!(e.verdict.passed, "seed {seed}");
                let w = ckptsim::model::Workload::generate(&drawn, seed);
                for r in e.output.store.committed().iter() {
                    assert!(r.emitted_at >= w.ready_at(r.lineage.partition, r.lineage.offset));
                }
            }
            None => assert_eq!(src.records_per_second, 0),
        }
    }
    assert!((6..=18).contains(&rated), "{rated}");
}
