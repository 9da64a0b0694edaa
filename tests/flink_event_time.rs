//! `flink-export` of event time: the records' timestamps, the watermark
//! strategy (bound, idleness, alignment), windows and timers in the
//! generated job; which sinks below event-time operators a real run is
//! judged on and how; and `event-time-flink` at seed 14 as recorded on
//! Flink 2.3.0, 2.2.1 and 2.1.0 (`tests/flink/event-time-14*`): the same
//! window results as the oracle, with watermark lag side by side.

use super::flink::{copy, tempdir};
use crate::common::{ckptsim, stderr, stdout};
use ckptsim::export::{self, Export, Options};
use ckptsim::model::Workload;
use ckptsim::scenario::{self, shipped::shipped};
use std::path::Path;

/// A shipped scenario exported (without the faults a real job cannot be
/// given).
fn exported(name: &str, seed: u64) -> (scenario::Scenario, Export) {
    let s = scenario::parse_str(shipped(name).unwrap(), name).unwrap();
    let mut options = Options::new(seed, s.checkpoint.algorithm);
    options.drop_faults = true;
    let e = export::export(&s, &options).unwrap_or_else(|why| panic!("{name}: {why:?}"));
    (s, e)
}

fn file<'a>(e: &'a Export, name: &str) -> &'a str {
    let f = e.files.iter().find(|f| f.0 == name);
    f.map(|f| f.1.as_str()).unwrap_or_default()
}

#[test]
fn an_event_time_job_carries_its_timestamps_strategy_windows_and_timers() {
    let (s, e) = exported("event-time-flink", 14);
    let job = file(&e, "java/CkptsimJob.java");
    for expected in [
        "conf.setString(\"pipeline.auto-watermark-interval\", \"20 ms\");",
        "WatermarkStrategy.<Rec>forBoundedOutOfOrderness(Duration.ofMillis(20L))",
        "new WatermarkProbe()",
        "src0.push = true;",
        "SlidingEventTimeWindows.of(Duration.ofMillis(100L), Duration.ofMillis(50L))",
        ".allowedLateness(Duration.ofMillis(10L)).sideOutputLateData(LATE)",
        "op1.getSideOutput(LATE).rebalance()",
        "new TimerSum(\"timers\", 30L, 0L,",
    ] {
        assert!(job.contains(expected), "{expected} not in:\n{job}");
    }
    // Every record carries the simulated timestamp.
    let workload = Workload::generate(&s, 14);
    let data = file(&e, "data/source.txt");
    let mut stamped = 0;
    for (p, line) in data.lines().enumerate() {
        for (o, record) in line.split(' ').enumerate() {
            let ts: i64 = record.rsplit(',').next().unwrap().parse().unwrap();
            assert_eq!(ts, workload.timestamp(p as u32, o as u64), "{p}/{o}");
            stamped += 1;
        }
    }
    assert_eq!(stamped, 4 * 3000);
    // No record can be late: window results and the late output by value,
    // the timers' sums (which depend on arrival) by key and count.
    let sink = |n: &str| e.manifest.sinks.iter().find(|s| s.name == n).unwrap();
    for name in ["sink", "late"] {
        assert!(sink(name).values_exact && sink(name).unjudged.is_none());
    }
    assert!(!sink("alerts").values_exact && sink("alerts").unjudged.is_none());
    let mapping = file(&e, "MAPPING.md");
    assert!(
        mapping.contains("no record can be behind the watermark"),
        "{mapping}"
    );
}

