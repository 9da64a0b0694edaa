//! Watermark alignment in the readers and the coordinators
//! (`model::alignment`, docs/event-time.md "Watermark alignment"), as
//! Flink's `SourceOperator` and `SourceCoordinator` do it.
//!
//! - **Reports.** An aligned reader arms a processing-time timer every
//!   update interval; its mail reports the watermark its output last
//!   emitted (or `MAX_WATERMARK` while idle, nothing before its first) to
//!   the coordinator, as an operator event with the RPC latency. A reader
//!   whose input ended reports `MAX_WATERMARK` (FLINK-35157).
//! - **Announcements.** Every update interval each aligned coordinator
//!   sends each subtask that reported, if it is running, the group's
//!   smallest watermark plus the drift, through its gateways (held while
//!   a checkpoint closes them, acknowledged, lost with
//!   `[faults.operator_events]`, like any operator event).
//! - **Pauses.** The reader pauses the splits whose watermark is above the
//!   allowed maximum (at a periodic emit, or when an announcement comes),
//!   resumes them when an announcement allows them, and as a whole emits
//!   nothing while its own watermark is above it; each decision is a step
//!   of its schedule (`Step::Pause`, `Step::Resume`), which the oracle
//!   follows. A paused split's idleness clock stops (FLINK-35886); a
//!   reader waiting as a whole stops its activity clock.
//!
//! The coordinator's reports start afresh when it is reset (a global
//! failover); the group's minima are the job's (`CoordinatorStore`) and
//! survive it. A redeployed reader starts with nothing paused.

use super::*;
use crate::model::alignment::{max_allowed, PauseResume, ReaderAlignment};
use crate::model::event_time::MAX_WATERMARK;
use crate::model::flip27::OperatorEvent;
use crate::runtime::watermarks::{StuckPause, WatermarkEvidence};

