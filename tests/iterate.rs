//! Iterations: a job with a feedback edge (`scenarios/iterate.toml`,
//! connected components by min-label propagation). The algorithms that
//! checkpoint a cycle stay exactly-once and compute the components; those
//! that wait on every input for a barrier (the barrier tracker,
//! stop-the-world's drain markers) wait for one that only comes back after
//! their own snapshot, and fail as such (liveness). The feedback edge is
//! checked where it is written.

use crate::common::{check_alg, failed_checks, load, seeds_or, sweep};
use ckptsim::model::iterate::neighbours;
use ckptsim::model::Workload;
use ckptsim::scenario::Algorithm;
use std::collections::{BTreeMap, VecDeque};

/// The components the job must compute, without the simulator: every node
/// a seed (a source record's key) reaches along the neighbour rule gets the
/// smallest seed reaching it.
fn components(seed: u64) -> BTreeMap<u64, i64> {
    let sc = load("iterate");
    let w = Workload::generate(&sc, seed);
    let mut seeds: Vec<u64> = (0..w.partition_count() as u32)
        .flat_map(|p| w.partition(p).iter().map(|&(k, _)| k))
        .collect();
    seeds.sort_unstable();
    seeds.dedup();
    let mut label: BTreeMap<u64, i64> = BTreeMap::new();
    for &s in &seeds {
        // Smallest seeds first: a node keeps the first label that reaches it.
        let mut todo = VecDeque::from([s]);
        while let Some(n) = todo.pop_front() {
            if label.contains_key(&n) {
                continue;
            }
            label.insert(n, s as i64);
            todo.extend(neighbours(n, 2000, 2));
        }
    }
    label
}

/// Every algorithm that checkpoints a cycle (aligned aligns on the other
/// inputs and logs the feedback input until its barrier comes back, ABS's
/// cyclic variant; unaligned and Chandy–Lamport record the feedback
/// channel's records up to its barrier; aligned-timeout aligns that way
/// too; the uncoordinated families need no barrier) is exactly-once on the
/// loop with random crashes, and its final state is the components computed
/// here.
#[test]
fn a_loop_is_exactly_once_and_computes_the_components() {
    let sc = load("iterate");
    let supporting = [
        Algorithm::Aligned,
        Algorithm::Unaligned,
        Algorithm::ChandyLamport,
        Algorithm::AlignedTimeout,
        Algorithm::Uncoordinated,
        Algorithm::CicBcs,
        Algorithm::CicHmnr,
    ];
    for a in supporting {
        let c = sweep(&sc, "scenarios/iterate.toml", a, 0..seeds_or(30));
        assert!(c.loops_ended > 0 && c.recoveries > 0, "{}: {c:?}", a.name());
    }
    for seed in 0..3 {
        let e = check_alg(&sc, seed, Algorithm::Uncoordinated, &[]);
        let op = sc
            .operators
            .iter()
            .position(|o| o.id == "components")
            .unwrap();
        assert_eq!(
            e.output.keyed_state[&(op as u32)],
            components(seed),
            "seed {seed}"
        );
    }
}

/// The barrier tracker and stop-the-world's drain markers (and aligned
/// with the mutant `aligned-waits-on-feedback`) wait on the feedback input
/// for a barrier (or marker) that the task itself sends only after it: no
/// checkpoint completes, the job stalls or runs out of time, and liveness
/// says so. Aligned without the log of its feedback input (the mutant
/// `feedback-not-logged`, Flink's forced mode) loses the loop's records in
/// transit: the cut check sees them in no snapshot.
#[test]
fn aligning_on_the_feedback_edge_never_completes_a_checkpoint() {
    let sc = load("iterate");
    let waits = ckptsim::mutant::Mutant::AlignedWaitsOnFeedback;
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[waits]);
    assert!(
        failed_checks(&e).contains(&"liveness"),
        "{:?}",
        failed_checks(&e)
    );
    assert_eq!(e.output.counters.checkpoints_completed, 0);
    let unlogged = ckptsim::mutant::Mutant::FeedbackNotLogged;
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[unlogged]);
    assert!(
        failed_checks(&e).contains(&"consistent-cut"),
        "{:?}",
        failed_checks(&e)
    );
    for a in [Algorithm::AtLeastOnce, Algorithm::StopTheWorld] {
        let e = check_alg(&sc, 1, a, &[]);
        assert!(
            failed_checks(&e).contains(&"liveness"),
            "{}: {:?}",
            a.name(),
            failed_checks(&e)
        );
        assert_eq!(e.output.counters.checkpoints_completed, 0, "{}", a.name());
    }
}

