//! A search for checkpoint stalls on generated topologies with forced
//! alignment (`ckptsim stalls`).
//!
//! Each case draws a topology with at least one operator that Flink forces
//! to align (a `broadcast` or `forward` input, [`Topology::forced_aligned`])
//! and a job for it from [`crate::strategies`], without faults and with
//! unlimited tolerable checkpoint failures, so that nothing restarts the job
//! and hides a freeze. The case runs under every chosen algorithm and under
//! `aligned` as the control, at one simulation seed; each run is classified
//! ([`Class`]): it completes, its checkpoints fail while the data still
//! flows, or the data flow freezes (a stall). A stalling run is run again
//! with the trace on and reduced to its blocking chain ([`Chain`]): the task
//! that holds a channel blocked, the operator behind that channel that
//! forwarded its barrier early, the input whose barrier never comes, and
//! the aligning operator upstream of both where that barrier waits behind
//! data nobody reads. The chain's roles, without operator names, are the
//! stall's shape; the catalogue counts topologies per shape and says
//! whether [`Topology::deadlock_risk`] predicted each.
//!
//! Everything is a function of the search's seed and case count: case `i`
//! draws its job from a proptest runner seeded with `splitmix64` of the
//! seed and `i`, and its simulation seed the same way, so the results do
//! not depend on threads or on the order cases ran in. A run that panics is
//! that run's verdict (`panic`), never the end of the search. This module
//! never prints; `output` writes the catalogue.

mod chain;
pub mod output;

use chain::unexplained;
pub use chain::{blocking_chain, role_class};

use crate::engine::rng::splitmix64;
use crate::harness::{execute, Execution};
use crate::model::graph::{ExecGraph, JobGraph};
use crate::mutant::Mutants;
use crate::panics;
use crate::protocol::BarrierKind;
use crate::runtime::{RunConfig, RunOutcome as Outcome, Timeline};
use crate::scenario::{Algorithm, FlinkVersion, Partitioning, Scenario};
use crate::strategies::{self, GeneratedScenario, ScenarioParts, Topology};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Most cases one search runs.
pub const MAX_CASES: u64 = 1_000_000;

/// Tolerable checkpoint failures of every generated job: unlimited in
/// effect, as in the run on real Flink, so that an expired checkpoint never
/// restarts the job (a restart would release a freeze and hide it).
pub const TOLERABLE_FAILURES: u32 = 1_000_000;

/// What a search runs.
#[derive(Clone, Debug, Serialize)]
pub struct StallSpec {
    /// Cases (generated topologies) to run.
    pub cases: u64,
    /// Fixes every case.
    pub seed: u64,
    /// The algorithms searched; `aligned` runs besides them as the control.
    pub algorithms: Vec<Algorithm>,
    /// The Flink release whose task thread every case follows
    /// (`[checkpoint] flink_version`; left out of the JSON when the newest).
    #[serde(skip_serializing_if = "FlinkVersion::is_newest")]
    pub flink_version: FlinkVersion,
}

impl StallSpec {
    /// The algorithms each case runs under: the searched ones, then
    /// `aligned` unless it is among them.
    pub fn runs(&self) -> Vec<Algorithm> {
        let mut all = self.algorithms.clone();
        if !all.contains(&Algorithm::Aligned) {
            all.push(Algorithm::Aligned);
        }
        all
    }
}

/// How a run ended, as far as the data flow is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The job finished and every check held.
    Completes,
    /// Checks failed (checkpoints did not complete, the job did not
    /// finish), but the data kept flowing, or all of it had passed.
    CheckpointsFail,
    /// The data flow froze: the job did not finish, some task still had
    /// input it never consumed, and the sinks took in nothing for at least
    /// a checkpoint timeout before the run ended.
    Stall,
    /// The run panicked: a bug of ckptsim itself.
    Panic,
}

impl Class {
    pub const ALL: [Class; 4] = [
        Class::Completes,
        Class::CheckpointsFail,
        Class::Stall,
        Class::Panic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Completes => "completes",
            Class::CheckpointsFail => "checkpoints-fail",
            Class::Stall => "stall",
            Class::Panic => "panic",
        }
    }
}

