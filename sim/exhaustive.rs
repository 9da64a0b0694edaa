//! Exhaustive exploration of tiny jobs (`ckptsim explore`): every order in
//! which tasks read their ready inputs and messages of different channels
//! arrive, up to a bound, for one seed.
//!
//! A scripted run makes its `i`-th choice as its script says
//! ([`choose`](crate::runtime::scheduler::choose)), and the first
//! alternative after the script. Its choices are which of two or more ready
//! inputs a task reads, and each message's latency on a channel whose
//! bounds differ (the minimum or the maximum). The run is deterministic
//! given the script, so the choices form a tree: depth-first, each next
//! script keeps the last run's choices up to the deepest one (within the
//! first `depth`) that has an untried alternative, and takes that
//! alternative. Subtasks listed as crash points (`--crash`, `[replay]
//! crash_points`) may crash once, before any of their steps: each step is a
//! choice too. When no choice within the bound has one, every schedule
//! that differs in the first `depth` choices has run once: the exploration
//! is complete. What the seed fixes besides (crash times, cost jitter, RPC
//! latencies) stays fixed; a failing schedule is written as a scenario
//! whose `[replay] choices` replay it alone (`ckptsim run FILE`). This is
//! what shuttle's and stateright's exhaustive modes do for Rust concurrency.
//!
//! For jobs too big to enumerate, `--sample N --changes D` runs `N`
//! schedules in the spirit of PCT (Burckhardt et al., ASPLOS 2010): each
//! takes the first alternative everywhere but at `D` choices drawn at
//! random among those the default run made, where it takes another
//! alternative at random. Bugs that need few deviations from the default
//! order are found with a probability that does not shrink with the length
//! of the run. Each sample's draws come from the seed and its index, and a
//! failing sample is written as a plain script like any other.

use crate::engine::rng::splitmix64;
use crate::engine::{SimRng, Stream};
use crate::harness::execute;
use crate::mutant::Mutants;
use crate::panics::{self, PANIC};
use crate::runtime::scheduler::{record_choices, take_choices};
use crate::runtime::RunConfig;
use crate::scenario::{Algorithm, Scenario};
use std::collections::BTreeSet;

/// What to explore.
pub struct ExploreSpec {
    pub scenario: Scenario,
    pub seed: u64,
    pub algorithm: Algorithm,
    pub mutants: Mutants,
    /// Choices enumerated per run, from choice `from` on (earlier and later
    /// ones take the first alternative).
    pub depth: usize,
    pub from: usize,
    /// Stop after this many schedules (the exploration is then incomplete).
    pub max_schedules: u64,
    /// Sample schedules instead of enumerating them: how many, and at how
    /// many choices each deviates from the first alternative.
    pub sample: Option<(u64, usize)>,
}

/// A failing schedule.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its `[replay] choices` (trailing lowest-input choices left out).
    pub choices: Vec<u32>,
    /// Which schedule it was, from 1.
    pub index: u64,
    /// The checks that failed (or `panic`), and the first message.
    pub checks: Vec<String>,
    pub message: String,
}

/// What an exploration did and found.
#[derive(Clone, Debug, Default)]
pub struct ExploreReport {
    pub schedules: u64,
    /// Every schedule within the bound ran.
    pub complete: bool,
    /// Runs with different fingerprints.
    pub distinct: u64,
    /// The most choices one run made (beyond `depth`, the lowest input).
    pub most_choices: usize,
    pub failing: u64,
    /// The first failing schedules (at most `MAX_FOUND`).
    pub found: Vec<Found>,
}

/// Failing schedules kept in the report.
pub const MAX_FOUND: usize = 10;

/// Runs every schedule of `spec` within its bound, depth-first (or its
/// samples, with `spec.sample`).
pub fn explore(spec: &ExploreSpec) -> ExploreReport {
    let mut report = ExploreReport::default();
    let mut fingerprints = BTreeSet::new();
    if let Some((count, changes)) = spec.sample {
        sample(spec, count, changes, &mut report, &mut fingerprints);
        report.distinct = fingerprints.len() as u64;
        return report;
    }
    let mut script: Vec<u32> = Vec::new();
    loop {
        if report.schedules >= spec.max_schedules {
            break;
        }
        let made = run_one(spec, &script, &mut report, &mut fingerprints);
        // The deepest choice within the bound with an untried alternative.
        let bound = made.len().min(spec.from.saturating_add(spec.depth));
        let first = spec.from.min(bound);
        let Some(i) = (first..bound).rev().find(|&i| made[i].0 + 1 < made[i].1) else {
            report.complete = true;
            break;
        };
        script = made[..i].iter().map(|&(c, _)| c).collect();
        script.push(made[i].0 + 1);
    }
    report.distinct = fingerprints.len() as u64;
    report
}

