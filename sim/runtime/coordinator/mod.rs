//! The checkpoint coordinator (Flink's `CheckpointCoordinator`, with its
//! `CheckpointRequestDecider` and `CheckpointFailureManager`) as a sans-IO
//! state machine: it receives what happens (a periodic trigger is due, a
//! checkpoint or savepoint is requested, an acknowledgement arrives, the
//! metadata is written, a checkpoint expires, is declined or fails to be
//! stored, the job fails over or is cancelled) and answers with
//! [`Action`]s (arm the periodic trigger, arm a timeout, send the trigger
//! RPC, write the metadata, notify the tasks, fail the job over) that the
//! simulator performs in order.
//!
//! **Invariant:** the coordinator never reads a clock, draws randomness,
//! schedules an event or touches a task: the simulator passes the time in
//! and performs the actions. Its rules are tested with tables of inputs and
//! the exact actions out (`tests.rs`), without a simulator.

pub mod line;
mod types;

#[cfg(test)]
mod tests;

pub use types::{
    stats_of, ChannelState, CheckpointStats, Completed, Cut, Outcome, Pending, TaskAck,
    TaskSnapshot,
};

use crate::engine::{SimDuration, SimTime};
use crate::model::CheckpointId;
use crate::mutant::{fired, Mutant, Mutants};
use crate::scenario::SavepointSpec;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// Queued trigger requests at most (Flink's `DEFAULT_MAX_QUEUED_REQUESTS`).
pub const MAX_QUEUED: usize = 1000;

/// The coordinator's configuration (`[checkpoint]`, resolved for the
/// algorithm and the job).
#[derive(Clone, Debug)]
pub struct Config {
    /// The periodic trigger's interval (`None`: no periodic checkpoints).
    pub interval: Option<SimDuration>,
    pub min_pause: SimDuration,
    pub timeout: SimDuration,
    /// One-way latency of the coordinator's RPCs (triggers, notifications).
    pub rpc_latency: SimDuration,
    /// Pending checkpoints at most (the algorithm's limit applied).
    pub max_concurrent: usize,
    /// A request that cannot run now waits in the queue (Flink's request
    /// decider). Off for stop-the-world, whose pauses would otherwise run
    /// back to back once a checkpoint outlasts the interval and starve the
    /// sources: there a request that finds one pending is dropped.
    pub queue_requests: bool,
    pub tolerable_failures: u32,
    /// Completed checkpoints kept (at least one).
    pub retained: usize,
    /// Tasks in the job: one acknowledgement slot each.
    pub tasks: usize,
    pub mutants: Mutants,
}

/// Why a periodic trigger was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// The job is not running, or it is finishing (a stop-with-savepoint
    /// completed).
    NotRunning,
    /// `max_concurrent` checkpoints are pending and the request cannot wait:
    /// the queue is full ([`MAX_QUEUED`]) or the coordinator does not queue
    /// (`Config::queue_requests`, stop-the-world). Otherwise it is queued,
    /// [`Action::Queued`].
    MaxConcurrent,
    /// A savepoint is due or pending: it goes first.
    Savepoint,
    /// Restored in-flight data is still replaying (the tasks are not
    /// RUNNING yet).
    Recovering,
    /// Within `min_pause` of the last completion: the trigger moves to the
    /// end of the pause.
    MinPause,
}

/// What the simulator tells the coordinator about the job when a periodic
/// trigger comes due.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// The job is running (not restarting or over).
    pub running: bool,
    /// A savepoint request is due.
    pub savepoint_due: bool,
    /// Restored in-flight data is still replaying.
    pub recovering: bool,
    /// The last checkpoint is still being triggered: its source triggers
    /// wait for operator events, or a gateway it closed is not open again
    /// (Flink's `CheckpointCoordinator.isTriggering`: the next request waits).
    pub triggering: bool,
}