impl World<'_> {
    /// A fresh reader's alignment (`None`: its source is not aligned).
    pub(super) fn reader_alignment(&self, t: TaskId) -> Option<ReaderAlignment> {
        let op = self.plan.exec.tasks[t as usize].operator.0;
        (self.plan.time.alignment_interval(op) > 0 && self.ops.coordinated(t))
            .then(|| ReaderAlignment::new(self.plan.time.alignment_skips_idle))
    }

    /// A deployed aligned reader arms its report timer.
    pub(super) fn arm_report_timer(&mut self, t: TaskId) {
        let op = self.plan.exec.tasks[t as usize].operator.0;
        let interval = self.plan.time.alignment_interval(op);
        if interval > 0 && self.ops.coordinated(t) {
            let at = self.net.now.plus(SimDuration(interval));
            self.net.schedule(at, Ev::WatermarkReport { task: t });
        }
    }

    /// The report timer fires: the report goes to the task's mailbox.
    pub(super) fn report_timer(&mut self, t: TaskId) {
        let task = &self.tasks.list[t as usize];
        if task.status != Status::Running || task.input_ended {
            return;
        }
        self.post(t, Mail::ReportWatermark);
        self.arm_report_timer(t);
    }

    /// The report, run as a mail (`emitLatestWatermark`).
    pub(super) fn report_watermark(&mut self, t: TaskId) {
        let Some(time) = self.tasks.list[t as usize].time.as_ref() else {
            return;
        };
        let idle = time.source.as_ref().is_some_and(|s| s.is_idle());
        let report = time.alignment.as_ref().and_then(|a| a.report(idle));
        if let Some(w) = report {
            self.report_to_coordinator(t, OperatorEvent::ReportedWatermark(w));
        }
    }

    /// A reader's input ended: it reports `MAX_WATERMARK`, so it no longer
    /// holds its group back (FLINK-35157).
    pub(super) fn report_end(&mut self, t: TaskId) {
        let time = self.tasks.list[t as usize].time.as_mut();
        if let Some(a) = time.and_then(|x| x.alignment.as_mut()) {
            a.emitted(MAX_WATERMARK);
            self.report_to_coordinator(t, OperatorEvent::ReportedWatermark(MAX_WATERMARK));
        }
    }

    fn report_to_coordinator(&mut self, t: TaskId, event: OperatorEvent) {
        self.rec.counters.watermarks_reported += 1;
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        self.net.schedule(at, Ev::ToCoordinator { task: t, event });
    }

    /// A report reached coordinator `slot` (`handleReportedWatermark`): its
    /// subtasks' minimum, and the group's, follow.
    pub(super) fn reported_watermark(&mut self, slot: usize, subtask: u32, w: i64) {
        let Some(a) = self.ops.slots[slot].alignment.as_mut() else {
            return;
        };
        if let Some(min) = a.reports.aggregate(subtask, w) {
            let group = a.group;
            self.ops.groups[group].aggregate(slot as u32, min);
        }
    }

    /// At the start of the job and after every coordinator reset: each
    /// aligned coordinator's announcements, afresh.
    pub(super) fn start_alignment(&mut self) {
        for slot in 0..self.ops.slots.len() {
            let Some(a) = self.ops.slots[slot].alignment.as_mut() else {
                continue;
            };
            a.generation += 1;
            let ev = Ev::AlignmentAnnounce {
                slot: slot as u32,
                generation: a.generation,
            };
            let at = self.net.now.plus(a.interval);
            self.schedule_any(at, ev);
        }
    }

    /// `announceCombinedWatermark`: every subtask that reported and runs
    /// hears the group's maximum.
    pub(super) fn announce_alignment(&mut self, slot: u32, generation: u32) {
        let s = slot as usize;
        let Some(a) = self.ops.slots[s].alignment.as_ref() else {
            return;
        };
        if a.generation != generation || self.faults.fx.coordinator_down {
            return;
        }
        let at = self.net.now.plus(a.interval);
        let quiet = a.reports.is_empty();
        self.schedule_any(at, Ev::AlignmentAnnounce { slot, generation });
        if quiet {
            return;
        }
        let a = self.ops.slots[s].alignment.as_ref().expect("aligned");
        let allowed = max_allowed(self.ops.groups[a.group].aggregated(), a.max_drift);
        let op = crate::scenario::OperatorId(self.ops.slots[s].operator);
        let mut out = Vec::new();
        for subtask in a.reports.keys() {
            let task = self.plan.exec.task_of(op, subtask);
            if self.tasks.list[task as usize].status != Status::Running {
                continue; // `sendEventToSourceOperatorIfTaskReady`
            }
            if a.no_more[subtask as usize] && self.mutant(Mutant::AlignmentSkipsFinishedReaders) {
                continue; // Mutant: a reader told no split will come hears nothing.
            }
            out.push((subtask, OperatorEvent::WatermarkAlignment(allowed)));
        }
        let now = self.net.now;
        let a = self.ops.slots[s].alignment.as_mut().expect("aligned");
        if a.announced.is_none_or(|(w, _)| w != allowed) {
            a.announced = Some((allowed, now));
        }
        self.rec.counters.alignment_announcements += out.len() as u64;
        self.send_events(s, out);
    }

    /// Coordinator `slot` sent `event` to `subtask`: it remembers which
    /// readers it told that no split will come.
    pub(super) fn note_sent(&mut self, slot: usize, subtask: u32, event: OperatorEvent) {
        if event != OperatorEvent::NoMoreSplits {
            return;
        }
        if let Some(a) = self.ops.slots[slot].alignment.as_mut() {
            a.no_more[subtask as usize] = true;
        }
    }

    /// Whether a deliberate bug is on, recording that it took effect.
    fn mutant(&self, m: Mutant) -> bool {
        let on = self.plan.cfg.mutants.has(m);
        if on {
            fired(m);
        }
        on
    }

    /// An announcement reached reader `t`'s thread (`handleOperatorEvent`):
    /// the allowed maximum changes, splits pause and resume.
    pub(super) fn alignment_event(&mut self, t: TaskId, max: i64) {
        let clock = self.net.sched[t as usize].activity_clock(self.net.now);
        let time = self.tasks.list[t as usize].time.as_mut();
        let Some(a) = time.and_then(|x| x.alignment.as_mut()) else {
            return;
        };
        let waiting = a.waiting();
        let change = a.allowed(max, clock);
        let now_waiting = a.waiting();
        self.pause_or_resume(t, &change);
        self.waiting_changed(t, waiting, now_waiting);
        self.net.poke(t);
    }

    /// After a periodic emit: the splits' watermarks and the output's
    /// against the allowed maximum. `out`: what the emit sent.
    pub(super) fn align_after_emit(&mut self, t: TaskId, out: &[crate::model::Element]) {
        let clock = self.net.sched[t as usize].activity_clock(self.net.now);
        let Some(time) = self.tasks.list[t as usize].time.as_mut() else {
            return;
        };
        let (Some(a), Some(source)) = (time.alignment.as_mut(), time.source.as_ref()) else {
            return;
        };
        let waiting = a.waiting();
        let mut change = PauseResume::default();
        for (split, w, idle) in source.split_watermarks() {
            change
                .pause
                .extend(a.split_watermark(split, w, idle, clock).pause);
        }
        for e in out {
            if let crate::model::Element::Watermark(w) = *e {
                a.emitted(w);
            }
        }
        let now_waiting = a.waiting();
        self.pause_or_resume(t, &change);
        self.waiting_changed(t, waiting, now_waiting);
    }

    /// The reader's splits pause and resume: its operator hears it, and
    /// its schedule has it.
    fn pause_or_resume(&mut self, t: TaskId, change: &PauseResume) {
        if change.is_empty() {
            return;
        }
        self.tasks.list[t as usize].members[0]
            .op
            .pause_or_resume_splits(&change.pause, &change.resume);
        let inst = self.tasks.list[t as usize].members[0].inst;
        for &p in &change.pause {
            self.rec.schedule.push(inst, Step::Pause(p));
        }
        for &p in &change.resume {
            self.rec.schedule.push(inst, Step::Resume(p));
        }
        self.rec.counters.splits_paused += change.pause.len() as u64;
        self.rec.counters.splits_resumed += change.resume.len() as u64;
    }

    /// A reader that waits as a whole stops its activity clock (Flink's
    /// `mainInputActivityClock.pause()`), and starts it again after.
    fn waiting_changed(&mut self, t: TaskId, before: bool, after: bool) {
        let now = self.net.now;
        match (before, after) {
            (false, true) => {
                self.rec.counters.readers_waiting_for_alignment += 1;
                self.net.sched[t as usize].stop_clock(now);
            }
            (true, false) => self.net.sched[t as usize].start_clock(now),
            _ => {}
        }
    }

    /// Whether reader `t` waits as a whole for alignment (it emits
    /// nothing).
    pub(super) fn waiting_for_alignment(&self, t: TaskId) -> bool {
        let time = self.tasks.list[t as usize].time.as_ref();
        time.and_then(|x| x.alignment.as_ref())
            .is_some_and(|a| a.waiting())
    }

    /// Split `split` of reader `t` emitted its last record.
    pub(super) fn aligned_split_finished(&mut self, t: TaskId, split: u32) {
        let time = self.tasks.list[t as usize].time.as_mut();
        if let Some(a) = time.and_then(|x| x.alignment.as_mut()) {
            a.split_finished(split);
        }
    }

    /// At the end of the run: a split still paused although its
    /// coordinator has announced a maximum that allows it for longer than
    /// `[limits] watermark_stall` never heard of it (the check's evidence).
    pub(super) fn stuck_pauses_at_end(&mut self) {
        let now = self.net.now.0;
        let bound = self.plan.scenario.limits.watermark_stall.0;
        for t in 0..self.tasks.list.len() as TaskId {
            let task = &self.tasks.list[t as usize];
            if task.status != Status::Running {
                continue;
            }
            let Some(a) = task.time.as_ref().and_then(|x| x.alignment.as_ref()) else {
                continue;
            };
            let Some(slot) = self.ops.slot_of[t as usize] else {
                continue;
            };
            let sa = self.ops.slots[slot as usize].alignment.as_ref();
            let Some((allowed, since)) = sa.and_then(|x| x.announced) else {
                continue;
            };
            if now.saturating_sub(since.0) <= bound {
                continue;
            }
            // Its paused splits, and the reader itself if it waits as a
            // whole (FLIP-182), that the group allows.
            let whole = a.waiting().then_some((None, a.latest));
            let stuck: Vec<_> = a
                .paused()
                .map(|(s, w)| (Some(s), w))
                .chain(whole)
                .filter(|&(_, w)| w <= allowed)
                .collect();
            let max_desired = a.max_desired;
            for (split, watermark) in stuck {
                let source = self.plan.exec.tasks[t as usize].name.clone();
                let ev = &mut self.rec.evidence.watermarks;
                ev.stuck_pauses += 1;
                if ev.first_stuck_pauses.len() < WatermarkEvidence::KEPT {
                    ev.first_stuck_pauses.push(StuckPause {
                        source,
                        split,
                        watermark,
                        max_desired,
                        allowed,
                        since_ns: since.0,
                    });
                }
            }
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const AlignmentSkipsFinishedReaders: Mutant = Mutant::declare(&MutantInfo {
            name: "alignment-skips-finished-readers",
            part: "event time",
            what: "a source coordinator sends no watermark alignment event to a reader once its enumerator told it that no split will come: a reader that still reads its splits and had paused one stays paused for ever, its watermark stops and the job never ends",
            modelled_on: "FLINK-37670 (WatermarkAlignmentEvent was not sent to subtasks the enumerator had no more splits for, which deadlocked watermark alignment; the check came with FLINK-35157)",
            caught_by: "watermarks",
            applies: &[("event-time-alignment", "aligned")],
        });
        pub const PausedSplitIdlenessClockRuns: Mutant = Mutant::declare(&MutantInfo {
            name: "paused-split-idleness-clock-runs",
            part: "event time",
            what: "a split paused for watermark alignment keeps counting toward its idle timeout: a split held back with records waiting is marked idle, leaves its reader's combined watermark, and the watermark runs ahead of its records",
            modelled_on: "FLINK-35886 (idleness was detected in splits blocked by watermark alignment; since then a paused split's PausableRelativeClock stops)",
            caught_by: "watermarks",
            applies: &[("event-time-alignment", "aligned")],
        });
    }
}
