//! The commands that run many seeds or schedules: `sweep`, `merge`,
//! `shrink`, `compare`, `explore`.

use super::*;

/// What a sweep writes besides its summary, and when it stops.
pub(crate) struct SweepOutputs {
    pub(crate) out: Option<PathBuf>,
    pub(crate) json: bool,
    pub(crate) max_failures: Option<u64>,
    pub(crate) trace_failures: Option<PathBuf>,
    pub(crate) require_coverage: bool,
    pub(crate) shrink_failures: Option<super::triage::ShrinkFailures>,
}

/// Perfetto traces `--trace-failures` writes at most.
const TRACED_FAILURES: usize = 100;

#[derive(clap::Args)]
pub(crate) struct SweepArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// Seeds to run: A..B (B excluded) or A..=B.
    #[arg(long, default_value = "0..100")]
    pub(crate) seeds: String,
    /// Worker threads, 1 to 1024 (default: every core).
    #[arg(long, value_parser = jobs_range())]
    pub(crate) jobs: Option<usize>,
    /// Run only the I-th (from 0) of N interleaved slices of the range.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    #[command(flatten)]
    pub(crate) job: AlgorithmArgs,
    /// Swarm mode: each seed also draws its own configuration.
    #[arg(long)]
    pub(crate) swarm: bool,
    /// With a swarm: run the seeds in batches, later seeds re-running the
    /// draws of earlier ones that hit rare coverage targets
    /// (docs/exploring.md); not with --shard.
    #[arg(long)]
    pub(crate) guided: bool,
    /// Write one JSON object per seed to this file.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Run every seed twice and compare fingerprints.
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// Stop after this many failing seeds: the summary then covers the
    /// seeds up to the last of them, in seed order.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) max_failures: Option<u64>,
    /// Write a Perfetto trace (ui.perfetto.dev) of each failing seed to
    /// DIR/seed-N.json (at most 100).
    #[arg(long, value_name = "DIR")]
    pub(crate) trace_failures: Option<PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Fail (exit 1) when a coverage target applied to some seed and no
    /// seed hit it (docs/coverage.md).
    #[arg(long)]
    pub(crate) require_coverage: bool,
    /// Shrink the lowest seed of each failure cause and write its
    /// reproducer to --repro-dir (default: next to --out FILE as FILE.repro).
    #[arg(long)]
    pub(crate) shrink_failures: bool,
    /// With --shrink-failures: a new or empty folder for the reproducers.
    #[arg(long, value_name = "DIR", requires = "shrink_failures")]
    pub(crate) repro_dir: Option<PathBuf>,
    /// With --shrink-failures: most candidate runs per reproducer.
    #[arg(long, default_value_t = 400, requires = "shrink_failures")]
    pub(crate) shrink_budget: u64,
}

pub(crate) fn sweep_cmd(a: SweepArgs) -> Result<u8> {
    // Refused before the sweep runs, not after.
    if let Some(out) = &a.out {
        crate::safe_fs::check_file(out).map_err(|e| UsageError(format!("error: {e}")))?;
    }
    let shrink_failures = a
        .shrink_failures
        .then(|| super::triage::ShrinkFailures::new(a.repro_dir, a.out.as_deref(), a.shrink_budget))
        .transpose()?;
    let loaded = load_scenario(&a.scenario)?;
    let (algorithm, mutants) = a.job.resolve(&loaded)?;
    let spec = SweepSpec {
        swarm: swarm_spec(&loaded, a.swarm),
        scenario: loaded,
        path: a.scenario.display().to_string(),
        seeds: SeedRange::parse(&a.seeds).map_err(|e| UsageError(format!("error: {e}")))?,
        shard: a
            .shard
            .map(|s| Shard::parse(&s))
            .transpose()
            .map_err(|e| UsageError(format!("error: {e}")))?,
        algorithm,
        mutants,
        check_determinism: a.check_determinism,
        guided: a.guided.then(sweep::Guidance::default),
    };
    guided_usage(&spec)?;
    let outputs = SweepOutputs {
        out: a.out,
        json: a.json,
        max_failures: a.max_failures,
        trace_failures: a.trace_failures,
        require_coverage: a.require_coverage,
        shrink_failures,
    };
    sweep(&spec, a.jobs, outputs)
}

