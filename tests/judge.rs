//! The judge itself: every requested savepoint ends completed or failed with
//! a reason, and a run that passes says what it did not test (faults that
//! never took effect, mutants that never fired).

use crate::common::{check_alg, load, scenario_path};
use ckptsim::harness::execute;
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::runtime::{RunConfig, RunOutcome};
use ckptsim::scenario::{parse_str, Algorithm, Scenario};

fn variant(name: &str, edit: impl Fn(String) -> String) -> Scenario {
    let text = std::fs::read_to_string(scenario_path(name)).unwrap();
    parse_str(&edit(text), &format!("{name}-variant.toml")).unwrap()
}

fn kinds(e: &ckptsim::harness::Execution) -> Vec<&str> {
    e.output.warnings.iter().map(|w| w.kind.as_str()).collect()
}

/// Under every algorithm, `none` included, each savepoint request of
/// scenarios/savepoints.toml ends completed or failed with a reason; the
/// drained stop-with-savepoint completes and stops the job even without
/// checkpoints (the drain ends the input before its barrier completes).
#[test]
fn every_savepoint_request_completes_or_fails_with_a_reason() {
    let sc = load("savepoints");
    for alg in Algorithm::ALL {
        for seed in 0..5 {
            let e = check_alg(&sc, seed, alg, &[]);
            assert_eq!(e.output.savepoints.len(), 3, "{alg:?}");
            for r in &e.output.savepoints {
                match (r.completed, &r.failure) {
                    (Some(_), None) => {}
                    (None, Some(why)) => assert!(!why.is_empty(), "{alg:?}: {r:?}"),
                    _ => panic!("{alg:?} seed {seed}: unresolved {r:?}"),
                }
            }
        }
    }
    let e = check_alg(&sc, 1, Algorithm::None, &[]);
    let stop = &e.output.savepoints[2];
    assert!(stop.stop && stop.drain);
    assert!(stop.completed.is_some(), "{stop:?}");
    assert!(matches!(e.output.outcome, RunOutcome::Stopped(_)));
}

/// A savepoint requested after the job finished fails, and says so.
#[test]
fn a_savepoint_due_after_the_end_fails_with_its_reason() {
    let sc = variant("wordcount", |t| t + "\n[[savepoints]]\nat = \"100s\"\n");
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    let r = &e.output.savepoints[0];
    assert_eq!(r.completed, None);
    let why = r.failure.as_deref().unwrap();
    assert!(why.contains("before the request was due"), "{why}");
    assert!(kinds(&e).contains(&"savepoint"), "{:?}", e.output.warnings);
}

/// A planned crash after the job ended is a warning, not silence.
#[test]
fn a_crash_planned_after_the_end_is_reported() {
    let sc = variant("wordcount", |t| {
        t + "\n[[faults.crashes]]\nat = \"100s\"\ntask = \"count[1]\"\n"
    });
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    let w = e
        .output
        .warnings
        .iter()
        .find(|w| w.message.contains("count[1] planned at 100s"))
        .unwrap_or_else(|| panic!("{:?}", e.output.warnings));
    assert_eq!(w.kind, "crash");
    assert!(w.message.contains("never happened"), "{}", w.message);
}

/// A worker crash on a worker that runs nothing fails nothing over, and is
/// reported as having taken no effect.
#[test]
fn a_worker_crash_on_an_idle_worker_is_reported_and_fails_nothing() {
    // Four workers, one slot each, parallelism at most 3: worker 3 is idle.
    let sc = variant("wordcount", |t| {
        t + "\n[cluster]\nworkers = 4\nslots_per_worker = 1\n\n[[faults.worker_crashes]]\nat = \"50ms\"\nworker = 3\n"
    });
    let clean = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(clean.verdict.passed);
    let w = clean
        .output
        .warnings
        .iter()
        .find(|w| w.kind == "worker-crash")
        .unwrap_or_else(|| panic!("{:?}", clean.output.warnings));
    assert!(w.message.contains("no running subtask"), "{}", w.message);
    assert_eq!(clean.output.counters.worker_crashes, 0);
}

/// A mutant that cannot apply under the chosen algorithm says so; one that
/// fires does not.
#[test]
fn a_mutant_that_never_fires_is_reported() {
    let sc = load("backpressure");
    let run = |alg, m| {
        execute(
            &sc,
            &RunConfig {
                seed: 1,
                algorithm: alg,
                mutants: Mutants::NONE.with(m),
                record_trace: false,
            },
        )
    };
    let idle = run(Algorithm::Aligned, Mutant::UnalignedDropInflight);
    assert!(idle.verdict.passed);
    assert!(
        idle.output
            .warnings
            .iter()
            .any(|w| w.kind == "mutant" && w.message.contains("unaligned-drop-inflight")),
        "{:?}",
        idle.output.warnings
    );
    let live = run(Algorithm::Unaligned, Mutant::UnalignedDropInflight);
    assert!(!live.verdict.passed);
    assert!(
        !kinds(&live).contains(&"mutant"),
        "{:?}",
        live.output.warnings
    );
}

/// Every registered mutant fires on the first seed that kills it in the
/// kill matrix's scenarios (a kill without a firing would mean the hook
/// records the wrong place).
#[test]
fn every_mutant_fires_where_it_kills() {
    for info in ckptsim::mutant::MUTANTS {
        if info.caught_by == "panic" {
            continue; // its kill is a panic, caught by sweeps, not here
        }
        let &(name, alg) = info.applies.first().unwrap();
        let sc = load(name);
        let killed = (0..200).find_map(|seed| {
            let e = execute(
                &sc,
                &RunConfig {
                    seed,
                    algorithm: alg,
                    mutants: Mutants::NONE.with(info.mutant),
                    record_trace: false,
                },
            );
            (!e.verdict.passed).then_some(e)
        });
        let Some(e) = killed else { continue };
        assert!(
            !e.output
                .warnings
                .iter()
                .any(|w| w.kind == "mutant" && w.message.contains(info.name)),
            "{} killed a run but says it never took effect",
            info.name
        );
    }
}
