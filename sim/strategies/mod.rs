//! Proptest strategies for scenarios: random job topologies (built and
//! checked with petgraph), partitionings and parallelisms, workloads, network
//! settings, fault plans and checkpoint configurations.
//!
//! | strategy | value |
//! |---|---|
//! | [`topology`] | [`Topology`]: a DAG of 2–6 operators with parallelisms and partitionings |
//! | [`workload`] | [`Workload`]: partitions, records, keys and values of each source |
//! | [`network`], [`network_for`] | [`Network`]: buffers, credits, latencies, per-operator costs |
//! | [`fault_plan`] | [`FaultPlan`]: explicit crashes, a random-crash window, delays |
//! | [`checkpoint_config`] | [`CheckpointConfig`]: the `[checkpoint]` table for one algorithm |
//! | [`scenario`] | [`GeneratedScenario`]: all of the above, as TOML and as a parsed [`Scenario`] |
//! | [`scenario_unrestricted`] | the same, including a known deadlock shape of `unaligned` and `aligned-timeout` |
//!
//! Every strategy produces plain data (the `Gen*`/part structs below);
//! [`scenario`] combines them into the typed scenario file
//! ([`crate::scenario::schema::File`], keys the strategies do not choose
//! left to their defaults) and validates it with
//! [`crate::scenario::validate::validate`]. A generated case is therefore
//! always a scenario the validator accepts, and it carries its own printable
//! reproducer: save [`GeneratedScenario::toml`] to a file and run
//! `ckptsim run repro.toml --seed N`. A validation error is a bug in these
//! strategies and panics.
//!
//! The generated jobs are small (at most 3,000 source records, and at most
//! about 30,000 records processed in all after flat-map and broadcast
//! fan-out) so that one run takes milliseconds, and every generated scenario
//! is one in which the exactly-once properties are meant to hold: sinks are
//! `sink-2pc`, periodic checkpoints are on, checkpoint timeouts are far longer
//! than any checkpoint of such a job can take, and crashes are few (at most
//! three explicit and three random ones, far below `max_restarts`).
//!
//! ```
//! use ckptsim::scenario::Algorithm;
//! use ckptsim::strategies::scenario;
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let mut runner = TestRunner::deterministic();
//! let generated = scenario(Algorithm::Aligned)
//!     .new_tree(&mut runner)
//!     .unwrap()
//!     .current();
//! assert!(generated.toml.contains("algorithm = \"aligned\""));
//! assert!(generated.scenario.operators.len() >= 2);
//! ```
//!
//! Only proptest's combinators are used: no wall clock and no hash-ordered
//! containers, so a runner seed fixes the generated values.

use crate::engine::SimDuration;
use crate::scenario::schema::{self, Duration, Edge, File, Interval, Operator};
use crate::scenario::validate::validate;
use crate::scenario::{Algorithm, KeyDistribution, Scenario, StorageKind};
use proptest::prelude::*;
use std::fmt;

mod topology;
pub use topology::{topology, GenEdge, GenKind, GenOperator, Topology};

/// Most records all sources of a generated job hold together.
pub const MAX_SOURCE_RECORDS: u64 = 3_000;
/// Most records processed by all operators together (source records
/// multiplied by flat-map copies and broadcast fan-out along the graph).
pub const MAX_PROCESSED_RECORDS: u64 = 30_000;
/// Most operators of a generated topology.
pub const MAX_OPERATORS: usize = 6;
/// Most subtasks of a generated operator.
pub const MAX_PARALLELISM: u32 = 4;

// ---------------------------------------------------------------------------
// Workload
// ---------------------------------------------------------------------------

/// The input of one source operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceWorkload {
    pub partitions: u32,
    pub records_per_partition: u64,
    pub keys: u64,
    pub key_distribution: KeyDistribution,
    pub value_max: u64,
}

impl SourceWorkload {
    pub fn records(&self) -> u64 {
        u64::from(self.partitions) * self.records_per_partition
    }
}

/// The input of every source of a topology, in the order of
/// [`Topology::sources`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    pub sources: Vec<SourceWorkload>,
}

impl Workload {
    pub fn total_records(&self) -> u64 {
        self.sources.iter().map(SourceWorkload::records).sum()
    }

    /// Records emitted per source, for [`Topology::flow`].
    pub fn source_records(&self) -> Vec<u64> {
        self.sources.iter().map(SourceWorkload::records).collect()
    }
}

