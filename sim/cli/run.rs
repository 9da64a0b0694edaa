//! The commands that run one job: `run` (with the savepoint workflow's
//! restore, cancel and retained checkpoints) and `savepoint`.

use super::*;
use crate::engine::count;

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// The seed; every random decision of the run derives from it
    /// (default: the scenario's `[replay] seed`, 0 unless written).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    #[command(flatten)]
    pub(crate) job: AlgorithmArgs,
    /// Print one JSON object instead of the text summary.
    #[arg(long)]
    pub(crate) json: bool,
    /// Run twice and compare fingerprints; name the first differing event.
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// Swarm mode: the seed also draws the configuration within the
    /// scenario's `[swarm]` ranges (or default ranges around its values).
    #[arg(long)]
    pub(crate) swarm: bool,
    /// With --swarm: draw the configuration seed N draws instead of this
    /// seed's (a guided sweep's replay line says which).
    #[arg(long, value_name = "N")]
    pub(crate) draw_seed: Option<u64>,
    /// Write every event, one JSON object per line, to this file.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// Write a Chrome trace-event file for ui.perfetto.dev.
    #[arg(long)]
    pub(crate) perfetto: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) restore: RestoreArgs,
    /// Cancel the job at this virtual time (e.g. 400ms).
    #[arg(long, value_name = "TIME")]
    pub(crate) cancel_at: Option<String>,
    /// With --cancel-at: write the checkpoint the cancelled job retains
    /// (`checkpoint.retain_on_cancel`) under DIR/chk-<id>.
    #[arg(long, value_name = "DIR")]
    pub(crate) checkpoint_dir: Option<PathBuf>,
}

/// The algorithm and the mutants of the commands that run one scenario
/// (`run`, `sweep`, `shrink`, `explore`): one declaration, one help text.
#[derive(clap::Args)]
pub(crate) struct AlgorithmArgs {
    /// Override the scenario's checkpoint algorithm.
    #[arg(long)]
    pub(crate) algorithm: Option<String>,
    /// Switch on a deliberate bug (repeatable); see `ckptsim list`.
    #[arg(long = "mutant")]
    pub(crate) mutants: Vec<String>,
}

impl AlgorithmArgs {
    /// The algorithm (the scenario's unless overridden) and the mutants
    /// (the scenario's `[replay] mutants` unless named).
    pub(crate) fn resolve(self, scenario: &scenario::Scenario) -> Result<(Algorithm, Mutants)> {
        let algorithm = parse_algorithm(self.algorithm, scenario)?;
        let mutants = mutants_or_replay(&self.mutants, scenario)?;
        Ok((algorithm, mutants))
    }
}

