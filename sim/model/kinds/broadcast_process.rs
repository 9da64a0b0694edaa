//! `broadcast-process`: a rule table in broadcast state
//! (`model::opstate::BroadcastProcess`).

use super::*;
use crate::scenario::Partitioning;

pub static KIND: OperatorKindInfo = OperatorKindInfo {
    kind: KindInfo {
        name: "broadcast-process",
        description:
            "rule table in broadcast state: broadcast inputs set rule key % rules, other inputs \
                      are emitted with value × rule; each subtask snapshots its copy",
        keyed: false,
        check: no_params,
    },
    role: Role::Transform,
    holds: true,
    state: |_| StateLayout::Broadcast,
    create: |s| match *s.kind {
        OperatorKind::BroadcastProcess { rules } => {
            let control = (s.scenario.edges.iter())
                .filter(|e| e.to.0 == s.operator && e.partitioning == Partitioning::Broadcast)
                .map(|e| e.from.0)
                .collect();
            Box::new(crate::model::opstate::BroadcastProcess::new(rules, control))
        }
        ref k => not_mine(k),
    },
    flink: |_| Flink::Refused("broadcast state is not exported yet"),
};
