//! The judge itself: every requested savepoint ends completed or failed with
//! a reason, and a run that passes says what it did not test (faults that
//! never took effect, mutants that never fired).

use crate::common::{check_alg, load, scenario_path};
use ckptsim::harness::execute;
use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::runtime::{RunConfig, RunOutcome};
use ckptsim::scenario::{parse_str, Algorithm, Scenario};

fn variant(name: &str, edit: impl Fn(String) -> String) -> Scenario {
    let text = std::fs::read_to_string(scenario_path(name)).unwrap();
    parse_str(&edit(text), &format!("{name}-variant.toml")).unwrap()
}

fn kinds(e: &ckptsim::harness::Execution) -> Vec<&str> {
    e.output.warnings.iter().map(|w| w.kind.as_str()).collect()
}

/// Under every algorithm, `none` included, each savepoint request of
/// scenarios/savepoints.toml ends completed or failed with a reason; the
/// drained stop-with-savepoint completes and stops the job even without
/// checkpoints (the drain ends the input before its barrier completes).
#[test]
fn every_savepoint_request_completes_or_fails_with_a_reason() {
    let sc = load("savepoints");
    for alg in Algorithm::all() {
        for seed in 0..5 {
            let e = check_alg(&sc, seed, alg, &[]);
            assert_eq!(e.output.savepoints.len(), 3, "{alg:?}");
            for r in &e.output.savepoints {
                match (r.completed, &r.failure) {
                    (Some(_), None) => {}
                    (None, Some(why)) => assert!(!why.is_empty(), "{alg:?}: {r:?}"),
                    _ => panic!("{alg:?} seed {seed}: unresolved {r:?}"),
                }
            }
        }
    }
    let e = check_alg(&sc, 1, Algorithm::None, &[]);
    let stop = &e.output.savepoints[2];
    assert!(stop.stop && stop.drain);
    assert!(stop.completed.is_some(), "{stop:?}");
    assert!(matches!(e.output.outcome, RunOutcome::Stopped(_)));
}

/// A savepoint requested after the job finished fails, and says so.
#[test]
fn a_savepoint_due_after_the_end_fails_with_its_reason() {
    let sc = variant("wordcount", |t| t + "\n[[savepoints]]\nat = \"100s\"\n");
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    let r = &e.output.savepoints[0];
    assert_eq!(r.completed, None);
    let why = r.failure.as_deref().unwrap();
    assert!(why.contains("before the request was due"), "{why}");
    assert!(kinds(&e).contains(&"savepoint"), "{:?}", e.output.warnings);
}

/// A planned crash after the job ended is a warning, not silence.
#[test]
fn a_crash_planned_after_the_end_is_reported() {
    let sc = variant("wordcount", |t| {
        t + "\n[[faults.crashes]]\nat = \"100s\"\ntask = \"count[1]\"\n"
    });
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    let w = e
        .output
        .warnings
        .iter()
        .find(|w| w.message.contains("count[1] planned at 100s"))
        .unwrap_or_else(|| panic!("{:?}", e.output.warnings));
    assert_eq!(w.kind, "crash");
    assert!(w.message.contains("never happened"), "{}", w.message);
}

/// A worker crash on a worker that runs nothing fails nothing over, and is
/// reported as having taken no effect.
#[test]
fn a_worker_crash_on_an_idle_worker_is_reported_and_fails_nothing() {
    // Four workers, one slot each, parallelism at most 3: worker 3 is idle.
    let sc = variant("wordcount", |t| {
        t + "\n[cluster]\nworkers = 4\nslots_per_worker = 1\n\n[[faults.worker_crashes]]\nat = \"50ms\"\nworker = 3\n"
    });
    let clean = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(clean.verdict.passed);
    let w = clean
        .output
        .warnings
        .iter()
        .find(|w| w.kind == "worker-crash")
        .unwrap_or_else(|| panic!("{:?}", clean.output.warnings));
    assert!(w.message.contains("no running subtask"), "{}", w.message);
    assert_eq!(clean.output.counters.worker_crashes, 0);
}

/// A mutant that cannot apply under the chosen algorithm says so; one that
/// fires does not.
#[test]
fn a_mutant_that_never_fires_is_reported() {
    let sc = load("backpressure");
    let run = |alg, m| {
        execute(
            &sc,
            &RunConfig {
                seed: 1,
                algorithm: alg,
                mutants: Mutants::NONE.with(m),
                record_trace: false,
            },
        )
    };
    let idle = run(Algorithm::Aligned, Mutant::UnalignedDropInflight);
    assert!(idle.verdict.passed);
    assert!(
        idle.output
            .warnings
            .iter()
            .any(|w| w.kind == "mutant" && w.message.contains("unaligned-drop-inflight")),
        "{:?}",
        idle.output.warnings
    );
    let live = run(Algorithm::Unaligned, Mutant::UnalignedDropInflight);
    assert!(!live.verdict.passed);
    assert!(
        !kinds(&live).contains(&"mutant"),
        "{:?}",
        live.output.warnings
    );
}

