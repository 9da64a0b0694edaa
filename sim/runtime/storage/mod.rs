//! Checkpoint storage as files, and the state backends that write them
//! (Flink's `FileSystemCheckpointStorage`, `SharedStateRegistry` and the
//! snapshot strategies of its state backends).
//!
//! With `filesystem` storage every acknowledged snapshot is made of files:
//! a task's operator state (written whole: the `hashmap` backend, and every
//! backend's non-keyed state), its channel state, and with the
//! `incremental` backend immutable **runs** of key groups that later
//! checkpoints refer to again. A file's write ends at a time and it is
//! durable from its sync on; a storage crash loses every file not synced.
//!
//! The lifecycle follows Flink's code:
//!
//! - **Completion** registers the checkpoint's runs in the shared-state
//!   registry, each with the newest checkpoint that uses it
//!   (`SharedStateRegistryImpl.registerReference`, `lastUsedCheckpointID`).
//! - **Subsumption** discards the checkpoint's own files (operator and
//!   channel state) and then every registered run whose newest user is
//!   older than the oldest retained checkpoint (`unregisterUnusedState`).
//! - **Abort** of a pending checkpoint discards what it wrote that no
//!   completed checkpoint registered: its own files and its new runs.
//! - **Savepoints** are self-contained (canonical format: whole state,
//!   nothing shared) and owned by the user: the job never deletes them.
//! - **The incremental backend** of each task bases a snapshot on the runs
//!   of the last checkpoint it was notified complete of (RocksDB's
//!   `lastCompletedCheckpointId` and its uploaded files), or of the
//!   checkpoint it was restored from: it writes one run with the key groups
//!   whose bytes differ, refers to the earlier runs for the rest, and past
//!   `max_runs` writes one compacted run instead.
//! - **A restore** reads its checkpoint's files: keyed state is put
//!   together from the runs (each key group from the run its handle names);
//!   a file deleted or lost makes the restore fail.
//! - **A coordinator failover** builds a new registry from the retained
//!   checkpoints (`registerAllAfterRestored`).
//! - **The changelog backend** (`changelog.rs`, its data in `log.rs`): a
//!   log of state changes uploaded as segments, periodic materialization.
//! - **A job started from a snapshot** has the snapshot's files written
//!   into its storage and registered (`imported`): under `CLAIM` the job
//!   owns them; under `NO_CLAIM` they stay the user's, are never deleted
//!   (`highestNotClaimedCheckpointID`) and nothing builds on them.
//!
//! Kept apart from the mechanism, the judge's own bookkeeping counts the
//! references of retained checkpoints and savepoints to each file, so that
//! a registry that deletes too early or too late is seen
//! (`check::checkpoint_files`).
//!
//! Simplified: a file is written whole when its task acknowledges (a task
//! that fails before writes no file; Flink may leave such a partial file
//! behind, which its own cleanup does not find either), and a key group is
//! the unit of change (RocksDB's runs hold single entries).

use crate::engine::SimTime;
use crate::model::{CheckpointId, TaskId};
use crate::scenario::StateBackend;
use std::collections::BTreeMap;
use std::rc::Rc;

mod changelog;
mod files;
mod groups;
mod log;
mod merging;
mod physical;

use files::{keep, Group};
pub use files::{FileFinding, FileKind, StorageEvidence, StoredFile};
pub use groups::{join_groups, split_groups, KeyedLayout};
pub use log::{FileId, Stopped, Trigger};
pub use physical::{MergingBugs, MergingConfig, Physical, PhysicalLeak};

/// What one task's snapshot refers to.
#[derive(Clone, Debug, Default)]
pub struct Handle {
    /// Every file, its own and the shared runs, in writing order.
    pub files: Vec<FileId>,
    /// `incremental`: per `(member, key group)`, the run holding it.
    pub groups: BTreeMap<(u32, u32), FileId>,
    /// Members whose state is put together from runs (or the changelog)
    /// at a restore.
    pub keyed: Vec<u32>,
    /// `changelog`: the base's `upTo` and its materialization id.
    pub changelog: Option<(u64, u64)>,
}

