//! The checkpoint RPCs a task receives from the coordinator: the trigger
//! of a source task, the resumption of a source held by a stop, and the
//! notifications that a checkpoint completed (commit) or was aborted.
//!
//! They act on the task as the RPC arrives; they must never decide what
//! the coordinator decides (whether a checkpoint completes), only what the
//! task does with the news.

use super::*;

impl World<'_> {
    pub(super) fn trigger_source(&mut self, t: TaskId, b: Barrier) {
        if self.tasks.list[t as usize].status != Status::Running {
            return;
        }
        if !self.tasks.list[t as usize].is_source {
            return self.trigger_by_rpc(t, b);
        }
        if let Some(sp) = self.sp.by_id.get(&b.id).filter(|sp| sp.stop) {
            // Stop-with-savepoint (Flink's `triggerStopWithSavepointAsync`):
            // the source stops and ends its data before the barrier. With
            // drain every operator finishes (flushes) before the barrier
            // reaches it; without, none does, and the end of data says so.
            let drain = sp.drain;
            self.tasks.list[t as usize].stopped = true;
            self.end_data(t, drain);
        }
        self.tasks.list[t as usize].alignment_start = Some((b.id, self.net.now));
        self.tasks.list[t as usize].last_alignment_ns = 0;
        if self.stop_the_world() {
            // Pause, and send the drain marker behind the last records.
            let task = &self.tasks.list[t as usize];
            if task.aborted.contains(&b.id) || task.paused.is_some_and(|p| p > b.id) {
                // Its abort came first, or a newer checkpoint's trigger did
                // (this one waited for operator events): there is nothing
                // to pause for, and the newer pause must not become this
                // one's (its abort would end it mid-drain).
                self.forward_drain_marker(t, b);
                return;
            }
            self.rec.counters.sources_paused += 1;
            // A pause belongs to its checkpoint: one still paused for an
            // older checkpoint (its abort not yet here) starts anew.
            self.release(t, None);
            let was = self.tasks.list[t as usize].paused.replace(b.id);
            if was.is_none() {
                // A paused source's idleness clock stops (the runtime
                // blocks it, as backpressure does).
                self.net.sched[t as usize].stop_clock(self.net.now);
            }
            self.hold(t, None);
            self.forward_drain_marker(t, b);
            return;
        }
        self.checkpoint(t, b);
        self.all_barriers(t, b.id);
    }

    /// `stop-the-world`: a paused source resumes once its checkpoint is
    /// complete or aborted.
    pub(super) fn resume_source(&mut self, t: TaskId, id: CheckpointId) {
        self.resume_timers(t, id);
        let task = &mut self.tasks.list[t as usize];
        if task.paused.is_some_and(|p| id >= p) {
            task.paused = None;
            self.net.sched[t as usize].start_clock(self.net.now);
            self.release(t, None);
            self.net.poke(t);
        }
    }

    pub(super) fn notify_complete(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running {
            return;
        }
        if id <= self.tasks.list[ti].last_notified {
            self.rec.counters.notifications_ignored += 1;
            return;
        }
        self.crash_trigger(TriggerEvent::Notify, Some(t), id);
        if self.coord.aborted_ids.contains(&id) {
            let name = self.plan.exec.tasks[ti].name.clone();
            self.violation(
                CheckId::Protocol,
                format!("task {name} notified complete for aborted checkpoint {id}"),
            );
        }
        self.note_catch_up(t, id);
        self.tasks.list[ti].last_notified = id;
        self.files_confirmed(t, id);
        self.resume_source(t, id);
        // Every operator of the chain, tail first (Flink's
        // `OperatorChain.notifyCheckpointComplete`).
        for m in (0..self.tasks.list[ti].members.len()).rev() {
            if m > 0 && self.plan.cfg.mutants.has(Mutant::ChainNotifiesHeadOnly) {
                fired(Mutant::ChainNotifiesHeadOnly);
                continue;
            }
            let inst = self.tasks.list[ti].members[m].inst;
            self.rec.schedule.push(inst, Step::Complete(id));
            let thrown = self.tasks.store.thrown();
            self.notify_member(t, m, id);
            if self.tasks.store.thrown() > thrown {
                // Its call threw (a commit that failed): it promises
                // nothing; a restore commits again, and a job that gives
                // up leaves it to the next restore of the checkpoint.
                self.rec.schedule.push(inst, Step::Untaken);
            }
            self.emit_from(t, m);
        }
        if self.is_local() {
            // The uncoordinated families' own final checkpoint.
            self.local_try_finish(t);
        } else if self.coord.final_id.is_some_and(|f| id >= f) {
            // A stop-with-savepoint completed: the task exits once its
            // upstream tasks have and its receivers read its end of data
            // (`finalCheckpointCompleted` of the synchronous savepoint).
            self.release_end_of_data(t, id, true);
            self.tasks.list[ti].exit.sync_notified = true;
            self.try_exit(t);
        } else {
            self.release_end_of_data(t, id, false);
            if self.tasks.list[ti].exit.final_min.is_some_and(|m| id >= m) {
                self.crash_trigger(TriggerEvent::FinalNotify, Some(t), id);
            }
            self.try_exit(t);
        }
    }

    pub(super) fn notify_aborted(
        &mut self,
        t: TaskId,
        id: CheckpointId,
        latest_completed: CheckpointId,
    ) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running {
            return;
        }
        // Flink's catch-up: an abort carries the latest completed id.
        if latest_completed > self.tasks.list[ti].last_notified {
            self.note_abort_catch_up(t, latest_completed);
            self.notify_complete(t, latest_completed);
            if self.tasks.list[ti].status != Status::Running {
                return;
            }
        }
        if self.plan.cfg.mutants.has(Mutant::AbortedPauseKept)
            && self.tasks.list[ti].paused.is_some()
        {
            // Mutant: the source stays paused until a later checkpoint
            // completes.
            fired(Mutant::AbortedPauseKept);
        } else {
            self.resume_source(t, id);
        }
        for m in (0..self.tasks.list[ti].members.len()).rev() {
            let inst = self.tasks.list[ti].members[m].inst;
            self.rec.schedule.push(inst, Step::Aborted(id));
            let (member, mut ctx) = self.ctx_parts(t, m);
            member.op.notify_checkpoint_aborted(id, &mut ctx);
            self.emit_from(t, m);
        }
        if id > self.tasks.list[ti].last_checkpoint {
            self.tasks.list[ti].aborted.insert(id);
        }
        self.stop_persisting(t, id);
    }

    /// Flink's `SubtaskCheckpointCoordinatorImpl.notifyCheckpointAborted`:
    /// the asynchronous part of checkpoint `id` is cancelled (no ack) and
    /// the channel-state writer drops that checkpoint's data, on every
    /// input. The barrier handler is not told, and a newer checkpoint's
    /// capture goes on.
    fn stop_persisting(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        if self.tasks.list[ti]
            .pending_ack
            .as_ref()
            .is_some_and(|p| p.id == id)
        {
            self.tasks.list[ti].pending_ack = None;
            self.rec.counters.acks_cancelled_by_abort += 1;
        }
        let newer = self.plan.cfg.mutants.has(Mutant::AbortStopsNewerCapture);
        for &ch in &self.plan.exec.tasks[ti].inputs {
            let Some(cap) = &self.net.channels[ch as usize].capture else {
                continue;
            };
            if cap.id == id {
                self.net.channels[ch as usize].capture = None;
            } else if cap.id > id {
                self.rec.counters.aborts_during_newer_capture += 1;
                if newer {
                    // Mutant: the writer's abort taken as "everything up to
                    // now", so the newer checkpoint's capture goes too.
                    fired(Mutant::AbortStopsNewerCapture);
                    self.net.channels[ch as usize].capture = None;
                }
            }
        }
        self.try_exit(t);
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const AbortedPauseKept: Mutant = Mutant::declare(&MutantInfo {
            name: "aborted-pause-kept",
            part: "stop-the-world sources",
            what: "a source paused for a stop-the-world checkpoint is not resumed when that checkpoint is aborted (it expired): it stays paused until a later checkpoint completes, and every expired checkpoint stops the input for a timeout and an interval more",
            modelled_on: "holds released only on the happy path: an input blocked or paused for a checkpoint must be released by its abort as by its completion (Flink's CheckpointBarrierHandler releasing blocked channels on a cancellation marker or an abort notification)",
            caught_by: "progress",
            applies: &[("timeouts", "stop-the-world")],
        });
    }
}