/// Every registered mutant fires on the first seed that kills it in the
/// kill matrix's scenarios (a kill without a firing would mean the hook
/// records the wrong place). Every mutant must be killed within 200 seeds
/// of one of the scenarios it applies to: one that is not fails the test
/// rather than being passed over.
#[test]
fn every_mutant_fires_where_it_kills() {
    for info in ckptsim::mutant::MUTANTS {
        if info.caught_by == "panic" {
            continue; // its kill is a panic, caught by sweeps, not here
        }
        let killed = info.applies.iter().find_map(|&(name, alg)| {
            let alg = Algorithm::from_name(alg).unwrap();
            let sc = load(name);
            (0..200).find_map(|seed| {
                let cfg = RunConfig {
                    seed,
                    algorithm: alg,
                    mutants: Mutants::NONE.with(*info),
                    record_trace: false,
                };
                // A rescale mutant runs through its flow, as in the matrix.
                let e = match ckptsim::rescale::flow_of(*info) {
                    Some(flow) => flow.execute(&sc, &cfg)?,
                    None => execute(&sc, &cfg),
                };
                (!e.verdict.passed).then_some(e)
            })
        });
        let e = killed.unwrap_or_else(|| {
            panic!(
                "{} was not killed within 200 seeds of {:?}",
                info.name, info.applies
            )
        });
        assert!(
            !e.output
                .warnings
                .iter()
                .any(|w| w.kind == "mutant" && w.message.contains(info.name)),
            "{} killed a run but says it never took effect",
            info.name
        );
    }
}

/// Seeds per (scenario, algorithm) for the endings below: `CKPTSIM_SEEDS`
/// or 60.
fn seeds() -> u64 {
    crate::common::seeds_or(60)
}

/// Runs `name` over the seeds under every exactly-once algorithm; every
/// run passes (with its replay line if not); returns the summed counters
/// and the outcomes seen.
fn sweep_endings(name: &str) -> (ckptsim::runtime::Counters, Vec<String>) {
    let sc = load(name);
    let mut total = ckptsim::runtime::Counters::default();
    let mut outcomes = Vec::new();
    for alg in crate::common::exactly_once() {
        for seed in 0..seeds() {
            let e = check_alg(&sc, seed, alg, &[]);
            assert!(
                e.verdict.passed,
                "{:?}\nreplay: ckptsim run scenarios/{name}.toml --seed {seed} --algorithm {}",
                e.verdict.violations().next(),
                alg.name()
            );
            total += &e.output.counters;
            let o = e.output.outcome.describe();
            if !outcomes.contains(&o) {
                outcomes.push(o);
            }
        }
    }
    (total, outcomes)
}

/// Jobs that end without a final checkpoint keep every promise of their
/// completed checkpoints, under every exactly-once algorithm with crashes:
/// a cancel, a stop-with-savepoint without drain, a job failed by its
/// restart strategy; and a buffering operator ended by a drained stop.
#[test]
fn endings_without_a_final_checkpoint_keep_their_promises() {
    let (c, outcomes) = sweep_endings("cancel");
    assert_eq!(outcomes, vec!["cancelled"]);
    assert!(c.recoveries_from_checkpoint > 0 && c.crashes > 0, "{c:?}");
    let (c, outcomes) = sweep_endings("stop");
    assert!(outcomes
        .iter()
        .all(|o| o.starts_with("stopped with savepoint")));
    assert!(c.savepoints_completed > 0 && c.crashes > 0, "{c:?}");
    let (c, outcomes) = sweep_endings("windows");
    assert!(outcomes
        .iter()
        .all(|o| o.starts_with("stopped with savepoint")));
    assert!(c.recoveries_from_checkpoint > 0, "{c:?}");
    // Aligned checkpoints expire there until the job fails; unaligned ones
    // complete, and the job finishes.
    let (c, outcomes) = sweep_endings("expiring");
    assert!(
        outcomes.iter().any(|o| o.starts_with("job failed")),
        "{outcomes:?}"
    );
    assert!(
        c.restart_strategy_gave_up > 0 && c.checkpoints_expired > 0,
        "{c:?}"
    );
    let sc = load("expiring");
    for seed in 0..5 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(
            matches!(e.output.outcome, RunOutcome::JobFailed(_)),
            "seed {seed}"
        );
    }
}

