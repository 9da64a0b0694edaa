//! Flink's configuration keys in a scenario file: a `[flink]` table whose
//! keys are Flink's own (`execution.checkpointing.interval = "10 s"`, as
//! dotted TOML keys or quoted), with values in Flink's formats (durations
//! such as `"10 s"`, `"500 ms"`, `"1 min"` or a bare number of
//! milliseconds; sizes such as `"32 kb"`; booleans; Flink's enum names).
//! [`translate`] rewrites each into the ckptsim key it stands for before
//! the file is read, so a file written with Flink's keys is the file
//! written with ckptsim's, and validation, defaults and fingerprints are
//! the same. [`ALIASES`] is the one table of counterparts (docs/scenarios.md
//! is generated from it); [`NO_COUNTERPART`] names Flink keys a user may
//! reach for that ckptsim has no equivalent of, and why.
//!
//! Why one `[flink]` table rather than Flink's keys inside `[checkpoint]`,
//! `[network]` and `[faults]`: Flink's names do not follow ckptsim's tables
//! (`restart-strategy.*` is `[faults]` and `[faults.restart]`,
//! `execution.buffer-timeout.interval` is `[network]`, three checkpointing
//! keys together choose one `algorithm`), so a Flink engineer can paste a
//! block of `config.yaml` keys into one place without knowing where
//! ckptsim keeps each. A key set both ways is refused: one file has one
//! meaning. This module never reads a value of ckptsim's own format: it
//! only turns Flink's into it, and reads untrusted text (it must never
//! panic).

use std::ops::Range;
use toml_edit::{Item, TableLike, Value};

use crate::engine::{duration_text, SimDuration};

/// How a Flink value becomes the ckptsim value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// Flink's `Duration` (`"10 s"`, `"1 min"`, a number of milliseconds)
    /// → ckptsim's duration text.
    Duration,
    /// An integer (or its text) → an integer.
    Int,
    /// A boolean (or `"true"`/`"false"`) → a boolean.
    Bool,
    /// Flink's `MemorySize` (`"32 kb"`, `"1 mb"`, bytes; binary units) →
    /// a number of bytes.
    Size,
    /// A number → a float.
    Float,
    /// One of Flink's names (any case) → ckptsim's value, given as a TOML
    /// literal.
    Names(&'static [(&'static str, &'static str)]),
}

/// A Flink configuration key with a ckptsim counterpart.
#[derive(Clone, Copy, Debug)]
pub struct Alias {
    /// The key as Flink 2.x spells it.
    pub flink: &'static str,
    /// The ckptsim key path it sets (`checkpoint.interval`).
    pub native: &'static str,
    pub conv: Conv,
    /// `restart-strategy.*`: the restart strategy the key belongs to (a key
    /// of another strategy than `restart-strategy.type` is refused, as
    /// Flink ignores it and `[faults.restart]` refuses it).
    pub strategy: Option<&'static str>,
    /// Where the meanings differ, how (empty: the same).
    pub note: &'static str,
}

const fn alias(flink: &'static str, native: &'static str, conv: Conv) -> Alias {
    Alias {
        flink,
        native,
        conv,
        strategy: None,
        note: "",
    }
}

const fn restart(
    strategy: &'static str,
    flink: &'static str,
    native: &'static str,
    conv: Conv,
) -> Alias {
    Alias {
        flink,
        native,
        conv,
        strategy: Some(strategy),
        note: "",
    }
}

const fn noted(a: Alias, note: &'static str) -> Alias {
    Alias { note, ..a }
}

/// `checkpoint.algorithm`, chosen by three of Flink's keys together
/// ([`algorithm`]).
const MODE: &str = "execution.checkpointing.mode";
const UNALIGNED: &str = "execution.checkpointing.unaligned.enabled";
const ALIGNED_TIMEOUT: &str = "execution.checkpointing.aligned-checkpoint-timeout";
const RESTART_TYPE: &str = "restart-strategy.type";

