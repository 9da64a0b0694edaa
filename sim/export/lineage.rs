//! Lineage on Flink: every record of an exported job carries the source
//! record it derives from (`Rec.origin`: global partition << 32 | offset,
//! as ckptsim's [`crate::model::Lineage`]), the sinks write it as a fourth
//! column, and `flink-check` counts each source record's committed copies
//! against the oracle's, as the simulator's exactly-once-output check does.
//! By key and value alone a loss can hide behind a duplicate of a record
//! with the same key and value (a replay after a failover makes many); by
//! lineage it cannot.
//!
//! A sink is judged by lineage where every operator upstream of it derives
//! its output from one input record as the Java job does (sources, maps,
//! filters, flat maps, keyed counts and sums, buffers, Sink V2 committers);
//! windows, timers, count windows and upsert sinks are judged by key and
//! value only.

use super::{Manifest, SinkInfo};
use crate::check::oracle::Oracle;
use crate::model::kinds::{Flink, Java};
use crate::model::operator::BuiltinFactory;
use crate::model::Workload;
use crate::scenario::Scenario;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// The file of the failure-free run's counts by lineage.
pub const EXPECTED: &str = "expected-lineage.tsv";

/// `sink -> (partition, offset) -> count`.
pub type Origins = BTreeMap<String, BTreeMap<(u32, u64), u64>>;

/// Whether operator `i`'s Java class gives each output record the lineage
/// of the input record it derives from, as the simulator's operator does.
fn keeps_lineage(scenario: &Scenario, i: usize) -> bool {
    match scenario.operators[i].kind.flink() {
        Flink::Maps { java, .. } => match java {
            Java::Source | Java::Committer => true,
            Java::Sink { mode, .. } => !mode.contains("upsert"),
            Java::Op { kind, .. } => matches!(
                kind,
                "MAP"
                    | "FILTER"
                    | "FLAT_MAP"
                    | "KEYED_COUNT"
                    | "KEYED_SUM"
                    | "BUFFER_SPLIT"
                    | "BUFFER_UNION"
            ),
            _ => false,
        },
        Flink::Refused(_) => false,
    }
}

/// Whether sink `sink` is judged by lineage: it and every operator
/// upstream of it keep lineage.
pub fn judged(scenario: &Scenario, sink: usize) -> bool {
    let mut seen = vec![false; scenario.operators.len()];
    let mut todo = vec![sink];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if !keeps_lineage(scenario, i) {
            return false;
        }
        for e in scenario.edges.iter().filter(|e| e.to.0 as usize == i) {
            todo.push(e.from.0 as usize);
        }
    }
    true
}

/// `expected-lineage.tsv`: `sink<TAB>partition<TAB>offset<TAB>count` for
/// every source record that reaches a sink judged by lineage.
pub fn expected_tsv(scenario: &Scenario, seed: u64, sinks: &[SinkInfo]) -> String {
    let workload = Arc::new(Workload::generate(scenario, seed));
    let factory = BuiltinFactory::new(Arc::new(scenario.clone()), workload.clone());
    let oracle = Oracle::build(scenario, &workload, &factory);
    let mut out = String::new();
    for (i, op) in scenario.operators.iter().enumerate() {
        if !sinks.iter().any(|s| s.name == op.id && s.lineage) {
            continue;
        }
        for (p, o, n) in oracle.expected_by_lineage(i as u32) {
            let _ = writeln!(out, "{}\t{p}\t{o}\t{n}", op.id);
        }
    }
    out
}

/// Reads `expected-lineage.tsv`.
pub fn parse_expected(text: &str) -> Result<Origins, String> {
    let mut out = Origins::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let row = match f.as_slice() {
            [sink, p, o, n] => match (p.parse(), o.parse(), n.parse()) {
                (Ok(p), Ok(o), Ok(n)) => Some((sink, (p, o), n)),
                _ => None,
            },
            _ => None,
        };
        let Some((sink, at, n)) = row else {
            return Err(format!(
                "{EXPECTED}:{}: not `sink<TAB>partition<TAB>offset<TAB>count`",
                i + 1
            ));
        };
        out.entry(sink.to_string()).or_default().insert(at, n);
    }
    Ok(out)
}

/// The lineage column of every committed file in `dir`: counts per sink
/// and source record (rows without one, from jobs older than the column
/// or of records with none, are not counted).
pub fn committed(
    dir: &Path,
    read: &dyn Fn(&Path) -> Result<String, String>,
) -> Result<Origins, String> {
    let mut out = Origins::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    for path in names {
        for line in read(&path)?.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let Some(origin) = f.get(3).and_then(|o| o.parse::<i64>().ok()) else {
                continue;
            };
            if origin < 0 {
                continue;
            }
            let at = ((origin as u64 >> 32) as u32, origin as u64 & 0xffff_ffff);
            *out.entry(f[0].to_string())
                .or_default()
                .entry(at)
                .or_default() += 1;
        }
    }
    Ok(out)
}

/// The first source record a lineage-judged sink committed other than as
/// often as the failure-free run does: exactly for a transactional sink
/// under exactly-once, at least as often otherwise.
pub fn mismatch(manifest: &Manifest, committed: &Origins, expected: &Origins) -> Option<String> {
    let empty = BTreeMap::new();
    for sink in manifest
        .sinks
        .iter()
        .filter(|s| s.lineage && s.unjudged.is_none())
    {
        let exact = sink.transactional && manifest.guarantee == "exactly-once";
        let got = committed.get(&sink.name).unwrap_or(&empty);
        let want = expected.get(&sink.name).unwrap_or(&empty);
        let all: std::collections::BTreeSet<&(u32, u64)> = got.keys().chain(want.keys()).collect();
        let differ: Vec<(&(u32, u64), u64, u64)> = all
            .into_iter()
            .map(|at| {
                (
                    at,
                    got.get(at).copied().unwrap_or(0),
                    want.get(at).copied().unwrap_or(0),
                )
            })
            .filter(|&(_, g, w)| (exact && g != w) || g < w)
            .collect();
        if let Some(&((p, o), g, w)) = differ.first() {
            let lost = differ.iter().filter(|&&(_, g, w)| g < w).count();
            return Some(format!(
                "sink {} by lineage: source partition {p} offset {o} committed {g}×, the failure-free run commits it {w}× ({} source records differ, {lost} of them short)",
                sink.name,
                differ.len()
            ));
        }
    }
    None
}

/// Sinks judged by lineage: a source record committed
/// other than as often as the failure-free run does fails the output check
/// (where it passed by key and value, and the job finished).
pub fn check(
    dir: &Path,
    manifest: &Manifest,
    report: &mut super::real::RealReport,
    read_text: &dyn Fn(&Path) -> Result<String, String>,
) -> Result<(), String> {
    let path = dir.join(EXPECTED);
    if manifest.repeat || report.ended != "finished" || std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let expected = parse_expected(&read_text(&path)?)?;
    let committed = committed(&dir.join("real/store/committed"), &read_text)?;
    let Some(message) = mismatch(manifest, &committed, &expected) else {
        if let Some(c) = report
            .checks
            .iter_mut()
            .find(|c| c.name == "exactly-once-output" && c.passed)
        {
            c.message
                .push_str(" (and by lineage where the operators keep it)");
        }
        return Ok(());
    };
    if let Some(c) = report
        .checks
        .iter_mut()
        .find(|c| c.name == "exactly-once-output")
    {
        if c.passed {
            c.passed = false;
            c.message = message;
        }
    }
    report.verdict = "fail";
    Ok(())
}
