//! The network's side of the input gates (`gate.rs`): a channel gained a
//! message or a priority event, and which of a task's inputs are ready or
//! carry a priority event.

use super::Net;
use crate::model::ChannelId;

impl Net {
    /// Channel `ch` gained a message or restored buffers.
    #[inline]
    pub(super) fn input_gained(&mut self, ch: ChannelId) {
        let c = &self.channels[ch as usize];
        if let Some(bits) = self.gates.readable.get_mut(c.to as usize) {
            bits.set(c.input_index);
        }
    }

    /// Channel `ch` gained a priority event.
    #[inline]
    pub(super) fn priority_gained(&mut self, ch: ChannelId) {
        let c = &self.channels[ch as usize];
        if let Some(bits) = self.gates.priority.get_mut(c.to as usize) {
            bits.set(c.input_index);
        }
    }

    /// The first input of `task` (channels `inputs`) that `readable` allows
    /// and whose head is a priority event.
    pub fn priority_input(
        &mut self,
        task: usize,
        inputs: &[ChannelId],
        readable: impl Fn(usize) -> bool,
    ) -> Option<u32> {
        let channels = &self.channels;
        self.gates.priority.get_mut(task)?.scan(
            |i| channels[inputs[i as usize] as usize].in_priority > 0,
            |i| readable(i as usize),
        )
    }

    /// Every input of `task` that `readable` allows and that holds a message
    /// or restored buffers, in input order, into `ready`.
    pub fn ready_inputs(
        &mut self,
        task: usize,
        inputs: &[ChannelId],
        readable: impl Fn(usize) -> bool,
        ready: &mut Vec<u32>,
    ) {
        let channels = &self.channels;
        if let Some(bits) = self.gates.readable.get_mut(task) {
            bits.scan(
                |i| {
                    let c = &channels[inputs[i as usize] as usize];
                    !(c.in_queue.is_empty() && c.recovered.is_empty())
                },
                |i| {
                    if readable(i as usize) {
                        ready.push(i);
                    }
                    false
                },
            );
        }
    }
}
