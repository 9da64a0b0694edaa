//! `reports/coverage/` (`ckptsim coverage-report`): what the swarm reaches
//! on every shipped scenario under every exactly-once algorithm, plain and
//! guided, and, for each target never hit, why: unreachable there (a need
//! no seed's scenario had) or a gap the swarm should close.
//!
//! Generating runs every sweep, which takes long; the README is rendered
//! from the sweeps' tallies (`sweeps.json`) alone, so that a test renders
//! it again byte for byte and reruns one small sweep to check that the
//! tallies still come out the same. This module never judges a run: the
//! failing seeds it lists come from the sweeps' own verdicts.

use super::{run, Guidance, SeedRange, SeedResult, SweepSpec};
use crate::coverage::{Need, CATALOGUE};
use crate::mutant::Mutants;
use crate::scenario::{Algorithm, Guarantee, Scenario};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The file under the report's directory that holds every sweep's tallies.
pub const SWEEPS_FILE: &str = "sweeps.json";

/// What `coverage-report` ran and what each sweep reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The command that generates the report again.
    pub command: String,
    /// The Markdown file whose text ends the README.
    pub notes: Option<String>,
    /// Each sweep's seed range, `A..B`.
    pub seeds: String,
    pub ckptsim: String,
    /// The catalogue's targets when the sweeps ran, in catalogue order.
    pub targets: Vec<String>,
    pub sweeps: Vec<SweepCoverage>,
    /// Scenario and algorithm pairs that do not run together.
    pub refused: Vec<Refused>,
}

/// One sweep: a scenario under one algorithm with `--swarm`, plain or
/// `--guided`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepCoverage {
    pub scenario: String,
    pub algorithm: String,
    pub guided: bool,
    pub seeds_run: u64,
    pub seeds_failed: u64,
    pub draws_reused: u64,
    /// Events simulated over the seeds: what the sweep cost.
    pub events: u64,
    /// BLAKE3 of every seed's `seed fingerprint passed` line, in seed
    /// order: equal only if every run came out bit for bit the same.
    pub digest: String,
    /// Seeds whose scenario (as drawn) had each need, for needs some had.
    pub needs: BTreeMap<String, u64>,
    /// Per target some seed applied to or hit: `[applicable, hit]` seeds.
    pub targets: BTreeMap<String, [u64; 2]>,
}

impl SweepCoverage {
    fn reached(&self) -> BTreeSet<&str> {
        self.targets
            .iter()
            .filter(|(_, [_, hit])| *hit > 0)
            .map(|(t, _)| t.as_str())
            .collect()
    }

