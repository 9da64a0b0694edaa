//! The oracle: a failure-free reference evaluation of the job on the same
//! input, written independently of the simulator's channels, barriers and
//! scheduling. Every source record is pushed depth-first through fresh
//! operator instances (routed by the same partitioning rules); what reaches
//! each sink is the expected output, and the keyed state at the end is the
//! expected state.

use super::Violation;
use crate::engine::SimTime;
use crate::model::graph::ExecGraph;
use crate::model::record::subtask_for_key;
use crate::model::{
    Context, ExternalStore, JobGraph, Operator, OperatorFactory, Record, SourcePoll, Workload,
};
use crate::mutant::Mutants;
use crate::runtime::RunOutput;
use crate::scenario::{Partitioning, Scenario};
use std::collections::BTreeMap;

pub struct Oracle {
    /// Sink operators, in operator order; position = sink slot.
    sinks: Vec<u32>,
    /// First flat lineage index of each global partition.
    partition_base: Vec<usize>,
    total_records: usize,
    /// Expected arrivals per (sink slot, lineage), flattened.
    expected: Vec<u32>,
    /// Expected `(sink, key, value)` multiset (unsorted) and its digest.
    values: Vec<(u32, u64, i64)>,
    digest: MultisetDigest,
    pub keyed_state: BTreeMap<u32, BTreeMap<u64, i64>>,
    /// Operators downstream (transitively) of an operator whose output
    /// depends on arrival order (e.g. running sums): their input values, and
    /// so their state values, depend on the run's order, not only on the
    /// input. Their state is compared by keys only.
    pub order_dependent: std::collections::BTreeSet<u32>,
}

/// Outcome of the output comparison.
pub struct OutputDiff {
    pub duplicates: u64,
    pub losses: u64,
    pub violations: Vec<Violation>,
}

const MAX_EXAMPLES: usize = 5;

impl Oracle {
    pub fn build(
        scenario: &Scenario,
        workload: &Workload,
        factory: &dyn OperatorFactory,
    ) -> Oracle {
        let job = JobGraph::build(scenario);
        let exec = ExecGraph::build(scenario, &job);
        let mut ops: Vec<Box<dyn Operator>> = exec
            .tasks
            .iter()
            .map(|t| factory.create(t.operator.0, t.subtask))
            .collect();
        let mut rr: Vec<Vec<u32>> = exec
            .tasks
            .iter()
            .map(|t| vec![t.subtask; t.outputs.len()])
            .collect();
        let sinks: Vec<u32> = scenario
            .operators
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind.is_sink())
            .map(|(i, _)| i as u32)
            .collect();
        let mut partition_base = Vec::with_capacity(workload.partition_count());
        let mut total = 0;
        for p in 0..workload.partition_count() {
            partition_base.push(total);
            total += workload.partition(p as u32).len();
        }
        let mut oracle = Oracle {
            expected: vec![0; total * sinks.len()],
            sinks,
            partition_base,
            total_records: total,
            values: Vec::new(),
            digest: MultisetDigest::default(),
            keyed_state: BTreeMap::new(),
            order_dependent: std::collections::BTreeSet::new(),
        };
        // Operators whose input values depend on processing order.
        for &op in &job.topo {
            let sensitive_upstream = scenario.edges.iter().any(|e| {
                e.to == op
                    && (oracle.order_dependent.contains(&e.from.0)
                        || exec
                            .tasks
                            .iter()
                            .position(|t| t.operator == e.from)
                            .is_some_and(|t| !ops[t].order_insensitive_output()))
            });
            if sensitive_upstream {
                oracle.order_dependent.insert(op.0);
            }
        }
        let mut store = ExternalStore::default();
        let mut out = Vec::new();
        let mut stack: Vec<(u32, Record)> = Vec::new();
        let channel_target: Vec<u32> = exec.channels.iter().map(|c| c.to).collect();
        let max_p = scenario.max_parallelism;