/// The batching sink is at-least-once under crashes, never lossy.
#[test]
fn a_batching_sink_never_loses_records() {
    let sc = load("batching");
    let mut total = ckptsim::runtime::Counters::default();
    for seed in 0..seeds() * 2 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        total += &e.output.counters;
    }
    assert!(total.recoveries_from_checkpoint > 10, "{total:?}");
}

/// A crash right after the final checkpoint completed (while its
/// notifications are on their way): the failover restores the final
/// checkpoint, the job finishes again, nothing is committed twice and
/// nothing promised is lost.
#[test]
fn a_failover_right_after_the_final_checkpoint() {
    let quiet = |extra: &str| {
        variant("wordcount", |t| {
            t.replace("[faults.random]", "[faults.random_off]")
                .replace("[faults.random_off]\nmean_interval = \"500ms\"\nwindow_start = \"0s\"\nwindow_end = \"1.5s\"\nmax_crashes = 3\n", "")
                + extra
        })
    };
    let sc = quiet("");
    for seed in 0..4 {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        assert_eq!(e.output.counters.crashes, 0);
        let last = e
            .output
            .checkpoint_stats
            .iter()
            .rev()
            .find(|s| s.outcome == ckptsim::runtime::coordinator::Outcome::Completed)
            .unwrap();
        let at = ckptsim::engine::SimDuration(last.end_ns + 1_000);
        let crashed = quiet(&format!(
            "\n[[faults.crashes]]\nat = \"{at}\"\ntask = \"sink[1]\"\n"
        ));
        let e = check_alg(&crashed, seed, Algorithm::Aligned, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        assert_eq!(
            e.output.counters.crashes_after_final_checkpoint, 1,
            "seed {seed}"
        );
        assert_eq!(e.output.outcome, RunOutcome::Finished);
    }
}

/// The oracle keeps only a digest of the expected output values; when the
/// committed values differ from it, the harness rebuilds the oracle keeping
/// the values, and the violation names the first value that differs.
#[test]
fn differing_values_are_named_by_their_first_difference() {
    let sc = load("wordcount");
    let e = execute(
        &sc,
        &RunConfig {
            seed: 1,
            algorithm: sc.checkpoint.algorithm,
            mutants: Mutants::NONE.with(Mutant::KeyedSnapshotStaleGroup),
            record_trace: false,
        },
    );
    let v = e
        .verdict
        .violations()
        .find(|v| v.message.starts_with("committed values differ"))
        .expect("the stale key group changes committed counts");
    assert!(
        v.message.contains("where the oracle has (sink 3, key"),
        "{}",
        v.message
    );
}

/// The output check's examples say where each record went: the
/// transactions that committed a duplicate and the restart whose replay
/// wrote each, or those that hold a lost record uncommitted and the
/// restart that ended them; a state difference names the last restore.
#[test]
fn output_examples_name_the_transactions_involved() {
    let sc = load("wordcount");
    let message = |m: Mutant, seed: u64, start: &str| {
        let e = execute(
            &sc,
            &RunConfig {
                seed,
                algorithm: sc.checkpoint.algorithm,
                mutants: Mutants::NONE.with(m),
                record_trace: false,
            },
        );
        let found = e
            .verdict
            .violations()
            .find(|v| v.message.contains(start))
            .map(|v| v.message.clone());
        found.unwrap_or_else(|| panic!("{m:?}: no `{start}` violation"))
    };
    let dup = message(
        Mutant::RestartKeepsStaleBuffers,
        0,
        "more than expected (by lineage)",
    );
    assert!(
        dup.contains("at sink `sink` (expected 1×): committed by txn(sink 3 subtask"),
        "{dup}"
    );
    // Which replay wrote it again: the restart of the transaction's attempt.
    assert!(
        dup.contains("attempt 1 #1) at 416.241809ms (a replay after the restart at 307.113987ms from checkpoint 1)"),
        "{dup}"
    );
    let state = message(Mutant::RestartKeepsStaleBuffers, 0, "its state differs");
    assert!(
        state.ends_with(
            "; the state was last restored by the restart at 307.113987ms from checkpoint 1"
        ),
        "{state}"
    );
    let lost = message(Mutant::NoSourceRewind, 1, "never committed (by lineage)");
    assert!(lost.contains(": written only into txn(sink 3"), "{lost}");
    // Where it was lost: the restart that ended its transaction's attempt.
    assert!(
        lost.contains("attempt 0 #0) (aborted; its attempt ended before the restart at 173.014234ms from scratch)"),
        "{lost}"
    );
}

/// A timeout no checkpoint can meet is not a silent pass: the run warns
/// that nothing completed, and says when the timeout is not even one
/// storage write long.
#[test]
fn checkpoints_that_all_expire_are_a_warning_that_names_the_storage_latency() {
    let text = std::fs::read_to_string(scenario_path("wordcount"))
        .unwrap()
        .replace("timeout = \"2s\"", "timeout = \"50us\"")
        .replace("max_time = \"60s\"", "max_time = \"2s\"");
    let sc = parse_str(&text, "short-timeout.toml").unwrap();
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    let warning = e
        .output
        .warnings
        .iter()
        .find(|w| w.kind == "checkpoint")
        .unwrap_or_else(|| panic!("{:?}", e.output.warnings));
    let c = &e.output.counters;
    assert_eq!(c.checkpoints_completed, 0);
    assert_eq!(
        warning.message,
        format!(
            "no checkpoint completed: {n} of {n} checkpoints expired (timeout 50us); the timeout is not longer than one storage write (storage_latency 100us)",
            n = c.checkpoints_triggered
        )
    );
    // A timeout that some checkpoints meet warns of nothing.
    let e = check_alg(&load("wordcount"), 0, Algorithm::Aligned, &[]);
    assert!(e.output.warnings.iter().all(|w| w.kind != "checkpoint"));
}

/// The fault timeline says what fired when, which checkpoint each restart
/// restored, and what never fired.
#[test]
fn the_fault_timeline_names_each_fault_restart_and_what_never_fired() {
    let e = check_alg(&load("wordcount"), 3, Algorithm::Aligned, &[]);
    let lines: Vec<String> = e
        .output
        .fault_timeline
        .iter()
        .map(|f| format!("{} {}", ckptsim::engine::SimDuration(f.time_ns), f.what))
        .collect();
    assert_eq!(
        lines,
        [
            "282.074932ms crash of sink[1]",
            "332.074932ms failover (task sink[1] failed)",
            "432.074932ms restart from checkpoint 2",
            "916.293631ms not fired: crash of source->split[0] planned at 987.348825ms never happened: the run ended (finished) at 916.293631ms first",
        ]
    );
    // Times only go forward.
    let times: Vec<u64> = e.output.fault_timeline.iter().map(|f| f.time_ns).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    // Every fault kind of faults.toml reaches it, region failovers too.
    let e = check_alg(&load("faults"), 3, Algorithm::Aligned, &[]);
    let text: Vec<&str> = e
        .output
        .fault_timeline
        .iter()
        .map(|f| f.what.as_str())
        .collect();
    for needle in [
        "crash of worker 1",
        "coordinator crash",
        "coordinator failover: the new leader restarts the job from checkpoint 4",
        "latency spike 1 begins",
        "network partition 1 begins",
        "the state write of checkpoint 1 by source->split[1] failed",
        "notification of checkpoint 2 to source->split[1] lost",
    ] {
        assert!(text.contains(&needle), "no `{needle}` in {text:#?}");
    }
}

/// The completed-checkpoint store keeps what `retained` allows and no
/// more: at three, it holds three and subsumes the rest; a store that
/// never subsumes is what the resources check names, with its numbers.
#[test]
fn the_store_retains_what_the_policy_allows() {
    let mut s = ckptsim::scenario::ScenarioData::clone(&load("wordcount"));
    s.checkpoint.retained = 3;
    let sc = ckptsim::scenario::check(&s, "wordcount").unwrap();
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed, "{:?}", e.verdict.violations().next());
    assert_eq!(e.output.retained_peak, 3);
    assert_eq!(e.output.retained_over, None);
    assert!(e.output.subsumed > 0);
    let e = check_alg(
        &sc,
        1,
        Algorithm::Aligned,
        &[Mutant::SubsumedCheckpointsKept],
    );
    let v = e.verdict.violations().next().unwrap();
    assert_eq!(v.check.name(), "resources");
    assert!(
        v.message.starts_with("the completed-checkpoint store held more than 3 checkpoints (retained 3) once checkpoint 4 completed at "),
        "{}",
        v.message
    );
    assert!(e.output.retained_peak > 4);
    assert_eq!(e.output.subsumed, 0);
}

