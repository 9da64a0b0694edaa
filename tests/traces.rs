//! The JSON-lines and Perfetto traces: recording them changes nothing in the
//! run, both files are well formed, the Perfetto timeline has the tracks
//! and spans `docs/traces.md` promises, and the same seed writes the same
//! bytes.

use crate::common::{config, load};
use ckptsim::harness::{execute, Execution};
use ckptsim::model::{ExecGraph, JobGraph};
use ckptsim::report::trace::{write_jsonl, write_perfetto};
use ckptsim::runtime::coordinator::Outcome as CpOutcome;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{Algorithm, Scenario};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Runs a shipped scenario at a seed, with tracing on, under `algorithm`
/// (the scenario's own if `None`).
fn traced(name: &str, seed: u64, algorithm: Option<Algorithm>) -> (Scenario, Execution) {
    let sc = load(name);
    let base = config(&sc, seed, &[]);
    let cfg = RunConfig {
        algorithm: algorithm.unwrap_or(base.algorithm),
        record_trace: true,
        ..base
    };
    let e = execute(&sc, &cfg);
    (sc, e)
}

fn jsonl(sc: &Scenario, e: &Execution) -> Vec<u8> {
    let mut out = Vec::new();
    write_jsonl(sc, &e.output, &mut out).expect("write jsonl");
    out
}

fn perfetto(sc: &Scenario, e: &Execution) -> Vec<u8> {
    let mut out = Vec::new();
    write_perfetto(sc, &e.output, &mut out).expect("write perfetto");
    out
}

fn task_names(sc: &Scenario) -> Vec<String> {
    ExecGraph::build(sc, &JobGraph::build(sc))
        .tasks
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// Microseconds (a JSON number) to integer nanoseconds.
fn ns(v: &Value) -> i64 {
    let us = v.as_f64().expect("a number");
    (us * 1000.0).round() as i64
}

#[test]
fn tracing_does_not_change_the_run() {
    let mut runs = vec![
        ("wordcount", None),
        ("backpressure", None),
        ("alignment-crash", None),
        ("bench", None),
    ];
    for a in Algorithm::all() {
        runs.push(("backpressure", Some(a)));
    }
    for (name, alg) in runs {
        let sc = load(name);
        let base = config(&sc, 3, &[]);
        let off = RunConfig {
            algorithm: alg.unwrap_or(base.algorithm),
            ..base
        };
        let on = RunConfig {
            record_trace: true,
            ..off.clone()
        };
        let a = execute(&sc, &off).output;
        let b = execute(&sc, &on).output;
        let what = format!("{name} {alg:?}");
        assert_eq!(a.fingerprint, b.fingerprint, "{what}");
        assert_eq!(a.events, b.events, "{what}");
        assert_eq!(a.end_time, b.end_time, "{what}");
        assert!(a.trace.is_empty() && a.timeline.is_empty(), "{what}");
        assert_eq!(b.trace.len() as u64, b.events, "{what}");
        assert!(!b.timeline.is_empty(), "{what}");
    }
}

/// Every line parses, indexes count up from 0, time never goes back, and
/// the named fields use the scenario's task names.
fn check_jsonl(sc: &Scenario, e: &Execution, bytes: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(bytes).expect("utf-8");
    let names: BTreeSet<String> = task_names(sc).into_iter().collect();
    let mut lines = Vec::new();
    let mut last_time = 0;
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|err| panic!("line {i}: {err}"));
        assert_eq!(v["index"].as_u64(), Some(i as u64), "line {i}");
        let t = v["time_ns"].as_u64().expect("time_ns");
        assert!(t >= last_time, "line {i}: time went back");
        last_time = t;
        assert!(v["event"].is_string(), "line {i}");
        assert!(v["attempt"].is_u64(), "line {i}");
        if let Some(task) = v.get("task") {
            let task = task.as_str().expect("task name");
            assert!(names.contains(task), "line {i}: unknown task {task}");
        }
        if let Some(ch) = v.get("channel") {
            let ch = ch.as_str().expect("channel");
            let (from, to) = ch.split_once(" -> ").expect("from -> to");
            assert!(names.contains(from) && names.contains(to), "line {i}: {ch}");
        }
        assert!(
            v.get("a").is_none() && v.get("b").is_none(),
            "no opaque fields"
        );
        lines.push(v);
    }
    assert_eq!(lines.len() as u64, e.output.events);
    assert!(last_time <= e.output.end_time.0);
    lines
}

