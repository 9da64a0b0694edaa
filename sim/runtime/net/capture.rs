//! Channel-state capture: at the receiver, the in-flight records of one
//! input channel for one checkpoint, by sequence number (Flink's
//! `ChannelStatePersister` with `checkpointStarted`, `maybePersist` and the
//! barrier that stops it); at the sender, the queued output a priority
//! barrier overtakes (`PipelinedSubpartition.processPriorityBuffer` and
//! `alignedBarrierTimeout`).
//!
//! This file holds a capture; the network starts, takes and drops them in
//! `inflight.rs`.

use crate::engine::SimTime;
use crate::model::{CheckpointId, Record, RecordSizes};

/// Records captured as one channel's in-flight state, by sequence number.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub id: CheckpointId,
    pub first_seq: u64,
    pub records: Vec<Record>,
    /// Bytes of `records`.
    pub bytes: u64,
    /// When each part was captured and its bytes: what the channel-state
    /// writer gets to write, and when.
    pub writes: Vec<(SimTime, u64)>,
    /// Still recording arrivals (the channel's barrier has not arrived).
    pub open: bool,
    /// A buffer did not follow the previous one (a bug: reported by the
    /// consistent-cut check).
    pub gap: bool,
}

impl Capture {
    pub(super) fn new(id: CheckpointId) -> Capture {
        Capture {
            id,
            ..Capture::default()
        }
    }

    /// Appends a buffer captured at `at`, checking that sequence numbers
    /// stay consecutive.
    pub fn push(&mut self, seq: u64, buf: &[Record], sizes: &RecordSizes, at: SimTime) {
        if buf.is_empty() {
            return;
        }
        if self.records.is_empty() {
            self.first_seq = seq;
        } else if seq != self.first_seq + self.records.len() as u64 {
            self.gap = true;
        }
        self.records.extend_from_slice(buf);
        let bytes = sizes.total(buf);
        self.bytes += bytes;
        match self.writes.last_mut() {
            Some((t, b)) if *t == at => *b += bytes,
            _ => self.writes.push((at, bytes)),
        }
    }
}