/// One operator in a blocking chain: its id and why it aligns (or not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Role {
    pub operator: String,
    /// [`role_class`]: `forced-aligned (broadcast input)`,
    /// `forced-aligned (forward input)`, `not forced` or `source`.
    pub class: String,
}

/// The blocking chain of a stalled checkpoint, read from the run's trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chain {
    /// The checkpoint that stalled.
    pub checkpoint: u64,
    /// `T`: aligns, holding the channel from `U` blocked.
    pub blocker: Role,
    /// `U`: forwarded its barrier early; its output to `T` is full.
    pub early: Role,
    /// `X`: an input of `T` whose barrier never arrives.
    pub missing: Role,
    /// `A`: never snapshots (it aligns, or its barrier waits behind data it
    /// does not read); upstream of (or equal to) `X` and upstream of `U`,
    /// so its input backs up behind `U`.
    pub stuck: Role,
    /// Edges on the shortest path from `A` to `U`.
    pub stuck_to_early: usize,
    /// Edges on the shortest path from `A` to `X` (0: `A` is `X`).
    pub stuck_to_missing: usize,
    /// The operators that never completed their alignment of the
    /// checkpoint (tasks that read a barrier of it, then no more).
    pub holding: Vec<String>,
}

impl Chain {
    /// The chain without operator names: what the catalogue groups by.
    pub fn shape(&self) -> String {
        let path = |n: usize| match n {
            0 => "is".to_string(),
            1 => "feeds".to_string(),
            n => format!("reaches in {n} edges"),
        };
        format!(
            "T {} blocks U {} → T; U is fed by A {} ({}); A {} X, T's other input",
            self.blocker.class,
            self.early.class,
            self.stuck.class,
            if self.stuck_to_early == 1 {
                "directly".to_string()
            } else {
                format!("{} edges up", self.stuck_to_early)
            },
            path(self.stuck_to_missing),
        )
    }

    /// The chain step by step, with the operators' ids.
    pub fn steps(&self) -> Vec<String> {
        let (t, u, x, a) = (
            &self.blocker.operator,
            &self.early.operator,
            &self.missing.operator,
            &self.stuck.operator,
        );
        let mut s = vec![
            format!(
                "`{u}` ({}) forwards its barrier of checkpoint {} to `{t}` before the data ahead of that barrier upstream has passed it.",
                self.early.class, self.checkpoint
            ),
            format!(
                "`{t}` ({}) aligns: it blocks the channel from `{u}` at the sender and waits for the barrier from `{x}`.",
                self.blocker.class
            ),
            format!("`{u}`'s output to `{t}` fills; `{u}` stops reading its inputs."),
        ];
        if self.stuck_to_early == 1 {
            s.push(format!(
                "`{a}`'s output to `{u}` fills; `{a}` stops reading."
            ));
        } else {
            s.push(format!(
                "The channels between `{a}` and `{u}` fill; `{a}` stops reading."
            ));
        }
        s.push(format!(
            "`{a}` ({}) gets its barriers in line with its data, not as priority events; the one it still needs sits behind input it no longer reads, so it never snapshots and never forwards its barrier{}.",
            self.stuck.class,
            if self.stuck_to_missing == 0 {
                format!(" to `{t}`")
            } else {
                format!(" towards `{x}`")
            }
        ));
        s.push(format!(
            "`{t}` never gets `{x}`'s barrier and never releases `{u}`'s channel: a cycle of waits, the data flow is frozen."
        ));
        s
    }
}

/// One run of a case.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub algorithm: String,
    pub class: Class,
    /// `Outcome::describe`, or `panic`.
    pub outcome: String,
    /// The checks that failed, in the checkers' order.
    pub failed_checks: Vec<String>,
    pub checkpoints_completed: u64,
    pub checkpoints_expired: u64,
    /// When a sink last took in records.
    pub sink_end_ns: u64,
    pub end_ns: u64,
    /// What [`Topology::deadlock_risk`] says of this topology and algorithm.
    pub predicted: bool,
    /// The blocking chain of a stall (`None`: not a stall, or no chain of
    /// the known kind in its trace).
    pub chain: Option<Chain>,
    /// The catalogue's key: the chain's shape, or for a stall without a
    /// chain a description of what its trace shows.
    pub shape: Option<String>,
    /// The panic, for a run that panicked.
    pub panic: Option<String>,
}

