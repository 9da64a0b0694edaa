//! A real run of an exported job read back: the REST samples
//! (`real/rest.jsonl`), how it ended (`real/run.json`) and the committed
//! output (`real/store/committed/`), turned into ckptsim's metric names and
//! judged against the oracle's expected output (`expected.tsv`) and for
//! liveness; printed beside the simulated run (`simulated.json`).

use super::Manifest;
use crate::report::{percentile, CheckpointMetrics, Dist};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The largest file read back (REST samples of a long run included).
const MAX_FILE: u64 = 1 << 30;

/// One checkpoint of the real run, in ckptsim's terms (times from the
/// job's start).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RealCheckpoint {
    pub id: u64,
    pub trigger_ns: u64,
    pub end_ns: u64,
    pub duration_ns: u64,
    /// `completed`, `failed` or `in-progress` (when the run ended).
    pub outcome: String,
    pub state_bytes: u64,
    pub in_flight_bytes: u64,
    pub unaligned: bool,
    /// The slowest subtask's alignment and start delay.
    pub alignment_ns: u64,
    pub start_delay_ns: u64,
    pub failure: String,
}

/// A vertex's backpressure: the highest ratio of any subtask in any sample,
/// and in the last sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pressure {
    pub vertex: String,
    pub max_ratio: f64,
    pub last_ratio: f64,
}

/// A vertex's records over the run, from the job's REST samples: per
/// sample `(ms since the start, records read, records written)` (Flink's
/// `read-records` and `write-records`: records crossing the vertex's
/// network inputs and outputs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VertexFlow {
    pub vertex: String,
    pub samples: Vec<(u64, u64, u64)>,
}

/// A check of the real run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RealCheck {
    pub name: &'static str,
    pub passed: bool,
    pub message: String,
}

/// The real run's metrics, named as `ckptsim run --json` names them.
#[derive(Clone, Debug, Serialize)]
pub struct RealReport {
    pub scenario: String,
    pub seed: u64,
    pub algorithm: String,
    pub flink_version: String,
    /// `finished`, `failed`, `canceled`, `stopped` (after --duration) or
    /// `time-limit`.
    pub ended: String,
    pub wall_ms: u64,
    pub failure: String,
    pub checkpoints_completed: u64,
    pub checkpoints_aborted: u64,
    pub checkpoints_unaligned: u64,
    pub records_emitted: u64,
    pub records_committed: u64,
    pub restarts: u64,
    /// Crashes the simulated run had, and those the real job injected
    /// (`real/crashes.tsv`): a crash whose subtask never reached its
    /// record count in its attempt never fires.
    pub crashes_planned: u64,
    pub crashes_injected: u64,
    /// What the real run was asked to do but did not (crashes that never
    /// fired).
    pub warnings: Vec<String>,
    pub checkpoint_metrics: CheckpointMetrics,
    /// Event time: per watermark a sink writer took, the time since a
    /// source emitted it (`real/run.json`; none without watermarks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watermark_lag: Option<Dist>,
    pub checkpoints: Vec<RealCheckpoint>,
    pub backpressure: Vec<Pressure>,
    /// `(ms since the start, records the sinks took)` per sample.
    pub sink_flow: Vec<(u64, u64)>,
    /// Records in and out of every vertex over time.
    pub vertex_flow: Vec<VertexFlow>,
    pub verdict: &'static str,
    pub checks: Vec<RealCheck>,
}

/// A real run and what it is compared with.
pub struct RealRun {
    pub report: RealReport,
    pub simulated: Option<Value>,
}

