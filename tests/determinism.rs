//! Determinism is the product: the same scenario, seed and algorithm give the
//! same fingerprint, event count and output on every run; different seeds
//! give different runs.

use crate::common::{check, load};

#[test]
fn same_seed_same_fingerprint() {
    for name in ["wordcount", "backpressure", "alignment-crash", "bench"] {
        let sc = load(name);
        for seed in [0, 7, 123456789] {
            let a = check(&sc, seed, &[]);
            let b = check(&sc, seed, &[]);
            assert_eq!(
                a.output.fingerprint, b.output.fingerprint,
                "{name} seed {seed}"
            );
            assert_eq!(a.output.events, b.output.events);
            assert_eq!(a.output.store.committed(), b.output.store.committed());
        }
    }
}

#[test]
fn different_seeds_differ() {
    let sc = load("wordcount");
    let prints: std::collections::BTreeSet<String> = (0..20)
        .map(|s| check(&sc, s, &[]).output.fingerprint)
        .collect();
    assert_eq!(prints.len(), 20, "20 seeds, 20 different runs");
}

/// The workload and the crash plan depend on the seed only: a different
/// network draw (another scenario latency) does not move them.
#[test]
fn input_and_faults_do_not_depend_on_other_streams() {
    let mut a = ckptsim::scenario::ScenarioData::clone(&load("wordcount"));
    let mut b = ckptsim::scenario::ScenarioData::clone(&a);
    a.network.latency_max = ckptsim::engine::SimDuration::from_micros(300);
    b.network.latency_max = ckptsim::engine::SimDuration::from_micros(900);
    let wa = ckptsim::model::Workload::generate(&crate::common::valid(&a), 5);
    let wb = ckptsim::model::Workload::generate(&crate::common::valid(&b), 5);
    for p in 0..wa.partition_count() as u32 {
        assert_eq!(wa.partition(p), wb.partition(p));
    }
    assert_eq!(
        ckptsim::fault::plan_crashes(&crate::common::valid(&a), 5),
        ckptsim::fault::plan_crashes(&crate::common::valid(&b), 5)
    );
}

/// Every algorithm replays bit for bit, and the algorithms differ from each
/// other on the same seed (same input and crash times, different runs).
#[test]
fn every_algorithm_is_deterministic() {
    use crate::common::check_alg;
    use ckptsim::scenario::Algorithm;
    let sc = load("backpressure");
    let mut prints = std::collections::BTreeSet::new();
    for a in Algorithm::all() {
        let x = check_alg(&sc, 4, a, &[]);
        let y = check_alg(&sc, 4, a, &[]);
        assert_eq!(x.output.fingerprint, y.output.fingerprint, "{a:?}");
        assert_eq!(x.output.store.committed(), y.output.store.committed());
        assert_eq!(x.output.crash_plan, y.output.crash_plan);
        prints.insert(x.output.fingerprint);
    }
    assert_eq!(prints.len(), Algorithm::all().count());
}
