//! Idleness at a source (docs/event-time.md), as Flink's code does it.
//!
//! A watermark strategy `withIdleness(timeout)` wraps each generator in a
//! `WatermarksWithIdleness`: its [`IdlenessTimer`] is looked at only on the
//! periodic emits; the first emit that saw no record since the one before
//! starts a countdown on the *input activity clock*, and an emit after more
//! than the timeout marks the generator's output idle, until its next
//! record. The input activity clock stops while the task is backpressured
//! (FLINK-35886): time in which the source could not emit is not idleness.
//!
//! A FLIP-27 source has a generator per split and one for its main output
//! (which sees no records: a split-based reader emits through its splits'
//! outputs). [`SourceStatus`] is what Flink's `IdlenessManager` and
//! `WatermarkToDataOutput` do with them: the task's output goes idle when
//! the splits' combined status is idle *and* the main output is, and
//! active again with the next watermark it emits, if that watermark is
//! newer than the last one.

use super::record::Element;

/// The generator of a source's main output, in [`crate::model::event_time::SourceWatermarks::periodic`]'s decisions
/// (splits are named by their global partition).
pub const MAIN_OUTPUT: u32 = u32::MAX;

/// Flink's `WatermarksWithIdleness.IdlenessTimer`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdlenessTimer {
    counter: u64,
    last_counter: u64,
    /// On the activity clock: when an emit first found no activity since
    /// the emit before (`startOfInactivityNanos`; `None`: no countdown).
    start: Option<u64>,
    timeout_ns: u64,
}

impl IdlenessTimer {
    pub fn new(timeout_ns: u64) -> IdlenessTimer {
        IdlenessTimer {
            counter: 0,
            last_counter: 0,
            start: None,
            timeout_ns,
        }
    }

    /// A record was emitted.
    pub fn activity(&mut self) {
        self.counter = self.counter.wrapping_add(1);
    }

    /// `checkIfIdle` at a periodic emit, `clock_ns` on the activity clock:
    /// activity since the last check resets the countdown; the first quiet
    /// check starts it; a later one is idle once strictly more than the
    /// timeout has passed since.
    pub fn check_if_idle(&mut self, clock_ns: u64) -> bool {
        if self.counter != self.last_counter {
            self.last_counter = self.counter;
            self.start = None;
            return false;
        }
        match self.start {
            None => {
                self.start = Some(clock_ns);
                false
            }
            Some(start) => clock_ns.saturating_sub(start) > self.timeout_ns,
        }
    }
}

/// One generator's idleness (`WatermarksWithIdleness`): its timer, and
/// whether it has marked its output idle (`isIdleNow`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idleness {
    pub timer: IdlenessTimer,
    pub idle_now: bool,
}

impl Idleness {
    pub fn new(timeout_ns: u64) -> Idleness {
        Idleness {
            timer: IdlenessTimer::new(timeout_ns),
            idle_now: false,
        }
    }

    /// `onEvent`: activity; the generator is no longer idle (its output
    /// turns active at its next periodic emit).
    pub fn on_event(&mut self) {
        self.timer.activity();
        self.idle_now = false;
    }
}

/// A source task's output status: Flink's `IdlenessManager` (idle only
/// when the split-local output and the main output both are) in front of
/// its `WatermarkToDataOutput` (watermarks only forward, an idle status
/// sent once, active again with the next newer watermark).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceStatus {
    /// Both start idle (`IdlenessAwareWatermarkOutput.isIdle = true`).
    split_local_idle: bool,
    main_idle: bool,
    /// The status the task last sent (`WatermarkToDataOutput.isIdle`).
    idle: bool,
    /// The largest watermark sent (`maxWatermarkSoFar`).
    max: i64,
}

impl Default for SourceStatus {
    fn default() -> SourceStatus {
        SourceStatus {
            split_local_idle: true,
            main_idle: true,
            idle: false,
            max: super::event_time::MIN_WATERMARK,
        }
    }
}

impl SourceStatus {
    /// The status the task last sent.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// The splits' combined watermark advanced to `w`.
    pub fn split_watermark(&mut self, w: i64, out: &mut Vec<Element>) {
        self.split_local_idle = false;
        if w > self.max {
            self.max = w;
            if self.idle {
                self.idle = false;
                out.push(Element::Status { idle: false });
            }
            out.push(Element::Watermark(w));
        }
    }

    /// Every split is idle.
    pub fn splits_idle(&mut self, out: &mut Vec<Element>) {
        self.split_local_idle = true;
        self.maybe_idle(out);
    }

    /// The main output's generator marked it idle (`idle`), or emitted
    /// (its watermark is `MIN_WATERMARK`, which forwards nothing).
    pub fn main(&mut self, idle: bool, out: &mut Vec<Element>) {
        self.main_idle = idle;
        if idle {
            self.maybe_idle(out);
        }
    }

    fn maybe_idle(&mut self, out: &mut Vec<Element>) {
        if self.split_local_idle && self.main_idle && !self.idle {
            self.idle = true;
            out.push(Element::Status { idle: true });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_counts_from_the_first_quiet_emit_and_needs_strictly_more_than_the_timeout() {
        // Flink's documented timing (FLINK-40503): timeout 10 ms, emits
        // every 5 ms, last event just before the emit at 0: not idle at 5
        // (the countdown starts), 10 or 15, idle at 20.
        let ms = 1_000_000;
        let mut t = IdlenessTimer::new(10 * ms);
        t.activity();
        assert!(!t.check_if_idle(0), "activity since the last check");
        assert!(!t.check_if_idle(5 * ms), "the countdown starts");
        assert!(!t.check_if_idle(10 * ms));
        assert!(!t.check_if_idle(15 * ms), "exactly the timeout is not more");
        assert!(t.check_if_idle(20 * ms));
        t.activity();
        assert!(!t.check_if_idle(25 * ms), "a record resets it");
    }

    #[test]
    fn a_source_goes_idle_only_when_its_splits_and_its_main_output_are() {
        let mut s = SourceStatus::default();
        let mut out = Vec::new();
        s.main(false, &mut out);
        s.splits_idle(&mut out);
        assert!(out.is_empty(), "the main output is still active");
        s.main(true, &mut out);
        assert_eq!(out, vec![Element::Status { idle: true }]);
        out.clear();
        s.main(true, &mut out);
        assert!(out.is_empty(), "the status is sent once");
        s.split_watermark(5, &mut out);
        assert_eq!(
            out,
            vec![Element::Status { idle: false }, Element::Watermark(5)]
        );
        out.clear();
        s.splits_idle(&mut out);
        assert_eq!(out, vec![Element::Status { idle: true }]);
        out.clear();
        s.split_watermark(5, &mut out);
        assert!(out.is_empty(), "a watermark not newer leaves it idle");
        assert!(s.is_idle());
    }
}