/// What the coordinator asks the simulator to do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Schedule the periodic trigger of this generation at `at`.
    ArmPeriodic { at: SimTime, generation: u32 },
    /// A periodic trigger was not taken.
    Skipped(Skip),
    /// A periodic trigger came due while `max_concurrent` checkpoints were
    /// pending (or a savepoint went first): it waits in the request queue
    /// and runs when a pending checkpoint ends.
    Queued,
    /// Checkpoint (or savepoint) `id` was triggered.
    Triggered { id: CheckpointId, savepoint: bool },
    /// Schedule the expiry of `id` at `at`.
    ArmTimeout { id: CheckpointId, at: SimTime },
    /// Send the trigger RPC of `id` (barrier timestamp `timestamp`) to
    /// every source task, arriving at `at`.
    TriggerSources {
        id: CheckpointId,
        timestamp: SimTime,
        at: SimTime,
    },
    /// Every acknowledgement arrived: write the metadata of `id`.
    Finalize { id: CheckpointId },
    /// Tell every task that `id` completed, arriving at `at`.
    NotifyComplete { id: CheckpointId, at: SimTime },
    /// `id` ended without completing (its statistics are recorded);
    /// `savepoint` is its request if it was one.
    Aborted {
        id: CheckpointId,
        outcome: Outcome,
        savepoint: Option<SavepointSpec>,
    },
    /// Tell every task that `id` was aborted (with the latest completed
    /// id, Flink's catch-up), arriving at `at`.
    NotifyAborted {
        id: CheckpointId,
        latest_completed: CheckpointId,
        at: SimTime,
    },
    /// Fail the job over, for this reason.
    Failover { reason: String },
}

/// A completed checkpoint as [`Coordinator::complete`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// In-flight records persisted in it.
    pub in_flight_records: u64,
}

pub struct Coordinator {
    pub cfg: Config,
    pub next_id: CheckpointId,
    pub pending: BTreeMap<CheckpointId, Pending>,
    pub retained: VecDeque<Rc<Completed>>,
    /// The most checkpoints the store held after a completion; and the
    /// first completion that left it holding more than `retained`. For the
    /// resources check.
    pub retained_peak: usize,
    pub retained_over: Option<CheckpointId>,
    /// Checkpoints subsumed (dropped from the store by a newer completion).
    pub subsumed: u64,
    pub last_completion: Option<SimTime>,
    pub last_completed_id: CheckpointId,
    /// Consecutive counted failures (Flink's `CheckpointFailureManager`).
    pub failure_counter: u32,
    pub periodic_generation: u32,
    /// Mutant `periodic-trigger-stops-on-abort`: the trigger waits for a
    /// completion to be re-armed.
    pub periodic_stopped: bool,
    /// A stop-with-savepoint completed: stop triggering, tasks finish.
    pub finishing: bool,
    /// That savepoint: every task exits when notified of it. (A job
    /// reaching the end of its input has no such id: each task exits on
    /// its own, `world/exit.rs`.)
    pub final_id: Option<CheckpointId>,
    pub stats: Vec<CheckpointStats>,
    /// Periodic trigger requests waiting for a free slot (Flink's
    /// `CheckpointRequestDecider` queue), by the time they came due.
    pub queued: VecDeque<SimTime>,
    /// Ids completed and ids aborted, for the protocol checker.
    pub completed_ids: Vec<CheckpointId>,
    pub aborted_ids: Vec<CheckpointId>,
}

impl Coordinator {
    pub fn new(cfg: Config) -> Coordinator {
        Coordinator {
            cfg,
            next_id: 1,
            pending: BTreeMap::new(),
            retained: VecDeque::new(),
            retained_peak: 0,
            retained_over: None,
            subsumed: 0,
            last_completion: None,
            last_completed_id: 0,
            failure_counter: 0,
            periodic_generation: 0,
            periodic_stopped: false,
            finishing: false,
            final_id: None,
            stats: Vec::new(),
            queued: VecDeque::new(),
            completed_ids: Vec::new(),
            aborted_ids: Vec::new(),
        }
    }

    pub fn latest(&self) -> Option<Rc<Completed>> {
        self.retained.back().cloned()
    }

    pub fn is_pending(&self, id: CheckpointId) -> bool {
        self.pending.contains_key(&id)
    }

    /// A savepoint is pending.
    pub fn savepoint_pending(&self) -> bool {
        self.pending.values().any(|p| p.savepoint.is_some())
    }

