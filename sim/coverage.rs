//! The coverage catalogue: situations worth reaching ("sometimes"
//! targets, as Antithesis's sometimes-assertions or FoundationDB's code
//! probes), so that a sweep that passes also says what it exercised.
//!
//! A target is hit by a run when its reachability counter
//! ([`crate::runtime::Counters`]) is non-zero. It *applies* to a run when
//! the run's scenario (after its swarm draw) and algorithm have everything
//! it needs ([`Need`]): a crash between snapshot and notification needs
//! crashes and coordinated checkpoints, a split overtaken in a mailbox a
//! FLIP-27 source. A sweep tallies, per target, the seeds it applied to
//! and the seeds that hit it; a target that applied to some seed and was
//! hit by none is *missed* (a gap: the sweep could have reached it), one
//! that applied to none is *unreachable* in that sweep, with the needs it
//! lacked. `--require-coverage` makes a miss an error.
//!
//! The catalogue is data: `docs/coverage.md` is generated from it
//! ([`markdown`]) and a test keeps the two equal. This module never looks
//! at a run's verdict: coverage and correctness are separate questions.

use crate::protocol::{Algorithm, BarrierKind, Coordination};
use crate::scenario::{FailoverStrategy, OperatorKind, Redistribution, Scenario, SplitAssignment};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a target needs of the scenario and the algorithm to be reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// Periodic checkpoints coordinated by the job's coordinator
    /// (barriers or stop-the-world).
    Checkpoints,
    /// Barriers that flow with the data (Flink's family).
    Barriers,
    /// Aligned barriers that block the producer's side of a channel.
    BlocksUpstream,
    /// An algorithm that persists channel state (unaligned,
    /// aligned-timeout, Chandy–Lamport).
    ChannelState,
    /// `aligned-timeout`.
    AlignedTimeout,
    /// `stop-the-world`.
    StopTheWorld,
    /// The uncoordinated families.
    Local,
    /// Communication-induced checkpointing (forced checkpoints).
    Cic,
    /// An algorithm that promises at-least-once only.
    AtLeastOnce,
    /// More than one checkpoint in flight.
    Concurrent,
    /// Task crashes (planned or random, of tasks or of workers).
    Crashes,
    /// Crashes of whole workers.
    WorkerCrashes,
    /// Network partitions between workers.
    Partitions,
    /// Latency spikes.
    LatencySpikes,
    /// Slow (straggling) tasks.
    SlowTasks,
    /// Checkpoint storage that fails or is slow.
    StorageFaults,
    /// Checkpoint-complete notifications that get lost.
    NotificationLoss,
    /// Operator events that get lost.
    OperatorEventLoss,
    /// Crashes of the job's coordinator.
    CoordinatorFaults,
    /// Completed checkpoints kept in the coordinator's memory.
    MemoryStorage,
    /// Region failover.
    RegionFailover,
    /// Checkpoints while restored in-flight data is replayed.
    DuringRecovery,
    /// A FLIP-27 source (an enumerator in an operator coordinator).
    Flip27,
    /// The unaligned trigger is an urgent mail (Flink 2.1+, unaligned).
    UrgentTrigger,
    /// A two-phase-commit sink (`sink-2pc` or a Sink V2 writer).
    TwoPhaseSink,
    /// Sink V2 (writers and committers).
    SinkV2,
    /// An exactly-once sink into the transactional log (`sink-log`).
    LogSink,
    /// A source over a topic of the log (`source-log`).
    LogSource,
    /// Broker faults under a log sink.
    BrokerFaults,
    /// Faults of the transaction coordinator under a log sink.
    TxnCoordinatorFaults,
    /// A keyed operator.
    Keyed,
    /// Union list state.
    UnionState,
    /// An iteration (a feedback edge).
    Iteration,
    /// Savepoints taken by hand (`[[savepoints]]`).
    Savepoints,
    /// A source that emits watermarks (event time).
    EventTime,
    /// An operator with processing-time timers.
    ProcessingTimers,
    /// A source in a watermark alignment group.
    Alignment,
    /// An event-time window.
    Windows,
    /// An event-time window with a late-data side output.
    LateSideOutput,
    /// Snapshots written to files (`filesystem` storage, coordinated
    /// checkpoints).
    FileStorage,
    /// The incremental state backend on a keyed job.
    Incremental,
    /// The changelog state backend on a keyed job.
    Changelog,
    /// File merging (`file_merging`, with files).
    FileMerging,
}

impl Need {
    /// Every need, in declaration order.
    pub const ALL: [Need; 43] = [
        Need::Checkpoints,
        Need::Barriers,
        Need::BlocksUpstream,
        Need::ChannelState,
        Need::AlignedTimeout,
        Need::StopTheWorld,
        Need::Local,
        Need::Cic,
        Need::AtLeastOnce,
        Need::Concurrent,
        Need::Crashes,
        Need::WorkerCrashes,
        Need::Partitions,
        Need::LatencySpikes,
        Need::SlowTasks,
        Need::StorageFaults,
        Need::NotificationLoss,
        Need::OperatorEventLoss,
        Need::CoordinatorFaults,
        Need::MemoryStorage,
        Need::RegionFailover,
        Need::DuringRecovery,
        Need::Flip27,
        Need::UrgentTrigger,
        Need::TwoPhaseSink,
        Need::SinkV2,
        Need::LogSink,
        Need::LogSource,
        Need::BrokerFaults,
        Need::TxnCoordinatorFaults,
        Need::Keyed,
        Need::UnionState,
        Need::Iteration,
        Need::Savepoints,
        Need::EventTime,
        Need::ProcessingTimers,
        Need::Alignment,
        Need::Windows,
        Need::LateSideOutput,
        Need::FileStorage,
        Need::Incremental,
        Need::Changelog,
        Need::FileMerging,
    ];

