//! The effective schedule of a run: per task, what its operator was made to
//! do, in order (records read from which input, records a source emitted,
//! snapshots, notifications, end of input, restarts from a checkpoint), as
//! far as it survived into the run's result.
//!
//! A restart replaces a task's history after its restored checkpoint with a
//! new branch, so the log is a tree of segments: a checkpoint remembers the
//! position of each task's snapshot, and a task restored from it continues
//! on a new segment whose parent is that position. Following the parents
//! from a task's current segment gives its **effective** schedule: the
//! failure-free execution that the committed output and the final state
//! claim to be the result of.
//!
//! The oracle (`check::oracle`) replays the effective schedules on fresh
//! operators over its own, independently computed channel contents: it takes
//! the run's choices (which input a task read next, when it restarted), never
//! its data. Every input is then judged in each channel's FIFO order,
//! whatever its operators depend on.

use crate::engine::SimTime;
use crate::model::timers::FiredTimer;
use crate::model::{CheckpointId, TaskId};

/// A crash placed relative to a checkpoint event of a task (the crashed
/// one, or the task with the job's latest event before the crash, named
/// by its head operator and subtask): when that task, in its attempt
/// `attempt`, had taken `records` records since the `nth` (from 1) event
/// of its kind in that attempt.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CrashAnchor {
    pub operator: u32,
    pub subtask: u32,
    pub attempt: u32,
    pub event: AnchorEvent,
    pub nth: u32,
    pub records: u64,
}

/// The events a crash is placed after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnchorEvent {
    /// The operator's snapshot of a checkpoint or savepoint.
    Snapshot,
    /// A notification that a checkpoint completed.
    Notification,
}

/// One step of a task's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `n` records read from input `input` (in channel order).
    Read { input: u32, n: u64 },
    /// A source emitted `n` records, polled at `at` (ns; a partition with
    /// a rate offers only the records there by then).
    Emit { n: u64, at: u64 },
    /// `prepare_snapshot_pre_barrier` for a checkpoint or savepoint.
    PreBarrier(CheckpointId),
    /// The operator snapshot for a checkpoint or savepoint.
    Snapshot(CheckpointId),
    /// `notify_checkpoint_complete`.
    Complete(CheckpointId),
    /// `notify_checkpoint_aborted`.
    Aborted(CheckpointId),
    /// `end_of_input` (non-source tasks); at a source with event time, its
    /// input ended and it sent `MAX_WATERMARK`.
    EndOfInput,
    /// An event from the operator's coordinator (a FLIP-27 reader's split
    /// assignment).
    Event(crate::model::flip27::OperatorEvent),
    /// A source's periodic watermark emit ran (event time): the oracle's
    /// source emits its own combined watermark here, if it grew.
    Watermark,
    /// At the next periodic emit, the idleness timer of this split (a
    /// global partition; `idleness::MAIN_OUTPUT`: the main output's) found
    /// its timeout passed: a decision of processing time, which the
    /// oracle follows (idle until the split's next record).
    Idle(u32),
    /// The processing time (ms) the steps after it ran at, logged for a
    /// task whose operator reads it (`Operator::uses_processing_time`)
    /// whenever it changed: the oracle's `Context::now`.
    Clock(i64),
    /// The task's processing-time service called at this time (ms): the
    /// processing-time timers due by then fired (a mail).
    ProcessingTime(i64),
    /// A FLIP-27 reader paused this split for watermark alignment (a
    /// decision of the coordinator's timing, which the oracle follows).
    Pause(u32),
    /// … and resumed it.
    Resume(u32),
    /// A fresh instance, restored from the snapshot of this checkpoint (the
    /// last `Snapshot` before it), or empty (`None`).
    Restart(Option<CheckpointId>),
    /// The `Complete` or `Restart` just before did not take: the operator's
    /// call threw (a log sink's commit refused for an unknown reason, or
    /// given up on), and its task fails. It promises nothing.
    Untaken,
}

/// A position in the log: a segment and a length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogPos {
    segment: u32,
    len: u32,
}

struct Segment {
    parent: Option<LogPos>,
    steps: Vec<Step>,
    /// The timers that fired, each after the first `n` steps.
    fired: Vec<(u32, FiredTimer)>,
}

/// What a task's every logged step reads, together (one cache line holds
/// four tasks': a chain of 50,000 operators logs a step per operator per
/// batch, and three arrays cost three cache misses).
#[derive(Clone, Copy)]
struct Head {
    /// The task's current segment.
    segment: u32,
    /// Its operator reads processing time: its steps are clocked.
    clocked: bool,
    /// The time (ms) it last logged (`Step::Clock`).
    clock: i64,
}

