//! Deliberate bugs, switched on by name (`--mutant NAME`), to prove that the
//! checkers catch what they claim to. Each is modelled on a real class of
//! checkpointing bug — where there is a known one, [`MutantInfo::modelled_on`]
//! names it.
//!
//! A mutant is declared next to the code it breaks, as an associated constant
//! of [`Mutant`] in a `mod mutants` block at the end of the hook's file (its
//! name, description, the Flink issue it models and where it applies);
//! [`MUTANTS`] lists each once, and its order is the order `ckptsim list` and
//! the kill matrix show them and the mutant's bit in a [`Mutants`] set. The
//! set has as many bits as the registry has entries: there is no ceiling.
//! When no mutant is on, each hook is one branch on a set that is empty.
//! This module must never name the modules that declare the mutants (it
//! sits below them): the registry only lists the constants.
//!
//! `ckptsim mutants` sweeps every mutant on the scenarios where it applies
//! (or on the user's own, `mutants FILE...`)
//! and prints the kill matrix; a mutant that survives is a finding about the
//! checkers (or about the scenarios that should reach it).

use serde::Serialize;

/// A deliberate bug: a handle on its declaration. Copy it freely; two
/// handles are the same mutant when they have the same name.
#[derive(Clone, Copy)]
pub struct Mutant(&'static MutantInfo);

/// A mutant's declaration.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MutantInfo {
    pub name: &'static str,
    /// The part of the system it breaks.
    pub part: &'static str,
    pub what: &'static str,
    /// The real bug (or class of bugs) it is modelled on.
    pub modelled_on: &'static str,
    /// The invariant that should catch it.
    pub caught_by: &'static str,
    /// Where it applies: (shipped scenario, algorithm name) pairs to sweep.
    #[serde(skip)]
    pub applies: &'static [(&'static str, &'static str)],
}