/// The input of `topology`'s sources: 1–6 partitions each, 1–200 keys,
/// uniform or cyclic keys, values up to 1–100, and as many records as keep
/// the sources within [`MAX_SOURCE_RECORDS`] and the whole job within
/// [`MAX_PROCESSED_RECORDS`] (flat-maps and broadcasts multiply the work).
pub fn workload(topology: &Topology) -> impl Strategy<Value = Workload> {
    let topology = topology.clone();
    workload_draw().prop_map(move |d| d.resolve(&topology))
}

/// The draws of a workload, independent of the topology (so that shrinking
/// the topology keeps them). One per possible source.
#[derive(Clone, Debug)]
struct WorkloadDraw(Vec<SourceDraw>);

#[derive(Clone, Debug)]
struct SourceDraw {
    partitions: u32,
    /// Records, in thousandths of the source's budget.
    permille: u64,
    keys: u64,
    key_distribution: KeyDistribution,
    value_max: u64,
}

fn workload_draw() -> impl Strategy<Value = WorkloadDraw> {
    let source = (
        1u32..=6,
        1u64..=1000,
        prop_oneof![1u64..=8, 1u64..=200],
        prop_oneof![
            Just(KeyDistribution::Uniform),
            Just(KeyDistribution::Cyclic)
        ],
        1u64..=100,
    )
        .prop_map(
            |(partitions, permille, keys, key_distribution, value_max)| SourceDraw {
                partitions,
                permille,
                keys,
                key_distribution,
                value_max,
            },
        );
    prop::collection::vec(source, 2).prop_map(WorkloadDraw)
}

impl WorkloadDraw {
    fn resolve(&self, topology: &Topology) -> Workload {
        let count = topology.sources().len();
        let sources = (0..count)
            .map(|k| {
                // Each source gets an equal share of both budgets.
                let mut unit = vec![0u64; count];
                unit[k] = 1;
                let work: u64 = topology.flow(&unit).iter().sum::<u64>().max(1);
                let budget = (MAX_SOURCE_RECORDS / count as u64)
                    .min(MAX_PROCESSED_RECORDS / (count as u64 * work))
                    .max(8);
                let d = &self.0[k % self.0.len()];
                let records = (budget * d.permille / 1000).max(1);
                SourceWorkload {
                    partitions: d.partitions,
                    records_per_partition: (records / u64::from(d.partitions)).max(1),
                    keys: d.keys,
                    key_distribution: d.key_distribution,
                    value_max: d.value_max,
                }
            })
            .collect();
        Workload { sources }
    }
}

// ---------------------------------------------------------------------------
// Network and costs
// ---------------------------------------------------------------------------

/// Processing cost of one operator, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorCost {
    pub cost_us: u64,
    pub jitter_us: u64,
}

/// The `[network]` table and the per-operator costs. Durations in
/// microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    pub buffer_records: u32,
    pub buffer_credits: u32,
    pub floating_buffers: u32,
    pub output_buffers: u32,
    pub latency_min_us: u64,
    pub latency_max_us: u64,
    pub flush_timeout_us: u64,
    pub step_quantum_us: u64,
    pub input_order: crate::scenario::InputOrder,
    /// One per operator of the topology, in order.
    pub costs: Vec<OperatorCost>,
}

/// Network settings for `operators` operators: 1–32 records per buffer, 1–4
/// exclusive credits per channel and 0–8 floating buffers per gate, 1–3
/// output buffers (small values backpressure quickly), one-way
/// latencies between 10 µs and ~2.5 ms, flush timeouts of 0.1–5 ms, step
/// quanta of 0–2 ms, either input order; costs of 1–100 µs per record for sources and 1–300 µs
/// for the others, usually without jitter.
pub fn network(operators: usize) -> impl Strategy<Value = Network> {
    let cost = (1u64..=300, prop_oneof![3 => Just(0u64), 1 => 1u64..=50])
        .prop_map(|(cost_us, jitter_us)| OperatorCost { cost_us, jitter_us });
    (
        prop_oneof![1u32..=4, 1u32..=32],
        1u32..=4,
        prop_oneof![1 => Just(0u32), 2 => 0u32..=8],
        1u32..=3,
        10u64..=500,
        0u64..=2_000,
        100u64..=5_000,
        0u64..=2_000,
        prop::sample::select(crate::scenario::InputOrder::ALL.to_vec()),
        prop::collection::vec(cost, operators),
    )
        .prop_map(
            |(
                buffer_records,
                buffer_credits,
                floating_buffers,
                output_buffers,
                latency_min_us,
                spread,
                flush_timeout_us,
                step_quantum_us,
                input_order,
                costs,
            )| Network {
                buffer_records,
                buffer_credits,
                floating_buffers,
                output_buffers,
                latency_min_us,
                latency_max_us: latency_min_us + spread,
                flush_timeout_us,
                step_quantum_us,
                input_order,
                costs,
            },
        )
}