/// Every task's schedule, as a tree of segments.
pub struct ScheduleLog {
    segments: Vec<Segment>,
    /// Per task.
    heads: Vec<Head>,
    /// Steps logged in all (for the memory limit).
    pub logged: u64,
    /// Per task: how many times it was redeployed.
    restarts: Vec<u32>,
    /// Per task: the step count (`logged`) at its last snapshot or
    /// notification in its attempt (0: none), to find the job's latest.
    last_event: Vec<u64>,
}

impl ScheduleLog {
    pub fn new(tasks: usize) -> ScheduleLog {
        ScheduleLog {
            segments: (0..tasks)
                .map(|_| Segment {
                    parent: None,
                    steps: Vec::new(),
                    fired: Vec::new(),
                })
                .collect(),
            heads: (0..tasks as u32)
                .map(|segment| Head {
                    segment,
                    clocked: false,
                    clock: i64::MIN,
                })
                .collect(),
            logged: 0,
            restarts: vec![0; tasks],
            last_event: vec![0; tasks],
        }
    }

    /// Task `t`'s operator reads processing time: its steps are clocked.
    pub fn clocked(&mut self, t: TaskId) {
        self.heads[t as usize].clocked = true;
    }

    /// A clocked task's steps from now run at `now` (nothing for another).
    #[inline]
    pub fn clock(&mut self, t: TaskId, now: SimTime) {
        let head = &mut self.heads[t as usize];
        if !head.clocked {
            return;
        }
        let ms = i64::try_from(now.nanos() / 1_000_000).unwrap_or(i64::MAX);
        if head.clock != ms {
            head.clock = ms;
            self.push(t, Step::Clock(ms));
        }
    }

    /// A timer of task `t`'s operator fired.
    pub fn fired(&mut self, t: TaskId, timer: FiredTimer) {
        let seg = &mut self.segments[self.heads[t as usize].segment as usize];
        seg.fired.push((seg.steps.len() as u32, timer));
        self.logged += 1; // counted as a step (the memory limit)
    }

    #[inline]
    fn steps(&mut self, t: TaskId) -> &mut Vec<Step> {
        &mut self.segments[self.heads[t as usize].segment as usize].steps
    }

    /// `n` records read from `input` at `now` (merged with a read just
    /// before).
    #[inline]
    pub fn read(&mut self, t: TaskId, input: u32, n: u64, now: SimTime) {
        self.clock(t, now);
        let steps = self.steps(t);
        match steps.last_mut() {
            Some(Step::Read { input: i, n: m }) if *i == input => *m += n,
            _ => {
                steps.push(Step::Read { input, n });
                self.logged += 1;
            }
        }
    }

    /// A source emitted `n` records at `at`, merged with an emission just
    /// before when `merge` (its sources have no rates: when a poll happens
    /// does not change what it emits).
    #[inline]
    pub fn emit(&mut self, t: TaskId, n: u64, at: u64, merge: bool) {
        let steps = self.steps(t);
        match steps.last_mut() {
            Some(Step::Emit { n: m, .. }) if merge => *m += n,
            _ => {
                steps.push(Step::Emit { n, at });
                self.logged += 1;
            }
        }
    }

    pub fn push(&mut self, t: TaskId, step: Step) {
        self.steps(t).push(step);
        self.logged += 1;
        if matches!(step, Step::Snapshot(_) | Step::Complete(_)) {
            self.last_event[t as usize] = self.logged;
        }
    }

    /// When task `t` last had a snapshot or notification in its attempt,
    /// in steps logged (0: never); later events have larger numbers.
    pub fn last_event(&self, t: TaskId) -> u64 {
        self.last_event[t as usize]
    }

    /// Where task `t` is now (taken at its snapshot).
    pub fn pos(&self, t: TaskId) -> LogPos {
        let segment = self.heads[t as usize].segment;
        LogPos {
            segment,
            len: self.segments[segment as usize].steps.len() as u32,
        }
    }

    /// Task `t` is redeployed: restored from checkpoint `from`, whose
    /// snapshot of `t` was taken at `at` (`None`: a fresh start).
    pub fn restart(&mut self, t: TaskId, from: Option<CheckpointId>, at: Option<LogPos>) {
        let (from, parent) = match (from, at) {
            (Some(id), Some(p)) => (Some(id), Some(p)),
            _ => (None, None),
        };
        self.heads[t as usize].segment = self.segments.len() as u32;
        self.restarts[t as usize] += 1;
        self.heads[t as usize].clock = i64::MIN;
        self.last_event[t as usize] = 0;
        self.segments.push(Segment {
            parent,
            steps: vec![Step::Restart(from)],
            fired: Vec::new(),
        });
    }