/// One generated topology and its runs.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub case: u64,
    /// The simulation seed of every run of the case.
    pub seed: u64,
    /// The edges, `from -partitioning-> to`, comma separated.
    pub topology: String,
    pub runs: Vec<RunRecord>,
    /// The scenario file per algorithm run (not serialised; the output
    /// writes the examples).
    #[serde(skip)]
    pub tomls: Vec<String>,
}

/// A search's results, in case order.
#[derive(Clone, Debug, Serialize)]
pub struct Search {
    pub spec: StallSpec,
    pub cases: Vec<CaseResult>,
}

/// Per shape while counting: algorithms, runs, cases, predicted runs, the
/// first example.
type Tally = (BTreeSet<String>, u64, BTreeSet<u64>, u64, (u64, String));

/// A stalling shape of the catalogue.
#[derive(Clone, Debug, Serialize)]
pub struct ShapeEntry {
    pub shape: String,
    /// Algorithms it stalled under.
    pub algorithms: Vec<String>,
    /// Stalling runs with this shape.
    pub runs: u64,
    /// Distinct topologies (cases) with this shape.
    pub topologies: u64,
    /// Runs whose topology `deadlock_risk` predicted for the algorithm.
    pub predicted: u64,
    /// The first run with the shape: (case, algorithm).
    pub example: (u64, String),
}

impl Search {
    /// The stalling shapes, most frequent first (then by text), each with
    /// its first example.
    pub fn shapes(&self) -> Vec<ShapeEntry> {
        let mut by: BTreeMap<String, Tally> = BTreeMap::new();
        for c in &self.cases {
            for r in &c.runs {
                let Some(shape) = &r.shape else { continue };
                let e = by.entry(shape.clone()).or_insert_with(|| {
                    (
                        BTreeSet::new(),
                        0,
                        BTreeSet::new(),
                        0,
                        (c.case, r.algorithm.clone()),
                    )
                });
                e.0.insert(r.algorithm.clone());
                e.1 += 1;
                e.2.insert(c.case);
                e.3 += u64::from(r.predicted);
            }
        }
        let mut shapes: Vec<ShapeEntry> = by
            .into_iter()
            .map(
                |(shape, (algs, runs, cases, predicted, example))| ShapeEntry {
                    shape,
                    algorithms: algs.into_iter().collect(),
                    runs,
                    topologies: cases.len() as u64,
                    predicted,
                    example,
                },
            )
            .collect();
        shapes.sort_by(|a, b| b.topologies.cmp(&a.topologies).then(a.shape.cmp(&b.shape)));
        shapes
    }

    /// Runs per (algorithm, class), algorithms in run order.
    pub fn tally(&self) -> Vec<(String, BTreeMap<Class, u64>)> {
        let mut out: Vec<(String, BTreeMap<Class, u64>)> = self
            .spec
            .runs()
            .iter()
            .map(|a| (a.name().to_string(), BTreeMap::new()))
            .collect();
        for c in &self.cases {
            for r in &c.runs {
                if let Some((_, m)) = out.iter_mut().find(|(a, _)| *a == r.algorithm) {
                    *m.entry(r.class).or_default() += 1;
                }
            }
        }
        out
    }

    /// Stalling runs whose topology `deadlock_risk` did not predict.
    pub fn unpredicted(&self) -> Vec<(&CaseResult, &RunRecord)> {
        self.cases
            .iter()
            .flat_map(|c| c.runs.iter().map(move |r| (c, r)))
            .filter(|(_, r)| r.class == Class::Stall && !r.predicted)
            .collect()
    }
}

/// Whether some operator that is not a source is forced to align.
pub fn has_forced_alignment(t: &Topology) -> bool {
    (0..t.operators.len()).any(|i| !t.operators[i].kind.is_source() && t.forced_aligned(i))
}

/// A number for case `case` of a search with `seed`, for `purpose` (0: the
/// job, 1: the simulation seed).
fn derive(seed: u64, case: u64, purpose: u64) -> u64 {
    splitmix64(splitmix64(seed ^ splitmix64(case)) ^ purpose)
}