        let ctx_run = |t: u32,
                       ops: &mut Vec<Box<dyn Operator>>,
                       store: &mut ExternalStore,
                       out: &mut Vec<Record>,
                       f: &mut dyn FnMut(&mut dyn Operator, &mut Context)| {
            let info = &exec.tasks[t as usize];
            let mut ctx = Context {
                subtask: info.subtask,
                parallelism: scenario.op(info.operator).parallelism,
                operator: info.operator.0,
                max_parallelism: max_p,
                attempt: 0,
                now: SimTime::ZERO,
                store,
                out,
                mutants: Mutants::NONE,
            };
            f(ops[t as usize].as_mut(), &mut ctx);
        };

        // Routes the records in `out` from task `t` onto the stack.
        let route = |t: u32,
                     out: &mut Vec<Record>,
                     rr: &mut Vec<Vec<u32>>,
                     stack: &mut Vec<(u32, Record)>| {
            for (e, edge) in exec.tasks[t as usize].outputs.iter().enumerate() {
                for &r in out.iter() {
                    match edge.partitioning {
                        Partitioning::Forward => {
                            stack.push((channel_target[edge.channels[0] as usize], r))
                        }
                        Partitioning::Hash => {
                            let s = subtask_for_key(r.key, edge.channels.len() as u32, max_p);
                            stack.push((channel_target[edge.channels[s as usize] as usize], r));
                        }
                        Partitioning::Rebalance => {
                            let c = &mut rr[t as usize][e];
                            let s = *c as usize % edge.channels.len();
                            *c = c.wrapping_add(1);
                            stack.push((channel_target[edge.channels[s] as usize], r));
                        }
                        Partitioning::Broadcast => {
                            for &ch in &edge.channels {
                                stack.push((channel_target[ch as usize], r));
                            }
                        }
                    }
                }
            }
            out.clear();
        };

        let is_sink: Vec<Option<usize>> = exec
            .tasks
            .iter()
            .map(|t| oracle.sinks.iter().position(|&s| s == t.operator.0))
            .collect();

        let drain = |stack: &mut Vec<(u32, Record)>,
                     ops: &mut Vec<Box<dyn Operator>>,
                     store: &mut ExternalStore,
                     out: &mut Vec<Record>,
                     rr: &mut Vec<Vec<u32>>,
                     oracle: &mut Oracle| {
            while let Some((t, r)) = stack.pop() {
                if let Some(slot) = is_sink[t as usize] {
                    let idx = oracle.flat(slot, r.lineage.partition, r.lineage.offset);
                    oracle.expected[idx] += 1;
                    oracle.values.push((oracle.sinks[slot], r.key, r.value));
                    continue;
                }
                ctx_run(t, ops, store, out, &mut |op, ctx| op.process(r, ctx));
                route(t, out, rr, stack);
            }
        };

