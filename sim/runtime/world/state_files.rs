//! The checkpoint storage's files over a run (`runtime::storage`): what a
//! task's acknowledgement writes, what a completion registers and a
//! subsumption or an abort discards, what a notification confirms, what a
//! restore reads back, and the storage crashes. Only with `filesystem`
//! storage and coordinated checkpoints (the uncoordinated families keep
//! their own checkpoints, `world/local.rs`).

use super::*;
use crate::model::registry::StateLayout;
use crate::runtime::storage::{FileFinding, KeyedLayout, Storage, Write};
use crate::scenario::StateBackend;

impl World<'_> {
    /// The storage of a run: each task member's keyed layout.
    pub(super) fn new_storage(scenario: &Scenario, exec: &ExecGraph) -> Storage {
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
        Storage::new(layouts)
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
            let w = Write {
                task: t,
                id: p.id,
                states: &p.snapshot.states,
                in_flight_bytes: p.snapshot.in_flight_bytes(),
                synced_at: None,
                incremental: cp.state_backend == StateBackend::Incremental,
                savepoint: self.sp.by_id.contains_key(&p.id),
                max_runs: cp.max_runs,
                compaction_drops_oldest: self
                    .plan
                    .cfg
                    .mutants
                    .has(Mutant::CompactionDropsOldestRun),
            };
            self.storage.write_snapshot(&w);
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
            self.storage.confirm(t, id);
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
        self.storage.restarted(t, id);
        match id {
            Some(id) => self.storage.read(self.net.now, id, t, &states),
            None => Ok(states),
        }
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
        pub const AckBeforeSync: Mutant = Mutant::declare(&MutantInfo {
            name: "ack-before-sync",
            part: "checkpoint storage durability",
            what: "a task acknowledges once its state files are written, without syncing them: a completed checkpoint refers to files a storage crash loses",
            modelled_on: "FLINK-36421: file-merging checkpoints handed out the handle of a physical file that was flushed but never synced, so a machine crash after the checkpoint completed lost state it referred to",
            caught_by: "checkpoint-files",
            applies: &[("incremental", "aligned")],
        });
    }
}