/// A task's incremental backend: the runs it may build on.
#[derive(Clone, Debug, Default)]
struct Backend {
    /// Snapshots written and not yet confirmed: each one's key groups.
    uploaded: BTreeMap<CheckpointId, Base>,
    /// The last confirmed (or restored) checkpoint's key groups.
    confirmed: Base,
    changelog: log::Changelog,
}

/// Per `(member, key group)`: the run holding it and its bytes.
type Base = BTreeMap<(u32, u32), (FileId, Rc<[u8]>)>;

/// The checkpoint storage (see the module's docs).
#[derive(Debug, Default)]
pub struct Storage {
    pub files: Vec<StoredFile>,
    /// Each snapshot's handle, by `(checkpoint, task)`.
    pub handles: BTreeMap<(CheckpointId, TaskId), Handle>,
    /// The shared-state registry: run → the newest completed checkpoint
    /// that refers to it.
    pub registry: BTreeMap<FileId, CheckpointId>,
    /// The judge's own account of the retained checkpoints and savepoints
    /// that refer to each file (never read by the mechanism).
    refs: BTreeMap<FileId, Vec<CheckpointId>>,
    backends: Vec<Backend>,
    /// Per task and member: how its state is keyed (`None`: not keyed).
    layouts: Vec<Vec<Option<KeyedLayout>>>,
    pub evidence: StorageEvidence,
    /// The registry's `highestNotClaimedCheckpointID`: shared files created
    /// by a checkpoint up to it leave the registry unused but are never
    /// deleted (a snapshot restored in `NO_CLAIM` mode).
    not_claimed: Option<CheckpointId>,
    /// A snapshot restored in `NO_CLAIM` mode: the backends do not build
    /// on its files (the first checkpoint is full), unless `reuse_unclaimed`
    /// (mutant `no-claim-reuses-restored-files`).
    no_claim: Option<CheckpointId>,
    reuse_unclaimed: bool,
    /// File merging (`merging.rs`): its settings, the physical files, each
    /// task's manager, the mutants.
    merging: Option<MergingConfig>,
    pub physical: Vec<Physical>,
    managers: Vec<physical::Manager>,
    merging_bugs: MergingBugs,
    last_read: ReadCost,
}

/// What a restore read from a snapshot's files: their bytes (channel state
/// aside) and the changelog entries it replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadCost {
    pub bytes: u64,
    pub replayed: u64,
}

/// How a snapshot is written (`write_snapshot`).
pub struct Write<'a> {
    pub task: TaskId,
    pub id: CheckpointId,
    /// Each member's state bytes, head first.
    pub states: &'a [Vec<u8>],
    pub in_flight_bytes: u64,
    /// When they are synced (`None`: not yet, `set_synced`).
    pub synced_at: Option<SimTime>,
    /// How keyed state is written (`hashmap`: every member's state goes
    /// whole into one file).
    pub backend: StateBackend,
    /// When the snapshot is taken.
    pub now: SimTime,
    /// A savepoint: whole state, nothing shared.
    pub savepoint: bool,
    pub max_runs: u32,
    /// Mutant `compaction-drops-oldest-run`: a compacted run leaves out
    /// the unchanged key groups of the oldest run it replaces.
    pub compaction_drops_oldest: bool,
}

impl Storage {
    pub fn new(layouts: Vec<Vec<Option<KeyedLayout>>>) -> Storage {
        let backend = Backend {
            changelog: Storage::changelog_new(),
            ..Backend::default()
        };
        Storage {
            backends: vec![backend; layouts.len()],
            layouts,
            ..Storage::default()
        }
    }

    /// Whether task `t` has a keyed member.
    pub fn keyed(&self, t: TaskId) -> bool {
        self.layouts[t as usize].iter().any(Option::is_some)
    }

    fn add(&mut self, f: StoredFile) -> FileId {
        self.evidence.files_written += 1;
        self.evidence.bytes_written += f.bytes;
        if f.kind == FileKind::Run {
            self.evidence.runs_written += 1;
        }
        self.files.push(f);
        self.files.len() as FileId - 1
    }