    /// The job starts from a snapshot with id `c.id`: ids continue after it
    /// and it is the latest completed checkpoint.
    pub fn start_from(&mut self, c: Rc<Completed>) {
        self.next_id = c.id + 1;
        self.last_completed_id = c.id;
        self.retained.push_back(c);
    }

    /// The periodic trigger of `generation` came due.
    pub fn periodic(&mut self, now: SimTime, generation: u32, facts: Facts, out: &mut Vec<Action>) {
        if generation != self.periodic_generation {
            return;
        }
        let Some(interval) = self.cfg.interval else {
            return;
        };
        out.push(Action::ArmPeriodic {
            at: now.plus(interval),
            generation,
        });
        let busy = self.pending.len() >= self.cfg.max_concurrent || self.triggering(facts);
        let skip = if !facts.running || self.finishing {
            Some(Skip::NotRunning)
        } else if facts.recovering {
            Some(Skip::Recovering)
        } else {
            None
        };
        if let Some(skip) = skip {
            let down = matches!(skip, Skip::Recovering | Skip::NotRunning) && !self.finishing;
            if down && self.cfg.mutants.has(Mutant::TriggerBacksOffAfterFailover) {
                // Mutant: the trigger skipped during a recovery comes back
                // after the checkpoint timeout, not the interval.
                fired(Mutant::TriggerBacksOffAfterFailover);
                self.periodic_generation += 1;
                out.push(Action::ArmPeriodic {
                    at: now.plus(self.cfg.timeout),
                    generation: self.periodic_generation,
                });
            }
            out.push(Action::Skipped(skip));
            return;
        }
        if !self.cfg.queue_requests {
            if busy {
                out.push(Action::Skipped(Skip::MaxConcurrent));
                return;
            }
            if facts.savepoint_due || self.savepoint_pending() {
                out.push(Action::Skipped(Skip::Savepoint));
                return;
            }
        }
        if busy || facts.savepoint_due || self.savepoint_pending() {
            // Flink's request decider queues what cannot run now; a
            // requested savepoint goes first (savepoints sort ahead of
            // periodic requests), and none runs beside a savepoint here.
            self.enqueue(now, out);
            return;
        }
        self.start_periodic(now, false, out);
    }

    /// Whether a checkpoint is still being triggered (a source trigger
    /// deferred, or a gateway it closed not open again): the next one
    /// waits, as behind Flink's `CheckpointCoordinator.isTriggering`.
    fn triggering(&self, facts: Facts) -> bool {
        if facts.triggering && self.cfg.mutants.has(Mutant::TriggersWhileTriggering) {
            // Mutant: the next checkpoint is triggered while the previous
            // one's operator coordinators still hold their gateways closed.
            fired(Mutant::TriggersWhileTriggering);
            return false;
        }
        facts.triggering
    }

    /// Queues a periodic request (at most [`MAX_QUEUED`]: the newest is
    /// dropped beyond, as Flink's `TOO_MANY_CHECKPOINT_REQUESTS`).
    fn enqueue(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.queued.len() >= MAX_QUEUED {
            out.push(Action::Skipped(Skip::MaxConcurrent));
            return;
        }
        self.queued.push_back(now);
        out.push(Action::Queued);
    }

    /// A pending checkpoint ended (completed, aborted or expired): run the
    /// oldest queued periodic request if a slot is free, as Flink's
    /// `executeQueuedRequest` does, through the same minimum-pause rule.
    pub fn run_queued(&mut self, now: SimTime, facts: Facts, out: &mut Vec<Action>) {
        if self.queued.is_empty()
            || self.pending.len() >= self.cfg.max_concurrent
            || self.triggering(facts)
        {
            return;
        }
        if facts.savepoint_due || self.savepoint_pending() {
            return; // the savepoint first; the request keeps its place
        }
        if !facts.running || self.finishing {
            // Flink: NOT_ALL_REQUIRED_TASKS_RUNNING fails every request.
            for _ in self.queued.drain(..) {
                out.push(Action::Skipped(Skip::NotRunning));
            }
            return;
        }
        self.queued.pop_front();
        if facts.recovering {
            out.push(Action::Skipped(Skip::Recovering));
            return;
        }
        self.start_periodic(now, true, out);
    }

