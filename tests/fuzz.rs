//! The fuzzer, on stable Rust: any input file is refused or runs within
//! bounds, and nothing panics, aborts or runs past its time bound.
//!
//! - Generated scenarios (random topologies, workloads, faults and
//!   checkpoint configurations) with values replaced by extremes of any
//!   type, or keys taken out: structure-aware.
//! - The shipped scenarios under byte-level mutation (bit flips, inserted,
//!   deleted and repeated bytes, numbers grown, lines from other files).
//! - Real savepoints (of five scenarios, one with in-flight records) under
//!   byte-level mutation of any file, with the directory signed again half
//!   the time so that the bytes reach the decoders and range checks rather
//!   than the checksums.
//! - Real savepoints with their values replaced by extremes
//!   (structure-aware), written as a writer would.
//!
//! Four inputs in five are drawn mildly, to stay valid mostly, and one in
//! five as above; each property fails if fewer than half of its inputs
//! reached a run ([`Share`]).
//!
//! Each property runs `CKPTSIM_FUZZ_CASES` cases (48 by default); a case
//! that takes longer than `CKPTSIM_FUZZ_SECONDS` (60 by default) fails. For
//! a long run:
//!
//! ```sh
//! CKPTSIM_FUZZ_CASES=20000 cargo test --release fuzz::
//! ```
//!
//! Inputs the fuzzer found are kept under `tests/regressions/fuzz/` and
//! replayed by [`found_inputs_are_refused_or_run`]. `fuzz/` holds the same
//! entry points as `cargo fuzz` targets.

use crate::common::scenario_path;
use ckptsim::fuzz::{self, Outcome};
use ckptsim::savepoint::{write_dir, Image, OperatorState};
use ckptsim::scenario::{Algorithm, Scenario};
use ckptsim::strategies;
use ckptsim::wallclock::Stopwatch;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> Config {
    Config {
        cases: env("CKPTSIM_FUZZ_CASES", 48) as u32,
        failure_persistence: None,
        max_shrink_iters: 500,
        ..Config::default()
    }
}

/// Runs one case within the time bound.
fn bounded(what: &str, f: impl FnOnce() -> Outcome) -> Result<Outcome, TestCaseError> {
    let started = Stopwatch::start();
    let outcome = f();
    let seconds = started.elapsed_ns() as f64 / 1e9;
    if std::env::var_os("CKPTSIM_FUZZ_TRACE").is_some() {
        eprintln!("fuzz-outcome {what} {outcome:?} {seconds:.3}s");
    }
    let limit = env("CKPTSIM_FUZZ_SECONDS", 60);
    if seconds > limit as f64 {
        return Err(TestCaseError::fail(format!(
            "{what}: took {seconds:.1} s, past the bound of {limit} s"
        )));
    }
    Ok(outcome)
}