/// Every Flink key with a ckptsim counterpart, in the order of the docs.
pub const ALIASES: &[Alias] = &[
    alias("execution.checkpointing.interval", "checkpoint.interval", Conv::Duration),
    alias("execution.checkpointing.timeout", "checkpoint.timeout", Conv::Duration),
    alias("execution.checkpointing.min-pause", "checkpoint.min_pause", Conv::Duration),
    alias(
        "execution.checkpointing.max-concurrent-checkpoints",
        "checkpoint.max_concurrent",
        Conv::Int,
    ),
    noted(
        alias(MODE, "checkpoint.algorithm", Conv::Names(&[("EXACTLY_ONCE", "\"aligned\""), ("AT_LEAST_ONCE", "\"at-least-once\"")])),
        "with `unaligned.enabled` and `aligned-checkpoint-timeout`: `AT_LEAST_ONCE` is `at-least-once`; otherwise `aligned`, `unaligned`, or `aligned-timeout` when unaligned checkpoints are enabled with an aligned-checkpoint timeout above 0",
    ),
    noted(
        alias(UNALIGNED, "checkpoint.algorithm", Conv::Bool),
        "`true` is `unaligned` (`aligned-timeout` with an aligned-checkpoint timeout above 0), `false` is `aligned`",
    ),
    alias(ALIGNED_TIMEOUT, "checkpoint.alignment_timeout", Conv::Duration),
    alias(
        "execution.checkpointing.tolerable-failed-checkpoints",
        "checkpoint.tolerable_failures",
        Conv::Int,
    ),
    alias("execution.checkpointing.num-retained", "checkpoint.retained", Conv::Int),
    noted(
        alias(
            "execution.checkpointing.externalized-checkpoint-retention",
            "checkpoint.retain_on_cancel",
            Conv::Names(&[
                ("RETAIN_ON_CANCELLATION", "true"),
                ("DELETE_ON_CANCELLATION", "false"),
                ("NO_EXTERNALIZED_CHECKPOINTS", "false"),
            ]),
        ),
        "`RETAIN_ON_CANCELLATION` is `true`, the others `false`",
    ),
    noted(
        alias(
            "execution.checkpointing.storage",
            "checkpoint.storage",
            Conv::Names(&[("jobmanager", "\"memory\""), ("filesystem", "\"filesystem\"")]),
        ),
        "`jobmanager` is `memory`",
    ),
    alias(
        "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file",
        "checkpoint.max_subtasks_per_channel_state_file",
        Conv::Int,
    ),
    alias(
        "execution.checkpointing.during-recovery.enabled",
        "checkpoint.during_recovery",
        Conv::Bool,
    ),
    alias(
        "execution.checkpointing.file-merging.enabled",
        "checkpoint.file_merging",
        Conv::Bool,
    ),
    alias(
        "execution.checkpointing.file-merging.across-checkpoint-boundary",
        "checkpoint.file_merging_across_checkpoints",
        Conv::Bool,
    ),
    alias(
        "execution.checkpointing.file-merging.max-file-size",
        "checkpoint.file_merging_max_file_size",
        Conv::Size,
    ),
    alias(
        "taskmanager.network.memory.buffers-per-channel",
        "network.buffer_credits",
        Conv::Int,
    ),
    alias(
        "taskmanager.network.memory.floating-buffers-per-gate",
        "network.floating_buffers",
        Conv::Int,
    ),
    noted(
        alias(
            "taskmanager.network.memory.max-buffers-per-channel",
            "network.output_buffers",
            Conv::Int,
        ),
        "approximate: the buffers a sender queues per output channel before it backpressures",
    ),
    alias("taskmanager.memory.segment-size", "network.buffer_size", Conv::Size),
    noted(
        alias("execution.buffer-timeout.interval", "network.flush_timeout", Conv::Duration),
        "must be above 0 (Flink's 0, flush after every record, has no counterpart)",
    ),
    alias("pipeline.max-parallelism", "max_parallelism", Conv::Int),
    alias("pipeline.operator-chaining.enabled", "operator_chaining", Conv::Bool),
    alias(
        "jobmanager.execution.failover-strategy",
        "faults.failover",
        Conv::Names(&[("full", "\"full\""), ("region", "\"region\"")]),
    ),
    noted(
        alias("heartbeat.timeout", "faults.detection_delay", Conv::Duration),
        "approximate: the time from a crash until it is noticed",
    ),
    noted(
        alias(
            RESTART_TYPE,
            "faults.restart.strategy",
            Conv::Names(&[
                ("fixed-delay", "\"fixed-delay\""),
                ("fixeddelay", "\"fixed-delay\""),
                ("exponential-delay", "\"exponential-delay\""),
                ("exponentialdelay", "\"exponential-delay\""),
                ("failure-rate", "\"failure-rate\""),
                ("failurerate", "\"failure-rate\""),
                ("none", "\"fixed-delay\""),
                ("off", "\"fixed-delay\""),
                ("disable", "\"fixed-delay\""),
            ]),
        ),
        "`none` (`off`, `disable`) is `fixed-delay` with `faults.max_restarts = 0`",
    ),
    restart("fixed-delay", "restart-strategy.fixed-delay.attempts", "faults.max_restarts", Conv::Int),
    restart("fixed-delay", "restart-strategy.fixed-delay.delay", "faults.restart_delay", Conv::Duration),
    restart(
        "exponential-delay",
        "restart-strategy.exponential-delay.initial-backoff",
        "faults.restart_delay",
        Conv::Duration,
    ),
    restart(
        "exponential-delay",
        "restart-strategy.exponential-delay.max-backoff",
        "faults.restart.max_backoff",
        Conv::Duration,
    ),
    restart(
        "exponential-delay",
        "restart-strategy.exponential-delay.backoff-multiplier",
        "faults.restart.backoff_multiplier",
        Conv::Float,
    ),
    restart(
        "exponential-delay",
        "restart-strategy.exponential-delay.reset-backoff-threshold",
        "faults.restart.reset_threshold",
        Conv::Duration,
    ),
    restart(
        "exponential-delay",
        "restart-strategy.exponential-delay.attempts-before-reset-backoff",
        "faults.max_restarts",
        Conv::Int,
    ),
    restart(
        "failure-rate",
        "restart-strategy.failure-rate.max-failures-per-interval",
        "faults.restart.max_failures",
        Conv::Int,
    ),
    restart(
        "failure-rate",
        "restart-strategy.failure-rate.failure-rate-interval",
        "faults.restart.interval",
        Conv::Duration,
    ),
    restart("failure-rate", "restart-strategy.failure-rate.delay", "faults.restart_delay", Conv::Duration),
];

