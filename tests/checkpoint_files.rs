//! Checkpoint storage as files (`runtime::storage`) and the incremental
//! state backend: runs shared between checkpoints, the shared-state
//! registry, subsumption, syncs and storage crashes, restores read back
//! from the files; the checkpoint-files check and the mutants it (or the
//! state check) catches.

use crate::common::{
    assert_caught, check, check_alg, ckptsim, exactly_once, failed_checks, load, reach, seeds_or,
    stderr, sweep, valid,
};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{ScenarioData, StateBackend, StorageKind};

/// Scenario `name` under every exactly-once algorithm, with recoveries,
/// and at seed 0 every counter of `reached` above zero: the shared
/// sweep of a backend's scenario.
pub(crate) fn backend_keeps_exactly_once(name: &str, reached: &[&str]) {
    let s = load(name);
    let seeds = seeds_or(12);
    for alg in exactly_once() {
        let total = sweep(&s, &format!("scenarios/{name}.toml"), alg, 0..seeds);
        assert!(total.recoveries > 0, "{}: no recovery", alg.name());
    }
    let e = check(&s, 0, &[]);
    assert!(e.verdict.passed);
    for what in reached {
        assert!(reach(&e, "checkpoint-files", what) > 0, "{what}");
    }
}

/// The keyed shipped scenarios on memory storage, moved to filesystem
/// storage and `backend`: their state read back from files at every
/// restore, and the judge holds.
pub(crate) fn keyed_scenarios_pass_under(backend: StateBackend) {
    for name in ["wordcount", "upsert", "windows", "event-time-timers"] {
        let mut d = ScenarioData::clone(&load(name));
        d.checkpoint.storage = StorageKind::Filesystem;
        d.checkpoint.state_backend = backend;
        let s = valid(&d);
        for seed in 0..seeds_or(6) {
            let e = check(&s, seed, &[]);
            assert!(
                e.verdict.passed,
                "{name} seed {seed}: {:?}",
                e.verdict.violations().next()
            );
        }
    }
}

/// A backend other than `hashmap` on memory storage is refused where it
/// is written, exit 2, naming the backend (`scenario`'s storage set to
/// memory in a copy).
pub(crate) fn refused_on_memory_storage(scenario: &str, says: &str) {
    let dir = crate::flink::tempdir(&format!("{scenario}-memory"));
    let path = dir.join("backend.toml");
    let text = std::fs::read_to_string(crate::common::scenario_path(scenario)).unwrap();
    std::fs::write(
        &path,
        text.replace("storage = \"filesystem\"", "storage = \"memory\""),
    )
    .unwrap();
    let o = ckptsim(&["run", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(says), "{err}");
    assert!(err.contains("backend.toml:"), "{err}");
}

/// The incremental scenario shares runs, compacts, deletes what nothing
/// retained needs, and restores state put together from runs, under every
/// exactly-once algorithm.
#[test]
fn incremental_snapshots_keep_exactly_once_under_every_algorithm() {
    backend_keeps_exactly_once(
        "incremental",
        &[
            "runs reused",
            "runs deleted",
            "compactions",
            "restores from files",
            "storage crashes",
        ],
    );
}

/// A keyed scenario on memory storage, moved to the incremental backend:
/// its state is read back from runs at every restore, and the judge holds.
#[test]
fn every_keyed_shipped_scenario_runs_under_the_incremental_backend() {
    keyed_scenarios_pass_under(StateBackend::Incremental);
}

/// A storage crash loses what is not synced: a checkpoint that wrote such
/// a file fails, and no completed checkpoint ever refers to a lost file.
#[test]
fn a_storage_crash_loses_only_unsynced_files_of_pending_checkpoints() {
    let mut d = ScenarioData::clone(&load("incremental"));
    d.checkpoint.storage_sync = ckptsim::engine::SimDuration::from_millis(15);
    let s = valid(&d);
    let mut lost = 0;
    for seed in 0..seeds_or(10) {
        let e = check(&s, seed, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        lost += reach(&e, "checkpoint-files", "files lost");
    }
    assert!(lost > 0, "no storage crash found an unsynced file");
}

#[test]
fn an_ack_before_the_files_are_synced_is_caught() {
    assert_caught(
        &load("incremental"),
        Mutant::AckBeforeSync,
        20,
        "checkpoint-files",
    );
}

#[test]
fn a_registry_that_keeps_reused_runs_last_use_is_caught() {
    let s = load("incremental");
    assert_caught(
        &s,
        Mutant::RegistryIgnoresReusedRuns,
        20,
        "checkpoint-files",
    );
}

#[test]
fn files_of_aborted_checkpoints_left_behind_are_caught() {
    let s = load("incremental");
    assert_caught(
        &s,
        Mutant::AbortedCheckpointFilesKept,
        20,
        "checkpoint-files",
    );
}

#[test]
fn a_compaction_that_drops_key_groups_is_caught_by_the_state_it_restores() {
    let s = load("incremental");
    assert_caught(&s, Mutant::CompactionDropsOldestRun, 50, "state");
}

#[test]
fn a_registry_not_rebuilt_after_a_coordinator_failover_is_caught() {
    let s = load("incremental");
    assert_caught(&s, Mutant::RegistryNotRebuilt, 20, "liveness");
}

/// A restore that needs a file that is gone fails the job, and the judge
/// names the file.
#[test]
fn a_restore_that_needs_a_deleted_run_is_named() {
    let s = load("incremental");
    let named = (0..50).find_map(|seed| {
        let e = check(&s, seed, &[Mutant::RegistryIgnoresReusedRuns]);
        let found = e
            .verdict
            .violations()
            .find(|v| v.message.contains("the restore of checkpoint"))
            .map(|v| v.message.clone());
        found
    });
    let message = named.expect("a restore needed a deleted run");
    assert!(message.contains("shared run"), "{message}");
    assert!(message.contains("which was deleted"), "{message}");
}

/// Memory storage writes no files: the check reaches nothing and passes.
#[test]
fn memory_storage_writes_no_files() {
    let e = check_alg(
        &load("wordcount"),
        0,
        ckptsim::scenario::Algorithm::Aligned,
        &[],
    );
    assert!(e.verdict.passed);
    assert_eq!(reach(&e, "checkpoint-files", "files written"), 0);
    assert!(!failed_checks(&e).contains(&"checkpoint-files"));
}

/// An incremental backend on memory storage is refused where it is
/// written, exit 2.
#[test]
fn an_incremental_backend_needs_filesystem_storage() {
    refused_on_memory_storage("incremental", "state_backend");
}
