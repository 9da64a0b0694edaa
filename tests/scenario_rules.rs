//! The scenario parser's rules on small files: defaults, every listed kind
//! and algorithm, positions, dotted tables, suggestions, versions, graph
//! rules, and parsing never panicking whatever the text.

use ckptsim::engine::{SimDuration, SimTime};
use ckptsim::scenario::{
    load, parse_str, Algorithm, OperatorKind, ScenarioError, ScenarioErrors, OPERATOR_KINDS,
};
use std::path::Path;

// ------------------------------------------------------------ parsing

const MINIMAL: &str = r#"
version = 1
name = "t"

[[operators]]
id = "src"
kind = "source"
parallelism = 2

[[operators]]
id = "sink"
kind = "sink-2pc"
parallelism = 2

[[edges]]
from = "src"
to = "sink"
partitioning = "forward"
"#;

fn errors(text: &str) -> Vec<ScenarioError> {
    match parse_str(text, "t.toml") {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(ScenarioErrors(errors)) => errors,
    }
}

#[test]
fn minimal_scenario_parses_with_defaults() {
    let scenario = parse_str(MINIMAL, "t.toml").expect("valid");
    assert_eq!(scenario.operators.len(), 2);
    assert_eq!(scenario.max_parallelism, 128);
    assert_eq!(scenario.operators[0].cost, SimDuration::from_micros(10));
    assert_eq!(scenario.operators[1].cost, SimDuration::from_micros(1));
    assert_eq!(
        scenario.checkpoint.interval,
        Some(SimDuration::from_secs(1))
    );
    assert_eq!(scenario.checkpoint.first_delay, SimDuration::from_secs(1));
    match &scenario.operators[0].kind {
        OperatorKind::Source(s) => assert_eq!(s.partitions, 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_listed_kind_is_parsed() {
    use ckptsim::scenario::schema::{name_of, Kind};
    use serde::Deserialize;
    for (name, _) in OPERATOR_KINDS {
        let kind = Kind::deserialize(toml::Value::String(name.to_string())).expect(name);
        assert_eq!(name_of(&kind), *name);
        let mut text = format!("{MINIMAL}\n[[operators]]\nid = \"x\"\nkind = \"{name}\"\n");
        // A global committer runs at parallelism 1.
        match *name {
            "sink-global-committer" => text.push_str("parallelism = 1\n"),
            _ => text.push_str("parallelism = 2\n"),
        }
        // An event-time window or timer needs a source with watermarks.
        if matches!(*name, "event-time-window" | "keyed-process") {
            text = text.replacen(
                "parallelism = 2\n",
                "parallelism = 2\nwatermark_interval = \"200ms\"\n",
                1,
            );
        }
        // An upsert sink reads a keyed running aggregate.
        let upstream = match *name {
            "sink-upsert" => {
                text.push_str(
                    "[[operators]]\nid = \"agg\"\nkind = \"keyed-count\"\nparallelism = 2\n",
                );
                text.push_str("[[edges]]\nfrom = \"src\"\nto = \"agg\"\npartitioning = \"hash\"\n");
                "agg"
            }
            // A global committer reads a committer, which reads a writer.
            "sink-global-committer" => {
                text.push_str(
                    "[[operators]]\nid = \"w\"\nkind = \"sink-writer\"\nparallelism = 2\n\
                     [[operators]]\nid = \"c\"\nkind = \"sink-committer\"\nparallelism = 2\n",
                );
                text.push_str(
                    "[[edges]]\nfrom = \"src\"\nto = \"w\"\npartitioning = \"hash\"\n\
                     [[edges]]\nfrom = \"w\"\nto = \"c\"\npartitioning = \"forward\"\n",
                );
                "c"
            }
            // A committer reads a writer (forward).
            "sink-committer" => {
                text.push_str(
                    "[[operators]]\nid = \"w\"\nkind = \"sink-writer\"\nparallelism = 2\n",
                );
                text.push_str("[[edges]]\nfrom = \"src\"\nto = \"w\"\npartitioning = \"hash\"\n");
                "w"
            }
            _ => "src",
        };
        let partitioning = match *name {
            "sink-committer" => "forward",
            "sink-global-committer" => "rebalance",
            _ => "hash",
        };
        // A log source reads the topic of a log sink.
        if *name == "source-log" {
            text.push_str(
                "topic = \"t\"\n[[operators]]\nid = \"t\"\nkind = \"sink-log\"\nparallelism = 2\n\
                 [[edges]]\nfrom = \"src\"\nto = \"t\"\npartitioning = \"hash\"\n",
            );
        }
        if kind != Kind::Source && *name != "source-log" {
            text.push_str(&format!(
                "[[edges]]\nfrom = \"{upstream}\"\nto = \"x\"\npartitioning = \"{partitioning}\"\n"
            ));
        }
        // A writer hands its committables to a committer.
        if *name == "sink-writer" {
            text.push_str(
                "[[operators]]\nid = \"c\"\nkind = \"sink-committer\"\nparallelism = 2\n\
                 [[edges]]\nfrom = \"x\"\nto = \"c\"\npartitioning = \"forward\"\n",
            );
        }
        let s = parse_str(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.operators[2].kind.name(), *name);
    }
}

#[test]
fn every_listed_algorithm_is_parsed() {
    for algorithm in Algorithm::all() {
        let name = algorithm.name();
        let text = format!("{MINIMAL}\n[checkpoint]\nalgorithm = \"{name}\"\n");
        let s = parse_str(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.checkpoint.algorithm, algorithm);
    }
}

#[test]
fn positions_count_characters() {
    // "µ" is two bytes and one column; the refused name and the value out
    // of range after it are placed by character.
    let text = format!("cluster = {{ placement = \"µµ\", workers = 0 }}{MINIMAL}");
    let found: Vec<_> = errors(&text)
        .iter()
        .map(|e| (e.line, e.column, e.message.clone()))
        .collect();
    assert_eq!(
        found[0],
        (Some(1), Some(25), "unknown placement `µµ`".into())
    );
    assert_eq!(
        found[1],
        (Some(1), Some(41), "workers must be at least 1".into())
    );
    // A missing key of a table made of dotted keys is placed at its key.
    let text = format!("{MINIMAL}\n[faults]\nrandom.window_end = \"4s\"\n");
    let error = &errors(&text)[0];
    assert_eq!((error.line, error.column), (Some(21), Some(1)), "{error}");
}

#[test]
fn dotted_key_tables_parse() {
    // A table made only of dotted keys is a table like any other.
    let text =
        format!("{MINIMAL}\n[faults]\nrandom.mean_interval = \"2s\"\nrandom.window_end = \"4s\"\n");
    let scenario = parse_str(&text, "t.toml").expect("valid");
    let random = scenario.faults.random.clone().expect("random");
    assert_eq!(random.window_end, SimTime(4_000_000_000));
    assert_eq!(random.max_crashes, 3);

    // A located table missing a required key gets the table's position.
    let text = format!("{MINIMAL}\n[faults.random]\nwindow_end = \"4s\"\n");
    let errors = errors(&text);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].line, Some(20));
    assert!(errors[0].message.contains("`mean_interval`"));
}

#[test]
fn unknown_key_suggests_closest() {
    let text = MINIMAL.replace(
        "parallelism = 2\n\n[[operators]]",
        "paralelism = 2\n\n[[operators]]",
    );
    let errors = errors(&text);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].message.contains("unknown field `paralelism`"));
    assert_eq!(
        errors[0].help.as_deref(),
        Some("did you mean `parallelism`?")
    );
}

