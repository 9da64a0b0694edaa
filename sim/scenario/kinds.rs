//! The operator kinds' own checks (the `check` hooks of `schema::operators!`):
//! what relates one kind's keys to each other.

use super::schema::{self, Operator};
use super::validate::{help, Validator};
use super::{OperatorKind, SplitAssignment, MAX_BYTES};
use crate::engine::bytes_text;

/// A source's own check: `record_size_max` (by default `record_size`) is
/// at least `record_size`; `partitions` default to the parallelism.
pub(super) fn source(
    v: &mut Validator,
    op: &Operator,
    kind: OperatorKind,
    parallelism: Option<u32>,
) -> OperatorKind {
    let OperatorKind::Source(mut src) = kind else {
        return kind;
    };
    let max = op
        .record_size_max
        .and_then(|m| v.bytes("record_size_max", Some(m), 0, MAX_BYTES));
    let (lo, valid) = (src.record_size, v.clean(&["record_size"]));
    if let (Some(hi), true) = (max, valid) {
        if hi < lo {
            let message = format!(
                "record_size_max ({}) must be at least record_size ({})",
                bytes_text(hi),
                bytes_text(lo)
            );
            v.report("record_size_max", message, None);
        }
    }
    src.record_size_max = max.unwrap_or(lo).max(lo);
    let partitions = i64::from(parallelism.unwrap_or(1));
    src.partitions = v.int("partitions", op.partitions, partitions);
    src.initial_splits = v.int(
        "initial_splits",
        op.initial_splits,
        i64::from(src.partitions),
    );
    enumerator_keys(v, op, &src);
    src.initial_splits = src.initial_splits.min(src.partitions);
    let bound = super::schema::Duration(src.out_of_orderness);
    src.watermark_bound = v.dur("watermark_bound", op.watermark_bound.flatten(), bound);
    event_time_in_milliseconds(v, &src, op.watermark_bound.flatten().is_some());
    if src.idle_timeout.nanos() > 0
        && src.watermark_interval.nanos() == 0
        && v.clean(&["idle_timeout"])
    {
        let message = "idle_timeout needs watermark_interval: idleness is found at the periodic watermark emits".to_string();
        let help =
            "set watermark_interval (e.g. \"200ms\", Flink's default), or remove idle_timeout";
        v.report("idle_timeout", message, Some(help.to_string()));
    }
    alignment(v, &src);
    // One length and one rate per partition, in place of
    // records_per_partition and records_per_second.
    let partitions = src.partitions as usize;
    if let Some(list) = &op.partition_records {
        let each = PerPartition {
            list: "partition_records",
            single: "records_per_partition",
            what: ("length", "lengths"),
            range: 1..=i64::MAX,
        };
        src.partition_records = each.check(v, list, partitions);
    }
    if let Some(list) = &op.partition_rates {
        let each = PerPartition {
            list: "partition_rates",
            single: "records_per_second",
            what: ("rate (0: no limit)", "rates"),
            range: 0..=MAX_RATE,
        };
        src.partition_rates = each.check(v, list, partitions);
    }
    OperatorKind::Source(src)
}

/// The keys of a FLIP-27 source's enumerator: meaningless on a static
/// source, and consistent with each other on an enumerated one.
fn enumerator_keys(v: &mut Validator, op: &Operator, src: &super::SourceSpec) {
    if src.split_assignment == SplitAssignment::Static {
        // A static source has no enumerator: only the values a written
        // scenario holds for it (all splits known, the default period).
        let default_period = schema::DISCOVERY_INTERVAL;
        for (key, meaningful) in [
            (
                "initial_splits",
                op.initial_splits.is_some() && src.initial_splits != src.partitions,
            ),
            (
                "discovery_interval",
                op.discovery_interval.is_some_and(|d| d != default_period),
            ),
            ("push_splits", src.push_splits),
            (
                "no_more_splits_at_assignment",
                src.no_more_splits_at_assignment,
            ),
        ] {
            if meaningful {
                let help = "set split_assignment = \"enumerator\" for a FLIP-27 source";
                let message = format!("{key} needs split_assignment = \"enumerator\"");
                v.report(key, message, Some(help.to_string()));
            }
        }
    } else if op.initial_splits.is_some()
        && src.initial_splits > src.partitions
        && v.clean(&["partitions", "initial_splits"])
    {
        let message = format!(
            "initial_splits ({}) must be at most partitions ({})",
            src.initial_splits, src.partitions
        );
        v.report("initial_splits", message, None);
    }
    if src.no_more_splits_at_assignment
        && !src.push_splits
        && src.split_assignment != SplitAssignment::Static
        && v.clean(&["no_more_splits_at_assignment"])
    {
        let message = "no_more_splits_at_assignment needs push_splits = true".to_string();
        let help = "a reader that asks for its splits hears the end when it asks";
        v.report(
            "no_more_splits_at_assignment",
            message,
            Some(help.to_string()),
        );
    }
}

