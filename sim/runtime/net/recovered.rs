//! Recovered input channels. After a restore with channel state, each
//! channel's restored buffers wait at its receiver, ahead of the channel's
//! new data (Flink's `RecoveredInputChannel`). The restored records take the
//! channel's first sequence numbers and the sender's records continue after
//! them, so the channel reads as one stream: what the old attempt had in
//! flight, then what the new attempt sends. That keeps the consistent-cut
//! check exact for a checkpoint taken while restored buffers are still
//! unread.
//!
//! Without checkpointing during recovery (Flink ≤ 1.20, and Flink 2.x by
//! default) the task reads every restored buffer before anything else and
//! no checkpoint is triggered until all are read. With it (FLIP-547) a
//! channel's restored buffers are simply the head of that channel: the task
//! reads its channels in their usual order, a priority barrier overtakes
//! restored buffers as it overtakes queued data, and an unaligned
//! checkpoint persists the restored buffers not yet read as that channel's
//! state, once ([`Net::start_capture`]).

use super::{Net, Record};
use crate::model::ChannelId;
use crate::mutant::{fired, Mutant};

impl Net {
    /// Puts restored input channel state at the receiver of `ch`, in
    /// buffers, ahead of any new data. Called before the sender's restored
    /// output channel state goes out, which continues the numbering.
    pub fn restore_input(&mut self, ch: ChannelId, records: &[Record]) {
        let stripped: Vec<Record>;
        let records = match self.strip_payloads && records.iter().any(|r| !r.payload.is_none()) {
            true => {
                // Mutant: the records come back without their payloads.
                fired(Mutant::ChannelStateDropsPayload);
                stripped = records
                    .iter()
                    .map(|&r| Record {
                        payload: crate::model::Payload::NONE,
                        ..r
                    })
                    .collect();
                &stripped[..]
            }
            false => records,
        };
        let mut rest = records;
        while !rest.is_empty() {
            let (chunk, tail) = rest.split_at(self.buffer_len(ch, rest));
            self.channels[ch as usize]
                .recovered
                .push_back(chunk.to_vec());
            rest = tail;
        }
        let n = records.len() as u64;
        if n > 0 {
            self.input_gained(ch);
        }
        let c = &mut self.channels[ch as usize];
        c.sent += n;
        c.arrived += n;
        if self.during_recovery && n > 0 && c.in_queue.is_empty() {
            self.stamp_avail(ch);
        }
    }

    /// Restored buffers of `ch` not read yet.
    pub fn has_recovered(&self, ch: ChannelId) -> bool {
        !self.channels[ch as usize].recovered.is_empty()
    }

    /// Restored records of `ch` not read yet.
    pub fn recovered_records(&self, ch: ChannelId) -> u64 {
        let c = &self.channels[ch as usize];
        c.recovered.iter().map(|b| b.len() as u64).sum()
    }

    /// The receiver reads up to `max_records` of the next restored buffer of
    /// `ch`. No credit returns: restored buffers never were the sender's to
    /// spend.
    pub fn take_recovered(&mut self, ch: ChannelId, max_records: usize) -> Option<Vec<Record>> {
        let c = &mut self.channels[ch as usize];
        let head = c.recovered.front_mut()?;
        let buf = if head.len() > max_records {
            head.drain(..max_records).collect()
        } else {
            c.recovered.pop_front().expect("a head buffer")
        };
        let seq = c.received;
        // Restored buffers hold the sequence numbers below the new data:
        // read in their order, they are always next.
        self.order.read(self.now, ch, seq, seq, buf.len() as u64);
        c.received += buf.len() as u64;
        if self.persist_recovered_twice {
            if let Some(cap) = c.capture.as_mut().filter(|cap| cap.open) {
                // Mutant: a restored buffer read while its channel's state
                // is being recorded is recorded again, though it was
                // persisted when the capture started.
                fired(Mutant::RecoveredBuffersPersistedTwice);
                cap.push(seq, &buf, &self.sizes, self.now);
            }
        }
        if self.during_recovery && !(c.recovered.is_empty() && c.in_queue.is_empty()) {
            self.stamp_avail(ch);
        }
        Some(buf)
    }

    /// Adds the restored buffers of `ch` not read yet to a capture that
    /// starts now: they come first in the channel's state.
    pub(super) fn capture_recovered(&mut self, ch: ChannelId, cap: &mut super::Capture) {
        let c = &self.channels[ch as usize];
        if c.recovered.is_empty() {
            return;
        }
        if self.skip_recovered {
            // Mutant: the restored buffers not read yet are in no snapshot.
            fired(Mutant::CheckpointDuringRecovery);
            return;
        }
        let mut seq = c.received;
        for buf in &c.recovered {
            cap.push(seq, buf, &self.sizes, self.now);
            seq += buf.len() as u64;
        }
        self.recovered_persisted += seq - c.received;
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CheckpointDuringRecovery: Mutant = Mutant::declare(&MutantInfo {
            name: "checkpoint-during-recovery",
            part: "coordinator triggering",
            what: "checkpoints are triggered while restored in-flight data is still being replayed, and their channel state leaves out the restored buffers not read yet: those records are in no snapshot",
            modelled_on: "FLINK-20654 (a checkpoint started before a recovered channel's state was consumed skipped its recovered buffers), and the in-flight data-loss race found while stabilising checkpointing during recovery (FLIP-547)",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "unaligned"), ("recovery-checkpoints", "unaligned")],
        });
        pub const ChannelStateDropsPayload: Mutant = Mutant::declare(&MutantInfo {
            name: "channel-state-drops-payload",
            part: "channel state restore",
            what: "restored input channel state comes back without its records' payloads: each in-flight record is read with its key, value and lineage but not its body",
            modelled_on: "in-flight data read back with another serializer than the one that wrote it (a record type changed between snapshot and restore, which unaligned checkpoints cannot migrate and Flink must refuse): the records deserialize, but not as they were",
            caught_by: "exactly-once-output",
            applies: &[("backpressure", "unaligned")],
        });
        pub const RecoveredBuffersPersistedTwice: Mutant = Mutant::declare(&MutantInfo {
            name: "recovered-buffers-persisted-twice",
            part: "checkpointing during recovery",
            what: "a restored buffer read before its channel's barrier is persisted again, though the capture already holds it from its start",
            modelled_on: "FLINK-40016: LocalInputChannel persisted recovered buffers twice into an unaligned checkpoint's channel state (once at checkpointStarted, again through maybePersist when polled), corrupting the state",
            caught_by: "consistent-cut",
            applies: &[("recovery-checkpoints", "unaligned")],
        });
    }
}
