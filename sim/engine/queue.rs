//! The event queue: a binary heap ordered by `(time, sequence number)`.
//!
//! The sequence number is the insertion order, so events scheduled for the
//! same virtual time run in the order they were scheduled. Nothing else
//! (no pointer, no hash) ever breaks a tie.
//!
//! An event scheduled for the time of the last event popped (a task woken
//! now, a mail posted now) waits in a FIFO beside the heap instead: its
//! sequence number is larger than any queued before it, so the FIFO is in
//! `(time, seq)` order, and a pop takes the smaller of the FIFO's front
//! and the heap's top. The order is the heap's alone would give.

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// What the heap orders: 24 bytes, the event itself waits in a slot of
/// `EventQueue::events`. A pop sifts through `log n` levels of the heap;
/// with the events inline (56 bytes for the simulator's) a wide job's queue
/// of tens of thousands of channel heads spilled out of the cache.
struct Entry {
    time: SimTime,
    seq: u64,
    slot: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    /// Events for `now`, in the order they were pushed.
    fifo: VecDeque<Entry>,
    /// The time of the last event popped.
    now: SimTime,
    /// The events by slot; a popped event's slot is reused (`free`).
    events: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            fifo: VecDeque::with_capacity(64),
            now: SimTime::ZERO,
            events: Vec::with_capacity(1024),
            free: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.events[slot as usize] = Some(event);
                slot
            }
            None => {
                self.events.push(Some(event));
                u32::try_from(self.events.len() - 1).expect("at most 2^32 events queued")
            }
        };
        let entry = Entry { time, seq, slot };
        if time == self.now {
            self.fifo.push_back(entry);
        } else {
            self.heap.push(entry);
        }
    }

    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        // `Entry`'s order is reversed: the greater entry is the earlier.
        let e = match (self.fifo.front(), self.heap.peek()) {
            (Some(f), Some(h)) if h > f => self.heap.pop(),
            (Some(_), _) => self.fifo.pop_front(),
            (None, _) => self.heap.pop(),
        }?;
        self.now = e.time;
        self.free.push(e.slot);
        let event = self.events[e.slot as usize]
            .take()
            .expect("a queued slot holds its event");
        Some((e.time, event))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.fifo.is_empty()
    }

    pub fn clear(&mut self) {
        self.heap.clear();
        self.fifo.clear();
        self.events.clear();
        self.free.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'b');
        q.push(SimTime(1), 'a');
        q.push(SimTime(5), 'c');
        q.push(SimTime(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    /// Pushes at the current time, in the past and in the future, between
    /// pops: the order of a sorted model of `(time, seq)`.
    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        let mut model = std::collections::BTreeMap::new();
        let (mut now, mut seq, mut rng) = (0u64, 0u64, 7u64);
        let (mut popped, mut beside) = (0, 0);
        for _ in 0..20_000 {
            beside = beside.max(q.fifo.len());
            rng = crate::engine::rng::splitmix64(rng);
            if rng % 3 == 0 {
                let got = q.pop();
                let want = model.pop_first();
                assert_eq!(got, want.map(|((t, _), e)| (SimTime(t), e)));
                if let Some(((t, _), _)) = want {
                    now = t;
                    popped += 1;
                }
                continue;
            }
            let time = match rng >> 8 & 3 {
                0 | 1 => now,
                2 => now.saturating_sub(rng >> 16 & 3),
                _ => now + (rng >> 16 & 15),
            };
            q.push(SimTime(time), seq);
            model.insert((time, seq), seq);
            seq += 1;
            assert_eq!(q.len(), model.len());
        }
        assert!(
            popped > 5_000 && beside > 1,
            "pops and the FIFO both exercised"
        );
        while let Some(((t, _), e)) = model.pop_first() {
            assert_eq!(q.pop(), Some((SimTime(t), e)));
        }
        assert!(q.is_empty());
    }
}
