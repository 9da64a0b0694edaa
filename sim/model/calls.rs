//! What an operator's call tells the runtime besides its output: that it
//! threw (its task fails once the call returns, or when a blocked call
//! returns), and that it blocked its task's thread (a producer's flush
//! waiting for its requests' answers).

use super::operator::Context;
use super::store::OperatorFailure;
use crate::engine::SimTime;

impl Context<'_> {
    /// The operator throws: its task fails (and the job fails over) once
    /// the call returns.
    pub fn fail(&mut self, why: String) {
        self.store.failures.push(OperatorFailure {
            operator: self.operator,
            subtask: self.subtask,
            why,
            injected: false,
        });
    }

    /// The call blocks the task's thread until `until` (a producer's flush
    /// waiting for its requests' answers): the task takes its next step,
    /// and a snapshot taken in the call is written, no earlier.
    pub fn block_until(&mut self, until: SimTime) {
        if until > self.now {
            self.store.blocks.push((self.operator, self.subtask, until));
        }
    }

    /// The operator throws because an injected fault made it give up (a
    /// producer's request expired during a broker outage): its task fails
    /// as with [`Context::fail`], but the failure is the fault's, not the
    /// job's (the liveness check does not hold it against the job).
    pub fn fail_by_fault(&mut self, why: String) {
        self.store.failures.push(OperatorFailure {
            operator: self.operator,
            subtask: self.subtask,
            why,
            injected: true,
        });
    }

    /// The operator throws at `at`, a time its call blocked its thread
    /// until ([`Context::block_until`]): the task fails then, unless it
    /// was redeployed since; `injected` as for [`Context::fail_by_fault`].
    pub fn fail_at(&mut self, at: SimTime, why: String, injected: bool) {
        let failure = OperatorFailure {
            operator: self.operator,
            subtask: self.subtask,
            why,
            injected,
        };
        self.store.failures_at.push((at, self.attempt, failure));
    }
}
