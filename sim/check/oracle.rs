//! The oracle: a failure-free reference execution of the job on the same
//! input, written independently of the simulator's channels, barriers and
//! scheduling. Each task runs on a fresh operator instance, in topological
//! order, reading its inputs from queues that hold exactly what its upstream
//! tasks emitted, **in each channel's FIFO order**, and routing its output by
//! the same partitioning rules. What reaches each sink is the expected
//! output; the keyed state at the end is the expected state.
//!
//! Which input a task reads next is a scheduling choice that changes the
//! result of order-dependent operators (a "first record per key wins"
//! dedup, a count window). When the run's effective schedule is known
//! (`runtime::schedule`: per task, how many records it read from which input,
//! when it snapshotted, was notified, ended its input, and from which
//! checkpoint it was restarted), the oracle replays those choices, restarts
//! included, on its own data: the failure-free execution the run's result
//! claims to be. Then output values and keyed state are compared exactly for
//! every operator. Without a schedule (a job started from a snapshot file),
//! each task reads its inputs channel after channel, and operators whose
//! output depends on order are compared by lineage and keys only.

use crate::engine::SimTime;
use crate::model::flip27::OperatorEvent;
use crate::model::graph::ExecGraph;
use crate::model::kinds::{Role, SinkRole, StateLayout};
use crate::model::{
    Context, ExternalStore, JobGraph, Operator, OperatorFactory, Payload, Record, SourcePoll,
    Workload,
};
use crate::mutant::Mutants;
use crate::runtime::schedule::Step;
use crate::scenario::Scenario;
use crate::verdict::Violation;
use std::collections::BTreeMap;

mod compare;
mod event_time;
mod flow;
mod lineage;
mod queues;
mod resume;
mod sinks;
mod upsert;
pub use upsert::UpsertDiff;

pub struct Oracle {
    /// Every operator's id, by index, for messages.
    names: Vec<String>,
    /// Sink operators, in operator order; position = sink slot.
    sinks: Vec<u32>,
    /// Per sink slot: an upsert sink (`sink-upsert`), judged by its final
    /// table, not by the lineage and value comparison.
    upsert: Vec<bool>,
    /// Per upsert sink operator: the table a failure-free run leaves, the
    /// last value per key in the order the sink task reads its key's
    /// records (the replayed schedule's order, or channel order without
    /// one).
    upsert_tables: BTreeMap<u32, UpsertTable>,
    /// Distinct payloads of its execution that got a name already taken.
    payload_collisions: u64,
    /// First flat lineage index of each global partition.
    partition_base: Vec<usize>,
    total_records: usize,
    /// Expected arrivals per (sink slot, lineage), flattened.
    expected: Vec<u32>,
    /// The digest of the expected `(sink, key, value)` multiset, per sink
    /// slot, and of the sinks judged by value together.
    slot_digests: Vec<MultisetDigest>,
    digest: MultisetDigest,
    /// The expected multiset itself (unsorted), kept only by an oracle
    /// built to name a difference the digests found
    /// ([`Oracle::build_detailed`]).
    values: Option<Vec<(u32, u64, i64, Payload)>>,
    pub keyed_state: BTreeMap<u32, BTreeMap<u64, i64>>,
    /// The timers that fired while the oracle replayed the run's schedules,
    /// and after them (draining a task's input to its end), each sorted
    /// (the `timers` check).
    pub timers_fired: Vec<crate::model::timers::FiredTimer>,
    pub timers_fired_after: Vec<crate::model::timers::FiredTimer>,
    /// Operators downstream (transitively) of an operator whose output
    /// depends on arrival order (e.g. running sums): without the run's
    /// schedule their input values, and so their state values, depend on
    /// the run's order, not only on the input. Their state is then compared
    /// by keys only. Empty when the oracle replayed the run's schedule.
    pub order_dependent: std::collections::BTreeSet<u32>,
    /// The oracle replayed the run's effective schedule: values and state
    /// are exact for every operator.
    pub replayed: bool,
    /// Upsert sinks whose finished table is compared by keys only: without
    /// the schedule, an input aggregate of theirs reads values that depend
    /// on arrival order.
    upsert_keys_only: std::collections::BTreeSet<u32>,
    /// With the schedule: per (sink slot, lineage), the records sink tasks
    /// had read before the snapshot of the last checkpoint they were
    /// notified of (or restored from): what must be committed.
    promised: Vec<u32>,
    /// Checkpoint-complete notifications replayed at sink tasks.
    pub sink_notifications: u64,
    /// Sinks downstream of an operator with union list state: judged by
    /// lineage only (not values), with no promise for the commit check;
    /// keyed state downstream of such an operator is judged by keys.
    pub lineage_only: std::collections::BTreeSet<u32>,
    /// Sinks with an input whose records, lineages included, depend on
    /// arrival order (an operator that says so, or one downstream of it),
    /// in a job started from a snapshot file: without the history before
    /// the snapshot, which was another run's, no failure-free execution
    /// says which records they must commit. Also, in a run that may
    /// duplicate and replayed, the sinks below an operator whose lineages
    /// depend on arrival order ([`Unjudged`] says which case). Their
    /// output is not compared; the check's details count them.
    pub unjudged: std::collections::BTreeSet<u32>,
    /// Why each sink of `unjudged` is not judged.
    pub unjudged_why: BTreeMap<u32, Unjudged>,
    /// Sinks downstream of an operator whose output lineages depend on
    /// arrival order (`Operator::lineage_follows_input`; a count window:
    /// which record closes a window, and so the lineage its result
    /// carries): a replayed duplicate may shift every later result onto
    /// other lineages.
    reorderable: std::collections::BTreeSet<u32>,
    /// The run may duplicate and replayed records
    /// ([`Oracle::duplicates_reorder`]): a duplicate read by a stateful
    /// operator changes later values, so values are not compared, only
    /// lineages.
    pub duplicating: bool,
}

