//! Deliberate bugs, switched on by name (`--mutant NAME`), to prove that the
//! checkers catch what they claim to. Each is modelled on a real class of
//! checkpointing bug — where there is a known one, [`MutantInfo::modelled_on`]
//! names it. When no mutant is on, each check is one branch on a bit set
//! that is always false.
//!
//! `ckptsim mutants` sweeps every mutant on the scenarios where it applies
//! and prints the kill matrix; a mutant that survives is a finding about the
//! checkers (or about the scenarios that should reach it).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[repr(u8)]
pub enum Mutant {
    NoSourceRewind,
    SinkCommitOnBarrier,
    AlignedNoBlock,
    AlignedPriorityBarrier,
    SkipCancelMarker,
    CompleteWithMissingAck,
    UnalignedLateSnapshot,
    UnalignedDropInflight,
    CheckpointDuringRecovery,
    RestoreDropsChannelState,
    TimeoutSwitchNoCapture,
    OutputTimeoutDropsOvertaken,
    PeriodicTriggerStopsOnAbort,
    QueuedTriggerSkipsMinPause,
    ObsoleteBarrierNoResume,
    FinalNotifyDropped,
    SinkAbortsRecoveredTxns,
    SourceOffsetOffByOne,
    StorageLosesStateWrite,
    UnalignedAckAtFirstBarrier,
    PriorityOnForcedEdge,
    RestartKeepsStaleBuffers,
    AbortKeepsBlocked,
    SavepointNotifies,
    CoordinatorForgetsCheckpoints,
    SimulatorPanic,
    SinkCommitsOneBehind,
    SavepointEntersStore,
    DeclineTwice,
    TolerableFailuresOffByOne,
    SinkAckWithoutFlush,
    WindowNoFlushAtEnd,
    RecycleLosesCredit,
    BufferBoundaryDropsRecord,
    AckBeforeChannelStateWritten,
    RecoveredBuffersPersistedTwice,
    ChannelFileResultEarly,
    AbortStopsNewerCapture,
    UpsertBatchReordered,
    ChainNotifiesHeadOnly,
    CommittableAfterBarrier,
    WriterKeepsLastTransaction,
    EoiCommittableConstant,
    SplitsBackUncheckpointedOnly,
    LostOperatorEventIgnored,
    CheckpointIgnoresUnackedEvents,
    OperatorEventsNotHeld,
    NoMoreSplitsOnce,
    UnionStateKeptWhole,
    UnionStateRestoredAsSplit,
    BroadcastStateNotSnapshotted,
    KeyedSnapshotStaleGroup,
    RestartForgetsEdgeCredits,
    IdleSourceEndsInput,
    LineIgnoresOrphans,
    LogTruncatedEarly,
    CicMissedForced,
    AlignedWaitsOnFeedback,
    FeedbackNotLogged,
}

/// One registry entry.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MutantInfo {
    #[serde(skip)]
    pub mutant: Mutant,
    pub name: &'static str,
    /// The part of the system it breaks.
    pub part: &'static str,
    pub what: &'static str,
    /// The real bug (or class of bugs) it is modelled on.
    pub modelled_on: &'static str,
    /// The invariant that should catch it.
    pub caught_by: &'static str,
    /// Where it applies: (shipped scenario, algorithm name) pairs to sweep.
    #[serde(skip)]
    pub applies: &'static [(&'static str, &'static str)],
}

