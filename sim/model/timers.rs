//! The timer service of a keyed operator, as Flink's
//! `InternalTimerServiceImpl` keeps it: per key, event-time and
//! processing-time timers, at most one per key and time (`TimerService`
//! deduplicates), fired in time order — event-time ones when the
//! operator's watermark reaches them, processing-time ones when the task's
//! processing-time service calls (a mail: `runtime/world/timers.rs`).
//!
//! Timers are keyed state: each key's timers travel with the key's value
//! in the operator's keyed snapshot ([`KeyTimers`], by key group), so a
//! checkpoint, a savepoint and a rescale move them with their keys, as
//! Flink's heap timers move in raw keyed state by key group. The queues
//! are rebuilt from the keys on restore ([`TimerService::restore`]).
//!
//! Every timer that fires is reported through the context
//! ([`Context::timer_fired`]) so that the `timers` check can compare the
//! run's firings in effect with the oracle's.

use super::operator::Context;
use crate::mutant::Mutant;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A timer's time domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Domain {
    Event,
    Processing,
}

impl Domain {
    pub fn name(self) -> &'static str {
        match self {
            Domain::Event => "event-time",
            Domain::Processing => "processing-time",
        }
    }
}

/// One timer that fired (`onTimer` ran): which operator, key, domain and
/// time (milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FiredTimer {
    pub operator: u32,
    pub key: u64,
    pub domain: Domain,
    pub time: i64,
}

/// One key's timers, as its keyed state holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyTimers {
    pub event: BTreeSet<i64>,
    pub processing: BTreeSet<i64>,
}

impl KeyTimers {
    pub fn is_empty(&self) -> bool {
        self.event.is_empty() && self.processing.is_empty()
    }

    /// What a snapshot writes of them: all of them, or none under the
    /// mutant `timers-not-in-snapshot`.
    pub fn for_snapshot(&self, ctx: &Context) -> KeyTimers {
        if ctx.mutant(Mutant::TimersNotInSnapshot) {
            crate::mutant::fired(Mutant::TimersNotInSnapshot);
            return KeyTimers::default(); // Mutant: the snapshot lacks them.
        }
        self.clone()
    }

    fn set(&mut self, domain: Domain) -> &mut BTreeSet<i64> {
        match domain {
            Domain::Event => &mut self.event,
            Domain::Processing => &mut self.processing,
        }
    }
}

/// The queues of every key's timers, in firing order (`(time, key)`);
/// the keys' own [`KeyTimers`] are in the operator's keyed state.
#[derive(Clone, Debug, Default)]
pub struct TimerService {
    event: BTreeSet<(i64, u64)>,
    processing: BTreeSet<(i64, u64)>,
}

impl TimerService {
    fn queue(&mut self, domain: Domain) -> &mut BTreeSet<(i64, u64)> {
        match domain {
            Domain::Event => &mut self.event,
            Domain::Processing => &mut self.processing,
        }
    }

    /// Registers a timer of `key` (`registerEventTimeTimer`,
    /// `registerProcessingTimeTimer`); one already there is kept once.
    pub fn register(&mut self, timers: &mut KeyTimers, key: u64, domain: Domain, time: i64) {
        if timers.set(domain).insert(time) {
            self.queue(domain).insert((time, key));
        }
    }

    /// The next timer of `domain` due at `upto` or before, taken out of
    /// the queue (the caller takes it out of the key's [`KeyTimers`] too,
    /// [`TimerService::fired`]).
    pub fn pop_due(&mut self, domain: Domain, upto: i64) -> Option<(i64, u64)> {
        let queue = self.queue(domain);
        let &(time, key) = queue.first()?;
        if time > upto {
            return None;
        }
        queue.pop_first();
        Some((time, key))
    }

    /// Timer `(time, key)` of `domain` fires: out of the key's timers, and
    /// reported.
    pub fn fired(timers: &mut KeyTimers, key: u64, domain: Domain, time: i64, ctx: &mut Context) {
        timers.set(domain).remove(&time);
        ctx.timer_fired(key, domain, time);
    }

    /// The earliest processing-time timer (what the task's processing-time
    /// service is armed for).
    pub fn next_processing(&self) -> Option<i64> {
        self.processing.first().map(|&(t, _)| t)
    }

    /// Rebuilds the queues from the restored keys' timers
    /// (`InternalTimeServiceManager` restoring raw keyed state).
    pub fn restore<'a>(&mut self, keys: impl Iterator<Item = (u64, &'a KeyTimers)>) {
        self.event.clear();
        self.processing.clear();
        for (key, timers) in keys {
            self.event.extend(timers.event.iter().map(|&t| (t, key)));
            self.processing
                .extend(timers.processing.iter().map(|&t| (t, key)));
        }
    }

    pub fn len(&self) -> usize {
        self.event.len() + self.processing.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const TimersNotInSnapshot: Mutant = Mutant::declare(&MutantInfo {
            name: "timers-not-in-snapshot",
            part: "timers",
            what: "a keyed operator's snapshot writes its keys' values but not their timers: after a restore the timers registered before the checkpoint never fire, and their output is lost",
            modelled_on: "InternalTimeServiceManager.snapshotToRawKeyedState: timers are written to the keyed snapshot as their own part, next to the state backend's; a snapshot that leaves that part out restores every key without its timers",
            caught_by: "timers",
            applies: &[("event-time-timers", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_in_time_order_once_per_key_and_time() {
        let mut service = TimerService::default();
        let (mut a, mut b) = (KeyTimers::default(), KeyTimers::default());
        service.register(&mut a, 1, Domain::Event, 20);
        service.register(&mut a, 1, Domain::Event, 20);
        service.register(&mut b, 2, Domain::Event, 10);
        service.register(&mut b, 2, Domain::Processing, 5);
        assert_eq!(service.len(), 3);
        assert_eq!(service.pop_due(Domain::Event, 9), None);
        assert_eq!(service.pop_due(Domain::Event, 20), Some((10, 2)));
        assert_eq!(service.pop_due(Domain::Event, 20), Some((20, 1)));
        assert_eq!(service.pop_due(Domain::Event, 20), None);
        assert_eq!(service.next_processing(), Some(5));
    }

    #[test]
    fn a_restore_rebuilds_the_queues_from_the_keys() {
        let mut a = KeyTimers::default();
        a.event.insert(7);
        a.processing.insert(3);
        let mut service = TimerService::default();
        service.restore([(4, &a)].into_iter());
        assert_eq!(service.len(), 2);
        assert_eq!(service.next_processing(), Some(3));
        assert_eq!(service.pop_due(Domain::Event, i64::MAX), Some((7, 4)));
    }
}