#[test]
fn jsonl_is_one_valid_event_per_line() {
    let (sc, e) = traced("alignment-crash", 3, None);
    let lines = check_jsonl(&sc, &e, &jsonl(&sc, &e));
    let count = |ev: &str| lines.iter().filter(|l| l["event"] == ev).count();
    assert!(count("wake") > 0 && count("deliver") > 0);
    // The planned crash names its task, and failover bumps the attempt.
    let crash = lines.iter().find(|l| l["event"] == "crash").expect("crash");
    assert_eq!(crash["task"], "sum[1]");
    assert_eq!(crash["crash"], 0);
    let restart = lines
        .iter()
        .find(|l| l["event"] == "restart")
        .expect("restart");
    assert!(restart["attempt"].as_u64() > crash["attempt"].as_u64());
    // Checkpoint events carry the checkpoint id.
    let fin = lines
        .iter()
        .find(|l| l["event"] == "finalized")
        .expect("finalized");
    assert!(fin["checkpoint"].as_u64().is_some());
    let trig = lines
        .iter()
        .find(|l| l["event"] == "trigger-source")
        .expect("trigger-source");
    assert_eq!(trig["barrier"], "aligned");
    assert!(trig["task"].as_str().unwrap().starts_with("source["));

    let (sc, e) = traced("backpressure", 1, Some(Algorithm::Unaligned));
    let lines = check_jsonl(&sc, &e, &jsonl(&sc, &e));
    assert!(lines
        .iter()
        .any(|l| l["event"] == "trigger-source" && l["barrier"] == "unaligned"));
}

/// A complete event ("X") found in a Perfetto trace.
struct FoundSpan {
    track: String,
    name: String,
    args: Value,
    /// Start and end, in nanoseconds.
    start: i64,
    end: i64,
}

/// What the structural check found in a Perfetto trace.
#[derive(Default)]
struct Found {
    /// tid → thread name.
    threads: BTreeMap<u64, String>,
    spans: Vec<FoundSpan>,
    /// (thread name, instant name) of every "i" event.
    instants: Vec<(String, String)>,
    /// The latest end (ts + dur) or instant, in ns.
    last_ns: i64,
}

impl Found {
    fn span(&self, track: &str, name: &str) -> &FoundSpan {
        self.spans
            .iter()
            .find(|s| s.track == track && s.name == name)
            .unwrap_or_else(|| panic!("no span {name} on {track}"))
    }
    fn count(&self, track_prefix: &str, name_prefix: &str) -> usize {
        self.spans
            .iter()
            .filter(|s| s.track.starts_with(track_prefix) && s.name.starts_with(name_prefix))
            .count()
    }
    fn has_instant(&self, track: &str, name_prefix: &str) -> bool {
        self.instants
            .iter()
            .any(|(t, n)| t == track && n.starts_with(name_prefix))
    }
}

