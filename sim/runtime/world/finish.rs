//! How a run ends: the last protocol checks, the memory its history
//! holds, and the `RunOutput` built from the world.

use super::*;

impl World<'_> {
    /// The bytes of what grows with the length of the run: the checkpoint
    /// history (per checkpoint, per task), the schedule log, a recorded
    /// trace (see `runtime::limits`).
    pub(super) fn history_bytes(&self) -> u64 {
        use std::mem::size_of;
        let per_checkpoint = size_of::<super::coordinator::CheckpointStats>()
            + 2 * self.tasks.len() * size_of::<Option<u64>>();
        let trace = self.trace.len() * size_of::<TraceEntry>()
            + self.timeline.len() * size_of::<TimelineMark>();
        (self.coord.stats.len() * per_checkpoint + trace) as u64
            + self.schedule.logged * size_of::<Step>() as u64
    }

    pub(super) fn finish(&mut self, outcome: Outcome, events: u64) -> RunOutput {
        self.check_closed();
        self.sync_fault_counters();
        if self.is_local() {
            self.check_local_history();
            self.counters.log_bytes = self.net.logs.bytes;
            self.counters.log_peak_records = self.net.logs.peak_records;
            self.counters.piggyback_bytes = self.net.piggyback_bytes;
        }
        for (i, r) in self.savepoint_reports.iter_mut().enumerate() {
            if r.completed.is_some() || r.failure.is_some() {
                continue;
            }
            let end = SimDuration(self.net.now.0);
            let pending = self
                .savepoint_request_of
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
        let warnings = self.warnings(&outcome);
        // The planned faults that never came close the timeline (those that
        // came and changed nothing are in it at their time).
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
        for w in &warnings {
            if FAULT_KINDS.contains(&w.kind.as_str()) && !w.message.contains("took no effect") {
                self.note_fault(|| format!("not fired: {}", w.message));
            }
        }
        let mut keyed_state: BTreeMap<u32, BTreeMap<u64, i64>> = BTreeMap::new();
        let mut order_insensitive = true;
        for m in self.tasks.iter().flat_map(|t| &t.members) {
            order_insensitive &= m.op.order_insensitive_output();
            let mut s = m.op.keyed_state();
            if !s.is_empty() || self.scenario.operators[m.index as usize].kind.is_keyed() {
                // Merged in one pass (later subtasks win, as with `extend`).
                keyed_state.entry(m.index).or_default().append(&mut s);
            }
        }
        RunOutput {
            outcome,
            events,
            end_time: self.net.now,
            fingerprint: self.fp.finish(),
            counters: std::mem::take(&mut self.counters),
            store: std::mem::take(&mut self.store),
            keyed_state,
            violations: std::mem::take(&mut self.violations),
            checkpoint_stats: std::mem::take(&mut self.coord.stats),
            completed_ids: std::mem::take(&mut self.coord.completed_ids),
            aborted_ids: std::mem::take(&mut self.coord.aborted_ids),
            trace: std::mem::take(&mut self.trace),
            timeline: std::mem::take(&mut self.timeline), // trace
            fault_timeline: std::mem::take(&mut self.fault_timeline),
            fault_events_dropped: self.fault_events_dropped,
            config: self.cfg.clone(), // trace
            crash_plan: {
                // Crash points the run took are crashes at their time; the
                // others never were.
                let mut plan = std::mem::take(&mut self.crash_plan);
                let mut i = 0;
                plan.retain(|_| {
                    i += 1;
                    i <= self.first_crash_point
                        || self.fx_log.crashes[i - 1] != warnings::Fate::Pending
                });
                plan
            },
            order_insensitive,
            expected: self.expected,
            fault_phase_end: self.fault_phase_end,
            input_end: self.input_end,
            sink_end: self.sink_end,
            recovery_ns: std::mem::take(&mut self.recovery_ns),
            snapshots: std::mem::take(&mut self.snapshots),
            complete_below: self.complete_below.take(),
            complete_exempt: std::mem::take(&mut self.complete_exempt),
            savepoints: std::mem::take(&mut self.savepoint_reports),
            warnings,
            schedule: (!self.schedule_partial).then(|| self.schedule.effective_all()),
            tasks: self.task_reports(),
            failovers: std::mem::take(&mut self.failovers),
            restarts: std::mem::take(&mut self.restart_notes),
            crash_points: std::mem::take(&mut self.crash_points),
            tolerable_failures: self.scenario.checkpoint.tolerable_failures,
        }
    }
}