/// [`network`] for `topology`, with source costs capped at 100 µs per record.
pub fn network_for(topology: &Topology) -> impl Strategy<Value = Network> {
    let topology = topology.clone();
    network(MAX_OPERATORS).prop_map(move |n| fit_network(n, &topology))
}

/// Keeps one cost per operator of `topology`, capping source costs.
fn fit_network(mut network: Network, topology: &Topology) -> Network {
    network.costs.truncate(topology.operators.len());
    for (cost, op) in network.costs.iter_mut().zip(&topology.operators) {
        if op.kind.is_source() {
            cost.cost_us = cost.cost_us.min(100);
        }
    }
    network
}

/// A rough length of the failure-free run, in microseconds: the busiest
/// subtask's processing time (every record at its operator's cost plus half
/// its jitter), at least 20 ms. Fault plans place crashes within it.
pub fn busy_time_us(topology: &Topology, workload: &Workload, network: &Network) -> u64 {
    let flow = topology.flow(&workload.source_records());
    let mut next_source = 0;
    let busiest = topology
        .operators
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let cost = network
                .costs
                .get(i)
                .map_or(1, |c| c.cost_us + c.jitter_us / 2);
            let per_subtask = if op.kind.is_source() {
                let w = &workload.sources[next_source];
                next_source += 1;
                // Partitions are spread over the subtasks.
                u64::from(w.partitions.div_ceil(op.parallelism)) * w.records_per_partition
            } else {
                flow[i].div_ceil(u64::from(op.parallelism))
            };
            per_subtask * cost
        })
        .max()
        .unwrap_or(0);
    busiest.max(20_000)
}

// ---------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------

/// One explicit crash: subtask `subtask` of operator `operator` (an index)
/// at `at_us` microseconds of virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenCrash {
    pub operator: usize,
    pub subtask: u32,
    pub at_us: u64,
}

/// A `[faults.random]` window. Durations in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenRandomCrashes {
    pub mean_interval_us: u64,
    pub window_start_us: u64,
    pub window_end_us: u64,
    pub max_crashes: u32,
}

/// The `[faults]` table. Durations in microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    pub detection_delay_us: u64,
    pub restart_delay_us: u64,
    /// `None`: the default (1000).
    pub max_restarts: Option<u32>,
    pub crashes: Vec<GenCrash>,
    pub random: Option<GenRandomCrashes>,
}

impl FaultPlan {
    /// Most crashes the plan can cause.
    pub fn max_crashes(&self) -> u32 {
        self.crashes.len() as u32 + self.random.map_or(0, |r| r.max_crashes)
    }
}

/// Faults for `topology`: 0–3 explicit crashes of existing subtasks at times
/// in `[0, horizon_us]` (use [`busy_time_us`] for the horizon, so crashes
/// land while the job runs), an optional random-crash window within the
/// horizon (mean interval 10 ms–1 s, at most 0–3 crashes), detection and
/// restart delays of 0–200 ms. At most six crashes in all, so `max_restarts`
/// (left at its default or drawn in 10..=1000) is never exhausted by them.
pub fn fault_plan(topology: &Topology, horizon_us: u64) -> impl Strategy<Value = FaultPlan> {
    let topology = topology.clone();
    fault_draw().prop_map(move |d| d.resolve(&topology, horizon_us))
}

/// The draws of a fault plan, independent of the topology and the horizon:
/// operators and subtasks as raw numbers, times in thousandths of the
/// horizon.
#[derive(Clone, Debug)]
struct FaultDraw {
    detection_delay_us: u64,
    restart_delay_us: u64,
    max_restarts: Option<u32>,
    /// (operator, subtask, time in permille of the horizon).
    crashes: Vec<(u8, u8, u64)>,
    /// (mean interval in µs, start and length in permille, max crashes).
    random: Option<(u64, u64, u64, u32)>,
}