#[test]
fn sinks_a_real_runs_timing_decides_are_not_judged_and_say_why() {
    let why = |name: &str| {
        let (_, e) = exported(name, 1);
        let s = e.manifest.sinks.iter().find(|s| s.name == "sink").unwrap();
        s.unjudged.clone().unwrap_or_default()
    };
    assert!(
        why("event-time").contains("watermark_bound is below its out_of_orderness"),
        "{}",
        why("event-time")
    );
    assert!(why("event-time-timers").contains("processing-time timers"));
    assert!(why("event-time-idle").contains("idle_timeout"));
    let (_, e) = exported("event-time-alignment", 1);
    let job = file(&e, "java/CkptsimJob.java");
    assert!(job.contains(".withIdleness(Duration.ofMillis("), "{job}");
    assert!(job.contains(".withWatermarkAlignment(\""), "{job}");
    let (_, e) = exported("event-time-sessions", 1);
    let job = file(&e, "java/CkptsimJob.java");
    assert!(job.contains("new Windows.Merging(EventTimeSessionWindows.withGap("));
}

/// `event-time-flink` at seed 14, run by its run.sh on each release.
const RECORDED: [(&str, &str); 3] = [
    ("tests/flink/event-time-14", "2.3.0"),
    ("tests/flink/event-time-14-2.2", "2.2.1"),
    ("tests/flink/event-time-14-2.1", "2.1.0"),
];

#[test]
fn recorded_event_time_runs_pass_on_three_releases_with_the_oracles_window_results() {
    for (dir, release) in RECORDED {
        let o = ckptsim(&["flink-check", dir]);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{dir}: {text}{}", stderr(&o));
        assert!(
            text.contains(
                "every sink committed exactly the failure-free run's records, by key and value"
            ),
            "{dir}: {text}"
        );
        assert!(text.contains("| watermark lag p50 |"), "{dir}: {text}");
        let o = ckptsim(&["flink-check", dir, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["flink_version"], release, "{dir}");
        assert_eq!(v["crashes_injected"], 2, "{dir}: both crashes fired");
        assert!(v["watermark_lag"]["p50"].as_u64().unwrap() > 0, "{dir}");
        assert!(v["checkpoints_completed"].as_u64().unwrap() > 5, "{dir}");
    }
}

#[test]
fn a_wrong_window_result_or_a_late_record_on_flink_is_caught() {
    let dir = tempdir("event-time");
    copy(Path::new(RECORDED[0].0), &dir);
    let committed = dir.join("real/store/committed");
    let window_file = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("sink-")
        })
        .find(|p| !std::fs::read_to_string(p).unwrap().is_empty())
        .unwrap();
    let text = std::fs::read_to_string(&window_file).unwrap();
    let first = text.lines().next().unwrap();
    let (prefix, value) = first.rsplit_once('\t').unwrap();
    let wrong = format!("{prefix}\t{}", value.parse::<i64>().unwrap() + 1);
    std::fs::write(&window_file, text.replacen(first, &wrong, 1)).unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!(
            "FAIL exactly-once-output: sink sink key {} value {value}: committed ",
            prefix.split('\t').nth(1).unwrap()
        )),
        "{}",
        stdout(&o)
    );
    // A record on the late side output, which stays empty when no record
    // can be late.
    std::fs::write(&window_file, &text).unwrap();
    std::fs::write(committed.join("late-0-0-0.tsv"), "late\t1\t1\n").unwrap();
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("sink late key 1: 1 records committed, the failure-free run commits 0"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_sink_the_real_runs_timing_decides_is_named_and_not_judged() {
    let dir = tempdir("unjudged");
    copy(Path::new(RECORDED[0].0), &dir);
    // The window sink marked as one whose records can be late, as an upsert
    // sink too (judged by a table it did not leave), and its output gone.
    let path = dir.join("export.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let sinks = manifest["sinks"].as_array_mut().unwrap();
    let sink = sinks.iter_mut().find(|s| s["name"] == "sink").unwrap();
    sink["unjudged"] = "records can be late (a test)".into();
    sink["upsert"] = true.into();
    std::fs::write(&path, manifest.to_string()).unwrap();
    for f in std::fs::read_dir(dir.join("real/store/committed")).unwrap() {
        let f = f.unwrap().path();
        if f.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("sink-")
        {
            std::fs::remove_file(f).unwrap();
        }
    }
    let o = ckptsim(&["flink-check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("sink sink not judged: records can be late (a test)"),
        "{}",
        stdout(&o)
    );
}
