//! Seed sweeps: one scenario over a range of seeds, in parallel, summarised.
//!
//! Every seed is an independent, deterministic run, so a sweep's results do
//! not depend on how it is executed: the per-seed results are collected in
//! seed order whatever the number of worker threads, and a range split into
//! interleaved shards (`--shard I/N`: the seeds `A + I`, `A + I + N`, …)
//! merges back into exactly the summary of the whole range. Wall-clock
//! figures are kept apart ([`SweepTiming`]) so summaries compare equal.
//!
//! A seed whose run panics (a bug of ckptsim itself) is a failing seed of
//! kind `panic`, with the message, the location and the replay line; the
//! other seeds run on.

use crate::coverage::{Coverage, SeedCoverage};
use crate::harness::{check_determinism, execute};
use crate::mutant::Mutants;
use crate::panics::{self, Panicked, PANIC};
use crate::report::replay_command;
use crate::runtime::RunConfig;
use crate::scenario::{Algorithm, Scenario, SwarmSpec};
use crate::swarm::{self, SwarmDraw};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

pub mod coverage_report;
mod groups;
mod guided;
mod merge;
pub mod triage;

#[cfg(test)]
use groups::shape_of;
pub use groups::FailureGroup;
pub use guided::{batch_size as guided_batch_size, Guidance};
pub use merge::{describe_missing, merge, Merged, Missing, SweepInput};
pub use triage::CauseGroup;

/// `A..B` (B excluded) or `A..=B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub start: u64,
    pub end: u64,
}