/// On a cycle uncoordinated checkpoints can be useless (on a Z-cycle); the
/// communication-induced rules take forced checkpoints so that none is,
/// HMNR fewer than BCS; and BCS's missed forced checkpoint makes useless
/// ones, which its promise check reports.
#[test]
fn on_a_cycle_the_rules_prevent_useless_checkpoints() {
    let mut sc = ckptsim::scenario::ScenarioData::clone(&load("iterate"));
    sc.faults.random = None;
    let run = |a: Algorithm| {
        sweep(
            &crate::common::valid(&sc),
            "iterate without crashes",
            a,
            0..seeds_or(10),
        )
    };
    let (unc, bcs, hmnr) = (
        run(Algorithm::Uncoordinated),
        run(Algorithm::CicBcs),
        run(Algorithm::CicHmnr),
    );
    assert!(unc.useless_checkpoints > 0, "{unc:?}");
    assert_eq!((bcs.useless_checkpoints, hmnr.useless_checkpoints), (0, 0));
    assert!(hmnr.local_checkpoints_forced < bcs.local_checkpoints_forced);
    let m = ckptsim::mutant::Mutant::CicMissedForced;
    let e = check_alg(&crate::common::valid(&sc), 0, Algorithm::CicBcs, &[m]);
    assert!(
        failed_checks(&e).contains(&"protocol"),
        "{:?}",
        failed_checks(&e)
    );
    // HMNR that skips its first condition leaves useless checkpoints too.
    let useless = (0..10).any(|seed| {
        let e = check_alg(&crate::common::valid(&sc), seed, Algorithm::CicHmnr, &[m]);
        let found = e
            .verdict
            .violations()
            .any(|v| v.message.contains("useless checkpoint"));
        found
    });
    assert!(
        useless,
        "cic-hmnr with cic-missed-forced left no useless checkpoint"
    );
    let v = e
        .verdict
        .violations()
        .find(|v| v.check == "protocol")
        .unwrap();
    assert!(
        v.message.contains("useless") || v.message.contains("index"),
        "{}",
        v.message
    );
}

/// A feedback edge must close a cycle and be hash or rebalance; a cycle
/// without one is refused with the edge to mark.
#[test]
fn feedback_edges_are_checked_where_they_are_written() {
    let text = std::fs::read_to_string(crate::common::scenario_path("iterate")).unwrap();
    let bad = |from: &str, to: &str| {
        ckptsim::scenario::parse_str(&text.replace(from, to), "it.toml")
            .unwrap_err()
            .to_string()
    };
    let e = bad("feedback = true", "feedback = false");
    assert!(e.contains("cycle: components -> components"), "{e}");
    assert!(e.contains("feedback = true"), "{e}");
    let e = bad(
        "to = \"components\"\npartitioning = \"hash\"\nfeedback = true",
        "to = \"components\"\npartitioning = \"broadcast\"\nfeedback = true",
    );
    assert!(
        e.contains("a feedback edge is `hash` or `rebalance`, not `broadcast`"),
        "{e}"
    );
    let e = bad(
        "from = \"components\"\nto = \"sink\"\npartitioning = \"rebalance\"",
        "from = \"components\"\nto = \"sink\"\npartitioning = \"rebalance\"\nfeedback = true",
    );
    assert!(
        e.contains("feedback edge components -> sink closes no cycle"),
        "{e}"
    );
}

/// The loop's tasks finish while checkpoints overtake each other
/// (`scenarios/iterate-finishing.toml`): a trigger that reaches a task
/// before the abort of the checkpoint it subsumes makes the task abort the
/// older checkpoint and snapshot the newer one in one step of its thread,
/// and the task exits only after that step. Every seed finishes
/// exactly-once. A task exiting between the two (mutant
/// `exit-inside-barrier-step`) owes the coordinator an acknowledgement
/// that never comes: the finishing check names it.
#[test]
fn a_task_exits_only_after_the_step_that_took_a_newer_barrier() {
    let sc = load("iterate-finishing");
    let c = sweep(
        &sc,
        "scenarios/iterate-finishing.toml",
        Algorithm::Unaligned,
        0..seeds_or(60),
    );
    assert!(
        c.loops_ended > 0 && c.checkpoints_failed_task_finished > 0,
        "{c:?}"
    );
    let m = ckptsim::mutant::Mutant::ExitInsideBarrierStep;
    crate::common::assert_caught(&sc, m, 40, "finishing");
}
