//! Event time's building blocks, as Flink's code has them: the
//! bounded-out-of-orderness watermark generator, the combination of
//! per-split watermarks in a source reader, and the valve that combines a
//! task's input channels' watermarks and watermark statuses.
//!
//! Timestamps and watermarks are milliseconds in an `i64`, as Flink's
//! `long`s; [`MIN_WATERMARK`] is where every watermark starts and
//! [`MAX_WATERMARK`] the one a finished input sends. docs/event-time.md
//! says how they are wired into tasks, channels, checkpoints and the
//! judge.

use crate::mutant::Mutant;
use std::collections::{BTreeMap, BTreeSet};

/// Where every watermark starts (Flink's `Long.MIN_VALUE`).
pub const MIN_WATERMARK: i64 = i64::MIN;
/// The watermark of an input that has ended (`Watermark.MAX_WATERMARK`).
pub const MAX_WATERMARK: i64 = i64::MAX;

/// Flink's `BoundedOutOfOrdernessWatermarks`: it remembers the largest
/// timestamp seen, and a periodic emit offers that less the bound, less
/// one (a record at the watermark's timestamp would be late).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundedOutOfOrderness {
    bound: i64,
    max_timestamp: i64,
}

impl BoundedOutOfOrderness {
    pub fn new(bound_ms: i64) -> BoundedOutOfOrderness {
        let bound = bound_ms.max(0);
        BoundedOutOfOrderness {
            bound,
            // Flink's start: the first periodic emit is Long.MIN_VALUE.
            max_timestamp: MIN_WATERMARK.saturating_add(bound).saturating_add(1),
        }
    }

    /// `onEvent`: a record with this timestamp was read.
    pub fn on_event(&mut self, timestamp: i64) {
        self.max_timestamp = self.max_timestamp.max(timestamp);
    }

    /// `onPeriodicEmit`: the watermark it offers now.
    pub fn current(&self) -> i64 {
        self.max_timestamp
            .saturating_sub(self.bound)
            .saturating_sub(1)
    }
}

/// One split's watermark in a reader (Flink's `PartialWatermark`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Partial {
    watermark: i64,
    idle: bool,
    /// Released (`unregisterOutput`): it no longer takes part.
    released: bool,
}

/// Flink's `CombinedWatermarkStatus`, behind the `WatermarkOutputMultiplexer`
/// of a FLIP-27 reader: the reader's watermark is the smallest of its
/// active splits' and never goes back; with every split idle the reader is
/// idle, and its watermark stays (before Flink 2.2) or becomes the largest
/// of the splits' (`flush_idle`, FLINK-38454).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CombinedWatermark {
    partials: Vec<Partial>,
    combined: i64,
    idle: bool,
    flush_idle: bool,
}

impl Default for CombinedWatermark {
    fn default() -> CombinedWatermark {
        CombinedWatermark::new(false)
    }
}

impl CombinedWatermark {
    /// `flush_idle`: every split idle flushes the largest watermark (Flink
    /// 2.2 on).
    pub fn new(flush_idle: bool) -> CombinedWatermark {
        CombinedWatermark {
            partials: Vec::new(),
            combined: MIN_WATERMARK,
            idle: false,
            flush_idle,
        }
    }

    /// A new split output (`registerNewOutput`): it starts active at
    /// [`MIN_WATERMARK`], so it holds the reader back until it emits.
    pub fn add_split(&mut self) -> usize {
        self.partials.push(Partial {
            watermark: MIN_WATERMARK,
            idle: false,
            released: false,
        });
        self.partials.len() - 1
    }

    /// Split `i` finished (`unregisterOutput`): it no longer holds the
    /// reader back.
    pub fn release(&mut self, i: usize) {
        if let Some(p) = self.partials.get_mut(i) {
            p.released = true;
        }
    }

    /// Split `i` offers a watermark (its own never goes back) and is active.
    pub fn offer(&mut self, i: usize, watermark: i64) {
        if let Some(p) = self.partials.get_mut(i) {
            p.watermark = p.watermark.max(watermark);
            p.idle = false;
        }
    }

    /// Split `i` is marked idle (or active again).
    pub fn set_idle(&mut self, i: usize, idle: bool) {
        if let Some(p) = self.partials.get_mut(i) {
            p.idle = idle;
        }
    }

