//! A valid scenario with every operator kind, partitioning and fault
//! table, where every value differs from its default: what the writer's
//! round trips and layout tests (`scenario_format`) start from.

use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::scenario::{
    Algorithm, CheckpointSpec, CrashSpec, EdgeSpec, Expect, FailoverStrategy, FaultSpec, Guarantee,
    KeyDistribution, Limits, MemoryLoss, NetworkSpec, OperatorId, OperatorKind, OperatorSpec,
    Partitioning, Placement, RandomCrashes, RestartStrategy, SavepointSpec, ScenarioData,
    SourceSpec, SplitAssignment, StorageKind,
};

fn op(id: &str, kind: OperatorKind, parallelism: u32) -> OperatorSpec {
    OperatorSpec {
        id: id.to_string(),
        kind,
        parallelism,
        cost: SimDuration::from_micros(7),
        cost_jitter: SimDuration::from_nanos(3),
        chaining: ckptsim::scenario::Chaining::Head,
    }
}

fn edge(from: u32, to: u32, partitioning: Partitioning) -> EdgeSpec {
    EdgeSpec {
        from: OperatorId(from),
        to: OperatorId(to),
        partitioning,
        chain: false,
        feedback: false,
        latency_min: None,
        latency_max: None,
        buffer_credits: None,
        buffer_size: None,
    }
}

