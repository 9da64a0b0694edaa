//! The changelog state backend (`runtime::storage`'s changelog, FLIP-158):
//! a log of state changes uploaded as segments shared between checkpoints,
//! periodic materialization through the task's mailbox, restores that
//! replay the tail; the checkpoint-files check's rule that materialization
//! keeps happening, and the mutants it catches.

use crate::checkpoint_files::{
    backend_keeps_exactly_once, keyed_scenarios_pass_under, refused_on_memory_storage,
};
use crate::common::{assert_caught, check, ckptsim, load, reach, seeds_or, stderr, stdout, valid};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{ScenarioData, StateBackend};

/// The changelog scenario uploads segments, materializes, refers to both
/// again and restores from them, under every exactly-once algorithm.
#[test]
fn changelog_snapshots_keep_exactly_once_under_every_algorithm() {
    backend_keeps_exactly_once(
        "changelog",
        &[
            "changelog segments written",
            "changelog segments reused",
            "materializations done",
            "restores from files",
        ],
    );
}

/// Keyed scenarios on memory storage, moved to the changelog backend:
/// state read back from materializations and replayed tails at every
/// restore, and the judge holds.
#[test]
fn every_keyed_shipped_scenario_runs_under_the_changelog_backend() {
    keyed_scenarios_pass_under(StateBackend::Changelog);
}

/// FLINK-40302: a native savepoint that takes a materialization id stops
/// materialization for good; the judge names the task and the tail.
#[test]
fn a_native_savepoint_that_stops_materialization_is_caught() {
    let s = load("changelog");
    assert_caught(
        &s,
        Mutant::NativeSavepointBlocksMaterialization,
        20,
        "checkpoint-files",
    );
    let e = check(&s, 0, &[Mutant::NativeSavepointBlocksMaterialization]);
    let v = e
        .verdict
        .violations()
        .find(|v| v.message.contains("materialization of task"))
        .expect("the stopped materialization is named");
    assert!(v.message.contains("grows without bound"), "{}", v.message);
    // A canonical savepoint takes no id: the mutant does not fire.
    let mut d = ScenarioData::clone(&s);
    d.savepoints[0].format = ckptsim::scenario::SavepointFormat::Canonical;
    let e = check(
        &valid(&d),
        0,
        &[Mutant::NativeSavepointBlocksMaterialization],
    );
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
}

/// Truncation on materialization alone deletes segments retained
/// checkpoints still refer to.
#[test]
fn a_log_truncated_before_its_checkpoints_are_subsumed_is_caught() {
    assert_caught(
        &load("changelog"),
        Mutant::ChangelogTruncatedBeforeSubsumed,
        20,
        "checkpoint-files",
    );
}

/// A materialization the storage loses before its sync fails, and the
/// task materializes again: the judge holds.
#[test]
fn a_lost_materialization_fails_and_the_next_one_follows() {
    let mut d = ScenarioData::clone(&load("changelog"));
    d.checkpoint.storage_sync = ckptsim::engine::SimDuration::from_millis(10);
    let s = valid(&d);
    let mut failed = 0;
    for seed in 0..seeds_or(20) {
        let e = check(&s, seed, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        failed += reach(&e, "checkpoint-files", "materializations failed");
    }
    assert!(failed > 0, "no storage crash lost a materialization");
}

/// `ckptsim savepoint --format native` takes a native savepoint; a failing
/// run prints a replay line that takes it native again.
#[test]
fn a_native_savepoint_from_the_command_line_replays_as_printed() {
    let dir = crate::flink::tempdir("native-savepoint");
    let args = |out: &str, format: &str, mutant: bool| {
        let mut a = vec![
            "savepoint".to_string(),
            "scenarios/changelog.toml".into(),
            "--at".into(),
            "100ms".into(),
            "--out".into(),
            dir.join(out).display().to_string(),
            "--format".into(),
            format.into(),
        ];
        if mutant {
            a.extend(["--mutant".to_string(), "ack-before-sync".into()]);
        }
        a
    };
    let run = |a: Vec<String>| ckptsim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(args("ok", "native", false));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_dir(dir.join("ok")).unwrap().count();
    assert!(written > 0, "the savepoint directory is empty");
    let o = run(args("bad", "native", true));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = format!("{}{}", stdout(&o), stderr(&o));
    let replay = text
        .lines()
        .find(|l| l.starts_with("replay"))
        .expect("a replay line");
    assert!(replay.contains("--format native"), "{replay}");
    assert!(replay.contains("--mutant ack-before-sync"), "{replay}");
    // As printed, from a shell that finds `ckptsim`: into a fresh
    // directory (the printed `--out` exists now), failing the same way.
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_ckptsim"));
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(replay.trim_start_matches("replay").trim())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    let o = run(args("x", "nope", false));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("canonical or native"), "{}", stderr(&o));
}

/// A changelog backend on memory storage is refused where it is written,
/// exit 2.
#[test]
fn a_changelog_backend_needs_filesystem_storage() {
    refused_on_memory_storage("changelog", "changelog state backend");
}

/// A restore from files keeps the task's thread busy for what it reads and
/// replays (`World::restore_time`): every byte the restored snapshot
/// refers to and, with the changelog, each change of its tail; while a
/// task restores, the coordinator triggers nothing (Flink triggers only
/// when every task is `RUNNING`). Memory storage restores at once.
#[test]
fn a_restore_from_files_takes_the_time_of_what_it_reads_and_replays() {
    let base = load("state-backends");
    let run = |backend: StateBackend| {
        let mut d = ScenarioData::clone(&base);
        d.checkpoint.state_backend = backend;
        let e = check(&valid(&d), 0, &[]);
        assert!(e.verdict.passed, "{backend:?}: {:?}", e.verdict);
        e
    };
    let latency = base.checkpoint.storage_latency.0;
    let mut longest = Vec::new();
    for backend in [StateBackend::Hashmap, StateBackend::Changelog] {
        let e = run(backend);
        let o = &e.output;
        assert_eq!(
            o.restore_ns.len(),
            2,
            "{backend:?}: two crashes, two restores"
        );
        assert!(o.restore_ns.iter().all(|&ns| ns > latency), "{backend:?}");
        assert!(o.counters.restore_bytes_read > 0, "{backend:?}");
        assert_eq!(
            o.counters.changes_replayed > 0,
            backend == StateBackend::Changelog,
            "{backend:?}"
        );
        for (r, ns) in o.restarts.iter().zip(&o.restore_ns) {
            let restoring = r.time_ns..r.time_ns + ns;
            let triggered: Vec<u64> = o
                .checkpoint_stats
                .iter()
                .map(|s| s.trigger_ns)
                .filter(|t| restoring.contains(t))
                .collect();
            assert!(
                triggered.is_empty(),
                "{backend:?}: triggered at {triggered:?} while restoring {restoring:?}"
            );
        }
        longest.push(*o.restore_ns.iter().max().unwrap());
    }
    assert!(
        longest[1] > longest[0],
        "the changelog replays its tail: {longest:?}"
    );
    let mut d = ScenarioData::clone(&base);
    d.checkpoint.storage = ckptsim::scenario::StorageKind::Memory;
    d.checkpoint.state_backend = StateBackend::Hashmap;
    d.checkpoint.storage_sync = ckptsim::engine::SimDuration::ZERO;
    d.checkpoint.max_state_size = u64::MAX;
    let e = check(&valid(&d), 0, &[]);
    assert!(e.output.restore_ns.is_empty());
    assert_eq!(e.output.counters.restore_bytes_read, 0);
}
