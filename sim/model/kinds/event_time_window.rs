//! `event-time-window`: per-key event-time windows, as Flink's
//! `WindowOperator` runs a `TumblingEventTimeWindows`,
//! `SlidingEventTimeWindows` or `EventTimeSessionWindows` assigner with the
//! `EventTimeTrigger` and a sum as the window function.
//!
//! A record goes into every window its timestamp falls in (one, tumbling;
//! `size / slide` of them, sliding) whose cleanup time (its last
//! millisecond plus the allowed lateness) the watermark has not reached.
//! A session assigner gives it the window `[timestamp, timestamp + gap)`,
//! merged (`MergingWindowSet.addWindow`) with every window of its key it
//! touches: the merged window takes their contents, their timers are
//! deleted and the trigger registers the merged window's; the lateness
//! check is the merged window's, so a late record that joins a live
//! session is not late. A record no window takes is late: it goes to the
//! late-data side output (`Context::emit_late`; dropped without one). The
//! trigger fires a window when the watermark passes its last millisecond
//! (an event-time timer), and at once for a record that joins a window the
//! watermark already passed (a late firing, within the lateness); the
//! cleanup timer clears it. A firing emits `(key, window sum)` with the
//! timestamp of the window's last millisecond and the lineage of the last
//! record that joined it.
//!
//! The windows (for sessions: the merging window set too, FLINK-3740) and
//! their timers are keyed state by key group (a `model::state::ValueState`),
//! so a checkpoint, a savepoint and a rescale move them with their keys;
//! the watermark is the task's (`Context::watermark`), never in the state,
//! as Flink's timer service's.

use super::*;
use crate::engine::SimTime;
use crate::model::operator::{CheckpointId, Context};
use crate::model::state::ValueState;
use crate::model::{Lineage, Record};
use crate::mutant::Mutant;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "event-time-window",
        description: "per-key event-time windows of `window_size` (sliding every `window_slide`), \
                      or sessions of `session_gap`, in keyed state with their timers; emits \
                      (key, window sum) when the watermark passes a window's end, again per \
                      record up to `allowed_lateness` later; later records go to a \
                      `side_output = \"late\"` edge or are dropped",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::KeyedBytes,
    create: |s| match *s.kind {
        OperatorKind::EventTimeWindow {
            session_gap,
            allowed_lateness,
            ..
        } if session_gap > crate::engine::SimDuration::ZERO => Box::new(SessionWindows::sessions(
            ms(session_gap),
            ms(allowed_lateness),
        )),
        OperatorKind::EventTimeWindow {
            window_size,
            window_slide,
            allowed_lateness,
            ..
        } => Box::new(EventTimeWindow::new(
            ms(window_size),
            ms(window_slide),
            ms(allowed_lateness),
        )),
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::EventTimeWindow {
            window_size,
            window_slide,
            session_gap,
            allowed_lateness,
        } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "keyBy(key).window(TumblingEventTimeWindows | SlidingEventTimeWindows | \
                  EventTimeSessionWindows).allowedLateness(..).sideOutputLateData(..)\
                  .reduce(sum): Flink's WindowOperator, EventTimeTrigger and window state"
                .into(),
            java: Java::Window {
                size_ms: ms(window_size),
                slide_ms: ms(window_slide),
                gap_ms: ms(session_gap),
                lateness_ms: ms(allowed_lateness),
            },
        },
        ref k => not_mine(k),
    },
};

/// What the state keys a window by: its end for tumbling and sliding
/// windows (the start follows from the size), `[start, end)` for sessions.
pub trait Window: Copy + Ord + Default + Debug + Serialize + DeserializeOwned + 'static {
    /// The window's end (exclusive).
    fn end(self) -> i64;

    /// Puts `record` into its windows (`WindowOperator.processElement`):
    /// whether some window took it.
    fn assign(op: &mut WindowOperator<Self>, record: Record, ctx: &mut Context) -> bool;

    /// The state was just restored.
    fn restored(_: &mut WindowOperator<Self>, _: &mut Context) {}
}

/// A session window, `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Session {
    start: i64,
    end: i64,
}

