//! Maps an [`Image`] onto a job, at any parallelism, with Flink's rules:
//! operators are matched by uid; keyed state moves by key group; source
//! partitions are reassigned; a 2PC sink's pending transactions are dealt
//! round-robin; in-flight records go to the subtask that now owns them; the
//! max parallelism cannot change; state of an operator the job lacks is an
//! error unless allowed; an operator without state starts empty.

use super::{source_inputs, ChannelRecords, Image, OperatorImage, OperatorState, SnapshotError};
use crate::model::graph::ExecGraph;
use crate::model::kinds::StateLayout;
use crate::model::operator::{keyed_state, merge_sink_states, source_state};
use crate::model::record::subtask_for_key;
use crate::model::{JobGraph, Record};
use crate::mutant::{Mutant, Mutants};
use crate::runtime::coordinator::{ChannelState, TaskSnapshot};
use crate::runtime::Restore;
use crate::scenario::{EdgeSpec as Edge, OperatorId, Partitioning, Scenario};
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
    assign_with(image, scenario, allow_non_restored_state, Mutants::NONE)
}

/// [`assign`] with deliberate bugs switched on (`--mutant`); those that
/// took effect go into the restore, so the run restored from it knows.
pub fn assign_with(
    image: &Image,
    scenario: &Scenario,
    allow_non_restored_state: bool,
    mutants: Mutants,
) -> Result<Assignment, SnapshotError> {
    same_max_parallelism(image, scenario)?;
    same_sources(image, scenario)?;
    let mut plan = Plan::new(scenario, allow_non_restored_state);
    plan.mutants = mutants;
    for op in &image.operators {
        plan.operator(op)?;
    }
    for (i, op) in scenario.operators.iter().enumerate() {
        if !plan.restored_ops[i] {
            plan.notes
                .push(format!("{}: new operator, starts empty", op.id));
        }
    }
    plan.channels(image)?;
    Ok(Assignment {
        restore: Restore {
            id: image.meta.id,
            generation: image.meta.generation + 1,
            states: plan.states,
            coordinators: plan.coordinators,
            store: image.store.clone(),
            mutants_fired: plan.fired,
            claim: false,
        },
        notes: plan.notes,
    })
}

/// A key group of operator `op` that does not decode as its kind's state.
fn damaged(op: &OperatorImage, kg: u32, e: &str) -> SnapshotError {
    refuse(
        format!("operator `{}`: key group {kg} does not decode: {e}", op.uid),
        "the snapshot is damaged; restore from another one",
    )
}

/// Key groups can be neither split nor merged: the max parallelism stays.
fn same_max_parallelism(image: &Image, scenario: &Scenario) -> Result<(), SnapshotError> {
    let max_p = scenario.max_parallelism;
    if image.meta.max_parallelism == max_p {
        return Ok(());
    }
    Err(refuse(
        format!(
            "max_parallelism changed: the snapshot has {} key groups, the job {max_p}",
            image.meta.max_parallelism
        ),
        &format!(
            "key groups can be neither split nor merged; set max_parallelism = {} in the scenario",
            image.meta.max_parallelism
        ),
    ))
}

/// The input logs are generated from the seed and the sources in order: the
/// job's sources must be the snapshot's.
fn same_sources(image: &Image, scenario: &Scenario) -> Result<(), SnapshotError> {
    let sources = source_inputs(scenario);
    if sources == image.meta.sources {
        return Ok(());
    }
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
                let time = match (
                    s.event_time_step_ms,
                    s.out_of_orderness_ms,
                    s.partition_skew_ms,
                ) {
                    (1, 0, 0) => String::new(),
                    (step, late, skew) => format!(
                        ", event time {step} ms a record, {late} ms out of order, {skew} ms skew"
                    ),
                };
                let payloads = if s.payloads { ", with payloads" } else { "" };
                format!(
                    "{} ({records}, {} keys {}{hot}, values ≤ {}{time}{payloads})",
                    s.uid, s.keys, s.key_distribution, s.value_max
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(refuse(
        format!(
            "the job's sources differ from the snapshot's: snapshot [{}], job [{}]",
            describe(&image.meta.sources),
            describe(&sources)
        ),
        "the input logs are generated from the seed and the sources in order; keep the sources as they were",
    ))
}

/// The restore plan as it is built: per task of the job's execution graph,
/// the state it starts from.
struct Plan<'a> {
    scenario: &'a Scenario,
    allow_non_restored_state: bool,
    exec: ExecGraph,
    uid_of: BTreeMap<&'a str, usize>,
    states: Vec<Option<TaskSnapshot>>,
    restored_ops: Vec<bool>,
    coordinators: Vec<(u32, Vec<u8>)>,
    notes: Vec<String>,
    mutants: Mutants,
    /// The mutants whose broken path the plan took.
    fired: Mutants,
}

