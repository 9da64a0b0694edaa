//! The changelog backend's data (a leaf: `changelog.rs` has the
//! mechanism): a task's log, its materializations and the judge's account
//! of them.

use crate::engine::SimTime;
use crate::model::{CheckpointId, TaskId};
use serde::Serialize;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A file's index in the storage's files.
pub type FileId = u32;

/// One entry of the log: its sequence number, `(member, key group)`, the
/// key group's bytes after the change (empty: the key group emptied) and
/// the bytes the entry costs in the log: the changed keys' (`changed_bytes`;
/// the group travels whole so that a replay is exact).
pub type LogEntry = (u64, (u32, u32), Rc<[u8]>, u64);

/// Bytes an entry costs beyond its key group's bytes (its sequence number
/// and key).
const ENTRY_OVERHEAD: u64 = 12;

/// A materialization: its id, the sequence number it reaches (exclusive),
/// its file and the state it holds.
#[derive(Clone, Debug, Default)]
pub(super) struct Materialization {
    pub(super) id: u64,
    pub(super) up_to: u64,
    pub(super) file: Option<FileId>,
    pub(super) groups: BTreeMap<(u32, u32), Rc<[u8]>>,
}

/// A task's changelog backend.
#[derive(Clone, Debug, Default)]
pub(super) struct Changelog {
    pub(super) next_sqn: u64,
    /// The log in memory, from the base's `upTo` on, in sequence order.
    pub(super) entries: Vec<LogEntry>,
    /// Per key group, the bytes last logged (or materialized).
    pub(super) logged: BTreeMap<(u32, u32), Rc<[u8]>>,
    pub(super) base: Materialization,
    /// The segments of the last confirmed snapshot's tail, and the
    /// sequence number it reached.
    pub(super) confirmed: Vec<FileId>,
    pub(super) confirmed_to: u64,
    /// Per snapshot not confirmed yet: its tail's segments and end.
    pub(super) uploads: BTreeMap<CheckpointId, (Vec<FileId>, u64)>,
    /// The next materialization id (Flink's `materializedId`, from 1 here).
    pub(super) next_id: u64,
    pub(super) last_confirmed: u64,
    pub(super) last_failed: u64,
    pub(super) by_checkpoint: BTreeMap<CheckpointId, u64>,
    /// A materialization whose file is being written.
    pub(super) running: Option<Materialization>,
    pub(super) judge: Judge,
}

/// The judge's view of one task's materialization: since when nothing
/// holds it back (the last one it saw start is in a confirmed checkpoint
/// or failed, or the task started), and since when there is something to
/// materialize.
#[derive(Clone, Debug, Default)]
pub(super) struct Judge {
    pub(super) open_since: Option<SimTime>,
    pub(super) grown_at: Option<SimTime>,
    /// The base id of the latest materialization it saw complete.
    pub(super) completed: u64,
}

/// What a materialization trigger did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Started: the id, its file and the bytes to write.
    Started { id: u64, file: FileId, bytes: u64 },
    /// Nothing was logged since the last one.
    NoChanges,
    /// The last one is neither confirmed nor failed.
    Unconfirmed,
}

/// A task whose materialization stopped while the judge saw nothing hold
/// it back, for the messages.
#[derive(Clone, Debug, Serialize)]
pub struct Stopped {
    pub time_ns: u64,
    pub task: TaskId,
    /// Since when nothing held it back.
    pub open_since_ns: u64,
    /// Log entries beyond the base then, and their bytes.
    pub entries: u64,
    pub bytes: u64,
    /// The materialization the task's checkpoints still build on.
    pub base: u64,
}

impl Changelog {
    pub(super) fn new() -> Changelog {
        Changelog {
            next_id: 1,
            judge: Judge {
                open_since: Some(SimTime(0)),
                ..Judge::default()
            },
            ..Changelog::default()
        }
    }

    pub(super) fn tail(&self) -> (u64, u64) {
        let t = self.entries.iter().filter(|e| e.0 >= self.base.up_to);
        t.fold((0, 0), |(n, b), e| (n + 1, b + entry_bytes(e)))
    }

    /// The judge's view after the log or the base changed at `now`.
    pub(super) fn judge_grown(&mut self, now: SimTime) {
        if self.judge.open_since.is_some()
            && self.judge.grown_at.is_none()
            && self.next_sqn > self.base.up_to
        {
            self.judge.grown_at = Some(now);
        }
    }

    pub(super) fn judge_open(&mut self, now: SimTime) {
        self.judge.open_since = Some(now);
        self.judge.grown_at = None;
        self.judge_grown(now);
    }
}

pub(super) fn entry_bytes(e: &LogEntry) -> u64 {
    e.3 + ENTRY_OVERHEAD
}

/// `groups` with the entries of `log` at or above `from` applied in
/// sequence order.
pub(super) fn replay<'a>(
    groups: &mut BTreeMap<(u32, u32), Rc<[u8]>>,
    log: impl Iterator<Item = &'a LogEntry>,
    from: u64,
) {
    let mut entries: Vec<&LogEntry> = log.filter(|e| e.0 >= from).collect();
    entries.sort_by_key(|e| e.0);
    entries.dedup_by_key(|e| e.0);
    for (_, key, bytes, _) in entries {
        match bytes.is_empty() {
            true => groups.remove(key),
            false => groups.insert(*key, bytes.clone()),
        };
    }
}
