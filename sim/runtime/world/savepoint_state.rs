//! The savepoints component: the savepoint requests not yet triggered, the
//! report of every request, the request each triggered savepoint belongs to,
//! the stop-with-savepoint that ended the job, every snapshot the run
//! returns, and what the last completed checkpoint covers of the input.
//!
//! It keeps books only; `world/savepoints.rs` triggers, completes and fails
//! savepoints.

use crate::model::{CheckpointId, Lineage};
use crate::runtime::output::{SavepointReport, SnapshotOut};
use crate::scenario::SavepointSpec;
use std::collections::{BTreeMap, VecDeque};

/// A run's savepoints (see the module's docs).
pub(super) struct Savepoints {
    /// Savepoint requests not yet triggered, in time order.
    pub(super) queue: VecDeque<SavepointSpec>,
    /// The request (index into `reports`) of each queued entry.
    pub(super) queue_request: VecDeque<usize>,
    /// Per savepoint request, what became of it.
    pub(super) reports: Vec<SavepointReport>,
    /// The request each triggered savepoint id belongs to.
    pub(super) request_of: BTreeMap<CheckpointId, usize>,
    /// A retry of the queued savepoint is scheduled.
    pub(super) retry: bool,
    /// Savepoint ids and their requests (for barrier kinds and completion).
    pub(super) by_id: BTreeMap<CheckpointId, SavepointSpec>,
    /// A stop-with-savepoint completed: the job is finishing.
    pub(super) stopped_with: Option<CheckpointId>,
    pub(super) snapshots: Vec<SnapshotOut>,
    pub(super) complete_below: Option<Vec<u64>>,
    pub(super) complete_exempt: Vec<Lineage>,
}

impl Savepoints {
    /// `requests` queued in the order given, none triggered.
    pub(super) fn new(requests: &[SavepointSpec]) -> Savepoints {
        Savepoints {
            queue: requests.iter().cloned().collect(),
            queue_request: (0..requests.len()).collect(),
            reports: requests
                .iter()
                .map(|sp| SavepointReport {
                    requested_at_ns: sp.at.0,
                    stop: sp.stop,
                    drain: sp.drain,
                    attempts: Vec::new(),
                    completed: None,
                    failure: None,
                })
                .collect(),
            request_of: BTreeMap::new(),
            retry: false,
            by_id: BTreeMap::new(),
            stopped_with: None,
            snapshots: Vec::new(),
            complete_below: None,
            complete_exempt: Vec::new(),
        }
    }
}
