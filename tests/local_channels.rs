//! Local channels (`[cluster] local_channels`): a channel between two
//! subtasks of one worker has no receiver-side buffers, as Flink's
//! `LocalInputChannel`; so less is in flight and an aligned barrier waits
//! less; jobs with both kinds of channel keep exactly-once under every
//! exactly-once algorithm; the mutant that persists nothing of a local
//! channel is caught.

use crate::common::{assert_caught, exactly_once, load, seeds_or, sweep, valid};
use ckptsim::mutant::Mutant;

/// `checkpointing-time-flink` (one worker) with and without local
/// channels: in-flight bytes of unaligned checkpoints and the duration of
/// aligned ones both fall, to within 2× of Flink's local runs (1,265 KiB
/// and 644 ms, `reports/flink-real`), where remote ones are further off.
#[test]
fn local_channels_hold_less_in_flight_as_flink_s_do() {
    let remote = load("checkpointing-time-flink");
    let mut local = ckptsim::scenario::ScenarioData::clone(&remote);
    local.cluster.as_mut().unwrap().local_channels = true;
    let local = valid(&local);
    let metric =
        |s: &ckptsim::scenario::Scenario, alg: &str, m: fn(&ckptsim::report::Summary) -> u64| {
            let alg = ckptsim::scenario::Algorithm::from_name(alg).unwrap();
            let e = crate::common::check_alg(s, 0, alg, &[]);
            assert!(e.verdict.passed);
            m(&ckptsim::report::Summary::new(
                &s.name,
                0,
                alg.name(),
                &[],
                &e,
            ))
        };
    let in_flight = |s: &ckptsim::report::Summary| s.checkpoint_metrics.in_flight_bytes.p50;
    let duration = |s: &ckptsim::report::Summary| s.checkpoint_metrics.duration_ns.p50;
    let (r, l) = (
        metric(&remote, "unaligned", in_flight),
        metric(&local, "unaligned", in_flight),
    );
    assert!(l < r * 2 / 3, "in flight: local {l}, remote {r}");
    let flink_local = 1_265 * 1024;
    assert!(
        l < 2 * flink_local && 2 * l > flink_local,
        "in flight: local {l}"
    );
    let (r, l) = (
        metric(&remote, "aligned", duration),
        metric(&local, "aligned", duration),
    );
    assert!(l < r * 2 / 3, "aligned duration: local {l}, remote {r}");
    let flink_local = 644_000_000;
    assert!(
        l < 2 * flink_local && 2 * l > flink_local,
        "aligned duration: local {l}"
    );
}

#[test]
fn local_and_remote_channels_keep_exactly_once() {
    let s = load("local-channels");
    let seeds = seeds_or(30);
    for alg in exactly_once() {
        sweep(&s, "scenarios/local-channels.toml", alg, 0..seeds);
    }
}

#[test]
fn a_local_channel_whose_in_flight_data_is_not_persisted_is_caught() {
    let s = load("local-channels");
    assert_caught(&s, Mutant::LocalChannelStateLost, 50, "consistent-cut");
}
