//! Watermark alignment (docs/event-time.md, "Watermark alignment"): readers
//! of one group report their watermarks, coordinators announce the
//! group's maximum, readers pause and resume splits through crashes under
//! every exactly-once algorithm; a reader that never hears an announcement
//! again is named; malformed alignment keys are refused where they stand.

use crate::common::{assert_caught, check, exactly_once, failed_checks, load, seeds_or, sweep};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::parse_str;

const FILE: &str = "scenarios/event-time-alignment.toml";

#[test]
fn aligned_readers_pause_and_resume_through_crashes_under_every_exactly_once_algorithm() {
    let sc = load("event-time-alignment");
    for a in exactly_once() {
        let counters = sweep(&sc, FILE, a, 0..seeds_or(3));
        assert!(counters.crashes > 0, "{}", a.name());
        assert!(counters.splits_paused > 0, "{}: nothing paused", a.name());
        assert!(counters.splits_resumed > 0, "{}: nothing resumed", a.name());
        assert!(counters.watermarks_reported > 0, "{}", a.name());
        assert!(counters.alignment_announcements > 0, "{}", a.name());
    }
}

#[test]
fn without_a_group_nothing_is_reported_or_paused() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let plain: String = text
        .lines()
        .filter(|l| !l.starts_with("alignment_"))
        .map(|l| format!("{l}\n"))
        .collect();
    let sc = parse_str(&plain, "plain.toml").unwrap_or_else(|e| panic!("{e}"));
    let e = check(&sc, 1, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    let c = &e.output.counters;
    assert_eq!((c.watermarks_reported, c.splits_paused), (0, 0));
}

#[test]
fn a_reader_that_never_hears_the_group_again_is_named() {
    // FLINK-37670: no alignment event once the enumerator had no more
    // splits for the reader; a paused split stays paused for ever.
    let sc = load("event-time-alignment");
    let m = Mutant::AlignmentSkipsFinishedReaders;
    assert_caught(&sc, m, 50, "watermarks");
    let seed = (0..50)
        .find(|&s| failed_checks(&check(&sc, s, &[m])).contains(&"watermarks"))
        .unwrap();
    let e = check(&sc, seed, &[m]);
    let v = e.verdict.violations().find(|v| v.check == "watermarks");
    let message = &v.unwrap().message;
    assert!(
        message.contains("for watermark alignment when the run ended")
            && message.contains("its coordinator had allowed up to")
            && message.contains("no alignment event resumed it"),
        "{message}"
    );
    assert!(failed_checks(&e).contains(&"liveness"));
}

/// The alignment scenario with `from` replaced by `to` (once).
fn edit(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(FILE).unwrap();
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

fn only_error(text: &str) -> String {
    let e = parse_str(text, "bad.toml").expect_err("refused");
    e.to_string()
}

#[test]
fn malformed_alignment_keys_are_refused_where_they_stand() {
    let static_source = edit(
        "split_assignment = \"enumerator\"\ninitial_splits = 2",
        "initial_splits = 2",
    );
    let e = only_error(&static_source.replace("initial_splits = 2\ndiscovery_interval = \"80ms\"\npush_splits = true\nno_more_splits_at_assignment = true\n", ""));
    assert!(e.contains("alignment_group needs split_assignment"), "{e}");
    let e = only_error(&edit(
        "alignment_max_drift = \"20ms\"",
        "alignment_max_drift = \"0ms\"",
    ));
    assert!(
        e.contains("alignment_group needs alignment_max_drift"),
        "{e}"
    );
    let e = only_error(&edit(
        "alignment_update_interval = \"10ms\"",
        "alignment_update_interval = \"10500us\"",
    ));
    assert!(
        e.contains("alignment_update_interval (10.5ms) is not a whole number of milliseconds"),
        "{e}"
    );
    let e = only_error(&edit("alignment_group = \"g\"\n", ""));
    assert!(
        e.contains("alignment_max_drift needs alignment_group"),
        "{e}"
    );
}

#[test]
fn a_paused_split_is_not_idle() {
    // FLINK-35886: a split blocked by alignment counted toward its idle
    // timeout. Marked idle while paused, it is left out of the alignment
    // checks (Flink 2.2 on) and never resumed.
    let sc = load("event-time-alignment");
    assert_caught(&sc, Mutant::PausedSplitIdlenessClockRuns, 50, "watermarks");
}