    /// Its name in sweep reports and `docs/coverage.md`.
    pub fn name(self) -> &'static str {
        match self {
            Need::Checkpoints => "checkpoints",
            Need::Barriers => "barriers",
            Need::BlocksUpstream => "blocking-barriers",
            Need::ChannelState => "channel-state",
            Need::AlignedTimeout => "aligned-timeout",
            Need::StopTheWorld => "stop-the-world",
            Need::Local => "uncoordinated",
            Need::Cic => "cic",
            Need::AtLeastOnce => "at-least-once",
            Need::Concurrent => "concurrent-checkpoints",
            Need::Crashes => "crashes",
            Need::WorkerCrashes => "worker-crashes",
            Need::Partitions => "partitions",
            Need::LatencySpikes => "latency-spikes",
            Need::SlowTasks => "slow-tasks",
            Need::StorageFaults => "storage-faults",
            Need::NotificationLoss => "notification-loss",
            Need::OperatorEventLoss => "operator-event-loss",
            Need::CoordinatorFaults => "coordinator-crashes",
            Need::MemoryStorage => "memory-storage",
            Need::RegionFailover => "region-failover",
            Need::DuringRecovery => "during-recovery",
            Need::Flip27 => "flip27",
            Need::UrgentTrigger => "urgent-trigger",
            Need::TwoPhaseSink => "2pc-sink",
            Need::SinkV2 => "sink-v2",
            Need::LogSink => "log-sink",
            Need::LogSource => "log-source",
            Need::BrokerFaults => "broker-faults",
            Need::TxnCoordinatorFaults => "txn-coordinator-faults",
            Need::Keyed => "keyed",
            Need::UnionState => "union-state",
            Need::Iteration => "iteration",
            Need::Savepoints => "savepoints",
            Need::EventTime => "event-time",
            Need::ProcessingTimers => "processing-timers",
            Need::Alignment => "alignment",
            Need::Windows => "event-time-windows",
            Need::LateSideOutput => "late-side-output",
            Need::FileStorage => "file-storage",
            Need::Incremental => "incremental-backend",
            Need::Changelog => "changelog-backend",
            Need::FileMerging => "file-merging",
        }
    }

    /// What a scenario and algorithm must have for it to hold.
    pub fn what(self) -> &'static str {
        match self {
            Need::Checkpoints => "an algorithm with coordinated periodic checkpoints",
            Need::Barriers => "an algorithm whose barriers flow with the data",
            Need::BlocksUpstream => "aligned barriers that block the sender (`blocks_upstream`)",
            Need::ChannelState => "`unaligned`, `aligned-timeout` or `chandy-lamport`",
            Need::AlignedTimeout => "`aligned-timeout`",
            Need::StopTheWorld => "`stop-the-world`",
            Need::Local => "`uncoordinated`, `cic-bcs` or `cic-hmnr`",
            Need::Cic => "`cic-bcs` or `cic-hmnr`",
            Need::AtLeastOnce => "an algorithm that promises at-least-once",
            Need::Concurrent => "`max_concurrent` above 1 for the algorithm",
            Need::Crashes => "task or worker crashes (planned or random)",
            Need::WorkerCrashes => "worker crashes (`[cluster]` and planned or random)",
            Need::Partitions => "network partitions",
            Need::LatencySpikes => "latency spikes",
            Need::SlowTasks => "slow tasks",
            Need::StorageFaults => "storage faults",
            Need::NotificationLoss => "lost notifications",
            Need::OperatorEventLoss => "lost operator events",
            Need::CoordinatorFaults => "coordinator crashes",
            Need::MemoryStorage => "`storage = \"memory\"`",
            Need::RegionFailover => "`failover = \"region\"`",
            Need::DuringRecovery => "`during_recovery = true`",
            Need::Flip27 => "a source with `split_assignment = \"enumerator\"`",
            Need::UrgentTrigger => "`unaligned` with `flink_version` 2.1 or later",
            Need::TwoPhaseSink => "a `sink-2pc` or `sink-writer`",
            Need::SinkV2 => "a `sink-writer` and `sink-committer`",
            Need::LogSink => "an exactly-once `sink-log`",
            Need::LogSource => "a `source-log`",
            Need::BrokerFaults => "`[[faults.broker]]` and a `sink-log`",
            Need::TxnCoordinatorFaults => {
                "`[[faults.broker]]` with `role = \"coordinator\"` and a `sink-log`"
            }
            Need::Keyed => "a keyed operator",
            Need::UnionState => "a `buffer` with `redistribution = \"union\"`",
            Need::Iteration => "a feedback edge",
            Need::Savepoints => "`[[savepoints]]`",
            Need::EventTime => "a source with `watermark_interval`",
            Need::ProcessingTimers => "a `keyed-process` with `processing_delay`",
            Need::Alignment => "a source with `watermark_interval` and `alignment_group`",
            Need::Windows => "an `event-time-window`",
            Need::LateSideOutput => "an edge with `side_output = \"late\"`",
            Need::FileStorage => "`filesystem` storage and coordinated checkpoints",
            Need::Incremental => "`state_backend = \"incremental\"` and a keyed operator",
            Need::Changelog => "`state_backend = \"changelog\"` and a keyed operator",
            Need::FileMerging => "`file_merging = true` with `filesystem` storage",
        }
    }

    /// Whether the scenario (as drawn) and the algorithm have it.
    pub fn holds(self, s: &Scenario, a: Algorithm) -> bool {
        let info = a.info();
        let f = &s.faults;
        let kinds = || s.operators.iter().map(|o| &o.kind);
        let random = |r: &Option<crate::scenario::RandomCrashes>| {
            r.as_ref().is_some_and(|r| r.max_crashes > 0)
        };
        let workers = !f.worker_crashes.is_empty() || random(&f.random_workers);
        match self {
            Need::Checkpoints => info.checkpoints && !info.coordination.is_local(),
            Need::Barriers => info.checkpoints && info.coordination == Coordination::Barriers,
            Need::BlocksUpstream => info.checkpoints && info.blocks_upstream,
            Need::ChannelState => {
                [
                    Algorithm::Unaligned,
                    Algorithm::AlignedTimeout,
                    Algorithm::ChandyLamport,
                ]
                .contains(&a)
            }
            Need::AlignedTimeout => info.first_barrier == BarrierKind::Timeoutable,
            Need::StopTheWorld => info.coordination == Coordination::StopTheWorld,
            Need::Local => info.coordination.is_local(),
            Need::Cic => [Algorithm::CicBcs, Algorithm::CicHmnr].contains(&a),
            Need::AtLeastOnce => a.promise() == crate::scenario::Guarantee::AtLeastOnce,
            Need::Concurrent => s.max_concurrent(a) > 1,
            Need::Crashes => !f.crashes.is_empty() || random(&f.random) || workers,
            Need::WorkerCrashes => workers,
            Need::Partitions => !f.partitions.is_empty(),
            Need::LatencySpikes => !f.latency_spikes.is_empty(),
            Need::SlowTasks => !f.slow_tasks.is_empty(),
            Need::StorageFaults => f.storage.is_some() || !f.storage_failures.is_empty(),
            Need::NotificationLoss => {
                f.notifications.as_ref().is_some_and(|n| n.loss_percent > 0)
                    || !f.lost_notifications.is_empty()
            }
            Need::OperatorEventLoss => f
                .operator_events
                .as_ref()
                .is_some_and(|e| e.loss_percent > 0),
            Need::CoordinatorFaults => f.coordinator.as_ref().is_some_and(|c| {
                !c.crashes.is_empty() || random(&c.random) || !c.crash_on.is_empty()
            }),
            Need::MemoryStorage => s.checkpoint.storage == crate::scenario::StorageKind::Memory,
            Need::RegionFailover => f.failover == FailoverStrategy::Region,
            Need::DuringRecovery => s.checkpoint.during_recovery,
            Need::Flip27 => kinds().any(|k| {
                matches!(k, OperatorKind::Source(src) if src.split_assignment == SplitAssignment::Enumerator)
            }),
            Need::UrgentTrigger => {
                a == Algorithm::Unaligned && s.checkpoint.flink_version.urgent_unaligned_trigger()
            }
            Need::TwoPhaseSink => {
                kinds().any(|k| matches!(k, OperatorKind::Sink2pc | OperatorKind::SinkWriter))
            }
            Need::SinkV2 => kinds().any(OperatorKind::is_committer),
            Need::LogSink => s.has_exactly_once_log_sink(),
            Need::LogSource => s.has_log_source(),
            Need::BrokerFaults => has_broker_faults(s, None),
            Need::TxnCoordinatorFaults => {
                has_broker_faults(s, Some(crate::scenario::BrokerRole::Coordinator))
            }
            Need::Keyed => kinds().any(OperatorKind::is_keyed),
            Need::UnionState => has_union_state(s),
            Need::Iteration => s.edges.iter().any(|e| e.feedback),
            Need::Savepoints => !s.savepoints.is_empty(),
            Need::EventTime => kinds().any(|k| {
                k.source_spec()
                    .is_some_and(|src| src.watermark_interval > crate::engine::SimDuration::ZERO)
            }),
            Need::ProcessingTimers => kinds().any(|k| {
                matches!(k, OperatorKind::KeyedProcess { processing_delay, .. }
                    if *processing_delay > crate::engine::SimDuration::ZERO)
            }),
            Need::Alignment => kinds().any(|k| {
                k.source_spec().is_some_and(|src| {
                    !src.alignment_group.is_empty()
                        && src.watermark_interval > crate::engine::SimDuration::ZERO
                })
            }),
            Need::Windows => kinds().any(|k| matches!(k, OperatorKind::EventTimeWindow { .. })),
            Need::LateSideOutput => s.edges.iter().any(|e| e.side_output_late),
            Need::FileStorage => {
                s.checkpoint.storage == crate::scenario::StorageKind::Filesystem
                    && !info.coordination.is_local()
            }
            Need::Incremental => {
                s.checkpoint.state_backend == crate::scenario::StateBackend::Incremental
                    && kinds().any(OperatorKind::is_keyed)
            }
            Need::Changelog => {
                s.checkpoint.state_backend == crate::scenario::StateBackend::Changelog
                    && kinds().any(OperatorKind::is_keyed)
            }
            Need::FileMerging => s.checkpoint.file_merging && Need::FileStorage.holds(s, a),
        }
    }
}

