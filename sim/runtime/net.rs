//! Channels and the network between tasks.
//!
//! A channel is FIFO and reliable while both ends live. The unit on a channel
//! is a buffer of up to `buffer_records` records; a receiver grants each
//! channel `buffer_credits` buffers, a data buffer needs one credit to leave
//! the sender, and the credit returns when the receiver takes the buffer.
//! Events (barriers, cancellation markers, end of data) need no credit but
//! keep their place in line behind data. A sender that queues
//! `output_buffers` buffers on one channel stops taking input: that is how
//! backpressure propagates upstream.
//!
//! To keep the global event queue small, only the head message of each
//! channel's network queue has a pending `Deliver` event; delivery times on a
//! channel never decrease, so FIFO order holds.

use super::event::{Ev, Stamped};
use crate::engine::{EventQueue, SimDuration, SimRng, SimTime};
use crate::model::{ChannelId, CheckpointId, Record, TaskId};
use crate::protocol::Barrier;
use std::collections::VecDeque;

/// What travels on a channel.
#[derive(Debug)]
pub enum Msg {
    Data(Vec<Record>),
    Barrier(Barrier),
    Cancel(CheckpointId),
    /// The sender has no more records, ever (it still forwards barriers).
    EndOfData,
}

pub struct Channel {
    pub from: TaskId,
    pub to: TaskId,
    pub input_index: u32,
    /// The buffer the sender is filling.
    pub partial: Vec<Record>,
    /// Sender side: waiting for credit or for their turn.
    pub out_queue: VecDeque<Msg>,
    /// Data buffers in `out_queue`.
    pub queued_data: u32,
    /// In the network, with arrival times (non-decreasing).
    pub wire: VecDeque<(SimTime, Msg)>,
    /// Receiver side: arrived, not yet read.
    pub in_queue: VecDeque<Msg>,
    pub credits: u32,
    /// Records the sender put on this channel (this attempt).
    pub sent: u64,
    /// Records the receiver read from this channel (this attempt).
    pub received: u64,
    last_arrival: SimTime,
}

/// Per-task scheduling bookkeeping the network needs to wake tasks.
#[derive(Clone, Debug, Default)]
pub struct Sched {
    pub alive: bool,
    pub busy_until: SimTime,
    pub wake_pending: bool,
    pub flush_pending: bool,
    /// Output channels whose queue is at `output_buffers`.
    pub full_outputs: u32,
}

pub struct Net {
    pub now: SimTime,
    pub attempt: u32,
    pub queue: EventQueue<Stamped>,
    pub channels: Vec<Channel>,
    pub sched: Vec<Sched>,
    pub rng: SimRng,
    pool: Vec<Vec<Record>>,
    pub buffer_records: usize,
    pub buffer_credits: u32,
    pub output_buffers: u32,
    pub latency_min: u64,
    pub latency_max: u64,
    pub flush_timeout: SimDuration,
    /// Mutant: aligned barriers overtake queued output data.
    pub priority_barriers: bool,
}

