//! A task's mailbox (Flink's `TaskMailboxImpl`): the mails that reach a
//! task's thread from outside — operator events from a coordinator, the
//! checkpoint trigger of a source task, the notifications that a checkpoint
//! completed or was aborted — wait here until the thread is free, and run
//! between two default actions (reading a buffer, polling a source).
//!
//! Order as Flink has it: mails run in the order they were put, except an
//! urgent mail (`MailOptions.urgent()`, `putFirst`), which goes ahead of
//! every ordinary mail already queued; urgent mails keep their order among
//! themselves. The mailbox decides order only: it never runs a mail, reads
//! a clock or draws randomness (`world/mail.rs` runs them).
//!
//! It also counts the default actions (steps) its thread starts, so that
//! a mail's wait is known in steps: Flink's `MailboxProcessor` runs every
//! mail queued between two default actions, so a mail may wait for the
//! step that was starting when it came (a race Flink does not fix), never
//! through a second one. [`Mailbox::step_starts`] reports a mail that does.

use crate::engine::SimTime;
use crate::model::flip27::OperatorEvent;
use crate::model::CheckpointId;
use crate::protocol::Barrier;
use std::collections::VecDeque;

/// What a mail asks the task's thread to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mail {
    /// Apply an operator event from the operator's coordinator
    /// (`StreamTask.dispatchOperatorEvent`).
    Event(OperatorEvent),
    /// Take a source task's snapshot and emit its barrier
    /// (`StreamTask.triggerCheckpointAsync`).
    Trigger(Barrier),
    /// `notifyCheckpointComplete`.
    Complete(CheckpointId),
    /// `notifyCheckpointAbortAsync`, with the latest completed id it carries.
    Aborted {
        id: CheckpointId,
        latest_completed: CheckpointId,
    },
    /// A source's periodic watermark emit (its processing-time timer).
    Watermark,
    /// A reader's watermark report to its coordinator (alignment).
    ReportWatermark,
    /// The processing-time service of chain member `member` calls at
    /// `time` (ms): its timers due by then fire.
    ProcessingTime { member: u32, time: i64 },
    /// The changelog backend's materialization trigger
    /// (`initMaterialization`).
    Materialize,
    /// A materialization's upload ended (`handleMaterializationResult`).
    Materialized(u64),
}

impl Mail {
    /// A short name, for the trace and the messages.
    pub fn name(&self) -> &'static str {
        match self {
            Mail::Event(_) => "operator event",
            Mail::Trigger(_) => "checkpoint trigger",
            Mail::Complete(_) => "checkpoint complete",
            Mail::Aborted { .. } => "checkpoint aborted",
            Mail::Watermark => "periodic watermark",
            Mail::ReportWatermark => "watermark report",
            Mail::ProcessingTime { .. } => "processing-time timer",
            Mail::Materialize => "materialization trigger",
            Mail::Materialized(_) => "materialization result",
        }
    }

    /// The mail with what it carries, for the checks' messages.
    pub fn describe(&self) -> String {
        match self {
            Mail::Event(e) => format!("operator event {e:?}"),
            Mail::Trigger(b) => format!("checkpoint trigger {}", b.id),
            Mail::Complete(id) => format!("checkpoint complete {id}"),
            Mail::Aborted { id, .. } => format!("checkpoint aborted {id}"),
            Mail::Watermark => "periodic watermark".to_string(),
            Mail::ReportWatermark => "watermark report".to_string(),
            Mail::Materialize => "materialization trigger".to_string(),
            Mail::Materialized(id) => format!("materialization {id} result"),
            Mail::ProcessingTime { member, time } => {
                format!("processing-time timer at {time} ms of chain member {member}")
            }
        }
    }
}

/// One task's mailbox.
#[derive(Clone, Debug, Default)]
pub struct Mailbox {
    /// The mails, each with the step count and the time when it was put.
    queue: VecDeque<(Mail, u64, SimTime)>,
    /// The first `urgent` mails of `queue` are urgent.
    urgent: usize,
    /// Default actions (steps) the thread started.
    steps: u64,
    /// The most mails queued at once.
    peak: usize,
}

/// A mail still queued when its task's thread starts a second default
/// action after the mail was put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overdue {
    pub mail: Mail,
    /// When it was put.
    pub queued_at: SimTime,
    /// Default actions that started while it waited, this one included.
    pub steps: u64,
    /// Mails queued at that moment.
    pub queued: usize,
}

impl Mailbox {
    /// Puts an ordinary mail behind every mail queued, at time `now`.
    pub fn put(&mut self, mail: Mail, now: SimTime) {
        self.queue.push_back((mail, self.steps, now));
        self.peak = self.peak.max(self.queue.len());
    }

    /// Puts an urgent mail ahead of every ordinary mail queued, behind the
    /// urgent ones. Returns how many mails it overtook.
    pub fn put_urgent(&mut self, mail: Mail, now: SimTime) -> usize {
        let overtaken = self.queue.len() - self.urgent;
        self.queue.insert(self.urgent, (mail, self.steps, now));
        self.urgent += 1;
        self.peak = self.peak.max(self.queue.len());
        overtaken
    }

