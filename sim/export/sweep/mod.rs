//! `ckptsim flink-sweep`: the simulator and real Flink as two oracles over
//! the same jobs.
//!
//! A sweep takes cases (scenarios drawn by the property strategies, or
//! given files), exports each for every release asked, runs each export's
//! `run.sh` on that release, reads each run back with `flink-check`'s
//! reader, and compares three verdicts: the simulated run's (the export's
//! `simulated.json`, the same scenario, seed, algorithm and crashes) and
//! each release's. A disagreement is either a Flink bug or a place where
//! the model is simpler than Flink; both are worth a look, so each is
//! classified ([`Class`]) and kept with everything needed to rerun it.
//!
//! | module | what |
//! |---|---|
//! | this one | the cases, the classification, `results.jsonl` and the summary |
//! | `runner` | exporting and running the cases on Flink, resumably, `--jobs` at a time |
//!
//! The sweep's folder: `sweep.json` (its identity), `cases/ID/RELEASE/`
//! (an export, and `real/` once run), `results.jsonl` (a line per case),
//! `summary.md` and `summary.json` (grouped by signature, with the
//! fidelity of the metrics both sides have), and `cases/ID/RERUN.md` for
//! every disagreement.

use super::real::RealRun;
use super::{Options, FLINK_VERSION};
use crate::engine::rng::splitmix64;
use crate::mutant::Mutants;
use crate::scenario::{Algorithm, FlinkVersion, Scenario};
use crate::strategies;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub mod runner;

/// The algorithms generated cases take in turn (every mode Flink has).
pub const ALGORITHMS: [&str; 4] = ["aligned", "unaligned", "aligned-timeout", "at-least-once"];

/// The checks of the simulator that a real run can see, and the real
/// check that sees each: committed output (the commit check's promise
/// shows there too) and a job that does not finish or freezes. The
/// others (consistent cuts, state, protocol, timers, ...) judge what a
/// real run does not expose.
pub const OBSERVABLE: [(&str, &str); 3] = [
    ("exactly-once-output", "exactly-once-output"),
    ("commit", "exactly-once-output"),
    ("liveness", "liveness"),
];

/// What a sweep runs: its identity, written to `sweep.json` and into every
/// line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The command line that makes (or resumes) the sweep.
    pub command: String,
    /// The seed generated cases are drawn from (none: given scenarios).
    pub seed: Option<u64>,
    pub cases: u64,
    /// The Flink releases each case runs on (`2.0.2`, ...).
    pub releases: Vec<String>,
    pub algorithms: Vec<String>,
    pub mutants: Vec<String>,
    /// The longest one real run may take, in ms.
    pub limit_ms: u64,
    /// ckptsim's version.
    pub version: String,
    /// Options every real run's JVMs get (`JAVA_TOOL_OPTIONS`; empty:
    /// none), as last asked: they change timings, not what runs.
    #[serde(default)]
    pub jvm_options: String,
}

/// One case: a scenario, the seed and the algorithm it runs with.
#[derive(Clone, Debug)]
pub struct Case {
    /// `NNNN-ALGORITHM`: the folder under `cases/`.
    pub id: String,
    pub scenario: Scenario,
    pub seed: u64,
    pub algorithm: Algorithm,
    /// Where it came from: `generated (seed S, case K)` or the file.
    pub origin: String,
}

fn derive(seed: u64, case: u64, purpose: u64) -> u64 {
    splitmix64(splitmix64(seed ^ splitmix64(case)) ^ purpose)
}

