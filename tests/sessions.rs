//! Session windows and the late-data side output (docs/event-time.md,
//! "Time windows"): sessions merge through crashes under every
//! exactly-once algorithm, late records reach their side output or are
//! counted dropped, both judged exactly; their mutants are caught; the
//! keys are refused where they stand.

use crate::common::{assert_caught, check, exactly_once, failed_checks, load, seeds_or, sweep};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::parse_str;

const FILE: &str = "scenarios/event-time-sessions.toml";

#[test]
fn sessions_and_late_records_are_exact_through_crashes_under_every_exactly_once_algorithm() {
    let sc = load("event-time-sessions");
    for a in exactly_once() {
        let counters = sweep(&sc, FILE, a, 0..seeds_or(3));
        assert!(counters.crashes > 0, "{}", a.name());
        assert!(
            counters.late_records_side_output > 0,
            "{}: nothing late",
            a.name()
        );
        assert_eq!(counters.late_records_dropped, 0, "{}", a.name());
    }
}

/// The sessions scenario with `from` replaced by `to` (once).
fn edit(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(FILE).unwrap();
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

#[test]
fn without_a_side_output_late_records_are_dropped_and_counted() {
    let text = edit("side_output = \"late\"\n", "");
    let text = text.replacen("to = \"late\"", "to = \"sink\"", 1);
    let text = text.replacen(
        "[[operators]]\nid = \"late\"\nkind = \"sink-2pc\"\nparallelism = 1\n",
        "",
        1,
    );
    // The second edge to `sink` would repeat the first: drop it.
    let text = text.replacen(
        "[[edges]]\nfrom = \"sessions\"\nto = \"sink\"\npartitioning = \"rebalance\"\n\n",
        "",
        1,
    );
    let sc = parse_str(&text, "dropped.toml").unwrap_or_else(|e| panic!("{e}"));
    let e = check(&sc, 1, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    let c = &e.output.counters;
    assert!(c.late_records_dropped > 0);
    assert_eq!(c.late_records_side_output, 0);
}

#[test]
fn a_session_set_left_out_of_the_restore_is_caught() {
    // FLINK-3740: the merging window set was not checkpointed.
    let sc = load("event-time-sessions");
    assert_caught(
        &sc,
        Mutant::SessionSetNotRestored,
        50,
        "exactly-once-output",
    );
}

#[test]
fn a_record_judged_late_before_its_merge_is_caught() {
    let sc = load("event-time-sessions");
    assert_caught(
        &sc,
        Mutant::SessionLateBeforeMerge,
        50,
        "exactly-once-output",
    );
}

#[test]
fn windows_pass_a_stop_with_savepoint_and_a_rescaled_restore() {
    // Sliding windows and sessions, with their timers and the side output,
    // stopped with a savepoint mid-run and restored at a new parallelism.
    for (name, operator, parallelism) in [
        ("event-time", "window", 4),
        ("event-time-sessions", "sessions", 3),
    ] {
        let sc = load(name);
        let flow = ckptsim::rescale::RescaleFlow {
            at_ms: 60,
            operator,
            parallelism,
            claim: false,
            retained: false,
        };
        let mut judged = 0;
        for seed in 0..seeds_or(3) {
            let cfg = crate::common::config(&sc, seed, &[]);
            let Some(e) = flow.execute(&sc, &cfg) else {
                continue;
            };
            assert!(
                e.verdict.passed,
                "{name} seed {seed}: {:?}",
                failed_checks(&e)
            );
            judged += crate::common::reach(&e, "timers", "restores judged for their timers");
        }
        assert!(judged > 0, "{name}: no restore judged");
    }
}

fn only_error(text: &str) -> String {
    let e = parse_str(text, "bad.toml").expect_err("refused");
    e.to_string()
}

#[test]
fn malformed_session_and_side_output_keys_are_refused_where_they_stand() {
    let sized = edit(
        "session_gap = \"10ms\"",
        "session_gap = \"10ms\"\nwindow_size = \"1s\"",
    );
    let e = only_error(&sized);
    let line = 1 + sized
        .lines()
        .position(|l| l.starts_with("window_size"))
        .unwrap();
    assert!(
        e.contains(&format!("bad.toml:{line}:"))
            && e.contains("window_size does not apply to session windows"),
        "{e}"
    );
    let fraction = edit("session_gap = \"10ms\"", "session_gap = \"1.5ms\"");
    assert!(only_error(&fraction).contains("session_gap"), "fraction");
    let unknown = edit("side_output = \"late\"", "side_output = \"early\"");
    let line = 1 + unknown
        .lines()
        .position(|l| l.starts_with("side_output"))
        .unwrap();
    let e = only_error(&unknown);
    assert!(
        e.contains(&format!("bad.toml:{line}:")) && e.contains("unknown side output `early`"),
        "{e}"
    );
    let from_source = edit(
        "from = \"sessions\"\nto = \"late\"",
        "from = \"source\"\nto = \"late\"",
    );
    let e = only_error(&from_source);
    assert!(e.contains("which is not an event-time-window"), "{e}");
}