    /// Writes task `w.task`'s snapshot for checkpoint `w.id` and keeps its
    /// handle; returns every file it refers to.
    pub fn write_snapshot(&mut self, w: &Write) -> Vec<FileId> {
        let t = w.task as usize;
        let file = |kind, bytes| StoredFile {
            synced_at: w.synced_at,
            ..StoredFile::new(kind, w.task, w.id, bytes)
        };
        let keyed_backend = w.backend != StateBackend::Hashmap && !w.savepoint;
        let mut handle = Handle::default();
        let mut own = 0u64;
        let mut groups: Vec<Group> = Vec::new();
        for (m, state) in w.states.iter().enumerate() {
            let layout = self.layouts[t].get(m).copied().flatten();
            let split = match (keyed_backend, layout) {
                (true, Some(l)) => split_groups(state, l),
                _ => None,
            };
            match split {
                Some(gs) => {
                    handle.keyed.push(m as u32);
                    groups.extend(
                        gs.into_iter()
                            .map(|(kg, b)| ((m as u32, kg), Rc::<[u8]>::from(b))),
                    );
                }
                None => own += state.len() as u64,
            }
        }
        if own > 0 {
            let id = self.add(file(FileKind::State, own));
            handle.files.push(id);
        }
        match w.backend {
            _ if handle.keyed.is_empty() => {}
            StateBackend::Changelog => self.write_changelog(w, &mut handle, groups, &file, w.now),
            _ => self.write_runs(w, &mut handle, groups, &file),
        }
        if w.in_flight_bytes > 0 {
            let id = self.add(file(FileKind::Channel, w.in_flight_bytes));
            handle.files.push(id);
        }
        let files = handle.files.clone();
        if !w.savepoint {
            for &f in &files {
                if self.files[f as usize].written_for(w.id) {
                    self.merge(f);
                }
            }
        }
        self.handles.insert((w.id, w.task), handle);
        files
    }

    /// The incremental part of a snapshot: a run of the key groups that
    /// differ from its base, the base's runs for the others, or one
    /// compacted run once it would refer to more than `max_runs`.
    fn write_runs(
        &mut self,
        w: &Write,
        handle: &mut Handle,
        groups: Vec<Group>,
        file: &dyn Fn(FileKind, u64) -> StoredFile,
    ) {
        let t = w.task as usize;
        let base = self.backends[t].confirmed.clone();
        let changed: Vec<usize> = (0..groups.len())
            .filter(|&i| {
                let (key, bytes) = &groups[i];
                base.get(key).is_none_or(|(_, old)| old[..] != bytes[..])
            })
            .collect();
        let mut reused: Vec<FileId> = groups
            .iter()
            .filter_map(|(key, bytes)| match base.get(key) {
                Some((f, old)) if old[..] == bytes[..] => Some(*f),
                _ => None,
            })
            .collect();
        reused.sort_unstable();
        reused.dedup();
        let compact = reused.len() + usize::from(!changed.is_empty()) > w.max_runs as usize;
        let mut next: Base = BTreeMap::new();
        let new_groups: Vec<Group> = match compact {
            true => {
                self.evidence.compactions += 1;
                let oldest = reused.first().copied();
                reused.clear();
                let mut all = groups.clone();
                if let (true, Some(oldest)) = (w.compaction_drops_oldest, oldest) {
                    // Mutant: the oldest run's unchanged key groups are
                    // not merged into the compacted run.
                    let before = all.len();
                    all.retain(|(key, bytes)| {
                        base.get(key)
                            .is_none_or(|(f, old)| *f != oldest || old[..] != bytes[..])
                    });
                    if all.len() < before {
                        crate::mutant::fired(crate::mutant::Mutant::CompactionDropsOldestRun);
                    }
                }
                all
            }
            false => changed.iter().map(|&i| groups[i].clone()).collect(),
        };
        if !new_groups.is_empty() {
            let bytes = new_groups.iter().map(|(_, b)| b.len() as u64).sum();
            let mut f = file(FileKind::Run, bytes);
            f.groups = new_groups;
            let id = self.add(f);
            for (key, bytes) in &self.files[id as usize].groups {
                next.insert(*key, (id, bytes.clone()));
            }
            handle.files.push(id);
        }
        // The unchanged key groups stay in the runs that hold them (a
        // compacted run holds every key group it was given).
        for (key, bytes) in groups.into_iter().filter(|_| !compact) {
            if let Some((f, _)) = base.get(&key).filter(|_| !next.contains_key(&key)) {
                next.insert(key, (*f, bytes));
            }
        }
        self.evidence.runs_reused += reused.len() as u64;
        handle.files.extend_from_slice(&reused);
        handle.groups = next.iter().map(|(k, (f, _))| (*k, *f)).collect();
        self.backends[t].uploaded.insert(w.id, next);
    }

