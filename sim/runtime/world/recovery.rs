//! Crashes, global failover and restart, and the one restore sequence
//! (Flink's order: output channel state, operator state, input channel
//! state) used by global and region restarts.

use super::fault_state::take_fired;
use super::*;

impl World<'_> {
    // ------------------------------------------------------------ faults

    /// `on` happened (at task `task` for one task's events, for checkpoint
    /// `id`): every crash armed for it is scheduled `delay` from now, once.
    pub(super) fn crash_trigger(&mut self, on: TriggerEvent, task: Option<TaskId>, id: u64) {
        if !self.faults.armed_workers.is_empty() {
            self.worker_crash_trigger(on, task, id);
        }
        if !self.faults.armed_coordinator.is_empty() {
            self.coordinator_crash_trigger(on, task, id);
        }
        if !self.faults.armed_network.is_empty() {
            self.network_fault_trigger(on, task, id);
        }
        if !self.faults.armed_slow.is_empty() {
            self.slow_task_trigger(on, task, id);
        }
        if self.faults.armed_crashes.is_empty() {
            return;
        }
        let now = self.net.now;
        let plan = &self.faults.crash_plan;
        let fired = take_fired(
            &mut self.faults.armed_crashes,
            (on, task, id),
            &self.plan.exec,
            |i| {
                let c = &plan[i as usize];
                let tr = c.trigger.as_ref()?;
                Some((tr, Some(tr.of.unwrap_or((c.operator, c.subtask)))))
            },
        );
        for (index, delay) in fired {
            let at = now.plus(delay);
            self.faults.phase_end = self.faults.phase_end.max(at);
            self.faults.crash_plan[index as usize].at = at;
            self.schedule_any(at, Ev::Crash { index });
        }
    }

    /// Before a step of task `t`, a crash point of it not fired yet: a
    /// choice whether it crashes here (`[replay] crash_points`). True if it
    /// did.
    pub(super) fn crash_point(&mut self, t: TaskId) -> bool {
        let points = self.faults.first_crash_point..self.faults.crash_plan.len();
        let Some(index) = points.into_iter().find(|&i| {
            let c = &self.faults.crash_plan[i];
            self.faults.log.crashes[i] == Fate::Pending
                && self.plan.exec.task_of(c.operator, c.subtask) == t
        }) else {
            return false;
        };
        if crate::runtime::scheduler::choose(2) == 0 {
            return false;
        }
        let now = self.net.now;
        self.faults.crash_plan[index].at = now;
        self.faults.phase_end = self.faults.phase_end.max(now);
        self.crash(index as u32);
        true
    }

    /// A restart arms again every `repeat = true` crash that fired (or
    /// came to nothing) in an earlier attempt: the task fails in every
    /// attempt, as one whose code always throws.
    pub(super) fn rearm_repeating_crashes(&mut self) {
        for i in 0..self.faults.first_crash_point {
            let c = &self.faults.crash_plan[i];
            let i = i as u32;
            if c.repeat
                && c.trigger.is_some()
                && self.faults.log.crashes[i as usize] != Fate::Pending
                && !self.faults.armed_crashes.contains(&i)
            {
                self.faults.armed_crashes.push(i);
            }
        }
    }

    /// Where a crash of task `ti` is relative to checkpoint events: the
    /// job's latest snapshot or notification (of a running task's head),
    /// then the task's own (see `CrashPoint::anchors`).
    fn crash_anchors(&self, ti: usize) -> Vec<crate::runtime::output::CrashAnchor> {
        let schedule = &self.rec.schedule;
        let at = |t: &super::tasks::Task| {
            let head = &t.members[0];
            schedule.anchors(head.inst, head.index, t.subtask)
        };
        let own = at(&self.tasks.list[ti]);
        let latest = self
            .tasks
            .list
            .iter()
            .enumerate()
            .filter(|(i, t)| *i != ti && t.status == Status::Running)
            .map(|(_, t)| (schedule.last_event(t.members[0].inst), t))
            .filter(|&(seq, _)| seq > 0)
            .max_by_key(|&(seq, _)| seq);
        let own_seq = schedule.last_event(self.tasks.list[ti].members[0].inst);
        match latest {
            Some((seq, t)) if seq > own_seq => at(t).into_iter().take(1).chain(own).collect(),
            _ => own,
        }
    }

    pub(super) fn crash(&mut self, index: u32) {
        let c = self.faults.crash_plan[index as usize].clone();
        let t = self.plan.exec.task_of(c.operator, c.subtask);
        let ti = t as usize;
        if self.job.status != JobStatus::Running
            || self.tasks.list[ti].status != Status::Running
            || self.sp.stopped_with.is_some()
        {
            // After a stop-with-savepoint completed the job is shutting down.
            self.rec.counters.crashes_ignored += 1;
            let why = self.crash_ignored_reason(t);
            let name = self.plan.exec.tasks[ti].name.clone();
            self.note_fault(|| format!("crash of {name} took no effect: {why}"));
            self.faults.log.crashes[index as usize] = Fate::Ignored(why);
            return;
        }
        self.faults.log.crashes[index as usize] = Fate::Fired;
        let head = &self.tasks.list[ti].members[0];
        let (attempt, records) = self.rec.schedule.attempt(head.inst);
        let anchors = self.crash_anchors(ti);
        self.rec
            .crash_points
            .push(crate::runtime::output::CrashPoint {
                operator: head.index,
                subtask: self.tasks.list[ti].subtask,
                attempt,
                records,
                time_ns: self.net.now.0,
                anchors,
            });
        let name = self.plan.exec.tasks[ti].name.clone();
        self.note_fault(|| format!("crash of {name}"));
        self.rec.counters.crashes += 1;
        if self.finishing_phase() {
            self.rec.counters.crashes_after_final_checkpoint += 1;
        }
        if self.recovery.since.is_none() {
            self.recovery.since = Some(self.net.now);
        }
        self.mark(|| Timeline::Crash { task: t });
        if self
            .tasks
            .list
            .iter()
            .any(|t| t.status == Status::Running && t.handler.aligning().is_some())
        {
            self.rec.counters.crashes_during_alignment += 1;
        }
        // Some task snapshotted a checkpoint that is not aborted and that it
        // has not been told is complete (pending, or complete but unnotified).
        let snapshot_unnotified = self.tasks.list.iter().any(|t| {
            t.last_checkpoint > t.last_notified
                && !self.coord.aborted_ids.contains(&t.last_checkpoint)
        });
        if self.capture_in_progress() {
            self.rec.counters.crashes_during_unaligned_capture += 1;
        }
        if snapshot_unnotified {
            self.rec.counters.crashes_between_snapshot_and_notify += 1;
        }
        self.note_crash(t);
        self.tasks.set_status(ti, Status::Dead);
        let outputs = self.plan.task_outputs[ti].clone();
        self.net.kill_task_outputs(t, &outputs);
        let at = self.net.now.plus(self.plan.scenario.faults.detection_delay);
        self.net.schedule(at, Ev::FailureDetected { task: t });
    }

    /// An unaligned or Chandy–Lamport checkpoint is in progress and some
    /// channel state is already recorded (in a channel, in a task's pending
    /// snapshot, or in an ack the coordinator holds).
    pub(super) fn capture_in_progress(&self) -> bool {
        let in_channels = self.net.channels.iter().any(|c| {
            c.capture
                .as_ref()
                .is_some_and(|cap| !cap.records.is_empty())
        });
        let in_tasks = self.tasks.list.iter().any(|t| {
            t.pending_ack
                .as_ref()
                .is_some_and(|p| p.snapshot.in_flight_records() > 0)
        });
        let in_acks = self.coord.pending.values().any(|p| {
            p.acks
                .iter()
                .flatten()
                .any(|a| a.snapshot.in_flight_records() > 0)
        });
        in_channels || in_tasks || in_acks
    }

    /// Global failover: cancel every task, abort pending checkpoints, and
    /// restart when the restart strategy says (or fail the job).
    pub(super) fn failover(&mut self, reason: String) {
        if self.job.status != JobStatus::Running {
            return;
        }
        self.rec.failovers.push((self.net.now.0, reason.clone()));
        if self.sp.stopped_with.is_some() {
            // A failure after the stop-with-savepoint completed, while tasks
            // commit its side effects: Flink does not fail over (FLINK-26783,
            // a restart from the latest checkpoint would duplicate what the
            // savepoint committed); the job ends, and what some sinks did not
            // commit yet is committed by a restore from the savepoint.
            self.rec.counters.failures_after_stop_savepoint += 1;
            self.sp.complete_below = None;
            self.sp.complete_exempt.clear();
            self.job.status = JobStatus::Finished;
            return;
        }
        if self.plan.cfg.mutants.has(Mutant::SimulatorPanic) {
            fired(Mutant::SimulatorPanic);
            panic!("simulator-panic mutant: failover of {reason}");
        }
        self.check_closed();
        self.rec.counters.failovers += 1;
        self.stop_all_tasks(CpOutcome::Failover);
        self.recovery_stopped(None);
        self.coord.finishing = false;
        self.coord.final_id = None;
        self.job.restarts += 1;
        let delay = self.restart_decision(&reason);
        let job_failed = delay.is_none(); // trace
        self.note_fault(|| match job_failed {
            true => format!("failover ({reason}); the restart strategy gave up: the job failed"),
            false => format!("failover ({reason})"),
        });
        self.mark(|| Timeline::Failover {
            reason: reason.clone(),
            job_failed,
        });
        let Some(delay) = delay else {
            return; // the restart strategy gave up: the job failed
        };
        self.job.status = JobStatus::Restarting;
        let at = self.restart_time(delay);
        self.net.schedule(at, Ev::Restart);
    }

    pub(super) fn restart(&mut self) {
        if self.restart_pending_region() {
            return;
        }
        if self.job.status != JobStatus::Restarting {
            return;
        }
        // Mutant: the failed attempt's in-flight buffers survive the restart.
        let stale: Vec<Vec<Record>> = if self.plan.cfg.mutants.has(Mutant::RestartKeepsStaleBuffers)
        {
            self.net
                .channels
                .iter()
                .map(|c| {
                    c.in_queue
                        .iter()
                        .chain(c.wire.iter().map(|(_, _, m)| m))
                        .flat_map(|m| match m {
                            Msg::Data { buf, .. } => buf.clone(),
                            _ => Vec::new(),
                        })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        self.net.reset();
        if stale.iter().any(|r| !r.is_empty()) {
            fired(Mutant::RestartKeepsStaleBuffers);
        }
        for (ch, records) in stale.iter().enumerate() {
            self.net.restore_output(ch as ChannelId, records);
        }
        let latest = match self.is_local() {
            true => self.local_restore_point(),
            false => self.coord.latest(),
        };
        self.check_restore_source(latest.as_ref().map(|c| c.id));
        let before = self.tasks.store.stats.transactions_committed;
        let restored = self.deploy(latest.as_deref(), true);
        if self.job.status == JobStatus::Failed {
            return; // the restore needed a file that is gone
        }
        if self.is_local() {
            self.local_restored();
        }
        self.rec.counters.recovery_commits +=
            self.tasks.store.stats.transactions_committed - before;
        self.rec.counters.recoveries += 1;
        self.rec.counters.checkpoints_after_last_recovery = 0;
        let from_checkpoint = latest.as_ref().map(|c| c.id); // trace
        let line = latest.as_ref().is_some_and(|c| c.lines.is_some());
        match latest {
            Some(_) => self.rec.counters.recoveries_from_checkpoint += 1,
            None => self.rec.counters.recoveries_from_scratch += 1,
        }
        self.job.status = JobStatus::Running;
        self.rearm_repeating_crashes();
        self.crash_trigger(TriggerEvent::Restart, None, from_checkpoint.unwrap_or(0));
        for t in 0..self.tasks.list.len() as TaskId {
            self.net.poke(t);
        }
        self.rec
            .restart_notes
            .push(crate::runtime::output::RestartNote {
                attempt: self.net.attempt,
                time_ns: self.net.now.0,
                from: from_checkpoint,
                region: None,
            });
        self.note_fault(|| {
            let from = match from_checkpoint {
                None => "from scratch".to_string(),
                Some(id) if line => format!("from a recovery line (its newest checkpoint {id})"),
                Some(id) => format!("from checkpoint {id}"),
            };
            match restored {
                0 => format!("restart {from}"),
                n => format!(
                    "restart {from} ({} restored)",
                    crate::engine::count(n, "in-flight record")
                ),
            }
        });
        self.mark(|| Timeline::Restart {
            from: from_checkpoint,
            restored_records: restored,
        });
        self.recovery_restarted(from_checkpoint);
    }

    /// Redeploys every task from `latest` (from scratch if `None`), in
    /// Flink's order: recovered output channel state goes back into the
    /// output queues, operator state is restored, recovered input channel
    /// state is queued ahead of any new input. `failover`: after a failure
    /// (the source-rewind mutant applies).
    pub(super) fn deploy(&mut self, latest: Option<&Completed>, failover: bool) -> u64 {
        self.recovery.out_left.iter_mut().for_each(|n| *n = 0);
        self.reset_coordinators(latest);
        self.job.restored_at = self.net.now; // every task is redeployed
        let all: Vec<TaskId> = (0..self.tasks.list.len() as TaskId).collect();
        let restored = self.restore_tasks(&all, latest, failover);
        self.recovery.pending = restored;
        restored
    }

    /// The one restore sequence, for a global restart (every task) and a
    /// region restart (the region's tasks): recovered output channel state
    /// back into the output queues first, then each task fresh with its
    /// operator state restored, then its recovered input channel state
    /// queued ahead of any new input (Flink's order). `failover`: after a
    /// failure (the source-rewind mutant applies). Returns the in-flight
    /// records restored.
    pub(super) fn restore_tasks(
        &mut self,
        tasks: &[TaskId],
        latest: Option<&Completed>,
        failover: bool,
    ) -> u64 {
        let no_rewind = failover && self.plan.cfg.mutants.has(Mutant::NoSourceRewind);
        let mut restored = 0;
        let mut missing = None;
        let snapshot_of = |t: TaskId| latest.and_then(|c| c.states[t as usize].as_ref());
        let drop_channel_state = self.plan.cfg.mutants.has(Mutant::RestoreDropsChannelState);
        if drop_channel_state
            && tasks
                .iter()
                .filter_map(|&t| snapshot_of(t))
                .any(|s| s.in_flight_records() > 0)
        {
            fired(Mutant::RestoreDropsChannelState);
        }
        if !drop_channel_state {
            restored += self.restore_channel_state(tasks, latest);
        }
        for &t in tasks {
            let ti = t as usize;
            // Mutant: a source continues from its pre-failure position.
            let live_offsets = if no_rewind && self.tasks.list[ti].is_source {
                fired(Mutant::NoSourceRewind);
                let (member, mut ctx) = self.ctx_parts(t, 0);
                Some(member.op.snapshot(0, &mut ctx))
            } else {
                None
            };
            self.release_all(t);
            let mut fresh = self.fresh_task(t);
            if self.plan.cfg.mutants.has(Mutant::MailsSurviveRestart)
                && !self.tasks.list[ti].mailbox.is_empty()
            {
                // Mutant: the failed execution's mails reach the next one.
                fired(Mutant::MailsSurviveRestart);
                fresh.mailbox = std::mem::take(&mut self.tasks.list[ti].mailbox);
            }
            self.tasks.replace(ti, fresh);
            self.arm_watermark_timer(t);
            self.arm_report_timer(t);
            self.arm_materialization(t);
            self.files.forget(t);
            let snap = snapshot_of(t);
            for m in 0..self.tasks.list[ti].members.len() {
                self.rec.schedule.restart(
                    self.tasks.list[ti].members[m].inst,
                    latest.filter(|_| snap.is_some()).map(|c| c.id_of(ti)),
                    snap.and_then(|s| s.log_pos.get(m).copied()),
                );
            }
            let from_snapshot = live_offsets.is_none();
            let states = self.restored_states(t, live_offsets, latest, &mut missing);
            let restore = self.restore_time();
            // Every operator of the chain (one without an entry: empty).
            let members = match states.is_empty() {
                true => 0,
                false => self.tasks.list[ti].members.len(),
            };
            self.restore_members(t, members, &states, latest);
            self.timers_restored(t);
            if let (Some(s), Some(c)) = (snap, latest.filter(|_| from_snapshot)) {
                self.judge_restored_timers(t, c.id_of(ti), &s.timers);
            }
            if let Some(s) = snap {
                self.restore_clocks(t, &s.watermarks);
                if self.tasks.list[ti].is_source && self.tasks.list[ti].time.is_some() {
                    self.restore_source_splits(t, states.first().map_or(&[][..], Vec::as_slice));
                }
            }
            self.note_restored(t, latest.filter(|_| snap.is_some()).map(|c| c.id_of(ti)));
            if let (Some(s), Some(c)) = (snap, latest) {
                if s.finished {
                    self.deploy_finished(t, c.id_of(ti));
                }
            }
            if let Some(snap) = snap.filter(|_| !drop_channel_state) {
                for cs in snap.inputs.iter().filter(|cs| !cs.records.is_empty()) {
                    let input = self.plan.exec.channels[cs.ch as usize].input_index;
                    self.tasks.list[ti].recovery_order.push_back(input);
                }
            }
            self.restoring(t, restore);
        }
        if restored > 0 {
            self.rec.counters.recoveries_with_channel_state += 1;
            self.rec.counters.in_flight_records_restored += restored;
        }
        if let Some(f) = missing {
            self.restore_failed(&f);
        }
        restored
    }

    /// Task `t`'s thread restores its state for `d` before it runs.
    fn restoring(&mut self, t: TaskId, d: SimDuration) {
        if d == SimDuration::ZERO {
            return;
        }
        let until = self.net.now.plus(d);
        let s = &mut self.net.sched[t as usize];
        s.busy_until = s.busy_until.max(until);
        self.job.restored_at = self.job.restored_at.max(until);
        let longest = self.recovery.restore_ns.last_mut();
        match longest.filter(|_| self.recovery.restoring_since == Some(self.net.now)) {
            Some(ns) => *ns = (*ns).max(d.0),
            None => {
                self.recovery.restore_ns.push(d.0);
                self.recovery.restoring_since = Some(self.net.now);
            }
        }
        self.net.poke(t);
    }

    /// Task `t`'s members' states to restore: a live source position
    /// (mutant `no-source-rewind`), or its snapshot in `latest` read back
    /// from the checkpoint's files (a file that is gone goes to `missing`:
    /// the restore fails), or none.
    fn restored_states(
        &mut self,
        t: TaskId,
        live_offsets: Option<Vec<u8>>,
        latest: Option<&Completed>,
        missing: &mut Option<crate::runtime::storage::FileFinding>,
    ) -> Vec<Vec<u8>> {
        if let Some(live) = live_offsets {
            return vec![live];
        }
        let snap = latest.and_then(|c| c.states[t as usize].as_ref());
        let states = snap.map_or(Vec::new(), |s| s.states.clone());
        match self.read_files(t, latest, states.clone()) {
            Ok(read) => read,
            Err(f) => {
                missing.get_or_insert(f);
                states
            }
        }
    }

    /// Puts the channel state of `tasks`' snapshots in `latest` back on the
    /// channels: restored input channel state waits at the receivers and
    /// takes the channels' first sequence numbers; the senders' restored
    /// output channel state continues after it. Returns the records restored.
    fn restore_channel_state(&mut self, tasks: &[TaskId], latest: Option<&Completed>) -> u64 {
        let snapshot_of = |t: TaskId| latest.and_then(|c| c.states[t as usize].as_ref());
        let mut restored = 0;
        for &t in tasks {
            let Some(snap) = snapshot_of(t) else { continue };
            for cs in &snap.inputs {
                self.net.restore_input(cs.ch, &cs.records);
                restored += cs.records.len() as u64;
                self.count_restored_watermarks(&cs.records);
            }
        }
        for &t in tasks {
            let Some(snap) = snapshot_of(t) else { continue };
            for cs in &snap.outputs {
                self.count_restored_watermarks(&cs.records);
                self.net.restore_output(cs.ch, &cs.records);
                self.recovery.out_left[cs.ch as usize] += cs.records.len() as u64;
                restored += cs.records.len() as u64;
            }
        }
        restored
    }

    /// Restores the first `members` operators of task `t`'s chain from
    /// `states` (one without an entry: empty), or from the union of every
    /// subtask's list state in `latest` where the operator has union list
    /// state.
    fn restore_members(
        &mut self,
        t: TaskId,
        members: usize,
        states: &[Vec<u8>],
        latest: Option<&Completed>,
    ) {
        let ti = t as usize;
        for m in 0..members {
            let own = states.get(m).map_or(&[][..], Vec::as_slice);
            let union = latest.and_then(|c| self.union_state(c, self.plan.exec.tasks[ti].chain[m]));
            self.rec.counters.union_state_restores += u64::from(union.is_some());
            let bytes = union.as_deref().unwrap_or(own);
            let thrown = self.tasks.store.thrown();
            let result = {
                let (member, mut ctx) = self.ctx_parts(t, m);
                // The checkpoint whose state this task restores: the
                // recovery line's own for the uncoordinated families.
                ctx.restored = latest.map(|c| c.id_of(ti)).filter(|&id| id > 0);
                member.op.restore(bytes, &mut ctx)
            };
            if self.tasks.store.thrown() > thrown {
                // The restore threw (a commit given up on): it promises
                // nothing.
                let inst = self.tasks.list[ti].members[m].inst;
                self.rec.schedule.push(inst, Step::Untaken);
            }
            if let Err(e) = result {
                let name = self.plan.exec.tasks[ti].name.clone();
                let op = &self.plan.scenario.op(self.plan.exec.tasks[ti].chain[m]).id;
                self.violation(
                    CheckId::Protocol,
                    format!("task {name} could not restore the state of {op}: {e}"),
                );
            }
            // A committer that feeds a global committer emits what it
            // commits at restore (Flink's `initializeState`); anything
            // else an operator emits while restoring is dropped.
            let op = self.plan.exec.tasks[ti].chain[m];
            if self.plan.scenario.op(op).kind.is_committer() && !self.tasks.out.is_empty() {
                self.emit_from(t, m);
            }
            self.tasks.out.clear();
            if m == 0 && self.tasks.list[ti].is_source {
                self.recovery_source_restored(bytes);
            }
        }
    }

    /// What a restore of operator `op` from `c` gives each subtask when its
    /// list state is union list state: every subtask's entries (`None`
    /// otherwise, and for the mutant `union-state-restored-as-split`).
    fn union_state(&self, c: &Completed, op: crate::scenario::OperatorId) -> Option<Vec<u8>> {
        if !self.plan.scenario.op(op).kind.state_layout().is_union() {
            return None;
        }
        if self.plan.cfg.mutants.has(Mutant::UnionStateRestoredAsSplit) {
            fired(Mutant::UnionStateRestoredAsSplit);
            return None;
        }
        let member = self.plan.exec.member[op.0 as usize] as usize;
        let states: Vec<&[u8]> = (0..self.plan.scenario.op(op).parallelism)
            .map(|s| {
                c.states[self.plan.exec.task_of(op, s) as usize]
                    .as_ref()
                    .and_then(|snap| snap.states.get(member))
                    .map_or(&[][..], Vec::as_slice)
            })
            .collect();
        // An entry that does not decode: the operator's restore reports it.
        crate::model::opstate::union(&states).ok()
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const NoSourceRewind: Mutant = Mutant::declare(&MutantInfo {
            name: "no-source-rewind",
            part: "source rewind",
            what: "sources keep their pre-failure offsets on restore instead of rewinding",
            modelled_on: "sources that resume from live (broker-committed) offsets instead of checkpointed split state",
            caught_by: "exactly-once-output",
            applies: &[("alignment-crash", "aligned"), ("wordcount", "aligned")],
        });
        pub const RestoreDropsChannelState: Mutant = Mutant::declare(&MutantInfo {
            name: "restore-drops-channel-state",
            part: "unaligned restore",
            what: "recovery restores operator state but drops the checkpoint's channel state",
            modelled_on:
                "recover-without-channel-state (documented as data loss) applied by mistake",
            caught_by: "exactly-once-output",
            applies: &[("backpressure", "unaligned")],
        });
        pub const RestartKeepsStaleBuffers: Mutant = Mutant::declare(&MutantInfo {
            name: "restart-keeps-stale-buffers",
            part: "recovery",
            what: "buffers that were in flight when the job failed are delivered to the restarted tasks",
            modelled_on: "stale network buffers surviving a failover into the next execution attempt",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned")],
        });
        pub const SimulatorPanic: Mutant = Mutant::declare(&MutantInfo {
            name: "simulator-panic",
            part: "the simulator itself",
            what: "the simulator panics (one of its own assertions fails) at the job's first failover",
            modelled_on: "a broken assumption of the simulator itself: proves that a panicking seed is reported with its replay line and never ends a sweep",
            caught_by: "panic",
            applies: &[("wordcount", "aligned")],
        });
        pub const UnionStateRestoredAsSplit: Mutant = Mutant::declare(&MutantInfo {
            name: "union-state-restored-as-split",
            part: "operator state",
            what: "the runtime restores union list state like split list state: each subtask gets only its own entries, selects its share of them, and the entries it leaves to other subtasks are restored by nobody",
            modelled_on: "the redistribution modes of operator state (OperatorStateRestoreOperation and RoundRobinOperatorStateRepartitioner keep SPLIT_DISTRIBUTE and UNION apart: union state goes to every subtask on every restore)",
            caught_by: "exactly-once-output",
            applies: &[("operator-state", "aligned")],
        });
    }
}
