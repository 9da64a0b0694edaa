//! A restored run and the world its snapshot describes. A snapshot that
//! contradicts the outside world it carries is refused before anything
//! runs: each state below is crafted from a real savepoint, written and
//! signed again as the writer signs it, and refused with exit code 2 by
//! `verify-snapshot` and `run --from-savepoint` alike, naming the state
//! file and the field. A restored run whose output could not be judged is
//! `incomplete`, never a pass. A restored run's faults are those after the
//! snapshot on the job's clock, counted from the restore.

use crate::common::{ckptsim, stderr, stdout};
use crate::hostile::{refused, temp};
use ckptsim::model::store::{TxnId, TxnState};
use ckptsim::savepoint::{read_dir, write_dir, Image, OperatorState};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A 2PC sink subtask's state as `docs/savepoints.md` describes it.
#[derive(Serialize, Deserialize)]
struct TwoPhase {
    current: Option<TxnId>,
    pending: Vec<(u64, TxnId)>,
    next_seq: u64,
}

/// A Sink V2 committer subtask's state.
#[derive(Serialize, Deserialize)]
struct Committer {
    pending: Vec<(u64, TxnId)>,
}

/// Empties every Sink V2 committer subtask's list of committables.
fn drop_committables(i: &mut Image) {
    let OperatorState::SinkCommitter { subtasks } = state_of(i, "committer") else {
        panic!("the committer holds committer state");
    };
    for s in subtasks.iter_mut().filter(|s| !s.is_empty()) {
        let mut state: Committer = postcard::from_bytes(s).unwrap();
        state.pending.clear();
        *s = postcard::to_stdvec(&state).unwrap();
    }
}

/// A Sink V2 writer subtask's state.
#[derive(Serialize, Deserialize)]
struct Writer {
    next_seq: u64,
    checkpoint: u64,
}

/// The savepoint `ckptsim savepoint SCENARIO --at AT` writes (seed 3).
fn savepoint(scenario: &str, at: &str, name: &str) -> PathBuf {
    let dir = temp(&format!("truth-{name}"));
    let o = ckptsim(&[
        "savepoint",
        scenario,
        "--at",
        at,
        "--out",
        dir.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dir
}

fn state_of<'a>(i: &'a mut Image, uid: &str) -> &'a mut OperatorState {
    let op = i.operators.iter_mut().find(|o| o.uid == uid).unwrap();
    &mut op.state
}

/// Edits every 2PC sink subtask state of `uid` with `edit`.
fn edit_sink(i: &mut Image, uid: &str, edit: impl Fn(&mut TwoPhase)) {
    let OperatorState::Sink2pc { subtasks } = state_of(i, uid) else {
        panic!("{uid} is a 2PC sink");
    };
    for s in subtasks.iter_mut().filter(|s| !s.is_empty()) {
        let mut state: TwoPhase = postcard::from_bytes(s).unwrap();
        edit(&mut state);
        *s = postcard::to_stdvec(&state).unwrap();
    }
}

fn offsets(i: &mut Image) -> &mut Vec<(u32, u64)> {
    match state_of(i, "source") {
        OperatorState::Source { offsets } => offsets,
        _ => panic!("the source holds offsets"),
    }
}

type Edit = fn(&mut Image);

