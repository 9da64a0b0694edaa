//! `flink-export` and `flink-check`.

use super::{load_scenario, mutants_or_replay, parse_algorithm, UsageError};
use crate::export::{self, real, Options};
use crate::safe_fs::{OutDir, WriteError};
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
    write_export(out, &exported.files).map_err(|e| UsageError(format!("error: {e}")))?;
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

/// The export's files into `out`: a new or empty folder, or an earlier
/// export (every entry one an export writes, `real/` of its run included),
/// never through a link. A real run of an earlier export, and its data files
/// of sources this one lacks, are not this export's: removed.
fn write_export(out: &Path, files: &[(String, String)]) -> Result<(), WriteError> {
    let top = |name: &str| name.split('/').next().unwrap_or(name).to_string();
    let own: Vec<String> = files.iter().map(|(n, _)| top(n)).collect();
    let dir = OutDir::open(out, &|name| {
        name == "real" || name == "expected.tsv" || own.iter().any(|o| o == name)
    })?;
    for stale in [
        "real/run.json",
        "real/rest.jsonl",
        "real/crashes.tsv",
        "real/watermark-lags.tsv",
        "expected.tsv",
    ] {
        dir.remove(stale)?;
    }
    for data in dir.files_in("data")? {
        dir.remove(&format!("data/{data}"))?;
    }
    for (name, text) in files {
        dir.write(name, text.as_bytes())?;
    }
    Ok(())
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
