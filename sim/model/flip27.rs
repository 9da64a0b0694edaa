//! FLIP-27 sources: a split enumerator that runs in an **operator
//! coordinator** on the coordinator's side, and the source readers it
//! assigns splits to through **operator events** (Flink's
//! `SourceCoordinator`, `SplitAssignmentTracker`, `SourceReaderBase`).
//!
//! - A reader with no split left to read asks for one (`RequestSplit`).
//!   The enumerator answers with a split (`AddSplit`), or, once every split
//!   is discovered and assigned, with `NoMoreSplits`; otherwise the reader
//!   waits until discovery finds one. A reader that was told there are no
//!   more splits ends its input when its splits are read.
//! - A split is a partition of the source's input log, read from offset 0.
//!   The reader's state is its splits with their next offsets (read ones
//!   included, at their end), in the simple source's layout.
//! - The coordinator's checkpoint (discovered count, unassigned splits) is
//!   taken when the checkpoint is triggered, before the source barriers.
//!   The assignment tracker files the assignments made since the previous
//!   one under its id and forgets those of completed checkpoints.
//! - A global failover resets the coordinator to the restored checkpoint
//!   (`reset_to_checkpoint`); a region failover only tells it which
//!   readers were restored from which checkpoint (`subtask_reset`), and
//!   it takes back every split it assigned to them **after** that
//!   checkpoint (FLINK-20290: before, the splits came back when a reader
//!   failed, and only those assigned since the coordinator's last
//!   checkpoint).
//!
//! The transport (events held back while a checkpoint is in progress, acks,
//! lost events failing their target) is the runtime's
//! (`runtime::world::operator_coordinators`).

use super::operator::{
    decode, encode, poll_round_robin, CheckpointId, Context, Operator, SourcePoll,
};
use super::record::Record;
use super::workload::Workload;
use crate::mutant::{fired, Mutant, Mutants};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// An event between an operator coordinator and one of its subtasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OperatorEvent {
    /// Reader → enumerator: assign me a split.
    RequestSplit,
    /// Enumerator → reader: read this split (a global partition of the
    /// input) from its start.
    AddSplit(u32),
    /// Enumerator → reader: no split will come any more.
    NoMoreSplits,
    /// Reader → coordinator: the watermark its output last emitted
    /// (watermark alignment, `ReportedWatermarkEvent`).
    ReportedWatermark(i64),
    /// Coordinator → reader: the largest watermark its alignment group
    /// allows (`WatermarkAlignmentEvent`).
    WatermarkAlignment(i64),
}

/// The coordinator-side component of an operator (Flink's
/// `OperatorCoordinator`): it exchanges events with the operator's
/// subtasks, has a checkpoint of its own, and is reset on failover. What it
/// sends is `(subtask, event)` pairs in `out`.
pub trait OperatorCoordinator {
    /// An event from subtask `subtask` reached the coordinator.
    fn handle_event(
        &mut self,
        subtask: u32,
        event: OperatorEvent,
        out: &mut Vec<(u32, OperatorEvent)>,
    );
    /// The coordinator's checkpoint `id`, taken when the checkpoint is
    /// triggered, before any source barrier.
    fn checkpoint(&mut self, id: CheckpointId) -> Vec<u8>;
    /// Checkpoint `id` completed.
    fn notify_checkpoint_complete(&mut self, id: CheckpointId);
    /// A global failover (or a new coordinator): back to this checkpoint's
    /// state (`None`: the start of the job).
    fn reset_to_checkpoint(&mut self, state: Option<&[u8]>) -> Result<(), String>;
    /// A region failover restored subtask `subtask` from checkpoint
    /// `restored` (`None`: from scratch); the coordinator itself keeps
    /// running.
    fn subtask_reset(
        &mut self,
        subtask: u32,
        restored: Option<CheckpointId>,
        out: &mut Vec<(u32, OperatorEvent)>,
    );
    /// Periodic work (split discovery); returns whether more is to come.
    fn tick(&mut self, out: &mut Vec<(u32, OperatorEvent)>) -> bool;
    /// The splits the first `discovered` discoveries found (for the
    /// consistent-cut check).
    fn splits_discovered(&self, discovered: u32) -> Vec<u32>;
}

// ---------------------------------------------------------------- enumerator

