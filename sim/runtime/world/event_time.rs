//! Event time in the tasks (docs/event-time.md), as Flink's tasks do it.
//!
//! A source task with a watermark interval arms a processing-time timer
//! that puts a mail in its mailbox: the periodic emit runs between two
//! default actions, so a busy or backpressured source emits late. Its
//! watermarks come from [`SourceWatermarks`] (a generator per split,
//! combined), fed with every record it emits. A task with inputs keeps a
//! [`Valve`] over its input channels; watermarks travel in the channels'
//! buffers as elements among the records ([`Record::watermark`]), and the
//! task takes each out of the stream before its head operator: a new input
//! watermark goes to the operator's `process_watermark`, then, forwarded
//! by the task, through the chain member by member and out on every
//! channel of every output edge, whatever the partitioning. A source whose
//! input ends sends `MAX_WATERMARK`. None of this is in a checkpoint: a
//! redeployed task starts again at `MIN_WATERMARK`.

use super::*;
use crate::model::event_time::{SourceWatermarks, Valve, MAX_WATERMARK, MIN_WATERMARK};
use crate::model::flip27::OperatorEvent;
use crate::model::Element;
use crate::runtime::watermarks::{
    Backwards, IdleWhileReady, Ignored, Stall, TaskWatermark, WatermarkEvidence,
};
use tasks::TaskTime;

