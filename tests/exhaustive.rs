//! Exhaustive exploration (`ckptsim explore`): every order in which the
//! tasks of a tiny job read their ready inputs, up to a bound; a seeded bug
//! the default schedule misses is found, and its schedule replays alone.

use crate::common::{ckptsim, failed_checks, load, scenario_path};
use ckptsim::exhaustive::{explore, reproducer_text, ExploreSpec};
use ckptsim::harness::execute;
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{parse_str, Algorithm, FlinkVersion, ScenarioData};

fn spec(mutants: Mutants, depth: usize, max_schedules: u64) -> ExploreSpec {
    ExploreSpec {
        scenario: load("tiny"),
        seed: 0,
        algorithm: Algorithm::Aligned,
        mutants,
        depth,
        from: 0,
        max_schedules,
        sample: None,
    }
}

/// Every schedule of the first 12 choices, each once: the tree is
/// complete, and a correct job passes on all of them. The count is the
/// tree's size for this job and seed (a change of it is a change of the
/// simulation), and a second exploration is the same.
#[test]
fn a_tiny_job_is_explored_completely_and_passes() {
    let r = explore(&spec(Mutants::NONE, 12, 100_000));
    assert!(r.complete);
    assert_eq!((r.schedules, r.failing), (4096, 0));
    assert!(
        r.distinct > 1 && r.distinct <= r.schedules,
        "{}",
        r.distinct
    );
    assert!(r.most_choices > 12, "{}", r.most_choices);
    let again = explore(&spec(Mutants::NONE, 12, 100_000));
    assert_eq!((again.schedules, again.distinct), (r.schedules, r.distinct));
    // A smaller bound is a smaller tree; a schedule budget stops early.
    let shallow = explore(&spec(Mutants::NONE, 4, 100_000));
    assert!(shallow.complete && shallow.schedules < r.schedules);
    let cut = explore(&spec(Mutants::NONE, 12, 100));
    assert!(!cut.complete);
    assert_eq!(cut.schedules, 100);
}

/// With a latency range, each message's latency is a choice too (its
/// channel's minimum or maximum): more choices per run, messages of
/// different channels arrive in other orders, and every schedule still
/// passes; a schedule found with such choices replays alone.
#[test]
fn message_latencies_are_choices_within_their_bounds() {
    let text = std::fs::read_to_string(scenario_path("tiny"))
        .unwrap()
        .replace("latency_max = \"100us\"", "latency_max = \"300us\"");
    let scenario = parse_str(&text, "tiny-latency.toml").unwrap();
    let fixed = explore(&spec(Mutants::NONE, 8, 100_000));
    let s = ExploreSpec {
        scenario,
        ..spec(Mutants::NONE, 8, 100_000)
    };
    let r = explore(&s);
    assert!(r.complete && r.failing == 0);
    assert_eq!(
        r.schedules, 256,
        "two ways for each of the first 8 messages"
    );
    assert!(
        r.most_choices > 4 * fixed.most_choices,
        "{} {}",
        r.most_choices,
        fixed.most_choices
    );
    assert!(
        r.distinct > fixed.distinct,
        "{} {}",
        r.distinct,
        fixed.distinct
    );
    let bad = ExploreSpec {
        mutants: Mutants::NONE.with(Mutant::AlignedNoBlock),
        ..s
    };
    let found = explore(&bad);
    let last = found.found.last().expect("a failing schedule");
    let replay = parse_str(&reproducer_text(&bad, last, "tiny-latency"), "f.toml").unwrap();
    let cfg = RunConfig {
        seed: 0,
        algorithm: Algorithm::Aligned,
        mutants: bad.mutants,
        record_trace: false,
    };
    assert_eq!(failed_checks(&execute(&replay, &cfg)), last.checks);
}