fn fault_draw() -> impl Strategy<Value = FaultDraw> {
    (
        0u64..=200_000,
        0u64..=200_000,
        prop::option::of(10u32..=1000),
        prop::collection::vec((any::<u8>(), any::<u8>(), 0u64..=1000), 0..=3),
        prop::option::of((10_000u64..=1_000_000, 0u64..1000, 1u64..=1000, 0u32..=3)),
    )
        .prop_map(
            |(detection_delay_us, restart_delay_us, max_restarts, crashes, random)| FaultDraw {
                detection_delay_us,
                restart_delay_us,
                max_restarts,
                crashes,
                random,
            },
        )
}

impl FaultDraw {
    fn resolve(&self, topology: &Topology, horizon_us: u64) -> FaultPlan {
        let horizon = horizon_us.max(1_000);
        let n = topology.operators.len();
        let at = |permille: u64| horizon * permille / 1000;
        let mut crashes: Vec<GenCrash> = self
            .crashes
            .iter()
            .map(|&(op, subtask, permille)| {
                let operator = op as usize % n;
                GenCrash {
                    operator,
                    subtask: u32::from(subtask) % topology.operators[operator].parallelism,
                    at_us: at(permille),
                }
            })
            .collect();
        crashes.sort_by_key(|c| c.at_us);
        let random = self
            .random
            .map(|(mean_interval_us, start, length, max_crashes)| {
                let window_start_us = at(start);
                GenRandomCrashes {
                    mean_interval_us,
                    window_start_us,
                    window_end_us: window_start_us + at(length).max(1_000),
                    max_crashes,
                }
            });
        FaultPlan {
            detection_delay_us: self.detection_delay_us,
            restart_delay_us: self.restart_delay_us,
            max_restarts: self.max_restarts,
            crashes,
            random,
        }
    }
}

// ---------------------------------------------------------------------------
// Checkpoint configuration
// ---------------------------------------------------------------------------

/// The `[checkpoint]` table. Durations in microseconds; `None` leaves a key
/// at its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointConfig {
    pub algorithm: Algorithm,
    pub interval_us: u64,
    pub first_delay_us: Option<u64>,
    pub min_pause_us: u64,
    pub timeout_us: u64,
    pub max_concurrent: u32,
    pub alignment_timeout_us: u64,
    pub tolerable_failures: u32,
    pub retained: u32,
    pub storage: StorageKind,
    pub storage_latency_us: Option<u64>,
    pub storage_bytes_per_sec: Option<u64>,
    pub rpc_latency_us: u64,
    /// Not drawn: the newest unless a search sets it (`ckptsim stalls
    /// --flink-version`).
    pub flink_version: crate::scenario::FlinkVersion,
}

/// Checkpoint settings for `algorithm`: interval 20–200 ms (first trigger at
/// the interval or drawn in 0–200 ms), min pause 0–100 ms, timeout 5–30 s
/// (far longer than any checkpoint of a generated job, so checkpoints do not
/// expire over and over), 0–3 tolerable failures, 1–3 retained, memory or
/// filesystem storage (latency 0–20 ms, 1 MB/s–1 GB/s, or the defaults),
/// RPC latency 50 µs–5 ms, alignment timeout 0–200 ms. `max_concurrent` is 1
/// for the algorithms that refuse more (`Algorithm::max_concurrent`), 1–2
/// otherwise.
pub fn checkpoint_config(algorithm: Algorithm) -> impl Strategy<Value = CheckpointConfig> {
    let max_concurrent = algorithm.max_concurrent().unwrap_or(2).min(2);
    let storage = prop_oneof![Just(StorageKind::Memory), Just(StorageKind::Filesystem)];
    (
        (
            20_000u64..=200_000,
            prop::option::of(0u64..=200_000),
            prop_oneof![Just(0u64), 0u64..=100_000],
            5_000_000u64..=30_000_000,
            1..=max_concurrent,
            0u64..=200_000,
        ),
        (
            0u32..=3,
            1u32..=3,
            storage,
            prop::option::of(0u64..=20_000),
            prop::option::of(1_000_000u64..=1_000_000_000),
            50u64..=5_000,
        ),
    )
        .prop_map(
            move |(
                (interval_us, first_delay_us, min_pause_us, timeout_us, max_concurrent, alignment),
                (tolerable_failures, retained, storage, latency, bandwidth, rpc_latency_us),
            )| CheckpointConfig {
                algorithm,
                interval_us,
                first_delay_us,
                min_pause_us,
                timeout_us,
                max_concurrent,
                alignment_timeout_us: alignment,
                tolerable_failures,
                retained,
                storage,
                storage_latency_us: latency,
                storage_bytes_per_sec: bandwidth,
                rpc_latency_us,
                flink_version: Default::default(),
            },
        )
}

