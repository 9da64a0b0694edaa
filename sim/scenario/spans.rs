//! Reading a scenario file: TOML text → `toml_edit` document → [`File`] →
//! [`super::validate`], with every problem placed at file:line:col.
//!
//! The document is parsed once. [`SpanIndex`] maps key paths
//! (`operators[2].cost`, `faults.coordinator.crashes[1]`) to the byte span
//! of their value, or of their table's header; a path that is not written
//! takes the position of the nearest table that is.
//!
//! Deserialization is strict, so serde stops at the first value it
//! refuses. A value of the right TOML type that serde refuses (an unknown
//! name, a malformed duration) is reported and taken out of the document,
//! and deserialization runs again: each refused value is one error, its key
//! takes its default, and everything else is still validated. A syntax
//! error, an unknown key or a value of the wrong TOML type stops with that
//! one error. Before any of it, the `[flink]` table's keys are rewritten as
//! the keys they stand for (`schema::flink`), placed at the Flink key.
//!
//! This module reads untrusted input: it must never panic, whatever the text.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use toml_edit::{Item, TableLike, Value};

use super::schema::{flink, File};
use super::validate::{join, key_of, unsupported_version, validate, Problem};
use super::{Scenario, FORMAT_VERSION};

/// One problem in a scenario file, with its position when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`super::parse_str`] (or the path given to [`super::load`]).
    pub file: String,
    /// 1-based line; `None` for problems not tied to a place (e.g. IO errors).
    pub line: Option<usize>,
    /// 1-based column, counted in characters.
    pub column: Option<usize>,
    pub message: String,
    /// How to fix it, when that is obvious.
    pub help: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "{}:{line}:{column}: error: {}", self.file, self.message)?
            }
            _ => write!(f, "{}: error: {}", self.file, self.message)?,
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Every problem found in a scenario file, in file order.
#[derive(Debug, Clone)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

/// Problems (message and help) without a file to place them in.
pub(super) fn unplaced(
    file: &str,
    problems: impl IntoIterator<Item = (String, Option<String>)>,
) -> ScenarioErrors {
    let error = |(message, help)| ScenarioError {
        file: file.to_string(),
        line: None,
        column: None,
        message,
        help,
    };
    ScenarioErrors(problems.into_iter().map(error).collect())
}

/// The text being read, for turning byte offsets into positions.
pub(super) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based (line, column) of a byte offset; columns count characters.
    /// Offsets past the end or inside a character are clamped, never a panic.
    fn position(&self, offset: usize) -> (usize, usize) {
        let mut end = offset.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let before = self.text.get(..end).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
        (line, column)
    }

    fn error(
        &self,
        span: Option<Range<usize>>,
        message: String,
        help: Option<String>,
    ) -> ScenarioError {
        let position = span.map(|s| self.position(s.start));
        ScenarioError {
            file: self.file.to_string(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            message,
            help,
        }
    }

    /// The one error of a syntax error, an unknown key or a wrong type.
    fn fatal(&self, message: &str, span: Option<Range<usize>>) -> ScenarioErrors {
        let message = message.trim_end().to_string();
        let help = unknown_key_help(&message);
        ScenarioErrors(vec![self.error(span, message, help)])
    }
}

/// Key paths → spans, and value spans → key paths.
pub(super) struct SpanIndex {
    paths: BTreeMap<String, Range<usize>>,
    values: BTreeMap<usize, String>,
}

impl SpanIndex {
    fn new(root: &toml_edit::Table) -> SpanIndex {
        let mut index = SpanIndex {
            paths: BTreeMap::from([(String::new(), 0..0)]),
            values: BTreeMap::new(),
        };
        index.table("", root);
        index
    }

    fn table(&mut self, path: &str, table: &dyn TableLike) {
        for (key, item) in table.iter() {
            let path = join(path, key);
            // A table of dotted keys has no span of its own: its key does.
            let key_span = table.key(key).and_then(toml_edit::Key::span);
            self.item(&path, item, key_span);
        }
    }

    fn item(&mut self, path: &str, item: &Item, key_span: Option<Range<usize>>) {
        match item {
            Item::Value(v) => self.value(path, v),
            Item::Table(t) => {
                self.mark(path, t.span().or(key_span));
                self.table(path, t);
            }
            Item::ArrayOfTables(a) => {
                self.mark(path, a.span().or(key_span));
                for (i, t) in a.iter().enumerate() {
                    let path = format!("{path}[{i}]");
                    self.mark(&path, t.span());
                    self.table(&path, t);
                }
            }
            Item::None => {}
        }
    }