/// Generated case `k` of a sweep with `seed`: a scenario drawn by
/// [`strategies::scenario`] for the `k`-th of `algorithms` in turn (every
/// feature the strategies draw: chaining, Sink V2, upsert sinks, FLIP-27
/// sources, split list state, crashes), redrawn until it can be exported
/// with `--drop-faults` (which keeps its task crashes).
pub fn generated(seed: u64, k: u64, algorithms: &[Algorithm]) -> Case {
    let algorithm = algorithms[(k % algorithms.len() as u64) as usize];
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&derive(seed, k, 100 + i as u64).to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    let strategy = strategies::scenario(algorithm)
        .prop_filter("exportable with --drop-faults", move |g| {
            super::refusals(&super::without_faults(&g.scenario).0, algorithm).is_empty()
        });
    let g = loop {
        // A filter that rejects too often in a row ends `new_tree`; the
        // next attempt draws on from where the runner's generator is.
        if let Ok(tree) = strategy.new_tree(&mut runner) {
            break tree.current();
        }
    };
    let mut scenario = crate::scenario::ScenarioData::clone(&g.scenario);
    scenario.name = format!("flink-sweep-{seed}-{k}");
    let scenario = crate::scenario::check(&scenario, &scenario.name)
        .expect("a generated scenario renamed is valid");
    Case {
        id: format!("{k:04}-{}", algorithm.name()),
        scenario,
        seed: derive(seed, k, 1),
        algorithm,
        origin: format!("generated (sweep seed {seed}, case {k})"),
    }
}

/// The export options of `case` for `release` in a sweep: the faults that
/// a real job cannot be given dropped (the simulated side runs without
/// them too), the sweep's mutants and limit for one real run.
pub fn options(case: &Case, release: FlinkVersion, limit_ms: u64, mutants: Mutants) -> Options {
    let mut opts = Options::new(case.seed, case.algorithm);
    opts.drop_faults = true;
    opts.release = release;
    opts.limit_ms = limit_ms;
    opts.mutants = mutants;
    opts
}

/// `case`'s scenario as exported for `release`: its `[checkpoint]
/// flink_version` set to the release, so that the simulated side models
/// the release the real side runs.
pub fn for_release(case: &Case, release: FlinkVersion) -> Scenario {
    let mut s = crate::scenario::ScenarioData::clone(&case.scenario);
    s.checkpoint.flink_version = release;
    crate::scenario::check(&s, &case.scenario.name)
        .expect("a valid scenario with another 2.x flink_version is valid")
}

/// One side's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    /// `pass`, `fail`, `not-run` (no real run to read: not run yet, or
    /// it died before writing its result) or `refused` (not exportable).
    pub verdict: String,
    /// The checks that failed, sorted.
    pub failed: Vec<String>,
    /// One line: the first failure's message, or why there is no verdict.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Real runs: crashes the simulated run had, and those injected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crashes: Option<(u64, u64)>,
}

impl Side {
    fn none(verdict: &str, message: String) -> Side {
        Side {
            verdict: verdict.into(),
            failed: vec![],
            message,
            crashes: None,
        }
    }

    /// A case not exported (or whose export cannot be read): `why`.
    pub fn refused(why: &str) -> Side {
        Side::none("refused", one_line(why))
    }

