//! How a run ends: the last protocol checks, the memory its history
//! holds, and the `RunOutput` built from the world.

use super::*;
use crate::runtime::output::Warning;

impl World<'_> {
    /// The bytes of what grows with the length of the run: the checkpoint
    /// history (per checkpoint, per task), the schedule log, a recorded
    /// trace (see `runtime::limits`).
    pub(super) fn history_bytes(&self) -> u64 {
        use std::mem::size_of;
        let per_checkpoint = size_of::<super::coordinator::CheckpointStats>()
            + 2 * self.tasks.list.len() * size_of::<Option<u64>>();
        let trace = self.rec.trace.len() * size_of::<TraceEntry>()
            + self.rec.timeline.len() * size_of::<TimelineMark>();
        (self.coord.stats.len() * per_checkpoint + trace) as u64
            + self.rec.schedule.logged * size_of::<Step>() as u64
    }

    /// The storage's evidence becomes the run's, its counters the coverage
    /// counters'.
    fn storage_evidence(&mut self) {
        let e = std::mem::take(&mut self.storage.evidence);
        let c = &mut self.rec.counters;
        c.runs_reused = e.runs_reused;
        c.runs_compacted = e.compactions;
        c.shared_runs_deleted = e.runs_deleted;
        c.restores_from_files = e.restores_from_files;
        c.storage_files_lost = e.files_lost;
        c.acks_refused_unknown_state = e.acks_refused;
        c.changelog_segments_reused = e.segments_reused;
        c.materializations_done = e.materializations_done;
        c.materializations_failed = e.materializations_failed;
        c.materializations_skipped = e.materializations_skipped;
        c.segments_merged = e.segments_merged;
        c.physical_files_reused_across = e.physical_reused_across;
        c.physical_files_deleted = e.physical_deleted;
        c.segments_reregistered = e.segments_restored;
        self.rec.evidence.storage = e;
    }

    pub(super) fn finish(&mut self, outcome: Outcome, events: u64) -> RunOutput {
        self.check_closed();
        self.sync_fault_counters();
        if self.is_local() {
            self.check_local_history();
            self.rec.counters.log_bytes = self.net.logs.bytes;
            self.rec.counters.log_peak_records = self.net.logs.peak_records;
            self.rec.counters.piggyback_bytes = self.net.piggyback_bytes;
        }
        self.fail_unfinished_savepoints(&outcome);
        let warnings = self.warnings(&outcome);
        self.close_fault_timeline(&warnings);
        let (keyed_state, order_insensitive) = self.keyed_state();
        self.watermarks_at_end();
        self.rec.evidence.not_exited = self.not_exited();
        self.rec.evidence.pending_at_end = self.pending_at_end();
        self.files_end();
        self.storage_evidence();
        self.log_end(outcome == Outcome::Finished);
        self.rec.evidence.timers.fired =
            (!self.rec.schedule_partial).then(|| self.rec.schedule.effective_fired());
        RunOutput {
            outcome,
            events,
            end_time: self.net.now,
            fingerprint: self.rec.fp.finish(),
            counters: crate::runtime::Counters {
                channel_records_ordered: self.net.order.checked,
                ..std::mem::take(&mut self.rec.counters)
            },
            store: std::mem::take(&mut self.tasks.store),
            keyed_state,
            evidence: crate::runtime::output::Evidence {
                channel_names: (0..self.plan.exec.channels.len())
                    .map(|ch| self.channel_name(ch as ChannelId))
                    .collect(),
                task_names: self
                    .plan
                    .exec
                    .tasks
                    .iter()
                    .map(|t| t.name.clone())
                    .collect(),
                channel_order: std::mem::take(&mut self.net.order),
                ..std::mem::take(&mut self.rec.evidence)
            },
            checkpoint_stats: std::mem::take(&mut self.coord.stats),
            completed_ids: std::mem::take(&mut self.coord.completed_ids),
            aborted_ids: std::mem::take(&mut self.coord.aborted_ids),
            trace: std::mem::take(&mut self.rec.trace),
            timeline: std::mem::take(&mut self.rec.timeline), // trace
            fault_timeline: std::mem::take(&mut self.rec.fault_timeline),
            fault_events_dropped: self.rec.fault_events_dropped,
            config: self.plan.cfg.clone(), // trace
            crash_plan: {
                // Crash points the run took are crashes at their time; the
                // others never were.
                let mut plan = std::mem::take(&mut self.faults.crash_plan);
                let mut i = 0;
                plan.retain(|_| {
                    i += 1;
                    i <= self.faults.first_crash_point
                        || self.faults.log.crashes[i - 1] != Fate::Pending
                });
                plan
            },
            order_insensitive,
            expected: self.plan.expected,
            fault_phase_end: self.faults.phase_end,
            input_end: self.rec.input_end,
            sink_end: self.rec.sink_end,
            recovery_ns: std::mem::take(&mut self.recovery.times_ns),
            restore_ns: std::mem::take(&mut self.recovery.restore_ns),
            snapshots: std::mem::take(&mut self.sp.snapshots),
            complete_below: self.sp.complete_below.take(),
            complete_exempt: std::mem::take(&mut self.sp.complete_exempt),
            savepoints: std::mem::take(&mut self.sp.reports),
            warnings,
            schedule: (!self.rec.schedule_partial).then(|| self.rec.schedule.effective_all()),
            tasks: self.task_reports(),
            failovers: std::mem::take(&mut self.rec.failovers),
            restarts: std::mem::take(&mut self.rec.restart_notes),
            retained_peak: self.coord.retained_peak,
            retained_over: self.coord.retained_over,
            subsumed: self.coord.subsumed,
            holds: self.take_holds(),
            crash_points: std::mem::take(&mut self.rec.crash_points),
            tolerable_failures: self.plan.scenario.checkpoint.tolerable_failures,
        }
    }

    /// Every savepoint request still open at the end fails, saying why.
    fn fail_unfinished_savepoints(&mut self, outcome: &Outcome) {
        for (i, r) in self.sp.reports.iter_mut().enumerate() {
            if r.completed.is_some() || r.failure.is_some() {
                continue;
            }
            let end = SimDuration(self.net.now.0);
            let pending = self
                .sp
                .request_of
                .iter()
                .find(|(id, &req)| req == i && self.coord.pending.contains_key(id))
                .map(|(&id, _)| id);
            r.failure = Some(match pending {
                Some(id) => format!(
                    "the run ended ({}) at {end} while savepoint {id} was pending",
                    outcome.describe()
                ),
                _ if r.requested_at_ns > self.net.now.0 => format!(
                    "the run ended ({}) at {end}, before the request was due",
                    outcome.describe()
                ),
                _ => format!(
                    "the run ended ({}) at {end} before the savepoint could be triggered",
                    outcome.describe()
                ),
            });
        }
    }

    /// The planned faults that never came close the timeline (those that
    /// came and changed nothing are in it at their time).
    fn close_fault_timeline(&mut self, warnings: &[Warning]) {
        const FAULT_KINDS: &[&str] = &[
            "crash",
            "worker-crash",
            "coordinator-crash",
            "latency-spike",
            "partition",
            "straggler",
            "notification-loss",
            "storage-failure",
            "storage-slowness",
        ];
        for w in warnings {
            if FAULT_KINDS.contains(&w.kind.as_str()) && !w.message.contains("took no effect") {
                self.note_fault(|| format!("not fired: {}", w.message));
            }
        }
    }

    /// Every keyed operator's state (its subtasks' merged), and whether
    /// every operator's output is insensitive to input order.
    fn keyed_state(&self) -> (BTreeMap<u32, BTreeMap<u64, i64>>, bool) {
        let mut keyed_state: BTreeMap<u32, BTreeMap<u64, i64>> = BTreeMap::new();
        let mut order_insensitive = true;
        for m in self.tasks.list.iter().flat_map(|t| &t.members) {
            order_insensitive &= m.op.order_insensitive_output();
            let mut s = m.op.keyed_state();
            if !s.is_empty()
                || self.plan.scenario.operators[m.index as usize]
                    .kind
                    .is_keyed()
            {
                // Merged in one pass (later subtasks win, as with `extend`).
                keyed_state.entry(m.index).or_default().append(&mut s);
            }
        }
        (keyed_state, order_insensitive)
    }
}