pub(crate) fn run(args: RunArgs) -> Result<u8> {
    let RunArgs {
        scenario: path,
        seed,
        job,
        json,
        check_determinism,
        swarm: swarm_flag,
        draw_seed,
        trace,
        perfetto,
        restore,
        cancel_at,
        checkpoint_dir,
    } = args;
    // Refused before the job runs, not after.
    if let Some(dir) = &checkpoint_dir {
        savepoint::check_new_dir(dir).map_err(|e| UsageError(format!("error: {e}")))?;
    }
    for file in [&trace, &perfetto].into_iter().flatten() {
        crate::safe_fs::check_file(file).map_err(|e| UsageError(format!("error: {e}")))?;
    }
    let scenario = load_scenario(&path)?;
    let algorithm = parse_algorithm(job.algorithm, &scenario)?;
    refuse_local(algorithm, restore.from.is_some(), checkpoint_dir.is_some())?;
    let seed = seed.unwrap_or(scenario.replay.seed);
    let mutants = mutants_or_replay(&job.mutants, &scenario)?;
    let mut prepared = prepare(&path, scenario, &restore, mutants)?;
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
    let ranges = swarm_spec(&scenario, swarm_flag);
    if ranges.is_none() && draw_seed.is_some() {
        return Err(draw_seed_without_swarm());
    }
    let draw = ranges
        .map(|spec| swarm::draw(&scenario, &spec, draw_seed.unwrap_or(seed)))
        .transpose()?;
    let (scenario, draw) = match draw {
        Some((s, d)) => (s, Some(d)),
        None => (scenario, None),
    };
    let cfg = RunConfig {
        seed,
        algorithm,
        mutants,
        record_trace: check_determinism || trace.is_some() || perfetto.is_some(),
    };
    let (execution, divergence) = execute_prepared(&scenario, &cfg, &prepared, check_determinism);
    for note in &prepared.notes {
        eprintln!("{note}");
    }
    let shown_path = path.display().to_string();
    let names = mutants.names();
    let mut summary = Summary::new(&shown_path, seed, algorithm.name(), &names, &execution);
    if let Some(d) = draw {
        summary.set_swarm(d);
    }
    if let Some(n) = draw_seed {
        summary.append_replay(&format!(" --draw-seed {n}"));
    }
    summary.append_replay(&prepared.replay);
    summary.restored_faults = prepared.restored_faults.clone();
    let mut failed = !execution.verdict.passed;
    if let Some(dir) = &checkpoint_dir {
        retain(dir, &scenario, &prepared, seed, &execution)?;
    }
    write_traces(&scenario, &execution, trace.as_deref(), perfetto.as_deref())?;
    if check_determinism {
        failed |= !determinism_held(&execution, divergence);
    }
    if json {
        emit(&format!("{}\n", serde_json::to_string(&summary)?));
    } else {
        emit(&summary.to_text(true));
    }
    Ok(if failed { 1 } else { 0 })
}

/// Runs the prepared job (a restored or cancelled one as a job, a plain
/// one as a run), twice with `check_determinism`: the execution and, if
/// the second run differed, how.
fn execute_prepared(
    scenario: &scenario::Scenario,
    cfg: &RunConfig,
    prepared: &Prepared,
    check_determinism: bool,
) -> (crate::harness::Execution, Option<String>) {
    match prepared.input_seed {
        _ if prepared.is_plain() && check_determinism => check_determinism_twice(scenario, cfg),
        _ if prepared.is_plain() => (execute(scenario, cfg), None),
        input_seed => {
            let input_seed = input_seed.unwrap_or(cfg.seed);
            let first = execute_job(scenario, cfg, &prepared.job, input_seed);
            let divergence = check_determinism
                .then(|| execute_job(scenario, cfg, &prepared.job, input_seed))
                .filter(|second| second.output.fingerprint != first.output.fingerprint)
                .map(|second| {
                    format!(
                        "fingerprints differ: {} and {}",
                        first.output.fingerprint, second.output.fingerprint
                    )
                });
            (first, divergence)
        }
    }
}

/// `--trace` and `--perfetto`: the run's traces, each to its file.
fn write_traces(
    scenario: &scenario::Scenario,
    execution: &crate::harness::Execution,
    jsonl: Option<&Path>,
    perfetto: Option<&Path>,
) -> Result<()> {
    let write = |path: &Path, f: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        crate::safe_fs::write_file_with(path, f).map_err(|e| UsageError(format!("error: {e}")))
    };
    if let Some(p) = jsonl {
        write(p, &|w| trace::write_jsonl(scenario, &execution.output, w))?;
    }
    if let Some(p) = perfetto {
        write(p, &|w| {
            trace::write_perfetto(scenario, &execution.output, w)
        })?;
    }
    Ok(())
}

/// `--check-determinism`'s verdict, printed: whether the two runs agreed.
fn determinism_held(execution: &crate::harness::Execution, divergence: Option<String>) -> bool {
    match divergence {
        None => {
            eprintln!(
                "determinism: two runs, same fingerprint {}",
                execution.output.fingerprint
            );
            true
        }
        Some(detail) => {
            eprintln!("determinism: FAILED, {detail}");
            false
        }
    }
}

