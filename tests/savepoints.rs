//! Savepoints, retained checkpoints and rescaling: run → snapshot → restore
//! at a new parallelism → finish keeps exactly-once output and state
//! against the uninterrupted failure-free oracle; the refusals say exactly
//! what is wrong.

use crate::common::load;
use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::harness::{execute_job, Execution};
use ckptsim::model::store::TxnState;
use ckptsim::runtime::{JobOptions, RunConfig, RunOutcome, SnapshotKind};
use ckptsim::savepoint::{self, rescale, Image};
use ckptsim::scenario::{Algorithm, RandomCrashes, SavepointSpec, Scenario};
use std::sync::Arc;

fn cfg(s: &Scenario, seed: u64) -> RunConfig {
    RunConfig {
        seed,
        algorithm: s.checkpoint.algorithm,
        mutants: ckptsim::mutant::Mutants::NONE,
        record_trace: false,
    }
}

pub(crate) fn failures(e: &Execution) -> String {
    e.verdict
        .violations()
        .map(|v| format!("{}: {}", v.check, v.message))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn with_parallelism(
    s: &ckptsim::scenario::ScenarioData,
    p: &[(&str, u32)],
) -> ckptsim::scenario::ScenarioData {
    let mut s = s.clone();
    for (id, n) in p {
        let op = s.operators.iter_mut().find(|o| o.id == *id).expect(id);
        op.parallelism = *n;
    }
    s
}

fn crashes(s: &mut ckptsim::scenario::ScenarioData, window_end_ms: u64, max: u32) {
    s.faults.random = Some(RandomCrashes {
        mean_interval: SimDuration::from_millis(300),
        window_start: SimTime::ZERO,
        window_end: SimTime(window_end_ms * 1_000_000),
        max_crashes: max,
        operators: Vec::new(),
        workers: Vec::new(),
    });
}

/// Run 1 up to its savepoint (taken at `at`, crashes only before it),
/// returning the run and the image of the savepoint it took.
pub(crate) fn take_savepoint(s: &Scenario, seed: u64, sp: SavepointSpec) -> (Execution, Image) {
    let mut s1 = ckptsim::scenario::ScenarioData::clone(s);
    // Crashes only before the savepoint, detected before it too (a
    // failover while it is pending fails it, as in Flink).
    crashes(&mut s1, sp.at.0 / 1_000_000 - 60, 2);
    s1.savepoints = vec![sp.clone()];
    let job = JobOptions {
        cancel_after_savepoint: !sp.stop,
        keep_snapshots: true,
        ..JobOptions::default()
    };
    let e = execute_job(
        &crate::common::valid(&s1),
        &cfg(&crate::common::valid(&s1), seed),
        &job,
        seed,
    );
    assert!(
        e.verdict.passed,
        "seed {seed}: run 1 failed:\n{}",
        failures(&e)
    );
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|x| x.kind == SnapshotKind::Savepoint)
        .unwrap_or_else(|| panic!("seed {seed}: no savepoint ({:?})", e.output.outcome))
        .clone();
    let expected = if sp.stop {
        RunOutcome::Stopped(snap.id)
    } else {
        RunOutcome::Cancelled
    };
    assert_eq!(e.output.outcome, expected, "seed {seed}");
    let image = Image::from_run(&crate::common::valid(&s1), &snap, &e.output.store, seed, 0)
        .expect("image");
    (e, image)
}

/// Run 2: `s2` started from `image`, with its own crashes, to the end.
pub(crate) fn restore_and_finish(s2: &Scenario, image: &Image, seed: u64) -> Execution {
    let plan = rescale::assign(image, s2, false).unwrap_or_else(|e| panic!("{e}"));
    let job = JobOptions {
        restore: Some(Arc::new(plan.restore)),
        ..JobOptions::default()
    };
    execute_job(s2, &cfg(s2, seed), &job, image.meta.input_seed)
}

