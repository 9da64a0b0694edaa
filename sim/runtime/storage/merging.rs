//! File merging (Flink's unified checkpoint file merging, FLIP-306; its
//! data in the leaf `physical.rs`): the files of a task's snapshots go as
//! segments into shared physical files, and the physical files live as
//! long as a segment in them is in use.
//!
//! As Flink's `FileMergingSnapshotManagerBase` does it:
//!
//! - **Pools.** Each subtask keeps open physical files per lane: its keyed
//!   runs (`SHARED` scope), its operator state (`EXCLUSIVE` scope) and its
//!   channel state (the channel-state writer's own stream: with the
//!   non-blocking pool, streams open at the same time never share a file).
//!   A segment goes into the newest open file of its lane that has room
//!   (`max-file-size`) and was opened for the same checkpoint, or any
//!   earlier one with `across-checkpoint-boundary`; else into a new file.
//! - **Reference counts.** A physical file counts the segments its task's
//!   manager tracks and has not discarded; the coordinator's discard of a
//!   segment handle does nothing (`SegmentFileStateHandle.discardState` is
//!   empty): the manager discards the segment, and deletes the physical
//!   file when its count falls to zero. The manager discards a segment
//!   when the registry or a subsumption or abort would delete the file
//!   (Flink's manager decides the same from the notifications it gets).
//! - **Durability.** A sync of a segment is an fsync of its physical file:
//!   every segment written into it before is durable from then on too.
//! - **Restore.** A task whose manager is new (its worker was replaced,
//!   or the job started from a snapshot) re-registers the restored
//!   snapshot's segments (`restoreStateHandles`: keyed, operator and
//!   channel state, FLINK-39977), and a restored physical file takes no
//!   new segment (FLINK-35803). The segments the old manager tracked that
//!   the restored snapshot does not refer to are no one's any more
//!   (orphaned, like a failed-over coordinator's files).
//!
//! Savepoints and the changelog backend's files are not merged (a
//! savepoint is self-contained; the changelog has its own storage).

use super::log::FileId;
use super::physical::{Manager, MergingBugs, MergingConfig, Physical, PhysicalId, PhysicalLeak};
use super::{FileKind, Handle, Storage};
use crate::engine::SimTime;
use crate::model::TaskId;
use crate::mutant::{fired, Mutant};

/// A lane of a task's pool: what may share a physical file.
fn lane(kind: FileKind) -> Option<u8> {
    match kind {
        FileKind::Run => Some(0),
        FileKind::State => Some(1),
        FileKind::Channel => Some(2),
        FileKind::Changelog | FileKind::Materialized => None,
    }
}

impl Storage {
    /// Switches file merging on (`None`: every file a physical file of its
    /// own), with the mutants `bugs`.
    pub fn set_merging(&mut self, cfg: Option<MergingConfig>, bugs: MergingBugs) {
        self.merging = cfg;
        self.merging_bugs = bugs;
        self.managers = vec![Manager::default(); self.backends.len()];
    }

    /// Whether snapshots merge their files.
    pub fn merges(&self) -> bool {
        self.merging.is_some()
    }

    /// Logical file `f`, just written (not for a savepoint), goes as a
    /// segment into a physical file of its task's pool.
    pub(super) fn merge(&mut self, f: FileId) {
        let Some(cfg) = self.merging else {
            return;
        };
        let file = &self.files[f as usize];
        let Some(lane) = lane(file.kind) else {
            return;
        };
        let (t, id, bytes) = (file.task, file.checkpoint, file.bytes);
        let physical = &self.physical;
        let usable =
            |p: &Physical| p.open && p.reusable && (cfg.across_checkpoints || p.opened_for == id);
        // Files no later segment may go into leave the pool (closed).
        let m = &mut self.managers[t as usize];
        let (keep, closed): (Vec<PhysicalId>, Vec<PhysicalId>) = m
            .pool
            .iter()
            .partition(|&&p| usable(&physical[p as usize]) || physical[p as usize].lane != lane);
        m.pool = keep;
        for p in closed {
            self.close(p);
        }
        let m = &self.managers[t as usize];
        let found = m.pool.iter().rev().copied().find(|&p| {
            let p = &self.physical[p as usize];
            p.lane == lane && (p.bytes == 0 || p.bytes + bytes <= cfg.max_file_size)
        });
        let p = match found {
            Some(p) => {
                self.evidence.segments_merged += 1;
                if self.physical[p as usize].opened_for < id {
                    self.evidence.physical_reused_across += 1;
                }
                p
            }
            None => {
                self.physical.push(Physical {
                    task: t,
                    lane,
                    opened_for: id,
                    bytes: 0,
                    segments: Vec::new(),
                    live: 0,
                    open: true,
                    reusable: true,
                    deleted_at: None,
                    user_owned: false,
                });
                self.evidence.physical_files += 1;
                let p = self.physical.len() as PhysicalId - 1;
                self.managers[t as usize].pool.push(p);
                p
            }
        };
        let ph = &mut self.physical[p as usize];
        let appended = !ph.segments.is_empty();
        ph.bytes += bytes;
        ph.segments.push(f);
        if appended && self.merging_bugs.append_uncounted {
            // Mutant: the segment appended to a file in use is not counted.
            fired(Mutant::MergedAppendUncounted);
        } else {
            ph.live += 1;
        }
        self.files[f as usize].physical = Some(p);
        self.managers[t as usize].tracked.insert(f);
    }

