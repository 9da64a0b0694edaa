//! The transactional log as a source: Flink's Kafka source reading a topic
//! that a sink of the same job writes, judged end to end; its isolation
//! levels, its offsets committed on completion, the rules that tie it to
//! its topic, and the mutants its checks catch.

use crate::common::{
    assert_caught, check, exactly_once, load, scenario_path, seeds_or, sweep, valid,
};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{
    parse_str, Guarantee, LogIsolation, OperatorKind, ScenarioData, StartingOffsets,
};

/// Two stages joined by a topic keep exactly-once end to end under every
/// exactly-once algorithm: the reader reads committed transactions only,
/// keeps its offsets in its checkpoints, commits them to its group, and
/// ends when the writer has finished.
#[test]
fn a_chain_through_the_log_is_exactly_once_under_every_algorithm() {
    let s = load("log-chain");
    assert_eq!(
        s.expected_guarantee(s.checkpoint.algorithm),
        Guarantee::ExactlyOnce
    );
    for a in exactly_once() {
        let c = sweep(&s, "log-chain", a, 0..seeds_or(4));
        assert!(c.log_records_fetched > 0, "{}", a.name());
        assert!(c.log_offsets_committed > 0, "{}", a.name());
        assert!(c.log_topics_closed > 0, "{}", a.name());
        assert!(c.log_commits > 0, "{}", a.name());
    }
    let c = sweep(&s, "log-chain", s.checkpoint.algorithm, 0..seeds_or(12));
    assert!(c.recoveries > 0 && c.log_lingering_aborted > 0);
}

/// A reader of a topic written without transactions, started from its
/// group's committed offsets and restarted early and often, loses nothing.
#[test]
fn a_reader_restarted_from_its_group_s_offsets_loses_nothing() {
    let s = load("log-offsets");
    assert_eq!(
        s.expected_guarantee(s.checkpoint.algorithm),
        Guarantee::AtLeastOnce
    );
    let c = sweep(&s, "log-offsets", s.checkpoint.algorithm, 0..seeds_or(12));
    assert!(c.recoveries > 0 && c.log_offsets_committed > 0);
}

/// The chain with its reader's keys changed by `edit`.
fn with_reader(edit: impl Fn(&mut OperatorKind)) -> ScenarioData {
    let mut d = ScenarioData::clone(&load("log-chain"));
    let reader = d.operators.iter_mut().find(|o| o.id == "read").unwrap();
    edit(&mut reader.kind);
    d
}

/// A read_uncommitted reader reads the records of transactions a failed
/// attempt left open, which the restore aborts and the next attempt writes
/// again: duplicates downstream. The job then promises at-least-once, and
/// with exactly-once declared over it the judge finds the duplicates.
#[test]
fn a_read_uncommitted_reader_duplicates_and_is_judged_at_least_once() {
    let d = with_reader(|k| {
        if let OperatorKind::SourceLog { isolation, .. } = k {
            *isolation = LogIsolation::ReadUncommitted;
        }
    });
    let s = valid(&d);
    assert_eq!(
        s.expected_guarantee(s.checkpoint.algorithm),
        Guarantee::AtLeastOnce
    );
    let mut duplicated = false;
    for seed in 0..seeds_or(30) {
        let e = check(&s, seed, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        let sink = 5; // `sink`
        let committed = e.output.store.committed();
        let mut lineages: Vec<_> = (committed.iter())
            .filter(|r| r.sink == sink)
            .map(|r| r.lineage)
            .collect();
        let all = lineages.len();
        lineages.sort_unstable();
        lineages.dedup();
        duplicated |= lineages.len() < all;
        if duplicated {
            break;
        }
    }
    assert!(duplicated, "no seed read an aborted transaction");
}

/// Offsets committed at the snapshot, before the checkpoint is known
/// complete: a restart with no completed checkpoint starts past records no
/// output holds.
#[test]
fn offsets_committed_before_completion_lose_records() {
    assert_caught(
        &load("log-offsets"),
        Mutant::SourceOffsetsCommittedEarly,
        60,
        "exactly-once-output",
    );
}

/// A restore that does not abort what earlier attempts left open leaves a
/// transaction open for the broker's timeout: named by open-transactions.
#[test]
fn lingering_transactions_not_aborted_are_named() {
    assert_caught(
        &load("log-pooling"),
        Mutant::LogLingeringNotAborted,
        60,
        "open-transactions",
    );
}

/// The reader's keys as written reach the kind, and a reader starting
/// from committed offsets is a different job from one starting earliest.
#[test]
fn the_reader_s_keys_are_read_as_written() {
    let s = load("log-offsets");
    let reader = s.operators.iter().find(|o| o.id == "read").unwrap();
    match &reader.kind {
        OperatorKind::SourceLog {
            topic,
            isolation,
            starting_offsets,
            ..
        } => {
            assert_eq!(topic, "events");
            assert_eq!(*isolation, LogIsolation::ReadCommitted);
            assert_eq!(*starting_offsets, StartingOffsets::Committed);
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(s.log_topic_of(2), Some((1, 4)));
}

fn refused(text: &str) -> String {
    parse_str(text, "bad.toml")
        .expect_err("refused")
        .to_string()
}

/// A reader names the sink-log it reads; a topic that is no sink-log, or
/// none, is refused where it stands, and so is an event-time operator
/// below a reader (it emits no watermarks).
#[test]
fn a_reader_must_name_a_log_sink_of_the_job() {
    let text = std::fs::read_to_string(scenario_path("log-chain")).unwrap();
    let line = 1 + text.lines().position(|l| l == "topic = \"mid\"").unwrap();
    let e = refused(&text.replace("topic = \"mid\"", "topic = \"sum\""));
    let at = format!("bad.toml:{line}:");
    assert!(
        e.contains(&at) && e.contains("`sum` is not a sink-log"),
        "{e}"
    );
    let e = refused(&text.replace("topic = \"mid\"", "topic = \"nowhere\""));
    assert!(e.contains("no operator `nowhere`"), "{e}");
    let e = refused(&text.replace("topic = \"mid\"\n", ""));
    assert!(e.contains("a source-log needs the topic it reads"), "{e}");
    let windowed = text.replace(
        "id = \"sum\"\nkind = \"keyed-sum\"",
        "id = \"sum\"\nkind = \"event-time-window\"\nwindow_size = \"10ms\"",
    );
    let e = refused(&windowed);
    assert!(e.contains("emits no watermarks"), "{e}");
}
