//! The kill matrix: every registered mutant swept on the scenarios where it
//! applies, until the checkers reject a run that passes without the mutant.
//! For each mutant: killed or survived, the invariants that caught it, how
//! many seeds it took, the wall time to the first kill, and the size of the
//! shrunk reproducer of the first killing seed.
//!
//! A mutant run that panics is killed with the check `panic`; a seed whose
//! run panics without the mutant is never a kill.
//!
//! Over the user's own scenarios (`build_on`) each mutant runs under the
//! algorithms it is declared for; one that never takes effect is untested,
//! not a survivor. A replay line never names a file that is not there (a
//! built-in copy gets none).

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
    /// Over given scenarios: it never took its broken path in any seed, so
    /// nothing was tested (neither killed nor survived).
    #[serde(skip_serializing_if = "is_false")]
    pub untested: bool,
    /// Where it was killed (or, if it survived, where it was last tried).
    pub scenario: String,
    pub algorithm: String,
    /// `scenario` is not a file here: the copy built into ckptsim ran (no
    /// replay line).
    #[serde(skip_serializing_if = "is_false")]
    pub built_in: bool,
    /// Over given scenarios: every scenario (algorithm) it was tried on, in
    /// order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tried: Vec<String>,
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
    /// Over given scenarios: the rows that were untested.
    #[serde(skip_serializing_if = "is_zero")]
    pub untested: usize,
    /// Over given scenarios: the mutants declared only for algorithms none
    /// of them can run (no row).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_applicable: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A killing seed and the checks that failed on it.
type Hit = (u64, Vec<String>);