/// `--from-savepoint`, `--parallelism`, `--allow-non-restored-state`
/// (shared by `run` and `savepoint`).
#[derive(clap::Args)]
pub(crate) struct RestoreArgs {
    /// Start from this savepoint or retained checkpoint directory.
    #[arg(long = "from-savepoint", value_name = "DIR")]
    pub(crate) from: Option<PathBuf>,
    /// Change an operator's parallelism: OP=N (repeatable).
    #[arg(long, value_name = "OP=N")]
    pub(crate) parallelism: Vec<String>,
    /// Drop the snapshot's state of operators the job no longer has.
    #[arg(long)]
    pub(crate) allow_non_restored_state: bool,
    /// Who owns the snapshot's files: `no-claim` (the user's; the first
    /// checkpoint is full) or `claim` (the job's: it builds on them and
    /// deletes them once unused).
    #[arg(long = "restore-mode", value_name = "MODE", default_value = "no-claim", value_parser = parse_restore_mode, action = clap::ArgAction::Set)]
    pub(crate) claim: bool,
}

/// `--restore-mode`: `claim` or `no-claim`.
fn parse_restore_mode(s: &str) -> std::result::Result<bool, String> {
    match s {
        "claim" => Ok(true),
        "no-claim" => Ok(false),
        _ => Err(format!("unknown restore mode `{s}` (claim or no-claim)")),
    }
}

/// A scenario ready to run as a job: parallelism changed, restored from a
/// snapshot if asked.
pub(crate) struct Prepared {
    pub(crate) scenario: scenario::Scenario,
    pub(crate) job: JobOptions,
    /// The seed of the input the sources read (a restored job: the
    /// snapshot's); `None`: the run's seed.
    pub(crate) input_seed: Option<u64>,
    /// The run's generation (0, or one more than the snapshot's).
    pub(crate) generation: u32,
    /// Arguments the replay command needs besides seed and algorithm.
    pub(crate) replay: String,
    /// What the restore did, for the person reading.
    pub(crate) notes: Vec<String>,
    /// The job's clock when this run starts (0, or the restored
    /// snapshot's job time), written into the snapshots it takes.
    pub(crate) job_time_ns: u64,
    /// A restored run: how its faults were placed.
    pub(crate) restored_faults: Option<crate::report::RestoredFaults>,
}

impl Prepared {
    /// A plain run: no restore, no cancel.
    fn is_plain(&self) -> bool {
        self.job.restore.is_none() && self.job.cancel_at.is_none()
    }
}