/// Every mutant, once. A new mutant is declared next to its hook and gets
/// one line here; `the_registry_is_complete_and_consistent` checks the rest.
pub const MUTANTS: &[Mutant] = &[
    Mutant::NoSourceRewind,
    Mutant::SourceOffsetOffByOne,
    Mutant::SinkCommitOnBarrier,
    Mutant::SinkAbortsRecoveredTxns,
    Mutant::AlignedNoBlock,
    Mutant::AlignedPriorityBarrier,
    Mutant::AbortKeepsBlocked,
    Mutant::SkipCancelMarker,
    Mutant::CompleteWithMissingAck,
    Mutant::PeriodicTriggerStopsOnAbort,
    Mutant::QueuedTriggerSkipsMinPause,
    Mutant::ObsoleteBarrierNoResume,
    Mutant::RecycleLosesCredit,
    Mutant::BufferBoundaryDropsRecord,
    Mutant::AckBeforeChannelStateWritten,
    Mutant::CheckpointDuringRecovery,
    Mutant::RecoveredBuffersPersistedTwice,
    Mutant::ChannelStateDropsPayload,
    Mutant::ChannelFileResultEarly,
    Mutant::AbortStopsNewerCapture,
    Mutant::StorageLosesStateWrite,
    Mutant::CoordinatorForgetsCheckpoints,
    Mutant::SavepointNotifies,
    Mutant::FinalNotificationNotAwaited,
    Mutant::FinishedOperatorRestoredRunning,
    Mutant::ExitsWithAckPending,
    Mutant::ExitInsideBarrierStep,
    Mutant::StopSavepointNotAwaited,
    Mutant::TriggersOnlyJobSources,
    Mutant::FinishedOnRestoreSilent,
    Mutant::UnalignedLateSnapshot,
    Mutant::UnalignedDropInflight,
    Mutant::UnalignedAckAtFirstBarrier,
    Mutant::PriorityOnForcedEdge,
    Mutant::RestoreDropsChannelState,
    Mutant::RestartKeepsStaleBuffers,
    Mutant::TimeoutSwitchNoCapture,
    Mutant::OutputTimeoutDropsOvertaken,
    Mutant::SimulatorPanic,
    Mutant::SinkCommitsOneBehind,
    Mutant::SavepointEntersStore,
    Mutant::DeclineTwice,
    Mutant::TolerableFailuresOffByOne,
    Mutant::SinkAckWithoutFlush,
    Mutant::WindowNoFlushAtEnd,
    Mutant::UpsertBatchReordered,
    Mutant::ChainNotifiesHeadOnly,
    Mutant::CommittableAfterBarrier,
    Mutant::WriterKeepsLastTransaction,
    Mutant::EoiCommittableConstant,
    Mutant::GlobalCommitOnNotify,
    Mutant::SplitsBackUncheckpointedOnly,
    Mutant::LostOperatorEventIgnored,
    Mutant::CheckpointIgnoresUnackedEvents,
    Mutant::OperatorEventsNotHeld,
    Mutant::NoMoreSplitsOnce,
    Mutant::UnionStateKeptWhole,
    Mutant::UnionStateRestoredAsSplit,
    Mutant::BroadcastStateNotSnapshotted,
    Mutant::KeyedSnapshotStaleGroup,
    Mutant::AckBeforeSync,
    Mutant::TriggersWhileRestoring,
    Mutant::CompactionDropsOldestRun,
    Mutant::RegistryIgnoresReusedRuns,
    Mutant::AbortedCheckpointFilesKept,
    Mutant::RegistryNotRebuilt,
    Mutant::NativeSavepointBlocksMaterialization,
    Mutant::ChangelogTruncatedBeforeSubsumed,
    Mutant::NoClaimReusesRestoredFiles,
    Mutant::ClaimKeepsRestoredFiles,
    Mutant::MergedChannelStateNotRestored,
    Mutant::RestoredPhysicalFileReused,
    Mutant::MergedAppendUncounted,
    Mutant::RestartForgetsEdgeCredits,
    Mutant::IdleSourceEndsInput,
    Mutant::LineIgnoresOrphans,
    Mutant::LogTruncatedEarly,
    Mutant::CicMissedForced,
    Mutant::AlignedWaitsOnFeedback,
    Mutant::FeedbackNotLogged,
    Mutant::AlignedTriggerUrgent,
    Mutant::IdleTaskIgnoresMail,
    Mutant::MailsSurviveRestart,
    Mutant::OneMailPerStep,
    Mutant::RecoveredCommitDeferred,
    Mutant::NewDataBeforeRecovered,
    Mutant::LingeringTransactionsKept,
    Mutant::TriggerBacksOffAfterFailover,
    Mutant::TriggersWhileTriggering,
    Mutant::RestartNeverGivesUp,
    Mutant::SubsumedCheckpointsKept,
    Mutant::AbortedPauseKept,
    Mutant::NotificationsSkipped,
    Mutant::WindowClockNotRestored,
    Mutant::SplitWatermarkAtFirstRecord,
    Mutant::SplitlessSourceNoFinalWatermark,
    Mutant::IdlenessClockRunsUnderBackpressure,
    Mutant::AlignmentSkipsFinishedReaders,
    Mutant::PausedSplitIdlenessClockRuns,
    Mutant::ChannelStateDropsWatermarkStatus,
    Mutant::LocalChannelStateLost,
    Mutant::ValveMaxWithoutAlignedChannels,
    Mutant::TimersNotInSnapshot,
    Mutant::RestoredProcessingTimersNotArmed,
    Mutant::SessionSetNotRestored,
    Mutant::SessionLateBeforeMerge,
    Mutant::RescaleDropsMovedTimers,
    Mutant::PooledAbortKnownOnly,
    Mutant::TransactionalIdGaps,
    Mutant::EmptyTransactionCommitted,
    Mutant::RestoredProducerNotFenced,
    Mutant::LogLingeringNotAborted,
    Mutant::LogFlushSkipsRetries,
    Mutant::LogAsyncErrorSwallowed,
    Mutant::CommitTimeoutDropped,
    Mutant::SourceOffsetsCommittedEarly,
    Mutant::RemovedSubtasksNotAborted,
    Mutant::RemovedReadersSplitsDropped,
];

