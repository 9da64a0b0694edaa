//! The transactional log's side of a run: tasks whose operators threw (a
//! log sink's write or commit refused), transactions that tasks restarted
//! since left open (evidence for the open-transactions check), and what a
//! `read_committed` reader of each sink's topic sees at the end, which
//! becomes the sink's committed output.

use super::*;
use crate::model::kinds::{Role, SinkRole};
use crate::runtime::output::StaleTxn;
use crate::scenario::OperatorId;

impl World<'_> {
    /// The log sinks' operator indices.
    fn log_sinks(&self) -> impl Iterator<Item = u32> + '_ {
        (self.plan.scenario.operators.iter().enumerate())
            .filter(|(_, o)| o.kind.role() == Role::Sink(SinkRole::Log))
            .map(|(i, _)| i as u32)
    }

    /// Fails the tasks whose operators threw during the last event.
    pub(super) fn raise_operator_failures(&mut self) {
        for f in std::mem::take(&mut self.tasks.store.failures) {
            let t = self.plan.exec.task_of(OperatorId(f.operator), f.subtask);
            if self.tasks.list[t as usize].status != Status::Running {
                continue;
            }
            let why = f.why;
            let name = self.plan.exec.tasks[t as usize].name.clone();
            if f.injected {
                self.rec.counters.operator_failures_by_faults += 1;
            } else {
                self.rec.counters.operator_failures += 1;
            }
            if !f.injected && self.rec.evidence.operator_failures.len() < 10 {
                let failure = (self.net.now.0, format!("task {name} failed: {why}"));
                self.rec.evidence.operator_failures.push(failure);
            }
            self.note_fault(|| format!("task {name} failed: {why}"));
            self.fail_task(t);
        }
    }

    /// Tasks whose operators' calls blocked their thread (a producer's
    /// flush) stay busy until then (after the event, which may have set
    /// their step's end).
    pub(super) fn apply_blocks(&mut self) {
        for (op, subtask, until) in std::mem::take(&mut self.tasks.store.blocks) {
            let t = self.plan.exec.task_of(OperatorId(op), subtask);
            if self.tasks.list[t as usize].status != Status::Running {
                continue;
            }
            let s = &mut self.net.sched[t as usize];
            s.busy_until = s.busy_until.max(until);
            self.rec.counters.log_flushes_blocked += 1;
            let now = self.net.now;
            let task = &mut self.tasks.list[t as usize];
            let since = task.flush_blocked.map_or(now, |(since, _)| since);
            let latest = task.flush_blocked.map_or(until, |(_, u)| u.max(until));
            task.flush_blocked = Some((since, latest));
            self.net.poke(t);
        }
    }

    /// Task `t`'s blocked call returned: the broker fault that delayed the
    /// answers it waited for (to produce requests, or from the transaction
    /// coordinator) lasted until now, for the judge (a hold that long is
    /// the fault's, not the job's).
    pub(super) fn block_returned(&mut self, t: TaskId) {
        let Some((since, until)) = self.tasks.list[t as usize].flush_blocked else {
            return;
        };
        if until > self.net.now {
            return;
        }
        self.tasks.list[t as usize].flush_blocked = None;
        let name = self.plan.exec.tasks[t as usize].name.clone();
        let waited = self.net.now.since(since);
        self.note_fault(|| {
            format!("task {name} returned from a call that waited {waited} for answers a broker fault delayed")
        });
        // A task whose last notification blocked exits now, if it may.
        if self.is_local() {
            self.local_try_finish(t);
        } else {
            self.try_exit(t);
        }
    }

    /// Until when the calls of task `t`'s operators blocked its thread in
    /// this event, if they did.
    pub(super) fn blocked_until(&self, t: TaskId) -> Option<SimTime> {
        let task = &self.tasks.list[t as usize];
        (self.tasks.store.blocks.iter())
            .filter(|&&(op, subtask, _)| {
                subtask == task.subtask && task.members.iter().any(|m| m.index == op)
            })
            .map(|&(_, _, until)| until)
            .max()
    }

    /// The failures due by now (`Context::fail_at`) of tasks not
    /// redeployed since fail them, before the event runs.
    pub(super) fn raise_due_failures(&mut self) {
        let now = self.net.now;
        let all = std::mem::take(&mut self.tasks.store.failures_at);
        let (due, later): (Vec<_>, Vec<_>) = all.into_iter().partition(|f| f.0 <= now);
        self.tasks.store.failures_at = later;
        for (_, attempt, f) in due {
            let t = self.plan.exec.task_of(OperatorId(f.operator), f.subtask);
            if self.tasks.list[t as usize].deploy_attempt <= attempt {
                self.tasks.store.failures.push(f);
            }
        }
        if !self.tasks.store.failures.is_empty() {
            self.raise_operator_failures();
        }
    }

    /// Each topic a log source reads is closed while every subtask of its
    /// writer has finished, and open again while one runs (a restore
    /// redeployed it).
    pub(super) fn sync_topics(&mut self) {
        for i in 0..self.plan.read_topics.len() {
            let topic = self.plan.read_topics[i];
            let op = OperatorId(topic);
            let finished = (0..self.plan.scenario.op(op).parallelism).all(|s| {
                self.tasks.list[self.plan.exec.task_of(op, s) as usize].status == Status::Finished
            });
            let log = &mut self.tasks.store.log;
            let now = self.net.now;
            match (
                finished,
                log.closed_as_of(topic, SimTime(now.0.saturating_add(1))),
            ) {
                (true, false) => {
                    log.close_topic(topic, now);
                    self.rec.counters.log_topics_closed += 1;
                }
                (false, true) => log.reopen_topic(topic, now),
                _ => {}
            }
        }
    }

    /// Records every transaction of a log sink still open although the
    /// task that opened it was restarted since (at a completion of
    /// `checkpoint`), or at all (`None`: the job finished): nothing will
    /// end it but the broker's timeout.
    pub(super) fn stale_transactions(&mut self, checkpoint: Option<CheckpointId>) {
        let sinks: Vec<u32> = self.log_sinks().collect();
        for op in sinks {
            for open in self.tasks.store.log.open_in_topic(op) {
                self.rec.counters.log_open_checked += 1;
                let c = open.client;
                // A client this job does not have (a log carried in from a
                // savepoint of another job) owns nothing here.
                let ops = &self.plan.scenario.operators;
                let own = (ops.get(c.operator as usize))
                    .filter(|o| c.operator == op && c.subtask < o.parallelism);
                let restarted = own.is_none()
                    || self.tasks.list
                        [self.plan.exec.task_of(OperatorId(c.operator), c.subtask) as usize]
                        .deploy_attempt
                        > c.attempt;
                let sink = &ops[op as usize];
                if checkpoint.is_some() && !restarted {
                    continue;
                }
                let seen = (self.rec.evidence.log_open.iter()).any(|s| {
                    s.transactional_id == open.transactional_id && s.epoch == open.producer.epoch
                });
                if seen {
                    continue;
                }
                let log = &self.tasks.store.log;
                let stalled = (log.topic_offsets(op).into_iter())
                    .filter(|&(p, lso, _)| {
                        open.partitions
                            .iter()
                            .any(|tp| tp.topic == op && tp.partition == p)
                            && lso <= open.first_offset
                    })
                    .collect();
                let stale = StaleTxn {
                    time_ns: self.net.now.0,
                    checkpoint,
                    transactional_id: open.transactional_id.clone(),
                    epoch: open.producer.epoch,
                    sink: sink.id.clone(),
                    subtask: c.subtask,
                    attempt: c.attempt,
                    started_ns: open.started_at.map(|t| t.0),
                    timeout_ns: open.timeout.0,
                    stalled,
                };
                self.rec.evidence.log_open.push(stale);
            }
        }
    }

    /// At the end: what a `read_committed` reader of each log sink's topic
    /// reads in the end becomes that sink's committed output; the log's
    /// counters become the run's. A transaction still open when the run
    /// ends is aborted for that view, as the broker will at its timeout
    /// (the log itself is left as it is, for a savepoint's image): records
    /// committed behind it are late for readers, not lost (a transaction
    /// left open where nothing will end it is the open-transactions
    /// check's finding).
    pub(super) fn log_end(&mut self, finished: bool) {
        if self.log_sinks().next().is_none() {
            return;
        }
        if finished {
            self.stale_transactions(None);
        }
        // The broker answers what is still in flight after the run.
        self.tasks.store.log.deliver_all();
        let sinks: Vec<u32> = self.log_sinks().collect();
        let (read, open) = self.tasks.store.publish_log(&sinks);
        self.rec.counters.log_open_at_end = open;
        let (stats, c) = (&self.tasks.store.stats, &mut self.rec.counters);
        c.log_records_read_committed = read;
        c.log_commits = stats.log_commits;
        c.log_commits_lost = stats.log_commits_lost;
        c.log_lingering_aborted = stats.log_lingering_aborted;
        c.log_records_fetched = stats.log_records_fetched;
        c.log_offsets_committed = stats.log_offsets_committed;
        c.log_transactions_timed_out = self.tasks.store.log.timed_out.len() as u64;
        c.log_requests_retried = self.tasks.store.log.stats.retries;
        c.log_requests_expired = self.tasks.store.log.stats.expired;
        c.log_coordinator_waits = stats.log_coordinator_waits;
        c.log_commits_retried = stats.log_commits_retried;
    }
}
