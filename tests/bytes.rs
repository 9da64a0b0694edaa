//! Records and buffers in bytes, and what checkpoint writes cost: a
//! byte-sized buffer holds what fits, in-flight sizes are the records'
//! bytes, an unaligned checkpoint lasts as long as writing its channel state
//! at the storage's bandwidth, and memory storage refuses state above its
//! limit.

use crate::common::{self, check_alg, failed_checks};
use ckptsim::mutant::Mutant;
use ckptsim::protocol::Algorithm;
use ckptsim::runtime::coordinator::{CheckpointStats, Outcome};
use ckptsim::scenario::{self, OperatorKind, Scenario, StorageKind};

/// `record-bytes` without its crash, changed by `f` and validated again.
fn variant(f: impl FnOnce(&mut ckptsim::scenario::ScenarioData)) -> Scenario {
    let mut s = ckptsim::scenario::ScenarioData::clone(&common::load("record-bytes"));
    s.faults.crashes.clear();
    f(&mut s);
    scenario::check(&s, "record-bytes variant").unwrap_or_else(|e| panic!("{e}"))
}

fn set_record_size(s: &mut ckptsim::scenario::ScenarioData, lo: u64, hi: u64) {
    for op in &mut s.operators {
        if let OperatorKind::Source(src) = &mut op.kind {
            (src.record_size, src.record_size_max) = (lo, hi);
        }
    }
}

fn completed(stats: &[CheckpointStats]) -> Vec<&CheckpointStats> {
    stats
        .iter()
        .filter(|s| s.outcome == Outcome::Completed)
        .collect()
}

/// With records of one size, every persisted in-flight byte is a record of
/// that size, and bigger records fill the same 32 KiB buffers with fewer
/// records: fewer records in flight, about as many bytes.
#[test]
fn a_bigger_record_size_fills_buffers_with_fewer_records() {
    let mut persisted = Vec::new();
    for size in [1 << 10, 8 << 10] {
        let s = variant(|s| set_record_size(s, size, size));
        let e = check_alg(&s, 3, Algorithm::Unaligned, &[]);
        assert!(e.verdict.passed, "size {size}: {:?}", failed_checks(&e));
        let c = &e.output.counters;
        assert!(c.in_flight_records_persisted > 0, "size {size}");
        let bytes: u64 = e
            .output
            .checkpoint_stats
            .iter()
            .map(|s| s.in_flight_bytes)
            .sum();
        let records: u64 = completed(&e.output.checkpoint_stats)
            .iter()
            .map(|s| s.in_flight_bytes / size)
            .sum();
        for st in &e.output.checkpoint_stats {
            assert_eq!(st.in_flight_bytes % size, 0, "size {size}: {st:?}");
        }
        assert_eq!(records, c.in_flight_records_persisted, "size {size}");
        persisted.push((records, bytes));
    }
    let ((small_n, small_b), (big_n, big_b)) = (persisted[0], persisted[1]);
    assert!(
        big_n * 4 < small_n,
        "records in flight: {small_n} at 1 KiB, {big_n} at 8 KiB"
    );
    assert!(
        big_b * 2 > small_b,
        "bytes in flight: {small_b} at 1 KiB, {big_b} at 8 KiB"
    );
}

/// Without byte keys the in-flight bytes are the 32 bytes a simulator record
/// holds, as before sizes existed.
#[test]
fn without_byte_keys_a_record_counts_32_bytes() {
    let s = common::load("backpressure");
    let e = check_alg(&s, 1, Algorithm::Unaligned, &[]);
    let persisted = e.output.counters.in_flight_records_persisted;
    assert!(persisted > 0);
    let bytes: u64 = completed(&e.output.checkpoint_stats)
        .iter()
        .map(|s| s.in_flight_bytes)
        .sum();
    assert_eq!(bytes, persisted * 32);
}