/// Whether a `sink-log` writes and `[[faults.broker]]` has a window (of
/// `role`, if given).
fn has_broker_faults(s: &Scenario, role: Option<crate::scenario::BrokerRole>) -> bool {
    let writes = (s.operators.iter()).any(|o| matches!(o.kind, OperatorKind::SinkLog { .. }));
    writes && (s.faults.broker.iter()).any(|w| role.is_none_or(|r| w.role == r))
}

/// Some operator keeps union list state (a `buffer` with `redistribution
/// = "union"`).
fn has_union_state(s: &Scenario) -> bool {
    s.operators.iter().any(|o| {
        matches!(
            o.kind,
            OperatorKind::Buffer {
                redistribution: Redistribution::Union,
                ..
            }
        )
    })
}

/// A situation worth reaching.
#[derive(Debug)]
pub struct Target {
    /// Its name (kebab-case, unique).
    pub name: &'static str,
    /// The mechanism it exercises (a section of `docs/coverage.md`).
    pub mechanism: &'static str,
    /// What happened when it is hit.
    pub what: &'static str,
    /// The reachability counter that counts it.
    pub counter: &'static str,
    /// What it needs to be reachable at all.
    pub needs: &'static [Need],
}

impl Target {
    /// Whether the scenario and algorithm have everything it needs.
    pub fn applies(&self, s: &Scenario, a: Algorithm) -> bool {
        self.needs.iter().all(|n| n.holds(s, a))
    }
}

