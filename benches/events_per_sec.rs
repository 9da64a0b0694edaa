//! Simulator speed: wall time per run and per event, on the shipped
//! scenarios and on scaling cases built to find costs that grow with the
//! size of the job graph, the history of the run or the state.
//!
//! `cargo bench` (release profile). Prints, per case, the median over
//! several runs of the simulation's wall time and of simulation + checks
//! (oracle and judge), the events and the record steps (records read by
//! every operator, chained ones included), and the cost per event and per
//! unit of work (an event or a record step) relative to the reference job
//! (`scenarios/bench.toml`). The ratios are side by side: each run of a
//! case follows a run of the reference, and a ratio is the median of the
//! pairs' ratios, so a host whose speed drifts during the bench (a shared
//! virtual machine's does, by a factor of two within minutes) moves both
//! sides of a pair alike. `CKPTSIM_BENCH_RUNS` sets the runs per case
//! (default 15; the scaling cases run a third as often, at least 3);
//! `CKPTSIM_BENCH_ONLY` runs the cases whose name contains it.
//!
//! Then the process-level figures: the whole `ckptsim run
//! scenarios/bench.toml`; the same job written for madsim
//! (`benches/madsim`, a crate of its own; run when built, or when
//! `CKPTSIM_BENCH_MADSIM` names its executable) beside that process and
//! beside the reference's simulation alone; the start of a process, `ckptsim list` beside
//! this bench's own executable exiting at once (a Rust process that does
//! nothing: the host's floor); and the rate of `ckptsim sweep
//! scenarios/wordcount.toml --jobs 2` in seeds a minute
//! (`CKPTSIM_BENCH_SEEDS` seeds, default 2,000), beside what two cores
//! would do running the same seeds' in-process time back to back.
//! `CKPTSIM_BENCH_DUMP=DIR` writes each scaling case's scenario to
//! `DIR/NAME.toml` first (a new folder: it is created, never written
//! through), so a case can be profiled as a `ckptsim run` process.

use ckptsim::harness::execute;
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::{self, Scenario};
use ckptsim::wallclock::Stopwatch;
use std::fmt::Write;
use std::path::Path;

