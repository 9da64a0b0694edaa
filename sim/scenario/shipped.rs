//! The shipped scenarios (`scenarios/*.toml`), built into the library, so
//! that commands which use them by name (`mutants`) work from any
//! directory. `tests/structure.rs` checks the list against the folder.

/// `(name, text)` of every shipped scenario, by name.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "abort-notifications",
        include_str!("../../scenarios/abort-notifications.toml"),
    ),
    (
        "alignment-crash",
        include_str!("../../scenarios/alignment-crash.toml"),
    ),
    (
        "backpressure",
        include_str!("../../scenarios/backpressure.toml"),
    ),
    ("batching", include_str!("../../scenarios/batching.toml")),
    ("bench", include_str!("../../scenarios/bench.toml")),
    ("cancel", include_str!("../../scenarios/cancel.toml")),
    ("chains", include_str!("../../scenarios/chains.toml")),
    ("changelog", include_str!("../../scenarios/changelog.toml")),
    (
        "channel-state-files",
        include_str!("../../scenarios/channel-state-files.toml"),
    ),
    ("checkmate", include_str!("../../scenarios/checkmate.toml")),
    (
        "checkpointing-time",
        include_str!("../../scenarios/checkpointing-time.toml"),
    ),
    (
        "checkpointing-time-flink",
        include_str!("../../scenarios/checkpointing-time-flink.toml"),
    ),
    ("edges", include_str!("../../scenarios/edges.toml")),
    (
        "event-time",
        include_str!("../../scenarios/event-time.toml"),
    ),
    (
        "event-time-alignment",
        include_str!("../../scenarios/event-time-alignment.toml"),
    ),
    (
        "event-time-backpressure",
        include_str!("../../scenarios/event-time-backpressure.toml"),
    ),
    (
        "event-time-flink",
        include_str!("../../scenarios/event-time-flink.toml"),
    ),
    (
        "event-time-idle",
        include_str!("../../scenarios/event-time-idle.toml"),
    ),
    (
        "event-time-rejoin",
        include_str!("../../scenarios/event-time-rejoin.toml"),
    ),
    (
        "event-time-sessions",
        include_str!("../../scenarios/event-time-sessions.toml"),
    ),
    (
        "event-time-timers",
        include_str!("../../scenarios/event-time-timers.toml"),
    ),
    ("expiring", include_str!("../../scenarios/expiring.toml")),
    (
        "failing-task",
        include_str!("../../scenarios/failing-task.toml"),
    ),
    ("faults", include_str!("../../scenarios/faults.toml")),
    (
        "file-merging",
        include_str!("../../scenarios/file-merging.toml"),
    ),
    (
        "finishing-backpressure",
        include_str!("../../scenarios/finishing-backpressure.toml"),
    ),
    (
        "finishing-sources",
        include_str!("../../scenarios/finishing-sources.toml"),
    ),
    ("flip27", include_str!("../../scenarios/flip27.toml")),
    (
        "flip27-regions",
        include_str!("../../scenarios/flip27-regions.toml"),
    ),
    (
        "flip27-split-loss",
        include_str!("../../scenarios/flip27-split-loss.toml"),
    ),
    (
        "flip27-timing",
        include_str!("../../scenarios/flip27-timing.toml"),
    ),
    (
        "incremental",
        include_str!("../../scenarios/incremental.toml"),
    ),
    ("iterate", include_str!("../../scenarios/iterate.toml")),
    (
        "iterate-finishing",
        include_str!("../../scenarios/iterate-finishing.toml"),
    ),
    (
        "local-channels",
        include_str!("../../scenarios/local-channels.toml"),
    ),
    ("log", include_str!("../../scenarios/log.toml")),
    (
        "log-broker",
        include_str!("../../scenarios/log-broker.toml"),
    ),
    ("log-chain", include_str!("../../scenarios/log-chain.toml")),
    (
        "log-coordinator",
        include_str!("../../scenarios/log-coordinator.toml"),
    ),
    (
        "log-offsets",
        include_str!("../../scenarios/log-offsets.toml"),
    ),
    (
        "log-pooling",
        include_str!("../../scenarios/log-pooling.toml"),
    ),
    (
        "log-rescale",
        include_str!("../../scenarios/log-rescale.toml"),
    ),
    (
        "log-timeout",
        include_str!("../../scenarios/log-timeout.toml"),
    ),
    (
        "operator-state",
        include_str!("../../scenarios/operator-state.toml"),
    ),
    (
        "record-bytes",
        include_str!("../../scenarios/record-bytes.toml"),
    ),
    (
        "recovery-checkpoints",
        include_str!("../../scenarios/recovery-checkpoints.toml"),
    ),
    ("rescale", include_str!("../../scenarios/rescale.toml")),
    (
        "savepoints",
        include_str!("../../scenarios/savepoints.toml"),
    ),
    ("sink-v2", include_str!("../../scenarios/sink-v2.toml")),
    (
        "sink-v2-global",
        include_str!("../../scenarios/sink-v2-global.toml"),
    ),
    (
        "state-backends",
        include_str!("../../scenarios/state-backends.toml"),
    ),
    ("stop", include_str!("../../scenarios/stop.toml")),
    (
        "throughput",
        include_str!("../../scenarios/throughput.toml"),
    ),
    ("timeouts", include_str!("../../scenarios/timeouts.toml")),
    ("tiny", include_str!("../../scenarios/tiny.toml")),
    ("uneven", include_str!("../../scenarios/uneven.toml")),
    ("upsert", include_str!("../../scenarios/upsert.toml")),
    ("windows", include_str!("../../scenarios/windows.toml")),
    ("wordcount", include_str!("../../scenarios/wordcount.toml")),
];

/// The text of the shipped scenario `name`.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
