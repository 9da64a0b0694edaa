//! Channels and the network between tasks.
//!
//! A channel is FIFO and reliable while both ends live. The unit on a channel
//! is a buffer of up to `buffer_records` records, or of the records that fit
//! in `buffer_size` bytes (sizes from [`RecordSizes`]). A data buffer needs one
//! credit to leave the sender; credits are the receiver's empty buffers
//! (`buffer_credits` exclusive ones per channel, `floating_buffers` per
//! input gate), announced upstream in credit messages with latency (see
//! [`super::credit`]). Events (barriers, cancellation markers, end of data)
//! need no credit but keep their place in line behind data. A sender that queues
//! `output_buffers` buffers on one channel stops taking input: that is how
//! backpressure propagates upstream.
//!
//! Every record on a channel has a sequence number (its position in the
//! channel since the last restore, the restored input channel state first:
//! see `Net::restore_input`); a data buffer carries the number of its first
//! record. Unaligned barriers are priority events: they overtake queued data
//! at the sender and at the receiver. For channel-state capture the receiver
//! side records in-flight data buffers by sequence number (see
//! [`Net::start_capture`]).
//!
//! To keep the global event queue small, only the head message of each
//! channel's network queue has a pending `Deliver` event; delivery times on a
//! channel never decrease, so FIFO order holds.

use super::credit::CreditState;
use super::event::{Ev, Stamped};
use crate::engine::{EventQueue, SimDuration, SimRng, SimTime};
use crate::model::{ChannelId, CheckpointId, Record, RecordSizes, TaskId};
use crate::protocol::local::Piggyback;
use crate::protocol::{Barrier, BarrierKind};
use std::collections::VecDeque;
use std::rc::Rc;

mod capture;
mod credit;
mod gate;
mod inflight;
mod log;
mod readiness;
mod recovered;
mod sched;

pub use capture::Capture;
pub use gate::Gates;
pub use log::{ChannelLog, Logs};
pub use sched::Sched;

/// Unaligned barriers a channel remembers the arrival mark of; older ones
/// are long read (a bound, not a limit a run reaches).
const MAX_MARKS: usize = 8;

/// What travels on a channel.
#[derive(Debug)]
pub enum Msg {
    /// Records with consecutive sequence numbers from `seq`, and what a
    /// communication-induced rule piggybacked on them.
    Data {
        seq: u64,
        buf: Vec<Record>,
        pb: Option<Rc<Piggyback>>,
    },
    Barrier(Barrier),
    Cancel(CheckpointId),
    /// The sender has no more records, ever (it still forwards barriers).
    /// `drain`: its operators finished (Flink's `EndOfData` with
    /// `StopMode.DRAIN`); without, a stop-with-savepoint without drain
    /// stopped it (`NO_DRAIN`), and its receiver does not finish its
    /// operators either.
    EndOfData {
        drain: bool,
    },
    /// The sender exited (FLIP-147): nothing more comes on this channel,
    /// barriers included.
    EndOfPartition,
}

