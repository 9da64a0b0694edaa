//! The task thread's mailbox (`sim/runtime/mailbox.rs`, `world/mail.rs`):
//! the split loss found on Flink 2.1–2.3 reproduced in simulation
//! (`scenarios/flip27-split-loss.toml`) — it fails under unaligned
//! checkpoints on 2.1 and later and passes under aligned, aligned-timeout
//! and 2.0, and it fails less as the chained operator gets faster; mails
//! wait for a busy thread; the three mailbox mutants are caught.

use crate::common::{check, check_alg, failed_checks, load, seeds_or, valid};
use ckptsim::engine::SimDuration;
use ckptsim::mutant::Mutant;
use ckptsim::scenario::{Algorithm, FlinkVersion, Scenario, ScenarioData};

/// Seeds per configuration (more with `CKPTSIM_SEEDS`).
fn seeds() -> u64 {
    seeds_or(12)
}

fn with(version: FlinkVersion, slow: Option<SimDuration>) -> Scenario {
    let mut d = ScenarioData::clone(&load("flip27-split-loss"));
    d.checkpoint.flink_version = version;
    if let Some(cost) = slow {
        let i = d.operators.iter().position(|o| o.id == "slow").unwrap();
        d.operators[i].cost = cost;
    }
    valid(&d)
}

/// Seeds of `0..n` on which `sc` fails under `a`.
fn failing(sc: &Scenario, a: Algorithm, n: u64) -> Vec<u64> {
    (0..n)
        .filter(|&seed| !check_alg(sc, seed, a, &[]).verdict.passed)
        .collect()
}

#[test]
fn the_split_loss_needs_an_unaligned_trigger_that_jumps_the_mailbox() {
    let n = seeds();
    for v in [FlinkVersion::V2_1, FlinkVersion::V2_2, FlinkVersion::V2_3] {
        let sc = with(v, None);
        let lost = failing(&sc, Algorithm::Unaligned, n);
        assert!(lost.len() as u64 * 2 > n, "{}: {lost:?}", v.name());
        let e = check_alg(&sc, lost[0], Algorithm::Unaligned, &[]);
        let failed = failed_checks(&e);
        assert!(failed.contains(&"consistent-cut"), "{failed:?}");
        assert!(failed.contains(&"exactly-once-output"), "{failed:?}");
        let cut = e.verdict.violations().next().unwrap().message.clone();
        assert!(
            cut.contains(
                "is neither unassigned in the enumerator's checkpoint nor in any reader's snapshot"
            ),
            "{cut}"
        );
        assert!(e.output.counters.mails_overtaken > 0);
        for a in [Algorithm::Aligned, Algorithm::AlignedTimeout] {
            assert_eq!(failing(&sc, a, n), Vec::<u64>::new(), "{}", a.name());
        }
    }
    for v in [FlinkVersion::V1_20, FlinkVersion::V2_0] {
        let sc = with(v, None);
        assert_eq!(failing(&sc, Algorithm::Unaligned, n), Vec::<u64>::new());
        let e = check_alg(&sc, 0, Algorithm::Unaligned, &[]);
        assert!(e.output.counters.mails_waited > 0, "{}", v.name());
        assert_eq!(e.output.counters.mails_overtaken, 0);
    }
}

#[test]
fn the_loss_gets_rarer_as_the_chained_operator_gets_faster() {
    let n = seeds() * 2;
    let rate = |ms: u64| {
        let sc = with(FlinkVersion::V2_3, Some(SimDuration::from_millis(ms)));
        failing(&sc, Algorithm::Unaligned, n).len()
    };
    let (slow, mid, fast) = (rate(20), rate(5), rate(1));
    assert!(
        slow > mid && mid > 0 && mid > fast,
        "failing seeds of {n}: 20 ms {slow}, 5 ms {mid}, 1 ms {fast}"
    );
}

#[test]
fn the_mailbox_mutants_are_caught() {
    for (m, scenario, by) in [
        (
            Mutant::AlignedTriggerUrgent,
            "flip27-split-loss",
            "consistent-cut",
        ),
        (Mutant::IdleTaskIgnoresMail, "flip27", "progress"),
        (
            Mutant::MailsSurviveRestart,
            "flip27-split-loss",
            "consistent-cut",
        ),
    ] {
        let mut d = ScenarioData::clone(&load(scenario));
        d.checkpoint.algorithm = Algorithm::Aligned;
        crate::common::assert_caught(&valid(&d), m, 200, by);
    }
}

#[test]
fn an_idle_thread_runs_a_mail_at_once_and_a_busy_one_after_its_step() {
    // The 2.0 job passes and its mails waited for the busy chain; the same
    // job with a chain that costs nothing never makes a mail wait.
    let busy = check(&with(FlinkVersion::V2_0, None), 3, &[]);
    assert!(busy.verdict.passed);
    assert!(busy.output.counters.mails_waited > 0);
    let idle = with(FlinkVersion::V2_0, Some(SimDuration::ZERO));
    let mut d = ScenarioData::clone(&idle);
    for o in &mut d.operators {
        o.cost = SimDuration::ZERO;
    }
    let e = check(&valid(&d), 3, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    assert_eq!(e.output.counters.mails_waited, 0);
}
