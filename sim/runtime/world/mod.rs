//! The simulator: one event loop over virtual time that drives tasks,
//! channels, the coordinator, faults and recovery. This file holds the
//! `World`, its construction, the event loop and dispatch.
//!
//! The `World` is a thin router: its state lives in components, each in its
//! own file with its own methods, which keep their state to themselves:
//!
//! - `plan.rs`: what the run knows before its first event (read only);
//! - `tasks.rs`: every task and the scratch of a step;
//! - `runtime::net`: channels, credits, the event queue and virtual time;
//! - `runtime::coordinator`: the sans-IO checkpoint coordinator;
//! - `job.rs`: the job's status and restarts;
//! - `recorder.rs`: what the run writes down for its output;
//! - `fault_state.rs`: planned, armed and fired faults;
//! - `savepoint_state.rs`: savepoint requests, reports and snapshots;
//! - `recovery_state.rs`: recovery bookkeeping;
//! - `channel_files.rs`, `operator_coordinators.rs`, `local.rs`,
//!   `iteration.rs`: channel-state files, operator coordinators, the
//!   uncoordinated families, the job's loops.
//!
//! What happens at an event is in the `impl World` files, one concern each:
//!
//! - `task.rs`: a task's step (reading input, running the chained operators,
//!   routing its output, end of input; the task report of a run);
//! - `barriers.rs`: what a task does with its barrier handler's actions
//!   (snapshot, forward, capture channel state, acknowledge, decline,
//!   notifications);
//! - `coordination.rs`: the simulator's side of the sans-IO coordinator
//!   (`runtime::coordinator`): it feeds it events and performs its actions;
//!   the consistent-cut check at each completion;
//! - `savepoints.rs`: savepoint requests, completion, cancel, start from a
//!   snapshot;
//! - `recovery.rs`: crashes, failover, restart, and the one restore used by
//!   global and region restarts;
//! - `faults.rs`, `degraded.rs`, `region.rs`: the richer fault model and
//!   region failover;
//! - `recovery_time.rs`, `warnings.rs`, `finish.rs`: what a run measures and
//!   reports, and the end of a run.
//!
//! - `exit.rs`: how a task exits after the end of its data (FLIP-147):
//!   the final checkpoint, `EndOfPartition`, checkpoints planned around
//!   finished tasks, tasks deployed as finished; its state lives with each
//!   task (`Task::exit`, `exit_state.rs`).
//! - `event_time.rs`: watermarks at the tasks (a source's periodic emit as
//!   a mail, valves, the members' event-time clocks, `MAX_WATERMARK`); its
//!   state lives with each task (`Task::time`, `Member::watermark`).
//!
//! Where the next mechanisms go: the task mailbox is a field of `Tasks`
//! (`tasks.rs`, see its docs); timers go with event time, per task, their
//! processing-time firings as mails.
//!
//! It must never grow fields of its own beyond one per component: state
//! belongs to a component.

mod alignment;
mod barriers;
mod channel_file_acks;
mod channel_files;
mod commit_ledger;
mod commits;
mod coordination;
mod degraded;
mod event_time;
mod exit;
mod exit_state;
mod fault_state;
mod faults;
mod finish;
mod holds;
mod iteration;
mod job;
mod local;
mod local_state;
mod loop_state;
mod mail;
mod materialization;
mod operator_coordinator_state;
mod operator_coordinators;
mod plan;
mod recorder;
mod recovery;
mod recovery_state;
mod recovery_time;
mod region;
mod rpcs;
mod savepoint_state;
mod savepoints;
mod state_files;
mod task;
mod tasks;
mod timers;
mod txlog;
mod warnings;

use channel_files::writes_done;
use fault_state::Fate;
use job::JobStatus;
use tasks::{CancelCause, ChainFrame, Member, PartialAck, ProcessingTimers, Status, Task};

