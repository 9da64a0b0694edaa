//! The checkpoint storage's files over a run (`runtime::storage`): what a
//! task's acknowledgement writes, what a completion registers and a
//! subsumption or an abort discards, what a notification confirms, what a
//! restore reads back, and the storage crashes. Only with `filesystem`
//! storage and coordinated checkpoints (the uncoordinated families keep
//! their own checkpoints, `world/local.rs`).

use super::*;
use crate::model::registry::StateLayout;
use crate::mutant::Mutants;
use crate::runtime::storage::{
    FileFinding, KeyedLayout, MergingBugs, MergingConfig, ReadCost, Storage, Write,
};
use crate::scenario::{SavepointFormat, StateBackend};

impl World<'_> {
    /// The storage of a run: each task member's keyed layout.
    pub(super) fn new_storage(scenario: &Scenario, exec: &ExecGraph, mutants: Mutants) -> Storage {
        let layouts = exec
            .tasks
            .iter()
            .map(|t| {
                t.chain
                    .iter()
                    .map(|&op| match scenario.op(op).kind.state_layout() {
                        StateLayout::Keyed => Some(KeyedLayout::Pairs),
                        StateLayout::KeyedBytes => Some(KeyedLayout::Bytes),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let mut storage = Storage::new(layouts);
        let cp = &scenario.checkpoint;
        let merging = cp.file_merging.then_some(MergingConfig {
            across_checkpoints: cp.file_merging_across_checkpoints,
            max_file_size: cp.file_merging_max_file_size,
        });
        let bugs = MergingBugs {
            append_uncounted: mutants.has(Mutant::MergedAppendUncounted),
            skip_channel: mutants.has(Mutant::MergedChannelStateNotRestored),
            reuse_restored: mutants.has(Mutant::RestoredPhysicalFileReused),
        };
        storage.set_merging(merging, bugs);
        storage
    }

    /// Whether snapshots go into files.
    pub(super) fn writes_files(&self) -> bool {
        self.plan.scenario.checkpoint.storage == StorageKind::Filesystem && !self.is_local()
    }

    /// The bytes of operator state task `t` writes for its snapshot `p`:
    /// with files, what its backend writes (everything with `hashmap`, the
    /// new runs with `incremental`), the files written on the first call
    /// (their sync is set at the ack, `sync_files`); without, the
    /// snapshot's state.
    pub(super) fn state_write_bytes(&mut self, t: TaskId, p: &PartialAck) -> u64 {
        if !self.writes_files() || !self.coord.is_pending(p.id) {
            return p.snapshot.state_bytes();
        }
        if !self.storage.handles.contains_key(&(p.id, t)) {
            let cp = &self.plan.scenario.checkpoint;
            let savepoint = self.sp.by_id.get(&p.id);
            let w = Write {
                task: t,
                id: p.id,
                states: &p.snapshot.states,
                in_flight_bytes: p.snapshot.in_flight_bytes(),
                synced_at: None,
                backend: cp.state_backend,
                now: self.net.now,
                savepoint: savepoint.is_some(),
                max_runs: cp.max_runs,
                compaction_drops_oldest: self
                    .plan
                    .cfg
                    .mutants
                    .has(Mutant::CompactionDropsOldestRun),
            };
            self.storage.write_snapshot(&w);
            let native = savepoint.is_some_and(|s| s.format == SavepointFormat::Native);
            if native && cp.state_backend == StateBackend::Changelog {
                let consume = self
                    .plan
                    .cfg
                    .mutants
                    .has(Mutant::NativeSavepointBlocksMaterialization);
                self.storage.native_savepoint(t, p.id, consume);
            }
        }
        self.storage.state_bytes(p.id, t)
    }

    /// Task `t`'s files for `id`, whose writes end at `ack.durable_at`, are
    /// synced `storage_sync` later; returns how much later than the writes'
    /// end the ack may leave (mutant `ack-before-sync`: at once, the files
    /// never synced).
    pub(super) fn sync_files(&mut self, t: TaskId, id: CheckpointId, ack: &TaskAck) -> SimDuration {
        if !self.writes_files() || !self.storage.handles.contains_key(&(id, t)) {
            return SimDuration::ZERO;
        }
        let sync = self.plan.scenario.checkpoint.storage_sync;
        if self.plan.cfg.mutants.has(Mutant::AckBeforeSync) {
            // Mutant: the handles go out before the files are synced.
            if self.storage.set_synced(id, t, None) {
                fired(Mutant::AckBeforeSync);
            }
            return SimDuration::ZERO;
        }
        self.storage
            .set_synced(id, t, Some(ack.durable_at.plus(sync)));
        sync
    }

    /// Checkpoint or savepoint `id` completed with the snapshots of
    /// `tasks`.
    pub(super) fn files_completed(&mut self, id: CheckpointId, tasks: &[TaskId], savepoint: bool) {
        if !self.writes_files() {
            return;
        }
        if savepoint {
            self.storage.savepoint_completed(id, tasks);
            return;
        }
        self.storage.complete(self.net.now, id, tasks);
        self.files_retained();
    }

    /// The checkpoints that left the completed-checkpoint store since the
    /// last look are subsumed: their files discarded.
    pub(super) fn files_retained(&mut self) {
        if !self.writes_files() {
            return;
        }
        let now_retained: Vec<CheckpointId> = self.coord.retained.iter().map(|c| c.id).collect();
        let lowest = now_retained.first().copied().unwrap_or(u64::MAX);
        let gone: Vec<(CheckpointId, Vec<TaskId>)> = self
            .retained_files
            .iter()
            .filter(|(id, _)| !now_retained.contains(id))
            .cloned()
            .collect();
        for (id, tasks) in &gone {
            self.storage.subsumed(self.net.now, *id, tasks);
        }
        self.storage.unregister_unused(self.net.now, lowest);
        self.retained_files = self
            .coord
            .retained
            .iter()
            .map(|c| (c.id, acked_tasks(c)))
            .collect();
    }

    /// The job starts from snapshot `c` (`claim`: restore mode `CLAIM`):
    /// its files are in the checkpoint storage, written as the job's
    /// backend writes a snapshot, owned by the job only under `CLAIM`.
    pub(super) fn files_imported(&mut self, c: &Completed, claim: bool) {
        if !self.writes_files() {
            return;
        }
        let cp = &self.plan.scenario.checkpoint;
        let tasks = acked_tasks(c);
        for &t in &tasks {
            let Some(snap) = c.states[t as usize].as_ref() else {
                continue;
            };
            let w = Write {
                task: t,
                id: c.id,
                states: &snap.states,
                in_flight_bytes: snap.in_flight_bytes(),
                synced_at: Some(self.net.now),
                backend: cp.state_backend,
                now: self.net.now,
                savepoint: false,
                max_runs: cp.max_runs,
                compaction_drops_oldest: false,
            };
            self.storage.write_snapshot(&w);
        }
        let mutants = self.plan.cfg.mutants;
        let bugs = (
            mutants.has(Mutant::ClaimKeepsRestoredFiles),
            mutants.has(Mutant::NoClaimReusesRestoredFiles),
        );
        self.storage
            .imported(self.net.now, c.id, &tasks, claim, bugs);
        self.files_retained();
    }

    /// Task `t`'s acknowledgement of `id` reached the coordinator: its runs
    /// are registered, or, referring to a run the registry no longer
    /// holds, it is refused and the checkpoint fails.
    pub(super) fn files_acknowledged(&mut self, t: TaskId, id: CheckpointId) -> bool {
        if !self.writes_files() || self.sp.by_id.contains_key(&id) || !self.coord.is_pending(id) {
            return true;
        }
        let advance = !self.plan.cfg.mutants.has(Mutant::RegistryIgnoresReusedRuns);
        let Err(run) = self.storage.acknowledged(id, t, advance) else {
            return true;
        };
        let name = self.plan.exec.tasks[t as usize].name.clone();
        let written = self.storage.files[run as usize].checkpoint;
        self.note_fault(|| {
            format!("checkpoint {id} failed: the acknowledgement of {name} refers to shared run {run} (written for checkpoint {written}), which the shared-state registry no longer holds")
        });
        let mut out = Vec::new();
        self.coord
            .abort(self.net.now, id, CpOutcome::Declined, &mut out);
        self.perform(out);
        self.run_queued();
        false
    }

    /// Pending checkpoint `id` was aborted: what it wrote is discarded.
    pub(super) fn files_aborted(&mut self, id: CheckpointId) {
        if !self.writes_files() {
            return;
        }
        let keep = self
            .plan
            .cfg
            .mutants
            .has(Mutant::AbortedCheckpointFilesKept);
        self.storage.aborted(self.net.now, id, keep);
    }

    /// Task `t` learnt that `id` completed: its backend builds on it.
    pub(super) fn files_confirmed(&mut self, t: TaskId, id: CheckpointId) {
        if self.writes_files() {
            self.storage.confirm(self.net.now, t, id);
        }
    }

    /// Task `t`'s state from checkpoint `c`, read from its files (`states`
    /// as the snapshot holds them), or the file it needs that is gone.
    pub(super) fn read_files(
        &mut self,
        t: TaskId,
        c: Option<&Completed>,
        states: Vec<Vec<u8>>,
    ) -> Result<Vec<Vec<u8>>, FileFinding> {
        if !self.writes_files() {
            return Ok(states);
        }
        let id = c.filter(|c| c.states[t as usize].is_some()).map(|c| c.id);
        self.storage.restarted(self.net.now, t, id);
        match id {
            Some(id) => self.storage.read(self.net.now, id, t, &states),
            None => Ok(states),
        }
    }

    /// How long task `t`'s thread restores what [`World::read_files`] just
    /// read (Flink's `StreamTask.restoreInternal`, before the mailbox loop
    /// starts and before the task is `RUNNING`): opening the files
    /// (`storage_latency`), reading every byte the snapshot refers to at
    /// `storage_bytes_per_sec` (a full snapshot, every run an incremental
    /// one shares, a changelog's base and tail) and applying each logged
    /// change of the tail (`changelog_replay_cost`). Nothing read (memory
    /// storage: the state came with the deployment; no snapshot): zero.
    pub(super) fn restore_time(&mut self) -> SimDuration {
        let read = self.storage.take_read();
        if !self.writes_files() || read == ReadCost::default() {
            return SimDuration::ZERO;
        }
        let s = &self.plan.scenario;
        let c = &s.checkpoint;
        let ns = c
            .storage_latency
            .0
            .saturating_add(super::channel_files::transfer(s, read.bytes).0)
            .saturating_add(c.changelog_replay_cost.times(read.replayed).0);
        self.rec.counters.restore_bytes_read += read.bytes;
        self.rec.counters.changes_replayed += read.replayed;
        SimDuration(ns)
    }

    /// A restore needed a file that is gone: the job fails (Flink's restore
    /// throws at every attempt), named for the file.
    pub(super) fn restore_failed(&mut self, f: &FileFinding) {
        let name = &self.plan.exec.tasks[f.task as usize].name;
        let reason = format!(
            "the restore of checkpoint {} needs {} {} of task {name} (written for checkpoint {}), which was {}",
            f.checkpoint,
            f.kind.describe(),
            f.file,
            f.written_for,
            f.what
        );
        self.note_fault(|| format!("restore failed: {reason}"));
        self.job.status = JobStatus::Failed;
        self.job.failed_reason = Some(reason);
    }

    /// The `index`-th storage crash: files not synced are lost, and the
    /// pending checkpoints that wrote one fail.
    pub(super) fn storage_crash(&mut self, _index: u32) {
        if !self.writes_files() {
            return;
        }
        let hit = self.storage.crash(self.net.now);
        self.note_fault(|| "storage crash: every file not synced yet is lost".to_string());
        for id in hit {
            if self.coord.is_pending(id) {
                let mut out = Vec::new();
                self.coord.storage_failed(self.net.now, id, &mut out);
                self.perform(out);
            }
        }
    }

    /// A new coordinator's shared-state registry, from the retained
    /// checkpoints.
    pub(super) fn files_coordinator_recovered(&mut self) {
        if !self.writes_files() {
            return;
        }
        let retained: Vec<(CheckpointId, Vec<TaskId>)> = self
            .coord
            .retained
            .iter()
            .map(|c| (c.id, acked_tasks(c)))
            .collect();
        let rebuild = !self.plan.cfg.mutants.has(Mutant::RegistryNotRebuilt);
        self.storage.rebuild_registry(&retained, rebuild);
    }

    /// The end of the run: pending checkpoints are discarded (Flink's
    /// coordinator shuts down), then every file left is judged.
    pub(super) fn files_end(&mut self) {
        if !self.writes_files() {
            return;
        }
        let pending: Vec<CheckpointId> = self.coord.pending.keys().copied().collect();
        for id in pending {
            self.storage.aborted(self.net.now, id, false);
        }
        let lowest = self.coord.retained.front().map(|c| c.id);
        self.storage.end(self.net.now, lowest);
    }
}

/// The tasks whose snapshots a completed checkpoint holds.
fn acked_tasks(c: &Completed) -> Vec<TaskId> {
    (0..c.states.len() as TaskId)
        .filter(|&t| c.states[t as usize].is_some())
        .collect()
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const TriggersWhileRestoring: Mutant = Mutant::declare(&MutantInfo {
            name: "triggers-while-restoring",
            part: "restores from files",
            what: "the coordinator counts a task that is still reading its state back from files as running and triggers checkpoints during the restore: the trigger waits in a restoring source's mailbox, and a restore longer than the checkpoint timeout expires them",
            modelled_on: "Flink before FLINK-17012 (1.12): a task restoring its state was RUNNING, so checkpoints were triggered during long RocksDB restores and expired, counted as failures; now a task is INITIALIZING until its restore ends and DefaultCheckpointPlanCalculator refuses to trigger (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            caught_by: "protocol",
            applies: &[("state-backends", "aligned"), ("state-backends", "unaligned")],
        });
        pub const AckBeforeSync: Mutant = Mutant::declare(&MutantInfo {
            name: "ack-before-sync",
            part: "checkpoint storage durability",
            what: "a task acknowledges once its state files are written, without syncing them: a completed checkpoint refers to files a storage crash loses",
            modelled_on: "FLINK-36421: file-merging checkpoints handed out the handle of a physical file that was flushed but never synced, so a machine crash after the checkpoint completed lost state it referred to",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
        pub const NoClaimReusesRestoredFiles: Mutant = Mutant::declare(&MutantInfo {
            name: "no-claim-reuses-restored-files",
            part: "restore modes",
            what: "after a NO_CLAIM restore the backends build on the restored snapshot's files: the first checkpoint is incremental and refers to files the user owns and may delete once it completed",
            modelled_on: "the NO_CLAIM contract of FLIP-193 (snapshot ownership): Flink does not own the restored snapshot, so the first checkpoint after it must be a full one; a first incremental checkpoint makes every later one depend on files the user deletes",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
        pub const ClaimKeepsRestoredFiles: Mutant = Mutant::declare(&MutantInfo {
            name: "claim-keeps-restored-files",
            part: "restore modes",
            what: "after a CLAIM restore the shared-state registry treats the restored snapshot's shared files as not claimed: once no checkpoint uses them they leave the registry but are never deleted",
            modelled_on: "SharedStateRegistryImpl.registerAllAfterRestored, which keeps the restored checkpoint's shared state (highestNotClaimedCheckpointID) in every mode but CLAIM; applied to CLAIM too, the files the job owns leak",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
    }
}
