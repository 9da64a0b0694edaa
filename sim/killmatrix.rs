//! The kill matrix: every registered mutant swept on the scenarios where it
//! applies, until the checkers reject a run that passes without the mutant.
//! For each mutant: killed or survived, the invariants that caught it, how
//! many seeds it took, the wall time to the first kill, and the size of the
//! shrunk reproducer of the first killing seed.
//!
//! A mutant run that panics is killed with the check `panic`; a seed whose
//! run panics without the mutant is never a kill.

use crate::harness::execute;
use crate::mutant::{Mutant, MutantInfo, Mutants, MUTANTS};
use crate::panics::{self, PANIC};
use crate::runtime::RunConfig;
use crate::scenario::{self, Scenario};
use crate::shrink::{shrink, Size};
use crate::sweep::SeedRange;
use crate::wallclock::Stopwatch;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// How to build the matrix.
#[derive(Clone, Debug)]
pub struct KillSpec {
    pub seeds: SeedRange,
    pub jobs: usize,
    /// Shrink each first kill (candidate-run budget; 0 = do not shrink).
    pub shrink_budget: u64,
    /// Only these mutants (by name); empty = all.
    pub only: Vec<String>,
}

/// The shrunk reproducer's size.
#[derive(Clone, Debug, Serialize)]
pub struct ReproSize {
    pub crashes: usize,
    pub records: u64,
    pub tasks: u32,
}

impl From<Size> for ReproSize {
    fn from(s: Size) -> ReproSize {
        ReproSize {
            crashes: s.crashes,
            records: s.records,
            tasks: s.tasks,
        }
    }
}

/// One row of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct KillRow {
    #[serde(flatten)]
    pub info: MutantInfo,
    pub killed: bool,
    /// Where it was killed (or, if it survived, where it was last tried).
    pub scenario: String,
    pub algorithm: String,
    /// The first killing seed.
    pub seed: Option<u64>,
    /// The checks that failed on it.
    pub checks: Vec<String>,
    /// Seeds run until the first kill (over all applicable scenarios), or
    /// in all if it survived.
    pub seeds_run: u64,
    /// Of those, the seeds in which the mutant took its broken path (a
    /// survivor that never did was never tested).
    pub seeds_fired: u64,
    pub wall_ms: f64,
    pub reproducer: Option<ReproSize>,
    /// `ckptsim run` line of the first kill.
    pub replay: Option<String>,
}

/// The whole matrix.
#[derive(Clone, Debug, Serialize)]
pub struct KillMatrix {
    pub seeds: String,
    pub rows: Vec<KillRow>,
    pub killed: usize,
    pub survived: usize,
    pub median_seeds_to_kill: u64,
}

/// A killing seed and the checks that failed on it.
type Hit = (u64, Vec<String>);

/// The first seed of `seeds` (in order) where the mutant fails the run (a
/// panic included) and the clean run passes (without panicking), searched
/// in parallel batches.
fn first_kill(
    sc: &Scenario,
    mutant: Mutant,
    alg: scenario::Algorithm,
    seeds: SeedRange,
    jobs: usize,
) -> (Option<Hit>, u64, u64) {
    let batch = (jobs * 4).max(1) as u64;
    let mut start = seeds.start;
    let mut fired = 0;
    while start < seeds.end {
        let end = (start + batch).min(seeds.end);
        let hits: Vec<(Option<Hit>, bool)> = (start..end)
            .into_par_iter()
            .map(|seed| {
                let cfg = RunConfig {
                    seed,
                    algorithm: alg,
                    mutants: Mutants::NONE.with(mutant),
                    record_trace: false,
                };
                let took_effect = |e: &crate::harness::Execution| {
                    !e.output.warnings.iter().any(|w| w.kind == "mutant")
                };
                let (checks, took): (Vec<String>, bool) = match panics::catch(|| execute(sc, &cfg))
                {
                    Ok(e) if e.verdict.passed => return (None, took_effect(&e)),
                    Ok(e) => (
                        e.verdict
                            .checks
                            .iter()
                            .filter(|c| !c.passed)
                            .map(|c| c.name.to_string())
                            .collect(),
                        took_effect(&e),
                    ),
                    Err(_) => (vec![PANIC.to_string()], true),
                };
                let clean = RunConfig {
                    mutants: Mutants::NONE,
                    ..cfg
                };
                let clean_passes =
                    matches!(panics::catch(|| execute(sc, &clean)), Ok(e) if e.verdict.passed);
                (clean_passes.then_some((seed, checks)), took)
            })
            .collect();
        // Seeds up to the first kill, in order: the result does not depend
        // on the batch size.
        for (hit, took) in hits {
            fired += u64::from(took);
            if let Some(hit) = hit {
                return (Some(hit.clone()), hit.0 - seeds.start + 1, fired);
            }
        }
        start = end;
    }
    (None, seeds.len(), fired)
}

