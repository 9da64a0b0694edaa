//! `flink-export` and `flink-check`.

use super::{load_scenario, parse_algorithm, UsageError};
use crate::export::{self, real, Options};
use anyhow::Result;
use std::path::Path;

/// A duration argument in whole milliseconds.
fn millis(flag: &str, text: &str) -> Result<u64> {
    let d = crate::engine::parse_duration(text)
        .map_err(|e| UsageError(format!("error: {flag} {text}: {e}")))?;
    Ok(d.nanos() / 1_000_000)
}

pub(super) fn export(
    path: &Path,
    out: &Path,
    seed: Option<u64>,
    algorithm: Option<String>,
    repeat: bool,
    duration: &str,
    limit: &str,
) -> Result<u8> {
    let scenario = load_scenario(path)?;
    let algorithm = parse_algorithm(algorithm, &scenario)?;
    let opts = Options {
        seed: seed.unwrap_or(scenario.replay.seed),
        algorithm,
        repeat,
        duration_ms: millis("--duration", duration)?,
        limit_ms: millis("--limit", limit)?,
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