    /// `updateCombinedWatermark`: the new combined watermark if it
    /// advanced. Without splits nothing; with all idle, nothing, or with
    /// `flush_idle` the largest of theirs if that advanced (`idle` says
    /// whether all are idle).
    pub fn update(&mut self) -> Option<i64> {
        if self.partials.iter().all(|p| p.released) {
            return None;
        }
        let live = || self.partials.iter().filter(|p| !p.released);
        let min = live().filter(|p| !p.idle).map(|p| p.watermark).min();
        self.idle = min.is_none();
        let candidate = match min {
            Some(min) => min,
            None if self.flush_idle => live().map(|p| p.watermark).max()?,
            None => return None,
        };
        (candidate > self.combined).then(|| {
            self.combined = candidate;
            candidate
        })
    }

    /// Every split is idle (after the last [`CombinedWatermark::update`]).
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// The combined watermark so far.
    pub fn combined(&self) -> i64 {
        self.combined
    }
}

/// A job's event time, from its scenario: which sources emit watermarks,
/// how often, with what bound and idleness, and how long each partition is.
#[derive(Clone, Debug, Default)]
pub struct JobTime {
    /// Some source emits watermarks: every task keeps a valve and every
    /// source sends [`MAX_WATERMARK`] when its input ends.
    pub on: bool,
    /// Per operator: a source's watermark strategy.
    sources: Vec<Strategy>,
    /// Per global partition: its records (its last one releases its split)
    /// and its rate (records per second; 0: no limit).
    lengths: Vec<u64>,
    rates: Vec<u64>,
    /// Per operator: a static source's partitions (first, count,
    /// parallelism), which its subtasks hold from the start.
    statics: Vec<Option<(u32, u32, u32)>>,
    /// Readers flush their idle splits' largest watermark (Flink 2.2 on).
    flush_idle: bool,
    /// Alignment leaves idle splits alone (Flink 2.2 on).
    pub alignment_skips_idle: bool,
}

/// A source's watermark strategy.
#[derive(Clone, Copy, Debug, Default)]
struct Strategy {
    /// The periodic emit's interval (ns; 0: no watermarks).
    interval: u64,
    /// Bounded out-of-orderness (ms).
    bound: i64,
    /// `withIdleness` (ns; 0: none).
    idle_timeout: u64,
    /// Watermark alignment's update interval (ns; 0: not aligned).
    alignment_interval: u64,
}

impl JobTime {
    pub fn new(scenario: &crate::scenario::Scenario) -> JobTime {
        let mut sources = Vec::new();
        let mut lengths = Vec::new();
        let mut rates = Vec::new();
        let mut statics = Vec::new();
        for op in &scenario.operators {
            let Some(src) = op.kind.source_spec() else {
                sources.push(Strategy::default());
                statics.push(None);
                continue;
            };
            let fixed = src.split_assignment == crate::scenario::SplitAssignment::Static;
            let first = lengths.len() as u32;
            statics.push(fixed.then_some((first, src.partitions, op.parallelism)));
            let ms = src.watermark_bound.nanos() / 1_000_000;
            sources.push(Strategy {
                interval: src.watermark_interval.nanos(),
                bound: i64::try_from(ms).unwrap_or(i64::MAX),
                idle_timeout: src.idle_timeout.nanos(),
                alignment_interval: match src.alignment_group.is_empty() {
                    true => 0,
                    false => src.alignment_update_interval.nanos(),
                },
            });
            lengths.extend((0..src.partitions).map(|p| src.records_of(p)));
            rates.extend((0..src.partitions).map(|p| src.rate_of(p)));
        }
        JobTime {
            on: sources.iter().any(|s| s.interval > 0),
            sources,
            lengths,
            rates,
            statics,
            flush_idle: scenario.checkpoint.flink_version.flushes_idle_splits(),
            alignment_skips_idle: scenario
                .checkpoint
                .flink_version
                .alignment_skips_idle_splits(),
        }
    }

