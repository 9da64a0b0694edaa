//! The checkers: they decide whether a run kept its promise. A verdict is
//! data (a list of violations, each with the virtual time, the invariant and
//! an explanation), never a panic. Every check reports reachability counters
//! beside its verdict, so that a pass cannot be vacuous.
//!
//! Each invariant is its own module, a function of the run output, the
//! oracle and the scenario ([`Input`]), found through [`checker`], the
//! registry keyed by [`CheckId`]. `judge` runs every registered check and
//! files each violation under the check its id names, whoever reported it:
//! a violation can never be dropped for want of a reader.

pub mod channel_order;
pub mod checkpoint_files;
pub mod commit;
pub mod consistent_cut;
pub mod exactly_once_output;
pub mod failure_accounting;
pub mod finishing;
pub mod late_commit;
pub mod liveness;
pub mod lost_commits;
pub mod open_transactions;
pub mod oracle;
pub mod progress;
pub mod protocol;
pub mod resources;
pub mod routing;
pub mod state;
pub mod timers;
pub mod watermarks;

use crate::runtime::{RunOutcome, RunOutput};
use crate::scenario::{Guarantee, Scenario};
// Re-exported so that `check::Violation` keeps working; they live in
// `verdict`, below the runtime, which reports violations too.
pub use crate::verdict::{CheckId, Violation};
use oracle::Oracle;
use serde::Serialize;
use std::collections::BTreeMap;

/// The result of one check.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub name: &'static str,
    pub passed: bool,
    /// Evidence the check looked at something: `(what, how many)`.
    pub reach: Vec<(&'static str, u64)>,
    pub violations: Vec<Violation>,
}

/// The verdict of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub checks: Vec<CheckResult>,
    pub guarantee: Guarantee,
    pub expected: Guarantee,
    pub passed: bool,
    /// Sinks whose output the oracle could not judge (ids): a run that
    /// passed with one is `incomplete`, never a pass.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<String>,
    /// Why each of `unjudged` is not judged, in the same order.
    #[serde(skip)]
    pub unjudged_reasons: Vec<&'static str>,
}

impl Verdict {
    pub fn violations(&self) -> impl Iterator<Item = &Violation> {
        self.checks.iter().flat_map(|c| c.violations.iter())
    }
}

/// What every check reads: the run, the oracle, the scenario, and the
/// output comparison, which two checks share (the guarantee it measures is
/// both the verdict's and what the state check allows).
pub struct Input<'a> {
    pub scenario: &'a Scenario,
    pub oracle: &'a Oracle,
    pub run: &'a RunOutput,
    /// The job finished: its output and state must be complete.
    pub finished: bool,
    pub output: exactly_once_output::Compared,
}

impl Input<'_> {
    /// When the run ended: the time of every finding made at the end.
    pub fn end_ns(&self) -> u64 {
        self.run.end_time.0
    }

    /// The run promised exact state, not only a guarantee on its output:
    /// duplicated state effects are what a weaker guarantee allows.
    pub fn exact_state_promised(&self) -> bool {
        matches!(
            self.run.expected,
            Guarantee::ExactlyOnce | Guarantee::EffectivelyOnce
        )
    }
}

/// What one check found: its violations and its reach.
pub struct Finding {
    pub violations: Vec<Violation>,
    pub reach: Vec<(&'static str, u64)>,
}

/// A check: a function of what the run left behind.
pub type Check = fn(&Input) -> Finding;

/// The registry: the check that judges each id. `None` only for
/// [`CheckId::Panic`], which the commands that run many seeds report for a
/// run that panicked ([`crate::panics`]).
pub fn checker(id: CheckId) -> Option<Check> {
    Some(match id {
        CheckId::ConsistentCut => consistent_cut::check,
        CheckId::ExactlyOnceOutput => exactly_once_output::check,
        CheckId::State => state::check,
        CheckId::Liveness => liveness::check,
        CheckId::Routing => routing::check,
        CheckId::Protocol => protocol::check,
        CheckId::Commit => commit::check,
        CheckId::LateCommit => late_commit::check,
        CheckId::ChannelOrder => channel_order::check,
        CheckId::Progress => progress::check,
        CheckId::Resources => resources::check,
        CheckId::FailureAccounting => failure_accounting::check,
        CheckId::Watermarks => watermarks::check,
        CheckId::Timers => timers::check,
        CheckId::Finishing => finishing::check,
        CheckId::CheckpointFiles => checkpoint_files::check,
        CheckId::OpenTransactions => open_transactions::check,
        CheckId::LostCommits => lost_commits::check,
        CheckId::Panic => return None,
    })
}

/// The registered checks, in report order.
pub fn registered() -> impl Iterator<Item = (CheckId, Check)> {
    CheckId::ALL
        .into_iter()
        .filter_map(|id| checker(id).map(|c| (id, c)))
}

/// Judges a run of `scenario` against the oracle.
pub fn judge(scenario: &Scenario, oracle: &Oracle, run: &RunOutput) -> Verdict {
    let finished = run.outcome == RunOutcome::Finished;
    let input = Input {
        scenario,
        oracle,
        run,
        finished,
        output: exactly_once_output::compare(oracle, run, finished),
    };
    let findings: Vec<(CheckId, Finding)> = registered().map(|(id, c)| (id, c(&input))).collect();
    // Filed by id, the runtime's findings first (they are earlier).
    let mut by_id: BTreeMap<CheckId, Vec<Violation>> = BTreeMap::new();
    let found = findings.iter().flat_map(|(_, f)| &f.violations);
    for v in run.evidence.violations.iter().chain(found) {
        by_id.entry(v.check).or_default().push(v.clone());
    }
    let checks: Vec<CheckResult> = findings
        .into_iter()
        .map(|(id, f)| {
            let violations = by_id.remove(&id).unwrap_or_default();
            CheckResult {
                name: id.name(),
                passed: violations.is_empty(),
                reach: f.reach,
                violations,
            }
        })
        .collect();
    assert!(
        by_id.is_empty(),
        "violations of checks that judge never runs: {by_id:?}"
    );
    Verdict {
        passed: checks.iter().all(|c| c.passed),
        checks,
        guarantee: input.output.guarantee,
        expected: run.expected,
        unjudged: oracle.unjudged_names(),
        unjudged_reasons: oracle.unjudged_reasons(),
    }
}
