//! Credit-based flow control, as Flink's network stack does it: the
//! receiver's buffers per input channel (`BufferManager` of a
//! `RemoteInputChannel`) and the floating buffers of its input gate
//! (the gate's `LocalBufferPool`).
//!
//! A channel owns `exclusive` buffers; its gate has `floating` more, shared
//! by the gate's channels. Every empty buffer the receiver holds for a
//! channel is promised to the sender as one credit; a data buffer spends one
//! credit when it leaves the sender, and takes an empty buffer when it
//! arrives (floating ones first, as `AvailableBufferQueue.takeBuffer`).
//! Each data buffer carries the sender's backlog; the receiver then wants
//! `backlog + exclusive` empty buffers and asks the gate for floating ones
//! until it has them, or queues at the gate as a listener when the gate has
//! none (`requestFloatingBuffers`). When the task has read a buffer it is
//! recycled: an exclusive one returns to its channel (and, if the channel
//! now holds more than it needs, one of its floating buffers goes back to
//! the gate instead of a new credit: `addExclusiveBuffer`); a floating one
//! returns to the gate, which hands it to the first listener that still
//! needs it. Every buffer a channel gains is announced to the sender as a
//! credit message (`AddCredit`) that travels upstream with latency.
//!
//! The balance of a channel: the empty buffers the receiver holds for it
//! equal the sender's credits plus the credits travelling upstream plus the
//! data buffers travelling downstream. [`Buffers::balanced`] checks it after
//! every change; a break is a protocol violation.

use crate::model::ChannelId;
use std::collections::VecDeque;

/// The receiver side of one channel.
#[derive(Clone, Debug, Default)]
pub struct Buffers {
    /// The gate this channel belongs to (index into `Net::gates`).
    pub gate: u32,
    /// Empty exclusive buffers held.
    pub free_exclusive: u32,
    /// The channel's exclusive buffers (`buffer_credits`, its edge's or the
    /// network's).
    pub exclusive: u32,
    /// Empty floating buffers held.
    pub free_floating: u32,
    /// Buffers holding data the task has not read yet, oldest first: true
    /// for a floating one.
    pub filled: VecDeque<bool>,
    /// The backlog the last data buffer announced.
    pub backlog: u32,
    /// Listening at the gate for a floating buffer.
    pub waiting: bool,
    /// Credit messages on their way to the sender, with arrival times
    /// (non-decreasing).
    pub credit_wire: VecDeque<(crate::engine::SimTime, u32)>,
    /// Credits on `credit_wire`, summed.
    pub credit_in_flight: u32,
    /// Data buffers on the wire (each spent a credit).
    pub data_in_flight: u32,
    /// An `Ev::Credit` is scheduled for the head of `credit_wire`.
    pub credit_event: bool,
    /// A local channel (`LocalInputChannel`): no floating buffers.
    pub local: bool,
}

impl Buffers {
    /// Empty buffers held for the channel.
    pub fn free(&self) -> u32 {
        self.free_exclusive + self.free_floating
    }

    /// Whether the empty buffers equal what the sender may still send.
    pub fn balanced(&self, sender_credits: u32) -> bool {
        self.free() == sender_credits + self.credit_in_flight + self.data_in_flight
    }

    /// After a restart: every exclusive buffer empty and promised.
    pub fn reset(&mut self, exclusive: u32) {
        self.free_exclusive = exclusive;
        self.free_floating = 0;
        self.filled.clear();
        self.backlog = 0;
        self.waiting = false;
        self.credit_wire.clear();
        self.credit_in_flight = 0;
        self.data_in_flight = 0;
        self.credit_event = false;
    }
}

/// An input gate's pool of floating buffers.
#[derive(Clone, Debug, Default)]
pub struct Gate {
    /// Floating buffers no channel holds.
    pub free: u32,
    /// Channels waiting for a floating buffer, in the order they asked.
    pub listeners: VecDeque<ChannelId>,
}

/// The credits a change gave a channel: to announce to its sender.
pub type Credit = u32;

/// The receiver side of every channel and gate.
#[derive(Clone, Debug, Default)]
pub struct CreditState {
    pub exclusive: u32,
    pub floating: u32,
    pub channels: Vec<Buffers>,
    pub gates: Vec<Gate>,
}

impl CreditState {
    /// `gate_of[ch]` names each channel's gate; there are `gates` of them.
    pub fn new(gate_of: Vec<u32>, gates: usize, exclusive: u32, floating: u32) -> CreditState {
        let channels = gate_of
            .into_iter()
            .map(|gate| Buffers {
                gate,
                free_exclusive: exclusive,
                exclusive,
                ..Buffers::default()
            })
            .collect();
        CreditState {
            exclusive,
            floating,
            channels,
            gates: vec![
                Gate {
                    free: floating,
                    listeners: VecDeque::new(),
                };
                gates
            ],
        }
    }

