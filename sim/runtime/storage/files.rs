//! The storage's files and what the judge records of them (a leaf:
//! `mod.rs` has the mechanism).

use super::log::{self, FileId};
use super::physical::{PhysicalId, PhysicalLeak};
use crate::engine::SimTime;
use crate::model::{CheckpointId, TaskId};
use serde::Serialize;
use std::rc::Rc;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// A task's operator state, written whole.
    State,
    /// An immutable run of key groups (`incremental`), shared by later
    /// checkpoints.
    Run,
    /// A task's channel state.
    Channel,
    /// A segment of a task's changelog (`changelog`), shared by later
    /// checkpoints until a materialization covers it.
    Changelog,
    /// A materialization's state (`changelog`), shared by the checkpoints
    /// that build on it; its `checkpoint` is the materialization id.
    Materialized,
}

impl FileKind {
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::State => "operator-state file",
            FileKind::Run => "shared run",
            FileKind::Channel => "channel-state file",
            FileKind::Changelog => "changelog segment",
            FileKind::Materialized => "materialized state",
        }
    }

    /// Shared between checkpoints: managed by the shared-state registry.
    pub fn shared(self) -> bool {
        matches!(
            self,
            FileKind::Run | FileKind::Changelog | FileKind::Materialized
        )
    }
}

/// One key group's bytes in a run: `(member, key group)` and its encoding.
pub(super) type Group = ((u32, u32), Rc<[u8]>);

/// A file in the checkpoint storage.
#[derive(Clone, Debug)]
pub struct StoredFile {
    pub kind: FileKind,
    pub task: TaskId,
    /// The checkpoint (or savepoint) it was written for.
    pub checkpoint: CheckpointId,
    pub bytes: u64,
    /// When it was synced: durable from then on (`None`: never).
    pub synced_at: Option<SimTime>,
    pub deleted_at: Option<SimTime>,
    pub lost_at: Option<SimTime>,
    /// A savepoint's: owned by the user, never deleted by the job.
    pub user_owned: bool,
    /// Left behind by a coordinator failover: written for a checkpoint the
    /// new coordinator does not know (Flink deletes no such file).
    pub orphaned: bool,
    /// Entered the shared-state registry once (a shared file): from then
    /// on a reference to it the registry does not hold is refused.
    pub registered: bool,
    /// The checkpoint whose acknowledgement registered it first.
    pub created_by: Option<CheckpointId>,
    /// A run's or a materialization's key groups.
    pub(super) groups: Vec<Group>,
    /// A changelog segment's entries.
    pub(super) log: Vec<log::LogEntry>,
    /// File merging: the physical file holding it as a segment.
    pub physical: Option<PhysicalId>,
    /// File merging: the coordinator's side discarded it (its bytes stay
    /// until its physical file goes).
    pub discarded: bool,
    /// ... while its task's manager did not track it.
    pub untracked: bool,
}

impl StoredFile {
    pub(super) fn new(
        kind: FileKind,
        task: TaskId,
        checkpoint: CheckpointId,
        bytes: u64,
    ) -> StoredFile {
        StoredFile {
            kind,
            task,
            checkpoint,
            bytes,
            synced_at: None,
            deleted_at: None,
            lost_at: None,
            user_owned: false,
            orphaned: false,
            registered: false,
            created_by: None,
            groups: Vec::new(),
            log: Vec::new(),
            physical: None,
            discarded: false,
            untracked: false,
        }
    }

    /// Written for checkpoint `id` (a materialization is written for none).
    pub(super) fn written_for(&self, id: CheckpointId) -> bool {
        self.kind != FileKind::Materialized && self.checkpoint == id
    }

    pub(super) fn gone(&self) -> Option<(SimTime, &'static str)> {
        match (self.deleted_at, self.lost_at) {
            (Some(t), _) => Some((t, "deleted")),
            (None, Some(t)) => Some((t, "lost in a storage crash")),
            (None, None) => None,
        }
    }
}

/// One file the judge found in a wrong place, for the messages.
#[derive(Clone, Debug, Serialize)]
pub struct FileFinding {
    pub time_ns: u64,
    /// The checkpoint concerned (completed, retained, restored).
    pub checkpoint: CheckpointId,
    pub file: FileId,
    pub kind: FileKind,
    pub task: TaskId,
    /// The checkpoint the file was written for.
    pub written_for: CheckpointId,
    /// When it was synced, deleted or lost, if it was.
    pub at_ns: Option<u64>,
    /// What happened to it ("deleted", "lost in a storage crash",
    /// "not synced").
    pub what: &'static str,
}