    /// A periodic request may run: unless it is within `min_pause` of the
    /// last completion (then it fails and the periodic trigger moves to the
    /// end of the pause, Flink's `rescheduleTrigger`), trigger it.
    /// `queued`: it waited in the queue.
    fn start_periodic(&mut self, now: SimTime, queued: bool, out: &mut Vec<Action>) {
        if let Some(last) = self.last_completion {
            let earliest = last.plus(self.cfg.min_pause);
            if earliest > now {
                if queued && self.cfg.mutants.has(Mutant::QueuedTriggerSkipsMinPause) {
                    // Mutant: a request that waited in the queue runs at
                    // once, inside the pause.
                    fired(Mutant::QueuedTriggerSkipsMinPause);
                    self.trigger(now, None, out);
                    return;
                }
                out.push(Action::Skipped(Skip::MinPause));
                self.periodic_generation += 1;
                out.push(Action::ArmPeriodic {
                    at: earliest,
                    generation: self.periodic_generation,
                });
                return;
            }
        }
        self.trigger(now, None, out);
    }

    /// Starts a checkpoint, or the savepoint `savepoint`: a pending entry
    /// with its timeout, and the trigger RPC to every source. Returns its id.
    pub fn trigger(
        &mut self,
        now: SimTime,
        savepoint: Option<SavepointSpec>,
        out: &mut Vec<Action>,
    ) -> CheckpointId {
        let id = self.next_id;
        self.next_id += 1;
        out.push(Action::Triggered {
            id,
            savepoint: savepoint.is_some(),
        });
        let n = self.cfg.tasks;
        self.pending.insert(
            id,
            Pending {
                id,
                trigger_time: now,
                acks: (0..n).map(|_| None).collect(),
                remaining: n as u32,
                finalizing: false,
                drained: 0,
                last_ack: None,
                savepoint,
                coordinators: Vec::new(),
            },
        );
        out.push(Action::ArmTimeout {
            id,
            at: now.plus(self.cfg.timeout),
        });
        out.push(Action::TriggerSources {
            id,
            timestamp: now,
            at: now.plus(self.cfg.rpc_latency),
        });
        id
    }

    /// A task's snapshot for `id` is being written: keep it in its slot.
    /// False if `id` is no longer pending (the write is for nothing).
    pub fn record_ack(&mut self, id: CheckpointId, task: u32, ack: TaskAck) -> bool {
        match self.pending.get_mut(&id) {
            Some(p) => {
                p.acks[task as usize] = Some(ack);
                true
            }
            None => false,
        }
    }

    /// A task's acknowledgement of `id` arrived.
    pub fn ack(&mut self, task: u32, id: CheckpointId, out: &mut Vec<Action>) {
        let missing_ok = self.cfg.mutants.has(Mutant::CompleteWithMissingAck);
        let Some(p) = self.pending.get_mut(&id) else {
            return;
        };
        let Some(a) = p.acks[task as usize].as_mut() else {
            return;
        };
        if a.arrived {
            return;
        }
        a.arrived = true;
        p.remaining -= 1;
        p.last_ack = Some(task);
        let early = missing_ok && p.remaining == 1 && p.acks.len() > 1;
        if (p.remaining == 0 || early) && !p.finalizing {
            if early {
                fired(Mutant::CompleteWithMissingAck);
            }
            p.finalizing = true;
            out.push(Action::Finalize { id });
        }
    }

    /// `stop-the-world`: a task without outputs reported that everything
    /// upstream is drained. Returns the checkpoint's trigger time once every
    /// one of the `sinks` such tasks did.
    pub fn drained(&mut self, id: CheckpointId, sinks: u32) -> Option<SimTime> {
        let p = self.pending.get_mut(&id)?;
        p.drained += 1;
        (p.drained >= sinks).then_some(p.trigger_time)
    }

    /// The metadata of `id` is written: it leaves the pending set and the
    /// caller completes it (a checkpoint with [`Coordinator::complete`], a
    /// savepoint by its own rules).
    pub fn take_finalized(&mut self, id: CheckpointId) -> Option<Pending> {
        self.pending.remove(&id)
    }