fn read_text(path: &Path) -> Result<String, String> {
    crate::input::read_text(path, MAX_FILE)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Reads the exported directory `dir` after its run.sh ran.
pub fn read(dir: &Path) -> Result<RealRun, String> {
    let manifest: Manifest = serde_json::from_str(&read_text(&dir.join("export.json"))?)
        .map_err(|e| format!("export.json: {e}"))?;
    let real = dir.join("real");
    let run: Value = serde_json::from_str(
        &read_text(&real.join("run.json"))
            .map_err(|e| format!("{e} (run the job first: sh {}/run.sh)", dir.display()))?,
    )
    .map_err(|e| format!("real/run.json: {e}"))?;
    let samples = samples(&read_text(&real.join("rest.jsonl"))?)?;
    // Optional (a hand-made folder may lack it), but never read unbounded:
    // a FIFO or device there is refused like any other file.
    let simulated = match std::fs::symlink_metadata(dir.join("simulated.json")) {
        Ok(_) => serde_json::from_str(&read_text(&dir.join("simulated.json"))?).ok(),
        Err(_) => None,
    };
    let committed = committed(&real.join("store").join("committed"))?;
    let tables = upserts(&real.join("store").join("upsert"))?;
    let expected = if manifest.repeat {
        None
    } else {
        Some(parse_rows(
            &read_text(&dir.join("expected.tsv"))?,
            "expected.tsv",
        )?)
    };
    let mut report = judge(&manifest, &run, &samples, committed, expected.as_ref());
    if let Some(expected) = &expected {
        upsert_check(&manifest, &tables, expected, &mut report);
    }
    super::lineage::check(dir, &manifest, &mut report, &read_text)?;
    let fired = match std::fs::metadata(real.join("crashes.tsv")) {
        Ok(_) => read_text(&real.join("crashes.tsv"))?,
        Err(_) => String::new(),
    };
    crashes(&manifest, &fired, &mut report);
    Ok(RealRun { report, simulated })
}

/// The planned crashes against those injected: a warning for each that
/// never fired.
fn crashes(manifest: &Manifest, fired: &str, report: &mut RealReport) {
    let fired: Vec<Vec<&str>> = fired.lines().map(|l| l.split('\t').collect()).collect();
    report.crashes_planned = manifest.crashes.len() as u64;
    for c in &manifest.crashes {
        let name = manifest
            .operators
            .get(c.operator as usize)
            .cloned()
            .unwrap_or_else(|| format!("operator {}", c.operator));
        let what = [
            name.clone(),
            c.subtask.to_string(),
            c.attempt.to_string(),
            c.records.to_string(),
        ];
        // Planned `operator subtask attempt records`, then (from newer
        // jobs) the attempt it fired in.
        if fired
            .iter()
            .any(|f| f.len() >= 4 && f.iter().zip(&what).all(|(a, b)| a == b))
        {
            report.crashes_injected += 1;
        } else {
            report.warnings.push(format!(
                "the crash of {name}[{}] (attempt {}, after {} records{}) never fired: no attempt of the subtask from that one on got that far",
                c.subtask,
                c.attempt,
                c.records,
                match c.anchors.first() {
                    Some(a) => format!(
                        ", {} after its {} {} of the attempt",
                        a.records,
                        match a.event {
                            crate::runtime::output::AnchorEvent::Snapshot => "snapshot",
                            crate::runtime::output::AnchorEvent::Notification => "notification",
                        },
                        a.nth
                    ),
                    None => String::new(),
                }
            ));
        }
    }
}

/// One line of rest.jsonl.
struct Sample {
    t_ms: u64,
    path: String,
    body: Value,
}

fn samples(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("real/rest.jsonl:{}: {e}", i + 1))?;
        out.push(Sample {
            t_ms: v["t_ms"].as_u64().unwrap_or(0),
            path: v["path"].as_str().unwrap_or("").to_string(),
            body: v["body"].clone(),
        });
    }
    Ok(out)
}

/// `sink -> key -> value -> count`.
type Rows = BTreeMap<String, BTreeMap<u64, BTreeMap<i64, u64>>>;

