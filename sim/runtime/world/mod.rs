//! The simulator: one event loop over virtual time that drives tasks,
//! channels, the coordinator, faults and recovery. This file holds the
//! `World` (the state of one run), its construction, the event loop and
//! dispatch, and the end of a run; each concern lives in its own file:
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
//! - `faults.rs`, `region.rs`: the richer fault model and region failover;
//! - `local.rs`: the uncoordinated families (own timers, logs, recovery
//!   lines);
//! - `recovery_time.rs`, `warnings.rs`: what a run measures and reports.

mod barriers;
mod channel_files;
mod coordination;
mod degraded;
mod faults;
mod finish;
mod iteration;
mod local;
mod operator_coordinators;
mod recovery;
mod recovery_time;
mod region;
mod savepoints;
mod task;
mod warnings;

pub use warnings::Warning;

use channel_files::writes_done;

use super::config::{JobOptions, Restore, RunConfig};
use super::coordinator::{
    self, Action as CoordAction, ChannelState, Completed, Coordinator, Cut, Outcome as CpOutcome,
    Pending, TaskAck, TaskSnapshot,
};
use super::counters::Counters;
use super::event::{Ev, Stamped, ANY_ATTEMPT};
use super::net::{Msg, Net};
use super::output::{
    Outcome, RunOutput, SavepointReport, SnapshotKind, SnapshotOut, TaskReport, Timeline,
    TimelineMark, TraceEntry,
};
use super::schedule::{ScheduleLog, Step};
use crate::engine::{Fingerprint, SimDuration, SimRng, SimTime, Stream};
use crate::fault::{fault_phase_end, plan_crashes};
use crate::model::graph::OutputEdge;
use crate::model::operator::BuiltinFactory;
use crate::model::record::{subtask_for_key, subtask_for_key_group, RecordSizes};
use crate::model::store::ExternalStore;
use crate::model::{
    ChannelId, CheckpointId, Context, ExecGraph, JobGraph, Operator, OperatorFactory, Record,
    SourcePoll, TaskId, Workload,
};
use crate::mutant::{fired, Mutant};
use crate::protocol::{
    handler_for, AbortReason, Barrier, BarrierHandler, BarrierKind, HandlerAction, HandlerConfig,
};
use crate::scenario::{
    CrashSpec, Guarantee, Partitioning, SavepointSpec, Scenario, StorageKind, TriggerEvent,
};
use crate::verdict::{CheckId, Violation};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Dead,
    Finished,
    Cancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobStatus {
    Running,
    Restarting,
    Finished,
    Failed,
    Cancelled,
}

/// One operator of a task's chain.
struct Member {
    /// Its index in the scenario.
    index: u32,
    /// Its subtask's place in the schedule log (`ExecGraph::instance`).
    inst: TaskId,
    op: Box<dyn Operator>,
    /// Virtual time per record.
    cost: u64,
    is_sink: bool,
}