#[test]
fn other_version_is_the_only_error() {
    let text = MINIMAL.replace("version = 1", "version = 2\nnew_key = 3");
    let errors = errors(&text);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        "unsupported scenario version 2; this ckptsim reads version 1"
    );
    assert_eq!((errors[0].line, errors[0].column), (Some(2), Some(11)));
}

#[test]
fn cycle_message_starts_at_first_operator() {
    let text = r#"
version = 1
name = "c"
[[operators]]
id = "s"
kind = "source"
parallelism = 1
[[operators]]
id = "a"
kind = "map"
parallelism = 1
[[operators]]
id = "b"
kind = "map"
parallelism = 1
[[edges]]
from = "b"
to = "a"
partitioning = "forward"
[[edges]]
from = "s"
to = "a"
partitioning = "forward"
[[edges]]
from = "a"
to = "b"
partitioning = "forward"
"#;
    let errors = errors(text);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].message, "the job graph has a cycle: a -> b -> a");
    assert_eq!(errors[0].line, Some(24));
}

#[test]
fn graph_rules_are_each_reported() {
    let text = r#"version = 1
name = "g"
max_parallelism = 4
[[operators]]
id = "src"
kind = "source"
parallelism = 2
[[operators]]
id = "count"
kind = "keyed-count"
parallelism = 8
[[operators]]
id = "out"
kind = "sink-at-least-once"
parallelism = 2
[[operators]]
id = "lonely"
kind = "map"
parallelism = 1
[[edges]]
from = "src"
to = "count"
partitioning = "rebalance"
[[edges]]
from = "count"
to = "out"
partitioning = "hash"
[[edges]]
from = "count"
to = "out"
partitioning = "hash"
[[edges]]
from = "out"
to = "src"
partitioning = "forward"
"#;
    let found: Vec<(Option<usize>, String)> = errors(text)
        .into_iter()
        .map(|e| (e.line, e.message))
        .collect();
    let expected = [
        (
            Some(11),
            "parallelism 8 of keyed operator `count` exceeds max_parallelism 4",
        ),
        (Some(17), "operator `lonely` has no inputs"),
        (
            Some(23),
            "keyed operator `count` reads a `rebalance` edge from `src`",
        ),
        (Some(28), "duplicate edge count -> out"),
        (
            Some(32),
            "the job graph has a cycle: src -> count -> out -> src",
        ),
        (Some(33), "sink `out` cannot have outputs"),
        (Some(34), "source `src` cannot have inputs"),
    ];
    let expected: Vec<(Option<usize>, String)> = expected
        .iter()
        .map(|(line, message)| (*line, message.to_string()))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn no_source_and_missing_keys() {
    let text = "version = 1\n[[operators]]\nid = \"m\"\nkind = \"map\"\n[[edges]]\nfrom = \"m\"\n";
    let found: Vec<(Option<usize>, Option<usize>, String)> = errors(text)
        .into_iter()
        .map(|e| (e.line, e.column, e.message))
        .collect();
    let expected = [
        (1, 1, "missing required key `name`"),
        (1, 1, "the job has no source operator"),
        (2, 1, "missing required key `parallelism` in [[operators]]"),
        (5, 1, "missing required key `to` in [[edges]]"),
        (5, 1, "missing required key `partitioning` in [[edges]]"),
    ];
    let expected: Vec<(Option<usize>, Option<usize>, String)> = expected
        .iter()
        .map(|(l, c, m)| (Some(*l), Some(*c), m.to_string()))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn display_formats() {
    let e = ScenarioError {
        file: "f.toml".into(),
        line: Some(3),
        column: Some(7),
        message: "bad".into(),
        help: Some("fix".into()),
    };
    let plain = ScenarioError {
        line: None,
        column: None,
        help: None,
        ..e.clone()
    };
    assert_eq!(e.to_string(), "f.toml:3:7: error: bad\n  help: fix");
    assert_eq!(plain.to_string(), "f.toml: error: bad");
    assert_eq!(
        ScenarioErrors(vec![e, plain]).to_string(),
        "f.toml:3:7: error: bad\n  help: fix\nf.toml: error: bad"
    );
}

#[test]
fn missing_file_is_an_unpositioned_error() {
    let errors = load(Path::new("/nonexistent/ckptsim/scenario.toml")).expect_err("missing");
    assert_eq!(errors.0.len(), 1);
    assert_eq!(errors.0[0].line, None);
    assert!(errors.0[0].message.starts_with("cannot read scenario file"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = parse_str(&text, "p.toml");
    }

    #[test]
    fn never_panics_on_mangled_scenarios(
        cut in 0usize..400,
        len in 0usize..40,
        insert in "[\\[\\]=\"a-z0-9_.\n -]{0,12}",
    ) {
        let mut text: Vec<char> = MINIMAL.chars().collect();
        let start = cut.min(text.len());
        let end = (start + len).min(text.len());
        text.splice(start..end, insert.chars());
        let text: String = text.into_iter().collect();
        let _ = parse_str(&text, "p.toml");
    }
}