fn parse_rows(text: &str, what: &str) -> Result<Rows, String> {
    let mut rows = Rows::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        // A fourth column is the record's lineage (see `lineage`).
        let parsed = match f.as_slice() {
            [sink, key, value] | [sink, key, value, _] => key
                .parse::<u64>()
                .ok()
                .zip(value.parse::<i64>().ok())
                .map(|kv| (sink, kv)),
            _ => None,
        };
        // The line itself is not shown: the file may be a link to any
        // file of the user's.
        let Some((sink, (key, value))) = parsed else {
            return Err(format!("{what}:{}: not `sink<TAB>key<TAB>value`", i + 1));
        };
        *rows
            .entry(sink.to_string())
            .or_default()
            .entry(key)
            .or_default()
            .entry(value)
            .or_default() += 1;
    }
    Ok(rows)
}

/// Every committed file's rows (none if the job never committed).
fn committed(dir: &Path) -> Result<Rows, String> {
    let mut rows = Rows::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(rows);
    };
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    for p in names {
        let part = parse_rows(&read_text(&p)?, &p.display().to_string())?;
        for (sink, keys) in part {
            let mine = rows.entry(sink).or_default();
            for (key, values) in keys {
                let m = mine.entry(key).or_default();
                for (value, n) in values {
                    *m.entry(value).or_default() += n;
                }
            }
        }
    }
    Ok(rows)
}

/// Per upsert sink, the table its files leave: each file's rows in order,
/// the files in order of subtask, attempt and sequence (a key is one
/// subtask's; a later attempt writes after an earlier one).
fn upserts(dir: &Path) -> Result<BTreeMap<String, BTreeMap<u64, i64>>, String> {
    let mut tables = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(tables);
    };
    let mut files = vec![];
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name.strip_suffix(".tsv").unwrap_or(&name);
        let mut parts = stem.rsplitn(4, '-');
        let numbers: Vec<u64> = parts
            .by_ref()
            .take(3)
            .filter_map(|n| n.parse().ok())
            .collect();
        let (&[seq, attempt, subtask], Some(sink)) = (&numbers[..], parts.next()) else {
            return Err(format!(
                "{}: not `sink-subtask-attempt-seq.tsv`",
                e.path().display()
            ));
        };
        files.push(((sink.to_string(), subtask, attempt, seq), e.path()));
    }
    files.sort();
    for ((sink, ..), path) in files {
        let table: &mut BTreeMap<u64, i64> = tables.entry(sink).or_default();
        let text = read_text(&path)?;
        for (i, line) in text.lines().enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            let row = match f.as_slice() {
                [_, k, v] | [_, k, v, _] => k.parse::<u64>().ok().zip(v.parse::<i64>().ok()),
                _ => None,
            };
            let Some((k, v)) = row else {
                return Err(format!(
                    "{}:{}: not `sink<TAB>key<TAB>value`",
                    path.display(),
                    i + 1
                ));
            };
            table.insert(k, v);
        }
    }
    Ok(tables)
}

/// Upsert sinks, effectively-once: the table they leave equals the
/// failure-free run's, by key and value (by key only where the values
/// depend on arrival order). A failure replaces the output check's verdict.
fn upsert_check(
    manifest: &Manifest,
    tables: &BTreeMap<String, BTreeMap<u64, i64>>,
    expected: &Rows,
    report: &mut RealReport,
) {
    if report.ended != "finished" {
        return;
    }
    let empty = BTreeMap::new();
    // A sink the real run's timing decides is not judged (output_check
    // says why).
    for sink in manifest
        .sinks
        .iter()
        .filter(|s| s.upsert && s.unjudged.is_none())
    {
        let got = tables.get(&sink.name).unwrap_or(&empty);
        let want: BTreeMap<u64, i64> = expected
            .get(&sink.name)
            .into_iter()
            .flatten()
            .flat_map(|(&k, vs)| vs.keys().map(move |&v| (k, v)))
            .collect();
        let wrong = want.iter().find(|(k, v)| match got.get(k) {
            None => true,
            Some(g) => sink.values_exact && g != *v,
        });
        let extra = got.keys().find(|k| !want.contains_key(k));
        let message = match (wrong, extra) {
            (Some((k, v)), _) => format!(
                "upsert sink {} key {k}: the table holds {}, the failure-free run leaves {v}",
                sink.name,
                got.get(k).map_or("nothing".to_string(), |g| g.to_string())
            ),
            (None, Some(k)) => format!(
                "upsert sink {} key {k}: in the table, not in the failure-free run's",
                sink.name
            ),
            (None, None) => continue,
        };
        let check = report
            .checks
            .iter_mut()
            .find(|c| c.name == "exactly-once-output");
        if let Some(c) = check {
            (c.passed, c.message) = (false, message);
        }
        report.verdict = "fail";
        return;
    }
}

