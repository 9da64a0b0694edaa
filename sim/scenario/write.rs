//! Scenario → TOML: [`File::from`] the scenario, then `toml::to_string`.
//!
//! Every key is written, defaults included, so the file means the same thing
//! whatever the defaults become; tables come in the field order of [`File`].
//! Durations and times are exact (`"5ms"`, `"1337ns"`). Parsing the output
//! with [`super::parse_str`] gives back an equal scenario, and writing that
//! again gives back the same text.

use super::schema::File;
use super::ScenarioData;

pub use crate::engine::duration_text as duration;

/// The first line of every written file. Callers may put their own comment
/// lines before it.
pub const HEADER: &str = "# written by ckptsim; every key is explicit, none relies on a default";

/// Renders `s` as a scenario file.
///
/// Values no file can hold are written so that reading the file refuses
/// them, never as another valid value: an operator index that does not exist
/// becomes `#<index>` (an unknown operator), a count above `i64::MAX`
/// becomes `i64::MIN`. Should serialization fail, the text says so in a
/// comment and does not parse.
pub fn to_toml(s: &ScenarioData) -> String {
    match toml::to_string(&File::from(s)) {
        Ok(text) => format!("{HEADER}\n{text}"),
        Err(e) => format!("{HEADER}\n# this scenario cannot be written: {e}\n"),
    }
}
