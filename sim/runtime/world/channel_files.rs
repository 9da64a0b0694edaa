//! Channel-state files shared by subtasks (Flink's merged channel-state
//! files, FLINK-26803, `ChannelStateCheckpointWriter`).
//!
//! With `filesystem` storage, the channel state of an unaligned or
//! aligned-timeout checkpoint is not written by the task itself: the
//! subtasks of one operator on one worker share a channel-state writer (up
//! to `max_subtasks_per_channel_state_file` of them), which writes their
//! captured buffers into one file, one write after the other in the order
//! they were captured. The file is opened at the first member's snapshot
//! and closed once every member delivered its last buffer; only then does
//! any member's channel-state result complete (`tryFinishResult`,
//! `finishWriteAndResult`), so a subtask acknowledges no earlier than the
//! slowest subtask of its file. Operator state goes through each task's own
//! stream in parallel (Flink's asynchronous snapshot thread).
//!
//! Without `[cluster]` every subtask is on a worker of its own (Flink's
//! default of one slot per TaskManager), so every file has one member.
//! `memory` storage sends channel state inside the ack and shares nothing;
//! Flink's in-memory streams would couple the subtasks' results the same
//! way but cost no write time, which the model leaves out. Checkpoints of
//! algorithms whose barriers start aligned (aligned, at-least-once,
//! stop-the-world, chandy-lamport) and savepoints write on the task's own
//! stream (`writes_done`), as Flink starts no channel-state writer for an
//! aligned barrier.
//!
//! This file holds the files' state and timing; a task's part in a shared
//! file (its last buffer delivered, the file closed, every member's ack)
//! is in `channel_file_acks.rs`.

use super::tasks::PartialAck;
use crate::engine::{SimDuration, SimTime};
use crate::model::{CheckpointId, ExecGraph, TaskId};
use crate::scenario::{Scenario, StorageKind};
use std::collections::BTreeMap;

/// The file groups of the tasks and the files being written.
pub(super) struct ChannelFiles {
    /// The file group of each task.
    pub(super) group_of: Vec<u32>,
    /// The tasks of each group, in subtask order.
    pub(super) members: Vec<Vec<TaskId>>,
    /// Per (group, checkpoint): the members that delivered their last
    /// buffer, with their snapshots, in arrival order.
    pub(super) open: BTreeMap<(u32, CheckpointId), Vec<(TaskId, PartialAck)>>,
}

impl ChannelFiles {
    /// Groups the subtasks of each operator by worker (slot `i` holds
    /// subtask `i` of every operator), `max` per file in subtask order, as
    /// Flink's `ChannelStateWriteRequestExecutorFactory` hands out writers
    /// per job vertex.
    pub(super) fn new(scenario: &Scenario, exec: &ExecGraph) -> ChannelFiles {
        let max = scenario
            .checkpoint
            .max_subtasks_per_channel_state_file
            .max(1);
        let mut key_group: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut members: Vec<Vec<TaskId>> = Vec::new();
        let mut group_of = Vec::with_capacity(exec.tasks.len());
        for (t, task) in exec.tasks.iter().enumerate() {
            let worker = match &scenario.cluster {
                Some(c) => c.worker_of_slot(task.subtask),
                None => task.subtask,
            };
            let key = (task.operator.0, worker);
            let g = match key_group.get(&key) {
                Some(&g) if (members[g as usize].len() as u32) < max => g,
                _ => {
                    members.push(Vec::new());
                    members.len() as u32 - 1
                }
            };
            key_group.insert(key, g);
            members[g as usize].push(t as TaskId);
            group_of.push(g);
        }
        ChannelFiles {
            group_of,
            members,
            open: BTreeMap::new(),
        }
    }

    /// A restarted task's snapshots in open files are gone with it.
    pub(super) fn forget(&mut self, t: TaskId) {
        let g = self.group_of[t as usize];
        for ((gg, _), done) in self.open.iter_mut() {
            if *gg == g {
                done.retain(|(m, _)| *m != t);
            }
        }
    }
}

/// When a file written by one writer is closed: opened at `opened`
/// (`storage_latency`), then each part written after the one before, no
/// earlier than it was captured, at the storage's bandwidth. `None` if
/// nothing was written: Flink's file streams keep a few bytes in memory
/// and create no file.
pub(super) fn file_closed(
    s: &Scenario,
    opened: SimTime,
    parts: &[(SimTime, u64)],
) -> Option<SimTime> {
    if parts.iter().all(|p| p.1 == 0) {
        return None;
    }
    let mut parts = parts.to_vec();
    parts.sort_by_key(|p| p.0); // stable: members, then capture order
    let mut done = opened.plus(s.checkpoint.storage_latency);
    for (at, bytes) in parts {
        done = done.max(at).plus(transfer(s, bytes));
    }
    Some(done)
}

/// When a task's operator state is written: its own stream, opened at the
/// snapshot.
pub(super) fn state_written(s: &Scenario, snapshot_at: SimTime, state: u64) -> SimTime {
    snapshot_at
        .plus(s.checkpoint.storage_latency)
        .plus(transfer(s, state))
}