macro_rules! targets {
    ($( $mechanism:literal { $( $name:literal, $counter:literal, [$($need:ident),*], $what:literal; )* } )*) => {
        /// Every target, by mechanism.
        pub static CATALOGUE: &[Target] = &[
            $( $( Target {
                name: $name,
                mechanism: $mechanism,
                what: $what,
                counter: $counter,
                needs: &[$(Need::$need),*],
            }, )* )*
        ];
    };
}

targets! {
    "checkpoints" {
        "checkpoint-completed", "checkpoints_completed", [Checkpoints],
            "a checkpoint completed";
        "checkpoint-aborted", "checkpoints_aborted", [Checkpoints],
            "a checkpoint was aborted";
        "checkpoint-expired", "checkpoints_expired", [Checkpoints],
            "a checkpoint expired (its timeout passed before every acknowledgement)";
        "checkpoint-declined", "checkpoints_declined", [Checkpoints],
            "a task declined a checkpoint";
        "trigger-queued", "triggers_queued", [Checkpoints],
            "a periodic trigger waited because a checkpoint or savepoint was pending";
        "checkpoints-concurrent", "checkpoints_concurrent", [Checkpoints, Concurrent],
            "a checkpoint was triggered while another was still pending";
        "checkpoint-after-recovery", "checkpoints_after_last_recovery", [Checkpoints, Crashes],
            "a checkpoint completed after the last recovery";
        "checkpoint-in-quiet-phase", "checkpoints_in_quiet_phase", [Checkpoints],
            "a checkpoint completed after the fault phase ended";
        "cancel-marker", "cancel_markers_sent", [Barriers],
            "a task closed an aborted checkpoint with a cancellation marker";
        "aborted-barrier-skipped", "aborted_checkpoints_skipped", [Barriers],
            "a barrier of a checkpoint the task knew was aborted arrived (no snapshot taken)";
        "ack-cancelled-by-abort", "acks_cancelled_by_abort", [Checkpoints],
            "an abort notification cancelled a task's pending acknowledgement";
    }
    "alignment and flow control" {
        "alignment", "alignments", [Barriers],
            "a task aligned its inputs on a barrier";
        "upstream-blocked", "upstream_blocks", [BlocksUpstream],
            "a barrier blocked the sender's side of its channel";
        "resume-consumption", "resumes", [BlocksUpstream],
            "a resumeConsumption reached a blocked sender";
        "backpressure", "backpressure_stalls", [],
            "a sender stalled for want of credit";
        "crash-during-alignment", "crashes_during_alignment", [Barriers, Crashes],
            "a task crashed while some task was aligning";
    }
    "unaligned checkpoints and channel state" {
        "unaligned-checkpoint", "unaligned_checkpoints", [ChannelState],
            "a completed checkpoint persisted in-flight records";
        "in-flight-persisted", "in_flight_records_persisted", [ChannelState],
            "in-flight records were persisted as channel state";
        "switched-to-unaligned", "switched_to_unaligned", [AlignedTimeout],
            "an alignment timed out into an unaligned checkpoint";
        "output-barrier-prioritized", "output_barriers_prioritized", [AlignedTimeout],
            "a timeoutable barrier overtook the records queued in an output";
        "exit-waited-for-ack", "exits_waiting_for_ack", [AlignedTimeout],
            "a task whose input had ended waited to exit until its held barrier's snapshot was acknowledged";
        "crash-during-capture", "crashes_during_unaligned_capture", [ChannelState, Crashes],
            "a task crashed while channel state was being captured";
        "restore-with-channel-state", "recoveries_with_channel_state", [ChannelState, Crashes],
            "a recovery restored a checkpoint with channel state";
        "in-flight-replayed", "in_flight_records_replayed", [ChannelState, Crashes],
            "restored in-flight records were processed again";
        "checkpoint-during-recovery", "checkpoints_during_recovery", [ChannelState, Crashes, DuringRecovery],
            "a checkpoint was triggered while restored in-flight data was replayed";
        "recovered-records-persisted", "recovered_records_persisted", [ChannelState, Crashes, DuringRecovery],
            "restored records not read yet were persisted again as channel state";
        "abort-during-newer-capture", "aborts_during_newer_capture", [ChannelState],
            "an abort reached a channel whose state was captured for a newer checkpoint";
    }
    "failure and recovery" {
        "crash", "crashes", [Crashes],
            "a task crashed";
        "crash-between-snapshot-and-notify", "crashes_between_snapshot_and_notify", [Checkpoints, Crashes],
            "a task crashed after a snapshot and before its completion notification (between pre-commit and commit)";
        "crash-after-final-checkpoint", "crashes_after_final_checkpoint", [Checkpoints, Crashes],
            "a task crashed after the final checkpoint completed, while tasks were finishing";
        "restore-from-checkpoint", "recoveries_from_checkpoint", [Checkpoints, Crashes],
            "a failover restored a completed checkpoint";
        "restore-from-scratch", "recoveries_from_scratch", [Crashes],
            "a failover restarted from the beginning (no checkpoint yet)";
        "region-failover", "region_failovers", [RegionFailover, Crashes],
            "a failover restarted one region only";
        "restart-gave-up", "restart_strategy_gave_up", [Crashes],
            "the restart strategy gave up and the job failed";
        "crash-while-straggling", "crashes_during_straggling", [SlowTasks, Crashes],
            "a task crashed while a straggler was slowed down";
        "crash-with-lost-notification", "crashes_with_lost_notification", [NotificationLoss, Crashes],
            "a task crashed while a lost notification was not caught up yet";
        "duplicates-after-restore", "cut_duplicates", [AtLeastOnce, Crashes],
            "a restore left a receiver ahead of its sender (duplicates, at-least-once)";
    }
    "two-phase commit" {
        "transaction-aborted-at-restore", "transactions_aborted_at_restore", [TwoPhaseSink, Crashes],
            "a restarted sink aborted a transaction its failed attempt left open";
        "commit-checked", "commits_checked", [TwoPhaseSink, Checkpoints],
            "a transaction's commit fell due (notification, restore) and was checked";
        "recovery-commit", "recovery_commits", [TwoPhaseSink, Crashes],
            "a restore committed transactions its checkpoint had pre-committed";
    }
    "sink v2" {
        "committables-through-network", "committables_through_network", [SinkV2],
            "a committer read committables from the network (writer and committer not chained)";
    }
    "notifications" {
        "notification-lost", "notifications_lost", [NotificationLoss],
            "a checkpoint-complete notification was lost";
        "notification-lost-during-alignment", "notifications_lost_during_alignment", [NotificationLoss],
            "a notification was lost while some task was aligning";
        "lost-notification-caught-up", "lost_notifications_caught_up", [NotificationLoss],
            "a task committed a lost notification's checkpoint through a later notification";
        "caught-up-by-abort", "lost_notifications_caught_up_by_abort", [NotificationLoss],
            "a task caught up with a lost notification through an abort notification";
    }
    "checkpoint storage" {
        "storage-write-failed", "storage_write_failures", [StorageFaults],
            "a checkpoint storage write failed";
        "storage-failure-during-alignment", "storage_failures_during_alignment", [StorageFaults],
            "a storage write failed while some task was aligning";
        "storage-write-slow", "storage_writes_slow", [StorageFaults],
            "a checkpoint storage write was slow";
        "checkpoint-storage-failed", "checkpoints_storage_failed", [StorageFaults],
            "a checkpoint was aborted because a storage write failed";
    }
    "the coordinator" {
        "coordinator-crash", "coordinator_crashes", [CoordinatorFaults],
            "the job's coordinator crashed";
        "coordinator-failover", "coordinator_failovers", [CoordinatorFaults],
            "a new coordinator took over";
        "coordinator-crash-between-snapshot-and-notify", "coordinator_crashes_between_snapshot_and_notify", [CoordinatorFaults, Checkpoints],
            "the coordinator crashed after a checkpoint's snapshots and before its notifications";
        "coordinator-restore-from-checkpoint", "coordinator_recoveries_from_checkpoint", [CoordinatorFaults, Checkpoints],
            "a new coordinator restored from a completed checkpoint";
        "checkpoints-lost-with-coordinator", "checkpoints_lost_with_coordinator", [CoordinatorFaults, MemoryStorage, Checkpoints],
            "completed checkpoints kept in memory were lost with the coordinator";
    }
    "workers and the network" {
        "worker-crash", "worker_crashes", [WorkerCrashes],
            "a worker crashed with every subtask on it";
        "restart-waiting-for-worker", "restarts_waiting_for_worker", [WorkerCrashes],
            "a restart waited for a replacement worker";
        "partition", "partitions", [Partitions],
            "a network partition began";
        "message-held-by-partition", "messages_held", [Partitions],
            "a partition held back a message";
        "latency-spike", "messages_delayed", [LatencySpikes],
            "a latency spike delayed a message";
        "straggler", "slow_task_steps", [SlowTasks],
            "a task took steps while it was a straggler";
    }
    "operator coordinators and FLIP-27" {
        "operator-event", "operator_events_sent", [Flip27],
            "a coordinator sent an operator event";
        "trigger-waits-for-events", "triggers_waiting_for_events", [Flip27, Checkpoints],
            "a checkpoint trigger waited for operator events' acknowledgements";
        "expired-waiting-for-events", "checkpoints_expired_waiting_for_events", [Flip27, Checkpoints],
            "a checkpoint expired while its trigger waited for operator events' acknowledgements";
        "flip27-concurrent-checkpoints", "enumerator_checkpoints_concurrent", [Flip27, Checkpoints, Concurrent],
            "an enumerator's checkpoint was taken while an earlier one was still pending";
        "operator-event-lost", "operator_events_lost", [OperatorEventLoss],
            "an operator event was lost";
        "operator-event-held", "operator_events_undeliverable", [Flip27, Crashes],
            "an operator event was held back by a closed gateway (its task was down)";
        "reader-busy-with-new-split", "splits_waiting_in_mailbox", [Flip27],
            "a split assignment waited in a busy reader's mailbox";
    }
    "the task mailbox" {
        "mail-waited", "mails_waited", [],
            "a mail reached a task whose thread was busy, and waited";
        "mail-overtaken", "mails_overtaken", [UrgentTrigger],
            "an urgent trigger overtook mails in a task's mailbox";
    }
    "event time" {
        "watermark-restored", "watermarks_restored", [EventTime, ChannelState, Crashes],
            "a restore put watermarks back among a channel's in-flight records";
        "clock-restored", "clocks_restored", [EventTime, Checkpoints, Crashes],
            "a restore gave an operator back an event-time clock past Long.MIN_VALUE";
        "split-idled", "splits_idled", [EventTime],
            "a source's idleness timer marked a split idle";
        "status-restored", "statuses_restored", [EventTime, ChannelState, Crashes],
            "a restore put a watermark status back among a channel's in-flight records";
        "timer-restored", "timers_restored", [EventTime, Checkpoints, Crashes],
            "a restore gave a keyed operator back its timers";
        "processing-timer-fired", "processing_time_calls", [EventTime, ProcessingTimers],
            "a task's processing-time service called its operator (a mail)";
        "split-paused-for-alignment", "splits_paused", [EventTime, Alignment],
            "a reader paused a split whose watermark ran ahead of its alignment group";
        "split-resumed-after-alignment", "splits_resumed", [EventTime, Alignment],
            "a reader resumed a split its alignment group allowed again";
        "late-record-dropped", "late_records_dropped", [EventTime, Windows],
            "an event-time window dropped a late record (no side output)";
        "late-record-to-side-output", "late_records_side_output", [EventTime, LateSideOutput],
            "an event-time window sent a late record to its side output";
    }
    "savepoints" {
        "savepoint-completed", "savepoints_completed", [Savepoints],
            "a savepoint completed";
        "savepoint-failed", "savepoints_failed", [Savepoints],
            "a savepoint failed";
        "failure-after-stop-savepoint", "failures_after_stop_savepoint", [Savepoints],
            "a failure came after a stop-with-savepoint completed";
    }
    "checkpoint storage as files" {
        "run-reused", "runs_reused", [Incremental, Checkpoints],
            "an incremental snapshot referred to a run an earlier checkpoint wrote";
        "run-compacted", "runs_compacted", [Incremental, Checkpoints],
            "a task's snapshot wrote one compacted run instead of referring to more than max_runs";
        "shared-run-deleted", "shared_runs_deleted", [Incremental, Checkpoints],
            "the shared-state registry deleted a run no retained checkpoint used";
        "restore-from-files", "restores_from_files", [FileStorage, Crashes],
            "a restore read a checkpoint's files back";
        "trigger-held-by-restore", "triggers_skipped_restoring", [FileStorage, Crashes],
            "a periodic trigger was skipped while a task was still restoring its state from files";
        "changelog-replayed", "changes_replayed", [Changelog, Crashes],
            "a restore replayed the logged changes of a changelog's tail";
        "unsynced-file-lost", "storage_files_lost", [FileStorage, StorageFaults],
            "a storage crash lost a file not synced yet";
        "ack-refused-unknown-state", "acks_refused_unknown_state", [Incremental, Checkpoints],
            "an acknowledgement referred to a run the registry had deleted, and its checkpoint failed";
        "changelog-segment-reused", "changelog_segments_reused", [Changelog, Checkpoints],
            "a changelog snapshot referred to a segment an earlier checkpoint uploaded";
        "materialization-done", "materializations_done", [Changelog, Checkpoints],
            "a materialization completed and later snapshots built on it";
        "materialization-failed", "materializations_failed", [Changelog, StorageFaults],
            "a storage crash lost a materialization's file before its sync, and it failed";
        "materialization-skipped", "materializations_skipped", [Changelog, Checkpoints],
            "a materialization trigger skipped while the last one was not confirmed";
        "segment-merged", "segments_merged", [FileMerging, Checkpoints],
            "a snapshot's file went as a segment into a physical file that held one already";
        "physical-file-reused-across", "physical_files_reused_across", [FileMerging, Checkpoints],
            "a segment went into a physical file an earlier checkpoint opened (across-checkpoint merging)";
        "physical-file-deleted", "physical_files_deleted", [FileMerging, Checkpoints],
            "a physical file was deleted once no segment in it was in use";
        "segments-reregistered", "segments_reregistered", [FileMerging, WorkerCrashes],
            "a new file-merging manager re-registered a restored snapshot's segments";
    }
    "the transactional log" {
        "log-transaction-committed", "log_commits", [LogSink, Checkpoints],
            "a log sink committed a checkpoint's transaction";
        "log-lingering-aborted", "log_lingering_aborted", [LogSink, Crashes],
            "a restored log sink aborted a transaction an earlier attempt left open";
        "log-open-at-completion", "log_open_checked", [LogSink, Checkpoints],
            "a transaction of a log sink was open when a checkpoint completed, and was judged";
        "log-offsets-committed", "log_offsets_committed", [LogSource, Checkpoints],
            "a log source committed its offsets to its consumer group at a checkpoint's completion";
        "log-topic-closed", "log_topics_closed", [LogSource],
            "every subtask writing a topic a log source reads finished, and the readers read to its end";
        "log-request-retried", "log_requests_retried", [BrokerFaults],
            "a log sink's producer retried a request a broker fault failed or lost";
        "log-request-expired", "log_requests_expired", [BrokerFaults],
            "a log sink's request expired (its delivery timeout passed) and its error reached the writer";
        "log-flush-waited", "log_flushes_blocked", [BrokerFaults],
            "a log sink's flush blocked its task's thread until its requests in flight were answered";
        "log-coordinator-waited", "log_coordinator_waits", [TxnCoordinatorFaults],
            "a log sink's call to the transaction coordinator (InitProducerId, a commit) blocked its task's thread until the coordinator answered";
        "log-commit-retried", "log_commits_retried", [TxnCoordinatorFaults],
            "a log sink's commit gave up waiting for the coordinator (max_block) and was made again";
    }
    "other algorithms" {
        "sources-paused", "sources_paused", [StopTheWorld],
            "stop-the-world paused the sources";
        "forced-checkpoint", "local_checkpoints_forced", [Cic],
            "a communication-induced protocol forced a checkpoint";
        "local-rollback", "local_checkpoints_rolled_back", [Local, Crashes],
            "a recovery line rolled a task back past local checkpoints";
        "recovery-line", "recovery_lines", [Local, Crashes],
            "the coordinator computed a recovery line";
        "rollback-to-start", "local_rollbacks_to_start", [Local, Crashes],
            "a recovery line rolled a task back to its start (domino effect)";
    }
    "state and the job's shape" {
        "routing-checked", "records_routing_checked", [Keyed],
            "keyed records were checked against their key group's owner";
        "union-state-restored", "union_state_restores", [UnionState, Crashes],
            "a subtask restored union list state (every subtask's entries)";
        "channel-order-checked", "channel_records_ordered", [],
            "records were checked for their order within a channel";
        "loop-ended", "loops_ended", [Iteration],
            "an iteration's loop ended";
    }
}