impl FileFinding {
    /// File `f` (`file`) seen at `now` from `checkpoint`'s side (by task
    /// `task`): synced, deleted or lost at `at`, `what` happened to it.
    pub(super) fn new(
        now: SimTime,
        checkpoint: CheckpointId,
        (f, file): (FileId, &StoredFile),
        task: TaskId,
        at: Option<SimTime>,
        what: &'static str,
    ) -> FileFinding {
        FileFinding {
            time_ns: now.0,
            checkpoint,
            file: f,
            kind: file.kind,
            task,
            written_for: file.checkpoint,
            at_ns: at.map(|s| s.0),
            what,
        }
    }
}

/// What the storage saw, for the checkpoint-files check.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StorageEvidence {
    /// Completed checkpoints that referred to a file not durable at their
    /// completion (the first few).
    pub not_durable: Vec<FileFinding>,
    /// Files deleted while a retained checkpoint or savepoint referred to
    /// them.
    pub deleted_referenced: Vec<FileFinding>,
    /// Restores that needed a file that was gone.
    pub restore_missing: Vec<FileFinding>,
    /// Completed checkpoints that referred to a file the job does not own
    /// (a savepoint's, or a snapshot's restored in `NO_CLAIM` mode).
    pub unowned: Vec<FileFinding>,
    /// Files of a snapshot the job started from (`files_imported`).
    pub files_restored: u64,
    /// Files in storage at the end that nothing retained refers to.
    pub leaked: Vec<FileFinding>,
    pub leaked_count: u64,
    pub leaked_bytes: u64,
    pub files_written: u64,
    pub runs_written: u64,
    /// References of a snapshot to a run an earlier checkpoint wrote.
    pub runs_reused: u64,
    pub compactions: u64,
    pub files_deleted: u64,
    pub runs_deleted: u64,
    pub references_checked: u64,
    /// Acknowledgements refused for referring to a run the registry no
    /// longer holds (the checkpoint fails).
    pub acks_refused: u64,
    pub storage_crashes: u64,
    pub files_lost: u64,
    pub restores_from_files: u64,
    /// Files left behind by coordinator failovers, and segments a lost
    /// file-merging manager tracked that no restore handed to the new one
    /// (not judged as leaks: Flink's new coordinator or manager knows
    /// nothing of them).
    pub files_orphaned: u64,
    /// Files in storage at the end of the run.
    pub files_at_end: u64,
    pub bytes_at_end: u64,
    /// Bytes written into files over the run.
    pub bytes_written: u64,
    /// `changelog`: entries logged, segments written and referred to again,
    /// the longest tail of a snapshot (entries, bytes), materializations.
    pub changelog_entries: u64,
    pub segments_written: u64,
    pub segments_reused: u64,
    pub max_tail_entries: u64,
    pub max_tail_bytes: u64,
    pub materializations_started: u64,
    pub materializations_done: u64,
    pub materializations_failed: u64,
    pub materializations_skipped: u64,
    /// Triggers that skipped a materialization while the judge saw nothing
    /// hold it back (the first few), and their count.
    pub changelog_stopped: Vec<log::Stopped>,
    pub changelog_stopped_count: u64,
    /// File merging: physical files opened, segments written into a file
    /// holding one already (and into one an earlier checkpoint opened),
    /// segments discarded, physical files deleted, segments a new manager
    /// re-registered at a restore, physical files leaked (the first few).
    pub physical_files: u64,
    pub segments_merged: u64,
    pub physical_reused_across: u64,
    pub segments_discarded: u64,
    pub physical_deleted: u64,
    pub segments_restored: u64,
    pub physical_leaked: u64,
    pub leaked_physical: Vec<PhysicalLeak>,
}

/// Findings of one kind kept for the messages; the rest are counted.
pub(super) const KEPT: usize = 5;

pub(super) fn keep(list: &mut Vec<FileFinding>, f: FileFinding) {
    if list.len() < KEPT {
        list.push(f);
    }
}
