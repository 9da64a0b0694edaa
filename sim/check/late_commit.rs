//! Late commits: every transaction is committed when its commit falls
//! due, not later (Flink's two-phase-commit contract, per transaction).
//!
//! A transaction pre-committed for checkpoint N is due at the first of:
//! the first notification of a checkpoint at or above N its sink task
//! receives (a 2PC sink, or the committer that holds its committable) after
//! the committable reached it, or the restore of a checkpoint whose
//! snapshot held it. (A committable that reaches a committer after it knew
//! checkpoint N complete waits for the next notification: Flink 2.x's
//! `CommitterOperator.processElement` only collects.) The runtime writes
//! each such point down with what stayed pre-committed right after it
//! ([`crate::runtime::output::CommitDue`]); this check names each late
//! transaction once, at the first point it was due, with when it was
//! committed in the end, if ever. Output that comes late is still
//! complete, so no other check sees it: readers wait, and a job that ends
//! without a final checkpoint loses it.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::model::store::TxnId;
use crate::runtime::output::{CommitDue, DueCause};
use crate::verdict::{CheckId, Violation};
use std::collections::{BTreeMap, BTreeSet};

/// When each committed transaction was committed.
fn commit_times(input: &Input) -> BTreeMap<TxnId, u64> {
    let mut at = BTreeMap::new();
    for (record, txn) in input.run.store.committed().with_txns() {
        if let Some(txn) = txn {
            at.entry(txn).or_insert(record.committed_at.0);
        }
    }
    at
}

/// The violation of transaction `txn`, pre-committed for `cp`, still
/// pre-committed after point `d`.
fn late(input: &Input, d: &CommitDue, txn: TxnId, cp: u64, committed: Option<u64>) -> Violation {
    let name = &input.run.evidence.task_names[d.task as usize];
    let at = SimDuration(d.time_ns);
    let why = match d.cause {
        DueCause::Notified => format!(
            "sink {name} was notified at {at} that checkpoint {} completed, but {txn}, pre-committed for checkpoint {cp}, was not committed then",
            d.checkpoint
        ),
        DueCause::Restored => format!(
            "task {name} restored checkpoint {} at {at}, whose snapshot held {txn} pre-committed for checkpoint {cp}, but the restore did not commit it",
            d.checkpoint
        ),
    };
    let then = match committed {
        Some(t) => format!(
            "; it was committed only at {} ({} late)",
            SimDuration(t),
            SimDuration(t.saturating_sub(d.time_ns))
        ),
        None => "; it was never committed".to_string(),
    };
    Violation {
        check: CheckId::LateCommit,
        time_ns: d.time_ns,
        message: format!("{why}{then}"),
    }
}

pub fn check(input: &Input) -> Finding {
    let evidence = &input.run.evidence;
    // Commit times cost a pass over every committed record: only when
    // something was late.
    let any_late = evidence
        .commits_due
        .iter()
        .any(|d| !d.precommitted.is_empty());
    let committed = if any_late {
        commit_times(input)
    } else {
        BTreeMap::new()
    };
    let mut reported = BTreeSet::new();
    let mut violations = Vec::new();
    for d in &evidence.commits_due {
        for &(txn, cp) in &d.precommitted {
            if reported.insert(txn) {
                violations.push(late(input, d, txn, cp, committed.get(&txn).copied()));
            }
        }
    }
    let count = |c: DueCause| {
        evidence
            .commits_due
            .iter()
            .filter(|d| d.cause == c)
            .map(|d| u64::from(d.due))
            .sum::<u64>()
    };
    Finding {
        violations,
        reach: vec![
            ("due at notifications", count(DueCause::Notified)),
            ("due at restores", count(DueCause::Restored)),
        ],
    }
}