impl World<'_> {
    /// Task `t`'s event time when (re)deployed: `None` without event time.
    pub(super) fn task_time(&self, t: TaskId) -> Option<Box<TaskTime>> {
        if !self.plan.time.on {
            return None;
        }
        let info = &self.plan.exec.tasks[t as usize];
        let is_source = self.plan.scenario.op(info.operator).kind.is_source();
        let valve = (!is_source).then(|| {
            let mut valve = Valve::new(info.inputs.len()).with_mutants(self.plan.cfg.mutants);
            // A feedback channel carries no watermarks (an iteration's
            // tail forwards none): idle from the start, it never holds
            // the task back.
            for (i, &ch) in info.inputs.iter().enumerate() {
                if self.is_feedback(ch) {
                    valve.input_status(i, true);
                }
            }
            valve
        });
        let source = is_source.then(|| {
            let mut source = self.plan.time.source(info.operator.0);
            for p in self.plan.time.initial_splits(info.operator.0, info.subtask) {
                self.add_split(&mut source, p, 0);
            }
            source
        });
        Some(Box::new(TaskTime {
            source,
            valve,
            alignment: self.reader_alignment(t),
            emit_deferred: false,
            advanced_at: self.net.now,
            stall_noted: false,
            idle: false,
        }))
    }

    /// A split (its next record at `offset`) joins a source's watermarks
    /// when it is assigned.
    fn add_split(&self, source: &mut SourceWatermarks, p: u32, offset: u64) {
        if self
            .plan
            .cfg
            .mutants
            .has(Mutant::SplitWatermarkAtFirstRecord)
        {
            fired(Mutant::SplitWatermarkAtFirstRecord);
            return; // Mutant: it joins with its first record.
        }
        source.add_split(p, offset);
    }

    /// Source task `t` was restored from `state`: its watermarks hold the
    /// restored splits that have records left.
    pub(super) fn restore_source_splits(&mut self, t: TaskId, state: &[u8]) {
        let Some(offsets) = crate::model::operator::source_offsets(state) else {
            return;
        };
        let op = self.plan.exec.tasks[t as usize].operator.0;
        let mut source = self.plan.time.source(op);
        for (p, offset) in self.plan.time.restored_splits(&offsets) {
            self.add_split(&mut source, p, offset);
        }
        if let Some(time) = self.tasks.list[t as usize].time.as_mut() {
            time.source = Some(source);
        }
    }

    /// An operator event reached source task `t`: an assigned split joins
    /// its watermarks.
    pub(super) fn split_assigned(&mut self, t: TaskId, event: OperatorEvent) {
        let OperatorEvent::AddSplit(p) = event else {
            return;
        };
        let mut time = self.tasks.list[t as usize].time.take();
        if let Some(source) = time.as_mut().and_then(|x| x.source.as_mut()) {
            self.add_split(source, p, 0);
        }
        self.tasks.list[t as usize].time = time;
    }

    /// Channel `ch` closes an iteration's loop.
    pub(super) fn is_feedback(&self, ch: ChannelId) -> bool {
        let Some(loops) = self.loops.as_ref() else {
            return false;
        };
        let c = &self.plan.exec.channels[ch as usize];
        loops.feedback_in[c.to as usize][c.input_index as usize]
    }

    /// A deployed source task with a watermark interval arms its timer.
    pub(super) fn arm_watermark_timer(&mut self, t: TaskId) {
        let op = self.plan.exec.tasks[t as usize].operator.0;
        let interval = self.plan.time.interval(op);
        if interval > 0 && self.tasks.list[t as usize].is_source {
            let at = self.net.now.plus(SimDuration(interval));
            self.net.schedule(at, Ev::WatermarkTimer { task: t });
        }
    }

    /// The timer fires: the periodic emit goes to the task's mailbox, and
    /// the timer is armed again.
    pub(super) fn watermark_timer(&mut self, t: TaskId) {
        let task = &self.tasks.list[t as usize];
        if task.status != Status::Running || task.input_ended {
            return;
        }
        self.post(t, Mail::Watermark);
        self.arm_watermark_timer(t);
    }

    /// The periodic emit, run as a mail: the source's combined watermark,
    /// if it grew, and its status, if it changed, out through the chain.
    /// The idleness timers read the task's input activity clock; a split
    /// they mark idle is in the schedule (the oracle follows it) and is
    /// judged (it must have had no record ready for the timeout).
    pub(super) fn periodic_watermark(&mut self, t: TaskId) {
        let task = &mut self.tasks.list[t as usize];
        // A source that is stopped emits nothing, watermarks included; one
        // that is paused (stop-the-world drains behind it) emits after its
        // first step once it resumes, with what that step read (a periodic
        // emit timed to fall in every pause would otherwise never run).
        if task.paused.is_some() && !task.input_ended && !task.stopped {
            if let Some(time) = task.time.as_mut() {
                time.emit_deferred = true;
            }
            return;
        }
        if task.input_ended || task.stopped {
            return;
        }
        if let Some(time) = task.time.as_mut() {
            time.emit_deferred = false;
        }
        let inst = task.members[0].inst;
        let mut time = self.tasks.list[t as usize].time.take();
        let Some(TaskTime {
            source: Some(source),
            alignment,
            ..
        }) = time.as_deref_mut()
        else {
            self.tasks.list[t as usize].time = time;
            return;
        };
        let aligned = alignment.as_ref().filter(|_| {
            let m = Mutant::PausedSplitIdlenessClockRuns;
            let on = self.plan.cfg.mutants.has(m);
            if on {
                fired(m); // Mutant: a paused split's idleness clock runs on.
            }
            !on
        });
        let clock = if self
            .plan
            .cfg
            .mutants
            .has(Mutant::IdlenessClockRunsUnderBackpressure)
        {
            fired(Mutant::IdlenessClockRunsUnderBackpressure);
            self.net.now.0 // Mutant: backpressured time counts as idle.
        } else {
            self.net.sched[t as usize].activity_clock(self.net.now)
        };
        let mut idled = Vec::new();
        let mut out = Vec::new();
        source.periodic(
            &mut |p, idleness| {
                // A split paused for alignment is not idle (FLINK-35886).
                let clock = match (p, aligned) {
                    (crate::model::idleness::MAIN_OUTPUT, _) | (_, None) => clock,
                    (p, Some(a)) => a.split_clock(p, clock),
                };
                let idle = idleness.timer.check_if_idle(clock);
                if idle && !idleness.idle_now {
                    idled.push(p);
                }
                idle
            },
            &mut out,
        );
        let readiness: Vec<_> = idled
            .iter()
            .filter_map(|&p| Some((p, source.split(p).map(|s| s.next_offset)?)))
            .collect();
        self.tasks.list[t as usize].time = time;
        for &p in &idled {
            self.rec.schedule.push(inst, Step::Idle(p));
        }
        self.rec.schedule.push(inst, Step::Watermark);
        self.judge_idleness(t, &readiness);
        self.align_after_emit(t, &out);
        self.emit_elements(t, &out);
    }

    /// After a source step: the periodic emit deferred by a pause runs.
    pub(super) fn deferred_emit(&mut self, t: TaskId) {
        let time = self.tasks.list[t as usize].time.as_ref();
        if time.is_some_and(|x| x.emit_deferred) {
            self.periodic_watermark(t);
        }
    }

    /// Elements a source's periodic emit or a valve sent, through the
    /// chain and out.
    fn emit_elements(&mut self, t: TaskId, out: &[Element]) {
        for &e in out {
            match e {
                Element::Watermark(w) => self.emit_watermark(t, 0, w),
                Element::Status { idle } => self.emit_status(t, idle),
            }
        }
        if !out.is_empty() {
            self.emit_from(t, 0);
        }
    }

    /// Splits of source task `t` just marked idle, with their next offsets:
    /// a split whose next record had been there to read for the idle
    /// timeout was not idle (`withIdleness`: no record *came* for the
    /// timeout); the watermark then runs ahead of records the source has.
    fn judge_idleness(&mut self, t: TaskId, splits: &[(u32, u64)]) {
        let op = self.plan.exec.tasks[t as usize].operator.0;
        let timeout = self.plan.time.idle_timeout(op);
        let now = self.net.now.0;
        for &(p, offset) in splits {
            self.rec.evidence.watermarks.splits_idled += 1;
            self.rec.counters.splits_idled += 1;
            let Some(ready) = self.plan.time.ready_at(p, offset) else {
                continue;
            };
            if now.saturating_sub(ready) < timeout || ready > now {
                continue;
            }
            let source = self.member_name(t, 0);
            let ev = &mut self.rec.evidence.watermarks;
            ev.idle_while_ready += 1;
            if ev.first_idle_while_ready.len() < WatermarkEvidence::KEPT {
                ev.first_idle_while_ready.push(IdleWhileReady {
                    time_ns: now,
                    source,
                    split: p,
                    offset,
                    ready_ns: ready,
                    timeout_ns: timeout,
                });
            }
        }
    }

    /// Task `t`'s outputs announce watermark status `idle` if it changed
    /// (`RecordWriterOutput.emitWatermarkStatus`): out through the chain,
    /// broadcast on every channel.
    fn emit_status(&mut self, t: TaskId, idle: bool) {
        let Some(time) = self.tasks.list[t as usize].time.as_mut() else {
            return;
        };
        if time.idle == idle {
            return;
        }
        time.idle = idle;
        self.rec.evidence.watermarks.statuses += 1;
        self.tasks.out.push(Record::watermark_status(idle));
    }

    /// The records source task `t` just emitted (in `tasks.out`) feed its
    /// splits' generators.
    pub(super) fn source_records_timed(&mut self, t: TaskId) {
        let task = &mut self.tasks.list[t as usize];
        let Some(source) = task.time.as_mut().and_then(|x| x.source.as_mut()) else {
            return;
        };
        let mut finished = Vec::new();
        for r in &self.tasks.out {
            let l = r.lineage;
            let last = self.plan.time.is_last(l.partition, l.offset);
            source.on_record(l.partition, l.offset, r.timestamp, last);
            if last {
                finished.push(l.partition);
            }
        }
        for split in finished {
            self.aligned_split_finished(t, split);
        }
    }

    /// Source task `t`'s input ended: `MAX_WATERMARK` out through the chain
    /// (Flink's `advanceToEndOfEventTime`), before the operators finish.
    pub(super) fn end_of_event_time(&mut self, t: TaskId) {
        self.report_end(t);
        let time = self.tasks.list[t as usize].time.as_ref();
        let splitless = time
            .and_then(|x| x.source.as_ref())
            .is_some_and(|s| !s.had_splits());
        if splitless
            && self
                .plan
                .cfg
                .mutants
                .has(Mutant::SplitlessSourceNoFinalWatermark)
        {
            fired(Mutant::SplitlessSourceNoFinalWatermark);
            return; // Mutant: a source that read nothing sends no MAX_WATERMARK.
        }
        if let Some(time) = self.tasks.list[t as usize].time.as_ref() {
            // In the schedule: a source restored from a checkpoint taken
            // after its end sends it again.
            let idle = time.idle;
            let inst = self.tasks.list[t as usize].members[0].inst;
            self.rec.schedule.push(inst, Step::EndOfInput);
            // An output announced idle sends no watermark, this one
            // included (`RecordWriterOutput.emitWatermark`).
            if !idle {
                self.emit_watermark(t, 0, MAX_WATERMARK);
                self.emit_from(t, 0);
            }
        }
    }

    /// A stream element read from task `t`'s input `input`.
    pub(super) fn input_element(&mut self, t: TaskId, input: u32, r: &Record) {
        match r.element() {
            Some(Element::Watermark(w)) => self.input_watermark(t, input, w),
            Some(Element::Status { idle }) => self.input_status(t, input, idle),
            None => {}
        }
    }

    /// A watermark status read from task `t`'s input `input`: through the
    /// valve (`inputWatermarkStatus`); what it emits, a watermark before a
    /// status, through the chain and out.
    fn input_status(&mut self, t: TaskId, input: u32, idle: bool) {
        let task = &mut self.tasks.list[t as usize];
        let Some(time) = task.time.as_mut() else {
            return;
        };
        let Some(valve) = time.valve.as_mut() else {
            return;
        };
        let out = valve.input_status(input as usize, idle);
        self.rec.evidence.watermarks.none_aligned += u64::from(out.none_aligned);
        let mut elements = Vec::new();
        if let Some(w) = out.watermark {
            time.advanced_at = self.net.now;
            elements.push(Element::Watermark(w));
        }
        if let Some(idle) = out.idle {
            elements.push(Element::Status { idle });
        }
        self.emit_elements(t, &elements);
    }

    /// A watermark read from task `t`'s input `input`: through the valve;
    /// a new input watermark to the head operator and on.
    fn input_watermark(&mut self, t: TaskId, input: u32, w: i64) {
        let task = &mut self.tasks.list[t as usize];
        let Some(time) = task.time.as_mut() else {
            return;
        };
        let Some(valve) = time.valve.as_mut() else {
            return;
        };
        if valve.channel(input as usize).is_some_and(|(_, idle)| idle) {
            // A sender sends no watermark while its output is idle: the
            // receiver's idle view of this channel is stale, and the
            // valve ignores the channel's event time.
            self.watermark_on_idle_channel(t, input, w);
            return;
        }
        let Some(out) = valve.input_watermark(input as usize, w).watermark else {
            return;
        };
        time.advanced_at = self.net.now;
        self.emit_watermark(t, 0, out);
        self.emit_from(t, 0);
    }

    /// Watermark `w` reached task `t` on input `input`, which its valve
    /// holds idle: the check's evidence (the valve ignores it, as Flink's).
    fn watermark_on_idle_channel(&mut self, t: TaskId, input: u32, w: i64) {
        let ch = self.plan.exec.tasks[t as usize].inputs[input as usize];
        let task = self.member_name(t, 0);
        let ev = &mut self.rec.evidence.watermarks;
        ev.ignored += 1;
        if ev.first_ignored.len() < WatermarkEvidence::KEPT {
            ev.first_ignored.push(Ignored {
                time_ns: self.net.now.0,
                task,
                channel: ch,
                watermark: w,
            });
        }
    }

    /// Member `m` of task `t` receives watermark `w` (its input's, or the
    /// member before it's): its clock advances to it if it is later (its
    /// `process_watermark` runs then, and what timers emit goes to
    /// `tasks.out`), and the watermark goes on behind them; the caller
    /// sends `tasks.out` on. A watermark below the last one the member sent
    /// on in this deployment is the check's evidence.
    pub(super) fn emit_watermark(&mut self, t: TaskId, m: usize, w: i64) {
        let member = &self.tasks.list[t as usize].members[m];
        let (before, clock) = (member.sent_watermark, member.watermark);
        let ev = &mut self.rec.evidence.watermarks;
        ev.emitted += 1;
        if w < before {
            ev.backwards += 1;
            if ev.first_backwards.len() < WatermarkEvidence::KEPT {
                let operator = self.member_name(t, m);
                let time_ns = self.net.now.0;
                self.rec
                    .evidence
                    .watermarks
                    .first_backwards
                    .push(Backwards {
                        time_ns,
                        operator,
                        before,
                        watermark: w,
                    });
            }
        }
        if w == MAX_WATERMARK && before != MAX_WATERMARK {
            self.rec.evidence.watermarks.reached_max += 1;
        }
        if w > before && w != MAX_WATERMARK {
            let task = &self.tasks.list[t as usize];
            let lag = &mut self.rec.evidence.watermarks.lag;
            if task.is_source && m == 0 {
                lag.born(w, self.net.now.0);
            } else if task.members[m].is_sink {
                lag.arrived(w, self.net.now.0);
            }
        }
        let member = &mut self.tasks.list[t as usize].members[m];
        member.sent_watermark = w;
        if w > clock {
            member.watermark = w;
            let (member, mut ctx) = self.ctx_parts(t, m);
            member.op.process_watermark(w, &mut ctx);
            self.note_fired(t, m);
        }
        self.tasks.out.push(Record::watermark(w));
    }

    /// Task `t`'s members' clocks, for its snapshot (none without event
    /// time).
    pub(super) fn member_clocks(&self, t: TaskId) -> Vec<i64> {
        let task = &self.tasks.list[t as usize];
        match task.time {
            None => Vec::new(),
            Some(_) => task.members.iter().map(|m| m.watermark).collect(),
        }
    }

    /// A restored task's members take their clocks from its snapshot:
    /// Flink's window operators keep their progress in their state
    /// (FLINK-24501, FLINK-36663), so a record late before the failure is
    /// late after it.
    pub(super) fn restore_clocks(&mut self, t: TaskId, clocks: &[i64]) {
        if self.plan.cfg.mutants.has(Mutant::WindowClockNotRestored) && !clocks.is_empty() {
            fired(Mutant::WindowClockNotRestored);
            return; // Mutant: every clock starts again at MIN_WATERMARK.
        }
        let members = &mut self.tasks.list[t as usize].members;
        for (m, &w) in members.iter_mut().zip(clocks) {
            m.watermark = w;
            self.rec.counters.clocks_restored += u64::from(w > MIN_WATERMARK);
        }
    }

    /// Restored in-flight elements: the watermarks and the watermark
    /// statuses among them (coverage).
    pub(super) fn count_restored_watermarks(&mut self, elements: &[Record]) {
        if self.plan.time.on {
            for r in elements {
                match r.element() {
                    Some(Element::Watermark(_)) => self.rec.counters.watermarks_restored += 1,
                    Some(Element::Status { .. }) => self.rec.counters.statuses_restored += 1,
                    None => {}
                }
            }
        }
    }

    /// Task `t` read records: if its input watermark has not moved for
    /// longer than `[limits] watermark_stall`, counted from the last fault
    /// if that is later, event time stalled (noted once per deployment, for
    /// the check).
    pub(super) fn watch_watermark(&mut self, t: TaskId) {
        let now = self.net.now;
        let bound = self.plan.scenario.limits.watermark_stall;
        let quiet_since = self.rec.last_fault_ns;
        let Some(time) = self.tasks.list[t as usize].time.as_mut() else {
            return;
        };
        let Some(valve) = time.valve.as_ref() else {
            return;
        };
        self.rec.evidence.watermarks.stall_checks += 1;
        // Since it last advanced, or since the last fault if later.
        let since = time.advanced_at.0.max(quiet_since);
        if time.stall_noted
            || valve.output() == MAX_WATERMARK
            || now.0.saturating_sub(since) <= bound.0
        {
            return;
        }
        time.stall_noted = true;
        let watermark = valve.output();
        let holding_back = self.holding_back(t);
        let task = self.member_name(t, 0);
        let ev = &mut self.rec.evidence.watermarks;
        ev.stalls += 1;
        if ev.first_stalls.len() < WatermarkEvidence::KEPT {
            ev.first_stalls.push(Stall {
                time_ns: now.0,
                task,
                since_ns: since,
                watermark,
                holding_back,
            });
        }
    }

    /// The input channel holding task `t`'s watermark back, with its own.
    fn holding_back(&self, t: TaskId) -> Option<(u32, i64)> {
        let valve = self.tasks.list[t as usize].time.as_ref()?.valve.as_ref()?;
        let i = valve.holding_back()?;
        let ch = self.plan.exec.tasks[t as usize].inputs[i];
        Some((ch, valve.channel(i).map_or(MIN_WATERMARK, |c| c.0)))
    }

    /// `id[subtask]` of member `m` of task `t`.
    fn member_name(&self, t: TaskId, m: usize) -> String {
        let task = &self.tasks.list[t as usize];
        let op = task.members[m].index;
        format!(
            "{}[{}]",
            self.plan.scenario.operators[op as usize].id, task.subtask
        )
    }

    /// At the end of the run: each task's input watermark and what holds
    /// it back, for the check.
    pub(super) fn watermarks_at_end(&mut self) {
        self.rec.evidence.watermarks.on = self.plan.time.on;
        self.rec.evidence.watermarks.splits_paused = self.rec.counters.splits_paused;
        self.stuck_pauses_at_end();
        for t in 0..self.tasks.list.len() as TaskId {
            let task = &self.tasks.list[t as usize];
            let Some(valve) = task.time.as_ref().and_then(|x| x.valve.as_ref()) else {
                continue;
            };
            let holding_back = self.holding_back(t);
            let entry = TaskWatermark {
                task: self.member_name(t, 0),
                watermark: valve.output(),
                input_ended: task.input_ended,
                holding_back,
            };
            self.rec.evidence.watermarks.at_end.push(entry);
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const WindowClockNotRestored: Mutant = Mutant::declare(&MutantInfo {
            name: "window-clock-not-restored",
            part: "event time",
            what: "a restored operator's event-time clock (its timer service's watermark) starts again at Long.MIN_VALUE instead of the checkpoint's: until the watermark catches up, records the failure-free run dropped as late join their windows again, which fire a second time",
            modelled_on: "FLINK-36663 (the window timer service did not restore its watermark, so sliding windows emitted extra results after a restore)",
            caught_by: "timers",
            applies: &[("event-time", "aligned")],
        });
        pub const SplitlessSourceNoFinalWatermark: Mutant = Mutant::declare(&MutantInfo {
            name: "splitless-source-no-final-watermark",
            part: "event time",
            what: "a source subtask that holds no split in its deployment (none assigned, or every one finished before the checkpoint it was restored from) ends its input without sending MAX_WATERMARK: the tasks it feeds wait for its channel forever, their event time never reaches its end and their last windows never fire",
            modelled_on: "FLINK-3121 (Kafka source subtasks that read no partition never emitted a watermark, blocking event time downstream) and FLINK-39167 (the final watermark of a source whose output was never initialised was lost)",
            caught_by: "watermarks",
            applies: &[("event-time", "aligned")],
        });
        pub const IdlenessClockRunsUnderBackpressure: Mutant = Mutant::declare(&MutantInfo {
            name: "idleness-clock-runs-under-backpressure",
            part: "event time",
            what: "a source's idleness timers count the time its task is backpressured: a split whose records wait behind a full output is marked idle, the watermark runs ahead of the records the source holds, and they arrive late",
            modelled_on: "FLINK-35886 (watermark idleness timeout accounting when a subtask is backpressured or blocked)",
            caught_by: "watermarks",
            applies: &[("event-time-idle", "aligned")],
        });
        pub const SplitWatermarkAtFirstRecord: Mutant = Mutant::declare(&MutantInfo {
            name: "split-watermark-at-first-record",
            part: "event time",
            what: "a source's split joins the reader's combined watermark only with its first record, not when it is assigned or restored: until a slow split emits, the watermark follows the others' and runs ahead of it, and its records arrive late",
            modelled_on: "FLINK-26018 (per-split outputs were created at a split's first record, so the first fetched split pushed the watermark past the others) and FLINK-32828 (the same for the splits restored from a checkpoint)",
            caught_by: "exactly-once-output",
            applies: &[("event-time", "aligned")],
        });
    }
}
