//! Triage: failing seeds grouped by the events that made them fail, not by
//! the words of their first violation.
//!
//! A failing seed's **cause** is the set of abstracted fault and protocol
//! events of its run up to its first violation (the earliest in virtual
//! time): a crash named by where the job was in the checkpoint lifecycle
//! ("a crash after N completed, before every task was notified of N"; under
//! region failover by its operator and its task's phase, "crash of sink
//! after its snapshot of N, before N completed"), a lost notification, a failed storage write, a
//! checkpoint that expired or was declined, an alignment that timed out
//! into an unaligned snapshot, a restart from a checkpoint (with or without
//! restored in-flight records) or from scratch. Subtask indices, times,
//! counts and checkpoint ids are dropped, repetitions fold into one, and
//! the set is sorted, so that the same circumstances read the same in any
//! seed. Faults that took no effect are not events.
//!
//! The events come from the seed's run repeated with its trace on (only
//! failing seeds pay for it; recording changes nothing in the run, and the
//! repeated run must end with the same fingerprint, else the cause is
//! unknown). The groups ([`CauseGroup::of`]) then keep only what the sweep
//! shows to be needed: a seed whose events include all the events of
//! another failing seed that failed the same checks joins that seed's
//! (smaller) cause, so that a crash that happened besides the ones that
//! matter does not split a group. Both steps are pure functions of the
//! per-seed results: the groups are the same for any `--jobs`, and `merge`
//! computes them again from the shards' lines.
//!
//! Nothing here changes a run; it only reads a run's output.

use super::Failure;
use crate::check::Verdict;
use crate::model::operator::BuiltinFactory;
use crate::model::{CheckpointId, TaskId, Workload};
use crate::protocol::BarrierKind;
use crate::runtime::coordinator::{CheckpointStats, Outcome as CpOutcome};
use crate::runtime::event::Ev;
use crate::runtime::{world::run_job, JobOptions, RunConfig, RunOutput, Timeline};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Arc;

/// The cause of a failing run whose untraced run ended with `fingerprint`
/// and `verdict`: its run repeated with the trace on, abstracted up to the
/// first violation. `None` when the repeated run ended differently (a
/// wall-clock or memory limit cut one of them).
pub fn cause_of(
    scenario: &Scenario,
    cfg: &RunConfig,
    fingerprint: &str,
    verdict: &Verdict,
) -> Option<Vec<String>> {
    let traced = RunConfig {
        record_trace: true,
        ..cfg.clone()
    };
    let local = crashes_are_local(scenario, cfg);
    let scenario = Arc::new(scenario.clone());
    let workload = Arc::new(Workload::generate(&scenario, cfg.seed));
    let factory = BuiltinFactory::new(scenario.clone(), workload.clone());
    let partitions = workload.partition_count();
    let output = run_job(
        scenario,
        partitions,
        &factory,
        &traced,
        &JobOptions::default(),
    );
    if output.fingerprint != fingerprint {
        return None;
    }
    let until = verdict
        .violations()
        .map(|v| v.time_ns)
        .min()
        .unwrap_or(u64::MAX);
    Some(events(&output, until, local))
}

/// Whether a crash restarts less than the whole job: region failover, or
/// an uncoordinated algorithm (each task rolls back on its own). Then which
/// operator crashed, and where that task was, decide what recovery does;
/// under a global failover every task restarts from the same checkpoint,
/// and only where the job was in the checkpoint lifecycle does.
fn crashes_are_local(scenario: &Scenario, cfg: &RunConfig) -> bool {
    scenario.faults.failover != crate::scenario::FailoverStrategy::Full
        || cfg.algorithm.info().coordination.is_local()
}

