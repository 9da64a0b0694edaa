//! `cic-hmnr`: communication-induced checkpointing that prevents useless
//! checkpoints (Hélary, Mostéfaoui, Netzer and Raynal, 2000; the rule of
//! CheckMate's `cic_checkpointing.py`). Every task keeps a logical clock
//! `lc` and, per task `k`: `sent_to[k]` (it sent to `k` since its last
//! checkpoint), `greater[k]` (its clock is known to be above `k`'s),
//! `ckpt[k]` (how many checkpoints `k` is known to have taken) and
//! `taken[k]` (a causal path from `k`'s last known checkpoint to here holds
//! a checkpoint). A buffer carries `lc`, `greater`, `taken` and `ckpt`
//! (O(n) per buffer). Before reading a buffer `m`, task `i` takes a forced
//! checkpoint if
//!
//! - C1: `(∃k: sent_to[k] ∧ m.greater[k]) ∧ m.lc > lc` (a non-causal
//!   Z-path would form), or
//! - C2: `m.ckpt[i] = ckpt[i] ∧ m.taken[i]` (a Z-cycle through `i`'s
//!   current interval would form).
//!
//! It forces fewer checkpoints than BCS and no checkpoint is ever useless
//! (on a cycle; on a DAG no checkpoint can be). Everything else is
//! `uncoordinated`'s.

use super::local::{LocalConfig, LocalRule, Piggyback};
use crate::mutant::{fired, Mutant};

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "cic-hmnr",
    description: "uncoordinated, plus a clock and three vectors on every buffer that force a checkpoint before a read that would make a checkpoint useless (HMNR)",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Local(|c| Box::new(Hmnr::new(c))),
    closes_superseded: false,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (148, 103, 189),
    handler: |c| Box::new(super::aligned::AlignedHandler::with_mutants(c.inputs, c.mutants)),
};

/// HMNR's state at task `me`.
#[derive(Clone, Debug)]
pub struct Hmnr {
    me: usize,
    lc: u64,
    sent_to: Vec<bool>,
    greater: Vec<bool>,
    taken: Vec<bool>,
    ckpt: Vec<u64>,
    /// Mutant `cic-missed-forced`: C1 is never checked.
    no_c1: bool,
}

impl Hmnr {
    pub fn new(c: &LocalConfig) -> Hmnr {
        let n = c.tasks as usize;
        Hmnr {
            me: c.task as usize,
            lc: 0,
            sent_to: vec![false; n],
            greater: vec![false; n],
            taken: vec![false; n],
            ckpt: vec![0; n],
            no_c1: c.mutants.has(Mutant::CicMissedForced),
        }
    }
}

impl LocalRule for Hmnr {
    fn piggyback(&self) -> Option<Piggyback> {
        Some(Piggyback {
            lc: self.lc,
            greater: self.greater.clone(),
            taken: self.taken.clone(),
            ckpt: self.ckpt.clone(),
        })
    }
    fn sent_to(&mut self, to: u32) {
        if let Some(s) = self.sent_to.get_mut(to as usize) {
            *s = true;
        }
    }
    fn forces(&self, _from: u32, m: &Piggyback) -> bool {
        let c1 = m.lc > self.lc
            && self
                .sent_to
                .iter()
                .zip(&m.greater)
                .any(|(&sent, &greater)| sent && greater);
        let i = self.me;
        let c2 = m.ckpt.get(i) == Some(&self.ckpt[i]) && m.taken.get(i) == Some(&true);
        if c1 && !c2 && self.no_c1 {
            fired(Mutant::CicMissedForced);
            return false;
        }
        c1 || c2
    }
    fn checkpointed(&mut self, _forced_by: Option<&Piggyback>) {
        let i = self.me;
        self.lc += 1;
        self.ckpt[i] += 1;
        for k in 0..self.sent_to.len() {
            self.sent_to[k] = false;
            self.taken[k] = k != i;
            self.greater[k] = k != i;
        }
    }
    fn delivered(&mut self, from: u32, m: &Piggyback) {
        let i = self.me;
        if m.lc > self.lc {
            self.lc = m.lc;
            for (g, &mg) in self.greater.iter_mut().zip(&m.greater) {
                *g = mg;
            }
        } else if m.lc == self.lc {
            for (g, &mg) in self.greater.iter_mut().zip(&m.greater) {
                *g = *g && mg;
            }
        }
        self.greater[i] = false;
        if let Some(g) = self.greater.get_mut(from as usize) {
            // The sender's clock is now known: not above ours.
            *g = self.lc > m.lc;
        }
        for k in (0..self.ckpt.len()).filter(|&k| k != i) {
            let (mc, mt) = (m.ckpt.get(k).copied(), m.taken.get(k).copied());
            let (Some(mc), Some(mt)) = (mc, mt) else {
                continue;
            };
            if mc > self.ckpt[k] {
                self.ckpt[k] = mc;
                self.taken[k] = mt;
            } else if mc == self.ckpt[k] {
                self.taken[k] |= mt;
            }
        }
    }
    fn index(&self) -> u64 {
        self.lc
    }
    fn no_useless(&self) -> bool {
        true
    }
    fn boxed_clone(&self) -> Box<dyn LocalRule> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(me: u32) -> Hmnr {
        Hmnr::new(&LocalConfig::new(me, 3))
    }

