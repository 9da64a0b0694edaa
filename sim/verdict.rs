//! What a finding looks like: the [`Violation`] value and the [`CheckId`]
//! that names the invariant it breaks. The runtime reports violations while
//! it runs (a bad cut, a refused restore) and the checkers after it; both
//! depend on this module and neither on the other. Data only: it depends on
//! nothing in the crate. A check is named by its typed id, never by a
//! string, so that no finding can be filed under a name nobody reads.

use serde::{Serialize, Serializer};
use std::fmt;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub check: CheckId,
    pub time_ns: u64,
    pub message: String,
}

/// The checks, in report order. Printed and serialized by [`CheckId::name`].
/// `judge` never produces the last one, [`CheckId::Panic`]: the commands
/// that run many seeds report it for a run that panicked instead of
/// returning ([`crate::panics`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckId {
    ConsistentCut,
    ExactlyOnceOutput,
    State,
    Liveness,
    Routing,
    Protocol,
    Commit,
    LateCommit,
    ChannelOrder,
    Progress,
    Resources,
    FailureAccounting,
    Watermarks,
    Timers,
    Finishing,
    CheckpointFiles,
    OpenTransactions,
    LostCommits,
    Panic,
}

impl CheckId {
    /// Every check, in report order.
    pub const ALL: [CheckId; 19] = [
        CheckId::ConsistentCut,
        CheckId::ExactlyOnceOutput,
        CheckId::State,
        CheckId::Liveness,
        CheckId::Routing,
        CheckId::Protocol,
        CheckId::Commit,
        CheckId::LateCommit,
        CheckId::ChannelOrder,
        CheckId::Progress,
        CheckId::Resources,
        CheckId::FailureAccounting,
        CheckId::Watermarks,
        CheckId::Timers,
        CheckId::Finishing,
        CheckId::CheckpointFiles,
        CheckId::OpenTransactions,
        CheckId::LostCommits,
        CheckId::Panic,
    ];