impl SeedRange {
    pub fn parse(text: &str) -> Result<SeedRange, String> {
        let bad = || {
            format!(
                "invalid seed range `{text}`: expected A..B (B excluded) or A..=B, e.g. 0..1000"
            )
        };
        let (a, b, inclusive) = if let Some((a, b)) = text.split_once("..=") {
            (a, b, true)
        } else if let Some((a, b)) = text.split_once("..") {
            (a, b, false)
        } else {
            return Err(bad());
        };
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        let end = if inclusive {
            // The range is held with its end excluded, a u64: the last seed
            // it can include is one below u64::MAX.
            b.checked_add(1).ok_or_else(|| {
                format!(
                    "seed range `{text}` ends at {b}: the highest seed a range can include is {} (u64::MAX - 1); `run --seed {b}` runs that seed alone",
                    u64::MAX - 1
                )
            })?
        } else {
            b
        };
        if end < a {
            return Err(format!("seed range `{text}` is empty (end before start)"));
        }
        Ok(SeedRange { start: a, end })
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The `index`-th (from 0) of `count` interleaved slices of a seed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{text}`: expected I/N with 0 <= I < N, e.g. 0/4");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The seeds of `range` in this shard, in order.
    pub fn seeds(&self, range: SeedRange) -> impl Iterator<Item = u64> {
        let Shard { index, count } = *self;
        (range.start..range.end).filter(move |s| (s - range.start) % count == index)
    }
}

/// What identifies a sweep. Every line a sweep writes carries it, and
/// `merge` combines only lines of one sweep: the same scenario content
/// (under any path), ckptsim version, seed range and shard count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepIdentity {
    /// BLAKE3 of the scenario as ckptsim writes it back
    /// (`scenario::write::to_toml`): comments, layout and the file's path do not
    /// change it; any value does.
    pub scenario_hash: String,
    /// The version of ckptsim that ran the seed.
    pub ckptsim: String,
    /// The sweep's whole seed range, `A..B`.
    pub seeds: String,
    /// The shard the line's sweep ran, `I/N`; none for a whole range.
    pub shard: Option<String>,
}

/// What a sweep runs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub scenario: Scenario,
    /// The scenario path as written in replay commands.
    pub path: String,
    pub seeds: SeedRange,
    pub shard: Option<Shard>,
    pub algorithm: Algorithm,
    pub mutants: Mutants,
    /// Swarm ranges, when each seed draws its own configuration.
    pub swarm: Option<SwarmSpec>,
    pub check_determinism: bool,
    /// `--guided` (with a swarm): seeds run in batches, and later ones may
    /// re-run the draws of earlier seeds that hit rare targets (`guided`).
    pub guided: Option<Guidance>,
}

impl SweepSpec {
    pub fn seeds(&self) -> Vec<u64> {
        match self.shard {
            Some(s) => s.seeds(self.seeds).collect(),
            None => (self.seeds.start..self.seeds.end).collect(),
        }
    }

    /// The scenario seed `seed` runs (its swarm draw applied and validated
    /// again) and the draw, or the draw that made it invalid.
    pub fn scenario_for(
        &self,
        seed: u64,
    ) -> Result<(Scenario, Option<SwarmDraw>), swarm::InvalidDraw> {
        match &self.swarm {
            Some(spec) => {
                let (s, d) = swarm::draw(&self.scenario, spec, self.draw_seed(seed))?;
                Ok((s, Some(d)))
            }
            None => Ok((self.scenario.clone(), None)),
        }
    }

    /// The seed whose swarm draw seed `seed` runs: its own, unless a guided
    /// sweep chose an earlier seed's.
    pub fn draw_seed(&self, seed: u64) -> u64 {
        self.parent(seed).unwrap_or(seed)
    }

    fn parent(&self, seed: u64) -> Option<u64> {
        self.guided.as_ref()?.parents.get(&seed).copied()
    }

    /// The sweep's identity, for its result lines.
    pub fn identity(&self) -> SweepIdentity {
        let text = crate::scenario::write::to_toml(&self.scenario);
        SweepIdentity {
            scenario_hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            ckptsim: env!("CARGO_PKG_VERSION").to_string(),
            seeds: format!("{}..{}", self.seeds.start, self.seeds.end),
            shard: self.shard.map(|s| format!("{}/{}", s.index, s.count)),
        }
    }

    pub fn replay(&self, seed: u64) -> String {
        let names = self.mutants.names();
        let mut r = replay_command(&self.path, seed, self.algorithm.name(), &names);
        if self.swarm.is_some() {
            r.push_str(" --swarm");
        }
        if let Some(p) = self.parent(seed) {
            r.push_str(&format!(" --draw-seed {p}"));
        }
        r
    }
}

/// One seed's result: a line of `--out FILE.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedResult {
    pub scenario: String,
    pub algorithm: String,
    pub mutants: Vec<String>,
    pub seed: u64,
    pub passed: bool,
    pub failed_checks: Vec<String>,
    /// The first violation, as "check at TIME: message".
    pub violation: Option<String>,
    pub guarantee: String,
    pub outcome: String,
    pub events: u64,
    pub virtual_time_ns: u64,
    pub fingerprint: String,
    pub swarm: Option<SwarmDraw>,
    /// `--check-determinism`: where two runs of the seed parted, if they did.
    pub nondeterminism: Option<String>,
    /// Reachability counters (`runtime::Counters`), by name.
    pub counters: Map<String, Value>,
    pub replay: String,
    /// What the seed was asked to do but did not (`runtime::Warning`).
    #[serde(default)]
    pub warnings: Vec<crate::runtime::Warning>,
    /// The run panicked instead of returning: then `failed_checks` is
    /// `["panic"]`, the outcome `panic`, the guarantee `unknown`, and the
    /// events, time, fingerprint and counters are empty.
    #[serde(default)]
    pub panic: Option<Panicked>,
    /// The sweep the line belongs to (absent in lines of a ckptsim before
    /// sweeps were identified; `merge` refuses those).
    #[serde(default)]
    pub sweep: Option<SweepIdentity>,
    /// The coverage targets the seed could reach and those it hit
    /// (`coverage`); empty for a seed that did not run.
    #[serde(default)]
    pub coverage: SeedCoverage,
    /// A failing seed's cause: the abstracted events of its run up to its
    /// first violation (`sweep::triage`); none for a passing seed or one
    /// that did not run.
    #[serde(default)]
    pub cause: Option<Vec<String>>,
    /// A guided sweep's seed that ran the swarm draw of this earlier seed
    /// (`--draw-seed`); absent when it drew its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_seed: Option<u64>,
    /// Sinks whose output could not be judged (`check::oracle::Unjudged`):
    /// a seed that passed with one is incomplete, not a pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<String>,
}

/// Runs one seed of a sweep. A panic of the run is caught and becomes the
/// seed's failure (kind `panic`).
pub fn run_seed(spec: &SweepSpec, seed: u64) -> SeedResult {
    run_identified(spec, seed, &spec.identity())
}

fn run_identified(spec: &SweepSpec, seed: u64, identity: &SweepIdentity) -> SeedResult {
    let mut r = match panics::catch(|| run_seed_unguarded(spec, seed)) {
        Ok(r) => r,
        Err(p) => panicked(spec, seed, p),
    };
    r.sweep = Some(identity.clone());
    r
}

/// The result of a seed whose run panicked. With `--check-determinism` the
/// seed runs once more: a panic that does not repeat exactly is
/// nondeterminism too.
fn panicked(spec: &SweepSpec, seed: u64, p: Panicked) -> SeedResult {
    let nondeterminism = if spec.check_determinism {
        match panics::catch(|| run_seed_unguarded(spec, seed)) {
            Err(again) if again == p => None,
            Err(again) => Some(format!(
                "the seed panicked differently on a second run: {p}, then {again}"
            )),
            Ok(_) => Some(format!(
                "the seed panicked on one run ({p}) and not on another"
            )),
        }
    } else {
        None
    };
    // The draw happens before the run, so it is known (merge needs it to
    // tell swarm sweeps apart).
    let swarm = panics::catch(|| spec.scenario_for(seed).ok().and_then(|(_, d)| d))
        .ok()
        .flatten();
    let base = failed_unrun(spec, seed, PANIC, &p, swarm);
    SeedResult {
        nondeterminism,
        panic: Some(p),
        ..base
    }
}

/// A seed whose swarm draw made the scenario invalid: it fails without a
/// run, as `invalid-draw`, with validation's message.
fn invalid_draw(spec: &SweepSpec, seed: u64, invalid: swarm::InvalidDraw) -> SeedResult {
    let message = invalid.to_string();
    failed_unrun(spec, seed, INVALID_DRAW, message, Some(invalid.draw))
}

/// A seed that failed without a run's verdict: `kind` is its failed check
/// and its outcome, `message` what went wrong; no events, time,
/// fingerprint or counters.
fn failed_unrun(
    spec: &SweepSpec,
    seed: u64,
    kind: &str,
    message: impl std::fmt::Display,
    swarm: Option<SwarmDraw>,
) -> SeedResult {
    SeedResult {
        scenario: spec.path.clone(),
        algorithm: spec.algorithm.name().to_string(),
        mutants: spec.mutants.names().iter().map(|m| m.to_string()).collect(),
        seed,
        passed: false,
        failed_checks: vec![kind.to_string()],
        violation: Some(format!("{kind}: {message}")),
        guarantee: "unknown".to_string(),
        outcome: kind.to_string(),
        events: 0,
        virtual_time_ns: 0,
        fingerprint: String::new(),
        swarm,
        nondeterminism: None,
        counters: Map::new(),
        replay: spec.replay(seed),
        warnings: Vec::new(),
        panic: None,
        sweep: None,
        coverage: SeedCoverage::default(),
        cause: None,
        draw_seed: spec.parent(seed),
        unjudged: Vec::new(),
    }
}

/// The check and outcome of a seed whose swarm draw was invalid.
pub const INVALID_DRAW: &str = "invalid-draw";

fn run_seed_unguarded(spec: &SweepSpec, seed: u64) -> SeedResult {
    let (scenario, draw) = match spec.scenario_for(seed) {
        Ok(drawn) => drawn,
        Err(invalid) => return invalid_draw(spec, seed, invalid),
    };
    let cfg = RunConfig {
        seed,
        algorithm: spec.algorithm,
        mutants: spec.mutants,
        record_trace: false,
    };
    let (e, nondeterminism) = if spec.check_determinism {
        check_determinism(&scenario, &cfg)
    } else {
        (execute(&scenario, &cfg), None)
    };
    let failed_checks: Vec<String> = e
        .verdict
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.to_string())
        .collect();
    let violation = e.verdict.violations().next().map(|v| {
        format!(
            "{} at {}: {}",
            v.check,
            crate::engine::SimDuration(v.time_ns),
            v.message
        )
    });
    let counters = match serde_json::to_value(&e.output.counters) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let outcome = match serde_json::to_value(&e.output.outcome) {
        Ok(Value::Object(m)) => m
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        _ => "?".to_string(),
    };
    let coverage = SeedCoverage::of(&scenario, spec.algorithm, &counters);
    let passed = e.verdict.passed && nondeterminism.is_none();
    let cause = (!passed)
        .then(|| triage::cause_of(&scenario, &cfg, &e.output.fingerprint, &e.verdict))
        .flatten();
    SeedResult {
        scenario: spec.path.clone(),
        algorithm: spec.algorithm.name().to_string(),
        mutants: spec.mutants.names().iter().map(|m| m.to_string()).collect(),
        seed,
        passed,
        failed_checks,
        violation,
        guarantee: e.verdict.guarantee.name().to_string(),
        outcome,
        events: e.output.events,
        virtual_time_ns: e.output.end_time.0,
        fingerprint: e.output.fingerprint.clone(),
        swarm: draw,
        nondeterminism,
        counters,
        replay: spec.replay(seed),
        warnings: e.output.warnings.clone(),
        panic: None,
        sweep: None,
        coverage,
        cause,
        draw_seed: spec.parent(seed),
        unjudged: e.verdict.unjudged.clone(),
    }
}

/// Runs every seed of the spec on `jobs` threads, calling `progress` with
/// the number of seeds done so far (from any thread). Results are in seed
/// order. Panics are caught per seed and not printed (see
/// [`crate::panics`]).
pub fn run(
    spec: &SweepSpec,
    jobs: usize,
    progress: &(dyn Fn(u64, bool) + Sync),
) -> Vec<SeedResult> {
    run_until(spec, jobs, None, progress)
}

/// [`run`], stopping after `max_failures` failing seeds (`--max-failures`).
/// The results are then every seed up to the `max_failures`-th failing one,
/// in seed order, whatever the threads did: a seed is skipped only when
/// that many seeds below it failed already, so every seed up to the final
/// cut ran, and those above it are dropped.
pub fn run_until(
    spec: &SweepSpec,
    jobs: usize,
    max_failures: Option<u64>,
    progress: &(dyn Fn(u64, bool) + Sync),
) -> Vec<SeedResult> {
    if spec.guided.is_some() {
        return guided::run(spec, jobs, max_failures, progress);
    }
    let _capture = panics::Capture::install();
    let seeds = spec.seeds();
    let identity = spec.identity();
    let done = AtomicU64::new(0);
    let failing = std::sync::Mutex::new(std::collections::BTreeSet::new());
    // The `max_failures`-th lowest failing seed so far (u64::MAX: none).
    let cut = AtomicU64::new(u64::MAX);
    let work = || {
        seeds
            .par_iter()
            .filter_map(|&seed| {
                if seed > cut.load(Ordering::Acquire) {
                    return None;
                }
                let r = run_identified(spec, seed, &identity);
                if let (Some(max), false) = (max_failures, r.passed) {
                    let mut f = failing.lock().unwrap_or_else(|e| e.into_inner());
                    f.insert(seed);
                    if let Some(&nth) = f.iter().nth(max.saturating_sub(1) as usize) {
                        cut.fetch_min(nth, Ordering::AcqRel);
                    }
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(n, !r.passed);
                Some(r)
            })
            .collect::<Vec<_>>()
    };
    let mut results = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    let cut = cut.load(Ordering::Acquire);
    results.retain(|r| r.seed <= cut);
    results
}

/// A failing seed in the summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub seed: u64,
    pub checks: Vec<String>,
    pub violation: Option<String>,
    pub nondeterminism: Option<String>,
    pub replay: String,
    /// The seed's run panicked (a bug of ckptsim itself).
    #[serde(default)]
    pub panic: Option<Panicked>,
    /// Its cause (`SeedResult::cause`).
    #[serde(default)]
    pub cause: Option<Vec<String>>,
}

/// A sweep's summary: a pure function of its per-seed results (equal for
/// any `--jobs` and any sharding).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub scenario: String,
    pub algorithm: String,
    pub mutants: Vec<String>,
    pub swarm: bool,
    pub seeds_run: u64,
    pub seeds_passed: u64,
    pub seeds_failed: u64,
    /// Failing seeds per invariant (a seed may fail several).
    pub failures_by_check: BTreeMap<String, u64>,
    /// Seeds per measured guarantee.
    pub guarantees: BTreeMap<String, u64>,
    /// Seeds per run outcome (finished, time-limit, …).
    pub outcomes: BTreeMap<String, u64>,
    pub events: u64,
    /// Reachability counters summed over seeds.
    pub counters: Map<String, Value>,
    pub failures: Vec<Failure>,
    /// Seeds with at least one warning of each kind (`runtime::Warning`):
    /// planned faults that never took effect, mutants that never fired.
    #[serde(default)]
    pub warnings: BTreeMap<String, u64>,
    /// One example message per warning kind (from the lowest seed).
    #[serde(default)]
    pub warning_examples: BTreeMap<String, String>,
    /// The failures grouped by signature (failed checks and message
    /// shape), largest group first.
    #[serde(default)]
    pub failure_groups: Vec<FailureGroup>,
    /// Per coverage target, the seeds it applied to and the seeds that hit
    /// it (`coverage`).
    #[serde(default)]
    pub coverage: Coverage,
    /// The failures grouped by cause (`sweep::triage`), largest group
    /// first.
    #[serde(default)]
    pub cause_groups: Vec<CauseGroup>,
    /// Seeds of a guided sweep that re-ran an earlier seed's draw.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub draws_reused: u64,
    /// Seeds that passed with a sink whose output could not be judged
    /// (`check::oracle::Unjudged`): incomplete, not passes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seeds_unjudged: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Wall-clock figures of a sweep (not part of the summary's identity).
#[derive(Clone, Debug, Serialize)]
pub struct SweepTiming {
    pub wall_ms: f64,
    pub seeds_per_minute: f64,
    pub events_per_sec: f64,
}

impl SweepTiming {
    pub fn new(summary: &SweepSummary, wall_ns: u64) -> SweepTiming {
        let secs = wall_ns.max(1) as f64 / 1e9;
        SweepTiming {
            wall_ms: wall_ns as f64 / 1e6,
            seeds_per_minute: summary.seeds_run as f64 * 60.0 / secs,
            events_per_sec: summary.events as f64 / secs,
        }
    }
}

/// Errors combining per-seed results (from `merge`).
#[derive(Debug, PartialEq, Eq)]
pub struct MergeError(pub String);

impl SweepSummary {
    /// Summarises results (any order; they are sorted by seed). All results
    /// must come from the same scenario, algorithm and mutants, and no seed
    /// may appear twice.
    pub fn of(results: &[SeedResult]) -> Result<SweepSummary, MergeError> {
        let mut sorted: Vec<&SeedResult> = results.iter().collect();
        sorted.sort_by_key(|r| r.seed);
        for w in sorted.windows(2) {
            if w[0].seed == w[1].seed {
                return Err(MergeError(format!(
                    "seed {} appears twice (overlapping shards?)",
                    w[0].seed
                )));
            }
        }
        let first = sorted.first();
        let (scenario, algorithm, mutants) = match first {
            Some(r) => (r.scenario.clone(), r.algorithm.clone(), r.mutants.clone()),
            None => (String::new(), String::new(), Vec::new()),
        };
        let swarm = first.is_some_and(|r| r.swarm.is_some());
        let first_sweep = first.and_then(|r| r.sweep.clone());
        let mut s = SweepSummary {
            scenario,
            algorithm,
            mutants,
            swarm,
            seeds_run: 0,
            seeds_passed: 0,
            seeds_failed: 0,
            failures_by_check: BTreeMap::new(),
            guarantees: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            events: 0,
            counters: Map::new(),
            failures: Vec::new(),
            warnings: BTreeMap::new(),
            warning_examples: BTreeMap::new(),
            failure_groups: Vec::new(),
            coverage: Coverage::default(),
            cause_groups: Vec::new(),
            draws_reused: 0,
            seeds_unjudged: 0,
        };
        for r in sorted {
            // One sweep: the same scenario content (any path), algorithm,
            // mutants and swarm mode.
            let same_content = match (&r.sweep, &first_sweep) {
                (Some(a), Some(b)) => a.scenario_hash == b.scenario_hash,
                _ => r.scenario == s.scenario,
            };
            if !same_content
                || (&r.algorithm, &r.mutants, r.swarm.is_some())
                    != (&s.algorithm, &s.mutants, s.swarm)
            {
                return Err(MergeError(format!(
                    "seed {} comes from another sweep ({} --algorithm {} {:?}) than seed {} ({} --algorithm {} {:?})",
                    r.seed, r.scenario, r.algorithm, r.mutants,
                    results.iter().map(|x| x.seed).min().unwrap_or(0),
                    s.scenario, s.algorithm, s.mutants
                )));
            }
            s.add(r);
        }
        s.failure_groups = FailureGroup::of(&s.failures);
        s.cause_groups = CauseGroup::of(&s.failures);
        Ok(s)
    }