struct Task {
    subtask: u32,
    parallelism: u32,
    is_source: bool,
    /// The chained operators, head first (`TaskInfo::chain`).
    members: Vec<Member>,
    handler: Box<dyn BarrierHandler>,
    status: Status,
    blocked: Vec<bool>,
    /// Per input: a barrier read from it had blocked its sender, which
    /// waits for this task's resume.
    needs_resume: Vec<bool>,
    eod: Vec<bool>,
    eod_remaining: u32,
    input_ended: bool,
    last_checkpoint: CheckpointId,
    last_notified: CheckpointId,
    aborted: BTreeSet<CheckpointId>,
    rr: Vec<u32>,
    /// The head's cost per record read; the other members' costs add up
    /// per record they process (`World::chain_cost`).
    cost: u64,
    /// The chain's cost jitter (every member's, summed).
    jitter: u64,
    /// Records taken from an input buffer per step (`step_quantum / cost`).
    step_records: usize,
    /// Time the current alignment's first barrier arrived.
    alignment_start: Option<(CheckpointId, SimTime)>,
    last_alignment_ns: u64,
    /// The newest checkpoint snapshotted (this attempt), for the protocol
    /// check that snapshots follow checkpoint order, each once.
    snapshotted: CheckpointId,
    /// Per output channel (as in `task_outputs`): the edge may carry
    /// unaligned barriers (not forward/broadcast, receiver not forced to align).
    out_uc: Vec<bool>,
    /// A snapshot taken but not yet acknowledged (waiting for the last
    /// barrier or for held output barriers).
    pending_ack: Option<PartialAck>,
    /// Inputs with restored input channel state, in the order they were
    /// restored: without checkpointing during recovery the task reads them
    /// in this order, one after the other, before any new input (the
    /// buffers wait on the channels, `Channel::recovered`).
    recovery_order: VecDeque<u32>,
    /// `stop-the-world` source: paused for this checkpoint.
    paused: Option<CheckpointId>,
    /// Checkpoints this task started (this attempt) and those it closed on
    /// its outputs with their barrier or a cancellation marker, for the
    /// protocol check that every started checkpoint is closed downstream.
    started: BTreeSet<CheckpointId>,
    closed: BTreeSet<CheckpointId>,
    /// Source stopped by a stop-with-savepoint: emits nothing more.
    stopped: bool,
    /// Keyed operator whose every input is hash-partitioned: each record
    /// must belong to one of this subtask's key groups (routing check).
    check_routing: bool,
    /// The key groups this subtask owns: `start..end`.
    key_groups: (u32, u32),
    /// The job attempt this instance was deployed in: transactions it
    /// opened carry this attempt or a later one.
    deploy_attempt: u32,
    /// Checkpoints this instance declined, and those it sent cancellation
    /// markers for (the protocol check: at most once each).
    declined: BTreeSet<CheckpointId>,
    cancel_sent: BTreeSet<(CheckpointId, CancelCause)>,
}

/// Why a task sends a cancellation marker. Flink sends one of each for the
/// same checkpoint when a barrier of a checkpoint the coordinator already
/// aborted is skipped (`SubtaskCheckpointCoordinatorImpl.checkpointState`)
/// and the handler then aborts it too (`abortCheckpointOnBarrier`): the
/// protocol check allows one marker per cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CancelCause {
    Skipped,
    Declined,
}

/// A task's snapshot on its way to an acknowledgement.
#[derive(Clone)]
struct PartialAck {
    id: CheckpointId,
    snapshot: TaskSnapshot,
    cut: Cut,
    input_ended: bool,
    start_delay_ns: u64,
    alignment_ns: u64,
    /// Not every input delivered the barrier yet (channel state still open).
    waiting_barriers: bool,
    /// When the snapshot was taken: the task's writes start then.
    snapshot_at: SimTime,
    /// The channel state as the channel-state writer gets it: when each
    /// part was captured, and its bytes.
    writes: Vec<(SimTime, u64)>,
}

