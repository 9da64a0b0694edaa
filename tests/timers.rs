//! Timers (docs/event-time.md, "Timers"): a keyed process function's
//! event-time and processing-time timers are keyed state, fire through the
//! watermark and the task's mailbox, survive crashes, savepoints and
//! rescales, and the timers check sees each firing in effect against the
//! oracle's; the timer mutants are caught; malformed timer keys are
//! refused where they stand.

use crate::common::{
    assert_caught, check, check_alg, ckptsim, config, exactly_once, failed_checks, load, seeds_or,
    stderr, stdout, sweep,
};
use ckptsim::mutant::Mutant;
use ckptsim::scenario::parse_str;

const FILE: &str = "scenarios/event-time-timers.toml";

fn reach(e: &ckptsim::harness::Execution, what: &str) -> u64 {
    crate::common::reach(e, "timers", what)
}

#[test]
fn timers_fire_once_in_effect_through_crashes_under_every_exactly_once_algorithm() {
    let sc = load("event-time-timers");
    for a in exactly_once() {
        let counters = sweep(&sc, FILE, a, 0..seeds_or(3));
        assert!(counters.crashes > 0, "{}", a.name());
        assert!(
            counters.timers_restored > 0,
            "{}: no timer restored",
            a.name()
        );
        assert!(counters.processing_time_calls > 0, "{}", a.name());
    }
}