/// The split enumerator of one FLIP-27 source, with the coordinator's
/// assignment tracker.
pub struct SplitEnumerator {
    /// Every split of the source, in discovery order.
    splits: Vec<u32>,
    initial: u32,
    state: EnumeratorState,
    /// Readers waiting for a split, in request order (not checkpointed:
    /// readers ask again after a restore).
    waiting: VecDeque<u32>,
    /// Assignments since the last coordinator checkpoint, then per
    /// checkpoint id those made before it (Flink's
    /// `SplitAssignmentTracker`).
    uncheckpointed: Vec<(u32, u32)>,
    by_checkpoint: BTreeMap<CheckpointId, Vec<(u32, u32)>>,
    /// Readers told that no split will come (mutant `no-more-splits-once`).
    told: Vec<u32>,
    /// Pushing splits (`push_splits`): per reader, whether it registered
    /// (its first request); empty when splits go out on request. Not
    /// checkpointed: readers register again after a restore.
    registered: Vec<bool>,
    /// Pushing, `no_more_splits_at_assignment`: per registered reader,
    /// whether it was told the end (`None`: told only when it asks).
    told_at_assignment: Option<Vec<bool>>,
    mutants: Mutants,
}

/// The enumerator's checkpointed state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumeratorState {
    /// How many splits discovery has found.
    pub discovered: u32,
    /// Found and not assigned (or given back), in assignment order.
    pub unassigned: Vec<u32>,
}

impl EnumeratorState {
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }
    pub fn decode(bytes: &[u8]) -> Result<EnumeratorState, String> {
        decode(bytes, "split enumerator")
    }
}

impl SplitEnumerator {
    /// The enumerator of `splits` (global partitions), `initial` of them
    /// known at the start, the others found one per `tick`; `push`: the
    /// number of readers it pushes splits to (`None`: it answers requests).
    pub fn new(
        splits: Vec<u32>,
        initial: u32,
        push: Option<u32>,
        mutants: Mutants,
    ) -> SplitEnumerator {
        let initial = initial.min(splits.len() as u32);
        let mut e = SplitEnumerator {
            splits,
            initial,
            state: EnumeratorState::default(),
            waiting: VecDeque::new(),
            uncheckpointed: Vec::new(),
            by_checkpoint: BTreeMap::new(),
            told: Vec::new(),
            registered: vec![false; push.unwrap_or(0) as usize],
            told_at_assignment: None,
            mutants,
        };
        e.start();
        e
    }

    /// Pushing: it tells each registered reader that no split will come
    /// as soon as every split is found and pushed (Kafka's enumerator
    /// with a bounded stopping offset), not when the reader asks.
    pub fn telling_the_end_at_assignment(mut self) -> SplitEnumerator {
        self.told_at_assignment = Some(vec![false; self.registered.len()]);
        self
    }

    fn start(&mut self) {
        self.state = EnumeratorState {
            discovered: self.initial,
            unassigned: self.splits[..self.initial as usize].to_vec(),
        };
    }

    pub fn state(&self) -> &EnumeratorState {
        &self.state
    }

    fn all_discovered(&self) -> bool {
        self.state.discovered as usize >= self.splits.len()
    }

    fn assign(&mut self, subtask: u32, out: &mut Vec<(u32, OperatorEvent)>) -> bool {
        if self.state.unassigned.is_empty() {
            return false;
        }
        let split = self.state.unassigned.remove(0);
        self.uncheckpointed.push((subtask, split));
        out.push((subtask, OperatorEvent::AddSplit(split)));
        true
    }

    /// Serves the waiting readers: splits while there are any, then, once
    /// discovery is over, the end.
    fn serve(&mut self, out: &mut Vec<(u32, OperatorEvent)>) {
        if !self.registered.is_empty() {
            self.push(out);
            return;
        }
        while let Some(&r) = self.waiting.front() {
            if !self.assign(r, out) {
                if !self.all_discovered() {
                    return;
                }
                if self.told.contains(&r) && self.mutants.has(Mutant::NoMoreSplitsOnce) {
                    // Mutant: a reader told once is not told again.
                    fired(Mutant::NoMoreSplitsOnce);
                } else {
                    self.told.push(r);
                    out.push((r, OperatorEvent::NoMoreSplits));
                }
            }
            self.waiting.pop_front();
        }
    }
}

impl SplitEnumerator {
    /// The reader a pushed split belongs to: the splits in discovery order,
    /// dealt round-robin.
    fn owner(&self, split: u32) -> u32 {
        let at = self.splits.iter().position(|&s| s == split).unwrap_or(0);
        at as u32 % self.registered.len() as u32
    }

