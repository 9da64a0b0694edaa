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
    /// a message and are not blocked; there are at least two. Returns one
    /// of them.
    fn pick(&mut self, task: TaskId, ready: &[u32], rng: &mut SimRng) -> u32;
}

/// Each ready input equally likely, drawn from the scheduling stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl Scheduler for Uniform {
    fn pick(&mut self, _task: TaskId, ready: &[u32], rng: &mut SimRng) -> u32 {
        ready[rng.below(ready.len() as u64) as usize]
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
            let p = Uniform.pick(0, &ready, &mut rng);
            assert!(ready.contains(&p));
            seen[p as usize] = true;
        }
        assert!(ready.iter().all(|&r| seen[r as usize]));
    }
}