pub struct Channel {
    pub from: TaskId,
    pub to: TaskId,
    pub input_index: u32,
    /// The buffer the sender is filling.
    pub partial: Vec<Record>,
    /// Bytes in `partial`.
    pub partial_bytes: u64,
    /// Sender side: waiting for credit or for their turn.
    pub out_queue: VecDeque<Msg>,
    /// Data buffers in `out_queue`.
    pub queued_data: u32,
    /// Priority events at the head of `out_queue`: a new one goes behind
    /// them (Flink's `PrioritizedDeque.addPriorityElement`).
    out_priority: usize,
    /// In the network, with arrival times (non-decreasing) and, for a data
    /// buffer, the sender's backlog when it left.
    pub wire: VecDeque<(SimTime, u32, Msg)>,
    /// Receiver side: arrived, not yet read.
    pub in_queue: VecDeque<Msg>,
    /// Sender side: the credits announced to it and not yet spent.
    pub credits: u32,
    /// Records the sender put on this channel (this attempt).
    pub sent: u64,
    /// Records the receiver read from this channel (this attempt).
    pub received: u64,
    /// Records that arrived in `in_queue` (this attempt).
    pub arrived: u64,
    /// One-way latency bounds (ns): its edge's, or the network's.
    pub latency: (u64, u64),
    /// Its exclusive buffers: the credits it starts with.
    pub buffer_credits: u32,
    /// Bytes per buffer (`u64::MAX`: buffers count records only) and the
    /// most records one holds: its edge's, or the network's.
    pub buffer_bytes: u64,
    pub buffer_records: usize,
    /// Priority messages at the head of `in_queue`.
    in_priority: usize,
    /// The unaligned barriers that arrived and how many records had arrived
    /// before each: the queued data one overtook is `seq < mark`. Several
    /// can be queued at once (a channel blocked for an older checkpoint
    /// releases them together).
    barrier_marks: Vec<(CheckpointId, u64)>,
    /// Input channel state being recorded at the receiver.
    pub capture: Option<Capture>,
    /// Receiver side: restored input channel state not read yet (Flink's
    /// recovered input channel), in buffers. Its records hold the sequence
    /// numbers before the channel's new data (see [`Net::restore_input`]).
    pub recovered: VecDeque<Vec<Record>>,
    last_arrival: SimTime,
    /// The sender handed out a blocking barrier of this checkpoint and
    /// sends nothing more until the receiver's resume arrives (Flink's
    /// `PipelinedSubpartition.isBlocked`).
    pub blocked_for: Option<CheckpointId>,
    /// When the channel last joined its receiver's queue of channels with
    /// data (a stamp of `Net::avail_clock`; smaller = earlier): Flink's
    /// input order.
    pub avail: u64,
    /// An iteration's feedback channel: its sender never backpressures on
    /// it (Flink's iteration tail hands records to the head through an
    /// unbounded queue).
    pub unbounded: bool,
}

impl Channel {
    /// The receiver has something to read: a message, or restored buffers.
    #[inline]
    pub(super) fn holds_input(&self) -> bool {
        !(self.in_queue.is_empty() && self.recovered.is_empty())
    }

    /// Queued data buffers at which the sender stops taking input.
    #[inline]
    fn out_limit(&self, output_buffers: u32) -> u32 {
        match self.unbounded {
            true => u32::MAX,
            false => output_buffers,
        }
    }