fn count(rows: &Rows) -> u64 {
    rows.values()
        .flat_map(|k| k.values())
        .flat_map(|v| v.values())
        .sum()
}

fn judge(
    manifest: &Manifest,
    run: &Value,
    samples: &[Sample],
    committed: Rows,
    expected: Option<&Rows>,
) -> RealReport {
    let ended = run["ended"].as_str().unwrap_or("unknown").to_string();
    let failure = run["failure"]
        .as_str()
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let job_start = samples
        .iter()
        .filter(|s| is_job(&s.path))
        .find_map(|s| s.body["start-time"].as_u64())
        .unwrap_or(0);
    let checkpoints = checkpoints(samples, job_start);
    let counters = samples.iter().rev().find(|s| s.path == "ckptsim/counters");
    let records_emitted = counters.map_or(0, |s| s.body["source_records"].as_u64().unwrap_or(0));
    let restarts = counters.map_or(0, |s| s.body["restarts"].as_u64().unwrap_or(0));
    let sink_flow: Vec<(u64, u64)> = samples
        .iter()
        .filter(|s| s.path == "ckptsim/counters")
        .map(|s| (s.t_ms, s.body["sink_records"].as_u64().unwrap_or(0)))
        .collect();
    let stats: Vec<&RealCheckpoint> = checkpoints
        .iter()
        .filter(|c| c.outcome == "completed")
        .collect();
    let dist = |f: fn(&RealCheckpoint) -> u64| {
        let mut v: Vec<u64> = stats.iter().map(|c| f(c)).collect();
        v.sort_unstable();
        Dist {
            p50: percentile(&v, 50),
            p99: percentile(&v, 99),
        }
    };
    let checkpoint_metrics = CheckpointMetrics {
        duration_ns: dist(|c| c.duration_ns),
        start_delay_ns: dist(|c| c.start_delay_ns),
        alignment_ns: dist(|c| c.alignment_ns),
        state_bytes: dist(|c| c.state_bytes),
        in_flight_bytes: dist(|c| c.in_flight_bytes),
    };
    let checks = vec![
        output_check(manifest, &ended, &committed, expected),
        liveness(manifest, &ended, &failure, &checkpoints, &sink_flow),
    ];
    let passed = checks.iter().all(|c| c.passed);
    RealReport {
        scenario: manifest.scenario.clone(),
        seed: manifest.seed,
        algorithm: manifest.algorithm.clone(),
        flink_version: manifest.flink_version.clone(),
        wall_ms: run["wall_ms"].as_u64().unwrap_or(0),
        failure,
        checkpoints_completed: stats.len() as u64,
        checkpoints_aborted: checkpoints.iter().filter(|c| c.outcome == "failed").count() as u64,
        checkpoints_unaligned: stats.iter().filter(|c| c.unaligned).count() as u64,
        records_emitted,
        records_committed: count(&committed),
        restarts,
        crashes_planned: 0,
        crashes_injected: 0,
        warnings: vec![],
        checkpoint_metrics,
        watermark_lag: match (
            run["watermark_lag_p50_ns"].as_u64(),
            run["watermark_lag_p99_ns"].as_u64(),
        ) {
            (Some(p50), Some(p99)) => Some(Dist { p50, p99 }),
            _ => None,
        },
        backpressure: backpressure(samples),
        vertex_flow: vertex_flow(samples),
        checkpoints,
        sink_flow,
        verdict: if passed { "pass" } else { "fail" },
        checks,
        ended,
    }
}

