//! Operator coordinators on the coordinator's side (Flink's
//! `OperatorCoordinatorHolder` and `SubtaskGatewayImpl`): today the split
//! enumerators of FLIP-27 sources (`model::flip27`).
//!
//! - **Events** travel as RPCs with the coordinator's RPC latency, in order
//!   per subtask, after the trigger RPCs sent before them. Each is
//!   acknowledged; one whose RPC fails (`[faults.operator_events]`) fails
//!   its target subtask once the coordinator learns of it (FLINK-21996).
//! - **Checkpoints.** When a checkpoint is triggered, every coordinator
//!   takes its checkpoint first and closes its gateways: what it sends from
//!   then on is held back per subtask until that subtask has snapshotted
//!   the checkpoint (`SubtaskCheckpointed`, FLINK-28606) or the checkpoint
//!   ends without completing. The source tasks are triggered only once
//!   every event sent before the coordinators' checkpoints is acknowledged
//!   or failed (FLINK-21996), so an assignment the enumerator's checkpoint
//!   counts as done is in the reader's snapshot.
//! - **Failover.** A global restart (and a new coordinator after a crash)
//!   resets every coordinator to the restored checkpoint; a region restart
//!   tells each one which of its subtasks were restored from which
//!   checkpoint (`subtask_reset`). Either way the gateways of the restarted
//!   subtasks forget what they held and what they waited for.
//!
//! Their state is `Coordinators` (`operator_coordinator_state.rs`).

use super::operator_coordinator_state::Gateway;
use super::*;
use crate::model::flip27::OperatorEvent;

