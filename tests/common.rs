//! Shared helpers: load a shipped scenario, run it checked.

use ckptsim::harness::{execute, Execution};
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::runtime::Counters;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{self, Algorithm, Guarantee, InputOrder, Scenario, ScenarioData};
use std::path::PathBuf;

pub fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"))
}

pub fn load(name: &str) -> Scenario {
    scenario::load(&scenario_path(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// An edited scenario validated again, as a file holding it would be read.
pub fn valid(data: &ScenarioData) -> Scenario {
    scenario::check(data, &data.name).unwrap_or_else(|e| panic!("{e}"))
}

pub fn config(scenario: &Scenario, seed: u64, mutants: &[Mutant]) -> RunConfig {
    RunConfig {
        seed,
        algorithm: scenario.checkpoint.algorithm,
        mutants: mutants.iter().fold(Mutants::NONE, |s, m| s.with(*m)),
        record_trace: false,
    }
}

/// Runs a scenario at a seed, with mutants, and checks it.
pub fn check(scenario: &Scenario, seed: u64, mutants: &[Mutant]) -> Execution {
    execute(scenario, &config(scenario, seed, mutants))
}

/// Runs a scenario at a seed under `algorithm` (overriding the scenario's).
pub fn check_alg(
    scenario: &Scenario,
    seed: u64,
    algorithm: Algorithm,
    mutants: &[Mutant],
) -> Execution {
    let cfg = RunConfig {
        algorithm,
        ..config(scenario, seed, mutants)
    };
    execute(scenario, &cfg)
}

/// The names of the checks that failed.
pub fn failed_checks(e: &Execution) -> Vec<&'static str> {
    e.verdict
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name)
        .collect()
}

/// The coordinated algorithms that promise exactly-once, from the
/// algorithms' own promises (a new one is never left out). The
/// uncoordinated families ([`uncoordinated`]) refuse savepoints, Sink V2,
/// FLIP-27 enumerators and union list state and have no alignment or
/// region failover: `tests/uncoordinated.rs` sweeps them over every fault
/// kind.
pub fn exactly_once() -> Vec<Algorithm> {
    Algorithm::all()
        .filter(|a| a.promise() == Guarantee::ExactlyOnce && !a.info().coordination.is_local())
        .collect()
}

/// The uncoordinated families (`Coordination::Local`), from the registry.
pub fn uncoordinated() -> Vec<Algorithm> {
    Algorithm::all()
        .filter(|a| a.info().coordination.is_local())
        .collect()
}

/// Runs `seeds` of `scenario` (named `name` in replay lines) under
/// `algorithm`; every run must pass (the first that does not panics with
/// its replay line). Even seeds run in the scenario's input order, odd
/// seeds in the random one, so every sweep covers Flink's order and the
/// exploration strategy. Returns every counter summed.
pub fn sweep(
    scenario: &Scenario,
    name: &str,
    algorithm: Algorithm,
    seeds: std::ops::Range<u64>,
) -> Counters {
    let mut random = ckptsim::scenario::ScenarioData::clone(scenario);
    random.network.input_order = InputOrder::Random;
    let random = valid(&random);
    let mut total = Counters::default();
    for seed in seeds {
        let (sc, order) = match seed % 2 {
            0 => (scenario, scenario.network.input_order),
            _ => (&random, InputOrder::Random),
        };
        let e = check_alg(sc, seed, algorithm, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed} failed {:?}: {:?}\nreplay: ckptsim run {name} --seed {seed} --algorithm {} \
             with [network] input_order = \"{}\"",
            failed_checks(&e),
            e.verdict.violations().next(),
            algorithm.name(),
            order.name()
        );
        total += &e.output.counters;
    }
    total
}

/// Seeds per algorithm for the tests that sweep: `default` in CI, more
/// with `CKPTSIM_SEEDS`.
pub fn seeds_or(default: u64) -> u64 {
    std::env::var("CKPTSIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Mutant `m` fails `scenario` on one of the first `seeds` seeds, and
/// check `by` is among the checks that fail there.
pub fn assert_caught(scenario: &Scenario, m: Mutant, seeds: u64, by: &str) {
    let seed = (0..seeds)
        .find(|&seed| !check(scenario, seed, &[m]).verdict.passed)
        .unwrap_or_else(|| panic!("{} survived {seeds} seeds", m.info().name));
    let failed = failed_checks(&check(scenario, seed, &[m]));
    assert!(failed.contains(&by), "{}: {failed:?}", m.info().name);
}

/// The `ckptsim` binary as a shell finds it on `PATH`: its `argv[0]` is
/// `ckptsim`, so the replay lines it prints name `ckptsim` (a binary run by
/// its path names that path: `cli::replay_lines_run_as_printed`).
pub fn ckptsim_command() -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ckptsim"));
    // Plain text whatever the test's own environment says about colour.
    command.arg0("ckptsim").env_remove("CLICOLOR_FORCE");
    command
}

/// `sh -c line`, as from a shell where ckptsim is installed (the binary's
/// folder first on `PATH`): how a printed replay line is run.
pub fn shell_with_ckptsim(line: &str) -> std::process::Command {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_ckptsim"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut command = std::process::Command::new("sh");
    command.args(["-c", line]).env("PATH", path);
    command
}

/// Runs the `ckptsim` binary in the repository's root.
pub fn ckptsim(args: &[&str]) -> std::process::Output {
    ckptsim_command()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What check `check` reports it reached under `what` (its reach counter).
pub fn reach(e: &Execution, check: &str, what: &str) -> u64 {
    let c = e.verdict.checks.iter().find(|c| c.name == check).unwrap();
    c.reach.iter().find(|(w, _)| *w == what).unwrap().1
}