/// The first seed of `seeds` (in order) where the mutant fails the run (a
/// panic included) and the clean run passes (without panicking), searched
/// in parallel batches.
fn first_kill(
    at: &Target,
    mutant: Mutant,
    seeds: SeedRange,
    jobs: usize,
) -> (Option<Hit>, u64, u64) {
    let (sc, alg) = (at.sc, at.alg);
    // A seed whose flow took no savepoint has nothing to judge: it passes.
    let run_seed = |sc: &Scenario, cfg: &RunConfig| match at.flow {
        None => Some(execute(sc, cfg)),
        Some(flow) => flow.execute(sc, cfg),
    };
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
                let (checks, took): (Vec<String>, bool) = match panics::catch(|| run_seed(sc, &cfg))
                {
                    Ok(None) => return (None, false),
                    Ok(Some(e)) if e.verdict.passed => return (None, took_effect(&e)),
                    Ok(Some(e)) => (
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
                let clean_passes = matches!(
                    panics::catch(|| run_seed(sc, &clean)),
                    Ok(Some(e)) if e.verdict.passed
                );
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

/// A row not tried yet: where it was tried is filled in as it is.
fn empty_row(info: Mutant) -> KillRow {
    KillRow {
        info: *info.info(),
        killed: false,
        untested: false,
        scenario: String::new(),
        algorithm: String::new(),
        built_in: false,
        tried: Vec::new(),
        seed: None,
        checks: Vec::new(),
        seeds_run: 0,
        seeds_fired: 0,
        wall_ms: 0.0,
        reproducer: None,
        replay: None,
    }
}

/// One place to try a mutant: a scenario (as its file is named on the
/// command line and in replay lines) under one algorithm.
struct Target<'a> {
    shown: String,
    sc: &'a Scenario,
    alg: scenario::Algorithm,
    /// The copy built into ckptsim stands in for a file that is not there.
    built_in: bool,
    /// The mutant breaks a rescale: each seed runs this flow.
    flow: Option<&'static crate::rescale::RescaleFlow>,
}

/// Tries `info` at `at`, filling in `row`; whether it was killed there.
fn try_at(
    row: &mut KillRow,
    info: Mutant,
    at: &Target,
    spec: &KillSpec,
    pool: &rayon::ThreadPool,
    clock: &Stopwatch,
) -> bool {
    row.scenario = at.shown.clone();
    row.algorithm = at.alg.name().to_string();
    row.built_in = at.built_in;
    let (hit, run, fired) = pool.install(|| first_kill(at, info, spec.seeds, spec.jobs));
    row.seeds_run += run;
    row.seeds_fired += fired;
    let Some((seed, checks)) = hit else {
        return false;
    };
    row.wall_ms = clock.elapsed_ns() as f64 / 1e6;
    row.killed = true;
    row.seed = Some(seed);
    row.checks = checks;
    // A built-in copy has no file here to replay.
    row.replay = (!at.built_in).then(|| match at.flow {
        Some(flow) => flow.replay(&row.scenario, seed, at.alg.name(), &[info.name]),
        None => format!(
            "{} run {} --seed {seed} --algorithm {} --mutant {}",
            crate::program::name(),
            crate::input::shell_word(&row.scenario),
            at.alg.name(),
            info.name
        ),
    });
    // A flow's two runs do not shrink into one file.
    if spec.shrink_budget > 0 && at.flow.is_none() {
        let m = Mutants::NONE.with(info);
        if let Ok(s) = shrink(at.sc, seed, at.alg, m, spec.shrink_budget) {
            row.reproducer = Some(s.after.into());
        }
    }
    true
}

/// The mutants `spec` asks for, in registry order.
fn wanted(spec: &KillSpec) -> impl Iterator<Item = &'static Mutant> + '_ {
    MUTANTS
        .iter()
        .filter(|m| spec.only.is_empty() || spec.only.iter().any(|n| n == m.name))
}

/// Builds the matrix from the scenarios in `dir` (`NAME.toml` per entry of
/// each mutant's `applies`).
pub fn build(spec: &KillSpec, dir: &Path) -> Result<KillMatrix, String> {
    let pool = thread_pool(spec)?;
    let _capture = panics::Capture::install();
    let mut rows = Vec::new();
    for info in wanted(spec) {
        let clock = Stopwatch::start();
        let mut row = empty_row(*info);
        for &(name, alg) in info.applies {
            let alg = scenario::Algorithm::from_name(alg)
                .ok_or_else(|| format!("mutant {}: unknown algorithm `{alg}`", info.name))?;
            let path = dir.join(format!("{name}.toml"));
            // From another directory: the copy built into ckptsim.
            let built_in = scenario::shipped::shipped(name).filter(|_| !path.exists());
            let sc = match built_in {
                Some(text) => scenario::parse_str(text, &path.display().to_string())
                    .map_err(|e| e.to_string())?,
                None => scenario::load(&path).map_err(|e| e.to_string())?,
            };
            let at = Target {
                shown: path.display().to_string(),
                sc: &sc,
                alg,
                built_in: built_in.is_some(),
                flow: crate::rescale::flow_of(*info),
            };
            if try_at(&mut row, *info, &at, spec, &pool, &clock) {
                break;
            }
        }
        if !row.killed {
            row.wall_ms = clock.elapsed_ns() as f64 / 1e6;
        }
        rows.push(row);
    }
    Ok(KillMatrix::of(spec, rows, Vec::new()))
}

/// The algorithms `info` is declared for (its `applies`), each once.
fn declared_algorithms(info: Mutant) -> Vec<scenario::Algorithm> {
    let mut algs = Vec::new();
    for alg in info
        .applies
        .iter()
        .filter_map(|(_, a)| scenario::Algorithm::from_name(a))
    {
        if !algs.contains(&alg) {
            algs.push(alg);
        }
    }
    algs
}

/// Builds the matrix over the given scenarios (`(name as given, scenario)`)
/// instead of the shipped ones: each mutant is tried on every scenario
/// under every algorithm it is declared for that the scenario can run, in
/// that order, until the first kill. A mutant with no such algorithm is
/// not applicable; one that never took its broken path in any seed is
/// untested (the scenarios never exercise what it breaks), neither a kill
/// nor a survivor.
pub fn build_on(spec: &KillSpec, scenarios: &[(String, Scenario)]) -> Result<KillMatrix, String> {
    let pool = thread_pool(spec)?;
    let _capture = panics::Capture::install();
    let mut rows = Vec::new();
    let mut not_applicable = Vec::new();
    for info in wanted(spec) {
        let algs = declared_algorithms(*info);
        let targets: Vec<Target> = scenarios
            .iter()
            .flat_map(|(shown, sc)| algs.iter().map(move |&alg| (shown, sc, alg)))
            .filter(|(_, sc, alg)| scenario::unsupported(sc, *alg).is_none())
            .map(|(shown, sc, alg)| Target {
                shown: shown.clone(),
                sc,
                alg,
                built_in: false,
                flow: crate::rescale::flow_of(*info).filter(|f| f.fits(sc)),
            })
            .collect();
        if targets.is_empty() {
            not_applicable.push(info.name.to_string());
            continue;
        }
        let clock = Stopwatch::start();
        let mut row = empty_row(*info);
        for at in &targets {
            row.tried.push(format!("{} ({})", at.shown, at.alg.name()));
            if try_at(&mut row, *info, at, spec, &pool, &clock) {
                break;
            }
        }
        if !row.killed {
            row.wall_ms = clock.elapsed_ns() as f64 / 1e6;
            row.untested = row.seeds_fired == 0;
        }
        rows.push(row);
    }
    Ok(KillMatrix::of(spec, rows, not_applicable))
}

fn thread_pool(spec: &KillSpec) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(spec.jobs.max(1))
        .build()
        .map_err(|e| e.to_string())
}

impl KillMatrix {
    fn of(spec: &KillSpec, rows: Vec<KillRow>, not_applicable: Vec<String>) -> KillMatrix {
        let killed = rows.iter().filter(|r| r.killed).count();
        let untested = rows.iter().filter(|r| r.untested).count();
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
        KillMatrix {
            seeds: format!("{}..{}", spec.seeds.start, spec.seeds.end),
            survived: rows.len() - killed - untested,
            killed,
            rows,
            median_seeds_to_kill: median,
            untested,
            not_applicable,
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<32} {:<28} {:<8} {:<36} {:<26} {:>6} {:>9}  reproducer",
            "mutant", "part", "result", "caught by", "killed by", "seeds", "wall"
        );
        for r in &self.rows {
            s.push_str(&row_line(r));
        }
        let _ = writeln!(
            s,
            "killed {}/{} over seeds {}; median seeds to first kill {}",
            self.killed,
            self.rows.len() - self.untested,
            self.seeds,
            self.median_seeds_to_kill
        );
        let untested: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.untested)
            .map(|r| r.info.name)
            .collect();
        if !untested.is_empty() {
            let _ = writeln!(
                s,
                "untested {}: {} (never took effect on these scenarios, so nothing was tested)",
                untested.len(),
                untested.join(", ")
            );
        }
        if !self.not_applicable.is_empty() {
            let _ = writeln!(
                s,
                "not applicable {}: {} (declared only for algorithms these scenarios cannot run)",
                self.not_applicable.len(),
                self.not_applicable.join(", ")
            );
        }
        for r in self.rows.iter().filter(|r| !r.killed && !r.untested) {
            s.push_str(&survivor_line(r));
        }
        if self.rows.iter().any(|r| r.built_in) {
            let _ = writeln!(
                s,
                "note: no scenarios folder here, so the copies built into ckptsim ran and no replay line can name them; run from ckptsim's source folder (or --scenarios DIR), or name your own scenarios: {} mutants FILE...",
                crate::program::name()
            );
        }
        s
    }
}

