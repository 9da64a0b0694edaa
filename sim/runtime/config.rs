//! How a run is configured: the run's own settings ([`RunConfig`]) and the
//! savepoint workflow's options for the job ([`JobOptions`], [`Restore`]).

use super::coordinator::TaskSnapshot;
use crate::engine::SimTime;
use crate::model::store::ExternalStore;
use crate::model::CheckpointId;
use crate::mutant::Mutants;
use crate::scenario::Algorithm;
use std::sync::Arc;

/// What a job starts from and how it ends besides running out of input:
/// the savepoint workflow (`docs/savepoints.md`).
#[derive(Clone, Default)]
pub struct JobOptions {
    /// Start from this snapshot (a savepoint or a retained checkpoint,
    /// already redistributed to the job's parallelism).
    pub restore: Option<Arc<Restore>>,
    /// Cancel the job at this virtual time (`run --cancel-at`).
    pub cancel_at: Option<SimTime>,
    /// Cancel the job as soon as a plain savepoint completes (`ckptsim savepoint`).
    pub cancel_after_savepoint: bool,
    /// A savepoint that fails is requested again at once (until one
    /// completes or the job ends), as a person at the CLI would.
    pub retry_failed_savepoints: bool,
    /// Keep the snapshots a run produces (savepoints, the checkpoint
    /// retained on cancel) in [`RunOutput::snapshots`](super::RunOutput::snapshots).
    pub keep_snapshots: bool,
}

/// A snapshot to start a job from, per task of the job being started.
#[derive(Clone)]
pub struct Restore {
    /// The snapshot's checkpoint id: the job's checkpoint ids continue
    /// from `id + 1`, as Flink resets its counter on restore.
    pub id: CheckpointId,
    /// The restored job's generation (one more than the snapshot's): job
    /// attempts, and so sink transaction ids, start at `generation << 16`
    /// and never meet those of the job that took the snapshot.
    pub generation: u32,
    /// Per task: operator state and the in-flight records it replays first.
    pub states: Vec<Option<TaskSnapshot>>,
    /// The operator coordinators' states: `(operator, state)`.
    pub coordinators: Vec<(u32, Vec<u8>)>,
    /// The external store as the snapshot's job left it.
    pub store: ExternalStore,
    /// Mutants that took effect while the snapshot was assigned to the
    /// job's subtasks (`savepoint::rescale::assign_with`).
    pub mutants_fired: crate::mutant::Mutants,
    /// Restore mode `CLAIM` (`run --restore-mode claim`): the job owns the
    /// snapshot's files, builds on them and deletes them once unused;
    /// else `NO_CLAIM` (Flink's default): they stay the user's, and the
    /// first checkpoint is a full one.
    pub claim: bool,
}

/// How to run a scenario.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub seed: u64,
    pub algorithm: Algorithm,
    pub mutants: Mutants,
    /// Keep every event (for `--check-determinism` diagnostics and traces).
    pub record_trace: bool,
}