/// The targets a run's counters hit, in catalogue order.
pub fn hits(counters: &Map<String, Value>) -> Vec<&'static str> {
    CATALOGUE
        .iter()
        .filter(|t| counters.get(t.counter).and_then(Value::as_u64).unwrap_or(0) > 0)
        .map(|t| t.name)
        .collect()
}

/// The needs a scenario and algorithm have, by name.
pub fn features(s: &Scenario, a: Algorithm) -> Vec<String> {
    Need::ALL
        .into_iter()
        .filter(|n| n.holds(s, a))
        .map(|n| n.name().to_string())
        .collect()
}

/// What one seed reached: the needs its scenario had and the targets it
/// hit (a line of `--out`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedCoverage {
    pub features: Vec<String>,
    pub hit: Vec<String>,
}

impl SeedCoverage {
    pub fn of(s: &Scenario, a: Algorithm, counters: &Map<String, Value>) -> SeedCoverage {
        SeedCoverage {
            features: features(s, a),
            hit: hits(counters).into_iter().map(str::to_string).collect(),
        }
    }

    fn applies(&self, t: &Target) -> bool {
        t.needs
            .iter()
            .all(|n| self.features.iter().any(|f| f == n.name()))
    }
}

/// One target over a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Seeds whose scenario had what the target needs.
    pub applicable: u64,
    /// Seeds that hit it.
    pub hit: u64,
}