#[test]
fn snapshots_that_contradict_their_store_are_refused() {
    let wc_dir = savepoint("scenarios/wordcount.toml", "300ms", "wordcount");
    let v2_dir = savepoint("scenarios/sink-v2.toml", "150ms", "sink-v2");
    let wordcount = read_dir(&wc_dir).unwrap();
    let sink_v2 = read_dir(&v2_dir).unwrap();
    // The originals are what the cases need: committed records from the
    // first partition and a pre-committed transaction per sink subtask.
    let first = offsets(&mut wordcount.clone())[0];
    assert!(first.1 > 0, "{first:?}");
    let mut precommitted = 0;
    let mut probe = wordcount.clone();
    let OperatorState::Sink2pc { subtasks } = state_of(&mut probe, "sink") else {
        panic!("the sink is a 2PC sink");
    };
    for s in subtasks.iter() {
        let s: TwoPhase = postcard::from_bytes(s).unwrap();
        for (_, t) in &s.pending {
            assert_eq!(wordcount.store.state(*t), Some(TxnState::PreCommitted));
            precommitted += 1;
        }
    }
    assert!(
        precommitted > 0,
        "the savepoint lists no pending transaction"
    );

    // The Sink V2 savepoint's committer holds the savepoint's committables.
    let mut probe = sink_v2.clone();
    let OperatorState::SinkCommitter { subtasks } = state_of(&mut probe, "committer") else {
        panic!("the committer holds committer state");
    };
    let committables: usize = subtasks
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| postcard::from_bytes::<Committer>(s).unwrap().pending.len())
        .sum();
    assert!(committables > 0, "the committer lists no committable");

    let wc = "scenarios/wordcount.toml";
    let v2 = "scenarios/sink-v2.toml";
    let cases: Vec<(&str, &Image, &str, Edit, &str, &str)> = vec![
        (
            "offset-rewound",
            &wordcount,
            wc,
            |i| offsets(i)[0].1 = 0,
            "source.state",
            "`offsets[0]`: partition 0 restarts at offset 0, but the external store already committed a record from its offset",
        ),
        (
            "offset-dropped",
            &wordcount,
            wc,
            |i| {
                offsets(i).remove(0);
            },
            "source.state",
            "`offsets`: partition 0 has no offset (a restore reads it from 0), but the external store already committed",
        ),
        (
            "pending-dropped",
            &wordcount,
            wc,
            |i| edit_sink(i, "sink", |s| {
                s.pending.pop();
            }),
            "sink.state",
            "`subtasks[0]`: does not list txn(sink 3 subtask 0 attempt ",
        ),
        (
            "pending-listed-twice",
            &wordcount,
            wc,
            |i| edit_sink(i, "sink", |s| {
                let last = *s.pending.last().unwrap();
                s.pending.push(last);
            }),
            "sink.state",
            "`subtasks[0]`: lists txn(sink 3 subtask 0 attempt ",
        ),
        (
            "pending-checkpoint-beyond",
            &wordcount,
            wc,
            |i| {
                let id = i.meta.id;
                edit_sink(i, "sink", move |s| s.pending.last_mut().unwrap().0 = id + 1)
            },
            "sink.state",
            "`subtasks[0]`: checkpoint id 5 is beyond the snapshot's own id 4",
        ),
        (
            "committables-dropped",
            &sink_v2,
            v2,
            drop_committables,
            "writer.state",
            "but no committer lists it and none is in flight: a restore would never commit it",
        ),
        (
            "writer-checkpoint-beyond",
            &sink_v2,
            v2,
            |i| {
                let id = i.meta.id;
                let OperatorState::SinkWriter { subtasks } = state_of(i, "writer") else {
                    panic!("the writer holds writer state");
                };
                let mut w: Writer = postcard::from_bytes(&subtasks[0]).unwrap();
                assert_eq!(w.checkpoint, id);
                w.checkpoint = id + 7;
                subtasks[0] = postcard::to_stdvec(&w).unwrap();
            },
            "writer.state",
            "is beyond the snapshot's own id",
        ),
        (
            "payload-unknown",
            &wordcount,
            wc,
            |i| {
                // An in-flight record naming a payload the store's table
                // does not hold: a restored operator could not read it.
                let record = ckptsim::model::Record {
                    payload: ckptsim::model::Payload(0x1234),
                    ..Default::default()
                };
                i.channels.push(ckptsim::savepoint::ChannelRecords {
                    from: "split".into(),
                    from_subtask: 0,
                    to: "count".into(),
                    to_subtask: 0,
                    records: vec![record],
                });
            },
            "channels.state",
            "`[0].records[0].payload`: payload 0000000000001234 is not in the store's payload table",
        ),
    ];
    for (name, original, scenario, edit, file, field) in cases {
        let mut image = original.clone();
        edit(&mut image);
        let dir = temp(&format!("truth-{name}"));
        write_dir(&dir, &image).unwrap();
        refused(&dir, scenario, file, field);
        std::fs::remove_dir_all(dir).unwrap();
    }
    // The originals themselves are consistent.
    for (dir, scenario) in [(&wc_dir, wc), (&v2_dir, v2)] {
        let o = ckptsim(&[
            "verify-snapshot",
            dir.to_str().unwrap(),
            "--scenario",
            scenario,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_restored_run_whose_sink_cannot_be_judged_is_incomplete() {
    let dir = savepoint("scenarios/windows.toml", "200ms", "windows");
    let d = dir.to_str().unwrap();
    let windows = [
        "run",
        "scenarios/windows.toml",
        "--from-savepoint",
        d,
        "--parallelism",
        "window=4",
        "--seed",
        "1",
    ];
    let o = ckptsim(&windows);
    let out = stdout(&o);
    // Nothing failed: exit 0, as for every incomplete verdict.
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("sinks not compared: 1"), "{out}");
    assert!(
        out.contains("incomplete   sink `sink` not judged: its input depends on arrival order"),
        "{out}"
    );
    assert!(out.contains("verdict      INCOMPLETE\n"), "{out}");
    assert!(!out.contains("verdict      PASS"), "{out}");
    let o = ckptsim(&[&windows[..], &["--json"]].concat());
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    assert_eq!(json["unjudged"], serde_json::json!(["sink"]), "{json}");

    // A restored run whose every sink is judged still passes.
    let wc = savepoint("scenarios/wordcount.toml", "300ms", "judged");
    let o = ckptsim(&[
        "run",
        "scenarios/wordcount.toml",
        "--from-savepoint",
        wc.to_str().unwrap(),
        "--parallelism",
        "count=5",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["verdict"], "pass", "{json}");
    assert!(json.get("unjudged").is_none(), "{json}");
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(wc).unwrap();
}

/// wordcount with two crashes on the job's clock instead of random ones:
/// one before a savepoint at 300 ms, one after it.
fn wordcount_with_crashes(dir: &std::path::Path) -> PathBuf {
    let text = std::fs::read_to_string("scenarios/wordcount.toml").unwrap();
    let random = "[faults.random]\nmean_interval = \"500ms\"\nwindow_start = \"0s\"\nwindow_end = \"1.5s\"\nmax_crashes = 3\n";
    assert!(text.contains(random), "scenarios/wordcount.toml changed");
    let crashes = "[[faults.crashes]]\nat = \"100ms\"\ntask = \"count[1]\"\n\n[[faults.crashes]]\nat = \"650ms\"\ntask = \"count[0]\"\n";
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("wordcount-crashes.toml");
    std::fs::write(&path, text.replace(random, crashes)).unwrap();
    path
}

#[test]
fn a_restored_runs_faults_come_after_the_snapshot_on_the_jobs_clock() {
    let work = temp("truth-faults");
    let scenario = wordcount_with_crashes(&work);
    let sc = scenario.to_str().unwrap();
    let sp = work.join("sp");
    let o = ckptsim(&[
        "savepoint",
        sc,
        "--at",
        "300ms",
        "--out",
        sp.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The first run crashed at 100 ms and took the savepoint after it.
    let first = stdout(&o);
    assert!(
        first.contains("faults       1 crash, 1 recovery"),
        "{first}"
    );
    let completed = read_dir(&sp).unwrap().meta.completed_at_ns;
    assert!(
        (300_000_000..650_000_000).contains(&completed),
        "{completed}"
    );

    let o = ckptsim(&[
        "run",
        sc,
        "--from-savepoint",
        sp.to_str().unwrap(),
        "--parallelism",
        "count=2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The crash at 650 ms on the job's clock happens, 650 ms - completed
    // after the restore; the one at 100 ms was the first run's.
    assert_eq!(json["crashes"], 1, "{json}");
    let at = 650_000_000 - completed;
    let timeline = json["timeline"].as_array().unwrap();
    assert!(
        timeline.iter().any(
            |e| e["time_ns"] == at && e["what"].as_str().unwrap().contains("crash of count[0]")
        ),
        "{json}"
    );
    assert_eq!(json["warnings"], serde_json::json!([]), "{json}");
    assert_eq!(
        json["restored_faults"]["shifted_by_ns"], completed,
        "{json}"
    );
    assert_eq!(json["restored_faults"]["dropped"], 1, "{json}");

    // The text says which faults the restored run took, and warns of none.
    let o = ckptsim(&["run", sc, "--from-savepoint", sp.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(
        out.contains("  relative to the restore: the scenario's fault times"),
        "{out}"
    );
    assert!(
        out.contains("1 planned at or before the snapshot (the first run's) dropped"),
        "{out}"
    );
    assert!(!out.contains("never happened"), "{out}");
    assert!(
        stderr(&o).contains("  faults: relative to the restore"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(work).unwrap();
}