impl<'a> Plan<'a> {
    fn new(scenario: &'a Scenario, allow_non_restored_state: bool) -> Plan<'a> {
        let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
        let uid_of = (scenario.operators.iter().enumerate())
            .map(|(i, o)| (o.id.as_str(), i))
            .collect();
        Plan {
            scenario,
            allow_non_restored_state,
            states: vec![None; exec.tasks.len()],
            exec,
            uid_of,
            restored_ops: vec![false; scenario.operators.len()],
            coordinators: Vec::new(),
            notes: Vec::new(),
            mutants: Mutants::NONE,
            fired: Mutants::NONE,
        }
    }

    /// One operator of the snapshot: matched by uid, its state given to the
    /// job's operator's subtasks by its layout's rule.
    fn operator(&mut self, op: &OperatorImage) -> Result<(), SnapshotError> {
        let Some(i) = self.matching(op)? else {
            return Ok(());
        };
        let spec = &self.scenario.operators[i];
        let p = spec.parallelism;
        if p != op.parallelism {
            self.notes
                .push(format!("{}: parallelism {} → {p}", op.uid, op.parallelism));
        }
        let timers = self.timers_of(i, op)?;
        let subtasks = self.redistribute(i, op)?;
        let (first, member) = (
            self.exec.first_task[i] as usize,
            self.exec.member[i] as usize,
        );
        let chain = self.exec.tasks[first].chain.len();
        for (s, bytes) in subtasks.into_iter().enumerate() {
            if let Some(bytes) = bytes {
                let snap = self.states[first + s].get_or_insert_with(|| snapshot(chain));
                snap.states[member] = bytes;
                if let Some(timers) = &timers {
                    // The restore is judged against them (the timers check).
                    snap.timers.resize(chain, 0);
                    snap.timers[member] = timers[s];
                }
            }
        }
        Ok(())
    }

    /// For an operator whose keyed state holds timers: how many the key
    /// groups each new subtask gets hold, counted in the snapshot.
    fn timers_of(&self, i: usize, op: &OperatorImage) -> Result<Option<Vec<u64>>, SnapshotError> {
        let spec = &self.scenario.operators[i];
        let (Some(count), OperatorState::KeyedBytes { key_groups }) =
            (crate::model::kinds::group_timers(&spec.kind), &op.state)
        else {
            return Ok(None);
        };
        let mut per = vec![0; spec.parallelism as usize];
        for (kg, bytes) in key_groups {
            let (n, _) = count(bytes, false).map_err(|e| damaged(op, *kg, &e))?;
            let owner = crate::model::record::subtask_for_key_group(
                *kg,
                spec.parallelism,
                self.scenario.max_parallelism,
            );
            per[owner as usize] += n;
        }
        Ok(Some(per))
    }

    /// The job's operator with `op`'s uid and kind (`None`: the job lacks it
    /// and its state may be dropped).
    fn matching(&mut self, op: &OperatorImage) -> Result<Option<usize>, SnapshotError> {
        let Some(&i) = self.uid_of.get(op.uid.as_str()) else {
            if op.state.is_empty() {
                self.notes
                    .push(format!("{}: not in the job (it had no state)", op.uid));
                return Ok(None);
            }
            if self.allow_non_restored_state {
                self.notes.push(format!(
                    "{}: not in the job; its state is dropped (--allow-non-restored-state)",
                    op.uid
                ));
                return Ok(None);
            }
            return Err(refuse(
                format!(
                    "the snapshot has state for operator `{}`, which the job does not contain",
                    op.uid
                ),
                "give the operator its old id, or pass --allow-non-restored-state to drop its state",
            ));
        };
        let kind = &self.scenario.operators[i].kind;
        if kind.name() != op.kind {
            return Err(refuse(
                format!(
                    "operator `{}` is {} in the snapshot but {} in the job",
                    op.uid,
                    op.kind,
                    kind.name()
                ),
                "state cannot move into another kind of operator; give the new operator a new id",
            ));
        }
        self.restored_ops[i] = true;
        Ok(Some(i))
    }

    /// Operator `i`'s state for each of its new subtasks (`None`: the
    /// subtask starts empty), by the rule of the state's layout.
    fn redistribute(
        &mut self,
        i: usize,
        op: &OperatorImage,
    ) -> Result<Vec<Option<Vec<u8>>>, SnapshotError> {
        let p = self.scenario.operators[i].parallelism;
        let max_p = self.scenario.max_parallelism;
        let all = |v: Vec<Vec<u8>>| v.into_iter().map(Some).collect();
        Ok(match &op.state {
            OperatorState::Stateless => Vec::new(),
            OperatorState::Source { offsets }
            | OperatorState::SplitSource {
                splits: offsets, ..
            } => all(self.source(i, op, offsets)?),
            OperatorState::List { entries } => all(crate::model::opstate::split(entries, p)),
            OperatorState::Opaque { subtasks } => {
                if subtasks.len() != p as usize {
                    return Err(refuse(
                        format!(
                            "operator `{}` of kind `{}` was snapshotted at parallelism {}, not {p}",
                            op.uid,
                            op.kind,
                            subtasks.len()
                        ),
                        "ckptsim cannot split a kind's opaque bytes: restore it at its old \
                         parallelism, or keep its state in model::state::ValueState (layout \
                         KeyedBytes), whose key groups move",
                    ));
                }
                all(subtasks.clone())
            }
            OperatorState::Broadcast { copies } => (0..p as usize)
                .map(|s| {
                    Some(
                        copies
                            .get(s % copies.len().max(1))
                            .cloned()
                            .unwrap_or_default(),
                    )
                })
                .collect(),
            OperatorState::Keyed { key_groups } => {
                let per = by_key_group(key_groups, p, max_p);
                all(per.into_iter().map(keyed_state).collect())
            }
            OperatorState::KeyedBytes { key_groups } => {
                let kind = &self.scenario.operators[i].kind;
                let moved = |kg: u32| {
                    let owner = crate::model::record::subtask_for_key_group;
                    owner(kg, op.parallelism, max_p) != owner(kg, p, max_p)
                };
                let mutant = Mutant::RescaleDropsMovedTimers;
                let strip = crate::model::kinds::group_timers(kind)
                    .filter(|_| self.mutants.has(mutant) && p != op.parallelism);
                let key_groups = match strip {
                    None => key_groups.clone(),
                    Some(strip) => {
                        // The timers of the key groups that change subtask
                        // stay behind (their count is the snapshot's).
                        self.fired = self.fired.with(mutant);
                        let keep = |kg: u32, b: &Vec<u8>| match moved(kg) {
                            true => strip(b, true).map(|(_, b)| b),
                            false => Ok(b.clone()),
                        };
                        (key_groups.iter())
                            .map(|(kg, b)| {
                                Ok((*kg, keep(*kg, b).map_err(|e| damaged(op, *kg, &e))?))
                            })
                            .collect::<Result<Vec<_>, SnapshotError>>()?
                    }
                };
                let per = by_key_group(&key_groups, p, max_p);
                let encode = crate::model::operator::keyed_byte_state;
                all(per.into_iter().map(encode).collect())
            }
            OperatorState::Sink2pc { subtasks }
            | OperatorState::SinkWriter { subtasks }
            | OperatorState::SinkCommitter { subtasks } => all(sink_lists(op, subtasks, p)?),
            OperatorState::LogSink { subtasks } => all(log_lists(op, subtasks, p, true)?),
            OperatorState::LogSource { subtasks }
                if self.mutants.has(Mutant::RemovedReadersSplitsDropped)
                    && subtasks.len() != p as usize =>
            {
                // Mutant: new reader `i` gets old reader `i`'s splits only.
                self.fired = self.fired.with(Mutant::RemovedReadersSplitsDropped);
                let none = crate::model::txlog::rescale::source_state(&[]);
                let old = |s: usize| subtasks.get(s).filter(|b| !b.is_empty()).cloned();
                all((0..p as usize)
                    .map(|s| old(s).unwrap_or(none.clone()))
                    .collect())
            }
            OperatorState::LogSource { subtasks } => all(log_lists(op, subtasks, p, false)?),
        })
    }

    /// A source's offsets (or a FLIP-27 source's splits) dealt to the new
    /// subtasks by partition; a FLIP-27 source's enumerator restored as it
    /// was.
    fn source(
        &mut self,
        i: usize,
        op: &OperatorImage,
        offsets: &[(u32, u64)],
    ) -> Result<Vec<Vec<u8>>, SnapshotError> {
        let spec = &self.scenario.operators[i];
        let Some(src) = spec.kind.source_spec() else {
            return Err(refuse(
                format!(
                    "operator `{}`: source state for a {} operator",
                    op.uid, op.kind
                ),
                "the snapshot is damaged; restore from another one",
            ));
        };
        let enumerated = spec.kind.state_layout() == StateLayout::SplitSource;
        match &op.state {
            OperatorState::SplitSource { enumerator, .. } if enumerated => {
                self.coordinators.push((i as u32, enumerator.clone()));
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
        // Global partitions of this source: the sources before it come
        // first (same order as `Workload`).
        let base = self.scenario.first_partition(OperatorId(i as u32));
        let p = spec.parallelism;
        Ok((0..p)
            .map(|s| {
                let mine: Vec<(u32, u64)> = (offsets.iter().copied())
                    .filter(|&(g, _)| g >= base && g < base + src.partitions)
                    .filter(|&(g, _)| (g - base) % p == s)
                    .collect();
                source_state(mine)
            })
            .collect())
    }

    /// In-flight records: to the subtask of the receiving operator that now
    /// owns them, by the job's partitioning of that edge.
    fn channels(&mut self, image: &Image) -> Result<(), SnapshotError> {
        let mut rebalance: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut moved = 0usize;
        for c in &image.channels {
            let Some((from, to, edge)) = self.channel_edge(c)? else {
                continue;
            };
            let targets = self.targets(image, c, (from, to, edge), &mut rebalance)?;
            let first = self.exec.first_task[to] as usize;
            for (s, r) in targets {
                moved += usize::from(s != c.to_subtask as usize);
                self.put_in_flight(first + s, r);
            }
        }
        let in_flight = image.in_flight_records();
        if in_flight > 0 {
            self.notes.push(format!(
                "{in_flight} in-flight records restored, {moved} of them to another subtask than they were headed for"
            ));
        }
        Ok(())
    }

    /// The job's operators and edge that channel `c` of the snapshot is on
    /// (`None`: an operator is gone and its records may be dropped).
    fn channel_edge(
        &mut self,
        c: &ChannelRecords,
    ) -> Result<Option<(usize, usize, &'a Edge)>, SnapshotError> {
        let scenario = self.scenario;
        let (Some(&from), Some(&to)) = (
            self.uid_of.get(c.from.as_str()),
            self.uid_of.get(c.to.as_str()),
        ) else {
            if self.allow_non_restored_state {
                self.notes.push(format!(
                    "{} → {}: {} in-flight records dropped (an operator is gone; --allow-non-restored-state)",
                    c.from,
                    c.to,
                    c.records.len()
                ));
                return Ok(None);
            }
            return Err(no_edge(
                c,
                "keep both operators and their edge, or pass --allow-non-restored-state to drop the records",
            ));
        };
        let found = (scenario.edges.iter())
            .position(|e| e.from.0 as usize == from && e.to.0 as usize == to);
        if found.is_some_and(|e| scenario.chained_edges()[e]) {
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
        Ok(Some((from, to, edge)))
    }

    /// The new subtask of the receiving operator each record of `c` goes to.
    fn targets(
        &self,
        image: &Image,
        c: &ChannelRecords,
        (from, to, edge): (usize, usize, &Edge),
        rebalance: &mut BTreeMap<(usize, usize), u64>,
    ) -> Result<Vec<(usize, Record)>, SnapshotError> {
        let scenario = self.scenario;
        let p = scenario.operators[to].parallelism;
        let old_to = image.operators.iter().find(|o| o.uid == c.to);
        let old_from = image.operators.iter().find(|o| o.uid == c.from);
        let unchanged = old_to.is_some_and(|o| o.parallelism == p)
            && old_from.is_some_and(|o| o.parallelism == scenario.operators[from].parallelism);
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
            targets.push((s, r));
        }
        Ok(targets)
    }

    /// Record `r` restored into task `t`'s first input channel.
    fn put_in_flight(&mut self, t: usize, r: Record) {
        let chain = self.exec.tasks[t].chain.len();
        let snap = self.states[t].get_or_insert_with(|| snapshot(chain));
        if snap.inputs.is_empty() {
            let ch = self.exec.tasks[t].inputs.first().copied().unwrap_or(0);
            snap.inputs.push(ChannelState {
                ch,
                ..ChannelState::default()
            });
        }
        snap.inputs[0].records.push(r);
    }
}

/// Key groups dealt to the new subtasks that own them.
fn by_key_group<T: Clone>(key_groups: &[(u32, T)], p: u32, max_p: u32) -> Vec<Vec<(u32, T)>> {
    let mut per: Vec<Vec<(u32, T)>> = vec![Vec::new(); p as usize];
    for (kg, entries) in key_groups {
        let owner = crate::model::record::subtask_for_key_group(*kg, p, max_p) as usize;
        per[owner].push((*kg, entries.clone()));
    }
    per
}

/// A sink's list state: old subtask `j`'s goes to new subtask `j mod p`
/// (a writer's, merged, to every new subtask).
fn sink_lists(
    op: &OperatorImage,
    subtasks: &[Vec<u8>],
    p: u32,
) -> Result<Vec<Vec<u8>>, SnapshotError> {
    type Merge = fn(&[&[u8]]) -> Result<Vec<u8>, String>;
    let (everyone, merge): (bool, Merge) = match &op.state {
        OperatorState::SinkWriter { .. } => (true, crate::model::sinkv2::merge_writer_states),
        OperatorState::SinkCommitter { .. } => {
            (false, crate::model::sinkv2::merge_committer_states)
        }
        _ => (false, merge_sink_states),
    };
    (0..p as usize)
        .map(|s| {
            let mine: Vec<&[u8]> = (subtasks.iter().enumerate())
                .filter(|(j, _)| everyone || j % p as usize == s)
                .map(|(_, b)| b.as_slice())
                .filter(|b| !b.is_empty())
                .collect();
            merge(&mine).map_err(|e| {
                refuse(
                    format!("operator `{}`: {e}", op.uid),
                    "the snapshot is damaged; restore from another one",
                )
            })
        })
        .collect()
}

/// A Kafka sink's or source's list states dealt to `p` new subtasks
/// (`model::txlog::rescale`).
fn log_lists(
    op: &OperatorImage,
    subtasks: &[Vec<u8>],
    p: u32,
    sink: bool,
) -> Result<Vec<Vec<u8>>, SnapshotError> {
    let deal = match sink {
        true => crate::model::txlog::rescale::sink_states,
        false => crate::model::txlog::rescale::source_states,
    };
    deal(subtasks, p).map_err(|e| {
        refuse(
            format!("operator `{}`: {e}", op.uid),
            "the snapshot is damaged; restore from another one",
        )
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

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const RescaleDropsMovedTimers: Mutant = Mutant::declare(&MutantInfo {
            name: "rescale-drops-moved-timers",
            part: "timers",
            what: "a restore at a new parallelism gives each key group that changes subtask its keys' values but not their timers: those timers never fire, and their output is lost",
            modelled_on: "the timer service's key-group-partitioned snapshot (InternalTimerServiceSerializationProxy, one part per key group) read back only for the key groups a subtask already owned, as a restore that maps timers by subtask index rather than by key group would",
            caught_by: "timers",
            applies: &[("event-time-timers", "aligned")],
        });
    }
}
