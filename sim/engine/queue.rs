//! The event queue: a binary heap ordered by `(time, sequence number)`.
//!
//! The sequence number is the insertion order, so events scheduled for the
//! same virtual time run in the order they were scheduled. Nothing else
//! (no pointer, no hash) ever breaks a tie.

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// The events by slot; a popped event's slot is reused (`free`).
    events: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
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
        self.heap.push(Entry { time, seq, slot });
    }

    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.free.push(e.slot);
        let event = self.events[e.slot as usize]
            .take()
            .expect("a queued slot holds its event");
        Some((e.time, event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn clear(&mut self) {
        self.heap.clear();
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
}