fn is_job(path: &str) -> bool {
    path.starts_with("/jobs/") && path.matches('/').count() == 2
}

fn ns(ms: &Value) -> u64 {
    ms.as_u64().unwrap_or(0).saturating_mul(1_000_000)
}

/// Every checkpoint in any sample of the history (the latest word on each),
/// with the slowest subtask's alignment and start delay from the details.
fn checkpoints(samples: &[Sample], job_start: u64) -> Vec<RealCheckpoint> {
    let mut by_id: BTreeMap<u64, RealCheckpoint> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.path.ends_with("/checkpoints")) {
        let Some(history) = s.body["history"].as_array() else {
            continue;
        };
        for h in history {
            let Some(id) = h["id"].as_u64() else { continue };
            if h["is_savepoint"].as_bool() == Some(true) {
                continue;
            }
            let trigger = h["trigger_timestamp"].as_u64().unwrap_or(0);
            let outcome = match h["status"].as_str().unwrap_or("") {
                "COMPLETED" => "completed",
                "FAILED" => "failed",
                _ => "in-progress",
            };
            let duration = ns(&h["end_to_end_duration"]);
            let entry = by_id.entry(id).or_default();
            *entry = RealCheckpoint {
                id,
                trigger_ns: trigger.saturating_sub(job_start).saturating_mul(1_000_000),
                end_ns: trigger.saturating_sub(job_start).saturating_mul(1_000_000) + duration,
                duration_ns: duration,
                outcome: outcome.to_string(),
                state_bytes: h["checkpointed_size"]
                    .as_u64()
                    .or(h["state_size"].as_u64())
                    .unwrap_or(0),
                in_flight_bytes: h["persisted_data"].as_u64().unwrap_or(0),
                unaligned: h["checkpoint_type"].as_str() == Some("UNALIGNED_CHECKPOINT"),
                failure: h["failure_message"].as_str().unwrap_or("").to_string(),
                ..entry.clone()
            };
        }
    }
    for s in samples
        .iter()
        .filter(|s| s.path.contains("/checkpoints/details/") && s.path.contains("/subtasks/"))
    {
        let Some(id) = s.path.split('/').nth(5).and_then(|t| t.parse::<u64>().ok()) else {
            continue;
        };
        let Some(cp) = by_id.get_mut(&id) else {
            continue;
        };
        for sub in s.body["subtasks"].as_array().into_iter().flatten() {
            cp.alignment_ns = cp.alignment_ns.max(ns(&sub["alignment"]["duration"]));
            cp.start_delay_ns = cp.start_delay_ns.max(ns(&sub["start_delay"]));
        }
    }
    by_id.into_values().collect()
}

/// Per vertex, its records read and written at every job sample.
fn vertex_flow(samples: &[Sample]) -> Vec<VertexFlow> {
    let mut out: BTreeMap<String, VertexFlow> = BTreeMap::new();
    for s in samples.iter().filter(|s| is_job(&s.path)) {
        for v in s.body["vertices"].as_array().into_iter().flatten() {
            let Some(name) = v["name"].as_str() else {
                continue;
            };
            let m = &v["metrics"];
            let read = m["read-records"].as_u64().unwrap_or(0);
            let written = m["write-records"].as_u64().unwrap_or(0);
            let flow = out.entry(name.to_string()).or_insert_with(|| VertexFlow {
                vertex: name.to_string(),
                samples: vec![],
            });
            flow.samples.push((s.t_ms, read, written));
        }
    }
    out.into_values().collect()
}

