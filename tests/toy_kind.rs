//! An operator kind added from outside: one file (this one) holds its
//! operator and its registry entry, and `register` stands in for the line
//! in `model::kinds::REGISTRY`. The run, the oracle, the checks and
//! savepoints treat it like a built-in: `toy-rules` keeps a rule table in
//! broadcast state (as `broadcast-process` does), is exactly-once under
//! crashes, and its table goes through savepoints to other parallelisms.

use crate::common::{exactly_once, sweep};
use crate::savepoints::{failures, restore_and_finish, take_savepoint, with_parallelism};
use ckptsim::engine::SimTime;
use ckptsim::model::opstate::BroadcastState;
use ckptsim::model::registry::{
    register, Flink, KindInfo, OperatorKindInfo, Role, Setup, StateLayout,
};
use ckptsim::model::{CheckpointId, Context, Operator, Record};
use ckptsim::runtime::RunOutcome;
use ckptsim::savepoint::OperatorState;
use ckptsim::scenario::{self, Partitioning, SavepointSpec, Scenario};
use std::collections::BTreeMap;

/// Rules `key % 8 → factor`, set by records of its broadcast inputs; other
/// records go out with their value times their rule (1 while unset).
struct Rules {
    control: Vec<u32>,
    table: BTreeMap<u64, i64>,
}

impl Operator for Rules {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        let rule = self.table.get(&(record.key % 8)).copied().unwrap_or(1);
        ctx.emit(Record {
            value: record.value.wrapping_mul(rule),
            ..record
        });
    }
    fn process_from(&mut self, from: u32, record: Record, ctx: &mut Context) {
        match self.control.contains(&from) {
            true => drop(self.table.insert(record.key % 8, record.value)),
            false => self.process(record, ctx),
        }
    }
    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        let table = self.table.iter().map(|(&k, &v)| (k, v)).collect();
        BroadcastState { table }.encode()
    }
    fn restore(&mut self, state: &[u8], _: &mut Context) -> Result<(), String> {
        self.table = BroadcastState::decode(state)?.table.into_iter().collect();
        Ok(())
    }
    fn order_insensitive_output(&self) -> bool {
        false // a record's value depends on the rules that arrived before it
    }
}

fn create(s: &Setup) -> Box<dyn Operator> {
    let control = (s.scenario.edges.iter())
        .filter(|e| e.to.0 == s.operator && e.partitioning == Partitioning::Broadcast)
        .map(|e| e.from.0)
        .collect();
    Box::new(Rules {
        control,
        table: BTreeMap::new(),
    })
}

static TOY_RULES: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "toy-rules",
        description: "a rule table in broadcast state (tests/toy_kind.rs)",
        keyed: false,
        check: |_| Ok(()),
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::Broadcast,
    create,
    flink: |_| Flink::Refused("a test's kind"),
};

/// `scenarios/operator-state.toml` with its `broadcast-process` operator
/// `apply` of kind `toy-rules`.
fn scenario() -> Scenario {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| register(&TOY_RULES).expect("the name is free"));
    let path = crate::common::scenario_path("operator-state");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace("kind = \"broadcast-process\"", "kind = \"toy-rules\"");
    let text = text.replace("rules = 8\n", "");
    let sc = scenario::parse_str(&text, "toy-rules.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.operators[2].kind.name(), "toy-rules");
    sc
}

#[test]
fn a_registered_kind_with_broadcast_state_is_exactly_once_with_crashes() {
    let sc = scenario();
    for a in exactly_once() {
        let c = sweep(&sc, "toy-rules.toml", a, 0..crate::common::seeds_or(12));
        assert!(c.recoveries_from_checkpoint > 0, "{}", a.name());
    }
}

#[test]
fn its_broadcast_state_goes_through_savepoints_to_other_parallelisms() {
    let mut base = ckptsim::scenario::ScenarioData::clone(&scenario());
    base.faults.coordinator = None; // a failover fails a pending savepoint
    let base = crate::common::valid(&base);
    let mut rules = 0;
    for seed in 0..8 {
        let sp = SavepointSpec {
            at: SimTime((230 + (seed % 5) * 50) * 1_000_000),
            stop: seed % 3 == 0,
            drain: false,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        };
        let (_, image) = take_savepoint(&base, seed, sp);
        let apply = image.operators.iter().find(|o| o.uid == "apply").unwrap();
        assert_eq!(apply.kind, "toy-rules");
        let OperatorState::Broadcast { copies } = &apply.state else {
            panic!("seed {seed}: {:?}", apply.state);
        };
        assert_eq!(copies.len(), 2);
        rules += BroadcastState::decode(&copies[0]).unwrap().table.len();
        let n = 1 + seed as u32 % 4;
        let mut s2 = with_parallelism(&base, &[("apply", n)]);
        s2.savepoints.clear();
        let run = restore_and_finish(&crate::common::valid(&s2), &image, seed + 10_000);
        assert!(run.verdict.passed, "seed {seed}:\n{}", failures(&run));
        assert_eq!(run.output.outcome, RunOutcome::Finished, "seed {seed}");
    }
    assert!(rules > 0, "no savepoint held a rule");
}
