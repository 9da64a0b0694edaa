//! Exporting a sweep's cases, running them on Flink and reading them back.
//!
//! Resumable: an export whose `export.json` is unchanged keeps its real
//! run (`real/`), and a run already read back is not run again, so a sweep
//! stopped halfway (or extended to more cases) goes on where it was. With
//! `run: false` nothing runs: the sweep classifies the runs it finds (what
//! the tests do with recorded runs, without a JVM).

use super::{
    classify, fidelity, for_release, options, release_names, rerun_md, signature, summarise,
    summary_md, Case, Identity, Line, Side, Summary,
};
use crate::export::{self, real, RUN_LOG};
use crate::mutant::Mutants;
use crate::safe_fs::{OutDir, WriteError};
use crate::scenario::FlinkVersion;
use crate::wallclock::Stopwatch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// A sweep to make.
pub struct Plan {
    pub identity: Identity,
    pub cases: Vec<Case>,
    pub releases: Vec<FlinkVersion>,
    pub mutants: Mutants,
    /// Real runs at a time.
    pub jobs: usize,
    /// Run what has no real run yet (otherwise only classify).
    pub run: bool,
    /// How the printed commands name ckptsim.
    pub program: String,
}

/// The top-level entries of a sweep's folder.
const OWN: [&str; 5] = [
    "sweep.json",
    "results.jsonl",
    "summary.md",
    "summary.json",
    "cases",
];

/// A case's export for one release.
struct Unit {
    case: usize,
    release: String,
    dir: PathBuf,
    /// Why it was not exported (then it never runs).
    refused: Option<String>,
}

/// Makes the sweep in `out`; `progress` hears a line per export and run.
pub fn sweep(out: &Path, plan: &Plan, progress: &(dyn Fn(&str) + Sync)) -> Result<Summary, String> {
    let dir = OutDir::open(out, &|name| OWN.contains(&name)).map_err(|e| e.to_string())?;
    same_sweep(&dir, &plan.identity)?;
    let text = serde_json::to_string_pretty(&plan.identity).unwrap_or_default() + "\n";
    dir.write("sweep.json", text.as_bytes())
        .map_err(|e| e.to_string())?;
    let names = release_names(&plan.releases);
    let mut units = Vec::new();
    for (i, case) in plan.cases.iter().enumerate() {
        for (&release, name) in plan.releases.iter().zip(&names) {
            let unit =
                export_unit(&dir, plan, i, case, release, name).map_err(|e| e.to_string())?;
            units.push(unit);
        }
        progress(&format!("exported {}", case.id));
    }
    if plan.run {
        run_all(&units, plan, progress);
    }
    let lines = read_back(&units, plan);
    write_results(&dir, plan, &lines).map_err(|e| e.to_string())
}

/// Refuses to resume a sweep made with other parameters in the same
/// folder (the command line may differ: its spelling, `--jobs`, and the
/// number of cases: case `k` is the same case in both; ckptsim's
/// version; the JVM options).
fn same_sweep(dir: &OutDir, id: &Identity) -> Result<(), String> {
    let path = dir.path().join("sweep.json");
    let Ok(text) = crate::input::read_text(&path, 1 << 20) else {
        return Ok(());
    };
    let Ok(old) = serde_json::from_str::<Identity>(&text) else {
        return Ok(());
    };
    let comparable = |i: &Identity| Identity {
        command: String::new(),
        cases: 0,
        version: String::new(),
        jvm_options: String::new(),
        ..i.clone()
    };
    match comparable(&old) == comparable(id) {
        true => Ok(()),
        false => Err(format!(
            "{}: holds a sweep with other parameters ({}); name another folder",
            dir.path().display(),
            old.command
        )),
    }
}

fn export_unit(
    dir: &OutDir,
    plan: &Plan,
    i: usize,
    case: &Case,
    release: FlinkVersion,
    name: &str,
) -> Result<Unit, WriteError> {
    let rel = format!("cases/{}/{name}", case.id);
    let path = dir.path().join(&rel);
    let opts = options(case, release, plan.identity.limit_ms, plan.mutants);
    let refused = match export::export(&for_release(case, release), &opts) {
        Err(why) => Some(why.join("; ")),
        Ok(exported) => {
            let manifest = exported.files.iter().find(|(n, _)| n == "export.json");
            let old = crate::input::read_text(&path.join("export.json"), 1 << 24).ok();
            // An unchanged export keeps its real run; without runs, every
            // export there is kept (recorded runs are read as they are).
            let changed = old.as_deref() != manifest.map(|(_, t)| t.as_str());
            if old.is_none() || (changed && plan.run) {
                dir.make_dir(&rel)?;
                export::write(&path, &exported.files)?;
            }
            None
        }
    };
    Ok(Unit {
        case: i,
        release: name.to_string(),
        dir: path,
        refused,
    })
}

