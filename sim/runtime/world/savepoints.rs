//! Savepoint requests (queued until nothing is pending), their completion
//! (plain or stop-with-savepoint), cancel, and a job started from a
//! snapshot.

use super::*;

impl World<'_> {
    // ------------------------------------------------------------ savepoints

    /// Triggers the first due savepoint request if the job runs, nothing is
    /// pending and no restored in-flight data is still replaying; otherwise
    /// tries again in a millisecond (Flink queues the request).
    pub(super) fn try_savepoint(&mut self) {
        self.sp.retry = false;
        let now = self.net.now;
        if self.sp.queue.front().is_none_or(|s| s.at > now) {
            return;
        }
        match self.job.status {
            JobStatus::Running | JobStatus::Restarting => {}
            _ => return,
        }
        let ready = self.job.status == JobStatus::Running
            && now >= self.job.restored_at
            && !self.coord.finishing
            && self.sp.stopped_with.is_none()
            && self.coord.pending.is_empty()
            && self.recovery.pending == 0;
        if !ready {
            // Keep trying even while the job is finishing: a failover can
            // undo that, and a queued request holds back periodic triggers.
            self.sp.retry = true;
            self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
            return;
        }
        let sp = self.sp.queue.pop_front().expect("a due request");
        let request = self
            .sp
            .queue_request
            .pop_front()
            .expect("every queued request has an index");
        self.sp.request_of.insert(self.coord.next_id, request);
        self.trigger_savepoint(sp);
        if self.sp.queue.front().is_some_and(|s| s.at <= now) && !self.sp.retry {
            self.sp.retry = true;
            self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
        }
    }

    /// A savepoint's metadata is written. A plain savepoint notifies
    /// nobody (its transactions stay pre-committed until a later checkpoint
    /// commits them), subsumes nothing and is never used for recovery; a
    /// stop-with-savepoint notifies every task, which then finishes.
    pub(super) fn savepoint_completed(&mut self, p: Pending, sp: SavepointSpec) {
        let now = self.net.now;
        let id = p.id;
        self.rec.counters.savepoints_completed += 1;
        let request = self.sp.request_of[&id];
        self.sp.reports[request].completed = Some(id);
        self.sp.reports[request]
            .attempts
            .push((id, format!("completed at {}", SimDuration(now.0))));
        let tasks = super::coordination::arrived_tasks(&p);
        self.files_completed(id, &tasks, true);
        let mut stats = coordinator::stats_of(&p, now, CpOutcome::Completed);
        stats.savepoint = true;
        self.coord.stats.push(stats);
        self.check_cut(&p);
        self.coord.last_completion = Some(now);
        if !sp.stop && self.plan.cfg.mutants.has(Mutant::SavepointEntersStore) {
            // Mutant: the savepoint is stored like a checkpoint.
            fired(Mutant::SavepointEntersStore);
            let states: Vec<Option<TaskSnapshot>> = p
                .acks
                .iter()
                .map(|a| a.as_ref().filter(|a| a.arrived).map(|a| a.snapshot.clone()))
                .collect();
            self.store_completed(Completed {
                id,
                trigger_time: p.trigger_time,
                completed_at: now,
                states,
                state_bytes: 0,
                in_flight_bytes: 0,
                lines: None,
                coordinators: p.coordinators.clone(),
            });
        }
        if sp.stop && sp.drain && self.plan.cfg.algorithm.info().aligned_savepoints {
            // Drained: everything the stopped sources read must be
            // committed. (Without drain, operators may still hold records
            // in their state, as windows do in Flink.) The stopped sources'
            // positions come from their built-in source state. Only for an
            // aligned savepoint: there the end of input reaches every
            // operator before the savepoint's barrier, so every operator
            // flushed before its snapshot. A Chandy–Lamport savepoint
            // snapshots at the first marker, possibly before the end of
            // input arrived on another input: what the operator flushes
            // then is after its snapshot. (The commit check still holds
            // the sinks to what they had read before the savepoint.)
            self.note_drained(&p);
        }
        if self.plan.job_opts.keep_snapshots {
            let states = p
                .acks
                .into_iter()
                .map(|a| a.filter(|a| a.arrived).map(|a| a.snapshot))
                .collect();
            self.sp.snapshots.push(SnapshotOut {
                kind: SnapshotKind::Savepoint,
                id,
                stop: sp.stop,
                drain: sp.drain,
                completed_at: now,
                states,
                coordinators: p.coordinators,
            });
        }
        let at = now.plus(self.plan.scenario.checkpoint.rpc_latency);
        if sp.stop {
            self.sp.stopped_with = Some(id);
            self.coord.finishing = true;
            self.coord.final_id = Some(id);
            for t in 0..self.tasks.list.len() as TaskId {
                self.net.schedule(at, Ev::NotifyComplete { task: t, id });
            }
            return;
        }
        for t in 0..self.tasks.list.len() as TaskId {
            self.net.schedule(at, Ev::SavepointDone { task: t, id });
            if self.plan.cfg.mutants.has(Mutant::SavepointNotifies) {
                // Mutant: the savepoint's side effects are committed.
                fired(Mutant::SavepointNotifies);
                self.net.schedule(at, Ev::NotifyComplete { task: t, id });
            }
        }
        if self.plan.job_opts.cancel_after_savepoint {
            self.cancel();
        }
    }

    /// A drained stop-with-savepoint `p` completed: what the stopped sources
    /// had read (their positions in their snapshots, if every source's is
    /// known) is what must be committed, except the records its snapshots
    /// hold as channel state.
    fn note_drained(&mut self, p: &Pending) {
        let mut below = vec![0; self.tasks.high_water.len()];
        let mut known = true;
        for (ti, a) in p.acks.iter().enumerate() {
            if !self.tasks.list[ti].is_source {
                continue;
            }
            match a
                .as_ref()
                .and_then(|a| a.snapshot.states.first())
                .and_then(|state| crate::model::operator::source_offsets(state))
            {
                Some(offsets) => {
                    for (partition, offset) in offsets {
                        below[partition as usize] = offset;
                    }
                }
                None => known = false,
            }
        }
        self.sp.complete_below = known.then_some(below);
        for a in p.acks.iter().flatten() {
            for cs in a.snapshot.inputs.iter().chain(&a.snapshot.outputs) {
                self.sp
                    .complete_exempt
                    .extend(cs.records.iter().map(|r| r.lineage));
            }
        }
        self.sp.complete_exempt.sort_unstable();
    }

    /// Aborts every pending checkpoint (`outcome`: failover or cancel, so no
    /// notification goes out) and cancels every live task; the attempt
    /// stamp increments, so everything scheduled for them is now stale.
    pub(super) fn stop_all_tasks(&mut self, outcome: CpOutcome) {
        self.abort_all_pending(outcome);
        self.tasks.cancel_live();
        for s in &mut self.net.sched {
            s.alive = false;
        }
        self.net.attempt += 1;
    }

    /// Cancels the job: pending checkpoints are aborted, every task stops.
    /// With `retain_on_cancel` the latest completed checkpoint is kept.
    pub(super) fn cancel(&mut self) {
        if !matches!(self.job.status, JobStatus::Running | JobStatus::Restarting) {
            self.faults.log.cancel = Fate::Ignored(self.job_not_running());
            return;
        }
        self.faults.log.cancel = Fate::Fired;
        self.check_closed();
        self.stop_all_tasks(CpOutcome::Cancelled);
        self.job.status = JobStatus::Cancelled;
        if self.plan.scenario.checkpoint.retain_on_cancel && self.plan.job_opts.keep_snapshots {
            if let Some(c) = self.coord.latest() {
                self.sp.snapshots.push(SnapshotOut {
                    kind: SnapshotKind::Checkpoint,
                    id: c.id,
                    stop: false,
                    drain: false,
                    completed_at: c.completed_at,
                    states: c.states.clone(),
                    coordinators: c.coordinators.clone(),
                });
            }
        }
    }

    /// A snapshot to start from, as a completed checkpoint.
    /// Snapshots from files carry records, not their sizes: they are
    /// this run's (`sizes`).
    pub(super) fn restore_completed(r: &Restore, sizes: &RecordSizes) -> Rc<Completed> {
        let mut states = r.states.clone();
        let (mut state_bytes, mut in_flight_bytes) = (0, 0);
        for s in states.iter_mut().flatten() {
            for c in s.inputs.iter_mut().chain(s.outputs.iter_mut()) {
                c.bytes = sizes.total(&c.records);
            }
            state_bytes += s.state_bytes();
            in_flight_bytes += s.in_flight_bytes();
        }
        Rc::new(Completed {
            id: r.id,
            trigger_time: SimTime::ZERO,
            completed_at: SimTime::ZERO,
            states,
            state_bytes,
            in_flight_bytes,
            lines: None,
            coordinators: r.coordinators.clone(),
        })
    }

    /// The job starts from a snapshot: ids continue after it, it is the
    /// latest completed checkpoint (for a failover before the first new
    /// one), and every task restores from it.
    pub(super) fn start_from(&mut self, r: &Restore) {
        self.tasks.store = r.store.clone();
        self.tasks.store.log.carry_into_new_job();
        self.net.attempt = r.generation << 16;
        let c = Self::restore_completed(r, &self.net.sizes);
        self.coord.start_from(c.clone());
        self.files_imported(&c, r.claim);
        self.rec.counters.restored_from_snapshot += 1;
        self.rec.schedule_partial = true;
        self.deploy(Some(&c), false);
    }

    /// A savepoint ended without completing: its request records the
    /// attempt, and is queued again when failed savepoints are retried.
    pub(super) fn savepoint_aborted(
        &mut self,
        id: CheckpointId,
        outcome: CpOutcome,
        sp: SavepointSpec,
    ) {
        let now = self.net.now;
        self.rec.counters.savepoints_failed += 1;
        let request = self.sp.request_of[&id];
        let report = &mut self.sp.reports[request];
        report.attempts.push((id, outcome.describe().to_string()));
        if !self.plan.job_opts.retry_failed_savepoints {
            report.failure = Some(format!("savepoint {id} {}", outcome.describe()));
            return;
        }
        self.sp.queue.push_front(SavepointSpec { at: now, ..sp });
        self.sp.queue_request.push_front(request);
        if !self.sp.retry {
            self.sp.retry = true;
            self.schedule_any(now.plus(SimDuration::from_millis(1)), Ev::SavepointDue);
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const SavepointNotifies: Mutant = Mutant::declare(&MutantInfo {
            name: "savepoint-notifies",
            part: "savepoints",
            what: "a plain savepoint notifies the tasks when it completes, so sinks commit its transactions although recovery never uses it",
            modelled_on: "intermediate savepoints committing side effects before FLINK-25191 (a restart from the older checkpoint then duplicates them)",
            caught_by: "exactly-once-output",
            applies: &[("savepoints", "aligned")],
        });
        pub const SavepointEntersStore: Mutant = Mutant::declare(&MutantInfo {
            name: "savepoint-enters-store",
            part: "savepoints",
            what: "a completed plain savepoint is added to the completed-checkpoint store, evicting a retained checkpoint, and recovery may restore from it",
            modelled_on: "savepoints used for recovery and subsuming checkpoints before Flink 1.15 (FLINK-25191, FLINK-24064)",
            caught_by: "protocol",
            applies: &[("savepoints", "aligned")],
        });
    }
}
