//! The handler tests' kit, shared by every file in `protocol/`: inputs as
//! data, one driver that feeds them to a handler and collects the actions of
//! each step, the barriers, and the sequences of the exhaustive tests. Tests
//! only; a handler under test gets nothing but what the simulator would give
//! it.

use super::CheckpointId;
use super::{AbortReason, Barrier, BarrierHandler, BarrierKind, HandlerAction};
use crate::engine::SimTime;
use std::fmt::Debug;

pub(crate) const CM: AbortReason = AbortReason::CancellationMarker;

/// A barrier of `kind` for checkpoint `id`, triggered at `id × 100` ns.
pub(crate) fn barrier(id: CheckpointId, kind: BarrierKind) -> Barrier {
    Barrier {
        id,
        timestamp: SimTime(id * 100),
        kind,
    }
}

pub(crate) fn aligned(id: CheckpointId) -> Barrier {
    barrier(id, BarrierKind::Aligned)
}

pub(crate) fn unaligned(id: CheckpointId) -> Barrier {
    barrier(id, BarrierKind::Unaligned)
}

pub(crate) fn timeoutable(id: CheckpointId) -> Barrier {
    barrier(id, BarrierKind::Timeoutable)
}

/// One input to a handler.
pub(crate) trait Input: Copy + Debug {
    /// Feeds it to `h`; a barrier is of `kind` unless the input says.
    fn feed(self, h: &mut dyn BarrierHandler, kind: BarrierKind, out: &mut Vec<HandlerAction>);
}

/// What arrives on an input, read at time 0.
#[derive(Clone, Copy, Debug)]
pub(crate) enum In {
    /// A barrier on input `.0` for checkpoint `.1`.
    B(u32, CheckpointId),
    /// A cancellation marker on input `.0` for checkpoint `.1`.
    C(u32, CheckpointId),
}

impl Input for In {
    fn feed(self, h: &mut dyn BarrierHandler, kind: BarrierKind, out: &mut Vec<HandlerAction>) {
        match self {
            In::B(c, id) => h.on_barrier(c, barrier(id, kind), SimTime(0), out),
            In::C(c, id) => h.on_cancel(c, id, out),
        }
    }
}

/// What arrives on an input at a time, and timers (`aligned-timeout`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Timed {
    /// A barrier on input `.0` for checkpoint `.1`, read at time `.2`.
    B(u32, CheckpointId, u64),
    /// An unaligned (priority) barrier.
    U(u32, CheckpointId, u64),
    C(u32, CheckpointId),
    Timer(CheckpointId),
    /// Announcement of a barrier queued behind data.
    A(u32, CheckpointId, u64),
}

impl Input for Timed {
    fn feed(self, h: &mut dyn BarrierHandler, kind: BarrierKind, out: &mut Vec<HandlerAction>) {
        match self {
            Timed::B(c, id, t) => h.on_barrier(c, barrier(id, kind), SimTime(t), out),
            Timed::U(c, id, t) => h.on_barrier(c, unaligned(id), SimTime(t), out),
            Timed::C(c, id) => h.on_cancel(c, id, out),
            Timed::Timer(id) => h.on_timer(id, out),
            Timed::A(c, id, t) => h.on_announcement(c, barrier(id, kind), SimTime(t), out),
        }
    }
}

/// The actions of one input.
pub(crate) fn step(
    h: &mut dyn BarrierHandler,
    kind: BarrierKind,
    s: impl Input,
) -> Vec<HandlerAction> {
    let mut out = Vec::new();
    s.feed(h, kind, &mut out);
    out
}

/// The actions of each input, in order.
pub(crate) fn run<I: Input>(
    h: &mut dyn BarrierHandler,
    kind: BarrierKind,
    steps: &[I],
) -> Vec<Vec<HandlerAction>> {
    steps.iter().map(|&s| step(h, kind, s)).collect()
}

/// A table case: its name, the number of inputs, the inputs fed in order
/// and the exact actions of each.
pub(crate) type Case<I = In> = (&'static str, u32, Vec<I>, Vec<Vec<HandlerAction>>);

/// Runs each case on a fresh handler (`new(inputs)`) and compares the
/// actions of every step.
pub(crate) fn check_table<H: BarrierHandler, I: Input>(
    new: impl Fn(u32) -> H,
    kind: BarrierKind,
    cases: Vec<Case<I>>,
) {
    for (name, inputs, steps, expected) in cases {
        assert_eq!(
            run(&mut new(inputs), kind, &steps),
            expected,
            "case: {name}"
        );
    }
}

/// A barrier and a cancellation marker for each of checkpoints 1 to 3 on
/// each input: the alphabet of the exhaustive tests.
pub(crate) fn alphabet(inputs: u32) -> Vec<In> {
    let mut alphabet = Vec::new();
    for c in 0..inputs {
        for id in 1..=3 {
            alphabet.push(In::B(c, id));
            alphabet.push(In::C(c, id));
        }
    }
    alphabet
}

/// Every sequence of `len` symbols over `alphabet`, in a fixed order.
pub(crate) fn sequences(alphabet: &[In], len: u32) -> impl Iterator<Item = Vec<In>> + '_ {
    let n = alphabet.len();
    (0..n.pow(len)).map(move |mut k| {
        (0..len)
            .map(|_| {
                let s = alphabet[k % n];
                k /= n;
                s
            })
            .collect()
    })
}
