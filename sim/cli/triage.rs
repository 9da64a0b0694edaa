//! `sweep --shrink-failures`: one seed of each cause group (the group's
//! lowest) shrunk in the same run, its reproducer written to a folder of
//! its own, with the command that replays it.
//!
//! The folder is refused before the sweep runs when it is a symbolic link,
//! not a folder, or a folder with anything in it; each file is created new
//! (never written over an existing file or through a link).

use super::*;
use crate::shrink::{reproducer_text, shrink, Shrunk};
use crate::sweep::triage::cause_of;
use serde::Serialize;

/// Where `--shrink-failures` writes, and how hard it shrinks.
pub(crate) struct ShrinkFailures {
    pub(crate) dir: PathBuf,
    pub(crate) budget: u64,
}

impl ShrinkFailures {
    /// The folder (`--repro-dir`, else next to `--out FILE` as
    /// `FILE.repro`), checked before anything runs.
    pub(crate) fn new(
        dir: Option<PathBuf>,
        out: Option<&Path>,
        budget: u64,
    ) -> Result<ShrinkFailures> {
        let dir = match (dir, out) {
            (Some(d), _) => d,
            (None, Some(out)) => out.with_extension("repro"),
            (None, None) => {
                return Err(UsageError(
                    "error: --shrink-failures needs a folder for the reproducers\n  help: add --repro-dir DIR (or --out FILE.jsonl: then FILE.repro)".to_string(),
                )
                .into())
            }
        };
        check_new_folder(&dir)?;
        Ok(ShrinkFailures { dir, budget })
    }
}

/// Refuses a folder that is a link, not a folder, or not empty.
fn check_new_folder(dir: &Path) -> Result<()> {
    let refuse = |why: &str| -> Result<()> {
        Err(UsageError(format!(
            "error: {}: {why}\n  help: name a new or empty folder with --repro-dir; reproducers are never written over other files",
            dir.display()
        ))
        .into())
    };
    match std::fs::symlink_metadata(dir) {
        Err(_) => Ok(()),
        Ok(m) if m.file_type().is_symlink() => refuse("is a symbolic link"),
        Ok(m) if !m.is_dir() => refuse("exists and is not a folder"),
        Ok(_) => match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
            Ok(true) => Ok(()),
            Ok(false) => refuse("exists and is not empty"),
            Err(e) => refuse(&format!("cannot be read: {e}")),
        },
    }
}

/// One cause group's reproducer (or why there is none).
#[derive(Serialize)]
pub(crate) struct Reproducer {
    /// The group's index in the summary's `cause_groups`, from 1.
    pub(crate) group: usize,
    pub(crate) seed: u64,
    /// The file written and the command that replays it.
    pub(crate) path: Option<String>,
    pub(crate) replay: Option<String>,
    /// The checks the reproducer fails.
    pub(crate) fails: Vec<String>,
    /// The reproducer's own cause: the events left after shrinking.
    pub(crate) events: Option<Vec<String>>,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
    pub(crate) runs: u64,
    /// Why the seed did not shrink.
    pub(crate) error: Option<String>,
}

/// Shrinks the lowest seed of every cause group and writes the
/// reproducers, in group order.
pub(crate) fn shrink_groups(
    spec: &SweepSpec,
    summary: &SweepSummary,
    s: &ShrinkFailures,
) -> Result<Vec<Reproducer>> {
    std::fs::create_dir_all(&s.dir)
        .map_err(|e| UsageError(format!("error: cannot create {}: {e}", s.dir.display())))?;
    let mut out = Vec::new();
    for (i, g) in summary.cause_groups.iter().enumerate() {
        let seed = g.seeds[0];
        let mut r = Reproducer {
            group: i + 1,
            seed,
            path: None,
            replay: None,
            fails: Vec::new(),
            events: None,
            before: None,
            after: None,
            runs: 0,
            error: None,
        };
        match shrink_one(spec, seed, s.budget) {
            Ok(shrunk) => {
                let path = s.dir.join(format!("cause-{}-seed-{seed}.toml", i + 1));
                write_new(&path, &reproducer(spec, seed, &shrunk))?;
                r.replay = Some(format!(
                    "{} run {}",
                    crate::program::name(),
                    crate::input::shell_word(&path.display().to_string())
                ));
                r.path = Some(path.display().to_string());
                r.events = shrunk_cause(spec, seed, &shrunk);
                r.fails = shrunk.target.clone();
                r.before = Some(shrunk.before.to_string());
                r.after = Some(shrunk.after.to_string());
                r.runs = shrunk.runs;
            }
            Err(e) => r.error = Some(e),
        }
        out.push(r);
    }
    Ok(out)
}

