//! The check registry: every registered check is in every verdict, in
//! report order, and a violation of any id reaches the verdict under that
//! id, whoever reports it; a violation no check reads stops the judge; the
//! checks that judge the runtime's evidence report what it says.

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
        e.output.evidence.violations.push(Violation {
            check: id,
            time_ns: 7,
            message: format!("planted {id}"),
        });
        let verdict = judge(&sc, &oracle, &e.output);
        e.output.evidence.violations.pop();
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
    e.output.evidence.violations.push(Violation {
        check: CheckId::Panic,
        time_ns: 7,
        message: "planted".to_string(),
    });
    judge(&sc, &oracle, &e.output);
}

/// The checks that judge the runtime's evidence, on evidence planted in a
/// passing run: each finding names what the evidence says, at its time.
fn findings(e: &Execution, sc: &Scenario, oracle: &Oracle, check: CheckId) -> Vec<Violation> {
    let verdict = judge(sc, oracle, &e.output);
    let c = verdict.checks.iter().find(|c| c.name == check.name());
    c.expect("a registered check").violations.clone()
}

#[test]
fn a_misrouted_read_is_reported_with_its_key_group_and_owner() {
    use ckptsim::model::record::{key_group, subtask_for_key_group};
    use ckptsim::runtime::output::MisroutedRead;
    let (sc, oracle, mut e) = judged();
    assert_eq!(e.output.evidence.misrouted.count, 0);
    let max_p = sc.max_parallelism;
    let key = 42;
    let kg = key_group(key, max_p);
    let owned = if kg == 0 { (1, max_p) } else { (0, kg) };
    let misrouted = &mut e.output.evidence.misrouted;
    for time_ns in [5, 9] {
        misrouted.note(|| MisroutedRead {
            time_ns,
            task: 0,
            key,
            owned,
            parallelism: 2,
        });
    }
    // A read inside its task's range is no finding, whoever noted it.
    misrouted.first.push(MisroutedRead {
        time_ns: 11,
        task: 0,
        key,
        owned: (kg, kg + 1),
        parallelism: 2,
    });
    let name = &e.output.evidence.task_names[0];
    let owner = subtask_for_key_group(kg, 2, max_p);
    let message = format!("task {name} received key {key} of key group {kg}, which subtask {owner} owns at parallelism 2");
    let found = findings(&e, &sc, &oracle, CheckId::Routing);
    let got: Vec<(u64, &str)> = found
        .iter()
        .map(|v| (v.time_ns, v.message.as_str()))
        .collect();
    assert_eq!(got, [(5, message.as_str()), (9, message.as_str())]);
}

#[test]
fn a_transaction_left_precommitted_when_due_is_reported_once_with_its_commit() {
    use ckptsim::engine::SimDuration;
    use ckptsim::model::store::TxnId;
    use ckptsim::runtime::output::{CommitDue, DueCause};
    let (sc, oracle, mut e) = judged();
    let due = &mut e.output.evidence.commits_due;
    assert!(!due.is_empty(), "tiny's sinks owe commits");
    assert!(due.iter().all(|d| d.precommitted.is_empty() && d.due > 0));
    assert!(due.iter().any(|d| d.cause == DueCause::Notified));
    // Sequence numbers no run of tiny reaches: never committed.
    let txn = |seq: u64| TxnId {
        sink: 3,
        subtask: 1,
        attempt: 0,
        seq: 1_000_000 + seq,
    };
    let first = due[0].clone();
    let (time_ns, task, id) = (first.time_ns, first.task, first.checkpoint);
    // The same transaction late at two points: named once, at the first.
    due[0].precommitted = vec![(txn(4), id)];
    due.push(CommitDue {
        time_ns: time_ns + 7,
        cause: DueCause::Restored,
        precommitted: vec![(txn(4), id), (txn(5), id)],
        ..first
    });
    let name = e.output.evidence.task_names[task as usize].clone();
    let found = findings(&e, &sc, &oracle, CheckId::LateCommit);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].time_ns, time_ns);
    let at = SimDuration(time_ns);
    assert_eq!(
        found[0].message,
        format!("sink {name} was notified at {at} that checkpoint {id} completed, but {}, pre-committed for checkpoint {id}, was not committed then; it was never committed", txn(4))
    );
    let at = SimDuration(time_ns + 7);
    assert_eq!(
        found[1].message,
        format!("task {name} restored checkpoint {id} at {at}, whose snapshot held {} pre-committed for checkpoint {id}, but the restore did not commit it; it was never committed", txn(5))
    );
    // The other checks do not read this evidence.
    assert!(findings(&e, &sc, &oracle, CheckId::Commit).is_empty());
}

#[test]
fn a_broken_channel_cut_and_a_misplaced_split_are_reported() {
    use ckptsim::runtime::cut_evidence::{ChannelCut, CompletedCut, Span, SplitCut};
    let (sc, oracle, mut e) = judged();
    let cuts = &mut e.output.evidence.cuts;
    assert!(!cuts.is_empty(), "a passing run records its cuts");
    assert!(findings(&e, &sc, &oracle, CheckId::ConsistentCut).is_empty());
    let channel = |sent, received, input| ChannelCut {
        sent: Some(sent),
        received: Some(received),
        input,
        output: None,
    };
    let mut planted = CompletedCut {
        checkpoint: 9,
        time_ns: 1_234,
        channels: vec![
            channel(10, 10, None),
            // Input state overlapping what the receiver consumed.
            channel(
                14,
                10,
                Some(Span {
                    first: 9,
                    len: 5,
                    gap: false,
                }),
            ),
            ChannelCut::default(),
        ],
        splits: vec![SplitCut {
            operator: "src".into(),
            known: vec![0, 1],
            places: [(0, vec!["the enumerator".to_string(), "src[0]".to_string()])]
                .into_iter()
                .collect(),
            complete: true,
        }],
    };
    e.output.evidence.channel_names = vec!["a".into(), "b".into(), "c".into()];
    e.output.evidence.cuts = vec![planted.clone()];
    let found: Vec<String> = findings(&e, &sc, &oracle, CheckId::ConsistentCut)
        .into_iter()
        .map(|v| {
            assert_eq!(v.time_ns, 1_234);
            v.message
        })
        .collect();
    assert_eq!(
        found,
        [
            "checkpoint 9: b: sender sent 14 records before its snapshot; receiver consumed 10 before its snapshot; input channel state [9, 14)",
            "checkpoint 9: c: completed without a snapshot from both ends",
            "checkpoint 9: split 0 of src is in more than one place: the enumerator, src[0]",
            "checkpoint 9: split 1 of src is neither unassigned in the enumerator's checkpoint nor in any reader's snapshot",
        ]
    );
    // A reader's snapshot missing: a split in no place is no finding.
    planted.channels.truncate(1);
    planted.splits[0].complete = false;
    planted.splits[0].places.clear();
    e.output.evidence.cuts = vec![planted];
    assert!(findings(&e, &sc, &oracle, CheckId::ConsistentCut).is_empty());
}