/// Why a sink's output is not compared with the oracle's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unjudged {
    /// Its input depends on arrival order, and the run was restored from a
    /// snapshot file: the order before the snapshot was another run's.
    RestoredFromFile,
    /// The lineages of its input depend on arrival order, and the run may
    /// duplicate (an at-least-once guarantee) and replayed records: a
    /// duplicate read by such an operator moves its results onto other
    /// lineages, so neither a loss nor a duplicate can be told by lineage.
    DuplicatesReordered,
}

impl Unjudged {
    pub fn reason(self) -> &'static str {
        match self {
            Unjudged::RestoredFromFile => "its input depends on arrival order, and the oracle has no schedule for a run restored from a snapshot file",
            Unjudged::DuplicatesReordered => "an operator above it gives its results the lineage of a record chosen by arrival order (a window's closing record), and the run may duplicate and replayed records: a duplicate moves those results onto other lineages, so losses and duplicates cannot be told by lineage",
        }
    }
}

/// Outcome of the output comparison.
pub struct OutputDiff {
    pub duplicates: u64,
    pub losses: u64,
    pub violations: Vec<Violation>,
}

const MAX_EXAMPLES: usize = 5;

/// How the violation of committed values that differ from the oracle's
/// begins.
const VALUES_DIFFER: &str =
    "committed values differ from the oracle's although every lineage committed once";

/// Records a source emits per poll when no schedule says otherwise.
const ORACLE_POLL: usize = 1024;

/// An upsert sink's table: per key, the value and payload of its row.
pub type UpsertTable = BTreeMap<u64, (i64, Payload)>;

/// The oracle's execution: channel queues and the expected sink arrivals.
struct Exec<'a> {
    scenario: &'a Scenario,
    exec: ExecGraph,
    factory: &'a dyn OperatorFactory,
    queues: queues::Queues,
    /// Per task: its sink slot, if it is a sink.
    sink_slot: Vec<Option<usize>>,
    store: ExternalStore,
    out: Vec<Record>,
    /// What the operator call just made emitted into the late-data side
    /// output.
    late: Vec<Record>,
    /// The records a read takes off its channel before one operator call
    /// processes them all (`Exec::read`).
    batch: Vec<Record>,
    /// The timers that fired in the operator call just made.
    fired: Vec<crate::model::timers::FiredTimer>,
    /// Queue what reaches sinks too (to replay the sinks' schedules).
    sink_queues: bool,
    /// Splits a FLIP-27 reader was given, over every reader run so far.
    claimed: std::collections::BTreeSet<u32>,
    /// Records routed so far (a source that emits nothing more stops).
    routed: u64,
    /// The time operators see: a source's poll time while replaying its
    /// `Emit` steps (a partition with a rate offers only what is there by
    /// then), the end of time while draining a source after its schedule.
    now: SimTime,
    /// The job's event time.
    time: crate::model::event_time::JobTime,
    /// A task's input is drained to its end, past its schedule.
    past_schedule: bool,
    /// Per channel: it closes an iteration's loop (no watermarks on it).
    feedback: Vec<bool>,
}