/// The simulation seed of case `case`.
pub fn case_seed(seed: u64, case: u64) -> u64 {
    derive(seed, case, 1)
}

/// The generated parts of case `case`: a topology with forced alignment,
/// its workload and network from [`strategies::scenario_unrestricted`],
/// no faults, one checkpoint at a time, unlimited tolerable failures.
pub fn case_parts(seed: u64, case: u64) -> ScenarioParts {
    parts_where(seed, case, &has_forced_alignment)
}

/// Like [`case_parts`], for topologies that also pass `keep` (for
/// example those [`Topology::deadlock_risk`] predicts).
pub fn parts_where(
    seed: u64,
    case: u64,
    keep: &(dyn Fn(&Topology) -> bool + Sync),
) -> ScenarioParts {
    let mut bytes = [0u8; 32];
    for (k, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&derive(seed, case, 100 + k as u64).to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    let strategy = strategies::scenario_unrestricted(Algorithm::Unaligned)
        .prop_filter("no forced alignment", move |g| {
            has_forced_alignment(&g.parts.topology) && keep(&g.parts.topology)
        });
    let g = loop {
        // A filter that rejects too often in a row ends `new_tree`; the
        // next attempt draws on from where the runner's generator is.
        if let Ok(tree) = strategy.new_tree(&mut runner) {
            break tree.current();
        }
    };
    let mut parts = g.parts;
    parts.faults.crashes.clear();
    parts.faults.random = None;
    parts.checkpoint.max_concurrent = 1;
    parts.checkpoint.tolerable_failures = TOLERABLE_FAILURES;
    parts
}

/// The case's scenario under `algorithm`.
pub fn case_scenario(parts: &ScenarioParts, algorithm: Algorithm) -> GeneratedScenario {
    let mut parts = parts.clone();
    parts.checkpoint.algorithm = algorithm;
    parts.generate()
}

/// The edges of a topology on one line.
pub fn describe_topology(t: &Topology) -> String {
    t.edges
        .iter()
        .map(|e| {
            format!(
                "{} -{}-> {}",
                t.operators[e.from].id,
                partitioning_name(e.partitioning),
                t.operators[e.to].id
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn partitioning_name(p: Partitioning) -> &'static str {
    match p {
        Partitioning::Forward => "forward",
        Partitioning::Hash => "hash",
        Partitioning::Rebalance => "rebalance",
        Partitioning::Broadcast => "broadcast",
    }
}

fn config(seed: u64, algorithm: Algorithm, mutants: Mutants, record_trace: bool) -> RunConfig {
    RunConfig {
        seed,
        algorithm,
        mutants,
        record_trace,
    }
}

/// Classifies a run that returned. `input_left`: whether some task still
/// had input it never consumed (from the trace; `None` when the run was
/// made without one, which counts as "yes").
pub fn classify(scenario: &Scenario, e: &Execution, input_left: Option<bool>) -> Class {
    let out = &e.output;
    if out.outcome == Outcome::Finished && e.verdict.passed {
        return Class::Completes;
    }
    let ended = matches!(
        out.outcome,
        Outcome::TimeLimit | Outcome::EventLimit | Outcome::Stalled
    );
    let idle = out.end_time.0.saturating_sub(out.sink_end.0);
    if ended && idle >= scenario.checkpoint.timeout.0 && input_left.unwrap_or(true) {
        Class::Stall
    } else {
        Class::CheckpointsFail
    }
}

/// Whether some task of a traced run never consumed all its input.
pub fn input_left(scenario: &Scenario, e: &Execution) -> bool {
    let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
    let mut ended = vec![false; exec.tasks.len()];
    for m in &e.output.timeline {
        if let Timeline::InputEnded { task } = m.what {
            ended[task as usize] = true;
        }
    }
    ended.iter().any(|x| !x)
}

/// Runs one scenario under `algorithm` (with `mutants`, none in a search)
/// and classifies it; a stall is run again with the trace on for its
/// chain. A panic is the run's class, not the caller's.
pub fn run_one(
    sc: &Scenario,
    t: &Topology,
    seed: u64,
    algorithm: Algorithm,
    mutants: Mutants,
) -> RunRecord {
    let predicted = t.deadlock_risk(algorithm);
    let first = panics::catch(|| execute(sc, &config(seed, algorithm, mutants, false)));
    let e = match first {
        Ok(e) => e,
        Err(p) => return panicked(algorithm, predicted, p.to_string()),
    };
    let mut class = classify(sc, &e, None);
    let (mut chain, mut shape) = (None, None);
    if class == Class::Stall {
        // The trace changes nothing in the run: same events, same end.
        match panics::catch(|| execute(sc, &config(seed, algorithm, mutants, true))) {
            Err(p) => return panicked(algorithm, predicted, p.to_string()),
            Ok(traced) => {
                class = classify(sc, &traced, Some(input_left(sc, &traced)));
                if class == Class::Stall {
                    chain = blocking_chain(sc, t, &traced);
                    shape = Some(match &chain {
                        Some(c) => c.shape(),
                        None => unexplained(sc, t, &traced),
                    });
                }
            }
        }
    }
    let out = &e.output;
    RunRecord {
        algorithm: algorithm.name().to_string(),
        class,
        outcome: out.outcome.describe(),
        failed_checks: e
            .verdict
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.to_string())
            .collect(),
        checkpoints_completed: out.counters.checkpoints_completed,
        checkpoints_expired: out.counters.checkpoints_expired,
        sink_end_ns: out.sink_end.0,
        end_ns: out.end_time.0,
        predicted,
        chain,
        shape,
        panic: None,
    }
}

fn panicked(algorithm: Algorithm, predicted: bool, message: String) -> RunRecord {
    RunRecord {
        algorithm: algorithm.name().to_string(),
        class: Class::Panic,
        outcome: "panic".to_string(),
        failed_checks: vec![panics::PANIC.to_string()],
        checkpoints_completed: 0,
        checkpoints_expired: 0,
        sink_end_ns: 0,
        end_ns: 0,
        predicted,
        chain: None,
        shape: None,
        panic: Some(message),
    }
}

/// Case `case` of the search: generated, run under every algorithm of
/// [`StallSpec::runs`].
pub fn run_case(spec: &StallSpec, case: u64) -> CaseResult {
    let seed = case_seed(spec.seed, case);
    let mut parts = case_parts(spec.seed, case);
    parts.checkpoint.flink_version = spec.flink_version;
    let mut runs = Vec::new();
    let mut tomls = Vec::new();
    for a in spec.runs() {
        let g = case_scenario(&parts, a);
        runs.push(run_one(
            &g.scenario,
            &parts.topology,
            seed,
            a,
            Mutants::NONE,
        ));
        tomls.push(g.toml);
    }
    CaseResult {
        case,
        seed,
        topology: describe_topology(&parts.topology),
        runs,
        tomls,
    }
}

/// The whole search, cases in parallel on the current rayon pool, results
/// in case order. `progress` is called after each case with the number
/// done.
pub fn search(spec: &StallSpec, progress: &(dyn Fn(u64) + Sync)) -> Search {
    let _hook = panics::Capture::install();
    let done = std::sync::atomic::AtomicU64::new(0);
    let cases = (0..spec.cases)
        .into_par_iter()
        .map(|i| {
            let r = run_case(spec, i);
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            r
        })
        .collect();
    Search {
        spec: spec.clone(),
        cases,
    }
}

/// One reproducer explained for the report: its topology, its run with
/// the blocking chain, an excerpt of its trace, and runs of variants that
/// show when the stall does not happen.
#[derive(Clone, Debug, Serialize)]
pub struct Explained {
    /// The scenario file, as given.
    pub path: String,
    pub seed: u64,
    pub algorithm: String,
    /// The job graph as a mermaid flowchart.
    pub mermaid: String,
    /// Operators forced to align.
    pub forced: Vec<String>,
    pub run: RunRecord,
    /// Lines of the trace: the stalled checkpoint's events and each task's
    /// last step.
    pub excerpt: Vec<String>,
    /// (what changed, its run).
    pub variants: Vec<(String, RunRecord)>,
}

/// Explains the stall of `scenario` (read from `path`) at `seed` under
/// `algorithm`. `Err` if the scenario has an operator kind the topology
/// predicates do not know.
pub fn explain(
    path: &str,
    scenario: &Scenario,
    seed: u64,
    algorithm: Algorithm,
) -> Result<Explained, String> {
    let topology = Topology::from_scenario(scenario)
        .ok_or_else(|| format!("{path}: an operator kind the stall search does not generate"))?;
    let t = &topology;
    let run = run_one(scenario, t, seed, algorithm, Mutants::NONE);
    let mermaid = mermaid(t);
    let forced = (0..t.operators.len())
        .filter(|&i| !t.operators[i].kind.is_source() && t.forced_aligned(i))
        .map(|i| format!("`{}` ({})", t.operators[i].id, role_class(t, i)))
        .collect();
    let traced = panics::catch(|| execute(scenario, &config(seed, algorithm, Mutants::NONE, true)))
        .map_err(|p| format!("{path}: the run panicked: {p}"))?;
    let excerpt = excerpt(scenario, &traced, run.chain.as_ref().map(|c| c.checkpoint));
    let mut variants = Vec::new();
    for (what, sc, a) in variant_scenarios(path, scenario, t, algorithm, run.chain.as_ref()) {
        let Some(sc) = sc else { continue };
        if let Some(vt) = Topology::from_scenario(&sc) {
            variants.push((what, run_one(&sc, &vt, seed, a, Mutants::NONE)));
        }
    }
    Ok(Explained {
        path: path.to_string(),
        seed,
        algorithm: algorithm.name().to_string(),
        mermaid,
        forced,
        run,
        excerpt,
        variants,
    })
}

/// The job graph as a mermaid flowchart.
fn mermaid(t: &Topology) -> String {
    let mut mermaid = String::from("flowchart LR\n");
    for e in &t.edges {
        let _ = std::fmt::Write::write_fmt(
            &mut mermaid,
            format_args!(
                "  {}[\"{} ×{}\"] -- {} --> {}[\"{} ×{}\"]\n",
                t.operators[e.from].id,
                t.operators[e.from].id,
                t.operators[e.from].parallelism,
                partitioning_name(e.partitioning),
                t.operators[e.to].id,
                t.operators[e.to].id,
                t.operators[e.to].parallelism,
            ),
        );
    }
    mermaid
}

/// The variants [`explain`] runs, in order, each (what changed, the changed
/// scenario if it is valid, the algorithm): the scenario as is, under the
/// other aligning algorithms, without or with rebalanced forcing edges of
/// the blocking chain's blocker, and with more buffer credits.
fn variant_scenarios(
    path: &str,
    scenario: &Scenario,
    t: &Topology,
    algorithm: Algorithm,
    chain: Option<&Chain>,
) -> Vec<(String, Option<Scenario>, Algorithm)> {
    let mut variants = Vec::new();
    let mut vary = |what: String, sc: Option<Scenario>, a: Algorithm| variants.push((what, sc, a));
    vary(
        "none (as is)".to_string(),
        Some(scenario.clone()),
        algorithm,
    );
    for a in [
        Algorithm::Aligned,
        Algorithm::AlignedTimeout,
        Algorithm::AtLeastOnce,
    ] {
        if a != algorithm {
            vary(
                format!("algorithm `{}`", a.name()),
                Some(scenario.clone()),
                a,
            );
        }
    }
    if let Some(chain) = chain {
        let blocker = t
            .operators
            .iter()
            .position(|o| o.id == chain.blocker.operator)
            .unwrap_or(0);
        let forcing: Vec<usize> = (0..scenario.edges.len())
            .filter(|&k| {
                let e = &scenario.edges[k];
                e.to.0 as usize == blocker
                    && matches!(
                        e.partitioning,
                        Partitioning::Forward | Partitioning::Broadcast
                    )
            })
            .collect();
        let name = |k: usize| {
            let e = &scenario.edges[k];
            format!(
                "`{} -> {}`",
                scenario.operators[e.from.0 as usize].id, scenario.operators[e.to.0 as usize].id
            )
        };
        let list = forcing
            .iter()
            .map(|&k| name(k))
            .collect::<Vec<_>>()
            .join(", ");
        let mut removed = crate::scenario::ScenarioData::clone(scenario);
        for &k in forcing.iter().rev() {
            removed.edges.remove(k);
        }
        vary(
            format!("{list} removed"),
            crate::scenario::check(&removed, path).ok(),
            algorithm,
        );
        let mut rebalanced = crate::scenario::ScenarioData::clone(scenario);
        for &k in &forcing {
            rebalanced.edges[k].partitioning = Partitioning::Rebalance;
        }
        vary(
            format!("{list} as `rebalance`"),
            crate::scenario::check(&rebalanced, path).ok(),
            algorithm,
        );
    }
    for credits in [16u32, 64] {
        let mut more = crate::scenario::ScenarioData::clone(scenario);
        more.network.buffer_credits = credits;
        vary(
            format!("`buffer_credits = {credits}`"),
            crate::scenario::check(&more, path).ok(),
            algorithm,
        );
    }
    variants
}

/// The lines of [`Explained::excerpt`]: every timeline mark of checkpoint
/// `id`, its expiry, and each task's last step that processed records.
fn excerpt(scenario: &Scenario, e: &Execution, id: Option<u64>) -> Vec<String> {
    use crate::runtime::event::Ev;
    let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
    let task = |t: crate::model::TaskId| exec.tasks[t as usize].name.clone();
    let from = |ch: crate::model::ChannelId| task(exec.channels[ch as usize].from);
    let kind = |k: BarrierKind| match k {
        BarrierKind::Aligned => "aligned",
        BarrierKind::Timeoutable => "timeoutable",
        BarrierKind::Unaligned => "unaligned",
    };
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut last_step: BTreeMap<u32, u64> = BTreeMap::new();
    for m in &e.output.timeline {
        let on = |k: crate::model::CheckpointId| Some(k) == id;
        let line = match &m.what {
            Timeline::Step { task, records, .. } if *records > 0 => {
                last_step.insert(*task, m.time_ns);
                None
            }
            Timeline::Triggered { id: k } if on(*k) => {
                Some(format!("coordinator triggers checkpoint {k}"))
            }
            Timeline::BarrierRead {
                task: t,
                ch,
                id: k,
                kind: b,
            } if on(*k) => Some(format!(
                "{} reads the {} barrier from {}",
                task(*t),
                kind(*b),
                from(*ch)
            )),
            Timeline::AlignmentStart { task: t, id: k } if on(*k) => {
                Some(format!("{} starts aligning", task(*t)))
            }
            Timeline::AlignmentEnd { task: t, id: k } if on(*k) => {
                Some(format!("{} ends its alignment", task(*t)))
            }
            Timeline::Snapshot {
                task: t,
                id: k,
                kind: b,
                ..
            } if on(*k) => Some(format!(
                "{} snapshots ({}) and forwards its barrier",
                task(*t),
                kind(*b)
            )),
            Timeline::SnapshotDone { task: t, id: k, .. } if on(*k) => {
                Some(format!("{} acknowledges", task(*t)))
            }
            Timeline::Declined { task: t, id: k, .. } if on(*k) => {
                Some(format!("{} declines", task(*t)))
            }
            _ => None,
        };
        if let Some(l) = line {
            lines.push((m.time_ns, l));
        }
    }
    for en in &e.output.trace {
        if let Ev::CheckpointTimeout { id: k } = en.ev {
            if Some(k) == id {
                lines.push((en.time_ns, format!("checkpoint {k} expires")));
            }
        }
    }
    for (t, at) in &last_step {
        lines.push((
            *at,
            format!(
                "{} processes records for the last time",
                exec.tasks[*t as usize].name
            ),
        ));
    }
    lines.push((
        e.output.end_time.0,
        format!("the run ends: {}", e.output.outcome.describe()),
    ));
    // Stable: marks keep their order within a time.
    lines.sort_by_key(|(t, _)| *t);
    lines
        .into_iter()
        .map(|(t, l)| {
            format!(
                "{:>12}  {l}",
                format!("{}.{:03} ms", t / 1_000_000, t / 1_000 % 1_000)
            )
        })
        .collect()
}