    /// A completed checkpoint's id does not come after the last completed
    /// one (a protocol violation, reported by the caller).
    pub fn out_of_order(&self, id: CheckpointId) -> Option<CheckpointId> {
        self.completed_ids
            .last()
            .copied()
            .filter(|&last| id <= last)
    }

    /// Completes checkpoint `p` (not a savepoint): its statistics, the
    /// retained store, the failure count, the final checkpoint, subsumption
    /// of older pending checkpoints, and the notifications.
    pub fn complete(&mut self, now: SimTime, p: Pending, out: &mut Vec<Action>) -> Completion {
        let id = p.id;
        self.stats.push(stats_of(&p, now, Outcome::Completed));
        let (mut state_bytes, mut in_flight_bytes, mut in_flight_records) = (0, 0, 0);
        let lost = match p.last_ack {
            Some(t) if self.cfg.mutants.has(Mutant::StorageLosesStateWrite) => Some(t as usize),
            _ => None,
        };
        let mut states: Vec<Option<TaskSnapshot>> = p
            .acks
            .into_iter()
            .map(|a| {
                a.filter(|a| a.arrived).map(|a| {
                    state_bytes += a.snapshot.state_bytes();
                    in_flight_bytes += a.snapshot.in_flight_bytes();
                    in_flight_records += a.snapshot.in_flight_records();
                    a.snapshot
                })
            })
            .collect();
        if let Some(t) = lost {
            // Mutant: the write never became durable; the coordinator
            // restores that task as if it had no state.
            if states[t].take().is_some() {
                fired(Mutant::StorageLosesStateWrite);
            }
        }
        self.store(Completed {
            id,
            trigger_time: p.trigger_time,
            completed_at: now,
            states,
            state_bytes,
            in_flight_bytes,
            lines: None,
            coordinators: p.coordinators,
        });
        self.last_completion = Some(now);
        self.failure_counter = 0;
        // Subsume older pending checkpoints.
        let older: Vec<CheckpointId> = self.pending.range(..id).map(|(&k, _)| k).collect();
        for o in older {
            self.abort(now, o, Outcome::Subsumed, out);
        }
        if self.periodic_stopped {
            // Mutant: the trigger comes back only with a completion.
            self.periodic_stopped = false;
            if let Some(interval) = self.cfg.interval {
                out.push(Action::ArmPeriodic {
                    at: now.plus(interval),
                    generation: self.periodic_generation,
                });
            }
        }
        out.push(Action::NotifyComplete {
            id,
            at: now.plus(self.cfg.rpc_latency),
        });
        Completion { in_flight_records }
    }

    /// Adds a completed checkpoint to the store, dropping the oldest beyond
    /// `retained`.
    pub fn store(&mut self, c: Completed) {
        self.last_completed_id = c.id;
        self.completed_ids.push(c.id);
        self.retained.push_back(Rc::new(c));
        if self.cfg.mutants.has(Mutant::SubsumedCheckpointsKept) && self.retained.len() > 1 {
            // Mutant: the store never subsumes; every completed
            // checkpoint (and what it refers to) is kept.
            fired(Mutant::SubsumedCheckpointsKept);
        } else {
            while self.retained.len() > self.cfg.retained.max(1) {
                self.retained.pop_front();
                self.subsumed += 1;
            }
        }
        self.retained_peak = self.retained_peak.max(self.retained.len());
        if self.retained.len() > self.cfg.retained.max(1) && self.retained_over.is_none() {
            self.retained_over = Some(self.last_completed_id);
        }
    }

    /// The checkpoint store would evict its oldest entry on the next store.
    pub fn full(&self) -> Option<CheckpointId> {
        (self.retained.len() >= self.cfg.retained.max(1))
            .then(|| self.retained.front().map(|c| c.id))
            .flatten()
    }

