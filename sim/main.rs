//! The `ckptsim` command line. Parsing and printing only; everything else
//! lives in the library.

use anyhow::Result;
use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::harness::{check_determinism as check_determinism_twice, execute, execute_job};
use ckptsim::mutant::{Mutant, Mutants, MUTANTS};
use ckptsim::report::trace;
use ckptsim::report::Summary;
use ckptsim::runtime::RunConfig;
use ckptsim::runtime::{JobOptions, RunOutcome, SnapshotKind};
use ckptsim::savepoint::{self, rescale, Image};
use ckptsim::scenario::SavepointSpec;
use ckptsim::scenario::{self, Algorithm, OPERATOR_KINDS};
use ckptsim::swarm;
use ckptsim::sweep::{self, SeedRange, Shard, SweepSpec, SweepSummary, SweepTiming};
use ckptsim::wallclock::Stopwatch;
use clap::{Parser, Subcommand};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "ckptsim",
    version,
    about = "Deterministic simulation testbed for checkpoint algorithms"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario at one seed and check it.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The seed; every random decision of the run derives from it.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Override the scenario's checkpoint algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        /// Switch on a deliberate bug (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
        /// Print one JSON object instead of the text summary.
        #[arg(long)]
        json: bool,
        /// Run twice and compare fingerprints; name the first differing event.
        #[arg(long)]
        check_determinism: bool,
        /// Swarm mode: the seed also draws the configuration within the
        /// scenario's `[swarm]` ranges (or default ranges around its values).
        #[arg(long)]
        swarm: bool,
        /// Write every event, one JSON object per line, to this file.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Write a Chrome trace-event file for ui.perfetto.dev.
        #[arg(long)]
        perfetto: Option<PathBuf>,
        #[command(flatten)]
        restore: RestoreArgs,
        /// Cancel the job at this virtual time (e.g. 400ms).
        #[arg(long, value_name = "TIME")]
        cancel_at: Option<String>,
        /// With --cancel-at: write the checkpoint the cancelled job retains
        /// (`checkpoint.retain_on_cancel`) under DIR/chk-<id>.
        #[arg(long, value_name = "DIR")]
        checkpoint_dir: Option<PathBuf>,
    },
    /// Run a scenario to a virtual time, take a savepoint and write it to a
    /// directory (the job is cancelled once it completes, or stopped with it).
    Savepoint {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// When to request the savepoint (virtual time, e.g. 300ms).
        #[arg(long, value_name = "TIME")]
        at: String,
        /// The directory to write (must not exist or be empty).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Stop the job with the savepoint (stop-with-savepoint).
        #[arg(long)]
        stop: bool,
        /// With --stop: end the sources' input first so every operator flushes.
        #[arg(long, requires = "stop")]
        drain: bool,
        /// The seed; every random decision of the run derives from it.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Override the scenario's checkpoint algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        #[command(flatten)]
        restore: RestoreArgs,
    },
    /// Run a scenario over a range of seeds, in parallel, and summarise.
    Sweep {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Seeds to run: A..B (B excluded) or A..=B.
        #[arg(long, default_value = "0..100")]
        seeds: String,
        /// Worker threads (default: every core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only the I-th (from 0) of N interleaved slices of the range.
        #[arg(long)]
        shard: Option<String>,
        /// Override the scenario's checkpoint algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        /// Switch on a deliberate bug (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
        /// Swarm mode: each seed also draws its own configuration.
        #[arg(long)]
        swarm: bool,
        /// Write one JSON object per seed to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run every seed twice and compare fingerprints.
        #[arg(long)]
        check_determinism: bool,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Shrink a failing seed to a small standalone reproducer scenario.
    Shrink {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The failing seed.
        #[arg(long)]
        seed: u64,
        /// Where to write the reproducer (TOML).
        #[arg(long)]
        out: PathBuf,
        /// Override the scenario's checkpoint algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        /// Switch on a deliberate bug (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
        /// The seed ran in swarm mode.
        #[arg(long)]
        swarm: bool,
        /// Most candidate runs to try.
        #[arg(long, default_value_t = 400)]
        budget: u64,
    },
    /// Combine the `--out` files of several (sharded) sweeps into one summary.
    Merge {
        /// The JSON-lines files written by `sweep --out`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Run several algorithms on the same seeds and write a comparison
    /// report (README with tables, results.json, results.csv, SVG charts).
    Compare {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Algorithms, comma separated.
        #[arg(long, default_value = "aligned,unaligned,aligned-timeout")]
        algorithms: String,
        /// Seeds: A..B (B excluded) or A..=B.
        #[arg(long, default_value = "0..10")]
        seeds: String,
        /// One configuration axis: KEY=v1,v2,… (e.g. checkpoint.interval=100ms,1s
        /// or operators.sink.cost=200us,1ms,10ms).
        #[arg(long)]
        vary: Option<String>,
        /// The output directory.
        #[arg(long)]
        out: PathBuf,
        /// A Markdown file whose text is added to the README as notes.
        #[arg(long)]
        notes: Option<PathBuf>,
        /// Worker threads (default: every core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Switch on a deliberate bug in every run (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
    },
    /// Sweep every mutant where it applies and print the kill matrix.
    Mutants {
        /// Seeds to try per scenario: A..B (B excluded) or A..=B.
        #[arg(long, default_value = "0..1000")]
        seeds: String,
        /// Worker threads (default: every core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Candidate runs for shrinking each first kill (0: do not shrink).
        #[arg(long, default_value_t = 200)]
        shrink_budget: u64,
        /// Only this mutant (repeatable).
        #[arg(long)]
        only: Vec<String>,
        /// Where the shipped scenarios are.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// Print the matrix as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List algorithms, operators, fault kinds, checks and mutants.
    List,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => match e.downcast::<UsageError>() {
            Ok(UsageError(msg)) => {
                eprintln!("{msg}");
                ExitCode::from(2)
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}

/// Bad input: printed as is, exit code 2.
#[derive(Debug)]
struct UsageError(String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::List => {
            list();
            Ok(0)
        }
        Command::Run {
            scenario,
            seed,
            algorithm,
            mutants,
            json,
            check_determinism,
            swarm,
            trace,
            perfetto,
            restore,
            cancel_at,
            checkpoint_dir,
        } => run(RunArgs {
            path: scenario,
            seed,
            algorithm,
            mutant_names: mutants,
            json,
            check_determinism,
            swarm_flag: swarm,
            trace,
            perfetto,
            restore,
            cancel_at,
            checkpoint_dir,
        }),
        Command::Savepoint {
            scenario,
            at,
            out,
            stop,
            drain,
            seed,
            algorithm,
            restore,
        } => savepoint_cmd(SavepointArgs {
            path: scenario,
            at,
            out,
            stop,
            drain,
            seed,
            algorithm,
            restore,
        }),
        Command::Sweep {
            scenario,
            seeds,
            jobs,
            shard,
            algorithm,
            mutants,
            swarm,
            out,
            check_determinism,
            json,
        } => {
            let loaded = load_scenario(&scenario)?;
            let algorithm = parse_algorithm(algorithm, &loaded)?;
            let spec = SweepSpec {
                swarm: swarm_spec(&loaded, swarm),
                scenario: loaded,
                path: scenario.display().to_string(),
                seeds: SeedRange::parse(&seeds).map_err(|e| UsageError(format!("error: {e}")))?,
                shard: shard
                    .map(|s| Shard::parse(&s))
                    .transpose()
                    .map_err(|e| UsageError(format!("error: {e}")))?,
                algorithm,
                mutants: parse_mutants(&mutants)?,
                check_determinism,
            };
            sweep(&spec, jobs, out, json)
        }
        Command::Merge { files, json } => merge(&files, json),
        Command::Compare {
            scenario,
            algorithms,
            seeds,
            vary,
            out,
            notes,
            jobs,
            mutants,
        } => compare_cmd(CompareArgs {
            path: scenario,
            algorithms,
            seeds,
            vary,
            out,
            notes,
            jobs,
            mutants: parse_mutants(&mutants)?,
        }),
        Command::Mutants {
            seeds,
            jobs,
            shrink_budget,
            only,
            scenarios,
            json,
        } => {
            for n in &only {
                if Mutant::from_name(n).is_none() {
                    return Err(UsageError(format!(
                        "error: unknown mutant `{n}`\n  help: known mutants: {}",
                        Mutant::names()
                    ))
                    .into());
                }
            }
            let spec = ckptsim::killmatrix::KillSpec {
                seeds: SeedRange::parse(&seeds).map_err(|e| UsageError(format!("error: {e}")))?,
                jobs: jobs
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
                shrink_budget,
                only,
            };
            let m = ckptsim::killmatrix::build(&spec, &scenarios)
                .map_err(|e| UsageError(format!("error: {e}")))?;
            if json {
                emit(&format!("{}\n", serde_json::to_string(&m)?));
            } else {
                emit(&m.to_text());
            }
            Ok(if m.survived == 0 { 0 } else { 1 })
        }
        Command::Shrink {
            scenario,
            seed,
            out,
            algorithm,
            mutants,
            swarm,
            budget,
        } => {
            let loaded = load_scenario(&scenario)?;
            let algorithm = parse_algorithm(algorithm, &loaded)?;
            let mutants = parse_mutants(&mutants)?;
            let (sc, swarmed) = match swarm_spec(&loaded, swarm) {
                Some(spec) => (swarm::draw(&loaded, &spec, seed).0, true),
                None => (loaded, false),
            };
            shrink_cmd(
                &scenario, &sc, seed, algorithm, mutants, swarmed, &out, budget,
            )
        }
    }
}

fn load_scenario(path: &Path) -> Result<scenario::Scenario> {
    Ok(scenario::load(path).map_err(|e| UsageError(e.to_string()))?)
}

fn parse_algorithm(name: Option<String>, scenario: &scenario::Scenario) -> Result<Algorithm> {
    match name {
        None => Ok(scenario.checkpoint.algorithm),
        Some(name) => Ok(Algorithm::from_name(&name).ok_or_else(|| {
            UsageError(format!(
                "error: unknown algorithm `{name}`\n  help: known algorithms: {}",
                Algorithm::names()
            ))
        })?),
    }
}

/// The swarm ranges in effect: the scenario's `[swarm]` table when it is
/// enabled or `--swarm` is given, default ranges for `--swarm` without one.
fn swarm_spec(s: &scenario::Scenario, flag: bool) -> Option<scenario::SwarmSpec> {
    match (&s.swarm, flag) {
        (Some(spec), _) if spec.enabled || flag => Some(spec.clone()),
        (None, true) => Some(swarm::default_ranges(s)),
        _ => None,
    }
}

fn sweep(spec: &SweepSpec, jobs: Option<usize>, out: Option<PathBuf>, json: bool) -> Result<u8> {
    use std::io::IsTerminal;
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let total = spec.seeds().len() as u64;
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} seeds  {per_sec}  eta {eta}  {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let failing = std::sync::atomic::AtomicU64::new(0);
    let step = (total / 10).max(1);
    let progress = |done: u64, failed: bool| {
        let f = if failed {
            failing.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
        } else {
            failing.load(std::sync::atomic::Ordering::Relaxed)
        };
        match &bar {
            Some(bar) => {
                bar.set_position(done);
                if f > 0 {
                    bar.set_message(format!("{f} failing"));
                }
            }
            None if done.is_multiple_of(step) || done == total => {
                eprintln!("sweep: {done}/{total} seeds, {f} failing");
            }
            None => {}
        }
    };
    let clock = Stopwatch::start();
    let results = sweep::run(spec, jobs, &progress);
    let wall = clock.elapsed_ns();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = out {
        let mut text = String::new();
        for r in &results {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        std::fs::write(&path, text)
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
    }
    let summary = SweepSummary::of(&results).map_err(|e| UsageError(format!("error: {}", e.0)))?;
    let timing = SweepTiming::new(&summary, wall);
    if json {
        let v = serde_json::json!({ "summary": summary, "timing": timing });
        emit(&format!("{v}\n"));
    } else {
        emit(&summary.to_text(Some(&timing)));
    }
    Ok(if summary.seeds_failed == 0 { 0 } else { 1 })
}

#[allow(clippy::too_many_arguments)]
fn shrink_cmd(
    path: &Path,
    sc: &scenario::Scenario,
    seed: u64,
    algorithm: Algorithm,
    mutants: ckptsim::mutant::Mutants,
    swarmed: bool,
    out: &Path,
    budget: u64,
) -> Result<u8> {
    use std::fmt::Write as _;
    let shrunk = ckptsim::shrink::shrink(sc, seed, algorithm, mutants, budget)
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let mut args = format!("--seed {seed} --algorithm {}", algorithm.name());
    for m in mutants.names() {
        args.push_str(&format!(" --mutant {m}"));
    }
    let origin = format!(
        "{} {args}{}",
        path.display(),
        if swarmed { " --swarm" } else { "" }
    );
    let text = ckptsim::shrink::reproducer_text(&shrunk, &origin, &args);
    std::fs::write(out, text)
        .map_err(|e| UsageError(format!("error: cannot write {}: {e}", out.display())))?;
    let mut report = String::new();
    let _ = writeln!(report, "shrunk       fails {}", shrunk.target.join(", "));
    if let Err(p) = &shrunk.execution {
        let _ = writeln!(report, "panic        {p}");
    }
    let _ = writeln!(report, "before       {}", shrunk.before);
    let _ = writeln!(report, "after        {}", shrunk.after);
    let _ = writeln!(report, "runs         {}", shrunk.runs);
    let _ = writeln!(report, "removed");
    for s in &shrunk.steps {
        let _ = writeln!(report, "  - {s}");
    }
    let _ = writeln!(report, "wrote        {}", out.display());
    let _ = writeln!(report, "replay       ckptsim run {} {args}", out.display());
    emit(&report);
    Ok(0)
}

struct CompareArgs {
    path: PathBuf,
    algorithms: String,
    seeds: String,
    vary: Option<String>,
    out: PathBuf,
    notes: Option<PathBuf>,
    jobs: Option<usize>,
    mutants: Mutants,
}

fn compare_cmd(a: CompareArgs) -> Result<u8> {
    use ckptsim::compare::{self, CompareSpec, Vary};
    let CompareArgs {
        path,
        algorithms,
        seeds,
        vary,
        out,
        notes,
        jobs,
        mutants,
    } = a;
    let scenario = load_scenario(&path)?;
    let mut algs = Vec::new();
    for name in algorithms
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        algs.push(parse_algorithm(Some(name.to_string()), &scenario)?);
    }
    if algs.is_empty() {
        return Err(UsageError("error: --algorithms names none".to_string()).into());
    }
    let seeds_range = SeedRange::parse(&seeds).map_err(|e| UsageError(format!("error: {e}")))?;
    let vary_axis = vary
        .as_deref()
        .map(Vary::parse)
        .transpose()
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let notes_text = notes
        .as_ref()
        .map(|p| {
            std::fs::read_to_string(p)
                .map_err(|e| UsageError(format!("error: cannot read {}: {e}", p.display())))
        })
        .transpose()?;
    let mut command = format!(
        "ckptsim compare {} --algorithms {} --seeds {seeds}",
        path.display(),
        algs.iter().map(|a| a.name()).collect::<Vec<_>>().join(",")
    );
    if let Some(v) = &vary {
        command.push_str(&format!(" --vary {v}"));
    }
    for m in mutants.names() {
        command.push_str(&format!(" --mutant {m}"));
    }
    command.push_str(&format!(" --out {}", out.display()));
    if let Some(n) = &notes {
        command.push_str(&format!(" --notes {}", n.display()));
    }
    let spec = CompareSpec {
        scenario,
        path: path.display().to_string(),
        algorithms: algs,
        seeds: seeds_range,
        vary: vary_axis,
        mutants,
        command,
    };
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let total = (spec.algorithms.len() as u64)
        .saturating_mul(seeds_range.len())
        .saturating_mul(spec.vary.as_ref().map_or(1, |v| v.values.len() as u64));
    use std::io::IsTerminal;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs  eta {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    if bar.is_none() {
        eprintln!("compare: {total} runs on {jobs} threads");
    }
    let progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let c = pool
        .install(|| compare::compare(&spec, &progress))
        .map_err(|e| UsageError(format!("error: {e}")))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let files = compare::output::write(&c, &out, notes_text.as_deref())
        .map_err(|e| UsageError(format!("error: cannot write {}: {e}", out.display())))?;
    let mut text = String::new();
    for f in files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    emit(&text);
    let panicked: Vec<_> = c.runs.iter().filter(|r| r.panic.is_some()).collect();
    if !panicked.is_empty() {
        eprintln!(
            "compare: {} of {} runs panicked (a bug of ckptsim itself), left out of the metrics; README.md lists them with their replay lines",
            panicked.len(),
            c.runs.len()
        );
    }
    Ok(0)
}

fn merge(files: &[PathBuf], json: bool) -> Result<u8> {
    let mut all = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| UsageError(format!("error: cannot read {}: {e}", f.display())))?;
        let shown = f.display().to_string();
        all.extend(
            sweep::read_jsonl(&shown, &text).map_err(|e| UsageError(format!("error: {}", e.0)))?,
        );
    }
    let summary = SweepSummary::of(&all).map_err(|e| UsageError(format!("error: {}", e.0)))?;
    if json {
        emit(&format!("{}\n", serde_json::json!({ "summary": summary })));
    } else {
        emit(&summary.to_text(None));
    }
    Ok(if summary.seeds_failed == 0 { 0 } else { 1 })
}

fn parse_mutants(names: &[String]) -> Result<Mutants> {
    let mut set = Mutants::NONE;
    for n in names {
        match Mutant::from_name(n) {
            Some(m) => set = set.with(m),
            None => {
                return Err(UsageError(format!(
                    "error: unknown mutant `{n}`\n  help: known mutants: {}",
                    Mutant::names()
                ))
                .into())
            }
        }
    }
    Ok(set)
}

struct RunArgs {
    restore: RestoreArgs,
    cancel_at: Option<String>,
    checkpoint_dir: Option<PathBuf>,
    path: PathBuf,
    seed: u64,
    algorithm: Option<String>,
    mutant_names: Vec<String>,
    json: bool,
    check_determinism: bool,
    swarm_flag: bool,
    trace: Option<PathBuf>,
    perfetto: Option<PathBuf>,
}

fn run(args: RunArgs) -> Result<u8> {
    let RunArgs {
        path,
        seed,
        algorithm,
        mutant_names,
        json,
        check_determinism,
        swarm_flag,
        trace,
        perfetto,
        restore,
        cancel_at,
        checkpoint_dir,
    } = args;
    let scenario = load_scenario(&path)?;
    let algorithm = parse_algorithm(algorithm, &scenario)?;
    let mut prepared = prepare(&path, scenario, &restore)?;
    if checkpoint_dir.is_some() && cancel_at.is_none() {
        return Err(UsageError(
            "error: --checkpoint-dir needs --cancel-at: only a cancelled job retains its checkpoint\n  help: add --cancel-at TIME".to_string(),
        )
        .into());
    }
    if let Some(t) = &cancel_at {
        prepared.job.cancel_at = Some(parse_time("--cancel-at", t)?);
        let _ = write!(prepared.replay, " --cancel-at {t}");
        prepared.job.keep_snapshots = checkpoint_dir.is_some();
    }
    let scenario = prepared.scenario.clone();
    let draw = swarm_spec(&scenario, swarm_flag).map(|spec| swarm::draw(&scenario, &spec, seed));
    let (scenario, draw) = match draw {
        Some((s, d)) => (s, Some(d)),
        None => (scenario, None),
    };
    let mutants = parse_mutants(&mutant_names)?;
    let cfg = RunConfig {
        seed,
        algorithm,
        mutants,
        record_trace: check_determinism || trace.is_some() || perfetto.is_some(),
    };
    let (execution, divergence) = match prepared.input_seed {
        _ if prepared.is_plain() && check_determinism => check_determinism_twice(&scenario, &cfg),
        _ if prepared.is_plain() => (execute(&scenario, &cfg), None),
        input_seed => {
            let input_seed = input_seed.unwrap_or(seed);
            let first = execute_job(&scenario, &cfg, &prepared.job, input_seed);
            let divergence = check_determinism
                .then(|| execute_job(&scenario, &cfg, &prepared.job, input_seed))
                .filter(|second| second.output.fingerprint != first.output.fingerprint)
                .map(|second| {
                    format!(
                        "fingerprints differ: {} and {}",
                        first.output.fingerprint, second.output.fingerprint
                    )
                });
            (first, divergence)
        }
    };
    for note in &prepared.notes {
        eprintln!("{note}");
    }
    let shown_path = path.display().to_string();
    let names = mutants.names();
    let mut summary = Summary::new(&shown_path, seed, algorithm.name(), &names, &execution);
    if let Some(d) = draw {
        summary.set_swarm(d);
    }
    summary.append_replay(&prepared.replay);
    let mut failed = !execution.verdict.passed;
    if let Some(dir) = &checkpoint_dir {
        retain(dir, &scenario, &prepared, seed, &execution)?;
    }
    let write = |path: &Path, f: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        let file = std::fs::File::create(path)
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
        let mut out = std::io::BufWriter::new(file);
        f(&mut out)
            .and_then(|()| std::io::Write::flush(&mut out))
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))
    };
    if let Some(p) = &trace {
        write(p, &|w| trace::write_jsonl(&scenario, &execution.output, w))?;
    }
    if let Some(p) = &perfetto {
        write(p, &|w| {
            trace::write_perfetto(&scenario, &execution.output, w)
        })?;
    }
    if check_determinism {
        match divergence {
            None => eprintln!(
                "determinism: two runs, same fingerprint {}",
                execution.output.fingerprint
            ),
            Some(detail) => {
                failed = true;
                eprintln!("determinism: FAILED, {detail}");
            }
        }
    }
    if json {
        emit(&format!("{}\n", serde_json::to_string(&summary)?));
    } else {
        emit(&summary.to_text(true));
    }
    Ok(if failed { 1 } else { 0 })
}

