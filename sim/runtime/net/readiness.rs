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
        self.aged(ch);
    }

    /// Channel `ch` took a new `avail` stamp: it joins the back of its
    /// gate's queue of channels with data.
    #[inline]
    pub(super) fn stamp_avail(&mut self, ch: ChannelId) {
        self.avail_clock += 1;
        self.channels[ch as usize].avail = self.avail_clock;
        self.aged(ch);
    }

    #[inline]
    fn aged(&mut self, ch: ChannelId) {
        let c = &self.channels[ch as usize];
        if let Some(ages) = self.gates.by_age.as_mut() {
            if let Some(set) = ages.get_mut(c.to as usize) {
                set.insert((c.avail, c.input_index));
            }
        }
    }

    /// Under Flink's input order (`Gates::keep_age`): the input of `task`
    /// that `scheduler::Fifo` would pick among every ready input, the one
    /// `readable` allows that joined the queue of channels with data
    /// first; `None` if no input is ready, `Some(None)` without ages.
    pub fn oldest_ready(
        &mut self,
        task: usize,
        inputs: &[ChannelId],
        readable: impl Fn(usize) -> bool,
    ) -> Option<Option<u32>> {
        let set = self.gates.by_age.as_mut()?.get_mut(task)?;
        let channels = &self.channels;
        let mut stale = Vec::new();
        let mut found = None;
        for &(avail, i) in set.iter() {
            let c = &channels[inputs[i as usize] as usize];
            if c.avail != avail || !c.holds_input() {
                stale.push((avail, i));
            } else if readable(i as usize) {
                found = Some(i);
                break;
            }
        }
        for e in stale {
            set.remove(&e);
        }
        Some(found)
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
                    c.holds_input()
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