/// The scaling cases: a name and the scenario's text.
fn scaling_cases() -> Vec<(&'static str, String)> {
    let job = |name: &str, head: &str, ops: &str, edges: &str, tail: &str| {
        format!(
            "version = 1\nname = \"{name}\"\n{head}\n[network]\nbuffer_records = 32\n\
             latency_min = \"50us\"\nlatency_max = \"200us\"\n{ops}{edges}{tail}"
        )
    };
    let op = |id: &str, kind: &str, p: u32, extra: &str| {
        format!("[[operators]]\nid = \"{id}\"\nkind = \"{kind}\"\nparallelism = {p}\n{extra}\n")
    };
    let edge = |from: &str, to: &str, how: &str| {
        format!("[[edges]]\nfrom = \"{from}\"\nto = \"{to}\"\npartitioning = \"{how}\"\n")
    };
    let source = |p: u32, records: u64, keys: u64, cost: &str| {
        op(
            "source",
            "source",
            p,
            &format!(
                "partitions = {p}\nrecords_per_partition = {records}\nkeys = {keys}\ncost = \"{cost}\""
            ),
        )
    };
    let crash = |at: &str| {
        format!(
            "[checkpoint]\nalgorithm = \"aligned\"\ninterval = \"200ms\"\n[faults]\n\
             detection_delay = \"50ms\"\nrestart_delay = \"100ms\"\n\
             [[faults.crashes]]\nat = \"{at}\"\ntask = \"count[0]\"\n"
        )
    };
    let count_sink = |p: u32| {
        op("count", "keyed-count", p, "cost = \"5us\"")
            + &op("sink", "sink-2pc", p, "cost = \"2us\"")
    };

    // One operator at parallelism 1,000 between a source and a keyed count
    // of parallelism 4: 4,000 channels in, 4,000 out.
    let wide = job(
        "wide-1000",
        "max_parallelism = 1000",
        &(source(4, 25_000, 1_000, "40us")
            + &op("map", "map", 1_000, "cost = \"5us\"")
            + &count_sink(4)),
        &(edge("source", "map", "rebalance")
            + &edge("map", "count", "hash")
            + &edge("count", "sink", "forward")),
        &crash("500ms"),
    );

    // `n` maps at parallelism `p` after the source, each forward to the
    // next (all chained): their operators, their edges and the last one.
    let maps = |n: usize, p: u32| {
        let (mut ops, mut edges, mut prev) = (String::new(), String::new(), "source".to_string());
        for i in 0..n {
            let id = format!("m{i}");
            ops += &op(&id, "map", p, "cost = \"1us\"");
            edges += &edge(&prev, &id, "forward");
            prev = id;
        }
        (ops, edges, prev)
    };

    // A chain of 1,000 maps (one task per subtask, 1,000 operators each).
    let (chained, mut edges, prev) = maps(1_000, 2);
    let mut ops = source(2, 5_000, 1_000, "40us") + &chained;
    ops += &count_sink(2);
    edges += &(edge(&prev, "count", "hash") + &edge("count", "sink", "forward"));
    let chain = job("chain-1000", "", &ops, &edges, &crash("100ms"));

    // A chain of 50,000 maps at parallelism 1: one task of 50,002
    // operators, where building the job (parse, validation, chaining,
    // channels) must stay linear in the operators.
    let (chained, mut edges, prev) = maps(50_000, 1);
    let mut ops = source(1, 100, 10, "40us") + &chained;
    ops += &op("sink", "sink-2pc", 1, "cost = \"2us\"");
    edges += &edge(&prev, "sink", "forward");
    let long_chain = job(
        "chain-50000",
        "",
        &ops,
        &edges,
        "[checkpoint]\nalgorithm = \"aligned\"\ninterval = \"200ms\"\n",
    );

    // 100,000 completed checkpoints: one every millisecond for 100 s.
    let checkpoints = job(
        "checkpoints-100k",
        "[limits]\nmax_events = 100_000_000\nmax_time = \"1000s\"",
        &(source(2, 50_000, 1_000, "2ms") + &count_sink(2)),
        &(edge("source", "count", "hash") + &edge("count", "sink", "forward")),
        "[checkpoint]\nalgorithm = \"aligned\"\ninterval = \"1ms\"\n",
    );

    // 10,000 keys per key group: 80,000 keys over 8 key groups.
    let keys = job(
        "keys-10k-per-group",
        "max_parallelism = 8",
        &(source(2, 100_000, 80_000, "40us") + &count_sink(2)),
        &(edge("source", "count", "hash") + &edge("count", "sink", "forward")),
        &crash("2s"),
    );
    // The same with its keyed state in incremental snapshots on a file
    // system: each snapshot writes the key groups changed since the last
    // confirmed one (`runtime::storage`).
    let keys_incremental = job(
        "keys-10k-incremental",
        "max_parallelism = 8",
        &(source(2, 100_000, 80_000, "40us") + &count_sink(2)),
        &(edge("source", "count", "hash") + &edge("count", "sink", "forward")),
        &crash("2s").replace(
            "interval = \"200ms\"\n",
            "interval = \"200ms\"\nstorage = \"filesystem\"\nstate_backend = \"incremental\"\n",
        ),
    );
    // Wide fan-in: 6,072 source subtasks rebalancing into 4 maps and 4
    // two-phase-commit sinks, backpressured (the sinks are the slowest),
    // buffers shipped by the 2 ms flush timeout: every map has 6,072 input
    // channels, most of them ready at once, and the input it reads next
    // must be found without visiting them all.
    let fan_in = format!(
        "version = 1\nname = \"fan-in-6000\"\noperator_chaining = false\n\
         [network]\nflush_timeout = \"2ms\"\n{}{}{}",
        source(6_072, 20, 64, "40us")
            + &op("map", "map", 4, "cost = \"20us\"")
            + &op("sink", "sink-2pc", 4, "cost = \"50us\""),
        edge("source", "map", "rebalance") + &edge("map", "sink", "forward"),
        "[checkpoint]\nalgorithm = \"aligned\"\ninterval = \"50ms\"\n",
    );
    let mut cases = vec![("wide-1000", wide), ("chain-1000", chain)];
    cases.push(("fan-in-6000", fan_in));
    cases.push(("chain-50000", long_chain));
    cases.push(("checkpoints-100k", checkpoints));
    cases.push(("keys-10k-per-group", keys));
    cases.push(("keys-10k-incremental", keys_incremental));
    cases
}