/// A sweep's coverage: every target's tally, in catalogue order by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    pub targets: BTreeMap<String, Tally>,
}

impl Coverage {
    /// Adds one seed (seeds that did not run, such as invalid draws, have
    /// no coverage and add nothing).
    pub fn add(&mut self, seed: &SeedCoverage) {
        for t in CATALOGUE {
            let tally = self.targets.entry(t.name.to_string()).or_default();
            tally.applicable += u64::from(seed.applies(t));
            tally.hit += u64::from(seed.hit.iter().any(|h| h == t.name));
        }
    }

    /// Targets hit by at least one seed.
    pub fn reached(&self) -> usize {
        self.targets.values().filter(|t| t.hit > 0).count()
    }

    /// Targets that applied to some seed and were hit by none.
    pub fn missed(&self) -> Vec<&'static Target> {
        CATALOGUE
            .iter()
            .filter(|t| {
                self.targets
                    .get(t.name)
                    .is_some_and(|x| x.applicable > 0 && x.hit == 0)
            })
            .collect()
    }

    /// Targets that applied to no seed (and were not hit).
    pub fn unreachable(&self) -> Vec<&'static Target> {
        CATALOGUE
            .iter()
            .filter(|t| {
                self.targets
                    .get(t.name)
                    .is_none_or(|x| x.applicable == 0 && x.hit == 0)
            })
            .collect()
    }

    /// The report's lines.
    pub fn to_text(&self, w: &mut String) {
        let missed = self.missed();
        let unreachable = self.unreachable();
        let _ = writeln!(
            w,
            "coverage     {} of {} targets hit; {} missed (applicable, never hit); {} not applicable",
            self.reached(),
            CATALOGUE.len(),
            missed.len(),
            unreachable.len()
        );
        if !missed.is_empty() {
            let names: Vec<&str> = missed.iter().map(|t| t.name).collect();
            let _ = writeln!(w, "  missed: {}", names.join(", "));
        }
        let rare: Vec<String> = CATALOGUE
            .iter()
            .filter_map(|t| {
                let x = self.targets.get(t.name)?;
                (x.hit > 0 && x.hit * 100 < x.applicable)
                    .then(|| format!("{} {}/{}", t.name, x.hit, x.applicable))
            })
            .collect();
        if !rare.is_empty() {
            let _ = writeln!(
                w,
                "  rare (under 1% of applicable seeds): {}",
                rare.join(", ")
            );
        }
    }
}