    /// Gives channel `ch` its own number of exclusive buffers (an edge's
    /// `buffer_credits`), before anything is sent.
    pub fn set_exclusive(&mut self, ch: ChannelId, exclusive: u32) {
        let b = &mut self.channels[ch as usize];
        b.exclusive = exclusive;
        b.free_exclusive = exclusive;
    }

    /// The buffers a channel wants: its backlog plus its exclusive ones.
    fn required(&self, ch: ChannelId) -> u32 {
        let b = &self.channels[ch as usize];
        b.backlog + b.exclusive
    }

    /// A data buffer arrived carrying the sender's `backlog`: it takes an
    /// empty buffer, and the channel asks for floating buffers. Returns the
    /// new credits, or `None` if there was no empty buffer for it (the
    /// sender sent without credit).
    pub fn arrive(&mut self, ch: ChannelId, backlog: u32) -> Option<Credit> {
        let b = &mut self.channels[ch as usize];
        b.data_in_flight = b.data_in_flight.checked_sub(1)?;
        if b.free_floating > 0 {
            b.free_floating -= 1;
            b.filled.push_back(true);
        } else if b.free_exclusive > 0 {
            b.free_exclusive -= 1;
            b.filled.push_back(false);
        } else {
            return None;
        }
        b.backlog = backlog;
        Some(self.request_floating(ch))
    }

    /// `requestFloatingBuffers(backlog + exclusive)`: takes floating
    /// buffers from the gate while the channel has fewer empty buffers than
    /// it wants, or listens at the gate when it has none.
    fn request_floating(&mut self, ch: ChannelId) -> Credit {
        let required = self.required(ch);
        let b = &mut self.channels[ch as usize];
        // A local channel (`LocalInputChannel`) takes no buffers of the gate.
        if b.local {
            return 0;
        }
        let gate = &mut self.gates[b.gate as usize];
        let mut got = 0;
        while b.free() < required && !b.waiting {
            if gate.free > 0 {
                gate.free -= 1;
                b.free_floating += 1;
                got += 1;
            } else {
                gate.listeners.push_back(ch);
                b.waiting = true;
            }
        }
        got
    }

    /// The task has read the oldest filled buffer: it is recycled. Returns
    /// the credits each channel gained (this one, or the listener a
    /// floating buffer went to). `lose_credit` (a mutant) drops the credit
    /// of a recycled exclusive buffer.
    pub fn recycle(&mut self, ch: ChannelId, lose_credit: bool) -> Option<(ChannelId, Credit)> {
        let required = self.required(ch);
        let b = &mut self.channels[ch as usize];
        let floating = b.filled.pop_front()?;
        if floating {
            let gate = b.gate;
            return self.return_floating(gate);
        }
        b.free_exclusive += 1;
        if b.free() > required && b.free_floating > 0 {
            b.free_floating -= 1;
            let gate = b.gate;
            return self.return_floating(gate);
        }
        if lose_credit {
            crate::mutant::fired(crate::mutant::Mutant::RecycleLosesCredit);
            return None;
        }
        Some((ch, 1))
    }

    /// A floating buffer returns to the gate (`LocalBufferPool.recycle`):
    /// the first listener that still needs one takes it; a listener that
    /// needs more stays in line.
    fn return_floating(&mut self, gate: u32) -> Option<(ChannelId, Credit)> {
        while let Some(ch) = self.gates[gate as usize].listeners.pop_front() {
            let required = self.required(ch);
            let b = &mut self.channels[ch as usize];
            if b.free() >= required {
                b.waiting = false;
                continue;
            }
            b.free_floating += 1;
            if b.free() == required {
                b.waiting = false;
            } else {
                self.gates[gate as usize].listeners.push_back(ch);
            }
            return Some((ch, 1));
        }
        self.gates[gate as usize].free += 1;
        None
    }

