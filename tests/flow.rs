//! Flink's flow control around barriers: an aligned barrier blocks its
//! channel at the sender until the receiver's resume travels back
//! (producer-side blocking), and periodic triggers that find a checkpoint
//! pending wait in the coordinator's queue; an abort notification stops
//! its own checkpoint's channel state, not a newer one's.

use crate::common::{self, check_alg, failed_checks};
use ckptsim::mutant::Mutant;
use ckptsim::protocol::Algorithm;

/// Every blocking barrier is resumed exactly once in runs without a
/// failover (a failover resets the channels instead).
#[test]
fn every_blocked_channel_is_resumed_once() {
    for name in ["wordcount", "timeouts", "backpressure"] {
        let scenario = common::load(name);
        let (mut blocks, mut clean) = (0, 0);
        for seed in 0..10 {
            let e = check_alg(&scenario, seed, Algorithm::Aligned, &[]);
            assert!(e.verdict.passed, "{name} seed {seed}");
            let c = &e.output.counters;
            blocks += c.upstream_blocks;
            assert!(c.resumes <= c.upstream_blocks, "{name} seed {seed}");
            if c.failovers == 0 {
                clean += 1;
                assert_eq!(c.resumes, c.upstream_blocks, "{name} seed {seed}");
            }
        }
        assert!(blocks > 0, "{name}: no barrier blocked a channel");
        assert!(clean > 0, "{name}: every run failed over");
    }
}

/// Only the algorithms whose barriers Flink sends as blocking events block:
/// the at-least-once tracker, Chandy–Lamport markers and stop-the-world
/// drain markers never do; unaligned barriers block only where alignment is
/// forced.
#[test]
fn only_blocking_barrier_kinds_block() {
    let scenario = common::load("wordcount");
    for a in Algorithm::all() {
        let e = check_alg(&scenario, 0, a, &[]);
        let blocks = e.output.counters.upstream_blocks;
        if !a.info().blocks_upstream {
            assert_eq!(blocks, 0, "{}", a.name());
        }
    }
    let bp = common::load("backpressure");
    let aligned = check_alg(&bp, 0, Algorithm::Aligned, &[]);
    let unaligned = check_alg(&bp, 0, Algorithm::Unaligned, &[]);
    assert!(
        unaligned.output.counters.upstream_blocks < aligned.output.counters.upstream_blocks,
        "unaligned {} vs aligned {}",
        unaligned.output.counters.upstream_blocks,
        aligned.output.counters.upstream_blocks
    );
}

/// The forced-alignment deadlock freezes the data flow, as on real Flink:
/// once the first checkpoint stalls, the sink takes in nothing more, and
/// the expiry of the checkpoint does not release it.
#[test]
fn a_stalled_forced_alignment_freezes_the_flow_past_the_expiry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/regressions/unaligned-forced-alignment-deadlock.toml");
    let scenario = ckptsim::scenario::load(&path).unwrap();
    let e = check_alg(&scenario, 14989174860723994225, Algorithm::Unaligned, &[]);
    let c = &e.output.counters;
    assert!(c.checkpoints_expired > 0, "no checkpoint expired");
    assert_eq!(c.checkpoints_completed, 0);
    let first_trigger = scenario.checkpoint.first_delay.0;
    assert!(
        e.output.sink_end.0 < first_trigger + scenario.checkpoint.timeout.0,
        "the sink took in records at {} ns, after the first checkpoint expired",
        e.output.sink_end.0
    );
    assert!(!e.verdict.passed);
}

/// A checkpoint that outlasts the interval leaves the triggers that came
/// due meanwhile queued; they run when it ends.
#[test]
fn triggers_due_while_a_checkpoint_is_pending_are_queued() {
    let scenario = common::load("backpressure");
    let e = check_alg(&scenario, 0, Algorithm::Aligned, &[]);
    assert!(e.verdict.passed);
    assert!(e.output.counters.triggers_queued > 0);
}