    /// Physical file `p` takes no more segments; with none in use it goes.
    fn close(&mut self, p: PhysicalId) {
        self.physical[p as usize].open = false;
    }

    /// A sync of merged file `f` at `at` is an fsync of its physical file:
    /// every segment written into it before is durable from then on.
    pub(super) fn sync_physical(&mut self, f: FileId, at: SimTime) {
        let Some(p) = self.files[f as usize].physical else {
            return;
        };
        let segments = self.physical[p as usize].segments.clone();
        for s in segments.into_iter().take_while(|&s| s != f) {
            let seg = &mut self.files[s as usize];
            if seg.synced_at.is_none_or(|x| x > at) {
                seg.synced_at = Some(at);
            }
        }
    }

    /// The coordinator's side discarded merged file `f` at `now`: its
    /// manager discards the segment if it tracks it, and deletes the
    /// physical file once no segment in it is in use. Returns false for a
    /// file that is not merged (deleted as a file of its own).
    pub(super) fn discard_segment(&mut self, now: SimTime, f: FileId) -> bool {
        let Some(p) = self.files[f as usize].physical else {
            return false;
        };
        let file = &mut self.files[f as usize];
        if file.discarded {
            return true;
        }
        file.discarded = true;
        self.evidence.segments_discarded += 1;
        let t = file.task as usize;
        if !self.managers[t].tracked.remove(&f) {
            // Not the manager's: its physical file never learns of it.
            self.files[f as usize].untracked = true;
            return true;
        }
        let ph = &mut self.physical[p as usize];
        ph.live = ph.live.saturating_sub(1);
        if ph.live == 0 && !ph.user_owned && ph.deleted_at.is_none() {
            ph.deleted_at = Some(now);
            ph.open = false;
            self.evidence.physical_deleted += 1;
            for s in self.physical[p as usize].segments.clone() {
                self.delete_bytes(now, s);
            }
        }
        true
    }

    /// Task `t`'s worker was replaced: its file-merging manager is gone,
    /// the next restore starts a new one.
    pub fn manager_lost(&mut self, t: TaskId) {
        if self.merges() {
            self.managers[t as usize].lost = true;
        }
    }

    /// Task `t` restores `h` (`None`: from scratch): a new manager
    /// re-registers the snapshot's segments; an old one goes on.
    pub(super) fn merging_restarted(&mut self, t: TaskId, h: Option<&Handle>) {
        if !self.merges() || !self.managers[t as usize].lost {
            return;
        }
        let restored: Vec<FileId> = h.map_or(Vec::new(), |h| h.files.clone());
        self.new_manager(t, &restored);
    }

    /// Task `t` gets a new manager, which re-registers the segments of a
    /// restored snapshot (`restored`).
    pub(super) fn new_manager(&mut self, t: TaskId, restored: &[FileId]) {
        let MergingBugs {
            skip_channel,
            reuse_restored: reuse,
            ..
        } = self.merging_bugs;
        let old = std::mem::take(&mut self.managers[t as usize]);
        for p in old.pool {
            self.close(p);
        }
        for f in old.tracked {
            if !restored.contains(&f) && !self.files[f as usize].orphaned {
                self.files[f as usize].orphaned = true;
                self.evidence.files_orphaned += 1;
            }
        }
        let mut touched: Vec<PhysicalId> = Vec::new();
        for &f in restored {
            let file = &self.files[f as usize];
            let Some(p) = file.physical.filter(|_| !file.discarded) else {
                continue;
            };
            if file.kind == FileKind::Channel && skip_channel {
                // Mutant: channel-state handles are not restored into the
                // new manager.
                fired(Mutant::MergedChannelStateNotRestored);
                continue;
            }
            self.managers[t as usize].tracked.insert(f);
            self.evidence.segments_restored += 1;
            if !touched.contains(&p) {
                touched.push(p);
            }
        }
        for p in touched {
            let live = self.physical[p as usize]
                .segments
                .iter()
                .filter(|s| self.managers[t as usize].tracked.contains(s))
                .count() as u32;
            let ph = &mut self.physical[p as usize];
            ph.live = live;
            if reuse && ph.deleted_at.is_none() {
                // Mutant: a restored physical file stays open for new
                // segments.
                fired(Mutant::RestoredPhysicalFileReused);
                ph.open = true;
                ph.reusable = true;
                self.managers[t as usize].pool.push(p);
            } else {
                ph.open = false;
                ph.reusable = false;
            }
        }
    }