    /// The operator-state bytes task `t` wrote for `id` (its own state file
    /// and its new runs; not its channel state, nor the runs it reused).
    pub fn state_bytes(&self, id: CheckpointId, t: TaskId) -> u64 {
        self.handles.get(&(id, t)).map_or(0, |h| {
            h.files
                .iter()
                .map(|&f| &self.files[f as usize])
                .filter(|f| f.written_for(id) && f.kind != FileKind::Channel)
                .map(|f| f.bytes)
                .sum()
        })
    }

    /// The bytes of every file task `t`'s snapshot of `id` refers to, its
    /// own and those it shares, channel state aside (Flink's "full
    /// checkpoint data size"; [`Storage::state_bytes`] is what the snapshot
    /// wrote, the "checkpointed data size").
    pub fn full_bytes(&self, id: CheckpointId, t: TaskId) -> u64 {
        self.handles.get(&(id, t)).map_or(0, |h| {
            h.files
                .iter()
                .map(|&f| &self.files[f as usize])
                .filter(|f| f.kind != FileKind::Channel)
                .map(|f| f.bytes)
                .sum()
        })
    }

    /// What the last [`Storage::read`] read, taken (the restore's cost).
    pub fn take_read(&mut self) -> ReadCost {
        std::mem::take(&mut self.last_read)
    }

    /// Task `t`'s files written for `id` are synced at `at` (`None`: never);
    /// whether there are any.
    pub fn set_synced(&mut self, id: CheckpointId, t: TaskId, at: Option<SimTime>) -> bool {
        let Some(h) = self.handles.get(&(id, t)) else {
            return false;
        };
        let written: Vec<FileId> = h
            .files
            .iter()
            .copied()
            .filter(|&f| self.files[f as usize].written_for(id))
            .collect();
        for &f in &written {
            self.files[f as usize].synced_at = at;
            if let Some(at) = at {
                self.sync_physical(f, at);
            }
        }
        !written.is_empty()
    }

    /// Task `t`'s acknowledgement of checkpoint `id` reached the
    /// coordinator, which registers its runs (Flink registers shared state
    /// on every acknowledgement, whatever becomes of the checkpoint): a new
    /// run enters the registry, a run written before moves its last use to
    /// `id`; a run the registry no longer holds is unknown state, and the
    /// acknowledgement is refused (`SharedStateRegistryImpl`'s "Attempt to
    /// reference unknown state"). `advance_reused`: false for mutant
    /// `registry-ignores-reused-runs`.
    pub fn acknowledged(
        &mut self,
        id: CheckpointId,
        t: TaskId,
        advance_reused: bool,
    ) -> Result<(), FileId> {
        let Some(h) = self.handles.get(&(id, t)) else {
            return Ok(());
        };
        let shared: Vec<FileId> = h
            .files
            .iter()
            .copied()
            .filter(|&f| self.files[f as usize].kind.shared())
            .collect();
        if let Some(&unknown) = shared
            .iter()
            .find(|&&f| self.files[f as usize].registered && !self.registry.contains_key(&f))
        {
            self.evidence.acks_refused += 1;
            return Err(unknown);
        }
        for f in shared {
            let file = &mut self.files[f as usize];
            let fresh = !file.registered;
            file.registered = true;
            file.created_by.get_or_insert(id);
            let last = self.registry.entry(f).or_insert(id);
            if fresh || advance_reused {
                *last = (*last).max(id);
            } else if *last < id {
                crate::mutant::fired(crate::mutant::Mutant::RegistryIgnoresReusedRuns);
            }
        }
        Ok(())
    }