    /// A region or global restart: the channels start with their exclusive
    /// buffers, and their gates get every floating buffer back.
    pub fn reset(&mut self, channels: impl Iterator<Item = ChannelId>) {
        for ch in channels {
            let b = &mut self.channels[ch as usize];
            b.reset(b.exclusive);
            let gate = &mut self.gates[b.gate as usize];
            gate.free = self.floating;
            gate.listeners.clear();
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const RecycleLosesCredit: Mutant = Mutant::declare(&MutantInfo {
            name: "recycle-loses-credit",
            part: "credit-based flow control",
            what: "an exclusive buffer the task has read returns to its channel, but its credit is never announced to the sender",
            modelled_on: "BufferManager.recycle / RemoteInputChannel.notifyBufferAvailable: every buffer a channel regains must become an AddCredit, or the sender starves one credit at a time",
            caught_by: "protocol",
            applies: &[("backpressure", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two channels in one gate, 2 exclusive buffers each, 3 floating.
    fn state() -> CreditState {
        CreditState::new(vec![0, 0], 1, 2, 3)
    }

    /// Sends `n` data buffers on `ch` (credit spent at the sender).
    fn send(s: &mut CreditState, ch: ChannelId, n: u32) {
        s.channels[ch as usize].data_in_flight += n;
    }

    #[test]
    fn a_backlog_draws_floating_buffers_and_announces_them() {
        let mut s = state();
        send(&mut s, 0, 1);
        // one arrives, 5 more wait at the sender: wants 5 + 2 = 7 empty
        // buffers, has 1; the gate has 3.
        assert_eq!(s.arrive(0, 5), Some(3));
        let b = &s.channels[0];
        assert_eq!((b.free_exclusive, b.free_floating), (1, 3));
        assert!(b.waiting, "still short: listens at the gate");
        assert_eq!(s.gates[0].listeners, [0]);
        assert_eq!(s.gates[0].free, 0);
    }

    #[test]
    fn arriving_data_takes_a_floating_buffer_first() {
        let mut s = state();
        send(&mut s, 0, 2);
        s.arrive(0, 5);
        s.arrive(0, 4);
        assert_eq!(s.channels[0].filled, [false, true]);
    }

    #[test]
    fn a_recycled_exclusive_buffer_returns_a_surplus_floating_one_to_the_gate() {
        let mut s = state();
        send(&mut s, 0, 2);
        s.arrive(0, 1); // wants 3, has 1: takes 2 floating
        s.arrive(0, 0); // takes a floating one; wants 2, has 2
        assert_eq!(s.channels[0].filled, [false, true]);
        // the exclusive one is read: 3 empty > 2 wanted, a floating one
        // goes back to the gate, which nobody waits on: no credit.
        assert_eq!(s.recycle(0, false), None);
        assert_eq!(s.gates[0].free, 2);
        // the floating one is read: back to the gate.
        assert_eq!(s.recycle(0, false), None);
        assert_eq!(s.gates[0].free, 3);
        assert_eq!(s.channels[0].free(), 2);
    }

    #[test]
    fn a_floating_buffer_goes_to_the_first_listener_that_needs_it() {
        let mut s = state();
        send(&mut s, 0, 3);
        send(&mut s, 1, 1);
        assert_eq!(s.arrive(0, 4), Some(3)); // wants 6, has 4: listens
        assert_eq!(s.arrive(0, 3), Some(0)); // fills a floating buffer
        assert_eq!(s.arrive(1, 2), Some(0)); // wants 4, gate empty: listens
        assert_eq!(s.gates[0].listeners, [0, 1]);
        // the exclusive buffer is read: one credit for channel 0.
        assert_eq!(s.recycle(0, false), Some((0, 1)));
        // the floating one: channel 0 is first in line and still short
        // (wants 5, has 4), takes it back and has enough.
        assert_eq!(s.recycle(0, false), Some((0, 1)));
        assert_eq!(s.gates[0].listeners, [1]);
        // channel 0's backlog drains: its next floating buffer goes to
        // channel 1, which stays in line (wants 4, has 2).
        assert_eq!(s.arrive(0, 0), Some(0));
        assert_eq!(s.recycle(0, false), Some((1, 1)));
        assert_eq!(s.gates[0].listeners, [1]);
        assert_eq!(s.channels[1].free(), 2);
    }

    #[test]
    fn a_recycled_exclusive_buffer_is_one_credit_unless_lost() {
        let mut s = CreditState::new(vec![0], 1, 2, 0);
        send(&mut s, 0, 1);
        s.arrive(0, 0);
        assert_eq!(s.recycle(0, false), Some((0, 1)));
        send(&mut s, 0, 1);
        s.arrive(0, 0);
        assert_eq!(s.recycle(0, true), None);
        assert!(
            !s.channels[0].balanced(1),
            "a lost credit breaks the balance"
        );
    }

    #[test]
    fn data_without_credit_finds_no_buffer() {
        let mut s = CreditState::new(vec![0], 1, 1, 0);
        send(&mut s, 0, 2);
        assert!(s.arrive(0, 0).is_some());
        assert_eq!(s.arrive(0, 0), None);
    }
}
