//! Reports: the summary of a run for people (text) and machines (JSON).

pub mod paint;
pub mod trace;
// The wall clock lives below the harness, which reads it too; this keeps
// the old path `report::wallclock` working.
pub use crate::wallclock;

use crate::check::{CheckResult, Violation};
use crate::engine::{count, SimDuration};
use crate::harness::Execution;
use crate::runtime::coordinator::{CheckpointStats, Outcome as CpOutcome};
use crate::runtime::{Counters, RunOutcome};
use serde::Serialize;
use std::fmt::Write;

/// What `ckptsim run --json` prints (one object).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub algorithm: String,
    pub mutants: Vec<String>,
    pub fingerprint: String,
    pub outcome: RunOutcome,
    pub events: u64,
    pub virtual_time_ns: u64,
    pub wall_ms: f64,
    pub events_per_sec: f64,
    pub checkpoints_completed: u64,
    pub checkpoints_aborted: u64,
    pub crashes: u64,
    pub recoveries: u64,
    pub records_emitted: u64,
    pub records_committed: u64,
    pub records_replayed: u64,
    /// Records the sources emitted per virtual second ([`input_rps`]).
    pub input_rps: f64,
    /// Records the sinks took in per virtual second ([`output_rps`]).
    pub output_rps: f64,
    /// Completed checkpoints that persisted in-flight data.
    pub checkpoints_unaligned: u64,
    /// Distributions over completed checkpoints (DESIGN.md §6).
    pub checkpoint_metrics: CheckpointMetrics,
    /// Event time: how long watermarks took from the sources to the sinks
    /// (`runtime::watermarks::WatermarkLag`; none without watermarks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watermark_lag: Option<Dist>,
    /// Every checkpoint, completed or not, with per-task start delay and
    /// alignment duration.
    pub checkpoints: Vec<CheckpointStats>,
    pub guarantee: String,
    pub expected_guarantee: String,
    pub verdict: &'static str,
    /// Sinks whose output could not be judged: the verdict is then
    /// `incomplete`, never `pass`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<String>,
    /// Why each of `unjudged` is not judged.
    #[serde(skip)]
    pub unjudged_reasons: Vec<&'static str>,
    pub violations: Vec<Violation>,
    pub checks: Vec<CheckResult>,
    pub counters: Counters,
    pub replay: String,
    /// Swarm mode: the configuration this seed drew.
    pub swarm: Option<crate::swarm::SwarmDraw>,
    /// Every savepoint request and what became of it.
    pub savepoints: Vec<crate::runtime::SavepointReport>,
    /// What the run was asked to do but did not (faults that never took
    /// effect, mutants that never fired, failed savepoints, a late cancel).
    pub warnings: Vec<crate::runtime::Warning>,
    /// What the faults did, in time order: each fault that fired or took
    /// no effect, each failover and restart (with the checkpoint it
    /// restored), then the planned faults that never came.
    pub timeline: Vec<crate::runtime::output::FaultEvent>,
    /// Timeline entries beyond the most a run keeps.
    pub timeline_dropped: u64,
    /// A run restored from a snapshot file: how its faults were placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_faults: Option<RestoredFaults>,
    /// The tasks, one entry per chain of operators, with each operator's
    /// state in the latest completed checkpoint.
    pub tasks: Vec<crate::runtime::TaskReport>,
}

/// How a restored run's faults were placed (`fault::after_restore`): the
/// scenario's planned times on the job's clock, moved back by the job's
/// time at the snapshot, so time 0 is the restore; random tables drawn
/// afresh over what remains of their windows.
#[derive(Clone, Debug, Serialize)]
pub struct RestoredFaults {
    /// The job's clock at the snapshot: subtracted from every planned time.
    pub shifted_by_ns: u64,
    /// Planned faults (and random tables) at or before it, the first
    /// run's: dropped.
    pub dropped: u64,
}

/// Median and 99th percentile of one metric.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Dist {
    pub p50: u64,
    pub p99: u64,
}

impl Dist {
    pub fn of(sorted: &[u64]) -> Dist {
        Dist {
            p50: percentile(sorted, 50),
            p99: percentile(sorted, 99),
        }
    }
}

