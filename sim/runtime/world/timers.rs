//! The processing-time service of a task, as Flink's timer service drives
//! it (`InternalTimerServiceImpl` over the task's `ProcessingTimeService`):
//! a chain member that reads processing time is armed for its earliest
//! processing-time timer; when the time comes, the service's callback is a
//! mail (`Mail::ProcessingTime`), so the timers fire on the task's thread
//! between two default actions, and a busy task fires them late.
//!
//! Arming follows Flink's rules: a registration that makes a timer earlier
//! than the head before it arms the service for it (cancelling the one
//! armed before); a callback fires every timer due by the time it was
//! armed for, then arms for the new head; a restore arms for the restored
//! head (`startTimerService`). The timers that fire are logged with the
//! schedule (`ScheduleLog::fired`) for the timers check, and every step
//! start checks that no timer is past due without a mail queued to fire it.

use super::*;
use crate::runtime::mailbox::Mail;
use crate::runtime::timers::{Overdue, ShortRestore, TimerEvidence};

impl World<'_> {
    /// The timers member `m` of task `t` fired in the call just made go to
    /// its schedule.
    pub(super) fn note_fired(&mut self, t: TaskId, m: usize) {
        if self.tasks.fired.is_empty() {
            return;
        }
        let inst = self.tasks.list[t as usize].members[m].inst;
        for f in std::mem::take(&mut self.tasks.fired) {
            self.rec.schedule.fired(inst, f);
        }
    }

    /// After task `t`'s step: a member whose earliest processing-time timer
    /// is now earlier than before registered it, and the service is armed
    /// for it (`registerProcessingTimeTimer`).
    pub(super) fn timers_registered(&mut self, t: TaskId) {
        for m in 0..self.tasks.list[t as usize].members.len() {
            let member = &self.tasks.list[t as usize].members[m];
            let Some(timers) = member.processing else {
                continue;
            };
            let head = member.op.next_processing_timer();
            if let Some(h) = head.filter(|&h| h < timers.head.unwrap_or(i64::MAX)) {
                self.arm_processing(t, m, h);
            }
            self.set_head(t, m, head);
        }
    }

    /// Task `t` was restored: each member that reads processing time is
    /// armed for its restored earliest timer (`startTimerService`).
    pub(super) fn timers_restored(&mut self, t: TaskId) {
        for m in 0..self.tasks.list[t as usize].members.len() {
            let member = &self.tasks.list[t as usize].members[m];
            self.rec.counters.timers_restored += member.op.timers_held();
            if member.processing.is_none() {
                continue;
            }
            let head = member.op.next_processing_timer();
            self.set_head(t, m, head);
            let Some(h) = head else { continue };
            if self
                .plan
                .cfg
                .mutants
                .has(Mutant::RestoredProcessingTimersNotArmed)
            {
                // Mutant: only a registration earlier than the restored
                // head arms the service.
                fired(Mutant::RestoredProcessingTimersNotArmed);
                continue;
            }
            self.arm_processing(t, m, h);
        }
    }

    /// How many timers each member of task `t` holds (its snapshot's
    /// record, for the restore).
    pub(super) fn member_timers(&self, t: TaskId) -> Vec<u64> {
        let members = &self.tasks.list[t as usize].members;
        match members.iter().any(|m| m.op.timers_held() > 0) {
            true => members.iter().map(|m| m.op.timers_held()).collect(),
            false => Vec::new(), // none: nothing to judge at a restore
        }
    }

    /// Task `t` was restored from its snapshot of checkpoint `id`, whose
    /// members held `held` timers: each must hold as many again (the
    /// timers check's evidence).
    pub(super) fn judge_restored_timers(&mut self, t: TaskId, id: CheckpointId, held: &[u64]) {
        let ev = &mut self.rec.evidence.timers;
        ev.restores_judged += u64::from(!held.is_empty());
        for (m, &want) in held.iter().enumerate() {
            let member = &self.tasks.list[t as usize].members[m];
            let got = member.op.timers_held();
            if got == want {
                continue;
            }
            ev.restores_short += 1;
            if ev.first_short.len() < TimerEvidence::KEPT {
                let operator = self.plan.scenario.operators[member.index as usize]
                    .id
                    .clone();
                ev.first_short.push(ShortRestore {
                    time_ns: self.net.now.0,
                    task: self.plan.exec.tasks[t as usize].name.clone(),
                    operator,
                    checkpoint: id,
                    held: want,
                    restored: got,
                });
            }
        }
    }

    fn set_head(&mut self, t: TaskId, m: usize, head: Option<i64>) {
        if let Some(timers) = &mut self.tasks.list[t as usize].members[m].processing {
            timers.head = head;
        }
    }

    /// The service of member `m` of task `t` is armed for `time` (ms): a
    /// callback then, or at once if it passed (the one armed before is
    /// cancelled).
    fn arm_processing(&mut self, t: TaskId, m: usize, time: i64) {
        let due = u64::try_from(time).unwrap_or(0).saturating_mul(1_000_000);
        let at = due.max(self.net.now.0);
        if let Some(timers) = &mut self.tasks.list[t as usize].members[m].processing {
            timers.armed = Some(at);
            self.net.schedule(
                SimTime(at),
                Ev::ProcessingTimer {
                    task: t,
                    member: m as u32,
                },
            );
        }
    }

    /// `stop-the-world`: task `t` forwarded its drain marker for `id`.
    /// Nothing may reach its outputs until its snapshot, a timer's output
    /// neither: its processing-time services wait (a quiesce stops every
    /// input, the clock included).
    pub(super) fn quiesce_timers(&mut self, t: TaskId, id: CheckpointId) {
        let task = &mut self.tasks.list[t as usize];
        if task.members.iter().any(|m| m.processing.is_some()) {
            task.timers_quiesced = Some(id);
        }
    }

    /// Task `t` snapshotted for `id`, or `id` completed or was aborted: a
    /// quiesce for it or an older one ends, and each service is armed
    /// again for its earliest timer.
    pub(super) fn resume_timers(&mut self, t: TaskId, id: CheckpointId) {
        let task = &mut self.tasks.list[t as usize];
        if task.timers_quiesced.is_none_or(|q| q > id) {
            return;
        }
        task.timers_quiesced = None;
        for m in 0..task.members.len() {
            let member = &self.tasks.list[t as usize].members[m];
            let Some(timers) = member.processing else {
                continue;
            };
            if let (Some(h), None) = (member.op.next_processing_timer(), timers.armed) {
                self.arm_processing(t, m, h);
            }
        }
    }

    /// The armed callback of member `m` of task `t` is due: a mail to the
    /// task's thread (a cancelled one does nothing; a quiesced task's
    /// waits for [`World::resume_timers`]).
    pub(super) fn processing_timer(&mut self, t: TaskId, m: usize) {
        let now = self.net.now.0;
        let task = &mut self.tasks.list[t as usize];
        let quiesced = task.timers_quiesced.is_some();
        let Some(timers) = task.members.get_mut(m).and_then(|x| x.processing.as_mut()) else {
            return;
        };
        if timers.armed != Some(now) {
            return;
        }
        timers.armed = None;
        if quiesced {
            return;
        }
        // Flink quiesces the timer service at the end of input: timers not
        // fired by then never fire.
        let Some(time) = timers.head.filter(|_| !task.input_ended) else {
            return;
        };
        self.post(
            t,
            Mail::ProcessingTime {
                member: m as u32,
                time,
            },
        );
    }

    /// The mail: member `m`'s timers due by `time` fire (a schedule step,
    /// which the oracle replays), what they emit goes on through the
    /// chain, and the service is armed for the next timer.
    pub(super) fn on_processing_time(&mut self, t: TaskId, m: usize, time: i64) {
        if self.tasks.list[t as usize].timers_quiesced.is_some() {
            return; // armed again when the quiesce ends
        }
        let inst = self.tasks.list[t as usize].members[m].inst;
        self.rec.schedule.clock(inst, self.net.now);
        self.rec.schedule.push(inst, Step::ProcessingTime(time));
        self.rec.counters.processing_time_calls += 1;
        let (member, mut ctx) = self.ctx_parts(t, m);
        member.op.on_processing_time(time, &mut ctx);
        self.note_fired(t, m);
        self.emit_from(t, m);
        let head = self.tasks.list[t as usize].members[m]
            .op
            .next_processing_timer();
        self.set_head(t, m, head);
        let armed = self.tasks.list[t as usize].members[m]
            .processing
            .and_then(|p| p.armed);
        if let (Some(h), None) = (head, armed) {
            self.arm_processing(t, m, h);
        }
    }

    /// At the start of task `t`'s step, after its mails ran: a member
    /// whose earliest processing-time timer was already past due at an
    /// earlier step start, while no mail is queued, is the timers check's
    /// evidence (its callback was never armed, or its mail was lost). A
    /// timer past due at one step start only may have its callback due at
    /// this very instant (a restore arms for a timer long past).
    pub(super) fn judge_processing_timers(&mut self, t: TaskId) {
        let now = self.net.now.0;
        let task = &mut self.tasks.list[t as usize];
        if !task.mailbox.is_empty() || task.input_ended || task.timers_quiesced.is_some() {
            return;
        }
        for m in 0..task.members.len() {
            let member = &mut task.members[m];
            let Some(timers) = member.processing.as_mut() else {
                continue;
            };
            let Some(due) = member.op.next_processing_timer() else {
                continue;
            };
            let ev = &mut self.rec.evidence.timers;
            ev.checks += 1;
            let due_ns = u64::try_from(due).unwrap_or(0).saturating_mul(1_000_000);
            if due_ns >= now {
                continue;
            }
            let seen = timers.past_due.filter(|&(d, at)| d == due && at < now);
            if seen.is_none() {
                if timers.past_due.is_none_or(|(d, _)| d != due) {
                    timers.past_due = Some((due, now));
                }
                continue;
            }
            ev.overdue += 1;
            if ev.first_overdue.len() < TimerEvidence::KEPT {
                let index = member.index;
                let task = &self.plan.exec.tasks[t as usize];
                ev.first_overdue.push(Overdue {
                    time_ns: now,
                    task: task.name.clone(),
                    operator: self.plan.scenario.operators[index as usize].id.clone(),
                    due_ms: due,
                });
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
        pub const RestoredProcessingTimersNotArmed: Mutant = Mutant::declare(&MutantInfo {
            name: "restored-processing-timers-not-armed",
            part: "timers",
            what: "a restore gives the timer service its processing-time timers but does not arm the task's processing-time service for the earliest: a later registration arms it only if it is earlier still, so the restored timers, and every later one behind them, never fire",
            modelled_on: "apache/flink#2602 (the window operator re-registers its restored processing-time timers in open(), not in restoreTimers(), where they were never armed); InternalTimerServiceImpl.startTimerService arms for the restored head",
            caught_by: "timers",
            applies: &[("event-time-timers", "aligned")],
        });
    }
}