/// A row of the table.
fn row_line(r: &KillRow) -> String {
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
    let result = match (r.killed, r.untested) {
        (true, _) => "killed",
        (false, true) => "untested",
        (false, false) => "SURVIVED",
    };
    format!(
        "{:<32} {:<28} {:<8} {:<36} {:<26} {:>6} {:>7.0}ms  {repro}\n",
        r.info.name,
        r.info.part,
        result,
        if r.killed {
            r.checks.join(",")
        } else {
            format!("(expected {})", r.info.caught_by)
        },
        by,
        r.seeds_run,
        r.wall_ms
    )
}

/// A survivor's line: what it breaks and every place it was tried.
fn survivor_line(r: &KillRow) -> String {
    let tried = match (r.tried.is_empty(), r.built_in) {
        (false, _) => r.tried.join(", "),
        (true, false) => format!("{} ({})", r.scenario, r.algorithm),
        (true, true) => format!(
            "the built-in copy of {} ({}; no such file here)",
            r.scenario, r.algorithm
        ),
    };
    format!(
        "survivor {}: {} — tried {tried}; it took effect in {} of {} seeds{}\n",
        r.info.name,
        r.info.what,
        r.seeds_fired,
        r.seeds_run,
        if r.seeds_fired == 0 {
            " (warning: never took effect, so nothing was tested)"
        } else {
            ""
        }
    )
}