/// Flink keys with no counterpart in ckptsim, and why.
pub const NO_COUNTERPART: &[(&str, &str)] = &[
    (
        "parallelism.default",
        "each [[operators]] entry sets its own `parallelism`",
    ),
    (
        "restart-strategy.exponential-delay.jitter-factor",
        "ckptsim's exponential backoff has no jitter",
    ),
    (
        "execution.checkpointing.dir",
        "a run keeps its checkpoints in memory; `run --checkpoint-dir DIR` writes one",
    ),
    (
        "execution.checkpointing.savepoint-dir",
        "`savepoint --out DIR` names where a savepoint goes",
    ),
    (
        "execution.checkpointing.incremental",
        "every snapshot is full",
    ),
    (
        "state.backend.type",
        "state lives in the simulated heap; `checkpoint.storage` chooses where snapshots go",
    ),
    (
        "execution.buffer-timeout.enabled",
        "a partly filled buffer always ships after `network.flush_timeout`",
    ),
    (
        "taskmanager.network.memory.buffer-debloat.enabled",
        "buffers are not debloated",
    ),
];

/// The first segments of Flink's keys: a top-level key of the file named
/// so was meant for `[flink]`.
pub const FLINK_ROOTS: &[&str] = &[
    "execution",
    "restart-strategy",
    "taskmanager",
    "pipeline",
    "parallelism",
    "jobmanager",
    "heartbeat",
    "state",
];