/// A filesystem write starts at the snapshot and goes at the storage's
/// bandwidth, and the ack waits for it: every unaligned checkpoint lasts at
/// least the storage latency plus one task's share of its in-flight bytes
/// ÷ bandwidth, and a slower file system makes unaligned checkpoints longer.
#[test]
fn unaligned_checkpoint_duration_grows_with_in_flight_bytes_over_bandwidth() {
    let mean_duration = |bytes_per_sec: u64| {
        let s = variant(|s| s.checkpoint.storage_bytes_per_sec = bytes_per_sec);
        let tasks = s
            .operators
            .iter()
            .map(|o| u64::from(o.parallelism))
            .sum::<u64>();
        let e = check_alg(&s, 5, Algorithm::Unaligned, &[]);
        assert!(e.verdict.passed, "{:?}", failed_checks(&e));
        let done = completed(&e.output.checkpoint_stats);
        let unaligned: Vec<_> = done.iter().filter(|s| s.unaligned).collect();
        assert!(unaligned.len() >= 5, "{} unaligned", unaligned.len());
        for st in &unaligned {
            let share = st.in_flight_bytes / tasks * 1_000_000_000 / bytes_per_sec;
            let floor = s.checkpoint.storage_latency.0 + share;
            assert!(
                st.duration_ns >= floor,
                "checkpoint {} took {} ns, less than {floor} ns for {} bytes at {bytes_per_sec} B/s",
                st.id,
                st.duration_ns,
                st.in_flight_bytes
            );
        }
        unaligned.iter().map(|s| s.duration_ns).sum::<u64>() / unaligned.len() as u64
    };
    let (fast, slow) = (mean_duration(2_000_000_000), mean_duration(10_000_000));
    assert!(
        slow > 2 * fast,
        "mean duration {fast} ns at 2 GB/s, {slow} ns at 10 MB/s"
    );
}

/// Memory storage writes no file: the state travels with the ack once the
/// last barrier arrived. A file system as fast as the default memory
/// transfer writes while the barriers are still arriving, so its unaligned
/// checkpoints take no longer, although each file costs 5 ms to open.
#[test]
fn memory_storage_sends_state_with_the_ack() {
    let durations = |storage: StorageKind, latency_us: u64| {
        let s = variant(|s| {
            s.checkpoint.storage = storage;
            s.checkpoint.storage_latency = ckptsim::engine::SimDuration::from_micros(latency_us);
            s.checkpoint.storage_bytes_per_sec = 1_000_000_000;
        });
        let e = check_alg(&s, 2, Algorithm::Unaligned, &[]);
        assert!(e.verdict.passed, "{:?}", failed_checks(&e));
        completed(&e.output.checkpoint_stats)
            .iter()
            .filter(|s| s.unaligned)
            .map(|s| s.duration_ns)
            .collect::<Vec<_>>()
    };
    let memory = durations(StorageKind::Memory, 100);
    let files = durations(StorageKind::Filesystem, 100);
    assert!(!memory.is_empty() && !files.is_empty());
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len() as u64;
    assert!(
        mean(&files) <= mean(&memory),
        "filesystem {} ns, memory {} ns",
        mean(&files),
        mean(&memory)
    );
}

/// Memory storage's max state size: a task whose channel state is larger
/// fails the checkpoint with outcome `state-too-large`, counted like a
/// storage failure (the failure-accounting check holds), and the job still
/// ends exactly-once with aligned checkpoints, whose channel state is empty.
#[test]
fn memory_storage_size_limit_fails_checkpoints_with_a_clear_reason() {
    let s = variant(|s| {
        s.checkpoint.storage = StorageKind::Memory;
        s.checkpoint.max_state_size = 64 << 10;
        s.checkpoint.tolerable_failures = 1_000;
    });
    let e = check_alg(&s, 4, Algorithm::Unaligned, &[]);
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    let too_large: Vec<_> = e
        .output
        .checkpoint_stats
        .iter()
        .filter(|s| s.outcome == Outcome::StateTooLarge)
        .collect();
    assert!(!too_large.is_empty(), "no checkpoint hit the limit");
    assert_eq!(
        e.output.counters.checkpoints_state_too_large,
        too_large.len() as u64
    );
    assert_eq!(
        Outcome::StateTooLarge.describe(),
        "failed: a task's state is larger than memory storage's max_state_size"
    );
    let aligned = check_alg(&s, 4, Algorithm::Aligned, &[]);
    assert!(aligned.verdict.passed, "{:?}", failed_checks(&aligned));
    assert_eq!(aligned.output.counters.checkpoints_state_too_large, 0);
    assert!(aligned.output.counters.checkpoints_completed > 0);
    // With the default 5 MiB the same job's unaligned checkpoints complete.
    let roomy = variant(|s| s.checkpoint.storage = StorageKind::Memory);
    let e = check_alg(&roomy, 4, Algorithm::Unaligned, &[]);
    assert_eq!(e.output.counters.checkpoints_state_too_large, 0);
    assert!(e.output.counters.unaligned_checkpoints > 0);
}

