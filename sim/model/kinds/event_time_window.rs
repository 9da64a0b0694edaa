//! `event-time-window`: per-key event-time windows, as Flink's
//! `WindowOperator` runs a `TumblingEventTimeWindows` or
//! `SlidingEventTimeWindows` assigner with the `EventTimeTrigger` and a sum
//! as the window function.
//!
//! A record goes into every window its timestamp falls in (one, tumbling;
//! `size / slide` of them, sliding) whose cleanup time (its last
//! millisecond plus the allowed lateness) the watermark has not reached;
//! a record no window takes is late and dropped (`isWindowLate`). The
//! trigger fires a window when the watermark passes its last millisecond
//! (an event-time timer), and at once for a record that joins a window the
//! watermark already passed (a late firing, within the lateness); the
//! cleanup timer clears it. A firing emits `(key, window sum)` with the
//! timestamp of the window's last millisecond and the lineage of the last
//! record that joined it.
//!
//! The windows and their timers are keyed state by key group (a
//! `model::state::ValueState`), so a checkpoint, a savepoint and a rescale
//! move them with their keys; the watermark is the task's
//! (`Context::watermark`), never in the state, as Flink's timer service's.

use super::*;
use crate::engine::SimTime;
use crate::model::operator::{CheckpointId, Context};
use crate::model::state::ValueState;
use crate::model::{Lineage, Record};
use std::collections::{BTreeMap, BTreeSet};

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "event-time-window",
        description: "per-key event-time windows of `window_size` (sliding every `window_slide`) \
                      in keyed state with their timers; emits (key, window sum) when the \
                      watermark passes a window's end, again per record up to \
                      `allowed_lateness` later; drops later records",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::KeyedBytes,
    create: |s| match *s.kind {
        OperatorKind::EventTimeWindow {
            window_size,
            window_slide,
            allowed_lateness,
        } => Box::new(EventTimeWindow::new(
            ms(window_size),
            ms(window_slide),
            ms(allowed_lateness),
        )),
        ref k => not_mine(k),
    },
    flink: |_| Flink::Refused("event-time windows are not exported to Flink yet"),
};

/// One window's contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Acc {
    sum: i64,
    /// The last record that joined it.
    last: Lineage,
    emitted_at: u64,
}

/// A key's windows (by end, exclusive) and its event-time timers
/// (`(time, window end)`: Flink's timer service keeps them per key and
/// window).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct KeyWindows {
    windows: BTreeMap<i64, Acc>,
    timers: BTreeSet<(i64, i64)>,
}

/// The timers one key group of a snapshot holds, and (`strip`) the key
/// group without them.
pub(super) fn group_timers(bytes: &[u8], strip: bool) -> Result<(u64, Vec<u8>), String> {
    let mut values: Vec<(u64, KeyWindows)> = crate::model::state::value_state_values(bytes)?;
    let n = values.iter().map(|(_, w)| w.timers.len() as u64).sum();
    if !strip {
        return Ok((n, Vec::new()));
    }
    values.iter_mut().for_each(|(_, w)| w.timers.clear());
    Ok((n, crate::model::state::value_state_group(&values)))
}

/// The operator (see the module's docs).
pub struct EventTimeWindow {
    size: i64,
    slide: i64,
    lateness: i64,
    state: ValueState<KeyWindows>,
    /// Every key's timers in firing order, `(time, key, window end)`: the
    /// timer service's queue (rebuilt from the state on restore).
    queue: BTreeSet<(i64, u64, i64)>,
}

impl EventTimeWindow {
    pub fn new(size_ms: i64, slide_ms: i64, lateness_ms: i64) -> EventTimeWindow {
        EventTimeWindow {
            size: size_ms.max(1),
            slide: slide_ms.max(1),
            lateness: lateness_ms.max(0),
            state: ValueState::new(),
            queue: BTreeSet::new(),
        }
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

    fn cleanup_time(&self, end: i64) -> i64 {
        (end - 1).saturating_add(self.lateness)
    }

    fn register(&mut self, key: u64, time: i64, end: i64) {
        self.state.entry(key).timers.insert((time, end));
        self.queue.insert((time, key, end));
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

impl Operator for EventTimeWindow {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let watermark = ctx.watermark;
        let ends: Vec<i64> = self.windows_of(record.timestamp).collect();
        for end in ends {
            if self.cleanup_time(end) <= watermark {
                continue; // isWindowLate: the record is dropped for it
            }
            let kw = self.state.entry(record.key);
            let acc = kw.windows.entry(end).or_default();
            acc.sum = acc.sum.wrapping_add(record.value);
            acc.last = record.lineage;
            acc.emitted_at = record.emitted_at.0;
            let acc = *acc;
            if end - 1 <= watermark {
                Self::fire(record.key, end, acc, ctx); // a late firing
            } else {
                self.register(record.key, end - 1, end);
            }
            let cleanup = self.cleanup_time(end);
            if cleanup != i64::MAX {
                self.register(record.key, cleanup, end);
            }
        }
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut Context) {
        while let Some(&(time, key, end)) = self.queue.first() {
            if time > watermark {
                break;
            }
            self.queue.pop_first();
            ctx.timer_fired(key, crate::model::timers::Domain::Event, time);
            let cleanup = self.cleanup_time(end);
            let Some(kw) = self.state.get(key) else {
                continue;
            };
            let mut kw = kw.clone();
            kw.timers.remove(&(time, end));
            if time == end - 1 {
                if let Some(&acc) = kw.windows.get(&end) {
                    Self::fire(key, end, acc, ctx);
                }
            }
            if time == cleanup {
                kw.windows.remove(&end);
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
        self.queue = self
            .state
            .iter()
            .flat_map(|(key, kw)| kw.timers.iter().map(move |&(t, end)| (t, key, end)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExternalStore;
    use crate::mutant::Mutants;

    fn run(op: &mut EventTimeWindow, steps: &[(Option<(u64, i64)>, i64)]) -> Vec<(u64, i64, i64)> {
        let (mut store, mut out) = (ExternalStore::default(), Vec::new());
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
        out.iter().map(|r| (r.key, r.value, r.timestamp)).collect()
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
}
