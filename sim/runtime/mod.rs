//! The simulator proper: tasks, channels, the coordinator, faults and
//! recovery, driven by one event loop over virtual time.
//!
//! **Invariant:** one run is single-threaded and reads nothing but its
//! scenario, its seed and its configuration; every event it processes goes
//! into the fingerprint.

pub mod config;
pub mod coordinator;
pub mod counters;
pub mod credit;
pub mod cut_evidence;
pub mod event;
pub mod limits;
pub mod mailbox;
pub mod net;
pub mod output;
pub mod schedule;
pub mod scheduler;
pub mod storage;
pub mod timers;
pub mod watermarks;
pub mod world;

pub use config::{JobOptions, Restore, RunConfig};
pub use counters::Counters;
pub use output::{
    Outcome as RunOutcome, RunOutput, SavepointReport, SnapshotKind, SnapshotOut, TaskReport,
    Timeline, TimelineMark, TraceEntry, Warning,
};
pub use world::{run, run_job, run_with};