/// A valid scenario with every operator kind and partitioning, where
/// every value differs from its default.
pub fn sample() -> ScenarioData {
    ScenarioData {
        name: "every-kind".to_string(),
        description: "all kinds, nothing default".to_string(),
        max_parallelism: 64,
        operator_chaining: false,
        operators: vec![
            op(
                "src",
                OperatorKind::Source(SourceSpec {
                    partitions: 3,
                    records_per_partition: 1234,
                    partition_records: Vec::new(),
                    records_per_second: 2500,
                    partition_rates: Vec::new(),
                    keys: 17,
                    key_distribution: KeyDistribution::Cyclic,
                    hot_key_percent: 90,
                    value_max: 9,
                    record_size: 100,
                    record_size_max: 3 << 10,
                    split_assignment: SplitAssignment::Static,
                    initial_splits: 3,
                    discovery_interval: SimDuration::from_millis(20),
                    push_splits: false,
                    event_time_step: SimDuration::from_millis(3),
                    out_of_orderness: SimDuration::from_millis(40),
                    partition_skew: SimDuration::from_millis(500),
                    watermark_interval: SimDuration::from_millis(50),
                    watermark_bound: SimDuration::from_millis(25),
                    idle_timeout: SimDuration::from_millis(300),
                    payloads: true,
                }),
                2,
            ),
            op("map", OperatorKind::Map { mul: -3, add: 42 }, 2),
            op(
                "filter",
                OperatorKind::Filter {
                    modulus: 5,
                    keep_below: 3,
                },
                3,
            ),
            op("flat_map", OperatorKind::FlatMap { copies: 4 }, 2),
            op("count", OperatorKind::KeyedCount, 4),
            op("sink-2pc", OperatorKind::Sink2pc, 4),
            op("sum", OperatorKind::KeyedSum, 3),
            op("alo", OperatorKind::SinkAtLeastOnce { batch: 4 }, 1),
            op(
                "src2",
                OperatorKind::Source(SourceSpec {
                    partitions: 1,
                    // Not written beside `partition_records`: its default.
                    records_per_partition: 1000,
                    partition_records: vec![12],
                    // Not written beside `partition_rates`: its default.
                    records_per_second: 0,
                    partition_rates: vec![400],
                    keys: 100,
                    key_distribution: KeyDistribution::Uniform,
                    hot_key_percent: 50,
                    value_max: 1,
                    record_size: 2 << 20,
                    record_size_max: 2 << 20,
                    split_assignment: SplitAssignment::Enumerator,
                    initial_splits: 0,
                    discovery_interval: SimDuration::from_millis(35),
                    push_splits: true,
                    event_time_step: SimDuration::from_millis(2),
                    out_of_orderness: SimDuration::from_millis(5),
                    partition_skew: SimDuration::from_millis(7),
                    watermark_interval: SimDuration::ZERO,
                    // Not written: `out_of_orderness`, its default.
                    watermark_bound: SimDuration::from_millis(5),
                    idle_timeout: SimDuration::ZERO,
                    payloads: true,
                }),
                1,
            ),
            op("window", OperatorKind::CountWindow { size: 5 }, 2),
            op("upsert", OperatorKind::SinkUpsert { buffer_rows: 8 }, 2),
            op("writer", OperatorKind::SinkWriter, 2),
            op("committer", OperatorKind::SinkCommitter, 2),
            op(
                "buffer",
                OperatorKind::Buffer {
                    capacity: 7,
                    redistribution: ckptsim::scenario::Redistribution::Union,
                },
                3,
            ),
            op("rules", OperatorKind::BroadcastProcess { rules: 5 }, 2),
            op(
                "loop",
                OperatorKind::MinLabel {
                    nodes: 500,
                    degree: 3,
                },
                2,
            ),
            op(
                "event-window",
                OperatorKind::EventTimeWindow {
                    window_size: SimDuration::from_millis(300),
                    window_slide: SimDuration::from_millis(100),
                    allowed_lateness: SimDuration::from_millis(20),
                },
                2,
            ),
            op(
                "process",
                OperatorKind::KeyedProcess {
                    timer_delay: SimDuration::from_millis(15),
                    processing_delay: SimDuration::from_millis(4),
                },
                2,
            ),
        ],
        edges: vec![
            edge(0, 1, Partitioning::Forward),
            EdgeSpec {
                latency_min: Some(SimDuration::from_micros(70)),
                latency_max: Some(SimDuration::from_millis(3)),
                buffer_credits: Some(5),
                buffer_size: Some(4096),
                ..edge(1, 2, Partitioning::Rebalance)
            },
            edge(2, 3, Partitioning::Broadcast),
            edge(3, 4, Partitioning::Hash),
            edge(4, 5, Partitioning::Forward),
            edge(2, 6, Partitioning::Hash),
            edge(8, 6, Partitioning::Hash),
            edge(6, 7, Partitioning::Rebalance),
            edge(8, 9, Partitioning::Hash),
            edge(9, 7, Partitioning::Rebalance),
            edge(6, 10, Partitioning::Hash),
            edge(6, 11, Partitioning::Hash),
            edge(11, 12, Partitioning::Forward),
            edge(1, 13, Partitioning::Rebalance),
            edge(13, 7, Partitioning::Rebalance),
            edge(8, 14, Partitioning::Broadcast),
            edge(1, 14, Partitioning::Rebalance),
            edge(14, 7, Partitioning::Rebalance),
            edge(1, 15, Partitioning::Hash),
            EdgeSpec {
                feedback: true,
                ..edge(15, 15, Partitioning::Hash)
            },
            edge(15, 7, Partitioning::Rebalance),
            edge(0, 16, Partitioning::Hash),
            edge(16, 7, Partitioning::Rebalance),
            edge(0, 17, Partitioning::Hash),
            edge(17, 7, Partitioning::Rebalance),
        ],
        network: NetworkSpec {
            buffer_records: 7,
            buffer_size: Some(4097),
            buffer_credits: 3,
            floating_buffers: 0,
            output_buffers: 2,
            latency_min: SimDuration::from_micros(20),
            latency_max: SimDuration::from_micros(1_001),
            flush_timeout: SimDuration::from_micros(500),
            step_quantum: SimDuration::from_nanos(1),
            input_order: ckptsim::scenario::InputOrder::Fifo,
        },
        checkpoint: CheckpointSpec {
            algorithm: Algorithm::Aligned,
            interval: Some(SimDuration::from_millis(250)),
            first_delay: SimDuration::from_millis(30),
            local_jitter: SimDuration::from_millis(50),
            min_pause: SimDuration::from_millis(5),
            timeout: SimDuration::from_secs(7),
            max_concurrent: 3,
            alignment_timeout: SimDuration::from_millis(40),
            tolerable_failures: 2,
            retained: 4,
            retain_on_cancel: true,
            during_recovery: true,
            flink_version: ckptsim::scenario::FlinkVersion::V2_0,
            storage: StorageKind::Filesystem,
            storage_latency: SimDuration::from_millis(3),
            storage_bytes_per_sec: 123_456_789,
            max_state_size: 5 << 20, // memory storage only: the default
            rpc_latency: SimDuration::from_micros(150),
            max_subtasks_per_channel_state_file: 3,
            rpc_latency_max: SimDuration::from_micros(450),
        },
        faults: FaultSpec {
            detection_delay: SimDuration::from_millis(20),
            restart_delay: SimDuration::from_millis(30),
            max_restarts: 7,
            crashes: vec![
                CrashSpec {
                    at: SimTime(430_000_000),
                    operator: OperatorId(6),
                    subtask: 2,
                    trigger: None,
                    repeat: false,
                },
                CrashSpec {
                    at: SimTime(1),
                    operator: OperatorId(0),
                    subtask: 0,
                    trigger: None,
                    repeat: false,
                },
                CrashSpec {
                    at: SimTime(1),
                    operator: OperatorId(5),
                    subtask: 3,
                    trigger: None,
                    repeat: false,
                },
                CrashSpec {
                    at: SimTime::ZERO,
                    operator: OperatorId(4),
                    subtask: 1,
                    trigger: Some(ckptsim::scenario::CrashTrigger {
                        on: ckptsim::scenario::TriggerEvent::Snapshot,
                        checkpoint: Some(3),
                        of: Some((OperatorId(0), 1)),
                        delay: SimDuration::from_micros(250),
                    }),
                    repeat: false,
                },
                CrashSpec {
                    at: SimTime::ZERO,
                    operator: OperatorId(0),
                    subtask: 0,
                    trigger: Some(ckptsim::scenario::CrashTrigger {
                        on: ckptsim::scenario::TriggerEvent::Restart,
                        checkpoint: None,
                        of: None,
                        delay: SimDuration::ZERO,
                    }),
                    repeat: true,
                },
            ],
            random: Some(RandomCrashes {
                mean_interval: SimDuration::from_millis(1_500),
                window_start: SimTime(100_000_000),
                window_end: SimTime(3_000_000_007),
                max_crashes: 5,
                operators: vec![OperatorId(1), OperatorId(0)],
                workers: Vec::new(),
            }),
            restart: RestartStrategy::ExponentialDelay {
                max_backoff: SimDuration::from_secs(3),
                multiplier_permille: 1250,
                reset_threshold: SimDuration::from_secs(20),
            },
            notifications: Some(ckptsim::scenario::NotificationFaults { loss_percent: 13 }),
            operator_events: Some(ckptsim::scenario::OperatorEventFaults { loss_percent: 3 }),
            storage: Some(ckptsim::scenario::StorageFaults {
                failure_percent: 4,
                slow_percent: 9,
                slow_latency: SimDuration::from_millis(70),
            }),
            coordinator: Some(ckptsim::scenario::CoordinatorFaults {
                failover_delay: SimDuration::from_millis(333),
                on_memory_loss: MemoryLoss::Fail,
                crashes: vec![SimTime(1_500_000_000), SimTime(7)],
                random: Some(RandomCrashes {
                    mean_interval: SimDuration::from_millis(900),
                    window_start: SimTime(0),
                    window_end: SimTime(2_000_000_000),
                    max_crashes: 2,
                    operators: Vec::new(),
                    workers: Vec::new(),
                }),
                crash_on: vec![ckptsim::scenario::CrashTrigger {
                    on: ckptsim::scenario::TriggerEvent::Ack,
                    checkpoint: Some(2),
                    of: Some((OperatorId(0), 1)),
                    delay: SimDuration::from_micros(7),
                }],
            }),
            slow_tasks: vec![
                ckptsim::scenario::SlowTask {
                    operator: OperatorId(1),
                    subtask: 0,
                    from: SimTime(1_000_000),
                    until: SimTime(2_000_000_000),
                    factor: 25,
                    trigger: None,
                },
                ckptsim::scenario::SlowTask {
                    operator: OperatorId(1),
                    subtask: 1,
                    from: SimTime::ZERO,
                    until: SimTime(7_000_000),
                    factor: 3,
                    trigger: Some(ckptsim::scenario::CrashTrigger {
                        on: ckptsim::scenario::TriggerEvent::Alignment,
                        checkpoint: Some(2),
                        of: None,
                        delay: SimDuration::from_micros(100),
                    }),
                },
            ],
            worker_crashes: vec![
                ckptsim::scenario::WorkerCrash {
                    at: SimTime(3_000_000),
                    worker: 2,
                    trigger: None,
                },
                ckptsim::scenario::WorkerCrash {
                    at: SimTime::ZERO,
                    worker: 1,
                    trigger: Some(ckptsim::scenario::CrashTrigger {
                        on: ckptsim::scenario::TriggerEvent::Snapshot,
                        checkpoint: Some(4),
                        of: Some((OperatorId(1), 0)),
                        delay: SimDuration::from_millis(3),
                    }),
                },
            ],
            random_workers: Some(RandomCrashes {
                mean_interval: SimDuration::from_millis(700),
                window_start: SimTime(5),
                window_end: SimTime(1_000_000_000),
                max_crashes: 1,
                operators: Vec::new(),
                workers: vec![2, 0],
            }),
            latency_spikes: vec![
                ckptsim::scenario::LatencySpike {
                    from: SimTime(0),
                    until: SimTime(9_000_000),
                    extra: SimDuration::from_micros(700),
                    edge: Some((OperatorId(1), OperatorId(2))),
                    worker: Some(1),
                    trigger: None,
                },
                ckptsim::scenario::LatencySpike {
                    from: SimTime(0),
                    until: SimTime(11),
                    extra: SimDuration(1),
                    edge: None,
                    worker: None,
                    trigger: Some(ckptsim::scenario::CrashTrigger {
                        on: ckptsim::scenario::TriggerEvent::Restart,
                        checkpoint: Some(1),
                        of: None,
                        delay: SimDuration::from_millis(2),
                    }),
                },
            ],
            partitions: vec![ckptsim::scenario::Partition {
                from: SimTime(2_000_000),
                until: SimTime(50_000_000),
                workers: vec![0, 2],
                trigger: None,
            }],
            storage_failures: vec![
                ckptsim::scenario::TargetedFault {
                    checkpoint: 2,
                    of: Some((OperatorId(1), 0)),
                },
                ckptsim::scenario::TargetedFault {
                    checkpoint: 4,
                    of: None,
                },
            ],
            lost_notifications: vec![ckptsim::scenario::TargetedFault {
                checkpoint: 3,
                of: None,
            }],
            failover: FailoverStrategy::Region,
        },
        limits: Limits {
            max_events: 1_000_000,
            max_time: SimTime(90_000_000_000),
            checkpoint_gap: SimDuration::from_secs(45),
            transaction_open: SimDuration::from_secs(200),
            restart_loop: 7,
            blocked_input: SimDuration::from_secs(30),
            output_latency: SimDuration::from_secs(120),
            watermark_stall: SimDuration::from_secs(45),
        },
        expect: Expect {
            guarantee: Guarantee::AtLeastOnce,
        },
        replay: ckptsim::scenario::ReplaySpec {
            seed: 77,
            mutants: vec!["aligned-no-block".to_string()],
            choices: vec![1, 0, 2],
            crash_points: vec![(OperatorId(4), 3)],
            mail_orders: true,
        },
        swarm: None,
        savepoints: vec![
            SavepointSpec {
                at: SimTime(1_500_000_000),
                stop: false,
                drain: false,
            },
            SavepointSpec {
                at: SimTime(2_000_000_001),
                stop: true,
                drain: true,
            },
        ],
        cluster: Some(ckptsim::scenario::ClusterSpec {
            workers: 3,
            slots_per_worker: 3,
            placement: Placement::Pack,
            heartbeat_timeout: SimDuration::from_millis(77),
            replacement_delay: SimDuration::from_millis(250),
        }),
        cancel_at: Some(SimTime(9_000_000_007)),
    }
}