/// `aligned-no-block` (an aligned barrier that does not block its channel)
/// passes under the default schedule of this job, but some orders read a
/// record from behind the barrier before the other barrier came: the
/// exploration finds them, and the written schedule fails alone.
#[test]
fn exploration_finds_a_bug_the_default_schedule_misses() {
    let sc = load("tiny");
    let mutants = Mutants::NONE.with(Mutant::AlignedNoBlock);
    let cfg = RunConfig {
        seed: 0,
        algorithm: Algorithm::Aligned,
        mutants,
        record_trace: false,
    };
    assert!(execute(&sc, &cfg).verdict.passed, "the default schedule");
    let s = spec(mutants, 12, 100_000);
    let r = explore(&s);
    assert!(r.complete);
    assert!(r.failing > 0 && r.failing < r.schedules, "{}", r.failing);
    let first = &r.found[0];
    assert!(
        first.checks.contains(&"consistent-cut".to_string()),
        "{first:?}"
    );
    let text = reproducer_text(&s, first, "tiny");
    assert!(text.contains("# expect-fail: "), "{text}");
    let replay = parse_str(&text, "found.toml").unwrap_or_else(|e| panic!("{e}"));
    // All lowest-input choices are written as one: the file runs scripted.
    let written = if first.choices.is_empty() {
        vec![0]
    } else {
        first.choices.clone()
    };
    assert_eq!(replay.replay.choices, written);
    assert_eq!(replay.replay.mutants, ["aligned-no-block"]);
    let e = execute(&replay, &cfg);
    assert!(!e.verdict.passed);
    let failed = failed_checks(&e);
    assert_eq!(
        failed,
        first.checks.iter().map(String::as_str).collect::<Vec<_>>()
    );
    // Without the mutant, the same schedule passes: the bug is the mutant's.
    let fixed = execute(
        &replay,
        &RunConfig {
            mutants: Mutants::NONE,
            ..cfg
        },
    );
    assert!(fixed.verdict.passed);
}

