//! What a finding looks like: the [`Violation`] value and the names of the
//! checks. The runtime reports violations while it runs (a bad cut, a
//! refused restore) and the checkers after it; both depend on this module
//! and neither on the other. Data only: it depends on nothing in the crate.

use serde::Serialize;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub check: &'static str,
    pub time_ns: u64,
    pub message: String,
}

/// The checks, in report order. `judge` never produces the last one,
/// `panic`: the commands that run many seeds report it for a run that
/// panicked instead of returning ([`crate::panics`]).
pub const CHECKS: &[(&str, &str)] = &[
    ("consistent-cut", "per completed checkpoint and channel, by sequence number: records sent before the sender's snapshot = records consumed before the receiver's snapshot, then input channel state, then output channel state; each split a FLIP-27 source's enumerator had discovered is in exactly one place, the enumerator's checkpoint or one reader's snapshot"),
    ("exactly-once-output", "committed sink output equals the failure-free oracle's (which replays the run's own input order), by lineage and by value"),
    ("state", "after the job ends, every keyed state equals the oracle's, exactly"),
    ("liveness", "after the fault phase (a quiet phase with no new faults) checkpoints complete again and the bounded job finishes within its limits"),
    ("routing", "every record a keyed operator reads over hash edges belongs to a key group its subtask owns at the current parallelism (after a rescale too)"),
    ("protocol", "per task and checkpoint at most one snapshot, one decline, and one cancellation marker per output and cause; never notified complete after an abort; completed ids increase; restores succeed; no commit or sink write is refused; no savepoint enters the completed-checkpoint store or is restored by a failover"),
    ("commit", "what completed checkpoints promise is committed, in time: once a sink task is notified of checkpoint N, nothing it pre-committed for N or earlier stays pre-committed; at the end, everything each sink task read before the snapshot of the last checkpoint it was notified of (or restored from) is committed, whatever the ending"),
    ("failure-accounting", "checkpoint failures are counted as Flink counts them (expired and storage failures, once per checkpoint, newer than the last completed one, reset by a completion): each time they exceed tolerable_failures the job fails over at that moment, and no failover for checkpoint failures happens otherwise"),
    ("panic", "the run did not panic: a panic is a bug of ckptsim itself, reported per seed with its replay line, never a crash of the sweep"),
];