// ---------------------------------------------------------------------------
// Whole scenarios
// ---------------------------------------------------------------------------

/// Every generated part of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioParts {
    /// `operator_chaining`: forward edges of equal parallelism chain.
    pub operator_chaining: bool,
    /// Every 2PC sink becomes a Sink V2 writer with a committer of its own
    /// behind a forward edge.
    pub sink_v2: bool,
    /// Every 2PC sink that reads only `hash` edges from keyed counts or
    /// sums becomes an upsert sink (before `sink_v2` applies).
    pub upsert: bool,
    /// Every source becomes a FLIP-27 source: a split enumerator knowing
    /// half its splits at the start and discovering one more every 5 ms;
    /// 3 % of the operator events are lost.
    pub split_sources: bool,
    /// Every edge out of a source passes through a `buffer` with split
    /// list state (capacity 3).
    pub list_state: bool,
    pub topology: Topology,
    pub workload: Workload,
    pub network: Network,
    pub checkpoint: CheckpointConfig,
    pub faults: FaultPlan,
}

/// Every `sink-2pc` of `file` that reads only `hash` edges from
/// `keyed-count` or `keyed-sum` operators becomes a `sink-upsert`.
fn upsert(file: &mut File) {
    use schema::Kind;
    let kind_of = |file: &File, id: &Option<String>| {
        file.operators
            .iter()
            .find(|o| &o.id == id)
            .and_then(|o| o.kind)
    };
    let eligible: Vec<Option<String>> = file
        .operators
        .iter()
        .filter(|o| o.kind == Some(Kind::Sink2pc))
        .filter(|o| {
            let mut inputs = file.edges.iter().filter(|e| e.to == o.id).peekable();
            inputs.peek().is_some()
                && inputs.all(|e| {
                    e.partitioning == Some(crate::scenario::Partitioning::Hash)
                        && matches!(
                            kind_of(file, &e.from),
                            Some(Kind::KeyedCount | Kind::KeyedSum)
                        )
                })
        })
        .map(|o| o.id.clone())
        .collect();
    for o in file
        .operators
        .iter_mut()
        .filter(|o| eligible.contains(&o.id))
    {
        o.kind = Some(Kind::SinkUpsert);
    }
}

/// Every `sink-2pc` of `file` becomes a `sink-writer`, with a
/// `sink-committer` of the same parallelism behind a forward edge, added
/// after the other operators (so no index moves).
fn sink_v2(file: &mut File) {
    let writers: Vec<(String, Option<i64>)> = file
        .operators
        .iter_mut()
        .filter(|o| o.kind == Some(schema::Kind::Sink2pc))
        .map(|o| {
            o.kind = Some(schema::Kind::SinkWriter);
            (o.id.clone().unwrap_or_default(), o.parallelism)
        })
        .collect();
    for (id, parallelism) in writers {
        let committer = format!("{id}-commit");
        file.operators.push(schema::Operator {
            id: Some(committer.clone()),
            kind: Some(schema::Kind::SinkCommitter),
            parallelism,
            ..schema::Operator::default()
        });
        file.edges.push(Edge {
            from: Some(id),
            to: Some(committer),
            partitioning: Some(crate::scenario::Partitioning::Forward),
            ..Edge::default()
        });
    }
}

/// Every source of `file` becomes a FLIP-27 source with a split
/// enumerator (half its splits known at the start, one more every 5 ms),
/// and 3 % of the operator events are lost.
fn split_sources(file: &mut File) {
    for o in file
        .operators
        .iter_mut()
        .filter(|o| o.kind == Some(schema::Kind::Source))
    {
        let partitions = o.partitions.or(o.parallelism).unwrap_or(1);
        o.split_assignment = Some(crate::scenario::SplitAssignment::Enumerator);
        o.initial_splits = Some((partitions + 1) / 2);
        o.discovery_interval = Some(Duration(SimDuration::from_millis(5)));
    }
    file.faults.operator_events = Some(schema::OperatorEvents { loss_percent: 3 });
}