/// `--guided` needs a swarm to guide, and the whole range: its batches
/// depend on one another, so shards would not merge into the same sweep.
fn guided_usage(spec: &SweepSpec) -> Result<()> {
    let refuse = |why: &str| Err(UsageError(format!("error: --guided {why}")).into());
    match (&spec.guided, &spec.swarm, spec.shard) {
        (None, _, _) => Ok(()),
        (Some(_), None, _) => refuse("guides the swarm's draws: add --swarm"),
        (Some(_), _, Some(_)) => refuse(
            "cannot run a shard: later seeds draw from what earlier ones hit, across the range",
        ),
        _ => Ok(()),
    }
}

pub(crate) fn sweep(spec: &SweepSpec, jobs: Option<usize>, o: SweepOutputs) -> Result<u8> {
    let jobs = super::jobs(jobs);
    let total = spec.seeds().len() as u64;
    let bar = super::progress_bar(
        total,
        "{bar:40} {pos}/{len} seeds  {per_sec}  eta {eta}  {msg}",
    );
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
    let results = sweep::run_until(spec, jobs, o.max_failures, &progress);
    let wall = clock.elapsed_ns();
    // A guided sweep chose its seeds' draws as it ran: what follows
    // (traces of failing seeds) runs them with those draws.
    let guided = spec.guided.as_ref().map(|_| SweepSpec {
        guided: Some(sweep::Guidance::of(&results)),
        ..spec.clone()
    });
    let spec = guided.as_ref().unwrap_or(spec);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = &o.out {
        let mut text = String::new();
        for r in &results {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        crate::safe_fs::write_file(path, text.as_bytes())
            .map_err(|e| UsageError(format!("error: {e}")))?;
    }
    let summary = SweepSummary::of(&results).map_err(|e| UsageError(format!("error: {}", e.0)))?;
    // Stopped early: the seeds above the last failing one did not run.
    let stopped = match (o.max_failures, results.last()) {
        (Some(max), Some(last))
            if summary.seeds_failed >= max && (results.len() as u64) < total =>
        {
            Some((max, last.seed))
        }
        _ => None,
    };
    if let Some(dir) = &o.trace_failures {
        trace_failures(spec, &summary, dir)?;
    }
    let timing = SweepTiming::new(&summary, wall);
    let clock = Stopwatch::start();
    let reproducers = o
        .shrink_failures
        .as_ref()
        .map(|s| super::triage::shrink_groups(spec, &summary, s))
        .transpose()?;
    let shrink_wall = clock.elapsed_ns();
    if o.json {
        let mut v = serde_json::json!({
            "summary": summary,
            "verdict": summary.verdict(),
            "timing": timing,
            "stopped_at": stopped.map(|(_, seed)| seed),
        });
        if let Some(r) = &reproducers {
            v["reproducers"] = serde_json::to_value(r)?;
            v["timing"]["shrink_wall_ms"] = serde_json::json!(shrink_wall as f64 / 1e6);
        }
        emit(&format!("{v}\n"));
    } else {
        let mut text = summary.to_text(Some(&timing));
        if let Some((max, seed)) = stopped {
            let at = text.find("speed").unwrap_or(0);
            text.insert_str(
                at,
                &format!("stopped      after {max} failing seeds (--max-failures): seeds above {seed} not run\n"),
            );
        }
        if let (Some(r), Some(s)) = (&reproducers, &o.shrink_failures) {
            text.push_str(&super::triage::reproducers_text(&s.dir, r, shrink_wall));
        }
        emit(&text);
    }
    Ok(verdict(&summary, o.require_coverage))
}

/// The exit code of a sweep or merge: 1 when a seed failed, or when
/// `--require-coverage` is given and a target applied but was never hit
/// (each named on standard error).
fn verdict(summary: &SweepSummary, require_coverage: bool) -> u8 {
    let missed = summary.coverage.missed();
    if require_coverage && !missed.is_empty() {
        eprintln!(
            "coverage: {} target{} applied to some seed and no seed hit {} (--require-coverage):",
            missed.len(),
            if missed.len() == 1 { "" } else { "s" },
            if missed.len() == 1 { "it" } else { "them" },
        );
        for t in &missed {
            eprintln!("  {}: {} (counter {})", t.name, t.what, t.counter);
        }
        return 1;
    }
    u8::from(summary.seeds_failed != 0)
}

/// `--trace-failures DIR`: each failing seed once more with its trace, as a
/// Perfetto file `DIR/seed-N.json`.
fn trace_failures(spec: &SweepSpec, summary: &SweepSummary, dir: &Path) -> Result<()> {
    // New, empty or an earlier run's traces; never written through a link.
    let own = |name: &str| name.starts_with("seed-") && name.ends_with(".json");
    let out =
        crate::safe_fs::OutDir::open(dir, &own).map_err(|e| UsageError(format!("error: {e}")))?;
    for f in summary
        .failures
        .iter()
        .filter(|f| f.panic.is_none())
        .take(TRACED_FAILURES)
    {
        // A seed whose draw was invalid never ran: nothing to trace.
        let Ok((scenario, _)) = spec.scenario_for(f.seed) else {
            continue;
        };
        let cfg = RunConfig {
            seed: f.seed,
            algorithm: spec.algorithm,
            mutants: spec.mutants,
            record_trace: true,
        };
        let e = execute(&scenario, &cfg);
        let (path, file) = out
            .create(&format!("seed-{}.json", f.seed))
            .map_err(|e| UsageError(format!("error: {e}")))?;
        let mut w = std::io::BufWriter::new(file);
        trace::write_perfetto(&scenario, &e.output, &mut w)
            .and_then(|()| std::io::Write::flush(&mut w))
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

#[derive(clap::Args)]
pub(crate) struct ShrinkArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// The failing seed (default: the scenario's `[replay] seed`).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Where to write the reproducer (TOML).
    #[arg(long)]
    pub(crate) out: PathBuf,
    #[command(flatten)]
    pub(crate) job: AlgorithmArgs,
    /// The seed ran in swarm mode.
    #[arg(long)]
    pub(crate) swarm: bool,
    /// With --swarm: the configuration is the one seed N drew (a guided
    /// sweep's replay line says which).
    #[arg(long, value_name = "N")]
    pub(crate) draw_seed: Option<u64>,
    /// Most candidate runs to try.
    #[arg(long, default_value_t = 400)]
    pub(crate) budget: u64,
}

pub(crate) fn shrink_cmd(a: ShrinkArgs) -> Result<u8> {
    use std::fmt::Write as _;
    let loaded = load_scenario(&a.scenario)?;
    let (algorithm, mutants) = a.job.resolve(&loaded)?;
    let seed = a.seed.unwrap_or(loaded.replay.seed);
    let (sc, swarmed) = match (swarm_spec(&loaded, a.swarm), a.draw_seed) {
        (Some(spec), drawn) => (swarm::draw(&loaded, &spec, drawn.unwrap_or(seed))?.0, true),
        (None, Some(_)) => return Err(draw_seed_without_swarm()),
        (None, None) => (loaded, false),
    };
    let (path, out, budget) = (&a.scenario, &a.out, a.budget);
    crate::safe_fs::check_file(out).map_err(|e| UsageError(format!("error: {e}")))?;
    let mut shrunk = crate::shrink::shrink(&sc, seed, algorithm, mutants, budget)
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let shown = path.display().to_string();
    shrunk.scenario =
        crate::shrink::standalone_reproducer(&shrunk.scenario, algorithm, seed, mutants, &shown)
            .map_err(|e| UsageError(format!("error: {e}")))?;
    let mut args = format!("--seed {seed} --algorithm {}", algorithm.name());
    for m in mutants.names() {
        args.push_str(&format!(" --mutant {m}"));
    }
    let drawn = a.draw_seed.map(|n| format!(" --draw-seed {n}"));
    let origin = format!(
        "{} {args}{}{}",
        path.display(),
        if swarmed { " --swarm" } else { "" },
        drawn.unwrap_or_default()
    );
    let text = crate::shrink::reproducer_text(&shrunk, &origin, &args);
    crate::safe_fs::write_file(out, text.as_bytes())
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let mut report = String::new();
    let _ = writeln!(report, "shrunk       fails {}", shrunk.target.join(", "));
    if shrunk.first != shrunk.target {
        // Shrinking keeps the target check (the first the seed failed);
        // the seed's other failures may go with what was removed.
        let _ = writeln!(report, "seed failed  {}", shrunk.first.join(", "));
    }
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
    let _ = writeln!(report, "wrote        {}", super::shown(out));
    let _ = writeln!(
        report,
        "replay       {} run {}",
        crate::program::name(),
        crate::input::shell_word(&out.display().to_string())
    );
    emit(&report);
    Ok(0)
}

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// Algorithms, comma separated.
    #[arg(long, default_value = "aligned,unaligned,aligned-timeout")]
    pub(crate) algorithms: String,
    /// Seeds: A..B (B excluded) or A..=B.
    #[arg(long, default_value = "0..10")]
    pub(crate) seeds: String,
    /// A configuration axis: KEY=v1,v2,… (e.g. checkpoint.interval=100ms,1s
    /// or operators.sink.cost=200us,1ms,10ms). Repeatable: several make one
    /// axis of every combination of their values.
    #[arg(long)]
    pub(crate) vary: Vec<String>,
    /// The output directory.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// A Markdown file whose text is added to the README as notes.
    #[arg(long)]
    pub(crate) notes: Option<PathBuf>,
    /// Worker threads, 1 to 1024 (default: every core).
    #[arg(long, value_parser = jobs_range())]
    pub(crate) jobs: Option<usize>,
    /// Switch on a deliberate bug in every run (repeatable); see `ckptsim list`.
    #[arg(long = "mutant")]
    pub(crate) mutants: Vec<String>,
    /// Swarm mode: each seed also draws the configuration within the
    /// scenario's `[swarm]` ranges (or default ranges around its
    /// values), the same draw for every algorithm.
    #[arg(long)]
    pub(crate) swarm: bool,
}

pub(crate) fn compare_cmd(a: CompareArgs) -> Result<u8> {
    use crate::compare::{self, CompareSpec, Vary};
    let mutants = parse_mutants(&a.mutants)?;
    let scenario = load_scenario(&a.scenario)?;
    let mut algs = Vec::new();
    for name in a
        .algorithms
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        algs.push(parse_algorithm(Some(name.to_string()), &scenario)?);
    }
    if algs.is_empty() {
        return Err(UsageError("error: --algorithms names none".to_string()).into());
    }
    let seeds_range = SeedRange::parse(&a.seeds).map_err(|e| UsageError(format!("error: {e}")))?;
    let vary_axis = a
        .vary
        .iter()
        .map(|v| Vary::parse(v))
        .collect::<Result<Vec<_>, _>>()
        .and_then(Vary::product)
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let notes_text = a
        .notes
        .as_ref()
        .map(|p| {
            crate::input::read_text(p, NOTES_BYTES)
                .map_err(|e| UsageError(format!("error: cannot read {}: {e}", p.display())))
        })
        .transpose()?;
    let command = compare_command_line(&a, &algs, mutants);
    let spec = CompareSpec {
        swarm: super::swarm_spec(&scenario, a.swarm),
        scenario,
        path: a.scenario.display().to_string(),
        algorithms: algs,
        seeds: seeds_range,
        vary: vary_axis,
        mutants,
        command,
    };
    // Every axis value applies (its type, its range) before any run starts.
    compare::varied(&spec).map_err(|e| UsageError(format!("error: {e}")))?;
    compare::output::check_out_dir(&a.out).map_err(|e| UsageError(format!("error: {e}")))?;
    let jobs = super::jobs(a.jobs);
    let total = (spec.algorithms.len() as u64)
        .saturating_mul(seeds_range.len())
        .saturating_mul(spec.vary.as_ref().map_or(1, |v| v.values.len() as u64));
    let bar = progress_bar(total, "{bar:40} {pos}/{len} runs  eta {eta}");
    if bar.is_none() {
        eprintln!(
            "compare: {} on {jobs} threads",
            crate::engine::count(total, "run")
        );
    }
    let c = on_threads(jobs, &bar, |progress| compare::compare(&spec, progress))?
        .map_err(|e| UsageError(format!("error: {e}")))?;
    let files = compare::output::write(&c, &a.out, notes_text.as_deref())
        .map_err(|e| UsageError(format!("error: cannot write {}: {e}", a.out.display())))?;
    print_compared(&c, &files, &a.out);
    Ok(0)
}