    /// Adds one seed's result (of this sweep) to the tallies.
    fn add(&mut self, r: &SeedResult) {
        self.seeds_run += 1;
        // Result lines are input: a total saturates at u64::MAX rather
        // than wrapping to a plausible small number.
        self.events = self.events.saturating_add(r.events);
        let mut kinds: Vec<&str> = r.warnings.iter().map(|w| w.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for k in kinds {
            *self.warnings.entry(k.to_string()).or_default() += 1;
        }
        for w in &r.warnings {
            self.warning_examples
                .entry(w.kind.clone())
                .or_insert_with(|| format!("seed {}: {}", r.seed, w.message));
        }
        self.coverage.add(&r.coverage);
        self.draws_reused += u64::from(r.draw_seed.is_some());
        *self.guarantees.entry(r.guarantee.clone()).or_default() += 1;
        *self.outcomes.entry(r.outcome.clone()).or_default() += 1;
        for (k, v) in &r.counters {
            let add = v.as_u64().unwrap_or(0);
            let entry = self.counters.entry(k.clone()).or_insert(Value::from(0u64));
            *entry = Value::from(entry.as_u64().unwrap_or(0).saturating_add(add));
        }
        if r.passed {
            self.seeds_passed += 1;
            self.seeds_unjudged += u64::from(!r.unjudged.is_empty());
        } else {
            self.seeds_failed += 1;
            for c in &r.failed_checks {
                *self.failures_by_check.entry(c.clone()).or_default() += 1;
            }
            if r.nondeterminism.is_some() {
                *self
                    .failures_by_check
                    .entry("determinism".to_string())
                    .or_default() += 1;
            }
            self.failures.push(Failure {
                seed: r.seed,
                checks: r.failed_checks.clone(),
                violation: r.violation.clone(),
                nondeterminism: r.nondeterminism.clone(),
                replay: r.replay.clone(),
                panic: r.panic.clone(),
                cause: r.cause.clone(),
            });
        }
    }

    /// The text report.
    pub fn to_text(&self, timing: Option<&SweepTiming>) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(
            w,
            "scenario     {}",
            crate::input::printable(&self.scenario)
        );
        let mut alg = self.algorithm.clone();
        if !self.mutants.is_empty() {
            let _ = write!(alg, "  (mutants: {})", self.mutants.join(", "));
        }
        if self.swarm {
            alg.push_str("  (swarm)");
        }
        if self.draws_reused > 0 {
            let _ = write!(
                alg,
                "  (guided: {} seeds re-ran an earlier seed's draw, --draw-seed)",
                self.draws_reused
            );
        }
        let _ = writeln!(w, "algorithm    {alg}");
        let _ = writeln!(
            w,
            "seeds        {} run, {} passed, {} failed",
            self.seeds_run, self.seeds_passed, self.seeds_failed
        );
        if let Some(t) = timing {
            let _ = writeln!(
                w,
                "speed        {:.0} seeds/min, {:.0} events/s ({:.1} s wall)",
                t.seeds_per_minute,
                t.events_per_sec,
                t.wall_ms / 1000.0
            );
        }
        self.outcome_lines(w);
        let _ = writeln!(w, "events       {}", self.events);
        self.warning_lines(w);
        self.coverage.to_text(w);
        self.failure_lines(w);
        let _ = writeln!(
            w,
            "verdict      {}",
            crate::report::paint::verdict(&self.verdict().to_uppercase())
        );
        s
    }

