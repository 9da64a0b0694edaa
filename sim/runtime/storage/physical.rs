//! File merging's data (a leaf: `merging.rs` has the mechanism): the
//! physical files that hold several logical files as segments (Flink's
//! `PhysicalFile` and `LogicalFile`, FLIP-306), a task's pool of them and
//! its file-merging manager's tracking.

use super::log::FileId;
use crate::engine::SimTime;
use crate::model::{CheckpointId, TaskId};
use serde::Serialize;
use std::collections::BTreeSet;

/// A physical file's index in the storage's physical files.
pub type PhysicalId = u32;

/// How snapshots merge their files (`[checkpoint] file_merging`).
#[derive(Clone, Copy, Debug)]
pub struct MergingConfig {
    /// Segments of later checkpoints may go into a file an earlier one
    /// opened (`across-checkpoint-boundary`).
    pub across_checkpoints: bool,
    /// A physical file takes no segment that would make it larger.
    pub max_file_size: u64,
}

/// A physical file in the checkpoint storage holding logical files as
/// segments, one after another.
#[derive(Clone, Debug)]
pub struct Physical {
    /// The subtask whose pool it belongs to.
    pub task: TaskId,
    /// What shares it: keyed runs, operator state or channel state.
    pub lane: u8,
    /// The checkpoint whose snapshot opened it.
    pub opened_for: CheckpointId,
    pub bytes: u64,
    /// Its segments (logical files), in writing order.
    pub segments: Vec<FileId>,
    /// Segments the owner's manager tracks and has not discarded (Flink's
    /// `PhysicalFile` reference count).
    pub live: u32,
    /// In its task's pool, taking new segments.
    pub open: bool,
    /// May take new segments: not a restored file (FLINK-35803).
    pub reusable: bool,
    pub deleted_at: Option<SimTime>,
    /// Holds a snapshot restored in `NO_CLAIM` mode: the user's.
    pub user_owned: bool,
}

/// A task's side of file merging: the open physical files new segments go
/// into, and the logical files its manager tracks (Flink's
/// `FileMergingSnapshotManager`, which decides their physical files'
/// deletion: the coordinator's discard of a segment handle does nothing).
#[derive(Clone, Debug, Default)]
pub(super) struct Manager {
    pub(super) pool: Vec<PhysicalId>,
    pub(super) tracked: BTreeSet<FileId>,
    /// Its worker was replaced: the next restore starts a new one.
    pub(super) lost: bool,
}

/// Mutants of file merging: `(append_uncounted, skip_channel, reuse)`:
/// `merged-append-uncounted`, `merged-channel-state-not-restored`,
/// `restored-physical-file-reused`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MergingBugs {
    pub append_uncounted: bool,
    pub skip_channel: bool,
    pub reuse_restored: bool,
}

/// A physical file left in storage at the end that no retained checkpoint
/// or savepoint needs.
#[derive(Clone, Debug, Serialize)]
pub struct PhysicalLeak {
    pub time_ns: u64,
    pub physical: PhysicalId,
    pub task: TaskId,
    pub opened_for: CheckpointId,
    pub segments: u32,
    pub bytes: u64,
    /// Its segments discarded while the task's manager did not track them
    /// (never re-registered after a restore).
    pub untracked: u32,
}