    /// The name reports, JSON and the command line use.
    pub const fn name(self) -> &'static str {
        match self {
            CheckId::ConsistentCut => "consistent-cut",
            CheckId::ExactlyOnceOutput => "exactly-once-output",
            CheckId::State => "state",
            CheckId::Liveness => "liveness",
            CheckId::Routing => "routing",
            CheckId::Protocol => "protocol",
            CheckId::Commit => "commit",
            CheckId::LateCommit => "late-commit",
            CheckId::ChannelOrder => "channel-order",
            CheckId::Progress => "progress",
            CheckId::Resources => "resources",
            CheckId::FailureAccounting => "failure-accounting",
            CheckId::Watermarks => "watermarks",
            CheckId::Timers => "timers",
            CheckId::Finishing => "finishing",
            CheckId::CheckpointFiles => "checkpoint-files",
            CheckId::OpenTransactions => "open-transactions",
            CheckId::LostCommits => "lost-commits",
            CheckId::Panic => "panic",
        }
    }

    /// What the check promises, for `ckptsim list` and the docs.
    pub const fn description(self) -> &'static str {
        match self {
            CheckId::ConsistentCut => "per completed checkpoint and channel, by sequence number: records sent before the sender's snapshot = records consumed before the receiver's snapshot, then input channel state, then output channel state; each split a FLIP-27 source's enumerator had discovered is in exactly one place, the enumerator's checkpoint or one reader's snapshot",
            CheckId::ExactlyOnceOutput => "committed sink output equals the failure-free oracle's (which replays the run's own input order), by lineage and by value",
            CheckId::State => "after the job ends, every keyed state equals the oracle's, exactly",
            CheckId::Liveness => "after the fault phase (a quiet phase with no new faults) checkpoints complete again and the bounded job finishes within its limits",
            CheckId::Routing => "every record a keyed operator reads over hash edges belongs to a key group its subtask owns at the current parallelism (after a rescale too)",
            CheckId::Protocol => "per task and checkpoint at most one snapshot, one decline, and one cancellation marker per output and cause; never notified complete after an abort; completed ids increase; restores succeed; no commit or sink write is refused; no savepoint enters the completed-checkpoint store or is restored by a failover",
            CheckId::Commit => "what completed checkpoints promise is committed: at the end, everything each sink task read before the snapshot of the last checkpoint it was notified of (or restored from) is committed, whatever the ending",
            CheckId::Progress => "checkpoints complete within `checkpoint_gap` where no fault interferes, every sink transaction is committed or aborted within `transaction_open` and none is left open when the job finishes, and a job that did not end is not in a restart loop (more than `restart_loop` restarts with no checkpoint completed)",
            CheckId::Resources => "the completed-checkpoint store never holds more checkpoints than `retained` allows: each completion subsumes (discards) the oldest beyond it",
            CheckId::ChannelOrder => "the records of every channel are read in the order they were sent, and after a restore its restored in-flight records before anything new on it",
            CheckId::LateCommit => "every transaction is committed when its commit falls due: at the first notification of a checkpoint at or above the one it was pre-committed for, at the restore of a snapshot that held it, or at once for a committable of a checkpoint its committer knew complete",
            CheckId::FailureAccounting => "checkpoint failures are counted as Flink counts them (expired and storage failures, once per checkpoint, newer than the last completed one, reset by a completion): each time they exceed tolerable_failures the job fails over at that moment, and no failover for checkpoint failures happens otherwise",
            CheckId::Watermarks => "event time: no operator's watermark ever goes back (within a deployment: a redeployed task starts again at Long.MIN_VALUE, as Flink's does), and when the job finishes every operator's watermark has reached MAX_WATERMARK; a watermark held back is named with the channel holding it",
            CheckId::Timers => "every timer fires exactly once in effect: the timers that fired in the run's effective schedules are, key by key and time by time, those the failure-free oracle fires replaying them (none lost by a restore or a rescale, none firing twice into the output); and no task starts a step with a processing-time timer past due and no mail queued to fire it",
            CheckId::Finishing => "tasks that finish (FLIP-147): checkpoints keep completing while tasks exit, so no task that ended its data is left waiting for a final checkpoint when the job ends without a fault or request to blame; a subtask restored from a checkpoint in which it had finished never runs its operators again",
            CheckId::CheckpointFiles => "checkpoint storage as files (`filesystem` storage): acknowledged means durable (no completed checkpoint refers to a file not synced at its completion, which a storage crash can lose); no file is deleted while a retained checkpoint or savepoint refers to it, and a restore that needs a file that is gone is named as such; no leak (every file left at the end, and after each subsumption, is referred to by a retained checkpoint or a savepoint)",
            CheckId::OpenTransactions => "the transactional log: no transaction stays open without an owner, so the last stable offset of every partition moves on: when a checkpoint completes, no transaction a restarted task opened before its restart is still open, and when the job finishes none is open at all; a stalled one is named with its transactional id, the attempt that opened it and the offsets read_committed readers are stuck at",
            CheckId::LostCommits => "the transactional log: every transaction a completed checkpoint holds is committed, never refused; one the broker aborted past its transaction timeout is named with the timeout and the checkpoint interval that allowed it, one fenced by a newer producer with that",
            CheckId::Panic => "the run did not panic: a panic is a bug of ckptsim itself, reported per seed with its replay line, never a crash of the sweep",
        }
    }

    /// The check of that name.
    pub fn from_name(name: &str) -> Option<CheckId> {
        CheckId::ALL.into_iter().find(|c| c.name() == name)
    }

    /// `(name, description)` of every check, in report order.
    pub fn described() -> Vec<(&'static str, &'static str)> {
        CheckId::ALL
            .iter()
            .map(|c| (c.name(), c.description()))
            .collect()
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for CheckId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl PartialEq<&str> for CheckId {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::CheckId;

    #[test]
    fn every_check_is_listed_once_in_report_order_and_found_by_its_name() {
        for (i, c) in CheckId::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c} out of order");
            assert_eq!(CheckId::from_name(c.name()), Some(*c));
            assert!(!c.description().is_empty());
        }
        assert_eq!(CheckId::ALL.len(), CheckId::Panic as usize + 1);
    }
}
