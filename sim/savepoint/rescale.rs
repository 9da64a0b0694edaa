//! Maps an [`Image`] onto a job, at any parallelism, with Flink's rules:
//! operators are matched by uid; keyed state moves by key group; source
//! partitions are reassigned; a 2PC sink's pending transactions are dealt
//! round-robin; in-flight records go to the subtask that now owns them; the
//! max parallelism cannot change; state of an operator the job lacks is an
//! error unless allowed; an operator without state starts empty.

use super::{source_inputs, Image, OperatorState, SnapshotError};
use crate::model::graph::ExecGraph;
use crate::model::operator::{keyed_state, merge_sink_states, source_state, KeyGroupState};
use crate::model::record::subtask_for_key;
use crate::model::{JobGraph, Record};
use crate::runtime::coordinator::{ChannelState, TaskSnapshot};
use crate::runtime::Restore;
use crate::scenario::{OperatorKind, Partitioning, Scenario, SplitAssignment};
use std::collections::BTreeMap;

/// A restore plan and what it changed, for the report.
pub struct Assignment {
    pub restore: Restore,
    /// One line per notable decision ("count: parallelism 2 → 4", ...).
    pub notes: Vec<String>,
}

fn refuse(message: String, help: &str) -> SnapshotError {
    SnapshotError {
        path: None,
        message,
        help: Some(help.to_string()),
    }
}

