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