    fn value(&mut self, path: &str, value: &Value) {
        if let Some(span) = value.span() {
            self.values.insert(span.start, path.to_string());
        }
        self.mark(path, value.span());
        match value {
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    self.value(&format!("{path}[{i}]"), v);
                }
            }
            Value::InlineTable(t) => self.table(path, t),
            _ => {}
        }
    }

    fn mark(&mut self, path: &str, span: Option<Range<usize>>) {
        if let Some(span) = span {
            self.paths.insert(path.to_string(), span);
        }
    }

    /// The span of `path`, or of the nearest written table above it.
    fn locate(&self, path: &str) -> Range<usize> {
        let mut path = path;
        loop {
            if let Some(span) = self.paths.get(path) {
                return span.clone();
            }
            path = match path.strip_suffix(']').and_then(|p| p.rsplit_once('[')) {
                Some((array, _)) => array,
                None => path.rsplit_once('.').map_or("", |(table, _)| table),
            };
        }
    }
}

/// Parses, validates and places every problem.
pub(super) fn parse(source: &Source) -> Result<Scenario, ScenarioErrors> {
    let document = toml_edit::ImDocument::parse(source.text)
        .map_err(|e| source.fatal(e.message(), e.span()))?;
    // A file written for another format version would mostly produce noise
    // (unknown keys), so the version is checked on its own first.
    if let Some(Item::Value(Value::Integer(v))) = document.get("version") {
        if *v.value() != i64::from(FORMAT_VERSION) {
            let error = source.error(v.span(), unsupported_version(*v.value()), None);
            return Err(ScenarioErrors(vec![error]));
        }
    }
    let mut shapes = Vec::new();
    shape_errors(source, document.as_table(), &[], &mut shapes);
    if !shapes.is_empty() {
        shapes.sort_by_key(|e| (e.line, e.column));
        return Err(ScenarioErrors(shapes));
    }
    let mut table = document.as_table().clone();
    let mut index = SpanIndex::new(document.as_table());
    let aliased = read_flink_keys(source, &mut table, document.as_table(), &mut index)?;
    let (file, refused) = deserialize(source, &document, table, &mut index)?;
    let line = |path: &str| {
        let span = index.paths.get(path)?;
        Some(source.position(span.start).0)
    };
    let mut problems = match validate(&file, &line) {
        Ok(scenario) if refused.is_empty() => return Ok(scenario),
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    };
    // A refused value is reported once, not again as missing.
    let missing = |p: &Problem| p.message.starts_with("missing required key");
    problems.retain(|p| !(missing(p) && refused.iter().any(|r| r.path == p.path)));
    // Refused values first: at the same place, what depends on them follows.
    // A problem of a key written Flink's way names that key too.
    let flink_help = |p: &Problem| {
        let (_, _, key) = aliased.iter().find(|(path, _, _)| *path == p.path)?;
        let written = format!("written as Flink's `{key}` in [flink]");
        Some(match &p.help {
            Some(help) => format!("{help} ({written})"),
            None => written,
        })
    };
    let mut errors: Vec<ScenarioError> = refused
        .into_iter()
        .chain(problems)
        .map(|p| {
            let help = flink_help(&p).or(p.help);
            source.error(Some(index.locate(&p.path)), p.message, help)
        })
        .collect();
    errors.sort_by_key(|e| (e.line, e.column));
    Err(ScenarioErrors(errors))
}

/// `table` (from `document`, Flink's keys translated) deserialized, and
/// the values serde refused: each is taken out of the table (so that it
/// gets its default) before deserializing again; a value refused that
/// cannot be taken out (a wrong type) ends the parse.
fn deserialize(
    source: &Source,
    document: &toml_edit::ImDocument<&str>,
    table: toml_edit::Table,
    index: &mut SpanIndex,
) -> Result<(File, Vec<Problem>), ScenarioErrors> {
    // Values serde refuses, each taken out of the document (so that it
    // gets its default) before deserializing again. The table is
    // deserialized as it is, not a copy (a valid file's, the common case,
    // is the size of the file again); after a refusal it is built again
    // from the document without the values refused so far.
    let mut refused: Vec<Problem> = Vec::new();
    let rebuild = |index: &mut SpanIndex, refused: &[Problem]| {
        let mut table = document.as_table().clone();
        read_flink_keys(source, &mut table, document.as_table(), index)?;
        for p in refused {
            if let Some((t, k)) = parent(&mut table, &p.path) {
                t.remove(k);
            }
        }
        Ok::<_, ScenarioErrors>(table)
    };
    let mut next = Some(table);
    let file = loop {
        let table = match next.take() {
            Some(table) => table,
            None => rebuild(index, &refused)?,
        };
        let doc = toml_edit::DocumentMut::from(table);
        let error = match toml_edit::de::from_document::<File>(doc) {
            Ok(file) => break file,
            Err(error) => error,
        };
        let mut table = rebuild(index, &refused)?;
        let message = error.message();
        let path = error.span().and_then(|s| index.values.get(&s.start));
        let removed = path
            .filter(|_| !message.starts_with("invalid type:"))
            .filter(|path| {
                parent(&mut table, path)
                    .and_then(|(t, k)| t.remove(k))
                    .is_some()
            });
        match removed {
            Some(path) => {
                let (message, help) = describe(key_of(path), message);
                refused.push(Problem {
                    path: path.clone(),
                    message,
                    help,
                });
                next = Some(table);
            }
            None => return Err(source.fatal(message, error.span())),
        }
    };
    Ok((file, refused))
}

