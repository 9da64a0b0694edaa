//! The operator coordinators' state (`world/operator_coordinators.rs` says
//! what they do): one slot per coordinated operator (today the split
//! enumerators of FLIP-27 sources) with its per-subtask gateways, the
//! deferred source trigger, and the loss of operator events.
//!
//! It holds state only; `world/operator_coordinators.rs` acts on it.

use crate::engine::{SimDuration, SimRng, SimTime, Stream};
use crate::model::alignment::WatermarkAggregator;
use crate::model::flip27::{OperatorCoordinator, OperatorEvent, SplitEnumerator};
use crate::model::kinds::StateLayout;
use crate::model::{CheckpointId, ExecGraph, TaskId};
use crate::runtime::config::RunConfig;
use crate::scenario::Scenario;

/// Every operator coordinator of the job, with its gateways.
pub(super) struct Coordinators {
    pub(super) slots: Vec<Slot>,
    /// Per task: the slot of the coordinator whose operator heads it.
    pub(super) slot_of: Vec<Option<u32>>,
    /// Checkpoints whose source trigger waits for events to be
    /// acknowledged: id and trigger timestamp, oldest first (with
    /// concurrent checkpoints, several can wait).
    pub(super) deferred: std::collections::VecDeque<(CheckpointId, SimTime)>,
    pub(super) loss_percent: u32,
    pub(super) rng: SimRng,
    /// Per watermark alignment group: each aligned source's smallest
    /// report (Flink's `CoordinatorStore` entry, kept across coordinator
    /// resets).
    pub(super) groups: Vec<WatermarkAggregator<u32>>,
}

/// A coordinator's watermark alignment (`world/alignment.rs`).
pub(super) struct SlotAlignment {
    pub(super) group: usize,
    pub(super) max_drift: i64,
    pub(super) interval: SimDuration,
    /// Its subtasks' reports (Flink's `combinedWatermark`), reset with the
    /// coordinator.
    pub(super) reports: WatermarkAggregator<u32>,
    pub(super) generation: u32,
    /// Per subtask: the enumerator told it that no split will come.
    pub(super) no_more: Vec<bool>,
    /// The largest watermark last announced, and since when it has been.
    pub(super) announced: Option<(i64, SimTime)>,
}

pub(super) struct Slot {
    pub(super) operator: u32,
    pub(super) coordinator: Box<dyn OperatorCoordinator>,
    pub(super) gateways: Vec<Gateway>,
    /// Ticks of an older generation are ignored (after a reset).
    pub(super) generation: u32,
    pub(super) interval: SimDuration,
    /// Watermark alignment, if its source is in a group.
    pub(super) alignment: Option<SlotAlignment>,
}

/// One subtask's gateway.
#[derive(Default)]
pub(super) struct Gateway {
    /// The checkpoints that closed it and whose subtask snapshot has not
    /// come yet (Flink's `SubtaskGatewayImpl` keeps them per checkpoint).
    pub(super) closed: std::collections::BTreeSet<CheckpointId>,
    /// Events sent while it was closed, each with the newest checkpoint
    /// that closed it then: released, in order, once that checkpoint no
    /// longer closes it.
    pub(super) held: Vec<(CheckpointId, OperatorEvent)>,
    /// Events sent and not acknowledged (or failed) yet.
    pub(super) unacked: u32,
    /// The last RPC's arrival at the subtask: RPCs keep their order.
    pub(super) last_arrival: SimTime,
}

impl SlotAlignment {
    /// A source's alignment, its group named in `groups` (in order of
    /// first appearance).
    fn of<'s>(
        src: &'s crate::scenario::SourceSpec,
        parallelism: u32,
        groups: &mut Vec<&'s str>,
    ) -> Option<SlotAlignment> {
        let name = src.alignment_group.as_str();
        if name.is_empty() || src.watermark_interval.nanos() == 0 {
            return None;
        }
        let group = match groups.iter().position(|g| *g == name) {
            Some(g) => g,
            None => {
                groups.push(name);
                groups.len() - 1
            }
        };
        let drift_ms = src.alignment_max_drift.nanos() / 1_000_000;
        Some(SlotAlignment {
            group,
            max_drift: i64::try_from(drift_ms).unwrap_or(i64::MAX),
            interval: src.alignment_update_interval,
            reports: Default::default(),
            generation: 0,
            no_more: vec![false; parallelism as usize],
            announced: None,
        })
    }
}

impl Coordinators {
    /// A checkpoint is still being triggered: a source trigger waits for
    /// events, or a gateway is closed.
    pub(super) fn triggering(&self) -> bool {
        !self.deferred.is_empty()
            || self
                .slots
                .iter()
                .any(|s| s.gateways.iter().any(|g| !g.closed.is_empty()))
    }

    pub(super) fn new(scenario: &Scenario, exec: &ExecGraph, cfg: &RunConfig) -> Coordinators {
        let mut slots = Vec::new();
        let mut slot_of = vec![None; exec.tasks.len()];
        let mut group_names: Vec<&str> = Vec::new();
        for (i, op) in scenario.operators.iter().enumerate() {
            let Some(src) = op.kind.source_spec() else {
                continue;
            };
            if op.kind.state_layout() != StateLayout::SplitSource {
                continue;
            }
            let first = scenario.first_partition(crate::scenario::OperatorId(i as u32));
            let splits = (first..first + src.partitions).collect();
            for s in 0..op.parallelism {
                slot_of[exec.first_task[i] as usize + s as usize] = Some(slots.len() as u32);
            }
            let mut enumerator = SplitEnumerator::new(
                splits,
                src.initial_splits,
                src.push_splits.then_some(op.parallelism),
                cfg.mutants,
            );
            if src.push_splits && src.no_more_splits_at_assignment {
                enumerator = enumerator.telling_the_end_at_assignment();
            }
            slots.push(Slot {
                operator: i as u32,
                coordinator: Box::new(enumerator),
                gateways: (0..op.parallelism).map(|_| Gateway::default()).collect(),
                generation: 0,
                interval: src.discovery_interval,
                alignment: SlotAlignment::of(src, op.parallelism, &mut group_names),
            });
        }
        Coordinators {
            slots,
            slot_of,
            deferred: Default::default(),
            loss_percent: scenario
                .faults
                .operator_events
                .as_ref()
                .map_or(0, |f| f.loss_percent),
            rng: SimRng::new(cfg.seed, Stream::OperatorEvents),
            groups: group_names.iter().map(|_| Default::default()).collect(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether task `t` is a reader with a coordinator.
    pub(super) fn coordinated(&self, t: TaskId) -> bool {
        self.slot_of[t as usize].is_some()
    }

    pub(super) fn unacked(&self) -> bool {
        self.slots
            .iter()
            .any(|s| s.gateways.iter().any(|g| g.unacked > 0))
    }
}
