//! Protocol: per task and checkpoint at most one snapshot, one decline and
//! one cancellation marker per output and cause; never notified complete
//! after an abort; completed ids increase; restores succeed; no commit or
//! sink write is refused; no savepoint enters the completed-checkpoint
//! store or is restored by a failover; nothing is triggered while a task
//! restores its state from files. The external store's refusals are
//! judged here; the runtime still reports the other facts as violations
//! while it runs.

use super::{Finding, Input};
use crate::protocol::Guarantee;
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let end = input.end_ns();
    let mut violations = Vec::new();
    for (txn, state) in &run.store.refused_writes {
        let state = match state {
            Some(s) => format!("in state {s:?}"),
            None => "that was never opened".to_string(),
        };
        violations.push(Violation {
            check: CheckId::Protocol,
            time_ns: end,
            message: format!(
                "a sink wrote to {txn} {state}: the write was refused (its records are lost)"
            ),
        });
    }
    let replayed = replayed_refusals(input);
    for (txn, again) in run.store.refused.iter().zip(&replayed) {
        if *again && run.expected == Guarantee::AtLeastOnce {
            continue; // nothing lost, and at-least-once captures late committables
        }
        let what = match again {
            true => {
                "it was aborted; its records were committed again by their replay, \
                     but a committer held a committable that its writer's restore aborted"
            }
            false => "it was aborted or never opened (its records are lost)",
        };
        violations.push(Violation {
            check: CheckId::Protocol,
            time_ns: end,
            message: format!("commit of {txn} refused: {what}"),
        });
    }
    let c = &run.counters;
    let forgiven = replayed.iter().filter(|&&r| r).count() as u64;
    Finding {
        violations,
        reach: vec![
            ("snapshots", c.snapshots),
            ("checkpoints aborted", c.checkpoints_aborted),
            ("refused commits of replayed transactions", forgiven),
            (
                "triggers held back by restores",
                c.triggers_skipped_restoring,
            ),
        ],
    }
}

/// Per refused commit: the transaction was aborted and each of its records
/// was committed in another (the restore replayed them). At-least-once
/// checkpoints let a committer snapshot a committable that arrived after
/// its writer's barrier; the writer restored from that checkpoint aborts
/// the transaction (as Flink's writers abort lingering ones), so its
/// commit is refused (Flink's Kafka committer logs the invalid state and
/// drops it) while its records come again.
fn replayed_refusals(input: &Input) -> Vec<bool> {
    let store = &input.run.store;
    if store.refused.is_empty() {
        return Vec::new();
    }
    let committed: std::collections::BTreeSet<(u32, crate::model::Lineage)> = store
        .committed()
        .iter()
        .map(|r| (r.sink, r.lineage))
        .collect();
    (store.refused.iter())
        .map(|txn| {
            store.txn_records(txn).is_some_and(|rs| {
                !rs.is_empty() && (rs.iter()).all(|r| committed.contains(&(txn.sink, r.lineage)))
            })
        })
        .collect()
}