/// Per vertex (named as the job names it), the backpressure ratios.
fn backpressure(samples: &[Sample]) -> Vec<Pressure> {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for s in samples.iter().filter(|s| is_job(&s.path)) {
        for v in s.body["vertices"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (v["id"].as_str(), v["name"].as_str()) {
                names.insert(id.to_string(), name.to_string());
            }
        }
    }
    let mut out: BTreeMap<String, Pressure> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.path.ends_with("/backpressure")) {
        let Some(id) = s.path.split('/').nth(4) else {
            continue;
        };
        let subtasks = s.body["subtasks"].as_array();
        if subtasks.is_none() {
            continue;
        }
        let ratio = subtasks
            .into_iter()
            .flatten()
            .filter_map(|t| t["ratio"].as_f64())
            .fold(0.0, f64::max);
        let vertex = names.get(id).cloned().unwrap_or_else(|| id.to_string());
        let p = out.entry(vertex.clone()).or_insert(Pressure {
            vertex,
            max_ratio: 0.0,
            last_ratio: 0.0,
        });
        p.max_ratio = p.max_ratio.max(ratio);
        p.last_ratio = ratio;
    }
    out.into_values().collect()
}

/// The first way sink `sink`'s committed output differs from the
/// oracle's, per key: its count, then (where values can be compared) each
/// value's; exactly for a transactional sink under exactly-once, at least
/// as often otherwise.
fn sink_mismatch(
    manifest: &Manifest,
    sink: &super::SinkInfo,
    committed: &Rows,
    expected: &Rows,
) -> Option<String> {
    let empty = BTreeMap::new();
    let exact = sink.transactional && manifest.guarantee == "exactly-once";
    let got = committed.get(&sink.name).unwrap_or(&empty);
    let want = expected.get(&sink.name).unwrap_or(&empty);
    let keys: std::collections::BTreeSet<&u64> = got.keys().chain(want.keys()).collect();
    for key in keys {
        let (g, w) = (got.get(key), want.get(key));
        let total = |m: Option<&BTreeMap<i64, u64>>| m.map_or(0, |m| m.values().sum::<u64>());
        let (gn, wn) = (total(g), total(w));
        if (exact && gn != wn) || gn < wn {
            return Some(format!(
                "sink {} key {key}: {gn} records committed, the failure-free run commits {wn}",
                sink.name
            ));
        }
        if !sink.values_exact {
            continue;
        }
        for (value, &wc) in w.into_iter().flatten() {
            let gc = g.and_then(|g| g.get(value)).copied().unwrap_or(0);
            if (exact && gc != wc) || gc < wc {
                return Some(format!(
                    "sink {} key {key} value {value}: committed {gc} times, the failure-free run commits it {wc} times",
                    sink.name
                ));
            }
        }
    }
    None
}

/// The committed output against the oracle's: per sink, by key and value
/// where values can be compared, else by key and count; exactly for a
/// transactional sink under exactly-once, at least as often otherwise.
fn output_check(
    manifest: &Manifest,
    ended: &str,
    committed: &Rows,
    expected: Option<&Rows>,
) -> RealCheck {
    let name = "exactly-once-output";
    let Some(expected) = expected else {
        let message =
            "not judged: the sources repeat (--repeat), so there is no expected output".to_string();
        return RealCheck {
            name,
            passed: true,
            message,
        };
    };
    if ended != "finished" {
        let message =
            format!("not judged: the job did not finish ({ended}), so its output is incomplete");
        return RealCheck {
            name,
            passed: true,
            message,
        };
    }
    let not_judged: Vec<String> = manifest
        .sinks
        .iter()
        .filter_map(|s| {
            Some(format!(
                "sink {} not judged: {}",
                s.name,
                s.unjudged.as_ref()?
            ))
        })
        .collect();
    let judged = manifest
        .sinks
        .iter()
        .filter(|s| !s.upsert && s.unjudged.is_none());
    for sink in judged {
        if let Some(message) = sink_mismatch(manifest, sink, committed, expected) {
            return RealCheck {
                name,
                passed: false,
                message,
            };
        }
    }
    let how = if manifest.guarantee == "exactly-once" {
        "exactly"
    } else {
        "at least"
    };
    let mut parts = vec![];
    if manifest
        .sinks
        .iter()
        .any(|s| !s.upsert && s.unjudged.is_none())
    {
        parts.push(format!(
            "every sink committed {how} the failure-free run's records, by key and value"
        ));
    }
    parts.extend(not_judged);
    if manifest
        .sinks
        .iter()
        .any(|s| s.upsert && s.unjudged.is_none())
    {
        parts.push("every upsert sink's table is the failure-free run's".to_string());
    }
    let message = parts.join("; ");
    RealCheck {
        name,
        passed: true,
        message,
    }
}

