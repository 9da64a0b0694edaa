//! A task's replay as a resumable state: the oracle runs a task's schedule
//! up to a read whose records are not there yet, and resumes it later.
//!
//! On a DAG the oracle runs each task to its end in topological order
//! (every upstream task is done before its readers start, so no read ever
//! waits). A job with an iteration (feedback edges) feeds tasks from tasks
//! later in that order: its replay interleaves the tasks, each as far as
//! its records are there, then drains what is left and ends each task once
//! every task upstream of it (feedback edges aside) has ended, a loop once
//! nothing moves in it any more.

use super::{Exec, Oracle, TaskRun, ORACLE_POLL};
use crate::engine::SimTime;
use crate::runtime::schedule::Step;

/// One task's replay in progress.
pub(super) struct Resume {
    pub task: TaskRun,
    /// The next step of its schedule.
    pos: usize,
    /// Records still to read of the step at `pos` (a `Read`).
    left: Option<u64>,
    is_source: bool,
    batch: usize,
    inputs: Vec<u32>,
    /// The operator's state at its last snapshot (a source is restored
    /// from it at a restart).
    last_snapshot: Option<Vec<u8>>,
    /// `end_of_input` was called (by the schedule or at the end).
    ended: bool,
    exhausted: bool,
    /// Ended: a source emitted everything, another task's input ended.
    pub done: bool,
}

