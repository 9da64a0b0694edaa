//! Operator chains (`scenarios/chains.toml`): operators joined by a forward
//! edge of equal parallelism run as one task, by Flink's rule; the chained
//! job commits what the unchained one does; a crash of any chained operator
//! restarts its whole task; every chained operator is notified (a chained
//! 2PC sink commits), and the mutant that notifies only the head is caught;
//! a fault that needs a channel is refused on a chained edge.

use crate::common::{check, check_alg, exactly_once, failed_checks, load, sweep};
use ckptsim::model::{ExecGraph, JobGraph};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{self, Chaining, Scenario};
use std::collections::BTreeMap;

fn exec(sc: &Scenario) -> ExecGraph {
    ExecGraph::build(sc, &JobGraph::build(sc))
}

fn task_names(sc: &Scenario) -> Vec<String> {
    exec(sc).tasks.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn forward_edges_of_equal_parallelism_chain() {
    let sc = load("chains");
    let g = exec(&sc);
    assert_eq!(
        task_names(&sc),
        [
            "source->map->filter->audit[0]",
            "source->map->filter->audit[1]",
            "count->sink[0]",
            "count->sink[1]",
            "count->sink[2]",
        ]
    );
    // `map` forks inside its task: filter and audit are both fed by calls.
    assert_eq!(g.tasks[0].chained, [vec![1], vec![2, 3], vec![], vec![]]);
    // Only the hash edge is a channel: 2 × 3 of them.
    assert_eq!(g.channels.len(), 6);
    assert!(g
        .channels
        .iter()
        .all(|c| c.from_op.0 == 2 && c.to_op.0 == 4));
    assert_eq!(g.chained_tasks(), 5);
    assert_eq!(g.instances(), 2 * 4 + 3 * 2);
}

#[test]
fn chaining_can_be_switched_off_by_job_operator_or_edge() {
    let sc = load("chains");
    let mut off = ckptsim::scenario::ScenarioData::clone(&sc);
    off.operator_chaining = false;
    assert_eq!(
        exec(&crate::common::valid(&off)).tasks.len(),
        2 + 2 + 2 + 2 + 3 + 3
    );
    // `head` starts a chain of its own; what follows it may join it.
    let mut head = ckptsim::scenario::ScenarioData::clone(&sc);
    head.operators[2].chaining = Chaining::Head; // filter
    assert_eq!(
        task_names(&crate::common::valid(&head))[..4],
        [
            "source->map->audit[0]",
            "source->map->audit[1]",
            "filter[0]",
            "filter[1]"
        ]
    );
    // `never` neither joins nor is joined: source, map, filter, audit alone.
    let mut never = ckptsim::scenario::ScenarioData::clone(&sc);
    never.operators[1].chaining = Chaining::Never; // map
    assert_eq!(
        exec(&crate::common::valid(&never)).tasks.len(),
        2 + 2 + 2 + 2 + 3
    );
    // One edge: `chain = false`.
    let mut edge = ckptsim::scenario::ScenarioData::clone(&sc);
    edge.edges[4].chain = false; // count -> sink
    assert_eq!(exec(&crate::common::valid(&edge)).tasks.len(), 2 + 3 + 3);
    // A forward edge between different parallelisms is no chain (nor valid).
    let mut wide = ckptsim::scenario::ScenarioData::clone(&sc);
    wide.operators[5].parallelism = 2;
    assert!(!wide.chained_edges()[4]);
}

/// Committed output as a multiset of (sink, key, value).
fn committed(e: &ckptsim::harness::Execution) -> BTreeMap<(u32, u64, i64), u32> {
    let mut out = BTreeMap::new();
    for r in e.output.store.committed().iter() {
        *out.entry((r.sink, r.key, r.value)).or_insert(0) += 1;
    }
    out
}

#[test]
fn a_chained_job_commits_what_the_unchained_one_does() {
    let mut sc = ckptsim::scenario::ScenarioData::clone(&load("chains"));
    sc.faults.random = None;
    let mut off = ckptsim::scenario::ScenarioData::clone(&sc);
    off.operator_chaining = false;
    for seed in 0..5 {
        let (a, b) = (
            check(&crate::common::valid(&sc), seed, &[]),
            check(&crate::common::valid(&off), seed, &[]),
        );
        assert!(a.verdict.passed && b.verdict.passed, "seed {seed}");
        assert_eq!(committed(&a), committed(&b), "seed {seed}");
        assert_ne!(a.output.fingerprint, b.output.fingerprint);
        // Fewer tasks: fewer snapshots and acks, no channel behind a chain.
        assert!(a.output.counters.snapshots < b.output.counters.snapshots);
    }
}

#[test]
fn a_crash_of_a_chained_operator_restarts_its_whole_task() {
    let text = std::fs::read_to_string(crate::common::scenario_path("chains")).unwrap();
    let text = text.replace(
        "[faults.random]",
        "[[faults.crashes]]\nat = \"300ms\"\ntask = \"filter[1]\"\n\n[faults.random]",
    );
    let text = text.replace("max_crashes = 3", "max_crashes = 0");
    let sc = scenario::parse_str(&text, "chains.toml").unwrap_or_else(|e| panic!("{e}"));
    for a in exactly_once() {
        let e = check_alg(&sc, 1, a, &[]);
        assert!(e.verdict.passed, "{}: {:?}", a.name(), failed_checks(&e));
        assert_eq!(e.output.counters.crashes, 1);
        assert_eq!(e.output.counters.tasks_restarted, 5, "{}", a.name());
        assert!(
            e.output.failovers[0]
                .1
                .contains("task source->map->filter->audit[1] failed"),
            "{:?}",
            e.output.failovers
        );
    }
}

#[test]
fn every_chained_operator_is_notified_and_the_head_only_mutant_is_caught() {
    let sc = load("chains");
    let e = check(&sc, 1, &[]);
    assert!(e.verdict.passed);
    // Both chained 2PC sinks committed everything.
    let sinks: std::collections::BTreeSet<u32> =
        e.output.store.committed().iter().map(|r| r.sink).collect();
    assert_eq!(sinks.into_iter().collect::<Vec<_>>(), [3, 5]);
    let bad = check(&sc, 1, &[Mutant::ChainNotifiesHeadOnly]);
    assert!(!bad.verdict.passed);
    assert!(failed_checks(&bad).contains(&"exactly-once-output"));
}

#[test]
fn a_latency_spike_needs_a_channel() {
    let text = std::fs::read_to_string(crate::common::scenario_path("chains")).unwrap();
    let spike = |edge: &str| {
        format!("{text}\n[[faults.latency_spikes]]\nfrom = \"0ms\"\nuntil = \"10ms\"\nextra = \"1ms\"\nedge = \"{edge}\"\n")
    };
    assert!(scenario::parse_str(&spike("filter->count"), "s.toml").is_ok());
    let err = scenario::parse_str(&spike("map->filter"), "s.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("edge map -> filter is chained") && err.contains("chain = false"),
        "{err}"
    );
    let err = scenario::parse_str(&spike("source->count"), "s.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("the job has no edge source -> count"), "{err}");
}

/// Seeds per exactly-once algorithm (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    crate::common::seeds_or(100)
}

#[test]
fn chains_are_exactly_once_with_crashes() {
    let sc = load("chains");
    for a in exactly_once() {
        let c = sweep(&sc, "scenarios/chains.toml", a, 0..seeds());
        assert!(
            c.crashes > 0 && c.recoveries_from_checkpoint > 0,
            "{}",
            a.name()
        );
    }
}