/// How long the flow may stand still before it counts as frozen.
const STALL_MS: u64 = 10_000;

/// A bounded job must finish; a repeating one must keep its records
/// flowing (the sinks take records in every 10 s after the first 10 s) and
/// complete checkpoints (one in the second half of the run).
fn liveness(
    manifest: &Manifest,
    ended: &str,
    failure: &str,
    checkpoints: &[RealCheckpoint],
    flow: &[(u64, u64)],
) -> RealCheck {
    let name = "liveness";
    let last_completed = checkpoints
        .iter()
        .filter(|c| c.outcome == "completed")
        .map(|c| c.end_ns / 1_000_000)
        .max();
    let last_flow = flow
        .windows(2)
        .filter(|w| w[1].1 > w[0].1)
        .map(|w| w[1].0)
        .max();
    let context = format!(
        "sink records last grew at {}, last checkpoint completed at {}",
        last_flow.map_or("never".to_string(), |t| format!("{t} ms")),
        last_completed.map_or("never".to_string(), |t| format!("{t} ms"))
    );
    let fail = |message: String| RealCheck {
        name,
        passed: false,
        message,
    };
    match (manifest.repeat, ended) {
        (_, "failed") => return fail(format!("the job failed: {failure}")),
        (false, "finished") => {
            let message = format!("the job finished; {context}");
            return RealCheck {
                name,
                passed: true,
                message,
            };
        }
        (false, other) => {
            return fail(format!(
                "the bounded job did not finish ({other}); {context}"
            ))
        }
        (true, "stopped") => {}
        (true, other) => {
            return fail(format!(
                "the job ended before --duration ({other}); {context}"
            ))
        }
    }
    let end = flow.last().map_or(0, |f| f.0);
    // From the start, or from the last time the sinks took a record.
    let mut stalled_since = None;
    let (mut grew_at, mut taken) = (0u64, 0u64);
    for &(t, n) in flow {
        if n > taken {
            (grew_at, taken) = (t, n);
        } else if t.saturating_sub(grew_at) >= STALL_MS {
            stalled_since = Some(grew_at);
            break;
        }
    }
    if let Some(since) = stalled_since {
        return fail(format!(
            "the data flow froze: the sinks took no record from {since} ms until the end at {end} ms ({context})"
        ));
    }
    if manifest.checkpoint_interval_ms.is_some() && last_completed.is_none_or(|t| t < end / 2) {
        return fail(format!(
            "no checkpoint completed in the second half of the run ({context})"
        ));
    }
    RealCheck {
        name,
        passed: true,
        message: format!("records flowed and checkpoints completed until the end at {end} ms"),
    }
}

impl RealRun {
    /// The report for people: the checks, then simulated and real side by
    /// side.
    pub fn text(&self) -> String {
        let r = &self.report;
        let mut s = format!(
            "{} on Flink {} (seed {}, {}): the job {} after {} ms\n",
            r.scenario, r.flink_version, r.seed, r.algorithm, r.ended, r.wall_ms
        );
        for c in &r.checks {
            let _ = writeln!(
                s,
                "  {} {}: {}",
                if c.passed { "ok  " } else { "FAIL" },
                c.name,
                c.message
            );
        }
        if r.crashes_planned > 0 {
            let _ = writeln!(
                s,
                "  crashes: {} planned (the simulated run's), {} injected",
                r.crashes_planned, r.crashes_injected
            );
        }
        for w in &r.warnings {
            let _ = writeln!(s, "  warning: {w}");
        }
        let _ = writeln!(s, "\n{}", self.table());
        for f in &r.vertex_flow {
            if let Some(&(t, read, written)) = f.samples.last() {
                let _ = writeln!(
                    s,
                    "records {}: {read} in, {written} out by {t} ms",
                    f.vertex
                );
            }
        }
        for p in r.backpressure.iter().filter(|p| p.max_ratio > 0.0) {
            let _ = writeln!(
                s,
                "backpressure {}: max {:.2}, last {:.2}",
                p.vertex, p.max_ratio, p.last_ratio
            );
        }
        let _ = writeln!(s, "verdict: {}", r.verdict.to_uppercase());
        s
    }