/// Flink's keys (`[flink]`) become in `table` the keys they stand for,
/// each placed at the Flink key's value in `index`; the keys set.
fn read_flink_keys(
    source: &Source,
    table: &mut toml_edit::Table,
    original: &toml_edit::Table,
    index: &mut SpanIndex,
) -> Result<Vec<flink::Set>, ScenarioErrors> {
    let native_line = |path: &str| {
        let span = index.paths.get(path)?;
        Some(source.position(span.start).0)
    };
    let aliased = flink::translate(table, original, &native_line).map_err(|found| {
        let mut errors: Vec<ScenarioError> = found
            .into_iter()
            .map(|(span, message, help)| source.error(span, message, help))
            .collect();
        errors.sort_by_key(|e| (e.line, e.column));
        ScenarioErrors(errors)
    })?;
    for (path, span, _) in &aliased {
        if let Some(span) = span {
            index.values.insert(span.start, path.clone());
            index.paths.insert(path.clone(), span.clone());
        }
    }
    Ok(aliased)
}

/// A value where the schema has a table (`[faults]`) or an array of tables
/// (`[[operators]]`), each placed, below `path` (keys) in `table`. Serde
/// would read an array in a table's place field by field, so these are
/// checked first. Which keys hold tables is asked of the schema: [`File`]
/// reads an empty table there, or an array of one.
fn shape_errors(
    source: &Source,
    table: &dyn TableLike,
    path: &[&str],
    errors: &mut Vec<ScenarioError>,
) {
    for (key, item) in table.iter() {
        let path = [path, &[key]].concat();
        let value = match item {
            Item::Table(t) => {
                shape_errors(source, t, &path, errors);
                continue;
            }
            Item::Value(v) => v,
            _ => continue,
        };
        let holds = |empty: toml::Value| {
            let nest =
                |v, k: &&str| toml::Value::Table(toml::Table::from_iter([(k.to_string(), v)]));
            File::deserialize(path.iter().rev().fold(empty, nest)).is_ok()
        };
        let tables = |n| toml::Value::Array(vec![toml::Table::new().into(); n]);
        // Both a table (every key at its default) and an array of tables
        // read `[]`, so most keys take one question.
        let (array, table) = match holds(tables(0)) {
            false => (false, false),
            true if holds(tables(1)) => (true, false),
            true => (false, holds(toml::Table::new().into())),
        };
        let misshapen = match value {
            Value::InlineTable(t) => {
                shape_errors(source, t as &dyn TableLike, &path, errors);
                array
            }
            Value::Array(items) if array => !items.iter().all(|v| v.is_inline_table()),
            _ => array || table,
        };
        if !misshapen {
            continue;
        }
        let (path, what) = (path.join("."), value.type_name());
        let (message, help) = if array {
            (
                format!("`{path}` must be an array of tables, not {what}"),
                format!("write each entry as a [[{path}]] table"),
            )
        } else {
            (
                format!("`{path}` must be a table, not {what}"),
                format!("write its keys under a [{path}] table"),
            )
        };
        errors.push(source.error(value.span(), message, Some(help)));
    }
}

/// The table that holds the value at `path` (`faults.coordinator.storage`,
/// `operators[2].kind`) and the value's key. `None` if there is none.
fn parent<'t>(
    table: &'t mut toml_edit::Table,
    path: &'t str,
) -> Option<(&'t mut dyn TableLike, &'t str)> {
    let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
    let mut here: &mut dyn TableLike = table;
    for segment in parent.split('.').filter(|s| !s.is_empty()) {
        let (name, index) = match segment.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
            Some((name, i)) => (name, Some(i.parse::<usize>().ok()?)),
            None => (segment, None),
        };
        let mut item = here.get_mut(name)?;
        if let Some(i) = index {
            item = item.get_mut(i)?;
        }
        here = item.as_table_like_mut()?;
    }
    Some((here, key))
}