    /// `id` ends without completing.
    pub fn abort(
        &mut self,
        now: SimTime,
        id: CheckpointId,
        outcome: Outcome,
        out: &mut Vec<Action>,
    ) {
        let Some(p) = self.pending.remove(&id) else {
            return;
        };
        let mut stats = stats_of(&p, now, outcome);
        stats.savepoint = p.savepoint.is_some();
        self.stats.push(stats);
        self.aborted_ids.push(id);
        let stop = p.savepoint.as_ref().is_some_and(|sp| sp.stop);
        out.push(Action::Aborted {
            id,
            outcome,
            savepoint: p.savepoint,
        });
        if self.cfg.mutants.has(Mutant::PeriodicTriggerStopsOnAbort) && !self.periodic_stopped {
            // Mutant: an abort cancels the periodic trigger.
            fired(Mutant::PeriodicTriggerStopsOnAbort);
            self.periodic_generation += 1;
            self.periodic_stopped = true;
        }
        if matches!(outcome, Outcome::Failover | Outcome::Cancelled) {
            return; // the tasks are being cancelled; nobody to notify
        }
        out.push(Action::NotifyAborted {
            id,
            latest_completed: self.last_completed_id,
            at: now.plus(self.cfg.rpc_latency),
        });
        if stop {
            // Flink: "Stop-with-savepoint failed." fails the job over.
            out.push(Action::Failover {
                reason: format!("stop-with-savepoint {id} failed ({outcome:?})"),
            });
        }
    }

    /// `id` expired (if still pending): aborted, and counted as a failure
    /// unless it is a savepoint.
    pub fn expire(&mut self, now: SimTime, id: CheckpointId, out: &mut Vec<Action>) {
        self.abort_counted(now, id, Outcome::Expired, out);
    }

    /// A state or metadata write of `id` failed: aborted, and counted as a
    /// failure unless it is a savepoint.
    pub fn storage_failed(&mut self, now: SimTime, id: CheckpointId, out: &mut Vec<Action>) {
        self.abort_counted(now, id, Outcome::StorageFailed, out);
    }

    /// A task's state of `id` exceeds memory storage's max state size (its
    /// asynchronous part failed): aborted, and counted as a failure unless
    /// it is a savepoint.
    pub fn state_too_large(&mut self, now: SimTime, id: CheckpointId, out: &mut Vec<Action>) {
        self.abort_counted(now, id, Outcome::StateTooLarge, out);
    }

    fn abort_counted(
        &mut self,
        now: SimTime,
        id: CheckpointId,
        outcome: Outcome,
        out: &mut Vec<Action>,
    ) {
        let Some(savepoint) = self.pending.get(&id).map(|p| p.savepoint.is_some()) else {
            return;
        };
        self.abort(now, id, outcome, out);
        // Savepoint failures never count (Flink's CheckpointFailureManager
        // skips savepoints).
        if !savepoint {
            self.count_failure(id, out);
        }
    }

    /// Every pending checkpoint ends with `outcome` (a failover or a
    /// cancel: no notifications).
    pub fn abort_all(&mut self, now: SimTime, outcome: Outcome, out: &mut Vec<Action>) {
        // Flink stops the checkpoint scheduler, which fails every queued
        // request too.
        self.queued.clear();
        let pending: Vec<CheckpointId> = self.pending.keys().copied().collect();
        for id in pending {
            self.abort(now, id, outcome, out);
        }
    }

