//! The simulator's side of the coordinator (`runtime::coordinator`, a
//! sans-IO state machine): events go in, and its actions are performed
//! here in the order it returns them; plus the consistent-cut check of each
//! completed checkpoint.

use super::*;

impl World<'_> {
    /// Performs the coordinator's actions, in order.
    pub(super) fn perform(&mut self, actions: Vec<CoordAction>) {
        for a in actions {
            match a {
                CoordAction::ArmPeriodic { at, generation } => {
                    self.schedule_any(at, Ev::PeriodicTrigger { generation });
                }
                CoordAction::Skipped(skip) => {
                    self.rec.counters.triggers_skipped += 1;
                    match skip {
                        coordinator::Skip::Savepoint => {
                            self.rec.counters.triggers_skipped_savepoint += 1
                        }
                        coordinator::Skip::Recovering => {
                            self.rec.counters.triggers_skipped_recovering += 1
                        }
                        coordinator::Skip::NotRunning if self.net.now < self.job.restored_at => {
                            self.rec.counters.triggers_skipped_restoring += 1
                        }
                        _ => {}
                    }
                }
                CoordAction::Queued => self.rec.counters.triggers_queued += 1,
                CoordAction::Triggered { id, savepoint } => {
                    self.rec.counters.checkpoints_triggered += 1;
                    if self.coord.pending.len() > 1 {
                        self.rec.counters.checkpoints_concurrent += 1;
                        if !self.ops.slots.is_empty() {
                            self.rec.counters.enumerator_checkpoints_concurrent += 1;
                        }
                    }
                    self.crash_trigger(TriggerEvent::Trigger, None, id);
                    if self.recovery.pending > 0 {
                        self.rec.counters.checkpoints_during_recovery += 1;
                    }
                    self.check_min_pause(id, savepoint);
                    self.check_not_restoring(id);
                    self.mark(|| Timeline::Triggered { id });
                }
                CoordAction::ArmTimeout { id, at } => {
                    self.schedule_any(at, Ev::CheckpointTimeout { id });
                }
                CoordAction::TriggerSources { id, timestamp, at } => {
                    // The operator coordinators' checkpoints come first.
                    if !self.checkpoint_coordinators(id, timestamp) {
                        self.trigger_sources(id, timestamp, at);
                    }
                }
                CoordAction::Finalize { id } => self.schedule_finalize(id),
                CoordAction::NotifyComplete { id, at } => {
                    self.coordinators_completed(id);
                    self.notify_tasks_complete(at, id);
                }
                CoordAction::Aborted {
                    id,
                    outcome,
                    savepoint,
                } => {
                    self.rec.counters.checkpoints_aborted += 1;
                    self.coordinators_aborted(id);
                    self.files_aborted(id);
                    if let Some(sp) = savepoint {
                        self.savepoint_aborted(id, outcome, sp);
                    }
                }
                CoordAction::NotifyAborted {
                    id,
                    latest_completed,
                    at,
                } => {
                    for t in 0..self.tasks.list.len() as TaskId {
                        let at = self.rpc_arrival(at);
                        self.net.schedule(
                            at,
                            Ev::NotifyAborted {
                                task: t,
                                id,
                                latest_completed,
                            },
                        );
                    }
                }
                CoordAction::Failover { reason } => self.failover(reason),
            }
        }
    }

    /// The trigger RPCs of checkpoint `id`, due at `at`, to every running
    /// task none of whose upstream tasks runs (`world/exit.rs`).
    pub(super) fn trigger_sources(&mut self, id: CheckpointId, timestamp: SimTime, at: SimTime) {
        let kind = if self.sp.by_id.contains_key(&id) {
            BarrierKind::Aligned // savepoints are never unaligned
        } else {
            self.plan.cfg.algorithm.info().first_barrier
        };
        let barrier = Barrier {
            id,
            timestamp,
            kind,
        };
        for t in self.plan_trigger(id) {
            let at = self.rpc_arrival(at);
            self.trigger_sent(t, at);
            self.net
                .schedule(at, Ev::TriggerSource { task: t, barrier });
        }
    }

    /// When a coordinator → task RPC due at `at` reaches its task: with
    /// `rpc_latency_max` above `rpc_latency`, up to the difference later,
    /// drawn per task (Flink's RPCs to different task managers overtake
    /// each other).
    pub(super) fn rpc_arrival(&mut self, at: SimTime) -> SimTime {
        if self.job.rpc_jitter == 0 {
            return at;
        }
        at.plus(SimDuration(
            self.job
                .rpc_rng
                .below(self.job.rpc_jitter.saturating_add(1)),
        ))
    }

    /// What the coordinator is told about the job when it decides on a
    /// trigger request.
    fn facts(&mut self) -> coordinator::Facts {
        let now = self.net.now;
        let mut recovering =
            self.recovery.pending > 0 && !self.plan.scenario.checkpoint.during_recovery;
        if recovering && self.plan.cfg.mutants.has(Mutant::CheckpointDuringRecovery) {
            // Mutant: restored in-flight data still replaying does not hold
            // the trigger back (and the capture leaves it out).
            let due_otherwise = self.job.status == JobStatus::Running
                && !self.coord.finishing
                && self.coord.pending.len() < self.coord.cfg.max_concurrent;
            if due_otherwise {
                fired(Mutant::CheckpointDuringRecovery);
            }
            recovering = false;
        }
        let mut restoring = now < self.job.restored_at;
        if restoring && self.plan.cfg.mutants.has(Mutant::TriggersWhileRestoring) {
            // Mutant: a task restoring its state counts as running.
            fired(Mutant::TriggersWhileRestoring);
            restoring = false;
        }
        coordinator::Facts {
            running: self.job.status == JobStatus::Running && !restoring,
            savepoint_due: self.sp.queue.front().is_some_and(|s| s.at <= now),
            recovering,
            triggering: self.ops.triggering(),
        }
    }

    /// The periodic trigger of `generation` came due.
    pub(super) fn periodic_trigger(&mut self, generation: u32) {
        let facts = self.facts();
        let mut out = Vec::new();
        self.coord
            .periodic(self.net.now, generation, facts, &mut out);
        self.perform(out);
    }

    /// A pending checkpoint ended: the oldest queued request may run.
    pub(super) fn run_queued(&mut self) {
        if self.coord.queued.is_empty() {
            return;
        }
        let facts = self.facts();
        let mut out = Vec::new();
        self.coord.run_queued(self.net.now, facts, &mut out);
        self.perform(out);
    }

    /// Protocol: a periodic checkpoint is never triggered within
    /// `min_pause` of the last completion (savepoints may be).
    fn check_min_pause(&mut self, id: CheckpointId, savepoint: bool) {
        let pause = self.coord.cfg.min_pause;
        let Some(last) = self.coord.last_completion else {
            return;
        };
        if !savepoint && self.net.now < last.plus(pause) {
            let since = self.net.now.since(last);
            self.violation(
                CheckId::Protocol,
                format!(
                    "checkpoint {id} was triggered {} after the last completion, inside min_pause {}",
                    since, pause
                ),
            );
        }
    }

    /// Protocol: nothing is triggered while a task restores its state
    /// (it is not `RUNNING` until its restore ends).
    fn check_not_restoring(&mut self, id: CheckpointId) {
        if self.net.now < self.job.restored_at {
            let left = self.job.restored_at.since(self.net.now).readable();
            self.violation(
                CheckId::Protocol,
                format!("checkpoint {id} was triggered while a task was still restoring its state from files ({left} of its restore left): a task is not RUNNING until its restore ends"),
            );
        }
    }

    /// Starts the savepoint `sp` now.
    pub(super) fn trigger_savepoint(&mut self, sp: SavepointSpec) {
        let mut out = Vec::new();
        let id = self.coord.trigger(self.net.now, Some(sp.clone()), &mut out);
        self.rec.counters.savepoints_triggered += 1;
        self.sp.by_id.insert(id, sp);
        self.perform(out);
    }

    /// A task's acknowledgement of `id` reached the coordinator.
    pub(super) fn ack(&mut self, t: TaskId, id: CheckpointId) {
        self.crash_trigger(TriggerEvent::Ack, Some(t), id);
        if !self.files_acknowledged(t, id) {
            return;
        }
        let mut out = Vec::new();
        self.coord.ack(t, id, &mut out);
        self.perform(out);
    }

    /// A task declined `id`.
    pub(super) fn declined(&mut self, id: CheckpointId) {
        if self.coord.is_pending(id) {
            self.rec.counters.checkpoints_declined += 1;
            let mut out = Vec::new();
            self.coord
                .abort(self.net.now, id, CpOutcome::Declined, &mut out);
            self.perform(out);
            self.run_queued();
        }
    }

    /// `id` expired.
    pub(super) fn expired(&mut self, id: CheckpointId) {
        if self.coord.is_pending(id) {
            self.rec.counters.checkpoints_expired += 1;
            if self.ops.deferred.iter().any(|&(d, _)| d == id) {
                self.rec.counters.checkpoints_expired_waiting_for_events += 1;
            }
            let mut out = Vec::new();
            self.coord.expire(self.net.now, id, &mut out);
            self.perform(out);
            self.run_queued();
        }
    }

    /// A state or metadata write of `id` failed.
    pub(super) fn storage_failed(&mut self, id: CheckpointId) {
        if self.coord.is_pending(id) {
            self.rec.counters.checkpoints_storage_failed += 1;
            let mut out = Vec::new();
            self.coord.storage_failed(self.net.now, id, &mut out);
            self.perform(out);
            self.run_queued();
        }
    }

    /// A task's state of `id` exceeds memory storage's `max_state_size`.
    pub(super) fn state_too_large(&mut self, id: CheckpointId) {
        if self.coord.is_pending(id) {
            self.rec.counters.checkpoints_state_too_large += 1;
            let mut out = Vec::new();
            self.coord.state_too_large(self.net.now, id, &mut out);
            self.perform(out);
            self.run_queued();
        }
    }

    /// Every pending checkpoint ends with `outcome` (a failover or cancel).
    pub(super) fn abort_all_pending(&mut self, outcome: CpOutcome) {
        let mut out = Vec::new();
        self.coord.abort_all(self.net.now, outcome, &mut out);
        self.perform(out);
    }

    /// `stop-the-world`: a drain report reached the coordinator; once every
    /// task without outputs reported, ask every task for its snapshot.
    pub(super) fn drained(&mut self, id: CheckpointId) {
        // Tasks that exited report nothing (FLIP-147).
        let sinks = (0..self.tasks.list.len())
            .filter(|&t| {
                self.plan.task_outputs[t].is_empty()
                    && self.tasks.list[t].status != Status::Finished
            })
            .count() as u32;
        let Some(timestamp) = self.coord.drained(id, sinks) else {
            return;
        };
        let barrier = Barrier {
            id,
            timestamp,
            kind: BarrierKind::Aligned,
        };
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        for t in 0..self.tasks.list.len() as TaskId {
            self.net.schedule(at, Ev::SnapshotTask { task: t, barrier });
        }
    }

    /// The metadata of `id` is written: it completes.
    pub(super) fn finalized(&mut self, id: CheckpointId) {
        let Some(p) = self.coord.take_finalized(id) else {
            return;
        };
        self.check_durable(&p);
        if let Some(sp) = self.sp.by_id.get(&id).cloned() {
            self.savepoint_completed(p, sp);
            self.run_queued();
            return;
        }
        let now = self.net.now;
        self.rec.counters.checkpoints_completed += 1;
        self.crash_trigger(TriggerEvent::Complete, None, id);
        self.rec.counters.checkpoints_after_last_recovery += 1;
        if now >= self.faults.phase_end {
            self.rec.counters.checkpoints_in_quiet_phase += 1;
        }
        if let Some(last) = self.coord.out_of_order(id) {
            self.violation(
                CheckId::Protocol,
                format!("checkpoint {id} completed after checkpoint {last}"),
            );
        }
        self.check_cut(&p);
        let tasks = arrived_tasks(&p);
        let mut out = Vec::new();
        let done = self.coord.complete(now, p, &mut out);
        self.files_completed(id, &tasks, false);
        self.stale_transactions(Some(id));
        if done.in_flight_records > 0 {
            self.rec.counters.unaligned_checkpoints += 1;
            self.rec.counters.in_flight_records_persisted += done.in_flight_records;
        }
        self.perform(out);
        self.run_queued();
    }

    /// Protocol: a checkpoint completes only once every task's operator
    /// state and channel state is written (an ack promises durable state
    /// handles; Flink acknowledges from the asynchronous part, after the
    /// channel-state writer finished). The first task that breaks it is
    /// reported.
    fn check_durable(&mut self, p: &coordinator::Pending) {
        let now = self.net.now;
        let late = p.acks.iter().enumerate().find_map(|(t, a)| {
            a.as_ref()
                .filter(|a| a.arrived && a.durable_at > now)
                .map(|a| (t, a.durable_at, a.snapshot.in_flight_bytes()))
        });
        if let Some((t, at, bytes)) = late {
            let name = self.plan.exec.tasks[t].name.clone();
            let what = if p.savepoint.is_some() {
                "savepoint"
            } else {
                "checkpoint"
            };
            self.violation(
                CheckId::Protocol,
                format!(
                    "{what} {} completed, but task {name} finishes writing its state ({bytes} bytes of channel state) only {} later, at {at}",
                    p.id,
                    at.since(now),
                ),
            );
        }
    }

    /// Adds a completed checkpoint to the store. Protocol: a savepoint
    /// never enters it.
    pub(super) fn store_completed(&mut self, c: Completed) {
        if self.sp.by_id.contains_key(&c.id) {
            let evicted = self
                .coord
                .full()
                .map_or(String::new(), |old| format!(", evicting checkpoint {old}"));
            self.violation(
                CheckId::Protocol,
                format!(
                    "savepoint {} entered the completed-checkpoint store{evicted}",
                    c.id
                ),
            );
        }
        self.coord.store(c);
        self.files_retained();
    }

    /// Protocol: a failover restores a checkpoint, never a savepoint taken
    /// by this job.
    pub(super) fn check_restore_source(&mut self, from: Option<CheckpointId>) {
        if let Some(id) = from.filter(|id| self.sp.by_id.contains_key(id)) {
            self.violation(
                CheckId::Protocol,
                format!("the job was restarted from savepoint {id}: savepoints are never used for recovery"),
            );
        }
    }

    /// Records the cut of a completed checkpoint for the consistent-cut
    /// check (`check/consistent_cut.rs`): per channel, what the sender had
    /// sent and the receiver had consumed before their snapshots, and the
    /// channel state each captured; per FLIP-27 source, where each split
    /// was. Counts the channels whose receiver consumed more than was sent
    /// (duplicates after a restore) when the run may duplicate.
    pub(super) fn check_cut(&mut self, p: &Pending) {
        use crate::runtime::cut_evidence::{ChannelCut, CompletedCut, CutClass, Span};
        let mut channels = vec![ChannelCut::default(); self.net.channels.len()];
        let span = |c: &ChannelState| Span {
            first: c.first_seq,
            len: c.records.len() as u64,
            gap: c.gap,
        };
        for a in p.acks.iter().flatten().filter(|a| a.arrived) {
            for &(ch, n) in &a.cut.outputs {
                channels[ch as usize].sent = Some(n);
            }
            for &(ch, n) in &a.cut.inputs {
                channels[ch as usize].received = Some(n);
            }
            for c in &a.snapshot.inputs {
                channels[c.ch as usize].input = Some(span(c));
            }
            for c in &a.snapshot.outputs {
                channels[c.ch as usize].output = Some(span(c));
            }
        }
        let dup_ok = matches!(
            self.plan.expected,
            Guarantee::AtLeastOnce | Guarantee::Broken
        );
        let duplicating = channels
            .iter()
            .filter(|c| c.class(dup_ok) == CutClass::Duplicates)
            .count();
        self.rec.counters.cut_duplicates += duplicating as u64;
        let cut = CompletedCut {
            checkpoint: p.id,
            time_ns: self.now().0,
            channels,
            splits: self.split_cut(p),
        };
        self.rec.evidence.cuts.push(cut);
    }
}