    /// The splits a fresh subtask of source `op` holds: a static source's
    /// partitions (`i % parallelism == subtask`) that have records; a
    /// FLIP-27 reader's come as they are assigned.
    pub fn initial_splits(&self, op: u32, subtask: u32) -> Vec<u32> {
        let Some(Some((first, n, parallelism))) = self.statics.get(op as usize) else {
            return Vec::new();
        };
        (*first + subtask..*first + *n)
            .step_by((*parallelism).max(1) as usize)
            .filter(|&p| self.lengths.get(p as usize).is_some_and(|&l| l > 0))
            .collect()
    }

    /// The splits a restored source subtask holds: those of its state's
    /// offsets that have records left, with their next offsets.
    pub fn restored_splits(&self, offsets: &[(u32, u64)]) -> Vec<(u32, u64)> {
        offsets
            .iter()
            .filter(|&&(p, o)| self.lengths.get(p as usize).is_some_and(|&l| o < l))
            .copied()
            .collect()
    }

    /// Operator `op`'s watermark interval (ns; 0: it emits none).
    pub fn interval(&self, op: u32) -> u64 {
        self.sources.get(op as usize).map_or(0, |s| s.interval)
    }

    /// Operator `op`'s watermark alignment update interval (ns; 0: it is
    /// not aligned).
    pub fn alignment_interval(&self, op: u32) -> u64 {
        self.sources
            .get(op as usize)
            .map_or(0, |s| s.alignment_interval)
    }

    /// Operator `op`'s idle timeout (ns; 0: no idleness).
    pub fn idle_timeout(&self, op: u32) -> u64 {
        self.sources.get(op as usize).map_or(0, |s| s.idle_timeout)
    }

    /// A fresh watermark state for a subtask of source `op`.
    pub fn source(&self, op: u32) -> SourceWatermarks {
        let s = self.sources.get(op as usize).copied().unwrap_or_default();
        SourceWatermarks::new(s.bound, s.idle_timeout, self.flush_idle)
    }

    /// Whether `offset` is the last record of global partition `partition`.
    pub fn is_last(&self, partition: u32, offset: u64) -> bool {
        self.lengths
            .get(partition as usize)
            .is_some_and(|&n| offset + 1 == n)
    }

    /// From when partition `partition`'s record at `offset` is there to
    /// read (`None`: it has no such record).
    pub fn ready_at(&self, partition: u32, offset: u64) -> Option<u64> {
        let length = *self.lengths.get(partition as usize)?;
        let rate = self.rates.get(partition as usize).copied().unwrap_or(0);
        (offset < length).then(|| crate::model::workload::ready_at(rate, offset).0)
    }
}

/// One split of a reader: its place in the combination, its generator,
/// its idleness (with `withIdleness`) and the offset of its next record.
#[derive(Clone, Debug)]
pub struct SplitWatermark {
    index: usize,
    generator: BoundedOutOfOrderness,
    pub idleness: Option<crate::model::idleness::Idleness>,
    pub next_offset: u64,
}

/// A source subtask's watermarks, as Flink's `SourceOperator` makes them
/// with a watermark strategy and per-split watermarks
/// (`ProgressiveTimestampsAndWatermarks`): a bounded-out-of-orderness
/// generator per split, registered when the split is added to the reader
/// or restored with it (FLINK-26018, FLINK-32828: a split registered only
/// at its first record let the others' watermark run ahead of it) and
/// released after its last record (`SourceReaderBase` releases a finished
/// split's output), their watermarks combined by a [`CombinedWatermark`]
/// on each periodic emit. With idleness (`withIdleness`), each generator
/// and the main output's are wrapped with an idleness timer
/// ([`crate::model::idleness`]) and the task's output status follows
/// [`SourceStatus`](crate::model::idleness::SourceStatus). A record of a
/// split not registered registers it (a source of the user's own, whose
/// splits the task cannot know). Nothing of it is in a checkpoint: a
/// restored source starts again at [`MIN_WATERMARK`], active.
#[derive(Clone, Debug)]
pub struct SourceWatermarks {
    bound: i64,
    idle_timeout: u64,
    /// Per split (global partition).
    splits: BTreeMap<u32, SplitWatermark>,
    combined: CombinedWatermark,
    /// The main output's idleness (with `withIdleness`).
    main: Option<crate::model::idleness::Idleness>,
    status: crate::model::idleness::SourceStatus,
    /// A split was ever added.
    had_splits: bool,
}

