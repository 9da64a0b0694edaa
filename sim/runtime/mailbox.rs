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
}

impl Mail {
    /// A short name, for the trace and the messages.
    pub fn name(&self) -> &'static str {
        match self {
            Mail::Event(_) => "operator event",
            Mail::Trigger(_) => "checkpoint trigger",
            Mail::Complete(_) => "checkpoint complete",
            Mail::Aborted { .. } => "checkpoint aborted",
        }
    }
}

/// One task's mailbox.
#[derive(Clone, Debug, Default)]
pub struct Mailbox {
    queue: VecDeque<Mail>,
    /// The first `urgent` mails of `queue` are urgent.
    urgent: usize,
}

impl Mailbox {
    /// Puts an ordinary mail behind every mail queued.
    pub fn put(&mut self, mail: Mail) {
        self.queue.push_back(mail);
    }

    /// Puts an urgent mail ahead of every ordinary mail queued, behind the
    /// urgent ones. Returns how many mails it overtook.
    pub fn put_urgent(&mut self, mail: Mail) -> usize {
        let overtaken = self.queue.len() - self.urgent;
        self.queue.insert(self.urgent, mail);
        self.urgent += 1;
        overtaken
    }

    /// Puts a mail at the very front, ahead of urgent mails too.
    pub fn put_first(&mut self, mail: Mail) {
        self.queue.push_front(mail);
        self.urgent += 1;
    }

    /// The next mail to run.
    pub fn take(&mut self) -> Option<Mail> {
        let mail = self.queue.pop_front()?;
        self.urgent = self.urgent.saturating_sub(1);
        Some(mail)
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// The mails queued, in the order they will run.
    pub fn iter(&self) -> impl Iterator<Item = &Mail> {
        self.queue.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::protocol::BarrierKind;

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
            m.put(Mail::Event(OperatorEvent::AddSplit(s)));
        }
        m.put(trigger(1));
        m.put(Mail::Complete(1));
        let order = drain(&mut m);
        assert_eq!(order[0], Mail::Event(OperatorEvent::AddSplit(0)));
        assert_eq!(order[3], trigger(1));
        assert_eq!(order[4], Mail::Complete(1));
        assert!(m.is_empty());
    }

    #[test]
    fn an_urgent_mail_overtakes_every_ordinary_mail_queued() {
        let mut m = Mailbox::default();
        m.put(Mail::Event(OperatorEvent::AddSplit(7)));
        m.put(Mail::Complete(1));
        assert_eq!(m.put_urgent(trigger(2)), 2);
        m.put(Mail::Event(OperatorEvent::AddSplit(8)));
        // A second urgent mail goes behind the first, ahead of the rest.
        assert_eq!(m.put_urgent(trigger(3)), 3);
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
        m.put(Mail::Complete(1));
        m.put_urgent(trigger(2));
        assert_eq!(m.take(), Some(trigger(2)));
        m.put_urgent(trigger(3));
        m.put(Mail::Complete(2));
        assert_eq!(
            drain(&mut m),
            vec![trigger(3), Mail::Complete(1), Mail::Complete(2)]
        );
    }

    #[test]
    fn a_mail_put_first_runs_before_urgent_ones() {
        let mut m = Mailbox::default();
        m.put_urgent(trigger(2));
        m.put(Mail::Complete(1));
        m.put_first(Mail::Event(OperatorEvent::NoMoreSplits));
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
}
