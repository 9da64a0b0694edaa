//! File merging (FLIP-306): snapshot files as segments of shared physical
//! files, counted per physical file by each subtask's manager, rebuilt
//! from the restored snapshot when a worker is replaced; the file-merging
//! mutants are caught by the checkpoint-files check.

use crate::checkpoint_files::{backend_keeps_exactly_once, refused_on_memory_storage};
use crate::common::{assert_caught, check, check_alg, load, reach, valid};
use ckptsim::check::CheckId;
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{Algorithm, ScenarioData};

/// The shipped scenario merges, deletes physical files, re-registers
/// restored segments on replaced workers and keeps exactly-once under
/// every exactly-once algorithm.
#[test]
fn merged_files_keep_exactly_once_under_every_algorithm() {
    backend_keeps_exactly_once(
        "file-merging",
        &[
            "physical files",
            "segments merged",
            "physical files reused across checkpoints",
            "physical files deleted",
            "segments re-registered at restores",
        ],
    );
}

/// Within a checkpoint only: no segment goes into a file an earlier
/// checkpoint opened, and fewer segments share a file.
#[test]
fn without_across_checkpoint_merging_no_file_spans_checkpoints() {
    let mut d = ScenarioData::clone(&load("file-merging"));
    d.checkpoint.file_merging_across_checkpoints = false;
    let within = valid(&d);
    let e = check(&within, 0, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    let across = check(&load("file-merging"), 0, &[]);
    let merged = |e| reach(e, "checkpoint-files", "segments merged");
    assert_eq!(
        reach(
            &e,
            "checkpoint-files",
            "physical files reused across checkpoints"
        ),
        0
    );
    assert!(
        merged(&e) < merged(&across),
        "{} {}",
        merged(&e),
        merged(&across)
    );
}

/// FLINK-39977: channel-state segments left out of the new manager leave
/// their physical file behind, named with the segments it never counted.
#[test]
fn channel_state_not_re_registered_after_a_worker_loss_leaks_and_is_caught() {
    let sc = load("file-merging");
    let m = [Mutant::MergedChannelStateNotRestored];
    let e = (0..20)
        .map(|seed| check_alg(&sc, seed, Algorithm::Unaligned, &m))
        .find(|e| !e.verdict.passed)
        .expect("caught within 20 seeds");
    let v = e
        .verdict
        .violations()
        .find(|v| v.check == CheckId::CheckpointFiles)
        .unwrap();
    assert!(
        v.message
            .contains("merged physical files are left in storage")
            && v.message.contains("not re-registered at a restore"),
        "{}",
        v.message
    );
}

/// A segment appended to a file in use that the count misses: the file
/// goes while a later checkpoint refers to the segment.
#[test]
fn an_uncounted_append_deletes_a_file_still_referred_to() {
    let sc = load("file-merging");
    assert_caught(&sc, Mutant::MergedAppendUncounted, 5, "checkpoint-files");
}

/// FLINK-35803: after a NO_CLAIM restore, new segments go into the
/// restored physical files, which are the user's.
#[test]
fn a_restored_physical_file_reused_after_a_no_claim_restore_is_caught() {
    crate::restore_modes::caught_through_its_flow(
        "file-merging",
        Mutant::RestoredPhysicalFileReused,
        20,
    );
}

/// File merging on memory storage is refused where it is written.
#[test]
fn file_merging_needs_filesystem_storage() {
    refused_on_memory_storage(
        "file-merging",
        "file_merging merges the files of filesystem storage",
    );
}
