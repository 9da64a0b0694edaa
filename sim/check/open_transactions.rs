//! Open transactions of the transactional log: no transaction stays open
//! without an owner, so every partition's last stable offset moves on.
//!
//! A `read_committed` reader of a partition reads only below its last
//! stable offset, the first offset of its earliest open transaction. A
//! transaction that the task that opened it will never end (the task was
//! restarted, and the restore did not abort it) holds every such reader
//! until the broker's transaction timeout, an hour by Flink's Kafka sink's
//! default. The bound: the restore of the task that opened it, which
//! precedes every checkpoint of the new attempt. So the runtime looks at
//! every checkpoint completion for transactions that a task restarted
//! since opened, and at the end of a finished job for any transaction open
//! at all ([`crate::runtime::output::StaleTxn`]); this check names each
//! with its transactional id, the attempt that opened it and where readers
//! are stuck.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::runtime::output::StaleTxn;
use crate::verdict::{CheckId, Violation};

fn message(s: &StaleTxn) -> String {
    let when = match s.checkpoint {
        Some(id) => format!(
            "when checkpoint {id} of a later attempt completed at {}",
            SimDuration(s.time_ns)
        ),
        None => format!("when the job finished at {}", SimDuration(s.time_ns)),
    };
    let opened = s
        .started_ns
        .map_or(String::new(), |t| format!(" at {}", SimDuration(t)));
    let stuck: Vec<String> = (s.stalled.iter())
        .map(|&(p, lso, hw)| format!("partition {p} at offset {lso} of {hw}"))
        .collect();
    let readers = match stuck.is_empty() {
        true => String::new(),
        false => format!(
            "; every read_committed reader of {} is stuck ({})",
            s.sink,
            stuck.join(", ")
        ),
    };
    format!(
        "transaction `{}` (epoch {}), opened by attempt {} of {}[{}]{opened}, was still open {when}: nothing ends it before the broker's transaction timeout ({}){readers}",
        s.transactional_id,
        s.epoch,
        s.attempt,
        s.sink,
        s.subtask,
        SimDuration(s.timeout_ns),
    )
}

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let violations = (run.evidence.log_open.iter())
        .map(|s| Violation {
            check: CheckId::OpenTransactions,
            time_ns: s.time_ns,
            message: message(s),
        })
        .collect();
    Finding {
        violations,
        reach: vec![
            ("open transactions examined", run.counters.log_open_checked),
            (
                "lingering transactions aborted at restores",
                run.counters.log_lingering_aborted,
            ),
        ],
    }
}