    /// Checkpoint `id` completed at `now` with the snapshots of `tasks`:
    /// each file it refers to must be there and durable (the judge's
    /// account; the registry registered them at the acknowledgements).
    pub fn complete(&mut self, now: SimTime, id: CheckpointId, tasks: &[TaskId]) {
        for &t in tasks {
            let Some(h) = self.handles.get(&(id, t)) else {
                continue;
            };
            for &f in &h.files {
                let file = &self.files[f as usize];
                self.evidence.references_checked += 1;
                self.refs.entry(f).or_default().push(id);
                let finding = |at, what| FileFinding::new(now, id, (f, file), t, at, what);
                if file.synced_at.is_none_or(|s| s > now) {
                    keep(
                        &mut self.evidence.not_durable,
                        finding(file.synced_at, "not synced"),
                    );
                }
                if let Some((when, what)) = file.gone() {
                    keep(
                        &mut self.evidence.deleted_referenced,
                        finding(Some(when), what),
                    );
                }
                if file.user_owned && file.checkpoint != id {
                    keep(&mut self.evidence.unowned, finding(None, "not the job's"));
                }
                if self.in_unowned_physical(f) {
                    let what = "in a physical file that is not the job's";
                    keep(&mut self.evidence.unowned, finding(None, what));
                }
            }
        }
    }

    /// The job started at `now` from snapshot `id`, whose files the
    /// snapshots of `tasks` just wrote: the registry registers them
    /// (`registerAllAfterRestored`) and the judge counts the restored
    /// checkpoint's references. `claim`: restore mode `CLAIM` (the job owns
    /// them); else they stay the user's, are never deleted and nothing
    /// builds on them. `keep_claimed`: mutant `claim-keeps-restored-files`;
    /// `reuse_unclaimed`: mutant `no-claim-reuses-restored-files`.
    pub fn imported(
        &mut self,
        now: SimTime,
        id: CheckpointId,
        tasks: &[TaskId],
        claim: bool,
        (keep_claimed, reuse_unclaimed): (bool, bool),
    ) {
        for &t in tasks {
            let _ = self.acknowledged(id, t, true);
        }
        self.complete(now, id, tasks);
        let files: Vec<FileId> = (self.handles.range((id, 0)..=(id, TaskId::MAX)))
            .flat_map(|(_, h)| h.files.iter().copied())
            .collect();
        self.evidence.files_restored += files.len() as u64;
        if self.merges() {
            // The job's managers are new: each re-registers its segments.
            for &t in tasks {
                let own: Vec<FileId> = self
                    .handles
                    .get(&(id, t))
                    .map_or(Vec::new(), |h| h.files.clone());
                self.new_manager(t, &own);
            }
        }
        if !claim {
            for &f in &files {
                self.files[f as usize].user_owned = true;
            }
            self.physical_user_owned(&files);
            self.no_claim = Some(id);
            self.reuse_unclaimed = reuse_unclaimed;
            if reuse_unclaimed {
                crate::mutant::fired(crate::mutant::Mutant::NoClaimReusesRestoredFiles);
            }
        }
        if !claim || keep_claimed {
            if claim {
                crate::mutant::fired(crate::mutant::Mutant::ClaimKeepsRestoredFiles);
            }
            self.not_claimed = Some(id);
        }
    }

    /// Savepoint `id` completed: its files are the user's.
    pub fn savepoint_completed(&mut self, id: CheckpointId, tasks: &[TaskId]) {
        for &t in tasks {
            let files = match self.handles.get(&(id, t)) {
                Some(h) => h.files.clone(),
                None => continue,
            };
            for f in files {
                self.files[f as usize].user_owned = true;
                self.refs.entry(f).or_default().push(id);
            }
        }
    }

    /// Completed checkpoint `id` left the store (`tasks` acknowledged it):
    /// its own files are discarded.
    pub fn subsumed(&mut self, now: SimTime, id: CheckpointId, tasks: &[TaskId]) {
        let mut own = Vec::new();
        for &t in tasks {
            let Some(h) = self.handles.get(&(id, t)) else {
                continue;
            };
            for &f in &h.files {
                if let Some(by) = self.refs.get_mut(&f) {
                    if let Some(i) = by.iter().position(|&c| c == id) {
                        by.swap_remove(i);
                    }
                }
                if !self.files[f as usize].kind.shared() {
                    own.push(f);
                }
            }
        }
        for f in own {
            self.delete(now, f);
        }
    }