/// A problem of the `[flink]` table: where (a byte span of the text),
/// the message and its help.
pub type Problem = (Option<Range<usize>>, String, Option<String>);

/// A ckptsim key set from a Flink key: its path, the span of the Flink
/// value, and the Flink key.
pub type Set = (String, Option<Range<usize>>, &'static str);

/// A ckptsim key to set: the alias, the value in ckptsim's form, and the
/// span of the Flink value.
type Setting = (Alias, Value, Option<Range<usize>>);

/// Takes the `[flink]` table out of `table` (the document about to be
/// read) and writes each of its keys as the ckptsim key it stands for.
/// `original` is the document as parsed (its spans place the problems);
/// `native_line` gives the line of a ckptsim key the file sets, for a key
/// set both ways. Returns the keys set, or every problem.
pub fn translate(
    table: &mut toml_edit::Table,
    original: &toml_edit::Table,
    native_line: &dyn Fn(&str) -> Option<usize>,
) -> Result<Vec<Set>, Vec<Problem>> {
    let Some(item) = original.get("flink") else {
        return Ok(Vec::new());
    };
    table.remove("flink");
    let mut given = Vec::new();
    let mut problems = Vec::new();
    match item {
        Item::Table(t) => flatten("", t, &mut given, &mut problems),
        Item::Value(Value::InlineTable(t)) => flatten("", t, &mut given, &mut problems),
        _ => problems.push((
            item.span(),
            "`flink` must be a table of Flink configuration keys".to_string(),
            Some(
                "write them under a [flink] table: execution.checkpointing.interval = \"10 s\""
                    .to_string(),
            ),
        )),
    }
    let mut sets: Vec<Setting> = Vec::new();
    let strategy = restart_strategy(&given);
    for (key, value) in &given {
        let Some(a) = ALIASES.iter().find(|a| a.flink == key) else {
            problems.push(unknown(key, value.span()));
            continue;
        };
        if [MODE, UNALIGNED].contains(&a.flink) {
            continue; // chosen together in `algorithm`
        }
        if let Some(own) = a.strategy.filter(|s| *s != strategy) {
            problems.push((
                value.span(),
                format!("`{key}` belongs to restart-strategy.type `{own}`, and the strategy is `{strategy}`"),
                Some(format!("set restart-strategy.type = \"{own}\", or remove `{key}`")),
            ));
            continue;
        }
        match convert(a.conv, value) {
            Ok(v) => sets.push((*a, v, value.span())),
            Err(why) => problems.push((value.span(), format!("{key}: {why}"), None)),
        }
    }
    match algorithm(&given) {
        Ok(Some((a, v, span))) => sets.push((a, v, span)),
        Ok(None) => {}
        Err(p) => problems.push(p),
    }
    if ["none", "off", "disable"].contains(&strategy) {
        let (_, v) = given
            .iter()
            .find(|(k, _)| k == RESTART_TYPE)
            .expect("strategy given");
        let no_restarts = noted(alias(RESTART_TYPE, "faults.max_restarts", Conv::Int), "");
        sets.push((no_restarts, Value::from(0i64), v.span()));
    }
    let mut written = Vec::new();
    for (a, value, span) in sets {
        if let Some(line) = native_line(a.native) {
            problems.push((
                span,
                format!(
                    "`{}` is `{}` written Flink's way, and the file sets `{}` too (line {line})",
                    a.flink, a.native, a.native
                ),
                Some("keep one of the two".to_string()),
            ));
            continue;
        }
        if written.iter().any(|(n, _, _): &Set| n == a.native) {
            problems.push((
                span,
                format!(
                    "`{}` sets `{}`, which another Flink key of [flink] sets too",
                    a.flink, a.native
                ),
                Some("keep one of the two".to_string()),
            ));
            continue;
        }
        insert(table, a.native, value);
        written.push((a.native.to_string(), span, a.flink));
    }
    match problems.is_empty() {
        true => Ok(written),
        false => Err(problems),
    }
}

/// The leaves of `[flink]`, by their dotted names (`a.b = 1` and
/// `"a.b" = 1` are the same key).
fn flatten(
    prefix: &str,
    table: &dyn TableLike,
    out: &mut Vec<(String, Value)>,
    problems: &mut Vec<Problem>,
) {
    for (key, item) in table.iter() {
        let name = match prefix {
            "" => key.to_string(),
            _ => format!("{prefix}.{key}"),
        };
        match item {
            Item::Table(t) => flatten(&name, t, out, problems),
            Item::Value(Value::InlineTable(t)) => flatten(&name, t, out, problems),
            Item::Value(v) => out.push((name, v.clone())),
            _ => problems.push((
                None,
                format!("flink.{name}: Flink's keys hold values, not arrays of tables"),
                None,
            )),
        }
    }
}

/// The restart strategy the `[flink]` keys choose (`fixed-delay`, ckptsim's
/// default, without `restart-strategy.type`), in Flink's spelling.
fn restart_strategy(given: &[(String, Value)]) -> &'static str {
    let Some((_, v)) = given.iter().find(|(k, _)| k == RESTART_TYPE) else {
        return "fixed-delay";
    };
    let text = v.as_str().unwrap_or_default().trim().to_ascii_lowercase();
    match text.as_str() {
        "exponential-delay" | "exponentialdelay" => "exponential-delay",
        "failure-rate" | "failurerate" => "failure-rate",
        "none" | "off" | "disable" => "none",
        _ => "fixed-delay",
    }
}

