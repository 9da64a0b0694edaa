//! A rescale as one judged run: the job stops with a savepoint, and the
//! job at a new parallelism starts from it (`ckptsim savepoint --stop`,
//! then `ckptsim run --from-savepoint --parallelism`); or, as the
//! autoscaler's last-state upgrade does, the job is cancelled and the
//! checkpoint it retained is restored (`ckptsim run --cancel-at
//! --checkpoint-dir`, then `--from-savepoint DIR/chk-N`), with whatever
//! it left open or uncommitted. The kill matrix runs the mutants that
//! break a rescale this way ([`flow_of`]); the restored run is the one
//! judged.

use crate::engine::SimTime;
use crate::harness::{execute_job, Execution};
use crate::mutant::{Mutant, Mutants};
use crate::runtime::{JobOptions, RunConfig, SnapshotKind};
use crate::savepoint::{rescale, Image};
use crate::scenario::{self, SavepointSpec, Scenario};
use std::sync::Arc;

/// Stop the job with a savepoint requested at `at_ms`, then start it from
/// the savepoint with `operator` at `parallelism`.
#[derive(Clone, Copy, Debug)]
pub struct RescaleFlow {
    pub at_ms: u64,
    pub operator: &'static str,
    pub parallelism: u32,
    /// Restore mode `CLAIM` (else `NO_CLAIM`).
    pub claim: bool,
    /// Cancel the job at `at_ms` and restore the checkpoint it retained
    /// (the scenario retains on cancel), instead of a stop-with-savepoint.
    pub retained: bool,
}

/// The mutants judged through a rescale, each with its flow.
pub const RESCALE_FLOWS: &[(Mutant, RescaleFlow)] = &[
    (
        Mutant::RescaleDropsMovedTimers,
        RescaleFlow {
            at_ms: 100,
            operator: "timers",
            parallelism: 4,
            claim: false,
            retained: false,
        },
    ),
    (
        Mutant::NoClaimReusesRestoredFiles,
        RescaleFlow {
            at_ms: 300,
            operator: "source",
            parallelism: 3,
            claim: false,
            retained: false,
        },
    ),
    (
        Mutant::RestoredPhysicalFileReused,
        RescaleFlow {
            at_ms: 300,
            operator: "source",
            parallelism: 3,
            claim: false,
            retained: false,
        },
    ),
    (
        Mutant::ClaimKeepsRestoredFiles,
        RescaleFlow {
            at_ms: 300,
            operator: "source",
            parallelism: 3,
            claim: true,
            retained: false,
        },
    ),
    (
        Mutant::RemovedSubtasksNotAborted,
        RescaleFlow {
            at_ms: 150,
            operator: "mid",
            parallelism: 2,
            claim: false,
            retained: true,
        },
    ),
    (
        Mutant::RemovedReadersSplitsDropped,
        RescaleFlow {
            at_ms: 150,
            operator: "read",
            parallelism: 2,
            claim: false,
            retained: true,
        },
    ),
];

/// The flow mutant `m` is judged through, if any.
pub fn flow_of(m: Mutant) -> Option<&'static RescaleFlow> {
    RESCALE_FLOWS.iter().find(|(x, _)| *x == m).map(|(_, f)| f)
}

impl RescaleFlow {
    /// Whether `sc` has the operator to rescale.
    pub fn fits(&self, sc: &Scenario) -> bool {
        sc.operators.iter().any(|o| o.id == self.operator)
    }

    /// The savepoint's run (without `cfg`'s mutants), then the restored
    /// run at the new parallelism (with them), judged. `None`: no
    /// savepoint was taken (the job ended first, or it could not be
    /// restored here); nothing to judge for this seed.
    pub fn execute(&self, sc: &Scenario, cfg: &RunConfig) -> Option<Execution> {
        let mut edit = scenario::ScenarioData::clone(sc);
        let at = SimTime(self.at_ms * 1_000_000);
        if !self.retained {
            edit.savepoints = vec![SavepointSpec {
                at,
                stop: true,
                drain: false,
                format: crate::scenario::SavepointFormat::Canonical,
            }];
        }
        let first = scenario::check(&edit, &sc.name).ok()?;
        let job = JobOptions {
            retry_failed_savepoints: true,
            keep_snapshots: true,
            cancel_at: Some(at).filter(|_| self.retained),
            ..JobOptions::default()
        };
        let plain = RunConfig {
            mutants: Mutants::NONE,
            ..cfg.clone()
        };
        let e = execute_job(&first, &plain, &job, cfg.seed);
        let kind = match self.retained {
            true => SnapshotKind::Checkpoint,
            false => SnapshotKind::Savepoint,
        };
        let snap = (e.output.snapshots.iter()).find(|s| s.kind == kind)?;
        let image = Image::from_run(&first, snap, &e.output.store, cfg.seed, 0).ok()?;
        let mut edit = scenario::ScenarioData::clone(sc);
        let op = edit.operators.iter_mut().find(|o| o.id == self.operator)?;
        op.parallelism = self.parallelism;
        let rescaled = scenario::check(&edit, &sc.name).ok()?;
        let mut plan = rescale::assign_with(&image, &rescaled, false, cfg.mutants).ok()?;
        plan.restore.claim = self.claim;
        crate::fault::after_restore(&mut edit.faults, SimTime(image.job_time_ns()));
        let rescaled = scenario::check(&edit, &sc.name).ok()?;
        let job = JobOptions {
            restore: Some(Arc::new(plan.restore)),
            ..JobOptions::default()
        };
        Some(execute_job(&rescaled, cfg, &job, cfg.seed))
    }

    /// The shell line that runs the flow with the command line: the
    /// savepoint into a fresh temporary directory, then the restored run.
    pub fn replay(&self, path: &str, seed: u64, algorithm: &str, mutants: &[&str]) -> String {
        let program = crate::program::name();
        let path = crate::input::shell_word(path);
        let mutants: String = mutants.iter().map(|m| format!(" --mutant {m}")).collect();
        let mode = if self.claim {
            " --restore-mode claim"
        } else {
            ""
        };
        let (first, from) = match self.retained {
            true => (
                format!(
                    "{program} run {path} --cancel-at {}ms --checkpoint-dir \"$d\"",
                    self.at_ms
                ),
                "\"$d\"/chk-*",
            ),
            false => (
                format!(
                    "{program} savepoint {path} --at {}ms --stop --out \"$d/savepoint\"",
                    self.at_ms
                ),
                "\"$d/savepoint\"",
            ),
        };
        format!(
            "d=$(mktemp -d) && {first} --seed {seed} --algorithm {algorithm} && {program} run {path} --from-savepoint {from} --parallelism {}={}{mode} --seed {seed} --algorithm {algorithm}{mutants}",
            self.operator, self.parallelism
        )
    }
}