    /// The simulated side, from an export's `simulated.json`.
    pub fn simulated(summary: &Value) -> Side {
        let mut failed: Vec<String> = summary["violations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["check"].as_str().map(str::to_string))
            .collect();
        failed.sort();
        failed.dedup();
        let message = summary["violations"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Side {
            verdict: summary["verdict"].as_str().unwrap_or("not-run").to_string(),
            failed,
            message: one_line(&message),
            crashes: None,
        }
    }

    /// A release's side, from its real run read back (or why it could not
    /// be).
    pub fn real(run: &Result<RealRun, String>) -> Side {
        let run = match run {
            Ok(run) => run,
            Err(why) => return Side::none("not-run", one_line(why)),
        };
        let r = &run.report;
        let mut failed: Vec<String> = r
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.to_string())
            .collect();
        failed.sort();
        let message = r
            .checks
            .iter()
            .find(|c| !c.passed)
            .map(|c| one_line(&c.message))
            .unwrap_or_default();
        Side {
            verdict: r.verdict.to_string(),
            failed,
            message,
            crashes: Some((r.crashes_planned, r.crashes_injected)),
        }
    }

    fn ran(&self) -> bool {
        self.verdict == "pass" || self.verdict == "fail"
    }

    /// What this side shows in a signature: its verdict and failed checks.
    fn show(&self) -> String {
        match self.failed.is_empty() {
            true => self.verdict.clone(),
            false => format!("{} {}", self.verdict, self.failed.join("+")),
        }
    }
}

/// A message on one line, at most 300 characters.
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// How a case's verdicts relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The simulation and every release pass.
    AgreePass,
    /// The simulation and every release fail, a check in common (a
    /// finding the simulator predicted, confirmed on Flink).
    AgreeFail,
    /// A release fails where the simulation passes: a Flink bug or a
    /// place where the model is simpler than Flink.
    FlinkOnly,
    /// The simulation fails a check a real run can see, and every release
    /// passes: a simulator bug, or Flink's timing missed the window.
    SimOnly,
    /// The simulation fails only checks no real run can see (state,
    /// consistent cuts, ...), and every release passes: the simulator's
    /// judge sees more, not a disagreement.
    SimOnlyUnobservable,
    /// Both fail, but no check in common.
    FailDiffer,
    /// The releases disagree with each other: a regression or a fix.
    ReleasesDiffer,
    /// A side has no verdict (refused, not run, or the run died).
    Incomplete,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::AgreePass => "agree-pass",
            Class::AgreeFail => "agree-fail",
            Class::FlinkOnly => "flink-only",
            Class::SimOnly => "sim-only",
            Class::SimOnlyUnobservable => "sim-only-unobservable",
            Class::FailDiffer => "fail-differ",
            Class::ReleasesDiffer => "releases-differ",
            Class::Incomplete => "incomplete",
        }
    }

    /// A disagreement to triage (kept with a `RERUN.md`).
    pub fn is_disagreement(self) -> bool {
        matches!(
            self,
            Class::FlinkOnly | Class::SimOnly | Class::FailDiffer | Class::ReleasesDiffer
        )
    }

    pub const ALL: [Class; 8] = [
        Class::AgreePass,
        Class::AgreeFail,
        Class::FlinkOnly,
        Class::SimOnly,
        Class::SimOnlyUnobservable,
        Class::FailDiffer,
        Class::ReleasesDiffer,
        Class::Incomplete,
    ];
}

/// The real checks that would see the simulator's failures.
fn seen_by_real(sim: &Side) -> Vec<&'static str> {
    let mut seen: Vec<&str> = sim
        .failed
        .iter()
        .filter_map(|c| OBSERVABLE.iter().find(|(s, _)| s == c).map(|&(_, r)| r))
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

/// How one release's real run relates to the simulated run of the same
/// export (which models that release).
pub fn relate(sim: &Side, real: &Side) -> Class {
    if !sim.ran() || !real.ran() {
        return Class::Incomplete;
    }
    let seen = seen_by_real(sim);
    match (sim.verdict == "pass", real.verdict == "pass") {
        (true, true) => Class::AgreePass,
        (true, false) => Class::FlinkOnly,
        (false, true) if seen.is_empty() => Class::SimOnlyUnobservable,
        (false, true) => Class::SimOnly,
        (false, false) if real.failed.iter().any(|f| seen.contains(&f.as_str())) => {
            Class::AgreeFail
        }
        (false, false) => Class::FailDiffer,
    }
}

/// The class of a case from each release's pair of sides (simulated,
/// real): their common relation ([`relate`]), [`Class::Incomplete`] if a
/// side has no verdict, or [`Class::ReleasesDiffer`] if the releases
/// relate differently.
pub fn classify(pairs: &[(&Side, &Side)]) -> Class {
    let relations: Vec<Class> = pairs.iter().map(|(s, r)| relate(s, r)).collect();
    match relations.first() {
        None => Class::Incomplete,
        Some(_) if relations.contains(&Class::Incomplete) => Class::Incomplete,
        Some(&first) if relations.iter().all(|&c| c == first) => first,
        Some(_) => Class::ReleasesDiffer,
    }
}