impl Exec<'_> {
    pub(super) fn resume(&self, t: u32) -> Resume {
        let info = &self.exec.tasks[t as usize];
        Resume {
            task: self.fresh(t),
            pos: 0,
            left: None,
            is_source: self.scenario.op(info.operator).kind.is_source(),
            batch: (self.scenario.network.buffer_records as usize).max(1),
            inputs: info.inputs.clone(),
            last_snapshot: None,
            ended: false,
            exhausted: false,
            done: false,
        }
    }

    /// Whether `r`'s schedule is all replayed.
    pub(super) fn steps_done(r: &Resume, steps: &[Step]) -> bool {
        r.pos >= steps.len()
    }

    /// Replays `r`'s schedule from where it stands. With `wait`, a read
    /// stops at the records that are not there yet (it resumes from there);
    /// without, it takes what is there and goes on. True if it did
    /// anything.
    pub(super) fn advance(
        &mut self,
        r: &mut Resume,
        steps: &[Step],
        wait: bool,
        oracle: &mut Oracle,
    ) -> bool {
        let start = r.pos;
        let mut read_any = false;
        while let Some(&step) = steps.get(r.pos) {
            if let Step::Read { input, n } = step {
                let Some(&ch) = r.inputs.get(input as usize) else {
                    r.pos += 1;
                    continue;
                };
                let want = r.left.unwrap_or(n);
                let there = self.queues.len(ch) as u64;
                let take = want.min(there);
                self.read(&mut r.task, ch, take, oracle);
                read_any |= take > 0;
                if take < want && wait {
                    r.left = Some(want - take);
                    return read_any || r.pos > start;
                }
                r.left = None;
                r.pos += 1;
                continue;
            }
            self.step(r, step, oracle);
            r.pos += 1;
        }
        read_any || r.pos > start
    }

    /// One step of a schedule other than a read.
    fn step(&mut self, r: &mut Resume, step: Step, oracle: &mut Oracle) {
        let task = &mut r.task;
        match step {
            Step::Read { .. } => {}
            Step::Emit { n, at } => {
                self.now = SimTime(at);
                r.exhausted |= self.emit(task, n, r.batch, oracle);
                self.now = SimTime::ZERO;
            }
            Step::PreBarrier(id) => {
                self.call(task, |op, ctx| op.prepare_snapshot_pre_barrier(id, ctx));
                self.route(task, oracle);
            }
            Step::Snapshot(_) if !r.is_source && task.op.snapshot_is_read_only() => {}
            Step::Snapshot(id) => {
                r.last_snapshot = Some(self.call(task, |op, ctx| op.snapshot(id, ctx)));
                self.route(task, oracle);
            }
            Step::Complete(id) => {
                self.call(task, |op, ctx| op.notify_checkpoint_complete(id, ctx));
                self.route(task, oracle);
            }
            Step::Aborted(id) => {
                self.call(task, |op, ctx| op.notify_checkpoint_aborted(id, ctx));
                self.route(task, oracle);
            }
            Step::Untaken => {}
            Step::Event(event) => self.operator_event(task, event),
            Step::Watermark => self.periodic_watermark(task, oracle),
            Step::Idle(split) => self.split_idle(task, split),
            // Watermark alignment: where the run's reader paused and
            // resumed its splits.
            Step::Pause(split) => task.op.pause_or_resume_splits(&[split], &[]),
            Step::Resume(split) => task.op.pause_or_resume_splits(&[], &[split]),
            Step::Clock(ms) => task.clock = Some(SimTime(ms_to_ns(ms))),
            Step::ProcessingTime(ms) => {
                self.call(task, |op, ctx| op.on_processing_time(ms, ctx));
                self.note_fired(oracle);
                self.route(task, oracle);
            }
            Step::EndOfInput if r.is_source => self.end_of_event_time(task, oracle),
            Step::EndOfInput => {
                if !r.ended && !r.is_source {
                    self.call(task, |op, ctx| op.end_of_input(ctx));
                    self.route(task, oracle);
                    r.ended = true;
                }
            }
            Step::Restart(from) => {
                // A failure-free execution never restarts: the operator
                // keeps what it computed, which is what a correct
                // snapshot and restore reproduce (the user's snapshot
                // code is judged, not trusted). Only what no checkpoint
                // holds starts over, as in the run: the routing state
                // and a source's reading order, which follows from its
                // offsets (sources are replayed through their restore).
                let t = task.t;
                task.rr = self.fresh(t).rr;
                self.restart_event_time(task);
                if from.is_none() {
                    *task = self.fresh(t);
                    r.ended = false;
                    r.exhausted = false;
                } else if r.is_source {
                    if let Some(state) = &r.last_snapshot {
                        *task = self.fresh(t);
                        // A failed restore is the run's protocol violation.
                        let _ = self.call(task, |op, ctx| op.restore(state, ctx));
                        self.restore_source_splits(task, state);
                        self.out.clear(); // emitted during restore: dropped
                        r.exhausted = false;
                    }
                }
            }
        }
    }

    /// Reads whatever is queued on `r`'s inputs, channel after channel.
    /// True if it read anything.
    pub(super) fn drain(&mut self, r: &mut Resume, oracle: &mut Oracle) -> bool {
        let mut read_any = false;
        for i in 0..r.inputs.len() {
            let ch = r.inputs[i];
            let n = self.queues.len(ch) as u64;
            self.read(&mut r.task, ch, n, oracle);
            read_any |= n > 0;
        }
        read_any
    }

    /// The end of `r`'s input: a source emits the rest of its input, any
    /// other task reads what is queued and ends.
    pub(super) fn end(&mut self, r: &mut Resume, oracle: &mut Oracle) {
        self.past_schedule = true;
        self.end_input(r, oracle);
        self.past_schedule = false;
        r.done = true;
    }

    fn end_input(&mut self, r: &mut Resume, oracle: &mut Oracle) {
        if r.is_source {
            self.end_of_splits(&mut r.task);
            self.now = SimTime(u64::MAX); // every record is there
            while !r.exhausted {
                let before = self.routed;
                r.exhausted = self.emit(&mut r.task, ORACLE_POLL as u64, ORACLE_POLL, oracle);
                // A reader that waits for splits after the end: stop.
                r.exhausted |= self.routed == before;
            }
            self.end_of_event_time(&mut r.task, oracle);
            self.now = SimTime::ZERO;
        } else {
            self.drain(r, oracle);
            if !r.ended {
                self.call(&mut r.task, |op, ctx| op.end_of_input(ctx));
                self.route(&mut r.task, oracle);
                r.ended = true;
            }
        }
    }
}

/// Milliseconds of processing time as the simulation's nanoseconds.
fn ms_to_ns(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000)
}