/// The command line that writes the report again, as its README shows it.
fn compare_command_line(a: &CompareArgs, algs: &[Algorithm], mutants: Mutants) -> String {
    let mut command = format!(
        "{} compare {} --algorithms {} --seeds {}",
        crate::program::name(),
        crate::input::shell_word(&a.scenario.display().to_string()),
        algs.iter().map(|a| a.name()).collect::<Vec<_>>().join(","),
        a.seeds
    );
    for v in &a.vary {
        command.push_str(&format!(" --vary {}", crate::input::shell_word(v)));
    }
    for m in mutants.names() {
        command.push_str(&format!(" --mutant {m}"));
    }
    if a.swarm {
        command.push_str(" --swarm");
    }
    command.push_str(&format!(
        " --out {}",
        crate::input::shell_word(&a.out.display().to_string())
    ));
    if let Some(n) = &a.notes {
        command.push_str(&format!(
            " --notes {}",
            crate::input::shell_word(&n.display().to_string())
        ));
    }
    command
}

/// The results table and where the report is; runs that panicked, on stderr.
fn print_compared(c: &crate::compare::Comparison, files: &[PathBuf], out: &Path) {
    let mut text = crate::compare::output::results_text(c);
    let charts = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "svg"));
    text.push_str(&format!(
        "\nreport  {} (README.md, results.json, results.csv, {})\n",
        super::shown(&out.join("README.md")),
        crate::engine::count(charts.count() as u64, "chart")
    ));
    emit(&text);
    let panicked: Vec<_> = c.runs.iter().filter(|r| r.panic.is_some()).collect();
    if !panicked.is_empty() {
        eprintln!(
            "compare: {} of {} runs panicked (a bug of ckptsim itself), left out of the metrics; README.md lists them with their replay lines",
            panicked.len(),
            c.runs.len()
        );
    }
}

