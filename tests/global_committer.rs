//! Sink V2's global committer (`scenarios/sink-v2-global.toml`, the
//! post-commit topology): committers forward what they commit, the global
//! committer publishes a checkpoint once every committer's committables of
//! it arrived. On Flink 2.3 the committer's task sends `EndOfData` before
//! its final checkpoint's committables, and the global committer drops
//! them (FLINK-38614); on the development line it does not. Writers that
//! end at different checkpoints stall the global committer on both. The
//! topology's rules are refused when broken, and the export gives the
//! Flink job the same topology.

use crate::common::{check_alg, ckptsim, failed_checks, scenario_path, stdout};
use ckptsim::check::CheckId;
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{self, Algorithm, FlinkVersion, Scenario};

/// Seeds per algorithm (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    crate::common::seeds_or(60)
}

fn variant(edit: impl Fn(String) -> String) -> Scenario {
    let text = std::fs::read_to_string(scenario_path("sink-v2-global")).unwrap();
    scenario::parse_str(&edit(text), "sink-v2-global.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn on(version: &str) -> Scenario {
    variant(|t| {
        t.replace(
            "flink_version = \"next\"",
            &format!("flink_version = \"{version}\""),
        )
    })
}

/// Without faults: the writers end together, and only the end of data
/// decides.
fn fault_free(version: &str) -> Scenario {
    let mut data = scenario::ScenarioData::clone(&on(version));
    data.faults.random = None;
    scenario::check(&data, "sink-v2-global variant").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn on_flink_2_3_the_global_committer_exits_without_the_final_committables() {
    let sc = fault_free("2.3");
    assert_eq!(sc.checkpoint.flink_version, FlinkVersion::V2_3);
    for a in [Algorithm::Aligned, Algorithm::Unaligned] {
        let e = check_alg(&sc, 1, a, &[]);
        let failed = failed_checks(&e);
        assert!(
            failed.contains(&"exactly-once-output")
                && failed.contains(&"progress")
                && failed.contains(&"finishing"),
            "{}: {failed:?}",
            a.name()
        );
        let v = e
            .verdict
            .violations()
            .find(|v| v.check == CheckId::Progress)
            .unwrap();
        assert!(
            v.message
                .contains("was left pre-committed when the job finished"),
            "{}",
            v.message
        );
        // The committer forwarded them after its EndOfData: the global
        // committer's input had ended, and it dropped them.
        let v = e
            .verdict
            .violations()
            .find(|v| v.check == CheckId::Finishing)
            .expect("the drop is named");
        assert!(
            v.message.contains("publish[0] dropped")
                && v.message.contains("after its own EndOfData"),
            "{}",
            v.message
        );
        assert!(e.output.counters.records_dropped_after_end_of_data > 0);
    }
}

#[test]
fn on_the_development_line_the_final_committables_are_published() {
    let sc = fault_free("next");
    for a in [Algorithm::Aligned, Algorithm::Unaligned] {
        for seed in 0..seeds() {
            let e = check_alg(&sc, seed, a, &[]);
            assert!(
                e.verdict.passed,
                "{} seed {seed}: {:?}",
                a.name(),
                failed_checks(&e)
            );
            assert!(e.output.counters.tasks_finished_while_others_ran > 0);
        }
    }
}

/// With crashes, on the development line: exactly once, except where a
/// crash shifted one writer's end of input to another checkpoint (the
/// stall; seeds 103 and 289 of the first 300): those lose output, the
/// finishing check names the global committer that exited holding it, and
/// nothing is dropped after an end of data.
#[test]
fn the_global_committer_is_exactly_once_with_crashes_on_the_development_line() {
    let sc = on("next");
    let (mut restarts, mut failed) = (0, 0);
    for seed in 0..seeds() {
        let e = check_alg(&sc, seed, Algorithm::Aligned, &[]);
        restarts += e.output.counters.tasks_restarted;
        if !e.verdict.passed {
            failed += 1;
            let checks = failed_checks(&e);
            assert!(
                checks
                    .iter()
                    .all(|c| ["exactly-once-output", "progress", "finishing"].contains(c)),
                "seed {seed}: {checks:?}"
            );
            assert_eq!(e.output.counters.records_dropped_after_end_of_data, 0);
        }
    }
    assert!(restarts > 0);
    assert!(
        failed * 50 <= seeds(),
        "{failed} of {} seeds failed",
        seeds()
    );
}

#[test]
fn a_global_committer_that_publishes_what_it_has_at_a_notification_loses_committables() {
    let sc = fault_free("next");
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[Mutant::GlobalCommitOnNotify]);
    assert!(failed_checks(&e).contains(&"exactly-once-output"));
}

#[test]
fn the_post_commit_topology_is_refused_when_broken() {
    let cases = [
        (
            "[[operators]]\nid = \"publish\"\nkind = \"sink-global-committer\"\nparallelism = 1",
            "[[operators]]\nid = \"publish\"\nkind = \"sink-global-committer\"\nparallelism = 2",
            "global committer `publish` has a parallelism above 1",
        ),
        (
            "from = \"committer\"\nto = \"publish\"",
            "from = \"map\"\nto = \"publish\"",
            "global committer `publish` reads from `map`, which is not a sink-committer",
        ),
    ];
    for (from, to, message) in cases {
        let text = std::fs::read_to_string(scenario_path("sink-v2-global")).unwrap();
        assert!(text.contains(from), "{from}");
        let broken = text.replace(from, to);
        let err = scenario::parse_str(&broken, "broken.toml").unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
}

/// The scenario asks for the development line, which no release runs: the
/// export names the difference, and runs on 2.3 only when told to.
#[test]
fn the_export_gives_the_flink_job_a_global_committer() {
    let o = ckptsim(&[
        "flink-export",
        "scenarios/sink-v2-global.toml",
        "--seed",
        "1",
        "--out",
        "/nonexistent/x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("FLINK-38614") && err.contains("--any-flink-version"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("ckptsim-global-{}", std::process::id()));
    let out = dir.join("export");
    let o = ckptsim(&[
        "flink-export",
        "scenarios/sink-v2-global.toml",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--any-flink-version",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = stdout(&o);
    let job = std::fs::read_to_string(out.join("java/CkptsimJob.java")).unwrap();
    assert!(job.contains(".postCommit()"), "{job}");
    let sink = std::fs::read_to_string(out.join("java/StoreSink.java")).unwrap();
    assert!(sink.contains("StandardSinkTopologies.addGlobalCommitter"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ckptsim flink-export tests/regressions/flink-global-committer-final-loss.toml
/// --seed 1`, run on Flink 2.3.0: no crash, the job finished, and the
/// global committer published nothing (the committer had moved the file
/// to `staged/`). The simulation of the same job fails the same check.
#[test]
fn the_recorded_run_on_flink_2_3_loses_what_the_global_committer_never_published() {
    let dir = "tests/flink/global-committer-1";
    let o = ckptsim(&["flink-check", dir]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL exactly-once-output")
            && text.contains("ok   liveness: the job finished"),
        "{text}"
    );
    // (Git keeps no empty directory: `committed/` is absent.)
    let files =
        |sub: &str| std::fs::read_dir(format!("{dir}/real/store/{sub}")).map_or(0, |d| d.count());
    assert_eq!((files("staged"), files("committed")), (1, 0));
    let sim: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/simulated.json")).unwrap())
            .unwrap();
    // (Both records, in the simulation as on Flink.)
    assert_eq!(sim["records_emitted"], 2);
    assert_eq!(sim["records_committed"], 0);
}

/// One writer ends its input checkpoints before the other: from the next
/// checkpoint on, the global committer never has a summary from every
/// committer, and publishes nothing more (Flink 2.0–2.3, and the
/// development line).
#[test]
fn writers_that_end_at_different_checkpoints_stall_the_global_committer() {
    let sc = variant(|t| {
        t.replace(
            "records_per_partition = 4000",
            "partition_records = [1000, 4000]",
        )
    });
    let e = check_alg(&sc, 1, Algorithm::Aligned, &[]);
    assert!(failed_checks(&e).contains(&"exactly-once-output"));
    let lost = e
        .verdict
        .violations()
        .filter(|v| v.check == CheckId::Progress)
        .count();
    assert!(
        lost >= 2,
        "several transactions of writer 1 left unpublished"
    );
    assert_eq!(e.output.counters.records_dropped_after_end_of_data, 0);
    // The finishing check names the cause: the committer subtask whose
    // summary never came.
    let why: Vec<&str> = (e.verdict.violations())
        .filter(|v| v.check == CheckId::Finishing)
        .map(|v| v.message.as_str())
        .collect();
    assert!(
        why.iter().any(|m| m.contains("publish[0] exited holding")
            && m.contains("never fully received")
            && m.contains("no summary came from committer subtask")),
        "{why:?}"
    );
}

/// A stop-with-savepoint, as Flink 2.3 and 2.0 do it (confirmed on both,
/// `reports/findings/flink-global-committer-stop-drain`): with drain the
/// committers forward the savepoint's committables after their end of
/// data, and the global committer, whose input has ended, drops them;
/// without drain it still reads them and publishes them (it commits on
/// input). On the development line, whose committers hold their end of
/// data back, the drained stop publishes everything.
#[test]
fn a_drained_stop_loses_the_savepoints_committables_on_flink_2_3_only() {
    use ckptsim::engine::SimTime;
    use ckptsim::runtime::RunOutcome;
    let stop = |version: &str, drain: bool| {
        let mut data = scenario::ScenarioData::clone(&fault_free(version));
        data.savepoints = vec![scenario::SavepointSpec {
            at: SimTime(200_000_000),
            stop: true,
            drain,
            format: ckptsim::scenario::SavepointFormat::Canonical,
        }];
        scenario::check(&data, "sink-v2-global stopped").unwrap_or_else(|e| panic!("{e}"))
    };
    for seed in 0..6 {
        let e = check_alg(&stop("2.3", true), seed, Algorithm::Aligned, &[]);
        assert!(
            matches!(e.output.outcome, RunOutcome::Stopped(_)),
            "seed {seed}"
        );
        assert!(
            failed_checks(&e).contains(&"exactly-once-output"),
            "seed {seed}"
        );
        assert!(
            e.output.counters.records_dropped_after_end_of_data >= 2,
            "seed {seed}: one committable (and its summary) per committer at least"
        );
        for (version, drain) in [("2.3", false), ("next", true), ("next", false)] {
            let e = check_alg(&stop(version, drain), seed, Algorithm::Aligned, &[]);
            assert!(
                matches!(e.output.outcome, RunOutcome::Stopped(_)),
                "seed {seed}"
            );
            assert!(
                e.verdict.passed,
                "seed {seed} {version} drain {drain}: {:?}",
                failed_checks(&e)
            );
            assert_eq!(e.output.counters.records_dropped_after_end_of_data, 0);
        }
    }
}
