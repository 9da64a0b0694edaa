//! The oracle's channel queues: what each channel carries, in order, held
//! in chunks of `CHUNK` records. A chunk its reader emptied goes back to a
//! pool that every channel's next push takes from, so the records a task
//! reads make room for the records it emits (on a DAG the oracle runs each
//! task to its end before its readers start: its outputs would otherwise
//! all be new memory), and a queue grows without copying what it holds.
//! A chunk that is not from the pool starts empty and grows as it fills.
//! A growing `VecDeque` per channel touched about twice the memory its
//! records need (the copies of doubling); for the reference job, the
//! oracle's queues were more than half of the process's page faults.

use crate::model::Record;
use std::collections::VecDeque;

/// Records per chunk.
const CHUNK: usize = 256;

/// One channel's records: `chunks[0][head..]`, then every later chunk.
#[derive(Default)]
struct Queue {
    chunks: VecDeque<Vec<Record>>,
    head: usize,
    len: usize,
}

/// Every channel's queue and the pool of emptied chunks.
pub(super) struct Queues {
    channels: Vec<Queue>,
    spare: Vec<Vec<Record>>,
}

impl Queues {
    pub(super) fn new(channels: usize) -> Queues {
        Queues {
            channels: (0..channels).map(|_| Queue::default()).collect(),
            spare: Vec::new(),
        }
    }

    /// Records queued on `ch`.
    pub(super) fn len(&self, ch: u32) -> usize {
        self.channels[ch as usize].len
    }

    pub(super) fn push(&mut self, ch: u32, r: Record) {
        let q = &mut self.channels[ch as usize];
        if q.chunks.back().is_none_or(|c| c.len() == CHUNK) {
            // A new chunk grows as it fills: a channel that carries a few
            // records (thousands of them in a wide job) takes a few
            // records' memory.
            let chunk = self.spare.pop().unwrap_or_default();
            q.chunks.push_back(chunk);
        }
        q.chunks.back_mut().expect("a chunk with room").push(r);
        q.len += 1;
    }

    /// The first record queued on `ch`, taken off.
    pub(super) fn pop(&mut self, ch: u32) -> Option<Record> {
        let q = &mut self.channels[ch as usize];
        if q.len == 0 {
            return None;
        }
        let r = q.chunks[0][q.head];
        q.head += 1;
        q.len -= 1;
        if q.head == CHUNK {
            let mut chunk = q.chunks.pop_front().expect("the chunk just read");
            chunk.clear();
            self.spare.push(chunk);
            q.head = 0;
        }
        Some(r)
    }

    /// The records of `ch` from its `from`-th queued one on, `n` at most.
    pub(super) fn range(&self, ch: u32, from: usize, n: usize) -> impl Iterator<Item = &Record> {
        let q = &self.channels[ch as usize];
        let at = q.head + from.min(q.len);
        let n = n.min(q.len - from.min(q.len));
        q.chunks
            .range((at / CHUNK).min(q.chunks.len())..)
            .flatten()
            .skip(at % CHUNK)
            .take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: u64) -> Record {
        Record {
            key,
            ..Record::default()
        }
    }

    /// Against a `VecDeque` per channel: pushes and pops interleaved over
    /// chunk boundaries, emptied queues refilled, and ranges anywhere.
    #[test]
    fn a_queue_is_a_fifo_per_channel() {
        let mut queues = Queues::new(3);
        let mut model: Vec<VecDeque<Record>> = vec![VecDeque::new(); 3];
        let mut key = 0;
        // A deterministic mix: long pushes, long pops, alternation.
        for round in 0..40u64 {
            let ch = (round % 3) as u32;
            let pushes = (round * 97) % 700;
            let pops = (round * 61) % 650;
            for _ in 0..pushes {
                key += 1;
                queues.push(ch, rec(key));
                model[ch as usize].push_back(rec(key));
            }
            for _ in 0..pops {
                let got = queues.pop(ch).map(|r| r.key);
                assert_eq!(got, model[ch as usize].pop_front().map(|r| r.key));
            }
            for c in 0..3u32 {
                let m = &model[c as usize];
                assert_eq!(queues.len(c), m.len());
                for (from, n) in [(0, m.len()), (1, 300), (255, 2), (m.len(), 5), (7, 0)] {
                    let got: Vec<u64> = queues.range(c, from, n).map(|r| r.key).collect();
                    let want: Vec<u64> = m.iter().skip(from).take(n).map(|r| r.key).collect();
                    assert_eq!(got, want, "channel {c}, from {from}, n {n}");
                }
            }
        }
        assert!(!queues.spare.is_empty(), "emptied chunks are pooled");
    }
}
