//! Records carrying a value of the user's own type (a payload): attached
//! with `Context::payload`, read back with `Context::read`, carried
//! through channels, snapshots and crashes, and judged by the oracle like
//! the value.

use ckptsim::harness::execute_with;
use ckptsim::model::operator::BuiltinFactory;
use ckptsim::model::{CheckpointId, Context, Operator, OperatorFactory, Record, Workload};
use ckptsim::runtime::RunConfig;
use ckptsim::scenario::Algorithm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What `split` attaches to each word: a type of the user's.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Word {
    text: String,
    weight: i64,
}

/// What `count` emits per word: the word read back and its count.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Counted {
    text: String,
    count: u64,
    /// The records this subtask counted since it started: not in the
    /// snapshot, so it differs after a restore (the broken variant).
    seen: Option<u64>,
}

/// Stateless: attaches a `Word` made from the key.
struct Split;

impl Operator for Split {
    fn process(&mut self, r: Record, ctx: &mut Context) {
        let word = Word {
            text: format!("word-{}", r.key),
            weight: r.value,
        };
        let payload = ctx.payload(&word);
        assert_eq!(
            ctx.read::<Word>(payload),
            Some(word),
            "a payload reads back"
        );
        ctx.emit(Record { payload, ..r });
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        Vec::new()
    }
    fn restore(&mut self, _: &[u8], _: &mut Context) -> Result<(), String> {
        Ok(())
    }
}

/// Counts words per key in checkpointed state; reads the payload that
/// `split` attached and emits a `Counted`.
#[derive(Default)]
struct Count {
    counts: BTreeMap<u64, u64>,
    /// `Some`: the broken variant, which puts a field outside its snapshot
    /// into the payload.
    seen: Option<u64>,
}

impl Operator for Count {
    fn process(&mut self, r: Record, ctx: &mut Context) {
        let word: Word = ctx.read(r.payload).expect("split attached a Word");
        assert_eq!(word.text, format!("word-{}", r.key));
        let count = self.counts.entry(r.key).or_default();
        *count += 1;
        if let Some(seen) = &mut self.seen {
            *seen += 1;
        }
        let counted = Counted {
            text: word.text,
            count: *count,
            seen: self.seen,
        };
        let payload = ctx.payload(&counted);
        ctx.emit(Record {
            value: *count as i64,
            payload,
            ..r
        });
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        postcard::to_stdvec(&self.counts).unwrap()
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.counts = postcard::from_bytes(state).map_err(|e| e.to_string())?;
        Ok(())
    }
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        self.counts.iter().map(|(&k, &v)| (k, v as i64)).collect()
    }
}

struct Factory {
    builtin: BuiltinFactory,
    split: u32,
    count: u32,
    broken: bool,
}

impl OperatorFactory for Factory {
    fn create(&self, operator: u32, subtask: u32) -> Box<dyn Operator> {
        if operator == self.split {
            Box::new(Split)
        } else if operator == self.count {
            Box::new(Count {
                counts: BTreeMap::new(),
                seen: self.broken.then_some(0),
            })
        } else {
            self.builtin.create(operator, subtask)
        }
    }
}

/// Runs wordcount with `split` and `count` replaced, over `seeds`: the
/// executions.
fn runs(
    broken: bool,
    algorithm: Algorithm,
    seeds: std::ops::Range<u64>,
) -> Vec<ckptsim::harness::Execution> {
    let sc = Arc::new(crate::common::load("wordcount"));
    let index = |id: &str| sc.operators.iter().position(|o| o.id == id).unwrap() as u32;
    seeds
        .map(|seed| {
            let workload = Workload::generate(&sc, seed);
            let factory = Factory {
                builtin: BuiltinFactory::new(sc.clone(), Arc::new(Workload::generate(&sc, seed))),
                split: index("split"),
                count: index("count"),
                broken,
            };
            let cfg = RunConfig {
                seed,
                algorithm,
                mutants: Default::default(),
                record_trace: false,
            };
            execute_with(sc.clone(), &workload, &factory, &cfg)
        })
        .collect()
}

#[test]
fn payloads_travel_through_crashes_and_are_judged_exactly() {
    let mut recoveries = 0;
    for algorithm in [Algorithm::Aligned, Algorithm::Unaligned] {
        for (seed, e) in runs(false, algorithm, 0..12).iter().enumerate() {
            assert!(
                e.verdict.passed,
                "{algorithm:?} seed {seed}: {:?}",
                e.verdict.violations().next()
            );
            // Every committed word carries a `Counted` payload.
            let store = &e.output.store;
            assert!(store.committed().iter().all(|r| !r.payload.is_none()));
            assert!(
                store.payloads.len() > 500,
                "{} payloads",
                store.payloads.len()
            );
            recoveries += e.output.counters.recoveries;
        }
    }
    assert!(recoveries > 0, "some run recovered from a crash");
}

/// A payload that differs after a restore while the value does not is a
/// difference in the output: the oracle compares payloads too.
#[test]
fn a_payload_that_differs_after_a_restore_fails_the_output_check() {
    let runs = runs(true, Algorithm::Aligned, 0..12);
    let failed: Vec<_> = runs.iter().filter(|e| !e.verdict.passed).collect();
    assert!(
        !failed.is_empty(),
        "no seed caught the payload outside the snapshot"
    );
    for e in &failed {
        let v = e.verdict.violations().next().unwrap();
        assert_eq!(v.check.name(), "exactly-once-output", "{v:?}");
        assert!(v.message.contains("payload"), "{}", v.message);
    }
    // A run without a restore has the oracle's payloads exactly.
    for e in runs.iter().filter(|e| e.output.counters.recoveries == 0) {
        assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    }
}