/// `--from-savepoint`, `--parallelism`, `--allow-non-restored-state`
/// (shared by `run` and `savepoint`).
#[derive(clap::Args)]
struct RestoreArgs {
    /// Start from this savepoint or retained checkpoint directory.
    #[arg(long = "from-savepoint", value_name = "DIR")]
    from: Option<PathBuf>,
    /// Change an operator's parallelism: OP=N (repeatable).
    #[arg(long, value_name = "OP=N")]
    parallelism: Vec<String>,
    /// Drop the snapshot's state of operators the job no longer has.
    #[arg(long)]
    allow_non_restored_state: bool,
}

/// A scenario ready to run as a job: parallelism changed, restored from a
/// snapshot if asked.
struct Prepared {
    scenario: scenario::Scenario,
    job: JobOptions,
    /// The seed of the input the sources read (a restored job: the
    /// snapshot's); `None`: the run's seed.
    input_seed: Option<u64>,
    /// The run's generation (0, or one more than the snapshot's).
    generation: u32,
    /// Arguments the replay command needs besides seed and algorithm.
    replay: String,
    /// What the restore did, for the person reading.
    notes: Vec<String>,
}

impl Prepared {
    /// A plain run: no restore, no cancel.
    fn is_plain(&self) -> bool {
        self.job.restore.is_none() && self.job.cancel_at.is_none()
    }
}

