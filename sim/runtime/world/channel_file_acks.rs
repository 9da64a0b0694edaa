//! A task's part in a shared channel-state file (`channel_files.rs`): it
//! delivers its last buffer to the file's writer, the file closes once every
//! running member has, and then every member acknowledges.

use super::channel_files::{file_closed, state_written};
use super::*;

impl World<'_> {
    /// Whether checkpoint `id`'s channel state goes through the shared
    /// channel-state files.
    pub(super) fn uses_channel_files(&self, id: CheckpointId) -> bool {
        self.plan.scenario.checkpoint.storage == StorageKind::Filesystem
            && !self.sp.by_id.contains_key(&id)
            && self.plan.cfg.algorithm.info().first_barrier != BarrierKind::Aligned
    }

    /// Task `t` delivered its last buffer of `id` to its file's writer
    /// (`completeInput`, `completeOutput`); the file closes if it was the
    /// last running member.
    pub(super) fn complete_channel_file(&mut self, t: TaskId, p: PartialAck) {
        let id = p.id;
        let g = self.files.group_of[t as usize];
        if self.plan.cfg.mutants.has(Mutant::ChannelFileResultEarly) {
            // Mutant: the subtask's result completes when its own buffers
            // are written, before the shared file is closed.
            let state = self.state_write_bytes(t, &p);
            let s = &self.plan.scenario;
            let own = file_closed(s, p.snapshot_at, &p.writes).unwrap_or(SimTime::ZERO);
            let durable = own.max(state_written(s, p.snapshot_at, state));
            self.send_ack(t, p.clone(), durable, durable);
        }
        self.files.open.entry((g, id)).or_default().push((t, p));
        self.close_channel_file(g, id);
    }

    /// Closes the file of group `g` for `id` once every running member
    /// delivered its last buffer, and completes every member's result;
    /// drops files of checkpoints no longer pending.
    fn close_channel_file(&mut self, g: u32, id: CheckpointId) {
        let coord = &self.coord;
        self.files.open.retain(|(_, i), _| coord.is_pending(*i));
        let Some(done) = self.files.open.get(&(g, id)) else {
            return;
        };
        let members = &self.files.members[g as usize];
        let waiting = members.iter().any(|&m| {
            self.tasks.list[m as usize].status == Status::Running && done.iter().all(|d| d.0 != m)
        });
        if waiting {
            return;
        }
        let done = self.files.open.remove(&(g, id)).unwrap_or_default();
        let s = &self.plan.scenario;
        let opened = done.iter().map(|d| d.1.snapshot_at).min();
        let parts: Vec<(SimTime, u64)> = done.iter().flat_map(|d| d.1.writes.clone()).collect();
        let closed = opened.and_then(|o| file_closed(s, o, &parts));
        let now = self.net.now;
        let early = self.plan.cfg.mutants.has(Mutant::ChannelFileResultEarly);
        for (t, p) in done {
            let state = self.state_write_bytes(t, &p);
            let op = state_written(&self.plan.scenario, p.snapshot_at, state);
            let durable = op.max(closed.unwrap_or(SimTime::ZERO)).max(now);
            if early {
                // The ack already left; the state is durable only now.
                let acks = self.coord.pending.get_mut(&id).map(|c| &mut c.acks);
                if let Some(Some(a)) = acks.and_then(|a| a.get_mut(t as usize)) {
                    if durable > a.durable_at {
                        fired(Mutant::ChannelFileResultEarly);
                    }
                    a.durable_at = a.durable_at.max(durable);
                }
                continue;
            }
            let early_ack = self
                .plan
                .cfg
                .mutants
                .has(Mutant::AckBeforeChannelStateWritten);
            let written = match early_ack {
                true => op.max(now),
                false => durable,
            };
            if written < durable {
                fired(Mutant::AckBeforeChannelStateWritten);
            }
            self.send_ack(t, p, durable, written);
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const ChannelFileResultEarly: Mutant = Mutant::declare(&MutantInfo {
            name: "channel-file-result-early",
            part: "channel-state files",
            what: "a subtask sharing a channel-state file acknowledges once its own buffers are written, before the writer closed the file with the other subtasks' buffers; the coordinator completes a checkpoint whose channel-state file is not persisted",
            modelled_on: "FLINK-26803's merged channel-state files: a subtask's ChannelStateWriteResult may complete only when the shared file is closed (tryFinishResult waits for every subtask of the file); a result completed per subtask points into a file that is still being written",
            caught_by: "protocol",
            applies: &[("channel-state-files", "unaligned")],
        });
    }
}
