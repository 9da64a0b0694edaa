//! The command line: exit codes 0 (all checks hold), 1 (a check failed, with
//! the replay line), 2 (bad input), and the `--json` fields.

use crate::common::ckptsim;
use std::io::Write;
use std::process::Output;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn temp_scenario(name: &str, body: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    path
}

#[test]
fn run_passes_with_exit_0() {
    let o = ckptsim(&["run", "scenarios/wordcount.toml", "--seed", "3"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for needle in [
        "seed         3",
        "algorithm    aligned",
        "events",
        "virtual time",
        "wall time",
        "events/s",
        "checkpoints",
        "faults       ",
        "recoveries",
        "consistent-cut",
        "guarantee    exactly-once",
        "fingerprint",
        "verdict      PASS",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    // Piped output has no colour (a terminal gets `report::paint`'s).
    assert!(!out.contains('\x1b'), "{out:?}");
}

#[test]
fn json_has_the_documented_fields_and_is_deterministic() {
    let o = ckptsim(&["run", "scenarios/wordcount.toml", "--seed", "5", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "seed",
        "algorithm",
        "fingerprint",
        "events",
        "virtual_time_ns",
        "wall_ms",
        "events_per_sec",
        "checkpoints_completed",
        "checkpoints_aborted",
        "crashes",
        "recoveries",
        "guarantee",
        "verdict",
        "violations",
        "checkpoints_unaligned",
        "checkpoint_metrics",
        "checkpoints",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let first = &v["checkpoints"][0];
    for key in [
        "duration_ns",
        "outcome",
        "state_bytes",
        "in_flight_bytes",
        "unaligned",
        "start_delay_ns",
        "alignment_ns",
    ] {
        assert!(first.get(key).is_some(), "checkpoint lacks {key}");
    }
    for key in [
        "duration_ns",
        "start_delay_ns",
        "alignment_ns",
        "state_bytes",
        "in_flight_bytes",
    ] {
        let d = &v["checkpoint_metrics"][key];
        assert!(d.get("p50").is_some() && d.get("p99").is_some(), "{key}");
    }
    let again: serde_json::Value = serde_json::from_slice(
        &ckptsim(&["run", "scenarios/wordcount.toml", "--seed", "5", "--json"]).stdout,
    )
    .unwrap();
    assert_eq!(v["fingerprint"], again["fingerprint"]);
    assert_eq!(v["events"], again["events"]);
}

#[test]
fn check_determinism_passes() {
    let o = ckptsim(&[
        "run",
        "scenarios/alignment-crash.toml",
        "--seed",
        "2",
        "--check-determinism",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("same fingerprint"), "{err}");
}

#[test]
fn a_caught_mutant_exits_1_with_a_replay_line_that_replays() {
    let o = ckptsim(&[
        "run",
        "scenarios/alignment-crash.toml",
        "--seed",
        "0",
        "--mutant",
        "no-source-rewind",
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let replay = out
        .lines()
        .find_map(|l| l.strip_prefix("replay       "))
        .expect("a replay line");
    assert_eq!(
        replay,
        "ckptsim run scenarios/alignment-crash.toml --seed 0 --algorithm aligned --mutant no-source-rewind"
    );
    let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let again = ckptsim(&args);
    assert_eq!(again.status.code(), Some(1));
    let fp = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("fingerprint"))
            .map(str::to_string)
    };
    assert_eq!(
        fp(&out),
        fp(&text(&again).0),
        "the replay fails the same way"
    );
}

/// Colour follows the conventions: `CLICOLOR_FORCE` colours even into a
/// pipe, `NO_COLOR` wins over it, `CLICOLOR=0` or a pipe alone give plain
/// text.
#[test]
fn colour_follows_no_color_and_clicolor_force() {
    let run = |env: &[(&str, &str)]| {
        let mut c = crate::common::ckptsim_command();
        c.args(["run", "scenarios/wordcount.toml", "--seed", "3"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        text(&o).0
    };
    let forced = run(&[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains("\x1b[1;32mPASS\x1b[0m"), "{forced:?}");
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'));
    assert!(!run(&[("CLICOLOR", "0")]).contains('\x1b'));
    assert!(!run(&[]).contains('\x1b'));
}

/// A replay line names the program as it was invoked and runs as printed
/// from the same shell: by a relative path as after `cargo build --release`
/// (`target/release/ckptsim run …`), by its bare name when a shell found
/// it on `PATH`, and by a path that needs quoting.
#[test]
fn replay_lines_run_as_printed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_ckptsim"));
    // The binary's path relative to the repository's root, as the README's
    // commands reach it.
    let relative = match exe.strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => {
            let up = root.components().count() - 1;
            let mut r = std::path::PathBuf::from("../".repeat(up));
            r.push(exe.strip_prefix("/").unwrap());
            r
        }
    };
    let dir = std::env::temp_dir().join(format!("ckptsim-replay-{}", std::process::id()));
    let spaced = dir.join("my bin");
    std::fs::create_dir_all(&spaced).unwrap();
    let linked = spaced.join("ckptsim");
    std::fs::remove_file(&linked).ok();
    std::os::unix::fs::symlink(exe, &linked).unwrap();
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = |line: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(line)
            .current_dir(root)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let fp = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("fingerprint"))
            .map(str::to_string)
    };
    let args = "run scenarios/alignment-crash.toml --seed 0 --mutant no-source-rewind";
    for (program, shown) in [
        (
            relative.display().to_string(),
            relative.display().to_string(),
        ),
        ("ckptsim".to_string(), "ckptsim".to_string()),
        (
            format!("'{}'", linked.display()),
            format!("'{}'", linked.display()),
        ),
    ] {
        let first = sh(&format!("{program} {args}"));
        let (out, err) = text(&first);
        assert_eq!(first.status.code(), Some(1), "{program}: {out}{err}");
        let replay = out
            .lines()
            .find_map(|l| l.strip_prefix("replay       "))
            .expect("a replay line");
        assert_eq!(
            replay,
            format!("{shown} run scenarios/alignment-crash.toml --seed 0 --algorithm aligned --mutant no-source-rewind")
        );
        let again = sh(replay);
        let (again_out, again_err) = text(&again);
        assert_eq!(again.status.code(), Some(1), "{replay}: {again_err}");
        assert!(fp(&out).is_some());
        assert_eq!(fp(&out), fp(&again_out), "{replay} fails the same way");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn list_names_everything() {
    let o = ckptsim(&["list"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    for needle in [
        "aligned",
        "unaligned",
        "aligned-timeout",
        "at-least-once",
        "chandy-lamport",
        "stop-the-world",
        "keyed-count",
        "sink-2pc",
        "hash",
        "crash",
        "consistent-cut",
        "no-source-rewind",
        "restart-strategy",
        "region-failover",
        "lost-notification",
        "storage",
        "coordinator-crash",
        "worker-crash",
        "latency-spike",
        "partition",
        "slow-task",
    ] {
        assert!(out.contains(needle), "{needle}");
    }
}

/// A restart strategy that gives up: exit 0 (a reported outcome, no check
/// failed), and the outcome line says why.
#[test]
fn job_failed_is_reported_with_its_reason_and_exit_0() {
    let text_in = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/alignment-crash.toml"),
    )
    .unwrap();
    let body = text_in.replace("[faults]\n", "[faults]\nmax_restarts = 0\n");
    assert_ne!(body, text_in, "alignment-crash.toml has a [faults] table");
    let path = temp_scenario("gives-up.toml", &body);
    let o = ckptsim(&["run", path.to_str().unwrap(), "--seed", "1"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("outcome      job failed: restart strategy fixed-delay gave up after 0 attempts (last failure: task "),
        "{out}"
    );
    let o = ckptsim(&["run", path.to_str().unwrap(), "--seed", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"]["kind"], "job-failed");
    assert_eq!(v["counters"]["restart_strategy_gave_up"], 1);
}

#[test]
fn every_fault_kind_scenario_passes_its_determinism_check() {
    let o = ckptsim(&[
        "run",
        "scenarios/faults.toml",
        "--seed",
        "3",
        "--check-determinism",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("same fingerprint"), "{err}");
    assert!(out.contains("1 worker crash,"), "{out}");
}

fn assert_bad_input(args: &[&str], needles: &[&str]) {
    let o = ckptsim(args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout: {out}\nstderr: {err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in stderr:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_file_exits_2() {
    assert_bad_input(&["run", "scenarios/nope.toml"], &["nope.toml"]);
}

#[test]
fn syntax_error_exits_2_with_position() {
    let p = temp_scenario("syntax.toml", "version = 1\nname = \"x\n");
    assert_bad_input(&["run", p.to_str().unwrap()], &["syntax.toml:2:"]);
}

#[test]
fn unknown_key_exits_2_with_position() {
    let base = std::fs::read_to_string(crate::common::scenario_path("bench")).unwrap();
    let body = base.replace("[checkpoint]\n", "[checkpoint]\nintervall = \"1s\"\n");
    let p = temp_scenario("unknown.toml", &body);
    assert_bad_input(
        &["run", p.to_str().unwrap()],
        &["unknown.toml:", "intervall"],
    );
}

#[test]
fn unknown_operator_in_edge_exits_2() {
    let base = std::fs::read_to_string(crate::common::scenario_path("bench")).unwrap();
    let body = base.replace("to = \"count\"", "to = \"cuont\"");
    let p = temp_scenario("edge.toml", &body);
    assert_bad_input(
        &["run", p.to_str().unwrap()],
        &["edge.toml:", "cuont", "count"],
    );
}

#[test]
fn parallelism_zero_exits_2() {
    let base = std::fs::read_to_string(crate::common::scenario_path("bench")).unwrap();
    let body = base.replacen("parallelism = 2", "parallelism = 0", 1);
    let p = temp_scenario("par.toml", &body);
    assert_bad_input(&["run", p.to_str().unwrap()], &["par.toml:", "parallelism"]);
}

#[test]
fn cycle_exits_2() {
    let base = std::fs::read_to_string(crate::common::scenario_path("wordcount")).unwrap();
    let body = format!(
        "{base}\n[[edges]]\nfrom = \"count\"\nto = \"split\"\npartitioning = \"rebalance\"\n"
    );
    let p = temp_scenario("cycle.toml", &body);
    assert_bad_input(&["run", p.to_str().unwrap()], &["cycle.toml:", "cycle"]);
}

#[test]
fn unknown_algorithm_exits_2_listing_the_known_ones() {
    assert_bad_input(
        &["run", "scenarios/wordcount.toml", "--algorithm", "alinged"],
        &["unknown algorithm `alinged`", "aligned"],
    );
    let base = std::fs::read_to_string(crate::common::scenario_path("bench")).unwrap();
    let body = base.replace("algorithm = \"aligned\"", "algorithm = \"magic\"");
    let p = temp_scenario("alg.toml", &body);
    assert_bad_input(
        &["run", p.to_str().unwrap()],
        &["alg.toml:", "magic", "aligned"],
    );
}

#[test]
fn unknown_mutant_and_bad_flags_exit_2() {
    assert_bad_input(
        &["run", "scenarios/wordcount.toml", "--mutant", "nope"],
        &["unknown mutant", "no-source-rewind"],
    );
    assert_bad_input(
        &["run", "scenarios/wordcount.toml", "--seed", "x"],
        &["seed"],
    );
    assert_bad_input(&["frobnicate"], &["frobnicate"]);
}

#[test]
fn oversized_jobs_are_refused_not_crashed() {
    let base = std::fs::read_to_string(crate::common::scenario_path("bench")).unwrap();
    let body = base
        .replace("parallelism = 2", "parallelism = 30000")
        .replace(
            "records_per_partition = 50000",
            "records_per_partition = 5000000000",
        );
    let p = temp_scenario("huge.toml", &body);
    assert_bad_input(
        &["run", p.to_str().unwrap()],
        &["channels; at most 1000000", "records in all"],
    );
}

#[test]
fn extreme_values_are_refused_or_run_never_panic() {
    let base = std::fs::read_to_string(crate::common::scenario_path("wordcount")).unwrap();
    // Past the limit: refused with its position and the limit.
    let body = base.replace(
        "cost = \"5us\"",
        "cost = \"5us\"\ncost_jitter = \"18446744073s\"",
    );
    let p = temp_scenario("jitter.toml", &body);
    assert_bad_input(
        &["run", p.to_str().unwrap()],
        &[
            "jitter.toml:40:15: error: cost_jitter must be at most 8760h (365 days)",
            "help: the largest value ckptsim supports",
        ],
    );
    assert_bad_input(
        &[
            "savepoint",
            "scenarios/wordcount.toml",
            "--at",
            "9000h",
            "--out",
            "unused",
        ],
        &["--at `9000h`: a time must be at most 8760h (365 days)"],
    );
    // A checkpoint interval below 250 us under --swarm (once an inverted
    // range), and a year-long jitter: runs, with a verdict.
    let body = base
        .replace("interval = \"100ms\"", "interval = \"100us\"")
        .replace("cost = \"5us\"", "cost = \"5us\"\ncost_jitter = \"8760h\"")
        .replace("max_events = 5_000_000", "max_events = 20_000");
    let p = temp_scenario("tiny-interval.toml", &body);
    for args in [
        vec!["run", p.to_str().unwrap()],
        vec!["run", p.to_str().unwrap(), "--swarm"],
    ] {
        let o = ckptsim(&args);
        let (out, err) = text(&o);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {out}{err}"
        );
        assert!(out.contains("verdict"), "{out}{err}");
    }
}

#[test]
fn every_algorithm_runs_from_the_command_line() {
    for a in [
        "aligned",
        "unaligned",
        "aligned-timeout",
        "at-least-once",
        "chandy-lamport",
        "stop-the-world",
    ] {
        let o = ckptsim(&[
            "run",
            "scenarios/backpressure.toml",
            "--seed",
            "2",
            "--algorithm",
            a,
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{a}: {out}{err}");
        assert!(out.contains(&format!("algorithm    {a}")), "{out}");
        assert!(out.contains("  in-flight    p50"), "{out}");
    }
}

#[test]
fn list_survives_a_closed_pipe() {
    use std::process::Stdio;
    let mut child = crate::common::ckptsim_command()
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once, as `ckptsim list | head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn run_writes_trace_and_perfetto_files() {
    let dir = std::env::temp_dir().join(format!("ckptsim-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (jsonl, json) = (dir.join("t.jsonl"), dir.join("t.json"));
    let o = ckptsim(&[
        "run",
        "scenarios/alignment-crash.toml",
        "--seed",
        "3",
        "--trace",
        jsonl.to_str().unwrap(),
        "--perfetto",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    assert!(lines.lines().count() > 1000);
    for line in lines.lines().take(50) {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().len() > 100);
    let bad = ckptsim(&[
        "run",
        "scenarios/alignment-crash.toml",
        "--perfetto",
        "/nonexistent-dir/x.json",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// A seed that panics (the `simulator-panic` mutant, at the first failover)
/// ends neither `sweep` nor `merge`: each panicking seed is listed with its
/// replay line and written to `--out` as kind `panic`, nothing is printed
/// raw, the other seeds pass, and the exit code is 1. The replay line
/// reproduces the panic.
#[test]
fn sweep_and_merge_report_panicking_seeds_and_go_on() {
    let dir = std::env::temp_dir().join(format!("ckptsim-cli-panic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("all.jsonl");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "scenarios/wordcount.toml",
            "--seeds",
            "0..16",
            "--mutant",
            "simulator-panic",
            "--jobs",
            "2",
        ];
        args.extend(extra);
        ckptsim(&args)
    };
    let o = sweep(&["--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 16);
    let mut panicked = Vec::new();
    for v in &lines {
        let seed = v["seed"].as_u64().unwrap();
        if v["panic"].is_null() {
            assert_eq!(v["passed"], true, "{v}");
            assert_eq!(v["outcome"], "finished", "{v}");
            continue;
        }
        panicked.push(seed);
        assert_eq!(v["passed"], false);
        assert_eq!(v["failed_checks"], serde_json::json!(["panic"]));
        assert_eq!(v["outcome"], "panic");
        let message = v["panic"]["message"].as_str().unwrap();
        assert!(message.starts_with("simulator-panic mutant: failover of task "));
        assert!(v["panic"]["location"]
            .as_str()
            .unwrap()
            .starts_with("sim/runtime/world/recovery.rs:"));
        let replay = v["replay"].as_str().unwrap();
        assert_eq!(
            replay,
            format!("ckptsim run scenarios/wordcount.toml --seed {seed} --algorithm aligned --mutant simulator-panic")
        );
        assert!(
            stdout.contains(&format!(
                "  seed {seed}: panic: {message} (at sim/runtime/world/recovery.rs:"
            )),
            "{stdout}"
        );
        assert!(stdout.contains(&format!("    {replay}\n")), "{stdout}");
    }
    assert!(!panicked.is_empty() && panicked.len() < 16, "{panicked:?}");
    assert!(
        stdout.contains(&format!("failures     panic {}\n", panicked.len())),
        "{stdout}"
    );

    // Two shards merged: the same summary as the whole sweep, exit 1.
    let summary = |o: &Output| {
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["summary"].clone()
    };
    let whole = sweep(&["--json"]);
    let mut parts = Vec::new();
    for i in 0..2 {
        let f = dir.join(format!("part{i}.jsonl")).display().to_string();
        let shard = format!("{i}/2");
        assert_eq!(
            sweep(&["--shard", &shard, "--out", &f]).status.code(),
            Some(1)
        );
        parts.push(f);
    }
    let mut args = vec!["merge", "--json"];
    args.extend(parts.iter().map(String::as_str));
    let merged = ckptsim(&args);
    assert_eq!(merged.status.code(), Some(1));
    assert_eq!(summary(&merged), summary(&whole));
    let merged_text = ckptsim(&["merge", &parts[0], &parts[1]]);
    assert_eq!(merged_text.status.code(), Some(1));
    let (merged_out, _) = text(&merged_text);
    for seed in &panicked {
        assert!(
            merged_out.contains(&format!("  seed {seed}: panic: ")),
            "{merged_out}"
        );
    }

    // The replay line panics the same way (exit code 101, the message).
    let replay = lines[panicked[0] as usize]["replay"]
        .as_str()
        .unwrap()
        .to_string();
    let words: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let again = ckptsim(&words);
    assert_eq!(again.status.code(), Some(101));
    assert!(text(&again)
        .1
        .contains("simulator-panic mutant: failover of task "));
    std::fs::remove_dir_all(&dir).ok();
}

/// `shrink` of a panicking seed writes a reproducer that expects the panic.
#[test]
fn shrink_of_a_panicking_seed_expects_the_panic() {
    let dir = std::env::temp_dir().join(format!("ckptsim-cli-shrink-panic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("repro.toml");
    let o = ckptsim(&[
        "shrink",
        "scenarios/wordcount.toml",
        "--seed",
        "0",
        "--mutant",
        "simulator-panic",
        "--budget",
        "60",
        "--out",
        file.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("shrunk       fails panic\n"), "{out}");
    assert!(
        out.contains("panic        simulator-panic mutant: failover of task "),
        "{out}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let repro = std::fs::read_to_string(&file).unwrap();
    assert!(repro.contains("\n# expect-fail: panic\n"), "{repro}");
    let replay = ckptsim(&[
        "run",
        file.to_str().unwrap(),
        "--seed",
        "0",
        "--mutant",
        "simulator-panic",
    ]);
    assert_eq!(replay.status.code(), Some(101));
    std::fs::remove_dir_all(&dir).ok();
}

/// A reproducer of a run whose algorithm caps the checkpoint bound (at
/// most one concurrent checkpoint with unaligned ones) carries the bound
/// the run had, not a higher one drawn or written for the scenario's own
/// algorithm: it validates, and replays.
#[test]
fn a_reproducer_carries_the_checkpoint_bound_its_run_had() {
    use ckptsim::mutant::Mutants;
    use ckptsim::scenario::{Algorithm, ScenarioData};
    let mut edit = ScenarioData::clone(&crate::common::load("event-time-timers"));
    edit.checkpoint.max_concurrent = 3;
    let sc = ckptsim::scenario::check(&edit, "three").unwrap();
    let alg = Algorithm::AlignedTimeout;
    let r = ckptsim::shrink::standalone_reproducer(&sc, alg, 7, Mutants::NONE, "three").unwrap();
    assert_eq!(r.checkpoint.max_concurrent, 1);
    assert_eq!(r.checkpoint.algorithm, alg);
    assert_eq!(r.replay.seed, 7);
    let r = ckptsim::shrink::standalone_reproducer(&sc, Algorithm::Aligned, 7, Mutants::NONE, "")
        .unwrap();
    assert_eq!(r.checkpoint.max_concurrent, 3, "aligned has no such bound");
}

/// `compare --mutant simulator-panic`: the runs that panic are failed runs
/// with their message and replay line (results.json, results.csv, the
/// README's failed runs), left out of the metrics; compare finishes.
#[test]
fn compare_records_panicking_runs_and_finishes() {
    let dir =
        std::env::temp_dir().join(format!("ckptsim-cli-compare-panic-{}", std::process::id()));
    let o = ckptsim(&[
        "compare",
        "scenarios/wordcount.toml",
        "--algorithms",
        "aligned,unaligned",
        "--seeds",
        "0..6",
        "--mutant",
        "simulator-panic",
        "--jobs",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("runs panicked"), "{err}");
    assert!(!err.contains("panicked at"), "{err}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["mutants"], serde_json::json!(["simulator-panic"]));
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    let panicked: Vec<&serde_json::Value> = runs.iter().filter(|r| !r["panic"].is_null()).collect();
    assert!(!panicked.is_empty() && panicked.len() < 12);
    for g in json["groups"].as_array().unwrap() {
        let n = panicked
            .iter()
            .filter(|r| r["algorithm"] == g["algorithm"])
            .count();
        assert_eq!(g["panicked_runs"], n as u64, "{g}");
        // Metrics come from the runs that returned.
        assert_eq!(
            g["metrics"]["throughput_rps"]["n"],
            g["runs"].as_u64().unwrap() - n as u64
        );
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("--mutant simulator-panic --out"),
        "{readme}"
    );
    assert!(readme.contains("## Failed runs"), "{readme}");
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    for r in &panicked {
        assert_eq!(r["failed_checks"], serde_json::json!(["panic"]));
        let replay = r["replay"].as_str().unwrap();
        assert!(replay.ends_with("--mutant simulator-panic"), "{replay}");
        assert!(readme.contains(&format!("  `{replay}`")), "{readme}");
        let row = csv
            .lines()
            .find(|l| l.ends_with(replay))
            .unwrap_or_else(|| panic!("no CSV row for {replay}"));
        assert!(
            row.contains(",panic,simulator-panic mutant: failover of task "),
            "{row}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The frictions a new user meets first: `--help` lists the algorithms, an
/// unknown one gets "did you mean", `--shard` says its form, `list --json`
/// is machine-readable.
#[test]
fn help_lists_algorithms_and_a_typo_gets_did_you_mean() {
    let names: Vec<&str> = ckptsim::scenario::Algorithm::all()
        .map(|a| a.name())
        .collect();
    for sub in ["run", "sweep", "shrink", "savepoint"] {
        let (out, _) = text(&ckptsim(&[sub, "--help"]));
        assert!(
            out.contains(&format!(
                "Override the scenario's checkpoint algorithm: {}",
                names.join(", ")
            )),
            "{sub}: {out}"
        );
    }
    let o = ckptsim(&["run", "scenarios/wordcount.toml", "--algorithm", "alinged"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o).1,
        format!(
            "error: unknown algorithm `alinged`\n  help: did you mean `aligned`? known algorithms: {}\n",
            names.join(", ")
        )
    );
    let (out, _) = text(&ckptsim(&["sweep", "--help"]));
    assert!(out.contains("--shard <I/N>"), "{out}");
    let o = ckptsim(&["list", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let listed: Vec<&str> = v["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names);
    for section in [
        "operators",
        "partitionings",
        "job_structure",
        "fault_kinds",
        "checks",
        "mutants",
    ] {
        assert!(!v[section].as_array().unwrap().is_empty(), "{section}");
    }
}

/// `savepoint --out` (and `run --checkpoint-dir`) into a non-empty
/// directory is refused before anything runs (the scenario is not even
/// read).
#[test]
fn a_snapshot_directory_that_is_not_empty_is_refused_before_the_run() {
    let dir = std::env::temp_dir().join(format!("ckptsim-full-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("other"), "x").unwrap();
    let shown = dir.display().to_string();
    let expected = format!(
        "error: {shown}: the directory exists and is not empty\n  help: choose a new directory; a snapshot is never written over another\n"
    );
    let o = ckptsim(&["savepoint", "no-such.toml", "--at", "1s", "--out", &shown]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o).1, expected);
    let o = ckptsim(&[
        "run",
        "no-such.toml",
        "--cancel-at",
        "1s",
        "--checkpoint-dir",
        &shown,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o).1, expected);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--vary` keys and operators get "did you mean" too.
#[test]
fn a_mistyped_vary_key_or_operator_gets_did_you_mean() {
    let sc = ckptsim::scenario::load(&crate::common::scenario_path("wordcount")).unwrap();
    let err = ckptsim::compare::apply(&sc, "network.buffer_credit", "4").unwrap_err();
    assert!(
        err.starts_with("--vary network.buffer_credit: no key `buffer_credit` in [network]; did you mean `buffer_credits`? known keys: "),
        "{err}"
    );
    let err = ckptsim::compare::apply(&sc, "operators.cuont.cost", "1ms").unwrap_err();
    assert_eq!(
        err,
        "--vary operators.cuont.cost: no operator `cuont`; did you mean `count`? known operators: source, split, count, sink"
    );
    let err = ckptsim::compare::apply(&sc, "operators.count.cots", "1ms").unwrap_err();
    assert!(err.contains("did you mean `cost`?"), "{err}");
    assert!(ckptsim::compare::apply(&sc, "network.buffer_credits", "4").is_ok());
}

/// A `--vary` value takes the type the schema gives its key, whatever the
/// file holds there or whether it sets the key at all: a flag the file
/// does not set, a count, a duration.
#[test]
fn vary_values_take_the_keys_type() {
    let sc = ckptsim::scenario::load(&crate::common::scenario_path("wordcount")).unwrap();
    assert!(!sc.checkpoint.during_recovery);
    let on = ckptsim::compare::apply(&sc, "checkpoint.during_recovery", "true").unwrap();
    assert!(on.checkpoint.during_recovery);
    let off = ckptsim::compare::apply(&on, "checkpoint.during_recovery", "false").unwrap();
    assert!(!off.checkpoint.during_recovery);
    assert!(ckptsim::compare::apply(&sc, "network.buffer_credits", "1_000").is_ok());
    let err = ckptsim::compare::apply(&sc, "checkpoint.during_recovery", "maybe").unwrap_err();
    assert!(
        err.starts_with("--vary checkpoint.during_recovery=maybe: "),
        "{err}"
    );
    let err = ckptsim::compare::apply(&sc, "checkpoint.interval", "soon").unwrap_err();
    assert!(
        err.starts_with("--vary checkpoint.interval=soon: "),
        "{err}"
    );
    let err = ckptsim::compare::apply(&sc, "checkpoint.nonsense", "1").unwrap_err();
    assert!(
        err.starts_with("--vary checkpoint.nonsense: no key `nonsense` in [checkpoint]"),
        "{err}"
    );
}

/// `compare --vary` checks every value before any run: a bad one exits 2
/// naming the key and value, and nothing ran or was written.
#[test]
fn vary_refuses_a_bad_value_before_any_run() {
    let dir = std::env::temp_dir().join(format!("ckptsim-vary-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let out = dir.join("cmp").display().to_string();
    let compare = |vary: &str| {
        ckptsim(&[
            "compare",
            "scenarios/wordcount.toml",
            "--algorithms",
            "aligned",
            "--seeds",
            "0..2",
            "--vary",
            vary,
            "--out",
            &out,
        ])
    };
    let o = compare("checkpoint.interval=100ms,never");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.starts_with("error: --vary checkpoint.interval=never: "),
        "{stderr}"
    );
    assert!(!stderr.contains("compare:"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(!dir.exists());
    // A flag the file does not set varies like any key.
    let o = compare("checkpoint.during_recovery=false,true");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let readme = std::fs::read_to_string(dir.join("cmp/README.md")).unwrap();
    assert!(readme.contains("| aligned | true |"), "{readme}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `mutants` works from any directory (the shipped scenarios are built in)
/// and its table names the scenario and seed that killed each mutant.
#[test]
fn mutants_runs_from_any_directory_and_names_what_killed_each() {
    let dir = std::env::temp_dir().join(format!("ckptsim-elsewhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = crate::common::ckptsim_command()
        .args([
            "mutants",
            "--seeds",
            "0..20",
            "--only",
            "keyed-snapshot-stale-group",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.lines().next().unwrap().contains("killed by"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("keyed-snapshot-stale-group"))
        .unwrap();
    assert!(row.contains("wordcount seed 1"), "{row}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_prints_its_table_and_leaves_no_stale_files() {
    let dir = std::env::temp_dir().join(format!("ckptsim-compare-out-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.display().to_string();
    // A previous report's chart that this one does not draw.
    std::fs::write(dir.join("vary-recovery.svg"), "<svg/>").unwrap();
    let args = [
        "compare",
        "scenarios/alignment-crash.toml",
        "--algorithms",
        "aligned,unaligned",
        "--seeds",
        "0..2",
        "--out",
        &out,
    ];
    let o = ckptsim(&args);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("algorithm  "), "{stdout}");
    assert!(lines[0].ends_with("failed runs"), "{stdout}");
    assert!(
        lines[1].starts_with("aligned  ") && lines[1].ends_with("0/2"),
        "{stdout}"
    );
    assert!(lines[2].starts_with("unaligned  "), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "report  {out}/README.md (README.md, results.json, results.csv,"
        )),
        "{stdout}"
    );
    assert!(
        !dir.join("vary-recovery.svg").exists(),
        "a stale chart is left"
    );
    assert!(dir.join("results.csv").exists());

    // A directory holding anything else is refused before any run.
    std::fs::write(dir.join("notes.md"), "mine").unwrap();
    let o = ckptsim(&args);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o).1.trim_end(),
        format!(
            "error: {out} holds `notes.md`, which no report writes: give --out an empty directory or a previous report's"
        )
    );
    assert!(dir.join("notes.md").exists() && dir.join("README.md").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_swarm_draws_each_seeds_configuration_once_for_every_algorithm() {
    let dir = std::env::temp_dir().join(format!("ckptsim-compare-swarm-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let out = dir.display().to_string();
    let o = ckptsim(&[
        "compare",
        "scenarios/wordcount.toml",
        "--algorithms",
        "aligned,unaligned",
        "--seeds",
        "0..2",
        "--swarm",
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("--seeds 0..2 --swarm --out"), "{readme}");
    assert!(
        readme.contains("- Swarm: each seed drew its configuration"),
        "{readme}"
    );
    // Each run is the swarm run of its seed: same fingerprint as `run --swarm`.
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["swarm"], true);
    let events = |alg: &str, seed: u64| {
        results["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["algorithm"] == alg && r["seed"] == seed)
            .map(|r| r["events"].as_u64().unwrap())
            .unwrap()
    };
    for (alg, seed) in [("aligned", 0), ("unaligned", 1)] {
        let o = ckptsim(&[
            "run",
            "scenarios/wordcount.toml",
            "--seed",
            &seed.to_string(),
            "--algorithm",
            alg,
            "--swarm",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["events"].as_u64().unwrap(),
            events(alg, seed),
            "{alg} seed {seed}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn jobs_zero_is_refused_with_the_range() {
    for command in ["sweep", "compare", "mutants"] {
        let mut args = vec![command];
        if command != "mutants" {
            args.push("scenarios/wordcount.toml");
        }
        if command == "compare" {
            args.extend(["--out", "/nonexistent-ckptsim-out"]);
        }
        args.extend(["--jobs", "0"]);
        let o = ckptsim(&args);
        assert_eq!(o.status.code(), Some(2), "{command}");
        let (_, err) = text(&o);
        assert!(
            err.starts_with("error: invalid value '0' for '--jobs <JOBS>': 0 is not in 1..=1024"),
            "{command}: {err}"
        );
    }
}
