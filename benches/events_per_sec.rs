//! Simulator speed: events per wall second on the shipped scenarios.
//!
//! `cargo bench` (release profile). Prints, per scenario, the median over
//! several runs of wall time per run and simulated events per second, for
//! the simulation alone and with the checks (oracle + judge) included.

use ckptsim::harness::execute;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario;
use std::path::Path;

fn main() {
    let runs: usize = std::env::var("CKPTSIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    println!(
        "{:<18} {:>9} {:>12} {:>12} {:>14} {:>8}",
        "scenario", "events", "sim ms/run", "total ms", "events/s", "verdict"
    );
    for name in ["bench", "wordcount", "backpressure", "alignment-crash"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
        let sc = scenario::load(&path).expect("shipped scenario parses");
        let cfg = RunConfig {
            seed: 1,
            algorithm: sc.checkpoint.algorithm,
            mutants: Default::default(),
            record_trace: false,
        };
        let mut sim = Vec::new();
        let mut total = Vec::new();
        let mut events = 0;
        let mut verdict = true;
        for _ in 0..runs {
            let e = execute(&sc, &cfg);
            events = e.output.events;
            verdict &= e.verdict.passed;
            sim.push(e.sim_wall_ns);
            total.push(e.total_wall_ns);
        }
        sim.sort_unstable();
        total.sort_unstable();
        let sim_med = sim[runs / 2];
        let total_med = total[runs / 2];
        println!(
            "{:<18} {:>9} {:>12.3} {:>12.3} {:>14.0} {:>8}",
            name,
            events,
            sim_med as f64 / 1e6,
            total_med as f64 / 1e6,
            events as f64 * 1e9 / sim_med as f64,
            if verdict { "pass" } else { "FAIL" }
        );
    }
}
