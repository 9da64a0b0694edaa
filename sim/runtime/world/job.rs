//! The job component: the job's status, why it failed, how often it
//! restarted, and the jitter of the coordinator's RPCs to its tasks.
//!
//! It must never decide anything itself: `world/recovery.rs`,
//! `world/faults.rs` and `world/savepoints.rs` change the status.

use crate::engine::SimRng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JobStatus {
    Running,
    Restarting,
    Finished,
    Failed,
    Cancelled,
}

/// The job's status and control plane (see the module's docs).
pub(super) struct Job {
    pub(super) status: JobStatus,
    pub(super) failed_reason: Option<String>,
    pub(super) restarts: u32,
    /// Coordinator → task RPC jitter: `rpc_latency_max - rpc_latency` (ns),
    /// drawn per task from `rpc_rng` (no draw without jitter).
    pub(super) rpc_jitter: u64,
    pub(super) rpc_rng: SimRng,
    /// When the last restore from files ends: until then a task is not
    /// `RUNNING` and the coordinator triggers nothing (Flink's
    /// `NOT_ALL_REQUIRED_TASKS_RUNNING`).
    pub(super) restored_at: crate::engine::SimTime,
}

impl Job {
    pub(super) fn new(rpc_jitter: u64, rpc_rng: SimRng) -> Job {
        Job {
            status: JobStatus::Running,
            failed_reason: None,
            restarts: 0,
            rpc_jitter,
            rpc_rng,
            restored_at: crate::engine::SimTime(0),
        }
    }
}