/// A paused source is released by its checkpoint's abort: a source that
/// stays paused past the timeout and the slowest RPC is named with when it
/// was paused and when it resumed. Back-to-back expiring checkpoints keep
/// a source paused for one after the other, each pause its own, and a
/// trigger that arrives after its checkpoint's abort (it waited for
/// operator events) pauses nothing.
#[test]
fn a_pause_lasts_no_longer_than_its_checkpoint() {
    let sc = load("timeouts");
    let e = check_alg(&sc, 0, Algorithm::StopTheWorld, &[Mutant::AbortedPauseKept]);
    let v = e.verdict.violations().next().unwrap();
    assert_eq!(v.check.name(), "progress");
    assert!(
        v.message.starts_with("the source source[0], paused since ")
            && v.message.contains("longer than a pause may last (the checkpoint timeout plus the slowest RPC: 150.2ms)"),
        "{}",
        v.message
    );
    let e = check_alg(&sc, 0, Algorithm::StopTheWorld, &[]);
    assert!(e.verdict.passed);
    assert!(e.output.holds.judged > 0 && e.output.holds.long.is_empty());
    // Triggers that reached a source after their checkpoint's abort.
    let sc = load("flip27-timing");
    let spec = ckptsim::swarm::default_ranges(&sc);
    for draw in [48, 96, 117] {
        let (drawn, _) = ckptsim::swarm::draw(&sc, &spec, draw).unwrap();
        let e = check_alg(&drawn, draw, Algorithm::StopTheWorld, &[]);
        assert!(
            e.verdict.passed,
            "draw {draw}: {:?}",
            e.verdict.violations().next()
        );
    }
}

