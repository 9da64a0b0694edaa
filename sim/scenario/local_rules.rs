//! What the uncoordinated families (`Coordination::Local`) do not run:
//! savepoints (a savepoint is a coordinated checkpoint), Sink V2 (its
//! committer commits by the writers' checkpoint ids, which are every task's
//! own here), FLIP-27 enumerators (their checkpoint is taken at a
//! coordinated trigger) and union list state (every restore hands each
//! subtask entries of the others: a transfer of state between subtasks
//! that a line of per-task checkpoints, some taken before the last restore
//! and some after, would count twice or not at all). Each is refused where
//! it is written: by the scenario check when the file names the algorithm,
//! by [`unsupported`] when the command line does.

use super::validate::{help, Validator};
use super::*;

/// What `algorithm` cannot run in a job of these operators and this many
/// savepoints: `(key path, message)`, empty for a coordinated algorithm.
fn limits(
    operators: &[OperatorSpec],
    savepoints: usize,
    algorithm: Algorithm,
) -> Vec<(String, String)> {
    if !algorithm.info().coordination.is_local() {
        return Vec::new();
    }
    let name = algorithm.name();
    let mut found = Vec::new();
    for (i, op) in operators.iter().enumerate() {
        let what = match &op.kind {
            OperatorKind::SinkWriter
            | OperatorKind::SinkCommitter
            | OperatorKind::SinkGlobalCommitter => Some(("kind", "a Sink V2 writer or committer")),
            OperatorKind::Source(src) if src.split_assignment == SplitAssignment::Enumerator => {
                Some(("split_assignment", "a FLIP-27 split enumerator"))
            }
            OperatorKind::Buffer {
                redistribution: Redistribution::Union,
                ..
            } => Some(("redistribution", "union list state")),
            _ => None,
        };
        if let Some((key, what)) = what {
            let message = format!("algorithm `{name}` (uncoordinated) does not run {what}");
            found.push((format!("operators[{i}].{key}"), message));
        }
    }
    for i in 0..savepoints {
        let message = format!("algorithm `{name}` (uncoordinated) takes no savepoints");
        found.push((format!("savepoints[{i}]"), message));
    }
    found
}

const FIX: &str = "choose a coordinated algorithm, or remove it";

/// What `algorithm` cannot run in `scenario` (chosen on the command line,
/// not by the file): one line per refusal, `key path: message`, each with
/// the same help.
pub fn unsupported(scenario: &ScenarioData, algorithm: Algorithm) -> Option<String> {
    let found = limits(&scenario.operators, scenario.savepoints.len(), algorithm);
    if found.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (path, message) in found {
        text.push_str(&format!("error: {path}: {message}\n"));
    }
    text.push_str(&format!("  help: {FIX}"));
    Some(text)
}

impl Validator<'_, '_> {
    pub(super) fn local_rules(
        &mut self,
        f: &schema::File,
        operators: &[OperatorSpec],
        algorithm: Algorithm,
    ) {
        for (path, message) in limits(operators, f.savepoints.len(), algorithm) {
            self.at.clear();
            self.report(&path, message, help(FIX));
        }
    }
}