/// Per-checkpoint metrics over the completed checkpoints of a run. Start
/// delay and alignment are each checkpoint's slowest task.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CheckpointMetrics {
    pub duration_ns: Dist,
    pub start_delay_ns: Dist,
    pub alignment_ns: Dist,
    pub state_bytes: Dist,
    pub in_flight_bytes: Dist,
}

impl CheckpointMetrics {
    pub fn of(stats: &[CheckpointStats]) -> CheckpointMetrics {
        CheckpointMetrics {
            duration_ns: Dist::of(&completed(stats, |s| s.duration_ns)),
            start_delay_ns: Dist::of(&completed(stats, |s| s.start_delay_max_ns)),
            alignment_ns: Dist::of(&completed(stats, |s| s.alignment_max_ns)),
            state_bytes: Dist::of(&completed(stats, |s| s.state_bytes)),
            in_flight_bytes: Dist::of(&completed(stats, |s| s.in_flight_bytes)),
        }
    }
}

/// The nearest-rank percentile of a sorted slice (0 when empty).
pub fn percentile(sorted: &[u64], pct: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (pct * sorted.len() as u64).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

fn completed(stats: &[CheckpointStats], f: impl Fn(&CheckpointStats) -> u64) -> Vec<u64> {
    let mut v: Vec<u64> = stats
        .iter()
        .filter(|s| s.outcome == CpOutcome::Completed)
        .map(f)
        .collect();
    v.sort_unstable();
    v
}

/// Input throughput: records the sources emitted (read from their
/// partitions, replays after a failure included, as Flink's
/// `numRecordsOutPerSecond` of a source counts them) per virtual second,
/// until the last source ran out of input, or to the end of a run whose
/// sources did not. Unlike [`output_rps`] it does not fall when an
/// operator emits fewer records than it reads (a window, a filter).
pub fn input_rps(o: &crate::runtime::RunOutput) -> f64 {
    let until = match o.outcome {
        RunOutcome::Finished if o.input_end.0 > 0 => o.input_end,
        _ => o.end_time,
    };
    o.counters.records_emitted as f64 / (until.0.max(1) as f64 / 1e9)
}

/// Output throughput: records the sinks took in per virtual second, until
/// they took in their last one (replays count, as in Flink's
/// `numRecordsInPerSecond`).
pub fn output_rps(o: &crate::runtime::RunOutput) -> f64 {
    o.counters.sink_records_in as f64 / (o.sink_end.0.max(1) as f64 / 1e9)
}

/// The one-line command that replays a run, as a shell runs it (the path
/// quoted when it needs to be).
pub fn replay_command(path: &str, seed: u64, algorithm: &str, mutants: &[&str]) -> String {
    let mut s = format!(
        "{} run {} --seed {seed} --algorithm {algorithm}",
        crate::program::name(),
        crate::input::shell_word(path)
    );
    for m in mutants {
        let _ = write!(s, " --mutant {m}");
    }
    s
}

impl Summary {
    pub fn new(path: &str, seed: u64, algorithm: &str, mutants: &[&str], e: &Execution) -> Summary {
        let o = &e.output;
        let wall_ms = e.sim_wall_ns as f64 / 1e6;
        Summary {
            scenario: path.to_string(),
            seed,
            algorithm: algorithm.to_string(),
            mutants: mutants.iter().map(|m| m.to_string()).collect(),
            fingerprint: o.fingerprint.clone(),
            outcome: o.outcome.clone(),
            events: o.events,
            virtual_time_ns: o.end_time.0,
            wall_ms,
            events_per_sec: if e.sim_wall_ns > 0 {
                o.events as f64 * 1e9 / e.sim_wall_ns as f64
            } else {
                0.0
            },
            checkpoints_completed: o.counters.checkpoints_completed,
            checkpoints_aborted: o.counters.checkpoints_aborted,
            crashes: o.counters.crashes,
            recoveries: o.counters.recoveries,
            records_emitted: o.counters.records_emitted,
            records_committed: o.store.committed().len() as u64,
            records_replayed: o.counters.records_replayed,
            input_rps: input_rps(o),
            output_rps: output_rps(o),
            checkpoints_unaligned: o.counters.unaligned_checkpoints,
            checkpoint_metrics: CheckpointMetrics::of(&o.checkpoint_stats),
            watermark_lag: {
                let mut lag = o.evidence.watermarks.lag.lags_ns.clone();
                lag.sort_unstable();
                (!lag.is_empty()).then(|| Dist::of(&lag))
            },
            checkpoints: o.checkpoint_stats.clone(),
            guarantee: e.verdict.guarantee.name().to_string(),
            expected_guarantee: e.verdict.expected.name().to_string(),
            // A run a machine limit ended passed what it ran, no more; so
            // did one with a sink whose output could not be judged.
            verdict: match (&o.outcome, e.verdict.passed) {
                (_, false) => "fail",
                (RunOutcome::WallLimit | RunOutcome::MemoryLimit, true) => "incomplete",
                (_, true) if !e.verdict.unjudged.is_empty() => "incomplete",
                (_, true) => "pass",
            },
            unjudged: e.verdict.unjudged.clone(),
            unjudged_reasons: e.verdict.unjudged_reasons.clone(),
            violations: e.verdict.violations().cloned().collect(),
            checks: e.verdict.checks.clone(),
            counters: o.counters.clone(),
            replay: replay_command(path, seed, algorithm, mutants),
            swarm: None,
            savepoints: o.savepoints.clone(),
            warnings: o.warnings.clone(),
            timeline: o.fault_timeline.clone(),
            timeline_dropped: o.fault_events_dropped,
            restored_faults: None,
            tasks: o.tasks.clone(),
        }
    }

    /// Adds arguments to the replay command (`--from-savepoint DIR`, ...).
    pub fn append_replay(&mut self, args: &str) {
        self.replay.push_str(args);
    }

    /// Marks the run as a swarm run with the configuration it drew (shown in
    /// the summary; the replay command gets `--swarm`).
    pub fn set_swarm(&mut self, draw: crate::swarm::SwarmDraw) {
        self.swarm = Some(draw);
        self.replay.push_str(" --swarm");
    }

    /// The human summary. With `wall = false` the wall-clock lines are left
    /// out, so the text is a pure function of scenario, seed and algorithm
    /// (that is what the snapshot tests compare).
    pub fn to_text(&self, wall: bool) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(
            w,
            "scenario     {}",
            crate::input::printable(&self.scenario)
        );
        let _ = writeln!(w, "seed         {}", self.seed);
        let mut alg = self.algorithm.clone();
        if !self.mutants.is_empty() {
            let _ = write!(alg, "  (mutants: {})", self.mutants.join(", "));
        }
        let _ = writeln!(w, "algorithm    {alg}");
        if let Some(d) = &self.swarm {
            let _ = writeln!(w, "swarm        {d}");
        }
        let outcome = self.outcome.describe();
        let _ = writeln!(w, "outcome      {outcome}");
        let _ = writeln!(w, "events       {}", self.events);
        let _ = writeln!(
            w,
            "virtual time {}",
            SimDuration(self.virtual_time_ns).readable()
        );
        if wall {
            let _ = writeln!(w, "wall time    {:.3} ms", self.wall_ms);
            let _ = writeln!(w, "speed        {:.0} events/s", self.events_per_sec);
        }
        let _ = writeln!(
            w,
            "checkpoints  {} completed ({} unaligned), {} aborted",
            self.checkpoints_completed, self.checkpoints_unaligned, self.checkpoints_aborted,
        );
        self.checkpoint_lines(w);
        self.fault_lines(w);
        self.task_lines(w);
        self.check_lines(w);
        let _ = writeln!(
            w,
            "guarantee    {} (expected {})",
            self.guarantee, self.expected_guarantee
        );
        let _ = writeln!(w, "fingerprint  {}", self.fingerprint);
        for (i, sink) in self.unjudged.iter().enumerate() {
            let why = self.unjudged_reasons.get(i).copied();
            let why = why.unwrap_or(crate::check::oracle::Unjudged::RestoredFromFile.reason());
            let _ = writeln!(
                w,
                "incomplete   sink `{sink}` not judged: {why} (docs/checkers.md)"
            );
        }
        let verdict = paint::verdict(&self.verdict.to_uppercase());
        let _ = writeln!(w, "verdict      {verdict}");
        if self.verdict != "pass" {
            let _ = writeln!(w, "replay       {}", self.replay);
        }
        s
    }

    /// The checkpoint metrics' distributions.
    fn checkpoint_lines(&self, w: &mut String) {
        let m = &self.checkpoint_metrics;
        let time = |d: Dist| {
            format!(
                "p50 {:<14} p99 {}",
                SimDuration(d.p50).readable().to_string(),
                SimDuration(d.p99).readable()
            )
        };
        let bytes = |d: Dist| format!("p50 {:<14} p99 {} B", format!("{} B", d.p50), d.p99);
        let _ = writeln!(w, "  duration     {}", time(m.duration_ns));
        let _ = writeln!(w, "  start delay  {}", time(m.start_delay_ns));
        let _ = writeln!(w, "  alignment    {}", time(m.alignment_ns));
        let _ = writeln!(w, "  state        {}", bytes(m.state_bytes));
        let _ = writeln!(w, "  in-flight    {}", bytes(m.in_flight_bytes));
    }

    /// The faults that fired and the first entries of their timeline.
    fn fault_lines(&self, w: &mut String) {
        let _ = write!(
            w,
            "faults       {}, {}",
            count(self.crashes, "crash"),
            count(self.recoveries, "recovery")
        );
        let c = &self.counters;
        for (n, what) in [
            (c.worker_crashes, "worker crash"),
            (c.coordinator_crashes, "coordinator crash"),
            (c.region_failovers, "region failover"),
            (c.storage_write_failures, "storage write failure"),
            (c.notifications_lost, "notification lost"),
            (c.partitions, "partition"),
            (c.latency_spikes, "latency spike"),
        ] {
            if n > 0 {
                let _ = write!(w, ", {}", count(n, what));
            }
        }
        let _ = writeln!(w);
        if let Some(r) = &self.restored_faults {
            let _ = writeln!(
                w,
                "  relative to the restore: the scenario's fault times {} earlier (the job's clock at the snapshot), random windows drawn afresh over what remains of them; {} planned at or before the snapshot (the first run's) dropped",
                SimDuration(r.shifted_by_ns).readable(),
                r.dropped
            );
        }
        // The fault timeline: the first entries, then how many more.
        const SHOWN: usize = 24;
        for e in self.timeline.iter().take(SHOWN) {
            let at = SimDuration(e.time_ns).readable().to_string();
            let _ = writeln!(w, "  {at:>12}  {}", e.what);
        }
        let more = (self.timeline.len().saturating_sub(SHOWN)) as u64 + self.timeline_dropped;
        if more > 0 {
            let _ = writeln!(w, "  … {more} more (--json lists them)");
        }
    }

    /// Records, tasks with their state, savepoints and warnings.
    fn task_lines(&self, w: &mut String) {
        let _ = writeln!(
            w,
            "records      {} emitted ({} replayed), {} committed",
            self.records_emitted, self.records_replayed, self.records_committed
        );
        let _ = writeln!(
            w,
            "throughput   in {:.0} rec/s from the sources, out {:.0} rec/s into the sinks (virtual time)",
            self.input_rps, self.output_rps
        );
        let tasks: u32 = self.tasks.iter().map(|t| t.subtasks).sum();
        let chains = self.tasks.iter().filter(|t| t.operators.len() > 1).count();
        let _ = writeln!(
            w,
            "tasks        {tasks} ({}); state per operator in the latest completed checkpoint",
            count(chains as u64, "chain")
        );
        for t in &self.tasks {
            let state: Vec<String> = t
                .operators
                .iter()
                .zip(&t.state_bytes)
                .map(|(op, b)| format!("{op} {b} B"))
                .collect();
            let name = format!("{} ×{}", t.name, t.subtasks);
            let _ = writeln!(w, "  {name:<27}  {}", state.join(", "));
        }
        for (i, sp) in self.savepoints.iter().enumerate() {
            let head = if i == 0 { "savepoints" } else { "" };
            let _ = writeln!(w, "{head:<12} {}", sp.describe());
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(
                w,
                "warnings     {} (what this run did not test)",
                self.warnings.len()
            );
            for x in &self.warnings {
                let _ = writeln!(w, "  {:<18} {}", x.kind, x.message);
            }
        }
    }

    /// Each check's verdict, reach and violations.
    fn check_lines(&self, w: &mut String) {
        let _ = writeln!(w, "checks");
        for c in &self.checks {
            let reach = c
                .reach
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                w,
                "  {:<20} {}  ({reach})",
                c.name,
                paint::verdict(if c.passed { "pass" } else { "FAIL" })
            );
            for v in &c.violations {
                let _ = writeln!(w, "    at {}: {}", SimDuration(v.time_ns), v.message);
            }
        }
    }
}
