//! `keyed-process`: a per-key running sum with timers, as a Flink
//! `KeyedProcessFunction` with keyed `ValueState` and the timer service.
//!
//! Each record adds its value to its key's sum and registers an
//! event-time timer `timer_delay` after its timestamp and, with
//! `processing_delay`, a processing-time timer that long after the
//! processing time it is read at (`currentProcessingTime() + delay`). A
//! timer fires once per key and time (Flink's timer service deduplicates):
//! an event-time one when the operator's watermark reaches it, a
//! processing-time one when the task's processing-time service calls (a
//! mail). It emits `(key, sum)` with the lineage of the key's last record;
//! an event-time firing carries the timer's time as its timestamp, a
//! processing-time firing none (`Long.MIN_VALUE`: Flink's
//! `TimestampedCollector` erases it).
//!
//! The sums and every key's timers are keyed state by key group
//! (`model::timers`), so checkpoints, savepoints and rescales move them
//! with their keys.

use super::*;
use crate::engine::SimTime;
use crate::model::operator::{CheckpointId, Context};
use crate::model::state::ValueState;
use crate::model::timers::{Domain, KeyTimers, TimerService};
use crate::model::{Lineage, Record};
use std::collections::BTreeMap;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "keyed-process",
        description: "per-key running sum with timers in keyed state (a KeyedProcessFunction): \
                      each record registers an event-time timer `timer_delay` after its \
                      timestamp and, with `processing_delay`, a processing-time timer; a timer \
                      that fires emits (key, sum)",
        keyed: true,
        check: no_params,
    },
    role: Role::Transform,
    holds: false,
    state: |_| StateLayout::KeyedBytes,
    create: |s| match *s.kind {
        OperatorKind::KeyedProcess {
            timer_delay,
            processing_delay,
        } => {
            let processing = (processing_delay.nanos() > 0).then(|| ms(processing_delay));
            Box::new(KeyedProcess::new(ms(timer_delay), processing))
        }
        ref k => not_mine(k),
    },
    flink: |k| match *k {
        OperatorKind::KeyedProcess {
            timer_delay,
            processing_delay,
        } => Flink::Maps {
            fidelity: Fidelity::Exact,
            how: "keyBy(key).process(KeyedProcessFunction): keyed ValueState and Flink's timer \
                  service (event-time and processing-time timers in the keyed snapshot)"
                .into(),
            java: Java::Process {
                delay_ms: ms(timer_delay),
                processing_ms: ms(processing_delay),
            },
        },
        ref k => not_mine(k),
    },
};

/// A key's state: its running sum, its last record, and its timers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct KeyEntry {
    sum: i64,
    last: Lineage,
    emitted_at: u64,
    timers: KeyTimers,
}

/// The timers one key group of a snapshot holds, and (`strip`) the key
/// group without them.
pub(super) fn group_timers(bytes: &[u8], strip: bool) -> Result<(u64, Vec<u8>), String> {
    let mut values: Vec<(u64, KeyEntry)> = crate::model::state::value_state_values(bytes)?;
    let n = values
        .iter()
        .map(|(_, e)| (e.timers.event.len() + e.timers.processing.len()) as u64)
        .sum();
    if !strip {
        return Ok((n, Vec::new()));
    }
    values
        .iter_mut()
        .for_each(|(_, e)| e.timers = KeyTimers::default());
    Ok((n, crate::model::state::value_state_group(&values)))
}

/// The operator (see the module's docs).
pub struct KeyedProcess {
    delay: i64,
    processing_delay: Option<i64>,
    state: ValueState<KeyEntry>,
    timers: TimerService,
}

impl KeyedProcess {
    pub fn new(delay_ms: i64, processing_delay_ms: Option<i64>) -> KeyedProcess {
        KeyedProcess {
            delay: delay_ms.max(0),
            processing_delay: processing_delay_ms.map(|d| d.max(1)),
            state: ValueState::new(),
            timers: TimerService::default(),
        }
    }

    /// Timer `(time, key)` of `domain` fires: `onTimer` emits the key's sum.
    fn on_timer(&mut self, domain: Domain, time: i64, key: u64, ctx: &mut Context) {
        let Some(entry) = self.state.get(key) else {
            return;
        };
        let mut entry = entry.clone();
        TimerService::fired(&mut entry.timers, key, domain, time, ctx);
        ctx.emit(Record {
            key,
            value: entry.sum,
            lineage: entry.last,
            emitted_at: SimTime(entry.emitted_at),
            timestamp: match domain {
                Domain::Event => time,
                Domain::Processing => i64::MIN,
            },
            payload: crate::model::Payload::NONE,
        });
        self.state.update(key, entry);
    }

    fn fire_due(&mut self, domain: Domain, upto: i64, ctx: &mut Context) {
        while let Some((time, key)) = self.timers.pop_due(domain, upto) {
            self.on_timer(domain, time, key, ctx);
        }
    }
}