/// The abstracted events of a traced run up to `until_ns` (inclusive):
/// sorted, each once. `local_crashes`: crashes are named by operator and
/// task phase (region failover, uncoordinated algorithms), else by the
/// job's phase.
pub fn events(output: &RunOutput, until_ns: u64, local_crashes: bool) -> Vec<String> {
    let mut out = BTreeSet::new();
    out.extend(crash_events(output, until_ns, local_crashes));
    for f in output
        .fault_timeline
        .iter()
        .filter(|f| f.time_ns <= until_ns)
    {
        if let Some(e) = fault_event(&f.what) {
            out.insert(e);
        }
    }
    for s in &output.checkpoint_stats {
        if s.end_ns <= until_ns {
            if let Some(e) = checkpoint_event(s) {
                out.insert(e.to_string());
            }
        }
    }
    out.into_iter().collect()
}

/// A checkpoint that failed on its own (not subsumed, failed over or
/// cancelled: those follow from other events).
fn checkpoint_event(s: &CheckpointStats) -> Option<&'static str> {
    match s.outcome {
        CpOutcome::Expired => Some("checkpoint expired"),
        CpOutcome::Declined => Some("checkpoint declined"),
        CpOutcome::StorageFailed => Some("checkpoint failed: storage write"),
        CpOutcome::StateTooLarge => Some("checkpoint failed: state too large"),
        _ => None,
    }
}

/// A line of the fault timeline as an event: crashes of tasks come from
/// the trace (with their phase), failovers after a task's failure follow
/// from its crash, faults that took no effect did not happen; the rest
/// without subtask indices, numbers and times.
fn fault_event(what: &str) -> Option<String> {
    let task_crash = what.starts_with("crash of ") && !what.starts_with("crash of worker");
    if task_crash
        || what.contains("took no effect")
        || what.starts_with("not fired:")
        || what.starts_with("failover (task ")
        || what.starts_with("straggler ")
    {
        // Stragglers are in the run from its start: the scenario's, not
        // the run's circumstances (and their windows are all numbers).
        return None;
    }
    Some(abstracted(what))
}

/// `text` without subtask indices (`sink[1]` → `sink`), with every number
/// (and the time unit after it) as `N`, plurals folded.
pub fn abstracted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' && chars.peek().is_some_and(char::is_ascii_digit) {
            let mut inner = String::new();
            while let Some(&d) = chars.peek() {
                chars.next();
                if d == ']' {
                    break;
                }
                inner.push(d);
            }
            if !inner.chars().all(|d| d.is_ascii_digit()) {
                out.push('[');
                out.push_str(&inner);
                out.push(']');
            }
        } else if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|&d| d.is_ascii_digit() || d == '.' || d == '_')
            {
                chars.next();
            }
            // A time's unit goes with its number.
            while chars
                .peek()
                .is_some_and(|&u| matches!(u, 'n' | 'u' | 'µ' | 'm' | 's'))
            {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    crate::engine::text::plural_shape(&out)
}

/// Per task, what its checkpoint lifecycle had reached (in the current
/// attempt).
#[derive(Clone, Copy, Default)]
struct TaskPhase {
    /// The checkpoint whose alignment it started and has not ended.
    aligning: Option<CheckpointId>,
    /// The last checkpoint it snapshotted.
    snapshot: Option<CheckpointId>,
}

