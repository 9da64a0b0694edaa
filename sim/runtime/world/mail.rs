//! The task thread's mailbox at work (Flink's `MailboxProcessor`): RPCs
//! that reach a task (operator events, a source's checkpoint trigger, the
//! notifications of completion and abort) become mails; a mail runs at once
//! if the thread is free, else it waits until the thread's current step is
//! over, and runs before the next one (`World::wake`). Records take virtual
//! time (`Sched::busy_until`), so a mail that arrives while a slow chain
//! processes a buffer waits.
//!
//! An operator event is acknowledged to its coordinator once it is queued,
//! not once it is applied (`StreamTask.dispatchOperatorEvent`). From Flink
//! 2.1 (`[checkpoint] flink_version`) the trigger of an unaligned checkpoint
//! is urgent and runs ahead of the mails already queued.
//!
//! This file decides when a mail runs; it must never change what a mail
//! does (`rpcs.rs`, `operator_coordinators.rs`).

use super::*;
use crate::model::flip27::OperatorEvent;
use crate::runtime::mailbox::Mail;
use crate::runtime::output::{MailWaits, OverdueMail};

impl World<'_> {
    /// A mail reaches task `t`: it runs now if the thread is free, or waits
    /// in the mailbox for the end of the thread's current step. A task that
    /// does not run drops it (its failover resets what the mail was about).
    pub(super) fn post(&mut self, t: TaskId, mail: Mail) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running {
            return;
        }
        let urgent = self.is_urgent(&mail);
        let split = matches!(mail, Mail::Event(OperatorEvent::AddSplit(_)));
        let now = self.net.now;
        let mailbox = &mut self.tasks.list[ti].mailbox;
        if urgent {
            let overtaken = mailbox.put_urgent(mail, now);
            self.rec.counters.mails_overtaken += overtaken as u64;
        } else {
            mailbox.put(mail, now);
        }
        let waits = &mut self.rec.evidence.mails;
        waits.peak = waits.peak.max(mailbox.len());
        if self.net.sched[ti].busy_until > self.net.now {
            self.rec.counters.mails_waited += 1;
            self.rec.counters.splits_waiting_in_mailbox += u64::from(split);
            self.net.poke(t);
            return;
        }
        if self.plan.cfg.mutants.has(Mutant::IdleTaskIgnoresMail) {
            // Mutant: the thread sleeps on input only; the mail waits for
            // the next step some input starts.
            fired(Mutant::IdleTaskIgnoresMail);
            return;
        }
        self.run_mails(t);
    }

    /// Whether a mail jumps the queue: the trigger of an unaligned
    /// checkpoint from Flink 2.1 on (`FlinkVersion::urgent_unaligned_trigger`).
    fn is_urgent(&self, mail: &Mail) -> bool {
        let Mail::Trigger(b) = mail else {
            return false;
        };
        if self.plan.cfg.mutants.has(Mutant::AlignedTriggerUrgent) {
            fired(Mutant::AlignedTriggerUrgent);
            return true;
        }
        self.plan
            .scenario
            .checkpoint
            .flink_version
            .urgent_unaligned_trigger()
            && self.out_kind(*b) == BarrierKind::Unaligned
    }

    /// Task `t`'s thread starts a default action (a step): a mail queued
    /// since before its last step is overdue, the resources check's
    /// evidence.
    pub(super) fn step_starts(&mut self, t: TaskId) {
        let Some(late) = self.tasks.list[t as usize].mailbox.step_starts() else {
            return;
        };
        let waits = &mut self.rec.evidence.mails;
        waits.overdue += 1;
        if waits.first.len() < MailWaits::KEPT {
            waits.first.push(OverdueMail {
                time_ns: self.net.now.nanos(),
                task: t,
                mail: late.mail.describe(),
                queued_ns: late.queued_at.nanos(),
                steps: late.steps,
                queued: late.queued,
            });
        }
    }

    /// Task `t`'s thread runs the mails queued, in the mailbox's order,
    /// while the task runs.
    pub(super) fn run_mails(&mut self, t: TaskId) {
        let ti = t as usize;
        while self.tasks.list[ti].status == Status::Running {
            let Some(mail) = self.tasks.list[ti].mailbox.take() else {
                return;
            };
            self.run_mail(t, mail);
        }
    }

    /// Before a step, task `t`'s thread runs every mail queued
    /// (`MailboxProcessor.processMail` between two default actions).
    pub(super) fn run_mails_before_step(&mut self, t: TaskId) {
        if self.plan.cfg.mutants.has(Mutant::OneMailPerStep) {
            // Mutant: one mail per default action; the rest wait.
            if self.tasks.list[t as usize].mailbox.len() > 1 {
                fired(Mutant::OneMailPerStep);
            }
            if let Some(mail) = self.tasks.list[t as usize].mailbox.take() {
                self.run_mail(t, mail);
            }
            return;
        }
        self.run_mails(t);
    }

    /// Under `explore --mail-orders` (`[replay] mail_orders`) only: whether
    /// the mails queued at task `t` wait until after its next step, a
    /// choice (run them first, the default; or take the step first).
    /// Flink's `MailboxProcessor` looks at the mailbox between two default
    /// actions, so a mail that reaches the task just after that look waits
    /// for one more record: which of the two happens is a race Flink does
    /// not fix. Offered only when the task has a step to take. Elsewhere
    /// false, and no choice is made (every other run is unchanged).
    pub(super) fn mails_wait_a_step(&mut self, t: TaskId) -> bool {
        if !self.plan.scenario.replay.mail_orders {
            return false;
        }
        let ti = t as usize;
        let task = &self.tasks.list[ti];
        if task.mailbox.waited_a_step() {
            // A mail waits for one step at most: Flink's mailbox runs it
            // before the next default action.
            return false;
        }
        let idle_source =
            task.is_source && (task.input_ended || task.paused.is_some() || task.stopped);
        let stalled = self.net.sched[ti].full_outputs > 0 && !self.priority_input(ti);
        !idle_source && !stalled && crate::runtime::scheduler::choose(2) == 1
    }

    /// After a step the mails of task `t` waited for: they run now if the
    /// step left the thread free, else once it is.
    pub(super) fn mails_after_step(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].mailbox.is_empty() {
            return;
        }
        if self.net.sched[ti].busy_until > self.net.now {
            self.net.poke(t);
        } else {
            self.run_mails(t);
        }
    }

    fn run_mail(&mut self, t: TaskId, mail: Mail) {
        match mail {
            Mail::Event(event) => self.apply_operator_event(t, event),
            Mail::Trigger(barrier) => self.trigger_source(t, barrier),
            Mail::Complete(id) => self.notify_complete(t, id),
            Mail::Aborted {
                id,
                latest_completed,
            } => self.notify_aborted(t, id, latest_completed),
            Mail::Watermark => self.periodic_watermark(t),
            Mail::ReportWatermark => self.report_watermark(t),
            Mail::Materialize => self.materialize(t),
            Mail::Materialized(id) => self.materialization_done(t, id),
            Mail::ProcessingTime { member, time } => {
                self.on_processing_time(t, member as usize, time)
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
        pub const AlignedTriggerUrgent: Mutant = Mutant::declare(&MutantInfo {
            name: "aligned-trigger-urgent",
            part: "task mailbox",
            what: "every checkpoint trigger at a source task is an urgent mail, aligned ones too: it runs ahead of split assignments the task acknowledged and still holds in its mailbox, so the reader's snapshot lacks splits the enumerator's checkpoint counts as assigned, and a restore from it never reads them",
            modelled_on: "FLINK-35051 (Flink 2.1: the trigger of an unaligned checkpoint became an urgent mail; the split loss that follows on 2.1–2.3, reports/findings/flink-split-loss) applied to every trigger",
            caught_by: "consistent-cut",
            applies: &[("flip27-split-loss", "aligned")],
        });
        pub const IdleTaskIgnoresMail: Mutant = Mutant::declare(&MutantInfo {
            name: "idle-task-ignores-mail",
            part: "task mailbox",
            what: "a mail put while the task thread waits for input does not wake it: a reader waiting for a split never applies the assignment that answers its request, and the job never ends",
            modelled_on: "the mailbox's suspended default action (MailboxProcessor.suspendDefaultAction): a task waiting on its input must still be woken by a new mail, or it waits forever",
            caught_by: "progress",
            applies: &[("flip27", "aligned")],
        });
        pub const OneMailPerStep: Mutant = Mutant::declare(&MutantInfo {
            name: "one-mail-per-step",
            part: "task mailbox",
            what: "between two default actions the task thread runs one mail, not every mail queued: when several mails reach a busy task (a trigger, the notification of the last checkpoint, split assignments), the later ones wait through further steps, and under steady input a backlog builds",
            modelled_on: "MailboxProcessor.processMail in single-step mode (one mail per loop, as runMailboxStep takes) in the task's main loop; Flink's loop drains every mail queued before the next default action",
            caught_by: "resources",
            applies: &[("flip27-split-loss", "aligned")],
        });
        pub const MailsSurviveRestart: Mutant = Mutant::declare(&MutantInfo {
            name: "mails-survive-restart",
            part: "task mailbox",
            what: "the mails queued at a task when it failed are run by its next execution: split assignments meant for the failed execution are applied although the restore already gave those splits back to the enumerator, which assigns them again, so they are read twice",
            modelled_on: "FLINK-18071 (an operator event targets one execution attempt of its subtask; events for a failed attempt must not reach the next one)",
            caught_by: "consistent-cut",
            applies: &[("flip27-split-loss", "aligned")],
        });
    }
}
