//! The storage's files, registry and incremental backend, without a run.

use super::*;
use crate::model::operator::{keyed_byte_state, keyed_state};

fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

#[test]
fn a_keyed_snapshot_splits_into_its_key_groups_and_joins_back() {
    let state = keyed_state(vec![(3, vec![(1, -5), (9, 300)]), (7, vec![(2, 1)])]);
    let groups = split_groups(&state, KeyedLayout::Pairs).unwrap();
    assert_eq!(groups.iter().map(|g| g.0).collect::<Vec<_>>(), [3, 7]);
    let parts: Vec<Rc<[u8]>> = groups.iter().map(|g| Rc::from(g.1)).collect();
    assert_eq!(join_groups(&parts), state);
    let bytes = keyed_byte_state(vec![(1, vec![9, 9, 9]), (4, vec![])]);
    let groups = split_groups(&bytes, KeyedLayout::Bytes).unwrap();
    assert_eq!(groups.len(), 2);
    let parts: Vec<Rc<[u8]>> = groups.iter().map(|g| Rc::from(g.1)).collect();
    assert_eq!(join_groups(&parts), bytes);
    // Not such a snapshot: not split.
    assert!(split_groups(&[5, 1], KeyedLayout::Pairs).is_none());
    assert!(split_groups(&bytes[..bytes.len() - 1], KeyedLayout::Bytes).is_none());
}

fn write(s: &mut Storage, id: CheckpointId, state: &[u8], max_runs: u32) -> Vec<FileId> {
    s.write_snapshot(&Write {
        task: 0,
        id,
        states: &[state.to_vec()],
        in_flight_bytes: 0,
        synced_at: Some(t(id)),
        incremental: true,
        savepoint: false,
        max_runs,
        compaction_drops_oldest: false,
    })
}

/// Checkpoint 1 writes a run of both key groups; checkpoint 2 changes
/// one and writes a run of it only, sharing the first; a restore of 2
/// puts the state together from both; once 1 is subsumed the shared
/// run stays (2 uses it) and nothing is left that no one refers to.
#[test]
fn runs_are_shared_registered_and_deleted_when_unused() {
    let mut s = Storage::new(vec![vec![Some(KeyedLayout::Pairs)]]);
    let one = keyed_state(vec![(1, vec![(10, 1)]), (2, vec![(20, 1)])]);
    let two = keyed_state(vec![(1, vec![(10, 1)]), (2, vec![(20, 2)])]);
    let files1 = write(&mut s, 1, &one, 4);
    assert_eq!(files1.len(), 1);
    assert!(s.acknowledged(1, 0, true).is_ok());
    s.complete(t(1), 1, &[0]);
    s.unregister_unused(t(1), 1);
    s.confirm(0, 1);
    let files2 = write(&mut s, 2, &two, 4);
    assert_eq!(files2.len(), 2, "a new run and the shared one");
    assert!(files2.contains(&files1[0]));
    assert!(s.acknowledged(2, 0, true).is_ok());
    s.complete(t(2), 2, &[0]);
    s.subsumed(t(2), 1, &[0]);
    s.unregister_unused(t(2), 2);
    assert!(s.files[files1[0] as usize].deleted_at.is_none());
    assert_eq!(
        s.read(t(3), 2, 0, &[Vec::new()]).unwrap(),
        vec![two.clone()]
    );
    s.end(t(4), Some(2));
    assert!(s.evidence.leaked.is_empty() && s.evidence.deleted_referenced.is_empty());
    // The registry not moving the shared run's last use to 2 deletes
    // it while 2 refers to it.
    let mut s = Storage::new(vec![vec![Some(KeyedLayout::Pairs)]]);
    write(&mut s, 1, &one, 4);
    s.acknowledged(1, 0, false).unwrap();
    s.complete(t(1), 1, &[0]);
    s.confirm(0, 1);
    write(&mut s, 2, &two, 4);
    s.acknowledged(2, 0, false).unwrap();
    s.complete(t(2), 2, &[0]);
    s.subsumed(t(2), 1, &[0]);
    s.unregister_unused(t(2), 2);
    assert_eq!(s.evidence.deleted_referenced.len(), 1);
    assert!(s.read(t(3), 2, 0, &[Vec::new()]).is_err());
}

#[test]
fn past_max_runs_a_snapshot_writes_one_compacted_run() {
    let mut s = Storage::new(vec![vec![Some(KeyedLayout::Pairs)]]);
    for id in 1..=4 {
        // One key group more each time, the others unchanged.
        let groups = (1..=id as u32).map(|kg| (kg, vec![(u64::from(kg), i64::from(kg))]));
        let state = keyed_state(groups.collect());
        let files = write(&mut s, id, &state, 2);
        s.acknowledged(id, 0, true).unwrap();
        s.complete(t(id), id, &[0]);
        s.confirm(0, id);
        assert!(files.len() <= 2, "checkpoint {id}: {files:?}");
        assert_eq!(s.read(t(id), id, 0, &[Vec::new()]).unwrap(), vec![state]);
    }
    assert!(s.evidence.compactions > 0);
}

#[test]
fn a_storage_crash_loses_what_is_not_synced() {
    let mut s = Storage::new(vec![vec![None]]);
    let mut w = Write {
        task: 0,
        id: 1,
        states: &[vec![1, 2, 3]],
        in_flight_bytes: 8,
        synced_at: Some(t(5)),
        incremental: false,
        savepoint: false,
        max_runs: 4,
        compaction_drops_oldest: false,
    };
    let files = s.write_snapshot(&w);
    assert_eq!(files.len(), 2, "operator state and channel state");
    w.id = 2;
    w.synced_at = Some(t(2));
    s.write_snapshot(&w);
    assert_eq!(s.crash(t(3)), vec![1]);
    assert_eq!(s.evidence.files_lost, 2);
    // A file of checkpoint 1 completing now is not durable.
    s.complete(t(4), 1, &[0]);
    assert!(!s.evidence.not_durable.is_empty());
}