/// Watermark alignment's keys: a group needs a FLIP-27 source (its
/// coordinator aggregates the group's watermarks), watermarks and a drift;
/// the drift and the interval mean nothing without a group.
fn alignment(v: &mut Validator, src: &super::SourceSpec) {
    // A written scenario holds every key: only values that mean something
    // are refused.
    let keys = [
        ("alignment_max_drift", src.alignment_max_drift.nanos() > 0),
        (
            "alignment_update_interval",
            src.alignment_update_interval.nanos() != 1_000_000_000,
        ),
    ];
    if src.alignment_group.is_empty() {
        for (key, meaningful) in keys {
            if meaningful && v.clean(&[key]) {
                let message = format!("{key} needs alignment_group");
                let help = "name the sources' alignment group (alignment_group = \"g\"), or remove the key";
                v.report(key, message, Some(help.to_string()));
            }
        }
        return;
    }
    let needs = [
        (
            src.split_assignment == SplitAssignment::Static,
            "alignment_group needs split_assignment = \"enumerator\": a FLIP-27 source's coordinator aggregates the group's watermarks",
            "set split_assignment = \"enumerator\"",
        ),
        (
            src.watermark_interval.nanos() == 0,
            "alignment_group needs watermark_interval: a source without watermarks has nothing to align",
            "set watermark_interval (e.g. \"200ms\", Flink's default)",
        ),
        (
            src.alignment_max_drift.nanos() == 0,
            "alignment_group needs alignment_max_drift greater than zero",
            "set alignment_max_drift (e.g. \"50ms\")",
        ),
    ];
    for (missing, message, help) in needs {
        if missing && v.clean(&["alignment_group"]) {
            v.report(
                "alignment_group",
                message.to_string(),
                Some(help.to_string()),
            );
        }
    }
}

/// Event time is in milliseconds, as Flink's timestamps: a source's
/// event-time durations are whole milliseconds.
fn event_time_in_milliseconds(v: &mut Validator, src: &super::SourceSpec, bound_written: bool) {
    // An unwritten bound is `out_of_orderness`: one error is enough.
    let bound = bound_written.then_some(("watermark_bound", src.watermark_bound));
    for (key, d) in [
        ("event_time_step", src.event_time_step),
        ("out_of_orderness", src.out_of_orderness),
        ("partition_skew", src.partition_skew),
        ("watermark_interval", src.watermark_interval),
        ("alignment_max_drift", src.alignment_max_drift),
        ("alignment_update_interval", src.alignment_update_interval),
    ]
    .into_iter()
    .chain(bound)
    {
        if !d.nanos().is_multiple_of(1_000_000) && v.clean(&[key]) {
            let message = format!(
                "{key} ({}) is not a whole number of milliseconds",
                d.readable()
            );
            let help = "event time is in milliseconds, as Flink's timestamps are";
            v.report(key, message, Some(help.to_string()));
        }
    }
}

/// A source key that lists one value per partition (`list`), in place of
/// the one for all (`single`).
struct PerPartition {
    list: &'static str,
    single: &'static str,
    /// "length", "lengths".
    what: (&'static str, &'static str),
    range: std::ops::RangeInclusive<i64>,
}

impl PerPartition {
    fn check(&self, v: &mut Validator, list: &[i64], partitions: usize) -> Vec<u64> {
        let (key, single) = (self.list, self.single);
        if v.written(single) {
            let message = format!("{single} and {key} cannot both be given");
            let noun = self.what.0.split(' ').next().unwrap_or(self.what.0);
            let help = format!("{key} gives every partition its own {noun}: remove {single}");
            v.report(key, message, Some(help));
        }
        if list.len() != partitions && v.clean(&["partitions"]) {
            let message = format!(
                "{key} lists {} {} for {partitions} partitions",
                list.len(),
                self.what.1
            );
            let help = format!("one {} per partition", self.what.0);
            v.report(key, message, super::validate::help(&help));
        }
        let range = Some(self.range.clone());
        let each = list.iter().enumerate();
        each.filter_map(|(i, &n)| v.checked::<u64>(&format!("{key}[{i}]"), n, range.clone()))
            .collect()
    }
}

/// The largest rate of a partition: a record per nanosecond.
const MAX_RATE: i64 = 1_000_000_000;

/// A filter's own check: a written `keep_below` is at most `modulus`.
pub(super) fn filter(
    v: &mut Validator,
    op: &Operator,
    kind: OperatorKind,
    _: Option<u32>,
) -> OperatorKind {
    if let OperatorKind::Filter {
        modulus: m,
        keep_below: k,
    } = kind
    {
        if op.keep_below.is_some() && k > m && v.clean(&["modulus", "keep_below"]) {
            v.report(
                "keep_below",
                format!("keep_below ({k}) must be at most modulus ({m})"),
                Some(format!(
                    "the filter keeps records with key % {m} < keep_below; \
                     keep_below = {m} already keeps every record"
                )),
            );
        }
    }
    kind
}