fn prepare(path: &Path, mut scenario: scenario::Scenario, r: &RestoreArgs) -> Result<Prepared> {
    let mut replay = String::new();
    if !r.parallelism.is_empty() {
        for arg in &r.parallelism {
            let bad = || {
                UsageError(format!(
                    "error: --parallelism `{arg}` is not OP=N\n  help: e.g. --parallelism count=4"
                ))
            };
            let (op, n) = arg.split_once('=').ok_or_else(bad)?;
            let n: u32 = n.trim().parse().map_err(|_| bad())?;
            let ids: Vec<String> = scenario.operators.iter().map(|o| o.id.clone()).collect();
            let Some(spec) = scenario.operators.iter_mut().find(|o| o.id == op.trim()) else {
                return Err(UsageError(format!(
                    "error: --parallelism: the job has no operator `{op}`\n  help: operators: {}",
                    ids.join(", ")
                ))
                .into());
            };
            spec.parallelism = n;
            let _ = write!(replay, " --parallelism {arg}");
        }
        // Validate the changed job as a file would be.
        scenario = scenario::check(&scenario, &path.display().to_string()).map_err(|errors| {
            let list: Vec<String> = errors
                .0
                .iter()
                .map(|e| {
                    let help = e
                        .help
                        .as_ref()
                        .map(|h| format!("\n  help: {h}"))
                        .unwrap_or_default();
                    format!("error: with --parallelism: {}{help}", e.message)
                })
                .collect();
            UsageError(list.join("\n"))
        })?;
    }
    let mut prepared = Prepared {
        scenario,
        job: JobOptions::default(),
        input_seed: None,
        generation: 0,
        replay,
        notes: Vec::new(),
    };
    if let Some(dir) = &r.from {
        let image = savepoint::read_dir(dir).map_err(|e| UsageError(format!("error: {e}")))?;
        let plan = rescale::assign(&image, &prepared.scenario, r.allow_non_restored_state)
            .map_err(|e| UsageError(format!("error: {e}")))?;
        let kind = match image.meta.kind {
            SnapshotKind::Savepoint => "savepoint",
            SnapshotKind::Checkpoint => "retained checkpoint",
        };
        prepared.notes.push(format!(
            "restored from {kind} {} ({}), taken by job `{}` ({}), generation {}",
            image.meta.id,
            dir.display(),
            image.meta.job,
            image.meta.algorithm,
            plan.restore.generation
        ));
        prepared
            .notes
            .extend(plan.notes.iter().map(|n| format!("  {n}")));
        prepared.input_seed = Some(image.meta.input_seed);
        prepared.generation = plan.restore.generation;
        prepared.job.restore = Some(Arc::new(plan.restore));
        prepared.replay = format!(" --from-savepoint {}{}", dir.display(), prepared.replay);
        if r.allow_non_restored_state {
            prepared.replay.push_str(" --allow-non-restored-state");
        }
    }
    Ok(prepared)
}