    /// Seeds ended by `--max-wall` or `--max-memory`: judged only on what
    /// they ran.
    pub fn seeds_incomplete(&self) -> u64 {
        ["wall-limit", "memory-limit"]
            .iter()
            .filter_map(|k| self.outcomes.get(*k))
            .fold(0, |a: u64, n| a.saturating_add(*n))
    }

    /// `fail` when a seed failed; else `incomplete` when a seed was ended
    /// by a limit of the command line (as a single run's verdict is: such
    /// a seed is not a pass), `pass` otherwise; as a run's `--json` writes
    /// it (the text writes it in capitals, as a run's does). The exit code
    /// stays 0 for `incomplete`, as a single run's does.
    pub fn verdict(&self) -> &'static str {
        if self.seeds_failed > 0 {
            "fail"
        } else if self.seeds_incomplete() > 0 || self.seeds_unjudged > 0 {
            "incomplete"
        } else {
            "pass"
        }
    }

    /// Guarantees and outcomes per seed, failed checks and panics.
    fn outcome_lines(&self, w: &mut String) {
        let _ = writeln!(w, "guarantees   {}", join_counts(&self.guarantees));
        let _ = writeln!(w, "outcomes     {}", join_counts(&self.outcomes));
        let cut = self.seeds_incomplete();
        if cut > 0 {
            let _ = writeln!(
                w,
                "incomplete   {cut} seed{} ended by --max-wall or --max-memory: judged only on what they ran",
                if cut == 1 { "" } else { "s" }
            );
        }
        if self.seeds_unjudged > 0 {
            let n = self.seeds_unjudged;
            let _ = writeln!(
                w,
                "incomplete   {n} seed{} passed with a sink not judged (a run's verdict says why; docs/checkers.md)",
                if n == 1 { "" } else { "s" }
            );
        }
        if !self.failures_by_check.is_empty() {
            let _ = writeln!(w, "failures     {}", join_counts(&self.failures_by_check));
        }
        if let Some(n) = self.failures_by_check.get(PANIC) {
            let _ = writeln!(
                w,
                "panics       {n} seed{} panicked: a bug of ckptsim itself; each replay line below reproduces it",
                if *n == 1 { "" } else { "s" }
            );
        }
    }