impl World<'_> {
    /// The slot and subtask of a coordinated reader task.
    fn reader(&self, t: TaskId) -> Option<(usize, u32)> {
        let slot = self.ops.slot_of[t as usize]? as usize;
        Some((slot, self.plan.exec.tasks[t as usize].subtask))
    }

    /// At the start of the job (and after every reset): the periodic work.
    pub(super) fn start_coordinators(&mut self) {
        self.start_alignment();
        for slot in 0..self.ops.slots.len() {
            let s = &mut self.ops.slots[slot];
            s.generation += 1;
            let ev = Ev::CoordinatorTick {
                slot: slot as u32,
                generation: s.generation,
            };
            let at = self.net.now.plus(s.interval);
            self.schedule_any(at, ev);
        }
    }

    pub(super) fn coordinator_tick(&mut self, slot: u32, generation: u32) {
        let s = &mut self.ops.slots[slot as usize];
        if s.generation != generation || self.faults.fx.coordinator_down {
            return;
        }
        let mut out = Vec::new();
        let more = s.coordinator.tick(&mut out);
        let at = self.net.now.plus(s.interval);
        self.send_events(slot as usize, out);
        if more {
            self.schedule_any(at, Ev::CoordinatorTick { slot, generation });
        }
    }

    /// Sends what coordinator `slot` emitted: held while the subtask's
    /// gateway is closed for a checkpoint.
    pub(super) fn send_events(&mut self, slot: usize, out: Vec<(u32, OperatorEvent)>) {
        for (subtask, event) in out {
            self.note_sent(slot, subtask, event);
            let g = &mut self.ops.slots[slot].gateways[subtask as usize];
            if let Some(&newest) = g.closed.last() {
                if !self.plan.cfg.mutants.has(Mutant::OperatorEventsNotHeld) {
                    g.held.push((newest, event));
                    continue;
                }
                fired(Mutant::OperatorEventsNotHeld);
            }
            self.transmit(slot, subtask, event);
        }
    }

    fn transmit(&mut self, slot: usize, subtask: u32, event: OperatorEvent) {
        let op = self.ops.slots[slot].operator;
        let task = self
            .plan
            .exec
            .task_of(crate::scenario::OperatorId(op), subtask);
        if self.tasks.list[task as usize].status != Status::Running {
            // An event targets one execution of its subtask (FLINK-18071):
            // one that is not running fails it, and the failover under way
            // resets what the coordinator assigned it.
            self.rec.counters.operator_events_undeliverable += 1;
            return;
        }
        let drawn = self.rpc_arrival(self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency));
        let lost =
            self.ops.loss_percent > 0 && self.ops.rng.below(100) < u64::from(self.ops.loss_percent);
        let g = &mut self.ops.slots[slot].gateways[subtask as usize];
        let at = drawn.max(g.last_arrival);
        g.last_arrival = at;
        g.unacked += 1;
        self.rec.counters.operator_events_sent += 1;
        self.net.schedule(at, Ev::ToSubtask { task, event, lost });
    }

    /// An operator event reaches its subtask (or, `lost`, its RPC fails).
    pub(super) fn event_at_subtask(&mut self, t: TaskId, event: OperatorEvent, lost: bool) {
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        if lost {
            self.rec.counters.operator_events_lost += 1;
            let name = self.plan.exec.tasks[t as usize].name.clone();
            self.note_fault(|| format!("an operator event to {name} was lost"));
            self.net.schedule(at, Ev::EventAck { task: t, ok: false });
            return;
        }
        match self.tasks.list[t as usize].status {
            Status::Running => {}
            // The RPC to a task that exited fails; nothing waits for it.
            Status::Finished => {
                self.rec.counters.operator_events_undeliverable += 1;
                self.net.schedule(at, Ev::EventAck { task: t, ok: false });
                return;
            }
            Status::Dead | Status::Cancelled => return, // the failover resets the gateway
        }
        // Acknowledged once queued (`StreamTask.dispatchOperatorEvent`),
        // whether or not the task's thread has applied it yet.
        self.post(t, crate::runtime::mailbox::Mail::Event(event));
        self.net.schedule(at, Ev::EventAck { task: t, ok: true });
    }

    /// The reader's thread applies an operator event (a mail).
    pub(super) fn apply_operator_event(&mut self, t: TaskId, event: OperatorEvent) {
        if let OperatorEvent::WatermarkAlignment(max) = event {
            // The source operator's, not the reader's.
            return self.alignment_event(t, max);
        }
        {
            let (member, mut ctx) = self.ctx_parts(t, 0);
            member.op.handle_operator_event(event, &mut ctx);
        }
        self.split_assigned(t, event);
        let inst = self.tasks.list[t as usize].members[0].inst;
        self.rec.schedule.push(inst, Step::Event(event));
        self.tasks.out.clear();
        self.reader_events(t);
        self.net.poke(t);
    }

    /// What reader task `t` has to say to its coordinator goes out.
    pub(super) fn reader_events(&mut self, t: TaskId) {
        let events = self.tasks.list[t as usize].members[0]
            .op
            .take_operator_events();
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        for event in events {
            self.net.schedule(at, Ev::ToCoordinator { task: t, event });
        }
    }

    /// The result of an event's RPC reaches the coordinator.
    pub(super) fn event_ack(&mut self, t: TaskId, ok: bool) {
        let Some((slot, subtask)) = self.reader(t) else {
            return;
        };
        let g = &mut self.ops.slots[slot].gateways[subtask as usize];
        g.unacked = g.unacked.saturating_sub(1);
        if !ok && self.tasks.list[t as usize].status == Status::Running {
            if self.plan.cfg.mutants.has(Mutant::LostOperatorEventIgnored) {
                fired(Mutant::LostOperatorEventIgnored);
            } else {
                // Flink fails the target subtask of an event whose RPC failed.
                self.rec.counters.operator_event_failures += 1;
                self.fail_task(t);
            }
        }
        self.release_trigger();
    }

    /// The coordinator fails task `t` itself (no heartbeat to wait for).
    pub(super) fn fail_task(&mut self, t: TaskId) {
        if self.recovery.since.is_none() {
            self.recovery.since = Some(self.net.now);
        }
        self.mark(|| Timeline::Crash { task: t });
        self.note_crash(t);
        self.tasks.set_status(t as usize, Status::Dead);
        let outputs = self.plan.task_outputs[t as usize].clone();
        self.net.kill_task_outputs(t, &outputs);
        self.net
            .schedule(self.net.now, Ev::FailureDetected { task: t });
    }

    /// A reader's event reaches its coordinator.
    pub(super) fn event_at_coordinator(&mut self, t: TaskId, event: OperatorEvent) {
        let Some((slot, subtask)) = self.reader(t) else {
            return;
        };
        if self.faults.fx.coordinator_down {
            return;
        }
        if let OperatorEvent::ReportedWatermark(w) = event {
            return self.reported_watermark(slot, subtask, w);
        }
        let mut out = Vec::new();
        self.ops.slots[slot]
            .coordinator
            .handle_event(subtask, event, &mut out);
        self.send_events(slot, out);
    }

    /// A reader snapshotted checkpoint `id`: tell its coordinator (hook at
    /// the task's snapshot).
    pub(super) fn reader_snapshotted(&mut self, t: TaskId, id: CheckpointId) {
        if self.ops.coordinated(t) {
            let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
            self.net
                .schedule(at, Ev::SubtaskCheckpointed { task: t, id });
        }
    }

    /// The reader's word that it snapshotted `id` arrived: its gateway
    /// opens.
    pub(super) fn subtask_checkpointed(&mut self, t: TaskId, id: CheckpointId) {
        if let Some((slot, subtask)) = self.reader(t) {
            let g = &mut self.ops.slots[slot].gateways[subtask as usize];
            g.closed.retain(|&c| c > id);
            self.release_held(slot, subtask);
            // A request that waited for this checkpoint's triggering.
            self.run_queued();
        }
    }

    /// Reader task `t` exited: its gateway holds nothing back any more.
    pub(super) fn reader_exited(&mut self, t: TaskId) {
        if let Some((slot, subtask)) = self.reader(t) {
            self.ops.slots[slot].gateways[subtask as usize]
                .closed
                .clear();
            self.release_held(slot, subtask);
            self.run_queued();
        }
    }

    /// Sends, in order, the held events of a gateway whose checkpoint no
    /// longer closes it, up to the first that one still does.
    fn release_held(&mut self, slot: usize, subtask: u32) {
        let g = &mut self.ops.slots[slot].gateways[subtask as usize];
        let n = g
            .held
            .iter()
            .take_while(|(c, _)| !g.closed.contains(c))
            .count();
        let out: Vec<(CheckpointId, OperatorEvent)> = g.held.drain(..n).collect();
        for (_, event) in out {
            self.transmit(slot, subtask, event);
        }
    }

    /// The coordinators' checkpoints for `id`, taken as it is triggered,
    /// before its source barriers; their gateways close. Returns whether the
    /// sources must wait for events in flight (hook in `perform`).
    pub(super) fn checkpoint_coordinators(&mut self, id: CheckpointId, timestamp: SimTime) -> bool {
        if self.ops.is_empty() {
            return false;
        }
        let mut states = Vec::with_capacity(self.ops.slots.len());
        for s in &mut self.ops.slots {
            states.push((s.operator, s.coordinator.checkpoint(id)));
        }
        // The gateways of the readers still running close; an exited
        // reader's never opens again (it snapshots nothing more).
        for t in 0..self.tasks.list.len() as TaskId {
            if let Some((slot, subtask)) = self.reader(t) {
                if self.tasks.list[t as usize].status != Status::Finished {
                    self.ops.slots[slot].gateways[subtask as usize]
                        .closed
                        .insert(id);
                }
            }
        }
        if let Some(p) = self.coord.pending.get_mut(&id) {
            p.coordinators = states;
        }
        if !self.ops.unacked() {
            return false;
        }
        if self
            .plan
            .cfg
            .mutants
            .has(Mutant::CheckpointIgnoresUnackedEvents)
        {
            fired(Mutant::CheckpointIgnoresUnackedEvents);
            return false;
        }
        self.rec.counters.triggers_waiting_for_events += 1;
        self.ops.deferred.push_back((id, timestamp));
        true
    }

    /// Every event is acknowledged: the deferred source trigger goes out.
    fn release_trigger(&mut self) {
        if self.ops.unacked() {
            return;
        }
        while let Some((id, timestamp)) = self.ops.deferred.pop_front() {
            if self.coord.is_pending(id) {
                let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
                self.trigger_sources(id, timestamp, at);
            }
        }
    }

    /// A trigger RPC to reader task `t` arrives at `at`: events sent later
    /// arrive after it.
    pub(super) fn trigger_sent(&mut self, t: TaskId, at: SimTime) {
        if let Some((slot, subtask)) = self.reader(t) {
            let g = &mut self.ops.slots[slot].gateways[subtask as usize];
            g.last_arrival = g.last_arrival.max(at);
        }
    }

    /// Checkpoint `id` ended without completing: gateways it closed open.
    pub(super) fn coordinators_aborted(&mut self, id: CheckpointId) {
        self.ops.deferred.retain(|&(d, _)| d != id);
        for slot in 0..self.ops.slots.len() {
            for subtask in 0..self.ops.slots[slot].gateways.len() as u32 {
                let g = &mut self.ops.slots[slot].gateways[subtask as usize];
                if g.closed.remove(&id) {
                    self.release_held(slot, subtask);
                }
            }
        }
    }

    pub(super) fn coordinators_completed(&mut self, id: CheckpointId) {
        for s in &mut self.ops.slots {
            s.coordinator.notify_checkpoint_complete(id);
        }
    }

    /// A global restart from `latest` (`None`: from scratch): every
    /// coordinator goes back to it.
    pub(super) fn reset_coordinators(&mut self, latest: Option<&Completed>) {
        self.ops.deferred.clear();
        let mut failed = Vec::new();
        for s in &mut self.ops.slots {
            let state = latest.and_then(|c| c.coordinator(s.operator));
            if let Err(e) = s.coordinator.reset_to_checkpoint(state) {
                failed.push((s.operator, e));
            }
            s.gateways.iter_mut().for_each(|g| *g = Gateway::default());
            if let Some(a) = s.alignment.as_mut() {
                // A new coordinator: no report yet.
                a.reports = Default::default();
                a.no_more.iter_mut().for_each(|n| *n = false);
            }
        }
        for (op, e) in failed {
            let op = &self.plan.scenario.operators[op as usize].id;
            let message = format!("the coordinator of {op} could not restore: {e}");
            self.violation(CheckId::Protocol, message);
        }
        self.start_coordinators();
    }

    /// A region restart restored `tasks` from `latest`: their coordinators
    /// take back what they assigned them since.
    pub(super) fn reset_subtasks(&mut self, tasks: &[TaskId], latest: Option<CheckpointId>) {
        for &t in tasks {
            let Some((slot, subtask)) = self.reader(t) else {
                continue;
            };
            self.ops.slots[slot].gateways[subtask as usize] = Gateway::default();
            if let Some(a) = self.ops.slots[slot].alignment.as_mut() {
                a.no_more[subtask as usize] = false;
            }
            let mut out = Vec::new();
            self.ops.slots[slot]
                .coordinator
                .subtask_reset(subtask, latest, &mut out);
            self.send_events(slot, out);
        }
        self.release_trigger();
    }

    /// Where each split of every FLIP-27 source was in a completed
    /// checkpoint: its enumerator's unassigned splits and each reader's
    /// snapshot (read splits stay in the reader's state), with the splits
    /// the enumerator had discovered (the consistent-cut check holds each
    /// to exactly one place).
    pub(super) fn split_cut(&self, p: &Pending) -> Vec<crate::runtime::cut_evidence::SplitCut> {
        let mut cuts = Vec::new();
        for s in &self.ops.slots {
            let Some((_, bytes)) = p.coordinators.iter().find(|(o, _)| *o == s.operator) else {
                continue;
            };
            let Ok(e) = crate::model::flip27::EnumeratorState::decode(bytes) else {
                continue;
            };
            let op = crate::scenario::OperatorId(s.operator);
            let first = self.plan.exec.task_of(op, 0) as usize;
            let mut places: BTreeMap<u32, Vec<String>> = BTreeMap::new();
            for split in &e.unassigned {
                places
                    .entry(*split)
                    .or_default()
                    .push("the enumerator".into());
            }
            let mut complete = true;
            for (i, _) in s.gateways.iter().enumerate() {
                let snapshot = p.acks[first + i].as_ref().filter(|a| a.arrived);
                let splits = snapshot
                    .and_then(|a| a.snapshot.states.first())
                    .and_then(|b| crate::model::operator::source_offsets(b));
                let Some(splits) = splits else {
                    complete = false;
                    continue;
                };
                let name = &self.plan.exec.tasks[first + i].name;
                for (split, _) in splits {
                    places.entry(split).or_default().push(name.clone());
                }
            }
            cuts.push(crate::runtime::cut_evidence::SplitCut {
                operator: self.plan.scenario.operators[s.operator as usize].id.clone(),
                known: s.coordinator.splits_discovered(e.discovered),
                places,
                complete,
            });
        }
        cuts
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const LostOperatorEventIgnored: Mutant = Mutant::declare(&MutantInfo {
            name: "lost-operator-event-ignored",
            part: "operator coordinator",
            what: "a split assignment whose RPC is lost is forgotten: the target reader is not failed, so the enumerator believes the split assigned and no reader ever reads it",
            modelled_on: "FLINK-21996 part 3 (a transient RPC failure of an OperatorEvent lost a split assignment; since then a failed or timed-out event fails its target subtask, which resets its splits)",
            caught_by: "consistent-cut",
            applies: &[("flip27", "aligned")],
        });
        pub const CheckpointIgnoresUnackedEvents: Mutant = Mutant::declare(&MutantInfo {
            name: "checkpoint-ignores-unacked-events",
            part: "operator coordinator",
            what: "the coordinator's checkpoint completes and the sources are triggered while split assignments sent before it are still in flight: the enumerator's checkpoint counts the split as assigned, the reader's snapshot does not have it yet, and a restore from that checkpoint loses it",
            modelled_on: "FLINK-21996 part 4 (OperatorCoordinatorHolder now completes a coordinator checkpoint only once every event sent before it is acknowledged or failed)",
            caught_by: "consistent-cut",
            applies: &[("flip27", "aligned")],
        });
        pub const OperatorEventsNotHeld: Mutant = Mutant::declare(&MutantInfo {
            name: "operator-events-not-held",
            part: "operator coordinator",
            what: "events the coordinator sends after its checkpoint go out at once instead of being held until the subtask has taken its snapshot: a split assigned after the enumerator's checkpoint reaches the reader before its barrier, so both checkpoints hold it, and a restore reads it twice",
            modelled_on: "FLINK-16986 (exactly-once of operator events around checkpoints: the valve closed at the coordinator checkpoint) and FLINK-28606 (the subtask gateway stays closed until the subtask completed the checkpoint)",
            caught_by: "consistent-cut",
            applies: &[("flip27", "aligned")],
        });
    }
}
