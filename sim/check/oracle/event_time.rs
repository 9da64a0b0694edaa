//! Event time in the oracle, as the tasks have it (docs/event-time.md):
//! watermarks are elements in the oracle's channel queues, at the places
//! the run's schedule puts them. A source emits its combined watermark
//! where its schedule ran a periodic emit (`Step::Watermark`) and
//! `MAX_WATERMARK` after its last record; a task's valve takes watermarks
//! out of its input before the operator; a new input watermark goes to
//! the operator's `process_watermark`, then out on every channel. A
//! restart starts the task's event time again at `MIN_WATERMARK`, as a
//! redeployed task's does. Watermark statuses travel as elements too:
//! a source's idleness follows the run's decisions (`Step::Idle`: the
//! timers read processing time, which the oracle has not), and from there
//! the statuses, the valves and the dropped watermarks of an idle output
//! follow as in the run.

use super::{Exec, Oracle, TaskRun};
use crate::model::event_time::{SourceWatermarks, Valve, MAX_WATERMARK, MIN_WATERMARK};
use crate::model::{Element, Record};

/// A task's event time in the oracle.
pub(super) struct OracleTime {
    source: Option<SourceWatermarks>,
    valve: Option<Valve>,
    /// The status its output announced last.
    idle: bool,
    /// A source's splits (or main output) the run found idle at its next
    /// periodic emit.
    idled: Vec<u32>,
}

impl Exec<'_> {
    /// Task `t`'s event time when it starts or restarts (`None` without).
    pub(super) fn task_time(&self, t: u32) -> Option<Box<OracleTime>> {
        if !self.time.on {
            return None;
        }
        let info = &self.exec.tasks[t as usize];
        let is_source = self.scenario.op(info.operator).kind.is_source();
        let valve = (!is_source).then(|| {
            let mut valve = Valve::new(info.inputs.len());
            for (i, &ch) in info.inputs.iter().enumerate() {
                if self.feedback[ch as usize] {
                    valve.input_status(i, true); // no watermarks on it
                }
            }
            valve
        });
        let source = is_source.then(|| {
            let mut source = self.time.source(info.operator.0);
            for p in self.time.initial_splits(info.operator.0, info.subtask) {
                source.add_split(p, 0);
            }
            source
        });
        Some(Box::new(OracleTime {
            source,
            valve,
            idle: false,
            idled: Vec::new(),
        }))
    }

    /// A split assigned to a source joins its watermarks.
    pub(super) fn split_assigned(&self, task: &mut TaskRun, split: u32) {
        if let Some(source) = task.time.as_mut().and_then(|x| x.source.as_mut()) {
            source.add_split(split, 0);
        }
    }

    /// A source restored from `state` holds its restored splits.
    pub(super) fn restore_source_splits(&self, task: &mut TaskRun, state: &[u8]) {
        let Some(offsets) = crate::model::operator::source_offsets(state) else {
            return;
        };
        let op = self.exec.tasks[task.t as usize].operator.0;
        let mut source = self.time.source(op);
        for (p, offset) in self.time.restored_splits(&offsets) {
            source.add_split(p, offset);
        }
        if let Some(time) = task.time.as_mut() {
            time.source = Some(source);
        }
    }

    /// The records a source just emitted (in `out`) feed its generators.
    pub(super) fn source_records_timed(&mut self, task: &mut TaskRun) {
        let Some(source) = task.time.as_mut().and_then(|x| x.source.as_mut()) else {
            return;
        };
        for r in &self.out {
            let l = r.lineage;
            source.on_record(
                l.partition,
                l.offset,
                r.timestamp,
                self.time.is_last(l.partition, l.offset),
            );
        }
    }

    /// The run found split `split` idle at its source's next periodic
    /// emit.
    pub(super) fn split_idle(&mut self, task: &mut TaskRun, split: u32) {
        if let Some(time) = task.time.as_mut() {
            time.idled.push(split);
        }
    }

    /// The schedule's periodic emit at a source: idle where the run found
    /// it, or still idle without a record since.
    pub(super) fn periodic_watermark(&mut self, task: &mut TaskRun, oracle: &mut Oracle) {
        let Some(time) = task.time.as_mut() else {
            return;
        };
        let idled = std::mem::take(&mut time.idled);
        let Some(source) = time.source.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        source.periodic(
            &mut |p, idleness| idleness.idle_now || idled.contains(&p),
            &mut out,
        );
        self.emit_elements(task, &out, oracle);
    }

    /// What a source or a valve emitted, out in order.
    fn emit_elements(&mut self, task: &mut TaskRun, out: &[Element], oracle: &mut Oracle) {
        for &e in out {
            match e {
                Element::Watermark(w) => self.advance_watermark(task, w, oracle),
                Element::Status { idle } => {
                    let Some(time) = task.time.as_mut() else {
                        continue;
                    };
                    if time.idle != idle {
                        time.idle = idle;
                        self.out.push(Record::watermark_status(idle));
                        self.route(task, oracle);
                    }
                }
            }
        }
    }

    /// A source's input ended.
    pub(super) fn end_of_event_time(&mut self, task: &mut TaskRun, oracle: &mut Oracle) {
        // An output announced idle sends no watermark, this one included.
        let active = task.time.as_ref().is_some_and(|x| !x.idle);
        if active && task.sent < MAX_WATERMARK {
            self.advance_watermark(task, MAX_WATERMARK, oracle);
        }
    }

    /// A stream element read from input channel `ch`.
    pub(super) fn input_element(
        &mut self,
        task: &mut TaskRun,
        ch: u32,
        r: Record,
        oracle: &mut Oracle,
    ) {
        match r.element() {
            Some(Element::Watermark(w)) => self.input_watermark(task, ch, w, oracle),
            Some(Element::Status { idle }) => {
                let input = self.exec.channels[ch as usize].input_index as usize;
                let Some(valve) = task.time.as_mut().and_then(|x| x.valve.as_mut()) else {
                    return;
                };
                let out = valve.input_status(input, idle);
                let elements: Vec<Element> = (out.watermark.map(Element::Watermark).into_iter())
                    .chain(out.idle.map(|idle| Element::Status { idle }))
                    .collect();
                self.emit_elements(task, &elements, oracle);
            }
            None => {}
        }
    }

    /// A watermark read from input channel `ch`: through the valve.
    fn input_watermark(&mut self, task: &mut TaskRun, ch: u32, w: i64, oracle: &mut Oracle) {
        let input = self.exec.channels[ch as usize].input_index as usize;
        let out = task
            .time
            .as_mut()
            .and_then(|x| x.valve.as_mut())
            .and_then(|v| v.input_watermark(input, w).watermark);
        if let Some(w) = out {
            self.advance_watermark(task, w, oracle);
        }
    }

    /// The operator's clock advances to `w` if it is later, then the
    /// watermark goes out.
    fn advance_watermark(&mut self, task: &mut TaskRun, w: i64, oracle: &mut Oracle) {
        task.sent = w;
        if w > task.watermark {
            task.watermark = w;
            self.call(task, |op, ctx| op.process_watermark(w, ctx));
            self.note_fired(oracle);
        }
        self.out.push(Record::watermark(w));
        self.route(task, oracle);
    }

    /// A restart: the valve and a source's generators start again; the
    /// operator's clock is its state's, kept (as its restore gives it).
    pub(super) fn restart_event_time(&self, task: &mut TaskRun) {
        task.time = self.task_time(task.t);
        task.sent = MIN_WATERMARK;
    }
}
