//! `none`: no periodic checkpoints at all, the throughput baseline. A crash
//! restarts the job from scratch (2PC sinks commit nothing); savepoints
//! requested by hand still work, aligned, through the aligned handler.

/// The registry entry (`protocol::registry`).
pub const INFO: super::registry::AlgorithmInfo = super::registry::AlgorithmInfo {
    name: "none",
    description: "no checkpoints at all: the throughput baseline (2PC sinks commit nothing, a crash restarts from scratch)",
    promise: super::registry::Guarantee::Broken,
    checkpoints: false,
    first_barrier: super::BarrierKind::Aligned,
    max_concurrent: None,
    coordination: super::registry::Coordination::Barriers,
    closes_superseded: true,
    aligned_savepoints: true,
    forced_alignment: false,
    blocks_upstream: true,
    colour: (127, 127, 127),
    handler: |c| Box::new(super::aligned::AlignedHandler::with_mutants(c.inputs, c.mutants)),
};