/// Sizes drawn from a range keep a run deterministic and leave every other
/// draw alone: the same input records, the same size for the same record.
#[test]
fn size_ranges_are_deterministic_per_seed() {
    let s = common::load("record-bytes");
    let a = check_alg(&s, 9, Algorithm::Unaligned, &[]);
    let b = check_alg(&s, 9, Algorithm::Unaligned, &[]);
    assert_eq!(a.output.fingerprint, b.output.fingerprint);
    assert!(a.verdict.passed, "{:?}", failed_checks(&a));
    let c = check_alg(&s, 10, Algorithm::Unaligned, &[]);
    assert_ne!(a.output.fingerprint, c.output.fingerprint);
}

/// The two mutants of this chapter are caught where they apply.
#[test]
fn byte_mutants_are_killed() {
    let s = common::load("record-bytes");
    let e = check_alg(
        &s,
        0,
        Algorithm::Unaligned,
        &[Mutant::AckBeforeChannelStateWritten],
    );
    assert!(
        failed_checks(&e).contains(&"protocol"),
        "{:?}",
        failed_checks(&e)
    );
    let e = check_alg(
        &s,
        0,
        Algorithm::Unaligned,
        &[Mutant::BufferBoundaryDropsRecord],
    );
    assert!(
        failed_checks(&e).contains(&"exactly-once-output"),
        "{:?}",
        failed_checks(&e)
    );
    // Memory storage sends channel state with the ack: nothing to ack early.
    let memory = variant(|s| s.checkpoint.storage = StorageKind::Memory);
    let e = check_alg(
        &memory,
        0,
        Algorithm::Unaligned,
        &[Mutant::AckBeforeChannelStateWritten],
    );
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
}

fn median_duration_ms(stats: &[CheckpointStats]) -> f64 {
    let mut d: Vec<u64> = completed(stats).iter().map(|s| s.duration_ns).collect();
    d.sort_unstable();
    assert!(!d.is_empty(), "no completed checkpoint");
    d[d.len() / 2] as f64 / 1e6
}

/// Four maps on one worker write their channel state into one file: an
/// unaligned checkpoint lasts as long as writing all four, about three
/// times as long as with a file per subtask; the checks pass either way,
/// and a subtask that acknowledges before its shared file is closed is
/// caught.
#[test]
fn subtasks_sharing_a_channel_state_file_wait_for_each_other() {
    let shared = common::load("channel-state-files");
    assert_eq!(shared.checkpoint.max_subtasks_per_channel_state_file, 5);
    let mut own = ckptsim::scenario::ScenarioData::clone(&shared);
    own.checkpoint.max_subtasks_per_channel_state_file = 1;
    let own = scenario::check(&own, "one file per subtask").unwrap_or_else(|e| panic!("{e}"));
    let a = check_alg(&shared, 0, Algorithm::Unaligned, &[]);
    let b = check_alg(&own, 0, Algorithm::Unaligned, &[]);
    assert!(a.verdict.passed, "{:?}", failed_checks(&a));
    assert!(b.verdict.passed, "{:?}", failed_checks(&b));
    let (a_ms, b_ms) = (
        median_duration_ms(&a.output.checkpoint_stats),
        median_duration_ms(&b.output.checkpoint_stats),
    );
    assert!(
        a_ms > 2.0 * b_ms,
        "shared files {a_ms:.1} ms, a file per subtask {b_ms:.1} ms"
    );
    let e = check_alg(
        &shared,
        0,
        Algorithm::Unaligned,
        &[Mutant::ChannelFileResultEarly],
    );
    assert!(
        failed_checks(&e).contains(&"protocol"),
        "{:?}",
        failed_checks(&e)
    );
    // With a file per subtask there is nobody to wait for.
    let e = check_alg(
        &own,
        0,
        Algorithm::Unaligned,
        &[Mutant::ChannelFileResultEarly],
    );
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
    // Aligned checkpoints start no channel-state writer.
    let e = check_alg(
        &shared,
        0,
        Algorithm::Aligned,
        &[Mutant::ChannelFileResultEarly],
    );
    assert!(e.verdict.passed, "{:?}", failed_checks(&e));
}