    /// Pushing: every unassigned split whose reader registered goes to it,
    /// one event per split (Kafka's enumerator in `addReader` and after
    /// each discovery); once every split is discovered, each reader that
    /// asked is told there are no more.
    fn push(&mut self, out: &mut Vec<(u32, OperatorEvent)>) {
        let unassigned = std::mem::take(&mut self.state.unassigned);
        for split in unassigned {
            let reader = self.owner(split);
            if self.registered[reader as usize] {
                self.uncheckpointed.push((reader, split));
                out.push((reader, OperatorEvent::AddSplit(split)));
            } else {
                self.state.unassigned.push(split);
            }
        }
        if self.all_discovered() {
            for r in std::mem::take(&mut self.waiting) {
                out.push((r, OperatorEvent::NoMoreSplits));
            }
            let registered = &self.registered;
            for (r, told) in self.told_at_assignment.iter_mut().flatten().enumerate() {
                if registered[r] && !*told {
                    *told = true;
                    out.push((r as u32, OperatorEvent::NoMoreSplits));
                }
            }
        }
    }
}

impl OperatorCoordinator for SplitEnumerator {
    fn handle_event(
        &mut self,
        subtask: u32,
        event: OperatorEvent,
        out: &mut Vec<(u32, OperatorEvent)>,
    ) {
        if event != OperatorEvent::RequestSplit {
            return;
        }
        if let Some(r) = self.registered.get_mut(subtask as usize) {
            if !*r {
                // Its first request registers the reader (`addReader`):
                // it gets its splits, and asks again when it ran out; one
                // that got none waits as if it had asked again.
                *r = true;
                let before = out.len();
                self.serve(out);
                if out[before..].iter().any(|(to, _)| *to == subtask) {
                    return;
                }
            }
        }
        if !self.waiting.contains(&subtask) {
            self.waiting.push_back(subtask);
            self.serve(out);
        }
    }

    fn checkpoint(&mut self, id: CheckpointId) -> Vec<u8> {
        let moved = std::mem::take(&mut self.uncheckpointed);
        self.by_checkpoint.entry(id).or_default().extend(moved);
        self.state.encode()
    }

    fn notify_checkpoint_complete(&mut self, id: CheckpointId) {
        self.by_checkpoint = self.by_checkpoint.split_off(&id.saturating_add(1));
    }

    fn reset_to_checkpoint(&mut self, state: Option<&[u8]>) -> Result<(), String> {
        self.waiting.clear();
        self.told.clear();
        self.registered.iter_mut().for_each(|r| *r = false);
        self.told_at_assignment
            .iter_mut()
            .flatten()
            .for_each(|t| *t = false);
        self.uncheckpointed.clear();
        self.by_checkpoint.clear();
        match state {
            Some(bytes) => self.state = EnumeratorState::decode(bytes)?,
            None => self.start(),
        }
        Ok(())
    }

    fn subtask_reset(
        &mut self,
        subtask: u32,
        restored: Option<CheckpointId>,
        out: &mut Vec<(u32, OperatorEvent)>,
    ) {
        self.waiting.retain(|&r| r != subtask);
        if let Some(r) = self.registered.get_mut(subtask as usize) {
            *r = false; // it registers again when it runs
        }
        if let Some(t) = self.told_at_assignment.as_mut() {
            t[subtask as usize] = false;
        }
        let mine = |a: &(u32, u32)| a.0 == subtask;
        let mut back: Vec<u32> = Vec::new();
        if self.mutants.has(Mutant::SplitsBackUncheckpointedOnly) {
            // Mutant: only the assignments since the coordinator's last
            // checkpoint come back, not those since the restored one.
            let later = restored.map_or(0, |c| c.saturating_add(1));
            if self
                .by_checkpoint
                .range(later..)
                .any(|(_, v)| v.iter().any(mine))
            {
                fired(Mutant::SplitsBackUncheckpointedOnly);
            }
        } else {
            let later = restored.map_or(0, |c| c.saturating_add(1));
            for (_, v) in self.by_checkpoint.range_mut(later..) {
                back.extend(v.iter().filter(|a| mine(a)).map(|a| a.1));
                v.retain(|a| !mine(a));
            }
        }
        back.extend(self.uncheckpointed.iter().filter(|a| mine(a)).map(|a| a.1));
        self.uncheckpointed.retain(|a| !mine(a));
        // Flink's `addSplitsBack`: the splits are assignable again.
        self.state.unassigned.extend(back);
        self.serve(out);
    }

    fn splits_discovered(&self, discovered: u32) -> Vec<u32> {
        let n = (discovered as usize).min(self.splits.len());
        self.splits[..n].to_vec()
    }

