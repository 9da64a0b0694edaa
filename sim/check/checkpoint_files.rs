//! Checkpoint files: the checkpoint storage's promises about its files
//! (`runtime::storage`; `filesystem` storage only, memory storage writes
//! none). Four rules, each judged on what the storage recorded, with the
//! judge's own count of the references of retained checkpoints and
//! savepoints to each file (the registry's mechanism never reads it):
//!
//! - **Acknowledged means durable.** Every file a completed checkpoint
//!   refers to was synced by its completion. A file written but not synced
//!   is lost by a storage crash, and with it the checkpoint: judged at the
//!   completion, whether or not a crash then comes.
//! - **Nothing deleted while referred to.** No file is deleted while a
//!   retained checkpoint or a savepoint refers to it (subsumption and the
//!   shared-state registry delete only what nothing retained uses), no
//!   completed checkpoint refers to a file already gone, and a restore that
//!   needs a file that is gone is named for that file.
//! - **No leak.** Every file still in storage at the end is referred to by
//!   a retained checkpoint or a savepoint: subsumption and aborts discard
//!   the rest (pending checkpoints are discarded when the run ends, as
//!   Flink's coordinator does at shutdown). With file merging, every
//!   physical file left holds a segment something still needs.
//! - **The changelog stays bounded** (a progress rule). Materialization
//!   keeps happening: a trigger may skip only while the last
//!   materialization the judge saw start has neither come back in a
//!   checkpoint the task was notified of nor failed. A trigger that finds
//!   the log grown and skips when nothing holds it back has stopped
//!   materialization for good (the next trigger skips for the same reason),
//!   and the log grows for as long as the task runs.

use super::{Finding, Input};
use crate::engine::SimDuration;
use crate::runtime::storage::{FileFinding, StorageEvidence};
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let e = &input.run.evidence.storage;
    let names = &input.run.evidence.task_names;
    let name = |f: &FileFinding| {
        format!(
            "{} {} of task {} (written for checkpoint {})",
            f.kind.describe(),
            f.file,
            names.get(f.task as usize).map_or("?", String::as_str),
            f.written_for
        )
    };
    let mut violations = Vec::new();
    if let Some(f) = e.not_durable.first() {
        let synced = match f.at_ns {
            Some(at) => format!("synced only at {}", SimDuration(at)),
            None => "never synced".to_string(),
        };
        violations.push(Violation {
            check: CheckId::CheckpointFiles,
            time_ns: f.time_ns,
            message: format!(
                "checkpoint {} completed at {} referring to {}, {synced}: a storage crash loses it ({} such references)",
                f.checkpoint,
                SimDuration(f.time_ns),
                name(f),
                e.not_durable.len()
            ),
        });
    }
    let at = |f: &FileFinding| {
        f.at_ns
            .map_or(String::new(), |t| format!(" at {}", SimDuration(t)))
    };
    if let Some(f) = e.deleted_referenced.first() {
        violations.push(Violation {
            check: CheckId::CheckpointFiles,
            time_ns: f.time_ns,
            message: format!(
                "checkpoint {} refers to {}, which was {}{} (seen at {})",
                f.checkpoint,
                name(f),
                f.what,
                at(f),
                SimDuration(f.time_ns)
            ),
        });
    }
    if let Some(f) = e.unowned.first() {
        let whose = match f.what {
            "not the job's" => "which the job does not own",
            _ => "written into a merged physical file the job does not own (a restored snapshot's file, which takes no new segment)",
        };
        violations.push(Violation {
            check: CheckId::CheckpointFiles,
            time_ns: f.time_ns,
            message: format!(
                "checkpoint {} completed at {} referring to {}, {whose} (a snapshot restored in NO_CLAIM mode stays the user's, who may delete it once the first checkpoint completed; {} such references)",
                f.checkpoint,
                SimDuration(f.time_ns),
                name(f),
                e.unowned.len()
            ),
        });
    }
    if let Some(f) = e.restore_missing.first() {
        violations.push(Violation {
            check: CheckId::CheckpointFiles,
            time_ns: f.time_ns,
            message: format!(
                "the restore of checkpoint {} at {} needs {}, which was {}{}",
                f.checkpoint,
                SimDuration(f.time_ns),
                name(f),
                f.what,
                at(f)
            ),
        });
    }
    if let Some(f) = e.leaked.first() {
        violations.push(Violation {
            check: CheckId::CheckpointFiles,
            time_ns: f.time_ns,
            message: format!(
                "{} files ({} bytes in all) are left in storage at the end that no retained checkpoint or savepoint refers to, the first {}",
                e.leaked_count,
                e.leaked_bytes,
                name(f)
            ),
        });
    }
    violations.extend(leaked_physical(e, names));
    violations.extend(stopped(e, names));
    Finding {
        violations,
        reach: reach(e),
    }
}

