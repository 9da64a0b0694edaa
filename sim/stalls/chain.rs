//! Reading a stalled run's blocking chain from its trace: which task holds
//! a channel blocked, which operator behind it forwarded its barrier early,
//! which input's barrier never comes, and where that barrier waits.

use super::*;

/// The class of an operator in a chain.
pub fn role_class(t: &Topology, i: usize) -> String {
    let op = &t.operators[i];
    if op.kind.is_source() {
        return "source".to_string();
    }
    let forcing = t.edges.iter().filter(|e| e.to == i).find(|e| {
        matches!(
            e.partitioning,
            Partitioning::Forward | Partitioning::Broadcast
        )
    });
    match forcing {
        Some(e) => format!(
            "forced-aligned ({} input)",
            partitioning_name(e.partitioning)
        ),
        None => "not forced".to_string(),
    }
}

/// Edges on the shortest path from `a` to `b` (0 if equal), if any.
fn distance(t: &Topology, a: usize, b: usize) -> Option<usize> {
    let n = t.operators.len();
    let mut dist = vec![usize::MAX; n];
    dist[a] = 0;
    // Operators are in topological order: one pass suffices.
    for i in a..n {
        if dist[i] == usize::MAX {
            continue;
        }
        for e in t.edges.iter().filter(|e| e.from == i) {
            dist[e.to] = dist[e.to].min(dist[i] + 1);
        }
    }
    (dist[b] != usize::MAX).then_some(dist[b])
}

/// The blocking chain of a traced stalled run, for the checkpoints that
/// never completed, latest triggered while the sinks still took in records
/// first (the one the flow froze in; an expiry can release part of a
/// freeze, so an earlier one may hold the chain). The chain of a
/// checkpoint is a task `T` that read a blocking barrier from `U` and misses
/// the barrier of another input `X`, and an operator `A` that never
/// snapshotted, upstream of `U` and of (or equal to) `X`.
pub fn blocking_chain(scenario: &Scenario, t: &Topology, e: &Execution) -> Option<Chain> {
    let out = &e.output;
    let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
    let mut triggered: Vec<(u64, u64)> = Vec::new();
    for m in &out.timeline {
        if let Timeline::Triggered { id } = m.what {
            triggered.push((m.time_ns, id));
        }
    }
    let done: BTreeSet<u64> = out.completed_ids.iter().copied().collect();
    let open: Vec<(u64, u64)> = triggered
        .into_iter()
        .filter(|(_, id)| !done.contains(id))
        .collect();
    let before = open.iter().rev().filter(|(at, _)| *at <= out.sink_end.0);
    let after = open.iter().filter(|(at, _)| *at > out.sink_end.0);
    before
        .chain(after)
        .find_map(|&(_, k)| chain_of(&exec, t, e, k))
}

/// The blocking chain of checkpoint `k`: a task `T` that read a blocking
/// barrier from an operator `U` and still misses the barrier of another
/// input `X`, and an operator `A` (not `T`) with a task that never
/// snapshotted (it aligns, or its barrier waits in line behind data it
/// does not read), upstream of `U` and of (or equal to) `X`. The first
/// such quadruple in task and operator order; `None` if the trace shows
/// none.
fn chain_of(exec: &ExecGraph, t: &Topology, e: &Execution, k: u64) -> Option<Chain> {
    let out = &e.output;
    let n_tasks = exec.tasks.len();
    let (mut started, mut ended, mut snapped) = (
        vec![false; n_tasks],
        vec![false; n_tasks],
        vec![false; n_tasks],
    );
    // Per input channel: whether a barrier of `k` was read, and whether it
    // blocks its sender.
    let mut read = vec![None; exec.channels.len()];
    for m in &out.timeline {
        match &m.what {
            Timeline::AlignmentStart { task, id } if *id == k => started[*task as usize] = true,
            Timeline::AlignmentEnd { task, id } if *id == k => ended[*task as usize] = true,
            Timeline::Snapshot { task, id, .. } if *id == k => snapped[*task as usize] = true,
            Timeline::BarrierRead { ch, id, kind, .. } if *id == k => {
                read[*ch as usize] = Some(*kind != BarrierKind::Unaligned);
            }
            _ => {}
        }
    }
    let op_of = |task: usize| exec.tasks[task].operator.0 as usize;
    let n = t.operators.len();
    // Per operator: some task aligning without end; some task aligning
    // that never snapshotted.
    let mut holding = vec![false; n];
    let mut stuck = vec![false; n];
    for task in 0..n_tasks {
        if started[task] && !ended[task] {
            holding[op_of(task)] = true;
        }
        // Aligning, or its barrier still in line behind data it does not
        // read: either way it never forwarded its barrier.
        if !snapped[task] {
            stuck[op_of(task)] = true;
        }
    }
    for tk in 0..n_tasks {
        if !started[tk] || ended[tk] {
            continue;
        }
        let tt = op_of(tk);
        let inputs = &exec.tasks[tk].inputs;
        let from_op =
            |ch: &crate::model::ChannelId| op_of(exec.channels[*ch as usize].from as usize);
        let blocked: BTreeSet<usize> = inputs
            .iter()
            .filter(|ch| read[**ch as usize] == Some(true))
            .map(from_op)
            .collect();
        let missing: BTreeSet<usize> = inputs
            .iter()
            .filter(|ch| read[**ch as usize].is_none())
            .map(from_op)
            .collect();
        for &u in &blocked {
            for &x in missing.iter().filter(|&&x| x != u) {
                for a in (0..n).filter(|&a| a != tt && stuck[a]) {
                    let (Some(au), Some(ax)) = (distance(t, a, u), distance(t, a, x)) else {
                        continue;
                    };
                    if au == 0 {
                        continue;
                    }
                    let role = |i: usize| Role {
                        operator: t.operators[i].id.clone(),
                        class: role_class(t, i),
                    };
                    return Some(Chain {
                        checkpoint: k,
                        blocker: role(tt),
                        early: role(u),
                        missing: role(x),
                        stuck: role(a),
                        stuck_to_early: au,
                        stuck_to_missing: ax,
                        holding: (0..n)
                            .filter(|&i| holding[i])
                            .map(|i| t.operators[i].id.clone())
                            .collect(),
                    });
                }
            }
        }
    }
    None
}

/// What a stalled run's trace shows when it has no chain of the known
/// kind: the operators that never completed their alignment.
pub(super) fn unexplained(scenario: &Scenario, t: &Topology, e: &Execution) -> String {
    let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
    let mut holding = BTreeSet::new();
    let mut started = BTreeSet::new();
    let mut ended = BTreeSet::new();
    for m in &e.output.timeline {
        match &m.what {
            Timeline::AlignmentStart { task, id } => {
                started.insert((*task, *id));
            }
            Timeline::AlignmentEnd { task, id } => {
                ended.insert((*task, *id));
            }
            _ => {}
        }
    }
    for (task, id) in started.difference(&ended) {
        let _ = id;
        let op = exec.tasks[*task as usize].operator.0 as usize;
        holding.insert(format!("{} ({})", t.operators[op].id, role_class(t, op)));
    }
    format!(
        "no known chain; aligning without end: {}",
        if holding.is_empty() {
            "none".to_string()
        } else {
            holding.into_iter().collect::<Vec<_>>().join(", ")
        }
    )
}