pub(crate) fn prepare(
    path: &Path,
    mut scenario: scenario::Scenario,
    r: &RestoreArgs,
    mutants: Mutants,
) -> Result<Prepared> {
    let mut replay = String::new();
    if !r.parallelism.is_empty() {
        let mut edit = scenario::ScenarioData::clone(&scenario);
        for arg in &r.parallelism {
            let bad = || {
                UsageError(format!(
                    "error: --parallelism `{arg}` is not OP=N\n  help: e.g. --parallelism count=4"
                ))
            };
            let (op, n) = arg.split_once('=').ok_or_else(bad)?;
            let n: u32 = n.trim().parse().map_err(|_| bad())?;
            let ids: Vec<String> = edit.operators.iter().map(|o| o.id.clone()).collect();
            let Some(spec) = edit.operators.iter_mut().find(|o| o.id == op.trim()) else {
                let names: Vec<&str> = ids.iter().map(String::as_str).collect();
                return Err(UsageError(format!(
                    "error: --parallelism: the job has no operator `{op}`\n  help: {}",
                    crate::scenario::did_you_mean(op.trim(), &names, "operators")
                ))
                .into());
            };
            spec.parallelism = n;
            let _ = write!(replay, " --parallelism {arg}");
        }
        // Validate the changed job as a file would be.
        scenario = scenario::check(&edit, &path.display().to_string()).map_err(|errors| {
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
        job_time_ns: 0,
        restored_faults: None,
    };
    if let Some(dir) = &r.from {
        let image = savepoint::read_dir(dir).map_err(|e| UsageError(format!("error: {e}")))?;
        // What does not fit the job is a refusal of the snapshot's metadata.
        let allow = r.allow_non_restored_state;
        let plan =
            rescale::assign_with(&image, &prepared.scenario, allow, mutants).map_err(|mut e| {
                e.path.get_or_insert_with(|| dir.join(savepoint::METADATA));
                UsageError(format!("error: {e}"))
            })?;
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
        restored_faults(&mut prepared, &image, path)?;
        prepared.input_seed = Some(image.meta.input_seed);
        prepared.generation = plan.restore.generation;
        let mut restore = plan.restore;
        restore.claim = r.claim;
        prepared.job.restore = Some(Arc::new(restore));
        prepared.replay = format!(
            " --from-savepoint {}{}",
            crate::input::shell_word(&dir.display().to_string()),
            prepared.replay
        );
        if r.allow_non_restored_state {
            prepared.replay.push_str(" --allow-non-restored-state");
        }
        if r.claim {
            prepared.replay.push_str(" --restore-mode claim");
        }
    }
    Ok(prepared)
}

/// A restored run's faults come after the snapshot on the job's clock
/// (`fault::after_restore`): the scenario is changed so, validated again,
/// and the summary says so.
fn restored_faults(prepared: &mut Prepared, image: &Image, path: &Path) -> Result<()> {
    let at = image.job_time_ns();
    let mut edit = scenario::ScenarioData::clone(&prepared.scenario);
    let dropped = crate::fault::after_restore(&mut edit.faults, SimTime(at)) as u64;
    prepared.scenario = scenario::check(&edit, &path.display().to_string())
        .map_err(|e| UsageError(format!("{e}")))?;
    prepared.job_time_ns = at;
    prepared.notes.push(format!(
        "  faults: relative to the restore, the scenario's times {} earlier; {dropped} planned at or before the snapshot dropped",
        SimDuration(at).readable()
    ));
    prepared.restored_faults = Some(crate::report::RestoredFaults {
        shifted_by_ns: at,
        dropped,
    });
    Ok(())
}

/// `verify-snapshot`: the directory read and checked as a restore reads
/// it, and with a scenario the restore planned; nothing runs.
pub(crate) fn verify_snapshot_cmd(a: VerifyArgs) -> Result<u8> {
    let restore = RestoreArgs {
        from: Some(a.dir.clone()),
        parallelism: a.parallelism,
        allow_non_restored_state: a.allow_non_restored_state,
        claim: false,
    };
    verify_snapshot(&a.dir, a.scenario.as_deref(), restore)
}

#[derive(clap::Args)]
pub(crate) struct VerifyArgs {
    /// The snapshot directory (it holds a _metadata file).
    pub(crate) dir: PathBuf,
    /// The job to check it against (as `run --from-savepoint` would).
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,
    /// With --scenario: change an operator's parallelism, OP=N (repeatable).
    #[arg(long, value_name = "OP=N", requires = "scenario")]
    pub(crate) parallelism: Vec<String>,
    /// With --scenario: drop state of operators the job no longer has.
    #[arg(long, requires = "scenario")]
    pub(crate) allow_non_restored_state: bool,
}

pub(crate) fn verify_snapshot(dir: &Path, scenario: Option<&Path>, r: RestoreArgs) -> Result<u8> {
    let image = savepoint::read_dir(dir).map_err(|e| UsageError(format!("error: {e}")))?;
    let m = &image.meta;
    let kind = match m.kind {
        SnapshotKind::Savepoint => "savepoint",
        SnapshotKind::Checkpoint => "retained checkpoint",
    };
    let mut text = format!(
        "{kind} {} of job `{}` ({}), generation {}, max parallelism {}\n",
        m.id, m.job, m.algorithm, m.generation, m.max_parallelism
    );
    for op in &image.operators {
        let _ = writeln!(
            text,
            "  {:<20} {:<18} parallelism {}{}",
            op.uid,
            op.kind,
            op.parallelism,
            if op.state.is_empty() {
                ""
            } else {
                ", with state"
            }
        );
    }
    let _ = writeln!(
        text,
        "{} bytes of operator state, {}; every file, checksum and value checked",
        image.state_bytes(),
        count(image.in_flight_records() as u64, "in-flight record")
    );
    if let Some(path) = scenario {
        let prepared = prepare(path, load_scenario(path)?, &r, Mutants::NONE)?;
        let _ = writeln!(text, "job {} can restore from it:", path.display());
        for note in prepared.notes.iter().skip(1) {
            let _ = writeln!(text, "{note}");
        }
    }
    emit(&text);
    Ok(0)
}

pub(crate) fn parse_time(flag: &str, text: &str) -> Result<SimTime> {
    let d = crate::engine::parse_duration(text).map_err(|e| {
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
pub(crate) fn retain(
    dir: &Path,
    scenario: &scenario::Scenario,
    prepared: &Prepared,
    seed: u64,
    e: &crate::harness::Execution,
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
    let mut image = Image::from_run(
        scenario,
        snap,
        &e.output.store,
        input_seed,
        prepared.generation,
    )
    .map_err(|e| UsageError(format!("error: {e}")))?;
    image.meta.started_at_ns = prepared.job_time_ns;
    let out = dir.join(format!("chk-{}", snap.id));
    savepoint::write_dir(&out, &image).map_err(|e| UsageError(format!("error: {e}")))?;
    eprintln!(
        "retained checkpoint {} written to {} ({}, {} bytes of state, {})",
        snap.id,
        out.display(),
        count(image.operators.len() as u64, "operator"),
        image.state_bytes(),
        count(image.in_flight_records() as u64, "in-flight record")
    );
    Ok(())
}

#[derive(clap::Args)]
pub(crate) struct SavepointArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// When to request the savepoint (virtual time, e.g. 300ms).
    #[arg(long, value_name = "TIME")]
    pub(crate) at: String,
    /// The directory to write (must not exist or be empty).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Stop the job with the savepoint (stop-with-savepoint).
    #[arg(long)]
    pub(crate) stop: bool,
    /// With --stop: end the sources' input first so every operator flushes.
    #[arg(long, requires = "stop")]
    pub(crate) drain: bool,
    /// The savepoint's format: canonical or native (Flink's `--type`).
    #[arg(long, value_name = "FORMAT", default_value = "canonical", value_parser = parse_format)]
    pub(crate) format: scenario::SavepointFormat,
    /// The seed; every random decision of the run derives from it.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Override the scenario's checkpoint algorithm.
    #[arg(long)]
    pub(crate) algorithm: Option<String>,
    /// Switch on a deliberate bug in the job that takes the savepoint
    /// (repeatable); see `ckptsim list`.
    #[arg(long = "mutant")]
    pub(crate) mutants: Vec<String>,
    #[command(flatten)]
    pub(crate) restore: RestoreArgs,
}

/// `--format`: a savepoint format's name.
fn parse_format(s: &str) -> std::result::Result<scenario::SavepointFormat, String> {
    match s {
        "canonical" => Ok(scenario::SavepointFormat::Canonical),
        "native" => Ok(scenario::SavepointFormat::Native),
        _ => Err(format!(
            "unknown savepoint format `{s}` (canonical or native)"
        )),
    }
}

pub(crate) fn savepoint_cmd(a: SavepointArgs) -> Result<u8> {
    // Refused before the job runs, not after.
    savepoint::check_new_dir(&a.out).map_err(|e| UsageError(format!("error: {e}")))?;
    let scenario = load_scenario(&a.scenario)?;
    let algorithm = parse_algorithm(a.algorithm, &scenario)?;
    refuse_local(algorithm, true, false)?;
    let mutants = super::parse_mutants(&a.mutants)?;
    let mut prepared = prepare(&a.scenario, scenario, &a.restore, mutants)?;
    let at = parse_time("--at", &a.at)?;
    let mut edit = scenario::ScenarioData::clone(&prepared.scenario);
    edit.savepoints = vec![SavepointSpec {
        at,
        stop: a.stop,
        drain: a.drain,
        format: a.format,
    }];
    prepared.scenario = scenario::check(&edit, &a.scenario.display().to_string())
        .map_err(|e| UsageError(format!("{e}")))?;
    prepared.job.cancel_after_savepoint = !a.stop;
    prepared.job.retry_failed_savepoints = true;
    prepared.job.keep_snapshots = true;
    let scenario = prepared.scenario.clone();
    let cfg = RunConfig {
        seed: a.seed,
        algorithm,
        mutants,
        record_trace: false,
    };
    let input_seed = prepared.input_seed.unwrap_or(a.seed);
    let e = execute_job(&scenario, &cfg, &prepared.job, input_seed);
    for note in &prepared.notes {
        eprintln!("{note}");
    }
    let shown = a.scenario.display().to_string();
    let names = mutants.names();
    let mut summary = Summary::new(&shown, a.seed, algorithm.name(), &names, &e);
    summary.restored_faults = prepared.restored_faults.clone();
    // Into a fresh directory: `--out` is refused once it exists, as it
    // does after this run.
    summary.replay = format!(
        "d=$(mktemp -d) && {} savepoint {} --at {} --out \"$d/savepoint\"{}{}{} --seed {} --algorithm {}{}{}",
        crate::program::name(),
        crate::input::shell_word(&shown),
        crate::input::shell_word(&a.at),
        if a.stop { " --stop" } else { "" },
        if a.drain { " --drain" } else { "" },
        match a.format {
            scenario::SavepointFormat::Native => " --format native",
            scenario::SavepointFormat::Canonical => "",
        },
        a.seed,
        algorithm.name(),
        names
            .iter()
            .map(|m| format!(" --mutant {m}"))
            .collect::<String>(),
        prepared.replay
    );
    emit(&summary.to_text(true));
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|s| s.kind == SnapshotKind::Savepoint);
    let Some(snap) = snap else {
        return savepoint_missing(&e, &a.at);
    };
    let failed_attempts = e.output.counters.savepoints_failed;
    if failed_attempts > 0 {
        eprintln!(
            "note: {failed_attempts} savepoint attempt(s) failed before this one and were retried"
        );
    }
    let mut image = Image::from_run(
        &scenario,
        snap,
        &e.output.store,
        input_seed,
        prepared.generation,
    )
    .map_err(|e| UsageError(format!("error: {e}")))?;
    image.meta.started_at_ns = prepared.job_time_ns;
    savepoint::write_dir(&a.out, &image).map_err(|e| UsageError(format!("error: {e}")))?;
    emit(&format!(
        "savepoint    {} requested at {}, completed at {}{}; written to {} ({}, {} bytes of state, {})\n",
        snap.id,
        a.at,
        SimDuration(snap.completed_at.0),
        match (snap.stop, snap.drain) {
            (true, true) => ", job stopped (drained)",
            (true, false) => ", job stopped",
            _ => ", job cancelled",
        },
        a.out.display(),
        count(image.operators.len() as u64, "operator"),
        image.state_bytes(),
        count(image.in_flight_records() as u64, "in-flight record")
    ));
    Ok(if e.verdict.passed { 0 } else { 1 })
}

/// No savepoint was taken: bad input if the job finished before it was
/// requested (exit 2), else a failure (exit 1) with its attempts.
fn savepoint_missing(e: &crate::harness::Execution, at: &str) -> Result<u8> {
    if e.output.outcome == RunOutcome::Finished && e.output.counters.savepoints_triggered == 0 {
        return Err(UsageError(format!(
            "error: the job finished at {} before the savepoint requested at {} could be taken\n  help: choose an earlier --at",
            SimDuration(e.output.end_time.0),
            at
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
    Ok(1)
}

/// The uncoordinated families take no savepoint, start from no snapshot and
/// retain no checkpoint: their state is a recovery line of per-task
/// checkpoints (`scenario::unsupported` refuses the rest).
fn refuse_local(algorithm: crate::protocol::Algorithm, snapshot: bool, retain: bool) -> Result<()> {
    if !algorithm.info().coordination.is_local() || !(snapshot || retain) {
        return Ok(());
    }
    let what = match snapshot {
        true => "takes no savepoint and starts from no snapshot",
        false => "retains no checkpoint (--checkpoint-dir)",
    };
    Err(UsageError(format!(
        "error: algorithm `{}` (uncoordinated) {what}\n  help: choose a coordinated algorithm",
        algorithm.name()
    ))
    .into())
}
