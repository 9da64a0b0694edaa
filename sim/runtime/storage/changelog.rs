//! The changelog state backend (Flink's `ChangelogKeyedStateBackend`,
//! FLIP-158): keyed state changes go into a log with sequence numbers, a
//! periodic **materialization** writes the state as of a sequence number
//! (`upTo`) into a file, and a checkpoint is the last materialization plus
//! the log's tail from its `upTo` on, uploaded as **segments** that later
//! checkpoints refer to again. A restore reads the materialized state and
//! replays the tail.
//!
//! As Flink's code has it:
//!
//! - A snapshot uploads the log from `max(base upTo, confirmed end)` on as
//!   a new segment and refers to the confirmed segments for the rest
//!   (`FsStateChangelogWriter.persist`, confirmed uploads reused).
//! - Notification of a checkpoint confirms its segments and its
//!   materialization id (`materializationIdByCheckpointId`,
//!   `lastConfirmedMaterializationId`).
//! - A materialization is triggered every `materialization_interval` through
//!   the task's mailbox; it is skipped while the last one is neither
//!   confirmed nor failed (`initMaterialization`'s guard) or when nothing
//!   was logged since; its file is written and synced asynchronously, and
//!   its result, applied on the task thread, becomes the base of the
//!   following snapshots and truncates the log in memory below `upTo`
//!   (`handleMaterializationResult`). A materialization whose file is lost
//!   failed (`lastFailedMaterializationId`).
//! - The files below a materialization go when the checkpoints that use
//!   them are subsumed (the shared-state registry), never at the
//!   materialization itself (`ChangelogTruncateHelper` waits for both).
//! - A restore makes the restored materialization confirmed and carries
//!   the restored tail segments until the next materialization.
//! - A materialization file no acknowledged checkpoint referred to yet is
//!   the task's (`TaskChangelogRegistry`): the task deletes it when a newer
//!   one replaces it, when it restarts and at the end.
//!
//! Simplified: the log is appended when the task snapshots (one entry per
//! key group whose bytes changed since it was last logged, an empty entry
//! for a key group that emptied), not at every state access: a key updated
//! many times between two checkpoints costs one entry, where Flink's log
//! holds each update. An entry carries its key group whole (so that a
//! replay is exact) and costs, in the log's files, what the changed keys
//! cost: the key and value of each key put, the key of each key removed
//! (`groups::changed_bytes`; an opaque key group costs its whole bytes).
//! A restore's replay costs `changelog_replay_cost` per entry (per key
//! group changed at a snapshot, not per update). A materialization writes
//! the state as of its `upTo` (the base and the log below it), which is the
//! nested backend's state at that point of the log; the nested backend
//! writes it whole.
//!
//! The judge's account (apart from the mechanism's counters): the trigger
//! may only be skipped while the judge has seen a materialization start
//! that has not yet completed into a confirmed checkpoint or failed.

use super::groups::changed_bytes;
use super::log::{entry_bytes, replay, Changelog, LogEntry, Materialization, Stopped, Trigger};
use super::{keep, FileFinding, FileId, FileKind, Group, Handle, Storage, StoredFile, Write};
use crate::engine::SimTime;
use crate::model::{CheckpointId, TaskId};
use std::collections::BTreeMap;
use std::rc::Rc;

impl Storage {
    pub(super) fn changelog_new() -> Changelog {
        Changelog::new()
    }