#[test]
fn the_check_judges_every_firing_and_every_step_start() {
    let e = check(&load("event-time-timers"), 1, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    // Every firing emits one record, and every record reaches the sink.
    let committed = e.output.counters.sink_records_in;
    assert!(reach(&e, "timers fired in effect (judged)") > 1000);
    assert!(committed > 0);
    assert!(reach(&e, "processing-time timers judged at step starts") > 100);
    // Without timers the check has nothing to see.
    let plain = check(&load("wordcount"), 1, &[]);
    assert_eq!(reach(&plain, "timers fired in effect (judged)"), 0);
}

/// The message of `e`'s first timers violation.
fn timers_violation(e: &ckptsim::harness::Execution) -> String {
    let v = e.verdict.violations().find(|v| v.check == "timers");
    v.unwrap_or_else(|| panic!("no timers violation: {:?}", failed_checks(e)))
        .message
        .clone()
}

/// Mutant `m` is caught by the timers check within 50 seeds of the timers
/// scenario: the message of its first timers violation at the first seed.
fn caught_by_timers(m: Mutant) -> String {
    let sc = load("event-time-timers");
    assert_caught(&sc, m, 50, "timers");
    let seed = (0..50)
        .find(|&s| !check(&sc, s, &[m]).verdict.passed)
        .unwrap();
    timers_violation(&check(&sc, seed, &[m]))
}

#[test]
fn timers_left_out_of_the_snapshot_never_fire_in_effect() {
    let message = caught_by_timers(Mutant::TimersNotInSnapshot);
    assert!(
        message.contains("missing in effect (a timer lost)")
            && message.contains("`timers`: event-time timer of key"),
        "{message}"
    );
}

#[test]
fn a_restore_short_of_timers_is_named_under_any_algorithm() {
    // At-least-once runs are not judged against the oracle's firings; the
    // restore is, against the count its snapshot recorded.
    let sc = load("event-time-timers");
    let alo = ckptsim::scenario::Algorithm::AtLeastOnce;
    let e = check_alg(&sc, 3, alo, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    assert!(reach(&e, "restores judged for their timers") > 0);
    assert_eq!(reach(&e, "timers fired in effect (judged)"), 0);
    let message = timers_violation(&check_alg(&sc, 3, alo, &[Mutant::TimersNotInSnapshot]));
    assert!(
        message.starts_with("task timers[")
            && message.contains("was restored from checkpoint")
            && message.contains("with 0 timers of operator `timers`, whose snapshot held"),
        "{message}"
    );
}

#[test]
fn restored_processing_timers_must_arm_the_service() {
    // apache/flink#2602: restored processing-time timers were never
    // registered with the processing-time service.
    let message = caught_by_timers(Mutant::RestoredProcessingTimersNotArmed);
    assert!(
        message.contains("with a processing-time timer of timers due at")
            && message.contains("not armed"),
        "{message}"
    );
}

#[test]
fn a_savepoint_restores_the_timers_at_a_new_parallelism() {
    let dir = std::env::temp_dir().join(format!("ckptsim-timers-sp-{}", std::process::id()));
    timers_savepoint(&dir);
    let out = dir.to_str().unwrap();
    let o = ckptsim(&["verify-snapshot", out]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = ckptsim(&[
        "run",
        FILE,
        "--from-savepoint",
        out,
        "--parallelism",
        "timers=5",
        "--seed",
        "4",
    ]);
    let (text, err) = (stdout(&o), stderr(&o));
    // The sink's output depends on arrival order before the savepoint,
    // which this run never saw: it is not judged (exit 0, INCOMPLETE).
    assert_eq!(o.status.code(), Some(0), "{text}{err}");
    assert!(err.contains("timers: parallelism 3 → 5"), "{err}");
    let line = text
        .lines()
        .find(|l| l.contains("timers restored"))
        .unwrap();
    assert!(!line.contains("timers restored: 0,"), "{line}");
    assert!(line.contains("  timers               pass"), "{line}");
    assert!(
        !line.contains("restores judged for their timers: 0,"),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A savepoint of the timers scenario, taken at 100 ms of seed 3.
fn timers_savepoint(dir: &std::path::Path) -> ckptsim::savepoint::Image {
    let _ = std::fs::remove_dir_all(dir);
    let out = dir.to_str().unwrap();
    let args = [
        "savepoint",
        FILE,
        "--at",
        "100ms",
        "--out",
        out,
        "--seed",
        "3",
    ];
    let o = ckptsim(&args);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    ckptsim::savepoint::read_dir(dir).unwrap()
}

#[test]
fn a_restore_from_a_savepoint_file_short_of_timers_is_named() {
    // The savepoint's key groups say how many timers each subtask gets
    // back; a restore that loses those of one key group is named.
    let dir = std::env::temp_dir().join(format!("ckptsim-timers-short-{}", std::process::id()));
    let image = timers_savepoint(&dir);
    let sc = load("event-time-timers");
    let run = |restore: ckptsim::runtime::Restore| {
        let job = ckptsim::runtime::JobOptions {
            restore: Some(std::sync::Arc::new(restore)),
            ..Default::default()
        };
        ckptsim::harness::execute_job(&sc, &config(&sc, 4, &[]), &job, image.meta.input_seed)
    };
    let plan = ckptsim::savepoint::rescale::assign(&image, &sc, false).unwrap();
    let whole = run(plan.restore.clone());
    assert!(
        !failed_checks(&whole).contains(&"timers"),
        "{:?}",
        failed_checks(&whole)
    );
    assert!(reach(&whole, "restores judged for their timers") > 0);
    // Lose the timers of the first key group that has some.
    let mut restore = plan.restore;
    let kind = &sc.operators.iter().find(|o| o.id == "timers").unwrap().kind;
    let strip = ckptsim::model::kinds::group_timers(kind).unwrap();
    let (snap, m) = (restore.states.iter_mut().flatten())
        .find_map(|s| {
            let m = s.timers.iter().position(|&n| n > 0)?;
            Some((s, m))
        })
        .unwrap();
    let mut groups = ckptsim::model::operator::keyed_byte_groups(&snap.states[m]).unwrap();
    let g = groups
        .iter()
        .position(|(_, b)| strip(b, false).unwrap().0 > 0)
        .unwrap();
    groups[g].1 = strip(&groups[g].1, true).unwrap().1;
    snap.states[m] = ckptsim::model::operator::keyed_byte_state(groups);
    let short = run(restore);
    let message = timers_violation(&short);
    assert!(
        message.contains("timers of operator `timers`, whose snapshot held"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rescale_that_leaves_moved_timers_behind_is_caught_through_the_flow() {
    // The kill matrix's flow: stop with a savepoint, restore at a new
    // parallelism; the key groups that change subtask lose their timers.
    let sc = load("event-time-timers");
    let m = Mutant::RescaleDropsMovedTimers;
    let flow = ckptsim::rescale::flow_of(m).unwrap();
    let clean = flow.execute(&sc, &config(&sc, 0, &[])).unwrap();
    assert!(clean.verdict.passed, "{:?}", failed_checks(&clean));
    assert!(reach(&clean, "restores judged for their timers") > 0);
    let broken = flow.execute(&sc, &config(&sc, 0, &[m])).unwrap();
    assert!(timers_violation(&broken).contains("whose snapshot held"));
    assert!(
        !broken.output.warnings.iter().any(|w| w.kind == "mutant"),
        "the mutant took effect before the run: {:?}",
        broken.output.warnings
    );
}

/// The shipped scenario with `from` replaced by `to`.
fn edited(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(FILE).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from}");
    text.replacen(from, to, 1)
}

fn only_error(text: &str) -> ckptsim::scenario::ScenarioError {
    let mut errors = match parse_str(text, "t.toml") {
        Ok(_) => panic!("expected an error:\n{text}"),
        Err(e) => e.0,
    };
    assert_eq!(errors.len(), 1, "{errors:#?}");
    errors.remove(0)
}

#[test]
fn malformed_timer_keys_are_refused_where_they_stand() {
    let e = only_error(&edited(
        "processing_delay = \"5ms\"",
        "processing_delay = \"2500us\"",
    ));
    assert!(
        e.message
            .contains("processing_delay (2.5ms) is not a whole number of milliseconds"),
        "{}",
        e.message
    );
    assert_eq!(e.line, Some(49));
    let e = only_error(&edited(
        "timer_delay = \"20ms\"",
        "timer_delay = \"1500us\"",
    ));
    assert!(
        e.message.contains("not a whole number of milliseconds"),
        "{}",
        e.message
    );
    assert_eq!(e.line, Some(48));
    let e = only_error(&edited("watermark_interval = \"10ms\"\n", ""));
    assert!(
        e.message
            .contains("keyed process function `timers` never fires its event-time timers"),
        "{}",
        e.message
    );
    // Without processing_delay (or with 0) there are no processing-time
    // timers.
    let text = edited("processing_delay = \"5ms\"\n", "");
    let sc = parse_str(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let e = check(&sc, 1, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    assert_eq!(e.output.counters.processing_time_calls, 0);
    assert!(reach(&e, "timers fired in effect (judged)") > 0);
}