    fn tick(&mut self, out: &mut Vec<(u32, OperatorEvent)>) -> bool {
        if let Some(&split) = self.splits.get(self.state.discovered as usize) {
            self.state.discovered += 1;
            self.state.unassigned.push(split);
            self.serve(out);
        }
        if self.all_discovered() {
            self.serve(out);
        }
        !self.all_discovered()
    }
}

// ---------------------------------------------------------------- reader

/// A FLIP-27 source reader: reads the splits the enumerator assigns it,
/// round-robin one record at a time, and asks for another when every split
/// it holds is read.
pub struct SourceReader {
    workload: Arc<Workload>,
    /// Split (global partition) and next offset, read ones included.
    splits: Vec<(u32, u64)>,
    next: usize,
    requested: bool,
    no_more: bool,
    events: Vec<OperatorEvent>,
    /// Splits paused for watermark alignment (not in the state: a restored
    /// reader reads all its splits).
    paused: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
struct ReaderState {
    offsets: Vec<(u32, u64)>,
}

impl SourceReader {
    pub fn new(workload: Arc<Workload>) -> SourceReader {
        SourceReader {
            workload,
            splits: Vec::new(),
            next: 0,
            requested: false,
            no_more: false,
            events: Vec::new(),
            paused: Vec::new(),
        }
    }
}

impl Operator for SourceReader {
    fn process(&mut self, _record: Record, _ctx: &mut Context) {
        unreachable!("a source reader has no inputs")
    }

    fn poll_source(&mut self, max_records: usize, ctx: &mut Context) -> SourcePoll {
        let polled = poll_round_robin(
            &self.workload,
            &mut self.splits,
            &self.paused,
            &mut self.next,
            max_records,
            ctx,
        );
        if polled.emitted > 0 {
            return SourcePoll::Emitted(polled.emitted);
        }
        if let Some(at) = polled.wait {
            return SourcePoll::IdleUntil(at); // its splits have more, later
        }
        if polled.paused {
            return SourcePoll::Idle; // resumed by an alignment event
        }
        if self.no_more {
            return SourcePoll::Exhausted;
        }
        if !self.requested {
            self.requested = true;
            self.events.push(OperatorEvent::RequestSplit);
        }
        SourcePoll::Idle
    }

    fn handle_operator_event(&mut self, event: OperatorEvent, _ctx: &mut Context) {
        match event {
            OperatorEvent::AddSplit(split) => {
                self.splits.push((split, 0));
                self.requested = false;
            }
            OperatorEvent::NoMoreSplits => {
                self.no_more = true;
                self.requested = false;
            }
            OperatorEvent::RequestSplit
            | OperatorEvent::ReportedWatermark(_)
            | OperatorEvent::WatermarkAlignment(_) => {}
        }
    }

    fn pause_or_resume_splits(&mut self, pause: &[u32], resume: &[u32]) {
        self.paused.retain(|s| !resume.contains(s));
        for &s in pause {
            if !self.paused.contains(&s) {
                self.paused.push(s);
            }
        }
    }

    fn take_operator_events(&mut self) -> Vec<OperatorEvent> {
        std::mem::take(&mut self.events)
    }

    fn snapshot(&mut self, _checkpoint: CheckpointId, _ctx: &mut Context) -> Vec<u8> {
        encode(&ReaderState {
            offsets: self.splits.clone(),
        })
    }