impl SourceWatermarks {
    pub fn new(bound_ms: i64, idle_timeout_ns: u64, flush_idle: bool) -> SourceWatermarks {
        let idleness =
            (idle_timeout_ns > 0).then(|| crate::model::idleness::Idleness::new(idle_timeout_ns));
        SourceWatermarks {
            bound: bound_ms,
            idle_timeout: idle_timeout_ns,
            splits: BTreeMap::new(),
            combined: CombinedWatermark::new(flush_idle),
            main: idleness,
            status: Default::default(),
            had_splits: false,
        }
    }

    /// Whether the reader ever held a split.
    pub fn had_splits(&self) -> bool {
        self.had_splits
    }

    /// The status the task's output last sent is idle.
    pub fn is_idle(&self) -> bool {
        self.status.is_idle()
    }

    /// Split `partition` (its next record at `offset`) was added to the
    /// reader (or restored with it): it holds the reader back until it
    /// emits.
    pub fn add_split(&mut self, partition: u32, offset: u64) {
        let combined = &mut self.combined;
        let (bound, idle) = (self.bound, self.idle_timeout);
        self.had_splits = true;
        self.splits
            .entry(partition)
            .or_insert_with(|| SplitWatermark {
                index: combined.add_split(),
                generator: BoundedOutOfOrderness::new(bound),
                idleness: (idle > 0).then(|| crate::model::idleness::Idleness::new(idle)),
                next_offset: offset,
            });
    }

    /// The split `partition`, while the reader holds it.
    pub fn split(&self, partition: u32) -> Option<&SplitWatermark> {
        self.splits.get(&partition)
    }

    /// Each split's watermark as its output offers it at a periodic emit
    /// (its generator's), and whether it is idle, in split order.
    pub fn split_watermarks(&self) -> impl Iterator<Item = (u32, i64, bool)> + '_ {
        self.splits.iter().map(|(&p, s)| {
            let idle = s.idleness.as_ref().is_some_and(|i| i.idle_now);
            (p, s.generator.current(), idle)
        })
    }

    /// A record of split `partition` at `offset` with `timestamp` was
    /// emitted; `last`: it was the split's last record, and the split is
    /// released.
    pub fn on_record(&mut self, partition: u32, offset: u64, timestamp: i64, last: bool) {
        self.add_split(partition, offset);
        let Some(split) = self.splits.get_mut(&partition) else {
            return;
        };
        split.generator.on_event(timestamp);
        split.next_offset = offset + 1;
        if let Some(idleness) = split.idleness.as_mut() {
            idleness.on_event();
        }
        if last {
            // Its last watermark first: what it read counts.
            self.combined.offer(split.index, split.generator.current());
            self.combined.release(split.index);
            self.splits.remove(&partition);
        }
    }

    /// The periodic emit (`emitImmediateWatermark`): each split's
    /// generator offers its watermark, or, if `idle(split, idleness)` says
    /// its timeout passed, marks it idle; then the main output's; what the
    /// task's output sends goes to `out` (a watermark if the combination
    /// grew, a status if it changed). `idle` is the idleness timer's
    /// verdict (the run's clock, or the run's decisions in the oracle);
    /// [`crate::model::idleness::MAIN_OUTPUT`] names the main output.
    pub fn periodic(
        &mut self,
        idle: &mut dyn FnMut(u32, &mut crate::model::idleness::Idleness) -> bool,
        out: &mut Vec<crate::model::Element>,
    ) {
        for (&p, split) in self.splits.iter_mut() {
            let idleness = split.idleness.as_mut();
            match idleness.map(|i| (idle(p, i), i)) {
                Some((true, idleness)) => {
                    if !idleness.idle_now {
                        idleness.idle_now = true;
                        self.combined.set_idle(split.index, true);
                    }
                }
                _ => self.combined.offer(split.index, split.generator.current()),
            }
        }
        // The multiplexer emits an advanced watermark, then marks the
        // output idle if every split is (before Flink 2.2 the two exclude
        // each other: an idle combination never advances).
        if let Some(w) = self.combined.update() {
            self.status.split_watermark(w, out);
        }
        if self.combined.is_idle() {
            self.status.splits_idle(out);
        }
        // Without idleness the main output's generator just emits (its
        // watermark, `MIN_WATERMARK`, forwards nothing).
        let quiet = self.main.as_mut().is_some_and(|main| {
            let quiet = idle(crate::model::idleness::MAIN_OUTPUT, main);
            main.idle_now |= quiet;
            quiet
        });
        self.status.main(quiet, out);
    }
}