    /// After every addition to the completed-checkpoint store: the runs
    /// last used before the oldest retained checkpoint (`lowest`) are
    /// deleted (`unregisterUnusedState`).
    pub fn unregister_unused(&mut self, now: SimTime, lowest: CheckpointId) {
        let unused: Vec<FileId> = self
            .registry
            .iter()
            .filter(|&(_, &last)| last < lowest)
            .map(|(&f, _)| f)
            .collect();
        for f in unused {
            self.registry.remove(&f);
            let created = self.files[f as usize].created_by;
            if created.is_none_or(|c| self.not_claimed.is_none_or(|n| c > n)) {
                self.delete(now, f);
            }
        }
    }

    /// Pending checkpoint `id` was aborted: discards what it wrote that is
    /// not registered. `keep`: mutant `aborted-checkpoint-files-kept`.
    pub fn aborted(&mut self, now: SimTime, id: CheckpointId, keep: bool) {
        let written: Vec<FileId> = self
            .handles
            .range((id, 0)..=(id, TaskId::MAX))
            .flat_map(|(_, h)| h.files.iter().copied())
            .filter(|&f| {
                let file = &self.files[f as usize];
                file.written_for(id) && !self.registry.contains_key(&f)
            })
            .collect();
        if keep && !written.is_empty() {
            crate::mutant::fired(crate::mutant::Mutant::AbortedCheckpointFilesKept);
            return;
        }
        for f in written {
            self.delete(now, f);
        }
    }

    /// The job discards file `f` at `now`: deleted, or with file merging
    /// discarded as a segment (`merging.rs`).
    fn delete(&mut self, now: SimTime, f: FileId) {
        let file = &self.files[f as usize];
        if file.deleted_at.is_some() || file.user_owned || self.discard_segment(now, f) {
            return;
        }
        self.delete_bytes(now, f);
    }

    /// File `f`'s bytes leave the storage at `now`.
    fn delete_bytes(&mut self, now: SimTime, f: FileId) {
        let file = &mut self.files[f as usize];
        if file.deleted_at.is_some() {
            return;
        }
        file.deleted_at = Some(now);
        self.evidence.files_deleted += 1;
        if file.kind == FileKind::Run {
            self.evidence.runs_deleted += 1;
        }
        let by = self.refs.get(&f).and_then(|by| by.iter().max().copied());
        if let Some(checkpoint) = by {
            let file = &self.files[f as usize];
            let at = Some(now);
            let finding = FileFinding::new(now, checkpoint, (f, file), file.task, at, "deleted");
            keep(&mut self.evidence.deleted_referenced, finding);
        }
    }

    /// Task `t` was notified at `now` that `id` completed: its backend
    /// builds on that snapshot from now on.
    pub fn confirm(&mut self, now: SimTime, t: TaskId, id: CheckpointId) {
        let b = &mut self.backends[t as usize];
        if let Some(base) = b.uploaded.remove(&id) {
            b.confirmed = base;
        }
        b.uploaded.retain(|&k, _| k > id);
        self.changelog_confirm(now, t, id);
    }

    /// Task `t` restarts at `now` from checkpoint `id` (`None`: from
    /// scratch): its backend builds on the restored snapshot.
    pub fn restarted(&mut self, now: SimTime, t: TaskId, id: Option<CheckpointId>) {
        let mut base = Base::new();
        // After a NO_CLAIM restore the first checkpoint is full: nothing
        // builds on the snapshot's files.
        let id = id.filter(|&id| self.no_claim != Some(id) || self.reuse_unclaimed);
        let h = id.and_then(|id| self.handles.get(&(id, t))).cloned();
        if let Some(h) = &h {
            for (key, &f) in &h.groups {
                if let Some((_, bytes)) = self.files[f as usize].groups.iter().find(|g| g.0 == *key)
                {
                    base.insert(*key, (f, bytes.clone()));
                }
            }
        }
        let b = &mut self.backends[t as usize];
        b.uploaded.clear();
        b.confirmed = base;
        self.merging_restarted(t, h.as_ref());
        self.changelog_restarted(now, t, h);
    }