impl Session {
    /// `TimeWindow.intersects`: touching windows merge.
    fn touches(self, o: Session) -> bool {
        self.start <= o.end && self.end >= o.start
    }
}

/// One window's contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Acc {
    sum: i64,
    /// The last record that joined it.
    last: Lineage,
    emitted_at: u64,
}

/// A key's windows and its event-time timers (`(time, window)`: Flink's
/// timer service keeps them per key and window).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct KeyWindows<W: Ord> {
    windows: BTreeMap<W, Acc>,
    timers: BTreeSet<(i64, W)>,
}

/// The timers one key group of a snapshot holds, and (`strip`) the key
/// group without them.
pub(super) fn group_timers<W: Window>(bytes: &[u8], strip: bool) -> Result<(u64, Vec<u8>), String> {
    let mut values: Vec<(u64, KeyWindows<W>)> = crate::model::state::value_state_values(bytes)?;
    let n = values.iter().map(|(_, w)| w.timers.len() as u64).sum();
    if !strip {
        return Ok((n, Vec::new()));
    }
    values.iter_mut().for_each(|(_, w)| w.timers.clear());
    Ok((n, crate::model::state::value_state_group(&values)))
}

/// The operator (see the module's docs), windows keyed by `W`.
pub struct WindowOperator<W: Window> {
    size: i64,
    slide: i64,
    gap: i64,
    lateness: i64,
    state: ValueState<KeyWindows<W>>,
    /// Every key's timers in firing order, `(time, key, window)`: the
    /// timer service's queue (rebuilt from the state on restore).
    queue: BTreeSet<(i64, u64, W)>,
}

/// Tumbling and sliding windows.
pub type EventTimeWindow = WindowOperator<i64>;
/// Session windows.
pub type SessionWindows = WindowOperator<Session>;

impl EventTimeWindow {
    pub fn new(size_ms: i64, slide_ms: i64, lateness_ms: i64) -> EventTimeWindow {
        WindowOperator::with(size_ms, slide_ms, 0, lateness_ms)
    }

    /// The ends of the windows `timestamp` falls in, latest first
    /// (`TimeWindow.getWindowStartWithOffset`, offset 0).
    fn windows_of(&self, timestamp: i64) -> impl Iterator<Item = i64> + '_ {
        let last_start = timestamp - (timestamp.rem_euclid(self.slide));
        let size = self.size;
        std::iter::successors(Some(last_start), move |s| Some(s - self.slide))
            .take_while(move |&s| s > timestamp - size)
            .map(move |s| s.saturating_add(size))
    }
}

impl SessionWindows {
    pub fn sessions(gap_ms: i64, lateness_ms: i64) -> SessionWindows {
        WindowOperator::with(0, 0, gap_ms, lateness_ms)
    }

    /// `MergingWindowSet.addWindow` for `new`, with the merge function
    /// `WindowOperator` passes it: the window the record goes into.
    fn merge(&mut self, key: u64, new: Session, watermark: i64) -> Session {
        let touched: Vec<Session> = match self.state.get(key) {
            Some(kw) => kw
                .windows
                .keys()
                .copied()
                .filter(|w| new.touches(*w))
                .collect(),
            None => return new,
        };
        let cover = |a: Session, b: Session| Session {
            start: a.start.min(b.start),
            end: a.end.max(b.end),
        };
        let result = touched.iter().copied().fold(new, cover);
        if touched.is_empty() || touched == [result] {
            return result; // a new window, or one that covers it: no merge
        }
        // EventTimeTrigger.onMerge, then each merged window's trigger
        // cleared and cleanup timer deleted, then their contents merged.
        if result.end - 1 > watermark {
            self.register(key, result.end - 1, result);
        }
        let mut merged = Acc::default();
        for w in touched {
            self.delete(key, w.end - 1, w);
            self.delete(key, self.cleanup_time(w.end), w);
            let kw = self.state.entry(key);
            if let Some(acc) = kw.windows.remove(&w) {
                merged.sum = merged.sum.wrapping_add(acc.sum);
                merged.last = acc.last;
                merged.emitted_at = acc.emitted_at;
            }
        }
        self.state.entry(key).windows.insert(result, merged);
        result
    }
}

