//! ckptsim: a deterministic simulation testbed for stream-processing
//! checkpoint algorithms.
//!
//! A scenario (a dataflow job, its workload, a checkpoint algorithm and a
//! fault plan) plus a seed goes in; a reproducible run comes out, and the
//! checkers decide whether it kept its exactly-once promise.
//!
//! Module map (one idea per module; see `docs/ARCHITECTURE.md`):
//!
//! - [`engine`]: virtual time, the event queue, seeded random streams, the
//!   run fingerprint. Knows nothing about streaming.
//! - [`scenario`]: TOML → raw structs → validated [`scenario::Scenario`].
//! - [`model`]: records and key groups, job and execution graphs, the
//!   [`model::Operator`] trait and built-in operators, the generated input,
//!   the external store sinks write to.
//! - [`protocol`]: checkpoint algorithms as sans-IO barrier handlers.
//! - [`runtime`]: the simulator: tasks, channels with credits, the
//!   coordinator, crashes and recovery, one event loop (the richer fault
//!   model in `runtime/world/faults.rs` and `region.rs`).
//! - [`fault`]: fault plans drawn before the run; restart strategies.
//! - [`check`]: the oracle and the invariants; verdicts are data.
//! - [`mutant`]: deliberate bugs that prove the checkers work.
//! - [`savepoint`]: savepoints and retained checkpoints as files, and
//!   restoring them at a new parallelism.
//! - [`harness`]: one checked run (simulate, build the oracle, judge).
//! - [`panics`]: a panic of one seed's run becomes that seed's failure
//!   (kind `panic`) in the commands that run many seeds.
//! - [`report`]: summaries for people and machines, traces, wall-clock timing.
//! - [`strategies`]: proptest strategies for scenarios (topologies,
//!   workloads, fault plans, checkpoint configurations).

pub mod check;
pub mod compare;
pub mod engine;
pub mod fault;
pub mod harness;
pub mod killmatrix;
pub mod model;
pub mod mutant;
pub mod panics;
pub mod protocol;
pub mod report;
pub mod runtime;
pub mod savepoint;
pub mod scenario;
pub mod shrink;
pub mod strategies;
pub mod swarm;
pub mod sweep;