    /// After a restart: empty, full credit, sequence numbers from 0.
    fn reset(&mut self, credits: u32, now: SimTime) {
        self.partial.clear();
        self.partial_bytes = 0;
        self.out_queue.clear();
        self.out_priority = 0;
        self.wire.clear();
        self.in_queue.clear();
        self.queued_data = 0;
        self.credits = credits;
        self.sent = 0;
        self.received = 0;
        self.arrived = 0;
        self.in_priority = 0;
        self.barrier_marks.clear();
        self.capture = None;
        self.recovered.clear();
        self.last_arrival = now;
        self.blocked_for = None;
    }
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
    /// Bytes per buffer (`buffer_size`); `u64::MAX` when buffers count
    /// records only.
    pub buffer_bytes: u64,
    /// Every record's size.
    pub sizes: RecordSizes,
    /// Mutant `buffer-boundary-drops-record`.
    pub drop_at_boundary: bool,
    pub buffer_credits: u32,
    pub output_buffers: u32,
    pub latency_min: u64,
    pub latency_max: u64,
    pub flush_timeout: SimDuration,
    /// Mutant: aligned barriers overtake queued output data.
    pub priority_barriers: bool,
    /// Tasks whose last held timeoutable barrier left the output queue.
    pub released: Vec<TaskId>,
    /// Timeoutable barriers that arrived behind queued data, to announce to
    /// the receiving task (Flink's `EventAnnouncement`).
    pub announced: Vec<(ChannelId, Barrier)>,
    /// Network faults: latency spikes and partitions (empty without them).
    pub delays: Vec<ChannelDelay>,
    /// Messages a latency spike delayed, and messages a partition held.
    pub delayed_messages: u64,
    pub held_messages: u64,
    /// Aligned and timeoutable barriers block their channel at the sender
    /// once handed out (the algorithm's `blocks_upstream`).
    pub blocking_barriers: bool,
    /// Channels blocked at the sender by a barrier.
    pub upstream_blocks: u64,
    /// Mutant `aligned-no-block`: barriers are handed out without blocking.
    pub nonblocking_barriers: bool,
    /// Stamps for `Channel::avail`, in the order channels became available.
    pub(super) avail_clock: u64,
    /// The receivers' buffers and the gates' floating buffers.
    pub credit: CreditState,
    /// A broken credit balance not yet reported (a protocol violation;
    /// only the first of a run is kept).
    pub credit_error: Option<(ChannelId, String)>,
    credit_broke: bool,
    /// Credit messages sent.
    pub credit_messages: u64,
    /// Mutant `recycle-loses-credit`.
    pub lose_credit: bool,
    /// What the receivers read out of their channels' order (the
    /// channel-order check's evidence).
    pub order: crate::runtime::output::ChannelOrder,
    /// Mutant `restart-forgets-edge-credits`.
    pub forget_edge_credits: bool,
    /// A scripted run: a message's latency is its channel's minimum or
    /// maximum, a choice (`scheduler::choose`), not a draw.
    pub scripted_latency: bool,
    /// Checkpointing during recovery: channels with recovered buffers are
    /// read like any other input (see `Net::restore_input`).
    pub during_recovery: bool,
    /// Mutant `checkpoint-during-recovery`: channel state leaves out the
    /// recovered buffers not read yet.
    pub skip_recovered: bool,
    /// Mutant `recovered-buffers-persisted-twice`.
    pub persist_recovered_twice: bool,
    /// Mutant `channel-state-drops-payload`.
    pub strip_payloads: bool,
    /// Mutant: restored channel state without its watermark statuses.
    /// Mutant: an unaligned barrier persists none of a local channel's
    /// queued output.
    pub local_state_lost: bool,
    pub strip_statuses: bool,
    /// Restored records persisted again by a checkpoint during recovery.
    pub recovered_persisted: u64,
    /// Per task: the inputs with something to read (see `net/gate.rs`).
    pub gates: Gates,
    /// The uncoordinated families: per task, what the buffers it ships
    /// carry (empty otherwise), and the bytes piggybacked so far.
    pub stamps: Vec<Option<Rc<Piggyback>>>,
    pub piggyback_bytes: u64,
    /// Sender-based message logs (`net/log.rs`; off unless an
    /// uncoordinated algorithm runs).
    pub logs: Logs,
}

/// A network fault on some channels: between `from` and `until`, a message
/// put on the wire arrives `extra` later, or (`hold`) not before `until`.
#[derive(Clone, Debug)]
pub struct ChannelDelay {
    pub from: SimTime,
    pub until: SimTime,
    pub extra: u64,
    pub hold: bool,
    /// Per channel: affected.
    pub channels: Vec<bool>,
}