impl Window for i64 {
    fn end(self) -> i64 {
        self
    }

    fn assign(op: &mut EventTimeWindow, record: Record, ctx: &mut Context) -> bool {
        let ends: Vec<i64> = op.windows_of(record.timestamp).collect();
        let mut taken = false;
        for end in ends {
            if op.cleanup_time(end) <= ctx.watermark {
                continue; // isWindowLate: the record is dropped for it
            }
            op.add(end, record, ctx);
            taken = true;
        }
        taken
    }
}

impl Window for Session {
    fn end(self) -> i64 {
        self.end
    }

    fn assign(op: &mut SessionWindows, record: Record, ctx: &mut Context) -> bool {
        let new = Session {
            start: record.timestamp,
            end: record.timestamp.saturating_add(op.gap),
        };
        let own_late = op.cleanup_time(new.end) <= ctx.watermark;
        let window = match own_late && ctx.mutant(Mutant::SessionLateBeforeMerge) {
            true => new, // judged late on its own window, before any merge
            false => op.merge(record.key, new, ctx.watermark),
        };
        if op.cleanup_time(window.end) <= ctx.watermark {
            return false; // isWindowLate: retired
        }
        op.add(window, record, ctx);
        true
    }

    fn restored(op: &mut SessionWindows, ctx: &mut Context) {
        if !op.state.is_empty() && ctx.mutant(Mutant::SessionSetNotRestored) {
            // FLINK-3740: the merging window set is not in the snapshot;
            // the restored sessions' contents are orphaned.
            let keys: Vec<u64> = op.state.iter().map(|(k, _)| k).collect();
            for k in keys {
                op.state.entry(k).windows.clear();
            }
        }
    }
}

impl<W: Window> WindowOperator<W> {
    fn with(size: i64, slide: i64, gap: i64, lateness: i64) -> WindowOperator<W> {
        WindowOperator {
            size: size.max(1),
            slide: slide.max(1),
            gap: gap.max(1),
            lateness: lateness.max(0),
            state: ValueState::new(),
            queue: BTreeSet::new(),
        }
    }

    fn cleanup_time(&self, end: i64) -> i64 {
        (end - 1).saturating_add(self.lateness)
    }

    fn register(&mut self, key: u64, time: i64, window: W) {
        self.state.entry(key).timers.insert((time, window));
        self.queue.insert((time, key, window));
    }

    fn delete(&mut self, key: u64, time: i64, window: W) {
        self.state.entry(key).timers.remove(&(time, window));
        self.queue.remove(&(time, key, window));
    }

    /// `record` joins `window`; the trigger's `onElement` fires it at once
    /// if the watermark passed its end, else registers its timer; then its
    /// cleanup timer.
    fn add(&mut self, window: W, record: Record, ctx: &mut Context) {
        let kw = self.state.entry(record.key);
        let acc = kw.windows.entry(window).or_default();
        acc.sum = acc.sum.wrapping_add(record.value);
        acc.last = record.lineage;
        acc.emitted_at = record.emitted_at.0;
        let acc = *acc;
        let end = window.end();
        if end - 1 <= ctx.watermark {
            Self::fire(record.key, end, acc, ctx); // a late firing
        } else {
            self.register(record.key, end - 1, window);
        }
        let cleanup = self.cleanup_time(end);
        if cleanup != i64::MAX {
            self.register(record.key, cleanup, window);
        }
    }

    fn fire(key: u64, end: i64, acc: Acc, ctx: &mut Context) {
        ctx.emit(Record {
            key,
            value: acc.sum,
            lineage: acc.last,
            emitted_at: SimTime(acc.emitted_at),
            timestamp: end - 1,
            payload: crate::model::Payload::NONE,
        });
    }
}