        // Sources, task by task, until exhausted.
        for t in 0..exec.tasks.len() as u32 {
            let op = exec.tasks[t as usize].operator;
            if !scenario.op(op).kind.is_source() {
                continue;
            }
            loop {
                let mut poll = SourcePoll::NotASource;
                ctx_run(t, &mut ops, &mut store, &mut out, &mut |op, ctx| {
                    poll = op.poll_source(1024, ctx)
                });
                route(t, &mut out, &mut rr, &mut stack);
                drain(
                    &mut stack,
                    &mut ops,
                    &mut store,
                    &mut out,
                    &mut rr,
                    &mut oracle,
                );
                if !matches!(poll, SourcePoll::Emitted(_)) {
                    break;
                }
            }
        }
        // End of input, in topological order.
        for &op in &job.topo {
            if scenario.op(op).kind.is_source() {
                continue;
            }
            for s in 0..scenario.op(op).parallelism {
                let t = exec.task_of(op, s);
                if is_sink[t as usize].is_some() {
                    continue;
                }
                ctx_run(t, &mut ops, &mut store, &mut out, &mut |op, ctx| {
                    op.end_of_input(ctx)
                });
                route(t, &mut out, &mut rr, &mut stack);
                drain(
                    &mut stack,
                    &mut ops,
                    &mut store,
                    &mut out,
                    &mut rr,
                    &mut oracle,
                );
            }
        }
        for (t, info) in exec.tasks.iter().enumerate() {
            if scenario.op(info.operator).kind.is_keyed() {
                oracle
                    .keyed_state
                    .entry(info.operator.0)
                    .or_default()
                    .extend(ops[t].keyed_state());
            }
        }
        oracle.digest = MultisetDigest::of(&oracle.values);
        oracle
    }

    fn flat(&self, slot: usize, partition: u32, offset: u64) -> usize {
        slot * self.total_records + self.partition_base[partition as usize] + offset as usize
    }

    /// Source records that reach some sink in the failure-free run.
    pub fn expected_records(&self) -> usize {
        self.values.len()
    }

    /// Compares committed output with the expected output. With
    /// `finished == false` only duplicates count (the run was cut short).
    pub fn compare_output(&self, run: &RunOutput, finished: bool) -> OutputDiff {
        let all: Vec<u64>;
        let below = if finished {
            all = vec![u64::MAX; self.partition_base.len()];
            Some(all.as_slice())
        } else {
            None
        };
        self.compare_output_below(run, below, &[])
    }

    /// Compares committed output with the expected output, counting as lost
    /// only the missing records whose source offset is below `below[p]` for
    /// their partition `p` (everything: `u64::MAX`; nothing: `None`), and
    /// whose lineage is not in the sorted `exempt`.
    pub fn compare_output_below(
        &self,
        run: &RunOutput,
        below: Option<&[u64]>,
        exempt: &[crate::model::Lineage],
    ) -> OutputDiff {
        let finished = below.is_some_and(|b| b.iter().all(|&o| o == u64::MAX));
        let mut actual = vec![0u32; self.expected.len()];
        let mut values = Vec::with_capacity(run.store.committed().len());
        let mut strays = 0u64;
        for r in run.store.committed() {
            match self.sinks.iter().position(|&s| s == r.sink) {
                Some(slot)
                    if (r.lineage.partition as usize) < self.partition_base.len()
                        && self.partition_base[r.lineage.partition as usize]
                            + (r.lineage.offset as usize)
                            < self.partition_end(r.lineage.partition) =>
                {
                    actual[self.flat(slot, r.lineage.partition, r.lineage.offset)] += 1;
                }
                _ => strays += 1,
            }
            values.push((r.sink, r.key, r.value));
        }
        let mut diff = OutputDiff {
            duplicates: strays,
            losses: 0,
            violations: Vec::new(),
        };
        let mut dup_examples = Vec::new();
        let mut loss_examples = Vec::new();
        for (i, (&a, &e)) in actual.iter().zip(&self.expected).enumerate() {
            if a > e {
                diff.duplicates += u64::from(a - e);
                if dup_examples.len() < MAX_EXAMPLES {
                    dup_examples.push(self.describe(i, a, e));
                }
            } else if a < e
                && below.is_some_and(|b| self.is_below(i, b))
                && (exempt.is_empty() || exempt.binary_search(&self.lineage_of(i)).is_err())
            {
                diff.losses += u64::from(e - a);
                if loss_examples.len() < MAX_EXAMPLES {
                    loss_examples.push(self.describe(i, a, e));
                }
            }
        }
        if diff.duplicates > 0 {
            diff.violations.push(Violation {
                check: "exactly-once-output",
                time_ns: 0,
                message: format!(
                    "{} committed records are duplicates (by lineage), e.g. {}",
                    diff.duplicates,
                    dup_examples.join("; ")
                ),
            });
        }
        if diff.losses > 0 {
            diff.violations.push(Violation {
                check: "exactly-once-output",
                time_ns: 0,
                message: format!(
                    "{} expected records never committed (by lineage), e.g. {}",
                    diff.losses,
                    loss_examples.join("; ")
                ),
            });
        }
        if finished
            && diff.violations.is_empty()
            && run.order_insensitive
            && MultisetDigest::of(&values) != self.digest
        {
            // Only now pay for sorting, to name the first difference.
            values.sort_unstable();
            let mut expected = self.values.clone();
            expected.sort_unstable();
            {
                let first = values
                    .iter()
                    .zip(&expected)
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| format!("committed (sink {}, key {}, value {}) where the oracle has (sink {}, key {}, value {})", a.0, a.1, a.2, b.0, b.1, b.2))
                    .unwrap_or_else(|| format!("{} values committed, {} expected", values.len(), expected.len()));
                diff.duplicates += 1;
                diff.losses += 1;
                diff.violations.push(Violation {
                    check: "exactly-once-output",
                    time_ns: 0,
                    message: format!("committed values differ from the oracle's although every lineage committed once: {first}"),
                });
            }
        }
        diff
    }

    fn lineage_of(&self, flat: usize) -> crate::model::Lineage {
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        crate::model::Lineage {
            partition: partition as u32,
            offset: (rest - self.partition_base[partition]) as u64,
        }
    }

    /// The flat index's source offset is below its partition's limit.
    fn is_below(&self, flat: usize, below: &[u64]) -> bool {
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        let offset = (rest - self.partition_base[partition]) as u64;
        below.get(partition).is_some_and(|&l| offset < l)
    }

    fn partition_end(&self, partition: u32) -> usize {
        self.partition_base
            .get(partition as usize + 1)
            .copied()
            .unwrap_or(self.total_records)
    }

    fn describe(&self, flat: usize, actual: u32, expected: u32) -> String {
        let slot = flat / self.total_records.max(1);
        let rest = flat % self.total_records.max(1);
        let partition = self.partition_base.partition_point(|&b| b <= rest) - 1;
        let offset = rest - self.partition_base[partition];
        format!(
            "source partition {partition} offset {offset} committed {actual}× at sink operator {} (expected {expected}×)",
            self.sinks[slot]
        )
    }

    /// Compares final keyed state; returns how many entries were compared.
    pub fn compare_state(&self, run: &RunOutput, out: &mut Vec<Violation>) -> u64 {
        let mut compared = 0;
        for (op, expected) in &self.keyed_state {
            let empty = BTreeMap::new();
            let actual = run.keyed_state.get(op).unwrap_or(&empty);
            compared += expected.len() as u64;
            let mut bad = Vec::new();
            let mut n = 0;
            let keys_only = self.order_dependent.contains(op);
            for (k, e) in expected {
                let a = actual.get(k);
                let differs = if keys_only { a.is_none() } else { a != Some(e) };
                if differs {
                    n += 1;
                    if bad.len() < MAX_EXAMPLES {
                        bad.push(format!(
                            "key {k}: {} (oracle {e})",
                            a.map_or("missing".into(), |v| v.to_string())
                        ));
                    }
                }
            }
            for (k, a) in actual {
                if !expected.contains_key(k) {
                    n += 1;
                    if bad.len() < MAX_EXAMPLES {
                        bad.push(format!("key {k}: {a} (oracle has no such key)"));
                    }
                }
            }
            if n > 0 {
                out.push(Violation {
                    check: "state",
                    time_ns: 0,
                    message: format!(
                        "operator #{op}: {n} keys differ from the oracle, e.g. {}",
                        bad.join("; ")
                    ),
                });
            }
        }
        compared
    }
}

/// An order-independent digest of a multiset of `(sink, key, value)`: the
/// count and two wrapping sums of independent 64-bit mixes of each element.
/// Equal multisets have equal digests; unequal ones collide with negligible
/// probability. It spares sorting 10^5 records on every run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MultisetDigest {
    count: u64,
    a: u64,
    b: u64,
}

impl MultisetDigest {
    fn of(items: &[(u32, u64, i64)]) -> MultisetDigest {
        use crate::engine::rng::splitmix64;
        let mut d = MultisetDigest::default();
        for &(sink, key, value) in items {
            let h = splitmix64(u64::from(sink) ^ splitmix64(key ^ splitmix64(value as u64)));
            d.count += 1;
            d.a = d.a.wrapping_add(h);
            d.b = d.b.wrapping_add(splitmix64(h ^ 0x5DEE_CE66_D1CE_4E5B));
        }
        d
    }
}
