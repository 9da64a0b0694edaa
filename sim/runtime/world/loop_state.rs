//! A job's loops (feedback edges): the tasks on a loop, the feedback
//! channels and the channels watched for quiescence (`world/iteration.rs`
//! says when a loop ends).
//!
//! It holds the loops' shape and whether they ended; it never reads a
//! channel itself.

use crate::model::{ChannelId, ExecGraph, TaskId};
use crate::scenario::Scenario;

/// A job's loops.
pub(super) struct Loops {
    /// Per task: it runs an operator on a cycle.
    pub(super) on_loop: Vec<bool>,
    /// Per task and input: the input is a feedback edge's channel.
    pub(super) feedback_in: Vec<Vec<bool>>,
    /// The feedback channels.
    pub(super) feedback: Vec<ChannelId>,
    /// The channels between tasks on a loop (what they send out of the
    /// loop cannot come back).
    pub(super) watched: Vec<ChannelId>,
    /// The attempt whose loops ended.
    pub(super) ended: Option<u32>,
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