/// What a valve emits after an input: a new watermark, a new status, or
/// both (a watermark first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValveOutput {
    pub watermark: Option<i64>,
    /// `Some(true)`: the task's output became idle; `Some(false)`: active.
    pub idle: Option<bool>,
    /// A channel at the output's watermark went idle and left active
    /// channels none of which is aligned (each active again below the
    /// output): the minimum is over no channel, and no watermark goes out
    /// (FLINK-7721's path).
    pub none_aligned: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChannelStatus {
    watermark: i64,
    idle: bool,
    /// Its watermark takes part in the minimum: active and not behind the
    /// last output (a channel active again below it is not, until it
    /// catches up).
    aligned: bool,
}

/// Flink's `StatusWatermarkValve`: a task's input watermark is the smallest
/// watermark of its aligned input channels, emitted only when it grows.
/// A watermark of an idle channel, or arriving while every channel is
/// idle, is ignored, as are watermarks below the channel's own. A channel
/// going idle no longer holds the minimum back; when the last one goes
/// idle the largest watermark of all is flushed and the output goes idle.
/// A channel active again joins the minimum only once it has caught up
/// with the output. The minimum is kept in a sorted set, so a task with
/// thousands of inputs pays log n per watermark.
#[derive(Clone, Debug)]
pub struct Valve {
    channels: Vec<ChannelStatus>,
    /// `(watermark, channel)` of the aligned channels.
    aligned: BTreeSet<(i64, u32)>,
    last_output: i64,
    idle: bool,
    /// Mutant `valve-max-without-aligned-channels`.
    max_without_aligned: bool,
}

impl Valve {
    /// A valve over `channels` inputs, each active at [`MIN_WATERMARK`].
    pub fn new(channels: usize) -> Valve {
        Valve {
            channels: vec![
                ChannelStatus {
                    watermark: MIN_WATERMARK,
                    idle: false,
                    aligned: true,
                };
                channels
            ],
            aligned: (0..channels as u32).map(|c| (MIN_WATERMARK, c)).collect(),
            last_output: MIN_WATERMARK,
            idle: false,
            max_without_aligned: false,
        }
    }

    /// The valve with the runtime's mutants (the oracle's has none).
    pub fn with_mutants(mut self, mutants: crate::mutant::Mutants) -> Valve {
        self.max_without_aligned = mutants.has(Mutant::ValveMaxWithoutAlignedChannels);
        self
    }

    /// The last watermark the valve emitted.
    pub fn output(&self) -> i64 {
        self.last_output
    }

    /// Whether the valve's output is idle.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// The channel's own watermark (what holds a task back, for a stall's
    /// evidence).
    pub fn channel(&self, channel: usize) -> Option<(i64, bool)> {
        self.channels.get(channel).map(|c| (c.watermark, c.idle))
    }

    /// The aligned channel with the smallest watermark: the one holding
    /// the output back.
    pub fn holding_back(&self) -> Option<usize> {
        self.aligned.first().map(|&(_, c)| c as usize)
    }

    /// `inputWatermark`: channel `channel` delivered `watermark`.
    pub fn input_watermark(&mut self, channel: usize, watermark: i64) -> ValveOutput {
        let Some(&c) = self.channels.get(channel) else {
            return ValveOutput::default();
        };
        if self.idle || c.idle || watermark <= c.watermark {
            return ValveOutput::default();
        }
        let mut status = c;
        status.watermark = watermark;
        if c.aligned {
            self.aligned.remove(&(c.watermark, channel as u32));
            self.aligned.insert((watermark, channel as u32));
        } else if watermark >= self.last_output {
            status.aligned = true;
            self.aligned.insert((watermark, channel as u32));
        }
        self.channels[channel] = status;
        ValveOutput {
            watermark: self.new_min(),
            ..ValveOutput::default()
        }
    }

