//! Per-task scheduling bookkeeping of the network: when a task is busy,
//! whether a wake or a flush is pending, how many of its outputs are full,
//! and its input activity clock (stopped while it is backpressured or
//! paused).

use crate::engine::SimTime;

/// Per-task scheduling bookkeeping the network needs to wake tasks.
#[derive(Clone, Debug, Default)]
pub struct Sched {
    pub alive: bool,
    pub busy_until: SimTime,
    pub wake_pending: bool,
    pub flush_pending: bool,
    /// Output channels whose queue is at `output_buffers`.
    pub full_outputs: u32,
    /// The task's input activity clock: stopped while the task is
    /// backpressured (some output full) or paused by its checkpoint
    /// protocol (`clock_stops` counts the reasons), since `stopped_since`;
    /// `stopped_ns` stopped before.
    pub clock_stops: u8,
    pub stopped_since: Option<SimTime>,
    pub stopped_ns: u64,
    /// Timeoutable barriers still waiting in this task's output queues.
    pub held_barriers: u32,
}

impl Sched {
    /// The task's input activity clock (Flink's `PausableRelativeClock`
    /// behind an idleness timer, FLINK-35886: it hides the time execution
    /// was blocked, by backpressure or by the runtime): the time `now`
    /// less the time it was stopped.
    pub fn activity_clock(&self, now: SimTime) -> u64 {
        let current = self
            .stopped_since
            .map_or(0, |since| now.0.saturating_sub(since.0));
        now.0
            .saturating_sub(self.stopped_ns)
            .saturating_sub(current)
    }

    /// One more reason stops the activity clock.
    pub fn stop_clock(&mut self, now: SimTime) {
        self.clock_stops += 1;
        if self.clock_stops == 1 {
            self.stopped_since = Some(now);
        }
    }

    /// One reason less: the clock runs again when none is left.
    pub fn start_clock(&mut self, now: SimTime) {
        self.clock_stops = self.clock_stops.saturating_sub(1);
        if self.clock_stops == 0 {
            if let Some(since) = self.stopped_since.take() {
                self.stopped_ns += now.0.saturating_sub(since.0);
            }
        }
    }

    /// A (re)deployed task: alive, idle, nothing pending.
    pub(super) fn fresh(now: SimTime) -> Sched {
        Sched {
            alive: true,
            busy_until: now,
            ..Sched::default()
        }
    }
}
