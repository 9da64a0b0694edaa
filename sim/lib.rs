//! ckptsim: a deterministic simulation testbed for stream-processing
//! checkpoint algorithms.
//!
//! A scenario (a dataflow job, its workload, a checkpoint algorithm and a
//! fault plan) plus a seed goes in; a reproducible run comes out, and the
//! checkers decide whether it kept its exactly-once promise.
//!
//! Layers, lowest first. A module uses only modules of lower layers
//! (`tests/structure.rs` checks it against this list):
//!
//! 1. [`engine`], [`verdict`], [`wallclock`], [`panics`], [`input`],
//!    [`program`]: nothing of the crate;
//! 2. [`mutant`], [`safe_fs`];
//! 3. [`protocol`] (the algorithm registry and the barrier handlers);
//! 4. [`scenario`];
//! 5. [`strategies`];
//! 6. [`model`], [`fault`], [`swarm`];
//! 7. [`runtime`] (the coordinator is `runtime::coordinator`);
//! 8. [`check`], [`savepoint`], [`coverage`];
//! 9. [`harness`];
//! 10. [`report`];
//! 11. [`sweep`], [`shrink`], [`stalls`], [`exhaustive`], [`export`],
//!     [`rescale`];
//! 12. [`killmatrix`], [`compare`], [`fuzz`];
//! 13. [`cli`], the command line (feature `cli`; `sim/main.rs` calls it).
//!
//! In short: engine ← protocol ← scenario ← model ← runtime ← check ← harness ←
//! explore (sweep, shrink, kill matrix) and compare ← cli.
//!
//! Module map (one idea per module; see `docs/ARCHITECTURE.md`):
//!
//! - [`engine`]: virtual time, the event queue, seeded random streams, the
//!   run fingerprint, sizes in bytes as text. Knows nothing about streaming.
//! - [`verdict`]: a [`verdict::Violation`] and the names of the checks: what
//!   the runtime and the checkers both report.
//! - [`wallclock`]: the one wall-clock reader, for timing reports; nothing it
//!   returns feeds a run.
//! - [`input`]: every file ckptsim reads: regular, of bounded size; names
//!   from files made printable.
//! - [`safe_fs`]: every output folder ckptsim writes: only its own files,
//!   never through a link.
//! - [`program`]: the name of the program that runs ckptsim's commands,
//!   as replay lines write it (the command line's `argv[0]`, so that a
//!   printed line runs as printed; `ckptsim` in the library).
//! - [`panics`]: a panic of one seed's run becomes that seed's failure
//!   (kind `panic`) in the commands that run many seeds.
//! - [`scenario`]: TOML → the typed file format (serde) → validated
//!   [`scenario::Scenario`].
//! - [`mutant`]: deliberate bugs that prove the checkers work.
//! - [`strategies`]: proptest strategies for scenarios (topologies,
//!   workloads, fault plans, checkpoint configurations).
//! - [`model`]: records and key groups, job and execution graphs, the
//!   [`model::Operator`] trait and built-in operators, the generated input,
//!   the external store sinks write to.
//! - [`fault`]: fault plans drawn before the run; restart strategies.
//! - [`swarm`]: swarm testing: a seed's configuration drawn from ranges.
//! - [`protocol`]: checkpoint algorithms as sans-IO barrier handlers.
//! - [`runtime`]: the simulator: tasks, channels with credits, the
//!   coordinator, crashes and recovery, one event loop (the richer fault
//!   model in `runtime/world/faults.rs` and `region.rs`).
//! - [`check`]: the oracle and the invariants; verdicts are data.
//! - [`coverage`]: the catalogue of coverage targets ("sometimes"
//!   situations), what a seed could reach and hit, a sweep's tallies.
//! - [`savepoint`]: savepoints and retained checkpoints as files, and
//!   restoring them at a new parallelism.
//! - [`harness`]: one checked run (simulate, build the oracle, judge).
//! - [`report`]: summaries for people and machines, traces.
//! - [`sweep`]: many seeds in parallel, shards and merging, one JSON line
//!   per seed.
//! - [`shrink`]: a failing seed reduced to a small standalone reproducer.
//! - [`exhaustive`]: every input order and message order of a tiny job up
//!   to a bound, for one seed (`ckptsim explore`); a failing schedule as a
//!   standalone file.
//! - [`stalls`]: a search for checkpoint stalls on generated topologies
//!   with forced alignment, reduced to blocking chains and catalogued.
//! - [`export`]: a scenario as a runnable Flink 2.x job (`ckptsim
//!   flink-export`), and a real run read back and checked (`ckptsim
//!   flink-check`).
//! - [`rescale`]: a stop-with-savepoint and a restore at a new parallelism
//!   as one judged run (the kill matrix's flow for rescale mutants).
//! - [`killmatrix`]: every mutant against the scenarios where it applies.
//! - [`fuzz`]: entry points for fuzzers (the test suite's and `cargo fuzz`'s):
//!   any scenario text or snapshot directory is refused or runs within
//!   bounds.
//! - [`compare`]: algorithms side by side over seeds and an axis, written
//!   as a report (SVG charts with the `cli` feature).
//! - [`cli`]: the command line (`main`), and `main_with` for a user's own
//!   binary with its own algorithms.

pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod compare;
pub mod coverage;
pub mod engine;
pub mod exhaustive;
pub mod export;
pub mod fault;
pub mod fuzz;
pub mod harness;
pub mod input;
pub mod killmatrix;
pub mod model;
pub mod mutant;
pub mod panics;
pub mod program;
pub mod protocol;
pub mod report;
pub mod rescale;
pub mod runtime;
pub mod safe_fs;
pub mod savepoint;
pub mod scenario;
pub mod shrink;
pub mod stalls;
pub mod strategies;
pub mod swarm;
pub mod sweep;
pub mod verdict;
pub mod wallclock;

/// `docs/operators.md` as documentation of an item that exists only for
/// doctests, so that `cargo test` compiles and runs its example: the page
/// cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../docs/operators.md")]
pub struct OperatorsGuide;
