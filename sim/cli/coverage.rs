//! `coverage-report`: the coverage of scenarios under every exactly-once
//! algorithm with `--swarm`, plain and guided (`reports/coverage/`), or
//! its README rendered again from the sweeps it recorded.

use super::*;
use crate::sweep::coverage_report::{self, Plan, Report, SWEEPS_FILE};

/// The largest `sweeps.json` read back.
const SWEEPS_BYTES: u64 = 64 << 20;

#[derive(clap::Args)]
pub(crate) struct CoverageReportArgs {
    /// Scenario files, or directories whose `*.toml` files all count.
    pub(crate) scenarios: Vec<PathBuf>,
    /// Seeds of every sweep: A..B (B excluded) or A..=B.
    #[arg(long, default_value = "0..300")]
    pub(crate) seeds: String,
    /// Algorithms, comma separated (default: every exactly-once one).
    #[arg(long)]
    pub(crate) algorithms: Option<String>,
    /// The output directory (README.md and sweeps.json).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// A Markdown file whose text ends the README as notes.
    #[arg(long)]
    pub(crate) notes: Option<PathBuf>,
    /// Worker threads of each sweep, 1 to 1024 (default: every core).
    #[arg(long, value_parser = jobs_range())]
    pub(crate) jobs: Option<usize>,
    /// Run nothing: write DIR/README.md again from DIR/sweeps.json (and
    /// the notes it names).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["scenarios", "out", "algorithms"])]
    pub(crate) render: Option<PathBuf>,
}

pub(crate) fn coverage_report_cmd(a: CoverageReportArgs) -> Result<u8> {
    if let Some(dir) = &a.render {
        let path = dir.join(SWEEPS_FILE);
        let text = crate::input::read_text(&path, SWEEPS_BYTES)
            .map_err(|e| UsageError(format!("error: cannot read {}: {e}", path.display())))?;
        let report: Report = serde_json::from_str(&text)
            .map_err(|e| UsageError(format!("error: {}: {e}", path.display())))?;
        return write_report(dir, &report, false);
    }
    let Some(out) = a.out.clone() else {
        return Err(
            UsageError("error: coverage-report needs --out DIR (or --render DIR)".into()).into(),
        );
    };
    let plan = plan(&a)?;
    let total = plan.scenarios.len() * plan.algorithms.len() * 2;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let clock = Stopwatch::start();
    let report = coverage_report::generate(&plan, super::jobs(a.jobs), &|s| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        eprintln!(
            "coverage-report: {n}/{total} sweeps at most; {} {} {}: {} targets, {} failing, {:.0} s so far",
            s.scenario,
            s.algorithm,
            if s.guided { "guided" } else { "plain" },
            s.targets.values().filter(|[_, hit]| *hit > 0).count(),
            s.seeds_failed,
            clock.elapsed_ns() as f64 / 1e9
        );
    });
    let dir = out_dir(&out)?;
    dir.write(SWEEPS_FILE, report.to_json().as_bytes())
        .map_err(|e| UsageError(format!("error: {e}")))?;
    write_report(&out, &report, true)
}

/// The scenarios (files, or every `*.toml` of a directory, sorted), the
/// algorithms, the seeds and the command line that generates it again.
fn plan(a: &CoverageReportArgs) -> Result<Plan> {
    let mut files = Vec::new();
    for p in &a.scenarios {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| UsageError(format!("error: cannot read {}: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    if files.is_empty() {
        return Err(UsageError("error: coverage-report names no scenario".into()).into());
    }
    let mut scenarios = Vec::new();
    for f in files {
        scenarios.push((f.display().to_string(), load_scenario(&f)?));
    }
    let algorithms = match &a.algorithms {
        None => coverage_report::exactly_once_algorithms(),
        Some(list) => list
            .split(',')
            .map(|n| {
                Algorithm::from_name(n.trim())
                    .ok_or_else(|| UsageError(format!("error: unknown algorithm `{n}`")).into())
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let seeds = SeedRange::parse(&a.seeds).map_err(|e| UsageError(format!("error: {e}")))?;
    let mut command = format!("{} coverage-report", crate::program::name());
    for p in &a.scenarios {
        command.push_str(&format!(
            " {}",
            crate::input::shell_word(&p.display().to_string())
        ));
    }
    command.push_str(&format!(" --seeds {}", a.seeds));
    if let Some(list) = &a.algorithms {
        command.push_str(&format!(" --algorithms {}", crate::input::shell_word(list)));
    }
    if let Some(out) = &a.out {
        command.push_str(&format!(
            " --out {}",
            crate::input::shell_word(&out.display().to_string())
        ));
    }
    if let Some(n) = &a.notes {
        command.push_str(&format!(
            " --notes {}",
            crate::input::shell_word(&n.display().to_string())
        ));
    }
    Ok(Plan {
        scenarios,
        algorithms,
        seeds,
        command,
        notes: a.notes.as_ref().map(|n| n.display().to_string()),
    })
}

/// The report's folder: new, empty or an earlier report's (README.md,
/// sweeps.json), never written through a link.
fn out_dir(dir: &Path) -> Result<crate::safe_fs::OutDir> {
    let own = |name: &str| name == "README.md" || name == SWEEPS_FILE;
    crate::safe_fs::OutDir::open(dir, &own).map_err(|e| UsageError(format!("error: {e}")).into())
}

/// Writes DIR/README.md from the report (and the notes file it names).
fn write_report(dir: &Path, report: &Report, print: bool) -> Result<u8> {
    let notes = report
        .notes
        .as_ref()
        .map(|p| {
            crate::input::read_text(Path::new(p), NOTES_BYTES)
                .map_err(|e| UsageError(format!("error: cannot read {p}: {e}")))
        })
        .transpose()?;
    let readme = coverage_report::render(report, notes.as_deref());
    let path = out_dir(dir)?
        .write("README.md", readme.as_bytes())
        .map_err(|e| UsageError(format!("error: {e}")))?;
    if print {
        emit(&format!("wrote        {}\n", super::shown(&path)));
    }
    Ok(0)
}
