//! The uncoordinated families' state of one run (`world/local.rs` says
//! what they do): each task's rule and timer stream, checkpoints being
//! written, durable ones above the line, the line, absolute channel offsets,
//! final checkpoints and the history the end-of-run checks read.
//!
//! It holds state only; `world/local.rs` acts on it.

use crate::engine::{SimRng, SimTime, Stream};
use crate::model::{CheckpointId, ExecGraph, TaskId};
use crate::protocol::local::{LocalConfig, LocalRule};
use crate::protocol::Coordination;
use crate::runtime::config::RunConfig;
use crate::runtime::coordinator::{Cut, TaskSnapshot};
use std::collections::BTreeMap;
use std::rc::Rc;

/// One task's checkpoint of its own.
pub(super) struct LocalCheckpoint {
    pub(super) id: CheckpointId,
    pub(super) at: SimTime,
    pub(super) snapshot: TaskSnapshot,
    /// Absolute positions: records read per input channel, sent per output
    /// channel.
    pub(super) cut: Cut,
    /// The rule's state right after the checkpoint.
    pub(super) rule: Box<dyn LocalRule>,
}

/// The uncoordinated families' state of one run.
pub(super) struct Local {
    pub(super) rules: Vec<Box<dyn LocalRule>>,
    pub(super) rng: SimRng,
    pub(super) next_id: CheckpointId,
    /// Checkpoints whose writes are under way.
    pub(super) writing: BTreeMap<(TaskId, CheckpointId), LocalCheckpoint>,
    /// Per task: its durable checkpoints above its checkpoint in the line,
    /// oldest first.
    pub(super) above: Vec<Vec<Rc<LocalCheckpoint>>>,
    /// Per task: its checkpoint in the current line (`None`: its initial
    /// state).
    pub(super) line: Vec<Option<Rc<LocalCheckpoint>>>,
    /// Per channel: the absolute position of this attempt's first record.
    pub(super) offset: Vec<u64>,
    /// Per task: its checkpoint at the end of its input.
    pub(super) final_id: Vec<Option<CheckpointId>>,
    /// Per task: `(id, cut, index)` of every checkpoint taken, oldest
    /// first (the end-of-run checks, made on runs without a restart).
    pub(super) history: Vec<Vec<(CheckpointId, Cut, u64)>>,
    /// Per channel: what its sender had sent (this attempt) at its last
    /// checkpoint (the rule's `sent_to`).
    pub(super) sent_at_checkpoint: Vec<u64>,
    /// Per channel: `(sender, receiver)`.
    pub(super) ends: Vec<(TaskId, TaskId)>,
    pub(super) restarted: bool,
}

impl Local {
    pub(super) fn new(exec: &ExecGraph, cfg: &RunConfig) -> Option<Local> {
        let Coordination::Local(make) = cfg.algorithm.info().coordination else {
            return None;
        };
        let n = exec.tasks.len();
        let rules = (0..n as u32)
            .map(|task| {
                make(&LocalConfig {
                    task,
                    tasks: n as u32,
                    mutants: cfg.mutants,
                })
            })
            .collect();
        Some(Local {
            rules,
            rng: SimRng::new(cfg.seed, Stream::LocalTimers),
            next_id: 1,
            writing: BTreeMap::new(),
            above: vec![Vec::new(); n],
            line: vec![None; n],
            offset: vec![0; exec.channels.len()],
            final_id: vec![None; n],
            history: vec![Vec::new(); n],
            ends: exec.channels.iter().map(|c| (c.from, c.to)).collect(),
            sent_at_checkpoint: vec![0; exec.channels.len()],
            restarted: false,
        })
    }

    pub(super) fn cut_of(&self, t: usize) -> &Cut {
        static INITIAL: Cut = Cut {
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        self.line[t].as_ref().map_or(&INITIAL, |c| &c.cut)
    }
}
