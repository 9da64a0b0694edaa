//! The log's operators restored at another parallelism (issue: a
//! transactional log; `model::txlog::rescale`): from a stop-with-savepoint
//! and from the checkpoint a cancelled job retained, with what it left
//! open; the two mutants that break the dealing, killed; the flow's
//! replay line runs as printed.

use crate::common::{config, failed_checks, load, reach, seeds_or};
use ckptsim::mutant::Mutant;
use ckptsim::rescale::RescaleFlow;

fn flow(operator: &'static str, parallelism: u32, retained: bool) -> RescaleFlow {
    RescaleFlow {
        at_ms: 150,
        operator,
        parallelism,
        claim: false,
        retained,
    }
}

/// Both sinks and the reader, down and up, from a retained checkpoint and
/// from a savepoint: exactly-once output at both sinks, nothing left open;
/// a downscale's restores abort what the removed subtasks left open.
#[test]
fn the_log_rescales_from_retained_checkpoints_and_savepoints() {
    let sc = load("log-rescale");
    let flows = [
        flow("mid", 2, true),
        flow("mid", 1, true),
        flow("mid", 5, true),
        flow("read", 2, true),
        flow("read", 5, true),
        flow("out", 3, true),
        flow("mid", 2, false),
        flow("read", 1, false),
    ];
    for f in flows {
        let mut restored = 0;
        let mut aborted = 0;
        for seed in 0..seeds_or(3) {
            let Some(e) = f.execute(&sc, &config(&sc, seed, &[])) else {
                continue;
            };
            assert!(
                e.verdict.passed,
                "{f:?} seed {seed}: {:?} {:?}",
                failed_checks(&e),
                e.verdict.violations().next()
            );
            restored += 1;
            aborted += reach(
                &e,
                "open-transactions",
                "lingering transactions aborted at restores",
            );
        }
        assert!(restored > 0, "{f:?}: nothing restored");
        if f.retained && f.operator == "mid" {
            assert!(aborted > 0, "{f:?}: nothing left open to abort");
        }
    }
}

/// A downscaled sink that ignores the ownership its restored state hands
/// it leaves the removed subtasks' transactions open; a downscaled reader
/// that keeps only its own index's splits never reads the removed ones'.
#[test]
fn the_rescale_mutants_are_caught() {
    let sc = load("log-rescale");
    for (m, f, check) in [
        (
            Mutant::RemovedSubtasksNotAborted,
            flow("mid", 2, true),
            "open-transactions",
        ),
        (
            Mutant::RemovedReadersSplitsDropped,
            flow("read", 2, true),
            "exactly-once-output",
        ),
    ] {
        let plain = f.execute(&sc, &config(&sc, 0, &[])).unwrap();
        assert!(plain.verdict.passed, "{f:?}: {:?}", failed_checks(&plain));
        let e = f.execute(&sc, &config(&sc, 0, &[m])).unwrap();
        assert!(
            failed_checks(&e).contains(&check),
            "{}: {:?}",
            m.name(),
            failed_checks(&e)
        );
    }
}

/// The replay line of a retained-checkpoint flow (what the kill matrix
/// prints) runs as printed from a shell and fails again.
#[test]
fn a_retained_flow_replays_as_printed() {
    let path = crate::common::scenario_path("log-rescale");
    let f = flow("read", 2, true);
    let m = Mutant::RemovedReadersSplitsDropped;
    let replay = f.replay(path.to_str().unwrap(), 0, "aligned", &[m.name()]);
    assert!(
        replay.contains("--cancel-at 150ms --checkpoint-dir"),
        "{replay}"
    );
    let o = crate::common::shell_with_ckptsim(&replay).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{replay}\n{}",
        crate::common::stderr(&o)
    );
    let out = crate::common::stdout(&o);
    assert!(out.contains("exactly-once-output  FAIL"), "{out}");
}

/// A job restored from a savepoint reads what the earlier run wrote from
/// its own start: its clock starts at zero, the earlier run's entries are
/// as of zero, and the topic the earlier job closed when it stopped is
/// open again. Before, the restored readers saw those records only once
/// their clock passed the earlier run's times, and a reader that had read
/// to the end just after that time took the topic for closed and ended
/// early (seed 7 here lost 24 records at `out`; at the same parallelism,
/// 4 of the first 61 seeds lost records so, seed 5 among them).
#[test]
fn a_restored_job_reads_the_earlier_runs_log_from_its_start() {
    let sc = load("log-rescale");
    for (f, seed) in [(flow("mid", 2, false), 7), (flow("mid", 3, false), 5)] {
        let e = f.execute(&sc, &config(&sc, seed, &[])).unwrap();
        assert!(
            e.verdict.passed,
            "{f:?}: {:?}",
            e.verdict.violations().next()
        );
    }
}

/// A retained checkpoint whose log sink lists one committable under two
/// subtasks is refused before anything runs (two owners would commit it):
/// a located error, exit 2.
#[test]
fn a_committable_listed_twice_is_refused() {
    use ckptsim::savepoint::OperatorState;
    let dir = std::env::temp_dir().join(format!("ckptsim-log-twice-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let sc = crate::common::scenario_path("log-rescale");
    let sc = sc.to_str().unwrap();
    let d = dir.to_str().unwrap();
    let o = crate::common::ckptsim(&["run", sc, "--cancel-at", "150ms", "--checkpoint-dir", d]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    let chk = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let path = chk.join("mid.state");
    let mut state: OperatorState = postcard::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    let OperatorState::LogSink { subtasks } = &mut state else {
        panic!("{state:?}");
    };
    let listed = ckptsim::model::txlog::rescale::sink_committables;
    let j = (0..subtasks.len())
        .find(|&j| !listed(&subtasks[j]).unwrap().is_empty())
        .expect("a subtask with a committable");
    let copy = subtasks[j].clone();
    subtasks[(j + 1) % 3] = copy;
    let bytes = postcard::to_stdvec(&state).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    crate::hostile::resign(&chk, |v| {
        for op in v["operators"].as_array_mut().unwrap() {
            if op["file"] == "mid.state" {
                op["bytes"] = bytes.len().into();
                op["blake3"] = blake3::hash(&bytes).to_hex().to_string().into();
            }
        }
    });
    crate::hostile::refused(&chk, sc, "mid.state", "twice");
    std::fs::remove_dir_all(&dir).ok();
}