    /// `| metric | simulated | real Flink |` over the metrics both have.
    pub fn table(&self) -> String {
        let real = serde_json::to_value(&self.report).unwrap_or(Value::Null);
        let sim = self.simulated.clone().unwrap_or(Value::Null);
        let mut s = String::from("| metric | simulated | real Flink |\n|---|---|---|\n");
        // The watermark rows only where a side has event time.
        let lag = |v: &Value| !v["watermark_lag"].is_null();
        let watermarks = match lag(&real) || lag(&sim) {
            true => &WATERMARK_ROWS[..],
            false => &[],
        };
        for (label, path, unit) in ROWS.iter().chain(watermarks) {
            let get = |v: &Value| {
                path.split('.')
                    .fold(v.clone(), |v, k| v[k].clone())
                    .as_u64()
            };
            let show = |n: Option<u64>| match (n, &unit) {
                (None, _) => "-".to_string(),
                (Some(n), Unit::Ms) => format!("{:.1} ms", n as f64 / 1e6),
                (Some(n), Unit::Count) => n.to_string(),
                (Some(n), Unit::Bytes) => crate::engine::bytes_text(n),
            };
            let _ = writeln!(
                s,
                "| {label} | {} | {} |",
                show(get(&sim)),
                show(get(&real))
            );
        }
        s
    }
}

enum Unit {
    Ms,
    Count,
    Bytes,
}

/// The side-by-side table's rows of event time (a job with watermarks).
const WATERMARK_ROWS: [(&str, &str, Unit); 2] = [
    ("watermark lag p50", "watermark_lag.p50", Unit::Ms),
    ("watermark lag p99", "watermark_lag.p99", Unit::Ms),
];

/// The rows of the side-by-side table: a label, the JSON path in both
/// reports, the unit.
const ROWS: [(&str, &str, Unit); 13] = [
    (
        "checkpoints completed",
        "checkpoints_completed",
        Unit::Count,
    ),
    ("checkpoints failed", "checkpoints_aborted", Unit::Count),
    (
        "unaligned checkpoints",
        "checkpoints_unaligned",
        Unit::Count,
    ),
    (
        "duration p50",
        "checkpoint_metrics.duration_ns.p50",
        Unit::Ms,
    ),
    (
        "duration p99",
        "checkpoint_metrics.duration_ns.p99",
        Unit::Ms,
    ),
    (
        "start delay p50",
        "checkpoint_metrics.start_delay_ns.p50",
        Unit::Ms,
    ),
    (
        "alignment p50",
        "checkpoint_metrics.alignment_ns.p50",
        Unit::Ms,
    ),
    (
        "alignment p99",
        "checkpoint_metrics.alignment_ns.p99",
        Unit::Ms,
    ),
    (
        "state size p50",
        "checkpoint_metrics.state_bytes.p50",
        Unit::Bytes,
    ),
    (
        "in-flight data p50",
        "checkpoint_metrics.in_flight_bytes.p50",
        Unit::Bytes,
    ),
    (
        "in-flight data p99",
        "checkpoint_metrics.in_flight_bytes.p99",
        Unit::Bytes,
    ),
    ("records emitted", "records_emitted", Unit::Count),
    ("records committed", "records_committed", Unit::Count),
];