    /// A snapshot's files restored in `NO_CLAIM` mode are the user's, and
    /// so are the physical files that hold them.
    pub(super) fn physical_user_owned(&mut self, files: &[FileId]) {
        for &f in files {
            if let Some(p) = self.files[f as usize].physical {
                self.physical[p as usize].user_owned = true;
            }
        }
    }

    /// Whether merged file `f` lies in a physical file the job does not
    /// own while it is the job's own.
    pub(super) fn in_unowned_physical(&self, f: FileId) -> bool {
        let file = &self.files[f as usize];
        !file.user_owned
            && file
                .physical
                .is_some_and(|p| self.physical[p as usize].user_owned)
    }

    /// The end of the run at `now`: a physical file still in storage none
    /// of whose segments is needed (`needed`, by file) is leaked.
    pub(super) fn physical_end(&mut self, now: SimTime, needed: &[bool]) {
        for (i, ph) in self.physical.iter().enumerate() {
            if ph.deleted_at.is_some() || ph.user_owned {
                continue;
            }
            if ph.segments.iter().any(|&s| needed[s as usize]) {
                continue;
            }
            self.evidence.physical_leaked += 1;
            self.evidence.leaked_bytes += ph.bytes;
            if self.evidence.leaked_physical.len() < 5 {
                self.evidence.leaked_physical.push(PhysicalLeak {
                    time_ns: now.0,
                    physical: i as PhysicalId,
                    task: ph.task,
                    opened_for: ph.opened_for,
                    segments: ph.segments.len() as u32,
                    bytes: ph.bytes,
                    untracked: ph
                        .segments
                        .iter()
                        .filter(|&&s| self.files[s as usize].untracked)
                        .count() as u32,
                });
            }
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const MergedChannelStateNotRestored: Mutant = Mutant::declare(&MutantInfo {
            name: "merged-channel-state-not-restored",
            part: "file merging",
            what: "a new file-merging manager (the task's worker replaced) re-registers the restored snapshot's keyed and operator state segments but not its channel-state segments: their physical files are never counted again, and nothing deletes them once the restored checkpoint is subsumed",
            modelled_on: "FLINK-39977: during recovery the file-merging snapshot manager restored keyed and operator state handles but ignored channel state handles, so merged files referenced by input channel and output buffer state were not tracked, and obsolete merged files were not cleaned up",
            caught_by: "checkpoint-files",
            applies: &[("file-merging", "unaligned")],
        });
        pub const RestoredPhysicalFileReused: Mutant = Mutant::declare(&MutantInfo {
            name: "restored-physical-file-reused",
            part: "file merging",
            what: "a physical file of a restored snapshot stays open for new segments: after a NO_CLAIM restore the job's new checkpoints write into files the user owns and may delete",
            modelled_on: "FLINK-35803: with file merging, physical files restored from an earlier job were reused by later checkpoints; the fix marks every physical file created or referenced during recovery as not reusable",
            caught_by: "checkpoint-files",
            applies: &[("file-merging", "aligned")],
        });
        pub const MergedAppendUncounted: Mutant = Mutant::declare(&MutantInfo {
            name: "merged-append-uncounted",
            part: "file merging",
            what: "a segment appended to a physical file that already holds one does not raise the file's reference count: the file is deleted once its first segments are discarded, while a later checkpoint still refers to the segment appended",
            modelled_on: "reference-counting bugs of merged files (FLIP-306's PhysicalFile counts its logical files; FLINK-35379 fixed a manager that propagated one checkpoint's discard to files others still used)",
            caught_by: "checkpoint-files",
            applies: &[("file-merging", "aligned")],
        });
    }
}
