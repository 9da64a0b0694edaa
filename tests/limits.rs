//! Resource limits (`runtime::limits`): a scenario that cannot fit in
//! memory is refused before anything is allocated, a run whose history
//! grows past the limit or that takes longer than `--max-wall` ends cleanly
//! with its own outcome, and large buffers on many channels reserve no
//! memory that no record uses.

use crate::common::{ckptsim, load, stderr, stdout};
use ckptsim::runtime::limits::{estimate, DEFAULT_MAX_MEMORY};
use std::path::PathBuf;

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A source, `chain` flat-maps of `copies` each, a sink; every edge forward.
fn flat_maps(records: u64, chain: usize, copies: u32) -> String {
    let mut text = format!(
        "version = 1\nname = \"flat-maps\"\n[[operators]]\nid = \"source\"\nkind = \"source\"\n\
         parallelism = 2\npartitions = 2\nrecords_per_partition = {records}\n"
    );
    let mut prev = "source".to_string();
    let mut edges = String::new();
    for i in 0..chain {
        text += &format!(
            "[[operators]]\nid = \"f{i}\"\nkind = \"flat-map\"\nparallelism = 2\ncopies = {copies}\n"
        );
        edges +=
            &format!("[[edges]]\nfrom = \"{prev}\"\nto = \"f{i}\"\npartitioning = \"forward\"\n");
        prev = format!("f{i}");
    }
    text += "[[operators]]\nid = \"sink\"\nkind = \"sink-2pc\"\nparallelism = 2\n";
    edges += &format!("[[edges]]\nfrom = \"{prev}\"\nto = \"sink\"\npartitioning = \"forward\"\n");
    text + &edges
}

