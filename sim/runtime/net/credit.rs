//! Credit-based flow control on a channel (Flink's `AddCredit`): the
//! receiver announces credits to its sender, the sender absorbs them, a
//! starved sender wakes, and the balance of credits and buffers is checked
//! after every move. A broken balance is the simulator's own bug, reported
//! as `credit_error`; it must never be repaired silently.

use super::*;

impl Net {
    /// Makes channel `ch` local (sender and receiver on one worker, as
    /// Flink's `LocalInputChannel`): the receiver reads the sender's queue
    /// one buffer at a time (one exclusive buffer, no floating ones) with
    /// no network latency; the sender's queue (`output_buffers`) is all
    /// the channel holds besides.
    pub fn set_local(&mut self, ch: ChannelId) {
        let c = &mut self.channels[ch as usize];
        c.latency = (0, 0);
        c.buffer_credits = 1;
        c.credits = 1;
        self.credit.set_exclusive(ch, 1);
        self.credit.channels[ch as usize].local = true;
    }

    /// The receiver announces `n` new credits for `ch` to its sender
    /// (Flink's `AddCredit`): a message upstream, merged into the last one
    /// still on its way if it would arrive at the same time.
    pub(super) fn announce(&mut self, ch: ChannelId, n: u32) {
        let lat = self.latency(self.channels[ch as usize].latency);
        let at = SimTime(self.now.0 + lat);
        let b = &mut self.credit.channels[ch as usize];
        b.credit_in_flight += n;
        match b.credit_wire.back_mut() {
            Some((last, k)) if *last >= at => *k += n,
            _ => {
                self.credit_messages += 1;
                b.credit_wire.push_back((at, n));
            }
        }
        self.check_balance(ch);
        self.wake_if_starved(ch);
    }

    /// The credit messages of `ch` that have reached the sender by now add
    /// to its credits. Credit messages are applied when the sender next
    /// looks at its credits, which gives the same sends as applying each
    /// on arrival: a sender only acts on a credit when it has data waiting
    /// and none left, and then [`Net::wake_if_starved`] scheduled an event
    /// for the arrival.
    #[inline]
    pub(super) fn absorb_credits(&mut self, ch: ChannelId) {
        let now = self.now;
        let b = &mut self.credit.channels[ch as usize];
        let mut got = 0;
        while let Some(&(at, n)) = b.credit_wire.front() {
            if at > now {
                break;
            }
            b.credit_wire.pop_front();
            b.credit_in_flight -= n;
            got += n;
        }
        self.channels[ch as usize].credits += got;
    }

    /// A sender with a data buffer waiting and no credit gets an event at
    /// the arrival of the next credit message (`Ev::Credit`).
    pub(super) fn wake_if_starved(&mut self, ch: ChannelId) {
        let c = &self.channels[ch as usize];
        let starved = c.credits == 0
            && c.blocked_for.is_none()
            && matches!(c.out_queue.front(), Some(Msg::Data { .. }));
        let b = &mut self.credit.channels[ch as usize];
        if !starved || b.credit_event {
            return;
        }
        if let Some(&(at, _)) = b.credit_wire.front() {
            b.credit_event = true;
            self.schedule(at, Ev::Credit { ch });
        }
    }

    /// A credit message reached a sender that was waiting for it.
    pub fn credit_arrives(&mut self, ch: ChannelId) {
        self.credit.channels[ch as usize].credit_event = false;
        self.transmit(ch);
    }

    /// Checks the credit balance of `ch` (see [`super::credit`]).
    #[inline]
    pub(super) fn check_balance(&mut self, ch: ChannelId) {
        let credits = self.channels[ch as usize].credits;
        if !self.credit.channels[ch as usize].balanced(credits) {
            self.credit_broken(ch, "empty buffers and promised credits differ");
        }
    }

    pub(super) fn credit_broken(&mut self, ch: ChannelId, what: &str) {
        if std::mem::replace(&mut self.credit_broke, true) {
            return;
        }
        let c = &self.channels[ch as usize];
        let b = &self.credit.channels[ch as usize];
        use crate::engine::count;
        let message = format!(
            "{what}: the receiver holds {}, the sender has {}, in flight: {} and {}",
            count(u64::from(b.free()), "empty buffer"),
            count(u64::from(c.credits), "credit"),
            count(u64::from(b.credit_in_flight), "credit"),
            count(u64::from(b.data_in_flight), "data buffer")
        );
        self.credit_error = Some((ch, message));
    }
}