    /// `inputWatermarkStatus`: channel `channel` became idle or active.
    pub fn input_status(&mut self, channel: usize, idle: bool) -> ValveOutput {
        let Some(&c) = self.channels.get(channel) else {
            return ValveOutput::default();
        };
        let mut out = ValveOutput::default();
        if idle && !c.idle {
            self.channels[channel].idle = true;
            self.unalign(channel);
            if self.channels.iter().all(|c| c.idle) {
                if c.watermark == self.last_output {
                    out.watermark = self.flush_max();
                }
                self.idle = true;
                out.idle = Some(true);
            } else if c.watermark == self.last_output {
                out.none_aligned = self.aligned.is_empty();
                out.watermark = match out.none_aligned && self.max_without_aligned {
                    true => {
                        // Mutant: the minimum over no channel is MAX.
                        crate::mutant::fired(Mutant::ValveMaxWithoutAlignedChannels);
                        self.last_output = MAX_WATERMARK;
                        Some(MAX_WATERMARK)
                    }
                    false => self.new_min(),
                };
            }
        } else if !idle && c.idle {
            self.channels[channel].idle = false;
            if c.watermark >= self.last_output {
                self.channels[channel].aligned = true;
                self.aligned.insert((c.watermark, channel as u32));
            }
            if self.idle {
                self.idle = false;
                out.idle = Some(false);
            }
        }
        out
    }

    fn unalign(&mut self, channel: usize) {
        let c = &mut self.channels[channel];
        if c.aligned {
            c.aligned = false;
            self.aligned.remove(&(c.watermark, channel as u32));
        }
    }

    /// `findAndOutputNewMinWatermarkAcrossAlignedSubpartitions`.
    fn new_min(&mut self) -> Option<i64> {
        let &(min, _) = self.aligned.first()?;
        (min > self.last_output).then(|| {
            self.last_output = min;
            min
        })
    }