struct World<'a> {
    scenario: Arc<Scenario>,
    exec: ExecGraph,
    cfg: RunConfig,
    factory: &'a dyn OperatorFactory,
    tasks: Vec<Task>,
    /// Output channels of each task, flattened.
    task_outputs: Vec<Vec<ChannelId>>,
    net: Net,
    /// The scheduling stream: the scheduler's choices and cost jitter.
    sched_rng: SimRng,
    /// Coordinator → task RPC jitter: `rpc_latency_max - rpc_latency` (ns),
    /// drawn per task from `rpc_rng` (no draw without jitter).
    rpc_jitter: u64,
    rpc_rng: SimRng,
    /// Which ready input a task reads next (`runtime::scheduler`).
    scheduler: Box<dyn super::scheduler::Scheduler>,
    /// Scratch: when each ready input became available (for the scheduler).
    since: Vec<u64>,
    store: ExternalStore,
    coord: Coordinator,
    job: JobStatus,
    failed_reason: Option<String>,
    restarts: u32,
    fp: Fingerprint,
    trace: Vec<TraceEntry>,
    timeline: Vec<TimelineMark>, // trace
    fault_timeline: Vec<crate::runtime::output::FaultEvent>,
    fault_events_dropped: u64,
    counters: Counters,
    violations: Vec<Violation>,
    crash_plan: Vec<CrashSpec>,
    /// Entries of `crash_plan` from here on are crash points: fired by a
    /// choice, never scheduled.
    first_crash_point: usize,
    /// Crashes planned after an event (`on = …`) that has not happened yet,
    /// by index into `crash_plan`.
    armed_crashes: Vec<u32>,
    /// Worker crashes waiting for their event (indexes into the worker plan).
    armed_workers: Vec<u32>,
    /// Coordinator crashes waiting for their event (indexes into
    /// `[[faults.coordinator.crash_on]]`).
    armed_coordinator: Vec<u32>,
    /// Latency spikes and partitions waiting for their event (indexes as
    /// `Ev::NetworkFault`'s: spikes, then partitions).
    armed_network: Vec<u32>,
    /// Stragglers waiting for their event (indexes into
    /// `[[faults.slow_tasks]]`), and every straggler's window (a triggered
    /// one's once it started).
    armed_slow: Vec<u32>,
    slow_windows: Vec<(SimTime, SimTime)>,
    /// Highest offset + 1 ever emitted per global partition.
    high_water: Vec<u64>,
    out: Vec<Record>,
    /// Spare buffers for records passed between chained operators.
    chain_bufs: Vec<Vec<Record>>,
    /// The cost of this step's records in chained operators after the head.
    chain_cost: u64,
    /// Records that reached a sink operator in this step.
    sink_records: u64,
    actions: Vec<HandlerAction>,
    /// The input whose barrier the handler is taking right now blocked its
    /// sender: it is owed a resume once the handler blocks or releases it
    /// (`World::note_blocking_barrier`).
    barrier_read: Option<(TaskId, u32)>,
    ready: Vec<u32>,
    /// Per operator: an input edge is forward or broadcast (Flink forces
    /// such a node to align even with unaligned checkpoints).
    forced_aligned: Vec<bool>,
    /// Tasks without output channels (the drain reports of stop-the-world).
    sink_tasks: u32,
    /// Restored in-flight records not yet processed again.
    recovery_pending: u64,
    /// Per channel: restored output-state records still ahead in line.
    recovered_out_left: Vec<u64>,
    expected: Guarantee,
    fault_phase_end: SimTime,
    input_end: SimTime,
    /// When a sink last finished taking in records (throughput).
    sink_end: SimTime,
    /// The crash a recovery started from, until sources are past it.
    recovering_since: Option<SimTime>,
    recovery_ns: Vec<u64>,
    /// The progress a recovery must regain (`world/recovery_time.rs`).
    recovery: recovery_time::RecoveryClock,
    job_opts: JobOptions,
    /// Savepoint requests not yet triggered, in time order.
    savepoint_queue: VecDeque<SavepointSpec>,
    /// The request (index into `savepoint_reports`) of each queued entry.
    savepoint_queue_request: VecDeque<usize>,
    /// Per savepoint request, what became of it.
    savepoint_reports: Vec<SavepointReport>,
    /// The request each triggered savepoint id belongs to.
    savepoint_request_of: BTreeMap<CheckpointId, usize>,
    /// A retry of the queued savepoint is scheduled.
    savepoint_retry: bool,
    /// Savepoint ids and their requests (for barrier kinds and completion).
    savepoints: BTreeMap<CheckpointId, SavepointSpec>,
    /// A stop-with-savepoint completed: the job is finishing.
    stopped_with: Option<CheckpointId>,
    snapshots: Vec<SnapshotOut>,
    /// Per operator: keyed with only hash inputs (see `Task::check_routing`).
    routed_by_key: Vec<bool>,
    complete_below: Option<Vec<u64>>,
    complete_exempt: Vec<crate::model::Lineage>,
    /// The richer fault model's state (`world/faults.rs`).
    fx: faults::FaultState,
    /// The channel-state files shared by subtasks (`channel_files.rs`).
    files: channel_files::ChannelFiles,
    /// What became of each planned fault (`world/warnings.rs`).
    fx_log: warnings::FiredLog,
    /// Every task's schedule, for the oracle's replay (`runtime::schedule`).
    schedule: ScheduleLog,
    /// The operator coordinators (`world/operator_coordinators.rs`).
    ops: operator_coordinators::Coordinators,
    /// Every global failover of a running job: time and reason.
    failovers: Vec<(u64, String)>,
    restart_notes: Vec<crate::runtime::output::RestartNote>,
    /// Every crash that took effect: where its task was.
    crash_points: Vec<crate::runtime::output::CrashPoint>,
    /// A source partition has a rate: when a source polls changes what it
    /// emits, so its schedule keeps each poll's time.
    rated_sources: bool,
    /// The job started from a snapshot of another run: its tasks' history
    /// before the snapshot is unknown, so the schedule is not returned.
    schedule_partial: bool,
    /// The uncoordinated families' state (`world/local.rs`).
    local: Option<Box<local::Local>>,
    /// The job's loops, if it has feedback edges (`world/iteration.rs`).
    loops: Option<Box<iteration::Loops>>,
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
        let n = &scenario.network;
        // A scripted run (`[replay] choices`, `explore`) makes its input
        // orders and its messages' latencies as choices.
        let scripted = !scenario.replay.choices.is_empty()
            || !scenario.replay.crash_points.is_empty()
            || super::scheduler::recording();
        super::scheduler::install(scripted.then_some(scenario.replay.choices.as_slice()));
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
        for (ch, c) in exec.channels.iter().enumerate() {
            let back = |e: &&crate::scenario::EdgeSpec| {
                e.feedback && e.from == c.from_op && e.to == c.to_op
            };
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
        net.sizes = RecordSizes::new(&scenario, cfg.seed);
        net.drop_at_boundary = cfg.mutants.has(Mutant::BufferBoundaryDropsRecord);
        net.during_recovery = scenario.checkpoint.during_recovery;
        net.skip_recovered = cfg.mutants.has(Mutant::CheckpointDuringRecovery);
        net.persist_recovered_twice = cfg.mutants.has(Mutant::RecoveredBuffersPersistedTwice);
        let task_outputs = exec
            .tasks
            .iter()
            .map(|t| {
                t.outputs
                    .iter()
                    .flat_map(|o| o.channels.iter().copied())
                    .collect()
            })
            .collect();
        let mut crash_plan = plan_crashes(&scenario, cfg.seed);
        let fault_phase_end = fault_phase_end(&crash_plan);
        // Crash points (`[replay] crash_points`): one plan entry each, at
        // no time; a scripted run's choice fires it at a step.
        let first_crash_point = crash_plan.len();
        for &(operator, subtask) in &scenario.replay.crash_points {
            crash_plan.push(CrashSpec {
                at: SimTime::ZERO,
                operator,
                subtask,
                trigger: None,
            });
        }
        let mut forced_aligned = vec![false; scenario.operators.len()];
        let chained = scenario.chained_edges();
        for (e, _) in scenario.edges.iter().zip(&chained).filter(|(_, &c)| !c) {
            if matches!(
                e.partitioning,
                Partitioning::Forward | Partitioning::Broadcast
            ) {
                forced_aligned[e.to.0 as usize] = true;
            }
        }
        // Edges inside a sink topology are never unaligned (Flink 2.x,
        // FLINK-36287): a committer aligns whatever its input.
        for (forced, op) in forced_aligned.iter_mut().zip(&scenario.operators) {
            *forced |= op.kind.is_committer();
        }
        let routed_by_key = (0..scenario.operators.len())
            .map(|i| {
                let mut inputs = scenario.edges.iter().filter(|e| e.to.0 as usize == i);
                scenario.operators[i].kind.is_keyed()
                    && inputs.all(|e| e.partitioning == Partitioning::Hash)
            })
            .collect();
        let sink_tasks = exec.tasks.iter().filter(|t| t.outputs.is_empty()).count() as u32;
        let nch = exec.channels.len();
        let expected = scenario.expected_guarantee(cfg.algorithm);
        let fx = faults::FaultState::new(&scenario, cfg.seed, &exec);
        let f = &scenario.faults;
        let fx_log = warnings::FiredLog::new(
            crash_plan.len(),
            fx.worker_plan_len(),
            fx.coordinator_plan.len(),
            f.latency_spikes.len() + f.partitions.len(),
            f.slow_tasks.len(),
            (f.storage_failures.len(), f.lost_notifications.len()),
        );
        crate::mutant::reset_fired();
        let local = local::Local::new(&exec, &cfg).map(Box::new);
        let loops = iteration::Loops::new(&scenario, &exec).map(Box::new);
        let mut w = World {
            local,
            loops,
            files: channel_files::ChannelFiles::new(&scenario, &exec),
            fx,
            fx_log,
            schedule: ScheduleLog::new(exec.instances()),
            ops: operator_coordinators::Coordinators::new(&scenario, &exec, &cfg),
            failovers: Vec::new(),
            restart_notes: Vec::new(),
            crash_points: Vec::new(),
            rated_sources: scenario
                .operators
                .iter()
                .any(|op| match op.kind.source_spec() {
                    Some(src) => {
                        src.records_per_second > 0 || src.partition_rates.iter().any(|&r| r > 0)
                    }
                    None => false,
                }),
            schedule_partial: false,
            forced_aligned,
            sink_tasks,
            recovery_pending: 0,
            recovered_out_left: vec![0; nch],
            expected,
            fault_phase_end,
            input_end: SimTime::ZERO,
            sink_end: SimTime::ZERO,
            recovering_since: None,
            recovery_ns: Vec::new(),
            recovery: recovery_time::RecoveryClock::new(partitions),
            savepoint_queue: scenario.savepoints.iter().cloned().collect(),
            savepoint_queue_request: (0..scenario.savepoints.len()).collect(),
            savepoint_reports: scenario
                .savepoints
                .iter()
                .map(|sp| SavepointReport {
                    requested_at_ns: sp.at.0,
                    stop: sp.stop,
                    drain: sp.drain,
                    attempts: Vec::new(),
                    completed: None,
                    failure: None,
                })
                .collect(),
            savepoint_request_of: BTreeMap::new(),
            savepoint_retry: false,
            savepoints: BTreeMap::new(),
            stopped_with: None,
            snapshots: Vec::new(),
            routed_by_key,
            complete_below: None,
            complete_exempt: Vec::new(),
            job_opts,
            coord: Coordinator::new(coordinator::Config {
                interval: scenario.checkpoint.interval,
                min_pause: scenario.checkpoint.min_pause,
                timeout: scenario.checkpoint.timeout,
                rpc_latency: scenario.checkpoint.rpc_latency,
                max_concurrent: scenario.max_concurrent(cfg.algorithm) as usize,
                queue_requests: cfg.algorithm.info().coordination
                    == crate::protocol::Coordination::Barriers,
                tolerable_failures: scenario.checkpoint.tolerable_failures,
                retained: scenario.checkpoint.retained.max(1) as usize,
                tasks: exec.tasks.len(),
                mutants: cfg.mutants,
            }),
            tasks: Vec::new(),
            task_outputs,
            net,
            sched_rng: SimRng::new(cfg.seed, Stream::Scheduling),
            rpc_jitter: scenario.checkpoint.rpc_latency_max.0 - scenario.checkpoint.rpc_latency.0,
            rpc_rng: SimRng::new(cfg.seed, Stream::Rpc),
            scheduler: match scenario.network.input_order {
                _ if scripted => Box::new(super::scheduler::Scripted),
                crate::scenario::InputOrder::Random => Box::new(super::scheduler::Uniform),
                crate::scenario::InputOrder::Fifo => Box::new(super::scheduler::Fifo),
            },
            since: Vec::new(),
            store: ExternalStore::default(),
            job: JobStatus::Running,
            failed_reason: None,
            restarts: 0,
            fp: Fingerprint::default(),
            trace: Vec::new(),
            timeline: Vec::new(), // trace
            fault_timeline: Vec::new(),
            fault_events_dropped: 0,
            counters: Counters::default(),
            violations: Vec::new(),
            armed_crashes: Vec::new(),
            armed_workers: Vec::new(),
            armed_coordinator: Vec::new(),
            armed_network: Vec::new(),
            armed_slow: Vec::new(),
            slow_windows: Vec::new(),
            crash_plan,
            first_crash_point,
            high_water: vec![0; partitions],
            out: Vec::with_capacity(64),
            chain_bufs: Vec::new(),
            chain_cost: 0,
            sink_records: 0,
            actions: Vec::with_capacity(8),
            barrier_read: None,
            ready: Vec::with_capacity(16),
            scenario,
            exec,
            cfg,
            factory,
        };
        w.tasks = (0..w.exec.tasks.len() as TaskId)
            .map(|t| w.fresh_task(t))
            .collect();
        w
    }

    pub(super) fn fresh_task(&self, t: TaskId) -> Task {
        let info = &self.exec.tasks[t as usize];
        let spec = self.scenario.op(info.operator);
        let inputs = info.inputs.len() as u32;
        let mut out_uc = Vec::new();
        for o in &info.outputs {
            let uc = !matches!(
                o.partitioning,
                Partitioning::Forward | Partitioning::Broadcast
            );
            for &ch in &o.channels {
                let to = self.exec.channels[ch as usize].to;
                let to_op = self.exec.tasks[to as usize].operator.0 as usize;
                out_uc.push(uc && !self.forced_aligned[to_op]);
            }
        }
        let members = info
            .chain
            .iter()
            .map(|&op| {
                let spec = self.scenario.op(op);
                Member {
                    index: op.0,
                    inst: self.exec.instance[op.0 as usize] + info.subtask,
                    op: self.factory.create(op.0, info.subtask),
                    cost: spec.cost.0,
                    is_sink: spec.kind.is_sink(),
                }
            })
            .collect();
        let jitter = info
            .chain
            .iter()
            .map(|&op| self.scenario.op(op).cost_jitter.0);
        Task {
            subtask: info.subtask,
            parallelism: spec.parallelism,
            is_source: spec.kind.is_source(),
            members,
            handler: handler_for(
                self.cfg.algorithm,
                HandlerConfig {
                    inputs,
                    feedback: self
                        .loops
                        .as_ref()
                        .map_or(Vec::new(), |l| l.feedback_inputs(t)),
                    forced_aligned: self.forced_aligned[info.operator.0 as usize],
                    alignment_timeout: self.scenario.checkpoint.alignment_timeout,
                    mutants: self.cfg.mutants,
                },
            ),
            status: Status::Running,
            blocked: vec![false; inputs as usize],
            needs_resume: vec![false; inputs as usize],
            eod: vec![false; inputs as usize],
            eod_remaining: inputs,
            input_ended: false,
            last_checkpoint: 0,
            last_notified: 0,
            aborted: BTreeSet::new(),
            rr: vec![info.subtask; info.outputs.len()],
            cost: spec.cost.0,
            jitter: jitter.fold(0, u64::saturating_add),
            step_records: match spec.cost.0 {
                0 => usize::MAX,
                c => (self.scenario.network.step_quantum.0 / c).max(1) as usize,
            },
            alignment_start: None,
            last_alignment_ns: 0,
            snapshotted: 0,
            out_uc,
            pending_ack: None,
            recovery_order: VecDeque::new(),
            paused: None,
            started: BTreeSet::new(),
            closed: BTreeSet::new(),
            stopped: false,
            check_routing: self.routed_by_key[info.operator.0 as usize],
            key_groups: crate::model::record::key_group_range(
                info.subtask,
                spec.parallelism,
                self.scenario.max_parallelism,
            ),
            deploy_attempt: self.net.attempt,
            declined: BTreeSet::new(),
            cancel_sent: BTreeSet::new(),
        }
    }

    /// The algorithm takes its checkpoints by stopping the world (drain
    /// markers, then a snapshot of every task on request).
    pub(super) fn stop_the_world(&self) -> bool {
        self.cfg.algorithm.info().coordination == crate::protocol::Coordination::StopTheWorld
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
        let c = &self.exec.channels[ch as usize];
        let name = |t: TaskId| &self.exec.tasks[t as usize].name;
        format!("channel {} -> {}", name(c.from), name(c.to))
    }

    pub(super) fn violation(&mut self, check: CheckId, message: String) {
        let time_ns = self.now().0;
        self.violations.push(Violation {
            check,
            time_ns,
            message,
        });
    }

    // --- trace: begin ---
    /// Records a timeline fact (`record_trace` only; one branch otherwise).
    #[inline]
    pub(super) fn mark(&mut self, what: impl FnOnce() -> Timeline) {
        if self.cfg.record_trace {
            let time_ns = self.net.now.0;
            let what = what();
            self.timeline.push(TimelineMark { time_ns, what });
        }
    }
    // --- trace: end ---

    // ------------------------------------------------------------ main loop

    pub(super) fn main_loop(&mut self) -> RunOutput {
        if let Some(r) = self.job_opts.restore.clone() {
            self.start_from(&r);
        }
        for at in self
            .savepoint_queue
            .iter()
            .map(|s| s.at)
            .collect::<Vec<_>>()
        {
            self.schedule_any(at, Ev::SavepointDue);
        }
        if let Some(at) = self.job_opts.cancel_at.or(self.scenario.cancel_at) {
            self.schedule_any(at, Ev::Cancel);
        }
        let cp = &self.scenario.checkpoint;
        if self.is_local() {
            self.local_start();
        } else if cp.interval.is_some() && self.cfg.algorithm.info().checkpoints {
            let first = SimTime(cp.first_delay.0);
            self.schedule_any(first, Ev::PeriodicTrigger { generation: 0 });
        }
        for (i, c) in self.crash_plan.clone().iter().enumerate() {
            if i >= self.first_crash_point {
                break; // crash points fire by choice
            }
            match c.trigger {
                None => self.schedule_any(c.at, Ev::Crash { index: i as u32 }),
                Some(_) => self.armed_crashes.push(i as u32),
            }
        }
        self.schedule_planned_faults();
        self.start_coordinators();
        for t in 0..self.tasks.len() as TaskId {
            self.net.poke(t);
        }
        let limits = self.scenario.limits.clone();
        let mut events: u64 = 0;
        let wall = crate::wallclock::Stopwatch::start();
        let (max_wall, max_memory) = (super::limits::max_wall_ns(), super::limits::max_memory());
        let upfront = super::limits::estimate(&self.scenario).total();
        let outcome = loop {
            if self.job == JobStatus::Finished {
                match self.stopped_with {
                    Some(id) => break Outcome::Stopped(id),
                    None => break Outcome::Finished,
                }
            }
            if self.job == JobStatus::Cancelled {
                break Outcome::Cancelled;
            }
            if self.job == JobStatus::Failed {
                break Outcome::JobFailed(self.failed_reason.clone().unwrap_or_default());
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
            if stamped.attempt != ANY_ATTEMPT && self.is_stale(&stamped) {
                continue;
            }
            events += 1;
            let (tag, a, b) = stamped.ev.encode();
            self.fp.event(time.0, tag, a, b);
            if self.cfg.record_trace {
                self.trace.push(TraceEntry {
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
                if self.tasks[t as usize].status == Status::Running {
                    self.maybe_ack(t);
                }
            }
            if !self.net.announced.is_empty() {
                self.announce();
            }
        };
        self.finish(outcome, events)
    }

    pub(super) fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Wake { task } => self.wake(task),
            Ev::Deliver { ch } => self.net.deliver(ch),
            Ev::Flush { task } => self.flush(task),
            Ev::PeriodicTrigger { generation } => self.periodic_trigger(generation),
            Ev::TriggerSource { task, barrier } => self.trigger_source(task, barrier),
            Ev::Ack { task, id } if self.is_local() => self.local_ack(task, id),
            Ev::Ack { task, id } => self.ack(task, id),
            Ev::LocalTimer { task } => self.local_timer(task),
            Ev::Decline { id, .. } => self.declined(id),
            Ev::CheckpointTimeout { id } => self.expired(id),
            Ev::Finalized { id } => self.finalized(id),
            Ev::NotifyComplete { task, id } => self.notify_complete(task, id),
            Ev::NotifyAborted {
                task,
                id,
                latest_completed,
            } => self.notify_aborted(task, id, latest_completed),
            Ev::Crash { index } => {
                self.note_crash_event();
                self.crash(index);
            }
            Ev::FailureDetected { task } => {
                if self.region_failover(task) {
                    return;
                }
                let name = self.exec.tasks[task as usize].name.clone();
                self.failover(format!("task {name} failed"));
            }
            Ev::Restart => self.restart(),
            Ev::AlignmentTimer { task, id } => {
                if self.tasks[task as usize].status == Status::Running {
                    let mut actions = std::mem::take(&mut self.actions);
                    self.tasks[task as usize].handler.on_timer(id, &mut actions);
                    self.apply_actions(task, &mut actions);
                    self.actions = actions;
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
                if self.tasks[task as usize].status == Status::Running {
                    self.checkpoint(task, barrier);
                    self.all_barriers(task, barrier.id);
                }
            }
            Ev::SavepointDue => self.try_savepoint(),
            Ev::Cancel => self.cancel(),
            Ev::SavepointDone { task, id } => {
                if self.tasks[task as usize].status == Status::Running {
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
        if !self.cfg.algorithm.info().closes_superseded {
            return;
        }
        let mut found = Vec::new();
        for (ti, task) in self.tasks.iter().enumerate() {
            if task.status == Status::Dead || self.task_outputs[ti].is_empty() {
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
                        self.exec.tasks[ti].name
                    ));
                }
            }
        }
        for msg in found {
            self.violation(CheckId::Protocol, msg);
        }
    }
}

#[cfg(test)]
mod tests;