/// One task's operator in the oracle, with its routing state.
struct TaskRun {
    t: u32,
    op: Box<dyn Operator>,
    rr: Vec<u32>,
    /// The operator's event-time clock (its timer service's watermark,
    /// part of its state), and the last watermark it sent on since it
    /// last (re)started.
    watermark: i64,
    sent: i64,
    time: Option<Box<event_time::OracleTime>>,
    /// The processing time its schedule last logged (`Step::Clock`).
    clock: Option<SimTime>,
}

impl Exec<'_> {
    fn fresh(&self, t: u32) -> TaskRun {
        let info = &self.exec.tasks[t as usize];
        TaskRun {
            t,
            op: self.factory.create(info.operator.0, info.subtask),
            rr: vec![info.subtask; info.outputs.len()],
            watermark: crate::model::event_time::MIN_WATERMARK,
            sent: crate::model::event_time::MIN_WATERMARK,
            time: self.task_time(t),
            clock: None,
        }
    }

    /// The timers the operator call just made fired.
    fn note_fired(&mut self, oracle: &mut Oracle) {
        let to = match self.past_schedule {
            false => &mut oracle.timers_fired,
            true => &mut oracle.timers_fired_after,
        };
        to.append(&mut self.fired);
    }

    fn call<R>(
        &mut self,
        task: &mut TaskRun,
        f: impl FnOnce(&mut dyn Operator, &mut Context) -> R,
    ) -> R {
        let info = &self.exec.tasks[task.t as usize];
        let mut ctx = Context {
            subtask: info.subtask,
            parallelism: self.scenario.op(info.operator).parallelism,
            operator: info.operator.0,
            max_parallelism: self.scenario.max_parallelism,
            attempt: 0,
            now: task.clock.unwrap_or(self.now),
            restored: None,
            watermark: task.watermark,
            store: &mut self.store,
            out: &mut self.out,
            late: &mut self.late,
            fired: &mut self.fired,
            mutants: Mutants::NONE,
        };
        f(task.op.as_mut(), &mut ctx)
    }

    /// Polls a source until it emitted `n` records (or ran dry); true if it
    /// is exhausted (a reader waiting for a split is not).
    fn emit(&mut self, task: &mut TaskRun, n: u64, batch: usize, oracle: &mut Oracle) -> bool {
        let mut left = n;
        while left > 0 {
            // The run's steps may have emitted fewer than `batch` at a
            // time (a byte-sized buffer): never emit past the step.
            let max = batch.min(usize::try_from(left).unwrap_or(usize::MAX));
            match self.call(task, |op, ctx| op.poll_source(max, ctx)) {
                SourcePoll::Emitted(k) => {
                    left = left.saturating_sub(k as u64);
                    self.source_records_timed(task);
                    self.route(task, oracle);
                }
                SourcePoll::Idle | SourcePoll::IdleUntil(_) => {
                    self.out.clear();
                    return false;
                }
                _ => {
                    self.out.clear();
                    return true;
                }
            }
        }
        false
    }

    /// A split assignment the run's schedule gives a FLIP-27 reader: only
    /// the first of a split's assignments counts (a failure-free run reads
    /// each split once; the run's other reads of it are duplicates).
    fn operator_event(&mut self, task: &mut TaskRun, event: OperatorEvent) {
        if let OperatorEvent::AddSplit(split) = event {
            if !self.claimed.insert(split) {
                return;
            }
            self.split_assigned(task, split);
        }
        self.call(task, |op, ctx| op.handle_operator_event(event, ctx));
        self.out.clear(); // nothing to emit
    }

    /// The end of a FLIP-27 reader's schedule: the last reader of its
    /// operator gets the splits no schedule read, then every reader hears
    /// that no split will come.
    fn end_of_splits(&mut self, task: &mut TaskRun) {
        let info = &self.exec.tasks[task.t as usize];
        let (op, subtask) = (info.operator, info.subtask);
        let spec = self.scenario.op(op);
        let Some(src) = spec.kind.source_spec() else {
            return;
        };
        if spec.kind.state_layout() != StateLayout::SplitSource {
            return;
        }
        // After its schedule nothing pauses a split: the failure-free
        // run reads them all.
        let base = self.scenario.first_partition(op);
        let all: Vec<u32> = (base..base + src.partitions).collect();
        task.op.pause_or_resume_splits(&[], &all);
        if subtask + 1 == spec.parallelism {
            for split in base..base + src.partitions {
                self.operator_event(task, OperatorEvent::AddSplit(split));
            }
        }
        self.operator_event(task, OperatorEvent::NoMoreSplits);
    }

    /// The committer task that commits what Sink V2 writer task `t` wrote
    /// (`None` for any other sink).
    fn committer_of(&self, t: usize) -> Option<usize> {
        let info = &self.exec.tasks[t];
        if self.scenario.op(info.operator).kind.role() != Role::Sink(SinkRole::Writer) {
            return None;
        }
        let e = self
            .scenario
            .edges
            .iter()
            .find(|e| e.from == info.operator)?;
        let subtask = match self.scenario.op(e.to).parallelism {
            1 => 0,
            _ => info.subtask,
        };
        Some(self.exec.task_of(e.to, subtask) as usize)
    }

    /// Runs task `t`: its schedule's steps, then whatever input is left
    /// (channel after channel) and the end of input.
    fn run_task(&mut self, t: u32, steps: &[Step], oracle: &mut Oracle) -> TaskRun {
        let mut r = self.resume(t);
        self.advance(&mut r, steps, false, oracle);
        self.end(&mut r, oracle);
        r.task
    }

    /// Runs every task of a job with feedback edges, interleaved
    /// (`resume.rs`): each as far as its records are there; when none can
    /// go on, the first task still inside its schedule takes what is there
    /// and goes on; then every task drains its inputs, and the first task
    /// (in topological order) whose upstream tasks, feedback edges aside,
    /// have all ended ends, until every task has. Returns each task's
    /// operator (sinks are not run).
    fn run_cyclic(
        &mut self,
        order: &[u32],
        schedule: Option<&[Vec<Step>]>,
        oracle: &mut Oracle,
    ) -> Vec<TaskRun> {
        let steps = |t: u32| schedule.map_or(&[][..], |s| &s[t as usize]);
        let mut runs: Vec<resume::Resume> = order.iter().map(|&t| self.resume(t)).collect();
        let feedback_in: Vec<Vec<bool>> = order
            .iter()
            .map(|&t| {
                let inputs = &self.exec.tasks[t as usize].inputs;
                inputs
                    .iter()
                    .map(|&ch| self.feedback[ch as usize])
                    .collect()
            })
            .collect();
        loop {
            let mut progress = false;
            for (i, &t) in order.iter().enumerate() {
                progress |= self.advance(&mut runs[i], steps(t), true, oracle);
            }
            if progress {
                continue;
            }
            let inside = (0..runs.len()).find(|&i| !Self::steps_done(&runs[i], steps(order[i])));
            if let Some(i) = inside {
                self.advance(&mut runs[i], steps(order[i]), false, oracle);
                continue;
            }
            for r in runs.iter_mut().filter(|r| !r.done) {
                progress |= self.drain(r, oracle);
            }
            if progress {
                continue;
            }
            let ready = (0..runs.len()).find(|&i| {
                let inputs = &self.exec.tasks[order[i] as usize].inputs;
                !runs[i].done
                    && inputs.iter().zip(&feedback_in[i]).all(|(&ch, &back)| {
                        let from = self.exec.channels[ch as usize].from;
                        back || order
                            .iter()
                            .position(|&u| u == from)
                            .is_none_or(|u| runs[u].done)
                    })
            });
            match ready {
                Some(i) => self.end(&mut runs[i], oracle),
                None => break,
            }
        }
        runs.into_iter().map(|r| r.task).collect()
    }

    /// By channel: whether it belongs to a feedback edge (one lookup per
    /// channel in the feedback edges, not a scan of every edge).
    fn feedback_channels(&self) -> Vec<bool> {
        let back: std::collections::BTreeSet<_> = self
            .scenario
            .edges
            .iter()
            .filter(|e| e.feedback)
            .map(|e| (e.from, e.to))
            .collect();
        self.exec
            .channels
            .iter()
            .map(|c| {
                !back.is_empty()
                    && back.contains(&(
                        self.exec.tasks[c.from as usize].operator,
                        self.exec.tasks[c.to as usize].operator,
                    ))
            })
            .collect()
    }
}

