//! Sink V2 (`scenarios/sink-v2.toml`): a writer hands each checkpoint's
//! transaction to a committer as a committable before the barrier, the
//! committer commits those of completed checkpoints: exactly-once under
//! every exactly-once algorithm with crashes and a coordinator crash,
//! chained or not, with a global committer, and through a savepoint at
//! another parallelism. The three ways Flink broke it are caught, and the
//! sink topology's rules are refused when broken.

use crate::common::{exactly_once, load, scenario_path, sweep};
use crate::savepoints::{failures, restore_and_finish, take_savepoint, with_parallelism};
use ckptsim::engine::SimTime;
use ckptsim::mutant::Mutant;
use ckptsim::runtime::RunOutcome;
use ckptsim::scenario::{self, SavepointSpec};

/// Seeds per exactly-once algorithm (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    crate::common::seeds_or(100)
}

fn variant(edit: impl Fn(String) -> String) -> scenario::Scenario {
    let text = std::fs::read_to_string(scenario_path("sink-v2")).unwrap();
    scenario::parse_str(&edit(text), "sink-v2.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn sink_v2_is_exactly_once_with_crashes() {
    let sc = load("sink-v2");
    for a in exactly_once() {
        let c = sweep(&sc, "scenarios/sink-v2.toml", a, 0..seeds());
        assert!(c.crashes > 0 && c.coordinator_crashes > 0, "{}", a.name());
        assert!(c.recoveries_from_checkpoint > 0, "{}", a.name());
    }
}

#[test]
fn unchained_and_global_committers_are_exactly_once() {
    let unchained = variant(|t| {
        t.replace(
            "to = \"committer\"\npartitioning = \"forward\"",
            "to = \"committer\"\npartitioning = \"forward\"\nchain = false",
        )
    });
    assert_eq!(
        ckptsim::model::ExecGraph::build(&unchained, &ckptsim::model::JobGraph::build(&unchained))
            .tasks
            .len(),
        2 + 3 + 3
    );
    let global = variant(|t| {
        t.replace(
            "kind = \"sink-committer\"\nparallelism = 3",
            "kind = \"sink-committer\"\nparallelism = 1",
        )
        .replace(
            "to = \"committer\"\npartitioning = \"forward\"",
            "to = \"committer\"\npartitioning = \"rebalance\"",
        )
    });
    for (name, sc) in [("unchained", &unchained), ("global", &global)] {
        for a in exactly_once() {
            sweep(sc, name, a, 0..seeds() / 2);
        }
    }
}

#[test]
fn the_three_historical_bugs_are_caught() {
    let sc = load("sink-v2");
    for m in [
        Mutant::CommittableAfterBarrier,
        Mutant::WriterKeepsLastTransaction,
        Mutant::EoiCommittableConstant,
    ] {
        crate::common::assert_caught(&sc, m, 200, "exactly-once-output");
    }
}

#[test]
fn a_savepoint_carries_committables_to_another_parallelism() {
    let mut base = ckptsim::scenario::ScenarioData::clone(&load("sink-v2"));
    base.faults.coordinator = None; // a failover would fail the savepoint
    let sizes = [2, 4];
    for seed in 0..20u64 {
        let sp = SavepointSpec {
            at: SimTime((160 + (seed % 4) * 30) * 1_000_000),
            stop: seed % 2 == 0,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (_, image) = take_savepoint(&crate::common::valid(&base), seed, sp);
        let n = sizes[seed as usize % 2];
        let s2 = with_parallelism(
            &crate::common::valid(&base),
            &[("count", n), ("writer", n), ("committer", n)],
        );
        let mut s2 = s2;
        s2.savepoints.clear();
        let run = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(run.verdict.passed, "seed {seed}:\n{}", failures(&run));
        assert_eq!(run.output.outcome, RunOutcome::Finished, "seed {seed}");
    }
}

#[test]
fn the_sink_topology_rules_are_refused_when_broken() {
    let refused = |edit: &dyn Fn(String) -> String, what: &str| {
        let text = edit(std::fs::read_to_string(scenario_path("sink-v2")).unwrap());
        let err = scenario::parse_str(&text, "s.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains(what), "{what}: {err}");
    };
    // A writer without a committer.
    refused(
        &|t: String| {
            t.replace(
                "[[edges]]\nfrom = \"writer\"\nto = \"committer\"\npartitioning = \"forward\"\n",
                "",
            )
            .replace(
                "id = \"committer\"\nkind = \"sink-committer\"\nparallelism = 3\ncost = \"5us\"\n",
                "id = \"committer\"\nkind = \"map\"\nparallelism = 3\ncost = \"5us\"\n",
            ) + "\n[[edges]]\nfrom = \"count\"\nto = \"committer\"\npartitioning = \"forward\"\n"
        },
        "sink-writer `writer` has no sink-committer",
    );
    // A committer fed by something other than a writer.
    refused(
        &|t: String| {
            t.replace(
                "from = \"writer\"\nto = \"committer\"",
                "from = \"count\"\nto = \"committer\"",
            )
        },
        "committer `committer` reads from `count`, which is not a sink-writer",
    );
    // A committer of parallelism above 1 behind a non-forward edge.
    refused(
        &|t: String| {
            t.replace(
                "to = \"committer\"\npartitioning = \"forward\"",
                "to = \"committer\"\npartitioning = \"rebalance\"",
            )
        },
        "committer `committer` of parallelism above 1 reads a non-forward edge",
    );
    // A writer feeding anything but a committer.
    refused(
        &|t: String| {
            t + "\n[[operators]]\nid = \"more\"\nkind = \"map\"\nparallelism = 3\n\n[[edges]]\nfrom = \"writer\"\nto = \"more\"\npartitioning = \"forward\"\n"
        },
        "sink `writer` cannot have outputs",
    );
}

#[test]
fn a_stale_committable_refused_under_at_least_once_loses_nothing_and_passes() {
    // At-least-once checkpoints let the global committer snapshot a
    // committable sent after its writer's barrier; the restored writer
    // aborts that transaction and its records come again, so the refused
    // commit at the end is counted, not a violation.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/regressions/at-least-once-stale-committable.toml");
    let sc = ckptsim::scenario::load(&file).unwrap();
    let e = crate::common::check_alg(&sc, 131, ckptsim::protocol::Algorithm::AtLeastOnce, &[]);
    assert!(e.verdict.passed, "{:?}", crate::common::failed_checks(&e));
    let forgiven = "refused commits of replayed transactions";
    assert_eq!(crate::common::reach(&e, "protocol", forgiven), 1);
    assert_eq!(e.output.store.refused.len(), 1);
}