    /// The changelog part of a snapshot: logs the key groups that changed
    /// since they were last logged, uploads the tail not yet in a confirmed
    /// segment as a new segment, and refers to the base and the confirmed
    /// segments for the rest.
    pub(super) fn write_changelog(
        &mut self,
        w: &Write,
        handle: &mut Handle,
        groups: Vec<Group>,
        file: &dyn Fn(FileKind, u64) -> StoredFile,
        now: SimTime,
    ) {
        let t = w.task as usize;
        let layouts = &self.layouts[t];
        let cl = &mut self.backends[t].changelog;
        let current: BTreeMap<(u32, u32), Rc<[u8]>> = groups.into_iter().collect();
        let mut appended = 0u64;
        for (key, bytes) in &current {
            let old = cl.logged.get(key);
            if old.is_none_or(|old| old[..] != bytes[..]) {
                let layout = layouts.get(key.0 as usize).copied().flatten();
                let size = changed_bytes(old.map(|o| &o[..]), bytes, layout);
                cl.entries.push((cl.next_sqn, *key, bytes.clone(), size));
                cl.logged.insert(*key, bytes.clone());
                cl.next_sqn += 1;
                appended += 1;
            }
        }
        let emptied: Vec<(u32, u32)> = cl
            .logged
            .keys()
            .filter(|k| !current.contains_key(k))
            .copied()
            .collect();
        for key in emptied {
            let layout = layouts.get(key.0 as usize).copied().flatten();
            let size = changed_bytes(cl.logged.get(&key).map(|o| &o[..]), &[], layout);
            cl.entries.push((cl.next_sqn, key, Rc::from(&[][..]), size));
            cl.logged.remove(&key);
            cl.next_sqn += 1;
            appended += 1;
        }
        cl.judge_grown(now);
        let from = cl.confirmed_to.max(cl.base.up_to);
        let new: Vec<LogEntry> = cl.entries.iter().filter(|e| e.0 >= from).cloned().collect();
        let base = (cl.base.file, cl.base.up_to, cl.base.id);
        let to = cl.next_sqn;
        let reused: Vec<FileId> = cl
            .confirmed
            .iter()
            .copied()
            .filter(|&f| {
                let last = self.files[f as usize].log.last().map_or(0, |e| e.0);
                last >= base.1
            })
            .collect();
        self.evidence.changelog_entries += appended;
        let (tail, tail_bytes) = self.backends[t].changelog.tail();
        self.evidence.max_tail_entries = self.evidence.max_tail_entries.max(tail);
        self.evidence.max_tail_bytes = self.evidence.max_tail_bytes.max(tail_bytes);
        if let Some(f) = base.0 {
            handle.files.push(f);
        }
        self.evidence.segments_reused += reused.len() as u64;
        handle.files.extend_from_slice(&reused);
        let mut segments = reused;
        if !new.is_empty() {
            let mut f = file(FileKind::Changelog, new.iter().map(entry_bytes).sum());
            f.log = new;
            let id = self.add(f);
            self.evidence.segments_written += 1;
            handle.files.push(id);
            segments.push(id);
        }
        handle.changelog = Some((base.1, base.2));
        let cl = &mut self.backends[t].changelog;
        cl.uploads.insert(w.id, (segments, to));
        cl.by_checkpoint.insert(w.id, base.2);
    }

    /// The keyed state a changelog handle holds: the base's state with the
    /// tail replayed.
    pub(super) fn changelog_state(&self, h: &Handle) -> BTreeMap<(u32, u32), Rc<[u8]>> {
        let Some((up_to, _)) = h.changelog else {
            return BTreeMap::new();
        };
        let files = h.files.iter().map(|&f| &self.files[f as usize]);
        let mut groups: BTreeMap<(u32, u32), Rc<[u8]>> = files
            .clone()
            .filter(|f| f.kind == FileKind::Materialized)
            .flat_map(|f| f.groups.iter().cloned())
            .collect();
        let log = files
            .filter(|f| f.kind == FileKind::Changelog)
            .flat_map(|f| f.log.iter());
        replay(&mut groups, log, up_to);
        groups
    }

    /// The log entries a restore of `h` replays: its tail's from `up_to`
    /// on, each sequence number once.
    pub(super) fn tail_entries(&self, h: &Handle, up_to: u64) -> u64 {
        let mut seqs: Vec<u64> = h
            .files
            .iter()
            .map(|&f| &self.files[f as usize])
            .filter(|f| f.kind == FileKind::Changelog)
            .flat_map(|f| f.log.iter().map(|e| e.0))
            .filter(|&s| s >= up_to)
            .collect();
        seqs.sort_unstable();
        seqs.dedup();
        seqs.len() as u64
    }

    /// Task `t` learnt that `id` completed: its segments and its base are
    /// confirmed.
    pub(super) fn changelog_confirm(&mut self, now: SimTime, t: TaskId, id: CheckpointId) {
        let base_of_id = self
            .handles
            .get(&(id, t))
            .and_then(|h| h.changelog)
            .map(|(_, m)| m);
        let cl = &mut self.backends[t as usize].changelog;
        if let Some((segments, to)) = cl.uploads.remove(&id) {
            cl.confirmed = segments;
            cl.confirmed_to = to;
        }
        cl.uploads.retain(|&k, _| k > id);
        if let Some(m) = cl.by_checkpoint.remove(&id) {
            cl.last_confirmed = cl.last_confirmed.max(m);
        }
        cl.by_checkpoint.retain(|&k, _| k > id);
        // The judge: the latest materialization it saw complete is in a
        // checkpoint the task learnt completed.
        if cl.judge.open_since.is_none()
            && cl.running.is_none()
            && base_of_id == Some(cl.judge.completed)
        {
            cl.judge_open(now);
        }
    }

