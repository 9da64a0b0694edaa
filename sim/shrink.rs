//! Shrinking a failing run to a small, standalone reproducer.
//!
//! 1. Replay the failing seed and note the invariants it breaks; the first
//!    of them in check order is the *target*. "Fails the same way" means
//!    the target check fails again, and no check fails that the seed did
//!    not fail (no new ones such as a liveness failure from too short a
//!    time limit). A candidate may stop failing the seed's other checks: a
//!    chained FLIP-27 job's secondary failures come and go as records and
//!    subtasks go, and requiring all of them stopped shrinking early. The
//!    reproducer records the checks its own run fails.
//! 2. Make it standalone: the run's planned crashes become an explicit list,
//!    random faults and swarm ranges go (the swarm draw is already applied).
//!    The run is unchanged by this: crash times came from the fault stream,
//!    which nothing else reads.
//! 3. Minimise by delta debugging, replaying every candidate with the same
//!    seed and keeping it only if it fails the same way (and, when mutants
//!    are on, passes without them): drop each fault kind beyond task
//!    crashes (lost notifications, storage faults, coordinator and worker
//!    crashes, latency spikes, partitions, stragglers; region failover
//!    becomes full), drop crashes
//!    (all at once, then halves, then one by one), halve the records per
//!    source partition, lower parallelism (operators joined by forward edges
//!    together; crashes on subtasks that no longer exist go), halve the
//!    run's time limit. Repeat until nothing more goes or the run budget is
//!    spent.
//!
//! Every candidate passes the scenario validator before it runs
//! ([`crate::scenario::check`], on the value: nothing is written), so the
//! result is exactly what the reproducer file will say.
//!
//! A run that panics (a bug of ckptsim itself) fails as `panic`: it shrinks
//! like any other failure, every candidate run is caught the same way, and
//! a candidate that panics fails the same way as a panicking target.

use crate::engine::SimTime;
use crate::fault::plan_crashes;
use crate::harness::{execute, Execution};
use crate::mutant::Mutants;
use crate::panics::{self, Panicked, PANIC};
use crate::runtime::RunConfig;
use crate::scenario::{
    check, write::to_toml, Algorithm, OperatorKind, Partitioning, Scenario, ScenarioData,
};

/// The size of a scenario, as shrinking sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub crashes: usize,
    pub records: u64,
    pub tasks: u32,
    pub max_time: SimTime,
}

impl Size {
    pub fn of(s: &Scenario) -> Size {
        let records = s
            .operators
            .iter()
            .map(|o| match &o.kind {
                OperatorKind::Source(src) => src.total_records(),
                _ => 0,
            })
            .sum();
        Size {
            crashes: s.faults.crashes.len(),
            records,
            tasks: s.operators.iter().map(|o| o.parallelism).sum(),
            max_time: s.limits.max_time,
        }
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {}, {}, max_time {}",
            crate::engine::count(self.crashes as u64, "crash"),
            crate::engine::count(self.records, "source record"),
            crate::engine::count(self.tasks as u64, "subtask"),
            crate::engine::SimDuration(self.max_time.0)
        )
    }
}

/// A shrunk reproducer.
pub struct Shrunk {
    pub scenario: Scenario,
    /// The invariants the reproducer fails (in check order): the target
    /// check first, perhaps not every one of [`Shrunk::first`].
    pub target: Vec<String>,
    /// The invariants the seed's own run failed (in check order).
    pub first: Vec<String>,
    pub before: Size,
    pub after: Size,
    /// What each accepted step removed, in order.
    pub steps: Vec<String>,
    /// Candidate runs made.
    pub runs: u64,
    /// The reproducer's last run (or its panic).
    pub execution: Result<Execution, Panicked>,
}

struct Shrinker {
    seed: u64,
    algorithm: Algorithm,
    mutants: Mutants,
    /// The checks the seed failed: a candidate fails none besides them.
    target: Vec<String>,
    runs: u64,
    budget: u64,
    steps: Vec<String>,
}

