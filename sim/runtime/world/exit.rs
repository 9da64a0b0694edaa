//! How a task exits (FLIP-147, Flink's `StreamTask.afterInvoke`), its
//! state in `exit_state.rs`: after the end of its data a task keeps taking
//! part in checkpoints, and exits once its upstream tasks have exited
//! (`EndOfPartition` on every input), its receivers have read its
//! `EndOfData`, and it was notified of a checkpoint at least as new as the
//! first it snapshotted after its end of data. Exiting sends
//! `EndOfPartition` on every output.
//!
//! Checkpoints go on while tasks exit: the coordinator triggers the running
//! tasks none of whose upstream tasks still runs (the sources of what is
//! left of the graph, Flink's `DefaultCheckpointPlanCalculator`), waits for
//! every running task, and reports the exited ones as finished. An input
//! whose upstream exited counts as having delivered every later barrier
//! (the handlers' `processEndOfPartition`); a task triggered by RPC takes
//! the barrier as if read from every input that has not delivered it
//! (`StreamTask.triggerUnfinishedChannelsCheckpoint`).
//!
//! A task deployed from a checkpoint in which it had finished runs no
//! operator code: it ends its data at once and exits as soon as a
//! checkpoint lets it (`isTaskDeployedAsFinished`).

use super::exit_state::ExitState;
use super::*;
use crate::runtime::coordinator::{TaskAck, TaskSnapshot};