    #[test]
    fn a_higher_clock_forces_only_after_a_send_to_a_lower_task() {
        // Task 1 checkpointed: lc 1, greater than tasks 0 and 2, and (as
        // CheckMate and FERDiS initialise it) a checkpoint taken on the
        // way from everyone else.
        let mut sender = rule(1);
        sender.checkpointed(None);
        let m = sender.piggyback().unwrap();
        assert_eq!((m.lc, m.greater.clone()), (1, vec![true, false, true]));
        assert_eq!(m.taken, vec![true, false, true]);
        // C2 holds for task 0 (ckpt[0] agrees, taken[0]).
        assert!(rule(0).forces(1, &m));
        // C1 alone, without taken: task 0 at lc 0 has sent nothing.
        let m = Piggyback {
            taken: vec![false; 3],
            ..m
        };
        let mut r = rule(0);
        assert!(!r.forces(1, &m));
        // Once it sent to task 2 (whose clock task 1 is above), it does.
        r.sent_to(2);
        assert!(r.forces(1, &m));
        // Sent only to task 1 itself: not greater, no force.
        let mut r = rule(0);
        r.sent_to(1);
        assert!(!r.forces(1, &m));
    }

    #[test]
    fn a_buffer_that_closes_a_cycle_through_the_current_interval_forces() {
        // Task 0 checkpointed once; a buffer saying "task 0's checkpoint 1
        // is followed by a checkpoint on the path to here" forces (C2).
        let mut r = rule(0);
        r.checkpointed(None);
        let m = Piggyback {
            lc: 0,
            greater: vec![false; 3],
            taken: vec![true, false, false],
            ckpt: vec![1, 0, 0],
        };
        assert!(r.forces(2, &m));
        // Of an older checkpoint of task 0: no cycle through this interval.
        let old = Piggyback {
            ckpt: vec![0, 0, 0],
            ..m.clone()
        };
        assert!(!r.forces(2, &old));
    }

    #[test]
    fn the_mutant_never_checks_c1() {
        let mut sender = rule(1);
        sender.checkpointed(None);
        let m = Piggyback {
            taken: vec![false; 3],
            ..sender.piggyback().unwrap()
        };
        let mut c = LocalConfig::new(0, 3);
        c.mutants = crate::mutant::Mutants::NONE.with(Mutant::CicMissedForced);
        let mut missed = Hmnr::new(&c);
        missed.sent_to(2);
        assert!(!missed.forces(1, &m), "C1 holds, the mutant ignores it");
        let mut r = rule(0);
        r.sent_to(2);
        assert!(r.forces(1, &m));
    }

    #[test]
    fn delivery_merges_clock_and_vectors() {
        let mut r = rule(0);
        let m = Piggyback {
            lc: 3,
            greater: vec![true, false, true],
            taken: vec![false, true, true],
            ckpt: vec![0, 2, 1],
        };
        r.delivered(1, &m);
        assert_eq!(r.index(), 3);
        assert_eq!(r.greater, vec![false, false, true]);
        assert_eq!(r.ckpt, vec![0, 2, 1]);
        assert_eq!(r.taken, vec![false, true, true]);
        // An equal clock ands `greater`; an equal count ors `taken`.
        let m2 = Piggyback {
            lc: 3,
            greater: vec![false, false, false],
            taken: vec![false, false, false],
            ckpt: vec![0, 2, 1],
        };
        r.delivered(2, &m2);
        assert_eq!(r.greater, vec![false, false, false]);
        assert_eq!(r.taken, vec![false, true, true]);
        r.checkpointed(None);
        assert_eq!(r.index(), 4);
        assert_eq!(r.greater, vec![false, true, true]);
        assert_eq!(r.taken, vec![false, true, true]);
        assert_eq!(r.ckpt, vec![1, 2, 1]);
        assert_eq!(r.piggyback().unwrap().bytes(), 8 + 24 + 6);
    }
}