/// The signature cases are grouped by: per release, the simulated and the
/// real verdict with their failed checks (`2.0.2: sim pass, flink fail
/// liveness | 2.3.0: sim pass, flink pass`).
pub fn signature(pairs: &[(&str, &Side, &Side)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .map(|(release, sim, real)| format!("{release}: sim {}, flink {}", sim.show(), real.show()))
        .collect();
    parts.join(" | ")
}

/// A metric both sides report, compared as simulated / real.
pub const FIDELITY: [(&str, &str); 5] = [
    (
        "checkpoint duration p50",
        "checkpoint_metrics.duration_ns.p50",
    ),
    ("alignment p50", "checkpoint_metrics.alignment_ns.p50"),
    ("start delay p50", "checkpoint_metrics.start_delay_ns.p50"),
    (
        "in-flight bytes p50",
        "checkpoint_metrics.in_flight_bytes.p50",
    ),
    ("checkpoints completed", "checkpoints_completed"),
];

fn at(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |v, k| v.get(k))?.as_f64()
}

/// `(metric, simulated, real)` for every [`FIDELITY`] metric both sides
/// have above zero.
pub fn fidelity(run: &RealRun) -> Vec<(String, f64, f64)> {
    let Some(sim) = &run.simulated else {
        return vec![];
    };
    let real = serde_json::to_value(&run.report).unwrap_or(Value::Null);
    FIDELITY
        .iter()
        .filter_map(|(name, path)| {
            let (s, r) = (at(sim, path)?, at(&real, path)?);
            (s > 0.0 && r > 0.0).then(|| (name.to_string(), s, r))
        })
        .collect()
}

/// One line of `results.jsonl`: a case, its three (or more) verdicts and
/// their class.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Line {
    pub sweep: Identity,
    pub case: String,
    pub origin: String,
    pub scenario: String,
    pub seed: u64,
    pub algorithm: String,
    pub class: Class,
    pub signature: String,
    /// Each release's simulated side (the export for a release simulates
    /// that release's behaviour), by release.
    pub simulated: BTreeMap<String, Side>,
    /// Each release's real side, by release.
    pub releases: BTreeMap<String, Side>,
    /// Per release: `(metric, simulated, real)` (see [`FIDELITY`]).
    pub fidelity: BTreeMap<String, Vec<(String, f64, f64)>>,
    /// The folder holding the case (relative to the sweep's).
    pub dir: String,
}

/// Quantiles `q` of `xs` (sorted here), by nearest rank.
fn quantile(xs: &mut [f64], q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let i = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

/// `summary.json`: counts by class and by signature, and the fidelity
/// distribution per release, algorithm and metric.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub sweep: Identity,
    pub classes: BTreeMap<String, u64>,
    /// Signature → the cases with it.
    pub signatures: BTreeMap<String, Vec<String>>,
    /// `release / algorithm / metric` → (cases, p10, p50, p90) of
    /// simulated / real.
    pub fidelity: BTreeMap<String, (u64, f64, f64, f64)>,
}

pub fn summarise(id: &Identity, lines: &[Line]) -> Summary {
    let mut classes = BTreeMap::new();
    for c in Class::ALL {
        classes.insert(c.name().to_string(), 0);
    }
    let mut signatures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut ratios: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for l in lines {
        *classes.entry(l.class.name().to_string()).or_default() += 1;
        signatures
            .entry(format!("{}: {}", l.class.name(), l.signature))
            .or_default()
            .push(l.case.clone());
        for (release, rows) in &l.fidelity {
            for (metric, s, r) in rows {
                for alg in [l.algorithm.as_str(), "all"] {
                    ratios
                        .entry(format!("{release} / {alg} / {metric}"))
                        .or_default()
                        .push(s / r);
                }
            }
        }
    }
    let fidelity = ratios
        .into_iter()
        .map(|(k, mut xs)| {
            let n = xs.len() as u64;
            let q = |xs: &mut [f64], p| quantile(xs, p);
            (k, (n, q(&mut xs, 0.1), q(&mut xs, 0.5), q(&mut xs, 0.9)))
        })
        .collect();
    Summary {
        sweep: id.clone(),
        classes,
        signatures,
        fidelity,
    }
}

