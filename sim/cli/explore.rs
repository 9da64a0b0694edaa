//! The commands that run many seeds or schedules: `sweep`, `merge`,
//! `shrink`, `compare`, `explore`.

use super::*;

/// What a sweep writes besides its summary, and when it stops.
pub(crate) struct SweepOutputs {
    pub(crate) out: Option<PathBuf>,
    pub(crate) json: bool,
    pub(crate) max_failures: Option<u64>,
    pub(crate) trace_failures: Option<PathBuf>,
}

/// Perfetto traces `--trace-failures` writes at most.
const TRACED_FAILURES: usize = 100;

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
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = &o.out {
        let mut text = String::new();
        for r in &results {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        std::fs::write(path, text)
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
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
    if o.json {
        let v = serde_json::json!({
            "summary": summary,
            "timing": timing,
            "stopped_at": stopped.map(|(_, seed)| seed),
        });
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
        emit(&text);
    }
    Ok(if summary.seeds_failed == 0 { 0 } else { 1 })
}

/// `--trace-failures DIR`: each failing seed once more with its trace, as a
/// Perfetto file `DIR/seed-N.json`.
fn trace_failures(spec: &SweepSpec, summary: &SweepSummary, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| UsageError(format!("error: cannot create {}: {e}", dir.display())))?;
    for f in summary
        .failures
        .iter()
        .filter(|f| f.panic.is_none())
        .take(TRACED_FAILURES)
    {
        let (scenario, _) = spec.scenario_for(f.seed);
        let cfg = RunConfig {
            seed: f.seed,
            algorithm: spec.algorithm,
            mutants: spec.mutants,
            record_trace: true,
        };
        let e = execute(&scenario, &cfg);
        let path = dir.join(format!("seed-{}.json", f.seed));
        let file = std::fs::File::create(&path)
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
        let mut w = std::io::BufWriter::new(file);
        trace::write_perfetto(&scenario, &e.output, &mut w)
            .and_then(|()| std::io::Write::flush(&mut w))
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn shrink_cmd(
    path: &Path,
    sc: &scenario::Scenario,
    seed: u64,
    algorithm: Algorithm,
    mutants: crate::mutant::Mutants,
    swarmed: bool,
    out: &Path,
    budget: u64,
) -> Result<u8> {
    use std::fmt::Write as _;
    let mut shrunk = crate::shrink::shrink(sc, seed, algorithm, mutants, budget)
        .map_err(|e| UsageError(format!("error: {e}")))?;
    // Standalone: the file names its algorithm, seed and mutants, so that
    // `run FILE` alone fails as this run did (the swarm draw is in its
    // values already).
    shrunk.scenario.checkpoint.algorithm = algorithm;
    shrunk.scenario.replay.seed = seed;
    shrunk.scenario.replay.mutants = mutants.names().iter().map(|m| m.to_string()).collect();
    shrunk.scenario.swarm = None;
    let mut args = format!("--seed {seed} --algorithm {}", algorithm.name());
    for m in mutants.names() {
        args.push_str(&format!(" --mutant {m}"));
    }
    let origin = format!(
        "{} {args}{}",
        path.display(),
        if swarmed { " --swarm" } else { "" }
    );
    let text = crate::shrink::reproducer_text(&shrunk, &origin, &args);
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
    let _ = writeln!(
        report,
        "replay       {} run {}",
        crate::program::name(),
        out.display()
    );
    emit(&report);
    Ok(0)
}

pub(crate) struct CompareArgs {
    pub(crate) path: PathBuf,
    pub(crate) algorithms: String,
    pub(crate) seeds: String,
    pub(crate) vary: Option<String>,
    pub(crate) out: PathBuf,
    pub(crate) notes: Option<PathBuf>,
    pub(crate) jobs: Option<usize>,
    pub(crate) mutants: Mutants,
    pub(crate) swarm: bool,
}

pub(crate) fn compare_cmd(a: CompareArgs) -> Result<u8> {
    use crate::compare::{self, CompareSpec, Vary};
    let CompareArgs {
        path,
        algorithms,
        seeds,
        vary,
        out,
        notes,
        jobs,
        mutants,
        swarm,
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
            crate::input::read_text(p, NOTES_BYTES)
                .map_err(|e| UsageError(format!("error: cannot read {}: {e}", p.display())))
        })
        .transpose()?;
    let mut command = format!(
        "{} compare {} --algorithms {} --seeds {seeds}",
        crate::program::name(),
        path.display(),
        algs.iter().map(|a| a.name()).collect::<Vec<_>>().join(",")
    );
    if let Some(v) = &vary {
        command.push_str(&format!(" --vary {v}"));
    }
    for m in mutants.names() {
        command.push_str(&format!(" --mutant {m}"));
    }
    if swarm {
        command.push_str(" --swarm");
    }
    command.push_str(&format!(" --out {}", out.display()));
    if let Some(n) = &notes {
        command.push_str(&format!(" --notes {}", n.display()));
    }
    let scenario_for_swarm = scenario.clone();
    let spec = CompareSpec {
        scenario,
        path: path.display().to_string(),
        algorithms: algs,
        seeds: seeds_range,
        vary: vary_axis,
        mutants,
        swarm: super::swarm_spec(&scenario_for_swarm, swarm),
        command,
    };
    compare::output::check_out_dir(&out).map_err(|e| UsageError(format!("error: {e}")))?;
    let jobs = super::jobs(jobs);
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
    let files = compare::output::write(&c, &out, notes_text.as_deref())
        .map_err(|e| UsageError(format!("error: cannot write {}: {e}", out.display())))?;
    let mut text = compare::output::results_text(&c);
    let charts = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "svg"));
    text.push_str(&format!(
        "\nreport  {} (README.md, results.json, results.csv, {})\n",
        out.join("README.md").display(),
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
    Ok(0)
}

/// The largest sweep result file `merge` reads (about five million seeds).
const MERGE_FILE_BYTES: u64 = 1 << 30;

pub(crate) fn merge(files: &[PathBuf], json: bool, allow_missing: bool) -> Result<u8> {
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
    Ok(if summary.seeds_failed == 0 { 0 } else { 1 })
}

/// `explore`: every schedule within the bound; the first failing one
/// written to `out`. Exit 1 if a schedule fails.
pub(crate) fn explore_cmd(
    path: &Path,
    spec: &crate::exhaustive::ExploreSpec,
    out: Option<&Path>,
) -> Result<u8> {
    use std::fmt::Write as _;
    let r = crate::exhaustive::explore(spec);
    let mut text = String::new();
    let _ = writeln!(text, "scenario     {}", path.display());
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
        for m in spec.mutants.names() {
            args.push_str(&format!(" --mutant {m}"));
        }
        let origin = format!("ckptsim explore {} {args}", path.display());
        match out {
            Some(out) => {
                let file = crate::exhaustive::reproducer_text(spec, first, &origin);
                std::fs::write(out, file).map_err(|e| {
                    UsageError(format!("error: cannot write {}: {e}", out.display()))
                })?;
                let _ = writeln!(text, "wrote        {}", out.display());
                let _ = writeln!(
                    text,
                    "replay       {} run {}",
                    crate::program::name(),
                    out.display()
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
