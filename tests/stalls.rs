//! The stall search (`ckptsim::stalls`, `ckptsim stalls`): generated
//! topologies with forced alignment under `unaligned` and
//! `aligned-timeout`, with `aligned` as the control.
//!
//! - every stall has a blocking chain of the known kind and a topology
//!   that `Topology::deadlock_risk` predicts (the catalogue is sound);
//!   `aligned` never stalls on the same jobs; nothing panics;
//! - on topologies `deadlock_risk` predicts, some runs do stall (the rate
//!   is printed);
//! - the search is deterministic, whatever the threads; a panicking run is
//!   that run's class; the committed reproducer's chain is the one its
//!   header describes; the command's bad flags exit 2.
//!
//! The sweeps run `STALL_CASES` cases (default 48, about a second), from
//! the search seed `STALL_SEED` (default 0). A longer search:
//!
//! ```sh
//! STALL_CASES=2000 STALL_SEED=7 cargo test --release --test tests stalls
//! ```

use ckptsim::mutant::{Mutant, Mutants};
use ckptsim::scenario::Algorithm;
use ckptsim::stalls::{self, Class, StallSpec};
use ckptsim::strategies::Topology;
use std::path::Path;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

fn spec(cases: u64) -> StallSpec {
    StallSpec {
        cases,
        seed: env("STALL_SEED", 0),
        algorithms: vec![Algorithm::Unaligned, Algorithm::AlignedTimeout],
        flink_version: Default::default(),
    }
}

fn replay(c: &stalls::CaseResult, alg: &str) -> String {
    format!(
        "case {} (search seed {}), {alg}, simulation seed {}: {}",
        c.case,
        env("STALL_SEED", 0),
        c.seed,
        c.topology
    )
}

/// Soundness of the catalogue: every stall is a chain `deadlock_risk`
/// predicts; the control never stalls; no run panics.
#[test]
fn every_stall_is_a_predicted_shape_and_aligned_never_stalls() {
    let s = stalls::search(&spec(env("STALL_CASES", 48)), &|_| {});
    let mut stalled = 0;
    for c in &s.cases {
        assert_eq!(c.runs.len(), 3);
        for r in &c.runs {
            assert_ne!(
                r.class,
                Class::Panic,
                "{}: {:?}",
                replay(c, &r.algorithm),
                r.panic
            );
            if r.class != Class::Stall {
                assert!(r.chain.is_none() && r.shape.is_none());
                continue;
            }
            stalled += 1;
            assert_ne!(
                r.algorithm,
                "aligned",
                "the control stalled: {}",
                replay(c, &r.algorithm)
            );
            assert!(
                r.chain.is_some(),
                "a stall without a known chain ({}): {}",
                r.shape.as_deref().unwrap_or(""),
                replay(c, &r.algorithm)
            );
            assert!(
                r.predicted,
                "a stall deadlock_risk does not predict ({}): {}",
                r.shape.as_deref().unwrap_or(""),
                replay(c, &r.algorithm)
            );
            assert!(r.failed_checks.contains(&"liveness".to_string()));
            assert!(r.checkpoints_expired > 0, "{}", replay(c, &r.algorithm));
        }
    }
    eprintln!("stalls: {stalled} stalling runs in {} cases", s.cases.len());
}

/// Completeness, as a rate: on topologies `deadlock_risk` predicts for
/// `unaligned`, some runs stall; their chains are of the known kind.
#[test]
fn predicted_shapes_do_stall() {
    let seed = env("STALL_SEED", 0);
    let cases = env("STALL_CASES", 48) / 2;
    let risky = |t: &Topology| t.deadlock_risk(Algorithm::Unaligned);
    let mut stalled = 0;
    for case in 0..cases {
        let parts = stalls::parts_where(seed, case, &risky);
        assert!(parts.topology.deadlock_risk(Algorithm::Unaligned));
        let g = stalls::case_scenario(&parts, Algorithm::Unaligned);
        let r = stalls::run_one(
            &g.scenario,
            &parts.topology,
            stalls::case_seed(seed, case),
            Algorithm::Unaligned,
            Mutants::NONE,
        );
        assert_ne!(r.class, Class::Panic, "{:?}", r.panic);
        if r.class == Class::Stall {
            stalled += 1;
            assert!(r.chain.is_some(), "case {case}: {:?}", r.shape);
        }
    }
    eprintln!("stalls: {stalled} of {cases} predicted topologies stall under unaligned");
    assert!(stalled > 0, "no predicted topology stalled in {cases}");
}