fn parse_time(flag: &str, text: &str) -> Result<SimTime> {
    let d = ckptsim::engine::parse_duration(text).map_err(|e| {
        UsageError(format!(
            "error: {flag} `{text}`: {e}\n  help: a virtual time such as 300ms or 1.5s"
        ))
    })?;
    if d > scenario::MAX_DURATION {
        return Err(UsageError(format!(
            "error: {flag} `{text}`: a time must be at most {}\n  help: see \"Limits on values\" in docs/scenarios.md",
            scenario::MAX_DURATION_TEXT
        ))
        .into());
    }
    Ok(SimTime(d.nanos()))
}

/// Writes the checkpoint a cancelled job retained under `dir/chk-<id>`.
fn retain(
    dir: &Path,
    scenario: &scenario::Scenario,
    prepared: &Prepared,
    seed: u64,
    e: &ckptsim::harness::Execution,
) -> Result<()> {
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|s| s.kind == SnapshotKind::Checkpoint);
    let Some(snap) = snap else {
        if !scenario.checkpoint.retain_on_cancel {
            eprintln!("note: checkpoint.retain_on_cancel is false: the cancelled job left no checkpoint behind");
        } else if e.output.outcome != RunOutcome::Cancelled {
            eprintln!(
                "note: the job was not cancelled ({}): nothing retained",
                e.output.outcome.describe()
            );
        } else {
            eprintln!(
                "note: no checkpoint had completed when the job was cancelled: nothing retained"
            );
        }
        return Ok(());
    };
    let input_seed = prepared.input_seed.unwrap_or(seed);
    let image = Image::from_run(
        scenario,
        snap,
        &e.output.store,
        input_seed,
        prepared.generation,
    )
    .map_err(|e| UsageError(format!("error: {e}")))?;
    let out = dir.join(format!("chk-{}", snap.id));
    savepoint::write_dir(&out, &image).map_err(|e| UsageError(format!("error: {e}")))?;
    eprintln!(
        "retained checkpoint {} written to {} ({} operators, {} bytes of state, {} in-flight records)",
        snap.id,
        out.display(),
        image.operators.len(),
        image.state_bytes(),
        image.in_flight_records()
    );
    Ok(())
}