/// `summary.md`: the classes, each signature with its cases, every
/// disagreement with its folder, and the fidelity table.
pub fn summary_md(s: &Summary, lines: &[Line]) -> String {
    let id = &s.sweep;
    let mut out = String::from("# A differential sweep: the simulator and real Flink\n\n");
    let _ = writeln!(
        out,
        "{} cases ({}), each on Flink {}; algorithms {}{}. Rerun or resume (runs already \
         read back are kept):\n\n```sh\n{}\n```\n",
        id.cases,
        match id.seed {
            Some(seed) => format!("generated from seed {seed}"),
            None => "given scenarios".into(),
        },
        id.releases.join(" and "),
        id.algorithms.join(", "),
        match id.mutants.is_empty() {
            true => String::new(),
            false => format!("; mutants {}", id.mutants.join(", ")),
        },
        id.command
    );
    out.push_str("| class | cases |\n|---|---:|\n");
    for (class, n) in &s.classes {
        let _ = writeln!(out, "| {class} | {n} |");
    }
    out.push_str("\n## Signatures\n\n| signature | cases | examples |\n|---|---:|---|\n");
    for (sig, cases) in &s.signatures {
        let shown: Vec<&str> = cases.iter().take(5).map(String::as_str).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            crate::input::printable(sig).replace('|', "\\|"),
            cases.len(),
            shown.join(", ")
        );
    }
    let disagreements: Vec<&Line> = lines.iter().filter(|l| l.class.is_disagreement()).collect();
    let _ = writeln!(out, "\n## Disagreements ({})\n", disagreements.len());
    if disagreements.is_empty() {
        out.push_str("None.\n");
    }
    for l in disagreements {
        let _ = writeln!(
            out,
            "- `{}` ({}): {}; `{}/RERUN.md`",
            l.case,
            l.class.name(),
            crate::input::printable(&l.signature),
            l.dir
        );
        for (release, side) in &l.releases {
            if !side.message.is_empty() {
                let _ = writeln!(
                    out,
                    "  - Flink {release}: {}",
                    crate::input::printable(&side.message)
                );
            }
        }
        for (release, side) in &l.simulated {
            if !side.message.is_empty() {
                let _ = writeln!(
                    out,
                    "  - simulated ({release}): {}",
                    crate::input::printable(&side.message)
                );
            }
        }
    }
    out.push_str(
        "\n## Fidelity: simulated / real, per metric\n\nOver the cases where both sides \
         report the metric above zero; 1.0 is exact.\n\n\
         | release / algorithm / metric | cases | p10 | p50 | p90 |\n|---|---:|---:|---:|---:|\n",
    );
    for (k, (n, p10, p50, p90)) in &s.fidelity {
        let _ = writeln!(out, "| {k} | {n} | {p10:.2} | {p50:.2} | {p90:.2} |");
    }
    out
}

/// `cases/ID/RERUN.md` of a disagreement: the commands that rerun each
/// side, as they run from the sweep's folder.
pub fn rerun_md(line: &Line, program: &str) -> String {
    use crate::input::shell_word;
    let mut out = format!(
        "# {}: {}\n\n{}\n\nThe simulated run (the export's `scenario.toml` holds the scenario \
         as exported, without the faults a real job cannot be given):\n\n```sh\n",
        line.case,
        line.class.name(),
        crate::input::printable(&line.signature)
    );
    let first = line.releases.keys().next().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "{program} run {} --seed {} --algorithm {}",
        shell_word(&format!("{}/{first}/scenario.toml", line.dir)),
        line.seed,
        line.algorithm
    );
    out.push_str("```\n\nEach real run, and its check:\n\n```sh\n");
    for release in line.releases.keys() {
        let dir = format!("{}/{release}", line.dir);
        let _ = writeln!(
            out,
            "sh {}\n{program} flink-check {}",
            shell_word(&format!("{dir}/run.sh")),
            shell_word(&dir)
        );
    }
    out.push_str("```\n");
    out
}

/// The release names of `versions` (`2.0.2`, ...).
pub fn release_names(versions: &[FlinkVersion]) -> Vec<String> {
    versions
        .iter()
        .map(|v| v.release().unwrap_or(FLINK_VERSION).to_string())
        .collect()
}

#[cfg(test)]
mod tests;