impl Net {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        channels: Vec<(TaskId, TaskId, u32)>,
        tasks: usize,
        rng: SimRng,
        buffer_records: u32,
        buffer_credits: u32,
        output_buffers: u32,
        latency: (SimDuration, SimDuration),
        flush_timeout: SimDuration,
    ) -> Net {
        let channels = channels
            .into_iter()
            .map(|(from, to, input_index)| Channel {
                from,
                to,
                input_index,
                partial: Vec::new(),
                out_queue: VecDeque::new(),
                queued_data: 0,
                wire: VecDeque::new(),
                in_queue: VecDeque::new(),
                credits: buffer_credits,
                sent: 0,
                received: 0,
                last_arrival: SimTime::ZERO,
            })
            .collect();
        Net {
            now: SimTime::ZERO,
            attempt: 0,
            queue: EventQueue::default(),
            channels,
            sched: vec![
                Sched {
                    alive: true,
                    ..Sched::default()
                };
                tasks
            ],
            rng,
            pool: Vec::new(),
            buffer_records: buffer_records as usize,
            buffer_credits,
            output_buffers,
            latency_min: latency.0.nanos(),
            latency_max: latency.1.nanos(),
            flush_timeout,
            priority_barriers: false,
        }
    }

    /// Schedules an event stamped with the current attempt: it is dropped on
    /// arrival if the job restarted in between.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Ev) {
        self.queue.push(
            at,
            Stamped {
                attempt: self.attempt,
                ev,
            },
        );
    }

    /// Makes sure the task gets a wake-up once it is no longer busy.
    #[inline]
    pub fn poke(&mut self, task: TaskId) {
        let s = &mut self.sched[task as usize];
        if !s.alive || s.wake_pending {
            return;
        }
        s.wake_pending = true;
        let at = self.now.max(s.busy_until);
        self.schedule(at, Ev::Wake { task });
    }

    fn take_buffer(&mut self) -> Vec<Record> {
        self.pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.buffer_records))
    }

    /// Returns an emptied buffer to the pool.
    #[inline]
    pub fn recycle(&mut self, mut buf: Vec<Record>) {
        buf.clear();
        if self.pool.len() < 4096 {
            self.pool.push(buf);
        }
    }

    /// Appends a record to the channel's open buffer, shipping it when full.
    #[inline]
    pub fn emit(&mut self, ch: ChannelId, record: Record) {
        let c = &mut self.channels[ch as usize];
        if c.partial.capacity() == 0 {
            c.partial = self.pool.pop().unwrap_or_default();
        }
        let c = &mut self.channels[ch as usize];
        c.partial.push(record);
        c.sent += 1;
        let from = c.from;
        if c.partial.len() >= self.buffer_records {
            self.ship_partial(ch);
        } else if !self.sched[from as usize].flush_pending {
            self.sched[from as usize].flush_pending = true;
            let at = self.now.plus(self.flush_timeout);
            self.schedule(at, Ev::Flush { task: from });
        }
    }

    /// Ships the open buffer, if it holds anything.
    pub fn ship_partial(&mut self, ch: ChannelId) {
        if self.channels[ch as usize].partial.is_empty() {
            return;
        }
        let fresh = self.take_buffer();
        let buf = std::mem::replace(&mut self.channels[ch as usize].partial, fresh);
        self.push_out(ch, Msg::Data(buf), false);
    }

    /// Sends an event behind everything already sent on the channel (or, with
    /// `priority`, in front of the queued output).
    pub fn send_event(&mut self, ch: ChannelId, msg: Msg, priority: bool) {
        self.ship_partial(ch);
        self.push_out(ch, msg, priority);
    }

    fn push_out(&mut self, ch: ChannelId, msg: Msg, front: bool) {
        let out_limit = self.output_buffers;
        let c = &mut self.channels[ch as usize];
        if matches!(msg, Msg::Data(_)) {
            c.queued_data += 1;
            if c.queued_data == out_limit {
                self.sched[c.from as usize].full_outputs += 1;
            }
        }
        if front {
            c.out_queue.push_front(msg);
        } else {
            c.out_queue.push_back(msg);
        }
        self.transmit(ch);
    }

    /// Moves messages from the sender's queue onto the wire while credit allows.
    pub fn transmit(&mut self, ch: ChannelId) {
        loop {
            let out_limit = self.output_buffers;
            let c = &mut self.channels[ch as usize];
            let Some(front) = c.out_queue.front() else {
                return;
            };
            let is_data = matches!(front, Msg::Data(_));
            if is_data && c.credits == 0 {
                return;
            }
            let msg = c.out_queue.pop_front().expect("front exists");
            let mut unblocked = None;
            if is_data {
                c.credits -= 1;
                if c.queued_data == out_limit {
                    unblocked = Some(c.from);
                }
                c.queued_data -= 1;
            }
            let lat = if self.latency_max > self.latency_min {
                self.rng.between(self.latency_min, self.latency_max)
            } else {
                self.latency_min
            };
            let c = &mut self.channels[ch as usize];
            let at = SimTime(self.now.0 + lat).max(c.last_arrival);
            c.last_arrival = at;
            c.wire.push_back((at, msg));
            let first = c.wire.len() == 1;
            if first {
                self.schedule(at, Ev::Deliver { ch });
            }
            if let Some(from) = unblocked {
                let s = &mut self.sched[from as usize];
                s.full_outputs -= 1;
                if s.full_outputs == 0 {
                    self.poke(from);
                }
            }
        }
    }

    /// The head message of the wire arrives at the receiver.
    pub fn deliver(&mut self, ch: ChannelId) {
        let c = &mut self.channels[ch as usize];
        let (_, msg) = c.wire.pop_front().expect("a Deliver event has a message");
        let next = c.wire.front().map(|(t, _)| *t);
        let to = c.to;
        if self.sched[to as usize].alive {
            c.in_queue.push_back(msg);
            self.poke(to);
        } else if let Msg::Data(buf) = msg {
            self.recycle(buf);
        }
        if let Some(at) = next {
            self.schedule(at, Ev::Deliver { ch });
        }
    }

    /// The receiver takes the next message; a data buffer's credit returns.
    pub fn take_input(&mut self, ch: ChannelId) -> Option<Msg> {
        let c = &mut self.channels[ch as usize];
        let msg = c.in_queue.pop_front()?;
        if let Msg::Data(buf) = &msg {
            c.received += buf.len() as u64;
            c.credits += 1;
            if !c.out_queue.is_empty() {
                self.transmit(ch);
            }
        }
        Some(msg)
    }

    /// A task died: its unsent output dies with it.
    pub fn kill_task_outputs(&mut self, task: TaskId, outputs: &[ChannelId]) {
        for &ch in outputs {
            let c = &mut self.channels[ch as usize];
            c.partial.clear();
            c.out_queue.clear();
            c.queued_data = 0;
        }
        let s = &mut self.sched[task as usize];
        s.alive = false;
        s.full_outputs = 0;
    }

    /// A global restart: every channel starts empty with full credit.
    pub fn reset(&mut self) {
        let now = self.now;
        for c in &mut self.channels {
            c.partial.clear();
            c.out_queue.clear();
            c.wire.clear();
            c.in_queue.clear();
            c.queued_data = 0;
            c.credits = self.buffer_credits;
            c.sent = 0;
            c.received = 0;
            c.last_arrival = now;
        }
        for s in &mut self.sched {
            *s = Sched {
                alive: true,
                busy_until: now,
                ..Sched::default()
            };
        }
    }
}