impl<W: Window> Operator for WindowOperator<W> {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        if !W::assign(self, record, ctx)
            && record.timestamp.saturating_add(self.lateness) <= ctx.watermark
        {
            ctx.emit_late(record); // isSkippedElement && isElementLate
        }
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut Context) {
        while let Some(&(time, key, window)) = self.queue.first() {
            if time > watermark {
                break;
            }
            self.queue.pop_first();
            ctx.timer_fired(key, crate::model::timers::Domain::Event, time);
            let end = window.end();
            let cleanup = self.cleanup_time(end);
            let Some(kw) = self.state.get(key) else {
                continue;
            };
            let mut kw = kw.clone();
            kw.timers.remove(&(time, window));
            if time == end - 1 {
                if let Some(&acc) = kw.windows.get(&window) {
                    Self::fire(key, end, acc, ctx);
                }
            }
            if time == cleanup {
                kw.windows.remove(&window);
            }
            if kw.windows.is_empty() && kw.timers.is_empty() {
                self.state.clear(key);
            } else {
                self.state.update(key, kw);
            }
        }
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.state.snapshot(ctx)
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        self.state.restore(state, ctx)?;
        W::restored(self, ctx);
        self.queue = self
            .state
            .iter()
            .flat_map(|(key, kw)| kw.timers.iter().map(move |&(t, w)| (t, key, w)))
            .collect();
        Ok(())
    }

    fn snapshot_is_read_only(&self) -> bool {
        true
    }

    fn timers_held(&self) -> u64 {
        self.queue.len() as u64
    }

    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.state
            .to_map(|kw| kw.windows.values().fold(0, |s, a| s.wrapping_add(a.sum)))
    }

    fn order_insensitive_output(&self) -> bool {
        false // which records a window holds when it fires depends on order
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const SessionSetNotRestored: Mutant = Mutant::declare(&MutantInfo {
            name: "session-set-not-restored",
            part: "time windows",
            what: "a session window operator's merging window set is not restored: the sessions open at the checkpoint lose their contents on a restore, so their timers fire on nothing and their results are lost",
            modelled_on: "FLINK-3740: the MergingWindowSet of session windows was kept on the heap only, outside the checkpoint; after a restore the window contents' state windows were unknown and the sessions never fired",
            caught_by: "exactly-once-output",
            applies: &[("event-time-sessions", "aligned")],
        });
        pub const SessionLateBeforeMerge: Mutant = Mutant::declare(&MutantInfo {
            name: "session-late-before-merge",
            part: "time windows",
            what: "a session window judges a record late by its own window before merging it: a late record that touches a live session goes to the late side output instead of into the session",
            modelled_on: "WindowOperator.processElement decides lateness on the window MergingWindowSet.addWindow returns (isWindowLate(actualWindow)), after the merge; a check on the element's own window drops records Flink keeps",
            caught_by: "exactly-once-output",
            applies: &[("event-time-sessions", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExternalStore;
    use crate::mutant::Mutants;

    /// Feeds `steps` (a record `(key, timestamp)`, or a watermark): the
    /// results `(key, sum, timestamp)` and the late records' timestamps.
    fn run_late<W: Window>(
        op: &mut WindowOperator<W>,
        steps: &[(Option<(u64, i64)>, i64)],
    ) -> (Vec<(u64, i64, i64)>, Vec<i64>) {
        let (mut store, mut out, mut late) = (ExternalStore::default(), Vec::new(), Vec::new());
        let mut watermark = i64::MIN;
        for &(record, w) in steps {
            let mut ctx = Context {
                subtask: 0,
                parallelism: 1,
                operator: 0,
                max_parallelism: 128,
                attempt: 0,
                now: SimTime::ZERO,
                restored: None,
                watermark,
                store: &mut store,
                out: &mut out,
                late: &mut late,
                fired: &mut Vec::new(),
                mutants: Mutants::NONE,
            };
            match record {
                Some((key, timestamp)) => op.process(
                    Record {
                        key,
                        value: 1,
                        timestamp,
                        ..Record::default()
                    },
                    &mut ctx,
                ),
                None => {
                    watermark = w;
                    ctx.watermark = w;
                    op.process_watermark(w, &mut ctx);
                }
            }
        }
        let out = out.iter().map(|r| (r.key, r.value, r.timestamp)).collect();
        (out, late.iter().map(|r| r.timestamp).collect())
    }

    fn run<W: Window>(
        op: &mut WindowOperator<W>,
        steps: &[(Option<(u64, i64)>, i64)],
    ) -> Vec<(u64, i64, i64)> {
        run_late(op, steps).0
    }

    #[test]
    fn tumbling_windows_fire_when_the_watermark_passes_their_end() {
        let mut op = EventTimeWindow::new(10, 10, 0);
        let out = run(
            &mut op,
            &[
                (Some((1, 3)), 0),
                (Some((1, 9)), 0),
                (Some((1, 12)), 0),
                (None, 8),
                (None, 9),
                (Some((1, 5)), 0), // late: dropped
                (None, 30),
            ],
        );
        assert_eq!(out, vec![(1, 2, 9), (1, 1, 19)]);
        assert!(op.state.is_empty() && op.queue.is_empty());
    }

    #[test]
    fn allowed_lateness_fires_again_per_late_record_then_clears() {
        let mut op = EventTimeWindow::new(10, 10, 5);
        let out = run(
            &mut op,
            &[
                (Some((2, 1)), 0),
                (None, 9),
                (Some((2, 4)), 0), // within lateness: fires again
                (None, 14),
                (Some((2, 4)), 0), // past the cleanup time: dropped
                (None, 100),
            ],
        );
        assert_eq!(out, vec![(2, 1, 9), (2, 2, 9)]);
    }

    #[test]
    fn sliding_windows_hold_a_record_in_each_window_it_falls_in() {
        let op = EventTimeWindow::new(10, 5, 0);
        assert_eq!(op.windows_of(7).collect::<Vec<_>>(), vec![15, 10]);
        assert_eq!(op.windows_of(0).collect::<Vec<_>>(), vec![10, 5]);
        let mut op = EventTimeWindow::new(10, 5, 0);
        let out = run(&mut op, &[(Some((3, 7)), 0), (None, i64::MAX)]);
        assert_eq!(out, vec![(3, 1, 9), (3, 1, 14)]);
    }

    #[test]
    fn late_records_no_window_takes_go_to_the_side_output() {
        let mut op = EventTimeWindow::new(10, 10, 0);
        let steps = [
            (Some((1, 3)), 0),
            (None, 9),
            (Some((1, 5)), 0),
            (Some((1, 12)), 0),
        ];
        let (out, late) = run_late(&mut op, &steps);
        assert_eq!(out, vec![(1, 1, 9)]);
        assert_eq!(late, vec![5]);
    }

    #[test]
    fn sessions_merge_the_windows_a_record_touches_and_fire_once() {
        let mut op = SessionWindows::sessions(5, 0);
        let out = run(
            &mut op,
            &[
                (Some((1, 0)), 0),  // [0, 5)
                (Some((1, 10)), 0), // [10, 15)
                (Some((1, 5)), 0),  // [5, 10) touches both: [0, 15)
                (Some((2, 1)), 0),  // another key's own session
                (None, 13),
            ],
        );
        assert_eq!(out, vec![(2, 1, 5)]);
        assert_eq!(
            op.timers_held(),
            1,
            "the merged windows' timers were deleted"
        );
        let out = run(&mut op, &[(None, 14)]);
        assert_eq!(out, vec![(1, 3, 14)]);
        assert!(op.state.is_empty() && op.queue.is_empty());
    }

    #[test]
    fn a_late_record_that_touches_a_live_session_joins_it() {
        let mut op = SessionWindows::sessions(5, 3);
        let (out, late) = run_late(
            &mut op,
            &[
                (Some((1, 20)), 0), // [20, 25): fires at 24, cleared at 27
                (None, 24),
                (Some((1, 16)), 0), // [16, 21) is late on its own; merged: [16, 25)
                (Some((1, 2)), 0),  // [2, 7): late, touches nothing
                (None, 30),
            ],
        );
        assert_eq!(out, vec![(1, 1, 24), (1, 2, 24)]);
        assert_eq!(late, vec![2]);
    }
}