/// From the command line: exit 0 when every schedule passes, 1 with the
/// failing schedule written to `--out` (which `run` replays alone, exit 1),
/// 2 for a bound out of range.
#[test]
fn explore_from_the_command_line() {
    let tiny = scenario_path("tiny");
    let tiny = tiny.to_str().unwrap();
    let o = ckptsim(&["explore", tiny, "--depth", "6"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("(complete: every schedule of the first 6 choices)"),
        "{out}"
    );
    assert!(out.contains("failing      0 schedules"), "{out}");

    let dir = std::env::temp_dir().join(format!("ckptsim-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("found.toml");
    let f = file.to_str().unwrap();
    let o = ckptsim(&["explore", tiny, "--mutant", "aligned-no-block", "--out", f]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("fails consistent-cut"), "{out}");
    assert!(
        out.contains(&format!("replay       ckptsim run {f}")),
        "{out}"
    );
    let o = ckptsim(&["run", f]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    std::fs::remove_dir_all(&dir).unwrap();

    let o = ckptsim(&["explore", tiny, "--depth", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A crash point (`--crash`, `[replay] crash_points`): the subtask may
/// crash once, before any of its steps, each step a choice. Without its
/// planned crash, tiny never restores, so `no-source-rewind` passes every
/// input order; with count[0] as a crash point, the schedules that crash it
/// fail, and the written one replays alone, crash included. A correct job
/// passes every crash point.
#[test]
fn crash_points_are_choices() {
    let text = std::fs::read_to_string(scenario_path("tiny")).unwrap().replace(
        "[[faults.crashes]]\ntask = \"count[0]\"\non = \"complete\"\ncheckpoint = 1\ndelay = \"100us\"\n",
        "",
    );
    let mut scenario =
        ckptsim::scenario::ScenarioData::clone(&parse_str(&text, "tiny-no-crash.toml").unwrap());
    assert!(scenario.faults.crashes.is_empty());
    let rewind = Mutants::NONE.with(Mutant::NoSourceRewind);
    let plain = ExploreSpec {
        scenario: crate::common::valid(&scenario),
        ..spec(rewind, 12, 100_000)
    };
    assert_eq!(explore(&plain).failing, 0);
    let count = ckptsim::exhaustive::subtask(&scenario, "count[0]").unwrap();
    scenario.replay.crash_points = vec![count];
    let crashing = ExploreSpec {
        scenario: crate::common::valid(&scenario),
        ..spec(rewind, 12, 100_000)
    };
    let r = explore(&crashing);
    assert!(
        r.complete && r.failing > 0 && r.failing < r.schedules,
        "{r:?}"
    );
    let found = &r.found[0];
    let replay = parse_str(&reproducer_text(&crashing, found, "t"), "f.toml").unwrap();
    assert_eq!(replay.replay.crash_points, [count]);
    let cfg = RunConfig {
        seed: 0,
        algorithm: Algorithm::Aligned,
        mutants: rewind,
        record_trace: false,
    };
    let e = execute(&replay, &cfg);
    assert_eq!(failed_checks(&e), found.checks);
    assert_eq!(e.output.counters.crashes, 1);
    let correct = ExploreSpec {
        scenario: crate::common::valid(&scenario),
        ..spec(Mutants::NONE, 12, 100_000)
    };
    let r = explore(&correct);
    assert!(r.complete && r.failing == 0);
    for bad in ["count[1]", "nope[0]", "count"] {
        assert!(
            ckptsim::exhaustive::subtask(&load("tiny"), bad).is_err(),
            "{bad}"
        );
    }
}

/// `--from N` enumerates later choices: the first N take their first
/// alternative, the next `depth` every one.
#[test]
fn exploration_can_start_later_in_a_run() {
    let late = ExploreSpec {
        from: 6,
        ..spec(Mutants::NONE, 4, 100_000)
    };
    let r = explore(&late);
    assert!(r.complete && r.failing == 0);
    assert!(r.schedules > 1 && r.schedules <= 16, "{}", r.schedules);
    let tiny = scenario_path("tiny");
    let o = ckptsim(&[
        "explore",
        tiny.to_str().unwrap(),
        "--depth",
        "4",
        "--from",
        "6",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(complete: every schedule of 4 choices from choice 6)"),
        "{out}"
    );
}

/// `--sample`: the default schedule, then schedules deviating at a few
/// random choices, each drawn from the seed and its index: the same
/// samples twice, a correct job passes every one, and a deliberate bug is
/// found in a sample whose choices fail again alone.
#[test]
fn sampled_schedules_are_reproducible_and_find_a_bug() {
    let sampled = |mutants: Mutants| ExploreSpec {
        sample: Some((60, 2)),
        ..spec(mutants, 12, 100_000)
    };
    let r = explore(&sampled(Mutants::NONE));
    assert_eq!((r.schedules, r.failing), (60, 0));
    assert!(r.distinct > 10, "{}", r.distinct);
    let again = explore(&sampled(Mutants::NONE));
    assert_eq!((again.schedules, again.distinct), (r.schedules, r.distinct));
    let mutants = Mutants::NONE.with(Mutant::AlignedNoBlock);
    let s = sampled(mutants);
    let r = explore(&s);
    assert!(r.failing > 0);
    let found = r.found.last().unwrap();
    let replay = parse_str(&reproducer_text(&s, found, "tiny"), "sample.toml")
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = RunConfig {
        seed: 0,
        algorithm: Algorithm::Aligned,
        mutants,
        record_trace: false,
    };
    let e = execute(&replay, &cfg);
    assert_eq!(
        failed_checks(&e),
        found.checks.iter().map(String::as_str).collect::<Vec<_>>()
    );
}

/// A FLIP-27 source pushing splits, a 3 ms map chained to it, unaligned
/// checkpoints every 10 ms: small enough that explore's first 12 choices
/// are all mail orders, and slow enough that a split assignment waiting
/// one step (the most Flink's mailbox lets a mail wait) meets the next
/// trigger.
const PUSHED_SPLITS: &str = r#"
version = 1
name = "tiny-mail"
description = "FLIP-27 source pushing splits -> a 3 ms map, chained -> 2PC sink; unaligned every 10 ms"

[network]
buffer_records = 1
latency_min = "100us"
latency_max = "100us"

[[operators]]
id = "source"
kind = "source"
parallelism = 1
partitions = 4
records_per_partition = 6
keys = 4
cost = "50us"
split_assignment = "enumerator"
initial_splits = 1
discovery_interval = "10ms"
push_splits = true

[[operators]]
id = "slow"
kind = "map"
parallelism = 1
cost = "3ms"

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 1

[[edges]]
from = "source"
to = "slow"
partitioning = "forward"

[[edges]]
from = "slow"
to = "sink"
partitioning = "forward"

[checkpoint]
algorithm = "unaligned"
interval = "10ms"
rpc_latency = "1ms"
"#;

/// `--mail-orders` (`[replay] mail_orders`): before a step of a task with
/// mails queued, whether they run first or after the step is a choice.
/// On a tiny job pushing splits to a busy reader, the plain run and the
/// plain exploration (no choice at all) pass; with mail orders, under
/// Flink 2.3's urgent unaligned trigger, an assignment that waits one more
/// record is overtaken by the trigger and the split is lost
/// (consistent-cut), and the written schedule replays alone. Under 2.0's
/// FIFO trigger, or aligned, no mail order loses a split.
#[test]
fn mail_orders_are_choices_and_find_the_split_loss_on_2_3_only() {
    let data = ScenarioData::clone(&parse_str(PUSHED_SPLITS, "tiny-mail.toml").unwrap());
    let with = |version: &str, mail_orders: bool, algorithm: Algorithm| {
        let mut d = data.clone();
        d.replay.mail_orders = mail_orders;
        d.checkpoint.flink_version = FlinkVersion::ALL
            .into_iter()
            .find(|v| v.name() == version)
            .unwrap();
        ExploreSpec {
            scenario: crate::common::valid(&d),
            algorithm,
            ..spec(Mutants::NONE, 12, 100_000)
        }
    };
    let plain = execute(&crate::common::valid(&data), &cfg(Algorithm::Unaligned));
    assert!(plain.verdict.passed, "{:?}", failed_checks(&plain));
    let r = explore(&with("2.3", false, Algorithm::Unaligned));
    assert_eq!((r.schedules, r.failing), (1, 0), "{r:?}");

    let urgent = with("2.3", true, Algorithm::Unaligned);
    let r = explore(&urgent);
    assert!(
        r.complete && r.failing > 0 && r.failing < r.schedules,
        "{r:?}"
    );
    let found = &r.found[0];
    assert_eq!(found.checks, ["consistent-cut"], "{found:?}");
    assert!(found.message.contains("split"), "{}", found.message);
    let text = reproducer_text(&urgent, found, "t");
    assert!(text.contains("mail_orders = true"), "{text}");
    let replay = parse_str(&text, "f.toml").unwrap();
    let e = execute(&replay, &cfg(Algorithm::Unaligned));
    assert_eq!(failed_checks(&e), found.checks);

    for (version, algorithm) in [("2.0", Algorithm::Unaligned), ("2.3", Algorithm::Aligned)] {
        let r = explore(&with(version, true, algorithm));
        assert!(
            r.complete && r.failing == 0,
            "{version} {algorithm:?}: {r:?}"
        );
        assert!(r.distinct > 1, "{version}: mail orders made no difference");
    }
}

fn cfg(algorithm: Algorithm) -> RunConfig {
    RunConfig {
        seed: 0,
        algorithm,
        mutants: Mutants::NONE,
        record_trace: false,
    }
}