/// The plan to start `scenario` from `image`.
pub fn assign(
    image: &Image,
    scenario: &Scenario,
    allow_non_restored_state: bool,
) -> Result<Assignment, SnapshotError> {
    let max_p = scenario.max_parallelism;
    if image.meta.max_parallelism != max_p {
        return Err(refuse(
            format!(
                "max_parallelism changed: the snapshot has {} key groups, the job {max_p}",
                image.meta.max_parallelism
            ),
            &format!(
                "key groups can be neither split nor merged; set max_parallelism = {} in the scenario",
                image.meta.max_parallelism
            ),
        ));
    }
    let sources = source_inputs(scenario);
    if sources != image.meta.sources {
        let describe = |s: &[super::SourceInput]| {
            s.iter()
                .map(|s| {
                    let records = match s.partition_records.is_empty() {
                        true => format!(
                            "{} partitions × {} records",
                            s.partitions, s.records_per_partition
                        ),
                        false => format!("partitions of {:?} records", s.partition_records),
                    };
                    let hot = match s.hot_key_percent {
                        0 => String::new(),
                        n => format!(", {n}% on key 0"),
                    };
                    format!(
                        "{} ({records}, {} keys {}{hot}, values ≤ {})",
                        s.uid, s.keys, s.key_distribution, s.value_max
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(refuse(
            format!(
                "the job's sources differ from the snapshot's: snapshot [{}], job [{}]",
                describe(&image.meta.sources),
                describe(&sources)
            ),
            "the input logs are generated from the seed and the sources in order; keep the sources as they were",
        ));
    }
    let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
    let uid_of: BTreeMap<&str, usize> = scenario
        .operators
        .iter()
        .enumerate()
        .map(|(i, o)| (o.id.as_str(), i))
        .collect();
    let mut notes = Vec::new();
    let mut states: Vec<Option<TaskSnapshot>> = vec![None; exec.tasks.len()];
    let mut restored_ops = vec![false; scenario.operators.len()];
    let mut coordinators = Vec::new();

    for op in &image.operators {
        let Some(&i) = uid_of.get(op.uid.as_str()) else {
            if op.state.is_empty() {
                notes.push(format!("{}: not in the job (it had no state)", op.uid));
                continue;
            }
            if allow_non_restored_state {
                notes.push(format!(
                    "{}: not in the job; its state is dropped (--allow-non-restored-state)",
                    op.uid
                ));
                continue;
            }
            return Err(refuse(
                format!(
                    "the snapshot has state for operator `{}`, which the job does not contain",
                    op.uid
                ),
                "give the operator its old id, or pass --allow-non-restored-state to drop its state",
            ));
        };
        let spec = &scenario.operators[i];
        if spec.kind.name() != op.kind {
            return Err(refuse(
                format!(
                    "operator `{}` is {} in the snapshot but {} in the job",
                    op.uid,
                    op.kind,
                    spec.kind.name()
                ),
                "state cannot move into another kind of operator; give the new operator a new id",
            ));
        }
        restored_ops[i] = true;
        let p = spec.parallelism;
        if p != op.parallelism {
            notes.push(format!("{}: parallelism {} → {p}", op.uid, op.parallelism));
        }
        let first = exec.first_task[i] as usize;
        let member = exec.member[i] as usize;
        let chain = exec.tasks[first].chain.len();
        let mut put = |t: usize, bytes: Vec<u8>| {
            let snap = states[t].get_or_insert_with(|| snapshot(chain));
            snap.states[member] = bytes;
        };
        match &op.state {
            OperatorState::Stateless => {}
            OperatorState::Source { offsets }
            | OperatorState::SplitSource {
                splits: offsets, ..
            } => {
                let OperatorKind::Source(src) = &spec.kind else {
                    return Err(refuse(
                        format!(
                            "operator `{}`: source state for a {} operator",
                            op.uid, op.kind
                        ),
                        "the snapshot is damaged; restore from another one",
                    ));
                };
                let enumerated = src.split_assignment == SplitAssignment::Enumerator;
                match &op.state {
                    OperatorState::SplitSource { enumerator, .. } if enumerated => {
                        coordinators.push((i as u32, enumerator.clone()));
                    }
                    OperatorState::Source { .. } if !enumerated => {}
                    _ => {
                        return Err(refuse(
                            format!(
                                "operator `{}`: the snapshot's source and the job's differ in split_assignment",
                                op.uid
                            ),
                            "a FLIP-27 source's state (splits and enumerator) and a static source's offsets do not convert; keep split_assignment as it was",
                        ))
                    }
                }
                // Global partitions of this source: the sources before it
                // come first (same order as `Workload`).
                let base = scenario.first_partition(crate::scenario::OperatorId(i as u32));
                for s in 0..p {
                    let mine: Vec<(u32, u64)> = offsets
                        .iter()
                        .copied()
                        .filter(|&(g, _)| g >= base && g < base + src.partitions)
                        .filter(|&(g, _)| (g - base) % p == s)
                        .collect();
                    put(first + s as usize, source_state(mine));
                }
            }
            OperatorState::List { entries } => {
                for (s, bytes) in crate::model::opstate::split(entries, p)
                    .into_iter()
                    .enumerate()
                {
                    put(first + s, bytes);
                }
            }
            OperatorState::Opaque { subtasks } => {
                if subtasks.len() != p as usize {
                    return Err(refuse(
                        format!(
                            "operator `{}` of kind `{}` was snapshotted at parallelism {}, not {p}",
                            op.uid,
                            op.kind,
                            subtasks.len()
                        ),
                        "ckptsim cannot split the state of a registered operator kind: \
                         restore it at its old parallelism",
                    ));
                }
                for (s, bytes) in subtasks.iter().enumerate() {
                    put(first + s, bytes.clone());
                }
            }
            OperatorState::Broadcast { copies } => {
                for s in 0..p as usize {
                    let copy = copies.get(s % copies.len().max(1)).cloned();
                    put(first + s, copy.unwrap_or_default());
                }
            }
            OperatorState::Keyed { key_groups } => {
                let mut per: Vec<Vec<KeyGroupState>> = vec![Vec::new(); p as usize];
                for (kg, entries) in key_groups {
                    let owner = crate::model::record::subtask_for_key_group(*kg, p, max_p) as usize;
                    per[owner].push((*kg, entries.clone()));
                }
                for (s, groups) in per.into_iter().enumerate() {
                    put(first + s, keyed_state(groups));
                }
            }
            OperatorState::KeyedBytes { key_groups } => {
                let mut per: Vec<Vec<crate::model::operator::KeyGroupBytes>> =
                    vec![Vec::new(); p as usize];
                for (kg, bytes) in key_groups {
                    let owner = crate::model::record::subtask_for_key_group(*kg, p, max_p) as usize;
                    per[owner].push((*kg, bytes.clone()));
                }
                for (s, groups) in per.into_iter().enumerate() {
                    put(first + s, crate::model::operator::keyed_byte_state(groups));
                }
            }
            OperatorState::Sink2pc { subtasks }
            | OperatorState::SinkWriter { subtasks }
            | OperatorState::SinkCommitter { subtasks } => {
                // List state: old subtask `j`'s goes to new subtask `j mod p`
                // (a writer's, merged, to every new subtask).
                type Merge = fn(&[&[u8]]) -> Result<Vec<u8>, String>;
                let (everyone, merge): (bool, Merge) = match &op.state {
                    OperatorState::SinkWriter { .. } => {
                        (true, crate::model::sinkv2::merge_writer_states)
                    }
                    OperatorState::SinkCommitter { .. } => {
                        (false, crate::model::sinkv2::merge_committer_states)
                    }
                    _ => (false, merge_sink_states),
                };
                for s in 0..p as usize {
                    let mine: Vec<&[u8]> = subtasks
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| everyone || j % p as usize == s)
                        .map(|(_, b)| b.as_slice())
                        .filter(|b| !b.is_empty())
                        .collect();
                    let merged = merge(&mine).map_err(|e| {
                        refuse(
                            format!("operator `{}`: {e}", op.uid),
                            "the snapshot is damaged; restore from another one",
                        )
                    })?;
                    put(first + s, merged);
                }
            }
        }
    }
    for (i, op) in scenario.operators.iter().enumerate() {
        if !restored_ops[i] {
            notes.push(format!("{}: new operator, starts empty", op.id));
        }
    }

    // In-flight records: to the subtask of the receiving operator that now
    // owns them, by the job's partitioning of that edge.
    let mut rebalance: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let chained = scenario.chained_edges();
    let mut moved = 0usize;
    for c in &image.channels {
        let (Some(&from), Some(&to)) = (uid_of.get(c.from.as_str()), uid_of.get(c.to.as_str()))
        else {
            if allow_non_restored_state {
                notes.push(format!(
                    "{} → {}: {} in-flight records dropped (an operator is gone; --allow-non-restored-state)",
                    c.from,
                    c.to,
                    c.records.len()
                ));
                continue;
            }
            return Err(no_edge(
                c,
                "keep both operators and their edge, or pass --allow-non-restored-state to drop the records",
            ));
        };
        let found = scenario
            .edges
            .iter()
            .position(|e| e.from.0 as usize == from && e.to.0 as usize == to);
        if found.is_some_and(|e| chained[e]) {
            return Err(refuse(
                format!(
                    "the snapshot has {} in-flight records on {} → {}, which the job chains into one task (no channel holds them)",
                    c.records.len(),
                    c.from,
                    c.to
                ),
                "set chain = false on that edge, or restore from a snapshot without in-flight data",
            ));
        }
        let Some(edge) = found.map(|e| &scenario.edges[e]) else {
            return Err(no_edge(
                c,
                "keep the edge, or restore from a snapshot without in-flight data",
            ));
        };
        let p = scenario.operators[to].parallelism;
        let old_to = image.operators.iter().find(|o| o.uid == c.to);
        let old_from = image.operators.iter().find(|o| o.uid == c.from);
        let unchanged = old_to.is_some_and(|o| o.parallelism == p)
            && old_from.is_some_and(|o| o.parallelism == scenario.operators[from].parallelism);
        let first = exec.first_task[to] as usize;
        let mut targets: Vec<(usize, Record)> = Vec::with_capacity(c.records.len());
        for &r in &c.records {
            let s = match edge.partitioning {
                _ if unchanged => c.to_subtask as usize,
                Partitioning::Hash => subtask_for_key(r.key, p, scenario.max_parallelism) as usize,
                Partitioning::Rebalance => {
                    let n = rebalance.entry((from, to)).or_insert(0);
                    let s = (*n % u64::from(p)) as usize;
                    *n += 1;
                    s
                }
                Partitioning::Forward | Partitioning::Broadcast => {
                    return Err(refuse(
                        format!(
                            "cannot rescale the in-flight records on {} edge {} → {} (Flink never rescales channel state of pointwise or broadcast edges)",
                            edge.partitioning.name(),
                            c.from,
                            c.to
                        ),
                        "restore at the parallelism the snapshot was taken with, or from a snapshot without in-flight data",
                    ));
                }
            };
            if s != c.to_subtask as usize {
                moved += 1;
            }
            targets.push((s, r));
        }
        for (s, r) in targets {
            let t = first + s;
            let chain = exec.tasks[t].chain.len();
            let snap = states[t].get_or_insert_with(|| snapshot(chain));
            if snap.inputs.is_empty() {
                let ch = exec.tasks[t].inputs.first().copied().unwrap_or(0);
                snap.inputs.push(ChannelState {
                    ch,
                    ..ChannelState::default()
                });
            }
            snap.inputs[0].records.push(r);
        }
    }
    let in_flight = image.in_flight_records();
    if in_flight > 0 {
        notes.push(format!(
            "{in_flight} in-flight records restored, {moved} of them to another subtask than they were headed for"
        ));
    }
    Ok(Assignment {
        restore: Restore {
            id: image.meta.id,
            generation: image.meta.generation + 1,
            states,
            coordinators,
            store: image.store.clone(),
        },
        notes,
    })
}

/// In-flight records on an edge the job does not have.
fn no_edge(c: &super::ChannelRecords, help: &str) -> SnapshotError {
    refuse(
        format!(
            "the snapshot has {} in-flight records on {} → {}, an edge the job does not contain",
            c.records.len(),
            c.from,
            c.to
        ),
        help,
    )
}

/// An empty snapshot of a task of `chain` operators.
fn snapshot(chain: usize) -> TaskSnapshot {
    TaskSnapshot {
        states: vec![Vec::new(); chain],
        ..TaskSnapshot::default()
    }
}