    /// The tallies of a sweep's results.
    pub fn of(
        scenario: &str,
        algorithm: Algorithm,
        guided: bool,
        results: &[SeedResult],
    ) -> SweepCoverage {
        let mut digest = blake3::Hasher::new();
        let mut needs: BTreeMap<String, u64> = BTreeMap::new();
        let mut coverage = crate::coverage::Coverage::default();
        for r in results {
            digest.update(format!("{} {} {}\n", r.seed, r.fingerprint, r.passed).as_bytes());
            for f in &r.coverage.features {
                *needs.entry(f.clone()).or_default() += 1;
            }
            coverage.add(&r.coverage);
        }
        SweepCoverage {
            scenario: scenario.to_string(),
            algorithm: algorithm.name().to_string(),
            guided,
            seeds_run: results.len() as u64,
            seeds_failed: results.iter().filter(|r| !r.passed).count() as u64,
            draws_reused: results.iter().filter(|r| r.draw_seed.is_some()).count() as u64,
            events: results
                .iter()
                .map(|r| r.events)
                .fold(0, u64::saturating_add),
            digest: digest.finalize().to_hex().to_string(),
            needs,
            targets: coverage
                .targets
                .into_iter()
                .filter(|(_, t)| t.applicable > 0 || t.hit > 0)
                .map(|(name, t)| (name, [t.applicable, t.hit]))
                .collect(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub scenario: String,
    pub algorithm: String,
    pub why: String,
}

impl Report {
    /// `sweeps.json`: one key a line and one sweep a line, so that the
    /// diff of a regeneration names the sweeps that changed.
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let mut out = String::from("{\n");
        if let serde_json::Value::Object(fields) = value {
            let n = fields.len();
            for (i, (key, v)) in fields.into_iter().enumerate() {
                let _ = write!(out, "{}: ", serde_json::Value::from(key));
                match v {
                    serde_json::Value::Array(items) if !items.is_empty() => {
                        out.push_str("[\n");
                        let lines: Vec<String> = items.iter().map(|x| x.to_string()).collect();
                        out.push_str(&lines.join(",\n"));
                        out.push_str("\n]");
                    }
                    v => out.push_str(&v.to_string()),
                }
                out.push_str(if i + 1 < n { ",\n" } else { "\n" });
            }
        }
        out.push_str("}\n");
        out
    }
}

/// The algorithms the report covers: every registered one that promises
/// exactly-once (not `none`, not `at-least-once`).
pub fn exactly_once_algorithms() -> Vec<Algorithm> {
    Algorithm::all()
        .filter(|a| a.promise() == Guarantee::ExactlyOnce)
        .collect()
}

/// The sweep `coverage-report` runs for a scenario, an algorithm and a
/// mode: the scenario's `[swarm]` ranges, or the default ones (as
/// `sweep --swarm` does).
pub fn spec(
    path: &str,
    scenario: &Scenario,
    algorithm: Algorithm,
    seeds: SeedRange,
    guided: bool,
) -> SweepSpec {
    SweepSpec {
        swarm: Some(
            scenario
                .swarm
                .clone()
                .unwrap_or_else(|| crate::swarm::default_ranges(scenario)),
        ),
        scenario: scenario.clone(),
        path: path.to_string(),
        seeds,
        shard: None,
        algorithm,
        mutants: Mutants::NONE,
        check_determinism: false,
        guided: guided.then(Guidance::default),
    }
}

/// What to generate.
pub struct Plan {
    /// Each scenario's path as the report names it, and the scenario.
    pub scenarios: Vec<(String, Scenario)>,
    pub algorithms: Vec<Algorithm>,
    pub seeds: SeedRange,
    pub command: String,
    pub notes: Option<String>,
}

/// Runs every sweep of the plan (each on `jobs` threads), telling
/// `progress` after each one.
pub fn generate(plan: &Plan, jobs: usize, progress: &dyn Fn(&SweepCoverage)) -> Report {
    let mut sweeps = Vec::new();
    let mut refused = Vec::new();
    for (path, scenario) in &plan.scenarios {
        for &a in &plan.algorithms {
            if let Some(why) = crate::scenario::unsupported(scenario, a) {
                refused.push(Refused {
                    scenario: path.clone(),
                    algorithm: a.name().to_string(),
                    why,
                });
                continue;
            }
            for guided in [false, true] {
                let spec = spec(path, scenario, a, plan.seeds, guided);
                let results = run(&spec, jobs, &|_, _| {});
                let s = SweepCoverage::of(path, a, guided, &results);
                progress(&s);
                sweeps.push(s);
            }
        }
    }
    Report {
        command: plan.command.clone(),
        notes: plan.notes.clone(),
        seeds: format!("{}..{}", plan.seeds.start, plan.seeds.end),
        ckptsim: env!("CARGO_PKG_VERSION").to_string(),
        targets: CATALOGUE.iter().map(|t| t.name.to_string()).collect(),
        sweeps,
        refused,
    }
}

/// The README, from the report and the notes' text.
pub fn render(r: &Report, notes: Option<&str>) -> String {
    let mut w = String::new();
    let scenarios: BTreeSet<&str> = r.sweeps.iter().map(|s| s.scenario.as_str()).collect();
    let algorithms: Vec<&str> = algorithm_order(r);
    let _ = writeln!(w, "# Coverage of the shipped scenarios under `--swarm`\n");
    let _ = writeln!(w, "```sh\n{}\n```\n", r.command);
    let _ = writeln!(
        w,
        "Every shipped scenario ({}) under every exactly-once algorithm ({}), with \
         `--swarm` over seeds {} per sweep, once plain and once `--guided`: which of the {} \
         coverage targets of [docs/coverage.md](../../docs/coverage.md) each sweep reached, and \
         why each target no sweep of a scenario hit was missed. {} sweeps ran; {} scenario and \
         algorithm pairs do not run together (listed at the end). `{SWEEPS_FILE}` holds every \
         sweep's tallies; `ckptsim coverage-report --render reports/coverage` writes this README \
         again from it alone, as the test `reports::the_coverage_report_renders_from_its_sweeps` \
         does (it also reruns the cheapest scenario and algorithm, plain and guided, and compares \
         their tallies and run digests).\n",
        scenarios.len(),
        algorithms
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", "),
        r.seeds,
        r.targets.len(),
        r.sweeps.len(),
        r.refused.len()
    );
    guided_vs_plain(&mut w, r);
    per_scenario_table(&mut w, r, &scenarios, &algorithms);
    never_hit_anywhere(&mut w, r);
    never_hit_per_scenario(&mut w, r, &scenarios);
    failing_sweeps(&mut w, r);
    if !r.refused.is_empty() {
        let _ = writeln!(w, "## Pairs that do not run\n");
        let _ = writeln!(w, "| scenario | algorithm | why |\n|---|---|---|");
        for x in &r.refused {
            let why = x.why.replace('|', "\\|").replace('\n', " ");
            let _ = writeln!(w, "| `{}` | `{}` | {why} |", x.scenario, x.algorithm);
        }
        w.push('\n');
    }
    if let Some(notes) = notes {
        let _ = writeln!(w, "## Notes\n\n{}", notes.trim_end());
    }
    w
}

/// The algorithms in the order the sweeps ran them.
fn algorithm_order(r: &Report) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for s in r.sweeps.iter().map(|s| s.algorithm.as_str()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The sweep of a scenario, algorithm and mode, if it ran.
fn find<'a>(
    r: &'a Report,
    scenario: &str,
    algorithm: &str,
    guided: bool,
) -> Option<&'a SweepCoverage> {
    r.sweeps
        .iter()
        .find(|s| s.scenario == scenario && s.algorithm == algorithm && s.guided == guided)
}