    /// `findAndOutputMaxWatermarkAcrossAllSubpartitions`.
    fn flush_max(&mut self) -> Option<i64> {
        let max = self.channels.iter().map(|c| c.watermark).max()?;
        (max > self.last_output).then(|| {
            self.last_output = max;
            max
        })
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const ValveMaxWithoutAlignedChannels: Mutant = Mutant::declare(&MutantInfo {
            name: "valve-max-without-aligned-channels",
            part: "event time",
            what: "when a channel at the task's watermark goes idle and every channel still active is active again below the watermark (not aligned), the valve's minimum over the aligned channels is taken over none, MAX_WATERMARK, and sent: every window fires at once and the records still to come are late",
            modelled_on: "FLINK-7721 (StatusWatermarkValve output a new minimum not aggregated from any aligned channel: Long.MAX_VALUE)",
            caught_by: "exactly-once-output",
            applies: &[("event-time-rejoin", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::idleness::MAIN_OUTPUT;
    use crate::model::Element;
    use proptest::prelude::*;

    #[test]
    fn bounded_out_of_orderness_offers_the_largest_timestamp_less_the_bound_less_one() {
        let mut g = BoundedOutOfOrderness::new(40);
        assert_eq!(g.current(), MIN_WATERMARK);
        g.on_event(100);
        g.on_event(70);
        assert_eq!(g.current(), 59);
        g.on_event(200);
        assert_eq!(g.current(), 159);
        assert_eq!(BoundedOutOfOrderness::new(0).current(), MIN_WATERMARK);
    }

    #[test]
    fn a_reader_waits_for_its_slowest_active_split() {
        let mut c = CombinedWatermark::default();
        assert_eq!(c.update(), None, "no split, no watermark");
        let (a, b) = (c.add_split(), c.add_split());
        c.offer(a, 50);
        assert_eq!(c.update(), None, "split b has not emitted");
        c.offer(b, 30);
        assert_eq!(c.update(), Some(30));
        c.set_idle(b, true);
        assert_eq!(c.update(), Some(50), "an idle split no longer holds back");
        c.set_idle(a, true);
        assert_eq!(c.update(), None);
        assert!(c.is_idle());
        c.offer(b, 40);
        assert_eq!(c.update(), None, "never backwards");
        assert_eq!(c.combined(), 50);
    }

    /// A periodic emit with the idleness timers' verdicts `idle`: what the
    /// source's output sends.
    fn emit(s: &mut SourceWatermarks, idle: &[u32]) -> Vec<Element> {
        let mut out = Vec::new();
        s.periodic(&mut |p, i| i.idle_now || idle.contains(&p), &mut out);
        out
    }

    fn watermark(s: &mut SourceWatermarks) -> Option<i64> {
        match emit(s, &[])[..] {
            [] => None,
            [Element::Watermark(w)] => Some(w),
            ref other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_source_combines_its_splits_and_releases_the_finished_ones() {
        let mut s = SourceWatermarks::new(10, 0, false);
        assert_eq!(watermark(&mut s), None, "no split yet");
        s.add_split(9, 0);
        assert_eq!(watermark(&mut s), None, "split 9 holds the reader at MIN");
        s.on_record(9, 0, 500, true);
        s.on_record(3, 0, 100, false);
        s.on_record(5, 0, 40, false);
        assert_eq!(watermark(&mut s), Some(29), "the slower split");
        s.on_record(5, 1, 60, false);
        assert_eq!(watermark(&mut s), Some(49));
        assert_eq!(watermark(&mut s), None, "only when it grows");
        // Split 5 ends: it no longer holds the reader back.
        s.on_record(5, 2, 61, true);
        assert_eq!(watermark(&mut s), Some(89));
        s.on_record(3, 1, 80, true);
        assert_eq!(watermark(&mut s), None, "every split finished");
    }

    #[test]
    fn from_flink_2_2_every_split_idle_flushes_the_largest_watermark() {
        // FLINK-38454: split 1 at 5 and split 2 at 4 both go idle; the
        // result no longer depends on which went first.
        for first in [0usize, 1] {
            let (mut old, mut new) = (CombinedWatermark::new(false), CombinedWatermark::new(true));
            for c in [&mut old, &mut new] {
                let ids = [c.add_split(), c.add_split()];
                c.offer(ids[0], 5);
                c.offer(ids[1], 4);
                assert_eq!(c.update(), Some(4));
                c.set_idle(ids[first], true);
                c.update();
                c.set_idle(ids[1 - first], true);
                c.update();
                assert!(c.is_idle());
            }
            assert_eq!(new.combined(), 5, "the largest, whichever went idle first");
            assert_eq!(old.combined(), if first == 1 { 5 } else { 4 });
        }
    }

    #[test]
    fn an_idle_split_leaves_the_minimum_and_the_source_goes_idle_with_all() {
        let (wm, idle, active) = (
            Element::Watermark,
            Element::Status { idle: true },
            Element::Status { idle: false },
        );
        let mut s = SourceWatermarks::new(0, 1, false);
        s.add_split(1, 0);
        s.add_split(2, 0);
        s.on_record(1, 0, 10, false);
        s.on_record(2, 0, 50, false);
        assert_eq!(emit(&mut s, &[]), vec![wm(9)]);
        s.on_record(2, 1, 70, false);
        assert_eq!(emit(&mut s, &[1]), vec![wm(69)], "split 1 idle: 2 alone");
        assert_eq!(
            emit(&mut s, &[2]),
            vec![],
            "every split idle, the main output not yet"
        );
        assert_eq!(emit(&mut s, &[MAIN_OUTPUT]), vec![idle]);
        assert!(s.is_idle());
        assert_eq!(emit(&mut s, &[]), vec![], "idle stays idle");
        // A record on split 1: active again with the next newer watermark.
        s.on_record(1, 1, 60, false);
        assert_eq!(emit(&mut s, &[]), vec![], "split 1 at 59 is not past 69");
        assert!(s.is_idle(), "active only with a newer watermark");
        s.on_record(1, 2, 120, false);
        // 1 is active (119), 2 still idle: the minimum is 119.
        assert_eq!(emit(&mut s, &[]), vec![active, wm(119)]);
        assert_eq!(s.split(1).map(|x| x.next_offset), Some(3));
    }

    #[test]
    fn the_valve_emits_the_minimum_only_when_it_grows() {
        let mut v = Valve::new(2);
        assert_eq!(v.input_watermark(0, 10).watermark, None);
        assert_eq!(v.input_watermark(1, 5).watermark, Some(5));
        assert_eq!(v.holding_back(), Some(1));
        assert_eq!(v.input_watermark(1, 4).watermark, None, "behind its own");
        assert_eq!(v.input_watermark(1, 20).watermark, Some(10));
        // Channel 0 goes idle: 20 is the new minimum.
        assert_eq!(v.input_status(0, true).watermark, Some(20));
        // Back, but behind: it does not hold the output back until it
        // catches up.
        assert_eq!(v.input_status(0, false), ValveOutput::default());
        assert_eq!(v.input_watermark(1, 30).watermark, Some(30));
        assert_eq!(v.input_watermark(0, 25).watermark, None);
        assert_eq!(v.input_watermark(0, 35).watermark, None);
        assert_eq!(v.input_watermark(1, 40).watermark, Some(35));
    }

    #[test]
    fn the_last_channel_going_idle_flushes_the_largest_watermark() {
        let mut v = Valve::new(2);
        v.input_watermark(0, 10);
        v.input_watermark(1, 50);
        assert_eq!(v.output(), 10);
        let out = v.input_status(1, true);
        assert_eq!(out, ValveOutput::default(), "channel 0 still holds at 10");
        let out = v.input_status(0, true);
        assert_eq!(
            out,
            ValveOutput {
                watermark: Some(50),
                idle: Some(true),
                none_aligned: false,
            }
        );
        assert_eq!(v.input_watermark(0, 60), ValveOutput::default(), "idle");
        let out = v.input_status(0, false);
        assert_eq!(out.idle, Some(false));
    }

    /// FLINK-7721's path: the channel at the output goes idle while the
    /// only active one is active again below it. Flink's valve sends
    /// nothing; the mutant sends the minimum over no channel, MAX.
    #[test]
    fn a_valve_with_no_aligned_channel_left_sends_nothing() {
        for mutant in [false, true] {
            let mutants = match mutant {
                true => crate::mutant::Mutants::NONE.with(Mutant::ValveMaxWithoutAlignedChannels),
                false => crate::mutant::Mutants::NONE,
            };
            let mut v = Valve::new(2).with_mutants(mutants);
            v.input_watermark(0, 10);
            v.input_watermark(1, 50);
            v.input_status(0, true);
            assert_eq!(v.output(), 50, "channel 1 alone");
            v.input_status(0, false);
            assert_eq!(
                v.holding_back(),
                Some(1),
                "channel 0 is behind: not aligned"
            );
            let out = v.input_status(1, true);
            assert!(out.none_aligned);
            let expected = mutant.then_some(MAX_WATERMARK);
            assert_eq!(out.watermark, expected, "mutant {mutant}");
        }
    }

    /// The valve's set of aligned channels against a recomputation from
    /// the channels alone: aligned = active and not behind the output.
    fn naive_min(v: &Valve) -> Option<i64> {
        v.channels
            .iter()
            .filter(|c| !c.idle && c.watermark >= v.last_output)
            .map(|c| c.watermark)
            .min()
    }

    proptest! {
        #[test]
        fn the_valve_never_goes_back_and_keeps_its_minimum_right(
            channels in 1usize..6,
            inputs in proptest::collection::vec((0usize..6, 0u8..4, 0i64..100), 0..80),
        ) {
            let mut v = Valve::new(channels);
            let mut last = MIN_WATERMARK;
            for (c, what, w) in inputs {
                let c = c % channels;
                let out = match what {
                    0 => v.input_status(c, true),
                    1 => v.input_status(c, false),
                    _ => v.input_watermark(c, w),
                };
                if let Some(w) = out.watermark {
                    prop_assert!(w > last, "{w} after {last}");
                    last = w;
                }
                prop_assert_eq!(v.output(), last);
                prop_assert_eq!(v.is_idle(), v.channels.iter().all(|c| c.idle));
                // The kept minimum is the recomputed one, never below
                // the output (an aligned channel is not behind it).
                let kept = v.aligned.first().map(|&(w, _)| w);
                prop_assert_eq!(kept, naive_min(&v));
                if let Some(m) = kept {
                    prop_assert!(m >= v.output(), "{m} below {}", v.output());
                }
                for (i, ch) in v.channels.iter().enumerate() {
                    prop_assert_eq!(ch.aligned, v.aligned.contains(&(ch.watermark, i as u32)));
                }
            }
        }
    }
}
