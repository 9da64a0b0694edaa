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

/// `flink-export`'s arguments.
pub(super) struct Asked {
    pub seed: Option<u64>,
    pub algorithm: Option<String>,
    pub repeat: bool,
    pub duration: String,
    pub mutants: Vec<String>,
    pub local_channels: bool,
    pub limit: String,
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
    };
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
    let fail = |e: std::io::Error, p: &Path| {
        UsageError(format!("error: cannot write {}: {e}", p.display()))
    };
    for (name, text) in &exported.files {
        let p = out.join(name);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(e, dir))?;
        }
        std::fs::write(&p, text).map_err(|e| fail(e, &p))?;
    }
    let crashes = exported.manifest.crashes.len();
    println!(
        "exported {} (seed {}, {}{}) to {}: {} files, {} crash{} injected\n  run it:   sh {}/run.sh\n  check it: {} flink-check {}",
        exported.manifest.scenario,
        opts.seed,
        algorithm.name(),
        if repeat { ", repeating sources" } else { "" },
        out.display(),
        exported.files.len(),
        crashes,
        if crashes == 1 { "" } else { "es" },
        out.display(),
        crate::program::name(),
        out.display(),
    );
    Ok(0)
}

pub(super) fn check(dir: &Path, json: bool) -> Result<u8> {
    let run = real::read(dir).map_err(|e| UsageError(format!("{}: error: {e}", dir.display())))?;
    if json {
        println!("{}", serde_json::to_string(&run.report)?);
    } else {
        print!("{}", run.text());
    }
    Ok(if run.report.verdict == "pass" { 0 } else { 1 })
}
