//! Scenario → TOML: [`File::from`] the scenario, then `toml::to_string`.
//!
//! Every key is written, defaults included, so the file means the same thing
//! whatever the defaults become; tables come in the order of
//! `docs/scenarios.md` (the field order of [`File`]), `[swarm]` last.
//! Durations and times are exact (`"5ms"`, `"1337ns"`). Parsing the output
//! with [`super::parse_str`] gives back an equal scenario, and writing that
//! again gives back the same text.

use super::schema::File;
use super::Scenario;

pub use super::schema::duration_text as duration;

/// The first line of every written file. Callers may put their own comment
/// lines before it.
pub const HEADER: &str = "# written by ckptsim; every key is explicit, none relies on a default";

/// Renders `s` as a scenario file.
///
/// Values no file can hold are written as they are, never silently changed,
/// so that reading the file refuses them (an operator index that does not
/// exist becomes `#<index>`, an unknown operator). An integer TOML cannot
/// hold (above `i64::MAX`) cannot be written at all: the text then says so
/// in a comment, and does not parse.
pub fn to_toml(s: &Scenario) -> String {
    match toml::to_string(&File::from(s)) {
        Ok(text) => format!("{HEADER}\n{text}"),
        Err(e) => format!("{HEADER}\n# this scenario cannot be written: {e}\n"),
    }
}