/// The committed reproducer reduces to the chain its header describes.
#[test]
fn the_reproducer_reduces_to_its_chain() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/regressions/unaligned-forced-alignment-deadlock.toml");
    let sc = ckptsim::scenario::load(&path).unwrap();
    let x = stalls::explain(
        "repro.toml",
        &sc,
        14989174860723994225,
        Algorithm::Unaligned,
    )
    .unwrap();
    assert_eq!(x.run.class, Class::Stall);
    let chain = x.run.chain.as_ref().expect("a chain");
    let ids = (
        chain.blocker.operator.as_str(),
        chain.early.operator.as_str(),
        chain.missing.operator.as_str(),
        chain.stuck.operator.as_str(),
    );
    assert_eq!(ids, ("sink5", "count4", "flatmap2", "flatmap2"));
    assert!(x.excerpt.iter().any(|l| l.contains("checkpoint 1 expires")));
    let result = |what: &str| {
        x.variants
            .iter()
            .find(|(w, _)| w.contains(what))
            .unwrap_or_else(|| panic!("no variant {what}"))
            .1
            .class
    };
    assert_eq!(result("none"), Class::Stall);
    assert_eq!(result("`aligned`"), Class::Completes);
    assert_eq!(result("removed"), Class::Completes);
}

/// A run that panics is that run's class; the search goes on.
#[test]
fn a_panicking_run_is_a_verdict() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/simulator-panic.toml");
    let sc = ckptsim::scenario::load(&path).unwrap();
    let t = Topology::from_scenario(&sc).unwrap();
    let m = Mutants::NONE.with(Mutant::from_name("simulator-panic").unwrap());
    let r = stalls::run_one(&sc, &t, 0, Algorithm::Aligned, m);
    assert_eq!(r.class, Class::Panic);
    assert!(r.panic.unwrap().contains("simulator-panic"));
    let r = stalls::run_one(&sc, &t, 0, Algorithm::Aligned, Mutants::NONE);
    assert_ne!(r.class, Class::Panic);
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "shapes"] {
        let mut names: Vec<_> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        for p in names {
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            out.push((name, std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Same flags, same bytes, whatever the number of threads (the output
/// directory's name aside); bad flags exit 2 with a message naming them.
#[test]
fn the_command_is_deterministic_and_refuses_bad_flags() {
    let tmp = std::env::temp_dir().join(format!("ckptsim-stalls-{}", std::process::id()));
    let run = |jobs: &str, out: &str| {
        let o = crate::common::ckptsim_command()
            .args([
                "stalls", "--cases", "40", "--seed", "4", "--jobs", jobs, "--out",
            ])
            .arg(tmp.join(out))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let text = run("1", "a");
    run("2", "b");
    assert!(
        text.contains("unaligned") && text.contains("shapes"),
        "{text}"
    );
    let (a, b) = (files(&tmp.join("a")), files(&tmp.join("b")));
    assert!(a.iter().any(|(n, _)| n == "runs.csv"));
    assert!(
        a.iter().any(|(n, _)| n.starts_with("shapes/")),
        "no stall in 40 cases"
    );
    assert_eq!(a.len(), b.len());
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        let norm = |bytes: &[u8], out: &str| {
            String::from_utf8_lossy(bytes).replace(&tmp.join(out).display().to_string(), "OUT")
        };
        assert!(norm(ba, "a") == norm(bb, "b"), "{na} differs");
    }
    std::fs::remove_dir_all(&tmp).ok();
    for (args, needle) in [
        (&["--cases", "0"][..], "--cases 0"),
        (
            &["--algorithms", "unaligned,nope"][..],
            "--algorithms: unknown algorithm `nope`",
        ),
        (&["--cases", "x"][..], "--cases"),
        (&["--explain", "/nonexistent.toml"][..], "/nonexistent.toml"),
    ] {
        let o = crate::common::ckptsim_command()
            .arg("stalls")
            .args(args)
            .args(["--out", "/tmp/never-written"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(!Path::new("/tmp/never-written").exists());
}

/// `--flink-version`: every case follows that release's task thread (its
/// scenarios say so); the search's JSON names the release only when it is
/// not the newest, so a default search's files are what they were.
#[test]
fn the_search_follows_the_flink_version_asked_for() {
    use ckptsim::scenario::FlinkVersion;
    let newest = spec(1);
    assert!(!serde_json::to_string(&newest)
        .unwrap()
        .contains("flink_version"));
    let old = StallSpec {
        flink_version: FlinkVersion::V2_0,
        ..spec(1)
    };
    assert!(serde_json::to_string(&old)
        .unwrap()
        .contains(r#""flink_version":"2.0""#));
    for (s, line) in [
        (&newest, r#"flink_version = "2.3""#),
        (&old, r#"flink_version = "2.0""#),
    ] {
        let case = stalls::run_case(s, 0);
        assert_eq!(case.tomls.len(), s.runs().len());
        assert!(case.tomls.iter().all(|t| t.contains(line)), "{line}");
    }
}
