//! Sweeps, shards and merge, swarm mode, the sweep → shrink → replay
//! round trip, and seeds that panic (each a failure of its own).

use crate::common::{load, scenario_path};
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::panics;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{self, Algorithm};
use ckptsim::shrink::{reproducer_header, reproducer_text, shrink};
use ckptsim::sweep::{self, SeedRange, Shard, SweepSpec, SweepSummary};
use std::process::Command;

fn spec(name: &str, seeds: std::ops::Range<u64>) -> SweepSpec {
    let sc = load(name);
    SweepSpec {
        algorithm: sc.checkpoint.algorithm,
        scenario: sc,
        path: format!("scenarios/{name}.toml"),
        seeds: SeedRange {
            start: seeds.start,
            end: seeds.end,
        },
        shard: None,
        mutants: Mutants::NONE,
        swarm: None,
        check_determinism: false,
        guided: None,
    }
}

fn quiet(_: u64, _: bool) {}

#[test]
fn results_do_not_depend_on_jobs_or_sharding() {
    let whole = spec("wordcount", 5..45);
    let one = sweep::run(&whole, 1, &quiet);
    let two = sweep::run(&whole, 2, &quiet);
    assert_eq!(one, two, "--jobs 1 and --jobs 2 give the same results");
    let summary = SweepSummary::of(&one).unwrap();
    assert_eq!(summary.seeds_run, 40);

    // Three interleaved shards, written as JSON lines and merged back.
    let mut lines = Vec::new();
    for i in 0..3 {
        let shard = SweepSpec {
            shard: Some(Shard { index: i, count: 3 }),
            ..whole.clone()
        };
        let mut text = String::new();
        for r in sweep::run(&shard, 2, &quiet) {
            text.push_str(&serde_json::to_string(&r).unwrap());
            text.push('\n');
        }
        lines.push(text);
    }
    let mut merged = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        merged.extend(sweep::read_jsonl(&format!("shard{i}.jsonl"), text).unwrap());
    }
    assert_eq!(SweepSummary::of(&merged).unwrap(), summary);
    // Overlapping shards are refused.
    let twice: Vec<_> = merged
        .iter()
        .chain(merged.iter().take(1))
        .cloned()
        .collect();
    assert!(SweepSummary::of(&twice).is_err());
}