impl Operator for KeyedProcess {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let now = ctx.processing_time();
        let entry = self.state.entry(record.key);
        entry.sum = entry.sum.wrapping_add(record.value);
        entry.last = record.lineage;
        entry.emitted_at = record.emitted_at.0;
        let at = record.timestamp.saturating_add(self.delay);
        self.timers
            .register(&mut entry.timers, record.key, Domain::Event, at);
        if let Some(d) = self.processing_delay {
            let at = now.saturating_add(d);
            self.timers
                .register(&mut entry.timers, record.key, Domain::Processing, at);
        }
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut Context) {
        self.fire_due(Domain::Event, watermark, ctx);
    }

    fn on_processing_time(&mut self, time: i64, ctx: &mut Context) {
        self.fire_due(Domain::Processing, time, ctx);
    }

    fn next_processing_timer(&self) -> Option<i64> {
        self.timers.next_processing()
    }

    fn uses_processing_time(&self) -> bool {
        self.processing_delay.is_some()
    }

    fn timers_held(&self) -> u64 {
        self.timers.len() as u64
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        let mut written = ValueState::new();
        for (key, entry) in self.state.iter() {
            let timers = entry.timers.for_snapshot(ctx);
            written.update(key, KeyEntry { timers, ..*entry });
        }
        written.snapshot(ctx)
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        self.state.restore(state, ctx)?;
        self.timers
            .restore(self.state.iter().map(|(k, e)| (k, &e.timers)));
        Ok(())
    }

    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.state.to_map(|e| e.sum)
    }

    fn order_insensitive_output(&self) -> bool {
        false // a firing emits the sum of the records read before it
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExternalStore;
    use crate::mutant::Mutants;

    fn call<R>(
        op: &mut KeyedProcess,
        now_ms: u64,
        watermark: i64,
        f: impl FnOnce(&mut KeyedProcess, &mut Context) -> R,
    ) -> (R, Vec<Record>) {
        let (mut store, mut out, mut fired) = (ExternalStore::default(), Vec::new(), Vec::new());
        let mut ctx = Context {
            subtask: 0,
            parallelism: 1,
            operator: 0,
            max_parallelism: 128,
            attempt: 0,
            now: SimTime(now_ms * 1_000_000),
            restored: None,
            watermark,
            store: &mut store,
            out: &mut out,
            late: &mut Vec::new(),
            fired: &mut fired,
            mutants: Mutants::NONE,
        };
        let r = f(op, &mut ctx);
        (r, out)
    }

    fn rec(key: u64, timestamp: i64) -> Record {
        Record {
            key,
            value: 1,
            timestamp,
            ..Record::default()
        }
    }

    #[test]
    fn event_timers_fire_once_when_the_watermark_reaches_them() {
        let mut op = KeyedProcess::new(10, None);
        call(&mut op, 0, i64::MIN, |op, ctx| {
            op.process(rec(1, 5), ctx);
            op.process(rec(1, 5), ctx); // the same timer: once
            op.process(rec(2, 30), ctx);
        });
        let (_, out) = call(&mut op, 0, 14, |op, ctx| op.process_watermark(14, ctx));
        assert!(out.is_empty());
        let (_, out) = call(&mut op, 0, 15, |op, ctx| op.process_watermark(15, ctx));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].key, out[0].value, out[0].timestamp), (1, 2, 15));
        let (_, out) = call(&mut op, 0, i64::MAX, |op, ctx| {
            op.process_watermark(i64::MAX, ctx)
        });
        assert_eq!((out[0].key, out[0].value, out[0].timestamp), (2, 1, 40));
    }

    #[test]
    fn processing_timers_fire_when_the_service_calls() {
        let mut op = KeyedProcess::new(10, Some(100));
        call(&mut op, 50, i64::MIN, |op, ctx| op.process(rec(3, 0), ctx));
        assert_eq!(op.next_processing_timer(), Some(150));
        let (_, out) = call(&mut op, 149, i64::MIN, |op, ctx| {
            op.on_processing_time(149, ctx)
        });
        assert!(out.is_empty());
        let (_, out) = call(&mut op, 150, i64::MIN, |op, ctx| {
            op.on_processing_time(150, ctx)
        });
        assert_eq!(
            (out[0].key, out[0].value, out[0].timestamp),
            (3, 1, i64::MIN)
        );
        assert_eq!(op.next_processing_timer(), None);
    }

    #[test]
    fn timers_survive_a_snapshot_and_restore() {
        let mut op = KeyedProcess::new(10, Some(100));
        call(&mut op, 0, i64::MIN, |op, ctx| op.process(rec(3, 7), ctx));
        let (bytes, _) = call(&mut op, 0, i64::MIN, |op, ctx| op.snapshot(1, ctx));
        let mut back = KeyedProcess::new(10, Some(100));
        let (r, _) = call(&mut back, 0, i64::MIN, |op, ctx| op.restore(&bytes, ctx));
        r.unwrap();
        assert_eq!(back.next_processing_timer(), Some(100));
        let (_, out) = call(&mut back, 0, 17, |op, ctx| op.process_watermark(17, ctx));
        assert_eq!(out.len(), 1);
    }
}