/// Flink's input order: under even backpressure the barriers reach a task
/// in about the order its inputs' data does, so alignment is near zero,
/// while the random order keeps the first barrier waiting for the others.
#[test]
fn fifo_input_order_makes_alignment_near_zero_under_backpressure() {
    let fifo = common::load("checkpointing-time");
    assert_eq!(
        fifo.network.input_order,
        ckptsim::scenario::InputOrder::Fifo
    );
    let mut random = ckptsim::scenario::ScenarioData::clone(&fifo);
    random.network.input_order = ckptsim::scenario::InputOrder::Random;
    let alignment = |s: &ckptsim::scenario::Scenario| {
        let e = check_alg(s, 0, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed);
        let stats = &e.output.checkpoint_stats;
        let done: Vec<u64> = stats
            .iter()
            .filter(|s| s.duration_ns > 0)
            .map(|s| s.alignment_max_ns)
            .collect();
        assert!(!done.is_empty());
        done.iter().sum::<u64>() / done.len() as u64
    };
    let (r, f) = (alignment(&crate::common::valid(&random)), alignment(&fifo));
    assert!(f * 10 < r, "fifo {f} ns vs random {r} ns");
    assert!(f < 10_000_000, "fifo alignment {f} ns");
}

/// Credits travel as messages: every recycled buffer is announced
/// upstream, and a credit balance that held after every change is part of
/// every passing verdict.
#[test]
fn credits_are_announced_in_messages() {
    for name in ["backpressure", "wordcount"] {
        let scenario = common::load(name);
        let e = check_alg(&scenario, 0, Algorithm::Aligned, &[]);
        assert!(e.verdict.passed, "{name}");
        let c = &e.output.counters;
        assert!(c.credit_messages > 0, "{name}: no credit message");
    }
}

/// Floating buffers are lent to channels with a backlog: under
/// backpressure more data is in flight, so unaligned checkpoints persist
/// more of it and aligned barriers queue behind more of it.
#[test]
fn floating_buffers_add_in_flight_data() {
    let base = common::load("checkpointing-time");
    let with = |floating: u32, a: Algorithm| {
        let mut s = ckptsim::scenario::ScenarioData::clone(&base);
        s.network.floating_buffers = floating;
        let mut persisted = 0;
        let mut duration = Vec::new();
        for seed in 0..3 {
            let e = check_alg(&crate::common::valid(&s), seed, a, &[]);
            assert!(e.verdict.passed, "{floating} floating, {}", a.name());
            persisted += e.output.counters.in_flight_records_persisted;
            duration.extend(
                e.output
                    .checkpoint_stats
                    .iter()
                    .filter(|s| s.duration_ns > 0)
                    .map(|s| s.duration_ns),
            );
        }
        duration.sort_unstable();
        (persisted, duration[duration.len() / 2])
    };
    let (p0, _) = with(0, Algorithm::Unaligned);
    let (p8, _) = with(8, Algorithm::Unaligned);
    assert!(
        p8 > p0,
        "unaligned persisted {p0} records with 0 floating, {p8} with 8"
    );
    let (_, d0) = with(0, Algorithm::Aligned);
    let (_, d8) = with(8, Algorithm::Aligned);
    assert!(
        d8 > d0,
        "aligned median duration {d0} ns with 0 floating, {d8} ns with 8"
    );
}

