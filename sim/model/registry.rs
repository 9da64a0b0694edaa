//! Operator kinds of a user's own, next to the built-ins.
//!
//! A user writes an [`Operator`](super::Operator) and describes it in an
//! [`OperatorKindInfo`], the same entry every built-in kind has
//! (`model::kinds`): its [`KindInfo`] (its name in scenario files, its line
//! in `ckptsim list`, whether its input must be partitioned by key, a check
//! of its `params` table), its role (a transformation), the layout of its
//! state, a constructor and its Flink mapping (or refusal). Registered
//! ([`register`], or `cli::Registry::operator` in a binary of the user's
//! own), the kind is known to scenario files (`kind = "dedup"`, its
//! parameters under `params`), and every command builds it wherever a
//! built-in operator would be built: the run, the oracle, sweeps,
//! shrinking, comparisons, mutants and savepoints.
//!
//! A registered kind is a transformation: it is neither a source nor a
//! sink (those talk to the workload and the external store, whose
//! contracts the checkers rely on). Its state layout decides what
//! savepoints keep and how a restore at another parallelism moves it:
//! keyed state (of the kind's own serde types with
//! [`ValueState`]), split or union list state and
//! broadcast state move as a built-in's do; `Opaque` bytes are restored at
//! the same parallelism only, since ckptsim cannot split bytes it does not
//! know. A kind with two inputs tells them apart with
//! [`Inputs`].

pub use super::kinds::{
    find, register, Fidelity, Flink, Java, OperatorKindInfo, Role, Setup, StateLayout,
};
pub use super::state::{Inputs, ValueState};
pub use crate::scenario::registry::{all_kinds, KindInfo, ParamError, Params};