use super::config::{JobOptions, Restore, RunConfig};
use super::coordinator::{
    self, Action as CoordAction, ChannelState, Completed, Coordinator, Cut, Outcome as CpOutcome,
    Pending, TaskAck, TaskSnapshot,
};
use super::event::{Ev, Stamped, ANY_ATTEMPT};
use super::mailbox::{Mail, Mailbox};
use super::net::{Msg, Net};
use super::output::{
    CommitDue, DueCause, MisroutedRead, Outcome, RunOutput, SnapshotKind, SnapshotOut, TaskReport,
    Timeline, TimelineMark, TraceEntry,
};
use super::schedule::{ScheduleLog, Step};
use crate::engine::{SimDuration, SimRng, SimTime, Stream};
use crate::model::graph::OutputEdge;
use crate::model::operator::BuiltinFactory;
use crate::model::record::{subtask_for_key, RecordSizes};
use crate::model::{
    ChannelId, CheckpointId, Context, ExecGraph, JobGraph, OperatorFactory, Record, SourcePoll,
    TaskId, Workload,
};
use crate::mutant::{fired, Mutant};
use crate::protocol::{
    handler_for, AbortReason, Barrier, BarrierKind, HandlerAction, HandlerConfig,
};
use crate::scenario::{
    Guarantee, Partitioning, SavepointSpec, Scenario, StorageKind, TriggerEvent,
};
use crate::verdict::{CheckId, Violation};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

/// One run: a thin router of events over its components, each of which
/// owns its state (see the module's docs).
struct World<'a> {
    /// What the run knows before its first event (`plan.rs`).
    plan: plan::Plan<'a>,
    /// Every task and the scratch of a step (`tasks.rs`).
    tasks: tasks::Tasks,
    /// Channels, credits, the event queue and virtual time (`runtime::net`).
    net: Net,
    /// The checkpoint coordinator (`runtime::coordinator`, sans-IO).
    coord: Coordinator,
    /// The job's status and restarts (`job.rs`).
    job: job::Job,
    /// What the run writes down for its output (`recorder.rs`).
    rec: recorder::Recorder,
    /// Planned, armed and fired faults (`fault_state.rs`).
    faults: fault_state::Faults,
    /// Savepoint requests, reports and snapshots (`savepoint_state.rs`).
    sp: savepoint_state::Savepoints,
    /// Recovery bookkeeping (`recovery_state.rs`).
    recovery: recovery_state::Recovery,
    /// The channel-state files shared by subtasks (`channel_files.rs`).
    files: channel_files::ChannelFiles,
    /// The checkpoint storage's files (`runtime::storage`, `state_files.rs`).
    storage: crate::runtime::storage::Storage,
    /// The retained checkpoints the storage last saw, with the tasks that
    /// acknowledged each (`state_files.rs`).
    retained_files: Vec<(CheckpointId, Vec<TaskId>)>,
    /// The operator coordinators (`world/operator_coordinators.rs`).
    ops: operator_coordinator_state::Coordinators,
    /// The uncoordinated families' state (`world/local.rs`).
    local: Option<Box<local_state::Local>>,
    /// The job's loops, if it has feedback edges (`world/iteration.rs`).
    loops: Option<Box<loop_state::Loops>>,
    /// What each sink task owes the external store (`commit_ledger.rs`).
    ledger: commit_ledger::CommitLedger,
}

/// Runs a scenario with the built-in operators (no checks; see
/// `crate::harness` for a checked run).
pub fn run(scenario: &Scenario, cfg: &RunConfig) -> RunOutput {
    let scenario = Arc::new(scenario.clone());
    let workload = Arc::new(Workload::generate(&scenario, cfg.seed));
    let factory = BuiltinFactory::new(scenario.clone(), workload.clone());
    run_with(scenario, workload.partition_count(), &factory, cfg)
}

/// Runs a scenario whose operators come from `factory` (user-defined operators).
pub fn run_with(
    scenario: Arc<Scenario>,
    partitions: usize,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
) -> RunOutput {
    run_job(scenario, partitions, factory, cfg, &JobOptions::default())
}

/// Runs a scenario as a job started (or not) from a snapshot, with the
/// savepoint workflow's options.
pub fn run_job(
    scenario: Arc<Scenario>,
    partitions: usize,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
    job: &JobOptions,
) -> RunOutput {
    let mut w = World::new(scenario, partitions, factory, cfg.clone(), job.clone());
    w.main_loop()
}