impl Net {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        channels: Vec<(TaskId, TaskId, u32, u32)>,
        tasks: usize,
        rng: SimRng,
        buffer_records: u32,
        buffer_credits: u32,
        floating_buffers: u32,
        output_buffers: u32,
        latency: (SimDuration, SimDuration),
        flush_timeout: SimDuration,
    ) -> Net {
        let (gate_of, gates) = input_gates(&channels);
        let credit = CreditState::new(gate_of, gates, buffer_credits, floating_buffers);
        let channels = channels
            .into_iter()
            .map(|(from, to, input_index, _)| {
                Channel::new(
                    from,
                    to,
                    input_index,
                    buffer_records,
                    buffer_credits,
                    latency,
                )
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
            buffer_bytes: u64::MAX,
            sizes: RecordSizes::uniform(crate::scenario::RECORD_BYTES),
            drop_at_boundary: false,
            buffer_credits,
            output_buffers,
            latency_min: latency.0.nanos(),
            latency_max: latency.1.nanos(),
            flush_timeout,
            priority_barriers: false,
            released: Vec::new(),
            announced: Vec::new(),
            delays: Vec::new(),
            delayed_messages: 0,
            held_messages: 0,
            blocking_barriers: false,
            upstream_blocks: 0,
            nonblocking_barriers: false,
            avail_clock: 0,
            credit,
            credit_error: None,
            credit_broke: false,
            credit_messages: 0,
            lose_credit: false,
            order: Default::default(),
            forget_edge_credits: false,
            scripted_latency: false,
            during_recovery: false,
            skip_recovered: false,
            persist_recovered_twice: false,
            strip_payloads: false,
            local_state_lost: false,
            strip_statuses: false,
            recovered_persisted: 0,
            gates: Gates::default(),
            stamps: Vec::new(),
            piggyback_bytes: 0,
            logs: Logs::default(),
        }
    }

    /// The arrival time of a message put on channel `ch` now, with the
    /// network faults in force.
    fn faulty_arrival(&mut self, ch: ChannelId, at: SimTime) -> SimTime {
        let now = self.now;
        let mut at = at;
        for d in &self.delays {
            if d.from <= now && now < d.until && d.channels[ch as usize] {
                if d.hold {
                    at = at.max(d.until);
                    self.held_messages += 1;
                } else {
                    at = at.plus(SimDuration(d.extra));
                    self.delayed_messages += 1;
                }
            }
        }
        at
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

    /// One message's latency within its channel's bounds (ns): drawn, or
    /// in a scripted run the minimum or the maximum, as a choice.
    fn latency(&mut self, (min, max): (u64, u64)) -> u64 {
        match (max > min, self.scripted_latency) {
            (false, _) => min,
            (true, false) => self.rng.between(min, max),
            (true, true) => [min, max][super::scheduler::choose(2) as usize],
        }
    }

    /// Wakes `task` at `at` (a source waiting for its next record), unless
    /// a wake is already on its way.
    pub fn wake_at(&mut self, task: TaskId, at: SimTime) {
        let s = &mut self.sched[task as usize];
        if !s.alive || s.wake_pending {
            return;
        }
        s.wake_pending = true;
        let at = at.max(self.now).max(s.busy_until);
        self.schedule(at, Ev::Wake { task });
    }

    fn take_buffer(&mut self, ch: ChannelId) -> Vec<Record> {
        // A byte-sized buffer has no useful record count to allocate for.
        // Room for at most `limits::BUFFER_ROOM` records: a fuller
        // buffer grows, and a large `buffer_records` on many channels does
        // not reserve memory no record will use.
        let c = &self.channels[ch as usize];
        let n = match c.buffer_bytes {
            u64::MAX => c.buffer_records.min(super::limits::BUFFER_ROOM),
            _ => c.buffer_records.min(64),
        };
        self.pool.pop().unwrap_or_else(|| Vec::with_capacity(n))
    }

    /// Buffers of `bytes` bytes (`[network] buffer_size`) on every channel
    /// without a size of its own.
    pub fn set_buffer_bytes(&mut self, bytes: u64) {
        for c in &mut self.channels {
            if c.buffer_bytes == self.buffer_bytes {
                c.buffer_bytes = bytes;
            }
        }
        self.buffer_bytes = bytes;
    }

    /// How many of `records` (at least one) fill one buffer of `ch`.
    pub fn buffer_len(&self, ch: ChannelId, records: &[Record]) -> usize {
        let c = &self.channels[ch as usize];
        let cap = records.len().min(c.buffer_records).max(1);
        if c.buffer_bytes == u64::MAX {
            return cap;
        }
        let mut bytes = 0u64;
        for (i, r) in records.iter().take(cap).enumerate() {
            bytes = bytes.saturating_add(self.sizes.of(r.lineage));
            if bytes > c.buffer_bytes {
                return i.max(1);
            }
        }
        cap
    }

    /// Returns an emptied buffer to the pool.
    #[inline]
    pub fn recycle(&mut self, mut buf: Vec<Record>) {
        buf.clear();
        if self.pool.len() < 4096 {
            self.pool.push(buf);
        }
    }

    /// Appends a record to the channel's open buffer, shipping it when full:
    /// at `buffer_records` records, or when the record would not fit in
    /// `buffer_bytes` (it then opens the next buffer; a record larger than a
    /// buffer travels alone in one).
    #[inline]
    pub fn emit(&mut self, ch: ChannelId, record: Record) {
        let c = &mut self.channels[ch as usize];
        if c.partial.capacity() == 0 {
            c.partial = self.pool.pop().unwrap_or_default();
        }
        let mut full = false;
        let limit = c.buffer_bytes;
        if limit != u64::MAX {
            let size = self.sizes.of(record.lineage);
            let c = &mut self.channels[ch as usize];
            if !c.partial.is_empty() && c.partial_bytes.saturating_add(size) > limit {
                self.ship_partial(ch);
                if self.drop_at_boundary {
                    // Mutant: the record that did not fit is not carried
                    // over to the next buffer.
                    crate::mutant::fired(crate::mutant::Mutant::BufferBoundaryDropsRecord);
                    return;
                }
            }
            let c = &mut self.channels[ch as usize];
            c.partial_bytes += size;
            full = c.partial_bytes >= limit;
        }
        let c = &mut self.channels[ch as usize];
        c.partial.push(record);
        c.sent += 1;
        let from = c.from;
        if self.logs.on {
            self.logs.append(ch, record, &self.sizes);
        }
        if full || c.partial.len() >= c.buffer_records {
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
        let fresh = self.take_buffer(ch);
        let c = &mut self.channels[ch as usize];
        c.partial_bytes = 0;
        let buf = std::mem::replace(&mut c.partial, fresh);
        let seq = c.sent - buf.len() as u64;
        let pb = match self.stamps.get(c.from as usize) {
            Some(Some(pb)) => {
                self.piggyback_bytes += pb.bytes();
                Some(pb.clone())
            }
            _ => None,
        };
        self.push_out(ch, Msg::Data { seq, buf, pb }, false);
    }

    /// Sends an event behind everything already sent on the channel (or, with
    /// `priority`, in front of the queued output).
    pub fn send_event(&mut self, ch: ChannelId, msg: Msg, priority: bool) {
        self.ship_partial(ch);
        self.push_out(ch, msg, priority);
    }

    fn push_out(&mut self, ch: ChannelId, msg: Msg, front: bool) {
        let c = &mut self.channels[ch as usize];
        let out_limit = c.out_limit(self.output_buffers);
        if matches!(msg, Msg::Data { .. }) {
            c.queued_data += 1;
            if c.queued_data == out_limit {
                let s = &mut self.sched[c.from as usize];
                s.full_outputs += 1;
                if s.full_outputs == 1 {
                    s.stop_clock(self.now);
                }
            }
        }
        if front {
            c.out_queue.insert(c.out_priority, msg);
            c.out_priority += 1;
        } else {
            c.out_queue.push_back(msg);
        }
        self.transmit(ch);
    }

    /// Moves messages from the sender's queue onto the wire while credit allows.
    pub fn transmit(&mut self, ch: ChannelId) {
        self.absorb_credits(ch);
        loop {
            let c = &mut self.channels[ch as usize];
            let out_limit = c.out_limit(self.output_buffers);
            if c.blocked_for.is_some() {
                return; // nothing leaves until the receiver resumes
            }
            let Some(front) = c.out_queue.front() else {
                return;
            };
            let is_data = matches!(front, Msg::Data { .. });
            if is_data && c.credits == 0 {
                self.wake_if_starved(ch);
                return;
            }
            let msg = c.out_queue.pop_front().expect("front exists");
            c.out_priority = c.out_priority.saturating_sub(1);
            let mut blocks = None;
            if let Msg::Barrier(b) = &msg {
                if b.kind != BarrierKind::Unaligned && self.blocking_barriers {
                    if self.nonblocking_barriers {
                        crate::mutant::fired(crate::mutant::Mutant::AlignedNoBlock);
                    } else {
                        blocks = Some(b.id);
                    }
                }
                if b.kind == BarrierKind::Timeoutable {
                    let from = c.from;
                    self.release_held(from);
                }
            }
            let c = &mut self.channels[ch as usize];
            let mut unblocked = None;
            if is_data {
                c.credits -= 1;
                if c.queued_data == out_limit {
                    unblocked = Some(c.from);
                }
                c.queued_data -= 1;
                self.credit.channels[ch as usize].data_in_flight += 1;
            }
            let backlog = c.queued_data;
            let bounds = c.latency;
            let lat = self.latency(bounds);
            let mut at = SimTime(self.now.0 + lat);
            if !self.delays.is_empty() {
                at = self.faulty_arrival(ch, at);
            }
            let c = &mut self.channels[ch as usize];
            let at = at.max(c.last_arrival);
            c.last_arrival = at;
            c.wire.push_back((at, backlog, msg));
            let first = c.wire.len() == 1;
            if first {
                self.schedule(at, Ev::Deliver { ch });
            }
            if let Some(from) = unblocked {
                let s = &mut self.sched[from as usize];
                s.full_outputs -= 1;
                if s.full_outputs == 0 {
                    s.start_clock(self.now);
                    self.poke(from);
                }
            }
            if blocks.is_some() {
                self.channels[ch as usize].blocked_for = blocks;
                self.upstream_blocks += 1;
                return;
            }
        }
    }

    /// The receiver's resume reached the sender: the channel sends again.
    /// False if it was not blocked (a resume too many).
    pub fn resume(&mut self, ch: ChannelId) -> bool {
        if self.channels[ch as usize].blocked_for.take().is_none() {
            return false;
        }
        self.transmit(ch);
        true
    }

    fn release_held(&mut self, task: TaskId) {
        let s = &mut self.sched[task as usize];
        s.held_barriers = s.held_barriers.saturating_sub(1);
        if s.held_barriers == 0 {
            self.released.push(task);
        }
    }

    /// The head message of the wire arrives at the receiver. Data is
    /// recorded if the channel's state is being captured; a barrier closes
    /// the capture. Unaligned barriers (and a timeoutable barrier arriving
    /// while its checkpoint already went unaligned here: Flink's announcement
    /// turned priority) jump ahead of the queued data.
    pub fn deliver(&mut self, ch: ChannelId) {
        let c = &mut self.channels[ch as usize];
        let (_, backlog, msg) = c.wire.pop_front().expect("a Deliver event has a message");
        let next = c.wire.front().map(|(t, _, _)| *t);
        let to = c.to;
        if self.sched[to as usize].alive {
            let mut priority = false;
            let mut data = false;
            match &msg {
                Msg::Data { seq, buf, .. } => {
                    c.arrived += buf.len() as u64;
                    if let Some(cap) = c.capture.as_mut().filter(|cap| cap.open) {
                        cap.push(*seq, buf, &self.sizes, self.now);
                    }
                    data = true;
                }
                Msg::Barrier(b) => {
                    // A barrier closes the capture of its own checkpoint and
                    // of any older one (Flink's `ChannelStatePersister`
                    // stops at the first barrier it sees with id >= its own).
                    let mut closes_own = false;
                    if let Some(cap) = c.capture.as_mut().filter(|cap| cap.open && b.id >= cap.id) {
                        cap.open = false;
                        closes_own = cap.id == b.id;
                    }
                    if b.kind == BarrierKind::Unaligned {
                        priority = true;
                        if c.barrier_marks.len() == MAX_MARKS {
                            c.barrier_marks.remove(0);
                        }
                        c.barrier_marks.push((b.id, c.arrived));
                    } else if closes_own && b.kind == BarrierKind::Timeoutable {
                        // Its checkpoint already went unaligned here: the
                        // announcement is turned priority at once. A newer
                        // checkpoint's barrier is only announced: it must not
                        // overtake data that nobody records.
                        priority = true;
                    } else if b.kind == BarrierKind::Timeoutable {
                        self.announced.push((ch, *b));
                    }
                }
                // Nothing more comes: a capture waiting for a barrier on
                // this channel has all it will get.
                Msg::EndOfPartition => {
                    if let Some(cap) = c.capture.as_mut() {
                        cap.open = false;
                    }
                }
                _ => {}
            }
            let fresh = !self.during_recovery || c.recovered.is_empty();
            let joins = fresh && c.in_queue.is_empty();
            if priority {
                c.in_queue.insert(c.in_priority, msg);
                c.in_priority += 1;
            } else {
                c.in_queue.push_back(msg);
            }
            if joins {
                self.stamp_avail(ch);
            }
            if priority {
                self.priority_gained(ch);
            }
            self.input_gained(ch);
            self.poke(to);
            if data {
                match self.credit.arrive(ch, backlog) {
                    Some(0) => {}
                    Some(n) => self.announce(ch, n),
                    None => {
                        self.credit_broken(ch, "a data buffer arrived with no empty buffer for it")
                    }
                }
                self.check_balance(ch);
            }
        } else if let Msg::Data { buf, .. } = msg {
            self.recycle(buf);
        }
        if let Some(at) = next {
            self.schedule(at, Ev::Deliver { ch });
        }
    }

    /// The receiver takes the next message; a data buffer's credit returns.
    /// Of a data buffer it takes at most `max_records`; the rest stays at
    /// the head with its sequence number advanced (a priority event can
    /// overtake it, as in Flink an unaligned barrier overtakes the
    /// deserializer's remainder).
    pub fn take_input(&mut self, ch: ChannelId, max_records: usize) -> Option<Msg> {
        let c = &mut self.channels[ch as usize];
        if let Some(Msg::Data { seq, buf, pb }) = c.in_queue.front_mut() {
            if buf.len() > max_records {
                let mut part = self.pool.pop().unwrap_or_default();
                part.extend(buf.drain(..max_records));
                let first = *seq;
                self.order
                    .read(self.now, ch, c.received, first, max_records as u64);
                *seq += max_records as u64;
                c.received += max_records as u64;
                let pb = pb.clone();
                self.stamp_avail(ch);
                return Some(Msg::Data {
                    seq: first,
                    buf: part,
                    pb,
                });
            }
        }
        let msg = c.in_queue.pop_front()?;
        c.in_priority = c.in_priority.saturating_sub(1);
        if !c.in_queue.is_empty() || (self.during_recovery && !c.recovered.is_empty()) {
            self.stamp_avail(ch);
        }
        if let Msg::Data { seq, buf, .. } = &msg {
            let c = &mut self.channels[ch as usize];
            self.order
                .read(self.now, ch, c.received, *seq, buf.len() as u64);
            c.received += buf.len() as u64;
            if let Some((to, n)) = self.credit.recycle(ch, self.lose_credit) {
                self.announce(to, n);
            }
            self.check_balance(ch);
        }
        Some(msg)
    }

    /// Whether the channel's next message is a priority event.
    #[inline]
    pub fn has_priority(&self, ch: ChannelId) -> bool {
        self.channels[ch as usize].in_priority > 0
    }

    /// Queues recovered output channel state ahead of any new output.
    pub fn restore_output(&mut self, ch: ChannelId, records: &[Record]) {
        for &r in records {
            self.emit(ch, r);
        }
        self.ship_partial(ch);
    }

    /// A task died: its unsent output dies with it.
    pub fn kill_task_outputs(&mut self, task: TaskId, outputs: &[ChannelId]) {
        for &ch in outputs {
            let c = &mut self.channels[ch as usize];
            c.partial.clear();
            c.partial_bytes = 0;
            c.out_queue.clear();
            c.out_priority = 0;
            c.queued_data = 0;
        }
        let s = &mut self.sched[task as usize];
        s.alive = false;
        s.full_outputs = 0;
        s.clock_stops = 0;
        s.stopped_since = None;
    }

    /// Gives channel `ch` its edge's settings (before anything is sent):
    /// latency bounds in ns and exclusive buffers,
    /// and, with `buffer`, the bytes and most records of one buffer.
    pub fn set_channel(
        &mut self,
        ch: ChannelId,
        latency: (u64, u64),
        buffer_credits: u32,
        buffer: Option<(u64, usize)>,
    ) {
        let c = &mut self.channels[ch as usize];
        if let Some((bytes, records)) = buffer {
            c.buffer_bytes = bytes;
            c.buffer_records = records;
        }
        c.latency = latency;
        c.buffer_credits = buffer_credits;
        c.credits = buffer_credits;
        self.credit.set_exclusive(ch, buffer_credits);
    }

    /// A region restart: these channels start empty with full credit, and
    /// these tasks with fresh scheduling state.
    pub fn reset_some(&mut self, channels: &[ChannelId], tasks: &[TaskId]) {
        let now = self.now;
        self.released.retain(|t| !tasks.contains(t));
        self.announced.retain(|(ch, _)| !channels.contains(ch));
        for &ch in channels {
            let c = &mut self.channels[ch as usize];
            c.reset(c.buffer_credits, now);
        }
        self.credit.reset(channels.iter().copied());
        for &t in tasks {
            self.sched[t as usize] = Sched::fresh(now);
        }
    }

    /// A global restart: every channel starts empty with full credit.
    pub fn reset(&mut self) {
        let now = self.now;
        self.released.clear();
        self.announced.clear();
        let forget = self.forget_edge_credits;
        for c in &mut self.channels {
            // Mutant: the network's credits, whatever the edge's.
            let credits = match forget && c.buffer_credits != self.buffer_credits {
                true => {
                    crate::mutant::fired(crate::mutant::Mutant::RestartForgetsEdgeCredits);
                    self.buffer_credits
                }
                false => c.buffer_credits,
            };
            c.reset(credits, now);
        }
        self.credit.reset(0..self.channels.len() as ChannelId);
        for s in &mut self.sched {
            *s = Sched::fresh(now);
        }
    }
}

/// The input gate of each channel, and how many gates there are: one per
/// (receiver, logical input) (see `Net::new`).
fn input_gates(channels: &[(TaskId, TaskId, u32, u32)]) -> (Vec<u32>, usize) {
    // One input gate per (receiver, logical input): every channel of
    // one input of a subtask (one per upstream subtask of the edge) is
    // in the same gate and shares its floating buffers, as in Flink's
    // `SingleInputGate`. The fourth element names the logical input (the
    // upstream operator); the third is the channel's position among the
    // receiver's channels.
    let mut gate_ids: Vec<(TaskId, u32)> = Vec::new();
    let gate_of = channels
        .iter()
        .map(|&(_, to, _, input)| {
            let key = (to, input);
            let at = gate_ids.iter().position(|&g| g == key).unwrap_or_else(|| {
                gate_ids.push(key);
                gate_ids.len() - 1
            });
            at as u32
        })
        .collect();
    (gate_of, gate_ids.len())
}

impl Channel {
    /// An empty channel from `from` to input `input_index` of `to`.
    fn new(
        from: TaskId,
        to: TaskId,
        input_index: u32,
        buffer_records: u32,
        buffer_credits: u32,
        latency: (SimDuration, SimDuration),
    ) -> Channel {
        Channel {
            from,
            to,
            input_index,
            partial: Vec::new(),
            partial_bytes: 0,
            out_queue: VecDeque::new(),
            queued_data: 0,
            out_priority: 0,
            wire: VecDeque::new(),
            in_queue: VecDeque::new(),
            credits: buffer_credits,
            sent: 0,
            received: 0,
            arrived: 0,
            latency: (latency.0.nanos(), latency.1.nanos()),
            buffer_credits,
            buffer_bytes: u64::MAX,
            buffer_records: buffer_records as usize,
            in_priority: 0,
            barrier_marks: Vec::new(),
            capture: None,
            recovered: VecDeque::new(),
            last_arrival: SimTime::ZERO,
            blocked_for: None,
            avail: 0,
            unbounded: false,
        }
    }
}

#[cfg(test)]
mod tests;

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const AlignedNoBlock: Mutant = Mutant::declare(&MutantInfo {
            name: "aligned-no-block",
            part: "producer-side blocking",
            what: "an aligned barrier is handed out without blocking its channel at the sender (a non-blocking event), so the receiver reads post-barrier records before its snapshot",
            modelled_on: "barriers sent with a buffer type that is not blocking upstream (FLINK-16404 made the producer block after an aligned barrier), i.e. alignment that processes post-barrier records before the snapshot",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "aligned")],
        });
        pub const BufferBoundaryDropsRecord: Mutant = Mutant::declare(&MutantInfo {
            name: "buffer-boundary-drops-record",
            part: "byte-sized network buffers",
            what: "a record that does not fit in the rest of the open buffer ships the buffer but is not carried over to the next one",
            modelled_on: "record serializer bugs at a buffer's end: a record crossing (or ending exactly at) the boundary of a network buffer must continue in the next buffer (Flink's spanning-record serializer), not vanish",
            caught_by: "exactly-once-output",
            applies: &[("record-bytes", "unaligned")],
        });
        pub const RestartForgetsEdgeCredits: Mutant = Mutant::declare(&MutantInfo {
            name: "restart-forgets-edge-credits",
            part: "per-edge network settings",
            what: "after a restart every sender starts with the network's buffer_credits, not its edge's: it is promised more buffers than its receiver holds",
            modelled_on: "RemoteInputChannel's initial credit is the number of exclusive buffers it was actually given (requestExclusiveBuffers, the credit sent at setup); a sender told another number breaks the credit invariant and overruns or starves the receiver",
            caught_by: "protocol",
            applies: &[("edges", "aligned")],
        });
    }
}