    /// Puts a mail at the very front, ahead of urgent mails too.
    pub fn put_first(&mut self, mail: Mail, now: SimTime) {
        self.queue.push_front((mail, self.steps, now));
        self.urgent += 1;
        self.peak = self.peak.max(self.queue.len());
    }

    /// The next mail to run.
    pub fn take(&mut self) -> Option<Mail> {
        let (mail, _, _) = self.queue.pop_front()?;
        self.urgent = self.urgent.saturating_sub(1);
        Some(mail)
    }

    /// The thread starts a default action (a step). Returns the mail that
    /// waited longest if it was already queued when an earlier step
    /// started: it has waited through a whole default action.
    pub fn step_starts(&mut self) -> Option<Overdue> {
        let steps = self.steps;
        self.steps += 1;
        let &(mail, put_at, queued_at) = self.queue.iter().min_by_key(|(_, at, _)| *at)?;
        (put_at < steps).then_some(Overdue {
            mail,
            queued_at,
            steps: self.steps - put_at,
            queued: self.queue.len(),
        })
    }

    /// Whether a mail queued now was already queued when an earlier step
    /// started (it must not wait for another).
    pub fn waited_a_step(&self) -> bool {
        self.queue.iter().any(|&(_, at, _)| at < self.steps)
    }

    /// The most mails that were queued at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// The mails queued, in the order they will run.
    pub fn iter(&self) -> impl Iterator<Item = &Mail> {
        self.queue.iter().map(|(mail, _, _)| mail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::BarrierKind;

    const T: SimTime = SimTime::ZERO;

    fn trigger(id: CheckpointId) -> Mail {
        Mail::Trigger(Barrier {
            id,
            kind: BarrierKind::Unaligned,
            timestamp: SimTime::ZERO,
        })
    }

    fn drain(m: &mut Mailbox) -> Vec<Mail> {
        std::iter::from_fn(|| m.take()).collect()
    }

    #[test]
    fn ordinary_mails_run_in_the_order_they_were_put() {
        let mut m = Mailbox::default();
        for s in 0..3 {
            m.put(Mail::Event(OperatorEvent::AddSplit(s)), T);
        }
        m.put(trigger(1), T);
        m.put(Mail::Complete(1), T);
        let order = drain(&mut m);
        assert_eq!(order[0], Mail::Event(OperatorEvent::AddSplit(0)));
        assert_eq!(order[3], trigger(1));
        assert_eq!(order[4], Mail::Complete(1));
        assert!(m.is_empty());
    }

    #[test]
    fn an_urgent_mail_overtakes_every_ordinary_mail_queued() {
        let mut m = Mailbox::default();
        m.put(Mail::Event(OperatorEvent::AddSplit(7)), T);
        m.put(Mail::Complete(1), T);
        assert_eq!(m.put_urgent(trigger(2), T), 2);
        m.put(Mail::Event(OperatorEvent::AddSplit(8)), T);
        // A second urgent mail goes behind the first, ahead of the rest.
        assert_eq!(m.put_urgent(trigger(3), T), 3);
        let order = drain(&mut m);
        assert_eq!(
            order,
            vec![
                trigger(2),
                trigger(3),
                Mail::Event(OperatorEvent::AddSplit(7)),
                Mail::Complete(1),
                Mail::Event(OperatorEvent::AddSplit(8)),
            ]
        );
    }

    #[test]
    fn taking_an_urgent_mail_leaves_the_rest_in_order() {
        let mut m = Mailbox::default();
        m.put(Mail::Complete(1), T);
        m.put_urgent(trigger(2), T);
        assert_eq!(m.take(), Some(trigger(2)));
        m.put_urgent(trigger(3), T);
        m.put(Mail::Complete(2), T);
        assert_eq!(
            drain(&mut m),
            vec![trigger(3), Mail::Complete(1), Mail::Complete(2)]
        );
    }

    #[test]
    fn a_mail_put_first_runs_before_urgent_ones() {
        let mut m = Mailbox::default();
        m.put_urgent(trigger(2), T);
        m.put(Mail::Complete(1), T);
        m.put_first(Mail::Event(OperatorEvent::NoMoreSplits), T);
        assert_eq!(m.len(), 3);
        assert_eq!(
            drain(&mut m),
            vec![
                Mail::Event(OperatorEvent::NoMoreSplits),
                trigger(2),
                Mail::Complete(1)
            ]
        );
    }

    #[test]
    fn a_mail_may_wait_for_the_step_it_came_in_never_for_a_second() {
        let mut m = Mailbox::default();
        assert_eq!(m.step_starts(), None);
        let at = SimTime(5);
        m.put(Mail::Complete(1), at);
        // The step starting now is the one Flink's race lets it wait for.
        assert_eq!(m.step_starts(), None);
        assert!(m.waited_a_step());
        m.put_urgent(trigger(2), T);
        let late = m.step_starts().expect("waited through a whole step");
        assert_eq!(late.mail, Mail::Complete(1));
        assert_eq!((late.queued_at, late.steps, late.queued), (at, 2, 2));
        drain(&mut m);
        assert!(!m.waited_a_step());
        assert_eq!(m.step_starts(), None);
        assert_eq!(m.peak(), 2);
    }
}
