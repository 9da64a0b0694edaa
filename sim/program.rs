//! The name of the program that runs ckptsim's commands, as replay lines
//! and reproducers write it: the command line sets it to its `argv[0]` (as
//! one shell word), so a printed line runs as printed from the same shell,
//! and a user's binary built on `cli::main_with` names itself (its replay
//! lines must run the user's code, not the built-in binary). `ckptsim` in
//! the library. Set once, before any command runs.

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
