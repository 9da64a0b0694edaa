//! The recovery component: what a recovery in progress must still do and
//! what every recovery measured — the restored in-flight records not yet
//! processed again, the restored output state still ahead on each channel,
//! when the failure being recovered from struck, the progress to regain
//! (`RecoveryClock`) and each recovery's time.
//!
//! It only keeps books; `world/recovery.rs` and `world/region.rs` restore
//! tasks, and `world/recovery_time.rs` moves the clock.

use crate::engine::SimTime;
use crate::model::TaskId;

/// A run's recovery bookkeeping (see the module's docs).
pub(super) struct Recovery {
    /// Restored in-flight records not yet processed again.
    pub(super) pending: u64,
    /// Per channel: restored output-state records still ahead in line.
    pub(super) out_left: Vec<u64>,
    /// The crash a recovery started from, until sources are past it.
    pub(super) since: Option<SimTime>,
    /// Every recovery's time (`RunOutput::recovery_ns`).
    pub(super) times_ns: Vec<u64>,
    /// The progress a recovery must regain (`world/recovery_time.rs`).
    pub(super) clock: RecoveryClock,
    /// Per restore from files, its slowest task's restore time
    /// (`RunOutput::restore_ns`), and when the last one started.
    pub(super) restore_ns: Vec<u64>,
    pub(super) restoring_since: Option<SimTime>,
}

impl Recovery {
    /// Nothing to recover, over `channels` channels and `partitions`
    /// source partitions.
    pub(super) fn new(channels: usize, partitions: usize) -> Recovery {
        Recovery {
            pending: 0,
            out_left: vec![0; channels],
            since: None,
            times_ns: Vec::new(),
            clock: RecoveryClock::new(partitions),
            restore_ns: Vec::new(),
            restoring_since: None,
        }
    }
}

/// Progress the restarted job must regain.
#[derive(Default)]
pub(super) struct RecoveryClock {
    /// Per global source partition: the offset the restarted job must
    /// emit up to (exclusive) again.
    pub(super) target: Vec<u64>,
    pub(super) reached: Vec<bool>,
    /// Partitions not yet reached.
    pub(super) behind: usize,
    /// The job (or the failed region) was redeployed since the failure.
    pub(super) restarted: bool,
    /// The source task that emitted each partition (learned from its
    /// emissions: partitions never emitted have nothing to regain).
    pub(super) owner: Vec<Option<TaskId>>,
}

impl RecoveryClock {
    pub(super) fn new(partitions: usize) -> RecoveryClock {
        RecoveryClock {
            target: vec![0; partitions],
            reached: vec![true; partitions],
            behind: 0,
            restarted: false,
            owner: vec![None; partitions],
        }
    }

    pub(super) fn reach(&mut self, p: usize) {
        if !self.reached[p] {
            self.reached[p] = true;
            self.behind -= 1;
        }
    }
}
