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
use coverage::*;
use explore::*;
use run::*;
use stalls::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod coverage;
mod explore;
mod flink;
mod run;
mod stalls;
mod triage;

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
    Run(RunArgs),
    /// Run a scenario to a virtual time, take a savepoint and write it to a
    /// directory (the job is cancelled once it completes, or stopped with it).
    Savepoint(SavepointArgs),
    /// Check a savepoint or retained checkpoint directory without running
    /// a job: its files, checksums and every value in them; with
    /// --scenario, also that the job can restore from it.
    VerifySnapshot(VerifyArgs),
    /// Run a scenario over a range of seeds, in parallel, and summarise.
    Sweep(SweepArgs),
    /// Shrink a failing seed to a small standalone reproducer scenario.
    Shrink(ShrinkArgs),
    /// Run every order in which tasks read their ready inputs, up to a
    /// bound, for one seed (exhaustive exploration of a tiny job); write the
    /// first failing schedule as a standalone scenario.
    Explore(ExploreArgs),
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
        /// Fail (exit 1) when a coverage target applied to some seed and
        /// no seed hit it (docs/coverage.md).
        #[arg(long)]
        require_coverage: bool,
    },
    /// Run several algorithms on the same seeds and write a comparison
    /// report (README with tables, results.json, results.csv, SVG charts).
    Compare(CompareArgs),
    /// The coverage of scenarios under every exactly-once algorithm with
    /// --swarm, plain and --guided, and why each target never hit was
    /// missed (reports/coverage/); or, with --render, its README again.
    CoverageReport(CoverageReportArgs),
    /// Sweep every mutant where it applies (or over the given scenarios)
    /// and print the kill matrix.
    Mutants(MutantsArgs),
    /// Search generated topologies with forced alignment for checkpoint
    /// stalls (frozen data flow) and write a catalogue of their shapes
    /// (README.md, runs.csv, runs.json, shapes/*.toml).
    Stalls(StallsArgs),
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
    /// The simulator and real Flink as two oracles: export cases
    /// (generated by the property strategies, or given), run each on one
    /// or more Flink releases, check each, and classify every
    /// disagreement (results.jsonl, summary.md, cases/ID/RERUN.md).
    FlinkSweep(flink::SweepArgs),
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
    /// List algorithms, operators, fault kinds, checks, mutants and
    /// coverage targets.
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
    main()
}

/// A path as printed outside errors: its control characters escaped.
pub(crate) fn shown(path: &Path) -> String {
    crate::input::printable(&path.display().to_string()).into_owned()
}

/// Names the program in replay lines and reproducers as it was invoked
/// (`argv[0]`), so that a printed line runs as printed from the same shell
/// (`cargo run` invokes `target/release/ckptsim`, a user's program its own
/// path): one shell word, quoted when it needs to be. A name without `/`
/// was found on `PATH` and is printed as it is.
fn name_program() {
    if let Some(program) = std::env::args_os().next() {
        let program = program.to_string_lossy();
        if !program.is_empty() {
            crate::program::set_name(&crate::input::shell_word(&program));
        }
    }
}

/// The `ckptsim` command line: parses the arguments, runs the command,
/// exits 0 (passed), 1 (a violation found) or 2 (bad input).
pub fn main() -> ExitCode {
    crate::engine::heap::keep_freed_memory();
    name_program();
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
            // Messages name paths and names from files: printed with their
            // control characters escaped.
            Ok(UsageError(msg)) => {
                eprintln!("{}", crate::input::printable_text(&msg));
                ExitCode::from(2)
            }
            Err(e) => {
                eprintln!("error: {}", crate::input::printable_text(&format!("{e:#}")));
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
        Command::FlinkSweep(a) => flink::sweep(a),
        Command::Run(a) => run(a),
        Command::Savepoint(a) => savepoint_cmd(a),
        Command::VerifySnapshot(a) => verify_snapshot_cmd(a),
        Command::Sweep(a) => sweep_cmd(a),
        Command::Merge {
            files,
            json,
            allow_missing,
            require_coverage,
        } => merge(&files, json, allow_missing, require_coverage),
        Command::Stalls(a) => stalls_cmd(a),
        Command::Compare(a) => compare_cmd(a),
        Command::CoverageReport(a) => coverage_report_cmd(a),
        Command::Mutants(a) => mutants_cmd(a),
        Command::Explore(a) => explore_args_cmd(a),
        Command::Shrink(a) => shrink_cmd(a),
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
    // Before it runs: a setting that lets the job lose data.
    for warning in sc.log_sink_warnings() {
        eprintln!(
            "{}: {warning}",
            crate::input::printable(&path.display().to_string())
        );
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

/// `--draw-seed` names a swarm draw: without a swarm there is none.
fn draw_seed_without_swarm() -> anyhow::Error {
    UsageError("error: --draw-seed names a swarm draw: add --swarm".to_string()).into()
}

/// The `--mutant` flags, or without any the scenario's `[replay] mutants`.
fn mutants_or_replay(names: &[String], scenario: &scenario::Scenario) -> Result<Mutants> {
    match names.is_empty() {
        true => parse_mutants(&scenario.replay.mutants),
        false => parse_mutants(names),
    }
}

pub(crate) fn parse_mutants(names: &[String]) -> Result<Mutants> {
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
        (
            "coverage targets",
            crate::coverage::CATALOGUE
                .iter()
                .map(|t| (t.name.to_string(), format!("{} ({})", t.what, t.mechanism)))
                .collect(),
        ),
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
