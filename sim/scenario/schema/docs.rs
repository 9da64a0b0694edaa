//! docs/scenarios.md's key tables, generated from the schema: each table
//! between `<!-- keys: NAME … -->` and `<!-- /keys -->` lists the keys its
//! file tables declare with `#[key(type, default)]`, in declaration order,
//! each with its doc comment as its meaning; the table `flink` lists
//! Flink's keys and their counterparts (`schema::flink::ALIASES`). The
//! schema is the one
//! declaration of a key; this module never reads a row back from the docs.

use super::*;

/// The generated key tables of docs/scenarios.md: each marker's name and
/// the file tables whose keys it lists.
pub fn key_tables() -> Vec<(&'static str, Vec<&'static [Option<KeyDoc>]>)> {
    vec![
        ("network", vec![Network::KEYS]),
        ("checkpoint", vec![Checkpoint::KEYS]),
        ("cluster", vec![Cluster::KEYS]),
        ("faults", vec![Faults::KEYS]),
        (
            "fault-rates",
            vec![
                Notifications::KEYS,
                OperatorEvents::KEYS,
                StorageFaults::KEYS,
            ],
        ),
        ("coordinator", vec![Coordinator::KEYS]),
        ("random", vec![Random::KEYS]),
        ("savepoints", vec![Savepoint::KEYS]),
        ("limits", vec![Limits::KEYS]),
        ("replay", vec![Replay::KEYS]),
    ]
}

/// A key table in markdown: the header, then one row per declared key.
pub fn render(tables: &[&[Option<KeyDoc>]]) -> String {
    let mut out = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
    for key in tables.iter().flat_map(|t| t.iter().flatten()) {
        let meaning: Vec<&str> = key.meaning.iter().map(|l| l.trim()).collect();
        let meaning = meaning.join(" ");
        let row = format!(
            "| `{}` | {} | {} | {} |\n",
            key.key,
            key.kind,
            key.default,
            meaning.trim()
        );
        out.push_str(&row);
    }
    out
}

const START: &str = "<!-- keys: ";
/// The marker name of the table of Flink's keys.
pub const FLINK: &str = "flink";
const END: &str = "<!-- /keys -->";

/// `text` (docs/scenarios.md) with every key table generated again from
/// the schema. An error names a table the schema does not know, or one
/// without its end marker.
pub fn with_key_tables(text: &str) -> Result<String, String> {
    let tables = key_tables();
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(rest) = line.strip_prefix(START) else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or_default();
        // Flink's keys: the table of counterparts (`schema::flink`).
        let flink = (name == FLINK).then(super::flink::render);
        let found = tables.iter().find(|(n, _)| *n == name);
        let Some(table) = flink.or_else(|| found.map(|(_, keys)| render(keys))) else {
            return Err(format!(
                "docs/scenarios.md: no key table `{name}` in the schema"
            ));
        };
        if !lines.any(|l| l == END) {
            return Err(format!(
                "docs/scenarios.md: key table `{name}` has no `{END}`"
            ));
        }
        out.push_str(&table);
        out.push_str(END);
        out.push('\n');
    }
    Ok(out)
}
