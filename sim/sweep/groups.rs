//! Failing seeds grouped by signature: the same checks and a first
//! message of the same shape.

use super::Failure;
use serde::{Deserialize, Serialize};

/// Failing seeds that fail the same way: the same checks, and a first
/// message of the same shape (numbers as `N`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureGroup {
    pub checks: Vec<String>,
    pub shape: String,
    /// The group's seeds, lowest first.
    pub seeds: Vec<u64>,
    /// The lowest seed's message, replay line and shrink command.
    pub example: String,
    pub replay: String,
    pub shrink: String,
}

impl FailureGroup {
    /// The failures grouped by signature: largest group first, then by
    /// lowest seed.
    pub fn of(failures: &[Failure]) -> Vec<FailureGroup> {
        let mut groups: Vec<FailureGroup> = Vec::new();
        for f in failures {
            let message = f
                .violation
                .clone()
                .or_else(|| f.nondeterminism.clone())
                .unwrap_or_default();
            let shape = shape_of(&message);
            match groups
                .iter_mut()
                .find(|g| g.checks == f.checks && g.shape == shape)
            {
                Some(g) => g.seeds.push(f.seed),
                None => groups.push(FailureGroup {
                    checks: f.checks.clone(),
                    shape,
                    seeds: vec![f.seed],
                    example: message,
                    replay: f.replay.clone(),
                    shrink: format!(
                        "{} --out repro-{}.toml",
                        f.replay.replacen(" run ", " shrink ", 1),
                        f.seed
                    ),
                }),
            }
        }
        groups.sort_by(|a, b| {
            b.seeds
                .len()
                .cmp(&a.seeds.len())
                .then(a.seeds[0].cmp(&b.seeds[0]))
        });
        groups
    }
}

/// A violation message's shape: the time it happened dropped, every number
/// (with its decimals) written `N`, so that failures that differ only in
/// counts, times, subtask indices and ids fall together.
pub(super) fn shape_of(message: &str) -> String {
    // "check at 240.35ms: message" → "check: message".
    let message = match (message.find(" at "), message.find(": ")) {
        (Some(at), Some(colon)) if at < colon => format!("{}{}", &message[..at], &message[colon..]),
        _ => message.to_string(),
    };
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|&d| d.is_ascii_digit() || d == '.' || d == '_')
            {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    crate::engine::text::plural_shape(&out)
}