/// The checks a run failed; `["panic"]` for a run that panicked.
fn failed_checks(e: &Result<Execution, Panicked>) -> Vec<String> {
    match e {
        Ok(e) => e
            .verdict
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.to_string())
            .collect(),
        Err(_) => vec![PANIC.to_string()],
    }
}

/// Whether `failed` (a run's failed checks, in check order) fails the
/// way `seed` (the seed's) did: its first check, the target, and none the
/// seed did not fail. Candidates fail a subset of the seed's checks in the
/// same order, so the target is then their first too.
fn same_way(seed: &[String], failed: &[String]) -> bool {
    !failed.is_empty() && failed.first() == seed.first() && failed.iter().all(|c| seed.contains(c))
}

impl Shrinker {
    fn run(&mut self, s: &Scenario) -> Result<Execution, Panicked> {
        self.run_with(s, self.mutants)
    }

    fn run_with(&mut self, s: &Scenario, mutants: Mutants) -> Result<Execution, Panicked> {
        self.runs += 1;
        let cfg = RunConfig {
            seed: self.seed,
            algorithm: self.algorithm,
            mutants,
            record_trace: false,
        };
        panics::catch(|| execute(s, &cfg))
    }

    /// With mutants on, the candidate must pass without them (and not
    /// panic): the reproducer then blames the bug, not the shrunk
    /// configuration (too short a time limit, say).
    fn clean_passes(&mut self, s: &Scenario) -> bool {
        self.mutants.is_empty()
            || matches!(self.run_with(s, Mutants::NONE), Ok(e) if e.verdict.passed)
    }

    /// Whether a run that failed `failed` fails the same way: the target
    /// check (the first the seed failed) and none the seed did not fail.
    fn same_way(&self, failed: &[String]) -> bool {
        same_way(&self.target, failed)
    }

    /// Validates the candidate and keeps it if the target check still fails.
    fn accept(&mut self, candidate: &ScenarioData, what: String) -> Option<Scenario> {
        if self.runs >= self.budget {
            return None;
        }
        let parsed = check(candidate, "candidate").ok()?;
        let e = self.run(&parsed);
        if self.same_way(&failed_checks(&e)) && self.clean_passes(&parsed) {
            self.steps.push(what);
            Some(parsed)
        } else {
            None
        }
    }

