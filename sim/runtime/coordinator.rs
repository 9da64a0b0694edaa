//! The checkpoint coordinator's bookkeeping (Flink's `CheckpointCoordinator`):
//! pending checkpoints with their acknowledgements, completed (retained)
//! checkpoints, the failure counter and per-checkpoint statistics. The world
//! drives it; it holds data and the rules that need no clock.

use crate::engine::SimTime;
use crate::model::{ChannelId, CheckpointId};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// The channel positions a task recorded at its snapshot.
#[derive(Clone, Debug, Default)]
pub struct Cut {
    /// Records read from each input channel before the snapshot.
    pub inputs: Vec<(ChannelId, u64)>,
    /// Records sent on each output channel before the snapshot.
    pub outputs: Vec<(ChannelId, u64)>,
}

/// One task's contribution to a checkpoint.
pub struct TaskAck {
    pub state: Vec<u8>,
    pub cut: Cut,
    pub input_ended: bool,
    pub start_delay_ns: u64,
    pub alignment_ns: u64,
    /// Set when the acknowledgement reached the coordinator.
    pub arrived: bool,
}

pub struct Pending {
    pub id: CheckpointId,
    pub trigger_time: SimTime,
    pub acks: Vec<Option<TaskAck>>,
    pub remaining: u32,
    pub finalizing: bool,
}

/// A completed checkpoint: the state of every task, restorable.
pub struct Completed {
    pub id: CheckpointId,
    pub trigger_time: SimTime,
    pub completed_at: SimTime,
    /// State bytes per task (`None` if a task's ack was missing).
    pub states: Vec<Option<Vec<u8>>>,
    pub state_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Completed,
    /// Timed out (`CHECKPOINT_EXPIRED`, counted as a failure).
    Expired,
    /// A task declined: a newer barrier or a cancellation marker.
    Declined,
    /// Subsumed by a newer completed checkpoint.
    Subsumed,
    /// The job failed over while it was pending.
    Failover,
}

/// Metrics of one checkpoint (DESIGN.md §6).
#[derive(Clone, Debug, Serialize)]
pub struct CheckpointStats {
    pub id: CheckpointId,
    pub trigger_ns: u64,
    pub end_ns: u64,
    pub duration_ns: u64,
    pub outcome: Outcome,
    pub state_bytes: u64,
    pub acks: u32,
    pub start_delay_max_ns: u64,
    pub alignment_max_ns: u64,
}

pub struct Coordinator {
    pub next_id: CheckpointId,
    pub pending: BTreeMap<CheckpointId, Pending>,
    pub retained: VecDeque<Rc<Completed>>,
    pub num_retained: usize,
    pub last_completion: Option<SimTime>,
    pub last_completed_id: CheckpointId,
    /// Consecutive counted failures (Flink's `CheckpointFailureManager`).
    pub failure_counter: u32,
    pub periodic_generation: u32,
    /// The last checkpoint covered all input: stop triggering, tasks finish.
    pub finishing: bool,
    /// That checkpoint: tasks finish when notified of it.
    pub final_id: Option<CheckpointId>,
    pub stats: Vec<CheckpointStats>,
    /// Ids completed and ids aborted, for the protocol checker.
    pub completed_ids: Vec<CheckpointId>,
    pub aborted_ids: Vec<CheckpointId>,
}

impl Coordinator {
    pub fn new(num_retained: u32) -> Coordinator {
        Coordinator {
            next_id: 1,
            pending: BTreeMap::new(),
            retained: VecDeque::new(),
            num_retained: num_retained.max(1) as usize,
            last_completion: None,
            last_completed_id: 0,
            failure_counter: 0,
            periodic_generation: 0,
            finishing: false,
            final_id: None,
            stats: Vec::new(),
            completed_ids: Vec::new(),
            aborted_ids: Vec::new(),
        }
    }

    pub fn latest(&self) -> Option<Rc<Completed>> {
        self.retained.back().cloned()
    }

    pub fn stats_of(p: &Pending, end: SimTime, outcome: Outcome) -> CheckpointStats {
        let acks = p.acks.iter().flatten().filter(|a| a.arrived);
        let (mut bytes, mut n, mut delay, mut align) = (0u64, 0u32, 0u64, 0u64);
        for a in acks {
            bytes += a.state.len() as u64;
            n += 1;
            delay = delay.max(a.start_delay_ns);
            align = align.max(a.alignment_ns);
        }
        CheckpointStats {
            id: p.id,
            trigger_ns: p.trigger_time.0,
            end_ns: end.0,
            duration_ns: end.since(p.trigger_time).0,
            outcome,
            state_bytes: bytes,
            acks: n,
            start_delay_max_ns: delay,
            alignment_max_ns: align,
        }
    }

    /// Adds a completed checkpoint, dropping the oldest beyond `num_retained`.
    pub fn add_completed(&mut self, c: Completed) {
        self.last_completed_id = c.id;
        self.completed_ids.push(c.id);
        self.retained.push_back(Rc::new(c));
        while self.retained.len() > self.num_retained {
            self.retained.pop_front();
        }
    }
}