/// The targets any sweep of `scenario` in the mode reached.
fn union<'a>(r: &'a Report, scenario: &str, guided: Option<bool>) -> BTreeSet<&'a str> {
    r.sweeps
        .iter()
        .filter(|s| s.scenario == scenario && guided.is_none_or(|g| s.guided == g))
        .flat_map(SweepCoverage::reached)
        .collect()
}

fn guided_vs_plain(w: &mut String, r: &Report) {
    let mode = |g: bool| r.sweeps.iter().filter(move |s| s.guided == g);
    let summed = |g: bool| mode(g).map(|s| s.reached().len()).sum::<usize>();
    let (mut more, mut fewer, mut same) = (0, 0, 0);
    let (mut gained, mut lost) = (0, 0);
    for p in mode(false) {
        let Some(g) = find(r, &p.scenario, &p.algorithm, true) else {
            continue;
        };
        let (pr, gr) = (p.reached(), g.reached());
        gained += gr.difference(&pr).count();
        lost += pr.difference(&gr).count();
        match gr.len().cmp(&pr.len()) {
            std::cmp::Ordering::Greater => more += 1,
            std::cmp::Ordering::Less => fewer += 1,
            std::cmp::Ordering::Equal => same += 1,
        }
    }
    let scenarios: BTreeSet<&str> = r.sweeps.iter().map(|s| s.scenario.as_str()).collect();
    let per_scenario = |g: bool| {
        scenarios
            .iter()
            .map(|s| union(r, s, Some(g)).len())
            .sum::<usize>()
    };
    let distinct = |g: bool| {
        mode(g)
            .flat_map(SweepCoverage::reached)
            .collect::<BTreeSet<_>>()
            .len()
    };
    let _ = writeln!(w, "## Guided against plain\n");
    let _ = writeln!(
        w,
        "The same seeds, the same scenarios and algorithms; `--guided` runs them in batches \
         and lets later seeds re-run the draws of earlier ones that hit rare targets \
         ([docs/exploring.md](../../docs/exploring.md)).\n"
    );
    let _ = writeln!(
        w,
        "| | plain `--swarm` | `--swarm --guided` |\n|---|---|---|"
    );
    let _ = writeln!(
        w,
        "| targets reached, summed over the {} sweeps of each mode | {} | {} |",
        mode(false).count(),
        summed(false),
        summed(true)
    );
    let _ = writeln!(
        w,
        "| targets reached by some algorithm, summed over the {} scenarios | {} | {} |",
        scenarios.len(),
        per_scenario(false),
        per_scenario(true)
    );
    let _ = writeln!(
        w,
        "| distinct targets reached anywhere | {} | {} |",
        distinct(false),
        distinct(true)
    );
    let _ = writeln!(
        w,
        "| seeds that re-ran an earlier seed's draw | 0 | {} |",
        mode(true)
            .map(|s| s.draws_reused)
            .fold(0, u64::saturating_add)
    );
    let _ = writeln!(
        w,
        "\nPer sweep, guided reached more targets than plain in {more}, fewer in {fewer}, as many \
         in {same}; summed over the sweeps it hit {gained} (sweep, target) pairs plain did not, \
         and missed {lost} that plain hit.\n"
    );
}

