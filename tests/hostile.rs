//! Savepoint directories written by a hostile hand: every crafted value is
//! refused with exit code 2, naming its file and field, by
//! `verify-snapshot` and by `run --from-savepoint` alike; nothing panics,
//! wraps or hangs.

use crate::common::{ckptsim, stderr};
use ckptsim::model::ExternalStore;
use ckptsim::savepoint::{read_dir, write_dir, Image, OperatorState};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ckptsim-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// wordcount's savepoint at 300 ms (seed 3), and rescale's retained
/// checkpoint with in-flight records.
fn originals(test: &str) -> (PathBuf, PathBuf) {
    let sp = temp(&format!("{test}-savepoint"));
    let o = ckptsim(&[
        "savepoint",
        "scenarios/wordcount.toml",
        "--at",
        "300ms",
        "--out",
        sp.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let chk = temp(&format!("{test}-retained"));
    let o = ckptsim(&[
        "run",
        "scenarios/rescale.toml",
        "--cancel-at",
        "400ms",
        "--checkpoint-dir",
        chk.to_str().unwrap(),
        "--seed",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (sp, chk.join("chk-2"))
}

/// Refused by both commands with exit code 2, naming `file` and `field`.
pub(crate) fn refused(dir: &Path, scenario: &str, file: &str, field: &str) {
    let d = dir.to_str().unwrap();
    for args in [
        vec!["verify-snapshot", d],
        vec!["run", scenario, "--from-savepoint", d],
    ] {
        let o = ckptsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let path = dir.join(file).display().to_string();
        assert!(
            err.starts_with(&format!("error: {path}: ")),
            "{args:?}: {err}"
        );
        assert!(err.contains(field), "{args:?}: no {field} in: {err}");
    }
}

type Edit = fn(&mut Image);

/// wordcount's keyed count's key groups.
fn keyed(i: &mut Image) -> &mut Vec<ckptsim::model::operator::KeyGroupState> {
    match &mut i.operators[2].state {
        OperatorState::Keyed { key_groups } => key_groups,
        _ => panic!("count holds keyed state"),
    }
}

/// wordcount's source offsets.
fn offsets(i: &mut Image) -> &mut Vec<(u32, u64)> {
    match &mut i.operators[0].state {
        OperatorState::Source { offsets } => offsets,
        _ => panic!("the source holds offsets"),
    }
}

#[test]
fn crafted_values_are_refused_naming_file_and_field() {
    let (sp, chk) = originals("crafted");
    let wordcount = read_dir(&sp).unwrap();
    let rescale = read_dir(&chk).unwrap();
    let wc = "scenarios/wordcount.toml";
    let rs = "scenarios/rescale.toml";
    let cases: Vec<(&str, &Image, &str, Edit, &str, &str)> = vec![
        (
            "generation-max",
            &wordcount,
            wc,
            |i| i.meta.generation = u32::MAX,
            "_metadata",
            "`generation`: 4294967295",
        ),
        (
            "generation-65535",
            &wordcount,
            wc,
            |i| i.meta.generation = 65_535,
            "_metadata",
            "`generation`: 65535",
        ),
        (
            "id-max",
            &wordcount,
            wc,
            |i| i.meta.id = u64::MAX,
            "_metadata",
            "`id`",
        ),
        (
            "max-parallelism-0",
            &wordcount,
            wc,
            |i| i.meta.max_parallelism = 0,
            "_metadata",
            "`max_parallelism`",
        ),
        (
            "parallelism-0",
            &wordcount,
            wc,
            |i| i.operators[2].parallelism = 0,
            "_metadata",
            "`operators[2].parallelism`",
        ),
        (
            "operator-twice",
            &wordcount,
            wc,
            |i| {
                let o = i.operators[2].clone();
                i.operators.push(o)
            },
            "_metadata",
            "`operators[4].uid`",
        ),
        (
            "source-partitions-0",
            &wordcount,
            wc,
            |i| i.meta.sources[0].partitions = 0,
            "_metadata",
            "`sources[0].partitions`",
        ),
        (
            "algorithm",
            &wordcount,
            wc,
            |i| i.meta.algorithm = "fastest".into(),
            "_metadata",
            "`algorithm`",
        ),
        (
            "kind-of-state",
            &wordcount,
            wc,
            |i| i.operators[2].kind = "map".into(),
            "count.state",
            "`state`: holds keyed state, but a map operator's is no",
        ),
        (
            "key-group-beyond",
            &wordcount,
            wc,
            |i| keyed(i).push((200, vec![])),
            "count.state",
            "key group 200 is not below max_parallelism 128",
        ),
        (
            "key-in-another-group",
            &wordcount,
            wc,
            |i| keyed(i)[0].1[0].0 += 1,
            "count.state",
            "`key_groups[0].entries[0]`",
        ),
        (
            "offset-past-end",
            &wordcount,
            wc,
            |i| offsets(i)[0].1 = 1_000_000,
            "source.state",
            "`offsets[0]`: offset 1000000 is past the end",
        ),
        (
            "no-such-partition",
            &wordcount,
            wc,
            |i| offsets(i).push((99, 0)),
            "source.state",
            "partition 99 is not one of",
        ),
        (
            "partition-twice",
            &wordcount,
            wc,
            |i| {
                let o = offsets(i);
                o.push(o[0])
            },
            "source.state",
            "is listed twice",
        ),
        (
            "store-emptied",
            &wordcount,
            wc,
            |i| i.store = ExternalStore::default(),
            "sink.state",
            "which the external store does not hold",
        ),
        (
            "channel-subtask",
            &rescale,
            rs,
            |i| i.channels[0].to_subtask = 99,
            "channels.state",
            "`[0].to_subtask`",
        ),
        (
            "channel-operator",
            &rescale,
            rs,
            |i| i.channels[0].to = "ghost".into(),
            "channels.state",
            "`[0].to`",
        ),
        (
            "channel-lineage",
            &rescale,
            rs,
            |i| i.channels[0].records[0].lineage.partition = 1_000,
            "channels.state",
            "`[0].records[0]`: lineage names partition 1000",
        ),
    ];
    for (name, original, scenario, edit, file, field) in cases {
        let mut image = original.clone();
        edit(&mut image);
        let dir = temp(name);
        write_dir(&dir, &image).unwrap();
        refused(&dir, scenario, file, field);
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::remove_dir_all(sp).unwrap();
    std::fs::remove_dir_all(chk.parent().unwrap()).unwrap();
}

/// A copy of a snapshot directory.
fn copy(from: &Path, name: &str) -> PathBuf {
    let to = temp(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    to
}

/// `_metadata` edited and signed again as the writer signs it.
pub(crate) fn resign(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join("_metadata");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    v["metadata_blake3"] = "".into();
    let hash = blake3::hash(serde_json::to_string(&v).unwrap().as_bytes());
    v["metadata_blake3"] = hash.to_hex().to_string().into();
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn edited_metadata_fifos_and_devices_are_refused() {
    let (sp, chk) = originals("edited");
    let wc = "scenarios/wordcount.toml";

    // An edit without the checksum: the metadata's own checksum refuses it.
    let dir = copy(&sp, "edited");
    let meta = dir.join("_metadata");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(
        &meta,
        text.replace("\"generation\": 0", "\"generation\": 1"),
    )
    .unwrap();
    refused(
        &dir,
        wc,
        "_metadata",
        "`metadata_blake3`: checksum mismatch",
    );

    // Signed again, it is refused by what it says: an operator pointed at
    // another one's state file (same size and checksum as that file).
    let dir = copy(&sp, "pointed");
    resign(&dir, |v| {
        let source = v["operators"][0].clone();
        for key in ["file", "bytes", "blake3"] {
            v["operators"][2][key] = source[key].clone();
        }
    });
    refused(&dir, wc, "_metadata", "`operators[2].file`: `source.state`");

    // A FIFO never blocks the restore, a device is never read.
    #[cfg(unix)]
    {
        let dir = copy(&sp, "fifo");
        let state = dir.join("count.state");
        std::fs::remove_file(&state).unwrap();
        let made = Command::new("mkfifo").arg(&state).status().unwrap();
        assert!(made.success());
        refused(&dir, wc, "count.state", "not a regular file");

        let dir = copy(&sp, "device");
        let state = dir.join("count.state");
        std::fs::remove_file(&state).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &state).unwrap();
        refused(&dir, wc, "count.state", "not a regular file");

        let dir = copy(&sp, "metadata-device");
        std::fs::remove_file(dir.join("_metadata")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join("_metadata")).unwrap();
        refused(&dir, wc, "_metadata", "not a regular file");
    }
    for name in ["edited", "pointed", "fifo", "device", "metadata-device"] {
        let _ = std::fs::remove_dir_all(temp(name));
    }
    std::fs::remove_dir_all(sp).unwrap();
    std::fs::remove_dir_all(chk.parent().unwrap()).unwrap();
}

#[test]
fn verify_snapshot_checks_a_good_directory_and_its_restore() {
    let (sp, chk) = originals("good");
    let o = ckptsim(&["verify-snapshot", sp.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.starts_with("savepoint 4 of job `wordcount` (aligned), generation 0"),
        "{out}"
    );
    assert!(
        out.contains("every file, checksum and value checked"),
        "{out}"
    );
    let o = ckptsim(&[
        "verify-snapshot",
        chk.to_str().unwrap(),
        "--scenario",
        "scenarios/rescale.toml",
        "--parallelism",
        "count=3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("can restore from it"), "{out}");
    assert!(out.contains("in-flight records restored"), "{out}");
    // The job's own refusal (another max parallelism) is exit 2 too.
    let o = ckptsim(&[
        "verify-snapshot",
        sp.to_str().unwrap(),
        "--scenario",
        "scenarios/rescale.toml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::remove_dir_all(sp).unwrap();
    std::fs::remove_dir_all(chk.parent().unwrap()).unwrap();
}
