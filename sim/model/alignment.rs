//! Watermark alignment (FLIP-182, FLIP-217), as Flink's code does it
//! (docs/event-time.md, "Watermark alignment").
//!
//! Sources of one alignment group keep their event time within a maximum
//! drift of each other. Each reader reports its watermark to its source's
//! coordinator every update interval (`SourceOperator.emitLatestWatermark`:
//! the watermark its output last emitted, `MAX_WATERMARK` while it is idle
//! or once its input ended, nothing before its first watermark,
//! FLINK-32414). Each coordinator keeps the smallest report of its
//! subtasks ([`WatermarkAggregator`]) and the group keeps the smallest of
//! its sources'; every update interval a coordinator sends each subtask
//! that reported the group's minimum plus the drift
//! (`WatermarkAlignmentEvent`, `SourceCoordinator.announceCombinedWatermark`).
//! A reader ([`ReaderAlignment`]) pauses the splits whose watermark is above
//! that maximum and resumes them once it is not (FLIP-217), and waits as a
//! whole while its own watermark is (FLIP-182). A paused split's idleness
//! clock stops with it (FLINK-35886).

use super::event_time::{MAX_WATERMARK, MIN_WATERMARK};
use std::collections::{BTreeMap, BTreeSet};

/// Flink's `SourceCoordinator.WatermarkAggregator`: the latest watermark of
/// each key (a subtask, or a source of the group) and their minimum,
/// `Long.MIN_VALUE` while it has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatermarkAggregator<K: Ord + Copy> {
    latest: BTreeMap<K, i64>,
    ordered: BTreeSet<(i64, K)>,
}

impl<K: Ord + Copy> WatermarkAggregator<K> {
    /// `key` reported `w`: the new minimum if it changed.
    pub fn aggregate(&mut self, key: K, w: i64) -> Option<i64> {
        let before = self.aggregated();
        if let Some(old) = self.latest.insert(key, w) {
            self.ordered.remove(&(old, key));
        }
        self.ordered.insert((w, key));
        let after = self.aggregated();
        (after != before).then_some(after)
    }

    /// The smallest watermark reported (`Long.MIN_VALUE` with none).
    pub fn aggregated(&self) -> i64 {
        self.ordered.first().map_or(MIN_WATERMARK, |&(w, _)| w)
    }

    /// The keys that reported, in order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.latest.keys().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.latest.is_empty()
    }
}

/// The largest watermark a group allows: its minimum plus the drift,
/// `MAX_WATERMARK` where that overflows (an idle or finished group).
pub fn max_allowed(group_min: i64, max_drift: i64) -> i64 {
    group_min.checked_add(max_drift).unwrap_or(MAX_WATERMARK)
}

/// What a reader does after a change: splits to pause and to resume.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PauseResume {
    pub pause: Vec<u32>,
    pub resume: Vec<u32>,
}

impl PauseResume {
    pub fn is_empty(&self) -> bool {
        self.pause.is_empty() && self.resume.is_empty()
    }
}

/// A reader's side of alignment (Flink's `SourceOperator`): the largest
/// watermark its coordinator allows, the watermark its output last
/// emitted, its splits' watermarks and which are paused, with each
/// split's paused time on the task's activity clock. A redeployed reader
/// starts afresh: nothing paused, everything allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaderAlignment {
    /// `currentMaxDesiredWatermark`: `MAX_WATERMARK` until an event says.
    pub max_desired: i64,
    /// `latestWatermark`: `Long.MIN_VALUE` (uninitialised) until the
    /// output emits one.
    pub latest: i64,
    /// `splitCurrentWatermarks`: per split, the watermark its output last
    /// offered at a periodic emit.
    splits: BTreeMap<u32, i64>,
    /// `currentlyPausedSplits`, each with the activity clock when paused.
    paused: BTreeMap<u32, u64>,
    /// Per split: activity-clock time it spent paused before.
    paused_ns: BTreeMap<u32, u64>,
    /// Idle splits are left out of the alignment checks (FLINK-39073,
    /// Flink 2.3): which ones are idle now.
    idle: BTreeSet<u32>,
    skip_idle: bool,
}

impl ReaderAlignment {
    pub fn new(skip_idle: bool) -> ReaderAlignment {
        ReaderAlignment {
            max_desired: MAX_WATERMARK,
            latest: MIN_WATERMARK,
            splits: BTreeMap::new(),
            paused: BTreeMap::new(),
            paused_ns: BTreeMap::new(),
            idle: BTreeSet::new(),
            skip_idle,
        }
    }

    /// The report of the periodic update (`emitLatestWatermark`): nothing
    /// before the output's first watermark (FLINK-32414), `MAX_WATERMARK`
    /// while the output is idle.
    pub fn report(&self, idle: bool) -> Option<i64> {
        match (self.latest, idle) {
            (MIN_WATERMARK, _) => None,
            (_, true) => Some(MAX_WATERMARK),
            (w, false) => Some(w),
        }
    }

    /// The reader as a whole waits (FLIP-182, `shouldWaitForAlignment`).
    pub fn waiting(&self) -> bool {
        self.max_desired < self.latest
    }

    /// The output emitted `w` (`updateCurrentEffectiveWatermark`).
    pub fn emitted(&mut self, w: i64) {
        self.latest = w;
    }

