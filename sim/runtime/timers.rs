//! What a run leaves for the timers check: every timer that fired in the
//! run's effective schedule, the step starts at which a task still held
//! a processing-time timer past due with no mail queued to fire it, and
//! the restores that gave an operator back another number of timers than
//! its snapshot held.

use crate::model::timers::FiredTimer;

/// The timers check's evidence.
#[derive(Clone, Debug, Default)]
pub struct TimerEvidence {
    /// The timers that fired in effect (in the effective schedules),
    /// sorted; `None` when the run's schedule is not known (a job started
    /// from a snapshot file).
    pub fired: Option<Vec<FiredTimer>>,
    /// Timers operators held after a restore.
    pub restored: u64,
    /// Step starts of tasks holding processing-time timers, at which the
    /// earliest was judged; those at which it was past due with no mail
    /// queued, the first kept.
    pub checks: u64,
    pub overdue: u64,
    pub first_overdue: Vec<Overdue>,
    /// Restores from a snapshot that held timers (from a checkpoint of this
    /// run), and the operators that came back with a different number of
    /// timers than their snapshot held, the first kept.
    pub restores_judged: u64,
    pub restores_short: u64,
    pub first_short: Vec<ShortRestore>,
}

impl TimerEvidence {
    pub const KEPT: usize = 3;
}

/// At `time_ns`, task `task` started a step while operator `operator`
/// held a processing-time timer due at `due_ms` and no mail was queued to
/// fire it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overdue {
    pub time_ns: u64,
    pub task: String,
    pub operator: String,
    pub due_ms: i64,
}

/// At `time_ns`, task `task` was restored from its snapshot of checkpoint
/// `checkpoint`, at which operator `operator` held `held` timers; it holds
/// `restored`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShortRestore {
    pub time_ns: u64,
    pub task: String,
    pub operator: String,
    pub checkpoint: crate::model::CheckpointId,
    pub held: u64,
    pub restored: u64,
}
