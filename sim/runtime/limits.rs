//! Resource limits of the runs of a process: memory and wall time.
//!
//! A scenario's virtual limits (`[limits] max_events`, `max_time`) are part
//! of the scenario and of its verdict. The limits here are the machine's:
//! `--max-memory` and `--max-wall` set them for every run the command makes
//! (one per seed in a sweep), and they never change what a run does before
//! it ends.
//!
//! - **Memory, up front.** [`estimate`] adds up what a scenario holds
//!   whatever the seed: the records every operator takes in (flat-maps and
//!   broadcast edges multiply them) as the generated input, the network,
//!   the external store and the oracle hold them; the channels and tasks of
//!   the execution graph; the buffers a channel may hold at once; keyed
//!   state. [`check`] refuses a scenario whose estimate is above the limit
//!   (the CLI exits 2 with the breakdown) before anything is allocated.
//! - **Memory, as a run goes.** What grows with the length of a run (the
//!   checkpoint history, the schedule log the oracle replays, a recorded
//!   trace) is counted by the run itself; a run whose estimate plus that
//!   count passes the limit ends with outcome `memory-limit`. Both are
//!   computed from the run's own data, so the same run ends at the same
//!   event on every machine.
//! - **Wall time.** A run that has taken longer than `--max-wall` ends with
//!   outcome `wall-limit`. This is the one outcome that depends on the
//!   machine: such a run is reported as not finished, never as a verdict on
//!   the job, and its replay line runs it to its end.

use crate::model::Record;
use crate::scenario::{Partitioning, Scenario};
use std::sync::atomic::{AtomicU64, Ordering};

/// The memory limit unless `--max-memory` says otherwise: 8 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

static MAX_MEMORY: AtomicU64 = AtomicU64::new(DEFAULT_MAX_MEMORY);
/// Nanoseconds; 0 for none.
static MAX_WALL_NS: AtomicU64 = AtomicU64::new(0);

/// Sets the memory limit of every run from now on.
pub fn set_max_memory(bytes: u64) {
    MAX_MEMORY.store(bytes, Ordering::Relaxed);
}

pub fn max_memory() -> u64 {
    MAX_MEMORY.load(Ordering::Relaxed)
}

/// Sets the wall-time limit of every run from now on (`None`: no limit).
pub fn set_max_wall_ns(ns: Option<u64>) {
    MAX_WALL_NS.store(ns.map_or(0, |n| n.max(1)), Ordering::Relaxed);
}

pub fn max_wall_ns() -> Option<u64> {
    Some(MAX_WALL_NS.load(Ordering::Relaxed)).filter(|&ns| ns > 0)
}

/// A scenario's memory estimate: its parts, by what holds the bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub parts: Vec<(&'static str, u64)>,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .map(|&(_, b)| b)
            .fold(0, u64::saturating_add)
    }
}

/// Bytes per record a run holds for each record an operator takes in: its
/// copy on a channel in the oracle's replay, and one in flight or in an
/// operator's output, twice for what recoveries replay.
const PER_RECORD_IN: u64 = 3 * std::mem::size_of::<Record>() as u64;
/// Bytes per record a sink takes in: the transaction's copy, the committed
/// record, the oracle's expected output and the checker's counts.
const PER_SINK_RECORD: u64 = 4 * 64;
/// Bytes per channel: its sender and receiver state, credits, the oracle's
/// channel.
const PER_CHANNEL: u64 = 1024;
/// Bytes per task (subtask of a chain): its state in the runtime, the
/// operator instances of the run and of the oracle, its schedule log.
const PER_TASK: u64 = 8 * 1024;
/// Bytes per key of keyed state: the entry, its index, the encodings of
/// the retained snapshots, and the oracle's copy.
const PER_KEY: u64 = 160;
/// Records a network buffer allocates room for at most (more grow it).
pub const BUFFER_ROOM: usize = 256;