struct SavepointArgs {
    path: PathBuf,
    at: String,
    out: PathBuf,
    stop: bool,
    drain: bool,
    seed: u64,
    algorithm: Option<String>,
    restore: RestoreArgs,
}

fn savepoint_cmd(a: SavepointArgs) -> Result<u8> {
    let scenario = load_scenario(&a.path)?;
    let algorithm = parse_algorithm(a.algorithm, &scenario)?;
    let mut prepared = prepare(&a.path, scenario, &a.restore)?;
    let at = parse_time("--at", &a.at)?;
    prepared.scenario.savepoints = vec![SavepointSpec {
        at,
        stop: a.stop,
        drain: a.drain,
    }];
    prepared.job.cancel_after_savepoint = !a.stop;
    prepared.job.retry_failed_savepoints = true;
    prepared.job.keep_snapshots = true;
    let scenario = prepared.scenario.clone();
    let cfg = RunConfig {
        seed: a.seed,
        algorithm,
        mutants: Mutants::NONE,
        record_trace: false,
    };
    let input_seed = prepared.input_seed.unwrap_or(a.seed);
    let e = execute_job(&scenario, &cfg, &prepared.job, input_seed);
    for note in &prepared.notes {
        eprintln!("{note}");
    }
    let shown = a.path.display().to_string();
    let mut summary = Summary::new(&shown, a.seed, algorithm.name(), &[], &e);
    summary.replay = format!(
        "ckptsim savepoint {shown} --at {} --out {}{}{} --seed {} --algorithm {}{}",
        a.at,
        a.out.display(),
        if a.stop { " --stop" } else { "" },
        if a.drain { " --drain" } else { "" },
        a.seed,
        algorithm.name(),
        prepared.replay
    );
    emit(&summary.to_text(true));
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|s| s.kind == SnapshotKind::Savepoint);
    let Some(snap) = snap else {
        if e.output.outcome == RunOutcome::Finished && e.output.counters.savepoints_triggered == 0 {
            return Err(UsageError(format!(
                "error: the job finished at {} before the savepoint requested at {} could be taken\n  help: choose an earlier --at",
                SimDuration(e.output.end_time.0),
                a.at
            ))
            .into());
        }
        let report = e.output.savepoints.first();
        let attempts: Vec<String> = report
            .map(|r| {
                r.attempts
                    .iter()
                    .map(|(id, how)| format!("savepoint {id} {how}"))
                    .collect()
            })
            .unwrap_or_default();
        let why = report
            .and_then(|r| r.failure.clone())
            .unwrap_or_else(|| format!("the job ended ({})", e.output.outcome.describe()));
        if attempts.is_empty() {
            eprintln!("savepoint FAILED: {why}; nothing written");
        } else {
            eprintln!(
                "savepoint FAILED: {why} (attempts: {}); nothing written",
                attempts.join("; ")
            );
        }
        return Ok(1);
    };
    let failed_attempts = e.output.counters.savepoints_failed;
    if failed_attempts > 0 {
        eprintln!(
            "note: {failed_attempts} savepoint attempt(s) failed before this one and were retried"
        );
    }
    let image = Image::from_run(
        &scenario,
        snap,
        &e.output.store,
        input_seed,
        prepared.generation,
    )
    .map_err(|e| UsageError(format!("error: {e}")))?;
    savepoint::write_dir(&a.out, &image).map_err(|e| UsageError(format!("error: {e}")))?;
    emit(&format!(
        "savepoint    {} requested at {}, completed at {}{}; written to {} ({} operators, {} bytes of state, {} in-flight records)\n",
        snap.id,
        a.at,
        SimDuration(snap.completed_at.0),
        match (snap.stop, snap.drain) {
            (true, true) => ", job stopped (drained)",
            (true, false) => ", job stopped",
            _ => ", job cancelled",
        },
        a.out.display(),
        image.operators.len(),
        image.state_bytes(),
        image.in_flight_records()
    ));
    Ok(if e.verdict.passed { 0 } else { 1 })
}