/// `count` sampled schedules: the default one, then each deviating at
/// `changes` of the default run's choices with more than one alternative.
fn sample(
    spec: &ExploreSpec,
    count: u64,
    changes: usize,
    report: &mut ExploreReport,
    fingerprints: &mut BTreeSet<String>,
) {
    let default = run_one(spec, &[], report, fingerprints);
    let open: Vec<usize> = (0..default.len()).filter(|&i| default[i].1 > 1).collect();
    for s in 1..count {
        if open.is_empty() || report.schedules >= spec.max_schedules {
            break;
        }
        let mut rng = SimRng::new(
            splitmix64(spec.seed ^ s.wrapping_mul(0x9E37_79B9)),
            Stream::Scheduling,
        );
        let mut points = BTreeSet::new();
        for _ in 0..changes.min(open.len()) {
            points.insert(open[rng.below(open.len() as u64) as usize]);
        }
        crate::runtime::scheduler::deviate_at(points, rng);
        run_one(spec, &[], report, fingerprints);
    }
}

/// Runs `spec` with `script`, recording its choices, its fingerprint and,
/// if it fails, what failed. Returns the choices it made.
fn run_one(
    spec: &ExploreSpec,
    script: &[u32],
    report: &mut ExploreReport,
    fingerprints: &mut BTreeSet<String>,
) -> Vec<(u32, u32)> {
    let cfg = RunConfig {
        seed: spec.seed,
        algorithm: spec.algorithm,
        mutants: spec.mutants,
        record_trace: false,
    };
    let mut edit = crate::scenario::ScenarioData::clone(&spec.scenario);
    edit.replay.choices = script.to_vec();
    let scenario = crate::scenario::check(&edit, "schedule")
        .expect("a schedule of choices that runs made is valid");
    record_choices();
    let result = panics::catch(|| execute(&scenario, &cfg));
    let made = take_choices();
    report.schedules += 1;
    report.most_choices = report.most_choices.max(made.len());
    let failed = match result {
        Ok(e) => {
            fingerprints.insert(e.output.fingerprint.clone());
            let checks = e.verdict.checks.iter().filter(|c| !c.passed);
            let mut checks: Vec<String> = checks.map(|c| c.name.to_string()).collect();
            if checks.is_empty() && !e.verdict.passed {
                // A weaker guarantee than expected, every check passing.
                checks.push("guarantee".to_string());
            }
            let message = e.verdict.violations().next().map(|v| v.message.clone());
            (!e.verdict.passed).then(|| (checks, message.unwrap_or_default()))
        }
        Err(p) => Some((vec![PANIC.to_string()], p.to_string())),
    };
    if let Some((checks, message)) = failed {
        report.failing += 1;
        if report.found.len() < MAX_FOUND {
            let mut choices: Vec<u32> = made.iter().map(|&(c, _)| c).collect();
            while choices.last() == Some(&0) {
                choices.pop();
            }
            report.found.push(Found {
                choices,
                index: report.schedules,
                checks,
                message,
            });
        }
    }
    made
}

/// A subtask named as in scenario files (`"count[0]"`), of `scenario`:
/// read by the scenario's own check of `[replay] crash_points`, with its
/// messages.
pub fn subtask(
    scenario: &crate::scenario::ScenarioData,
    text: &str,
) -> Result<(crate::scenario::OperatorId, u32), String> {
    let mut file = crate::scenario::schema::File::from(scenario);
    file.replay.crash_points = vec![text.to_string()];
    match crate::scenario::validate::validate(&file, &|_| None) {
        Ok(checked) => Ok(checked.replay.crash_points[0]),
        Err(problems) => {
            let p = &problems[0];
            Err(match &p.help {
                Some(help) => format!("{} ({help})", p.message),
                None => p.message.clone(),
            })
        }
    }
}

/// The reproducer of a failing schedule: the scenario with its algorithm,
/// seed, mutants and choices, under a header like a shrunk reproducer's.
pub fn reproducer_text(spec: &ExploreSpec, found: &Found, origin: &str) -> String {
    let mut s = crate::scenario::ScenarioData::clone(&spec.scenario);
    s.checkpoint.algorithm = spec.algorithm;
    s.replay.seed = spec.seed;
    s.replay.mutants = spec.mutants.names().into_iter().map(String::from).collect();
    // At least one choice, so that the file replays under its script.
    s.replay.choices = match found.choices.is_empty() {
        true => vec![0],
        false => found.choices.clone(),
    };
    // A line break in the path would end the comment: escaped.
    let origin = crate::input::printable(origin);
    let mut h = String::new();
    h.push_str(&format!(
        "# Found by exhaustive exploration: schedule {} of {origin}; exactly these checks fail: {}.\n",
        found.index,
        found.checks.join(", ")
    ));
    h.push_str(if s.replay.mail_orders {
        "# [replay] choices is the schedule: the ready input each choice read, or whether the queued mails waited a step.\n"
    } else {
        "# [replay] choices is the schedule: the ready input each choice read.\n"
    });
    h.push_str(&format!(
        "#\n# ckptsim: --seed {} --algorithm {}\n",
        spec.seed,
        spec.algorithm.name()
    ));
    h.push_str(&format!("# expect-fail: {}\n#\n", found.checks.join(", ")));
    h.push_str(&crate::scenario::write::to_toml(&s));
    h
}