    /// Task `t`'s materialization trigger at `now` (`max_failures`... none:
    /// a failed one is retried at the next trigger).
    pub fn materialize(&mut self, now: SimTime, t: TaskId) -> Trigger {
        let cl = &mut self.backends[t as usize].changelog;
        let guard = cl.last_confirmed < cl.next_id - 1 && cl.last_failed < cl.next_id - 1;
        let trigger = if guard || cl.running.is_some() {
            self.evidence.materializations_skipped += 1;
            Trigger::Unconfirmed
        } else if cl.next_sqn <= cl.base.up_to {
            Trigger::NoChanges
        } else {
            let id = cl.next_id;
            cl.next_id += 1;
            let up_to = cl.next_sqn;
            let mut groups = cl.base.groups.clone();
            replay(&mut groups, cl.entries.iter().filter(|e| e.0 < up_to), 0);
            let bytes: u64 = groups.values().map(|b| b.len() as u64).sum();
            let mut f = StoredFile::new(FileKind::Materialized, t, id, bytes);
            f.groups = groups.iter().map(|(k, b)| (*k, b.clone())).collect();
            cl.running = Some(Materialization {
                id,
                up_to,
                file: None,
                groups,
            });
            cl.judge.open_since = None;
            cl.judge.grown_at = None;
            let file = self.add(f);
            self.evidence.materializations_started += 1;
            let cl = &mut self.backends[t as usize].changelog;
            if let Some(r) = cl.running.as_mut() {
                r.file = Some(file);
            }
            return Trigger::Started { id, file, bytes };
        };
        if let (Some(open), Some(grown)) = (cl.judge.open_since, cl.judge.grown_at) {
            if trigger == Trigger::Unconfirmed {
                let (entries, bytes) = cl.tail();
                let stopped = Stopped {
                    time_ns: now.0,
                    task: t,
                    open_since_ns: open.max(grown).0,
                    entries,
                    bytes,
                    base: cl.base.id,
                };
                self.evidence.changelog_stopped_count += 1;
                if self.evidence.changelog_stopped.len() < 5 {
                    self.evidence.changelog_stopped.push(stopped);
                }
            }
        }
        trigger
    }

    /// Task `t`'s materialization `id` wrote its file: applied on the task
    /// thread at `now`, it becomes the base (or failed, its file lost).
    /// `truncate_files`: mutant `changelog-truncated-before-subsumed`.
    pub fn materialized(&mut self, now: SimTime, t: TaskId, id: u64, truncate_files: bool) {
        let cl = &mut self.backends[t as usize].changelog;
        let Some(m) = cl.running.take_if(|r| r.id == id) else {
            return;
        };
        let file = m.file.expect("a running materialization has its file");
        if self.files[file as usize].gone().is_some() {
            cl.last_failed = cl.last_failed.max(id);
            self.evidence.materializations_failed += 1;
            cl.judge_open(now);
            return;
        }
        self.evidence.materializations_done += 1;
        let old = std::mem::replace(&mut cl.base, m);
        cl.judge.completed = id;
        let up_to = cl.base.up_to;
        cl.entries.retain(|e| e.0 >= up_to);
        let below: Vec<FileId> = cl
            .confirmed
            .iter()
            .copied()
            .filter(|&f| {
                self.files[f as usize]
                    .log
                    .last()
                    .is_none_or(|e| e.0 < up_to)
            })
            .collect();
        if let Some(f) = old.file.filter(|&f| !self.files[f as usize].registered) {
            self.delete(now, f);
        }
        if truncate_files && !below.is_empty() {
            // Mutant: the log's files below the materialization are deleted
            // at once, whatever the retained checkpoints still refer to.
            crate::mutant::fired(crate::mutant::Mutant::ChangelogTruncatedBeforeSubsumed);
            for f in below {
                self.delete(now, f);
            }
        }
    }

    /// Task `t` took a native savepoint `id`: with `consume` (mutant
    /// `native-savepoint-blocks-materialization`), it takes a
    /// materialization id that no notification ever confirms.
    pub fn native_savepoint(&mut self, t: TaskId, id: CheckpointId, consume: bool) {
        let cl = &mut self.backends[t as usize].changelog;
        if consume {
            crate::mutant::fired(crate::mutant::Mutant::NativeSavepointBlocksMaterialization);
            cl.by_checkpoint.insert(id, cl.next_id);
            cl.next_id += 1;
        }
    }

