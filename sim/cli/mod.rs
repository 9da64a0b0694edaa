//! The commands, one file per family; `sim/main.rs` parses and dispatches.

pub(crate) mod explore;
pub(crate) mod run;
pub(crate) mod stalls;