#[test]
fn a_scenario_that_cannot_fit_is_refused_with_its_estimate() {
    // 200,000 records through two flat-maps of 1,000 copies: 2 * 10^11
    // records at the sink, which used to end in an allocation failure.
    let path = write("explode.toml", &flat_maps(100_000, 2, 1_000));
    let out = ckptsim(&["run", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("explode.toml: error: the scenario needs an estimated"),
        "{err}"
    );
    assert!(err.contains("above the limit of 8.0 GiB"), "{err}");
    assert!(err.contains("records at sinks"), "{err}");
    assert!(err.contains("--max-memory"), "{err}");
    // Every command that runs the scenario refuses it the same way.
    for cmd in [
        &["sweep", "--seeds", "0..2"][..],
        &["shrink", "--seed", "0", "--out", "/dev/null"],
    ] {
        let mut args = vec![cmd[0], path.to_str().unwrap()];
        args.extend_from_slice(&cmd[1..]);
        let out = ckptsim(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("needs an estimated"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn the_memory_limit_is_the_users() {
    let bench = "scenarios/bench.toml";
    let out = ckptsim(&["run", bench, "--max-memory", "2MiB"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("above the limit of 2.0 MiB"),
        "{}",
        stderr(&out)
    );
    let out = ckptsim(&["run", bench, "--max-memory", "1GiB"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = ckptsim(&["run", bench, "--max-memory", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ckptsim(&["run", bench, "--max-memory", "1KiB"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("smallest limit"), "{}", stderr(&out));
}

#[test]
fn estimates_grow_with_what_the_job_holds() {
    let sc = load("bench");
    let est = estimate(&sc);
    // The reference job holds some tens of MiB, well inside the default.
    assert!(est.total() > 10 << 20 && est.total() < 200 << 20, "{est:?}");
    assert!(est.total() < DEFAULT_MAX_MEMORY);
    let small = ckptsim::scenario::parse_str(&flat_maps(1_000, 1, 10), "a").unwrap();
    let large = ckptsim::scenario::parse_str(&flat_maps(1_000, 1, 100), "b").unwrap();
    let longer = ckptsim::scenario::parse_str(&flat_maps(1_000, 2, 10), "c").unwrap();
    assert!(estimate(&large).total() > 5 * estimate(&small).total());
    assert!(estimate(&longer).total() > 5 * estimate(&small).total());
}

/// source (parallelism `p`) -> hash -> keyed count -> forward -> 2PC sink,
/// with `network` before the operators, `source` keys added to the
/// source's and `tail` after the edges.
fn keyed_job(p: u32, network: &str, source: &str, tail: &str) -> String {
    format!(
        "version = 1\nname = \"keyed\"\nmax_parallelism = 256\n{network}\n\
         [[operators]]\nid = \"source\"\nkind = \"source\"\nparallelism = {p}\npartitions = {p}\n{source}\n\
         [[operators]]\nid = \"count\"\nkind = \"keyed-count\"\nparallelism = {p}\n\
         [[operators]]\nid = \"sink\"\nkind = \"sink-2pc\"\nparallelism = {p}\n\
         [[edges]]\nfrom = \"source\"\nto = \"count\"\npartitioning = \"hash\"\n\
         [[edges]]\nfrom = \"count\"\nto = \"sink\"\npartitioning = \"forward\"\n{tail}\n"
    )
}

#[test]
fn a_run_whose_history_outgrows_the_limit_ends_with_its_own_outcome_the_same_way_every_time() {
    // Checkpoints every millisecond for 10 s: the checkpoint history grows
    // until the limit ends the run.
    let job = keyed_job(
        2,
        "",
        "records_per_partition = 5000\nkeys = 100\ncost = \"2ms\"",
        "[checkpoint]\ninterval = \"1ms\"",
    );
    let path = write("history.toml", &job);
    let run = || {
        ckptsim(&[
            "run",
            path.to_str().unwrap(),
            "--max-memory",
            "7MiB",
            "--json",
        ])
    };
    let (a, b) = (run(), run());
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let json = without_wall(&a);
    assert_eq!(json["outcome"]["kind"], "memory-limit", "{json}");
    assert_eq!(json["verdict"], "incomplete");
    assert!(
        json["checkpoints_completed"].as_u64().unwrap() > 100,
        "{json}"
    );
    // Counted from the run's own data: the same event ends it every time.
    assert_eq!(json, without_wall(&b));
    // Without the limit the run finishes.
    let out = ckptsim(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("outcome      finished"),
        "{}",
        stdout(&out)
    );
}

/// The JSON line of a run without its wall-clock fields.
fn without_wall(out: &std::process::Output) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(stdout(out).lines().next().unwrap()).unwrap();
    for k in ["wall_ms", "events_per_sec"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn a_run_past_the_wall_clock_limit_ends_incomplete_not_failed() {
    let out = ckptsim(&["run", "scenarios/bench.toml", "--max-wall", "1ms"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains("stopped at --max-wall"), "{text}");
    assert!(text.contains("verdict      INCOMPLETE"), "{text}");
    let out = ckptsim(&[
        "sweep",
        "scenarios/wordcount.toml",
        "--seeds",
        "0..3",
        "--max-wall",
        "1ms",
    ]);
    let text = stdout(&out);
    assert!(text.contains("outcomes     wall-limit 3"), "{text}");
    assert!(text.contains("incomplete   3 seeds"), "{text}");
    // Every seed cut short: the sweep is not a pass either (exit 0, as for
    // a single incomplete run).
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains("verdict      INCOMPLETE"), "{text}");
    assert!(!text.contains("PASS"), "{text}");
    let out = ckptsim(&[
        "sweep",
        "scenarios/wordcount.toml",
        "--seeds",
        "0..2",
        "--max-wall",
        "1ms",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["verdict"], "incomplete", "{v}");
    let out = ckptsim(&["run", "scenarios/bench.toml", "--max-wall", "0s"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn large_buffers_on_many_channels_reserve_only_what_records_use() {
    // 40,000 channels of 65,536-record buffers: reserving every buffer in
    // full would take 100 GiB.
    let text = keyed_job(
        200,
        "[network]\nbuffer_records = 65536",
        "records_per_partition = 20",
        "",
    );
    let path = write("wide-buffers.toml", &text);
    // Run with 4 GB of address space: buffers reserved in full abort.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 4000000 && exec '{}' run '{}'",
            env!("CARGO_BIN_EXE_ckptsim"),
            path.display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("outcome      finished"),
        "{}",
        stdout(&out)
    );
}
