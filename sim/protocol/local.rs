//! The task's side of the uncoordinated families: a [`LocalRule`] decides
//! what a task's data buffers carry and when the task must take a checkpoint
//! of its own before it reads a buffer (communication-induced
//! checkpointing). The task takes its basic checkpoints on its own timer; the
//! rule only adds forced ones. Like a barrier handler, a rule is a sans-IO
//! state machine: it never reads a clock, draws randomness or touches a
//! queue.
//!
//! `uncoordinated` has no rule ([`NoRule`]): nothing is piggybacked and
//! nothing is forced. `cic-bcs` and `cic-hmnr` (one file each) piggyback a
//! logical clock (and, for HMNR, three vectors) on every data buffer.

/// What a data buffer carries for a communication-induced rule: the
/// sender's logical clock `lc`, and for HMNR its `greater`, `taken` and
/// `ckpt` vectors (one entry per task).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Piggyback {
    pub lc: u64,
    pub greater: Vec<bool>,
    pub taken: Vec<bool>,
    pub ckpt: Vec<u64>,
}

impl Piggyback {
    /// Its size on the wire: 8 bytes per clock and counter, one per flag.
    pub fn bytes(&self) -> u64 {
        8 + 8 * self.ckpt.len() as u64 + (self.greater.len() + self.taken.len()) as u64
    }
}

/// What a rule needs to know about its task.
#[derive(Clone, Copy, Debug)]
pub struct LocalConfig {
    /// The task's index among all tasks.
    pub task: u32,
    /// How many tasks the job has.
    pub tasks: u32,
    /// Deliberate bugs (`RunConfig::mutants`).
    pub(crate) mutants: crate::mutant::Mutants,
}

impl LocalConfig {
    /// A configuration with no mutant switched on.
    pub fn new(task: u32, tasks: u32) -> LocalConfig {
        LocalConfig {
            task,
            tasks,
            mutants: crate::mutant::Mutants::NONE,
        }
    }
}

/// The checkpointing rule of one task. The runtime calls it in this order
/// around a data buffer it reads from task `from`: [`LocalRule::forces`]
/// (a forced checkpoint first when it says so, then
/// [`LocalRule::checkpointed`] with the buffer's piggyback), then
/// [`LocalRule::delivered`]. Every checkpoint, basic or forced, calls
/// `checkpointed`; every record the task puts on a channel to task `to`
/// calls [`LocalRule::sent_to`]; [`LocalRule::piggyback`] is what the
/// buffers the task ships from then on carry.
pub trait LocalRule {
    /// What a buffer shipped now carries (`None`: nothing).
    fn piggyback(&self) -> Option<Piggyback>;
    /// The task put a record on a channel to task `to`.
    fn sent_to(&mut self, _to: u32) {}
    /// A buffer carrying `m` from task `from` is about to be read: must
    /// the task take a checkpoint first?
    fn forces(&self, from: u32, m: &Piggyback) -> bool;
    /// The task took a checkpoint: basic (`None`), or forced by a buffer
    /// carrying this piggyback.
    fn checkpointed(&mut self, forced_by: Option<&Piggyback>);
    /// The task read a buffer carrying `m` from task `from`.
    fn delivered(&mut self, from: u32, m: &Piggyback);
    /// The index of the task's latest checkpoint (its logical clock).
    fn index(&self) -> u64;
    /// The rule promises index lines: for every `n`, the first checkpoint
    /// of each task whose index is at least `n` (a task without one: its
    /// state at the end) form a consistent global checkpoint.
    fn index_lines(&self) -> bool {
        false
    }
    /// The rule promises that no checkpoint is useless: each belongs to
    /// some consistent global checkpoint (no Z-cycle).
    fn no_useless(&self) -> bool {
        false
    }
    /// A copy, kept with each checkpoint: a task restored from it resumes
    /// with the rule's state of that moment.
    fn boxed_clone(&self) -> Box<dyn LocalRule>;
}

/// `uncoordinated`: nothing piggybacked, nothing forced.
#[derive(Clone, Debug, Default)]
pub struct NoRule {
    taken: u64,
}

impl LocalRule for NoRule {
    fn piggyback(&self) -> Option<Piggyback> {
        None
    }
    fn forces(&self, _from: u32, _m: &Piggyback) -> bool {
        false
    }
    fn checkpointed(&mut self, _forced_by: Option<&Piggyback>) {
        self.taken += 1;
    }
    fn delivered(&mut self, _from: u32, _m: &Piggyback) {}
    fn index(&self) -> u64 {
        self.taken
    }
    fn boxed_clone(&self) -> Box<dyn LocalRule> {
        Box::new(self.clone())
    }
}