/// Every edge out of a source of `file` passes through a `buffer` of the
/// source's parallelism with split list state: the source feeds it over a
/// rebalance edge, and it feeds the edge's target as the source did. The
/// buffers are added after the other operators (so no index moves).
fn list_state(file: &mut File) {
    let sources: Vec<(Option<String>, Option<i64>)> = file
        .operators
        .iter()
        .filter(|o| o.kind == Some(schema::Kind::Source))
        .map(|o| (o.id.clone(), o.parallelism))
        .collect();
    let (mut buffers, mut outs) = (Vec::new(), Vec::new());
    for (i, e) in file.edges.iter_mut().enumerate() {
        let Some((_, parallelism)) = sources.iter().find(|(id, _)| *id == e.from) else {
            continue;
        };
        let id = format!("{}-buffer-{i}", e.from.clone().unwrap_or_default());
        buffers.push(Operator {
            id: Some(id.clone()),
            kind: Some(schema::Kind::Buffer),
            parallelism: *parallelism,
            capacity: Some(3),
            redistribution: Some(crate::scenario::Redistribution::Split),
            ..Operator::default()
        });
        outs.push(Edge {
            from: Some(id.clone()),
            ..e.clone()
        });
        e.to = Some(id);
        // Not forward: a forward edge is forced to align, and that would
        // add the shape on which unaligned checkpoints can freeze.
        e.partitioning = Some(crate::scenario::Partitioning::Rebalance);
    }
    file.operators.extend(buffers);
    file.edges.extend(outs);
}

/// Most virtual time a generated run may take.
pub const MAX_TIME: SimDuration = SimDuration::from_secs(120);
/// Most events a generated run may process.
pub const MAX_EVENTS: u64 = 5_000_000;

impl ScenarioParts {
    /// The scenario in its file form: the keys drawn here, every other key
    /// at its default.
    pub fn to_file(&self) -> File {
        let mut file = self.file();
        if self.upsert {
            upsert(&mut file);
        }
        if self.sink_v2 {
            sink_v2(&mut file);
        }
        if self.split_sources {
            split_sources(&mut file);
        }
        if self.list_state {
            list_state(&mut file);
        }
        file
    }

    fn file(&self) -> File {
        let us = |n: u64| Duration(SimDuration::from_micros(n));
        let t = &self.topology;
        let (n, c) = (&self.network, &self.checkpoint);
        File {
            version: Some(crate::scenario::FORMAT_VERSION.into()),
            name: Some(format!("generated-{}", c.algorithm.name())),
            description: format!(
                "{} operators, {} edges, {} source records",
                t.operators.len(),
                t.edges.len(),
                self.workload.total_records()
            ),
            max_parallelism: t.max_parallelism.into(),
            operator_chaining: self.operator_chaining,
            network: schema::Network {
                buffer_records: Some(n.buffer_records.into()),
                buffer_size: None,
                buffer_credits: n.buffer_credits.into(),
                floating_buffers: n.floating_buffers.into(),
                output_buffers: n.output_buffers.into(),
                latency_min: us(n.latency_min_us),
                latency_max: us(n.latency_max_us),
                flush_timeout: us(n.flush_timeout_us),
                step_quantum: us(n.step_quantum_us),
                input_order: n.input_order,
            },
            operators: self.operators_file(),
            edges: t
                .edges
                .iter()
                .map(|e| Edge {
                    from: Some(t.operators[e.from].id.clone()),
                    to: Some(t.operators[e.to].id.clone()),
                    partitioning: Some(e.partitioning),
                    ..Edge::default()
                })
                .collect(),
            checkpoint: self.checkpoint_file(),
            faults: self.faults_file(),
            limits: schema::Limits {
                max_events: i64::try_from(MAX_EVENTS).unwrap_or(i64::MAX),
                max_time: Duration(MAX_TIME),
                ..schema::Limits::default()
            },
            ..File::default()
        }
    }