fn short(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".toml").unwrap_or(name)
}

fn per_scenario_table(w: &mut String, r: &Report, scenarios: &BTreeSet<&str>, algorithms: &[&str]) {
    let _ = writeln!(w, "## Targets reached per scenario\n");
    let _ = writeln!(
        w,
        "Each cell: targets reached plain / guided (— where the pair does not run); the last \
         column, by some algorithm.\n"
    );
    let mut head = "| scenario |".to_string();
    let mut rule = "|---|".to_string();
    for a in algorithms {
        let _ = write!(head, " {a} |");
        rule.push_str("---|");
    }
    let _ = writeln!(w, "{head} any |\n{rule}---|");
    for s in scenarios {
        let mut line = format!("| {} |", short(s));
        for a in algorithms {
            match (find(r, s, a, false), find(r, s, a, true)) {
                (Some(p), Some(g)) => {
                    let _ = write!(line, " {}/{} |", p.reached().len(), g.reached().len());
                }
                _ => line.push_str(" — |"),
            }
        }
        let _ = writeln!(
            w,
            "{line} {}/{} |",
            union(r, s, Some(false)).len(),
            union(r, s, Some(true)).len()
        );
    }
    w.push('\n');
}

/// Per target, the seeds it applied to over the sweeps of `scenario` (all
/// of them when `None`), both modes.
fn applicable(r: &Report, scenario: Option<&str>, target: &str) -> u64 {
    r.sweeps
        .iter()
        .filter(|s| scenario.is_none_or(|x| s.scenario == x))
        .filter_map(|s| s.targets.get(target))
        .map(|[a, _]| *a)
        .fold(0, u64::saturating_add)
}

/// Why a target no sweep of `scenario` (of any, when `None`) hit was
/// missed: a gap (the seeds it applied to), or what no seed had: the needs
/// no seed had, or, when each was had by some seed, all of them at once.
fn why_missed(r: &Report, scenario: Option<&str>, target: &str) -> Result<u64, String> {
    let seeds = applicable(r, scenario, target);
    if seeds > 0 {
        return Ok(seeds);
    }
    let needs = CATALOGUE
        .iter()
        .find(|t| t.name == target)
        .map_or(&[][..], |t| t.needs);
    let had = |n: &Need| {
        r.sweeps
            .iter()
            .filter(|s| scenario.is_none_or(|x| s.scenario == x))
            .any(|s| s.needs.get(n.name()).is_some_and(|&k| k > 0))
    };
    let lacking: Vec<&str> = needs.iter().filter(|n| !had(n)).map(|n| n.name()).collect();
    Err(if lacking.is_empty() {
        let all: Vec<&str> = needs.iter().map(|n| n.name()).collect();
        format!("{} at once", join_needs(&all))
    } else {
        join_needs(&lacking)
    })
}

