//! A user-defined operator under the simulator: a keyed "max" operator
//! written against the public `Operator` trait, plugged in through an
//! `OperatorFactory` that wraps the built-ins, run with crashes and checked
//! against the oracle like any built-in.

use ckptsim::harness::execute_with;
use ckptsim::model::operator::BuiltinFactory;
use ckptsim::model::{CheckpointId, Context, Operator, OperatorFactory, Record, Workload};
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::Algorithm;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Per-key maximum of the values seen; emits `(key, max so far)`.
#[derive(Default)]
struct KeyedMax {
    max: BTreeMap<u64, i64>,
}

impl Operator for KeyedMax {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let m = self.max.entry(record.key).or_insert(i64::MIN);
        *m = (*m).max(record.value);
        ctx.emit(Record {
            value: *m,
            ..record
        });
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        serde_json::to_vec(&self.max).unwrap()
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.max = serde_json::from_slice(state).map_err(|e| e.to_string())?;
        Ok(())
    }
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.max.clone()
    }
    fn order_insensitive_output(&self) -> bool {
        false // "max so far" depends on arrival order
    }
}

/// The built-ins, except that operator `count` is a `KeyedMax`.
struct Factory {
    builtin: BuiltinFactory,
    replaced: u32,
}

impl OperatorFactory for Factory {
    fn create(&self, operator: u32, subtask: u32) -> Box<dyn Operator> {
        if operator == self.replaced {
            Box::<KeyedMax>::default()
        } else {
            self.builtin.create(operator, subtask)
        }
    }
}

#[test]
fn user_operator_runs_exactly_once_under_crashes() {
    let sc = Arc::new(crate::common::load("wordcount"));
    let replaced = sc.operators.iter().position(|o| o.id == "count").unwrap() as u32;
    let mut recoveries = 0;
    for seed in 0..40 {
        let workload = Workload::generate(&sc, seed);
        let factory = Factory {
            builtin: BuiltinFactory::new(sc.clone(), Arc::new(Workload::generate(&sc, seed))),
            replaced,
        };
        let cfg = RunConfig {
            seed,
            algorithm: Algorithm::Aligned,
            mutants: Default::default(),
            record_trace: false,
        };
        let e = execute_with(sc.clone(), &workload, &factory, &cfg);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        let state = &e.output.keyed_state[&replaced];
        assert!(!state.is_empty());
        recoveries += e.output.counters.recoveries;
    }
    assert!(recoveries > 0, "some run recovered from a crash");
}

/// Buffers records and emits them in batches of `BATCH` (a stand-in for a
/// window); its state is the buffer; `end_of_input` flushes it.
#[derive(Default)]
struct Batcher {
    buffer: Vec<Record>,
}

const BATCH: usize = 40;

impl Operator for Batcher {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        self.buffer.push(record);
        if self.buffer.len() >= BATCH {
            for r in self.buffer.drain(..) {
                ctx.emit(r);
            }
        }
    }
    fn end_of_input(&mut self, ctx: &mut Context) {
        for r in self.buffer.drain(..) {
            ctx.emit(r);
        }
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        serde_json::to_vec(&self.buffer).unwrap()
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.buffer = serde_json::from_slice(state).map_err(|e| e.to_string())?;
        Ok(())
    }
}

struct BatcherFactory {
    builtin: BuiltinFactory,
    replaced: u32,
}

impl OperatorFactory for BatcherFactory {
    fn create(&self, operator: u32, subtask: u32) -> Box<dyn Operator> {
        if operator == self.replaced {
            Box::<Batcher>::default()
        } else {
            self.builtin.create(operator, subtask)
        }
    }
}

/// Stop-with-savepoint with drain flushes what operators buffer (their
/// `end_of_input` runs before the barrier), so the 2PC sink's output is
/// complete: everything the sources read is committed. Without drain the
/// buffered records stay in the savepoint's state, uncommitted.
#[test]
fn stop_with_drain_flushes_buffering_operators_into_the_sink() {
    use ckptsim::engine::SimTime;
    use ckptsim::harness::execute_job_with;
    use ckptsim::runtime::{JobOptions, RunOutcome};
    use ckptsim::scenario::SavepointSpec;
    let mut sc = ckptsim::scenario::ScenarioData::clone(&crate::common::load("wordcount"));
    sc.faults.random = None;
    let replaced = sc.operators.iter().position(|o| o.id == "split").unwrap() as u32;
    for seed in 0..10 {
        let mut held_back = 0;
        for drain in [true, false] {
            let mut s = ckptsim::scenario::ScenarioData::clone(&sc);
            s.savepoints = vec![SavepointSpec {
                at: SimTime(250_000_000),
                stop: true,
                drain,
                format: ckptsim::scenario::SavepointFormat::Canonical,
            }];
            let s = Arc::new(crate::common::valid(&s));
            let workload = Arc::new(Workload::generate(&s, seed));
            let factory = BatcherFactory {
                builtin: BuiltinFactory::new(s.clone(), workload.clone()),
                replaced,
            };
            let cfg = RunConfig {
                seed,
                algorithm: Algorithm::Aligned,
                mutants: Default::default(),
                record_trace: false,
            };
            let job = JobOptions {
                keep_snapshots: true,
                ..JobOptions::default()
            };
            let e = execute_job_with(s.clone(), &workload, &factory, &cfg, &job);
            assert!(
                e.verdict.passed,
                "seed {seed} drain {drain}: {:?}",
                e.verdict.violations().next()
            );
            assert!(matches!(e.output.outcome, RunOutcome::Stopped(_)));
            let snap = &e.output.snapshots[0];
            let exec = ckptsim::model::ExecGraph::build(&s, &ckptsim::model::JobGraph::build(&s));
            let first = exec.first_task[replaced as usize] as usize;
            let member = exec.member[replaced as usize] as usize;
            let buffered: usize = (0..s.operators[replaced as usize].parallelism as usize)
                .map(|i| {
                    let state = &snap.states[first + i].as_ref().unwrap().states[member];
                    serde_json::from_slice::<Vec<Record>>(state).unwrap().len()
                })
                .sum();
            if drain {
                // The completeness check ran (and passed): nothing held.
                assert!(e.output.complete_below.is_some());
                assert_eq!(buffered, 0, "seed {seed}");
            } else {
                assert!(e.output.complete_below.is_none());
                held_back = buffered;
            }
        }
        assert!(held_back > 0, "seed {seed}: the batcher held nothing back");
    }
}