/// A refused value's message, for the key that holds it: serde's "unknown
/// variant" becomes "unknown algorithm `x`" with the known names and the
/// closest one; any other message (a duration's) stays as it is. `--vary`
/// uses it too.
pub(super) fn describe(key: &str, message: &str) -> (String, Option<String>) {
    const NOUNS: &[(&str, &str, &str)] = &[
        ("algorithm", "algorithm", "algorithms"),
        ("kind", "operator kind", "operator kinds"),
        ("partitioning", "partitioning", "partitioning schemes"),
        ("key_distribution", "key distribution", "key distributions"),
        ("storage", "storage", "storage kinds"),
        ("guarantee", "guarantee", "guarantees"),
        ("placement", "placement", "placements"),
        ("failover", "failover strategy", "failover strategies"),
        ("strategy", "restart strategy", "restart strategies"),
        ("on_memory_loss", "on_memory_loss choice", "choices"),
    ];
    // Odd-numbered pieces between backticks are the quoted names; the
    // algorithm and operator kind registries list names after "(known: ".
    let mut quoted = message.split('`').skip(1).step_by(2);
    let name = quoted.next().unwrap_or_default();
    let names: Vec<&str> = match message.split_once(" (known: ") {
        _ if message.starts_with("unknown variant `") => quoted.collect(),
        Some((_, list))
            if message.starts_with("unknown algorithm `")
                || message.starts_with("unknown operator kind `") =>
        {
            list.trim_end_matches(')').split(", ").collect()
        }
        _ => return (message.to_string(), None),
    };
    let (what, plural) = NOUNS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map_or((key, "names"), |(_, one, many)| (*one, *many));
    (
        format!("unknown {what} `{name}`"),
        Some(known(name, &names, plural)),
    )
}

/// "did you mean `x`? known things: a, b, c", or only the list.
pub fn known(word: &str, names: &[&str], plural: &str) -> String {
    let list = names.join(", ");
    match closest(word, names.iter().copied()) {
        Some(close) => format!("did you mean `{close}`? known {plural}: {list}"),
        None => format!("known {plural}: {list}"),
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`": suggests the
/// closest expected key, if one is close.
fn unknown_key_help(message: &str) -> Option<String> {
    if !message.starts_with("unknown field `") {
        return None;
    }
    let mut quoted = message.split('`').skip(1).step_by(2);
    let unknown = quoted.next()?;
    let in_flink = format!(
        "Flink's configuration keys (`{unknown}.…`) go in a [flink] table; docs/scenarios.md lists those ckptsim reads"
    );
    if unknown == "restart-strategy" {
        return Some(format!("{RESTART_HELP}; or {in_flink}"));
    }
    if flink::FLINK_ROOTS.contains(&unknown) {
        return Some(in_flink);
    }
    if let Some(close) = closest(unknown, quoted) {
        return Some(format!("did you mean `{close}`?{}", flink_spelling(close)));
    }
    // A Flink key's last part (`min-pause`, `buffers-per-channel`) written
    // in ckptsim's table: name ckptsim's key and Flink's.
    let last = |a: &&flink::Alias| a.flink.rsplit('.').next().unwrap_or_default();
    let leaves = flink::ALIASES.iter().map(|a| last(&a));
    let by_leaf = match closest(unknown, leaves) {
        Some(close) if unknown.contains('-') => flink::ALIASES.iter().find(|a| last(a) == close),
        _ => flink::ALIASES.iter().find(|a| last(a) == unknown),
    };
    if let Some(a) = by_leaf {
        return Some(format!(
            "did you mean `{}`? (Flink's `{}`, which a [flink] table takes as it is)",
            a.native.rsplit('.').next().unwrap_or_default(),
            a.flink
        ));
    }
    // Flink keeps the restart strategy in the job's configuration; here it
    // belongs to the fault model.
    let restart = [
        "restart",
        "backoff",
        "attempts",
        "failure_rate",
        "failure-rate",
    ];
    restart
        .iter()
        .any(|w| unknown.contains(w))
        .then(|| RESTART_HELP.to_string())
}

/// Where restart settings are.
const RESTART_HELP: &str =
    "restart settings are in [faults] (`restart_delay`, `max_restarts`, `failover`) \
     and [faults.restart] (`strategy`, `max_backoff`, `backoff_multiplier`, \
     `reset_threshold`, `max_failures`, `interval`)";

/// " (Flink's `execution.checkpointing.min-pause`)" when the ckptsim key
/// named `key` (in any table) has exactly one Flink spelling.
fn flink_spelling(key: &str) -> String {
    let mut names = flink::ALIASES
        .iter()
        .filter(|a| a.native.rsplit('.').next() == Some(key));
    match (names.next(), names.next()) {
        (Some(a), None) => format!(" (Flink's `{}`)", a.flink),
        _ => String::new(),
    }
}

/// The candidate closest to `word` by edit distance, if within 2 (and not
/// equal). Ties go to the earliest candidate.
pub(super) fn closest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(word, candidate);
        if distance == 0 || distance > 2 {
            continue;
        }
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}
