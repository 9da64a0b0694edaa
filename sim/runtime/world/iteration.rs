//! Iterations (feedback edges): when a loop is done. A task reading a
//! feedback edge would wait for that edge's end of data forever (its
//! sender ends only after it). Flink's iteration head ends its loop after a
//! timeout without feedback records; here the loop ends when it is
//! quiescent: every loop head has read the end of every other input, and no
//! record is on any channel between tasks on the loop (in an open buffer,
//! an output queue, the network or an input queue, restored ones
//! included). Then the end of data goes into every feedback channel, and
//! the heads end their input as usual. The check runs when a task on a loop
//! has nothing left to read.
//!
//! **Simplification:** the simulator sees every channel at once; a real
//! engine detects termination by a protocol (or Flink's timeout, which can
//! drop late records: not modelled).
//!
//! The loops' shape is `Loops` (`loop_state.rs`).

use super::*;

impl World<'_> {
    /// Task `t` has nothing to read: if it is on a loop, the loops may be
    /// done.
    pub(super) fn loop_idle(&mut self, t: TaskId) {
        let Some(l) = self.loops.as_ref() else {
            return;
        };
        if !l.on_loop[t as usize] || l.ended == Some(self.net.attempt) {
            return;
        }
        let heads_done = self.tasks.list.iter().enumerate().all(|(ti, task)| {
            let back = &l.feedback_in[ti];
            !back.iter().any(|&b| b)
                || (task.status == Status::Running
                    && task.eod.iter().zip(back).all(|(&eod, &b)| eod || b))
        });
        let quiet = l.watched.iter().all(|&ch| {
            let c = &self.net.channels[ch as usize];
            c.partial.is_empty()
                && c.out_queue.is_empty()
                && c.wire.is_empty()
                && c.in_queue.is_empty()
                && c.recovered.is_empty()
        });
        if !heads_done || !quiet {
            return;
        }
        let feedback = l.feedback.clone();
        self.loops.as_mut().expect("loops").ended = Some(self.net.attempt);
        self.rec.counters.loops_ended += 1;
        for ch in feedback {
            self.net
                .send_event(ch, Msg::EndOfData { drain: true }, false);
        }
    }
}
