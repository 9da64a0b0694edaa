//! `[replay]`: what a run takes without `--seed` and `--mutant`, and the
//! schedule a scripted run follows.

use super::*;

section! {
    /// `[replay]`: what `run` and `shrink` take without `--seed`, and `run`,
    /// `sweep` and `shrink` without `--mutant`. A shrunk reproducer writes it (with its
    /// algorithm in `[checkpoint]`), so that the file alone fails as the
    /// run it was shrunk from.
    Replay => ReplaySpec {
        /// The seed `run` and `shrink` use without `--seed`.
        #[key("integer, ≥ 0", "`0`")]
        seed: u64 = 0,
        /// The mutants `run`, `sweep` and `shrink` switch on without `--mutant`; an unknown
        /// name is refused at its position.
        #[key("array of mutant names (`ckptsim list`)", "`[]`")]
        mutants: Hand<Vec<String>> = Vec::new(),
        /// A schedule `ckptsim explore` found
        /// ([exploring.md](exploring.md#ckptsim-explore)): the run's *i*-th choice takes
        /// alternative `choices[i]` (past the last, the last), every choice after the list
        /// the first. A choice is which of two or more ready inputs a task reads (lowest
        /// input first), or a message's latency on a channel whose bounds differ (its
        /// minimum, then its maximum). It replaces `[network] input_order` and the latency
        /// draws. Written only when set.
        #[key("array of integers, each 0–255", "none")]
        #[serde(skip_serializing_if = "Vec::is_empty")]
        choices: Hand<Vec<u32>> = Vec::new(),
        /// Subtasks that may crash once, before any of their steps, in a scripted run:
        /// before each step whether to crash there is a choice (no crash first). `ckptsim
        /// explore --crash` sets it. Written only when set.
        #[key("array of subtasks, `\"op[i]\"`", "none")]
        #[serde(skip_serializing_if = "Vec::is_empty")]
        crash_points: Custom<Vec<String>, Vec<(OperatorId, u32)>> = Vec::new(),
        /// In a scripted run, mail orders are choices too: before a step of a task
        /// whose mailbox holds mails, whether they run first (the default) or wait until
        /// after the step (a mail that reached the task just after its thread looked at
        /// the mailbox). `ckptsim explore --mail-orders` sets it. Written only when set.
        #[key("boolean", "`false`")]
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        mail_orders: bool = false,
    }
}
