//! `[limits]`: how far a run may go, and the progress check's bounds.

use super::*;

section! {
    /// `[limits]`.
    Limits => LimitSpec {
        /// Most simulation events processed.
        #[key("integer, ≥ 1", "`50_000_000`")]
        max_events: u64 = 50_000_000,
        /// Virtual time at which the run stops.
        #[key("time, > 0", "`\"10m\"`")]
        max_time: Positive<SimTime> = Duration(SimDuration::from_secs(600)),
        /// A progress bound (the `progress` check): the longest time without a completed
        /// checkpoint while no fault happened (at least twice the checkpoint interval).
        #[key("duration, > 0", "`\"1m\"`")]
        checkpoint_gap: Positive = Duration(SimDuration::from_secs(60)),
        /// A progress bound (the `progress` check): the longest a sink's transaction may
        /// stay open or pre-committed before it is committed or aborted.
        #[key("duration, > 0", "`\"5m\"`")]
        transaction_open: Positive = Duration(SimDuration::from_secs(300)),
        /// A progress bound (the `progress` check): the most failovers in a row with no
        /// checkpoint completed between them (more is a restart loop).
        #[key("integer, ≥ 1", "`10`")]
        restart_loop: u32 = 10,
        /// A progress bound (the `progress` check): the longest an aligned barrier may block
        /// an input channel while no fault happened. An alignment lasts until the
        /// checkpoint's last barrier arrives, however slow the other channels: an expired
        /// checkpoint does not release it, so set it above the slowest alignment the job
        /// may have. (A `stop-the-world` pause is bounded by the checkpoint `timeout` plus
        /// `rpc_latency_max`: its abort resumes it.)
        #[key("duration, > 0", "`\"1m\"`")]
        blocked_input: Positive = Duration(SimDuration::from_secs(60)),
        /// A progress bound (the `progress` check): the longest from a source emitting a
        /// record to its result's commit, while no fault happened, for sinks whose records
        /// pass only through operators that emit as they read; at least the checkpoint
        /// `timeout` plus twice the effective `checkpoint_gap`.
        #[key("duration, > 0", "`\"10m\"`")]
        output_latency: Positive = Duration(SimDuration::from_secs(600)),
        /// A progress bound (the `watermarks` check): the longest a task may read records
        /// while its input watermark stays where it is and no fault happened (event time
        /// only; a task whose watermark waits for a slow input, by design, needs it above
        /// that wait).
        #[key("duration, > 0", "`\"10m\"`")]
        watermark_stall: Positive = Duration(SimDuration::from_secs(600)),
    }
}