/// The bounded-changelog rule: the first task whose materialization
/// stopped.
fn stopped(e: &StorageEvidence, names: &[String]) -> Option<Violation> {
    e.changelog_stopped.first().map(|s| Violation {
        check: CheckId::CheckpointFiles,
        time_ns: s.time_ns,
        message: format!(
            "materialization of task {} stopped: at {} its trigger skipped, although materialization {} is confirmed (in a checkpoint the task was notified of, or restored from) and nothing held it back since {}; the changelog grows without bound ({} entries, {} bytes beyond the base, {} such triggers)",
            names.get(s.task as usize).map_or("?", String::as_str),
            SimDuration(s.time_ns),
            s.base,
            SimDuration(s.open_since_ns),
            s.entries,
            s.bytes,
            e.changelog_stopped_count
        ),
    })
}

/// The no-leak rule for merged files: the first physical file left that
/// no retained checkpoint or savepoint needs.
fn leaked_physical(e: &StorageEvidence, names: &[String]) -> Option<Violation> {
    e.leaked_physical.first().map(|p| {
        let untracked = match p.untracked {
            0 => String::new(),
            n => format!(
                "; {n} of its segments were discarded while the task's file-merging manager did not track them (not re-registered at a restore)"
            ),
        };
        Violation {
            check: CheckId::CheckpointFiles,
            time_ns: p.time_ns,
            message: format!(
                "{} merged physical files are left in storage at the end that no retained checkpoint or savepoint needs, the first physical file {} of task {} (opened for checkpoint {}, {} segments, {} bytes){untracked}",
                e.physical_leaked,
                p.physical,
                names.get(p.task as usize).map_or("?", String::as_str),
                p.opened_for,
                p.segments,
                p.bytes
            ),
        }
    })
}

/// What the check reached.
fn reach(e: &StorageEvidence) -> Vec<(&'static str, u64)> {
    vec![
        ("files written", e.files_written),
        ("references checked", e.references_checked),
        ("runs reused", e.runs_reused),
        ("files deleted", e.files_deleted),
        ("runs deleted", e.runs_deleted),
        ("compactions", e.compactions),
        ("storage crashes", e.storage_crashes),
        ("files lost", e.files_lost),
        ("restores from files", e.restores_from_files),
        ("acks refused: unknown shared state", e.acks_refused),
        (
            "files orphaned (coordinator failovers, lost managers)",
            e.files_orphaned,
        ),
        ("files at end", e.files_at_end),
        ("files of a restored snapshot", e.files_restored),
        ("changelog entries", e.changelog_entries),
        ("changelog segments written", e.segments_written),
        ("changelog segments reused", e.segments_reused),
        ("materializations started", e.materializations_started),
        ("materializations done", e.materializations_done),
        ("materializations failed", e.materializations_failed),
        (
            "materialization triggers skipped: unconfirmed",
            e.materializations_skipped,
        ),
        ("longest changelog tail (entries)", e.max_tail_entries),
        ("physical files", e.physical_files),
        ("segments merged", e.segments_merged),
        (
            "physical files reused across checkpoints",
            e.physical_reused_across,
        ),
        ("physical files deleted", e.physical_deleted),
        ("segments re-registered at restores", e.segments_restored),
    ]
}
