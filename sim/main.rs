//! The `ckptsim` command line. Parsing and printing only; everything else
//! lives in the library.

use anyhow::Result;
use ckptsim::harness::execute;
use ckptsim::mutant::{Mutant, Mutants, MUTANTS};
use ckptsim::report::Summary;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{self, Algorithm, ALGORITHMS, OPERATOR_KINDS};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

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
        } => run(scenario, seed, algorithm, mutants, json, check_determinism),
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

fn run(
    path: PathBuf,
    seed: u64,
    algorithm: Option<String>,
    mutant_names: Vec<String>,
    json: bool,
    check_determinism: bool,
) -> Result<u8> {
    let scenario = scenario::load(&path).map_err(|e| UsageError(e.to_string()))?;
    let algorithm = match algorithm {
        None => scenario.checkpoint.algorithm,
        Some(name) => Algorithm::from_name(&name).ok_or_else(|| {
            UsageError(format!(
                "error: unknown algorithm `{name}`\n  help: known algorithms: {}",
                Algorithm::names()
            ))
        })?,
    };
    let mutants = parse_mutants(&mutant_names)?;
    let cfg = RunConfig {
        seed,
        algorithm,
        mutants,
        record_trace: check_determinism,
    };
    let execution = execute(&scenario, &cfg);
    let shown_path = path.display().to_string();
    let names = mutants.names();
    let summary = Summary::new(&shown_path, seed, algorithm.name(), &names, &execution);
    let mut failed = !execution.verdict.passed;
    if check_determinism {
        let again = execute(&scenario, &cfg);
        let (a, b) = (&execution.output, &again.output);
        if a.fingerprint == b.fingerprint {
            eprintln!("determinism: two runs, same fingerprint {}", a.fingerprint);
        } else {
            failed = true;
            eprintln!(
                "determinism: FAILED, fingerprints {} and {}",
                a.fingerprint, b.fingerprint
            );
            let first = a.trace.iter().zip(&b.trace).find(|(x, y)| x != y);
            match first {
                Some((x, y)) => eprintln!(
                    "  first difference at event {}:\n    run 1: t={} {} {} {}\n    run 2: t={} {} {} {}",
                    x.index, x.time_ns, x.event, x.a, x.b, y.time_ns, y.event, y.a, y.b
                ),
                None => eprintln!(
                    "  one trace is a prefix of the other ({} vs {} events)",
                    a.trace.len(),
                    b.trace.len()
                ),
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

fn list() {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "algorithms");
    for (name, what) in ALGORITHMS {
        let _ = writeln!(s, "  {name:<28} {what}");
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
    let _ = writeln!(s, "checks");
    for (name, what) in ckptsim::check::CHECKS {
        let _ = writeln!(s, "  {name:<28} {what}");
    }
    let _ = writeln!(s, "mutants");
    for (_, name, what, caught_by) in MUTANTS {
        let _ = writeln!(s, "  {name:<28} {what} (caught by {caught_by})");
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
