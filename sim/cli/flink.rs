//! `flink-export` and `flink-check`.

use super::{load_scenario, mutants_or_replay, parse_algorithm, UsageError};
use crate::export::{self, real, Options};
use anyhow::Result;
use std::path::Path;

/// A duration argument in whole milliseconds.
fn millis(flag: &str, text: &str) -> Result<u64> {
    let d = crate::engine::parse_duration(text)
        .map_err(|e| UsageError(format!("error: {flag} {text}: {e}")))?;
    Ok(d.nanos() / 1_000_000)
}

/// `flink-export`'s options.
#[derive(clap::Args)]
pub(super) struct Asked {
    /// The seed of the records and of the crashes (default: the
    /// scenario's `[replay] seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// The checkpoint algorithm (default: the scenario's).
    #[arg(long)]
    algorithm: Option<String>,
    /// Sources never end (record o of a partition is its record o % n);
    /// the real job runs for --duration, then is cancelled.
    #[arg(long)]
    repeat: bool,
    /// With --repeat: how long the real job runs.
    #[arg(long, default_value = "60s")]
    duration: String,
    /// A mutant the Java job carries, to see a real run caught
    /// (repeatable; only those `flink-export` knows in Java).
    #[arg(long = "mutant")]
    mutants: Vec<String>,
    /// Drop the faults a real job cannot be given (all but task crashes)
    /// instead of refusing the scenario; the simulated side runs without
    /// them too.
    #[arg(long)]
    drop_faults: bool,
    /// Run every subtask in one task manager, so that every channel is
    /// local (by default each chain subtask has a task manager of its
    /// own and every channel is remote, as the simulator's are).
    #[arg(long)]
    local_channels: bool,
    /// The longest the real run may take.
    #[arg(long, default_value = "600s")]
    limit: String,
    /// The Flink release the job is for: 2.0, 2.1, 2.2 or 2.3 (`run.sh`
    /// fetches it). A scenario whose `[checkpoint] flink_version` behaves
    /// otherwise where the simulator models releases is refused unless
    /// --any-flink-version.
    #[arg(long, default_value = "2.3")]
    flink_release: String,
    /// Export a scenario whose `[checkpoint] flink_version` behaves
    /// otherwise than --flink-release (the real run then follows another
    /// release's behaviour than the simulated one).
    #[arg(long)]
    any_flink_version: bool,
}

pub(super) fn export(path: &Path, out: &Path, asked: Asked) -> Result<u8> {
    let scenario = load_scenario(path)?;
    let algorithm = parse_algorithm(asked.algorithm, &scenario)?;
    let repeat = asked.repeat;
    let opts = Options {
        seed: asked.seed.unwrap_or(scenario.replay.seed),
        algorithm,
        repeat,
        duration_ms: millis("--duration", &asked.duration)?,
        limit_ms: millis("--limit", &asked.limit)?,
        mutants: mutants_or_replay(&asked.mutants, &scenario)?,
        local_channels: asked.local_channels,
        drop_faults: asked.drop_faults,
        release: flink_release(&asked.flink_release)?,
        any_version: asked.any_flink_version,
    };
    if opts.limit_ms == 0 {
        return Err(UsageError("error: --limit must be above zero".into()).into());
    }
    if repeat && (opts.duration_ms == 0 || opts.duration_ms >= opts.limit_ms) {
        return Err(UsageError(format!(
            "error: --repeat runs for --duration ({} ms), which must be above zero and below --limit ({} ms)",
            opts.duration_ms, opts.limit_ms
        ))
        .into());
    }
    let exported = export::export(&scenario, &opts).map_err(|why| {
        let mut msg = format!(
            "{}: error: cannot export to Flink (algorithm {}):",
            path.display(),
            algorithm.name()
        );
        for w in why {
            msg.push_str("\n  - ");
            msg.push_str(&w);
        }
        UsageError(msg)
    })?;
    export::write(out, &exported.files).map_err(|e| UsageError(format!("error: {e}")))?;
    let crashes = exported.manifest.crashes.len();
    println!(
        "exported {} (seed {}, {}{}) to {}: {} files, {} crash{} injected\n  run it:   sh {}\n  check it: {} flink-check {}",
        crate::input::printable(&exported.manifest.scenario),
        opts.seed,
        algorithm.name(),
        if repeat { ", repeating sources" } else { "" },
        super::shown(out),
        exported.files.len(),
        crashes,
        if crashes == 1 { "" } else { "es" },
        crate::input::shell_word(&out.join("run.sh").display().to_string()),
        crate::program::name(),
        crate::input::shell_word(&out.display().to_string()),
    );
    Ok(0)
}

pub(super) fn check(dir: &Path, json: bool) -> Result<u8> {
    let run = real::read(dir).map_err(|e| UsageError(format!("{}: error: {e}", dir.display())))?;
    if json {
        println!("{}", serde_json::to_string(&run.report)?);
    } else {
        // Names and messages in it come from the folder's files.
        print!("{}", crate::input::printable_text(&run.text()));
    }
    Ok(if run.report.verdict == "pass" { 0 } else { 1 })
}

/// `--flink-release`: one of the releases `[checkpoint] flink_version` names.
fn flink_release(text: &str) -> Result<crate::scenario::FlinkVersion> {
    use crate::scenario::FlinkVersion;
    FlinkVersion::ALL
        .into_iter()
        .find(|v| v.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = FlinkVersion::ALL.iter().map(|v| v.name()).collect();
            UsageError(format!(
                "error: --flink-release {text}: expected one of {}",
                names.join(", ")
            ))
            .into()
        })
}