impl World<'_> {
    /// A fresh exit state for task `t` (`fresh_task`).
    pub(super) fn exit_state(&self, t: TaskId) -> ExitState {
        let info = &self.plan.exec.tasks[t as usize];
        let feedback_in = self.loops.as_ref().map_or(0, |l| {
            l.feedback_inputs(t).iter().filter(|&&f| f).count() as u32
        });
        let outputs = self.plan.task_outputs[t as usize]
            .iter()
            .filter(|&&ch| !self.is_feedback(ch))
            .count() as u32;
        ExitState::new(info.inputs.len() as u32, feedback_in, outputs)
    }

    /// All input consumed: every operator finishes, and downstream hears.
    pub(super) fn end_of_input(&mut self, t: TaskId) {
        self.end_data(t, true);
    }

    /// Task `t`'s data ends (Flink's `StreamTask.endData`). Drained, every
    /// operator of the chain finishes (a source first advances its event
    /// time to the end); not drained (a stop-with-savepoint without drain),
    /// none does: they keep what they hold, their timers stop, and the
    /// task's `EndOfData` says so downstream.
    pub(super) fn end_data(&mut self, t: TaskId, drain: bool) {
        let ti = t as usize;
        if self.tasks.list[ti].input_ended {
            return;
        }
        if drain {
            self.finish_operators(t);
        } else {
            self.tasks.list[ti].eod_stopped = true;
            self.rec.counters.tasks_stopped_without_drain += 1;
        }
        self.tasks.end_input(ti);
        self.tasks.list[ti].exit.triggers_at_end = self.rec.counters.checkpoints_triggered;
        if self.tasks.list[ti].is_source && drain {
            self.rec.input_end = self.rec.input_end.max(self.net.now);
        }
        let stopping = self
            .coord
            .pending
            .keys()
            .any(|id| self.sp.by_id.get(id).is_some_and(|sp| sp.stop));
        if !self.plan.cfg.algorithm.info().checkpoints && !stopping && self.tasks.all_input_ended()
        {
            // No checkpoints, so no final one: the job ends with its input
            // (a pending stop-with-savepoint is its final one: the tasks
            // finish when it completes).
            self.job.status = JobStatus::Finished;
        }
        self.mark(|| Timeline::InputEnded { task: t });
        if self.defers_end_of_data(t) {
            self.tasks.list[ti].exit.eod_deferred = true;
        } else {
            self.send_end_of_data(t, drain);
        }
        if self.is_local() {
            self.local_final(t);
        }
    }

    /// Every operator of task `t`'s chain finishes, in order: each
    /// member's input ends once the member feeding it has flushed
    /// (Flink's `finishOperators`).
    fn finish_operators(&mut self, t: TaskId) {
        let ti = t as usize;
        let source = self.tasks.list[ti].is_source;
        if source {
            self.end_of_event_time(t);
        }
        let members = self.tasks.list[ti].members.len();
        for m in usize::from(source)..members {
            let inst = self.tasks.list[ti].members[m].inst;
            self.rec.schedule.push(inst, Step::EndOfInput);
            let (member, mut ctx) = self.ctx_parts(t, m);
            member.op.end_of_input(&mut ctx);
            self.emit_from(t, m);
        }
        self.sink_took(self.net.now);
    }

    /// The coordinated families exit tasks one by one; the uncoordinated
    /// ones keep their own rule (`local.rs`), and a run without
    /// checkpoints ends with its input.
    fn exits_by_flip147(&self) -> bool {
        !self.is_local() && self.plan.cfg.algorithm.info().checkpoints
    }

    /// Some task took its final checkpoint or exited, or a
    /// stop-with-savepoint completed.
    pub(super) fn finishing_phase(&self) -> bool {
        self.coord.final_id.is_some()
            || self
                .tasks
                .list
                .iter()
                .any(|t| t.exit.final_min.is_some() || t.status == Status::Finished)
    }

    /// Task `t` took `snapshot` (operator state, clocks and timers filled
    /// in): after its end of data it is what the task leaves behind if it
    /// exits. One deployed as finished reports itself finished again (the
    /// state it was restored with, Flink's `FINISHED_ON_RESTORE`).
    pub(super) fn note_end_state(&mut self, t: TaskId, snapshot: &mut TaskSnapshot) {
        let task = &mut self.tasks.list[t as usize];
        snapshot.finished = task.exit.deployed_finished;
        if task.input_ended {
            let mut end = snapshot.clone();
            end.inputs.clear();
            end.outputs.clear();
            task.exit.end_state = Some(Box::new(end));
        }
    }

    /// Task `t` snapshotted checkpoint `id`: the first after its end of
    /// data is the one whose notification lets it exit.
    pub(super) fn note_final_min(&mut self, t: TaskId, id: CheckpointId) {
        if self.sp.by_id.get(&id).is_some_and(|sp| sp.stop) {
            self.tasks.list[t as usize].exit.sync_savepoint = Some(id);
        }
        let task = &mut self.tasks.list[t as usize];
        if task.input_ended && task.exit.final_min.is_none() {
            task.exit.final_min = Some(id);
            self.rec.counters.final_checkpoints_taken += 1;
            self.crash_trigger(crate::scenario::TriggerEvent::FinalSnapshot, Some(t), id);
        }
    }

    /// `EndOfData` on every output of task `t`, drained or not.
    pub(super) fn send_end_of_data(&mut self, t: TaskId, drain: bool) {
        for i in 0..self.plan.task_outputs[t as usize].len() {
            let ch = self.plan.task_outputs[t as usize][i];
            self.net.send_event(ch, Msg::EndOfData { drain }, false);
        }
    }

    /// Whether task `t` holds its `EndOfData` back until its final
    /// checkpoint's notification: on the development line, a task with a
    /// committer that forwards to a global committer (FLINK-38614's fix:
    /// what the committer forwards on that notification then precedes
    /// `EndOfData`, and the global committer's final checkpoint is a later
    /// one, whose notification publishes it).
    pub(super) fn defers_end_of_data(&self, t: TaskId) -> bool {
        let scenario = &self.plan.scenario;
        scenario
            .checkpoint
            .flink_version
            .defers_committer_end_of_data()
            && self.plan.exec.tasks[t as usize].chain.iter().any(|&op| {
                scenario.op(op).kind.is_committer()
                    && crate::model::kinds::forwards_commits(scenario, op.0)
            })
    }

    /// Task `t` was notified of checkpoint `id`: an `EndOfData` it held
    /// back goes out once `id` covers its final checkpoint (or at once
    /// with `now`, when the task exits for a stop-with-savepoint).
    pub(super) fn release_end_of_data(&mut self, t: TaskId, id: CheckpointId, now: bool) {
        let e = &self.tasks.list[t as usize].exit;
        if e.eod_deferred && (now || e.final_min.is_some_and(|m| id >= m)) {
            self.tasks.list[t as usize].exit.eod_deferred = false;
            let drain = !self.tasks.list[t as usize].eod_stopped;
            self.send_end_of_data(t, drain);
        }
    }

    /// Task `t` read `buf` from channel `ch` after the end of its input:
    /// its operators have finished, and Flink's input processor hands
    /// such records to `FinishedDataOutput`, which drops them (it logs
    /// "Unexpected record after finish() received." at DEBUG). Only a
    /// sender that emits after its own `EndOfData` gets here.
    pub(super) fn drop_after_end_of_data(&mut self, t: TaskId, ch: ChannelId, buf: Vec<Record>) {
        let records = buf.iter().filter(|r| !r.is_element()).count() as u64;
        if records == 0 {
            return;
        }
        self.rec.counters.records_dropped_after_end_of_data += records;
        let from = &self.plan.exec.tasks[self.plan.exec.channels[ch as usize].from as usize].name;
        let to = &self.plan.exec.tasks[t as usize].name;
        let what = format!(
            "task {to} dropped {} from {from} that arrived after the end of its input (every input had delivered EndOfData; Flink's FinishedDataOutput drops them): {from} emitted them after its own EndOfData",
            crate::engine::count(records, "record")
        );
        self.rec
            .evidence
            .dropped_after_end_of_data
            .push((self.net.now.0, what));
    }

    /// The receiver of channel `ch` read its `EndOfData`: the sender may
    /// be waiting for that (`getAllDataProcessedFuture`).
    pub(super) fn end_of_data_consumed(&mut self, ch: ChannelId) {
        if self.is_feedback(ch) {
            return;
        }
        let from = self.plan.exec.channels[ch as usize].from;
        let task = &mut self.tasks.list[from as usize];
        if task.status != Status::Running {
            return;
        }
        task.exit.eod_unconsumed = task.exit.eod_unconsumed.saturating_sub(1);
        self.try_exit(from);
    }

    /// Task `t` exits if nothing holds it any more.
    pub(super) fn try_exit(&mut self, t: TaskId) {
        let e = &mut self.tasks.list[t as usize].exit;
        if e.in_actions > 0 && !self.plan.cfg.mutants.has(Mutant::ExitInsideBarrierStep) {
            // Inside one step of the task's thread (a barrier's actions):
            // tried again after its last action.
            e.exit_held = true;
            return;
        }
        let task = &self.tasks.list[t as usize];
        let e = &task.exit;
        // Without checkpoints only a stop-with-savepoint ends a task.
        if !self.exits_by_flip147() && e.sync_savepoint.is_none() {
            return;
        }
        let notified = match e.sync_savepoint {
            Some(_) if self.plan.cfg.mutants.has(Mutant::StopSavepointNotAwaited) => {
                // Mutant: the synchronous savepoint is not waited for.
                fired(Mutant::StopSavepointNotAwaited);
                true
            }
            Some(_) => e.sync_notified,
            None => e.final_min.is_some_and(|m| task.last_notified >= m),
        };
        if task.status != Status::Running
            || !task.input_ended
            || e.eop_remaining > 0
            || e.eod_unconsumed > 0
        {
            return;
        }
        // A call that blocked the task's thread (a commit waiting for the
        // transaction coordinator) has not returned: the task exits once it
        // has (`block_returned`), or fails if it throws then.
        let blocked = task.flush_blocked.is_some_and(|(_, u)| u > self.net.now);
        if blocked || self.blocked_until(t).is_some() {
            return;
        }
        // `stop-the-world` snapshots every running task at the coordinator's
        // word, after the drain: a task taking part in a pending checkpoint
        // waits for its snapshot, as one with a pending ack does.
        let in_pause = self.stop_the_world()
            && (self.coord.pending.values())
                .any(|p| p.acks.get(t as usize).is_some_and(Option::is_none));
        if task.pending_ack.is_some() || in_pause {
            // A snapshot not yet acknowledged (its timeoutable barrier still
            // held in an output queue) keeps the task: Flink's `afterInvoke`
            // waits for pending checkpoints; `maybe_ack` tries again.
            self.rec.counters.exits_waiting_for_ack += 1;
            if !self.plan.cfg.mutants.has(Mutant::ExitsWithAckPending) {
                return;
            }
            // Mutant: the task exits, and the ack is never sent.
            fired(Mutant::ExitsWithAckPending);
        }
        if !notified {
            if self
                .plan
                .cfg
                .mutants
                .has(Mutant::FinalNotificationNotAwaited)
            {
                // Mutant: the task exits at the end of its data, without
                // waiting for a checkpoint to cover its last records.
                fired(Mutant::FinalNotificationNotAwaited);
                self.exit(t);
            }
            return;
        }
        self.exit(t);
    }

    /// Task `t` exits: `FINISHED`, with `EndOfPartition` on every output.
    pub(super) fn exit(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].exit.in_actions > 0 {
            // Mutant: the task exits between two actions of one barrier.
            fired(Mutant::ExitInsideBarrierStep);
        }
        self.note_held_at_exit(t);
        self.tasks.set_status(ti, Status::Finished);
        self.net.sched[ti].alive = false;
        self.mark(|| Timeline::Finished { task: t });
        if self.tasks.count(Status::Running) > 0 {
            self.rec.counters.tasks_finished_while_others_ran += 1;
        }
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            self.net.send_event(ch, Msg::EndOfPartition, false);
        }
        // The coordinator hears of it one RPC later (Flink's
        // `updateTaskExecutionState`): until then it plans with the task
        // running, and a trigger sent to it fails.
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        self.tasks.list[ti].exit.reported_at = Some(at);
        if self.tasks.all(Status::Finished) {
            self.job.status = JobStatus::Finished;
        }
        self.reader_exited(t);
    }

    /// Task `t` exits: what its operators hold that nothing will finish
    /// (committables never committed or sent on) is the finishing check's
    /// evidence. A stop-with-savepoint's savepoint keeps it, for a restore
    /// to finish.
    fn note_held_at_exit(&mut self, t: TaskId) {
        let ti = t as usize;
        if let Some(p) = &self.tasks.list[ti].pending_ack {
            let name = &self.plan.exec.tasks[ti].name;
            let why = match p.waiting_barriers {
                true => "some inputs' barriers still missing",
                false => "its barrier still held in a full output queue",
            };
            let what = format!(
                "task {name} exited with its snapshot of checkpoint {} not acknowledged ({why}): the coordinator waits for an acknowledgement that never comes",
                p.id
            );
            self.rec.evidence.held_at_exit.push((self.net.now.0, what));
        }
        self.note_barrier_owed_at_exit(t);
        if self.tasks.list[ti].exit.sync_savepoint.is_some() {
            return;
        }
        for m in 0..self.tasks.list[ti].members.len() {
            let store = &self.tasks.store;
            let Some(what) = self.tasks.list[ti].members[m].op.held_at_exit(store) else {
                continue;
            };
            let name = &self.plan.exec.tasks[ti].name;
            let what = format!("task {name} exited holding {what}");
            self.rec.evidence.held_at_exit.push((self.net.now.0, what));
        }
    }

    /// Task `t` exits after taking the barrier of a pending checkpoint (the
    /// newest it took) that it neither snapshotted nor declined: the
    /// coordinator waits for an acknowledgement that never comes (until
    /// the checkpoint expires). Older barriers it took were snapshotted or
    /// declined when a newer one came; one it never took (cancelled
    /// upstream, or skipped for a newer) it owes nothing.
    fn note_barrier_owed_at_exit(&mut self, t: TaskId) {
        let ti = t as usize;
        let task = &self.tasks.list[ti];
        let Some(id) = task.exit.last_barrier.map(|b| b.id) else {
            return;
        };
        let owed = id > task.last_checkpoint
            && !task.declined.contains(&id)
            && (self.coord.pending.get(&id))
                .is_some_and(|p| p.acks.get(ti).is_some_and(Option::is_none));
        if owed {
            let what = format!(
                "task {} exited after taking the barrier of checkpoint {id}, which it neither snapshotted nor declined: the coordinator waits for an acknowledgement that never comes",
                self.plan.exec.tasks[ti].name
            );
            self.rec.evidence.held_at_exit.push((self.net.now.0, what));
        }
    }

    /// Whether the coordinator knows task `t` exited.
    fn known_finished(&self, t: TaskId) -> bool {
        let task = &self.tasks.list[t as usize];
        task.status == Status::Finished
            && task.exit.reported_at.is_some_and(|at| at <= self.net.now)
    }

    /// Task `t` read `EndOfPartition` on input `pick`: its upstream task
    /// exited. The input counts as having delivered the barrier the handler
    /// is waiting for, and the task may now exit.
    pub(super) fn read_end_of_partition(&mut self, t: TaskId, pick: u32) {
        let feedback = self
            .loops
            .as_ref()
            .is_some_and(|l| l.feedback_in[t as usize][pick as usize]);
        let e = &mut self.tasks.list[t as usize].exit;
        if e.eop[pick as usize] {
            return;
        }
        e.eop[pick as usize] = true;
        if !feedback {
            e.eop_remaining -= 1;
        }
        if let Some(b) = e.last_barrier {
            self.stand_in_barrier(t, pick, b);
        }
        self.try_exit(t);
    }

    /// A barrier read from input `pick` of task `t`: remembered, and
    /// stood in for on every input whose upstream already exited.
    pub(super) fn barrier_taken(&mut self, t: TaskId, pick: u32, b: Barrier) {
        let e = &mut self.tasks.list[t as usize].exit;
        let seen = &mut e.input_barrier[pick as usize];
        *seen = (*seen).max(b.id);
        if e.last_barrier.is_some_and(|l| l.id >= b.id) {
            return;
        }
        e.last_barrier = Some(b);
        for i in 0..e.eop.len() as u32 {
            if self.tasks.list[t as usize].exit.eop[i as usize] {
                self.stand_in_barrier(t, i, b);
            }
        }
    }

    /// The handler of task `t` takes barrier `b` on input `i`, which has
    /// not delivered it and never will (its upstream exited, or an RPC
    /// triggered the task).
    fn stand_in_barrier(&mut self, t: TaskId, i: u32, b: Barrier) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running
            || self.tasks.list[ti].exit.input_barrier[i as usize] >= b.id
        {
            return;
        }
        self.tasks.list[ti].exit.input_barrier[i as usize] = b.id;
        self.rec.counters.barriers_stood_in += 1;
        let mut actions = std::mem::take(&mut self.tasks.actions);
        let now = self.net.now;
        self.tasks.list[ti]
            .handler
            .on_barrier(i, b, now, &mut actions);
        self.apply_actions(t, &mut actions);
        self.tasks.actions = actions;
    }

    /// A trigger RPC reached task `t`, which has inputs: every upstream
    /// task had exited when the checkpoint was planned. The barrier is
    /// taken as if read from each input that has not delivered it: what is
    /// queued on one whose `EndOfPartition` is still to come is processed
    /// after the snapshot (aligned) or becomes its channel state
    /// (unaligned), as Flink's `triggerUnfinishedChannelsCheckpoint` does.
    pub(super) fn trigger_by_rpc(&mut self, t: TaskId, b: Barrier) {
        self.rec.counters.tasks_triggered_after_upstream_finished += 1;
        let e = &mut self.tasks.list[t as usize].exit;
        if e.last_barrier.is_none_or(|l| l.id < b.id) {
            e.last_barrier = Some(b);
        }
        // A feedback input's barrier comes round the loop (the handler
        // treats it as the loop's own), unless its sender exited.
        for i in 0..e.eop.len() as u32 {
            let feedback = self
                .loops
                .as_ref()
                .is_some_and(|l| l.feedback_in[t as usize][i as usize]);
            if !feedback || self.tasks.list[t as usize].exit.eop[i as usize] {
                self.stand_in_barrier(t, i, b);
            }
        }
    }

    /// The tasks checkpoint `id` triggers: those the coordinator believes
    /// running none of whose upstream tasks it believes running. The ones it
    /// knows exited are reported finished in it at once, with their cut at
    /// the exit; one that exited unbeknown to it is triggered or waited for
    /// as if running (its trigger fails).
    pub(super) fn plan_trigger(&mut self, id: CheckpointId) -> Vec<TaskId> {
        let mut trigger = Vec::new();
        let mut finished = 0;
        for t in 0..self.tasks.list.len() as TaskId {
            let ti = t as usize;
            match self.tasks.list[ti].status {
                Status::Finished if self.known_finished(t) => {
                    finished += 1;
                    // Its schedule is complete: a restore continues it
                    // where it ended (the oracle replays it whole).
                    let log_pos = self.tasks.list[ti]
                        .members
                        .iter()
                        .map(|m| self.rec.schedule.pos(m.inst))
                        .collect();
                    let end = self.tasks.list[ti].exit.end_state.as_deref();
                    let mut ack = TaskAck {
                        snapshot: TaskSnapshot {
                            finished: true,
                            log_pos,
                            states: end.map_or(Vec::new(), |s| s.states.clone()),
                            watermarks: end.map_or(Vec::new(), |s| s.watermarks.clone()),
                            timers: end.map_or(Vec::new(), |s| s.timers.clone()),
                            ..TaskSnapshot::default()
                        },
                        cut: self.task_cut(ti),
                        input_ended: true,
                        start_delay_ns: 0,
                        alignment_ns: 0,
                        arrived: false,
                        durable_at: self.net.now,
                        persisted_bytes: 0,
                        full_bytes: 0,
                    };
                    ack.persisted_bytes = ack.snapshot.state_bytes();
                    ack.full_bytes = ack.persisted_bytes;
                    let mut out = Vec::new();
                    if self.coord.record_ack(id, t, ack) {
                        self.coord.ack(t, id, &mut out);
                    }
                    self.perform(out);
                }
                _ if self.tasks.list[ti].is_source => trigger.push(t),
                _ if self.plan.cfg.mutants.has(Mutant::TriggersOnlyJobSources) => {
                    // Mutant: only the job's own sources are triggered.
                    fired(Mutant::TriggersOnlyJobSources);
                }
                _ => {
                    let upstream_running = self.plan.exec.tasks[ti].inputs.iter().any(|&ch| {
                        let from = self.plan.exec.channels[ch as usize].from;
                        !self.is_feedback(ch) && !self.known_finished(from)
                    });
                    if !upstream_running {
                        trigger.push(t);
                    }
                }
            }
        }
        if finished > 0 {
            self.rec.counters.checkpoints_with_finished_tasks += 1;
        }
        trigger
    }

    /// A trigger RPC reached task `t`, which exited after the checkpoint
    /// was planned: it declines (Flink fails the trigger of a task no
    /// longer running).
    pub(super) fn trigger_after_exit(&mut self, t: TaskId, id: CheckpointId) {
        if !self.coord.is_pending(id) {
            return;
        }
        self.rec.counters.checkpoints_failed_task_finished += 1;
        self.decline_rpc(t, id, AbortReason::TaskFinished);
    }

    /// Task `t` is deployed from a checkpoint in which it had finished: no
    /// operator runs, its data ends at once.
    pub(super) fn deploy_finished(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        self.tasks.list[ti].exit.was_finished = Some(id);
        self.rec.counters.tasks_restored_finished += 1;
        if self
            .plan
            .cfg
            .mutants
            .has(Mutant::FinishedOperatorRestoredRunning)
        {
            // Mutant: the subtask is deployed running, from empty state.
            fired(Mutant::FinishedOperatorRestoredRunning);
            return;
        }
        self.tasks.list[ti].exit.deployed_finished = true;
        self.tasks.end_input(ti);
        self.mark(|| Timeline::InputEnded { task: t });
        // A source's end of event time goes out again (`endData` runs
        // `advanceToEndOfEventTime`); a task with inputs forwards the
        // `MAX_WATERMARK` its inputs send (`FinishedOnRestoreInput`).
        if self.tasks.list[ti].is_source {
            self.end_of_event_time(t);
        }
        // Its receivers hear its end of data from it again: no channel
        // state holds one (Flink persists buffers, not events, in
        // unaligned in-flight data).
        if self.plan.cfg.mutants.has(Mutant::FinishedOnRestoreSilent) {
            // Mutant: the end of data is taken as restored with the
            // receivers' channel state, and not sent.
            fired(Mutant::FinishedOnRestoreSilent);
            return;
        }
        self.send_end_of_data(t, true);
    }

    /// The tasks that ended their data and still run where the finishing
    /// mechanism is to blame, each with what holds it (the finishing
    /// check's evidence at the end of a run): checkpoints were triggered
    /// after its end of data but none reached it, or one it waits for
    /// completed without its notification and nothing newer did (its
    /// neighbours it waits for too are named). A task that waits because no
    /// checkpoint completes at all is the liveness check's to report.
    pub(super) fn not_exited(&self) -> Vec<String> {
        if !self.exits_by_flip147() {
            return Vec::new();
        }
        let triggered = self.rec.counters.checkpoints_triggered;
        let completed = self.coord.last_completed_id;
        let mut found = Vec::new();
        for (ti, task) in self.tasks.list.iter().enumerate() {
            if task.status != Status::Running || !task.input_ended {
                continue;
            }
            let e = &task.exit;
            let mut waits = Vec::new();
            if e.eop_remaining > 0 {
                waits.push(format!("{} upstream task(s) to exit", e.eop_remaining));
            }
            if e.eod_unconsumed > 0 {
                waits.push(format!(
                    "{} receiver(s) to read its end of data",
                    e.eod_unconsumed
                ));
            }
            let neighbours = waits.len();
            match e.final_min {
                None if triggered > e.triggers_at_end => waits.push(format!(
                    "a checkpoint to reach it: {} were triggered after its end of data, none snapshotted it",
                    triggered - e.triggers_at_end
                )),
                Some(m) if task.last_notified < m && completed >= m => waits.push(format!(
                    "the notification of checkpoint {m}, which completed (last notified: {})",
                    task.last_notified
                )),
                _ => {}
            }
            // Waiting only for its neighbours is a consequence: the task
            // that holds them is named.
            if e.final_min.is_some_and(|m| task.last_notified >= m) || waits.len() == neighbours {
                continue;
            }
            found.push(format!(
                "task {} ended its data and never exited: it waited for {}",
                self.plan.exec.tasks[ti].name,
                waits.join(", ")
            ));
        }
        found
    }

    /// The checkpoints pending at the end of the run, each with the tasks
    /// whose acknowledgement it still waited for and what became of them.
    pub(super) fn pending_at_end(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (&id, p) in &self.coord.pending {
            let missing: Vec<String> = (p.acks.iter().enumerate())
                .filter(|(_, a)| a.is_none())
                .map(|(ti, _)| {
                    let how = match self.tasks.list[ti].status {
                        Status::Running => "running",
                        Status::Dead => "dead",
                        Status::Finished => "exited",
                        Status::Cancelled => "cancelled",
                    };
                    format!("{} ({how})", self.plan.exec.tasks[ti].name)
                })
                .collect();
            let waits = match missing.len() {
                0 => "its finalization".to_string(),
                n if n > 4 => format!(
                    "the acknowledgements of {} and {} more",
                    missing[..4].join(", "),
                    n - 4
                ),
                _ => format!("the acknowledgements of {}", missing.join(", ")),
            };
            found.push(format!(
                "checkpoint {id}, triggered at {}, waited for {waits}",
                crate::engine::SimDuration(p.trigger_time.0)
            ));
        }
        found
    }

    /// Task `t` runs operator code (reads records or polls its source):
    /// the finishing check's rule that a subtask restored as finished never
    /// runs again.
    pub(super) fn judge_rerun(&mut self, t: TaskId) {
        let e = &self.tasks.list[t as usize].exit;
        let Some(id) = e.was_finished.filter(|_| !e.reran_noted) else {
            return;
        };
        self.tasks.list[t as usize].exit.reran_noted = true;
        let name = self.plan.exec.tasks[t as usize].name.clone();
        self.violation(
            CheckId::Finishing,
            format!(
                "task {name} had finished in checkpoint {id}, and runs its operators again after the restore from it"
            ),
        );
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const TriggersOnlyJobSources: Mutant = Mutant::declare(&MutantInfo {
            name: "triggers-only-job-sources",
            part: "checkpoints with finished tasks",
            what: "the coordinator triggers only the job's own sources: once one has exited, no barrier reaches the tasks it fed, every checkpoint expires, and the tasks waiting for their final checkpoint never exit",
            modelled_on: "checkpointing before FLIP-147 (FLINK-2491: no checkpoint completes once a task finished); DefaultCheckpointPlanCalculator now triggers the running tasks none of whose upstream tasks runs",
            caught_by: "liveness",
            applies: &[("sink-v2-global", "aligned"), ("sink-v2-global", "unaligned")],
        });
        pub const FinishedOnRestoreSilent: Mutant = Mutant::declare(&MutantInfo {
            name: "finished-on-restore-silent",
            part: "restore of finished tasks",
            what: "a subtask deployed as finished sends no EndOfData, as if its receivers had it in their restored channel state: they never end their input and never exit",
            modelled_on: "unaligned in-flight data holds buffers, not events (PipelinedSubpartition and RemoteInputChannel persist only isBuffer() entries), so a task deployed as finished must emit EndOfData again (FLIP-147's FinishedOnRestoreInput and StreamTaskFinishedOnRestoreSourceInput)",
            caught_by: "liveness",
            applies: &[("finishing-sources", "aligned"), ("finishing-sources", "unaligned")],
        });
        pub const StopSavepointNotAwaited: Mutant = Mutant::declare(&MutantInfo {
            name: "stop-savepoint-not-awaited",
            part: "stop-with-savepoint",
            what: "a task that took the stop-with-savepoint exits once its neighbours let it, without waiting for the savepoint's notification: sinks never commit the savepoint's transactions, and the job finishes instead of stopping",
            modelled_on: "FLINK-21133 (a FLIP-27 source task finished at its end of data during stop-with-savepoint instead of waiting for the synchronous savepoint); StreamTask now waits for finalCheckpointCompleted of its syncSavepoint",
            caught_by: "exactly-once-output",
            applies: &[("windows", "aligned"), ("savepoints", "unaligned")],
        });
        pub const FinalNotificationNotAwaited: Mutant = Mutant::declare(&MutantInfo {
            name: "final-notification-not-awaited",
            part: "task exit",
            what: "a task exits at the end of its data once its neighbours let it, without waiting for the notification of a checkpoint taken after its last records, so the last transactions are never committed",
            modelled_on: "bounded jobs losing the last 2PC transaction before FLIP-147 (FLINK-2491's family: no checkpoint, and no notification, after a task finished; StreamTask.afterInvoke now waits for finalCheckpointCompleted)",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned")],
        });
        pub const ExitsWithAckPending: Mutant = Mutant::declare(&MutantInfo {
            name: "exits-with-ack-pending",
            part: "task exit",
            what: "a task exits while a snapshot it took is not yet acknowledged (its timeoutable barrier still held in an output queue): the ack is never sent, no checkpoint completes again, and the sinks' last transactions stay pre-committed",
            modelled_on: "StreamTask.afterInvoke's subtaskCheckpointCoordinator.waitForPendingCheckpoints(): a finishing task must not drop the asynchronous part of a checkpoint it started, or the coordinator waits for an acknowledgement that never comes",
            caught_by: "finishing",
            applies: &[("finishing-backpressure", "aligned-timeout")],
        });
        pub const ExitInsideBarrierStep: Mutant = Mutant::declare(&MutantInfo {
            name: "exit-inside-barrier-step",
            part: "task exit",
            what: "a task whose input ended exits between two actions of one barrier: a newer checkpoint's barrier aborts the subsumed one (its pending ack forgotten, the task free to exit) and the task exits before it takes the newer snapshot, which the coordinator then waits for until it expires",
            modelled_on: "StreamTask's mailbox loop: a barrier is handled in one mail (CheckpointBarrierHandler aborts the subsumed checkpoint and starts the new one in the same call), and the task leaves the loop, and afterInvoke waits for pending checkpoints, only between mails",
            caught_by: "finishing",
            applies: &[("iterate-finishing", "unaligned")],
        });
        pub const FinishedOperatorRestoredRunning: Mutant = Mutant::declare(&MutantInfo {
            name: "finished-operator-restored-running",
            part: "restore of finished tasks",
            what: "a subtask that had finished in the checkpoint restored is deployed running from empty state: a source reads its input again",
            modelled_on: "FLIP-147's FullyFinishedOperatorState and isTaskDeployedAsFinished (before them, a restored job ran every operator again; FLINK-21080 and FLINK-22979 dealt with finished operators' state on restore)",
            caught_by: "finishing",
            applies: &[("finishing-sources", "aligned"), ("finishing-sources", "unaligned")],
        });
    }
}
