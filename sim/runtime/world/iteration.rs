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

use super::*;

/// A job's loops.
pub(super) struct Loops {
    /// Per task: it runs an operator on a cycle.
    on_loop: Vec<bool>,
    /// Per task and input: the input is a feedback edge's channel.
    feedback_in: Vec<Vec<bool>>,
    /// The feedback channels.
    feedback: Vec<ChannelId>,
    /// The channels between tasks on a loop (what they send out of the
    /// loop cannot come back).
    watched: Vec<ChannelId>,
    /// The attempt whose loops ended.
    ended: Option<u32>,
}

impl Loops {
    pub(super) fn new(scenario: &Scenario, exec: &ExecGraph) -> Option<Loops> {
        let back: Vec<&crate::scenario::EdgeSpec> =
            scenario.edges.iter().filter(|e| e.feedback).collect();
        if back.is_empty() {
            return None;
        }
        // Operators on a cycle: reached from a feedback edge's target and
        // reaching its source.
        let n = scenario.operators.len();
        let reach = |from: usize| {
            let mut seen = vec![false; n];
            let mut todo = vec![from];
            while let Some(op) = todo.pop() {
                if std::mem::replace(&mut seen[op], true) {
                    continue;
                }
                todo.extend(
                    scenario
                        .edges
                        .iter()
                        .filter(|e| e.from.0 as usize == op)
                        .map(|e| e.to.0 as usize),
                );
            }
            seen
        };
        let mut op_on_loop = vec![false; n];
        for e in &back {
            let from_target = reach(e.to.0 as usize);
            for (op, on) in op_on_loop.iter_mut().enumerate() {
                *on |= from_target[op] && reach(op)[e.from.0 as usize];
            }
        }
        let is_back = |ch: ChannelId| {
            let c = &exec.channels[ch as usize];
            back.iter().any(|e| e.from == c.from_op && e.to == c.to_op)
        };
        let on_loop: Vec<bool> = (exec.tasks.iter())
            .map(|t| t.chain.iter().any(|op| op_on_loop[op.0 as usize]))
            .collect();
        Some(Loops {
            feedback_in: (exec.tasks.iter())
                .map(|t| t.inputs.iter().map(|&ch| is_back(ch)).collect())
                .collect(),
            feedback: (0..exec.channels.len() as ChannelId)
                .filter(|&ch| is_back(ch))
                .collect(),
            watched: (0..exec.channels.len() as ChannelId)
                .filter(|&ch| {
                    let c = &exec.channels[ch as usize];
                    on_loop[c.from as usize] && on_loop[c.to as usize]
                })
                .collect(),
            on_loop,
            ended: None,
        })
    }
}

impl Loops {
    /// Per input of task `t`: a feedback edge's channel.
    pub(super) fn feedback_inputs(&self, t: TaskId) -> Vec<bool> {
        self.feedback_in[t as usize].clone()
    }
}

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
            self.net.send_event(ch, Msg::EndOfData, false);
        }
    }
}