/// `flink-sweep`'s options.
#[derive(clap::Args)]
pub(super) struct SweepArgs {
    /// The sweep's folder (created; an earlier sweep with the same
    /// parameters there is resumed: runs already made are kept).
    #[arg(long)]
    out: std::path::PathBuf,
    /// How many cases: scenarios drawn by the property strategies, or
    /// with --scenario, seeds of each given scenario.
    #[arg(long, default_value_t = 10)]
    cases: u64,
    /// The seed generated cases are drawn from (with --scenario: the first
    /// seed of each).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A scenario to run instead of generated ones (repeatable).
    #[arg(long = "scenario")]
    scenarios: Vec<std::path::PathBuf>,
    /// A Flink release every case runs on (repeatable; default 2.0 and
    /// 2.3): 2.0, 2.1, 2.2 or 2.3.
    #[arg(long = "release")]
    releases: Vec<String>,
    /// The algorithms cases take in turn (repeatable; default aligned,
    /// unaligned, aligned-timeout and at-least-once; with --scenario: the
    /// scenario's own).
    #[arg(long = "algorithm")]
    algorithms: Vec<String>,
    /// A mutant every exported job and its simulation carry (repeatable;
    /// those flink-export knows in Java).
    #[arg(long = "mutant")]
    mutants: Vec<String>,
    /// Real runs at a time.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// The longest one real run may take.
    #[arg(long, default_value = "120s")]
    limit: String,
    /// Run nothing: export what is missing and classify the real runs in
    /// the folder as they are (recorded runs, a sweep stopped halfway).
    #[arg(long)]
    no_run: bool,
    /// Options for every JVM of the real runs (as JAVA_TOOL_OPTIONS), e.g.
    /// "-XX:TieredStopAtLevel=1": about a third less CPU per short run,
    /// for timings a little further from a long-running job's.
    #[arg(long, default_value = "")]
    jvm_options: String,
}

pub(super) fn sweep(a: SweepArgs) -> Result<u8> {
    use crate::export::sweep::{self, runner, Case, Identity};
    let releases: Vec<crate::scenario::FlinkVersion> = match a.releases.is_empty() {
        true => vec![flink_release("2.0")?, flink_release("2.3")?],
        false => a
            .releases
            .iter()
            .map(|r| flink_release(r))
            .collect::<Result<_>>()?,
    };
    if releases.iter().any(|r| r.release().is_none()) {
        return Err(UsageError("error: --release: a 2.x release (2.0 to 2.3)".into()).into());
    }
    let names: Vec<String> = match a.algorithms.is_empty() {
        true => sweep::ALGORITHMS.iter().map(|s| s.to_string()).collect(),
        false => a.algorithms.clone(),
    };
    let mut algorithms = Vec::new();
    for n in &names {
        let alg = crate::scenario::Algorithm::from_name(n)
            .ok_or_else(|| UsageError(format!("error: --algorithm {n}: unknown algorithm")))?;
        if !sweep::ALGORITHMS.contains(&alg.name()) {
            return Err(UsageError(format!(
                "error: --algorithm {n}: has no Flink counterpart ({})",
                sweep::ALGORITHMS.join(", ")
            ))
            .into());
        }
        algorithms.push(alg);
    }
    let mutants = super::parse_mutants(&a.mutants)?;
    let limit_ms = millis("--limit", &a.limit)?;
    if limit_ms == 0 || a.jobs == 0 {
        return Err(UsageError("error: --limit and --jobs must be above zero".into()).into());
    }
    let mut cases: Vec<Case> = Vec::new();
    if a.scenarios.is_empty() {
        cases.extend((0..a.cases).map(|k| sweep::generated(a.seed, k, &algorithms)));
    }
    for (f, path) in a.scenarios.iter().enumerate() {
        let scenario = load_scenario(path)?;
        for k in 0..a.cases {
            let algorithm = match a.algorithms.is_empty() {
                true => scenario.checkpoint.algorithm,
                false => algorithms[(k % algorithms.len() as u64) as usize],
            };
            cases.push(Case {
                id: format!("{f:02}-{k:04}-{}", algorithm.name()),
                scenario: scenario.clone(),
                seed: a.seed + k,
                algorithm,
                origin: super::shown(path),
            });
        }
    }
    let command: Vec<String> = std::iter::once(crate::program::name().to_string())
        .chain(std::env::args().skip(1).filter(|w| w != "--no-run"))
        .map(|w| crate::input::shell_word(&w).into_owned())
        .collect();
    let identity = Identity {
        command: command.join(" "),
        seed: a.scenarios.is_empty().then_some(a.seed),
        cases: cases.len() as u64,
        releases: sweep::release_names(&releases),
        algorithms: names,
        mutants: mutants.names().iter().map(|m| m.to_string()).collect(),
        limit_ms,
        version: env!("CARGO_PKG_VERSION").to_string(),
        jvm_options: a.jvm_options.clone(),
    };
    let plan = runner::Plan {
        identity,
        cases,
        releases,
        mutants,
        jobs: a.jobs,
        run: !a.no_run,
        program: crate::program::name().to_string(),
    };
    let progress = |line: &str| eprintln!("{}", crate::input::printable(line));
    let summary =
        runner::sweep(&a.out, &plan, &progress).map_err(|e| UsageError(format!("error: {e}")))?;
    for (class, n) in summary.classes.iter().filter(|(_, &n)| n > 0) {
        println!("{class}: {n}");
    }
    println!(
        "results: {}\nsummary: {}",
        super::shown(&a.out.join("results.jsonl")),
        super::shown(&a.out.join("summary.md"))
    );
    let disagreements = summary
        .classes
        .iter()
        .filter(|(c, _)| {
            ["flink-only", "sim-only", "fail-differ", "releases-differ"].contains(&c.as_str())
        })
        .map(|(_, n)| n)
        .sum::<u64>();
    Ok(if disagreements > 0 { 1 } else { 0 })
}
