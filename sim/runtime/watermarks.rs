//! What a run leaves for the watermarks check: every watermark an
//! operator emitted was checked against the one before it (per deployment:
//! a redeployed task starts again at `MIN_WATERMARK`, as Flink's does), and,
//! at the end, each operator's watermark and the input channel holding it
//! back.

/// The watermarks check's evidence.
#[derive(Clone, Debug, Default)]
pub struct WatermarkEvidence {
    /// Event time is on in the job.
    pub on: bool,
    /// Watermarks operators emitted (each compared with the one before).
    pub emitted: u64,
    /// Watermarks that went back, and the first [`WatermarkEvidence::KEPT`].
    pub backwards: u64,
    pub first_backwards: Vec<Backwards>,
    /// Operators (chain members) that reached `MAX_WATERMARK`.
    pub reached_max: u64,
    /// At the end of a run: per task with inputs, the head operator's
    /// watermark, and the input channel (by channel id) holding it back.
    pub at_end: Vec<TaskWatermark>,
    /// Reads at which a task's watermark was judged against
    /// `[limits] watermark_stall`; the stalls found, the first kept.
    pub stall_checks: u64,
    pub stalls: u64,
    pub first_stalls: Vec<Stall>,
    /// Watermark statuses tasks announced (idle or active again).
    pub statuses: u64,
    /// Channels at a task's watermark that went idle leaving no aligned
    /// active channel (the valve's minimum over none; FLINK-7721's path).
    pub none_aligned: u64,
    /// Splits the idleness timers marked idle; those whose next record had
    /// been there to read for the idle timeout, the first kept.
    pub splits_idled: u64,
    pub idle_while_ready: u64,
    pub first_idle_while_ready: Vec<IdleWhileReady>,
    /// Watermarks that reached a task on a channel it held idle (ignored
    /// by its valve), the first kept.
    pub ignored: u64,
    pub first_ignored: Vec<Ignored>,
    /// Splits paused for watermark alignment at the end of the run
    /// although their coordinator had long allowed them, the first kept.
    pub stuck_pauses: u64,
    pub first_stuck_pauses: Vec<StuckPause>,
    /// Splits paused for watermark alignment (judged at the end).
    pub splits_paused: u64,
    /// Watermark lag (`compare`): how long each watermark took from the
    /// sources to the sinks.
    pub lag: WatermarkLag,
}

/// Watermark lag: per watermark a sink's input reached (`MAX_WATERMARK`
/// aside), the time since a source emitted that watermark (the latest
/// emission of the value, so a source that emits it again after a restart
/// starts the clock again). A sink's input watermark is the minimum over
/// its inputs, so the watermark that reaches it is one some source emitted
/// and the lag is the time event time took to cross the job: queues,
/// backpressure, alignment and recovery all add to it; the watermark's own
/// bound and interval do not.
#[derive(Clone, Debug, Default)]
pub struct WatermarkLag {
    /// Each value a source emitted, with the last time it did.
    births: std::collections::BTreeMap<i64, u64>,
    /// One lag per watermark reaching a sink, in nanoseconds.
    pub lags_ns: Vec<u64>,
}

impl WatermarkLag {
    /// A source emitted `w` at `now_ns`.
    pub fn born(&mut self, w: i64, now_ns: u64) {
        self.births.insert(w, now_ns);
    }

    /// A sink's input watermark advanced to `w` at `now_ns`.
    pub fn arrived(&mut self, w: i64, now_ns: u64) {
        if let Some(&born) = self.births.get(&w) {
            self.lags_ns.push(now_ns.saturating_sub(born));
        }
    }
}

/// At the end of the run, reader `source` still held split `split` paused
/// (`None`: waited as a whole) at `watermark`, above the largest watermark
/// it had heard (`max_desired`), while its coordinator had announced
/// `allowed` since `since_ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckPause {
    pub source: String,
    pub split: Option<u32>,
    pub watermark: i64,
    pub max_desired: i64,
    pub allowed: i64,
    pub since_ns: u64,
}

/// At `time_ns`, task `task` read `watermark` on `channel`, which its
/// valve held idle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub time_ns: u64,
    pub task: String,
    pub channel: u32,
    pub watermark: i64,
}

/// At `time_ns`, source `source` marked split `split` idle although its
/// record at `offset` had been there to read since `ready_ns`, longer than
/// the idle timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleWhileReady {
    pub time_ns: u64,
    pub source: String,
    pub split: u32,
    pub offset: u64,
    pub ready_ns: u64,
    pub timeout_ns: u64,
}

/// Task `task` was still reading records at `time_ns` with its input
/// watermark at `watermark` since `since_ns`, with no fault in between.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    pub time_ns: u64,
    pub task: String,
    pub since_ns: u64,
    pub watermark: i64,
    /// The channel holding it back, and that channel's watermark.
    pub holding_back: Option<(u32, i64)>,
}

impl WatermarkEvidence {
    /// Examples kept.
    pub const KEPT: usize = 5;
}

/// An operator emitted `watermark` after `before`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backwards {
    pub time_ns: u64,
    /// The operator (`id[subtask]`).
    pub operator: String,
    pub before: i64,
    pub watermark: i64,
}

/// A task's input watermark when the run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskWatermark {
    /// The task (`id[subtask]` of its head).
    pub task: String,
    pub watermark: i64,
    /// Its input ended (end of data on every input).
    pub input_ended: bool,
    /// The channel whose watermark is the smallest, and that watermark.
    pub holding_back: Option<(u32, i64)>,
}