/// `checkpoint.algorithm` from `execution.checkpointing.mode`,
/// `unaligned.enabled` and `aligned-checkpoint-timeout`, as Flink combines
/// them; `None` when neither of the first two is given.
fn algorithm(given: &[(String, Value)]) -> Result<Option<Setting>, Problem> {
    let get = |key: &str| given.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let (mode, unaligned) = (get(MODE), get(UNALIGNED));
    let at_least_once = match mode {
        None => false,
        Some(v) => {
            let a = ALIASES.iter().find(|a| a.flink == MODE).expect("mode");
            let name =
                convert(a.conv, v).map_err(|why| (v.span(), format!("{MODE}: {why}"), None))?;
            name.as_str() == Some("at-least-once")
        }
    };
    let unaligned_on = match unaligned {
        None => None,
        Some(v) => Some(
            convert(Conv::Bool, v)
                .map_err(|why| (v.span(), format!("{UNALIGNED}: {why}"), None))?
                .as_bool()
                .unwrap_or(false),
        ),
    };
    let timeout_above_zero = get(ALIGNED_TIMEOUT)
        .and_then(|v| duration_of(v).ok())
        .is_some_and(|d| d.nanos() > 0);
    let name = match (at_least_once, unaligned_on) {
        (true, Some(true)) => {
            let v = unaligned.expect("given");
            return Err((
                v.span(),
                format!("{UNALIGNED} = true needs {MODE} = \"EXACTLY_ONCE\" (Flink refuses unaligned at-least-once checkpoints)"),
                None,
            ));
        }
        (true, _) => "at-least-once",
        (false, Some(true)) if timeout_above_zero => "aligned-timeout",
        (false, Some(true)) => "unaligned",
        (false, Some(false)) => "aligned",
        (false, None) if mode.is_some() => "aligned",
        (false, None) => return Ok(None),
    };
    let (key, v) = match unaligned {
        Some(v) => (UNALIGNED, v),
        None => (MODE, mode.expect("given")),
    };
    let a = *ALIASES.iter().find(|a| a.flink == key).expect("alias");
    Ok(Some((a, Value::from(name), v.span())))
}

