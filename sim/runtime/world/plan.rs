//! The run plan: what a run knows before its first event and never
//! changes — the scenario, the execution graph, the run's configuration,
//! the operator factory, and the facts derived from them once (each task's
//! output channels, which operators must align, which are routed by key).
//!
//! It must never hold state that changes during a run: every other
//! component reads it, none writes it.

use crate::model::{ChannelId, ExecGraph, OperatorFactory};
use crate::runtime::config::{JobOptions, RunConfig};
use crate::scenario::{Guarantee, Partitioning, Scenario};
use std::sync::Arc;

/// The run plan (see the module's docs).
pub(super) struct Plan<'a> {
    pub(super) scenario: Arc<Scenario>,
    pub(super) exec: ExecGraph,
    pub(super) cfg: RunConfig,
    pub(super) job_opts: JobOptions,
    pub(super) factory: &'a dyn OperatorFactory,
    /// Output channels of each task, flattened.
    pub(super) task_outputs: Vec<Vec<ChannelId>>,
    /// Per operator: an input edge is forward or broadcast (Flink forces
    /// such a node to align even with unaligned checkpoints).
    pub(super) forced_aligned: Vec<bool>,
    /// Per operator: keyed with only hash inputs (see `Task::check_routing`).
    pub(super) routed_by_key: Vec<bool>,
    /// Per task: the member that is a Sink V2 committer, and the writer
    /// operator it reads committables from (with the member 0, what the
    /// task reads from the network are committables).
    pub(super) committers: Vec<Option<(usize, u32)>>,
    pub(super) expected: Guarantee,
    /// A source partition has a rate: when a source polls changes what it
    /// emits, so its schedule keeps each poll's time.
    pub(super) rated_sources: bool,
    /// The job's event time (`model::event_time::JobTime`).
    pub(super) time: crate::model::event_time::JobTime,
    /// The topics of the log the job's log sources read (their writers'
    /// operator indices), each once.
    pub(super) read_topics: Vec<u32>,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        scenario: Arc<Scenario>,
        exec: ExecGraph,
        factory: &'a dyn OperatorFactory,
        cfg: RunConfig,
        job_opts: JobOptions,
    ) -> Plan<'a> {
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
        let committers = exec
            .tasks
            .iter()
            .map(|t| {
                // (One that feeds a global committer owes no commits.)
                let m = t.chain.iter().position(|&op| {
                    scenario.op(op).kind.is_committer()
                        && !crate::model::kinds::forwards_commits(&scenario, op.0)
                })?;
                let op = t.chain[m];
                let writer = scenario.edges.iter().find(|e| e.to == op)?.from;
                Some((m, writer.0))
            })
            .collect();
        Plan {
            committers,
            task_outputs,
            forced_aligned: forced_aligned(&scenario),
            routed_by_key: routed_by_key(&scenario),
            expected: scenario.expected_guarantee(cfg.algorithm),
            rated_sources: rated_sources(&scenario),
            time: crate::model::event_time::JobTime::new(&scenario),
            read_topics: read_topics(&scenario),
            scenario,
            exec,
            cfg,
            job_opts,
            factory,
        }
    }
}

/// The topics the job's log sources read.
fn read_topics(scenario: &Scenario) -> Vec<u32> {
    let mut topics: Vec<u32> = (0..scenario.operators.len())
        .filter_map(|op| scenario.log_topic_of(op).map(|(topic, _)| topic))
        .collect();
    topics.sort_unstable();
    topics.dedup();
    topics
}

/// Per operator: Flink forces it to align even with unaligned checkpoints,
/// because an input edge between tasks is forward or broadcast, or because
/// it is inside a sink topology (Flink 2.x, FLINK-36287: a committer aligns
/// whatever its input).
fn forced_aligned(scenario: &Scenario) -> Vec<bool> {
    let mut forced = vec![false; scenario.operators.len()];
    let chained = scenario.chained_edges();
    for (e, _) in scenario.edges.iter().zip(&chained).filter(|(_, &c)| !c) {
        if matches!(
            e.partitioning,
            Partitioning::Forward | Partitioning::Broadcast
        ) {
            forced[e.to.0 as usize] = true;
        }
    }
    for (forced, op) in forced.iter_mut().zip(&scenario.operators) {
        *forced |= op.kind.is_committer() || op.kind.is_global_committer();
    }
    forced
}

/// Per operator: keyed, with every input hash-partitioned.
fn routed_by_key(scenario: &Scenario) -> Vec<bool> {
    (0..scenario.operators.len())
        .map(|i| {
            let mut inputs = scenario.edges.iter().filter(|e| e.to.0 as usize == i);
            scenario.operators[i].kind.is_keyed()
                && inputs.all(|e| e.partitioning == Partitioning::Hash)
        })
        .collect()
}

/// Some source partition has a rate.
fn rated_sources(scenario: &Scenario) -> bool {
    scenario.operators.iter().any(|op| op.kind.emits_at_rate())
}