/// The network of a run: every channel of `exec` with the scenario's
/// network settings (an edge's own where it has them), and the switches the
/// algorithm and the mutants set.
fn network(scenario: &Scenario, exec: &ExecGraph, cfg: &RunConfig, scripted: bool) -> Net {
    let n = &scenario.network;
    let mut net = Net::new(
        exec.channels
            .iter()
            .map(|c| (c.from, c.to, c.input_index, c.from_op.0))
            .collect(),
        exec.tasks.len(),
        SimRng::new(cfg.seed, Stream::Network),
        n.buffer_records,
        n.buffer_credits,
        n.floating_buffers,
        n.output_buffers,
        (n.latency_min, n.latency_max),
        n.flush_timeout,
    );
    // Channels of an edge with network settings of its own.
    for (ch, c) in exec.channels.iter().enumerate() {
        let edge = scenario
            .edges
            .iter()
            .find(|e| e.from == c.from_op && e.to == c.to_op);
        if let Some(e) = edge.filter(|e| {
            e.latency_min.is_some()
                || e.latency_max.is_some()
                || e.buffer_credits.is_some()
                || e.buffer_size.is_some()
        }) {
            let (min, max, credits) = n.of_edge(e);
            let buffer = n.buffer_of_edge(e);
            net.set_channel(ch as ChannelId, (min.nanos(), max.nanos()), credits, buffer);
        }
    }
    // Channels between subtasks of one worker, where the cluster has them.
    if let Some(cl) = scenario.cluster.as_ref().filter(|c| c.local_channels) {
        for (ch, c) in exec.channels.iter().enumerate() {
            let (a, b) = (
                exec.tasks[c.from as usize].subtask,
                exec.tasks[c.to as usize].subtask,
            );
            if cl.worker_of_slot(a) == cl.worker_of_slot(b) {
                net.set_local(ch as ChannelId);
            }
        }
    }
    for (ch, c) in exec.channels.iter().enumerate() {
        let back =
            |e: &&crate::scenario::EdgeSpec| e.feedback && e.from == c.from_op && e.to == c.to_op;
        net.channels[ch].unbounded = scenario.edges.iter().any(|e| back(&e));
    }
    net.gates = crate::runtime::net::Gates::new(exec.tasks.iter().map(|t| t.inputs.len()));
    net.priority_barriers = cfg.mutants.has(Mutant::AlignedPriorityBarrier);
    net.blocking_barriers = cfg.algorithm.info().blocks_upstream;
    net.nonblocking_barriers = cfg.mutants.has(Mutant::AlignedNoBlock);
    net.lose_credit = cfg.mutants.has(Mutant::RecycleLosesCredit);
    net.forget_edge_credits = cfg.mutants.has(Mutant::RestartForgetsEdgeCredits);
    net.set_buffer_bytes(n.buffer_size.unwrap_or(u64::MAX));
    net.scripted_latency = scripted;
    net.sizes = RecordSizes::new(scenario, cfg.seed);
    net.drop_at_boundary = cfg.mutants.has(Mutant::BufferBoundaryDropsRecord);
    net.during_recovery = scenario.checkpoint.during_recovery;
    net.skip_recovered = cfg.mutants.has(Mutant::CheckpointDuringRecovery);
    net.persist_recovered_twice = cfg.mutants.has(Mutant::RecoveredBuffersPersistedTwice);
    net.strip_payloads = cfg.mutants.has(Mutant::ChannelStateDropsPayload);
    net.strip_statuses = cfg.mutants.has(Mutant::ChannelStateDropsWatermarkStatus);
    net.local_state_lost = cfg.mutants.has(Mutant::LocalChannelStateLost);
    net
}

