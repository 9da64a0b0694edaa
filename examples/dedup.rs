//! An operator of one's own, run through every ckptsim command.
//!
//! `dedup` drops a record whose `(key, value)` pair it has seen before and
//! passes the first one on. Its state is, per key, the set of values seen;
//! which record of a pair goes out depends on the order records arrive in.
//! The scenario chooses its snapshot with `params.snapshot`:
//!
//! - `full` (the default): the whole set, as Flink's heap backend would.
//! - `delta`: only the pairs added since the previous snapshot, a hand-made
//!   "incremental" snapshot that forgets its base. A restore then knows only
//!   the last interval's pairs, and a pair seen before that goes out again.
//!
//! and the layout of its state with `params.state`:
//!
//! - `opaque` (the default): its own bytes (JSON), which ckptsim keeps per
//!   subtask and restores at the same parallelism only.
//! - `union`: union list state of the pairs (`model::opstate::ListState`):
//!   at every restore each subtask gets every subtask's pairs and keeps
//!   those of its key groups, so a savepoint restores at any parallelism.
//!
//!   cargo run --release --example dedup -- list
//!   cargo run --release --example dedup -- sweep examples/dedup.toml --seeds 0..1000
//!   cargo run --release --example dedup -- sweep examples/dedup-delta.toml --seeds 0..200
//!   cargo run --release --example dedup -- compare examples/dedup.toml --algorithms aligned --vary operators.dedup.params.snapshot=full,delta --seeds 0..20 --out /tmp/dedup-compare
//!   cargo run --release --example dedup -- sweep examples/dedup-union.toml --seeds 0..200
//!
//! The replay lines it prints name this program, so they run this code.
//! docs/operators.md walks through it.

use ckptsim::cli::{main_with, Registry};
use ckptsim::model::opstate::ListState;
use ckptsim::model::record::subtask_for_key;
use ckptsim::model::registry::{
    Flink, KindInfo, OperatorKindInfo, ParamError, Params, Role, Setup, StateLayout,
};
use ckptsim::model::{CheckpointId, Context, Operator, Record};
use ckptsim::scenario::{OperatorKind, Redistribution};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

/// The pairs seen, per key.
type Seen = BTreeMap<u64, BTreeSet<i64>>;

struct Dedup {
    seen: Seen,
    /// `delta` snapshots: the pairs added since the last snapshot.
    delta: Option<Seen>,
    /// `union` state: the pairs as union list state.
    union: bool,
}

/// The pairs as list entries (one record per pair; only key and value
/// mean anything).
fn entries(seen: &Seen) -> Vec<Record> {
    let pairs = seen
        .iter()
        .flat_map(|(&k, vs)| vs.iter().map(move |&v| (k, v)));
    pairs
        .map(|(key, value)| Record {
            key,
            value,
            ..Record::default()
        })
        .collect()
}

impl Operator for Dedup {
    fn process(&mut self, record: Record, ctx: &mut Context) {
        if self
            .seen
            .entry(record.key)
            .or_default()
            .insert(record.value)
        {
            if let Some(delta) = &mut self.delta {
                delta.entry(record.key).or_default().insert(record.value);
            }
            ctx.emit(record);
        }
    }

    fn snapshot(&mut self, _: CheckpointId, _: &mut Context) -> Vec<u8> {
        let state = match &mut self.delta {
            // The mistake: what was added before the last snapshot is in no
            // snapshot that a restore reads.
            Some(delta) => std::mem::take(delta),
            None => self.seen.clone(),
        };
        match self.union {
            true => ListState {
                entries: entries(&state),
            }
            .encode(),
            false => serde_json::to_vec(&state).expect("a map of sets serialises"),
        }
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        if !self.union {
            self.seen = serde_json::from_slice(state).map_err(|e| format!("dedup state: {e}"))?;
            return Ok(());
        }
        // Union list state: every subtask's pairs; keep those of the key
        // groups this subtask owns now.
        for r in ListState::decode(state)?.entries {
            if subtask_for_key(r.key, ctx.parallelism, ctx.max_parallelism) == ctx.subtask {
                self.seen.entry(r.key).or_default().insert(r.value);
            }
        }
        Ok(())
    }

    /// Per key, how many distinct values went out: compared with the
    /// oracle's after the run.
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        let count = |values: &BTreeSet<i64>| values.len() as i64;
        self.seen.iter().map(|(&k, v)| (k, count(v))).collect()
    }

    fn order_insensitive_output(&self) -> bool {
        false // which record of a pair goes out depends on arrival order
    }
}

/// `params`: `snapshot = "full"` (default) or `"delta"`, `state =
/// "opaque"` (default) or `"union"`; nothing else.
fn check(params: &Params) -> Result<(), Vec<ParamError>> {
    let mut problems = Vec::new();
    for (key, value) in params {
        match (key.as_str(), value.as_str()) {
            ("snapshot", Some("full" | "delta")) | ("state", Some("opaque" | "union")) => {}
            ("snapshot", _) => problems.push(ParamError::at(
                key,
                format!("`snapshot` is \"full\" or \"delta\", not {value}"),
            )),
            ("state", _) => problems.push(ParamError::at(
                key,
                format!("`state` is \"opaque\" or \"union\", not {value}"),
            )),
            _ => problems.push(ParamError::at(
                key,
                format!("unknown parameter `{key}` of dedup (known: snapshot, state)"),
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// `params.state = "union"`.
fn union(params: &Params) -> bool {
    params.get("state").and_then(|v| v.as_str()) == Some("union")
}

fn create(setup: &Setup) -> Box<dyn Operator> {
    let delta = setup.params.get("snapshot").and_then(|v| v.as_str()) == Some("delta");
    Box::new(Dedup {
        seen: Seen::new(),
        delta: delta.then(Seen::new),
        union: union(setup.params),
    })
}

/// Its state's layout: ckptsim redistributes union list state itself.
fn state(kind: &OperatorKind) -> StateLayout {
    match union(kind.params()) {
        true => StateLayout::List(Redistribution::Union),
        false => StateLayout::Opaque,
    }
}

static DEDUP: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "dedup",
        description: "drops records whose (key, value) it has seen; params.snapshot = \"full\" \
                      or \"delta\" (a bug), params.state = \"opaque\" or \"union\" (example dedup)",
        keyed: true,
        check,
    },
    role: Role::Transform,
    holds: false,
    state,
    create,
    flink: |_| Flink::Refused("a registered kind is Rust code the Flink job does not have"),
};

fn main() -> ExitCode {
    main_with(Registry::new().operator(&DEDUP))
}