/// An abort notification cancels its checkpoint's pending acknowledgement
/// and channel-state capture at the task, and only those: when it arrives
/// after the next checkpoint's barrier (RPCs overtaking each other), the
/// newer capture goes on and that checkpoint completes consistent. Taking
/// the abort for a threshold breaks the newer checkpoint's cut.
#[test]
fn an_abort_notification_stops_only_its_own_checkpoint() {
    let scenario = common::load("abort-notifications");
    let name = "scenarios/abort-notifications.toml";
    let c = common::sweep(&scenario, name, Algorithm::Unaligned, 0..4);
    assert!(c.checkpoints_expired > 0, "no checkpoint expired");
    assert!(
        c.acks_cancelled_by_abort > 0,
        "no pending ack was cancelled"
    );
    assert!(
        c.aborts_during_newer_capture > 0,
        "no abort arrived during a newer capture"
    );
    assert!(c.checkpoints_completed > c.checkpoints_expired);
    let e = check_alg(
        &scenario,
        0,
        Algorithm::Unaligned,
        &[Mutant::AbortStopsNewerCapture],
    );
    assert!(
        failed_checks(&e).contains(&"consistent-cut"),
        "{:?}",
        failed_checks(&e)
    );
}

/// Without RPC jitter no draw is made: the same scenario with
/// `rpc_latency_max = rpc_latency` replays like one that never set it.
#[test]
fn rpc_jitter_draws_nothing_when_off() {
    let mut scenario = ckptsim::scenario::ScenarioData::clone(&common::load("backpressure"));
    let a = check_alg(
        &crate::common::valid(&scenario),
        2,
        Algorithm::Unaligned,
        &[],
    );
    scenario.checkpoint.rpc_latency_max = scenario.checkpoint.rpc_latency;
    let b = check_alg(
        &crate::common::valid(&scenario),
        2,
        Algorithm::Unaligned,
        &[],
    );
    assert_eq!(a.output.fingerprint, b.output.fingerprint);
    scenario.checkpoint.rpc_latency_max =
        ckptsim::engine::SimDuration(scenario.checkpoint.rpc_latency.0 + 2_000_000);
    let c = check_alg(
        &crate::common::valid(&scenario),
        2,
        Algorithm::Unaligned,
        &[],
    );
    assert!(c.verdict.passed);
    assert_ne!(a.output.fingerprint, c.output.fingerprint);
}

/// A barrier that subsumes the pending checkpoint keeps its own channel
/// blocked: the older checkpoint's abort resumes only the channels of its
/// own barriers (Flink's `checkNewCheckpoint` before `barrierReceived`).
/// With coordinator RPC jitter a source can get checkpoint N+1's trigger
/// before N's and skip N, so a task aligning N reads N+1's barrier on
/// another input; resuming that channel let post-barrier records into
/// N+1's snapshot. These swarm draws of `faults.toml` broke the cut (7) and
/// left an older checkpoint closed only by a newer cancellation marker
/// (449).
#[test]
fn a_subsuming_barrier_keeps_its_channel_blocked() {
    let scenario = common::load("faults");
    let spec = ckptsim::swarm::default_ranges(&scenario);
    for seed in [7, 449, 2916] {
        let (drawn, draw) =
            ckptsim::swarm::draw(&scenario, &spec, seed).unwrap_or_else(|e| panic!("{e}"));
        let e = check_alg(&drawn, seed, Algorithm::Aligned, &[]);
        assert!(
            e.verdict.passed,
            "seed {seed} ({draw}): {:?} {:?}",
            failed_checks(&e),
            e.verdict.violations().next()
        );
        let c = &e.output.counters;
        assert!(c.resumes <= c.upstream_blocks, "seed {seed}");
    }
}

