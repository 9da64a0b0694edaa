//! The command line: parsing, dispatching and printing; everything else
//! lives in the rest of the library. `sim/main.rs` calls [`main`]; a user's
//! own binary calls [`main_with`] to get every command over the algorithms
//! it registers.

use crate::engine::{SimDuration, SimTime};
use crate::harness::{check_determinism as check_determinism_twice, execute, execute_job};
use crate::mutant::{Mutant, Mutants, MUTANTS};
use crate::report::trace;
use crate::report::Summary;
use crate::runtime::{limits, RunConfig};
use crate::runtime::{JobOptions, RunOutcome, SnapshotKind};
use crate::savepoint::{self, rescale, Image};
use crate::scenario::SavepointSpec;
use crate::scenario::{self, Algorithm};
use crate::swarm;
use crate::sweep::{self, SeedRange, Shard, SweepSpec, SweepSummary, SweepTiming};
use crate::wallclock::Stopwatch;
use anyhow::Result;
use clap::{Parser, Subcommand};
use explore::*;
use run::*;
use stalls::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod explore;
mod flink;
mod run;
mod stalls;

#[derive(Parser)]
#[command(
    name = "ckptsim",
    version,
    about = "Deterministic simulation testbed for checkpoint algorithms"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Memory limit of each run: a scenario estimated above it is refused
    /// (exit 2), a run whose history grows past it ends with outcome
    /// memory-limit. A size: 512MiB, 8GiB, or bytes.
    #[arg(long, global = true, value_parser = size_arg, default_value = "8GiB")]
    max_memory: u64,
    /// Wall-clock limit of each run: one that takes longer ends with
    /// outcome wall-limit (not a verdict on the job). A duration: 30s, 2m.
    #[arg(long, global = true, value_parser = wall_arg)]
    max_wall: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario at one seed and check it.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The seed; every random decision of the run derives from it
        /// (default: the scenario's `[replay] seed`, 0 unless written).
        #[arg(long)]
        seed: Option<u64>,
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
    /// Check a savepoint or retained checkpoint directory without running
    /// a job: its files, checksums and every value in them; with
    /// --scenario, also that the job can restore from it.
    VerifySnapshot {
        /// The snapshot directory (it holds a _metadata file).
        dir: PathBuf,
        /// The job to check it against (as `run --from-savepoint` would).
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// With --scenario: change an operator's parallelism, OP=N (repeatable).
        #[arg(long, value_name = "OP=N", requires = "scenario")]
        parallelism: Vec<String>,
        /// With --scenario: drop state of operators the job no longer has.
        #[arg(long, requires = "scenario")]
        allow_non_restored_state: bool,
    },
    /// Run a scenario over a range of seeds, in parallel, and summarise.
    Sweep {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Seeds to run: A..B (B excluded) or A..=B.
        #[arg(long, default_value = "0..100")]
        seeds: String,
        /// Worker threads, 1 to 1024 (default: every core).
        #[arg(long, value_parser = jobs_range())]
        jobs: Option<usize>,
        /// Run only the I-th (from 0) of N interleaved slices of the range.
        #[arg(long, value_name = "I/N")]
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
        /// Stop after this many failing seeds: the summary then covers the
        /// seeds up to the last of them, in seed order.
        #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
        max_failures: Option<u64>,
        /// Write a Perfetto trace (ui.perfetto.dev) of each failing seed to
        /// DIR/seed-N.json (at most 100).
        #[arg(long, value_name = "DIR")]
        trace_failures: Option<PathBuf>,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Shrink a failing seed to a small standalone reproducer scenario.
    Shrink {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The failing seed (default: the scenario's `[replay] seed`).
        #[arg(long)]
        seed: Option<u64>,
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
    /// Run every order in which tasks read their ready inputs, up to a
    /// bound, for one seed (exhaustive exploration of a tiny job); write the
    /// first failing schedule as a standalone scenario.
    Explore {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The seed, which fixes everything else (default: the scenario's
        /// `[replay] seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override the scenario's checkpoint algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        /// Switch on a deliberate bug (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
        /// Choices enumerated per run; later ones read the lowest ready input.
        #[arg(long, default_value_t = 12, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
        depth: usize,
        /// Enumerate from this choice on (earlier ones take the first
        /// alternative): to explore later in a run.
        #[arg(long, default_value_t = 0)]
        from: usize,
        /// Stop after this many schedules (the exploration is then
        /// incomplete).
        #[arg(long, default_value_t = 100_000, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
        max_schedules: u64,
        /// Where to write the first failing schedule (TOML).
        #[arg(long)]
        out: Option<PathBuf>,
        /// A subtask that may crash, once, before any of its steps
        /// (`count[0]`; repeatable): each step is a choice too.
        #[arg(long = "crash")]
        crashes: Vec<String>,
        /// Sample this many schedules instead of enumerating them (PCT
        /// style: each deviates from the first alternative at `--changes`
        /// random choices).
        #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
        sample: Option<u64>,
        /// With `--sample`: the choices at which each sample deviates.
        #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
        changes: usize,
    },
    /// Combine the `--out` files of the shards of one sweep into its
    /// summary. Refuses lines of different sweeps (scenario content,
    /// ckptsim version, seed range, shard count, algorithm, mutants, swarm),
    /// a seed twice, and seeds of the range that no file has.
    Merge {
        /// The JSON-lines files written by `sweep --out`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// Summarise what is there when seeds are missing (reported)
        /// instead of refusing.
        #[arg(long)]
        allow_missing: bool,
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
        /// Worker threads, 1 to 1024 (default: every core).
        #[arg(long, value_parser = jobs_range())]
        jobs: Option<usize>,
        /// Switch on a deliberate bug in every run (repeatable); see `ckptsim list`.
        #[arg(long = "mutant")]
        mutants: Vec<String>,
        /// Swarm mode: each seed also draws the configuration within the
        /// scenario's `[swarm]` ranges (or default ranges around its
        /// values), the same draw for every algorithm.
        #[arg(long)]
        swarm: bool,
    },
    /// Sweep every mutant where it applies and print the kill matrix.
    Mutants {
        /// Seeds to try per scenario: A..B (B excluded) or A..=B.
        #[arg(long, default_value = "0..1000")]
        seeds: String,
        /// Worker threads, 1 to 1024 (default: every core).
        #[arg(long, value_parser = jobs_range())]
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
    /// Search generated topologies with forced alignment for checkpoint
    /// stalls (frozen data flow) and write a catalogue of their shapes
    /// (README.md, runs.csv, runs.json, shapes/*.toml).
    Stalls {
        /// Generated topologies to run.
        #[arg(long, default_value_t = 100)]
        cases: u64,
        /// Fixes every generated topology and simulation seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Algorithms to search, comma separated (`aligned` always runs as
        /// the control).
        #[arg(long, default_value = "unaligned,aligned-timeout")]
        algorithms: String,
        /// The output directory.
        #[arg(long)]
        out: PathBuf,
        /// Worker threads, 1 to 1024 (default: every core).
        #[arg(long, value_parser = jobs_range())]
        jobs: Option<usize>,
        /// A reproducer (seed and algorithm from its `# ckptsim:` line) to
        /// explain in the README: topology, blocking chain, trace, variants.
        #[arg(long, value_name = "FILE")]
        explain: Option<PathBuf>,
        /// A Markdown file whose text is added to the README as notes.
        #[arg(long)]
        notes: Option<PathBuf>,
    },
    /// Export a scenario as a runnable Flink 2.x job: Java source, the
    /// simulated records, the expected output, a mapping table of every
    /// setting, and run.sh (fetches Flink, compiles, runs on a local
    /// MiniCluster, samples its REST API).
    FlinkExport {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The directory to write (created; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        asked: flink::Asked,
    },
    /// Read a real run of an exported job back (after its run.sh): its
    /// metrics under ckptsim's names, the checks (exactly-once against the
    /// oracle, liveness), and a table beside the simulated run.
    FlinkCheck {
        /// The exported directory.
        dir: PathBuf,
        /// Print the real run's metrics and checks as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List algorithms, operators, fault kinds, checks and mutants.
    List {
        /// One JSON object: each section a list of `{name, description}`.
        #[arg(long)]
        json: bool,
    },
}

/// What a user's own binary adds to ckptsim: its checkpoint algorithms.
/// [`main_with`] registers them before any command runs.
#[derive(Default)]
pub struct Registry {
    algorithms: Vec<&'static crate::protocol::AlgorithmInfo>,
    operators: Vec<&'static crate::model::registry::OperatorKindInfo>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds an algorithm (its handler and its registry entry, as a built-in
    /// algorithm's file holds them; see docs/algorithms.md).
    pub fn algorithm(mut self, info: &'static crate::protocol::AlgorithmInfo) -> Registry {
        self.algorithms.push(info);
        self
    }

    /// Adds an operator kind (an `Operator` and its registry entry; see
    /// docs/operators.md): scenario files may name it as `kind`.
    pub fn operator(mut self, info: &'static crate::model::registry::OperatorKindInfo) -> Registry {
        self.operators.push(info);
        self
    }
}

/// The whole command line over a user's own algorithms: `fn main() ->
/// ExitCode { ckptsim::cli::main_with(Registry::new().algorithm(&MINE)) }`.
/// Every command knows their names next to the built-ins, and replay lines
/// and reproducers name this program (its path as invoked), so that they
/// run the user's code.
pub fn main_with(registry: Registry) -> ExitCode {
    let algorithms = registry.algorithms.into_iter();
    let registered = algorithms.map(crate::protocol::registry::register).chain(
        registry
            .operators
            .into_iter()
            .map(crate::model::registry::register),
    );
    for result in registered {
        if let Err(e) = result {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    if let Some(program) = std::env::args_os().next() {
        crate::program::set_name(&program.to_string_lossy());
    }
    main()
}

/// The `ckptsim` command line: parses the arguments, runs the command,
/// exits 0 (passed), 1 (a violation found) or 2 (bad input).
pub fn main() -> ExitCode {
    crate::engine::heap::keep_freed_memory();
    crate::report::paint::set(crate::report::paint::wanted());
    let cli = match parse_args() {
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

/// The arguments, with the help of every `--algorithm` listing the
/// algorithms known now (a user's registered ones included).
fn parse_args() -> std::result::Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let names = Algorithm::all()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ");
    let help = format!("Override the scenario's checkpoint algorithm: {names}");
    let mut cmd = Cli::command();
    for sub in ["run", "sweep", "shrink", "savepoint"] {
        cmd = cmd.mut_subcommand(sub, |c| c.mut_arg("algorithm", |a| a.help(help.clone())));
    }
    let matches = cmd.try_get_matches()?;
    Cli::from_arg_matches(&matches)
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
    limits::set_max_memory(cli.max_memory);
    limits::set_max_wall_ns(cli.max_wall);
    match cli.command {
        Command::List { json } => {
            list(json);
            Ok(0)
        }
        Command::FlinkExport {
            scenario,
            out,
            asked,
        } => flink::export(&scenario, &out, asked),
        Command::FlinkCheck { dir, json } => flink::check(&dir, json),
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
        Command::VerifySnapshot {
            dir,
            scenario,
            parallelism,
            allow_non_restored_state,
        } => verify_snapshot(
            &dir,
            scenario.as_deref(),
            RestoreArgs {
                from: Some(dir.clone()),
                parallelism,
                allow_non_restored_state,
            },
        ),
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
            max_failures,
            trace_failures,
            json,
        } => {
            let loaded = load_scenario(&scenario)?;
            let algorithm = parse_algorithm(algorithm, &loaded)?;
            let loaded_for_mutants = loaded.clone();
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
                mutants: mutants_or_replay(&mutants, &loaded_for_mutants)?,
                check_determinism,
            };
            let outputs = SweepOutputs {
                out,
                json,
                max_failures,
                trace_failures,
            };
            sweep(&spec, jobs, outputs)
        }
        Command::Merge {
            files,
            json,
            allow_missing,
        } => merge(&files, json, allow_missing),
        Command::Stalls {
            cases,
            seed,
            algorithms,
            out,
            jobs,
            explain,
            notes,
        } => stalls_cmd(StallsArgs {
            cases,
            seed,
            algorithms,
            out,
            jobs,
            explain,
            notes,
        }),
        Command::Compare {
            scenario,
            algorithms,
            seeds,
            vary,
            out,
            notes,
            jobs,
            mutants,
            swarm,
        } => compare_cmd(CompareArgs {
            swarm,
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
            let spec = crate::killmatrix::KillSpec {
                seeds: SeedRange::parse(&seeds).map_err(|e| UsageError(format!("error: {e}")))?,
                jobs: jobs
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
                shrink_budget,
                only,
            };
            let m = crate::killmatrix::build(&spec, &scenarios)
                .map_err(|e| UsageError(format!("error: {e}")))?;
            if json {
                emit(&format!("{}\n", serde_json::to_string(&m)?));
            } else {
                emit(&m.to_text());
            }
            Ok(if m.survived == 0 { 0 } else { 1 })
        }
        Command::Explore {
            scenario,
            seed,
            algorithm,
            mutants,
            depth,
            from,
            max_schedules,
            out,
            crashes,
            sample,
            changes,
        } => {
            let mut loaded = load_scenario(&scenario)?;
            for text in &crashes {
                let task = crate::exhaustive::subtask(&loaded, text)
                    .map_err(|e| UsageError(format!("error: --crash {e}")))?;
                if !loaded.replay.crash_points.contains(&task) {
                    loaded.replay.crash_points.push(task);
                }
            }
            let algorithm = parse_algorithm(algorithm, &loaded)?;
            let mutants = mutants_or_replay(&mutants, &loaded)?;
            let seed = seed.unwrap_or(loaded.replay.seed);
            let spec = crate::exhaustive::ExploreSpec {
                scenario: loaded,
                seed,
                algorithm,
                mutants,
                depth,
                from,
                max_schedules,
                sample: sample.map(|n| (n, changes)),
            };
            explore::explore_cmd(&scenario, &spec, out.as_deref())
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
            let mutants = mutants_or_replay(&mutants, &loaded)?;
            let seed = seed.unwrap_or(loaded.replay.seed);
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

/// `--jobs`: 1 to 1024 worker threads (each has its own stack).
fn jobs_range() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024)
}

/// The largest notes file (`compare --notes`, `stalls --notes`) read.
const NOTES_BYTES: u64 = 16 << 20;

/// A scenario file, refused if its memory estimate is above the limit.
fn load_scenario(path: &Path) -> Result<scenario::Scenario> {
    let sc = scenario::load(path).map_err(|e| UsageError(e.to_string()))?;
    if let Err(why) = limits::check(&sc) {
        return Err(UsageError(format!("{}: error: {why}", path.display())).into());
    }
    Ok(sc)
}

/// `--max-memory`: a size, at least 1 MiB.
fn size_arg(text: &str) -> Result<u64, String> {
    let n = crate::engine::parse_bytes(text)?;
    if n < 1 << 20 {
        return Err(format!("{text} is below the smallest limit, 1MiB"));
    }
    Ok(n)
}

/// `--max-wall`: a duration above zero, in nanoseconds.
fn wall_arg(text: &str) -> Result<u64, String> {
    let d = crate::engine::parse_duration(text)?;
    if d.nanos() == 0 {
        return Err("the wall-clock limit must be above zero".to_string());
    }
    Ok(d.nanos())
}

/// The algorithm named on the command line (the scenario's without one),
/// refused when it cannot run the scenario (`scenario::unsupported`).
fn parse_algorithm(name: Option<String>, scenario: &scenario::Scenario) -> Result<Algorithm> {
    let algorithm = match name {
        None => scenario.checkpoint.algorithm,
        Some(name) => Algorithm::from_name(&name).ok_or_else(|| {
            let names: Vec<&str> = Algorithm::all().map(|a| a.name()).collect();
            UsageError(format!(
                "error: unknown algorithm `{name}`\n  help: {}",
                crate::scenario::did_you_mean(&name, &names, "algorithms")
            ))
        })?,
    };
    match crate::scenario::unsupported(scenario, algorithm) {
        Some(why) => Err(UsageError(format!("{}: {why}", scenario.name)).into()),
        None => Ok(algorithm),
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

/// The `--mutant` flags, or without any the scenario's `[replay] mutants`.
fn mutants_or_replay(names: &[String], scenario: &scenario::Scenario) -> Result<Mutants> {
    match names.is_empty() {
        true => parse_mutants(&scenario.replay.mutants),
        false => parse_mutants(names),
    }
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

/// What `list` shows: sections of `(name, description)`.
fn list_sections() -> Vec<(&'static str, Vec<(String, String)>)> {
    let pairs = |items: &[(&str, &str)]| -> Vec<(String, String)> {
        items
            .iter()
            .map(|(n, w)| (n.to_string(), w.to_string()))
            .collect()
    };
    let algorithms = Algorithm::all()
        .map(|a| (a.name().to_string(), a.info().description.to_string()))
        .collect();
    let mut faults = pairs(&[
        (
            "crash",
            "[[faults.crashes]] at = TIME, task = \"op[i]\": a subtask dies",
        ),
        (
            "random crashes",
            "[faults.random]: crashes drawn from the seed within a window",
        ),
    ]);
    faults.extend(pairs(crate::scenario::FAULT_KINDS));
    let mutants = MUTANTS
        .iter()
        .map(|m| {
            (
                m.name.to_string(),
                format!("{} (caught by {})", m.what, m.caught_by),
            )
        })
        .collect();
    vec![
        ("algorithms", algorithms),
        ("operators", pairs(&crate::scenario::registry::all_kinds())),
        (
            "partitionings",
            pairs(&[
                ("forward", "subtask i -> subtask i (equal parallelism)"),
                ("hash", "by key group (max_parallelism key groups)"),
                ("rebalance", "round-robin over downstream subtasks"),
                ("broadcast", "every record to every downstream subtask"),
            ]),
        ),
        ("job structure", pairs(crate::scenario::JOB_STRUCTURE)),
        ("fault kinds", faults),
        ("checks", pairs(&crate::check::CheckId::described())),
        ("mutants", mutants),
    ]
}

fn list(json: bool) {
    use std::fmt::Write as _;
    let sections = list_sections();
    if json {
        let v: serde_json::Map<String, serde_json::Value> = sections
            .into_iter()
            .map(|(title, items)| {
                let items = items
                    .into_iter()
                    .map(|(name, what)| serde_json::json!({ "name": name, "description": what }))
                    .collect();
                (title.replace(' ', "_"), serde_json::Value::Array(items))
            })
            .collect();
        emit(&format!("{}\n", serde_json::Value::Object(v)));
        return;
    }
    let mut s = String::new();
    for (title, items) in sections {
        let _ = writeln!(s, "{title}");
        for (name, what) in items {
            let _ = writeln!(s, "  {name:<28} {what}");
        }
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

/// Worker threads: `jobs`, or every core.
pub(crate) fn jobs(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// A progress bar on a terminal (`None` when standard error is not one).
pub(crate) fn progress_bar(total: u64, template: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

/// Runs `work` on `jobs` threads, reporting progress to `bar`.
pub(crate) fn on_threads<T: Send>(
    jobs: usize,
    bar: &Option<indicatif::ProgressBar>,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T + Send,
) -> anyhow::Result<T> {
    let progress = |n: u64| {
        if let Some(b) = bar {
            b.set_position(n);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let out = pool.install(|| work(&progress));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(out)
}