#[derive(clap::Args)]
pub(crate) struct MutantsArgs {
    /// Scenario files (TOML) to try every mutant on instead of the shipped
    /// ones, each under every algorithm the mutant is declared for.
    #[arg(value_name = "SCENARIO", conflicts_with = "scenarios")]
    pub(crate) files: Vec<PathBuf>,
    /// Seeds to try per scenario: A..B (B excluded) or A..=B.
    #[arg(long, default_value = "0..1000")]
    pub(crate) seeds: String,
    /// Worker threads, 1 to 1024 (default: every core).
    #[arg(long, value_parser = jobs_range())]
    pub(crate) jobs: Option<usize>,
    /// Candidate runs for shrinking each first kill (0: do not shrink).
    #[arg(long, default_value_t = 200)]
    pub(crate) shrink_budget: u64,
    /// Only this mutant (repeatable).
    #[arg(long)]
    pub(crate) only: Vec<String>,
    /// Where the shipped scenarios are.
    #[arg(long, default_value = "scenarios")]
    pub(crate) scenarios: PathBuf,
    /// Print the matrix as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `mutants`: the kill matrix.
pub(crate) fn mutants_cmd(a: MutantsArgs) -> Result<u8> {
    for n in &a.only {
        if Mutant::from_name(n).is_none() {
            return Err(UsageError(format!(
                "error: unknown mutant `{n}`\n  help: known mutants: {}",
                Mutant::names()
            ))
            .into());
        }
    }
    let spec = crate::killmatrix::KillSpec {
        seeds: SeedRange::parse(&a.seeds).map_err(|e| UsageError(format!("error: {e}")))?,
        jobs: a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        shrink_budget: a.shrink_budget,
        only: a.only,
    };
    let m = match a.files.is_empty() {
        true => crate::killmatrix::build(&spec, &a.scenarios),
        false => {
            let mut given = Vec::new();
            for f in &a.files {
                given.push((f.display().to_string(), load_scenario(f)?));
            }
            crate::killmatrix::build_on(&spec, &given)
        }
    }
    .map_err(|e| UsageError(format!("error: {e}")))?;
    if a.json {
        emit(&format!("{}\n", serde_json::to_string(&m)?));
    } else {
        emit(&m.to_text());
    }
    Ok(if m.survived == 0 { 0 } else { 1 })
}

/// The largest sweep result file `merge` reads (about five million seeds).
const MERGE_FILE_BYTES: u64 = 1 << 30;

pub(crate) fn merge(
    files: &[PathBuf],
    json: bool,
    allow_missing: bool,
    require_coverage: bool,
) -> Result<u8> {
    let mut inputs = Vec::new();
    for f in files {
        let text = crate::input::read_text(f, MERGE_FILE_BYTES)
            .map_err(|e| UsageError(format!("error: cannot read {}: {e}", f.display())))?;
        inputs.push(sweep::SweepInput {
            file: f.display().to_string(),
            text,
        });
    }
    let merged =
        sweep::merge(&inputs, allow_missing).map_err(|e| UsageError(format!("error: {}", e.0)))?;
    let summary = &merged.summary;
    if json {
        let v = serde_json::json!({
            "summary": summary,
            "verdict": summary.verdict(),
            "sweep": merged.identity,
            "missing": merged.missing,
        });
        emit(&format!("{v}\n"));
    } else {
        let mut text = summary.to_text(None);
        let id = &merged.identity;
        let mut head = format!(
            "sweep        seeds {}, scenario blake3 {}, ckptsim {}\n",
            id.seeds,
            &id.scenario_hash[..id.scenario_hash.len().min(16)],
            id.ckptsim
        );
        if let Some(m) = &merged.missing {
            head.push_str(&format!(
                "missing      {} seeds: {}\n",
                m.seeds,
                sweep::describe_missing(m)
            ));
        }
        text.insert_str(0, &head);
        emit(&text);
    }
    Ok(verdict(summary, require_coverage))
}

/// `explore`: every schedule within the bound; the first failing one
/// written to `out`. Exit 1 if a schedule fails.
#[derive(clap::Args)]
pub(crate) struct ExploreArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// The seed, which fixes everything else (default: the scenario's
    /// `[replay] seed`).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    #[command(flatten)]
    pub(crate) job: AlgorithmArgs,
    /// Choices enumerated per run; later ones read the lowest ready input.
    #[arg(long, default_value_t = 12, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub(crate) depth: usize,
    /// Enumerate from this choice on (earlier ones take the first
    /// alternative): to explore later in a run.
    #[arg(long, default_value_t = 0)]
    pub(crate) from: usize,
    /// Stop after this many schedules (the exploration is then
    /// incomplete).
    #[arg(long, default_value_t = 100_000, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) max_schedules: u64,
    /// Where to write the first failing schedule (TOML).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// A subtask that may crash, once, before any of its steps
    /// (`count[0]`; repeatable): each step is a choice too.
    #[arg(long = "crash")]
    pub(crate) crashes: Vec<String>,
    /// Mail orders are choices too: before a step of a task whose mailbox
    /// holds mails, whether they run first (as in every other run) or
    /// after the step (`[replay] mail_orders`).
    #[arg(long)]
    pub(crate) mail_orders: bool,
    /// Sample this many schedules instead of enumerating them (PCT
    /// style: each deviates from the first alternative at `--changes`
    /// random choices).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) sample: Option<u64>,
    /// With `--sample`: the choices at which each sample deviates.
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub(crate) changes: usize,
}