struct Measured {
    events: u64,
    steps: u64,
    sim_ns: u64,
    total_ns: u64,
    /// Median over the runs of this case's cost per event and per unit of
    /// work divided by the reference's in the run just before.
    x_event: f64,
    x_work: f64,
    passed: bool,
}

/// One run: events, record steps, simulation ns, total ns, passed.
fn once(sc: &Scenario) -> (u64, u64, u64, u64, bool) {
    let cfg = RunConfig {
        seed: 1,
        algorithm: sc.checkpoint.algorithm,
        mutants: Default::default(),
        record_trace: false,
    };
    let e = execute(sc, &cfg);
    let c = &e.output.counters;
    let steps = c.records_processed + c.chained_records;
    (
        e.output.events,
        steps,
        e.sim_wall_ns,
        e.total_wall_ns,
        e.verdict.passed,
    )
}

/// Per event and per unit of work (event or record step), in ns.
fn costs(events: u64, steps: u64, sim_ns: u64) -> (f64, f64) {
    (
        sim_ns as f64 / events.max(1) as f64,
        sim_ns as f64 / (events + steps).max(1) as f64,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `runs` runs of `sc`, each after a run of `reference` (none when `sc` is
/// the reference).
fn measure(sc: &Scenario, reference: Option<&Scenario>, runs: usize) -> Measured {
    let (mut sim, mut total, mut x_event, mut x_work) = (vec![], vec![], vec![], vec![]);
    let (mut events, mut steps, mut passed) = (0, 0, true);
    for _ in 0..runs {
        let before = reference.map(once);
        let (e, s, sim_ns, total_ns, ok) = once(sc);
        (events, steps) = (e, s);
        passed &= ok;
        sim.push(sim_ns as f64);
        total.push(total_ns as f64);
        let (per_event, per_work) = costs(e, s, sim_ns);
        let (ref_event, ref_work) = match before {
            Some((re, rs, rsim, _, _)) => costs(re, rs, rsim),
            None => (per_event, per_work),
        };
        x_event.push(per_event / ref_event);
        x_work.push(per_work / ref_work);
    }
    Measured {
        events,
        steps,
        sim_ns: median(sim) as u64,
        total_ns: median(total) as u64,
        x_event: median(x_event),
        x_work: median(x_work),
        passed,
    }
}

/// Wall time in ms of one `program args` process (start, work, exit), and
/// its standard output.
fn process_once(program: &Path, args: &[&str], env: Option<(&str, &str)>) -> (f64, String) {
    let mut command = std::process::Command::new(program);
    command.args(args);
    if let Some((key, value)) = env {
        command.env(key, value);
    }
    let watch = Stopwatch::start();
    let out = command.output().expect("the program runs");
    let ms = watch.elapsed_ns() as f64 / 1e6;
    assert!(
        out.status.success(),
        "{} {args:?} failed",
        program.display()
    );
    (ms, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Median wall time of a `program args` process.
fn process_ms(program: &Path, args: &[&str], env: Option<(&str, &str)>, runs: usize) -> f64 {
    median(
        (0..runs)
            .map(|_| process_once(program, args, env).0)
            .collect(),
    )
}

fn main() {
    if std::env::var_os("CKPTSIM_BENCH_EXIT_AT_ONCE").is_some() {
        // The floor of a process start on this host (see the module docs).
        return;
    }
    ckptsim::engine::heap::keep_freed_memory();
    let runs: usize = std::env::var("CKPTSIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
        .max(1);
    let only = std::env::var("CKPTSIM_BENCH_ONLY").unwrap_or_default();
    let mut cases: Vec<(String, Scenario, usize)> = Vec::new();
    for name in [
        "bench",
        "wordcount",
        "backpressure",
        "alignment-crash",
        "event-time-timers",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
        let sc = scenario::load(&path).expect("shipped scenario parses");
        cases.push((name.to_string(), sc, runs));
    }
    // Per operator, what building a job of many operators costs: parse and
    // validation (median of three), then the run's whole time.
    let mut per_operator = Vec::new();
    let dump = std::env::var_os("CKPTSIM_BENCH_DUMP").map(std::path::PathBuf::from);
    if let Some(dir) = &dump {
        std::fs::create_dir(dir).expect("CKPTSIM_BENCH_DUMP names a folder that does not exist");
    }
    for (name, text) in scaling_cases() {
        if let Some(dir) = &dump {
            std::fs::write(dir.join(format!("{name}.toml")), &text).expect("writes the case");
        }
        let runs = (runs / 3).max(3);
        let mut parse: Vec<u64> = (0..3)
            .map(|_| {
                let watch = Stopwatch::start();
                let sc = scenario::parse_str(&text, name).expect("scaling case parses");
                std::hint::black_box(sc);
                watch.elapsed_ns()
            })
            .collect();
        parse.sort_unstable();
        let sc = scenario::parse_str(&text, name).expect("scaling case parses");
        if sc.operators.len() >= 10_000 && name.contains(only.as_str()) {
            per_operator.push((name, sc.operators.len(), parse[1], sc.clone()));
        }
        cases.push((name.to_string(), sc, runs));
    }
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<19} {:>9} {:>11} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8} {:>7}",
        "case",
        "events",
        "rec steps",
        "sim ms",
        "total ms",
        "ns/event",
        "ns/work",
        "x event",
        "x work",
        "verdict"
    );
    println!(
        "Each case runs as `ckptsim run` would, median of the runs (CKPTSIM_BENCH_RUNS; \
         CKPTSIM_BENCH_ONLY=NAME picks cases).\n\
         sim ms: the simulation; total ms: simulation, oracle and judge, in process; \
         rec steps: records read by operators (chained ones included);\n\
         ns/event and ns/work: simulation time per event and per event or record step; \
         x event, x work: those relative to the reference job `bench`, each run of a case \
         beside a run of the reference just before (median of the pairs' ratios).\n"
    );
    print!("{table}");
    let bench = cases[0].1.clone();
    for (name, sc, n) in &cases {
        if !name.contains(only.as_str()) && name != "bench" {
            continue;
        }
        let reference = (name != "bench").then_some(&bench);
        let m = measure(sc, reference, *n);
        let (per_event, per_work) = costs(m.events, m.steps, m.sim_ns);
        println!(
            "{:<19} {:>9} {:>11} {:>10.3} {:>10.3} {:>9.0} {:>9.1} {:>8.2} {:>8.2} {:>7}",
            name,
            m.events,
            m.steps,
            m.sim_ns as f64 / 1e6,
            m.total_ns as f64 / 1e6,
            per_event,
            per_work,
            m.x_event,
            m.x_work,
            if m.passed { "pass" } else { "FAIL" }
        );
    }
    for (name, n, parse_ns, sc) in per_operator {
        let m = measure(&sc, None, 3);
        println!(
            "{name}: {n} operators: parse and validation {:.1} ms ({:.2} µs per operator), \
             run {:.1} ms ({:.2} µs per operator)",
            parse_ns as f64 / 1e6,
            parse_ns as f64 / 1e3 / n as f64,
            m.total_ns as f64 / 1e6,
            m.total_ns as f64 / 1e3 / n as f64,
        );
    }
    process_figures(runs);
}

/// The whole reference process, the start of a process and the rate of a
/// wordcount sweep (see the module docs).
fn process_figures(runs: usize) {
    let ckptsim = Path::new(env!("CARGO_BIN_EXE_ckptsim"));
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let reference = scenarios.join("bench.toml");
    let reference = reference.to_str().expect("a UTF-8 path");
    println!(
        "process: `ckptsim run scenarios/bench.toml` {:.3} ms (median of {runs})",
        process_ms(ckptsim, &["run", reference], None, runs)
    );
    madsim_figures(ckptsim, reference, runs);
    let starts = runs.max(100);
    let this = std::env::current_exe().expect("the bench's executable");
    let floor = process_ms(
        &this,
        &[],
        Some(("CKPTSIM_BENCH_EXIT_AT_ONCE", "1")),
        starts,
    );
    let list = process_ms(ckptsim, &["list"], None, starts);
    println!(
        "start: `ckptsim list` {list:.3} ms; a Rust process that exits at once {floor:.3} ms \
         (medians of {starts})"
    );
    let seeds: u64 = std::env::var("CKPTSIM_BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
        .max(10);
    let wordcount = scenarios.join("wordcount.toml");
    let wordcount = wordcount.to_str().expect("a UTF-8 path");
    let range = format!("0..{seeds}");
    let sweep_ms = process_ms(
        ckptsim,
        &["sweep", wordcount, "--seeds", &range, "--jobs", "2"],
        None,
        1,
    );
    let rate = seeds as f64 * 60_000.0 / sweep_ms;
    // What two cores would do with the same seeds run one by one in
    // process (median total time of 50 of them).
    let sc = scenario::load(Path::new(wordcount)).expect("wordcount parses");
    let per_seed: Vec<f64> = (0..50u64)
        .map(|seed| {
            let cfg = RunConfig {
                seed: seed * (seeds / 50).max(1),
                algorithm: sc.checkpoint.algorithm,
                mutants: Default::default(),
                record_trace: false,
            };
            execute(&sc, &cfg).total_wall_ns as f64 / 1e6
        })
        .collect();
    let back_to_back = 2.0 * 60_000.0 / median(per_seed);
    println!(
        "sweep: `ckptsim sweep scenarios/wordcount.toml --seeds {range} --jobs 2` {:.1} s: \
         {rate:.0} seeds a minute; two cores running the seeds' in-process time back to back: \
         {back_to_back:.0} a minute",
        sweep_ms / 1e3
    );
}

/// The reference job beside the same job written for madsim
/// (`benches/madsim`), when that is built: each run of its process follows
/// a `ckptsim run scenarios/bench.toml` process, and a ratio is the median
/// of the pairs' ratios. ckptsim's simulation alone is the `wall time` its
/// run prints (the simulation, without parse, oracle, judge or output);
/// madsim's runtime is what its job prints (the runtime's creation, the
/// run and its teardown).
fn madsim_figures(ckptsim: &Path, reference: &str, runs: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let program = std::env::var_os("CKPTSIM_BENCH_MADSIM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("benches/madsim/target/release/reference-madsim"));
    if !program.exists() {
        println!(
            "madsim: {} is not built (RUSTFLAGS=\"--cfg madsim\" cargo build --release \
             --manifest-path benches/madsim/Cargo.toml; CKPTSIM_BENCH_MADSIM=PATH names \
             another build)",
            program.display()
        );
        return;
    }
    // The number after `label` on a line of `out`.
    let figure = |out: &str, label: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(label))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("the output has a `{label}` line: {out}"))
    };
    let (mut process, mut sim, mut runtime) = (vec![], vec![], vec![]);
    let (mut ours, mut theirs, mut ours_sim, mut theirs_runtime) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        let (ckptsim_ms, out) = process_once(ckptsim, &["run", reference], None);
        let sim_ms = figure(&out, "wall time");
        let (madsim_ms, out) = process_once(&program, &[], None);
        let runtime_ms = figure(&out, "runtime ns") / 1e6;
        process.push(ckptsim_ms / madsim_ms);
        sim.push(sim_ms / madsim_ms);
        runtime.push(sim_ms / runtime_ms);
        ours.push(ckptsim_ms);
        theirs.push(madsim_ms);
        ours_sim.push(sim_ms);
        theirs_runtime.push(runtime_ms);
    }
    println!(
        "madsim: the reference job for madsim (benches/madsim) {:.3} ms a process, its runtime \
         {:.3} ms; `ckptsim run scenarios/bench.toml` {:.3} ms: {:.2}× the madsim process \
         (target at most 0.5); ckptsim's simulation alone {:.3} ms: {:.2}× the madsim process \
         (target at most 0.25), {:.2}× its runtime (medians of {runs} pairs)",
        median(theirs),
        median(theirs_runtime),
        median(ours),
        median(process),
        median(ours_sim),
        median(sim),
        median(runtime),
    );
}