fn never_hit_anywhere(w: &mut String, r: &Report) {
    let reached: BTreeSet<&str> = r.sweeps.iter().flat_map(SweepCoverage::reached).collect();
    let _ = writeln!(w, "## Targets no sweep hit\n");
    let missed: Vec<&String> = r
        .targets
        .iter()
        .filter(|t| !reached.contains(t.as_str()))
        .collect();
    if missed.is_empty() {
        let _ = writeln!(w, "None: every target was hit by some sweep.\n");
        return;
    }
    let _ = writeln!(w, "| target | why |\n|---|---|");
    for t in missed {
        let why = match why_missed(r, None, t) {
            Ok(seeds) => format!("a gap: applicable in {seeds} seeds, never hit"),
            Err(lacking) => format!("unreachable: no seed had {lacking}"),
        };
        let _ = writeln!(w, "| `{t}` | {why} |");
    }
    w.push('\n');
}

fn join_needs(needs: &[&str]) -> String {
    needs
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn never_hit_per_scenario(w: &mut String, r: &Report, scenarios: &BTreeSet<&str>) {
    let _ = writeln!(w, "## Targets never hit, per scenario\n");
    let _ = writeln!(
        w,
        "Over every algorithm and both modes. A **gap** applied to some seed (its needs were \
         met) and no seed hit it: the swarm should close it. An **unreachable** target lacked a \
         need in every seed of the scenario as the swarm draws it (docs/coverage.md lists the \
         needs).\n"
    );
    for s in scenarios {
        let reached = union(r, s, None);
        let mut gaps = Vec::new();
        let mut lacking: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for t in r.targets.iter().filter(|t| !reached.contains(t.as_str())) {
            match why_missed(r, Some(s), t) {
                Ok(seeds) => gaps.push(format!("`{t}` ({seeds})")),
                Err(needs) => lacking.entry(needs).or_default().push(t),
            }
        }
        let _ = writeln!(
            w,
            "### {}\n\n{} of {} targets reached.\n",
            short(s),
            reached.len(),
            r.targets.len()
        );
        if !gaps.is_empty() {
            let _ = writeln!(
                w,
                "- gaps (applicable seeds, summed over the sweeps): {}",
                gaps.join(", ")
            );
        }
        for (needs, targets) in &lacking {
            let names: Vec<String> = targets.iter().map(|t| format!("`{t}`")).collect();
            let _ = writeln!(
                w,
                "- unreachable, no seed had {needs}: {}",
                names.join(", ")
            );
        }
        w.push('\n');
    }
}

fn failing_sweeps(w: &mut String, r: &Report) {
    let failing: Vec<&SweepCoverage> = r.sweeps.iter().filter(|s| s.seeds_failed > 0).collect();
    let _ = writeln!(w, "## Sweeps with failing seeds\n");
    if failing.is_empty() {
        let _ = writeln!(w, "None.\n");
        return;
    }
    let _ = writeln!(
        w,
        "Found on the way (the sweep command, with `--algorithm` and the mode, lists each \
         failing seed with its replay line).\n"
    );
    let _ = writeln!(
        w,
        "| scenario | algorithm | mode | failing seeds |\n|---|---|---|---|"
    );
    for s in failing {
        let mode = if s.guided { "guided" } else { "plain" };
        let _ = writeln!(
            w,
            "| {} | `{}` | {mode} | {} of {} |",
            short(&s.scenario),
            s.algorithm,
            s.seeds_failed,
            s.seeds_run
        );
    }
    w.push('\n');
}
