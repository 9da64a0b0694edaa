//! One checked run: generate the input, run the simulator, build the oracle,
//! judge. This is what `ckptsim run` and the tests call.

use crate::check::{judge, oracle::Oracle, Verdict};
use crate::model::operator::BuiltinFactory;
use crate::model::{OperatorFactory, Workload};
use crate::report::wallclock::Stopwatch;
use crate::runtime::{world::run_with, RunConfig, RunOutput};
use crate::scenario::Scenario;
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

/// Runs a scenario whose operators come from `factory` and checks it. The
/// same factory builds the oracle's operators.
pub fn execute_with(
    scenario: Arc<Scenario>,
    workload: &Workload,
    factory: &dyn OperatorFactory,
    cfg: &RunConfig,
) -> Execution {
    let total = Stopwatch::start();
    let output = run_with(scenario.clone(), workload.partition_count(), factory, cfg);
    let sim_wall_ns = total.elapsed_ns();
    let oracle = Oracle::build(&scenario, workload, factory);
    let verdict = judge(&oracle, &output);
    Execution {
        output,
        verdict,
        sim_wall_ns,
        total_wall_ns: total.elapsed_ns(),
    }
}