/// A log sink's own check: partitions and batch in range.
pub(super) fn sink_log(
    v: &mut Validator,
    _: &Operator,
    kind: OperatorKind,
    _: Option<u32>,
) -> OperatorKind {
    if let OperatorKind::SinkLog {
        topic_partitions,
        producer_batch,
        delivery_timeout,
        request_timeout,
        commit_retries,
        ..
    } = kind
    {
        let (partitions, batch) = (topic_partitions, producer_batch);
        v.checked::<u64>("topic_partitions", i64::from(partitions), Some(1..=1024));
        v.checked::<u64>("producer_batch", i64::from(batch), Some(1..=100_000));
        v.checked::<u64>("commit_retries", i64::from(commit_retries), Some(0..=1000));
        if delivery_timeout < request_timeout {
            // Kafka's producer refuses such a configuration.
            let message = format!(
                "delivery_timeout ({delivery_timeout}) must be at least request_timeout ({request_timeout})"
            );
            v.report("delivery_timeout", message, None);
        }
    }
    kind
}

/// A log source's own check: its topic is named (that it names a
/// `sink-log` is a rule of the job, `log_source.rs`).
pub(super) fn source_log(
    _: &mut Validator,
    _: &Operator,
    kind: OperatorKind,
    _: Option<u32>,
) -> OperatorKind {
    kind
}

/// A registered kind: its `params` (an empty table when absent) checked by
/// the kind, each problem at the key it names.
pub(super) fn custom(
    v: &mut Validator,
    info: &'static crate::scenario::registry::KindInfo,
    params: Option<toml::Table>,
) -> OperatorKind {
    let params = params.unwrap_or_default();
    if let Err(problems) = (info.check)(&params) {
        for p in problems {
            let key = match &p.key {
                Some(k) if params.contains_key(k) => format!("params.{k}"),
                _ => "params".to_string(),
            };
            v.report(&key, p.message, None);
        }
    }
    OperatorKind::Custom(schema::CustomOperator { info, params })
}

/// An event-time window's own check: `window_slide` defaults to
/// `window_size`; a `session_gap` excludes both; every duration is whole
/// milliseconds.
pub(super) fn event_time_window(
    v: &mut Validator,
    op: &Operator,
    kind: OperatorKind,
    _: Option<u32>,
) -> OperatorKind {
    let OperatorKind::EventTimeWindow {
        window_size: size,
        allowed_lateness,
        session_gap,
        ..
    } = kind
    else {
        return kind;
    };
    let slide = match op.window_slide.flatten() {
        Some(d) if d.0 == crate::engine::SimDuration::ZERO => {
            v.report("window_slide", "window_slide must be greater than 0", None);
            size
        }
        d => v.dur("window_slide", d, super::schema::Duration(size)),
    };
    if session_gap > crate::engine::SimDuration::ZERO {
        for (key, set) in [
            ("window_size", op.window_size.is_some()),
            ("window_slide", op.window_slide.is_some()),
        ] {
            if set {
                let message = format!("{key} does not apply to session windows (session_gap)");
                v.report(key, message, help("remove it, or session_gap"));
            }
        }
    }
    for (key, d) in [
        ("window_size", size),
        ("window_slide", slide),
        ("allowed_lateness", allowed_lateness),
        ("session_gap", session_gap),
    ] {
        whole_ms(v, key, d);
    }
    OperatorKind::EventTimeWindow {
        window_size: size,
        window_slide: slide,
        allowed_lateness,
        session_gap,
    }
}

/// A keyed process function's own check: its delays are whole
/// milliseconds.
pub(super) fn keyed_process(
    v: &mut Validator,
    _: &Operator,
    kind: OperatorKind,
    _: Option<u32>,
) -> OperatorKind {
    if let OperatorKind::KeyedProcess {
        timer_delay,
        processing_delay,
    } = kind
    {
        whole_ms(v, "timer_delay", timer_delay);
        whole_ms(v, "processing_delay", processing_delay);
    }
    kind
}

/// Event time and timers are in milliseconds, as Flink's are.
fn whole_ms(v: &mut Validator, key: &str, d: crate::engine::SimDuration) {
    if !d.nanos().is_multiple_of(1_000_000) && v.clean(&[key]) {
        let message = format!(
            "{key} ({}) is not a whole number of milliseconds",
            d.readable()
        );
        v.report(
            key,
            message,
            Some("event time is in milliseconds, as Flink's timestamps are".into()),
        );
    }
}
