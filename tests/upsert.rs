//! The upsert sink (`sink-upsert`, `scenarios/upsert.toml`): a crash makes
//! it repeat writes, and a row goes back to an older value during the
//! replay, but the finished table converges to the failure-free run's; the
//! run is effectively-once. A sink that applies a batch out of order per key
//! leaves a stale table and is caught.

use crate::common::{check, check_alg, failed_checks, load, scenario_path};
use ckptsim::harness::Execution;
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{self, Algorithm, Guarantee};

/// The sink's operator index in `scenarios/upsert.toml`.
const SINK: u32 = 3;

fn reach(e: &Execution, what: &str) -> u64 {
    e.verdict
        .checks
        .iter()
        .flat_map(|c| c.reach.iter())
        .find(|(name, _)| *name == what)
        .map_or_else(|| panic!("no counter {what}"), |&(_, n)| n)
}

#[test]
fn the_expected_guarantee_is_effectively_once_or_weaker() {
    let sc = load("upsert");
    assert_eq!(
        sc.expected_guarantee(Algorithm::Aligned),
        Guarantee::EffectivelyOnce
    );
    assert_eq!(
        sc.expected_guarantee(Algorithm::Unaligned),
        Guarantee::EffectivelyOnce
    );
    assert_eq!(
        sc.expected_guarantee(Algorithm::AtLeastOnce),
        Guarantee::AtLeastOnce
    );
}

