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

/// A schedule given choice by choice (`[replay] choices`, and
/// `ckptsim explore`): the run's `i`-th choice takes the `script[i]`-th
/// alternative (the last one if the index is past them); after the script,
/// the first. Choices are made by [`choose`] from the script the run
/// installed ([`install`]); this scheduler's alternatives are the ready
/// inputs, lowest first. Draws nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scripted;

impl Scheduler for Scripted {
    fn pick(&mut self, _task: TaskId, ready: &[u32], _since: &[u64], _rng: &mut SimRng) -> u32 {
        ready[choose(ready.len() as u32) as usize]
    }
}

struct Script {
    choices: Vec<u32>,
    next: usize,
    /// Past the script: the choices (by index) that take a random
    /// alternative (PCT-style sampling), drawn from `rng`; the others take
    /// the first.
    deviate: Option<(std::collections::BTreeSet<usize>, SimRng)>,
}

thread_local! {
    /// The script of the run on this thread, if it is scripted (runs are
    /// single-threaded; `explore` runs one schedule per thread at a time).
    static SCRIPT: std::cell::RefCell<Option<Script>> = const { std::cell::RefCell::new(None) };
    /// The choices of the runs on this thread, while recording.
    static CHOICES: std::cell::RefCell<Option<Vec<(u32, u32)>>> = const { std::cell::RefCell::new(None) };
    /// Deviation points for the next run installed on this thread.
    static DEVIATE: std::cell::RefCell<Option<(std::collections::BTreeSet<usize>, SimRng)>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes the run about to start on this thread scripted by `choices`, or
/// (`None`) not scripted.
pub fn install(choices: Option<&[u32]>) {
    SCRIPT.with(|s| {
        *s.borrow_mut() = choices.map(|c| Script {
            choices: c.to_vec(),
            next: 0,
            deviate: DEVIATE.with(|d| d.borrow_mut().take()),
        })
    });
}

/// Makes the next scripted run on this thread deviate from the first
/// alternative at these choices (by index), each to an alternative drawn
/// from `rng` (`explore --sample`). The run's choices are recorded as
/// usual, so a failing sample replays as a plain script.
pub fn deviate_at(points: std::collections::BTreeSet<usize>, rng: SimRng) {
    DEVIATE.with(|d| *d.borrow_mut() = Some((points, rng)));
}

/// The next choice of a scripted run among `arity` alternatives (at least
/// one): the script's, clamped to the last, or the first after it; recorded
/// while [`record_choices`] is on. Outside a scripted run, the first.
pub fn choose(arity: u32) -> u32 {
    let last = arity.saturating_sub(1);
    let i = SCRIPT.with(|s| match s.borrow_mut().as_mut() {
        Some(script) => {
            let k = script.next;
            script.next += 1;
            match (script.choices.get(k), script.deviate.as_mut()) {
                (Some(&i), _) => i.min(last),
                (None, Some((points, rng))) if points.contains(&k) && arity > 1 => {
                    1 + rng.below(u64::from(last)) as u32
                }
                _ => 0,
            }
        }
        None => 0,
    });
    CHOICES.with(|c| {
        if let Some(log) = c.borrow_mut().as_mut() {
            log.push((i, arity));
        }
    });
    i
}

/// Starts recording the choices of the next runs on this thread; every run
/// meanwhile is scripted (by its scenario's `[replay] choices`).
pub fn record_choices() {
    CHOICES.with(|c| *c.borrow_mut() = Some(Vec::new()));
}

/// Whether choices are being recorded on this thread.
pub fn recording() -> bool {
    CHOICES.with(|c| c.borrow().is_some())
}

/// Stops recording; returns each choice made since, as (index chosen,
/// alternatives).
pub fn take_choices() -> Vec<(u32, u32)> {
    CHOICES.with(|c| c.borrow_mut().take()).unwrap_or_default()
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

    /// The script picks by index into the ready inputs (clamped to the
    /// last), then the lowest; recording logs every choice and its arity,
    /// and only while on.
    #[test]
    fn scripted_follows_its_script_then_takes_the_lowest() {
        let mut rng = SimRng::new(0, Stream::Scheduling);
        let mut s = Scripted;
        install(Some(&[2, 7, 1]));
        record_choices();
        assert!(recording());
        let picks: Vec<u32> = [&[3u32, 5, 8][..], &[1, 4], &[0, 2, 6], &[4, 9]]
            .iter()
            .map(|ready| s.pick(0, ready, &[0; 3][..ready.len()], &mut rng))
            .collect();
        assert_eq!(picks, [8, 4, 2, 4]);
        assert_eq!(take_choices(), [(2, 3), (1, 2), (1, 3), (0, 2)]);
        assert!(!recording());
        s.pick(0, &[1, 2], &[0, 0], &mut rng);
        assert!(take_choices().is_empty());
        install(None);
        assert_eq!(choose(3), 0);
    }
}