impl Mutant {
    /// Declares a mutant (in the `mod mutants` block next to its hook).
    pub const fn declare(info: &'static MutantInfo) -> Mutant {
        Mutant(info)
    }
    pub fn info(self) -> &'static MutantInfo {
        self.0
    }
    pub fn name(self) -> &'static str {
        self.0.name
    }
    pub fn from_name(name: &str) -> Option<Mutant> {
        MUTANTS.iter().copied().find(|m| m.name() == name)
    }
    pub fn names() -> String {
        MUTANTS
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::ops::Deref for Mutant {
    type Target = MutantInfo;
    fn deref(&self) -> &MutantInfo {
        self.0
    }
}

impl PartialEq for Mutant {
    /// By name: a constant's declaration may be copied into each use, so
    /// the address of two handles on one mutant can differ.
    fn eq(&self, other: &Mutant) -> bool {
        std::ptr::eq(self.0, other.0) || self.0.name == other.0.name
    }
}

impl Eq for Mutant {}

impl std::fmt::Debug for Mutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mutant({})", self.0.name)
    }
}

thread_local! {
    /// The mutants that changed behaviour in the run on this thread (runs
    /// are single-threaded; a sweep runs one seed per thread at a time).
    static FIRED: std::cell::Cell<Mutants> = const { std::cell::Cell::new(Mutants::NONE) };
}

/// Records that mutant `m` just made the run diverge from correct code.
/// Every mutant's hook calls it exactly where the broken path is taken, so
/// a run can say which of its mutants never took effect. It only records:
/// nothing in a run reads it.
#[inline]
pub(crate) fn fired(m: Mutant) {
    FIRED.with(|f| f.set(f.get().with(m)));
}

/// Forgets what earlier runs on this thread fired (at the start of a run).
pub(crate) fn reset_fired() {
    FIRED.with(|f| f.set(Mutants::NONE));
}

/// Records that `ms` took effect before the run started (while its
/// restore was prepared).
pub(crate) fn fired_before_the_run(ms: Mutants) {
    for m in ms.iter() {
        fired(m);
    }
}

/// The mutants that took effect in the current run on this thread.
pub(crate) fn fired_in_this_run() -> Mutants {
    FIRED.with(|f| f.get())
}

/// How many 64-bit words a set over `entries` mutants needs.
pub const fn words(entries: usize) -> usize {
    entries.div_ceil(64)
}

/// A set of the mutants of a registry: a bit per entry, `WORDS` words.
/// Every run uses [`Mutants`], the set over [`MUTANTS`]; a test builds one
/// over a registry of its own.
#[derive(Clone, Copy)]
pub struct MutantSet<const WORDS: usize> {
    registry: &'static [Mutant],
    bits: [u64; WORDS],
}

/// A set of the registered mutants (empty in every normal run), sized from
/// the registry.
pub type Mutants = MutantSet<{ words(MUTANTS.len()) }>;

impl Mutants {
    pub const NONE: Mutants = MutantSet::empty(MUTANTS);
}

impl Default for Mutants {
    fn default() -> Mutants {
        Mutants::NONE
    }
}

impl<const WORDS: usize> MutantSet<WORDS> {
    /// The empty set over `registry`, which must fit in `WORDS` words.
    pub const fn empty(registry: &'static [Mutant]) -> Self {
        assert!(
            registry.len() <= WORDS * 64,
            "the set is smaller than its registry"
        );
        MutantSet {
            registry,
            bits: [0; WORDS],
        }
    }
    /// `m`'s bit: its place in the registry.
    fn bit(&self, m: Mutant) -> usize {
        self.registry
            .iter()
            .position(|r| *r == m)
            .unwrap_or_else(|| panic!("mutant {} is not in the registry", m.name()))
    }
    pub fn with(mut self, m: Mutant) -> Self {
        let i = self.bit(m);
        self.bits[i / 64] |= 1 << (i % 64);
        self
    }
    /// Whether `m` is on: the hooks' test, so an empty set answers with one
    /// branch and looks nothing up.
    #[inline(always)]
    pub fn has(self, m: Mutant) -> bool {
        !self.is_empty() && self.contains(m)
    }
    #[inline(never)]
    fn contains(&self, m: Mutant) -> bool {
        let i = self.bit(m);
        self.bits[i / 64] & (1 << (i % 64)) != 0
    }
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.bits == [0; WORDS]
    }
    /// The mutants on, in registry order.
    pub fn iter(self) -> impl Iterator<Item = Mutant> {
        let bits = self.bits;
        self.registry
            .iter()
            .enumerate()
            .filter(move |(i, _)| bits[i / 64] & (1 << (i % 64)) != 0)
            .map(|(_, m)| *m)
    }
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(|m| m.name()).collect()
    }
}