    /// The `[[operators]]` tables: each operator's kind, parallelism and
    /// cost, with its kind's keys (a source's from the workload).
    fn operators_file(&self) -> Vec<Operator> {
        let us = |n: u64| Duration(SimDuration::from_micros(n));
        // Generated values are small: every count fits an `i64`.
        let int = |n: u64| Some(i64::try_from(n).unwrap_or(i64::MAX));
        let (t, n) = (&self.topology, &self.network);
        let mut sources = self.workload.sources.iter();
        let operators = t.operators.iter().enumerate().map(|(i, op)| {
            let cost = n.costs.get(i).copied().unwrap_or(OperatorCost {
                cost_us: 1,
                jitter_us: 0,
            });
            let mut o = Operator {
                id: Some(op.id.clone()),
                kind: Some(op.kind.kind()),
                parallelism: Some(op.parallelism.into()),
                cost: Some(us(cost.cost_us)),
                cost_jitter: us(cost.jitter_us),
                ..Operator::default()
            };
            match op.kind {
                GenKind::Map { mul, add } => (o.mul, o.add) = (Some(mul), Some(add)),
                GenKind::Filter {
                    modulus,
                    keep_below,
                } => (o.modulus, o.keep_below) = (int(modulus), int(keep_below)),
                GenKind::FlatMap { copies } => o.copies = Some(copies.into()),
                GenKind::Source => {
                    if let Some(w) = sources.next() {
                        o.partitions = Some(w.partitions.into());
                        o.records_per_partition = int(w.records_per_partition);
                        o.keys = int(w.keys);
                        o.key_distribution = Some(w.key_distribution);
                        o.value_max = int(w.value_max);
                    }
                }
                _ => {}
            }
            o
        });
        operators.collect()
    }

    /// The `[checkpoint]` table.
    fn checkpoint_file(&self) -> schema::Checkpoint {
        let us = |n: u64| Duration(SimDuration::from_micros(n));
        let int = |n: u64| Some(i64::try_from(n).unwrap_or(i64::MAX));
        let c = &self.checkpoint;
        schema::Checkpoint {
            algorithm: c.algorithm,
            interval: Interval(Some(us(c.interval_us).0)),
            first_delay: c.first_delay_us.map(us),
            local_jitter: None,
            min_pause: us(c.min_pause_us),
            timeout: us(c.timeout_us),
            max_concurrent: c.max_concurrent.into(),
            alignment_timeout: us(c.alignment_timeout_us),
            tolerable_failures: c.tolerable_failures.into(),
            retained: c.retained.into(),
            retain_on_cancel: false,
            during_recovery: false,
            flink_version: c.flink_version,
            storage: c.storage,
            state_backend: crate::scenario::StateBackend::Hashmap,
            max_runs: 4,
            file_merging: false,
            file_merging_across_checkpoints: false,
            file_merging_max_file_size: None,
            materialization_interval: None,
            changelog_replay_cost: us(2),
            storage_sync: Duration::default(),
            storage_latency: c.storage_latency_us.map(us),
            storage_bytes_per_sec: c.storage_bytes_per_sec.and_then(int),
            max_state_size: None,
            rpc_latency: us(c.rpc_latency_us),
            max_subtasks_per_channel_state_file: 5.into(),
            rpc_latency_max: None,
        }
    }

    /// The `[faults]` table with the generated crashes.
    fn faults_file(&self) -> schema::Faults {
        let us = |n: u64| Duration(SimDuration::from_micros(n));
        let (t, f) = (&self.topology, &self.faults);
        let crashes = f.crashes.iter().map(|crash| schema::Crash {
            at: Some(us(crash.at_us)),
            task: Some(format!(
                "{}[{}]",
                t.operators[crash.operator].id, crash.subtask
            )),
            ..schema::Crash::default()
        });
        let defaults = schema::Faults::default();
        schema::Faults {
            detection_delay: us(f.detection_delay_us),
            restart_delay: us(f.restart_delay_us),
            max_restarts: f.max_restarts.map_or(defaults.max_restarts, i64::from),
            crashes: crashes.collect(),
            random: f.random.map(|r| schema::Random {
                mean_interval: Some(us(r.mean_interval_us)),
                window_start: us(r.window_start_us),
                window_end: Some(us(r.window_end_us)),
                max_crashes: r.max_crashes.into(),
                ..schema::Random::default()
            }),
            ..defaults
        }
    }

    /// The scenario file for these parts, every key it sets written.
    ///
    /// (Sink V2: see [`ScenarioParts::sink_v2`].)
    pub fn to_toml(&self) -> String {
        let text = toml::to_string(&self.to_file()).unwrap_or_else(|e| format!("# {e}\n"));
        format!("# Generated by ckptsim::strategies (proptest).\n{text}")
    }