/// `value` in Flink's format as the ckptsim value `conv` gives.
fn convert(conv: Conv, value: &Value) -> Result<Value, String> {
    let text = value.as_str().map(str::trim);
    match conv {
        Conv::Duration => duration_of(value).map(|d| Value::from(duration_text(d))),
        Conv::Int => match (value.as_integer(), text) {
            (Some(n), _) => Ok(Value::from(n)),
            (_, Some(t)) => t
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("expected an integer, not \"{t}\"")),
            _ => Err(format!("expected an integer, not {}", value.type_name())),
        },
        Conv::Bool => match (
            value.as_bool(),
            text.map(str::to_ascii_lowercase).as_deref(),
        ) {
            (Some(b), _) => Ok(Value::from(b)),
            (_, Some("true")) => Ok(Value::from(true)),
            (_, Some("false")) => Ok(Value::from(false)),
            _ => Err(format!("expected true or false, not {}", shown(value))),
        },
        Conv::Size => match (value.as_integer(), text) {
            (Some(n), _) => Ok(Value::from(n)),
            (_, Some(t)) => flink_size(t).map(Value::from),
            _ => Err(format!(
                "expected a size such as \"32 kb\", not {}",
                value.type_name()
            )),
        },
        Conv::Float => match (value.as_float(), value.as_integer(), text) {
            (Some(f), _, _) => Ok(Value::from(f)),
            (_, Some(n), _) => Ok(Value::from(n as f64)),
            (_, _, Some(t)) => t
                .parse::<f64>()
                .map(Value::from)
                .map_err(|_| format!("expected a number, not \"{t}\"")),
            _ => Err(format!("expected a number, not {}", value.type_name())),
        },
        Conv::Names(names) => {
            let t = text.ok_or_else(|| format!("expected a name, not {}", value.type_name()))?;
            let found = names.iter().find(|(n, _)| n.eq_ignore_ascii_case(t));
            let Some((_, literal)) = found else {
                let list: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "unknown value \"{t}\"; Flink's values: {}",
                    list.join(", ")
                ));
            };
            literal.parse::<Value>().map_err(|e| e.to_string())
        }
    }
}

/// A duration value in Flink's format: text, or an integer of milliseconds.
fn duration_of(value: &Value) -> Result<SimDuration, String> {
    match (value.as_integer(), value.as_str()) {
        (Some(ms), _) => flink_duration(&ms.to_string()),
        (_, Some(t)) => flink_duration(t),
        _ => Err(format!(
            "expected a duration such as \"10 s\" or \"500 ms\", not {}",
            value.type_name()
        )),
    }
}

fn shown(value: &Value) -> String {
    match value.as_str() {
        Some(t) => format!("\"{t}\""),
        None => value.to_string().trim().to_string(),
    }
}

/// A duration as Flink's `TimeUtils.parseDuration` reads it: an integer
/// and an optional unit (milliseconds without one).
pub fn flink_duration(text: &str) -> Result<SimDuration, String> {
    let bad = || format!("\"{text}\" is not a duration such as \"10 s\", \"500 ms\" or \"1 min\"");
    let (n, unit) = number_and_unit::<u64>(text).ok_or_else(bad)?;
    let scale: u64 = match unit.as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1_000_000,
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => 1,
        "µs" | "us" | "micro" | "micros" | "microsecond" | "microseconds" => 1_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
        "m" | "min" | "minute" | "minutes" => 60_000_000_000,
        "h" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(scale)
        .map(SimDuration)
        .ok_or_else(|| format!("\"{text}\" is too large a duration"))
}

/// A size as Flink's `MemorySize.parse` reads it: an integer and an
/// optional binary unit (bytes without one).
pub fn flink_size(text: &str) -> Result<i64, String> {
    let bad = || format!("\"{text}\" is not a size such as \"32 kb\" or \"1 mb\"");
    let (n, unit) = number_and_unit::<i64>(text).ok_or_else(bad)?;
    let shift = match unit.as_str() {
        "" | "b" | "bytes" => 0,
        "k" | "kb" | "kibibytes" => 10,
        "m" | "mb" | "mebibytes" => 20,
        "g" | "gb" | "gibibytes" => 30,
        "t" | "tb" | "tebibytes" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("\"{text}\" is too large a size"))
}

