//! `cic-bcs`: communication-induced checkpointing, index-based
//! (Briatico, Ciuffoletti and Simoncini, 1984). Every task keeps a logical
//! clock `lc`, raised by one at each basic checkpoint and piggybacked on
//! every data buffer. A buffer whose `lc` is above the reader's forces a
//! checkpoint before it is read, and the reader takes the buffer's `lc`.
//! So for every `n`, the first checkpoint of each task with an index of at
//! least `n` form a consistent global checkpoint (the runtime checks it, as
//! [`LocalRule::index_lines`]). Everything else is `uncoordinated`'s: the
//! timer, the logs, the recovery line.

use super::local::{LocalConfig, LocalRule, Piggyback};
use crate::mutant::{fired, Mutant};

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "cic-bcs",
    description: "uncoordinated, plus a logical clock on every buffer that forces a checkpoint before a buffer of a higher clock is read (BCS, index-based)",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Local(|c| Box::new(Bcs::new(c))),
    closes_superseded: false,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (23, 190, 207),
    handler: |c| Box::new(super::aligned::AlignedHandler::with_mutants(c.inputs, c.mutants)),
};

/// BCS's state: the logical clock.
#[derive(Clone, Debug)]
pub struct Bcs {
    lc: u64,
    /// Mutant `cic-missed-forced`: a buffer one index ahead forces nothing.
    off_by_one: bool,
}

impl Bcs {
    pub fn new(c: &LocalConfig) -> Bcs {
        Bcs {
            lc: 0,
            off_by_one: c.mutants.has(Mutant::CicMissedForced),
        }
    }
}

impl LocalRule for Bcs {
    fn piggyback(&self) -> Option<Piggyback> {
        Some(Piggyback {
            lc: self.lc,
            ..Piggyback::default()
        })
    }
    fn forces(&self, _from: u32, m: &Piggyback) -> bool {
        if self.off_by_one && m.lc == self.lc + 1 {
            fired(Mutant::CicMissedForced);
            return false;
        }
        m.lc > self.lc
    }
    fn checkpointed(&mut self, forced_by: Option<&Piggyback>) {
        match forced_by {
            Some(m) => self.lc = self.lc.max(m.lc),
            None => self.lc += 1,
        }
    }
    fn delivered(&mut self, _from: u32, m: &Piggyback) {
        self.lc = self.lc.max(m.lc);
    }
    fn index(&self) -> u64 {
        self.lc
    }
    fn index_lines(&self) -> bool {
        true
    }
    fn no_useless(&self) -> bool {
        true
    }
    fn boxed_clone(&self) -> Box<dyn LocalRule> {
        Box::new(self.clone())
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const CicMissedForced: Mutant = Mutant::declare(&MutantInfo {
            name: "cic-missed-forced",
            part: "communication-induced checkpointing",
            what: "cic-bcs forces no checkpoint for a buffer whose clock is one above the reader's; cic-hmnr never checks its first condition (a non-causal Z-path: a higher clock after a send to a task it is known to be above)",
            modelled_on: "Alvisi et al., FTCS 1999, 'An Analysis of Communication-Induced Checkpointing': the forcing conditions are subtle and implementations that take fewer forced checkpoints than the rule demands lose the guarantee the rule was for",
            caught_by: "protocol",
            applies: &[("throughput", "cic-bcs"), ("iterate", "cic-hmnr")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pb(lc: u64) -> Piggyback {
        Piggyback {
            lc,
            ..Piggyback::default()
        }
    }

    /// (what happens, then the clock, and whether the next buffer of
    /// clock 2 forces a checkpoint).
    #[test]
    fn a_higher_clock_forces_and_is_taken() {
        let mut r = Bcs::new(&LocalConfig::new(0, 2));
        assert_eq!(r.piggyback(), Some(pb(0)));
        assert!(!r.forces(1, &pb(0)), "an equal clock forces nothing");
        r.checkpointed(None);
        assert_eq!(r.index(), 1);
        assert!(r.forces(1, &pb(2)));
        r.checkpointed(Some(&pb(2)));
        assert_eq!(r.index(), 2, "a forced checkpoint takes the buffer's clock");
        r.delivered(1, &pb(2));
        assert!(!r.forces(1, &pb(2)));
        r.delivered(1, &pb(1));
        assert_eq!(r.index(), 2, "a lower clock changes nothing");
        let copy = r.boxed_clone();
        r.checkpointed(None);
        assert_eq!((r.index(), copy.index()), (3, 2));
    }

    #[test]
    fn the_mutant_misses_a_clock_one_ahead() {
        let mut c = LocalConfig::new(0, 2);
        c.mutants = crate::mutant::Mutants::NONE.with(Mutant::CicMissedForced);
        let r = Bcs::new(&c);
        assert!(!r.forces(1, &pb(1)));
        assert!(r.forces(1, &pb(2)));
    }
}