impl World<'_> {
    /// Sends checkpoint `id`'s completion notification to every task.
    fn notify_tasks_complete(&mut self, at: SimTime, id: CheckpointId) {
        if id.is_multiple_of(2)
            && self.coord.final_id != Some(id)
            && self.plan.cfg.mutants.has(Mutant::NotificationsSkipped)
        {
            // Mutant: the tasks hear of it only with the next.
            fired(Mutant::NotificationsSkipped);
            return;
        }
        for t in 0..self.tasks.list.len() as TaskId {
            self.send_notify_complete(at, t, id);
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const NotificationsSkipped: Mutant = Mutant::declare(&MutantInfo {
            name: "notifications-skipped",
            part: "notification delivery",
            what: "the coordinator sends no completion notification for every other checkpoint (the even ids, but the final one): the tasks commit its transactions only at the next notification, so committed output lags the checkpoints that made it committable by an interval",
            modelled_on: "completion notifications treated as optional (Flink's are best effort, and the next one subsumes a missed one) and dropped or delayed behind other coordinator work: exactly-once holds and each task commits at the first notification it gets, so only the freshness of committed output shows it",
            caught_by: "progress",
            applies: &[("wordcount", "aligned")],
        });
    }
}

/// The tasks whose acknowledgements of `p` arrived.
pub(super) fn arrived_tasks(p: &coordinator::Pending) -> Vec<TaskId> {
    (0..p.acks.len() as TaskId)
        .filter(|&t| p.acks[t as usize].as_ref().is_some_and(|a| a.arrived))
        .collect()
}