    /// Reads task `t`'s snapshot of checkpoint `id` back from its files:
    /// the state of each keyed member put together from the runs or the
    /// changelog (the others' from `states`), or the first file that is
    /// gone.
    pub fn read(
        &mut self,
        now: SimTime,
        id: CheckpointId,
        t: TaskId,
        states: &[Vec<u8>],
    ) -> Result<Vec<Vec<u8>>, FileFinding> {
        let Some(h) = self.handles.get(&(id, t)) else {
            return Ok(states.to_vec());
        };
        self.evidence.restores_from_files += 1;
        self.last_read = ReadCost {
            bytes: self.full_bytes(id, t),
            replayed: match h.changelog {
                Some((up_to, _)) => self.tail_entries(h, up_to),
                None => 0,
            },
        };
        if let Some(&f) = h
            .files
            .iter()
            .find(|&&f| self.files[f as usize].gone().is_some())
        {
            return Err(self.missing(now, id, t, f));
        }
        let groups: BTreeMap<(u32, u32), Rc<[u8]>> = match h.changelog {
            Some(_) => self.changelog_state(h),
            None => h
                .groups
                .iter()
                .filter_map(|(key, &f)| {
                    let g = self.files[f as usize].groups.iter().find(|g| g.0 == *key);
                    g.map(|(_, b)| (*key, b.clone()))
                })
                .collect(),
        };
        let mut out = states.to_vec();
        for &m in &h.keyed {
            let parts: Vec<Rc<[u8]>> = groups
                .range((m, 0)..=(m, u32::MAX))
                .map(|(_, b)| b.clone())
                .collect();
            out[m as usize] = join_groups(&parts);
        }
        Ok(out)
    }

    /// A storage crash at `now`: every file not synced yet is lost.
    /// Returns the checkpoints whose files were lost.
    pub fn crash(&mut self, now: SimTime) -> Vec<CheckpointId> {
        self.evidence.storage_crashes += 1;
        let mut hit = Vec::new();
        for f in &mut self.files {
            if f.deleted_at.is_none() && f.lost_at.is_none() && f.synced_at.is_none_or(|s| s > now)
            {
                f.lost_at = Some(now);
                self.evidence.files_lost += 1;
                if f.kind != FileKind::Materialized {
                    hit.push(f.checkpoint);
                }
            }
        }
        hit.sort_unstable();
        hit.dedup();
        hit
    }

    /// A new coordinator's registry, built from the retained checkpoints
    /// (`retained`: each with the tasks that acknowledged it), oldest
    /// first; `rebuild` false: mutant `registry-not-rebuilt`.
    pub fn rebuild_registry(&mut self, retained: &[(CheckpointId, Vec<TaskId>)], rebuild: bool) {
        // What no retained checkpoint refers to is no one's any more: the
        // files of checkpoints pending at the crash, and runs only the old
        // registry knew (the judge's account decides which, for the count).
        for (i, f) in self.files.iter_mut().enumerate() {
            let referred = self
                .refs
                .get(&(i as FileId))
                .is_some_and(|by| !by.is_empty());
            if f.gone().is_none() && !f.user_owned && !referred && !f.orphaned {
                f.orphaned = true;
                self.evidence.files_orphaned += 1;
            }
        }
        self.registry.clear();
        if !rebuild {
            if retained.iter().any(|(id, tasks)| {
                tasks.iter().any(|&t| {
                    self.handles
                        .get(&(*id, t))
                        .is_some_and(|h| !h.groups.is_empty() || h.changelog.is_some())
                })
            }) {
                crate::mutant::fired(crate::mutant::Mutant::RegistryNotRebuilt);
            }
            return;
        }
        for (id, tasks) in retained {
            for &t in tasks {
                let Some(h) = self.handles.get(&(*id, t)) else {
                    continue;
                };
                for &f in &h.files {
                    if self.files[f as usize].kind.shared() {
                        let last = self.registry.entry(f).or_insert(*id);
                        *last = (*last).max(*id);
                    }
                }
            }
        }
    }

