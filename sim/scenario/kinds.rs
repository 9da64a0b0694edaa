//! The operator kinds' own checks (the `check` hooks of `schema::operators!`):
//! what relates one kind's keys to each other.

use super::schema::{self, Operator};
use super::validate::Validator;
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
    src.initial_splits = src.initial_splits.min(src.partitions);
    // One length per partition, in place of records_per_partition.
    if let Some(list) = &op.partition_records {
        if v.written("records_per_partition") {
            let message = "records_per_partition and partition_records cannot both be given";
            let help = "partition_records gives every partition its own length: remove records_per_partition";
            v.report("partition_records", message, Some(help.to_string()));
        }
        if list.len() != src.partitions as usize && v.clean(&["partitions"]) {
            let message = format!(
                "partition_records lists {} lengths for {} partitions",
                list.len(),
                src.partitions
            );
            v.report(
                "partition_records",
                message,
                super::validate::help("one length per partition"),
            );
        }
        src.partition_records = list
            .iter()
            .enumerate()
            .filter_map(|(i, &n)| {
                v.checked::<u64>(&format!("partition_records[{i}]"), n, Some(1..=i64::MAX))
            })
            .collect();
    }
    // One rate per partition, in place of records_per_second.
    if let Some(list) = &op.partition_rates {
        if v.written("records_per_second") {
            let message = "records_per_second and partition_rates cannot both be given";
            let help =
                "partition_rates gives every partition its own rate: remove records_per_second";
            v.report("partition_rates", message, Some(help.to_string()));
        }
        if list.len() != src.partitions as usize && v.clean(&["partitions"]) {
            let message = format!(
                "partition_rates lists {} rates for {} partitions",
                list.len(),
                src.partitions
            );
            v.report(
                "partition_rates",
                message,
                super::validate::help("one rate per partition (0: no limit)"),
            );
        }
        src.partition_rates = list
            .iter()
            .enumerate()
            .filter_map(|(i, &n)| {
                v.checked::<u64>(&format!("partition_rates[{i}]"), n, Some(0..=MAX_RATE))
            })
            .collect();
    }
    OperatorKind::Source(src)
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