    /// Split `split` offered watermark `w` at a periodic emit
    /// (`updateCurrentSplitWatermark`): paused at once if it is above the
    /// allowed maximum; resumed only by the next event.
    pub fn split_watermark(&mut self, split: u32, w: i64, idle: bool, clock: u64) -> PauseResume {
        self.splits.insert(split, w);
        match idle {
            true => self.idle.insert(split),
            false => self.idle.remove(&split),
        };
        let mut out = PauseResume::default();
        let skip = self.skip_idle && idle;
        if !skip && w > self.max_desired && !self.paused.contains_key(&split) {
            self.paused.insert(split, clock);
            out.pause.push(split);
        }
        out
    }

    /// An alignment event allows up to `max` (`updateMaxDesiredWatermark`,
    /// then `checkSplitWatermarkAlignment`): splits above it pause, paused
    /// ones not above it resume.
    pub fn allowed(&mut self, max: i64, clock: u64) -> PauseResume {
        self.max_desired = max;
        let mut out = PauseResume::default();
        for (&split, &w) in &self.splits {
            if self.skip_idle && self.idle.contains(&split) {
                continue;
            }
            let paused = self.paused.contains_key(&split);
            if w > max && !paused {
                out.pause.push(split);
            } else if w <= max && paused {
                out.resume.push(split);
            }
        }
        for &split in &out.pause {
            self.paused.insert(split, clock);
        }
        for &split in &out.resume {
            self.unpause(split, clock);
        }
        out
    }

    fn unpause(&mut self, split: u32, clock: u64) {
        if let Some(since) = self.paused.remove(&split) {
            *self.paused_ns.entry(split).or_default() += clock.saturating_sub(since);
        }
    }

    /// Split `split` finished (`splitFinished`): forgotten.
    pub fn split_finished(&mut self, split: u32) {
        self.splits.remove(&split);
        self.paused.remove(&split);
        self.paused_ns.remove(&split);
        self.idle.remove(&split);
    }

    /// Whether split `split` is paused.
    pub fn is_paused(&self, split: u32) -> bool {
        self.paused.contains_key(&split)
    }

    /// The paused splits, each with its watermark.
    pub fn paused(&self) -> impl Iterator<Item = (u32, i64)> + '_ {
        self.paused
            .keys()
            .map(|&s| (s, self.splits.get(&s).copied().unwrap_or(MIN_WATERMARK)))
    }

    /// Split `split`'s idleness clock at activity-clock time `clock`: it
    /// stops while the split is paused (FLINK-35886).
    pub fn split_clock(&self, split: u32, clock: u64) -> u64 {
        let before = self.paused_ns.get(&split).copied().unwrap_or(0);
        let now = self
            .paused
            .get(&split)
            .map_or(0, |&since| clock.saturating_sub(since));
        clock.saturating_sub(before).saturating_sub(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregator_keeps_the_minimum_and_says_when_it_moves() {
        let mut a = WatermarkAggregator::default();
        assert_eq!(a.aggregated(), MIN_WATERMARK);
        assert_eq!(a.aggregate(0u32, 10), Some(10));
        assert_eq!(a.aggregate(1, 20), None, "10 is still the minimum");
        assert_eq!(a.aggregate(0, 30), Some(20), "a report replaces the last");
        assert_eq!(a.aggregate(1, MAX_WATERMARK), Some(30));
        assert_eq!(a.keys().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn the_allowed_maximum_saturates() {
        assert_eq!(max_allowed(100, 50), 150);
        assert_eq!(max_allowed(MAX_WATERMARK, 50), MAX_WATERMARK);
    }

    #[test]
    fn nothing_is_reported_before_the_first_watermark_and_idle_reports_max() {
        let mut r = ReaderAlignment::new(false);
        assert_eq!(r.report(false), None);
        r.emitted(7);
        assert_eq!(r.report(false), Some(7));
        assert_eq!(r.report(true), Some(MAX_WATERMARK));
    }

    #[test]
    fn splits_ahead_pause_and_resume_with_the_next_event() {
        let mut r = ReaderAlignment::new(false);
        assert!(r.split_watermark(1, 100, false, 0).is_empty());
        assert!(r.split_watermark(2, 10, false, 0).is_empty());
        let out = r.allowed(50, 5);
        assert_eq!(out.pause, vec![1]);
        assert!(r.is_paused(1));
        assert!(
            r.split_watermark(2, 60, false, 6).pause == vec![2],
            "paused at once"
        );
        assert!(
            r.split_watermark(2, 40, false, 7).is_empty(),
            "resumed only by an event"
        );
        let out = r.allowed(100, 20);
        assert_eq!(out.resume, vec![1, 2]);
        assert_eq!(r.split_clock(1, 30), 15, "paused from 5 to 20");
        r.emitted(60);
        assert!(!r.waiting());
        r.allowed(50, 30);
        assert!(r.waiting());
    }

    #[test]
    fn idle_splits_are_left_alone_from_flink_2_3() {
        let mut r = ReaderAlignment::new(true);
        r.split_watermark(1, 100, true, 0);
        assert!(r.allowed(50, 1).is_empty());
        let mut r = ReaderAlignment::new(false);
        r.split_watermark(1, 100, true, 0);
        assert_eq!(r.allowed(50, 1).pause, vec![1]);
    }
}