/// Every crash of a task that took effect up to `until_ns`: with
/// `local`, its operator (the task's chain, no subtask) and its task's
/// phase, else the job's phase; and every alignment that timed out into an
/// unaligned snapshot.
fn crash_events(output: &RunOutput, until_ns: u64, local: bool) -> Vec<String> {
    let mut phases: BTreeMap<TaskId, TaskPhase> = BTreeMap::new();
    let mut timeoutable: BTreeSet<(TaskId, CheckpointId)> = BTreeSet::new();
    let mut restarted_ns = 0;
    let mut out = Vec::new();
    let notified = notifications(output);
    for m in output.timeline.iter().take_while(|m| m.time_ns <= until_ns) {
        match m.what {
            Timeline::AlignmentStart { task, id } => {
                phases.entry(task).or_default().aligning = Some(id);
            }
            Timeline::AlignmentEnd { task, .. } => {
                phases.entry(task).or_default().aligning = None;
            }
            Timeline::BarrierRead {
                task,
                id,
                kind: BarrierKind::Timeoutable,
                ..
            } => {
                timeoutable.insert((task, id));
            }
            Timeline::Snapshot { task, id, kind, .. } => {
                let p = phases.entry(task).or_default();
                p.aligning = None;
                p.snapshot = Some(id);
                if kind == BarrierKind::Unaligned && timeoutable.contains(&(task, id)) {
                    out.push(format!(
                        "alignment of {} timed out into an unaligned snapshot",
                        operator_of(output, task)
                    ));
                }
            }
            Timeline::Restart { .. } => {
                phases.clear();
                restarted_ns = m.time_ns;
            }
            Timeline::Crash { .. } if !local => {
                let phase = job_phase(output, &notified, restarted_ns, m.time_ns);
                out.push(format!("a crash {phase}"));
            }
            Timeline::Crash { task } => {
                let p = phases.get(&task).copied().unwrap_or_default();
                let last_notified = notified
                    .get(&task)
                    .and_then(|n| {
                        n.iter()
                            .filter(|&&(t, _)| t >= restarted_ns && t <= m.time_ns)
                            .map(|&(_, id)| id)
                            .max()
                    })
                    .unwrap_or(0);
                let phase = crash_phase(output, p, last_notified, m.time_ns);
                out.push(format!("crash of {} {phase}", operator_of(output, task)));
            }
            _ => {}
        }
    }
    out
}

/// Per task, when it was notified of which completed checkpoint.
fn notifications(output: &RunOutput) -> BTreeMap<TaskId, Vec<(u64, CheckpointId)>> {
    let mut out: BTreeMap<TaskId, Vec<(u64, CheckpointId)>> = BTreeMap::new();
    for e in &output.trace {
        if let Ev::NotifyComplete { task, id } = e.ev {
            out.entry(task).or_default().push((e.time_ns, id));
        }
    }
    out
}

/// Where the job was in the checkpoint lifecycle at `at_ns` (the last
/// restart at `restarted_ns`): in the window after a checkpoint completed
/// and before every task was notified of it (where two-phase commits are
/// due), while a checkpoint was pending, or between checkpoints.
fn job_phase(
    output: &RunOutput,
    notified: &BTreeMap<TaskId, Vec<(u64, CheckpointId)>>,
    restarted_ns: u64,
    at_ns: u64,
) -> &'static str {
    let latest = output
        .checkpoint_stats
        .iter()
        .filter(|s| s.outcome == CpOutcome::Completed && !s.savepoint)
        .filter(|s| s.end_ns >= restarted_ns && s.end_ns <= at_ns)
        .map(|s| s.id)
        .max();
    if let Some(id) = latest {
        let told = notified
            .values()
            .filter(|n| n.iter().any(|&(t, n)| n == id && t <= at_ns))
            .count();
        if told < output.evidence.task_names.len() {
            return "after N completed, before every task was notified of N";
        }
    }
    let pending = output
        .checkpoint_stats
        .iter()
        .any(|s| s.trigger_ns <= at_ns && at_ns < s.end_ns && !s.savepoint);
    match pending {
        true => "during a checkpoint",
        false => "between checkpoints",
    }
}

/// Where a crash at `at_ns` hit its task's checkpoint lifecycle.
fn crash_phase(output: &RunOutput, p: TaskPhase, notified: CheckpointId, at_ns: u64) -> String {
    let ended = |id: CheckpointId| {
        output
            .checkpoint_stats
            .iter()
            .find(|s| s.id == id && s.end_ns <= at_ns)
            .map(|s| s.outcome)
    };
    if p.aligning.is_some() {
        return "while aligning".to_string();
    }
    if let Some(id) = p.snapshot.filter(|&id| id > notified) {
        match ended(id) {
            Some(CpOutcome::Completed) => {
                return "after N completed, before its notification of N".to_string()
            }
            None => return "after its snapshot of N, before N completed".to_string(),
            Some(_) => {}
        }
    }
    let pending = output
        .checkpoint_stats
        .iter()
        .any(|s| s.trigger_ns <= at_ns && at_ns < s.end_ns && !s.savepoint);
    match pending {
        true => "during a checkpoint, before its snapshot".to_string(),
        false => "between checkpoints".to_string(),
    }
}