impl<'a> World<'a> {
    pub(super) fn new(
        scenario: Arc<Scenario>,
        partitions: usize,
        factory: &'a dyn OperatorFactory,
        cfg: RunConfig,
        job_opts: JobOptions,
    ) -> World<'a> {
        let job = JobGraph::build(&scenario);
        let exec = ExecGraph::build(&scenario, &job);
        // A scripted run (`[replay] choices`, `explore`) makes its input
        // orders and its messages' latencies as choices.
        let scripted = !scenario.replay.choices.is_empty()
            || !scenario.replay.crash_points.is_empty()
            || super::scheduler::recording();
        super::scheduler::install(scripted.then_some(scenario.replay.choices.as_slice()));
        let mut net = network(&scenario, &exec, &cfg, scripted);
        let faults = fault_state::Faults::new(&scenario, cfg.seed, &exec);
        crate::mutant::reset_fired();
        if let Some(r) = &job_opts.restore {
            crate::mutant::fired_before_the_run(r.mutants_fired);
        }
        let scheduler: Box<dyn super::scheduler::Scheduler> = match scenario.network.input_order {
            _ if scripted => Box::new(super::scheduler::Scripted),
            crate::scenario::InputOrder::Random => Box::new(super::scheduler::Uniform),
            crate::scenario::InputOrder::Fifo => {
                // Flink's order picks the oldest ready input without
                // visiting every ready one (`World::next_input`).
                net.gates.keep_age();
                Box::new(super::scheduler::Fifo)
            }
        };
        let cp = &scenario.checkpoint;
        let mut w = World {
            local: local_state::Local::new(&exec, &cfg).map(Box::new),
            loops: loop_state::Loops::new(&scenario, &exec).map(Box::new),
            ledger: commit_ledger::CommitLedger::new(exec.tasks.len()),
            files: channel_files::ChannelFiles::new(&scenario, &exec),
            storage: World::new_storage(&scenario, &exec, cfg.mutants),
            retained_files: Vec::new(),
            faults,
            rec: recorder::Recorder::new(
                ScheduleLog::new(exec.instances()),
                crate::runtime::output::Holds::blocked_bound(&scenario)
                    .min(crate::runtime::output::Holds::pause_bound(&scenario)),
            ),
            ops: operator_coordinator_state::Coordinators::new(&scenario, &exec, &cfg),
            recovery: recovery_state::Recovery::new(exec.channels.len(), partitions),
            sp: savepoint_state::Savepoints::new(&scenario.savepoints),
            coord: Coordinator::new(coordinator::Config {
                interval: cp.interval,
                min_pause: cp.min_pause,
                timeout: cp.timeout,
                rpc_latency: cp.rpc_latency,
                max_concurrent: scenario.max_concurrent(cfg.algorithm) as usize,
                queue_requests: cfg.algorithm.info().coordination
                    == crate::protocol::Coordination::Barriers,
                tolerable_failures: cp.tolerable_failures,
                retained: cp.retained.max(1) as usize,
                tasks: exec.tasks.len(),
                mutants: cfg.mutants,
            }),
            tasks: tasks::Tasks::new(
                SimRng::new(cfg.seed, Stream::Scheduling),
                scheduler,
                partitions,
            ),
            net,
            job: job::Job::new(
                cp.rpc_latency_max.0 - cp.rpc_latency.0,
                SimRng::new(cfg.seed, Stream::Rpc),
            ),
            plan: plan::Plan::new(scenario.clone(), exec, factory, cfg, job_opts),
        };
        let list = (0..w.plan.exec.tasks.len() as TaskId)
            .map(|t| w.fresh_task(t))
            .collect();
        w.tasks.deploy(list);
        for task in &w.tasks.list {
            for m in task.members.iter().filter(|m| m.processing.is_some()) {
                w.rec.schedule.clocked(m.inst);
            }
        }
        w
    }

    /// Per output channel of task `info`: whether it may carry unaligned
    /// barriers (not forward or broadcast, its receiver not forced to
    /// align).
    fn unaligned_outputs(&self, info: &crate::model::graph::TaskInfo) -> Vec<bool> {
        let mut out_uc = Vec::new();
        for o in &info.outputs {
            let uc = !matches!(
                o.partitioning,
                Partitioning::Forward | Partitioning::Broadcast
            );
            for &ch in &o.channels {
                let to = self.plan.exec.channels[ch as usize].to;
                let to_op = self.plan.exec.tasks[to as usize].operator.0 as usize;
                out_uc.push(uc && !self.plan.forced_aligned[to_op]);
            }
        }
        out_uc
    }

    /// Fresh operators for every member of task `info`'s chain.
    fn fresh_members(&self, info: &crate::model::graph::TaskInfo) -> Vec<Member> {
        info.chain
            .iter()
            .map(|&op| {
                let spec = self.plan.scenario.op(op);
                let op_box = self.plan.factory.create(op.0, info.subtask);
                Member {
                    index: op.0,
                    inst: self.plan.exec.instance[op.0 as usize] + info.subtask,
                    processing: op_box
                        .uses_processing_time()
                        .then(ProcessingTimers::default),
                    op: op_box,
                    cost: spec.cost.0,
                    is_sink: spec.kind.is_sink(),
                    watermark: crate::model::event_time::MIN_WATERMARK,
                    sent_watermark: crate::model::event_time::MIN_WATERMARK,
                }
            })
            .collect()
    }

    pub(super) fn fresh_task(&self, t: TaskId) -> Task {
        let info = &self.plan.exec.tasks[t as usize];
        let spec = self.plan.scenario.op(info.operator);
        let inputs = info.inputs.len() as u32;
        let out_uc = self.unaligned_outputs(info);
        let members = self.fresh_members(info);
        let jitter = info
            .chain
            .iter()
            .map(|&op| self.plan.scenario.op(op).cost_jitter.0);
        Task {
            subtask: info.subtask,
            parallelism: spec.parallelism,
            is_source: spec.kind.is_source(),
            members,
            handler: handler_for(
                self.plan.cfg.algorithm,
                HandlerConfig {
                    inputs,
                    feedback: self
                        .loops
                        .as_ref()
                        .map_or(Vec::new(), |l| l.feedback_inputs(t)),
                    forced_aligned: self.plan.forced_aligned[info.operator.0 as usize],
                    alignment_timeout: self.plan.scenario.checkpoint.alignment_timeout,
                    mutants: self.plan.cfg.mutants,
                },
            ),
            status: Status::Running,
            mailbox: Mailbox::default(),
            blocked: vec![false; inputs as usize],
            needs_resume: vec![false; inputs as usize],
            eod: vec![false; inputs as usize],
            eod_remaining: inputs,
            eod_stopped: false,
            input_ended: false,
            last_checkpoint: 0,
            last_notified: 0,
            aborted: BTreeSet::new(),
            rr: vec![info.subtask; info.outputs.len()],
            cost: spec.cost.0,
            jitter: jitter.fold(0, u64::saturating_add),
            step_records: step_records(
                self.plan.scenario.network.step_quantum,
                &info.chain,
                |op| self.plan.scenario.op(op).cost,
            ),
            alignment_start: None,
            last_alignment_ns: 0,
            snapshotted: 0,
            out_uc,
            pending_ack: None,
            recovery_order: VecDeque::new(),
            paused: None,
            timers_quiesced: None,
            started: BTreeSet::new(),
            closed: BTreeSet::new(),
            stopped: false,
            check_routing: self.plan.routed_by_key[info.operator.0 as usize],
            key_groups: crate::model::record::key_group_range(
                info.subtask,
                spec.parallelism,
                self.plan.scenario.max_parallelism,
            ),
            deploy_attempt: self.net.attempt,
            sync_until: SimTime::ZERO,
            flush_blocked: None,
            declined: BTreeSet::new(),
            cancel_sent: BTreeSet::new(),
            time: self.task_time(t),
            exit: self.exit_state(t),
        }
    }

    /// The algorithm takes its checkpoints by stopping the world (drain
    /// markers, then a snapshot of every task on request).
    pub(super) fn stop_the_world(&self) -> bool {
        self.plan.cfg.algorithm.info().coordination == crate::protocol::Coordination::StopTheWorld
    }

    pub(super) fn now(&self) -> SimTime {
        self.net.now
    }

    pub(super) fn schedule_any(&mut self, at: SimTime, ev: Ev) {
        self.net.queue.push(
            at,
            Stamped {
                attempt: ANY_ATTEMPT,
                ev,
            },
        );
    }

    /// `channel from -> to`, by task names, for messages.
    pub(super) fn channel_name(&self, ch: ChannelId) -> String {
        let c = &self.plan.exec.channels[ch as usize];
        let name = |t: TaskId| &self.plan.exec.tasks[t as usize].name;
        format!("channel {} -> {}", name(c.from), name(c.to))
    }

    pub(super) fn violation(&mut self, check: CheckId, message: String) {
        let time_ns = self.now().0;
        self.rec.evidence.violations.push(Violation {
            check,
            time_ns,
            message,
        });
    }

    // --- trace: begin ---
    /// Records a timeline fact (`record_trace` only; one branch otherwise).
    #[inline]
    pub(super) fn mark(&mut self, what: impl FnOnce() -> Timeline) {
        if self.plan.cfg.record_trace {
            let time_ns = self.net.now.0;
            let what = what();
            self.rec.timeline.push(TimelineMark { time_ns, what });
        }
    }
    // --- trace: end ---

    // ------------------------------------------------------------ main loop

    /// Before the first event: the job starts (from a snapshot if asked),
    /// and everything planned at a time is scheduled — savepoints, the
    /// cancel, the first checkpoint, crashes and faults, the operator
    /// coordinators, and every task's first step.
    fn start(&mut self) {
        if let Some(r) = self.plan.job_opts.restore.clone() {
            self.start_from(&r);
        }
        let broker = self.plan.scenario.faults.broker.clone();
        self.tasks.store.log.set_broker_faults(broker);
        for at in self.sp.queue.iter().map(|s| s.at).collect::<Vec<_>>() {
            self.schedule_any(at, Ev::SavepointDue);
        }
        if let Some(at) = self
            .plan
            .job_opts
            .cancel_at
            .or(self.plan.scenario.cancel_at)
        {
            self.schedule_any(at, Ev::Cancel);
        }
        let cp = &self.plan.scenario.checkpoint;
        if self.is_local() {
            self.local_start();
        } else if cp.interval.is_some() && self.plan.cfg.algorithm.info().checkpoints {
            let first = SimTime(cp.first_delay.0);
            self.schedule_any(first, Ev::PeriodicTrigger { generation: 0 });
        }
        for (i, c) in self.faults.crash_plan.clone().iter().enumerate() {
            if i >= self.faults.first_crash_point {
                break; // crash points fire by choice
            }
            match c.trigger {
                None => self.schedule_any(c.at, Ev::Crash { index: i as u32 }),
                Some(_) => self.faults.armed_crashes.push(i as u32),
            }
        }
        self.schedule_planned_faults();
        self.start_coordinators();
        for t in 0..self.tasks.list.len() as TaskId {
            self.arm_watermark_timer(t);
            self.arm_report_timer(t);
            self.arm_materialization(t);
            self.net.poke(t);
        }
    }

    pub(super) fn main_loop(&mut self) -> RunOutput {
        self.start();
        let limits = self.plan.scenario.limits.clone();
        let mut events: u64 = 0;
        let wall = crate::wallclock::Stopwatch::start();
        let (max_wall, max_memory) = (super::limits::max_wall_ns(), super::limits::max_memory());
        let upfront = super::limits::estimate(&self.plan.scenario).total();
        let outcome = loop {
            if self.job.status == JobStatus::Finished {
                match self.sp.stopped_with {
                    Some(id) => break Outcome::Stopped(id),
                    None => break Outcome::Finished,
                }
            }
            if self.job.status == JobStatus::Cancelled {
                break Outcome::Cancelled;
            }
            if self.job.status == JobStatus::Failed {
                break Outcome::JobFailed(self.job.failed_reason.clone().unwrap_or_default());
            }
            if !self.tasks.store.failures.is_empty() {
                self.raise_operator_failures();
            }
            if !self.tasks.store.blocks.is_empty() {
                self.apply_blocks();
            }
            if !self.plan.read_topics.is_empty() {
                self.sync_topics();
            }
            let Some((time, stamped)) = self.net.queue.pop() else {
                break Outcome::Stalled;
            };
            if time > limits.max_time {
                self.net.now = limits.max_time;
                break Outcome::TimeLimit;
            }
            if events >= limits.max_events {
                break Outcome::EventLimit;
            }
            if events % 1024 == 1023 {
                if max_wall.is_some_and(|ns| wall.elapsed_ns() > ns) {
                    break Outcome::WallLimit;
                }
                if upfront.saturating_add(self.history_bytes()) > max_memory {
                    break Outcome::MemoryLimit;
                }
            }
            debug_assert!(time >= self.net.now, "time went backwards");
            self.net.now = time;
            if self.tasks.store.log.has_in_flight() {
                self.tasks.store.log.deliver(time);
            }
            if !self.tasks.store.failures_at.is_empty() {
                self.raise_due_failures();
            }
            if stamped.attempt != ANY_ATTEMPT && self.is_stale(&stamped) {
                continue;
            }
            events += 1;
            let (tag, a, b) = stamped.ev.encode();
            self.rec.fp.event(time.0, tag, a, b);
            if self.plan.cfg.record_trace {
                self.rec.trace.push(TraceEntry {
                    index: events - 1,
                    time_ns: time.0,
                    event: stamped.ev.name(),
                    a,
                    b,
                    attempt: self.net.attempt, // trace
                    ev: stamped.ev,            // trace
                });
            }
            self.dispatch(stamped.ev);
            if let Some((ch, what)) = self.net.credit_error.take() {
                let msg = format!("credit balance of {} broken: {what}", self.channel_name(ch));
                self.violation(CheckId::Protocol, msg);
            }
            while let Some(t) = self.net.released.pop() {
                if self.tasks.list[t as usize].status == Status::Running {
                    self.maybe_ack(t);
                }
            }
            if !self.net.announced.is_empty() {
                self.announce();
            }
        };
        assert!(
            self.tasks.tally_holds(),
            "a task's status or end of input was written around Tasks::set_status"
        );
        self.finish(outcome, events)
    }

    pub(super) fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Wake { task } => self.wake(task),
            Ev::Deliver { ch } => self.net.deliver(ch),
            Ev::Flush { task } => self.flush(task),
            Ev::PeriodicTrigger { generation } => self.periodic_trigger(generation),
            // The RPC of a task that exited since the plan fails at once.
            Ev::TriggerSource { task, barrier }
                if self.tasks.list[task as usize].status == Status::Finished =>
            {
                self.trigger_after_exit(task, barrier.id)
            }
            Ev::TriggerSource { task, barrier } => self.post(task, Mail::Trigger(barrier)),
            Ev::Ack { task, id } if self.is_local() => self.local_ack(task, id),
            Ev::Ack { task, id } => self.ack(task, id),
            Ev::LocalTimer { task } => self.local_timer(task),
            Ev::WatermarkTimer { task } => self.watermark_timer(task),
            Ev::MaterializeTimer { task } => self.materialize_timer(task),
            Ev::Materialized { task, id } => self.materialization_uploaded(task, id),
            Ev::WatermarkReport { task } => self.report_timer(task),
            Ev::AlignmentAnnounce { slot, generation } => self.announce_alignment(slot, generation),
            Ev::ProcessingTimer { task, member } => self.processing_timer(task, member as usize),
            Ev::Decline { id, .. } => self.declined(id),
            Ev::CheckpointTimeout { id } => self.expired(id),
            Ev::Finalized { id } => self.finalized(id),
            Ev::NotifyComplete { task, id } => self.post(task, Mail::Complete(id)),
            Ev::NotifyAborted {
                task,
                id,
                latest_completed,
            } => self.post(
                task,
                Mail::Aborted {
                    id,
                    latest_completed,
                },
            ),
            Ev::Crash { index } => {
                self.note_crash_event();
                self.crash(index);
            }
            Ev::FailureDetected { task } => {
                if self.region_failover(task) {
                    return;
                }
                let name = self.plan.exec.tasks[task as usize].name.clone();
                self.failover(format!("task {name} failed"));
            }
            Ev::Restart => self.restart(),
            Ev::AlignmentTimer { task, id } => {
                if self.tasks.list[task as usize].status == Status::Running {
                    let mut actions = std::mem::take(&mut self.tasks.actions);
                    self.tasks.list[task as usize]
                        .handler
                        .on_timer(id, &mut actions);
                    self.apply_actions(task, &mut actions);
                    self.tasks.actions = actions;
                    // The switch may have turned queued barriers into
                    // priority events: the task reads them even when
                    // backpressured (Flink's mailbox runs the priority
                    // action), not when an output frees up.
                    self.net.poke(task);
                }
            }
            Ev::OutputTimeout { task, id } => self.output_timeout(task, id),
            Ev::Drained { id, .. } => self.drained(id),
            Ev::SnapshotTask { task, barrier } => {
                if self.tasks.list[task as usize].status == Status::Running {
                    self.checkpoint(task, barrier);
                    self.all_barriers(task, barrier.id);
                    self.resume_timers(task, barrier.id);
                }
            }
            Ev::SavepointDue => self.try_savepoint(),
            Ev::Cancel => self.cancel(),
            Ev::SavepointDone { task, id } => {
                if self.tasks.list[task as usize].status == Status::Running {
                    self.resume_source(task, id);
                }
            }
            Ev::ResumeConsumption { ch } => self.resume_consumption(ch),
            Ev::Credit { ch } => self.net.credit_arrives(ch),
            Ev::ToSubtask { task, event, lost } => self.event_at_subtask(task, event, lost),
            Ev::EventAck { task, ok } => self.event_ack(task, ok),
            Ev::ToCoordinator { task, event } => self.event_at_coordinator(task, event),
            Ev::SubtaskCheckpointed { task, id } => self.subtask_checkpointed(task, id),
            Ev::CoordinatorTick { slot, generation } => self.coordinator_tick(slot, generation),
            Ev::StorageWriteFailed { .. }
            | Ev::FinalizeFailed { .. }
            | Ev::CoordinatorCrash { .. }
            | Ev::CoordinatorRecovered
            | Ev::StorageCrash { .. }
            | Ev::WorkerCrash { .. }
            | Ev::WorkerLost { .. }
            | Ev::NetworkFault { .. } => self.dispatch_fault(ev),
        }
    }

    // ------------------------------------------------------------ end

    /// Protocol: a checkpoint a task started (read a barrier of, or was
    /// triggered for) must be closed on its outputs — by its barrier or by a
    /// cancellation marker — before the task moves on to a newer one, so
    /// that downstream alignments end (FLINK-18238). A barrier or marker of
    /// a newer id closes it too: every receiver's handler takes a newer
    /// barrier or cancellation marker as superseding whatever it is still
    /// aligning (Flink's `checkNewCheckpoint`, `processCancellationBarrier`),
    /// and Flink's own handler sends nothing for the older id when a newer
    /// marker aborts it (`abortInternal` notifies the newer id only), which
    /// happens once trigger RPCs overtake each other and a source skips the
    /// older id. So each started id must be closed by itself or a newer id
    /// below the next id the task started. Flink's at-least-once
    /// tracker drops superseded checkpoints silently by design, so it is
    /// exempt. Checked for superseded ids of every live task, at each
    /// failover and at the end.
    pub(super) fn check_closed(&mut self) {
        if !self.plan.cfg.algorithm.info().closes_superseded {
            return;
        }
        let mut found = Vec::new();
        for (ti, task) in self.tasks.list.iter().enumerate() {
            if task.status == Status::Dead || self.plan.task_outputs[ti].is_empty() {
                continue;
            }
            let Some(&newest) = task.started.iter().next_back() else {
                continue;
            };
            let mut next_started = task.started.iter().skip(1);
            for &id in task.started.range(..newest) {
                let next = *next_started.next().expect("a newer started id");
                if task.closed.range(id..next).next().is_none() {
                    found.push(format!(
                        "task {} started checkpoint {id} but sent neither its barrier nor a cancellation marker downstream before starting checkpoint {newest}",
                        self.plan.exec.tasks[ti].name
                    ));
                }
            }
        }
        for msg in found {
            self.violation(CheckId::Protocol, msg);
        }
    }
}

/// The most records a task takes in one step: as many as the whole chain
/// processes within `quantum` (each chained operator's cost counted), at
/// least one. Between two steps the task's thread runs its mails and looks
/// for priority events, so a slow chain holds them for one record at most.
fn step_records(
    quantum: SimDuration,
    chain: &[crate::scenario::OperatorId],
    cost: impl Fn(crate::scenario::OperatorId) -> SimDuration,
) -> usize {
    match chain
        .iter()
        .map(|&op| cost(op).0)
        .fold(0, u64::saturating_add)
    {
        0 => usize::MAX,
        c => (quantum.0 / c).max(1) as usize,
    }
}

#[cfg(test)]
mod component_tests;
#[cfg(test)]
mod tests;