    /// The end of the run at `now`: every file still in storage must be
    /// referred to by a retained checkpoint or a savepoint, except the runs
    /// the registry still holds by its own rule (last used no earlier than
    /// the oldest retained checkpoint, `lowest`): registered by an
    /// acknowledgement of a checkpoint that did not complete, they go with
    /// a later subsumption.
    pub fn end(&mut self, now: SimTime, lowest: Option<CheckpointId>) {
        for t in 0..self.backends.len() as TaskId {
            self.changelog_release(now, t);
        }
        let mut needed = vec![false; self.files.len()];
        for (i, f) in self.files.iter().enumerate() {
            if f.gone().is_some() {
                continue;
            }
            self.evidence.files_at_end += 1;
            self.evidence.bytes_at_end += f.bytes;
            let referred = self
                .refs
                .get(&(i as FileId))
                .is_some_and(|by| !by.is_empty());
            let awaiting = self
                .registry
                .get(&(i as FileId))
                .is_some_and(|&last| lowest.is_none_or(|l| last >= l));
            needed[i] = referred || f.user_owned || awaiting || f.orphaned;
            // A segment is judged with its physical file.
            if !needed[i] && f.physical.is_none() {
                self.evidence.leaked_count += 1;
                self.evidence.leaked_bytes += f.bytes;
                let file = (i as FileId, f);
                let finding =
                    FileFinding::new(now, f.checkpoint, file, f.task, f.synced_at, "leaked");
                keep(&mut self.evidence.leaked, finding);
            }
        }
        self.physical_end(now, &needed);
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CompactionDropsOldestRun: Mutant = Mutant::declare(&MutantInfo {
            name: "compaction-drops-oldest-run",
            part: "incremental snapshots",
            what: "a compaction merges the runs a task's snapshot refers to into one, but leaves out the key groups that only the oldest run held: the checkpoint is complete and durable, and a restore from it brings back state without them",
            modelled_on: "the class of compaction and merge bugs of log-structured state (an input run missed by the merge, so its entries vanish from the compacted output); RocksDB's compaction itself is outside Flink, the merge here is ckptsim's own",
            caught_by: "state",
            applies: &[("incremental", "aligned")],
        });
        pub const RegistryIgnoresReusedRuns: Mutant = Mutant::declare(&MutantInfo {
            name: "registry-ignores-reused-runs",
            part: "shared-state registry",
            what: "an acknowledgement registers only the runs written for its checkpoint; the earlier runs it refers to again keep their last use, so subsumption deletes runs newer checkpoints still need",
            modelled_on: "shared-state registry bugs where a reused handle (a placeholder for an already uploaded file) does not move the file's last-used checkpoint forward, FLINK-29913 (shared state discarded by mistake with concurrent checkpoints)",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
        pub const AbortedCheckpointFilesKept: Mutant = Mutant::declare(&MutantInfo {
            name: "aborted-checkpoint-files-kept",
            part: "checkpoint storage cleanup",
            what: "an aborted checkpoint's files are not discarded: the checkpoint directory keeps files nothing refers to",
            modelled_on: "orphaned checkpoint files: a pending checkpoint must discard the state its tasks acknowledged when it is aborted (PendingCheckpoint.abort, and the coordinator's shutdown for the ones still pending); where that is skipped the checkpoint directory grows with files nothing refers to while every output stays right",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
        pub const RegistryNotRebuilt: Mutant = Mutant::declare(&MutantInfo {
            name: "registry-not-rebuilt",
            part: "shared-state registry",
            what: "after a coordinator failover the shared-state registry is not rebuilt from the retained checkpoints: every acknowledgement that reuses a restored run is refused as unknown state, so no checkpoint completes again, and the runs only the retained checkpoints used are never deleted",
            modelled_on: "FLINK-35803 and FLINK-39977: shared (merged) handles restored after recovery are not registered again, so the new registry does not manage them and the files leak (or are reused wrongly)",
            caught_by: "liveness",
            applies: &[("incremental", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests;