    /// Builds and validates the scenario. Panics if the validator refuses
    /// it: that is a bug in these strategies.
    pub fn generate(self) -> GeneratedScenario {
        let toml = self.to_toml();
        match validate(&self.to_file(), &|_| None) {
            Ok(scenario) => GeneratedScenario {
                toml,
                scenario,
                parts: self,
            },
            Err(problems) => {
                let list: Vec<String> = problems
                    .iter()
                    .map(|p| format!("{}: {}", p.path, p.message))
                    .collect();
                panic!(
                    "strategies generated an invalid scenario:\n{}\n--- generated.toml ---\n{toml}",
                    list.join("\n")
                )
            }
        }
    }
}

/// A generated scenario: the TOML text, the validated [`Scenario`] it reads
/// as (and the parts it was built from).
///
/// Its `Debug` output is the TOML text itself, so proptest's "minimal failing
/// input" can be saved to a file and replayed with `ckptsim run`.
#[derive(Clone)]
pub struct GeneratedScenario {
    /// The scenario file, exactly as parsed.
    pub toml: String,
    pub scenario: Scenario,
    pub parts: ScenarioParts,
}

impl GeneratedScenario {
    /// The algorithm the scenario declares.
    pub fn algorithm(&self) -> Algorithm {
        self.scenario.checkpoint.algorithm
    }
}

impl fmt::Debug for GeneratedScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "GeneratedScenario <<TOML")?;
        f.write_str(&self.toml)?;
        f.write_str("TOML")
    }
}

/// A whole scenario for `algorithm`: a [`topology`], its [`workload`],
/// [`network_for`] it, a [`checkpoint_config`] for the algorithm and a
/// [`fault_plan`] within the run's [`busy_time_us`]; limits of
/// [`MAX_TIME`] and [`MAX_EVENTS`]; expected guarantee exactly-once.
///
/// For `unaligned` and `aligned-timeout` it leaves out the topologies with
/// a [`Topology::deadlock_risk`] for the algorithm: there those algorithms
/// can deadlock (a known finding, not a property violation to rediscover on
/// every run). [`scenario_unrestricted`] keeps them.
///
/// Every part is drawn independently of the topology and fitted to it
/// afterwards (no `prop_flat_map`), so a failing case shrinks operator by
/// operator while its workload, costs and faults stay put.
///
/// Half of them chain their operators (Flink's default): a forward edge
/// of equal parallelism then joins two operators into one task; half turn
/// the 2PC sinks behind keyed aggregates into upsert sinks, half their
/// (other) 2PC sinks into Sink V2 writers with committers, half their
/// sources into FLIP-27 sources that lose some operator events, and half
/// pass every source's output through a buffer with split list state.
pub fn scenario(algorithm: Algorithm) -> impl Strategy<Value = GeneratedScenario> {
    let unchained = scenario_unrestricted(algorithm).prop_filter(
        "unaligned and aligned-timeout can deadlock on this shape (a known finding)",
        move |g| !g.parts.topology.deadlock_risk(algorithm),
    );
    let flags = (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    // The uncoordinated families run neither Sink V2 nor FLIP-27
    // enumerators (`scenario::unsupported`).
    let local = algorithm.info().coordination.is_local();
    (unchained, flags).prop_map(
        move |(g, (chaining, sink_v2, upsert, split_sources, list_state))| {
            let (sink_v2, split_sources) = (sink_v2 && !local, split_sources && !local);
            match chaining || sink_v2 || upsert || split_sources || list_state {
                true => ScenarioParts {
                    operator_chaining: chaining,
                    sink_v2,
                    upsert,
                    split_sources,
                    list_state,
                    ..g.parts
                }
                .generate(),
                false => g,
            }
        },
    )
}

/// Like [`scenario`], for every topology [`topology`] draws, including the
/// shape on which `unaligned` and `aligned-timeout` can deadlock.
pub fn scenario_unrestricted(algorithm: Algorithm) -> impl Strategy<Value = GeneratedScenario> {
    (
        topology(),
        workload_draw(),
        network(MAX_OPERATORS),
        checkpoint_config(algorithm),
        fault_draw(),
    )
        .prop_map(|(topology, workload, network, checkpoint, faults)| {
            let workload = workload.resolve(&topology);
            let network = fit_network(network, &topology);
            let horizon = busy_time_us(&topology, &workload, &network);
            let faults = faults.resolve(&topology, horizon);
            ScenarioParts {
                operator_chaining: false,
                sink_v2: false,
                upsert: false,
                split_sources: false,
                list_state: false,
                topology,
                workload,
                network,
                checkpoint,
                faults,
            }
            .generate()
        })
}
