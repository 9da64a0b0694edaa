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
        for (op, subtask, why) in std::mem::take(&mut self.tasks.store.failures) {
            let t = self.plan.exec.task_of(OperatorId(op), subtask);
            if self.tasks.list[t as usize].status != Status::Running {
                continue;
            }
            self.rec.counters.operator_failures += 1;
            let name = self.plan.exec.tasks[t as usize].name.clone();
            if self.rec.evidence.operator_failures.len() < 10 {
                let failure = (self.net.now.0, format!("task {name} failed: {why}"));
                self.rec.evidence.operator_failures.push(failure);
            }
            self.note_fault(|| format!("task {name} failed: {why}"));
            self.fail_task(t);
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
    }
}