/// An edge's own `buffer_size` sizes the buffers of its channels only:
/// one 32-byte record per buffer on `split -> count` holds less data in
/// flight than the network's 16-record buffers, so unaligned checkpoints
/// persist at least a third fewer records, every seed stays exactly-once, and the writer
/// keeps the key; on a chained edge it is refused.
#[test]
fn an_edge_has_its_own_buffer_size() {
    let base = common::load("wordcount");
    let small = wordcount_edge("buffer_size = \"32B\"").unwrap();
    let (mut before, mut after) = (0, 0);
    for seed in 0..10 {
        for (sc, persisted) in [(&base, &mut before), (&small, &mut after)] {
            let e = check_alg(sc, seed, Algorithm::Unaligned, &[]);
            assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
            *persisted += e.output.counters.in_flight_records_persisted;
        }
    }
    assert!(after * 3 < before * 2, "{before} -> {after}");
    let text = ckptsim::scenario::write::to_toml(&small);
    assert!(text.contains("buffer_size = \"32B\""), "{text}");
    let again = ckptsim::scenario::parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.edges, small.edges);
    let chained = std::fs::read_to_string(common::scenario_path("wordcount"))
        .unwrap()
        .replace(
            "to = \"split\"\npartitioning = \"forward\"",
            "to = \"split\"\npartitioning = \"forward\"\nbuffer_size = \"1KiB\"",
        );
    let e = ckptsim::scenario::parse_str(&chained, "c.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("edge source -> split is chained: source and split run in one task, with no channel for `buffer_size`"),
        "{e}"
    );
    let e = wordcount_edge("buffer_size = \"0B\"").unwrap_err();
    assert!(e.contains("buffer_size must be at least 1 byte"), "{e}");
}

/// wordcount with `extra` added to its `split -> count` edge.
fn wordcount_edge(extra: &str) -> Result<ckptsim::scenario::Scenario, String> {
    let text = std::fs::read_to_string(common::scenario_path("wordcount"))
        .unwrap()
        .replace(
            "to = \"count\"\npartitioning = \"hash\"",
            &format!("to = \"count\"\npartitioning = \"hash\"\n{extra}"),
        );
    ckptsim::scenario::parse_str(&text, "edge.toml").map_err(|e| e.to_string())
}

/// An edge's own latency and credits replace the network's on its
/// channels only: barriers on a slow edge take its latency, a channel with
/// one exclusive buffer stays balanced and exactly-once, and the writer
/// keeps the keys.
#[test]
fn an_edge_has_its_own_latency_and_credits() {
    let base = common::load("wordcount");
    let slow = wordcount_edge("latency_min = \"20ms\"\nlatency_max = \"21ms\"").unwrap();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for seed in 0..10 {
        for (sc, out) in [(&base, &mut before), (&slow, &mut after)] {
            let e = check_alg(sc, seed, Algorithm::Aligned, &[]);
            assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
            let m = ckptsim::report::CheckpointMetrics::of(&e.output.checkpoint_stats);
            out.push(m.duration_ns.p50);
        }
    }
    // A barrier crosses the edge once per checkpoint: at least 20 ms more.
    for (b, a) in before.iter().zip(&after) {
        assert!(*a >= b + 20_000_000 - 1_000_000, "{b} -> {a}");
        assert!(*b < 20_000_000, "{b}");
    }
    let tight = wordcount_edge("buffer_credits = 1").unwrap();
    for seed in 0..20 {
        let e = check_alg(&tight, seed, Algorithm::Unaligned, &[]);
        assert!(e.verdict.passed, "seed {seed}: {:?}", failed_checks(&e));
    }
    let text = ckptsim::scenario::write::to_toml(&slow);
    assert!(text.contains("latency_min = \"20ms\""), "{text}");
    let again = ckptsim::scenario::parse_str(&text, "again.toml").unwrap();
    assert_eq!(again.edges, slow.edges);

    // Refused: a chained edge (no channel), a maximum below the minimum.
    let chained = std::fs::read_to_string(common::scenario_path("wordcount"))
        .unwrap()
        .replace(
            "to = \"split\"\npartitioning = \"forward\"",
            "to = \"split\"\npartitioning = \"forward\"\nbuffer_credits = 4",
        );
    let e = ckptsim::scenario::parse_str(&chained, "c.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("edge source -> split is chained: source and split run in one task, with no channel for `buffer_credits`"),
        "{e}"
    );
    let e = wordcount_edge("latency_min = \"2ms\"\nlatency_max = \"1ms\"").unwrap_err();
    assert!(
        e.contains("latency_max 1ms is below latency_min 2ms"),
        "{e}"
    );
}
