//! A keyed two-input operator of one's own, rescaled from a savepoint.
//!
//! `open-orders` reads two streams keyed by customer: orders (its first
//! input, Flink's `processElement1`) and payments (its second,
//! `processElement2`). Per customer it keeps an `Account` (a serde struct)
//! in keyed state (`model::state::ValueState`), which ckptsim splits by key
//! group when a savepoint is restored at another parallelism. On an order
//! it emits `(customer, orders so far)`, on a payment `(customer, -payments
//! so far)`, each record carrying a `Line` (a serde struct) as its payload;
//! its keyed state, compared with the oracle's, is the number of orders not
//! yet paid.
//!
//! `params.payments` chooses where it counts payments:
//!
//! - `state` (the default): in the `Account`, so in every snapshot.
//! - `field`: in a plain map of the operator, outside its keyed state, a
//!   mistake Flink code makes too (a counter in a field of the function):
//!   a restore forgets the payments, and the checks find their counts
//!   going out twice.
//!
//!   cargo run --release --example orders -- sweep examples/orders.toml --seeds 0..200
//!   cargo run --release --example orders -- savepoint examples/orders.toml --at 60ms --out sp
//!   cargo run --release --example orders -- run examples/orders.toml --from-savepoint sp --parallelism open=3
//!
//! docs/operators.md walks through it.

use ckptsim::cli::{main_with, Registry};
use ckptsim::model::registry::{
    Flink, KindInfo, OperatorKindInfo, ParamError, Params, Role, Setup, StateLayout,
};
use ckptsim::model::state::{Inputs, ValueState};
use ckptsim::model::{CheckpointId, Context, Operator, Record};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::process::ExitCode;

/// One customer's state.
#[derive(Default, Serialize, Deserialize)]
struct Account {
    orders: i64,
    payments: i64,
}

/// What each output record carries: a type of the job's own, compared
/// with the oracle's like the record's value.
#[derive(Serialize, Deserialize)]
struct Line {
    customer: u64,
    /// "order" or "payment".
    what: String,
    /// The customer's how-manieth order or payment.
    nth: i64,
}

struct OpenOrders {
    /// Which input a record arrived on (the scenario's edges in order).
    inputs: Inputs,
    accounts: ValueState<Account>,
    /// `params.payments = "field"`: payments counted here, outside the
    /// keyed state (the mistake).
    payments_outside: Option<BTreeMap<u64, i64>>,
}

impl OpenOrders {
    /// An order: one more for its customer.
    fn order(&mut self, r: Record, ctx: &mut Context) {
        let account = self.accounts.entry(r.key);
        account.orders += 1;
        let value = account.orders;
        let line = Line {
            customer: r.key,
            what: "order".into(),
            nth: value,
        };
        let payload = ctx.payload(&line);
        ctx.emit(Record {
            value,
            payload,
            ..r
        });
    }

    /// A payment: one more paid order for its customer.
    fn payment(&mut self, r: Record, ctx: &mut Context) {
        let paid = match &mut self.payments_outside {
            Some(outside) => outside.entry(r.key).or_default(),
            None => &mut self.accounts.entry(r.key).payments,
        };
        *paid += 1;
        let line = Line {
            customer: r.key,
            what: "payment".into(),
            nth: *paid,
        };
        let payload = ctx.payload(&line);
        ctx.emit(Record {
            value: -*paid,
            payload,
            ..r
        });
    }

    fn paid(&self, key: u64, account: &Account) -> i64 {
        match &self.payments_outside {
            Some(outside) => outside.get(&key).copied().unwrap_or(0),
            None => account.payments,
        }
    }
}

impl Operator for OpenOrders {
    fn process(&mut self, r: Record, ctx: &mut Context) {
        self.order(r, ctx);
    }

    fn process_from(&mut self, from: u32, r: Record, ctx: &mut Context) {
        match self.inputs.index(from) {
            Some(0) => self.order(r, ctx),
            _ => self.payment(r, ctx),
        }
    }

    fn snapshot(&mut self, _: CheckpointId, ctx: &mut Context) -> Vec<u8> {
        self.accounts.snapshot(ctx)
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        self.accounts.restore(state, ctx)
    }

    /// Per customer, the orders not yet paid.
    fn keyed_state(&self) -> BTreeMap<u64, i64> {
        let open = |(k, a): (u64, &Account)| (k, a.orders - self.paid(k, a));
        self.accounts.iter().map(open).collect()
    }
}

/// `params`: `payments = "state"` (default) or `"field"`; nothing else.
fn check(params: &Params) -> Result<(), Vec<ParamError>> {
    let problems: Vec<ParamError> = (params.iter())
        .filter_map(|(key, value)| match (key.as_str(), value.as_str()) {
            ("payments", Some("state" | "field")) => None,
            ("payments", _) => Some(ParamError::at(
                key,
                format!("`payments` is \"state\" or \"field\", not {value}"),
            )),
            _ => Some(ParamError::at(
                key,
                format!("unknown parameter `{key}` of open-orders (known: payments)"),
            )),
        })
        .collect();
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems),
    }
}

fn create(setup: &Setup) -> Box<dyn Operator> {
    let field = setup.params.get("payments").and_then(|v| v.as_str()) == Some("field");
    Box::new(OpenOrders {
        inputs: Inputs::of(setup),
        accounts: ValueState::new(),
        payments_outside: field.then(BTreeMap::new),
    })
}

static OPEN_ORDERS: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "open-orders",
        description: "two inputs keyed by customer, orders then payments; counts both per \
                      customer in keyed state; params.payments = \"state\" or \"field\" (a bug) \
                      (example orders)",
        keyed: true,
        check,
    },
    role: Role::Transform,
    holds: false,
    // Keyed state of its own type: ckptsim moves it by key group.
    state: |_| StateLayout::KeyedBytes,
    create,
    flink: |_| Flink::Refused("a registered kind is Rust code the Flink job does not have"),
};

fn main() -> ExitCode {
    main_with(Registry::new().operator(&OPEN_ORDERS))
}
