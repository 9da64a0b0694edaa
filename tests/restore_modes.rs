//! Restore modes (`run --restore-mode`, FLIP-193): a job started from a
//! snapshot has its files in its checkpoint storage, owned by the user
//! (`no-claim`: never deleted, the first checkpoint is full) or by the job
//! (`claim`: built on, deleted once unused); judged by the checkpoint-files
//! check with every state backend, at a new parallelism.

use crate::common::{ckptsim, config, failed_checks, load, reach, seeds_or, stderr, stdout, valid};
use ckptsim::mutant::Mutant;
use ckptsim::rescale::RescaleFlow;
use ckptsim::scenario::{Partitioning, Scenario, ScenarioData, StateBackend};

/// The incremental scenario with `backend`, its keyed count free to
/// rescale alone (the edge to the sink no longer forward).
fn job(backend: StateBackend) -> Scenario {
    let mut d = ScenarioData::clone(&load("incremental"));
    d.checkpoint.state_backend = backend;
    for e in d
        .edges
        .iter_mut()
        .filter(|e| e.partitioning == Partitioning::Forward)
    {
        e.partitioning = Partitioning::Rebalance;
    }
    valid(&d)
}

/// Stopped with a savepoint and restored with the keyed count at a new
/// parallelism, in both modes and with every backend, the restored job
/// passes the judge; the snapshot's files are in its storage, and only
/// under `claim` does it delete any of them.
#[test]
fn restores_in_both_modes_at_new_parallelism_pass_with_every_backend() {
    for backend in [
        StateBackend::Hashmap,
        StateBackend::Incremental,
        StateBackend::Changelog,
    ] {
        let sc = job(backend);
        for claim in [false, true] {
            let flow = RescaleFlow {
                at_ms: 300,
                operator: "count",
                parallelism: 4,
                claim,
                retained: false,
            };
            let mut restored = 0;
            for seed in 0..seeds_or(4) {
                let Some(e) = flow.execute(&sc, &config(&sc, seed, &[])) else {
                    continue;
                };
                assert!(
                    e.verdict.passed,
                    "{} claim={claim} seed {seed}: {:?} {:?}",
                    backend.name(),
                    failed_checks(&e),
                    e.verdict.violations().next()
                );
                restored += reach(&e, "checkpoint-files", "files of a restored snapshot");
            }
            assert!(
                restored > 0,
                "{} claim={claim}: nothing restored",
                backend.name()
            );
        }
    }
}

/// Mutant `m`, judged through its flow (a stop-with-savepoint and a
/// restore) on shipped scenario `name`, fails checkpoint-files within
/// `seeds` seeds.
pub(crate) fn caught_through_its_flow(name: &str, m: Mutant, seeds: u64) {
    let sc = load(name);
    let flow = ckptsim::rescale::flow_of(m).expect("a restore flow");
    let failed = (0..seeds)
        .find_map(|seed| {
            let e = flow.execute(&sc, &config(&sc, seed, &[m]))?;
            (!e.verdict.passed).then(|| failed_checks(&e))
        })
        .unwrap_or_else(|| panic!("{} survived {seeds} seeds", m.info().name));
    assert!(failed.contains(&"checkpoint-files"), "{failed:?}");
}

/// `no-claim`: a first checkpoint that builds on the restored files
/// refers to files the job does not own.
#[test]
fn a_no_claim_restore_that_reuses_the_snapshot_files_is_caught() {
    caught_through_its_flow("incremental", Mutant::NoClaimReusesRestoredFiles, 20);
}

/// `claim`: restored files the job owns and no longer uses must go.
#[test]
fn a_claim_restore_that_keeps_the_snapshot_files_is_caught() {
    caught_through_its_flow("incremental", Mutant::ClaimKeepsRestoredFiles, 20);
}

/// From the command line: `--restore-mode claim` is taken, printed in the
/// replay line of a failing run, and a mode that does not exist is a usage
/// error.
#[test]
fn the_restore_mode_is_a_flag_that_replays_as_printed() {
    let dir = crate::flink::tempdir("restore-mode");
    let sp = dir.join("sp");
    let sp = sp.to_str().unwrap();
    let o = ckptsim(&[
        "savepoint",
        "scenarios/incremental.toml",
        "--at",
        "300ms",
        "--stop",
        "--out",
        sp,
        "--seed",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = |mode: &str, mutant: &[&str]| {
        let mut a = vec![
            "run",
            "scenarios/incremental.toml",
            "--from-savepoint",
            sp,
            "--restore-mode",
            mode,
            "--parallelism",
            "source=3",
            "--seed",
            "1",
        ];
        a.extend_from_slice(mutant);
        ckptsim(&a)
    };
    assert_eq!(run("claim", &[]).status.code(), Some(0));
    let o = run("claim", &["--mutant", "claim-keeps-restored-files"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let replay = text
        .lines()
        .find(|l| l.starts_with("replay"))
        .expect("a replay line");
    assert!(replay.contains("--restore-mode claim"), "{replay}");
    let o = run("own-it", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("claim or no-claim"), "{}", stderr(&o));
}