/// A value as Flink's `TimeUtils` and `MemorySize` split it: leading
/// digits, then the unit in lower case, trimmed (empty without one).
fn number_and_unit<N: std::str::FromStr>(text: &str) -> Option<(N, String)> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    Some((number.parse().ok()?, unit.trim().to_ascii_lowercase()))
}

/// An unknown key of `[flink]`: a ckptsim key written there, a Flink key
/// with no counterpart, or the closest of both spellings.
fn unknown(key: &str, span: Option<Range<usize>>) -> Problem {
    if let Some((_, why)) = NO_COUNTERPART.iter().find(|(k, _)| *k == key) {
        return (
            span,
            format!("Flink's `{key}` has no counterpart in ckptsim: {why}"),
            None,
        );
    }
    if let Some(a) = ALIASES.iter().find(|a| a.native == key) {
        return (
            span,
            format!("`{key}` is ckptsim's own key, not Flink's"),
            Some(format!(
                "write it as `{}` here, or as `{}` under [{}]",
                a.flink,
                leaf(a.native),
                table_of(a.native)
            )),
        );
    }
    let flink = ALIASES
        .iter()
        .map(|a| a.flink)
        .chain(NO_COUNTERPART.iter().map(|(k, _)| *k));
    let help = match super::super::spans::closest(key, flink) {
        Some(close) => Some(format!("did you mean `{close}`?")),
        None => super::super::spans::closest(key, ALIASES.iter().map(|a| a.native)).map(|close| {
            let a = ALIASES.iter().find(|a| a.native == close).expect("alias");
            format!("did you mean ckptsim's `{close}` (Flink's `{}`)?", a.flink)
        }),
    };
    let help = help.unwrap_or_else(|| {
        "docs/scenarios.md lists the Flink keys ckptsim reads (`[flink]`)".to_string()
    });
    (
        span,
        format!("unknown Flink key `{key}` in [flink]"),
        Some(help),
    )
}

/// `checkpoint.interval` → `interval`.
fn leaf(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(_, k)| k)
}

/// `checkpoint.interval` → `checkpoint`; a top-level key → the top level.
fn table_of(path: &str) -> &str {
    path.rsplit_once('.').map_or("the top level", |(t, _)| t)
}

/// Writes `value` at `path` of `table`, making the tables on the way.
fn insert(table: &mut toml_edit::Table, path: &str, value: Value) {
    let mut here: &mut dyn TableLike = table;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        if segments.peek().is_none() {
            here.insert(segment, Item::Value(value));
            return;
        }
        if here.get(segment).and_then(Item::as_table_like).is_none() {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            here.insert(segment, Item::Table(t));
        }
        match here.get_mut(segment).and_then(Item::as_table_like_mut) {
            Some(t) => here = t,
            None => return,
        }
    }
}

/// The Flink keys that stand for the ckptsim key `native` (for messages
/// and help).
pub fn flink_names(native: &str) -> Vec<&'static str> {
    ALIASES
        .iter()
        .filter(|a| a.native == native)
        .map(|a| a.flink)
        .collect()
}

/// docs/scenarios.md's table of Flink's keys.
pub fn render() -> String {
    let mut out = String::from("| Flink key | ckptsim key | value |\n|---|---|---|\n");
    for a in ALIASES {
        let value = match a.conv {
            Conv::Duration => "duration (`\"10 s\"`, `\"500 ms\"`, `\"1 min\"`, milliseconds)",
            Conv::Int => "integer",
            Conv::Bool => "boolean",
            Conv::Size => "size (`\"32 kb\"`, bytes)",
            Conv::Float => "number",
            Conv::Names(_) => "Flink's names",
        };
        let mut value = value.to_string();
        if let Some(s) = a.strategy {
            value.push_str(&format!("; with restart-strategy.type `{s}`"));
        }
        if !a.note.is_empty() {
            value.push_str(&format!("; {}", a.note));
        }
        out.push_str(&format!("| `{}` | `{}` | {} |\n", a.flink, a.native, value));
    }
    for (key, why) in NO_COUNTERPART {
        out.push_str(&format!("| `{key}` | none | {why} |\n"));
    }
    out
}
