//! The check registry: every registered check is in every verdict, in
//! report order, and a violation of any id reaches the verdict under that
//! id, whoever reports it; a violation no check reads stops the judge.

use crate::common::{check, load};
use ckptsim::check::{judge, oracle::Oracle, registered, CheckId, Violation};
use ckptsim::harness::Execution;
use ckptsim::model::operator::BuiltinFactory;
use ckptsim::model::Workload;
use ckptsim::scenario::Scenario;
use std::sync::Arc;

/// A passing run of `tiny` at seed 0, its scenario and its oracle.
fn judged() -> (Arc<Scenario>, Oracle, Execution) {
    let sc = Arc::new(load("tiny"));
    let e = check(&sc, 0, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict);
    let workload = Arc::new(Workload::generate(&sc, 0));
    let factory = BuiltinFactory::new(sc.clone(), workload.clone());
    let oracle = Oracle::build_replaying(&sc, &workload, &factory, e.output.schedule.as_deref());
    (sc, oracle, e)
}

#[test]
fn every_registered_check_is_in_the_verdict_in_report_order() {
    let (_, _, e) = judged();
    let names: Vec<&str> = e.verdict.checks.iter().map(|c| c.name).collect();
    let ids: Vec<&str> = registered().map(|(id, _)| id.name()).collect();
    assert_eq!(names, ids);
    // Every check but `panic`, which the sweeps report for a panicked run.
    let all: Vec<&str> = CheckId::ALL
        .iter()
        .filter(|&&id| id != CheckId::Panic)
        .map(|id| id.name())
        .collect();
    assert_eq!(ids, all);
}

#[test]
fn a_violation_of_any_registered_check_reaches_the_verdict() {
    let (sc, oracle, mut e) = judged();
    for (id, _) in registered() {
        e.output.violations.push(Violation {
            check: id,
            time_ns: 7,
            message: format!("planted {id}"),
        });
        let verdict = judge(&sc, &oracle, &e.output);
        e.output.violations.pop();
        assert!(!verdict.passed, "{id}");
        for c in &verdict.checks {
            let planted = c
                .violations
                .iter()
                .any(|v| v.message == format!("planted {id}"));
            assert_eq!(planted, c.name == id.name(), "{id} in {}", c.name);
            assert_eq!(c.passed, c.name != id.name(), "{id} in {}", c.name);
        }
    }
}

#[test]
#[should_panic(expected = "violations of checks that judge never runs")]
fn a_violation_no_check_reads_stops_the_judge() {
    let (sc, oracle, mut e) = judged();
    e.output.violations.push(Violation {
        check: CheckId::Panic,
        time_ns: 7,
        message: "planted".to_string(),
    });
    judge(&sc, &oracle, &e.output);
}
