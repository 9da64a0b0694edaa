//! `uncoordinated`: every task checkpoints on its own timer (the interval,
//! give or take `local_jitter`), with no barrier and no coordinator round;
//! every task logs what it sends on each channel (sender-based message
//! logging). A checkpoint holds the task's operator state and, per channel,
//! how many records it had sent and read. On a failure the coordinator
//! computes the maximum consistent recovery line from those counts (a task
//! that read a record its sender's checkpoint in the line had not sent yet
//! is rolled back to its previous checkpoint, until no such orphan is
//! left), restores every task from its own checkpoint in the line, and the
//! senders replay their logs from what each receiver had read to what they
//! had sent. A sink commits a transaction once the line covers the
//! checkpoint that pre-committed it. The runtime side is
//! `runtime::world::local`; the rule is [`NoRule`](super::local::NoRule).

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "uncoordinated",
    description: "every task checkpoints on its own timer and logs what it sends; a failure restores the maximum consistent recovery line and replays the logs",
    promise: super::registry::Guarantee::ExactlyOnce,
    checkpoints: true,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Local(|_| Box::new(super::local::NoRule::default())),
    closes_superseded: false,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: false,
    colour: (188, 189, 34),
    handler: |c| Box::new(super::aligned::AlignedHandler::with_mutants(c.inputs, c.mutants)),
};