    /// Flink's `CheckpointFailureManager`: count a failure once per id, only
    /// if newer than the last success; past the tolerance, fail the job over.
    fn count_failure(&mut self, id: CheckpointId, out: &mut Vec<Action>) {
        if id <= self.last_completed_id {
            return;
        }
        self.failure_counter += 1;
        let tolerable = self.cfg.tolerable_failures;
        let mut limit = tolerable;
        if self.cfg.mutants.has(Mutant::TolerableFailuresOffByOne) {
            // Mutant: the threshold is one too high.
            limit = tolerable.saturating_add(1);
            if self.failure_counter == tolerable.saturating_add(1) {
                fired(Mutant::TolerableFailuresOffByOne);
            }
        }
        if self.failure_counter > limit {
            self.failure_counter = 0;
            out.push(Action::Failover {
                reason: format!("more than {tolerable} consecutive checkpoint failures"),
            });
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CompleteWithMissingAck: Mutant = Mutant::declare(&MutantInfo {
            name: "complete-with-missing-ack",
            part: "coordinator completion",
            what: "the coordinator completes a checkpoint when all but one ack arrived",
            modelled_on: "PendingCheckpoint completion counting bugs (acks for the wrong attempt or execution)",
            caught_by: "consistent-cut",
            applies: &[("alignment-crash", "aligned")],
        });
        pub const TriggerBacksOffAfterFailover: Mutant = Mutant::declare(&MutantInfo {
            name: "trigger-backs-off-after-failover",
            part: "periodic trigger",
            what: "a periodic trigger skipped while the job recovers is re-armed after the checkpoint timeout instead of the interval, so checkpoints pause for a timeout after every failover",
            modelled_on: "checkpoint schedulers restarted after a failover with the wrong initial delay (startCheckpointScheduler's delay taken from another setting): no output is lost, but nothing is committed for the pause",
            caught_by: "progress",
            applies: &[("wordcount", "aligned")],
        });
        pub const TriggersWhileTriggering: Mutant = Mutant::declare(&MutantInfo {
            name: "triggers-while-triggering",
            part: "coordinator triggering",
            what: "a periodic request runs while the previous checkpoint is still being triggered (a source trigger deferred for operator-event acknowledgements, a gateway still closed), so a second checkpoint's coordinator snapshot is taken while the first one's held split assignments are not yet delivered",
            modelled_on: "CheckpointCoordinator.isTriggering and the request queue it guards: triggering two checkpoints concurrently lets operator-coordinator checkpoints and held events interleave (the split bookkeeping of FLIP-27 enumerators breaks)",
            caught_by: "consistent-cut",
            applies: &[("flip27-timing", "aligned")],
        });
        pub const SubsumedCheckpointsKept: Mutant = Mutant::declare(&MutantInfo {
            name: "subsumed-checkpoints-kept",
            part: "completed-checkpoint store",
            what: "a completion does not subsume the oldest retained checkpoint: the store, and the checkpoint data it refers to, grows with every checkpoint",
            modelled_on: "completed-checkpoint stores whose subsumption or discard is skipped or fails silently (checkpoint directories that grow without bound until storage or the JobManager's memory runs out); recovery still uses the latest, so no output is wrong",
            caught_by: "resources",
            applies: &[("wordcount", "aligned")],
        });
        pub const PeriodicTriggerStopsOnAbort: Mutant = Mutant::declare(&MutantInfo {
            name: "periodic-trigger-stops-on-abort",
            part: "coordinator triggering",
            what: "the periodic trigger is re-armed only on completion, so an aborted checkpoint stops checkpointing",
            modelled_on: "FLINK-13256: periodic checkpoints stop after a failover",
            caught_by: "liveness",
            applies: &[("wordcount", "aligned")],
        });
        pub const QueuedTriggerSkipsMinPause: Mutant = Mutant::declare(&MutantInfo {
            name: "queued-trigger-skips-min-pause",
            part: "coordinator request queue",
            what: "a periodic request that waited in the queue runs as soon as a slot frees, inside min_pause of the last completion",
            modelled_on: "CheckpointRequestDecider: the minimum-pause rule is one branch of choosing a queued request, easy to bypass when the queue is drained",
            caught_by: "protocol",
            applies: &[("backpressure", "aligned")],
        });
        pub const StorageLosesStateWrite: Mutant = Mutant::declare(&MutantInfo {
            name: "storage-loses-state-write",
            part: "checkpoint storage",
            what: "the state write of the task whose ack arrived last is lost, but the checkpoint completes",
            modelled_on: "acknowledging before the asynchronous state upload is durable (lost or truncated checkpoint files)",
            caught_by: "exactly-once-output",
            applies: &[("wordcount", "aligned")],
        });
        pub const TolerableFailuresOffByOne: Mutant = Mutant::declare(&MutantInfo {
            name: "tolerable-failures-off-by-one",
            part: "coordinator failure accounting",
            what: "the coordinator fails the job over only when the consecutive checkpoint failures exceed tolerable_failures by two",
            modelled_on: "CheckpointFailureManager counting bugs (failures counted against the wrong threshold or not counted, so a job with failing checkpoints keeps running)",
            caught_by: "failure-accounting",
            applies: &[("expiring", "aligned")],
        });
    }
}