pub(crate) fn explore_args_cmd(a: ExploreArgs) -> Result<u8> {
    let loaded = load_scenario(&a.scenario)?;
    let mut loaded = crate::scenario::ScenarioData::clone(&loaded);
    for text in &a.crashes {
        let task = crate::exhaustive::subtask(&loaded, text)
            .map_err(|e| UsageError(format!("error: --crash {e}")))?;
        if !loaded.replay.crash_points.contains(&task) {
            loaded.replay.crash_points.push(task);
        }
    }
    loaded.replay.mail_orders |= a.mail_orders;
    let loaded = crate::scenario::check(&loaded, &a.scenario.display().to_string())
        .map_err(|e| UsageError(format!("{e}")))?;
    let (algorithm, mutants) = a.job.resolve(&loaded)?;
    let seed = a.seed.unwrap_or(loaded.replay.seed);
    let spec = crate::exhaustive::ExploreSpec {
        scenario: loaded,
        seed,
        algorithm,
        mutants,
        depth: a.depth,
        from: a.from,
        max_schedules: a.max_schedules,
        sample: a.sample.map(|n| (n, a.changes)),
    };
    explore_cmd(&a.scenario, &spec, a.out.as_deref())
}

pub(crate) fn explore_cmd(
    path: &Path,
    spec: &crate::exhaustive::ExploreSpec,
    out: Option<&Path>,
) -> Result<u8> {
    use std::fmt::Write as _;
    if let Some(out) = out {
        crate::safe_fs::check_file(out).map_err(|e| UsageError(format!("error: {e}")))?;
    }
    let r = crate::exhaustive::explore(spec);
    let mut text = String::new();
    let _ = writeln!(text, "scenario     {}", super::shown(path));
    let _ = writeln!(text, "seed         {}", spec.seed);
    let _ = writeln!(text, "algorithm    {}", spec.algorithm.name());
    let span = match spec.from {
        0 => format!("the first {} choices", spec.depth),
        n => format!("{} choices from choice {n}", spec.depth),
    };
    let how = match (spec.sample, r.complete) {
        (Some((_, changes)), _) => {
            format!(
                "sampled: the default schedule, then each deviating at {changes} random choices"
            )
        }
        (None, true) => format!("complete: every schedule of {span}"),
        (None, false) => format!("stopped at --max-schedules {}", spec.max_schedules),
    };
    let _ = writeln!(
        text,
        "explored     {} ({how})",
        crate::engine::count(r.schedules, "schedule")
    );
    let _ = writeln!(
        text,
        "distinct     {} (by fingerprint)",
        crate::engine::count(r.distinct, "run")
    );
    let _ = writeln!(text, "choices      at most {} in one run", r.most_choices);
    let _ = writeln!(
        text,
        "failing      {}",
        crate::engine::count(r.failing, "schedule")
    );
    for f in &r.found {
        let _ = writeln!(
            text,
            "  schedule {} choices {:?} fails {}: {}",
            f.index,
            f.choices,
            f.checks.join(", "),
            f.message
        );
    }
    if let Some(first) = r.found.first() {
        let mut args = format!("--seed {} --algorithm {}", spec.seed, spec.algorithm.name());
        for &(o, n) in &spec.scenario.replay.crash_points {
            args.push_str(&format!(" --crash {}[{n}]", spec.scenario.op(o).id));
        }
        if spec.scenario.replay.mail_orders {
            args.push_str(" --mail-orders");
        }
        for m in spec.mutants.names() {
            args.push_str(&format!(" --mutant {m}"));
        }
        let origin = format!(
            "{} explore {} {args}",
            crate::program::name(),
            path.display()
        );
        match out {
            Some(out) => {
                let file = crate::exhaustive::reproducer_text(spec, first, &origin);
                crate::safe_fs::write_file(out, file.as_bytes())
                    .map_err(|e| UsageError(format!("error: {e}")))?;
                let _ = writeln!(text, "wrote        {}", super::shown(out));
                let _ = writeln!(
                    text,
                    "replay       {} run {}",
                    crate::program::name(),
                    crate::input::shell_word(&out.display().to_string())
                );
            }
            None => {
                let _ = writeln!(
                    text,
                    "replay       add --out FILE to write the first failing schedule"
                );
            }
        }
    }
    let _ = writeln!(
        text,
        "verdict      {}",
        if r.failing == 0 { "PASS" } else { "FAIL" }
    );
    print!("{text}");
    Ok(u8::from(r.failing > 0))
}