/// The seed's scenario (its draw applied) shrunk, standalone: the file
/// names its algorithm, seed and mutants, so that `run FILE` alone fails
/// as the seed did.
fn shrink_one(spec: &SweepSpec, seed: u64, budget: u64) -> Result<Shrunk, String> {
    let (sc, _) = spec.scenario_for(seed).map_err(|e| e.to_string())?;
    let mut shrunk = shrink(&sc, seed, spec.algorithm, spec.mutants, budget)?;
    shrunk.scenario = crate::shrink::standalone_reproducer(
        &shrunk.scenario,
        spec.algorithm,
        seed,
        spec.mutants,
        &spec.path,
    )?;
    Ok(shrunk)
}

/// The reproducer file's text, with `shrink`'s header.
fn reproducer(spec: &SweepSpec, seed: u64, shrunk: &Shrunk) -> String {
    let mut args = format!("--seed {seed} --algorithm {}", spec.algorithm.name());
    for m in spec.mutants.names() {
        let _ = write!(args, " --mutant {m}");
    }
    let origin = format!(
        "{} {args}{}",
        spec.path,
        if spec.swarm.is_some() { " --swarm" } else { "" }
    );
    reproducer_text(shrunk, &origin, &args)
}

/// The events the shrunk run still has before its first violation.
fn shrunk_cause(spec: &SweepSpec, seed: u64, shrunk: &Shrunk) -> Option<Vec<String>> {
    let e = shrunk.execution.as_ref().ok()?;
    let cfg = RunConfig {
        seed,
        algorithm: spec.algorithm,
        mutants: spec.mutants,
        record_trace: false,
    };
    cause_of(&shrunk.scenario, &cfg, &e.output.fingerprint, &e.verdict)
}

/// Writes a new file: an existing file or link there is an error.
fn write_new(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let cannot =
        |e: std::io::Error| UsageError(format!("error: cannot write {}: {e}", path.display()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(cannot)?;
    f.write_all(text.as_bytes()).map_err(cannot)?;
    Ok(())
}

/// The text report of the reproducers.
pub(crate) fn reproducers_text(dir: &Path, reps: &[Reproducer], wall_ns: u64) -> String {
    let mut w = String::new();
    let _ = writeln!(
        w,
        "reproducers  one seed per failure cause shrunk, in {:.1} s, written to {}",
        wall_ns as f64 / 1e9,
        super::shown(dir)
    );
    for r in reps {
        let _ = write!(w, "  cause {}: seed {}", r.group, r.seed);
        let (Some(path), Some(replay)) = (&r.path, &r.replay) else {
            let why = r.error.as_deref().unwrap_or("not shrunk");
            let _ = writeln!(w, " not shrunk: {why}");
            continue;
        };
        let _ = writeln!(w, " in {} runs, fails {}", r.runs, r.fails.join(", "));
        if let Some(after) = &r.after {
            let _ = writeln!(w, "    after   {after}");
        }
        match &r.events {
            Some(events) if events.is_empty() => {
                let _ = writeln!(w, "    events  no fault at all");
            }
            Some(events) => {
                let _ = writeln!(w, "    events  {}", events.join("; "));
            }
            None => {}
        }
        let _ = writeln!(w, "    wrote   {}", crate::input::printable(path));
        let _ = writeln!(w, "    replay  {replay}");
    }
    w
}
