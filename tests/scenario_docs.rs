//! docs/scenarios.md's key tables are the schema's declaration of the keys
//! (`scenario::schema::docs`). `CKPTSIM_WRITE_DOCS=1` writes them.

use ckptsim::scenario::schema::docs::{key_tables, with_key_tables};

#[test]
fn the_key_tables_of_the_docs_are_generated_from_the_schema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenarios.md");
    let text = std::fs::read_to_string(path).unwrap();
    let generated = with_key_tables(&text).unwrap_or_else(|e| panic!("{e}"));
    if std::env::var_os("CKPTSIM_WRITE_DOCS").is_some() {
        std::fs::write(path, &generated).unwrap();
        return;
    }
    assert!(
        text == generated,
        "docs/scenarios.md's key tables differ from the schema (sim/scenario/schema.rs); \
         regenerate them with CKPTSIM_WRITE_DOCS=1 cargo test --test tests scenario_docs"
    );
    // Every table is in the docs, and lists keys.
    for (name, tables) in key_tables() {
        let marker = format!("<!-- keys: {name} ");
        assert!(
            text.contains(&marker),
            "docs/scenarios.md lacks key table `{name}`"
        );
        assert!(
            tables.iter().any(|t| t.iter().any(Option::is_some)),
            "{name}"
        );
    }
}

/// A row comes from the declaration: a key's type, default and meaning.
#[test]
fn a_row_is_the_declared_key() {
    let network = ckptsim::scenario::schema::Network::KEYS;
    let credits = network.iter().flatten().find(|k| k.key == "buffer_credits");
    let credits = credits.expect("buffer_credits is declared");
    assert_eq!((credits.kind, credits.default), ("integer, ≥ 1", "`2`"));
    let table = ckptsim::scenario::schema::docs::render(&[network]);
    assert!(table.starts_with("| key | type | default | meaning |\n|---|---|---|---|\n"));
    assert!(table.contains("\n| `buffer_credits` | integer, ≥ 1 | `2` | Exclusive buffers"));
}