/// A task's operator (its chain) without the subtask index.
fn operator_of(output: &RunOutput, task: TaskId) -> String {
    let name = output
        .evidence
        .task_names
        .get(task as usize)
        .map_or("?", String::as_str);
    match name.rfind('[') {
        Some(i) if name.ends_with(']') => name[..i].to_string(),
        _ => name.to_string(),
    }
}

/// Failing seeds whose runs fail for the same cause: the events the sweep
/// shows to be needed (see the module's documentation), their seeds, and
/// per set of failed checks the seeds that failed them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseGroup {
    /// The cause: abstracted events, sorted. A seed whose cause is unknown
    /// (its run panicked, its draw was invalid, its traced run ended
    /// differently) has the single event `unknown: KIND`.
    pub events: Vec<String>,
    /// The group's seeds, lowest first.
    pub seeds: Vec<u64>,
    /// Seeds per set of failed checks (`"a, b"`).
    pub checks: BTreeMap<String, u64>,
    /// The lowest seed's first violation and replay line.
    pub example: String,
    pub replay: String,
}

impl CauseGroup {
    /// The failures grouped by cause: largest group first, then by lowest
    /// seed.
    pub fn of(failures: &[Failure]) -> Vec<CauseGroup> {
        let causes: Vec<Vec<String>> = failures.iter().map(cause_or_unknown).collect();
        // The distinct causes per set of failed checks, with their seeds.
        let mut observed: BTreeMap<&[String], BTreeMap<&[String], usize>> = BTreeMap::new();
        for (f, c) in failures.iter().zip(&causes) {
            *observed
                .entry(&f.checks)
                .or_default()
                .entry(c.as_slice())
                .or_default() += 1;
        }
        let mut groups: BTreeMap<&[String], CauseGroup> = BTreeMap::new();
        for (f, c) in failures.iter().zip(&causes) {
            // The smallest observed cause (with the same checks) this
            // seed's events include: the rest was not needed. Of two as
            // small, the one more seeds had exactly, then the first.
            let key = observed[f.checks.as_slice()]
                .iter()
                .filter(|(s, _)| s.iter().all(|e| c.contains(e)))
                .min_by_key(|&(s, n)| (s.len(), std::cmp::Reverse(*n), *s))
                .map_or(c.as_slice(), |(s, _)| *s);
            let g = groups.entry(key).or_insert_with(|| CauseGroup {
                events: key.to_vec(),
                seeds: Vec::new(),
                checks: BTreeMap::new(),
                example: f
                    .violation
                    .clone()
                    .or_else(|| f.nondeterminism.clone())
                    .unwrap_or_default(),
                replay: f.replay.clone(),
            });
            g.seeds.push(f.seed);
            *g.checks.entry(f.checks.join(", ")).or_default() += 1;
        }
        let mut out: Vec<CauseGroup> = groups.into_values().collect();
        // Failures come in seed order, so each group's first seed is its
        // lowest; the example is that seed's.
        out.sort_by(|a, b| {
            b.seeds
                .len()
                .cmp(&a.seeds.len())
                .then(a.seeds[0].cmp(&b.seeds[0]))
        });
        out
    }
}

/// A failure's cause, or `unknown: KIND` when it has none.
fn cause_or_unknown(f: &Failure) -> Vec<String> {
    match &f.cause {
        Some(c) => c.clone(),
        None => vec![format!("unknown: {}", f.checks.join(", "))],
    }
}

/// The events every known cause has, when there are several causes: what
/// the sweep's failures have in common however they differ.
fn common_events(groups: &[CauseGroup]) -> Vec<&str> {
    let known: Vec<&CauseGroup> = groups
        .iter()
        .filter(|g| !g.events.iter().any(|e| e.starts_with("unknown: ")))
        .collect();
    match known.split_first() {
        Some((first, rest)) if !rest.is_empty() => first
            .events
            .iter()
            .filter(|e| rest.iter().all(|g| g.events.contains(e)))
            .map(String::as_str)
            .collect(),
        _ => Vec::new(),
    }
}

