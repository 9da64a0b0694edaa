//! The simulator proper: tasks, channels, the coordinator, faults and
//! recovery, driven by one event loop over virtual time.
//!
//! **Invariant:** one run is single-threaded and reads nothing but its
//! scenario, its seed and its configuration; every event it processes goes
//! into the fingerprint.

pub mod coordinator;
pub mod event;
pub mod net;
pub mod schedule;
pub mod world;

pub use world::{
    run, run_job, Counters, JobOptions, Outcome as RunOutcome, Restore, RunConfig, RunOutput,
    SavepointReport, SnapshotKind, SnapshotOut, TraceEntry, Warning,
};
