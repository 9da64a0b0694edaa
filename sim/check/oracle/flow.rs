//! The oracle's data path: a task reads its channel queues through its
//! operator, and what the operator emitted is routed onto the queues of
//! the tasks downstream, or, for a sink, into the expected arrivals.

use super::{Exec, Oracle, TaskRun};
use crate::model::record::subtask_for_key;
use crate::model::Record;
use crate::scenario::Partitioning;

impl Exec<'_> {
    /// Routes what the operator emitted: onto channel queues, or, for a
    /// sink, into the expected arrivals.
    pub(super) fn route(&mut self, task: &mut TaskRun, oracle: &mut Oracle) {
        if !self.fired.is_empty() {
            self.note_fired(oracle); // a timer fired in any call
        }
        if !self.late.is_empty() {
            let mut late = std::mem::take(&mut self.late);
            self.route_records(task, oracle, &late, true);
            late.clear();
            self.late = late;
        }
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        self.route_records(task, oracle, &out, false);
        out.clear();
        self.out = out;
    }

    /// Routes `records` (`late`: into the late-data side outputs) as the
    /// runtime does (`World::route_out`, `World::route_late`).
    fn route_records(
        &mut self,
        task: &mut TaskRun,
        oracle: &mut Oracle,
        records: &[Record],
        late: bool,
    ) {
        self.routed += records.len() as u64;
        let max_p = self.scenario.max_parallelism;
        let info = &self.exec.tasks[task.t as usize];
        for (e, edge) in info.outputs.iter().enumerate() {
            for &r in records {
                let watermark = self.time.on && r.is_element();
                if !watermark && edge.late != late {
                    continue;
                }
                let mut deliver = |ch: u32| {
                    let to = self.exec.channels[ch as usize].to as usize;
                    match self.sink_slot[to] {
                        Some(slot) => {
                            if !watermark {
                                oracle.arrive(slot, r);
                            }
                            if self.sink_queues {
                                self.queues.push(ch, r);
                            }
                        }
                        None => self.queues.push(ch, r),
                    }
                };
                if watermark {
                    for &ch in &edge.channels {
                        if !self.feedback[ch as usize] {
                            deliver(ch);
                        }
                    }
                    continue;
                }
                match edge.partitioning {
                    Partitioning::Forward => deliver(edge.channels[0]),
                    Partitioning::Hash => {
                        let s = subtask_for_key(r.key, edge.channels.len() as u32, max_p);
                        deliver(edge.channels[s as usize]);
                    }
                    Partitioning::Rebalance => {
                        let c = &mut task.rr[e];
                        let s = *c as usize % edge.channels.len();
                        *c = c.wrapping_add(1);
                        deliver(edge.channels[s]);
                    }
                    Partitioning::Broadcast => {
                        for &ch in &edge.channels {
                            deliver(ch);
                        }
                    }
                }
            }
        }
    }

    /// Processes up to `n` queued records of channel `ch`.
    pub(super) fn read(&mut self, task: &mut TaskRun, ch: u32, n: u64, oracle: &mut Oracle) {
        if !self.time.on {
            return self.read_batches(task, ch, n, oracle);
        }
        for _ in 0..n {
            let Some(r) = self.queues.pop(ch) else {
                return;
            };
            if r.is_element() {
                self.input_element(task, ch, r, oracle);
                continue;
            }
            let from = self.exec.channels[ch as usize].from_op.0;
            self.call(task, |op, ctx| op.process_from(from, r, ctx));
            self.route(task, oracle);
        }
    }

    /// [`Exec::read`] without event time: the records queued when a batch
    /// starts go through one operator call, and what they emitted is
    /// routed after it. The same calls in the same order, and the same
    /// records on every channel in the same order, as a call and a route
    /// per record: routing only appends to queues, and what it appends to
    /// `ch` itself (a feedback edge) comes behind the batch, where the next
    /// batch finds it.
    fn read_batches(&mut self, task: &mut TaskRun, ch: u32, n: u64, oracle: &mut Oracle) {
        let from = self.exec.channels[ch as usize].from_op.0;
        let mut left = n;
        while left > 0 {
            let k = left.min(self.queues.len(ch) as u64);
            if k == 0 {
                return;
            }
            left -= k;
            let mut batch = std::mem::take(&mut self.batch);
            batch.extend((0..k).map_while(|_| self.queues.pop(ch)));
            self.call(task, |op, ctx| {
                for &r in &batch {
                    op.process_from(from, r, ctx);
                }
            });
            batch.clear();
            self.batch = batch;
            self.route(task, oracle);
        }
    }
}
