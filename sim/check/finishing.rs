//! Finishing: tasks that reach the end of their data exit as Flink's do
//! (FLIP-147, `runtime/world/exit.rs`), and the job keeps its promises
//! while they do.
//!
//! - **Checkpoints keep completing while tasks exit.** A task that ended
//!   its data waits for a checkpoint taken after it, and for its
//!   notification; if the coordinator stops triggering, or triggers only
//!   tasks that have exited, it waits forever. When a run that should have
//!   finished (the liveness check's endings) did not, each task still
//!   waiting is named with what it waited for.
//! - **A restore never runs a finished operator again.** A subtask
//!   restored from a checkpoint in which it had finished must not read a
//!   record or poll its source (reported by the runtime when it happens);
//!   one that had not finished is restored running, which the output checks
//!   judge (its records would be missing).
//!
//! - **No record arrives after its receiver's end of input.** A task whose
//!   every input delivered `EndOfData` has finished its operators; Flink
//!   drops what it reads after that (`FinishedDataOutput`), so a sender
//!   that emits after its own `EndOfData` (a Sink V2 committer forwarding
//!   its final checkpoint's committables on Flink 2.3, FLINK-38614) loses
//!   it. Each drop is named, with the sender.
//!
//! - **Nothing is left behind at an exit.** An operator whose task exits
//!   (not for a stop-with-savepoint, whose savepoint keeps it) holding work
//!   nothing will finish (committables never committed or sent on, a
//!   global committer's checkpoints never published) is named with why.
//!
//! What the job emitted before it finished is committed exactly once: the
//! exactly-once-output, commit and progress checks judge that, the last
//! transactions of every sink included.

use super::{Finding, Input};
use crate::runtime::RunOutcome;
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let run = input.run;
    let c = &run.counters;
    let mut violations = Vec::new();
    let should_have_finished = matches!(
        run.outcome,
        RunOutcome::EventLimit | RunOutcome::TimeLimit | RunOutcome::Stalled
    );
    // A restart loop is the progress check's verdict: nothing can finish
    // while the job loops.
    let looping = super::progress::restart_loop(run, input.scenario.limits.restart_loop).is_some();
    if should_have_finished && !looping {
        for why in &run.evidence.not_exited {
            violations.push(Violation {
                check: CheckId::Finishing,
                time_ns: input.end_ns(),
                message: why.clone(),
            });
        }
    }
    // Work an operator held when its task exited: lost, in a job that
    // promises not to lose output.
    if !crate::protocol::Guarantee::AtMostOnce.satisfies(run.expected) {
        for (at, what) in &run.evidence.held_at_exit {
            violations.push(Violation {
                check: CheckId::Finishing,
                time_ns: *at,
                message: what.clone(),
            });
        }
    }
    // Records dropped after a task's end of input: lost, whatever the
    // output checks then make of it.
    for (at, what) in &run.evidence.dropped_after_end_of_data {
        violations.push(Violation {
            check: CheckId::Finishing,
            time_ns: *at,
            message: what.clone(),
        });
    }
    Finding {
        violations,
        reach: vec![
            ("final checkpoints taken", c.final_checkpoints_taken),
            (
                "tasks finished while others ran",
                c.tasks_finished_while_others_ran,
            ),
            ("exits waiting for an ack", c.exits_waiting_for_ack),
            (
                "checkpoints with finished tasks",
                c.checkpoints_with_finished_tasks,
            ),
            (
                "checkpoints failed: task finished",
                c.checkpoints_failed_task_finished,
            ),
            ("tasks restored finished", c.tasks_restored_finished),
            (
                "records dropped after end of data",
                c.records_dropped_after_end_of_data,
            ),
        ],
    }
}