    fn restore(&mut self, state: &[u8], ctx: &mut Context) -> Result<(), String> {
        let state: ReaderState = decode(state, "source reader")?;
        let skip = u64::from(ctx.mutant(Mutant::SourceOffsetOffByOne));
        self.splits = state
            .offsets
            .into_iter()
            .map(|(s, o)| (s, o + skip))
            .collect();
        Ok(())
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const SplitsBackUncheckpointedOnly: Mutant = Mutant::declare(&MutantInfo {
            name: "splits-back-uncheckpointed-only",
            part: "FLIP-27 source",
            what: "when a reader is restored by a region failover, the enumerator takes back only the splits it assigned to it since its own last checkpoint, not all those assigned since the restored checkpoint: splits assigned before a checkpoint that never completed are read by nobody",
            modelled_on: "FLINK-20290 / FLINK-20396 (splits were added back on subtaskFailed with the tracker's uncheckpointed assignments; OperatorCoordinator.subtaskReset(subtask, restoredCheckpointId) now returns every split assigned after the restored checkpoint)",
            caught_by: "consistent-cut",
            applies: &[("flip27-regions", "aligned")],
        });
        pub const NoMoreSplitsOnce: Mutant = Mutant::declare(&MutantInfo {
            name: "no-more-splits-once",
            part: "FLIP-27 source",
            what: "the enumerator tells each reader only once that no split will come: a reader restarted after it was told asks again, gets no answer and never ends its input",
            modelled_on: "FLINK-35522 (the source coordinator did not resend NoMoreSplits to a restarted source subtask, which then hung)",
            caught_by: "liveness",
            applies: &[("flip27-regions", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(e: &mut SplitEnumerator, subtask: u32) -> Vec<(u32, OperatorEvent)> {
        let mut out = Vec::new();
        e.handle_event(subtask, OperatorEvent::RequestSplit, &mut out);
        out
    }

    #[test]
    fn requests_get_splits_then_the_end() {
        let mut e = SplitEnumerator::new(vec![4, 5], 2, None, Mutants::NONE);
        assert_eq!(run(&mut e, 1), vec![(1, OperatorEvent::AddSplit(4))]);
        assert_eq!(run(&mut e, 0), vec![(0, OperatorEvent::AddSplit(5))]);
        assert_eq!(run(&mut e, 0), vec![(0, OperatorEvent::NoMoreSplits)]);
    }

    #[test]
    fn pushed_splits_go_to_their_readers_at_registration_and_discovery() {
        // Six splits, four known at the start, two readers.
        let mut e = SplitEnumerator::new((10..16).collect(), 4, Some(2), Mutants::NONE);
        // Reader 1 registers: the known splits dealt to it, one event each.
        assert_eq!(
            run(&mut e, 1),
            vec![
                (1, OperatorEvent::AddSplit(11)),
                (1, OperatorEvent::AddSplit(13))
            ]
        );
        // A split found before reader 0 registers waits for it.
        let mut out = Vec::new();
        assert!(e.tick(&mut out));
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(e.state().unassigned, vec![10, 12, 14]);
        assert_eq!(run(&mut e, 0).len(), 3);
        // Reader 1 ran out: it waits, and the next split found is pushed.
        assert!(run(&mut e, 1).is_empty());
        assert!(!e.tick(&mut out));
        assert_eq!(
            out,
            vec![
                (1, OperatorEvent::AddSplit(15)),
                (1, OperatorEvent::NoMoreSplits)
            ]
        );
        assert!(e.state().unassigned.is_empty());
        // A reset reader registers again and gets back what came back.
        e.checkpoint(1);
        let mut out = Vec::new();
        e.subtask_reset(1, None, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(run(&mut e, 1).len(), 3);
    }

    #[test]
    fn a_waiting_reader_gets_the_next_discovered_split() {
        let mut e = SplitEnumerator::new(vec![0, 1], 0, None, Mutants::NONE);
        assert!(run(&mut e, 0).is_empty());
        let mut out = Vec::new();
        assert!(e.tick(&mut out));
        assert_eq!(out, vec![(0, OperatorEvent::AddSplit(0))]);
        assert!(run(&mut e, 1).is_empty());
        out.clear();
        assert!(!e.tick(&mut out));
        assert_eq!(out, vec![(1, OperatorEvent::AddSplit(1))]);
    }

    #[test]
    fn a_reset_reader_gives_back_the_splits_assigned_after_its_checkpoint() {
        let mut e = SplitEnumerator::new(vec![0, 1, 2], 3, None, Mutants::NONE);
        run(&mut e, 0); // split 0, before checkpoint 1
        e.checkpoint(1);
        run(&mut e, 0); // split 1, before checkpoint 2 (never completes)
        e.checkpoint(2);
        run(&mut e, 0); // split 2, uncheckpointed
        e.notify_checkpoint_complete(1);
        let mut out = Vec::new();
        e.subtask_reset(0, Some(1), &mut out);
        assert_eq!(e.state().unassigned, vec![1, 2]);
        // Restored from scratch: every split comes back.
        let mut e = SplitEnumerator::new(vec![0, 1], 2, None, Mutants::NONE);
        run(&mut e, 0);
        e.checkpoint(1);
        e.subtask_reset(0, None, &mut out);
        assert_eq!(e.state().unassigned, vec![1, 0]);
    }

    #[test]
    fn a_coordinator_checkpoint_restores() {
        let mut e = SplitEnumerator::new(vec![0, 1], 1, None, Mutants::NONE);
        let state = e.checkpoint(1);
        run(&mut e, 0);
        e.tick(&mut Vec::new());
        e.reset_to_checkpoint(Some(&state)).unwrap();
        assert_eq!(e.state().unassigned, vec![0]);
        assert_eq!(e.state().discovered, 1);
        assert!(e.reset_to_checkpoint(Some(&[0xff, 0xff])).is_err());
    }
}