/// Every mutant.
pub const MUTANTS: &[MutantInfo] = &[
    MutantInfo {
        mutant: Mutant::NoSourceRewind,
        name: "no-source-rewind",
        part: "source rewind",
        what: "sources keep their pre-failure offsets on restore instead of rewinding",
        modelled_on: "sources that resume from live (broker-committed) offsets instead of checkpointed split state",
        caught_by: "exactly-once-output",
        applies: &[("alignment-crash", "aligned"), ("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SourceOffsetOffByOne,
        name: "source-offset-off-by-one",
        part: "source rewind",
        what: "a restored source resumes one record past its checkpointed offset",
        modelled_on: "off-by-one offset bookkeeping in source readers (last-read vs next-to-read offset)",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SinkCommitOnBarrier,
        name: "sink-commit-on-barrier",
        part: "2PC sink commit",
        what: "the 2PC sink commits its transaction at the barrier instead of on notify-complete",
        modelled_on: "sinks committing in snapshotState rather than notifyCheckpointComplete (TwoPhaseCommitSinkFunction contract)",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SinkAbortsRecoveredTxns,
        name: "sink-aborts-recovered-txns",
        part: "2PC sink recovery",
        what: "on restore the 2PC sink aborts the pre-committed transactions its state lists instead of committing them",
        modelled_on: "TwoPhaseCommitSinkFunction.recoverAndCommit contract violations (Kafka transactional-id reuse aborting pending transactions)",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned"), ("alignment-crash", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::AlignedNoBlock,
        name: "aligned-no-block",
        part: "producer-side blocking",
        what: "an aligned barrier is handed out without blocking its channel at the sender (a non-blocking event), so the receiver reads post-barrier records before its snapshot",
        modelled_on: "barriers sent with a buffer type that is not blocking upstream (FLINK-16404 made the producer block after an aligned barrier), i.e. alignment that processes post-barrier records before the snapshot",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::AlignedPriorityBarrier,
        name: "aligned-priority-barrier",
        part: "aligned handler",
        what: "aligned barriers overtake queued output data",
        modelled_on: "FLINK-18252: aligned barriers sent as priority events",
        caught_by: "consistent-cut",
        applies: &[("alignment-crash", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::AbortKeepsBlocked,
        name: "abort-keeps-blocked",
        part: "cancellation and abort paths",
        what: "aborting an alignment (subsumed or cancelled) does not unblock the channels it blocked",
        modelled_on: "channels left blocked after an aborted or timed-out alignment (FLINK-22638 and resumeConsumption bugs)",
        caught_by: "liveness",
        applies: &[("timeouts", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SkipCancelMarker,
        name: "skip-cancel-marker",
        part: "cancellation and abort paths",
        what: "a task that aborts (or skips an aborted) checkpoint does not broadcast its cancellation marker",
        modelled_on: "FLINK-18238: no CancelCheckpointMarker for a checkpoint aborted by the JobManager",
        caught_by: "protocol",
        applies: &[("timeouts", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::CompleteWithMissingAck,
        name: "complete-with-missing-ack",
        part: "coordinator completion",
        what: "the coordinator completes a checkpoint when all but one ack arrived",
        modelled_on: "PendingCheckpoint completion counting bugs (acks for the wrong attempt or execution)",
        caught_by: "consistent-cut",
        applies: &[("alignment-crash", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::PeriodicTriggerStopsOnAbort,
        name: "periodic-trigger-stops-on-abort",
        part: "coordinator triggering",
        what: "the periodic trigger is re-armed only on completion, so an aborted checkpoint stops checkpointing",
        modelled_on: "FLINK-13256: periodic checkpoints stop after a failover",
        caught_by: "liveness",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::QueuedTriggerSkipsMinPause,
        name: "queued-trigger-skips-min-pause",
        part: "coordinator request queue",
        what: "a periodic request that waited in the queue runs as soon as a slot frees, inside min_pause of the last completion",
        modelled_on: "CheckpointRequestDecider: the minimum-pause rule is one branch of choosing a queued request, easy to bypass when the queue is drained",
        caught_by: "protocol",
        applies: &[("backpressure", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::ObsoleteBarrierNoResume,
        name: "obsolete-barrier-no-resume",
        part: "producer-side blocking",
        what: "an obsolete aligned barrier is ignored without resuming the channel it blocked at the sender",
        modelled_on: "SingleCheckpointBarrierHandler: obsolete aligned barriers must still call resumeConsumption, since FLINK-16404 moved blocking to the producer",
        caught_by: "liveness",
        applies: &[("timeouts", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::RecycleLosesCredit,
        name: "recycle-loses-credit",
        part: "credit-based flow control",
        what: "an exclusive buffer the task has read returns to its channel, but its credit is never announced to the sender",
        modelled_on: "BufferManager.recycle / RemoteInputChannel.notifyBufferAvailable: every buffer a channel regains must become an AddCredit, or the sender starves one credit at a time",
        caught_by: "protocol",
        applies: &[("backpressure", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::BufferBoundaryDropsRecord,
        name: "buffer-boundary-drops-record",
        part: "byte-sized network buffers",
        what: "a record that does not fit in the rest of the open buffer ships the buffer but is not carried over to the next one",
        modelled_on: "record serializer bugs at a buffer's end: a record crossing (or ending exactly at) the boundary of a network buffer must continue in the next buffer (Flink's spanning-record serializer), not vanish",
        caught_by: "exactly-once-output",
        applies: &[("record-bytes", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::AckBeforeChannelStateWritten,
        name: "ack-before-channel-state-written",
        part: "channel-state writer",
        what: "with filesystem storage a task acknowledges once its operator state is written, while its channel-state write is still running; the coordinator completes a checkpoint whose channel state is not persisted",
        modelled_on: "the unaligned-checkpoint ack must wait for ChannelStateWriter to finish the input and output data (AsyncCheckpointRunnable waits for the channel state handles); acknowledging earlier completes a checkpoint whose in-flight data can still be lost",
        caught_by: "protocol",
        applies: &[("record-bytes", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::CheckpointDuringRecovery,
        name: "checkpoint-during-recovery",
        part: "coordinator triggering",
        what: "checkpoints are triggered while restored in-flight data is still being replayed, and their channel state leaves out the restored buffers not read yet: those records are in no snapshot",
        modelled_on: "FLINK-20654 (a checkpoint started before a recovered channel's state was consumed skipped its recovered buffers), and the in-flight data-loss race found while stabilising checkpointing during recovery (FLIP-547)",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "unaligned"), ("recovery-checkpoints", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::RecoveredBuffersPersistedTwice,
        name: "recovered-buffers-persisted-twice",
        part: "checkpointing during recovery",
        what: "a restored buffer read before its channel's barrier is persisted again, though the capture already holds it from its start",
        modelled_on: "FLINK-40016: LocalInputChannel persisted recovered buffers twice into an unaligned checkpoint's channel state (once at checkpointStarted, again through maybePersist when polled), corrupting the state",
        caught_by: "consistent-cut",
        applies: &[("recovery-checkpoints", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::ChannelFileResultEarly,
        name: "channel-file-result-early",
        part: "channel-state files",
        what: "a subtask sharing a channel-state file acknowledges once its own buffers are written, before the writer closed the file with the other subtasks' buffers; the coordinator completes a checkpoint whose channel-state file is not persisted",
        modelled_on: "FLINK-26803's merged channel-state files: a subtask's ChannelStateWriteResult may complete only when the shared file is closed (tryFinishResult waits for every subtask of the file); a result completed per subtask points into a file that is still being written",
        caught_by: "protocol",
        applies: &[("channel-state-files", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::AbortStopsNewerCapture,
        name: "abort-stops-newer-capture",
        part: "abort notifications",
        what: "an abort notification that reaches a task after the next checkpoint's barrier stops that newer checkpoint's channel-state capture too",
        modelled_on: "ChannelStateWriter.abort(id) and the dispatcher's aborted-id bookkeeping: an abort must stop persisting for that id only (notifyCheckpointAborted can arrive after a newer barrier, since RPCs to different task managers overtake each other)",
        caught_by: "consistent-cut",
        applies: &[("abort-notifications", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::StorageLosesStateWrite,
        name: "storage-loses-state-write",
        part: "checkpoint storage",
        what: "the state write of the task whose ack arrived last is lost, but the checkpoint completes",
        modelled_on: "acknowledging before the asynchronous state upload is durable (lost or truncated checkpoint files)",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::CoordinatorForgetsCheckpoints,
        name: "coordinator-forgets-checkpoints",
        part: "coordinator failover",
        what: "a new coordinator does not recover the completed checkpoints from durable (filesystem) storage and restarts the job from scratch",
        modelled_on: "a JobManager failover that does not recover the completed-checkpoint store from HA, restarting with empty state",
        caught_by: "exactly-once-output",
        applies: &[("faults", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SavepointNotifies,
        name: "savepoint-notifies",
        part: "savepoints",
        what: "a plain savepoint notifies the tasks when it completes, so sinks commit its transactions although recovery never uses it",
        modelled_on: "intermediate savepoints committing side effects before FLINK-25191 (a restart from the older checkpoint then duplicates them)",
        caught_by: "exactly-once-output",
        applies: &[("savepoints", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::FinalNotifyDropped,
        name: "final-notify-dropped",
        part: "notification delivery",
        what: "tasks finish at the final checkpoint without its checkpoint-complete notification, so the last transactions are never committed",
        modelled_on: "bounded jobs losing the last 2PC transaction before FLIP-147 (no notification for the final checkpoint)",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::UnalignedLateSnapshot,
        name: "unaligned-late-snapshot",
        part: "unaligned capture",
        what: "an unaligned task processes a buffer between starting its channel capture and its snapshot",
        modelled_on: "FLINK-17564-style ordering bugs between channel-state capture and the operator snapshot",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::UnalignedDropInflight,
        name: "unaligned-drop-inflight",
        part: "unaligned capture",
        what: "an unaligned task drops its recorded input channel state",
        modelled_on: "in-flight buffers missing from the channel state (persister state-machine bugs)",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::UnalignedAckAtFirstBarrier,
        name: "unaligned-ack-at-first-barrier",
        part: "unaligned capture",
        what: "an unaligned task acknowledges at its first barrier, before its channel captures are closed",
        modelled_on: "completing the channel-state write before the last barrier (the async phase must wait for all barriers)",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::PriorityOnForcedEdge,
        name: "priority-on-forced-edge",
        part: "unaligned capture",
        what: "unaligned barriers are sent over forward edges into a node Flink forces to align",
        modelled_on: "FLINK-36287 / FLINK-37870: unaligned checkpoints over edges inside sink topologies",
        caught_by: "consistent-cut",
        applies: &[("alignment-crash", "unaligned"), ("wordcount", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::RestoreDropsChannelState,
        name: "restore-drops-channel-state",
        part: "unaligned restore",
        what: "recovery restores operator state but drops the checkpoint's channel state",
        modelled_on: "recover-without-channel-state (documented as data loss) applied by mistake",
        caught_by: "exactly-once-output",
        applies: &[("backpressure", "unaligned")],
    },
    MutantInfo {
        mutant: Mutant::RestartKeepsStaleBuffers,
        name: "restart-keeps-stale-buffers",
        part: "recovery",
        what: "buffers that were in flight when the job failed are delivered to the restarted tasks",
        modelled_on: "stale network buffers surviving a failover into the next execution attempt",
        caught_by: "exactly-once-output",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::TimeoutSwitchNoCapture,
        name: "timeout-switch-no-capture",
        part: "aligned-timeout switch",
        what: "switching to unaligned at the alignment timeout does not record the channels still waiting for their barrier",
        modelled_on: "FLINK-22638 / FLINK-27251-era bugs in the aligned-to-unaligned switch",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "aligned-timeout")],
    },
    MutantInfo {
        mutant: Mutant::OutputTimeoutDropsOvertaken,
        name: "output-timeout-drops-overtaken",
        part: "aligned-timeout switch",
        what: "the output-side timeout moves a queued barrier ahead of the data without recording that data as output channel state",
        modelled_on: "FLINK-27251: output buffers spilled at the alignment timeout",
        caught_by: "consistent-cut",
        applies: &[("backpressure", "aligned-timeout")],
    },
    MutantInfo {
        mutant: Mutant::SimulatorPanic,
        name: "simulator-panic",
        part: "the simulator itself",
        what: "the simulator panics (one of its own assertions fails) at the job's first failover",
        modelled_on: "a broken assumption of the simulator itself: proves that a panicking seed is reported with its replay line and never ends a sweep",
        caught_by: "panic",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SinkCommitsOneBehind,
        name: "sink-commits-one-behind",
        part: "2PC sink commit",
        what: "on checkpoint-complete for N the 2PC sink commits only the transactions of checkpoints before N, so every commit comes one checkpoint late",
        modelled_on: "off-by-one commit ranges in two-phase-commit sinks (committing pendingCommitTransactions headMap(N) instead of up to N): output delayed by a checkpoint, lost when the job ends without a final one",
        caught_by: "commit",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SavepointEntersStore,
        name: "savepoint-enters-store",
        part: "savepoints",
        what: "a completed plain savepoint is added to the completed-checkpoint store, evicting a retained checkpoint, and recovery may restore from it",
        modelled_on: "savepoints used for recovery and subsuming checkpoints before Flink 1.15 (FLINK-25191, FLINK-24064)",
        caught_by: "protocol",
        applies: &[("savepoints", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::DeclineTwice,
        name: "decline-twice",
        part: "cancellation and abort paths",
        what: "a task that aborts a checkpoint declines it and broadcasts its cancellation marker twice",
        modelled_on: "one checkpoint aborted twice in the task (abortInternal reached from a cancellation marker and again from a newer barrier or an abort notification)",
        caught_by: "protocol",
        applies: &[("timeouts", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::TolerableFailuresOffByOne,
        name: "tolerable-failures-off-by-one",
        part: "coordinator failure accounting",
        what: "the coordinator fails the job over only when the consecutive checkpoint failures exceed tolerable_failures by two",
        modelled_on: "CheckpointFailureManager counting bugs (failures counted against the wrong threshold or not counted, so a job with failing checkpoints keeps running)",
        caught_by: "failure-accounting",
        applies: &[("expiring", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SinkAckWithoutFlush,
        name: "sink-ack-without-flush",
        part: "buffering sink",
        what: "the batching at-least-once sink acknowledges a checkpoint without flushing its open batch, whose records are lost in a failover",
        modelled_on: "async sink writers that snapshot without flushing in-flight requests (AsyncSinkWriter.flush(true) skipped in prepareCommit)",
        caught_by: "exactly-once-output",
        applies: &[("batching", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::WindowNoFlushAtEnd,
        name: "window-no-flush-at-end",
        part: "buffering operator",
        what: "the count window does not emit its open windows at end of input, so the last records of each key never reach the sink",
        modelled_on: "operators that lose buffered records when the input ends (windows and buffers not flushed before FLIP-147's endInput/finish handling)",
        caught_by: "exactly-once-output",
        applies: &[("windows", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::UpsertBatchReordered,
        name: "upsert-batch-reordered",
        part: "upsert sink",
        what: "the upsert sink writes each flushed batch newest first, so an older value of a key overwrites a newer one of the same batch and the finished table is stale",
        modelled_on: "upsert sinks that apply a buffered batch out of order per key: Flink's JDBC BufferReduceStatementExecutor ran a batch's upserts and then its deletes, so two changes of one key in a batch were applied out of order (reported in the review of FLINK-18461, apache/flink PR 12803); Elasticsearch bulk requests for one document id sent concurrently",
        caught_by: "exactly-once-output",
        applies: &[("upsert", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::ChainNotifiesHeadOnly,
        name: "chain-notifies-head-only",
        part: "operator chains",
        what: "a checkpoint-complete notification reaches only the head operator of a chained task, so a 2PC sink chained behind another operator never commits",
        modelled_on: "FLINK-23471 (an exception from one chained operator's notifyCheckpointComplete kept the operators after it from being notified); FLINK-2423's StreamCheckpointNotifierITCase checks that every chained operator is notified",
        caught_by: "exactly-once-output",
        applies: &[("chains", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::CommittableAfterBarrier,
        name: "committable-after-barrier",
        part: "Sink V2",
        what: "the Sink V2 writer hands over its committable in snapshotState, after the barrier was forwarded, instead of in prepareSnapshotPreBarrier: the committable is not in the committer's state for its checkpoint, and a restore from that checkpoint loses the transaction",
        modelled_on: "the Sink V2 contract that committables precede the barrier (SinkWriterOperator.prepareSnapshotPreBarrier emits them; records emitted from snapshotState trail it); FLINK-36287 / FLINK-37870 are its unaligned form, committables overtaken by an unaligned barrier",
        caught_by: "exactly-once-output",
        applies: &[("sink-v2", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::WriterKeepsLastTransaction,
        name: "writer-keeps-last-transaction",
        part: "Sink V2",
        what: "at end of input the Sink V2 writer does not hand its last transaction to the committer, so the final data is never committed",
        modelled_on: "committables not emitted at end of input (SinkWriterOperator.endInput must emit the last committables, tagged EOI, which the final checkpoint then commits: FLIP-147)",
        caught_by: "exactly-once-output",
        applies: &[("sink-v2", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::EoiCommittableConstant,
        name: "eoi-committable-constant",
        part: "Sink V2",
        what: "the writer tags its end-of-input committable with a constant (Long.MAX_VALUE) and the committer, once its input ended, commits everything on the next notification: a notification of a checkpoint taken before the end commits the final transaction, and a restore from that checkpoint replays its records",
        modelled_on: "FLINK-37605 (\"final doesn't mean final\": streaming jobs checkpoint on after end of input, so the EOI constant led to duplicate commits; since then the writer tags the last checkpoint id it saw + 1)",
        caught_by: "exactly-once-output",
        applies: &[("sink-v2", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::SplitsBackUncheckpointedOnly,
        name: "splits-back-uncheckpointed-only",
        part: "FLIP-27 source",
        what: "when a reader is restored by a region failover, the enumerator takes back only the splits it assigned to it since its own last checkpoint, not all those assigned since the restored checkpoint: splits assigned before a checkpoint that never completed are read by nobody",
        modelled_on: "FLINK-20290 / FLINK-20396 (splits were added back on subtaskFailed with the tracker's uncheckpointed assignments; OperatorCoordinator.subtaskReset(subtask, restoredCheckpointId) now returns every split assigned after the restored checkpoint)",
        caught_by: "consistent-cut",
        applies: &[("flip27-regions", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::LostOperatorEventIgnored,
        name: "lost-operator-event-ignored",
        part: "operator coordinator",
        what: "a split assignment whose RPC is lost is forgotten: the target reader is not failed, so the enumerator believes the split assigned and no reader ever reads it",
        modelled_on: "FLINK-21996 part 3 (a transient RPC failure of an OperatorEvent lost a split assignment; since then a failed or timed-out event fails its target subtask, which resets its splits)",
        caught_by: "consistent-cut",
        applies: &[("flip27", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::CheckpointIgnoresUnackedEvents,
        name: "checkpoint-ignores-unacked-events",
        part: "operator coordinator",
        what: "the coordinator's checkpoint completes and the sources are triggered while split assignments sent before it are still in flight: the enumerator's checkpoint counts the split as assigned, the reader's snapshot does not have it yet, and a restore from that checkpoint loses it",
        modelled_on: "FLINK-21996 part 4 (OperatorCoordinatorHolder now completes a coordinator checkpoint only once every event sent before it is acknowledged or failed)",
        caught_by: "consistent-cut",
        applies: &[("flip27", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::OperatorEventsNotHeld,
        name: "operator-events-not-held",
        part: "operator coordinator",
        what: "events the coordinator sends after its checkpoint go out at once instead of being held until the subtask has taken its snapshot: a split assigned after the enumerator's checkpoint reaches the reader before its barrier, so both checkpoints hold it, and a restore reads it twice",
        modelled_on: "FLINK-16986 (exactly-once of operator events around checkpoints: the valve closed at the coordinator checkpoint) and FLINK-28606 (the subtask gateway stays closed until the subtask completed the checkpoint)",
        caught_by: "consistent-cut",
        applies: &[("flip27", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::NoMoreSplitsOnce,
        name: "no-more-splits-once",
        part: "FLIP-27 source",
        what: "the enumerator tells each reader only once that no split will come: a reader restarted after it was told asks again, gets no answer and never ends its input",
        modelled_on: "FLINK-35522 (the source coordinator did not resend NoMoreSplits to a restarted source subtask, which then hung)",
        caught_by: "liveness",
        applies: &[("flip27-regions", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::UnionStateKeptWhole,
        name: "union-state-kept-whole",
        part: "operator state",
        what: "an operator with union list state keeps every restored entry instead of selecting its share, so each entry is restored by every subtask and emitted once per subtask",
        modelled_on: "the union-list-state contract (OperatorStateStore.getUnionListState: every subtask receives the complete list and must pick its part, as FlinkKafkaConsumerBase.initializeState filters the restored partitions by its assignment)",
        caught_by: "exactly-once-output",
        applies: &[("operator-state", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::UnionStateRestoredAsSplit,
        name: "union-state-restored-as-split",
        part: "operator state",
        what: "the runtime restores union list state like split list state: each subtask gets only its own entries, selects its share of them, and the entries it leaves to other subtasks are restored by nobody",
        modelled_on: "the redistribution modes of operator state (OperatorStateRestoreOperation and RoundRobinOperatorStateRepartitioner keep SPLIT_DISTRIBUTE and UNION apart: union state goes to every subtask on every restore)",
        caught_by: "exactly-once-output",
        applies: &[("operator-state", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::BroadcastStateNotSnapshotted,
        name: "broadcast-state-not-snapshotted",
        part: "operator state",
        what: "a broadcast-process operator keeps its rule table outside its checkpointed state: a restore starts with no rules, though the broadcast records that set them are before the restored checkpoint and never replayed",
        modelled_on: "the broadcast-state pattern's contract (BroadcastProcessFunction must keep what broadcast elements set in the broadcast state of its context, which is checkpointed and redistributed; a plain field is lost on restore)",
        caught_by: "exactly-once-output",
        applies: &[("operator-state", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::KeyedSnapshotStaleGroup,
        name: "keyed-snapshot-stale-group",
        part: "keyed state snapshots",
        what: "a keyed snapshot writes the bytes of the previous snapshot for a key group that was written to since: a restore brings back older counts",
        modelled_on: "the class of incremental and copy-on-write snapshot bugs where state changed since the last snapshot is not written again (Flink's CopyOnWriteStateMap versions every entry so that a snapshot sees each write made before it, and incremental checkpoints must upload every changed file)",
        caught_by: "state",
        applies: &[("wordcount", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::RestartForgetsEdgeCredits,
        name: "restart-forgets-edge-credits",
        part: "per-edge network settings",
        what: "after a restart every sender starts with the network's buffer_credits, not its edge's: it is promised more buffers than its receiver holds",
        modelled_on: "RemoteInputChannel's initial credit is the number of exclusive buffers it was actually given (requestExclusiveBuffers, the credit sent at setup); a sender told another number breaks the credit invariant and overruns or starves the receiver",
        caught_by: "protocol",
        applies: &[("edges", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::IdleSourceEndsInput,
        name: "idle-source-ends-input",
        part: "partition rates",
        what: "a source whose partitions have no record there yet (a rate) reports the end of its input instead of waiting: the records still to come are never read",
        modelled_on: "the SourceReader contract: pollNext returns NOTHING_AVAILABLE and completes isAvailable() when data arrives, END_OF_INPUT only when nothing will ever come; a reader that returns END_OF_INPUT for a momentarily empty split finishes early",
        caught_by: "exactly-once-output",
        applies: &[("uneven", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::LineIgnoresOrphans,
        name: "line-ignores-orphans",
        part: "recovery lines (uncoordinated)",
        what: "the recovery line is every task's newest durable checkpoint: a receiver keeps records its sender's checkpoint had not sent yet, and the sender sends them again",
        modelled_on: "the classic mistake of independent checkpointing: restoring the latest local checkpoints without the rollback-dependency fixpoint (Bhargava and Lian 1988; CheckMate's recovery line rolls a node back while any orphan edge remains)",
        caught_by: "consistent-cut",
        applies: &[("faults", "uncoordinated")],
    },
    MutantInfo {
        mutant: Mutant::LogTruncatedEarly,
        name: "log-truncated-early",
        part: "message logs (uncoordinated)",
        what: "a sender's log is cut below what the receiver's newest checkpoint read, not what its checkpoint in the recovery line read: a rollback below that newest checkpoint finds the records in transit gone",
        modelled_on: "log garbage collection must stay below the global recovery line (Elnozahy et al., ACM CSUR 2002, §3.4; CheckMate truncates logs only below the line): a receiver's newest checkpoint may still be rolled back",
        caught_by: "consistent-cut",
        applies: &[("faults", "uncoordinated")],
    },
    MutantInfo {
        mutant: Mutant::CicMissedForced,
        name: "cic-missed-forced",
        part: "communication-induced checkpointing",
        what: "cic-bcs forces no checkpoint for a buffer whose clock is one above the reader's; cic-hmnr never checks its first condition (a non-causal Z-path: a higher clock after a send to a task it is known to be above)",
        modelled_on: "Alvisi et al., FTCS 1999, 'An Analysis of Communication-Induced Checkpointing': the forcing conditions are subtle and implementations that take fewer forced checkpoints than the rule demands lose the guarantee the rule was for",
        caught_by: "protocol",
        applies: &[("throughput", "cic-bcs"), ("iterate", "cic-hmnr")],
    },
    MutantInfo {
        mutant: Mutant::AlignedWaitsOnFeedback,
        name: "aligned-waits-on-feedback",
        part: "iterations (aligned)",
        what: "on a cycle the aligned handler waits for the barrier of its feedback inputs too, which only comes back after its own snapshot: no checkpoint ever completes",
        modelled_on: "plain barrier alignment on a cyclic dataflow (Carbone et al. 2015, §4.3: ABS excludes back-edges from alignment); Flink refuses exactly-once checkpoints on iterations for this reason",
        caught_by: "liveness",
        applies: &[("iterate", "aligned")],
    },
    MutantInfo {
        mutant: Mutant::FeedbackNotLogged,
        name: "feedback-not-logged",
        part: "iterations (aligned)",
        what: "on a cycle the aligned handler snapshots once its other inputs aligned but does not log its feedback inputs until their barrier comes back: the loop's records in transit belong to no snapshot and are lost on a restore",
        modelled_on: "Flink's forced checkpointing mode on iterations (`enableCheckpointing(interval, mode, force = true)`), whose documentation warns that records in transit in the loop are lost on failure",
        caught_by: "consistent-cut",
        applies: &[("iterate", "aligned")],
    },
];

impl Mutant {
    pub fn info(self) -> &'static MutantInfo {
        MUTANTS
            .iter()
            .find(|m| m.mutant == self)
            .expect("every mutant has a registry entry")
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn from_name(name: &str) -> Option<Mutant> {
        MUTANTS.iter().find(|m| m.name == name).map(|m| m.mutant)
    }
    pub fn names() -> String {
        MUTANTS
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

thread_local! {
    /// The mutants that changed behaviour in the run on this thread (runs
    /// are single-threaded; a sweep runs one seed per thread at a time).
    static FIRED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Records that mutant `m` just made the run diverge from correct code.
/// Every mutant's hook calls it exactly where the broken path is taken, so
/// a run can say which of its mutants never took effect. It only records:
/// nothing in a run reads it.
#[inline]
pub(crate) fn fired(m: Mutant) {
    FIRED.with(|f| f.set(f.get() | (1 << m as u8)));
}

/// Forgets what earlier runs on this thread fired (at the start of a run).
pub(crate) fn reset_fired() {
    FIRED.with(|f| f.set(0));
}

/// The mutants that took effect in the current run on this thread.
pub(crate) fn fired_in_this_run() -> Mutants {
    Mutants(FIRED.with(|f| f.get()))
}

/// A set of mutants (a bit set; empty in every normal run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mutants(u64);

impl Mutants {
    pub const NONE: Mutants = Mutants(0);

    pub fn with(self, m: Mutant) -> Mutants {
        Mutants(self.0 | (1 << m as u8))
    }
    #[inline(always)]
    pub fn has(self, m: Mutant) -> bool {
        self.0 & (1 << m as u8) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn names(self) -> Vec<&'static str> {
        MUTANTS
            .iter()
            .filter(|m| self.has(m.mutant))
            .map(|m| m.name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_complete_and_consistent() {
        assert!(MUTANTS.len() >= 15);
        for (i, m) in MUTANTS.iter().enumerate() {
            assert_eq!(Mutant::from_name(m.name), Some(m.mutant));
            assert!(!m.applies.is_empty(), "{}", m.name);
            assert!(
                crate::verdict::CheckId::from_name(m.caught_by).is_some(),
                "{}",
                m.name
            );
            assert!(
                MUTANTS[..i].iter().all(|o| o.mutant != m.mutant),
                "{} listed twice",
                m.name
            );
        }
    }
}
