//! The recorder: everything a run writes down for its output and nothing it
//! reads back to decide — the fingerprint, the trace and timeline
//! (`record_trace`), the fault timeline, the counters, the evidence for the
//! checks (with the violations the runtime still finds itself), the
//! failovers, restart notes and crash points, every task's schedule (for the oracle's replay), and when input ended and the
//! sinks last took records (throughput).
//!
//! Nothing in a run may branch on what the recorder holds, except the
//! counters the warnings and limits read at the end.

use crate::engine::{Fingerprint, SimTime};
use crate::model::graph::TaskId;
use crate::runtime::counters::Counters;
use crate::runtime::output::Holds;
use crate::runtime::output::{
    CrashPoint, Evidence, FaultEvent, RestartNote, TimelineMark, TraceEntry,
};
use crate::runtime::schedule::ScheduleLog;
use std::collections::BTreeMap;

/// What a run records (see the module's docs).
pub(super) struct Recorder {
    pub(super) fp: Fingerprint,
    pub(super) trace: Vec<TraceEntry>,
    pub(super) timeline: Vec<TimelineMark>, // trace
    pub(super) fault_timeline: Vec<FaultEvent>,
    /// When the last fault was noted (the timeline may stop keeping them).
    pub(super) last_fault_ns: u64,
    pub(super) fault_events_dropped: u64,
    pub(super) counters: Counters,
    pub(super) evidence: Evidence,
    /// Every global failover of a running job: time and reason.
    pub(super) failovers: Vec<(u64, String)>,
    pub(super) restart_notes: Vec<RestartNote>,
    /// Every crash that took effect: where its task was.
    pub(super) crash_points: Vec<CrashPoint>,
    /// Every task's schedule, for the oracle's replay (`runtime::schedule`).
    pub(super) schedule: ScheduleLog,
    /// The job started from a snapshot of another run: its tasks' history
    /// before the snapshot is unknown, so the schedule is not returned.
    pub(super) schedule_partial: bool,
    pub(super) input_end: SimTime,
    /// When a sink last finished taking in records (throughput).
    pub(super) sink_end: SimTime,
    /// Inputs held on purpose, for the progress check.
    pub(super) holds: HoldLog,
}

impl Recorder {
    /// Nothing recorded yet; `schedule` has one log per subtask instance.
    pub(super) fn new(schedule: ScheduleLog, hold_bound: u64) -> Recorder {
        Recorder {
            fp: Fingerprint::default(),
            trace: Vec::new(),
            timeline: Vec::new(), // trace
            fault_timeline: Vec::new(),
            last_fault_ns: 0,
            fault_events_dropped: 0,
            counters: Counters::default(),
            evidence: Evidence::default(),
            failovers: Vec::new(),
            restart_notes: Vec::new(),
            crash_points: Vec::new(),
            schedule,
            schedule_partial: false,
            input_end: SimTime::ZERO,
            sink_end: SimTime::ZERO,
            holds: HoldLog::new(hold_bound),
        }
    }
}

/// The source's own input (a pause), as a hold's input index.
pub(super) const PAUSE: u32 = u32::MAX;

/// The holds of a run in progress (`holds.rs` records them).
pub(super) struct HoldLog {
    /// Open holds: (task, input or [`PAUSE`]) → since (ns).
    pub(super) open: BTreeMap<(TaskId, u32), u64>,
    /// Holds at least this long are kept whole (ns).
    pub(super) keep_over: u64,
    pub(super) out: Holds,
}

impl HoldLog {
    /// Keeps whole the holds longer than `keep_over` ns.
    pub(super) fn new(keep_over: u64) -> HoldLog {
        HoldLog {
            open: BTreeMap::new(),
            keep_over,
            out: Holds::default(),
        }
    }
}
