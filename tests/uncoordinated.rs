//! The uncoordinated families (`uncoordinated`, `cic-bcs`, `cic-hmnr`):
//! exactly-once over every fault kind with their recovery lines and logs,
//! the rules' costs as the literature has them, and the scenarios they
//! refuse. (`common::exactly_once` holds the coordinated algorithms; these
//! are swept here.)

use crate::common::{ckptsim, load, seeds_or, stderr, sweep, uncoordinated};
use ckptsim::runtime::Counters;
use ckptsim::scenario::Algorithm;

/// Seeds per algorithm and scenario: 40 in CI, `CKPTSIM_SEEDS` for more.
fn seeds() -> u64 {
    seeds_or(40)
}

/// `faults.toml` has random task crashes, a coordinator crash, worker
/// crashes, storage failures, lost notifications, a partition and a
/// latency spike; `wordcount.toml` three crashes at fixed times. Every seed
/// of both passes under every uncoordinated algorithm, and the sweep
/// reaches what makes them uncoordinated: lines rolled back over orphans,
/// logs replayed, lines that moved, a task restored to its start.
#[test]
fn every_fault_kind_is_exactly_once_with_recovery_lines() {
    for a in uncoordinated() {
        let mut c = Counters::default();
        for name in ["faults", "wordcount", "edges", "chains"] {
            let path = format!("scenarios/{name}.toml");
            c += &sweep(&load(name), &path, a, 0..seeds());
        }
        let name = a.name();
        assert!(
            c.failovers > 0 && c.coordinator_crashes > 0,
            "{name}: {c:?}"
        );
        assert!(
            c.worker_crashes > 0 && c.storage_write_failures > 0,
            "{name}: {c:?}"
        );
        assert!(c.local_checkpoints_rolled_back > 0, "{name}: {c:?}");
        assert!(c.local_rollbacks_to_start > 0, "{name}: {c:?}");
        assert!(
            c.log_records_replayed > 0 && c.log_bytes > 0,
            "{name}: {c:?}"
        );
        assert!(
            c.recovery_lines > 0 && c.recovery_commits > 0,
            "{name}: {c:?}"
        );
        assert_eq!(c.checkpoints_triggered, 0, "{name}: no coordinated round");
        assert_eq!(c.alignments, 0, "{name}: nothing aligns");
    }
}

/// What the literature says of the rules' costs, on the same seeds:
/// `uncoordinated` forces nothing and piggybacks nothing; HMNR forces fewer
/// checkpoints than BCS (Hélary et al. 2000) at a much larger piggyback
/// (O(n) against O(1) per buffer).
#[test]
fn hmnr_forces_fewer_checkpoints_than_bcs_at_a_larger_piggyback() {
    let sc = load("wordcount");
    let run = |a: Algorithm| sweep(&sc, "scenarios/wordcount.toml", a, 0..seeds().min(20));
    let (unc, bcs, hmnr) = (
        run(Algorithm::Uncoordinated),
        run(Algorithm::CicBcs),
        run(Algorithm::CicHmnr),
    );
    assert_eq!((unc.local_checkpoints_forced, unc.piggyback_bytes), (0, 0));
    assert!(hmnr.local_checkpoints_forced > 0, "{hmnr:?}");
    assert!(
        hmnr.local_checkpoints_forced < bcs.local_checkpoints_forced,
        "forced: hmnr {} bcs {}",
        hmnr.local_checkpoints_forced,
        bcs.local_checkpoints_forced
    );
    assert!(hmnr.piggyback_bytes > 4 * bcs.piggyback_bytes);
    // Basic checkpoints come from the same timers.
    let basic = |c: &Counters| c.local_checkpoints_basic as f64;
    assert!((basic(&bcs) / basic(&unc) - 1.0).abs() < 0.2);
}

/// What the families cannot run is refused with exit 2, where it is
/// written: in the file, or named on the command line.
#[test]
fn what_the_families_cannot_run_is_refused() {
    let o = ckptsim(&[
        "run",
        "scenarios/savepoints.toml",
        "--algorithm",
        "cic-hmnr",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o)
        .contains("savepoints[0]: algorithm `cic-hmnr` (uncoordinated) takes no savepoints"));
    let o = ckptsim(&[
        "sweep",
        "scenarios/operator-state.toml",
        "--seeds",
        "0..2",
        "--algorithm",
        "uncoordinated",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(
        "redistribution: algorithm `uncoordinated` (uncoordinated) does not run union list state"
    ));
    let text = std::fs::read_to_string(crate::common::scenario_path("sink-v2")).unwrap();
    let text = text.replace("algorithm = \"aligned\"", "algorithm = \"uncoordinated\"");
    let e = ckptsim::scenario::parse_str(&text, "v2.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not run a Sink V2 writer or committer"),
        "{e}"
    );
    assert!(e.contains("v2.toml:"), "located: {e}");
    // Nor a savepoint taken on the command line.
    let out = std::env::temp_dir().join(format!("ckptsim-unc-sp-{}", std::process::id()));
    let out = out.display().to_string();
    let args = [
        "savepoint",
        "scenarios/wordcount.toml",
        "--at",
        "100ms",
        "--out",
        &out,
    ];
    let o = ckptsim(&[&args[..], &["--algorithm", "uncoordinated"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("takes no savepoint"), "{}", stderr(&o));
    assert!(!std::path::Path::new(&out).exists());
    // The families run every other shipped scenario.
    for name in ["faults", "wordcount", "edges", "chains"] {
        let sc = load(name);
        for a in uncoordinated() {
            assert!(ckptsim::scenario::unsupported(&sc, a).is_none());
        }
    }
}
