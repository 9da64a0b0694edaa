//! Recovered input channels and checkpointing during recovery
//! (`[checkpoint] during_recovery`, Flink 2.x FLIP-547).

use crate::common::{self, check, check_alg, failed_checks};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::Algorithm;

/// Seeds per sweep; `CKPTSIM_SEEDS` raises it outside CI.
fn seeds(ci: u64) -> std::ops::Range<u64> {
    let n = std::env::var("CKPTSIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(ci);
    0..n
}

/// With checkpointing during recovery, checkpoints start while restored
/// in-flight data replays, persist the restored buffers not read yet, and
/// every run stays exactly-once under every algorithm that captures
/// channel state (aligned, which restores none, runs as the control).
#[test]
fn checkpoints_during_recovery_persist_the_restored_buffers_not_read_yet() {
    let scenario = common::load("recovery-checkpoints");
    assert!(scenario.checkpoint.during_recovery);
    let mut during = 0;
    let mut persisted = 0;
    for alg in [
        Algorithm::Unaligned,
        Algorithm::AlignedTimeout,
        Algorithm::Aligned,
    ] {
        let c = common::sweep(
            &scenario,
            "scenarios/recovery-checkpoints.toml",
            alg,
            seeds(8),
        );
        if alg == Algorithm::Aligned {
            assert_eq!(
                c.in_flight_records_restored, 0,
                "aligned has no channel state"
            );
        } else {
            assert!(
                c.in_flight_records_restored > 0,
                "{}: no restore with channel state",
                alg.name()
            );
            during += c.checkpoints_during_recovery;
            persisted += c.recovered_records_persisted;
        }
    }
    assert!(during > 0, "no checkpoint started during recovery");
    assert!(persisted > 0, "no restored record persisted again");
}

/// Without it (Flink's default), no checkpoint is triggered until every
/// restored buffer was read: the requests that come due are skipped.
#[test]
fn without_it_no_checkpoint_starts_while_restored_data_replays() {
    let mut scenario =
        ckptsim::scenario::ScenarioData::clone(&common::load("recovery-checkpoints"));
    scenario.checkpoint.during_recovery = false;
    let c = common::sweep(
        &crate::common::valid(&scenario),
        "recovery-checkpoints",
        Algorithm::Unaligned,
        seeds(6),
    );
    assert!(c.in_flight_records_restored > 0);
    assert_eq!(c.checkpoints_during_recovery, 0);
    assert_eq!(c.recovered_records_persisted, 0);
    assert!(
        c.triggers_skipped > 0,
        "no trigger was held back by the replay"
    );
}

/// The two ways Flink broke it, each caught by the consistent cut: a
/// checkpoint whose channel state leaves out the restored buffers not read
/// yet (FLINK-20654), and restored buffers persisted twice (FLINK-40016).
#[test]
fn skipped_or_doubled_restored_buffers_break_the_cut() {
    let scenario = common::load("recovery-checkpoints");
    for m in [
        Mutant::CheckpointDuringRecovery,
        Mutant::RecoveredBuffersPersistedTwice,
    ] {
        let caught = (0..40).any(|seed| {
            let e = check(&scenario, seed, &[m]);
            failed_checks(&e).contains(&"consistent-cut")
        });
        assert!(caught, "{m:?} not caught in 40 seeds");
    }
}

/// The restored records keep their place: a task reads a channel's
/// restored buffers before that channel's new data, and the run replays
/// bit for bit.
#[test]
fn a_run_with_checkpoints_during_recovery_replays_exactly() {
    let scenario = common::load("recovery-checkpoints");
    let a = check_alg(&scenario, 3, Algorithm::Unaligned, &[]);
    let b = check_alg(&scenario, 3, Algorithm::Unaligned, &[]);
    assert!(a.verdict.passed);
    assert_eq!(a.output.fingerprint, b.output.fingerprint);
}