    /// Task `t` restarts at `now` from the changelog handle `h` (`None`:
    /// from scratch): the restored base is confirmed, the restored tail
    /// carried until the next materialization; what the old execution had
    /// of its own is deleted.
    pub(super) fn changelog_restarted(&mut self, now: SimTime, t: TaskId, h: Option<Handle>) {
        self.changelog_release(now, t);
        let mut cl = Changelog::new();
        if let Some((up_to, id)) = h.as_ref().and_then(|h| h.changelog) {
            let h = h.as_ref().expect("a changelog handle");
            let base_file = h
                .files
                .iter()
                .copied()
                .find(|&f| self.files[f as usize].kind == FileKind::Materialized);
            let segments: Vec<FileId> = h
                .files
                .iter()
                .copied()
                .filter(|&f| self.files[f as usize].kind == FileKind::Changelog)
                .collect();
            let groups: BTreeMap<(u32, u32), Rc<[u8]>> = base_file
                .map(|f| self.files[f as usize].groups.iter().cloned().collect())
                .unwrap_or_default();
            let mut entries: Vec<LogEntry> = segments
                .iter()
                .flat_map(|&f| self.files[f as usize].log.iter().cloned())
                .filter(|e| e.0 >= up_to)
                .collect();
            entries.sort_by_key(|e| e.0);
            entries.dedup_by_key(|e| e.0);
            cl.next_sqn = entries.last().map_or(up_to, |e| e.0 + 1);
            cl.logged = groups.clone();
            replay(&mut cl.logged, entries.iter(), 0);
            cl.entries = entries;
            cl.confirmed = segments;
            cl.confirmed_to = cl.next_sqn;
            cl.base = Materialization {
                id,
                up_to,
                file: base_file,
                groups,
            };
            cl.last_confirmed = id;
            cl.next_id = id + 1;
            cl.judge.completed = id;
        }
        cl.judge_open(now);
        self.backends[t as usize].changelog = cl;
    }

    /// Task `t` no longer needs what it has of its own (a materialization
    /// no acknowledged checkpoint referred to): deleted.
    pub(super) fn changelog_release(&mut self, now: SimTime, t: TaskId) {
        let cl = &self.backends[t as usize].changelog;
        let own: Vec<FileId> = [cl.base.file, cl.running.as_ref().and_then(|r| r.file)]
            .into_iter()
            .flatten()
            .filter(|&f| !self.files[f as usize].registered)
            .collect();
        for f in own {
            self.delete(now, f);
        }
    }

    /// A restore of `id` by task `t` needs `f`, which is gone: the finding.
    pub(super) fn missing(
        &mut self,
        now: SimTime,
        id: CheckpointId,
        t: TaskId,
        f: FileId,
    ) -> FileFinding {
        let file = &self.files[f as usize];
        let (when, what) = file.gone().expect("a gone file");
        let finding = FileFinding::new(now, id, (f, file), t, Some(when), what);
        keep(&mut self.evidence.restore_missing, finding.clone());
        finding
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const NativeSavepointBlocksMaterialization: Mutant = Mutant::declare(&MutantInfo {
            name: "native-savepoint-blocks-materialization",
            part: "changelog materialization",
            what: "a native savepoint takes a materialization id, and no notification ever confirms it (savepoints are not notified): every later trigger is skipped as waiting for an unconfirmed materialization, and the changelog grows for as long as the task runs",
            modelled_on: "FLINK-40302: ChangelogKeyedStateBackend#nativeSavepoint consumes materializedId, the guard of initMaterialization then stays closed for the rest of the job's life",
            caught_by: "checkpoint-files",
            applies: &[("changelog", "aligned")],
        });
        pub const ChangelogTruncatedBeforeSubsumed: Mutant = Mutant::declare(&MutantInfo {
            name: "changelog-truncated-before-subsumed",
            part: "changelog truncation",
            what: "a completed materialization deletes the log's segments below it at once, although retained checkpoints built on the previous materialization still refer to them: a restore from such a checkpoint misses its tail",
            modelled_on: "ChangelogTruncateHelper truncates the log only below both the newest materialization and the newest subsumed checkpoint; truncating on materialization alone discards changelog files that retained checkpoints still use",
            caught_by: "checkpoint-files",
            applies: &[("changelog", "aligned")],
        });
    }
}
