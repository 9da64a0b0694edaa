//! The operator kinds a user registered, as scenario files know them: a
//! name, a line for `ckptsim list`, whether the kind is keyed and a check of
//! its `params` table. Their code (`model::registry::OperatorKindInfo`)
//! registers each one here.

use std::sync::RwLock;

/// A registered operator's parameters: the `params` table of its
/// `[[operators]]` entry, as written (empty when absent).
pub type Params = toml::Table;

/// A refused parameter: the key of `params` it concerns (`None`: the table
/// as a whole) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub key: Option<String>,
    pub message: String,
}

impl ParamError {
    pub fn at(key: &str, message: impl Into<String>) -> ParamError {
        ParamError {
            key: Some(key.to_string()),
            message: message.into(),
        }
    }
}

/// A registered operator kind, as scenario files know it.
pub struct KindInfo {
    /// Its `kind` in scenario files: lowercase letters, digits and dashes,
    /// not a built-in kind's.
    pub name: &'static str,
    /// One line for `ckptsim list`.
    pub description: &'static str,
    /// Keyed: its inputs must be `hash` edges, its parallelism at most
    /// `max_parallelism`, and its `keyed_state` is compared with the
    /// oracle's (as for `keyed-count`).
    pub keyed: bool,
    /// Checks `params` when the scenario is read; every problem is
    /// reported at the key it names, with the file's other problems.
    pub check: fn(&Params) -> Result<(), Vec<ParamError>>,
}

impl std::fmt::Debug for KindInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Kinds registered at run time, in registration order.
static REGISTERED: RwLock<Vec<&'static KindInfo>> = RwLock::new(Vec::new());

/// Registers a kind's name. Refused when the name is not lowercase
/// letters, digits and dashes, or is taken (by a built-in kind or an
/// earlier registration).
pub(crate) fn register(info: &'static KindInfo) -> Result<(), String> {
    let name = info.name;
    crate::protocol::registry::check_name("operator kind", name)?;
    let builtin = super::OPERATOR_KINDS.iter().any(|(n, _)| *n == name);
    if builtin || find(name).is_some() {
        return Err(format!("an operator kind named `{name}` exists already"));
    }
    REGISTERED
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push(info);
    Ok(())
}

/// Every registered kind, in registration order.
pub fn registered() -> Vec<&'static KindInfo> {
    REGISTERED
        .read()
        .map(|r| r.clone())
        .unwrap_or_else(|e| e.into_inner().clone())
}

/// The registered kind called `name`.
pub fn find(name: &str) -> Option<&'static KindInfo> {
    registered().into_iter().find(|k| k.name == name)
}

/// Every operator kind's name and description: the built-ins, then the
/// registered ones.
pub fn all_kinds() -> Vec<(&'static str, &'static str)> {
    let builtin = super::OPERATOR_KINDS.iter().copied();
    builtin
        .chain(registered().into_iter().map(|k| (k.name, k.description)))
        .collect()
}