    fn crashes(&mut self, s: Scenario) -> Scenario {
        let mut cur = s;
        if cur.faults.crashes.is_empty() {
            return cur;
        }
        let n = cur.faults.crashes.len();
        let mut none = ScenarioData::clone(&cur);
        none.faults.crashes.clear();
        if let Some(c) = self.accept(&none, format!("all {n} crashes")) {
            return c;
        }
        // ddmin: try removing chunks, halving the chunk size.
        let mut chunk = n.div_ceil(2);
        while chunk >= 1 {
            let mut i = 0;
            while i < cur.faults.crashes.len() {
                let len = cur.faults.crashes.len();
                let end = (i + chunk).min(len);
                if end - i == len {
                    i = end;
                    continue;
                }
                let mut cand = ScenarioData::clone(&cur);
                let removed: Vec<_> = cand.faults.crashes.drain(i..end).collect();
                let what = removed
                    .iter()
                    .map(|c| {
                        format!(
                            "crash of {}[{}] at {}",
                            cur.op(c.operator).id,
                            c.subtask,
                            crate::engine::SimDuration(c.at.0)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                match self.accept(&cand, what) {
                    Some(c) => cur = c,
                    None => i = end,
                }
            }
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2).min(chunk - 1).max(1);
        }
        cur
    }

    fn records(&mut self, s: Scenario) -> Scenario {
        let mut cur = s;
        for op in 0..cur.operators.len() {
            while let OperatorKind::Source(src) = &cur.operators[op].kind {
                // The longest partition: every length halves (one each,
                // with `partition_records`).
                let longest = (0..src.partitions).map(|p| src.records_of(p)).max();
                let (before, parts) = (longest.unwrap_or(0), src.partitions);
                if before <= 1 {
                    break;
                }
                let mut cand = ScenarioData::clone(&cur);
                if let OperatorKind::Source(src) = &mut cand.operators[op].kind {
                    src.records_per_partition = (src.records_per_partition / 2).max(1);
                    for n in &mut src.partition_records {
                        *n = (*n / 2).max(1);
                    }
                }
                let what = format!(
                    "{}: records per partition {before} -> {}",
                    cur.operators[op].id,
                    before / 2
                );
                match self.accept(&cand, what) {
                    Some(c) => cur = c,
                    None => {
                        // Fewer partitions instead?
                        if parts > 1 {
                            let mut cand = ScenarioData::clone(&cur);
                            if let OperatorKind::Source(src) = &mut cand.operators[op].kind {
                                src.partitions = parts - 1;
                                src.partition_records.truncate(parts as usize - 1);
                                src.partition_rates.truncate(parts as usize - 1);
                            }
                            let what = format!(
                                "{}: partitions {parts} -> {}",
                                cur.operators[op].id,
                                parts - 1
                            );
                            if let Some(c) = self.accept(&cand, what) {
                                cur = c;
                                continue;
                            }
                        }
                        break;
                    }
                }
            }
        }
        cur
    }

    /// Operators that must keep equal parallelism (joined by forward edges).
    fn forward_group(s: &Scenario, op: usize) -> Vec<usize> {
        let mut group = vec![op];
        let mut i = 0;
        while i < group.len() {
            let o = group[i];
            for e in &s.edges {
                if e.partitioning != Partitioning::Forward {
                    continue;
                }
                let (a, b) = (e.from.0 as usize, e.to.0 as usize);
                for (x, y) in [(a, b), (b, a)] {
                    if x == o && !group.contains(&y) {
                        group.push(y);
                    }
                }
            }
            i += 1;
        }
        group.sort_unstable();
        group
    }

    fn parallelism(&mut self, s: Scenario) -> Scenario {
        let mut cur = s;
        for op in 0..cur.operators.len() {
            loop {
                let p = cur.operators[op].parallelism;
                if p <= 1 {
                    break;
                }
                let group = Self::forward_group(&cur, op);
                let mut smaller = ScenarioData::clone(&cur);
                for &g in &group {
                    smaller.operators[g].parallelism = p - 1;
                }
                // Stragglers on subtasks that no longer exist go.
                smaller.faults.slow_tasks.retain(|st| {
                    !(group.contains(&(st.operator.0 as usize)) && st.subtask >= p - 1)
                });
                let names = group
                    .iter()
                    .map(|&g| cur.operators[g].id.clone())
                    .collect::<Vec<_>>()
                    .join(", ");
                let what = format!("{names}: parallelism {p} -> {}", p - 1);
                let on_gone = |c: &crate::scenario::CrashSpec| {
                    group.contains(&(c.operator.0 as usize)) && c.subtask >= p - 1
                };
                // A crash of a subtask that no longer exists moves to the
                // last one that does; failing that, it goes.
                let mut moved = smaller.clone();
                for c in &mut moved.faults.crashes {
                    if on_gone(c) {
                        c.subtask = p - 2;
                    }
                    // A trigger at a task that goes moves with it too.
                    if let Some(of) = c.trigger.as_mut().and_then(|t| t.of.as_mut()) {
                        if group.contains(&(of.0 .0 as usize)) && of.1 >= p - 1 {
                            of.1 = p - 2;
                        }
                    }
                }
                if let Some(c) = self.accept(&moved, what.clone()) {
                    cur = c;
                    continue;
                }
                let mut dropped = smaller;
                dropped.faults.crashes.retain(|c| !on_gone(c));
                if dropped.faults.crashes.len() == cur.faults.crashes.len() {
                    break; // same candidate as `moved`
                }
                match self.accept(&dropped, format!("{what} (dropping its crashes)")) {
                    Some(c) => cur = c,
                    None => break,
                }
            }
        }
        cur
    }

    /// Drops whole fault kinds beyond task crashes, one at a time, while
    /// the run still fails the same way.
    fn fault_kinds(&mut self, s: Scenario) -> Scenario {
        let mut cur = s;
        type Drop = fn(&mut ScenarioData) -> bool;
        let kinds: [(&str, Drop); 8] = [
            ("lost notifications", |s| {
                s.faults.notifications.take().is_some()
            }),
            ("storage faults", |s| s.faults.storage.take().is_some()),
            ("coordinator crashes", |s| {
                s.faults.coordinator.take().is_some()
            }),
            ("worker crashes", |s| {
                let had = !s.faults.worker_crashes.is_empty() || s.faults.random_workers.is_some();
                s.faults.worker_crashes.clear();
                s.faults.random_workers = None;
                had
            }),
            ("latency spikes", |s| {
                let had = !s.faults.latency_spikes.is_empty();
                s.faults.latency_spikes.clear();
                had
            }),
            ("partitions", |s| {
                let had = !s.faults.partitions.is_empty();
                s.faults.partitions.clear();
                had
            }),
            ("stragglers", |s| {
                let had = !s.faults.slow_tasks.is_empty();
                s.faults.slow_tasks.clear();
                had
            }),
            ("region failover", |s| {
                let had = s.faults.failover != crate::scenario::FailoverStrategy::Full;
                s.faults.failover = crate::scenario::FailoverStrategy::Full;
                had
            }),
        ];
        for (what, drop) in kinds {
            let mut cand = ScenarioData::clone(&cur);
            if drop(&mut cand) {
                if let Some(c) = self.accept(&cand, format!("no {what}")) {
                    cur = c;
                }
            }
        }
        cur
    }

    fn time(&mut self, s: Scenario) -> Scenario {
        let mut cur = s;
        if self.target.iter().any(|c| c == "liveness") {
            // A shorter limit would make the liveness failure, not keep it.
            return cur;
        }
        loop {
            let t = cur.limits.max_time;
            let half = SimTime(t.0 / 2);
            let last_crash = cur.faults.crashes.iter().map(|c| c.at).max();
            if half.0 < 1_000_000 || last_crash.is_some_and(|c| c >= half) {
                break;
            }
            let mut cand = ScenarioData::clone(&cur);
            cand.limits.max_time = half;
            let what = format!(
                "max_time {} -> {}",
                crate::engine::SimDuration(t.0),
                crate::engine::SimDuration(half.0)
            );
            match self.accept(&cand, what) {
                Some(c) => cur = c,
                None => break,
            }
        }
        cur
    }
}

/// `scenario` (a shrunk one) as a standalone reproducer: the file names its
/// algorithm, seed and mutants, so that `run FILE` alone fails as the run
/// did (a swarm draw is in its values already). The checkpoint bound is the
/// one the run had: an algorithm's own limit (at most one concurrent
/// checkpoint with unaligned ones) caps a drawn or written higher bound.
pub fn standalone_reproducer(
    scenario: &Scenario,
    algorithm: Algorithm,
    seed: u64,
    mutants: Mutants,
    path: &str,
) -> Result<Scenario, String> {
    let mut edit = ScenarioData::clone(scenario);
    edit.checkpoint.max_concurrent = scenario.max_concurrent(algorithm);
    edit.checkpoint.algorithm = algorithm;
    edit.replay.seed = seed;
    edit.replay.mutants = mutants.names().iter().map(|m| m.to_string()).collect();
    edit.swarm = None;
    check(&edit, path).map_err(|e| format!("the reproducer does not validate: {e}"))
}

/// Shrinks the run of `scenario` at `seed`. Errors (as text) when the run
/// passes, or when the standalone version no longer fails.
pub fn shrink(
    scenario: &Scenario,
    seed: u64,
    algorithm: Algorithm,
    mutants: Mutants,
    budget: u64,
) -> Result<Shrunk, String> {
    let _capture = panics::Capture::install();
    let mut sh = Shrinker {
        seed,
        algorithm,
        mutants,
        target: Vec::new(),
        runs: 0,
        budget,
        steps: Vec::new(),
    };
    let first = sh.run(scenario);
    let target = failed_checks(&first);
    if target.is_empty() {
        return Err(format!(
            "seed {seed} passes under {}: nothing to shrink",
            algorithm.name()
        ));
    }
    sh.target = target.clone();
    let mut standalone = ScenarioData::clone(scenario);
    // The run's planned crashes, drawn before it started (as the run itself
    // draws them), so a run that panicked has them too.
    standalone.faults.crashes = plan_crashes(scenario, seed);
    standalone.faults.random = None;
    standalone.swarm = None;
    standalone.name = format!("{}-shrunk", scenario.name);
    let standalone = check(&standalone, "standalone").map_err(|e| {
        format!("the standalone scenario does not validate (a bug of shrinking): {e}")
    })?;
    let before = Size::of(&standalone);
    let check = sh.run(&standalone);
    if !sh.same_way(&failed_checks(&check)) {
        return Err(format!(
            "the standalone scenario (explicit crashes) no longer fails {} alone: the run depended on something besides its crash times",
            target[0]
        ));
    }
    let mut cur = standalone;
    loop {
        let size = Size::of(&cur);
        cur = sh.fault_kinds(cur);
        cur = sh.crashes(cur);
        cur = sh.records(cur);
        cur = sh.parallelism(cur);
        cur = sh.crashes(cur);
        cur = sh.time(cur);
        if Size::of(&cur) == size || sh.runs >= sh.budget {
            break;
        }
    }
    let execution = sh.run(&cur);
    Ok(Shrunk {
        after: Size::of(&cur),
        scenario: cur,
        target: failed_checks(&execution),
        first: target,
        before,
        steps: sh.steps,
        runs: sh.runs,
        execution,
    })
}

/// The reproducer file: a comment header (origin, what was removed, the
/// machine-readable `# ckptsim:` arguments and `# expect-fail:` check) and
/// the scenario.
pub fn reproducer_text(shrunk: &Shrunk, origin: &str, args: &str) -> String {
    // A path or a panic message with a line break would end its comment
    // line and make the rest TOML of the reproducer: control characters
    // are escaped.
    let origin = crate::input::printable(origin);
    let mut h = String::new();
    match &shrunk.execution {
        Err(p) => h.push_str(&format!(
            "# Shrunk reproducer: the run panics (a bug of ckptsim itself): {}.\n",
            crate::input::printable(&p.to_string())
        )),
        Ok(_) => h.push_str(&format!(
            "# Shrunk reproducer: exactly these checks fail: {}.\n",
            shrunk.target.join(", ")
        )),
    }
    h.push_str(&format!("# From: {origin}\n"));
    h.push_str(&format!(
        "# Before: {}\n# After:  {}\n",
        shrunk.before, shrunk.after
    ));
    if !shrunk.steps.is_empty() {
        h.push_str("# Removed:\n");
        for s in &shrunk.steps {
            h.push_str(&format!("#   - {s}\n"));
        }
    }
    h.push_str(&format!("#\n# ckptsim: {args}\n"));
    h.push_str(&format!("# expect-fail: {}\n#\n", shrunk.target.join(", ")));
    h.push_str(&to_toml(&shrunk.scenario));
    h
}

/// Reads the `# ckptsim:` and `# expect-fail:` lines of a reproducer.
pub fn reproducer_header(text: &str) -> (Option<String>, Option<String>) {
    let mut args = None;
    let mut expect = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# ckptsim:") {
            args = Some(rest.trim().to_string());
        }
        if let Some(rest) = line.strip_prefix("# expect-fail:") {
            expect = Some(rest.trim().to_string());
        }
        // A fixed bug of the simulator: the reproducer must pass.
        if line.trim_end() == "# expect-pass" {
            expect = Some(String::new());
        }
    }
    (args, expect)
}

#[cfg(test)]
mod tests {
    use super::same_way;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_candidate_keeps_the_target_check_and_adds_none() {
        let seed = v(&["consistent-cut", "exactly-once-output", "state"]);
        assert!(same_way(&seed, &seed));
        assert!(same_way(&seed, &v(&["consistent-cut"])));
        assert!(same_way(&seed, &v(&["consistent-cut", "state"])));
        // The target gone, a new check, or a pass: not the same way.
        assert!(!same_way(&seed, &v(&["exactly-once-output", "state"])));
        assert!(!same_way(&seed, &v(&["consistent-cut", "liveness"])));
        assert!(!same_way(&seed, &[]));
        assert!(same_way(&v(&["panic"]), &v(&["panic"])));
    }
}