/// The time `bytes` take at the storage's bandwidth (saturating).
pub(super) fn transfer(s: &Scenario, bytes: u64) -> SimDuration {
    let bw = u128::from(s.checkpoint.storage_bytes_per_sec.max(1));
    let ns = u128::from(bytes) * 1_000_000_000 / bw;
    SimDuration(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// When a task's checkpoint writes are done, at `now` (every barrier
/// arrived), for a snapshot taken at `snapshot_at` with `state` bytes of
/// operator state and channel state written in `parts` (when captured,
/// bytes); the ack leaves then.
///
/// `memory` (Flink's `JobManagerCheckpointStorage`): nothing is written
/// before the ack; operator and channel state travel inside it to the
/// coordinator's heap: `storage_latency` + bytes / bandwidth from `now`.
/// `filesystem`: one stream per task, opened at the snapshot
/// (`storage_latency`), writes the operator state and then each part of
/// the channel state once it is captured (output state at the barrier,
/// input state as buffers arrive until the last barrier), one after the
/// other at `storage_bytes_per_sec`; with `channel = false` the channel
/// state is left out (mutant `ack-before-channel-state-written`).
pub(super) fn writes_done(
    s: &Scenario,
    now: SimTime,
    snapshot_at: SimTime,
    state: u64,
    parts: &[(SimTime, u64)],
    channel: bool,
) -> SimTime {
    let latency = s.checkpoint.storage_latency;
    if s.checkpoint.storage == StorageKind::Memory {
        let bytes = parts.iter().fold(state, |b, p| b.saturating_add(p.1));
        // Written once the snapshot's call returned (a blocked flush).
        return now.max(snapshot_at).plus(latency).plus(transfer(s, bytes));
    }
    let mut done = snapshot_at.plus(latency).plus(transfer(s, state));
    if channel {
        let mut parts = parts.to_vec();
        parts.sort_by_key(|p| p.0); // stable: capture order within an instant
        for (at, bytes) in parts {
            done = done.max(at).plus(transfer(s, bytes));
        }
    }
    done.max(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobGraph;

    fn job(cluster: &str, max: u32) -> Scenario {
        let text = format!(
            "version = 1\nname = \"f\"\n[[operators]]\nid = \"a\"\nkind = \"source\"\nparallelism = 4\n\
             [[operators]]\nid = \"k\"\nkind = \"sink-2pc\"\nparallelism = 4\n\
             [[edges]]\nfrom = \"a\"\nto = \"k\"\npartitioning = \"rebalance\"\n\
             [checkpoint]\nstorage = \"filesystem\"\nstorage_latency = \"1ms\"\n\
             storage_bytes_per_sec = 1_000_000\nmax_subtasks_per_channel_state_file = {max}\n{cluster}"
        );
        crate::scenario::parse_str(&text, "f.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn groups(s: &Scenario) -> Vec<Vec<TaskId>> {
        let exec = ExecGraph::build(s, &JobGraph::build(s));
        ChannelFiles::new(s, &exec).members
    }

    #[test]
    fn subtasks_of_one_operator_on_one_worker_share_a_file_up_to_the_maximum() {
        // Tasks 0-3 are the sources, 4-7 the sinks.
        let one_worker = "[cluster]\nworkers = 1\nslots_per_worker = 4\n";
        assert_eq!(
            groups(&job(one_worker, 5)),
            [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(
            groups(&job(one_worker, 3)),
            [vec![0, 1, 2], vec![3], vec![4, 5, 6], vec![7]]
        );
        // Spread over two workers: slots 0 and 2 on worker 0.
        let two = "[cluster]\nworkers = 2\nslots_per_worker = 2\n";
        assert_eq!(
            groups(&job(two, 5)),
            [vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
        );
        // No cluster: a worker per slot, a file per subtask.
        assert_eq!(groups(&job("", 5)).len(), 8);
    }

    #[test]
    fn a_shared_file_writes_its_members_parts_one_after_the_other() {
        let s = job("", 5);
        let t = |ms: u64| SimTime(ms * 1_000_000);
        // 1000 bytes at 1 MB/s take 1 ms; the file opens 1 ms after the
        // first snapshot (t 10).
        let parts = [(t(10), 3000), (t(10), 2000), (t(20), 1000)];
        assert_eq!(file_closed(&s, t(10), &parts), Some(t(21)));
        // Falling behind: every part waits for the one before.
        let parts = [(t(10), 6000), (t(12), 6000)];
        assert_eq!(file_closed(&s, t(10), &parts), Some(t(23)));
        // Nothing written: no file.
        assert_eq!(file_closed(&s, t(10), &[]), None);
        assert_eq!(file_closed(&s, t(10), &[(t(11), 0)]), None);
        // Operator state has its own stream.
        assert_eq!(state_written(&s, t(10), 2000), t(13));
    }
}