fn temp(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("ckptsim-fuzz-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// How many of a property's inputs reached a run (a scenario run, a
/// snapshot restored and run). Inputs that are all refused would test the
/// parser alone, so each property keeps at least half of its inputs valid
/// and fails if the share drops below one half.
#[derive(Default)]
struct Share {
    inputs: AtomicU64,
    ran: AtomicU64,
}

impl Share {
    fn count(&self, outcome: &Outcome) {
        self.inputs.fetch_add(1, Ordering::Relaxed);
        if matches!(outcome, Outcome::Ran { .. }) {
            self.ran.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn assert_at_least_half(&self, property: &str) {
        let inputs = self.inputs.load(Ordering::Relaxed);
        let ran = self.ran.load(Ordering::Relaxed);
        assert!(inputs > 0, "{property}: no inputs");
        assert!(
            2 * ran >= inputs,
            "{property}: only {ran} of {inputs} inputs reached a run"
        );
    }
}

/// Runs a property over `strategy` as `proptest!` would (the shrunk input
/// in the panic), then asserts its share of inputs that reached a run.
fn property<S: Strategy>(
    name: &str,
    strategy: S,
    case: impl Fn(S::Value) -> Result<Outcome, TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let share = Share::default();
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let result = runner.run(&strategy, |input| {
        let outcome = case(input)?;
        share.count(&outcome);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    share.assert_at_least_half(name);
}

// ------------------------------------------------------------ scenarios

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    255,
    65_535,
    65_536,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    1 << 40,
    i64::MAX,
    i64::MIN,
];
const TEXTS: &[&str] = &[
    "",
    "0ns",
    "1ns",
    "8760h",
    "8760h1ns",
    "18446744073709551615ns",
    "-1ms",
    "1e300s",
    "NaN",
    "aligned",
    "unaligned",
    "hash",
    "broadcast",
    "union",
    "enumerator",
    "source",
    "sink-2pc",
    "#0",
    "ü",
    "1GiB",
];

const DURATIONS: &[&str] = &[
    "0ns",
    "1ns",
    "1us",
    "1ms",
    "3ms",
    "50ms",
    "1s",
    "8760h",
    "8760h1ns",
    "18446744073709551615ns",
    "18446744073.709551615s",
];

/// Values of every TOML type, extremes first.
fn extreme(i: usize) -> toml_edit::Value {
    let n = INTS.len() + TEXTS.len();
    match i % (n + 6) {
        k if k < INTS.len() => INTS[k].into(),
        k if k < n => TEXTS[k - INTS.len()].into(),
        k => match k - n {
            0 => f64::NAN.into(),
            1 => 1e308.into(),
            2 => true.into(),
            3 => toml_edit::Value::Array(toml_edit::Array::new()),
            4 => toml_edit::Value::InlineTable(toml_edit::InlineTable::new()),
            _ => "x".repeat(10_000).into(),
        },
    }
}

/// Where a table is: each step a key, with an index into an array of
/// tables.
type TablePath = Vec<(String, Option<usize>)>;

/// Every value of a document: (table path, key), arrays of tables
/// included.
fn leaves(doc: &toml_edit::DocumentMut) -> Vec<(TablePath, String)> {
    fn walk(table: &toml_edit::Table, path: &mut TablePath, out: &mut Vec<(TablePath, String)>) {
        for (key, item) in table.iter() {
            match item {
                toml_edit::Item::Table(t) => {
                    path.push((key.to_string(), None));
                    walk(t, path, out);
                    path.pop();
                }
                toml_edit::Item::ArrayOfTables(a) => {
                    for (i, t) in a.iter().enumerate() {
                        path.push((key.to_string(), Some(i)));
                        walk(t, path, out);
                        path.pop();
                    }
                }
                _ => out.push((path.clone(), key.to_string())),
            }
        }
    }
    let mut out = Vec::new();
    walk(doc.as_table(), &mut Vec::new(), &mut out);
    out
}

/// Durations a scenario's timing keys mostly accept.
const MILD_DURATIONS: &[&str] = &["100us", "1ms", "2ms", "5ms", "10ms", "50ms"];

/// A value near `old`, of its type, that mostly keeps the scenario valid:
/// a neighbouring or halved integer, a moderate duration, a flipped flag;
/// names are kept.
fn mild(old: &toml_edit::Value, v: usize) -> toml_edit::Value {
    match old {
        toml_edit::Value::Integer(n) => {
            let n = *n.value();
            [
                n,
                n.saturating_add(1),
                (n / 2).max(1),
                n.saturating_sub(1).max(1),
            ][v % 4]
                .into()
        }
        toml_edit::Value::String(t) if t.value().starts_with(|c: char| c.is_ascii_digit()) => {
            MILD_DURATIONS[v % MILD_DURATIONS.len()].into()
        }
        toml_edit::Value::Boolean(b) => (!*b.value()).into(),
        other => other.clone(),
    }
}

/// `text` with some values replaced by extremes, or taken out; or, unless
/// `hostile`, replaced by values near the old ones ([`mild`]).
fn edit_values(text: &str, edits: &[(usize, usize, bool)], hostile: bool) -> String {
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        return text.to_string();
    };
    for &(at, value, remove) in edits {
        let all = leaves(&doc);
        let Some((path, key)) = all.get(at % all.len().max(1)).cloned() else {
            break;
        };
        let mut table = doc.as_table_mut();
        for (name, index) in &path {
            table = match (table.get_mut(name), index) {
                (Some(toml_edit::Item::Table(t)), None) => t,
                (Some(toml_edit::Item::ArrayOfTables(a)), Some(i)) => match a.get_mut(*i) {
                    Some(t) => t,
                    None => return doc.to_string(),
                },
                _ => return doc.to_string(),
            };
        }
        if !hostile {
            // A parallelism is tied to its neighbours' by forward edges.
            let old = table.get(&key).and_then(|i| i.as_value());
            if let Some(old) = old.filter(|_| key != "parallelism") {
                table[&key] = toml_edit::Item::Value(mild(old, value));
            }
            continue;
        }
        if remove {
            table.remove(&key);
            continue;
        }
        // Mostly a value of the key's own type, so that the edit reaches
        // validation and the run rather than the type check.
        let v = value / 8;
        let new = match (table.get(&key).and_then(|i| i.as_value()), value % 8) {
            (_, 0) => extreme(v),
            (Some(toml_edit::Value::Integer(n)), k) => match k {
                1..=3 => extreme(v % INTS.len()),
                _ => [
                    0,
                    1,
                    n.value() / 2,
                    n.value().saturating_mul(2),
                    n.value().saturating_add(1),
                ][v % 5]
                    .into(),
            },
            (Some(toml_edit::Value::String(t)), _) => {
                let t = t.value();
                match t.starts_with(|c: char| c.is_ascii_digit()) {
                    true => DURATIONS[v % DURATIONS.len()].into(),
                    false => TEXTS[v % TEXTS.len()].into(),
                }
            }
            (Some(toml_edit::Value::Boolean(b)), _) => (!*b.value()).into(),
            _ => extreme(v),
        };
        table[&key] = toml_edit::Item::Value(new);
    }
    doc.to_string()
}

const SHIPPED: &[&str] = &[
    "wordcount",
    "faults",
    "flip27",
    "operator-state",
    "sink-v2",
    "chains",
    "windows",
    "rescale",
    "flip27-regions",
    "backpressure",
];

fn shipped(i: usize) -> String {
    let path = scenario_path(SHIPPED[i % SHIPPED.len()]);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One byte-level mutation: (kind, position, byte, length).
type Mutation = (u8, usize, u8, usize);

fn mutate(bytes: &mut Vec<u8>, m: Mutation, other: &[u8]) {
    let (kind, at, byte, len) = m;
    let n = bytes.len();
    let at = if n == 0 { 0 } else { at % n };
    let len = len % 64 + 1;
    match kind % 7 {
        0 if n > 0 => bytes[at] ^= 1 << (byte % 8),
        1 if n > 0 => bytes[at] = byte,
        2 => bytes.insert(at, byte),
        3 => {
            bytes.drain(at..(at + len).min(n));
        }
        4 => {
            let piece = bytes[at..(at + len).min(n)].to_vec();
            bytes.splice(at..at, piece);
        }
        5 => {
            // A run of digits grown past every integer type.
            if let Some(d) = bytes[at..].iter().position(u8::is_ascii_digit) {
                bytes.splice(at + d..at + d, b"99999999999999999999".iter().copied());
            }
        }
        _ => {
            // A line of another file.
            let lines: Vec<&[u8]> = other.split(|&b| b == b'\n').collect();
            let line = lines[at % lines.len()];
            let start = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            bytes.splice(start..start, line.iter().chain(b"\n").copied());
        }
    }
}

/// One mutation that mostly keeps a scenario valid: the leading digit of a
/// number (`key = 12…`; not the file's version, nor a parallelism, which
/// forward edges tie to their neighbours') set to 1–9, a comment
/// line inserted, or white space added at a line's end.
fn mutate_mildly(bytes: &mut Vec<u8>, m: Mutation) {
    let (kind, at, byte, _) = m;
    let n = bytes.len();
    let at = if n == 0 { 0 } else { at % n };
    let line_start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    match kind % 3 {
        0 => {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return;
            };
            let mut starts = vec![0];
            starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
            let first = starts.iter().rposition(|&s| s <= at).unwrap_or(0);
            let number = (0..starts.len())
                .map(|k| starts[(first + k) % starts.len()])
                .find_map(|s| {
                    let line = text[s..].lines().next()?;
                    let (key, value) = line.split_once('=')?;
                    let digits = value.trim_start();
                    let fixed = ["version", "parallelism"].contains(&key.trim());
                    (!fixed && digits.starts_with(|c: char| c.is_ascii_digit()))
                        .then_some(s + line.len() - digits.len())
                });
            if let Some(i) = number {
                bytes[i] = b'1' + byte % 9;
            }
        }
        1 => {
            bytes.splice(line_start..line_start, b"# a comment\n".iter().copied());
        }
        _ => {
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(n, |p| at + p);
            bytes.splice(end..end, b"  ".iter().copied());
        }
    }
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(
        (any::<u8>(), any::<usize>(), any::<u8>(), any::<usize>()),
        1..4,
    )
}

/// A hostile case's share of a property's inputs: the rest are edited
/// mildly so that most of them reach a run.
const HOSTILE: f64 = 0.2;

#[test]
fn generated_scenarios_with_extreme_values_are_refused_or_run() {
    let edits = prop::collection::vec(
        (any::<usize>(), any::<usize>(), prop::bool::weighted(0.1)),
        1..3,
    );
    // A scenario drawn for its algorithm (any of them), so that it is valid
    // before the edits.
    let generated = (0..Algorithm::all().count())
        .prop_flat_map(|a| strategies::scenario_unrestricted(Algorithm::all().nth(a).unwrap()));
    let strategy = (generated, prop::bool::weighted(HOSTILE), edits);
    property(
        "generated_scenarios_with_extreme_values_are_refused_or_run",
        strategy,
        |(g, hostile, edits)| {
            let text = edit_values(&g.toml, &edits, hostile);
            bounded("generated scenario", || {
                fuzz::scenario_text(text.as_bytes())
            })
        },
    );
}

#[test]
fn shipped_scenarios_under_byte_mutation_are_refused_or_run() {
    let strategy = (
        any::<usize>(),
        any::<usize>(),
        prop::bool::weighted(HOSTILE),
        mutations(),
    );
    property(
        "shipped_scenarios_under_byte_mutation_are_refused_or_run",
        strategy,
        |(file, other, hostile, ms)| {
            let mut bytes = shipped(file).into_bytes();
            let other = shipped(other).into_bytes();
            for m in ms {
                match hostile {
                    true => mutate(&mut bytes, m, &other),
                    false => mutate_mildly(&mut bytes, m),
                }
            }
            bounded("mutated scenario", || fuzz::scenario_text(&bytes))
        },
    );
}

// ------------------------------------------------------------ snapshots

/// A real snapshot directory and the job that took it.
struct Base {
    dir: PathBuf,
    job: Scenario,
}

/// Savepoints of five shipped scenarios ([`fuzz::base_snapshots`]).
fn bases() -> &'static [Base] {
    static BASES: OnceLock<Vec<Base>> = OnceLock::new();
    BASES.get_or_init(|| {
        let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        fuzz::base_snapshots(&scenarios, &temp("bases"))
            .into_iter()
            .map(|(dir, job)| Base { dir, job })
            .collect()
    })
}

/// One structure-aware edit of an image: (field, index, value).
type Craft = (u8, usize, u64);

fn extreme_u64(v: u64) -> u64 {
    const VALUES: &[u64] = &[
        0,
        1,
        2,
        127,
        128,
        65_534,
        65_535,
        65_536,
        u32::MAX as u64,
        1 << 48,
        (1 << 48) + 1,
        i64::MAX as u64,
        u64::MAX,
    ];
    match v % 20 {
        k if (k as usize) < VALUES.len() => VALUES[k as usize],
        _ => v / 20,
    }
}

fn craft(image: &mut Image, (field, i, v): Craft) {
    let x = extreme_u64(v);
    let x32 = x.min(u64::from(u32::MAX)) as u32;
    let ops = image.operators.len();
    match field % 14 {
        0 => image.meta.generation = x32,
        1 => image.meta.id = x,
        2 => image.meta.max_parallelism = x32,
        3 => image.operators[i % ops].parallelism = x32,
        4 => image.meta.completed_at_ns = x,
        5 => {
            let n = image.meta.sources.len().max(1);
            if let Some(s) = image.meta.sources.get_mut(i % n) {
                match v % 3 {
                    0 => s.partitions = x32,
                    1 => s.records_per_partition = x,
                    _ => s.keys = x,
                }
            }
        }
        6 => {
            let op = image.operators.remove(i % ops);
            image.operators.insert(v as usize % ops, op);
        }
        7 => {
            let op = image.operators[i % ops].clone();
            image.operators.push(op);
        }
        8 => {
            let j = (i / ops) % ops;
            image.operators[i % ops].kind = image.operators[j].kind.clone();
        }
        field => {
            let op = &mut image.operators[i % ops];
            match (&mut op.state, field) {
                (OperatorState::Source { offsets }, _)
                | (
                    OperatorState::SplitSource {
                        splits: offsets, ..
                    },
                    _,
                ) if !offsets.is_empty() => {
                    let k = i % offsets.len();
                    match v % 2 {
                        0 => offsets[k].0 = x32,
                        _ => offsets[k].1 = x,
                    }
                }
                (OperatorState::Keyed { key_groups }, _) if !key_groups.is_empty() => {
                    let k = i % key_groups.len();
                    match (v % 3, key_groups[k].1.first_mut()) {
                        (0, _) => key_groups[k].0 = x32,
                        (1, Some(e)) => e.0 = x,
                        (_, Some(e)) => e.1 = x as i64,
                        _ => {}
                    }
                }
                (OperatorState::List { entries }, _) if !entries.is_empty() => {
                    let k = i % entries.len();
                    match v % 3 {
                        0 => entries[k].lineage.partition = x32,
                        1 => entries[k].lineage.offset = x,
                        _ => entries[k].value = x as i64,
                    }
                }
                _ => {
                    let n = image.channels.len().max(1);
                    if let Some(c) = image.channels.get_mut(i % n) {
                        match (v % 4, c.records.first_mut()) {
                            (0, _) => c.to_subtask = x32,
                            (1, _) => c.from_subtask = x32,
                            (2, Some(r)) => r.lineage.offset = x,
                            (_, Some(r)) => r.key = x,
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

/// A change of a savepoint file that keeps it restorable: in `_metadata`
/// (JSON, whose checksum covers its parsed form) a space inserted after a
/// comma; a binary file is left as it is, to be signed again.
fn mutate_snapshot_mildly(bytes: &mut Vec<u8>, m: Mutation, json: bool) {
    let (_, at, _, _) = m;
    if json && !bytes.is_empty() {
        let at = at % bytes.len();
        if let Some(p) = bytes[at..].iter().position(|&b| b == b',') {
            bytes.insert(at + p + 1, b' ');
        }
    }
}

#[test]
fn snapshots_under_byte_mutation_are_refused_or_restored() {
    let strategy = (
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
        prop::bool::weighted(HOSTILE),
        mutations(),
    );
    property(
        "snapshots_under_byte_mutation_are_refused_or_restored",
        strategy,
        |(base, file, resign, hostile, ms)| {
            // As the `cargo fuzz` target `snapshot` reads its input.
            let b = &bases()[base as usize % bases().len()];
            let files = fuzz::files(&b.dir);
            let path = &files[file as usize % files.len()];
            let original = std::fs::read(path).unwrap();
            let json = path.file_name() == Some(ckptsim::savepoint::METADATA.as_ref());
            let mut bytes = original.clone();
            for m in ms {
                match hostile {
                    true => mutate(&mut bytes, m, &original),
                    false => mutate_snapshot_mildly(&mut bytes, m, json),
                }
            }
            // A binary file kept mildly is signed again: the writer's
            // signature over the same bytes must keep it restorable.
            let resign = resign || (!hostile && !json);
            let bases: Vec<(PathBuf, Scenario)> = bases()
                .iter()
                .map(|b| (b.dir.clone(), b.job.clone()))
                .collect();
            let mut data = vec![base, file, u8::from(resign)];
            data.extend(&bytes);
            let outcome = bounded("mutated snapshot", || {
                fuzz::snapshot_bytes(&bases, &temp("case"), &data)
            })?;
            // Changed bytes not signed again never get past the checksums
            // (`_metadata`'s covers its JSON, so white space may change).
            let compact = |b: &[u8]| {
                serde_json::from_slice::<serde_json::Value>(b)
                    .ok()
                    .map(|v| v.to_string())
            };
            let same_json = compact(&bytes).is_some() && compact(&bytes) == compact(&original);
            if !resign && bytes != original && !same_json {
                prop_assert_eq!(&outcome, &Outcome::Refused);
            }
            Ok(outcome)
        },
    );
}

/// One edit of an image that keeps it restorable: a keyed value or a list
/// entry's value set to anything, a source offset rewound, the operators'
/// order changed.
fn craft_mildly(image: &mut Image, (field, i, v): Craft) {
    let ops = image.operators.len();
    let op = &mut image.operators[i % ops];
    match (&mut op.state, field % 2) {
        (OperatorState::Keyed { key_groups }, _) if !key_groups.is_empty() => {
            let k = i % key_groups.len();
            if let Some(e) = key_groups[k].1.first_mut() {
                e.1 = v as i64;
            }
        }
        (OperatorState::List { entries }, _) if !entries.is_empty() => {
            let k = i % entries.len();
            entries[k].value = v as i64;
        }
        (OperatorState::Source { offsets }, 0)
        | (
            OperatorState::SplitSource {
                splits: offsets, ..
            },
            0,
        ) if !offsets.is_empty() => {
            let k = i % offsets.len();
            offsets[k].1 = v % (offsets[k].1 + 1);
        }
        _ => {
            let op = image.operators.remove(i % ops);
            image.operators.insert(v as usize % ops, op);
        }
    }
}

#[test]
fn snapshots_with_extreme_values_are_refused_or_restored() {
    let strategy = (
        any::<usize>(),
        prop::bool::weighted(HOSTILE),
        prop::collection::vec((any::<u8>(), any::<usize>(), any::<u64>()), 1..4),
    );
    property(
        "snapshots_with_extreme_values_are_refused_or_restored",
        strategy,
        |(base, hostile, crafts)| {
            let base = &bases()[base % bases().len()];
            let mut image = ckptsim::savepoint::read_dir(&base.dir).unwrap();
            for c in crafts {
                match hostile {
                    true => craft(&mut image, c),
                    false => craft_mildly(&mut image, c),
                }
            }
            let dir = temp("crafted");
            write_dir(&dir, &image).unwrap();
            let outcome = bounded("crafted snapshot", || fuzz::snapshot_dir(&dir, &base.job));
            std::fs::remove_dir_all(&dir).unwrap();
            outcome
        },
    );
}

#[test]
fn unchanged_bases_restore_and_pass() {
    for base in bases() {
        assert_eq!(
            fuzz::snapshot_dir(&base.dir, &base.job),
            Outcome::Ran { passed: true },
            "{}",
            base.dir.display()
        );
    }
}

// ------------------------------------------------------------ found inputs

/// Every input the fuzzers found is refused or runs within bounds:
/// `tests/regressions/fuzz/scenario/*` as scenario texts (the `scenario`
/// target's input), `tests/regressions/fuzz/snapshot/*` as the `snapshot`
/// target's input against the same base savepoints.
#[test]
fn found_inputs_are_refused_or_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/fuzz");
    let bases: Vec<(PathBuf, Scenario)> = bases()
        .iter()
        .map(|b| (b.dir.clone(), b.job.clone()))
        .collect();
    let mut found = 0;
    for kind in ["scenario", "snapshot"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(kind))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).unwrap();
            let what = path.display().to_string();
            let outcome = bounded(&what, || match kind {
                "scenario" => fuzz::scenario_text(&bytes),
                _ => fuzz::snapshot_bytes(&bases, &temp("found"), &bytes),
            });
            assert!(outcome.is_ok(), "{what}: {outcome:?}");
            found += 1;
        }
    }
    assert!(found >= 2, "no inputs under {}", root.display());
}