/// Runs every unit without a real run, `plan.jobs` at a time.
fn run_all(units: &[Unit], plan: &Plan, progress: &(dyn Fn(&str) + Sync)) {
    let todo: Vec<&Unit> = units
        .iter()
        .filter(|u| u.refused.is_none() && !u.dir.join("real/run.json").exists())
        .collect();
    let next = AtomicUsize::new(0);
    let done = Mutex::new(0usize);
    let limit = Duration::from_millis(plan.identity.limit_ms) + Duration::from_secs(180);
    std::thread::scope(|s| {
        for _ in 0..plan.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(u) = todo.get(k) else {
                    break;
                };
                let started = Stopwatch::start();
                let outcome = run_one(&u.dir, limit, &plan.identity.jvm_options);
                let mut n = done.lock().unwrap_or_else(|e| e.into_inner());
                *n += 1;
                progress(&format!(
                    "[{}/{}] {} on {}: {} ({:.0} s)",
                    *n,
                    todo.len(),
                    plan.cases[u.case].id,
                    u.release,
                    outcome,
                    started.elapsed_ns() as f64 / 1e9
                ));
            });
        }
    });
}

/// Runs `dir/run.sh`, its output into `dir/run.log`, its JVMs with
/// `jvm_options`; killed past `limit`.
fn run_one(dir: &Path, limit: Duration, jvm_options: &str) -> String {
    let log = OutDir::open(dir, &|_| true).and_then(|d| d.create(RUN_LOG));
    let (log, err) = match log {
        Ok((_, file)) => match file.try_clone() {
            Ok(err) => (file, err),
            Err(e) => return format!("cannot log: {e}"),
        },
        Err(e) => return format!("cannot log: {e}"),
    };
    let mut command = Command::new("sh");
    if !jvm_options.is_empty() {
        command.env("JAVA_TOOL_OPTIONS", jvm_options);
    }
    let child = command
        .arg(dir.join("run.sh"))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return format!("cannot start sh: {e}"),
    };
    let started = Stopwatch::start();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match status.success() {
                    true => "ran".into(),
                    false => format!("run.sh exited with {status}"),
                }
            }
            Ok(None) if u128::from(started.elapsed_ns()) > limit.as_nanos() => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("killed after {} s", limit.as_secs());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return format!("cannot wait: {e}"),
        }
    }
}

/// Every case's line: its sides read back and classified.
fn read_back(units: &[Unit], plan: &Plan) -> Vec<Line> {
    let mut lines = Vec::new();
    for (i, case) in plan.cases.iter().enumerate() {
        let mut simulated = BTreeMap::new();
        let mut releases = BTreeMap::new();
        let mut fid = BTreeMap::new();
        for u in units.iter().filter(|u| u.case == i) {
            let (sim, real) = match &u.refused {
                Some(why) => (Side::refused(why), Side::refused(why)),
                None => {
                    let run = real::read(&u.dir);
                    if let Ok(r) = &run {
                        fid.insert(u.release.clone(), fidelity(r));
                    }
                    (simulated_side(&u.dir), Side::real(&run))
                }
            };
            simulated.insert(u.release.clone(), sim);
            releases.insert(u.release.clone(), real);
        }
        let pairs: Vec<(&str, &Side, &Side)> = releases
            .iter()
            .map(|(r, real)| (r.as_str(), &simulated[r], real))
            .collect();
        let class = classify(&pairs.iter().map(|&(_, s, r)| (s, r)).collect::<Vec<_>>());
        lines.push(Line {
            sweep: plan.identity.clone(),
            case: case.id.clone(),
            origin: case.origin.clone(),
            scenario: case.scenario.name.clone(),
            seed: case.seed,
            algorithm: case.algorithm.name().to_string(),
            class,
            signature: signature(&pairs),
            simulated,
            releases,
            fidelity: fid,
            dir: format!("cases/{}", case.id),
        });
    }
    lines
}

/// The simulated side of an export: its `simulated.json`.
fn simulated_side(dir: &Path) -> Side {
    let text = crate::input::read_text(&dir.join("simulated.json"), 1 << 26);
    match text.map(|t| serde_json::from_str::<serde_json::Value>(&t)) {
        Ok(Ok(v)) => Side::simulated(&v),
        Ok(Err(e)) => Side::refused(&format!("simulated.json: {e}")),
        Err(e) => Side::refused(&format!("simulated.json: {e}")),
    }
}

/// `results.jsonl`, `summary.json`, `summary.md` and each disagreement's
/// `RERUN.md`.
fn write_results(dir: &OutDir, plan: &Plan, lines: &[Line]) -> Result<Summary, WriteError> {
    let mut jsonl = String::new();
    for l in lines {
        jsonl.push_str(&serde_json::to_string(l).unwrap_or_default());
        jsonl.push('\n');
    }
    dir.write("results.jsonl", jsonl.as_bytes())?;
    let summary = summarise(&plan.identity, lines);
    let text = serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n";
    dir.write("summary.json", text.as_bytes())?;
    dir.write("summary.md", summary_md(&summary, lines).as_bytes())?;
    for l in lines {
        let rerun = format!("{}/RERUN.md", l.dir);
        match l.class.is_disagreement() {
            true => dir.write(&rerun, rerun_md(l, &plan.program).as_bytes())?,
            false => {
                dir.remove(&rerun)?;
                dir.path().join(&rerun)
            }
        };
    }
    Ok(summary)
}