/// Builds the matrix from the scenarios in `dir` (`NAME.toml` per entry of
/// each mutant's `applies`).
pub fn build(spec: &KillSpec, dir: &Path) -> Result<KillMatrix, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(spec.jobs.max(1))
        .build()
        .map_err(|e| e.to_string())?;
    let _capture = panics::Capture::install();
    let mut rows = Vec::new();
    for info in MUTANTS {
        if !spec.only.is_empty() && !spec.only.iter().any(|n| n == info.name) {
            continue;
        }
        let clock = Stopwatch::start();
        let mut row = KillRow {
            info: *info.info(),
            killed: false,
            scenario: String::new(),
            algorithm: String::new(),
            seed: None,
            checks: Vec::new(),
            seeds_run: 0,
            seeds_fired: 0,
            wall_ms: 0.0,
            reproducer: None,
            replay: None,
        };
        for &(name, alg) in info.applies {
            let alg = scenario::Algorithm::from_name(alg)
                .ok_or_else(|| format!("mutant {}: unknown algorithm `{alg}`", info.name))?;
            let path = dir.join(format!("{name}.toml"));
            // From another directory: the copy built into ckptsim.
            let sc = match (path.exists(), scenario::shipped::shipped(name)) {
                (false, Some(text)) => scenario::parse_str(text, &path.display().to_string())
                    .map_err(|e| e.to_string())?,
                _ => scenario::load(&path).map_err(|e| e.to_string())?,
            };
            row.scenario = format!("{}", path.display());
            row.algorithm = alg.name().to_string();
            let (hit, run, fired) =
                pool.install(|| first_kill(&sc, *info, alg, spec.seeds, spec.jobs));
            row.seeds_run += run;
            row.seeds_fired += fired;
            if let Some((seed, checks)) = hit {
                row.wall_ms = clock.elapsed_ns() as f64 / 1e6;
                row.killed = true;
                row.seed = Some(seed);
                row.checks = checks;
                row.replay = Some(format!(
                    "{} run {} --seed {seed} --algorithm {} --mutant {}",
                    crate::program::name(),
                    row.scenario,
                    alg.name(),
                    info.name
                ));
                if spec.shrink_budget > 0 {
                    let m = Mutants::NONE.with(*info);
                    if let Ok(s) = shrink(&sc, seed, alg, m, spec.shrink_budget) {
                        row.reproducer = Some(s.after.into());
                    }
                }
                break;
            }
        }
        if !row.killed {
            row.wall_ms = clock.elapsed_ns() as f64 / 1e6;
        }
        rows.push(row);
    }
    let killed = rows.iter().filter(|r| r.killed).count();
    let mut seeds: Vec<u64> = rows
        .iter()
        .filter(|r| r.killed)
        .map(|r| r.seeds_run)
        .collect();
    seeds.sort_unstable();
    let median = seeds
        .get(seeds.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0);
    Ok(KillMatrix {
        seeds: format!("{}..{}", spec.seeds.start, spec.seeds.end),
        survived: rows.len() - killed,
        killed,
        rows,
        median_seeds_to_kill: median,
    })
}

impl KillMatrix {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<32} {:<28} {:<8} {:<36} {:<26} {:>6} {:>9}  reproducer",
            "mutant", "part", "result", "caught by", "killed by", "seeds", "wall"
        );
        for r in &self.rows {
            let repro = match &r.reproducer {
                Some(p) => format!(
                    "{} crash{}, {} records, {} subtasks",
                    p.crashes,
                    if p.crashes == 1 { "" } else { "es" },
                    p.records,
                    p.tasks
                ),
                None => "-".to_string(),
            };
            // The scenario (by name) and the seed that killed it.
            let by = match r.seed {
                Some(seed) => {
                    let name = std::path::Path::new(&r.scenario)
                        .file_stem()
                        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
                    format!("{name} seed {seed}")
                }
                None => "-".to_string(),
            };
            let _ = writeln!(
                s,
                "{:<32} {:<28} {:<8} {:<36} {:<26} {:>6} {:>7.0}ms  {repro}",
                r.info.name,
                r.info.part,
                if r.killed { "killed" } else { "SURVIVED" },
                if r.killed {
                    r.checks.join(",")
                } else {
                    format!("(expected {})", r.info.caught_by)
                },
                by,
                r.seeds_run,
                r.wall_ms
            );
        }
        let _ = writeln!(
            s,
            "killed {}/{} over seeds {}; median seeds to first kill {}",
            self.killed,
            self.rows.len(),
            self.seeds,
            self.median_seeds_to_kill
        );
        for r in self.rows.iter().filter(|r| !r.killed) {
            let _ = writeln!(
                s,
                "survivor {}: {} — tried {} ({}); it took effect in {} of {} seeds{}",
                r.info.name,
                r.info.what,
                r.scenario,
                r.algorithm,
                r.seeds_fired,
                r.seeds_run,
                if r.seeds_fired == 0 {
                    " (warning: never took effect, so nothing was tested)"
                } else {
                    ""
                }
            );
        }
        s
    }
}
