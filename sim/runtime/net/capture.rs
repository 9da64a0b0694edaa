//! Channel-state capture at the receiver: the in-flight records of one
//! input channel for one checkpoint, by sequence number (Flink's
//! `ChannelStatePersister` with `checkpointStarted`, `maybePersist` and the
//! barrier that stops it).

use super::{Msg, Net};
use crate::engine::SimTime;
use crate::model::{ChannelId, CheckpointId, Record, RecordSizes};
use crate::protocol::BarrierKind;

/// Records captured as one channel's in-flight state, by sequence number.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub id: CheckpointId,
    pub first_seq: u64,
    pub records: Vec<Record>,
    /// Bytes of `records`.
    pub bytes: u64,
    /// When each part was captured and its bytes: what the channel-state
    /// writer gets to write, and when.
    pub writes: Vec<(SimTime, u64)>,
    /// Still recording arrivals (the channel's barrier has not arrived).
    pub open: bool,
    /// A buffer did not follow the previous one (a bug: reported by the
    /// consistent-cut check).
    pub gap: bool,
}

impl Capture {
    fn new(id: CheckpointId) -> Capture {
        Capture {
            id,
            ..Capture::default()
        }
    }

    /// Appends a buffer captured at `at`, checking that sequence numbers
    /// stay consecutive.
    pub fn push(&mut self, seq: u64, buf: &[Record], sizes: &RecordSizes, at: SimTime) {
        if buf.is_empty() {
            return;
        }
        if self.records.is_empty() {
            self.first_seq = seq;
        } else if seq != self.first_seq + self.records.len() as u64 {
            self.gap = true;
        }
        self.records.extend_from_slice(buf);
        let bytes = sizes.total(buf);
        self.bytes += bytes;
        match self.writes.last_mut() {
            Some((t, b)) if *t == at => *b += bytes,
            _ => self.writes.push((at, bytes)),
        }
    }
}

impl Net {
    /// Starts recording input channel `ch`'s in-flight records for
    /// checkpoint `id` (Flink's `checkpointStarted` on an input channel): the
    /// queued data ahead of the channel's barrier now, then every data buffer
    /// that arrives before the barrier. If the barrier arrived as a priority
    /// event, the data it overtook (`seq < mark`) is what is queued ahead of
    /// it. A timeoutable barrier found in the queue becomes a priority event.
    pub fn start_capture(&mut self, ch: ChannelId, id: CheckpointId) {
        let mut cap = Capture::new(id);
        self.capture_recovered(ch, &mut cap);
        let (sizes, now) = (&self.sizes, self.now);
        let c = &mut self.channels[ch as usize];
        let mark = c
            .barrier_marks
            .iter()
            .find(|&&(bid, _)| bid == id)
            .map(|&(_, m)| m);
        c.barrier_marks.retain(|&(bid, _)| bid > id);
        match mark {
            Some(mark) => {
                for m in &c.in_queue {
                    if let Msg::Data { seq, buf } = m {
                        if *seq < mark {
                            cap.push(*seq, buf, sizes, now);
                        }
                    }
                }
            }
            _ => {
                let mut found = None;
                for (k, m) in c.in_queue.iter().enumerate() {
                    match m {
                        Msg::Data { seq, buf } => cap.push(*seq, buf, sizes, now),
                        Msg::Barrier(b) if b.id >= id => {
                            found = Some((k, b.kind));
                            break;
                        }
                        _ => {}
                    }
                }
                match found {
                    Some((k, kind)) => {
                        if kind == BarrierKind::Timeoutable && k >= c.in_priority {
                            let msg = c.in_queue.remove(k).expect("found above");
                            c.in_queue.insert(c.in_priority, msg);
                            c.in_priority += 1;
                        }
                    }
                    None => cap.open = true,
                }
            }
        }
        let promoted = c.in_priority > 0;
        c.capture = Some(cap);
        if promoted {
            self.priority_gained(ch);
        }
    }

    /// Takes the channel state captured for checkpoint `id`, if any.
    pub fn take_capture(&mut self, ch: ChannelId, id: CheckpointId) -> Option<Capture> {
        let c = &mut self.channels[ch as usize];
        match &c.capture {
            Some(cap) if cap.id == id => c.capture.take(),
            _ => None,
        }
    }

    /// Drops any capture for checkpoints up to `id` (aborted).
    pub fn drop_capture(&mut self, ch: ChannelId, id: CheckpointId) {
        let c = &mut self.channels[ch as usize];
        if c.capture.as_ref().is_some_and(|cap| cap.id <= id) {
            c.capture = None;
        }
    }
}
