//! Which ready input a task reads next: a scheduling choice, and where many
//! checkpoint bugs hide. Every strategy implements one [`Scheduler`] trait,
//! so exploration strategies (uniform, PCT-style priorities, exhaustive
//! enumeration of tiny jobs) and Flink's own input order plug in without
//! touching the task step.
//!
//! **Invariant:** a scheduler decides from the task, the ready inputs and
//! the scheduling random stream it is handed; it reads no clock and keeps no
//! randomness of its own, so a run replays bit for bit.

use crate::engine::SimRng;
use crate::model::TaskId;

/// Chooses which ready input a task reads next.
pub trait Scheduler {
    /// `ready` holds the indexes (ascending) of the task's inputs that have
    /// a message and are not blocked; there are at least two. `since[i]`
    /// says when `ready[i]` joined the task's queue of channels with data
    /// (smaller = earlier). Returns one of `ready`.
    fn pick(&mut self, task: TaskId, ready: &[u32], since: &[u64], rng: &mut SimRng) -> u32;
}

/// Each ready input equally likely, drawn from the scheduling stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl Scheduler for Uniform {
    fn pick(&mut self, _task: TaskId, ready: &[u32], _since: &[u64], rng: &mut SimRng) -> u32 {
        ready[rng.below(ready.len() as u64) as usize]
    }
}

/// Flink's input order: the ready input that has waited longest in the
/// gate's queue of channels with data (`SingleInputGate`'s
/// `inputChannelsWithData`; a channel read from goes to the back if it
/// still has data). Draws nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo;

impl Scheduler for Fifo {
    fn pick(&mut self, _task: TaskId, ready: &[u32], since: &[u64], _rng: &mut SimRng) -> u32 {
        let first = (0..ready.len()).min_by_key(|&i| since[i]).unwrap_or(0);
        ready[first]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Stream;

    #[test]
    fn uniform_picks_a_ready_input_and_reaches_every_one() {
        let mut rng = SimRng::new(7, Stream::Scheduling);
        let ready = [1, 4, 6];
        let mut seen = [false; 7];
        for _ in 0..200 {
            let p = Uniform.pick(0, &ready, &[0, 0, 0], &mut rng);
            assert!(ready.contains(&p));
            seen[p as usize] = true;
        }
        assert!(ready.iter().all(|&r| seen[r as usize]));
    }

    #[test]
    fn fifo_picks_the_input_that_waited_longest_and_draws_nothing() {
        let mut rng = SimRng::new(7, Stream::Scheduling);
        let before = rng.clone().next_u64();
        assert_eq!(Fifo.pick(0, &[1, 4, 6], &[30, 10, 20], &mut rng), 4);
        assert_eq!(Fifo.pick(0, &[1, 4, 6], &[5, 10, 20], &mut rng), 1);
        assert_eq!(rng.next_u64(), before, "fifo drew from the stream");
    }
}
