//! The name of the program that runs ckptsim's commands, as replay lines
//! and reproducers write it: `ckptsim`, or a user's own binary built on
//! `cli::main_with` (its replay lines must run the user's code, not the
//! built-in binary). Set once, before any command runs.

use std::sync::OnceLock;

static NAME: OnceLock<String> = OnceLock::new();

/// Sets the program's name; the first setting stays.
pub fn set_name(name: &str) {
    let _ = NAME.set(name.to_string());
}

/// The program's name (`ckptsim` unless set).
pub fn name() -> &'static str {
    NAME.get().map_or("ckptsim", String::as_str)
}