    /// Task `t`'s attempt (how many times it was redeployed) and the
    /// records it took in it: read, or emitted by a source.
    pub fn attempt(&self, t: TaskId) -> (u32, u64) {
        let steps = &self.segments[self.heads[t as usize].segment as usize].steps;
        let taken = steps.iter().fold(0u64, |n, s| match *s {
            Step::Read { n: m, .. } | Step::Emit { n: m, .. } => n.saturating_add(m),
            _ => n,
        });
        (self.restarts[t as usize], taken)
    }

    /// Where task `t` (the head of operator `operator`'s subtask
    /// `subtask`) is relative to its last snapshot and its last
    /// notification in its attempt, latest first: each event's kind, its
    /// number among its kind's events of the attempt (from 1), and the
    /// records taken since.
    pub fn anchors(&self, t: TaskId, operator: u32, subtask: u32) -> Vec<CrashAnchor> {
        let steps = &self.segments[self.heads[t as usize].segment as usize].steps;
        // Per kind: events so far, and (nth, step index, records taken then).
        let (mut taken, mut counts) = (0u64, [0u32; 2]);
        let mut last: [Option<(u32, usize, u64)>; 2] = [None, None];
        for (i, s) in steps.iter().enumerate() {
            let kind = match *s {
                Step::Read { n, .. } | Step::Emit { n, .. } => {
                    taken = taken.saturating_add(n);
                    continue;
                }
                Step::Snapshot(_) => 0,
                Step::Complete(_) => 1,
                _ => continue,
            };
            counts[kind] += 1;
            last[kind] = Some((counts[kind], i, taken));
        }
        let mut anchors: Vec<(usize, CrashAnchor)> = last
            .iter()
            .zip([AnchorEvent::Snapshot, AnchorEvent::Notification])
            .filter_map(|(l, event)| {
                l.map(|(nth, at, then)| {
                    (
                        at,
                        CrashAnchor {
                            operator,
                            subtask,
                            attempt: self.restarts[t as usize],
                            event,
                            nth,
                            records: taken - then,
                        },
                    )
                })
            })
            .collect();
        anchors.sort_by_key(|&(at, _)| std::cmp::Reverse(at));
        anchors.into_iter().map(|(_, a)| a).collect()
    }

    /// The segments of task `t`'s effective schedule, first first, each
    /// with the length of it that is effective.
    fn chain(&self, t: TaskId) -> Vec<(u32, u32)> {
        let mut chain = Vec::new();
        let mut seg = self.heads[t as usize].segment;
        let mut len = self.segments[seg as usize].steps.len() as u32;
        loop {
            chain.push((seg, len));
            match self.segments[seg as usize].parent {
                Some(p) => {
                    seg = p.segment;
                    len = p.len;
                }
                None => break,
            }
        }
        chain.reverse();
        chain
    }

    /// Task `t`'s effective schedule: its current segment preceded by the
    /// prefixes its restores continued from.
    pub fn effective(&self, t: TaskId) -> Vec<Step> {
        let mut out = Vec::new();
        for (seg, len) in self.chain(t) {
            out.extend_from_slice(&self.segments[seg as usize].steps[..len as usize]);
        }
        out
    }

    /// The timers of every task that fired in its effective schedule
    /// (after a step of it), sorted.
    pub fn effective_fired(&self) -> Vec<FiredTimer> {
        let mut out = Vec::new();
        for t in 0..self.heads.len() as TaskId {
            for (seg, len) in self.chain(t) {
                let fired = &self.segments[seg as usize].fired;
                out.extend(fired.iter().filter(|f| f.0 <= len).map(|f| f.1));
            }
        }
        out.sort_unstable();
        out
    }

    /// Every task's effective schedule, in task order.
    pub fn effective_all(&self) -> Vec<Vec<Step>> {
        (0..self.heads.len() as TaskId)
            .map(|t| self.effective(t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_continues_from_the_restored_position() {
        let mut log = ScheduleLog::new(1);
        log.read(0, 0, 2, SimTime::ZERO);
        log.read(0, 0, 3, SimTime::ZERO);
        log.read(0, 1, 1, SimTime::ZERO);
        log.push(0, Step::Snapshot(1));
        let at = log.pos(0);
        log.read(0, 1, 4, SimTime::ZERO); // lost with the failure
        log.restart(0, Some(1), Some(at));
        log.read(0, 1, 2, SimTime::ZERO);
        assert_eq!(
            log.effective(0),
            vec![
                Step::Read { input: 0, n: 5 },
                Step::Read { input: 1, n: 1 },
                Step::Snapshot(1),
                Step::Restart(Some(1)),
                Step::Read { input: 1, n: 2 },
            ]
        );
        // A restart without a checkpoint forgets everything.
        log.restart(0, None, None);
        log.emit(0, 3, 0, true);
        assert_eq!(
            log.effective(0),
            vec![Step::Restart(None), Step::Emit { n: 3, at: 0 }]
        );
    }
}
