//! The commit ledger: what each sink task owes the external store, so that
//! the late-commit check can judge every transaction against the point at
//! which its commit fell due (`world/commits.rs` writes the evidence).
//!
//! It holds, per task, the committables a committer received and has not
//! seen committed, the newest checkpoint the task knows completed, and per
//! (task, checkpoint) the transactions its snapshot held pre-committed. It
//! must never decide anything: the check does, from the evidence.

use crate::model::store::TxnId;
use crate::model::{CheckpointId, TaskId};
use std::collections::BTreeMap;

/// The commit ledger (see the module's docs).
#[derive(Default)]
pub(super) struct CommitLedger {
    /// Per task: committables its committer received, still pre-committed
    /// when last looked at (transaction → its checkpoint).
    pub(super) received: Vec<BTreeMap<TxnId, u64>>,
    /// Per (task, checkpoint): the transactions its snapshot of that
    /// checkpoint held pre-committed (for checkpoints at or below it).
    pub(super) promised: BTreeMap<(TaskId, CheckpointId), Vec<(TxnId, u64)>>,
}

impl CommitLedger {
    pub(super) fn new(tasks: usize) -> CommitLedger {
        CommitLedger {
            received: vec![BTreeMap::new(); tasks],
            promised: BTreeMap::new(),
        }
    }
}