    /// What did not happen in some seeds, and the reachability counters.
    fn warning_lines(&self, w: &mut String) {
        if !self.warnings.is_empty() {
            let _ = writeln!(
                w,
                "warnings     seeds where something did not happen: {}",
                join_counts(&self.warnings)
            );
            for (kind, n) in &self.warnings {
                let every = if *n == self.seeds_run {
                    " (every seed)"
                } else {
                    ""
                };
                let example = self.warning_examples.get(kind).map_or("", String::as_str);
                let _ = writeln!(w, "  {kind}{every}: {}", clip(example, 200));
            }
        }
        let _ = writeln!(
            w,
            "reachability (summed over seeds; --json lists every counter)"
        );
        let mut zero = Vec::new();
        for (k, v) in &self.counters {
            match v.as_u64() {
                Some(0) => zero.push(k.as_str()),
                _ => {
                    let _ = writeln!(w, "  {k:<40} {v}");
                }
            }
        }
        if !zero.is_empty() {
            let _ = writeln!(w, "  never: {}", zero.join(", "));
        }
    }

    /// The failure groups and the failing seeds, each with its replay.
    fn failure_lines(&self, w: &mut String) {
        if !self.failure_groups.is_empty() {
            let _ = writeln!(
                w,
                "failure groups (same checks, same message but for numbers)"
            );
            for g in &self.failure_groups {
                let n = g.seeds.len();
                let mut seeds: Vec<String> = g.seeds.iter().take(8).map(u64::to_string).collect();
                if n > 8 {
                    seeds.push("…".to_string());
                }
                let _ = writeln!(
                    w,
                    "  {n} seed{} ({}) failing {}",
                    if n == 1 { "" } else { "s" },
                    seeds.join(", "),
                    g.checks.join(", ")
                );
                let _ = writeln!(w, "    e.g.    {}", clip(&g.example, 200));
                let _ = writeln!(w, "    replay  {}", g.replay);
                let _ = writeln!(w, "    shrink  {}", g.shrink);
            }
        }
        triage::write_groups(w, &self.cause_groups);
        if !self.failures.is_empty() {
            let _ = writeln!(w, "failing seeds");
            for f in self.failures.iter().take(SEEDS_LISTED) {
                let what = f
                    .violation
                    .clone()
                    .or_else(|| f.nondeterminism.clone())
                    .unwrap_or_else(|| f.checks.join(", "));
                let _ = writeln!(w, "  seed {}: {}", f.seed, clip(&what, 200));
                let _ = writeln!(w, "    {}", f.replay);
            }
            if self.failures.len() > SEEDS_LISTED {
                let _ = writeln!(
                    w,
                    "  … {} more (--json and --out list every one)",
                    self.failures.len() - SEEDS_LISTED
                );
            }
        }
    }
}

/// `k v, k v, …`.
fn join_counts(m: &BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Failing seeds the text summary lists one by one.
const SEEDS_LISTED: usize = 20;

/// At most `n` characters of `s`, with an ellipsis if cut.
fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Reads `--out` files (one JSON object per line) back into results. Blank
/// lines are skipped; a malformed line is an error naming file and line.
pub fn read_jsonl(file: &str, text: &str) -> Result<Vec<SeedResult>, MergeError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: SeedResult = serde_json::from_str(line).map_err(|e| {
            MergeError(format!(
                "{file}:{}:{}: not a sweep result line: {e}",
                i + 1,
                e.column()
            ))
        })?;
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
