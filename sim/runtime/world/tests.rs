//! The storage write timing of a task's checkpoint.

use super::*;

fn job(storage: &str) -> Scenario {
    let text = format!(
        "version = 1\nname = \"w\"\n[[operators]]\nid = \"a\"\nkind = \"source\"\nparallelism = 1\n\
         [[operators]]\nid = \"k\"\nkind = \"sink-2pc\"\nparallelism = 1\n\
         [[edges]]\nfrom = \"a\"\nto = \"k\"\npartitioning = \"forward\"\n\
         [checkpoint]\nstorage = \"{storage}\"\nstorage_latency = \"1ms\"\nstorage_bytes_per_sec = 1_000_000\n"
    );
    crate::scenario::parse_str(&text, "w.toml").unwrap_or_else(|e| panic!("{e}"))
}

const MS: u64 = 1_000_000;

#[test]
fn filesystem_writes_start_at_the_snapshot_and_follow_the_captures() {
    let s = job("filesystem");
    let t = |ms: u64| SimTime(ms * MS);
    // 1000 bytes at 1 MB/s take 1 ms.
    // Aligned: no channel state, snapshot at the last barrier.
    assert_eq!(writes_done(&s, t(10), t(10), 2000, &[], true), t(13));
    // Unaligned: output state at the barrier (t 10), input state
    // captured at 10 and 20; the stream keeps up, so the last part ends
    // the write 1 ms after it is captured.
    let parts = [(t(10), 3000), (t(20), 1000), (t(10), 1000)];
    assert_eq!(writes_done(&s, t(20), t(10), 1000, &parts, true), t(21));
    // The write falls behind: 1 + 1 + 5 ms after the snapshot.
    let parts = [(t(10), 5000)];
    assert_eq!(writes_done(&s, t(12), t(10), 1000, &parts, true), t(17));
    // The write of the channel state is left out (the mutant): done when
    // the operator state is, but never before the last barrier.
    assert_eq!(writes_done(&s, t(12), t(10), 1000, &parts, false), t(12));
    assert_eq!(writes_done(&s, t(10), t(10), 1000, &parts, false), t(12));
}

#[test]
fn memory_sends_everything_with_the_ack_after_the_last_barrier() {
    let s = job("memory");
    let t = |ms: u64| SimTime(ms * MS);
    let parts = [(t(10), 5000), (t(15), 1000)];
    // 1 ms latency + 7000 bytes at 1 MB/s, from the last barrier (t 20).
    assert_eq!(writes_done(&s, t(20), t(10), 1000, &parts, true), t(28));
    assert_eq!(writes_done(&s, t(20), t(10), 1000, &parts, false), t(28));
}
