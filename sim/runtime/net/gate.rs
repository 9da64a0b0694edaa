//! Which inputs of a task have something to read: Flink's input gate keeps
//! a queue of its channels with data (`SingleInputGate.inputChannelsWithData`,
//! priority channels first), so that picking the next input costs the same
//! whatever the number of channels. Here each task has two bitsets over its
//! inputs: inputs that may hold a message or restored buffers, and inputs
//! that may hold a priority event. A bit is set whenever its channel gains
//! one; a set bit whose channel turns out empty is cleared when a scan finds
//! it. So a scan visits only the inputs that had something since the last
//! scan, in input order: the same inputs, in the same order, as a scan of
//! every input.
//!
//! This file holds the bitsets; the network's side (a channel gained
//! something, which input a task reads) is in `readiness.rs`.

/// One task's inputs as bits, input `i` in word `i / 64`.
#[derive(Clone, Debug, Default)]
pub struct InputBits {
    words: Vec<u64>,
}

impl InputBits {
    pub(super) fn with_inputs(n: usize) -> InputBits {
        InputBits {
            words: vec![0; n.div_ceil(64)],
        }
    }

    #[inline]
    pub(super) fn set(&mut self, i: u32) {
        self.words[i as usize / 64] |= 1 << (i % 64);
    }

    /// The set bits in ascending order; `keep(i)` false clears bit `i`;
    /// `stop(i)` true ends the scan (at `i`, which is returned).
    #[inline]
    pub(super) fn scan(
        &mut self,
        mut keep: impl FnMut(u32) -> bool,
        mut stop: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        for (w, word) in self.words.iter_mut().enumerate() {
            let mut rest = *word;
            while rest != 0 {
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                let i = (w * 64) as u32 + bit;
                if !keep(i) {
                    *word &= !(1 << bit);
                } else if stop(i) {
                    return Some(i);
                }
            }
        }
        None
    }
}

/// Per task: inputs that may have something to read, and inputs that may
/// have a priority event at their head; under Flink's input order, also
/// the inputs by the time they joined the queue of channels with data.
#[derive(Clone, Debug, Default)]
pub struct Gates {
    pub(super) readable: Vec<InputBits>,
    pub(super) priority: Vec<InputBits>,
    /// `input_order = "fifo"`: per task, `(avail, input)` for every input
    /// that gained something or took a new `Channel::avail` stamp, in
    /// stamp order. An entry is current while its channel holds something
    /// and still has that stamp; stale ones are dropped when a pick passes
    /// them. The oldest current entry the task may read is the input
    /// `scheduler::Fifo` picks among all ready inputs, found without
    /// visiting every ready input (Flink's `inputChannelsWithData` queue).
    pub(super) by_age: Option<Vec<std::collections::BTreeSet<(u64, u32)>>>,
}

impl Gates {
    /// Gates for tasks with these numbers of inputs.
    pub fn new(inputs: impl Iterator<Item = usize>) -> Gates {
        let readable: Vec<InputBits> = inputs.map(InputBits::with_inputs).collect();
        Gates {
            priority: readable.clone(),
            readable,
            by_age: None,
        }
    }

    /// Keeps the inputs of every task by age too (Flink's input order).
    pub fn keep_age(&mut self) {
        self.by_age = Some(vec![Default::default(); self.readable.len()]);
    }
}