impl Oracle {
    /// The oracle without the run's schedule: each task reads its inputs
    /// channel after channel, in each channel's order.
    pub fn build(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
    ) -> Oracle {
        Oracle::build_replaying(scenario, workload, factory, None)
    }

    /// The oracle replaying the run's effective schedule (per task, in task
    /// order), or reading channel after channel without one.
    pub fn build_replaying(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
        schedule: Option<&[Vec<Step>]>,
    ) -> Oracle {
        Oracle::build_keeping(scenario, workload, factory, schedule, false, None)
    }

    /// The oracle of a run: replaying its schedule (keeping the expected
    /// values with `detailed`, see [`Oracle::build_detailed`]); its log
    /// sources read the topics as the run's log holds them, read as of the
    /// times of their polls, with no transaction that ever aborted read
    /// (the failure-free run has none).
    pub fn build_for_run(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
        run: &crate::runtime::RunOutput,
        detailed: bool,
    ) -> Oracle {
        let schedule = run.schedule.as_deref();
        let store = scenario.has_log_source().then_some(&run.store);
        Oracle::build_keeping(scenario, workload, factory, schedule, detailed, store)
    }

    /// [`Oracle::build_replaying`], keeping the expected output values as
    /// well as their digest, to name the first value that differs. The
    /// harness builds it only for a run whose committed values the digest
    /// found different (`values_differ`).
    pub fn build_detailed(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
        schedule: Option<&[Vec<Step>]>,
    ) -> Oracle {
        Oracle::build_keeping(scenario, workload, factory, schedule, true, None)
    }

