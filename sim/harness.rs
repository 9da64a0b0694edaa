//! One checked run: generate the input, run the simulator, build the oracle,
//! judge. This is what `ckptsim run` and the tests call.

use crate::check::{judge, oracle::Oracle, Verdict};
use crate::model::operator::BuiltinFactory;
use crate::model::{OperatorFactory, Workload};
use crate::runtime::{world::run_job, JobOptions, RunConfig, RunOutput};
use crate::scenario::Scenario;
use crate::wallclock::Stopwatch;
use std::sync::Arc;

/// A run and its verdict.
pub struct Execution {
    pub output: RunOutput,
    pub verdict: Verdict,
    /// Wall time of the simulation alone, and of simulation + checks.
    pub sim_wall_ns: u64,
    pub total_wall_ns: u64,
}

/// Runs a scenario with the built-in operators and checks it.
pub fn execute(scenario: &Scenario, cfg: &RunConfig) -> Execution {
    let scenario = Arc::new(scenario.clone());
    let workload = Arc::new(Workload::generate(&scenario, cfg.seed));
    let factory = BuiltinFactory::new(scenario.clone(), workload.clone());
    execute_with(scenario, &workload, &factory, cfg)
}

/// Runs a scenario as a job with savepoint-workflow options (started from a
/// snapshot, cancelled at a time, ...) and checks it. The sources read the
/// input generated from `input_seed` (a restored job: the seed of the job
/// that took the snapshot), everything else derives from `cfg.seed`. The
/// oracle is the uninterrupted failure-free run of `scenario` on that input,
/// so a restored job is judged on everything committed since the input's
/// first record, before the snapshot included.
pub fn execute_job(
    scenario: &Scenario,
    cfg: &RunConfig,
    job: &JobOptions,
    input_seed: u64,
) -> Execution {
    let scenario = Arc::new(scenario.clone());
    let workload = Arc::new(Workload::generate(&scenario, input_seed));
    let factory = BuiltinFactory::new(scenario.clone(), workload.clone());
    execute_job_with(scenario, &workload, &factory, cfg, job)
}

/// [`execute_job`] with operators from `factory` (the oracle's too).
pub fn execute_job_with(
    scenario: Arc<Scenario>,
    workload: &Workload,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
    job: &JobOptions,
) -> Execution {
    let total = Stopwatch::start();
    let output = run_job(
        scenario.clone(),
        workload.partition_count(),
        factory,
        cfg,
        job,
    );
    let sim_wall_ns = total.elapsed_ns();
    let mut oracle = Oracle::build_for_run(&scenario, workload, factory, &output, false);
    let duplicating = may_reorder(&output);
    if duplicating {
        oracle.duplicates_reorder();
    }
    let mut verdict = judge(&scenario, &oracle, &output);
    if oracle.values_differ(&verdict) {
        // Name the first value that differs: rebuild keeping the values.
        let mut oracle = Oracle::build_for_run(&scenario, workload, factory, &output, true);
        if duplicating {
            oracle.duplicates_reorder();
        }
        verdict = judge(&scenario, &oracle, &output);
    }
    Execution {
        output,
        verdict,
        sim_wall_ns,
        total_wall_ns: total.elapsed_ns(),
    }
}

/// A run that may duplicate (at-least-once expected) and replayed
/// records: an operator whose output depends on arrival order may have
/// read a duplicate, which moves its later results onto other lineages
/// ([`crate::check::oracle::Unjudged::DuplicatesReordered`]).
fn may_reorder(output: &crate::runtime::RunOutput) -> bool {
    output.expected == crate::scenario::Guarantee::AtLeastOnce
        && output.counters.records_replayed > 0
}

/// Runs a scenario whose operators come from `factory` and checks it. The
/// same factory builds the oracle's operators.
pub fn execute_with(
    scenario: Arc<Scenario>,
    workload: &Workload,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
) -> Execution {
    execute_job_with(scenario, workload, factory, cfg, &JobOptions::default())
}

/// Runs the same configuration twice. Returns the first run and, if the two
/// fingerprints differ, a description of the first event where they part
/// (both runs are repeated with tracing on to find it).
pub fn check_determinism(scenario: &Scenario, cfg: &RunConfig) -> (Execution, Option<String>) {
    let first = execute(scenario, cfg);
    let second = execute(scenario, cfg);
    if first.output.fingerprint == second.output.fingerprint {
        return (first, None);
    }
    let traced = RunConfig {
        record_trace: true,
        ..cfg.clone()
    };
    let (a, b) = if cfg.record_trace {
        (first.output.trace.clone(), second.output.trace.clone())
    } else {
        (
            execute(scenario, &traced).output.trace,
            execute(scenario, &traced).output.trace,
        )
    };
    let mut detail = format!(
        "fingerprints differ: {} and {}",
        first.output.fingerprint, second.output.fingerprint
    );
    match a.iter().zip(&b).find(|(x, y)| x != y) {
        Some((x, y)) => detail.push_str(&format!(
            "; first difference at event {} (t={}ns):\n    run 1: {x:?}\n    run 2: {y:?}",
            x.index, x.time_ns
        )),
        None => detail.push_str(&format!(
            "; one trace is a prefix of the other ({} vs {} events)",
            a.len(),
            b.len()
        )),
    }
    (first, Some(detail))
}
