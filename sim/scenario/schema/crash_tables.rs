//! The fault tables a time or an event starts: task, worker and
//! coordinator crashes, latency spikes and partitions (their file forms,
//! and the validated forms of those checked by hand).

use super::*;

table! {
    /// `[[faults.crashes]]`: `task` is `"op[n]"`; either `at` a time, or
    /// `on` an event (with `checkpoint`, `of` and `delay`).
    Crash {
        #[serde(skip_serializing_if = "Option::is_none")]
        at: Option<Duration> = None,
        task: Option<String> = None,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        repeat: Option<bool> = None,
    }
}

table! {
    /// `[[faults.coordinator.crash_on]]`: the coordinator crashes `delay`
    /// after an event (`on`, `checkpoint` and `of` as in
    /// `[[faults.crashes]]`).
    CoordinatorCrash {
        #[serde(deserialize_with = "some_name")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
    }
}

table! {
    /// `[[faults.worker_crashes]]`: a whole worker crashes, either `at` a
    /// time or `on` an event (with `checkpoint`, `of` and `delay`, as
    /// `[[faults.crashes]]`).
    WorkerCrash {
        #[serde(skip_serializing_if = "Option::is_none")]
        at: Option<Duration> = None,
        worker: Option<i64> = None,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
    }
}

/// A planned worker crash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerCrashSpec {
    /// When, for a crash at a fixed time (unused with a `trigger`).
    pub at: SimTime,
    pub worker: u32,
    /// A crash relative to an event of the run, instead of at `at`.
    pub trigger: Option<CrashTrigger>,
}

table! {
    /// `[[faults.latency_spikes]]`: between `from` and `until` (or for
    /// `duration` from `delay` after an event `on`), every message sent on
    /// the chosen channels takes `extra` longer.
    Spike {
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<Duration> = None,
        extra: Option<Duration> = None,
        /// Only the channels of edges from this operator to that one
        /// (`"from->to"`).
        #[serde(skip_serializing_if = "Option::is_none")]
        edge: Option<String> = None,
        /// Only channels to or from subtasks on this worker.
        #[serde(skip_serializing_if = "Option::is_none")]
        worker: Option<i64> = None,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Duration> = None,
    }
}

/// A latency spike, validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LatencySpike {
    /// The window; with a `trigger`, `from` is 0 and `until` the window's
    /// length, both counted from `delay` after the event.
    pub from: SimTime,
    pub until: SimTime,
    pub extra: SimDuration,
    pub edge: Option<(OperatorId, OperatorId)>,
    pub worker: Option<u32>,
    pub trigger: Option<CrashTrigger>,
}

table! {
    /// `[[faults.partitions]]`: between `from` and `until` (or for
    /// `duration` from `delay` after an event `on`) the `workers` cannot
    /// talk to the others: data sent across arrives only when the partition
    /// heals. Longer than the heartbeat timeout, and the cut-off workers
    /// count as lost.
    Partition {
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<Duration> = None,
        workers: Option<Vec<i64>> = None,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Duration> = None,
    }
}

/// A network partition, validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionSpec {
    /// The window; with a `trigger`, as for [`LatencySpike`].
    pub from: SimTime,
    pub until: SimTime,
    pub workers: Vec<u32>,
    pub trigger: Option<CrashTrigger>,
}

table! {
    /// `[[faults.storage_failures]]` and `[[faults.lost_notifications]]`:
    /// a fault aimed at one checkpoint, at one task (`of`) or, without it,
    /// at the coordinator's metadata write or every task's notification.
    Targeted {
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
    }
}

/// A fault aimed at one checkpoint, validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetedFault {
    pub checkpoint: u64,
    /// The subtask whose write or notification it is; `None`: the
    /// coordinator's metadata write, or every task's notification.
    pub of: Option<(OperatorId, u32)>,
}

/// A targeted fault's keys as written.
pub(super) fn targeted(
    x: &TargetedFault,
    task: &dyn Fn(OperatorId, u32) -> Option<String>,
) -> Targeted {
    Targeted {
        checkpoint: Some(int(x.checkpoint)),
        of: x.of.and_then(|(o, n)| task(o, n)),
    }
}

/// The keys of a fault window as written: `from` and `until`, or `on` (with
/// `checkpoint`, `of`, `delay`) and `duration`.
#[allow(clippy::type_complexity)]
pub(super) fn window_keys(
    from: SimTime,
    until: SimTime,
    trigger: &Option<CrashTrigger>,
    task: &dyn Fn(OperatorId, u32) -> Option<String>,
) -> (
    Option<Duration>,
    Option<Duration>,
    Option<TriggerEvent>,
    Option<i64>,
    Option<String>,
    Option<Duration>,
    Option<Duration>,
) {
    match trigger {
        None => (
            Some(from.into()),
            Some(until.into()),
            None,
            None,
            None,
            None,
            None,
        ),
        Some(tr) => (
            None,
            None,
            Some(tr.on),
            tr.checkpoint.map(int),
            tr.of.and_then(|(o, n)| task(o, n)),
            Some(Duration(tr.delay)),
            Some(Duration(SimDuration(until.0 - from.0))),
        ),
    }
}

table! {
    /// `[[faults.broker]]`: between `from` and `until` the brokers of the
    /// transactional log are `down` (requests answered with a retriable
    /// error), `lost` (requests unanswered) or `slow` (answers `extra`
    /// later): the partitions' leaders, or with `role = "coordinator"` the
    /// transaction coordinator.
    BrokerFaults {
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<Duration> = None,
        until: Option<Duration> = None,
        #[serde(deserialize_with = "some_name")]
        fault: Option<crate::scenario::BrokerFaultKind> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        extra: Option<Duration> = None,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        role: Option<crate::scenario::BrokerRole> = None,
    }
}

table! {
    /// `[[faults.slow_tasks]]`: between `from` and `until` (or for
    /// `duration` from `delay` after an event `on`).
    SlowTask {
        task: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<Duration> = None,
        factor: i64 = 10,
        #[serde(deserialize_with = "some_name", skip_serializing_if = "Option::is_none")]
        on: Option<TriggerEvent> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint: Option<i64> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        of: Option<String> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<Duration> = None,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Duration> = None,
    }
}