/// Checks the trace-event structure: the envelope, the fields each phase
/// needs, durations, balanced B/E and properly nested X per track, and a
/// named thread for every tid used.
fn check_perfetto(bytes: &[u8]) -> Found {
    let v: Value = serde_json::from_slice(bytes).expect("the trace parses");
    assert!(v["displayTimeUnit"].is_string());
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert!(!events.is_empty());
    let mut f = Found::default();
    let mut used = BTreeSet::new();
    let mut open: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut xs: BTreeMap<u64, Vec<(i64, i64)>> = BTreeMap::new();
    let mut timed = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("event {i}: ph"));
        let name = e["name"]
            .as_str()
            .unwrap_or_else(|| panic!("event {i}: name"));
        assert!(e["pid"].is_u64(), "event {i}: pid");
        if ph == "M" {
            if name == "thread_name" {
                let tid = e["tid"].as_u64().expect("thread_name tid");
                let tname = e["args"]["name"].as_str().expect("thread name");
                let again = f.threads.insert(tid, tname.to_string());
                assert!(again.is_none(), "tid {tid} named twice");
            }
            continue;
        }
        let tid = e["tid"]
            .as_u64()
            .unwrap_or_else(|| panic!("event {i}: tid"));
        let ts = ns(&e["ts"]);
        assert!(ts >= 0, "event {i}: ts");
        used.insert(tid);
        match ph {
            "X" => {
                let dur = ns(&e["dur"]);
                assert!(dur >= 0, "event {i}: dur");
                xs.entry(tid).or_default().push((ts, ts + dur));
                f.last_ns = f.last_ns.max(ts + dur);
                let args = e["args"].clone();
                timed.push((tid, name.to_string(), args, Some((ts, ts + dur))));
            }
            "i" | "I" => {
                let scope = e["s"].as_str();
                assert!(matches!(scope, Some("t" | "p" | "g")), "event {i}: scope");
                f.last_ns = f.last_ns.max(ts);
                timed.push((tid, name.to_string(), Value::Null, None));
            }
            "B" => open.entry(tid).or_default().push(name.to_string()),
            "E" => {
                let top = open.entry(tid).or_default().pop();
                assert!(top.is_some(), "event {i}: E without B on tid {tid}");
            }
            other => panic!("event {i}: unexpected phase {other}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "unbalanced B/E");
    for tid in &used {
        assert!(f.threads.contains_key(tid), "tid {tid} has no thread_name");
    }
    // Complete events on one track nest: each is inside or after the open ones.
    for (tid, mut spans) in xs {
        spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut stack: Vec<i64> = Vec::new();
        for (s, e) in spans {
            while stack.last().is_some_and(|&end| end <= s) {
                stack.pop();
            }
            if let Some(&end) = stack.last() {
                assert!(
                    e <= end,
                    "tid {tid}: [{s}, {e}] overlaps a span ending at {end}"
                );
            }
            stack.push(e);
        }
    }
    for (tid, name, args, span) in timed {
        let track = f.threads[&tid].clone();
        match span {
            Some((start, end)) => f.spans.push(FoundSpan {
                track,
                name,
                args,
                start,
                end,
            }),
            None => f.instants.push((track, name)),
        }
    }
    f
}

/// The timeline promises of `docs/traces.md`, for any run.
fn check_timeline(sc: &Scenario, e: &Execution, f: &Found) {
    let o = &e.output;
    // One track per subtask and one for its checkpoint work, plus the
    // coordinator's.
    let tracks: BTreeSet<&str> = f.threads.values().map(String::as_str).collect();
    assert!(tracks.contains("coordinator"));
    for t in task_names(sc) {
        assert!(tracks.contains(t.as_str()), "no track for {t}");
        assert!(tracks.contains(format!("{t} checkpoints").as_str()));
    }
    // Exactly one coordinator span per checkpoint, trigger → end, with its
    // outcome and sizes, and an instant at its end.
    for s in &o.checkpoint_stats {
        let name = format!("checkpoint {}", s.id);
        let spans: Vec<&FoundSpan> = f
            .spans
            .iter()
            .filter(|x| x.track.starts_with("coordinator") && x.name == name)
            .collect();
        assert_eq!(spans.len(), 1, "{name}");
        let span = spans[0];
        assert_eq!(
            (span.start, span.end),
            (s.trigger_ns as i64, s.end_ns as i64)
        );
        assert_eq!(span.args["state_bytes"], s.state_bytes);
        assert_eq!(span.args["in_flight_bytes"], s.in_flight_bytes);
        assert_eq!(span.args["unaligned"], s.unaligned);
        assert_eq!(
            span.args["outcome"],
            serde_json::to_value(s.outcome).unwrap()
        );
        let end = match s.outcome {
            CpOutcome::Completed => format!("completed {}", s.id),
            _ => format!("aborted {}", s.id),
        };
        assert!(f
            .instants
            .iter()
            .any(|(t, n)| t.starts_with("coordinator") && *n == end));
    }
    assert!(f.count("", "process") + f.count("", "emit") > 0);
    // Microseconds: the last thing drawn is at the end of the run.
    let end_ns = o.end_time.0 as i64;
    assert!(f.last_ns <= end_ns, "{} > {end_ns}", f.last_ns);
    assert!(
        end_ns - f.last_ns < 1_000_000,
        "last {} vs end {end_ns}",
        f.last_ns
    );
}

#[test]
fn perfetto_alignment_crash() {
    let (sc, e) = traced("alignment-crash", 3, None);
    assert!(e.verdict.passed);
    let f = check_perfetto(&perfetto(&sc, &e));
    check_timeline(&sc, &e, &f);
    // sum[1] crashes at 430 ms; the coordinator detects it 50 ms later and
    // restarts the job 100 ms after that.
    assert!(f.has_instant("sum[1]", "crash"));
    assert!(f.has_instant("coordinator", "failover"));
    assert!(f.has_instant("coordinator", "restart"));
    let recovery = f.span("coordinator", "recovery");
    assert_eq!((recovery.start, recovery.end), (480_000_000, 580_000_000));
    let crashed = f.span("sum[1]", "recovery");
    assert_eq!(crashed.start, 430_000_000);
    assert!(crashed.end >= 580_000_000);
    assert_eq!(crashed.args["cause"], "crashed");
    let cancelled = f.span("sum[0]", "recovery");
    assert_eq!(cancelled.start, 480_000_000);
    assert_eq!(cancelled.args["cause"], "cancelled");
    // Checkpoint 2 was pending at the crash: aborted by the failover.
    assert_eq!(
        f.span("coordinator", "checkpoint 2").args["outcome"],
        "failover"
    );
    // Alignments on the tasks with two inputs, snapshots everywhere,
    // barriers read.
    assert!(f.count("sum[", "alignment ") > 0);
    assert!(f.count("sink[0] checkpoints", "snapshot ") > 0);
    assert!(f.count("source[0] checkpoints", "snapshot ") > 0);
    assert!(f.has_instant("sum[0]", "barrier "));
    assert!(f.count("source[0]", "emit") > 0);
    assert!(f.count("sink[1]", "process") > 0);
}

#[test]
fn perfetto_backpressure_unaligned() {
    let (sc, e) = traced("backpressure", 1, Some(Algorithm::Unaligned));
    let f = check_perfetto(&perfetto(&sc, &e));
    check_timeline(&sc, &e, &f);
    assert!(e.output.counters.unaligned_checkpoints > 0);
    assert!(f.spans.iter().any(|s| s.track == "coordinator"
        && s.name.starts_with("checkpoint ")
        && s.args["unaligned"] == true));
    assert!(f.spans.iter().any(|s| s.name.starts_with("snapshot ")
        && s.args["barrier"] == "unaligned"
        && s.args["in_flight_bytes"].as_u64() > Some(0)));
}

/// Every algorithm's timeline is well formed (their handlers emit
/// different actions: concurrent alignments, held barriers, drains).
#[test]
fn perfetto_every_algorithm() {
    for a in Algorithm::all() {
        let (sc, e) = traced("backpressure", 4, Some(a));
        let f = check_perfetto(&perfetto(&sc, &e));
        check_timeline(&sc, &e, &f);
        check_jsonl(&sc, &e, &jsonl(&sc, &e));
    }
}

#[test]
fn traces_are_deterministic() {
    for (name, seed, alg) in [
        ("alignment-crash", 3, None),
        ("backpressure", 1, Some(Algorithm::Unaligned)),
    ] {
        let (sc, a) = traced(name, seed, alg);
        let (_, b) = traced(name, seed, alg);
        assert_eq!(jsonl(&sc, &a), jsonl(&sc, &b), "{name}");
        assert_eq!(perfetto(&sc, &a), perfetto(&sc, &b), "{name}");
    }
}

#[test]
fn writers_need_a_traced_run() {
    let sc = load("wordcount");
    let e = execute(&sc, &config(&sc, 1, &[]));
    for result in [
        write_jsonl(&sc, &e.output, &mut Vec::new()),
        write_perfetto(&sc, &e.output, &mut Vec::new()),
    ] {
        let err = result.expect_err("no trace recorded");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("record_trace"), "{err}");
    }
}

/// A scenario that is not the run's is refused, not a panic: a run of
/// `backpressure` names tasks that `wordcount` (fewer subtasks) does not
/// have, so both writers must answer with an error that says so.
#[test]
fn writers_refuse_another_scenario() {
    let (sc, e) = traced("backpressure", 1, None);
    let other = load("wordcount");
    assert!(
        task_names(&other).len() < task_names(&sc).len(),
        "the test needs a scenario with fewer subtasks than the run's"
    );
    for r in [
        write_perfetto(&other, &e.output, &mut Vec::new()),
        write_jsonl(&other, &e.output, &mut Vec::new()),
    ] {
        let err = r.expect_err("a run written against another scenario");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(
            err.to_string()
                .contains("was the run made from this scenario?"),
            "{err}"
        );
    }
}

/// The structural check itself catches spans that overlap without nesting.
#[test]
#[should_panic(expected = "overlaps")]
fn perfetto_check_rejects_bad_nesting() {
    let bad = br#"{"traceEvents":[
        {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"t"}},
        {"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1,"args":{}},
        {"name":"b","ph":"X","ts":5,"dur":10,"pid":1,"tid":1,"args":{}}
    ],"displayTimeUnit":"ms"}"#;
    check_perfetto(bad);
}