#[test]
fn merge_from_the_command_line_equals_the_unsharded_sweep() {
    let dir = std::env::temp_dir().join(format!("ckptsim-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_ckptsim");
    let root = env!("CARGO_MANIFEST_DIR");
    let run = |args: &[&str]| {
        let o = Command::new(bin)
            .current_dir(root)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["summary"].clone()
    };
    let whole = run(&[
        "sweep",
        "scenarios/wordcount.toml",
        "--seeds",
        "0..24",
        "--json",
    ]);
    let mut files = Vec::new();
    for i in 0..2 {
        let f = dir.join(format!("part{i}.jsonl"));
        let shard = format!("{i}/2");
        let out = f.display().to_string();
        run(&[
            "sweep",
            "scenarios/wordcount.toml",
            "--seeds",
            "0..24",
            "--shard",
            &shard,
            "--jobs",
            "1",
            "--out",
            &out,
            "--json",
        ]);
        files.push(out);
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(run(&args), whole);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn swarm_seeds_draw_their_own_configuration_reproducibly() {
    let base = spec("wordcount", 0..30);
    let swarmed = SweepSpec {
        swarm: Some(ckptsim::swarm::default_ranges(&base.scenario)),
        ..base
    };
    let a = sweep::run(&swarmed, 2, &quiet);
    let b = sweep::run(&swarmed, 2, &quiet);
    assert_eq!(a, b);
    let draws: std::collections::BTreeSet<String> = a
        .iter()
        .map(|r| r.swarm.as_ref().unwrap().to_string())
        .collect();
    assert!(draws.len() > 25, "seeds draw different configurations");
    assert!(
        a.iter().all(|r| r.passed),
        "{:?}",
        a.iter().find(|r| !r.passed)
    );
    assert!(a[0].replay.ends_with("--swarm"));
}

/// A deliberately broken variant: the sweep finds a failing seed, shrink
/// reduces it to a few faults, and the reproducer file fails the same way
/// on every run, from the command line.
#[test]
fn sweep_finds_shrink_reduces_and_the_reproducer_replays() {
    let mut s = spec("backpressure", 0..30);
    s.algorithm = Algorithm::Unaligned;
    s.mutants = Mutants::NONE.with(Mutant::UnalignedDropInflight);
    let results = sweep::run(&s, 2, &quiet);
    let failing = results.iter().find(|r| !r.passed).expect("a failing seed");
    let target = failing.failed_checks.clone();

    let shrunk = shrink(&s.scenario, failing.seed, s.algorithm, s.mutants, 300).unwrap();
    // The target check (the first the seed failed) is kept; the seed's
    // other failures may go, and no new one comes.
    assert_eq!(shrunk.first, target);
    assert_eq!(shrunk.target.first(), target.first());
    assert!(shrunk.target.iter().all(|c| target.contains(c)));
    let target = shrunk.target.clone();
    assert!(shrunk.after.crashes <= 3, "{}", shrunk.after);
    assert!(shrunk.after.records <= shrunk.before.records);
    assert!(shrunk.after.tasks <= shrunk.before.tasks);

    let args = format!(
        "--seed {} --algorithm unaligned --mutant unaligned-drop-inflight",
        failing.seed
    );
    let text = reproducer_text(&shrunk, "scenarios/backpressure.toml", &args);
    assert_eq!(
        reproducer_header(&text),
        (Some(args.clone()), Some(target.join(", ")))
    );
    let file = std::env::temp_dir().join(format!("ckptsim-repro-{}.toml", std::process::id()));
    std::fs::write(&file, &text).unwrap();
    scenario::load(&file).expect("the reproducer is a valid scenario");

    let mut seen = Vec::new();
    for _ in 0..2 {
        let mut cmd = crate::common::ckptsim_command();
        cmd.arg("run").arg(&file).arg("--json");
        cmd.args(args.split_whitespace());
        let o = cmd.output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let failed: Vec<String> = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["passed"] == false)
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(failed, target);
        seen.push((v["fingerprint"].clone(), v["violations"].clone()));
    }
    assert_eq!(seen[0], seen[1], "the reproducer fails identically");
    std::fs::remove_file(&file).ok();
}

/// The `simulator-panic` mutant panics at the job's first failover: on
/// wordcount (random crashes) some seeds panic and the others pass.
fn panicking(seeds: std::ops::Range<u64>) -> SweepSpec {
    SweepSpec {
        mutants: Mutants::NONE.with(Mutant::SimulatorPanic),
        ..spec("wordcount", seeds)
    }
}

/// A panicking seed is a failure of kind `panic` with its message, location
/// and replay line; the other seeds run as they would without the mutant,
/// the same on any number of threads and in any sharding.
#[test]
fn a_panicking_seed_fails_alone_and_the_sweep_goes_on() {
    let s = panicking(0..24);
    let results = sweep::run(&s, 2, &quiet);
    assert_eq!(results, sweep::run(&s, 1, &quiet), "--jobs 1 and 2 agree");
    let clean = sweep::run(&spec("wordcount", 0..24), 2, &quiet);
    let panicked: Vec<_> = results.iter().filter(|r| r.panic.is_some()).collect();
    assert!(
        !panicked.is_empty() && panicked.len() < results.len(),
        "{} of {} seeds panicked",
        panicked.len(),
        results.len()
    );
    for (r, c) in results.iter().zip(&clean) {
        match &r.panic {
            Some(p) => {
                assert!(!r.passed);
                assert_eq!(r.failed_checks, ["panic"]);
                assert_eq!(
                    (r.outcome.as_str(), r.guarantee.as_str()),
                    ("panic", "unknown")
                );
                assert!(
                    p.message
                        .starts_with("simulator-panic mutant: failover of task "),
                    "{p}"
                );
                assert!(
                    p.location.starts_with("sim/runtime/world/recovery.rs:"),
                    "{p}"
                );
                assert_eq!(r.violation.as_deref(), Some(format!("panic: {p}").as_str()));
                assert_eq!(
                    r.replay,
                    format!(
                        "ckptsim run scenarios/wordcount.toml --seed {} --algorithm aligned --mutant simulator-panic",
                        r.seed
                    )
                );
                assert!(
                    c.counters["failovers"].as_u64().unwrap() > 0,
                    "seed {}",
                    r.seed
                );
            }
            // Without a failover the mutant changes nothing.
            None => {
                assert!(r.passed, "seed {}: {:?}", r.seed, r.violation);
                assert_eq!(r.fingerprint, c.fingerprint, "seed {}", r.seed);
            }
        }
    }
    let summary = SweepSummary::of(&results).unwrap();
    assert_eq!(summary.failures_by_check["panic"], panicked.len() as u64);
    assert_eq!(summary.outcomes["panic"], panicked.len() as u64);
    assert_eq!(summary.failures.len(), panicked.len());
    assert!(summary.failures.iter().all(|f| f.panic.is_some()));
    let text = summary.to_text(None);
    for r in &panicked {
        assert!(text.contains(&format!("  seed {}: panic: simulator-panic mutant", r.seed)));
        assert!(text.contains(&format!("    {}\n", r.replay)));
    }
    assert!(text.contains(&format!("panics       {} seeds panicked", panicked.len())));

    // Two shards through their JSON lines merge into the same summary.
    let mut merged = Vec::new();
    for i in 0..2 {
        let shard = SweepSpec {
            shard: Some(Shard { index: i, count: 2 }),
            ..s.clone()
        };
        let text: String = sweep::run(&shard, 2, &quiet)
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        merged.extend(sweep::read_jsonl(&format!("shard{i}.jsonl"), &text).unwrap());
    }
    assert_eq!(SweepSummary::of(&merged).unwrap(), summary);
}

/// Swarm draws are kept for a panicking seed (merge tells swarm sweeps
/// apart by them), and `--check-determinism` runs a panicking seed again:
/// the same panic is not nondeterminism.
#[test]
fn panicking_seeds_keep_their_swarm_draw_and_panic_deterministically() {
    let base = panicking(0..12);
    let swarmed = SweepSpec {
        swarm: Some(ckptsim::swarm::default_ranges(&base.scenario)),
        check_determinism: true,
        ..base
    };
    let results = sweep::run(&swarmed, 2, &quiet);
    assert!(results.iter().any(|r| r.panic.is_some()));
    for r in &results {
        assert!(r.swarm.is_some(), "seed {}", r.seed);
        assert_eq!(r.nondeterminism, None, "seed {}", r.seed);
        assert!(r.replay.ends_with("--swarm"));
    }
    SweepSummary::of(&results).unwrap();
}

/// Shrinking a panicking seed: the target is `panic`, every candidate that
/// panics fails the same way, and the reproducer expects the panic.
#[test]
fn a_panicking_seed_shrinks_to_a_reproducer_that_expects_the_panic() {
    let s = panicking(0..24);
    let seed = sweep::run(&s, 2, &quiet)
        .into_iter()
        .find(|r| r.panic.is_some())
        .expect("a panicking seed")
        .seed;
    let shrunk = shrink(&s.scenario, seed, s.algorithm, s.mutants, 120).unwrap();
    assert_eq!(shrunk.target, ["panic"]);
    let p = shrunk
        .execution
        .as_ref()
        .err()
        .expect("the reproducer panics");
    assert!(p.message.starts_with("simulator-panic mutant"), "{p}");
    assert!(
        shrunk.after.records < shrunk.before.records,
        "{}",
        shrunk.after
    );
    assert!(shrunk.after.crashes >= 1 && shrunk.after.crashes <= shrunk.before.crashes);

    let args = format!("--seed {seed} --algorithm aligned --mutant simulator-panic");
    let text = reproducer_text(&shrunk, "scenarios/wordcount.toml", &args);
    assert!(
        text.starts_with(
            "# Shrunk reproducer: the run panics (a bug of ckptsim itself): simulator-panic mutant"
        ),
        "{text}"
    );
    assert_eq!(
        reproducer_header(&text),
        (Some(args), Some("panic".to_string()))
    );
    let file =
        std::env::temp_dir().join(format!("ckptsim-panic-repro-{}.toml", std::process::id()));
    std::fs::write(&file, &text).unwrap();
    assert_fails_as_recorded(&file);
    std::fs::remove_file(&file).ok();
}

/// Every committed reproducer under `tests/regressions/` still fails the way
/// its header says (`# expect-fail: CHECKS`, or `# expect-fail: panic` for a
/// run that panics), or passes (`# expect-pass`: a fixed bug of the
/// simulator), identically on two runs.
#[test]
fn committed_regressions_fail_as_recorded() {
    let dir = scenario_path("x")
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no reproducers in {}", dir.display());
    for f in files {
        assert_fails_as_recorded(&f);
    }
}

/// The checks a run fails, joined by ", " (`panic` if it panicked), and
/// what a second run must repeat (its fingerprint, or its panic).
fn failed_as(sc: &scenario::Scenario, cfg: &RunConfig) -> (String, String) {
    match panics::catch(|| ckptsim::harness::execute(sc, cfg)) {
        Ok(e) => {
            let failed: Vec<&str> = e
                .verdict
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name)
                .collect();
            (failed.join(", "), e.output.fingerprint)
        }
        Err(p) => ("panic".to_string(), p.to_string()),
    }
}

/// A reproducer fails as its header records, twice alike, and passes
/// without its mutants.
fn assert_fails_as_recorded(f: &std::path::Path) {
    let text = std::fs::read_to_string(f).unwrap();
    let (args, expect) = reproducer_header(&text);
    let (args, expect) = (
        args.expect("# ckptsim: line"),
        expect.expect("# expect-fail: or # expect-pass line"),
    );
    let sc = scenario::load(f).unwrap();
    let mut seed = 0;
    let mut algorithm = sc.checkpoint.algorithm;
    let mut mutants = Mutants::NONE;
    let words: Vec<&str> = args.split_whitespace().collect();
    for w in words.windows(2) {
        match w[0] {
            "--seed" => seed = w[1].parse().unwrap(),
            "--algorithm" => algorithm = Algorithm::from_name(w[1]).unwrap(),
            "--mutant" => mutants = mutants.with(Mutant::from_name(w[1]).unwrap()),
            _ => {}
        }
    }
    let cfg = RunConfig {
        seed,
        algorithm,
        mutants,
        record_trace: false,
    };
    let (failed, a) = failed_as(&sc, &cfg);
    let (_, b) = failed_as(&sc, &cfg);
    assert_eq!(failed, expect, "{}", f.display());
    assert_eq!(a, b, "{}", f.display());
    // Without its mutants the same scenario passes: the bug is the cause.
    let (clean, _) = failed_as(
        &sc,
        &RunConfig {
            mutants: Mutants::NONE,
            ..cfg
        },
    );
    assert!(
        clean.is_empty() || mutants.is_empty(),
        "{} fails without its mutants too ({clean})",
        f.display()
    );
}

/// The JSON lines of `spec`, one shard of it, as a merge input named `file`.
fn shard_lines(spec: &SweepSpec, shard: Option<Shard>, file: &str) -> sweep::SweepInput {
    let spec = SweepSpec {
        shard,
        ..spec.clone()
    };
    let text: String = sweep::run(&spec, 1, &quiet)
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    sweep::SweepInput {
        file: file.to_string(),
        text,
    }
}

fn merge_error(inputs: &[sweep::SweepInput]) -> String {
    match sweep::merge(inputs, false) {
        Ok(_) => panic!("the merge was accepted"),
        Err(e) => e.0,
    }
}

/// Lines carry their sweep's identity (scenario content hash, ckptsim
/// version, seed range, shard); merge goes by content, not by path, and
/// refuses mixtures, naming the files and lines.
#[test]
fn merge_goes_by_scenario_content_and_refuses_mixtures() {
    let base = spec("wordcount", 0..12);
    let shard = |i| Some(Shard { index: i, count: 3 });
    let a = shard_lines(&base, shard(0), "a.jsonl");
    let b = shard_lines(&base, shard(1), "b.jsonl");
    let line: serde_json::Value = serde_json::from_str(a.text.lines().next().unwrap()).unwrap();
    let id = &line["sweep"];
    assert_eq!(id["seeds"], "0..12");
    assert_eq!(id["shard"], "0/3");
    assert_eq!(id["ckptsim"], env!("CARGO_PKG_VERSION"));
    assert_eq!(id["scenario_hash"].as_str().unwrap().len(), 64);

    // The same content under another path merges.
    let moved = SweepSpec {
        path: "elsewhere/wordcount-copy.toml".to_string(),
        ..base.clone()
    };
    let c = shard_lines(&moved, shard(2), "c.jsonl");
    let merged = sweep::merge(&[a, b, c], false).unwrap();
    let whole = sweep::run(&base, 2, &quiet);
    assert_eq!(merged.summary.seeds_run, 12);
    assert_eq!(
        merged.summary.seeds_passed,
        SweepSummary::of(&whole).unwrap().seeds_passed
    );
    assert!(merged.missing.is_none());

    // Other content under the same path is another sweep.
    let a = shard_lines(&base, shard(0), "a.jsonl");
    let b = shard_lines(&base, shard(1), "b.jsonl");
    let mut edited = base.clone();
    let mut data = ckptsim::scenario::ScenarioData::clone(&base.scenario);
    data.description.push_str(", edited");
    edited.scenario = crate::common::valid(&data);
    let c = shard_lines(&edited, shard(2), "c.jsonl");
    let e = merge_error(&[a, b, c]);
    assert!(
        e.contains("a.jsonl:1 and c.jsonl:1 come from different sweeps: scenario content"),
        "{e}"
    );

    // Another version, seed range or shard count is another sweep too.
    let a = shard_lines(&base, shard(0), "a.jsonl");
    let b = shard_lines(&base, shard(1), "b.jsonl");
    let c = shard_lines(&base, shard(2), "c.jsonl");
    let older = sweep::SweepInput {
        file: "old.jsonl".to_string(),
        text: c.text.replace(
            &format!("\"ckptsim\":\"{}\"", env!("CARGO_PKG_VERSION")),
            "\"ckptsim\":\"0.0.1\"",
        ),
    };
    let e = merge_error(&[a, b, older]);
    assert!(
        e.contains(&format!("ckptsim {} vs 0.0.1", env!("CARGO_PKG_VERSION"))),
        "{e}"
    );
    let a = shard_lines(&base, shard(0), "a.jsonl");
    let halves = shard_lines(&base, Some(Shard { index: 1, count: 2 }), "h.jsonl");
    let e = merge_error(&[a, halves]);
    assert!(e.contains("3 shards vs 2"), "{e}");

    // A line without an identity (an older ckptsim) is refused.
    let a = shard_lines(&base, shard(0), "a.jsonl");
    let mut bare: serde_json::Value = serde_json::from_str(a.text.lines().next().unwrap()).unwrap();
    bare.as_object_mut().unwrap().remove("sweep");
    let bare = sweep::SweepInput {
        file: "bare.jsonl".to_string(),
        text: format!("\n{bare}\n"),
    };
    let e = merge_error(&[bare]);
    assert!(
        e.starts_with("bare.jsonl:2: the line has no sweep identity"),
        "{e}"
    );
}

/// Half a range is refused, naming the shards without lines (or, with
/// `allow_missing`, summarised and reported); a seed twice names both
/// places.
#[test]
fn merge_reports_missing_shards_and_overlapping_seeds() {
    let base = spec("wordcount", 0..8);
    let shard = |i| Some(Shard { index: i, count: 4 });
    let inputs = || {
        vec![
            shard_lines(&base, shard(0), "s0.jsonl"),
            shard_lines(&base, shard(2), "s2.jsonl"),
        ]
    };
    let e = merge_error(&inputs());
    assert!(
        e.contains("no result for 4 of the sweep's 8 seeds")
            && e.contains("shards 1/4, 3/4 have no lines"),
        "{e}"
    );
    let merged = sweep::merge(&inputs(), true).unwrap();
    assert_eq!(merged.summary.seeds_run, 4);
    let m = merged.missing.unwrap();
    assert_eq!(
        (m.seeds, m.shards.clone()),
        (4, vec!["1/4".to_string(), "3/4".to_string()])
    );

    // A shard's file with a line cut: the gap is named by seeds.
    let mut s1 = shard_lines(&base, shard(1), "s1.jsonl");
    s1.text = s1.text.lines().next().unwrap().to_string() + "\n";
    let mut all = inputs();
    all.push(s1);
    all.push(shard_lines(&base, shard(3), "s3.jsonl"));
    let e = merge_error(&all);
    assert!(e.contains("missing seeds 5..6"), "{e}");

    let mut twice = inputs();
    twice.push(shard_lines(&base, shard(0), "again.jsonl"));
    let e = merge_error(&twice);
    assert!(
        e.contains("seed 0 appears twice: s0.jsonl:1 and again.jsonl:1"),
        "{e}"
    );

    // A line whose seed is not in the shard it names.
    let s0 = shard_lines(&base, shard(0), "s0.jsonl");
    let lying = sweep::SweepInput {
        file: "lying.jsonl".to_string(),
        text: s0.text.replace("\"shard\":\"0/4\"", "\"shard\":\"1/4\""),
    };
    let e = merge_error(&[lying]);
    assert!(
        e.contains("lying.jsonl:1: seed 0 is not in shard 1/4"),
        "{e}"
    );
}

/// A shrunk reproducer is standalone: its algorithm, seed and mutants are
/// in the file (`[checkpoint]`, `[replay]`), so `run FILE` alone fails as
/// the shrunk run did; flags still override them.
#[test]
fn a_shrunk_reproducer_fails_alone() {
    let dir = std::env::temp_dir().join(format!("ckptsim-standalone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let repro = dir.join("repro.toml").display().to_string();
    let o = crate::common::ckptsim(&[
        "shrink",
        "scenarios/backpressure.toml",
        "--seed",
        "3",
        "--algorithm",
        "unaligned",
        "--mutant",
        "unaligned-drop-inflight",
        "--budget",
        "80",
        "--out",
        &repro,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    assert!(crate::common::stdout(&o).contains(&format!("replay       ckptsim run {repro}\n")));
    let sc = scenario::load(std::path::Path::new(&repro)).unwrap();
    assert_eq!(sc.checkpoint.algorithm, Algorithm::Unaligned);
    assert_eq!(sc.replay.seed, 3);
    assert_eq!(
        sc.replay.mutants,
        vec!["unaligned-drop-inflight".to_string()]
    );
    let alone = crate::common::ckptsim(&["run", &repro, "--json"]);
    assert_eq!(
        alone.status.code(),
        Some(1),
        "{}",
        crate::common::stdout(&alone)
    );
    let v: serde_json::Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(v["seed"], 3);
    assert_eq!(v["mutants"], serde_json::json!(["unaligned-drop-inflight"]));
    // A flag overrides the file's mutants.
    let fixed =
        crate::common::ckptsim(&["run", &repro, "--mutant", "simulator-panic", "--seed", "3"]);
    assert_ne!(crate::common::stdout(&fixed), crate::common::stdout(&alone));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--max-failures`: the results are the seeds up to the N-th failing one,
/// in seed order, on any number of threads; `--trace-failures` writes a
/// Perfetto trace per failing seed.
#[test]
fn a_sweep_stops_after_max_failures_the_same_way_on_any_threads() {
    let mut base = spec("backpressure", 0..40);
    base.algorithm = Algorithm::Unaligned;
    base.mutants = Mutants::NONE.with(Mutant::UnalignedDropInflight);
    let all = sweep::run(&base, 2, &quiet);
    let failing: Vec<u64> = all.iter().filter(|r| !r.passed).map(|r| r.seed).collect();
    assert!(failing.len() > 4, "{failing:?}");
    let cut = failing[3];
    let expected: Vec<&sweep::SeedResult> = all.iter().filter(|r| r.seed <= cut).collect();
    for jobs in [1, 2] {
        let stopped = sweep::run_until(&base, jobs, Some(4), &quiet);
        assert_eq!(stopped.iter().collect::<Vec<_>>(), expected, "jobs {jobs}");
    }

    let dir = std::env::temp_dir().join(format!("ckptsim-traces-{}", std::process::id()));
    let shown = dir.display().to_string();
    let o = crate::common::ckptsim(&[
        "sweep",
        "scenarios/backpressure.toml",
        "--seeds",
        "0..40",
        "--algorithm",
        "unaligned",
        "--mutant",
        "unaligned-drop-inflight",
        "--max-failures",
        "2",
        "--trace-failures",
        &shown,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = crate::common::stdout(&o);
    assert!(
        text.contains("stopped      after 2 failing seeds"),
        "{text}"
    );
    assert!(text.contains("failure groups"), "{text}");
    let mut traced: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    traced.sort();
    let names: Vec<String> = failing[..2]
        .iter()
        .map(|s| format!("seed-{s}.json"))
        .collect();
    assert_eq!(traced, names);
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(&names[0])).unwrap()).unwrap();
    assert!(!trace["traceEvents"].as_array().unwrap().is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

/// A seed whose swarm draw makes the scenario invalid fails as
/// `invalid-draw`, with validation's message, and runs nothing.
#[test]
fn a_sweep_never_runs_an_invalid_draw() {
    use ckptsim::scenario::{SwarmSpec, MAX_BUFFER_RECORDS};
    use ckptsim::sweep::{run_seed, INVALID_DRAW};
    let too_many = MAX_BUFFER_RECORDS + 1;
    let spec = SweepSpec {
        swarm: Some(SwarmSpec {
            buffer_records: Some((too_many, too_many)),
            ..SwarmSpec::default()
        }),
        ..spec("wordcount", 0..1)
    };
    let r = run_seed(&spec, 0);
    assert!(!r.passed);
    assert_eq!(r.failed_checks, vec![INVALID_DRAW.to_string()]);
    assert_eq!((r.events, r.outcome.as_str()), (0, INVALID_DRAW));
    let violation = r.violation.unwrap();
    assert!(violation.contains("buffer_records"), "{violation}");
    let draw = r.swarm.unwrap().to_string();
    assert_eq!(draw, format!("buffer_records={too_many}"));
}