/// `docs/coverage.md`, generated from the catalogue.
pub fn markdown() -> String {
    let mut w = String::new();
    let _ = writeln!(w, "# Coverage targets\n");
    let _ = writeln!(
        w,
        "Generated from `sim/coverage.rs` (`ckptsim list` prints the targets too); a test keeps this \
         file equal to it. A target is a situation worth reaching. A run **hits** it when its \
         reachability counter is non-zero; it **applies** to a run whose scenario (after the swarm \
         draw) and algorithm have every need listed. A sweep reports, per target, the seeds it \
         applied to and the seeds that hit it; a target that applied and was never hit is \
         **missed**, and `--require-coverage` makes a missed target an error (exit 1).\n"
    );
    let _ = writeln!(w, "{} targets.\n", CATALOGUE.len());
    let mut mechanism = "";
    for t in CATALOGUE {
        if t.mechanism != mechanism {
            mechanism = t.mechanism;
            let _ = writeln!(w, "\n## {mechanism}\n");
            let _ = writeln!(w, "| target | counter | needs | hit when |");
            let _ = writeln!(w, "|---|---|---|---|");
        }
        let needs: Vec<&str> = t.needs.iter().map(|n| n.name()).collect();
        let needs = if needs.is_empty() {
            "—".to_string()
        } else {
            needs.join(", ")
        };
        let _ = writeln!(
            w,
            "| `{}` | `{}` | {} | {} |",
            t.name, t.counter, needs, t.what
        );
    }
    let _ = writeln!(w, "\n## Needs\n");
    let _ = writeln!(w, "| need | holds for |");
    let _ = writeln!(w, "|---|---|");
    for n in Need::ALL {
        let _ = writeln!(w, "| `{}` | {} |", n.name(), n.what());
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Counters;

    #[test]
    fn every_target_counts_with_a_counter_that_exists() {
        for t in CATALOGUE {
            assert!(
                Counters::NAMES.contains(&t.counter),
                "target {} counts with `{}`, which is no counter",
                t.name,
                t.counter
            );
        }
    }

    #[test]
    fn target_names_are_unique_and_kebab_case() {
        let mut names: Vec<&str> = CATALOGUE.iter().map(|t| t.name).collect();
        assert!(names.iter().all(|n| n
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')));
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "a target name appears twice");
    }

    #[test]
    fn every_need_is_listed_once_and_used() {
        let mut all = Need::ALL.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), Need::ALL.len());
        for n in Need::ALL {
            assert!(
                CATALOGUE.iter().any(|t| t.needs.contains(&n)),
                "need {} is used by no target",
                n.name()
            );
        }
    }

    #[test]
    fn a_tally_separates_missed_from_unreachable() {
        let mut c = Coverage::default();
        c.add(&SeedCoverage {
            features: vec!["checkpoints".into()],
            hit: vec!["checkpoint-completed".into()],
        });
        let missed: Vec<&str> = c.missed().iter().map(|t| t.name).collect();
        assert!(missed.contains(&"checkpoint-expired"));
        assert!(!missed.contains(&"checkpoint-completed"));
        assert!(!missed.contains(&"crash"));
        assert!(c.unreachable().iter().any(|t| t.name == "crash"));
        assert_eq!(
            c.targets["checkpoint-completed"],
            Tally {
                applicable: 1,
                hit: 1
            }
        );
    }
}