#[test]
fn savepoint_then_restore_at_changed_parallelism_is_exactly_once_over_200_seeds() {
    let base = load("wordcount");
    let up = [("source", 3), ("split", 3), ("count", 5), ("sink", 3)];
    let down = [("source", 1), ("split", 1), ("count", 2), ("sink", 1)];
    let (mut crashes_before, mut crashes_after, mut in_flight_kinds, mut stops) = (0, 0, 0, 0);
    let mut recoveries_from_savepoint = 0;
    for seed in 0..200u64 {
        let sp = SavepointSpec {
            at: SimTime((200 + (seed % 5) * 60) * 1_000_000),
            stop: seed % 3 != 0,
            drain: seed % 3 == 2,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        stops += u64::from(sp.stop);
        let (run1, image) = take_savepoint(&base, seed, sp);
        crashes_before += run1.output.counters.crashes;
        let mut s2 = with_parallelism(&base, if seed % 2 == 0 { &up } else { &down });
        s2.savepoints.clear();
        crashes(&mut s2, 600, 3);
        let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(
            run2.verdict.passed,
            "seed {seed}: restored run failed:\n{}",
            failures(&run2)
        );
        assert_eq!(run2.output.outcome, RunOutcome::Finished, "seed {seed}");
        let c = &run2.output.counters;
        crashes_after += c.crashes;
        assert_eq!(c.restored_from_snapshot, 1);
        assert!(c.records_routing_checked > 0);
        // A failover before the restored job's first checkpoint goes back
        // to the savepoint.
        if c.recoveries > 0 && c.recoveries_from_scratch == 0 {
            recoveries_from_savepoint += 1;
        }
        in_flight_kinds += u64::from(image.operators.iter().any(|o| o.parallelism == 2));
    }
    assert!(crashes_before > 50, "crashes before: {crashes_before}");
    assert!(crashes_after > 100, "crashes after: {crashes_after}");
    assert!(
        recoveries_from_savepoint > 20,
        "{recoveries_from_savepoint}"
    );
    assert!(stops > 100 && in_flight_kinds == 200);
}

#[test]
fn retained_unaligned_checkpoint_with_channel_state_restores_at_new_parallelism() {
    let base = load("rescale");
    assert_eq!(base.checkpoint.algorithm, Algorithm::Unaligned);
    let mut with_state = 0;
    let mut moved_records = 0;
    for seed in 0..40u64 {
        let mut s1 = ckptsim::scenario::ScenarioData::clone(&base);
        crashes(&mut s1, 250, 2);
        let job = JobOptions {
            cancel_at: Some(SimTime(300_000_000)),
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let run1 = execute_job(
            &crate::common::valid(&s1),
            &cfg(&crate::common::valid(&s1), seed),
            &job,
            seed,
        );
        assert!(run1.verdict.passed, "seed {seed}: {}", failures(&run1));
        assert_eq!(run1.output.outcome, RunOutcome::Cancelled);
        let Some(snap) = run1.output.snapshots.last() else {
            // Crashes kept every checkpoint from completing before the
            // cancel: nothing to retain.
            assert_eq!(run1.output.counters.checkpoints_completed, 0);
            continue;
        };
        assert_eq!(snap.kind, SnapshotKind::Checkpoint);
        let image = Image::from_run(
            &crate::common::valid(&s1),
            snap,
            &run1.output.store,
            seed,
            0,
        )
        .unwrap();
        // Through the files and back.
        let dir =
            std::env::temp_dir().join(format!("ckptsim-retained-{}-{seed}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        savepoint::write_dir(&dir, &image).unwrap();
        let image = savepoint::read_dir(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        if image.in_flight_records() > 0 {
            with_state += 1;
        }
        let p = if seed % 2 == 0 { 3 } else { 1 };
        let mut s2 = with_parallelism(&base, &[("source", p), ("count", p + 1), ("sink", p)]);
        crashes(&mut s2, 400, 2);
        let plan = rescale::assign(&image, &crate::common::valid(&s2), false).unwrap();
        moved_records += plan
            .notes
            .iter()
            .filter(|n| n.contains("in-flight records restored"))
            .count();
        let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed + 500);
        assert!(run2.verdict.passed, "seed {seed}: {}", failures(&run2));
        assert_eq!(run2.output.outcome, RunOutcome::Finished);
        if image.in_flight_records() > 0 {
            assert!(run2.output.counters.in_flight_records_restored > 0);
        }
    }
    assert!(
        with_state >= 30,
        "only {with_state} of 40 had channel state"
    );
    assert!(moved_records >= 30);
}

#[test]
fn stop_with_savepoint_and_drain_leaves_the_2pc_output_complete() {
    let base = load("wordcount");
    for seed in 0..20u64 {
        for drain in [false, true] {
            let sp = SavepointSpec {
                at: SimTime(250_000_000),
                stop: true,
                drain,
                format: ckptsim::scenario::SavepointFormat::Canonical,
            };
            let (run1, image) = take_savepoint(&base, seed, sp);
            // Everything the stopped sources read is committed exactly once
            // (with drain the output check compared against that prefix and
            // passed; the built-in operators buffer nothing, so it holds
            // without drain too).
            assert_eq!(run1.output.complete_below.is_some(), drain);
            let read: u64 = image
                .operators
                .iter()
                .map(|o| match &o.state {
                    ckptsim::savepoint::OperatorState::Source { offsets } => {
                        offsets.iter().map(|(_, n)| n).sum()
                    }
                    _ => 0,
                })
                .sum();
            assert!(read > 0 && read < 12_000, "seed {seed}: read {read}");
            let committed = run1.output.store.committed().len() as u64;
            assert_eq!(
                committed, read,
                "seed {seed} drain {drain}: {:?} {:?}",
                run1.output.outcome, run1.output.counters
            );
            assert!(image.meta.stop && image.meta.drain == drain);
        }
    }
}

#[test]
fn a_plain_savepoint_commits_nothing_and_is_not_used_for_recovery() {
    let base = load("wordcount");
    let mut checked = 0;
    for seed in 0..20u64 {
        let mut s = ckptsim::scenario::ScenarioData::clone(&base);
        s.faults.random = None;
        s.savepoints = vec![SavepointSpec {
            at: SimTime(305_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        }];
        // A crash right after the savepoint completes, before the next
        // checkpoint: recovery goes to the checkpoint before the savepoint.
        let job = JobOptions {
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let probe = execute_job(
            &crate::common::valid(&s),
            &cfg(&crate::common::valid(&s), seed),
            &job,
            seed,
        );
        let sp = &probe.output.snapshots[0];
        let sp_stats = probe
            .output
            .checkpoint_stats
            .iter()
            .find(|c| c.id == sp.id)
            .unwrap();
        assert!(sp_stats.savepoint);
        let next = probe
            .output
            .checkpoint_stats
            .iter()
            .find(|c| c.id > sp.id && !c.savepoint)
            .map(|c| c.trigger_ns)
            .unwrap();
        s.faults.crashes = vec![ckptsim::scenario::CrashSpec {
            at: SimTime((sp.completed_at.0 + next) / 2),
            operator: ckptsim::scenario::OperatorId(2),
            subtask: 0,
            trigger: None,
            repeat: false,
        }];
        let e = execute_job(
            &crate::common::valid(&s),
            &cfg(&crate::common::valid(&s), seed),
            &job,
            seed,
        );
        assert!(e.verdict.passed, "seed {seed}: {}", failures(&e));
        let c = &e.output.counters;
        assert_eq!(c.crashes, 1);
        assert_eq!(c.savepoints_completed, 1);
        // Recovered from a checkpoint older than the savepoint.
        let sp = &e.output.snapshots[0];
        assert!(e.output.completed_ids.iter().all(|&id| id != sp.id));
        // The savepoint's own transactions were never committed.
        let sink_states: Vec<_> = sp.states.iter().flatten().collect();
        for bytes in sink_states.iter().flat_map(|snap| &snap.states) {
            if let Some(pending) = ckptsim::model::operator::sink_pending(bytes) {
                for (cp, txn) in pending.iter().filter(|(cp, _)| *cp == sp.id) {
                    assert_ne!(
                        e.output.store.state(*txn),
                        Some(TxnState::Committed),
                        "seed {seed}: savepoint {cp}'s {txn} committed"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

// ------------------------------------------------------------ command line

mod cli {
    use crate::common::{ckptsim, stderr, stdout};
    use std::path::{Path, PathBuf};
    use std::process::Output;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ckptsim-sp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A savepoint of wordcount (seed 3) in a fresh directory.
    fn savepoint(name: &str) -> PathBuf {
        let dir = temp(name);
        let o = ckptsim(&[
            "savepoint",
            "scenarios/wordcount.toml",
            "--at",
            "300ms",
            "--out",
            dir.to_str().unwrap(),
            "--seed",
            "3",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains("savepoint    4 requested at 300ms"),
            "{}",
            stdout(&o)
        );
        dir
    }

    fn restore(dir: &Path, extra: &[&str]) -> Output {
        let mut args = vec![
            "run",
            "scenarios/wordcount.toml",
            "--from-savepoint",
            dir.to_str().unwrap(),
        ];
        args.extend(extra);
        ckptsim(&args)
    }

    #[test]
    fn savepoint_then_run_from_it_at_a_new_parallelism() {
        let dir = savepoint("roundtrip");
        let o = restore(&dir, &["--parallelism", "count=5", "--seed", "9"]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("restored from savepoint 4"), "{err}");
        assert!(err.contains("count: parallelism 3 → 5"), "{err}");
        assert!(stdout(&o).contains("verdict      PASS"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn cancel_retains_an_unaligned_checkpoint_that_restores_rescaled() {
        let dir = temp("retained");
        let o = ckptsim(&[
            "run",
            "scenarios/rescale.toml",
            "--cancel-at",
            "400ms",
            "--checkpoint-dir",
            dir.to_str().unwrap(),
            "--seed",
            "1",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("outcome      cancelled"));
        let chk = dir.join("chk-2");
        assert!(
            stderr(&o).contains("69 in-flight records"),
            "{}",
            stderr(&o)
        );
        let o = ckptsim(&[
            "run",
            "scenarios/rescale.toml",
            "--from-savepoint",
            chk.to_str().unwrap(),
            "--parallelism",
            "count=3",
            "--parallelism",
            "source=1",
            "--seed",
            "2",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(stderr(&o).contains("69 in-flight records restored"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Refused with exit code 2 and exactly this message.
    fn refused(o: &Output, expected: &str) {
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(o), stderr(o));
        assert_eq!(stderr(o).trim_end(), expected);
    }

    #[test]
    fn a_corrupt_file_is_refused_by_its_checksum() {
        let dir = savepoint("corrupt");
        let file = dir.join("count.state");
        let mut bytes = std::fs::read(&file).unwrap();
        let good = blake3::hash(&bytes).to_hex().to_string();
        bytes[7] ^= 0x40;
        let bad = blake3::hash(&bytes).to_hex().to_string();
        std::fs::write(&file, &bytes).unwrap();
        refused(
            &restore(&dir, &[]),
            &format!(
                "error: {}: checksum mismatch (blake3 {}…, _metadata says {}…): the file is corrupt\n  help: restore from an undamaged copy",
                file.display(),
                &bad[..12],
                &good[..12]
            ),
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_truncated_or_missing_file_is_refused() {
        let dir = savepoint("truncated");
        let file = dir.join("count.state");
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..100]).unwrap();
        refused(
            &restore(&dir, &[]),
            &format!(
                "error: {}: truncated: 100 bytes, _metadata says {}\n  help: the file is damaged; restore from a complete copy",
                file.display(),
                bytes.len()
            ),
        );
        std::fs::remove_file(&file).unwrap();
        refused(
            &restore(&dir, &[]),
            &format!(
                "error: {}: no such file (_metadata lists it for operator `count`)\n  help: the snapshot directory is incomplete; restore from a complete copy",
                file.display()
            ),
        );
        let meta = dir.join("_metadata");
        let text = std::fs::read_to_string(&meta).unwrap();
        std::fs::write(&meta, text.replace("\"version\": 3", "\"version\": 7")).unwrap();
        refused(
            &restore(&dir, &[]),
            &format!(
                "error: {}: format version 7 is not supported (this ckptsim reads version 3)",
                meta.display()
            ),
        );
        std::fs::write(&meta, &text[..text.len() / 2]).unwrap();
        let o = restore(&dir, &[]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("not valid JSON"), "{}", stderr(&o));
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn scenario_variant(name: &str, edit: impl Fn(String) -> String) -> PathBuf {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/wordcount.toml"),
        )
        .unwrap();
        let path =
            std::env::temp_dir().join(format!("ckptsim-sp-{}-{name}.toml", std::process::id()));
        std::fs::write(&path, edit(text)).unwrap();
        path
    }

    #[test]
    fn a_missing_operator_or_a_changed_max_parallelism_is_refused() {
        let dir = savepoint("mismatch");
        let d = dir.to_str().unwrap();
        // The keyed count renamed: its state has no operator to go to.
        let renamed = scenario_variant("renamed", |t| {
            t.replace("id = \"count\"", "id = \"tally\"")
                .replace("to = \"count\"", "to = \"tally\"")
                .replace("from = \"count\"", "from = \"tally\"")
        });
        let p = renamed.to_str().unwrap();
        refused(
            &ckptsim(&["run", p, "--from-savepoint", d]),
            &format!("error: {d}/_metadata: the snapshot has state for operator `count`, which the job does not contain\n  help: give the operator its old id, or pass --allow-non-restored-state to drop its state"),
        );
        // Allowed: the state is dropped, the new operator starts empty, and
        // the checkers see exactly what that means (the counts restart).
        let o = ckptsim(&[
            "run",
            p,
            "--from-savepoint",
            d,
            "--allow-non-restored-state",
        ]);
        assert!(stderr(&o).contains("count: not in the job; its state is dropped"));
        assert!(stderr(&o).contains("tally: new operator, starts empty"));
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(stdout(&o).contains("state                FAIL"));

        let narrower = scenario_variant("maxp", |t| {
            t.replace("max_parallelism = 128", "max_parallelism = 64")
        });
        refused(
            &ckptsim(&["run", narrower.to_str().unwrap(), "--from-savepoint", d]),
            &format!("error: {d}/_metadata: max_parallelism changed: the snapshot has 128 key groups, the job 64\n  help: key groups can be neither split nor merged; set max_parallelism = 128 in the scenario"),
        );
        for f in [renamed, narrower] {
            std::fs::remove_file(f).unwrap();
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn bad_restore_arguments_are_refused() {
        refused(
            &ckptsim(&["run", "scenarios/wordcount.toml", "--parallelism", "nope=2"]),
            "error: --parallelism: the job has no operator `nope`\n  help: known operators: source, split, count, sink",
        );
        refused(
            &ckptsim(&["run", "scenarios/wordcount.toml", "--parallelism", "cuont=2"]),
            "error: --parallelism: the job has no operator `cuont`\n  help: did you mean `count`? known operators: source, split, count, sink",
        );
        refused(
            &ckptsim(&["run", "scenarios/wordcount.toml", "--parallelism", "source=3"]),
            "error: with --parallelism: forward edge source -> split connects parallelism 3 to parallelism 2\n  help: use `rebalance` or `hash`, or make the parallelisms equal",
        );
        let missing = temp("nothing-here");
        refused(
            &ckptsim(&[
                "run",
                "scenarios/wordcount.toml",
                "--from-savepoint",
                missing.to_str().unwrap(),
            ]),
            &format!(
                "error: {}: no such file\n  help: pass the directory `ckptsim savepoint --out` or `run --checkpoint-dir` wrote (it holds a _metadata file)",
                missing.join("_metadata").display()
            ),
        );
    }
}

#[test]
fn savepoints_are_aligned_under_every_algorithm_and_restore_rescaled() {
    // Under backpressure the unaligned checkpoints of `rescale` carry
    // channel state; its savepoints never do (Chandy–Lamport excepted: its
    // savepoints are its own snapshots).
    let base = load("rescale");
    for algorithm in [
        Algorithm::Aligned,
        Algorithm::Unaligned,
        Algorithm::AlignedTimeout,
        Algorithm::ChandyLamport,
        Algorithm::StopTheWorld,
        Algorithm::AtLeastOnce,
    ] {
        let mut unaligned_checkpoints = 0;
        for seed in 0..12u64 {
            let mut s = ckptsim::scenario::ScenarioData::clone(&base);
            s.checkpoint.algorithm = algorithm;
            let sp = SavepointSpec {
                at: SimTime(250_000_000),
                stop: seed % 2 == 0,
                drain: seed % 4 == 0,
                format: ckptsim::scenario::SavepointFormat::Canonical,
            };
            let (run1, image) = take_savepoint(&crate::common::valid(&s), seed, sp);
            unaligned_checkpoints += run1.output.counters.unaligned_checkpoints;
            if algorithm != Algorithm::ChandyLamport {
                assert_eq!(image.in_flight_records(), 0, "{algorithm:?} seed {seed}");
            }
            let mut s2 = with_parallelism(
                &crate::common::valid(&s),
                &[("source", 3), ("count", 3), ("sink", 1)],
            );
            crashes(&mut s2, 300, 2);
            let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed + 77);
            assert!(
                run2.verdict.passed,
                "{algorithm:?} seed {seed}: {}",
                failures(&run2)
            );
        }
        if algorithm == Algorithm::Unaligned {
            assert!(
                unaligned_checkpoints > 0,
                "no unaligned checkpoint to contrast with"
            );
        }
    }
}

#[test]
fn reused_checkpoint_ids_after_a_restore_keep_the_2pc_sink_exactly_once() {
    // The first job runs on past its savepoint into a new transaction, then
    // is cancelled. The restored job counts checkpoint ids from the
    // savepoint's again and its sinks start from the same sequence numbers:
    // only the generation in the attempt keeps its transaction ids apart
    // from the first job's. Forcing the old generation shows what it
    // prevents: the restored sink writes into the first job's open
    // transaction, and its records are committed twice.
    let base = load("wordcount");
    let mut collided = 0;
    for seed in 0..10u64 {
        let mut s = ckptsim::scenario::ScenarioData::clone(&base);
        s.faults.random = None;
        s.savepoints = vec![SavepointSpec {
            at: SimTime(250_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        }];
        let probe = execute_job(
            &crate::common::valid(&s),
            &cfg(&crate::common::valid(&s), seed),
            &JobOptions {
                keep_snapshots: true,
                ..JobOptions::default()
            },
            seed,
        );
        let completed = probe.output.snapshots[0].completed_at;
        let job = JobOptions {
            cancel_at: Some(SimTime(completed.0 + 20_000_000)),
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let run1 = execute_job(
            &crate::common::valid(&s),
            &cfg(&crate::common::valid(&s), seed),
            &job,
            seed,
        );
        let snap = &run1.output.snapshots[0];
        let image =
            Image::from_run(&crate::common::valid(&s), snap, &run1.output.store, seed, 0).unwrap();
        let mut s2 = ckptsim::scenario::ScenarioData::clone(&s);
        s2.savepoints.clear();
        let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed);
        assert!(run2.verdict.passed, "seed {seed}: {}", failures(&run2));
        assert!(run2.output.completed_ids.contains(&(snap.id + 1)));

        let mut plan = rescale::assign(&image, &crate::common::valid(&s2), false).unwrap();
        plan.restore.generation = 0;
        let job = JobOptions {
            restore: Some(Arc::new(plan.restore)),
            ..JobOptions::default()
        };
        let wrong = execute_job(
            &crate::common::valid(&s2),
            &cfg(&crate::common::valid(&s2), seed),
            &job,
            seed,
        );
        if !wrong.verdict.passed {
            collided += 1;
        }
    }
    assert!(
        collided >= 5,
        "the generation prevented nothing: {collided}"
    );
}

#[test]
fn a_failure_after_the_stop_savepoint_completed_ends_the_job_without_failover() {
    // Seeds 258 and 260 of wordcount under stop-the-world crash a task just
    // before the stop-with-savepoint at 900 ms completes; the failure is
    // detected after. A failover to the latest checkpoint would duplicate
    // what the savepoint's notification committed (FLINK-26783): the job
    // ends instead.
    let mut s = ckptsim::scenario::ScenarioData::clone(&load("wordcount"));
    s.checkpoint.algorithm = Algorithm::StopTheWorld;
    s.savepoints = vec![
        SavepointSpec {
            at: SimTime(200_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        },
        SavepointSpec {
            at: SimTime(500_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        },
        SavepointSpec {
            at: SimTime(900_000_000),
            stop: true,
            drain: true,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        },
    ];
    for seed in [258, 260] {
        let e = execute_job(
            &crate::common::valid(&s),
            &cfg(&crate::common::valid(&s), seed),
            &JobOptions::default(),
            seed,
        );
        assert!(e.verdict.passed, "seed {seed}: {}", failures(&e));
        assert!(matches!(e.output.outcome, RunOutcome::Stopped(_)));
        assert_eq!(e.output.counters.failures_after_stop_savepoint, 1);
    }
}

/// A plain savepoint at each of `plain`, then a drained stop at `stop`.
fn savepoint_plan(plain: &[u64], stop: u64) -> Vec<SavepointSpec> {
    let mut plan: Vec<SavepointSpec> = plain
        .iter()
        .map(|&ms| SavepointSpec {
            at: SimTime(ms * 1_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        })
        .collect();
    plan.push(SavepointSpec {
        at: SimTime(stop * 1_000_000),
        stop: true,
        drain: true,
        format: ckptsim::scenario::SavepointFormat::Canonical,
    });
    plan
}

/// Runs `s` (with its savepoints) under each algorithm for 60 seeds; every
/// run must pass. Returns, per algorithm, savepoints completed and failed
/// and runs stopped with a savepoint.
fn sweep_savepoints(s: &Scenario, algorithms: &[Algorithm]) -> Vec<(Algorithm, u64, u64, u64)> {
    algorithms
        .iter()
        .map(|&algorithm| {
            let (mut completed, mut failed, mut stopped) = (0, 0, 0);
            for seed in 0..60u64 {
                let c = RunConfig {
                    algorithm,
                    ..cfg(s, seed)
                };
                let e = execute_job(s, &c, &JobOptions::default(), seed);
                assert!(
                    e.verdict.passed,
                    "{algorithm:?} seed {seed}: {}",
                    failures(&e)
                );
                completed += e.output.counters.savepoints_completed;
                failed += e.output.counters.savepoints_failed;
                stopped += u64::from(matches!(e.output.outcome, RunOutcome::Stopped(_)));
            }
            (algorithm, completed, failed, stopped)
        })
        .collect()
}

#[test]
fn savepoints_taken_during_a_run_with_crashes_keep_every_guarantee() {
    // Two plain savepoints and a drained stop, crashes anywhere: whatever
    // the algorithm, the run keeps its guarantee (a plain savepoint commits
    // nothing by itself, the stop commits exactly what was read).
    let mut s = ckptsim::scenario::ScenarioData::clone(&load("wordcount"));
    s.savepoints = savepoint_plan(&[200, 450], 700);
    let mut algorithms = crate::common::exactly_once();
    algorithms.push(Algorithm::AtLeastOnce);
    for (algorithm, completed, failed, stopped) in
        sweep_savepoints(&crate::common::valid(&s), &algorithms)
    {
        assert!(
            completed > 100 && failed > 0 && stopped > 20,
            "{algorithm:?}: {completed} {failed} {stopped}"
        );
    }
}

#[test]
fn misrouted_in_flight_records_after_a_rescale_fail_the_routing_check() {
    // A rescale that hands every restored in-flight record to the first
    // subtask of the keyed count (instead of its key group's owner).
    let base = load("rescale");
    let mut caught = 0;
    for seed in 0..10u64 {
        let mut s1 = ckptsim::scenario::ScenarioData::clone(&base);
        s1.faults.random = None;
        let job = JobOptions {
            cancel_at: Some(SimTime(300_000_000)),
            keep_snapshots: true,
            ..JobOptions::default()
        };
        let run1 = execute_job(
            &crate::common::valid(&s1),
            &cfg(&crate::common::valid(&s1), seed),
            &job,
            seed,
        );
        let image = Image::from_run(
            &crate::common::valid(&s1),
            &run1.output.snapshots[0],
            &run1.output.store,
            seed,
            0,
        )
        .unwrap();
        let s2 = with_parallelism(&base, &[("count", 3)]);
        let mut plan = rescale::assign(&image, &crate::common::valid(&s2), false).unwrap();
        let first = 2; // count[0]: after the two source subtasks
        let mut moved = Vec::new();
        for t in first + 1..first + 3 {
            if let Some(snap) = plan.restore.states[t].as_mut() {
                for cs in &mut snap.inputs {
                    moved.append(&mut cs.records);
                }
            }
        }
        if moved.is_empty() {
            continue;
        }
        let target = plan.restore.states[first].as_mut().unwrap();
        if target.inputs.is_empty() {
            target.inputs.push(Default::default());
        }
        target.inputs[0].records.extend(moved);
        let job = JobOptions {
            restore: Some(Arc::new(plan.restore)),
            ..JobOptions::default()
        };
        let e = execute_job(
            &crate::common::valid(&s2),
            &cfg(&crate::common::valid(&s2), seed),
            &job,
            seed,
        );
        let failed: Vec<&str> = e
            .verdict
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name)
            .collect();
        assert!(failed.contains(&"routing"), "seed {seed}: {failed:?}");
        caught += 1;
    }
    assert!(caught >= 8, "{caught}");
}

#[test]
fn a_coordinator_crash_in_a_restored_job_restores_the_savepoint_again() {
    // With memory storage a coordinator crash loses what it stored; a job
    // started from a savepoint was submitted with it, so the new coordinator
    // restores the savepoint again. Restarting from scratch instead would
    // commit the first job's output a second time. (A crash after the
    // restored job committed checkpoints of its own duplicates those, as
    // for any job on memory storage: see docs/faults.md.)
    let base = load("wordcount");
    assert_eq!(
        base.checkpoint.storage,
        ckptsim::scenario::StorageKind::Memory
    );
    for seed in 0..30u64 {
        let sp = SavepointSpec {
            at: SimTime(300_000_000),
            stop: true,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (_, image) = take_savepoint(&base, seed, sp);
        let mut s2 = with_parallelism(&base, &[("count", 4)]);
        s2.savepoints.clear();
        s2.faults.random = None;
        s2.faults.coordinator = Some(ckptsim::scenario::CoordinatorFaults {
            failover_delay: SimDuration::from_millis(50),
            on_memory_loss: ckptsim::scenario::MemoryLoss::RestartFromScratch,
            // Before the restored job's first checkpoint (at 100 ms).
            crashes: vec![SimTime((20 + seed * 2) * 1_000_000)],
            random: None,
            crash_on: Vec::new(),
        });
        let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed);
        assert!(run2.verdict.passed, "seed {seed}: {}", failures(&run2));
        let c = &run2.output.counters;
        assert_eq!(c.coordinator_crashes, 1, "seed {seed}");
        assert_eq!(c.coordinator_recoveries_from_checkpoint, 1, "seed {seed}");
        assert_eq!(c.coordinator_recoveries_from_scratch, 0, "seed {seed}");
    }
}

#[test]
fn savepoints_compose_with_every_fault_kind() {
    // scenarios/faults.toml (workers, coordinator crashes, storage faults,
    // lost notifications, network faults, a straggler) with a plain
    // savepoint and a drained stop: every algorithm keeps exactly-once.
    let mut s = ckptsim::scenario::ScenarioData::clone(&load("faults"));
    s.savepoints = savepoint_plan(&[30], 60);
    for (algorithm, completed, failed, stopped) in
        sweep_savepoints(&crate::common::valid(&s), &crate::common::exactly_once())
    {
        assert!(
            completed > 30 && failed > 10 && stopped > 15,
            "{algorithm:?}: {completed} completed, {failed} failed, {stopped} stopped"
        );
    }
}

/// A count window's output (which record closes a window) depends on the
/// order records arrive in, and the history before a savepoint was another
/// run's: its sink is not compared after a restore, and says so, instead of
/// failing a correct job. Keyed state and the other checks still judge it.
#[test]
fn a_restored_job_does_not_judge_order_dependent_output_it_cannot_know() {
    let base = load("windows");
    let reach = |e: &Execution| -> Option<u64> {
        let check = e
            .verdict
            .checks
            .iter()
            .find(|c| c.name == "exactly-once-output")?;
        check
            .reach
            .iter()
            .find(|r| r.0 == "sinks not compared")
            .map(|r| r.1)
    };
    for seed in 0..12u64 {
        let sp = SavepointSpec {
            at: SimTime(100_000_000),
            stop: false,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (run1, image) = take_savepoint(&base, seed, sp);
        assert_eq!(
            reach(&run1),
            None,
            "seed {seed}: the run itself is judged in full"
        );
        let mut s2 = ckptsim::scenario::ScenarioData::clone(&base);
        s2.savepoints.clear();
        let run2 = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(run2.verdict.passed, "seed {seed}:\n{}", failures(&run2));
        assert_eq!(reach(&run2), Some(1), "seed {seed}");
    }
}

/// The input logs follow from the seed and the sources: a restore into a
/// job whose sources draw other records (here a hot key) is refused, not
/// judged against an input it never read.
#[test]
fn a_restore_into_sources_that_draw_other_records_is_refused() {
    let base = load("wordcount");
    let sp = SavepointSpec {
        at: SimTime(300_000_000),
        stop: false,
        drain: false,
        format: ckptsim::scenario::SavepointFormat::Canonical,
    };
    let (_, image) = take_savepoint(&base, 0, sp);
    let mut hot = ckptsim::scenario::ScenarioData::clone(&base);
    if let ckptsim::scenario::OperatorKind::Source(src) = &mut hot.operators[0].kind {
        src.hot_key_percent = 50;
    }
    let e = rescale::assign(&image, &crate::common::valid(&hot), false)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("the job's sources differ from the snapshot's"),
        "{e}"
    );
    assert!(
        e.contains("500 keys uniform, 50% on key 0, values ≤ 1"),
        "{e}"
    );
}