    /// The ids of the sinks whose output is not compared
    /// ([`Oracle::unjudged`]), in operator order.
    pub fn unjudged_names(&self) -> Vec<String> {
        let names = self
            .unjudged
            .iter()
            .map(|&s| self.names[s as usize].clone());
        names.collect()
    }

    /// Why each sink of [`Oracle::unjudged_names`] is not judged, in the
    /// same order.
    pub fn unjudged_reasons(&self) -> Vec<&'static str> {
        let why = |s: &u32| self.unjudged_why.get(s).copied();
        let reasons = self.unjudged.iter().map(why);
        reasons
            .map(|w| w.unwrap_or(Unjudged::RestoredFromFile).reason())
            .collect()
    }

    /// Whether this oracle's verdict found committed values different but
    /// could not name the first difference (it kept only their digest).
    pub fn values_differ(&self, verdict: &super::Verdict) -> bool {
        self.values.is_none()
            && verdict
                .violations()
                .any(|v| v.message.starts_with(VALUES_DIFFER))
    }

    fn build_keeping(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
        schedule: Option<&[Vec<Step>]>,
        keep_values: bool,
        input: Option<&ExternalStore>,
    ) -> Oracle {
        let job = JobGraph::build(scenario);
        // One task per operator subtask: the run logs each chained
        // operator's schedule on its own (`ExecGraph::instance`), and
        // records between chained operators are replayed through queues
        // like any channel's.
        let exec = ExecGraph::unchained(scenario, &job);
        let schedule = schedule.filter(|s| s.len() == exec.tasks.len());
        let mut oracle = Oracle::empty(scenario, workload, keep_values, schedule.is_some());
        let sink_slot: Vec<Option<usize>> = exec
            .tasks
            .iter()
            .map(|t| oracle.sinks.iter().position(|&s| s == t.operator.0))
            .collect();
        let mut x = Exec {
            scenario,
            queues: queues::Queues::new(exec.channels.len()),
            exec,
            factory,
            sink_slot,
            store: input.map_or_else(ExternalStore::default, ExternalStore::log_input),
            out: Vec::new(),
            late: Vec::new(),
            batch: Vec::new(),
            fired: Vec::new(),
            sink_queues: schedule.is_some(),
            claimed: std::collections::BTreeSet::new(),
            routed: 0,
            now: SimTime::ZERO,
            time: crate::model::event_time::JobTime::new(scenario),
            past_schedule: false,
            feedback: Vec::new(),
        };
        x.feedback = x.feedback_channels();
        let (order_sensitive, moves_lineage) = oracle.run_operators(&mut x, &job, schedule);
        oracle.mark_reorderable(scenario, &job, &moves_lineage);
        oracle.payload_collisions = x.store.payloads.collisions();
        if !oracle.replayed {
            oracle.mark_order_dependent(scenario, &job, &order_sensitive);
        }
        oracle.mark_below_union_state(scenario);
        if let Some(schedule) = schedule {
            oracle.promise_scheduled_sinks(&mut x, schedule);
        }
        oracle.merge_digests();
        oracle.timers_fired.sort_unstable();
        oracle.timers_fired_after.sort_unstable();
        oracle
    }

    /// The expected values' digest: every sink's, but those judged by
    /// lineage only and those not judged.
    fn merge_digests(&mut self) {
        self.digest = MultisetDigest::default();
        for (slot, d) in self.slot_digests.iter().enumerate() {
            let sink = self.sinks[slot];
            if !self.lineage_only.contains(&sink) && !self.unjudged.contains(&sink) {
                self.digest.merge(d);
            }
        }
    }

    /// An oracle that has seen nothing yet: one slot per sink, one entry per
    /// source record and sink.
    fn empty(
        scenario: &Scenario,
        workload: &Workload,
        keep_values: bool,
        replayed: bool,
    ) -> Oracle {
        let sinks: Vec<u32> = scenario
            .operators
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind.is_sink())
            .map(|(i, _)| i as u32)
            .collect();
        let mut partition_base = Vec::with_capacity(workload.partition_count());
        let mut total = 0;
        for p in 0..workload.partition_count() {
            partition_base.push(total);
            total += workload.partition(p as u32).len();
        }
        let upsert = sinks
            .iter()
            .map(|&s| scenario.operators[s as usize].kind.role() == Role::Sink(SinkRole::Upsert))
            .collect();
        Oracle {
            names: scenario.operators.iter().map(|o| o.id.clone()).collect(),
            expected: vec![0; total * sinks.len()],
            slot_digests: vec![MultisetDigest::default(); sinks.len()],
            upsert,
            upsert_tables: BTreeMap::new(),
            payload_collisions: 0,
            sinks,
            partition_base,
            total_records: total,
            digest: MultisetDigest::default(),
            values: keep_values.then(Vec::new),
            keyed_state: BTreeMap::new(),
            timers_fired: Vec::new(),
            timers_fired_after: Vec::new(),
            order_dependent: std::collections::BTreeSet::new(),
            replayed,
            upsert_keys_only: std::collections::BTreeSet::new(),
            promised: Vec::new(),
            sink_notifications: 0,
            lineage_only: std::collections::BTreeSet::new(),
            unjudged: std::collections::BTreeSet::new(),
            unjudged_why: BTreeMap::new(),
            reorderable: std::collections::BTreeSet::new(),
            duplicating: false,
        }
    }

    /// Runs every non-sink task in topological order (sinks are not run:
    /// what reaches them is counted) and keeps the keyed operators' state;
    /// per operator, whether its output depends on its input's order, and
    /// whether the lineages it emits do.
    fn run_operators(
        &mut self,
        x: &mut Exec<'_>,
        job: &JobGraph,
        schedule: Option<&[Vec<Step>]>,
    ) -> (Vec<bool>, Vec<bool>) {
        let scenario = x.scenario;
        let mut order_sensitive = vec![false; scenario.operators.len()];
        let mut moves_lineage = vec![false; scenario.operators.len()];
        let order: Vec<u32> = (job.topo.iter())
            .flat_map(|&op| (0..scenario.op(op).parallelism).map(move |s| (op, s)))
            .map(|(op, s)| x.exec.task_of(op, s))
            .filter(|&t| x.sink_slot[t as usize].is_none())
            .collect();
        let tasks: Vec<TaskRun> = match scenario.edges.iter().any(|e| e.feedback) {
            true => x.run_cyclic(&order, schedule, self),
            false => (order.iter())
                .map(|&t| {
                    let steps = schedule.map_or(&[][..], |s| &s[t as usize]);
                    x.run_task(t, steps, self)
                })
                .collect(),
        };
        for task in tasks {
            let op = x.exec.tasks[task.t as usize].operator;
            order_sensitive[op.0 as usize] |= !task.op.order_insensitive_output();
            moves_lineage[op.0 as usize] |= !task.op.lineage_follows_input();
            if scenario.op(op).kind.is_keyed() {
                self.keyed_state
                    .entry(op.0)
                    .or_default()
                    .append(&mut task.op.keyed_state());
            }
        }
        (order_sensitive, moves_lineage)
    }

    /// Without a schedule: the operators whose input values depend on
    /// processing order, the upsert sinks that can only be judged by key,
    /// and the sinks that cannot be judged at all.
    fn mark_order_dependent(
        &mut self,
        scenario: &Scenario,
        job: &JobGraph,
        order_sensitive: &[bool],
    ) {
        for &op in &job.topo {
            let sensitive_upstream = scenario.edges.iter().any(|e| {
                e.to == op
                    && (self.order_dependent.contains(&e.from.0)
                        || order_sensitive[e.from.0 as usize])
            });
            if sensitive_upstream {
                self.order_dependent.insert(op.0);
            }
        }
        for (slot, &sink) in self.sinks.iter().enumerate() {
            let mut inputs = scenario.edges.iter().filter(|e| e.to.0 == sink);
            let order_dependent_input = inputs
                .clone()
                .any(|e| self.order_dependent.contains(&e.from.0));
            // Several aggregates writing one table: a key's last row
            // is whichever wrote last, which only the schedule knows.
            let writers = inputs.nth(1).is_some();
            if self.upsert[slot] && (order_dependent_input || writers) {
                self.upsert_keys_only.insert(sink);
            }
            let order_sensitive_input = scenario.edges.iter().any(|e| {
                e.to.0 == sink
                    && (order_sensitive[e.from.0 as usize]
                        || self.order_dependent.contains(&e.from.0))
            });
            if !self.upsert[slot] && order_sensitive_input {
                self.unjudged.insert(sink);
                self.unjudged_why.insert(sink, Unjudged::RestoredFromFile);
            }
        }
    }

    /// Union list state moves entries between subtasks at every restore,
    /// which a replay subtask by subtask cannot follow: downstream of
    /// such an operator, values and the sinks' reads are not the run's.
    fn mark_below_union_state(&mut self, scenario: &Scenario) {
        let union_ops: Vec<u32> = (0..scenario.operators.len() as u32)
            .filter(|&op| {
                scenario.operators[op as usize]
                    .kind
                    .state_layout()
                    .is_union()
            })
            .collect();
        let mut below = union_ops;
        while let Some(op) = below.pop() {
            for e in scenario.edges.iter().filter(|e| e.from.0 == op) {
                if self.order_dependent.insert(e.to.0) {
                    below.push(e.to.0);
                }
                if self.sinks.contains(&e.to.0) {
                    self.upsert_keys_only.insert(e.to.0);
                    self.lineage_only.insert(e.to.0);
                }
            }
        }
        let lineage_only = &self.lineage_only;
        if let Some(values) = &mut self.values {
            values.retain(|v| !lineage_only.contains(&v.0));
        }
    }

    /// With a schedule: replays each judged sink's steps, promising what
    /// its committed transactions carry.
    fn promise_scheduled_sinks(&mut self, x: &mut Exec<'_>, schedule: &[Vec<Step>]) {
        self.promised = vec![0; self.expected.len()];
        for (t, steps) in schedule.iter().enumerate() {
            let slot = x.sink_slot[t];
            if let Some(slot) = slot.filter(|&s| !self.lineage_only.contains(&self.sinks[s])) {
                // A committer with several writer inputs may snapshot
                // (Chandy–Lamport) before a committable arrived: promise
                // nothing for it.
                // One that forwards to a global committer publishes
                // nothing itself: promise nothing for it either.
                let commits = x.committer_of(t).map(|c| {
                    let forwards = crate::model::kinds::forwards_commits(
                        x.scenario,
                        x.exec.tasks[c].operator.0,
                    );
                    match x.exec.tasks[c].inputs.len() {
                        1 if !forwards => &schedule[c][..],
                        _ => &[][..],
                    }
                });
                x.replay_sink(t, slot, steps, commits, self);
            }
        }
    }

    /// A record reached sink slot `slot`.
    fn arrive(&mut self, slot: usize, r: Record) {
        if let Some(idx) = self.slot_index(slot, r.lineage) {
            self.expected[idx] += 1;
        }
        if self.upsert[slot] {
            // Arrival order; a replayed schedule's reading order overrides it.
            let table = self.upsert_tables.entry(self.sinks[slot]).or_default();
            table.insert(r.key, (r.value, r.payload));
            return;
        }
        // (A lineage outside the input: the run's committed copy of it
        // counts as a stray duplicate.)
        self.slot_digests[slot].add(self.sinks[slot], r.key, r.value, r.payload);
        if let Some(values) = &mut self.values {
            values.push((self.sinks[slot], r.key, r.value, r.payload));
        }
    }

    fn flat(&self, slot: usize, partition: u32, offset: u64) -> usize {
        slot * self.total_records + self.partition_base[partition as usize] + offset as usize
    }

    /// Where sink slot `slot`'s count of the source record `l` is, if the
    /// input has that record (a lineage out of range is a bug of a user's
    /// operator, counted elsewhere).
    fn slot_index(&self, slot: usize, l: crate::model::Lineage) -> Option<usize> {
        let base = *self.partition_base.get(l.partition as usize)?;
        (base + (l.offset as usize) < self.partition_end(l.partition))
            .then(|| self.flat(slot, l.partition, l.offset))
    }

    /// The expected `(sink, key, value)` multiset, unsorted: kept only by
    /// an oracle built with [`Oracle::build_detailed`] (empty otherwise).
    /// Distinct payloads of the oracle's run that got a name already taken.
    pub fn payload_collisions(&self) -> u64 {
        self.payload_collisions
    }

    pub fn expected_values(&self) -> &[(u32, u64, i64, Payload)] {
        self.values.as_deref().unwrap_or(&[])
    }

    /// The table upsert sink `sink` (an operator index) leaves in a
    /// failure-free run, and whether it is compared by keys only (its
    /// values depend on arrival order).
    pub fn upsert_table(&self, sink: u32) -> Option<(&UpsertTable, bool)> {
        let keys_only = self.upsert_keys_only.contains(&sink);
        self.upsert_tables.get(&sink).map(|t| (t, keys_only))
    }

    /// Source records that reach some sink in the failure-free run.
    pub fn expected_records(&self) -> usize {
        self.expected.iter().map(|&e| e as usize).sum()
    }

    /// Operator `op`'s id.
    fn name(&self, op: u32) -> &str {
        self.names.get(op as usize).map_or("?", String::as_str)
    }

    pub(super) fn partition_end(&self, partition: u32) -> usize {
        self.partition_base
            .get(partition as usize + 1)
            .copied()
            .unwrap_or(self.total_records)
    }
}

/// An order-independent digest of a multiset of `(sink, key, value)`: the
/// count and two wrapping sums of independent 64-bit mixes of each element.
/// Equal multisets have equal digests; unequal ones collide with negligible
/// probability. It spares sorting 10^5 records on every run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MultisetDigest {
    count: u64,
    a: u64,
    b: u64,
}

impl MultisetDigest {
    fn merge(&mut self, other: &MultisetDigest) {
        self.count += other.count;
        self.a = self.a.wrapping_add(other.a);
        self.b = self.b.wrapping_add(other.b);
    }

    fn add(&mut self, sink: u32, key: u64, value: i64, payload: Payload) {
        use crate::engine::rng::splitmix64;
        // A payload's name is a hash already; none adds nothing.
        let value = splitmix64(value as u64) ^ payload.0;
        let h = splitmix64(u64::from(sink) ^ splitmix64(key ^ value));
        self.count += 1;
        self.a = self.a.wrapping_add(h);
        self.b = self.b.wrapping_add(splitmix64(h ^ 0x5DEE_CE66_D1CE_4E5B));
    }
}
