//! Operator kinds of a user's own, next to the built-ins.
//!
//! A user writes an [`Operator`] and describes it in an [`OperatorKindInfo`]:
//! its [`KindInfo`] (its name in scenario files, its line in `ckptsim list`,
//! whether its input must be partitioned by key, a check of its `params`
//! table) and a constructor. Registered ([`register`], or
//! `cli::Registry::operator` in a binary of the user's own), the kind is
//! known to scenario files (`kind = "dedup"`, its parameters under
//! `params`), and every command builds it wherever a built-in operator
//! would be built: the run, the oracle, sweeps, shrinking, comparisons,
//! mutants and savepoints.
//!
//! A registered kind is a transformation: it is neither a source nor a
//! sink (those talk to the workload and the external store, whose
//! contracts the checkers rely on). Its state is the bytes its `snapshot`
//! returns: savepoints keep them per subtask and restore them at the same
//! parallelism only, since ckptsim cannot split bytes it does not know.

use super::operator::Operator;
pub use crate::scenario::registry::{all_kinds, KindInfo, ParamError, Params};
use std::sync::RwLock;

/// What a registered operator kind's constructor is told, per subtask.
pub struct Setup<'a> {
    pub params: &'a Params,
    pub subtask: u32,
    pub parallelism: u32,
}

/// One operator kind of a user's own: how scenarios know it, and its code.
pub struct OperatorKindInfo {
    pub kind: KindInfo,
    /// A fresh instance for one subtask (at the start, at every restart,
    /// and in the oracle). Called only with params that `kind.check`
    /// accepted.
    pub create: fn(&Setup) -> Box<dyn Operator>,
}

/// Kinds registered at run time, in registration order.
static REGISTERED: RwLock<Vec<&'static OperatorKindInfo>> = RwLock::new(Vec::new());

/// Registers an operator kind of the caller's own: from then on scenario
/// files may name it. Refused when the name is not lowercase letters,
/// digits and dashes, or is taken.
pub fn register(info: &'static OperatorKindInfo) -> Result<(), String> {
    crate::scenario::registry::register(&info.kind)?;
    REGISTERED
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push(info);
    Ok(())
}

/// The code of the registered kind called `name`.
pub fn find(name: &str) -> Option<&'static OperatorKindInfo> {
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    registered.iter().copied().find(|k| k.kind.name == name)
}
