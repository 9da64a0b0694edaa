//! The coverage catalogue (`ckptsim::coverage`): docs/coverage.md is
//! generated from it, a sweep tallies what its seeds hit, `merge` sums the
//! tallies of shards, and `--require-coverage` fails a sweep that missed a
//! target its seeds could reach.

use crate::common::{ckptsim, load, stderr, stdout};
use ckptsim::coverage::{self, Need, CATALOGUE};
use ckptsim::mutant::Mutants;
use ckptsim::scenario::Algorithm;
use ckptsim::sweep::{self, SeedRange, SweepSpec, SweepSummary};

#[test]
fn docs_coverage_md_is_generated_from_the_catalogue() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/coverage.md");
    let generated = coverage::markdown();
    if std::env::var_os("CKPTSIM_WRITE_DOCS").is_some() {
        std::fs::write(path, &generated).unwrap();
        return;
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        text == generated,
        "docs/coverage.md differs from the catalogue (sim/coverage.rs); regenerate it with \
         CKPTSIM_WRITE_DOCS=1 cargo test --release --test tests coverage::"
    );
}

#[test]
fn the_catalogue_has_sixty_targets_or_more() {
    assert!(CATALOGUE.len() >= 60, "{} targets", CATALOGUE.len());
}

fn spec(name: &str, algorithm: Algorithm, seeds: &str, swarm: bool) -> SweepSpec {
    let scenario = load(name);
    SweepSpec {
        swarm: swarm.then(|| {
            scenario
                .swarm
                .clone()
                .unwrap_or_else(|| ckptsim::swarm::default_ranges(&scenario))
        }),
        path: format!("scenarios/{name}.toml"),
        scenario,
        seeds: SeedRange::parse(seeds).unwrap(),
        shard: None,
        algorithm,
        mutants: Mutants::NONE,
        check_determinism: false,
        guided: None,
    }
}

/// A sweep of the crash scenario reaches crashes and restores, applies no
/// FLIP-27 target (it has no enumerator) and tallies per seed.
#[test]
fn a_sweep_tallies_what_its_seeds_hit_and_could_reach() {
    let results = sweep::run(
        &spec("wordcount", Algorithm::Unaligned, "0..12", false),
        2,
        &|_, _| {},
    );
    let s = SweepSummary::of(&results).unwrap();
    let t = |name: &str| s.coverage.targets[name].clone();
    assert_eq!(t("crash").applicable, 12);
    assert!(t("crash").hit > 0, "{:?}", t("crash"));
    assert!(t("restore-from-checkpoint").hit > 0);
    assert_eq!(t("operator-event").applicable, 0);
    assert!(s
        .coverage
        .unreachable()
        .iter()
        .any(|x| x.name == "operator-event"));
    // Hits agree with the counters of each line.
    for r in &results {
        assert_eq!(
            r.coverage.hit,
            coverage::hits(&r.counters)
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        );
        assert!(r.coverage.features.contains(&"crashes".to_string()));
        assert!(!r.coverage.features.contains(&"flip27".to_string()));
    }
    let text = s.to_text(None);
    assert!(text.contains("coverage     "), "{text}");
}

/// The needs follow the algorithm as well as the scenario.
#[test]
fn needs_hold_by_scenario_and_algorithm() {
    let flip = load("flip27");
    assert!(Need::Flip27.holds(&flip, Algorithm::Aligned));
    assert!(!Need::ChannelState.holds(&flip, Algorithm::Aligned));
    assert!(Need::ChannelState.holds(&flip, Algorithm::Unaligned));
    assert!(Need::BlocksUpstream.holds(&flip, Algorithm::Aligned));
    assert!(!Need::Local.holds(&flip, Algorithm::Aligned));
    assert!(Need::Local.holds(&load("wordcount"), Algorithm::Uncoordinated));
    assert!(!Need::Flip27.holds(&load("wordcount"), Algorithm::Aligned));
}

/// Shards merge into the whole sweep's tallies.
#[test]
fn merge_sums_the_tallies_of_shards() {
    let dir = std::env::temp_dir().join(format!("ckptsim-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let whole = dir.join("whole.jsonl");
    let whole_s = whole.to_str().unwrap();
    let mut shards = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("s{i}.jsonl"));
        let o = ckptsim(&[
            "sweep",
            "scenarios/tiny.toml",
            "--seeds",
            "0..6",
            "--shard",
            &format!("{i}/2"),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ]);
        assert!(o.status.code().is_some(), "{}", stderr(&o));
        shards.push(out);
    }
    let o = ckptsim(&[
        "sweep",
        "scenarios/tiny.toml",
        "--seeds",
        "0..6",
        "--out",
        whole_s,
        "--json",
    ]);
    let whole: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mut args = vec!["merge", "--json"];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    let o = ckptsim(&args);
    let merged: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        merged["summary"]["coverage"],
        whole["summary"]["coverage"],
        "{}",
        stderr(&o)
    );
    assert!(
        whole["summary"]["coverage"]["targets"]["checkpoint-completed"]["hit"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--require-coverage`: a sweep whose seeds could reach a target and did
/// not fails with exit 1 and names it; without the flag it passes.
#[test]
fn require_coverage_fails_a_sweep_that_missed_a_target() {
    let args = ["sweep", "scenarios/tiny.toml", "--seeds", "0..2"];
    let plain = ckptsim(&args);
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    let out = stdout(&plain);
    assert!(out.contains("missed: "), "{out}");
    let mut strict = args.to_vec();
    strict.push("--require-coverage");
    let o = ckptsim(&strict);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--require-coverage"), "{err}");
    // Every missed target is named, with its counter.
    let results = sweep::run(
        &spec("tiny", Algorithm::Aligned, "0..2", false),
        1,
        &|_, _| {},
    );
    let s = SweepSummary::of(&results).unwrap();
    for t in s.coverage.missed() {
        assert!(
            err.contains(&format!("  {}: ", t.name)),
            "{} in {err}",
            t.name
        );
    }
}