/// Records into each operator over the whole run, and the keys the sources
/// draw from, following every edge forward (the graph is acyclic).
fn records_into(scenario: &Scenario) -> (Vec<f64>, f64) {
    let ops = &scenario.operators;
    let mut into = vec![0f64; ops.len()];
    let mut out = vec![0f64; ops.len()];
    let mut pending: Vec<usize> = vec![0; ops.len()];
    // Each operator's edges in file order, indexed once (linear in the job).
    let mut from: Vec<Vec<&crate::scenario::EdgeSpec>> = vec![Vec::new(); ops.len()];
    for e in &scenario.edges {
        pending[e.to.0 as usize] += 1;
        from[e.from.0 as usize].push(e);
    }
    let mut ready: Vec<usize> = (0..ops.len()).filter(|&i| pending[i] == 0).collect();
    let mut keys = 0f64;
    while let Some(i) = ready.pop() {
        let op = &ops[i];
        out[i] = match op.kind.source_spec() {
            Some(src) => {
                keys += src.keys as f64;
                src.total_records() as f64
            }
            None => into[i] * f64::from(op.kind.copies_per_record()),
        };
        for e in &from[i] {
            let to = e.to.0 as usize;
            let fan = match e.partitioning {
                Partitioning::Broadcast => f64::from(ops[to].parallelism),
                _ => 1.0,
            };
            into[to] += out[i] * fan;
            pending[to] -= 1;
            if pending[to] == 0 {
                ready.push(to);
            }
        }
    }
    (into, keys)
}

/// The memory a run of `scenario` holds whatever its seed (see the module
/// documentation); each part saturates rather than overflows.
pub fn estimate(scenario: &Scenario) -> Estimate {
    let ops = &scenario.operators;
    let (into, keys) = records_into(scenario);
    let bytes = |x: f64| {
        if x >= u64::MAX as f64 {
            u64::MAX
        } else {
            x as u64
        }
    };
    let records_in: f64 = into.iter().sum();
    let sink_in: f64 = ops
        .iter()
        .zip(&into)
        .filter(|(op, _)| op.kind.is_sink())
        .map(|(_, &n)| n)
        .sum();
    let keyed_in: f64 = ops
        .iter()
        .zip(&into)
        .filter(|(op, _)| op.kind.is_keyed())
        .map(|(_, &n)| n.min(keys))
        .sum();
    let channels: f64 = scenario
        .edges
        .iter()
        .map(|e| {
            let (a, b) = (
                f64::from(ops[e.from.0 as usize].parallelism),
                f64::from(ops[e.to.0 as usize].parallelism),
            );
            match e.partitioning {
                Partitioning::Forward => a,
                _ => a * b,
            }
        })
        .sum();
    let tasks: f64 = ops.iter().map(|op| f64::from(op.parallelism)).sum();
    let n = &scenario.network;
    let room = n.buffer_records.min(BUFFER_ROOM as u32);
    // The most exclusive buffers any channel has (an edge may have its own).
    let credits = scenario
        .edges
        .iter()
        .filter_map(|e| e.buffer_credits)
        .fold(n.buffer_credits, u32::max);
    let buffers_per_channel = 1 + credits + n.output_buffers;
    let record = std::mem::size_of::<Record>() as f64;
    // A channel's open buffer, and what may be in flight on it, at most
    // every record the job moves.
    let buffered = (channels * f64::from(buffers_per_channel) * f64::from(room) * record)
        .min(records_in * record + channels * f64::from(room) * record);
    Estimate {
        parts: vec![
            (
                "generated input",
                bytes(scenario.source_records() as f64 * record),
            ),
            (
                "records in operators and channels",
                bytes(records_in * PER_RECORD_IN as f64),
            ),
            ("records at sinks", bytes(sink_in * PER_SINK_RECORD as f64)),
            ("keyed state", bytes(keyed_in * PER_KEY as f64)),
            ("channels", bytes(channels * PER_CHANNEL as f64)),
            ("network buffers", bytes(buffered)),
            ("tasks", bytes(tasks * PER_TASK as f64)),
        ],
    }
}

/// What a binary unit makes readable: `3.2 GiB`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, scale) in UNITS {
        if bytes >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} B")
}

/// The scenario's estimate if it fits in the memory limit, or why not: the
/// estimate, its largest parts, and what to change.
pub fn check(scenario: &Scenario) -> Result<Estimate, String> {
    let est = estimate(scenario);
    let limit = max_memory();
    if est.total() <= limit {
        return Ok(est);
    }
    let mut parts = est.parts.clone();
    parts.sort_by_key(|&(_, b)| std::cmp::Reverse(b));
    let largest: Vec<String> = parts
        .iter()
        .take(3)
        .filter(|&&(_, b)| b > 0)
        .map(|&(what, b)| format!("{what} {}", size_text(b)))
        .collect();
    Err(format!(
        "the scenario needs an estimated {} of memory, above the limit of {} (largest parts: {}); \
         reduce records, copies or parallelism, or raise the limit with --max-memory",
        size_text(est.total()),
        size_text(limit),
        largest.join(", ")
    ))
}