#[test]
fn a_crash_repeats_writes_but_the_finished_table_converges() {
    let text = std::fs::read_to_string(scenario_path("upsert")).unwrap();
    let calm = scenario::parse_str(
        &text.replace("max_crashes = 2", "max_crashes = 0"),
        "upsert.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let sc = load("upsert");
    let seed = (0..50)
        .find(|&seed| {
            let e = check(&sc, seed, &[]);
            e.output.counters.recoveries > 0 && reach(&e, "upsert regressions") > 0
        })
        .expect("a seed within 50 recovers and replays upserts");
    let crashed = check(&sc, seed, &[]);
    assert!(crashed.verdict.passed, "seed {seed}");
    assert_eq!(crashed.verdict.guarantee, Guarantee::EffectivelyOnce);
    assert!(reach(&crashed, "upsert writes repeated") > 0);
    assert_eq!(reach(&crashed, "upsert writes missing"), 0);
    assert_eq!(reach(&crashed, "upsert keys compared"), 50);

    let clean = check(&calm, seed, &[]);
    assert!(clean.verdict.passed);
    assert_eq!(clean.output.counters.recoveries, 0);
    assert_eq!(clean.verdict.guarantee, Guarantee::ExactlyOnce);
    assert_eq!(reach(&clean, "upsert writes repeated"), 0);
    // More writes, the same table: every key holds its final count.
    assert!(crashed.output.store.committed().len() > clean.output.store.committed().len());
    let table = crashed.output.store.upsert_table(SINK);
    assert_eq!(table, clean.output.store.upsert_table(SINK));
    assert_eq!(table.values().map(|&v| v as u64).sum::<u64>(), 8000);
}

#[test]
fn effectively_once_algorithms_keep_it_over_seeds() {
    let sc = load("upsert");
    for alg in [
        Algorithm::Aligned,
        Algorithm::Unaligned,
        Algorithm::AlignedTimeout,
    ] {
        let mut repeated = 0;
        for seed in 0..20 {
            let e = check_alg(&sc, seed, alg, &[]);
            assert!(e.verdict.passed, "{} seed {seed}", alg.name());
            assert!(e.verdict.guarantee.satisfies(Guarantee::EffectivelyOnce));
            repeated += reach(&e, "upsert writes repeated");
        }
        assert!(repeated > 0, "{}: no replay reached the sink", alg.name());
    }
}

#[test]
fn at_least_once_checkpoints_promise_only_at_least_once() {
    // Without alignment the count's state can hold a record twice: the
    // value written is then wrong, and no upsert repairs it.
    let sc = load("upsert");
    for seed in 0..20 {
        let e = check_alg(&sc, seed, Algorithm::AtLeastOnce, &[]);
        assert!(e.verdict.passed, "seed {seed}");
        assert_eq!(e.verdict.expected, Guarantee::AtLeastOnce);
        assert!(e.verdict.guarantee.satisfies(Guarantee::AtLeastOnce));
    }
}

#[test]
fn a_batch_written_out_of_order_leaves_a_stale_table() {
    let sc = load("upsert");
    let seed = (0..20)
        .find(|&seed| {
            !check(&sc, seed, &[Mutant::UpsertBatchReordered])
                .verdict
                .passed
        })
        .expect("upsert-batch-reordered survived 20 seeds");
    let e = check(&sc, seed, &[Mutant::UpsertBatchReordered]);
    assert_eq!(failed_checks(&e), vec!["exactly-once-output"]);
    // Every write was made once or more; some values are stale.
    assert_eq!(e.verdict.guarantee, Guarantee::AtLeastOnce);
    let message = &e.verdict.violations().next().unwrap().message;
    assert!(
        message.contains("the finished table of upsert sink `sink` differs"),
        "{message}"
    );
    assert!(check(&sc, seed, &[]).verdict.passed);
}

/// A keyed sum of running sums: its final value per key depends on the
/// order the first sum read its input. A run restored from a savepoint
/// leaves the oracle without the run's schedule, so the finished table is
/// compared by keys only there; comparing values was a false alarm (found
/// by the property tests once they generated upsert sinks).
#[test]
fn an_order_dependent_table_is_judged_by_keys_without_the_schedule() {
    let text = std::fs::read_to_string(scenario_path("upsert")).unwrap();
    let text = text
        .replace("kind = \"keyed-count\"", "kind = \"keyed-sum\"")
        .replace("keys = 50", "keys = 50\nvalue_max = 50")
        .replace("mul = 3", "mul = 3\nadd = 1")
        .replace(
            "[[edges]]\nfrom = \"count\"\nto = \"sink\"",
            "[[operators]]\nid = \"total\"\nkind = \"keyed-sum\"\nparallelism = 2\n\n\
             [[edges]]\nfrom = \"count\"\nto = \"total\"\npartitioning = \"hash\"\n\n\
             [[edges]]\nfrom = \"total\"\nto = \"sink\"",
        );
    restored_tables_are_judged_by_keys(&text, &["count", "total", "sink"]);
}

/// Two aggregates writing one upsert table (one counts every record twice):
/// a key's last row is whichever aggregate wrote last, an order only the
/// run's schedule knows. Restored from a savepoint (no schedule), the table
/// is judged by keys, not by values (a false alarm the generator found).
#[test]
fn two_aggregates_into_one_table_are_judged_by_keys_without_the_schedule() {
    let text = std::fs::read_to_string(scenario_path("upsert")).unwrap();
    let text = text.replace(
        "[[edges]]\nfrom = \"count\"\nto = \"sink\"",
        "[[operators]]\nid = \"twice\"\nkind = \"flat-map\"\nparallelism = 2\ncopies = 2\n\n\
         [[operators]]\nid = \"count2\"\nkind = \"keyed-count\"\nparallelism = 2\n\n\
         [[edges]]\nfrom = \"map\"\nto = \"twice\"\npartitioning = \"rebalance\"\n\n\
         [[edges]]\nfrom = \"twice\"\nto = \"count2\"\npartitioning = \"hash\"\n\n\
         [[edges]]\nfrom = \"count2\"\nto = \"sink\"\npartitioning = \"hash\"\n\n\
         [[edges]]\nfrom = \"count\"\nto = \"sink\"",
    );
    restored_tables_are_judged_by_keys(&text, &["count", "count2", "sink"]);
}

/// `text` stopped with a savepoint at 300 ms and restored with `ops` at
/// parallelism 3, over 10 seeds: every restored run passes, and some
/// compare their upsert table by keys.
fn restored_tables_are_judged_by_keys(text: &str, ops: &[&str]) {
    use crate::savepoints::{failures, restore_and_finish, take_savepoint, with_parallelism};
    use ckptsim::engine::SimTime;
    use ckptsim::scenario::SavepointSpec;
    let base = scenario::parse_str(text, "variant.toml").unwrap_or_else(|e| panic!("{e}"));
    let three: Vec<(&str, u32)> = ops.iter().map(|&op| (op, 3)).collect();
    let mut judged_by_keys = 0;
    for seed in 0..10u64 {
        let sp = SavepointSpec {
            at: SimTime(300_000_000),
            stop: true,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (_, image) = take_savepoint(&base, seed, sp);
        let s2 = with_parallelism(&base, &three);
        let run = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(run.verdict.passed, "seed {seed}:\n{}", failures(&run));
        judged_by_keys += u64::from(reach(&run, "upsert keys compared") > 0);
    }
    assert!(judged_by_keys > 0);
}
