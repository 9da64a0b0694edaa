//! Reachability counters: evidence that the interesting situations of a
//! run happened (a crash during an alignment, a recovery that restored
//! channel state, ...), so that a pass is never vacuous. One list of
//! names, from which the struct, its sum over runs (`+=`) and the name
//! table are all generated: a new counter cannot be left out of a sum.

use serde::Serialize;

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident, )*) => {
        /// Reachability counters: evidence that the interesting situations happened.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
        /// Read back (a recorded run's `simulated.json`, a sweep's
        /// results), a counter the file predates is 0.
        #[serde(default)]
        pub struct Counters {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl std::ops::AddAssign<&Counters> for Counters {
            fn add_assign(&mut self, other: &Counters) {
                $( self.$name += other.$name; )*
            }
        }

        impl Counters {
            /// Every counter's name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Every counter, by name, in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
                [$((stringify!($name), self.$name)),*].into_iter()
            }
        }
    };
}

counters! {
    checkpoints_triggered,
    /// Checkpoints triggered while another checkpoint or savepoint was
    /// still pending.
    checkpoints_concurrent,
    /// ... of those, in a job with operator coordinators (FLIP-27).
    enumerator_checkpoints_concurrent,
    checkpoints_completed,
    /// Checkpoints planned while some task had exited (FLIP-147): those
    /// tasks reported finished in them.
    checkpoints_with_finished_tasks,
    /// Checkpoints that failed because a task they triggered exited
    /// between the plan and the trigger's arrival.
    checkpoints_failed_task_finished,
    /// Tasks whose final checkpoint (the first they snapshotted after the
    /// end of their data) was taken.
    final_checkpoints_taken,
    /// Tasks that exited while others still ran.
    tasks_finished_while_others_ran,
    /// Times a task whose input had ended was kept from exiting by a
    /// snapshot not yet acknowledged (a timeoutable barrier held in its
    /// output queue; under `stop-the-world`, a pending checkpoint's
    /// snapshot not taken yet): Flink's `afterInvoke` waits for pending
    /// checkpoints.
    exits_waiting_for_ack,
    /// Tasks triggered by RPC because every upstream task had exited.
    tasks_triggered_after_upstream_finished,
    /// Barriers a handler took for an input whose upstream had exited (or
    /// for every input of a task triggered by RPC).
    barriers_stood_in,
    /// Subtasks restored from a checkpoint in which they had finished.
    tasks_restored_finished,
    /// Records a task read after the end of its input (every input had
    /// delivered `EndOfData`) and dropped, as Flink's `FinishedDataOutput`
    /// does.
    records_dropped_after_end_of_data,
    /// Tasks whose data a stop-with-savepoint without drain ended: their
    /// operators did not finish (Flink's `StopMode.NO_DRAIN`).
    tasks_stopped_without_drain,
    checkpoints_aborted,
    checkpoints_expired,
    /// Checkpoints that expired while their source trigger waited for
    /// operator events' acknowledgements.
    checkpoints_expired_waiting_for_events,
    checkpoints_declined,
    triggers_skipped,
    /// Periodic trigger requests that waited in the coordinator's queue
    /// (a checkpoint or savepoint was pending when they came due).
    triggers_queued,
    /// Channels a barrier blocked at the sender (Flink's producer-side
    /// blocking for aligned barriers).
    upstream_blocks,
    /// `resumeConsumption` messages that reached a sender.
    resumes,
    /// Credit messages (`AddCredit`) receivers sent upstream.
    credit_messages,
    snapshots,
    alignments,
    cancel_markers_sent,
    /// Barriers of checkpoints the task already knew were aborted: no
    /// snapshot, a cancellation marker instead (FLINK-18238's path).
    aborted_checkpoints_skipped,
    crashes,
    crashes_ignored,
    crashes_during_alignment,
    crashes_between_snapshot_and_notify,
    /// Crashes in the finishing phase: after some task took its final
    /// checkpoint or exited, or a stop-with-savepoint completed (the
    /// failover restores tasks as finished, or finishes again, without
    /// repeating commits).
    crashes_after_final_checkpoint,
    failovers,
    recoveries,
    recoveries_from_checkpoint,
    recoveries_from_scratch,
    recovery_commits,
    /// Transactions a restarted sink aborted: open, or pre-committed past
    /// the restored checkpoint, in an earlier attempt.
    transactions_aborted_at_restore,
    /// Transactions whose commit fell due and was checked: at a
    /// notification or at a restore.
    commits_checked,
    records_emitted,
    records_replayed,
    records_processed,
    /// Records processed by the chained operators after a task's head
    /// (`records_processed` counts what heads read).
    chained_records,
    /// Records taken in by sinks (operators without outputs), replays
    /// after a failure included: the numerator of throughput.
    sink_records_in,
    /// Committables a Sink V2 committer read from the network (its writer
    /// not chained to it).
    committables_through_network,
    backpressure_stalls,
    notifications_ignored,
    /// Mails (operator events, source triggers, notifications) that reached
    /// a task while its thread was busy with a step, and waited for it.
    mails_waited,
    /// Mails an urgent mail (an unaligned trigger, Flink 2.1+) overtook in a
    /// task's mailbox.
    mails_overtaken,
    /// Split assignments (`AddSplit` events) that reached a busy reader
    /// and waited in its mailbox.
    splits_waiting_in_mailbox,
    checkpoints_after_last_recovery,
    /// Checkpoints completed after the fault phase ended (the quiet phase).
    checkpoints_in_quiet_phase,
    /// Completed checkpoints that persisted in-flight data.
    unaligned_checkpoints,
    /// In-flight records persisted in completed checkpoints.
    in_flight_records_persisted,
    /// `aligned-timeout`: tasks that switched a checkpoint to unaligned.
    switched_to_unaligned,
    /// Timeoutable barriers turned priority in an output queue.
    output_barriers_prioritized,
    /// Crashes while an unaligned (or Chandy–Lamport) checkpoint was in
    /// progress with channel state already recorded.
    crashes_during_unaligned_capture,
    /// Recoveries whose checkpoint carried channel state.
    recoveries_with_channel_state,
    /// Restores from files: the bytes read back (every file a restored
    /// snapshot refers to, channel state aside) and the changelog entries
    /// replayed.
    restore_bytes_read,
    changes_replayed,
    /// Periodic triggers skipped because a task was still restoring its
    /// state from files (not `RUNNING`).
    triggers_skipped_restoring,
    /// Records of channel state restored, and processed again after restore.
    in_flight_records_restored,
    in_flight_records_replayed,
    /// Event time: watermarks restored among a channel's in-flight records,
    /// and operators restored with an event-time clock past
    /// `Long.MIN_VALUE`.
    watermarks_restored,
    clocks_restored,
    /// Event time: watermark statuses restored among a channel's in-flight
    /// records, and splits a source's idleness timers marked idle.
    statuses_restored,
    splits_idled,
    /// Timers operators held after a restore, and the calls of tasks'
    /// processing-time services (mails that fired processing-time timers).
    timers_restored,
    processing_time_calls,
    /// Watermark alignment: reports readers sent their coordinators,
    /// announcements coordinators sent readers, splits paused and resumed,
    /// and readers that waited as a whole.
    watermarks_reported,
    alignment_announcements,
    splits_paused,
    splits_resumed,
    readers_waiting_for_alignment,
    /// Event-time windows: late records dropped (no side output; Flink's
    /// `numLateRecordsDropped`) and sent to a late-data side output.
    late_records_dropped,
    late_records_side_output,
    /// Checkpoints triggered while restored in-flight data was still being
    /// replayed (`[checkpoint] during_recovery`).
    checkpoints_during_recovery,
    /// Abort notifications that cancelled the task's pending acknowledgement
    /// of that checkpoint (its asynchronous part).
    acks_cancelled_by_abort,
    /// Abort notifications that reached an input channel whose state was
    /// being captured for a newer checkpoint (which must go on).
    aborts_during_newer_capture,
    /// Restored records not read yet that a checkpoint during recovery
    /// persisted again as channel state.
    recovered_records_persisted,
    /// Periodic triggers skipped because restored in-flight data was still
    /// being replayed (Flink: tasks not yet RUNNING).
    triggers_skipped_recovering,
    /// `stop-the-world`: times the sources were paused.
    sources_paused,
    /// Channels whose receiver had consumed more than its sender had sent
    /// before the snapshots: duplicates after a restore (allowed only when
    /// the expected guarantee is at-least-once).
    cut_duplicates,
    /// Savepoints triggered, completed and failed (aborted).
    savepoints_triggered,
    savepoints_completed,
    savepoints_failed,
    /// Failures detected after a stop-with-savepoint completed (the job
    /// ends instead of failing over).
    failures_after_stop_savepoint,
    /// Periodic triggers skipped because a savepoint was queued or pending.
    triggers_skipped_savepoint,
    /// The job started from a savepoint or retained checkpoint.
    restored_from_snapshot,
    /// Subtasks that restored union list state (every subtask's entries).
    union_state_restores,
    /// Keyed records checked against their key group's owner.
    records_routing_checked,
    /// Records whose order within their channel was checked.
    channel_records_ordered,
    // --- the richer fault model (`world/faults.rs`, docs/faults.md) ---
    /// The restart strategy gave up: the job failed.
    restart_strategy_gave_up,
    /// Checkpoint-complete notifications lost on the way to a task.
    notifications_lost,
    notifications_lost_during_alignment,
    notifications_lost_during_recovery,
    /// Tasks that committed a checkpoint whose notification they had lost,
    /// through a later notification (complete or, next, abort).
    lost_notifications_caught_up,
    /// ... through an abort notification carrying the latest completed id.
    lost_notifications_caught_up_by_abort,
    /// Checkpoint storage writes (task state or metadata) that failed.
    storage_write_failures,
    storage_failures_during_alignment,
    storage_failures_during_recovery,
    /// Storage writes that were slow.
    storage_writes_slow,
    /// Checkpoints aborted because a storage write failed.
    checkpoints_storage_failed,
    checkpoints_state_too_large,
    coordinator_crashes,
    coordinator_crashes_ignored,
    coordinator_crashes_during_alignment,
    coordinator_crashes_between_snapshot_and_notify,
    coordinator_crashes_during_recovery,
    /// New coordinators that took over.
    coordinator_failovers,
    /// Completed checkpoints lost with the coordinator (`memory` storage).
    checkpoints_lost_with_coordinator,
    coordinator_recoveries_from_checkpoint,
    coordinator_recoveries_from_scratch,
    /// Task steps taken while the task was a straggler.
    slow_task_steps,
    /// Task crashes while some task had lost a notification it had not
    /// caught up with yet (its restore must commit it).
    crashes_with_lost_notification,
    /// Task crashes while a straggler was slowed down.
    crashes_during_straggling,
    /// Whole workers that crashed (every subtask on them at once).
    worker_crashes,
    worker_crashes_ignored,
    worker_crashes_during_alignment,
    worker_crashes_between_snapshot_and_notify,
    worker_crashes_during_recovery,
    /// Subtasks killed by worker crashes.
    worker_tasks_killed,
    /// Restarts that waited for a replacement worker.
    restarts_waiting_for_worker,
    /// Latency spikes that began, and in which window.
    latency_spikes,
    latency_spikes_during_alignment,
    latency_spikes_between_snapshot_and_notify,
    latency_spikes_during_recovery,
    /// Messages a latency spike delayed.
    messages_delayed,
    /// Network partitions that began, and in which window.
    partitions,
    partitions_during_alignment,
    partitions_between_snapshot_and_notify,
    partitions_during_recovery,
    /// Partitions longer than the heartbeat timeout: the cut-off side lost.
    partitions_lost,
    /// Messages a partition held until it healed.
    messages_held,
    /// Failovers that restarted only the failed task's region.
    region_failovers,
    /// Tasks redeployed, over all restarts (global and region).
    tasks_restarted,
    /// Faults while the coordinator was down (between its crash and its
    /// successor): task crashes (ignored: the tasks are cancelled), worker
    /// crashes and partitions (the restart waits for the workers).
    crashes_during_coordinator_failover,
    worker_crashes_during_coordinator_failover,
    partitions_during_coordinator_failover,
    /// Operator events coordinators sent to subtasks (split assignments).
    operator_events_sent,
    /// Operator events whose RPC failed (`[faults.operator_events]`).
    operator_events_lost,
    /// Operator events for a subtask that was not running (failed at once).
    operator_events_undeliverable,
    /// Subtasks the coordinator failed because an event to them failed.
    operator_event_failures,
    /// Checkpoints whose source trigger waited for operator events sent
    /// before the coordinators' checkpoints to be acknowledged.
    triggers_waiting_for_events,
    /// The uncoordinated families: checkpoints a task took on its timer or
    /// at the end of its input (basic), and those its rule forced before a
    /// read (communication-induced).
    local_checkpoints_basic,
    local_checkpoints_forced,
    /// Checkpoints a recovery line rolled back over to avoid an orphan
    /// (CheckMate's "useless checkpoints"), and tasks a failover restored
    /// to their initial state though they had checkpoints (the domino
    /// effect's end).
    local_checkpoints_rolled_back,
    local_rollbacks_to_start,
    /// Times the recovery line moved forward (each notifies the tasks whose
    /// checkpoint in it moved: sinks commit).
    recovery_lines,
    /// Bytes appended to the senders' message logs, the most records they
    /// held at once, and the records replayed from them after failovers.
    log_bytes,
    log_peak_records,
    log_records_replayed,
    /// Bytes piggybacked on data buffers (communication-induced rules).
    piggyback_bytes,
    /// Per failover, how far back in time the line restored the task it
    /// took back furthest, summed (ns).
    rollback_ns,
    /// Checkpoints of the uncoordinated families that belong to no
    /// consistent global checkpoint (on a Z-cycle; counted at the end of a
    /// run with loops and without a restart).
    useless_checkpoints,
    /// Times the loops of a job with feedback edges were found quiescent
    /// and their feedback channels ended.
    loops_ended,
    /// Checkpoint storage as files (`runtime::storage`): references of a
    /// snapshot to a run an earlier checkpoint wrote, ...
    runs_reused,
    /// ... snapshots that wrote one compacted run, ...
    runs_compacted,
    /// ... shared runs the registry deleted, ...
    shared_runs_deleted,
    /// ... restores that read a checkpoint's files back, ...
    restores_from_files,
    /// ... files a storage crash lost, ...
    storage_files_lost,
    /// ... acknowledgements refused for referring to a run the
    /// registry no longer holds, ...
    acks_refused_unknown_state,
    /// ... the changelog backend's segments referred to again, ...
    changelog_segments_reused,
    /// ... its materializations that completed, ...
    materializations_done,
    /// ... that failed (their file lost), ...
    materializations_failed,
    /// ... and its triggers skipped for an unconfirmed materialization.
    materializations_skipped,
    /// File merging: segments written into a physical file that held one
    /// already, ...
    segments_merged,
    /// ... into one an earlier checkpoint opened, ...
    physical_files_reused_across,
    /// ... physical files deleted, ...
    physical_files_deleted,
    /// ... and segments a new manager re-registered at a restore.
    segments_reregistered,
    /// Tasks failed because an operator threw (a log sink's write or
    /// commit refused).
    operator_failures,
    /// ... and those an injected fault made them raise (a producer's
    /// request expired in a broker outage): the fault's, not the job's.
    operator_failures_by_faults,
    /// The transactional log: transactions its sinks committed, commits it
    /// refused (their records lost), ...
    log_commits,
    log_commits_lost,
    /// ... transactions its broker aborted at their timeout, ...
    log_transactions_timed_out,
    /// ... lingering transactions of earlier attempts aborted at a
    /// restore, ...
    log_lingering_aborted,
    /// ... open transactions examined at checkpoint completions and at the
    /// end, ...
    log_open_checked,
    /// ... transactions still open when the run ended (aborted for the
    /// readers, as the broker will at their timeout), ...
    log_open_at_end,
    /// ... and records a read_committed reader of the sinks' topics read.
    log_records_read_committed,
    /// The log's sources: records they fetched, offsets they committed to
    /// their consumer groups, and the closings of topics (their writer
    /// finished) they read to the end.
    log_records_fetched,
    log_offsets_committed,
    log_topics_closed,
    /// The brokers' faults: retries of the log sinks' produce requests,
    /// requests that expired, and calls (a flush, or a call to the
    /// transaction coordinator) that blocked a task's thread waiting for
    /// answers, ...
    log_requests_retried,
    log_requests_expired,
    log_flushes_blocked,
    /// ... calls to the transaction coordinator that waited for its
    /// answer, and commits made again after a call gave up (`max_block`).
    log_coordinator_waits,
    log_commits_retried,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_adds_every_counter() {
        let mut one = Counters::default();
        for (i, name) in Counters::NAMES.iter().enumerate() {
            // Set each through the JSON form, so every field is reached.
            let mut v = serde_json::to_value(&one).unwrap();
            v[*name] = serde_json::Value::from(i as u64 + 1);
            one = serde_json::from_value(v).unwrap();
        }
        let mut sum = one.clone();
        sum += &one;
        for ((name, a), (_, b)) in sum.iter().zip(one.iter()) {
            assert_eq!(a, 2 * b, "{name}");
        }
    }

    #[test]
    fn a_file_written_before_a_counter_existed_reads_it_as_zero() {
        let mut v = serde_json::to_value(Counters {
            crashes: 3,
            ..Counters::default()
        })
        .unwrap();
        v.as_object_mut().unwrap().remove("watermarks_restored");
        let read: Counters = serde_json::from_value(v).unwrap();
        assert_eq!((read.crashes, read.watermarks_restored), (3, 0));
    }
}