fn list() {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "algorithms");
    for a in Algorithm::all() {
        let _ = writeln!(s, "  {:<28} {}", a.name(), a.info().description);
    }
    let _ = writeln!(s, "operators");
    for (name, what) in OPERATOR_KINDS {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    let _ = writeln!(s, "partitionings");
    for (name, what) in [
        ("forward", "subtask i -> subtask i (equal parallelism)"),
        ("hash", "by key group (max_parallelism key groups)"),
        ("rebalance", "round-robin over downstream subtasks"),
        ("broadcast", "every record to every downstream subtask"),
    ] {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    let _ = writeln!(s, "fault kinds");
    for (name, what) in [
        (
            "crash",
            "[[faults.crashes]] at = TIME, task = \"op[i]\": a subtask dies",
        ),
        (
            "random crashes",
            "[faults.random]: crashes drawn from the seed within a window",
        ),
    ] {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    for (name, what) in ckptsim::scenario::FAULT_KINDS {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    let _ = writeln!(s, "checks");
    for (name, what) in ckptsim::check::CHECKS {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    let _ = writeln!(s, "mutants");
    for m in MUTANTS {
        let _ = writeln!(s, "  {:<28} {} (caught by {})", m.name, m.what, m.caught_by);
    }
    emit(&s);
}

/// Writes to standard output; a closed pipe (`ckptsim list | head`) is not
/// an error worth a panic.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {e}");
            std::process::exit(2);
        }
    }
}