impl<const WORDS: usize> PartialEq for MutantSet<WORDS> {
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits && self.registry.len() == other.registry.len()
    }
}

impl<const WORDS: usize> Eq for MutantSet<WORDS> {}

impl<const WORDS: usize> std::fmt::Debug for MutantSet<WORDS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_complete_and_consistent() {
        assert!(MUTANTS.len() >= 15);
        for (i, m) in MUTANTS.iter().enumerate() {
            assert_eq!(Mutant::from_name(m.name), Some(*m));
            assert!(!m.applies.is_empty(), "{}", m.name);
            assert!(
                crate::verdict::CheckId::from_name(m.caught_by).is_some(),
                "{}",
                m.name
            );
            assert!(
                MUTANTS[..i].iter().all(|o| o != m),
                "{} listed twice",
                m.name
            );
        }
    }

    /// Every `Mutant::declare` in the crate's sources is in the registry
    /// (a mutant declared but not listed could never be switched on).
    #[test]
    fn every_declared_mutant_is_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sim");
        let mut declared = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for line in text.lines() {
                        let line = line.trim();
                        if let Some(rest) = line.strip_prefix("pub const ") {
                            if let Some((name, decl)) = rest.split_once(": Mutant = ") {
                                if decl.starts_with("Mutant::declare(") {
                                    declared.push(name.to_string());
                                }
                            }
                        }
                    }
                }
            }
        }
        declared.sort();
        let mut registered: Vec<String> = {
            let text = include_str!("mutant.rs");
            let list = &text[text.find("pub const MUTANTS").unwrap()..];
            let list = &list[..list.find("];").unwrap()];
            list.lines()
                .filter_map(|l| l.trim().strip_prefix("Mutant::"))
                .map(|l| l.trim_end_matches(',').to_string())
                .collect()
        };
        registered.sort();
        assert_eq!(declared, registered);
        assert_eq!(registered.len(), MUTANTS.len());
    }

    /// A registry of 70 mutants (more than one word of bits): each one's
    /// bit is its own, sets name exactly their members, and a set's size
    /// follows its registry.
    #[test]
    fn a_registry_of_more_than_64_mutants_works() {
        const N: usize = 70;
        let registry: &'static [Mutant] = Vec::leak(
            (0..N)
                .map(|i| {
                    Mutant::declare(Box::leak(Box::new(MutantInfo {
                        name: String::leak(format!("mutant-{i}")),
                        part: "a test",
                        what: "nothing",
                        modelled_on: "nothing",
                        caught_by: "state",
                        applies: &[("wordcount", "aligned")],
                    })))
                })
                .collect(),
        );
        let none = MutantSet::<{ words(N) }>::empty(registry);
        assert_eq!(words(N), 2);
        assert!(none.is_empty());
        for (i, m) in registry.iter().enumerate() {
            let one = none.with(*m);
            assert!(!one.is_empty());
            assert_eq!(one.names(), vec![m.name()]);
            // The 65th and later mutants do not alias the first ones.
            for (j, o) in registry.iter().enumerate() {
                assert_eq!(one.has(*o), i == j, "{} has {}", m.name(), o.name());
            }
        }
        let odd = registry
            .iter()
            .skip(1)
            .step_by(2)
            .fold(none, |s, m| s.with(*m));
        assert_eq!(odd.iter().count(), N / 2);
        assert!(odd.has(registry[69]) && !odd.has(registry[68]) && !odd.has(registry[0]));
        let everything = registry.iter().fold(none, |s, m| s.with(*m));
        assert_eq!(everything.names().len(), N);
        // The crate's own set is sized from its registry in the same way.
        assert_eq!(
            std::mem::size_of::<Mutants>(),
            std::mem::size_of::<&[Mutant]>() + 8 * words(MUTANTS.len())
        );
    }

    #[test]
    #[should_panic(expected = "smaller than its registry")]
    fn a_set_smaller_than_its_registry_is_refused() {
        let registry: &'static [Mutant] = Vec::leak(vec![Mutant::NoSourceRewind; 65]);
        let _ = MutantSet::<1>::empty(registry);
    }
}
