//! Routing: every record a keyed operator reads over hash edges belongs to
//! a key group its subtask owns at the current parallelism (after a
//! rescale too). The runtime notes each read whose key group lies outside
//! the task's range (a count and the first few,
//! [`crate::runtime::output::Misrouted`]); this check
//! recomputes each example's key group and owner from the scenario.

use super::{Finding, Input};
use crate::model::record::{key_group, subtask_for_key_group};
use crate::verdict::{CheckId, Violation};

pub fn check(input: &Input) -> Finding {
    let evidence = &input.run.evidence;
    let max_p = input.scenario.max_parallelism;
    let violations = evidence
        .misrouted
        .first
        .iter()
        .filter_map(|r| {
            let kg = key_group(r.key, max_p);
            if (r.owned.0..r.owned.1).contains(&kg) {
                return None; // owned after all: not a finding
            }
            let owner = subtask_for_key_group(kg, r.parallelism, max_p);
            let name = &evidence.task_names[r.task as usize];
            Some(Violation {
                check: CheckId::Routing,
                time_ns: r.time_ns,
                message: format!(
                    "task {name} received key {} of key group {kg}, which subtask {owner} owns at parallelism {}",
                    r.key, r.parallelism
                ),
            })
        })
        .collect();
    Finding {
        violations,
        reach: vec![(
            "keyed records checked",
            input.run.counters.records_routing_checked,
        )],
    }
}