/// The text report's lines for the cause groups.
pub fn write_groups(w: &mut String, groups: &[CauseGroup]) {
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "failure causes (the fault and recovery events before the first violation)"
    );
    let common = common_events(groups);
    if !common.is_empty() {
        let _ = writeln!(w, "  every cause includes: {}", common.join("; "));
    }
    for g in groups {
        let n = g.seeds.len();
        let mut seeds: Vec<String> = g.seeds.iter().take(8).map(u64::to_string).collect();
        if n > 8 {
            seeds.push("…".to_string());
        }
        let _ = writeln!(
            w,
            "  {n} seed{} ({})",
            if n == 1 { "" } else { "s" },
            seeds.join(", ")
        );
        if g.events.is_empty() {
            let _ = writeln!(w, "    - no fault at all");
        }
        for e in &g.events {
            let _ = writeln!(w, "    - {e}");
        }
        let checks: Vec<String> = g.checks.iter().map(|(c, k)| format!("{c} ({k})")).collect();
        let _ = writeln!(w, "    failing {}", checks.join("; "));
        let _ = writeln!(w, "    e.g.    {}", super::clip(&g.example, 200));
        let _ = writeln!(w, "    replay  {}", g.replay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstraction_drops_indices_numbers_and_times() {
        assert_eq!(
            abstracted("notification of checkpoint 12 to sink[1] lost"),
            "notification of checkpoint N to sink lost"
        );
        assert_eq!(
            abstracted("restart from checkpoint 3 (24 in-flight records restored)"),
            abstracted("restart from checkpoint 7 (1 in-flight record restored)")
        );
        assert_eq!(abstracted("partition 2 from 1.5ms"), "partition N from N");
        assert_eq!(fault_event("crash of sink[0]"), None);
        assert_eq!(
            fault_event("crash of worker 2").as_deref(),
            Some("crash of worker N")
        );
        assert_eq!(fault_event("crash of count[1] took no effect: x"), None);
    }

    fn failure(seed: u64, checks: &[&str], cause: &[&str]) -> Failure {
        Failure {
            seed,
            checks: checks.iter().map(|c| c.to_string()).collect(),
            violation: Some(format!("{} at 1ms: seed {seed}", checks[0])),
            nondeterminism: None,
            replay: format!("ckptsim run s.toml --seed {seed}"),
            panic: None,
            // Sorted, as `events` makes every cause.
            cause: Some(
                cause
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            ),
        }
    }

    #[test]
    fn a_cause_absorbs_the_seeds_that_add_events_to_it() {
        let restart = "restart from checkpoint N";
        let crash_a = "crash of count between checkpoints";
        let crash_b = "crash of sink after N completed, before its notification of N";
        let lost = "notification of checkpoint N to sink lost";
        let groups = CauseGroup::of(&[
            failure(1, &["commit"], &[crash_a, restart]),
            failure(2, &["commit"], &[crash_a, crash_b, restart]),
            failure(3, &["commit"], &[lost]),
            failure(4, &["commit"], &[crash_b, restart]),
            failure(5, &["state"], &[crash_a, crash_b, restart]),
            Failure {
                cause: None,
                ..failure(6, &["panic"], &[])
            },
            failure(7, &["commit"], &[restart, crash_b]),
        ]);
        let seeds: Vec<Vec<u64>> = groups.iter().map(|g| g.seeds.clone()).collect();
        // Seed 2 has both crashes: it joins the smallest observed cause it
        // includes, of the two as small the one more seeds had (4 and 7).
        // Seed 5 failed other checks: nothing absorbs it.
        assert_eq!(
            seeds,
            vec![vec![2, 4, 7], vec![1], vec![3], vec![5], vec![6]]
        );
        assert_eq!(groups[0].events, vec![crash_b, restart]);
        assert_eq!(groups[4].events, vec!["unknown: panic"]);
    }
}