/// Committed output keeps up with the checkpoints: a record is committed
/// within `output_latency` (after the slowest RPC) of the completion of
/// the first checkpoint triggered after its source emitted it; a
/// coordinator that skips notifications lets it lag, and the message names
/// the record, the covering checkpoint's completion and the commit.
#[test]
fn committed_output_lags_no_more_than_the_bound() {
    let sc = load("wordcount");
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[Mutant::NotificationsSkipped]);
    let v = e.verdict.violations().next().unwrap();
    assert_eq!(v.check.name(), "progress");
    assert!(
        v.message
            .starts_with("committed output lagged: the record ")
            && v.message
                .contains("after the checkpoint that covered it completed at ")
            && v.message
                .contains("(output_latency 20ms after the slowest RPC, 5ms)"),
        "{}",
        v.message
    );
    let e = check_alg(&sc, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    let judged = e
        .verdict
        .checks
        .iter()
        .flat_map(|f| f.reach.iter())
        .find(|(k, _)| *k == "committed records judged")
        .map(|(_, n)| *n);
    assert!(judged.is_some_and(|n| n > 0), "{judged:?}");
}

/// Under at-least-once, a replayed record read twice by a count window
/// shifts every later window onto other closing records, so the window's
/// results carry other lineages than the failure-free run's: neither a
/// loss nor a duplicate can be told by lineage. Such a sink is not judged
/// (the verdict is `incomplete`, with the reason), never called broken;
/// a run that replayed nothing is judged as before, and a sweep counts
/// the seeds that passed with a sink not judged.
#[test]
fn a_window_under_at_least_once_with_replays_is_incomplete_not_broken() {
    let windows = load("windows");
    let (mut unjudged, mut judged) = (0, 0);
    for seed in 0..40 {
        let cfg = RunConfig {
            seed,
            algorithm: Algorithm::AtLeastOnce,
            mutants: Mutants::NONE,
            record_trace: false,
        };
        let e = execute(&windows, &cfg);
        assert!(
            e.verdict.passed,
            "seed {seed}: {:?}",
            e.verdict.violations().next()
        );
        if e.output.counters.records_replayed > 0 {
            assert_eq!(e.verdict.unjudged, ["sink"], "seed {seed}");
            assert!(e.verdict.unjudged_reasons[0].contains("other lineages"));
            unjudged += 1;
        } else {
            assert!(e.verdict.unjudged.is_empty(), "seed {seed}");
            judged += 1;
        }
    }
    assert!(
        unjudged > 0 && judged > 0,
        "{unjudged} unjudged, {judged} judged"
    );
    let path = scenario_path("windows");
    let out = crate::common::ckptsim(&[
        "sweep",
        path.to_str().unwrap(),
        "--algorithm",
        "at-least-once",
        "--seeds",
        "0..40",
    ]);
    let text = crate::common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "incomplete   {unjudged} seeds passed with a sink not judged"
        )),
        "{text}"
    );
    assert!(text.contains("verdict      INCOMPLETE"), "{text}");
    // Exactly-once runs of the same job are judged in full.
    let cfg = RunConfig {
        seed: 3,
        algorithm: Algorithm::Aligned,
        mutants: Mutants::NONE,
        record_trace: false,
    };
    let e = execute(&windows, &cfg);
    assert!(e.verdict.passed && e.verdict.unjudged.is_empty());
}
