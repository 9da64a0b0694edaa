//! `sweep --swarm --guided`: the same results on any number of threads,
//! seeds that re-run earlier seeds' draws, and replay lines that reproduce
//! a guided seed bit for bit from the command line.

use crate::common::load;
use ckptsim::mutant::Mutants;
use ckptsim::scenario::Algorithm;
use ckptsim::sweep::{self, Guidance, SeedRange, SweepSpec, SweepSummary};

/// `sweep scenarios/NAME.toml --seeds 0..SEEDS --swarm [--guided]`.
fn spec(name: &str, algorithm: Algorithm, seeds: u64, guided: bool) -> SweepSpec {
    let scenario = load(name);
    SweepSpec {
        swarm: Some(ckptsim::swarm::default_ranges(&scenario)),
        scenario,
        path: format!("scenarios/{name}.toml"),
        seeds: SeedRange {
            start: 0,
            end: seeds,
        },
        shard: None,
        algorithm,
        mutants: Mutants::NONE,
        check_determinism: false,
        guided: guided.then(Guidance::default),
    }
}

fn ckptsim(args: &[&str]) -> std::process::Output {
    crate::common::ckptsim_command()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

/// Later batches re-run earlier seeds' draws (each naming a seed that drew
/// its own), deterministically: one thread or two, the same results; and a
/// seed that re-ran a draw drew exactly what that seed draws.
#[test]
fn a_guided_sweep_reuses_earlier_draws_the_same_on_any_threads() {
    let s = spec("flip27", Algorithm::Aligned, 48, true);
    let results = sweep::run(&s, 2, &|_, _| {});
    assert_eq!(
        results,
        sweep::run(&s, 1, &|_, _| {}),
        "--jobs 1 and 2 agree"
    );
    let batch = sweep::guided_batch_size(48) as u64;
    let reused: Vec<_> = results.iter().filter(|r| r.draw_seed.is_some()).collect();
    assert!(
        reused.len() >= 8,
        "{} of 48 seeds re-ran a draw",
        reused.len()
    );
    let plain = sweep::run(
        &spec("flip27", Algorithm::Aligned, 48, false),
        2,
        &|_, _| {},
    );
    for r in &results {
        match r.draw_seed {
            None => assert_eq!(r.swarm, plain[r.seed as usize].swarm, "seed {}", r.seed),
            Some(p) => {
                assert!(
                    r.seed >= batch && p < r.seed - r.seed % batch,
                    "seed {} re-ran {p}",
                    r.seed
                );
                assert_eq!(results[p as usize].draw_seed, None, "{p} drew its own");
                assert_eq!(
                    r.swarm, plain[p as usize].swarm,
                    "seed {} runs {p}'s draw",
                    r.seed
                );
                assert!(
                    r.replay.ends_with(&format!(" --swarm --draw-seed {p}")),
                    "{}",
                    r.replay
                );
            }
        }
    }
    let summary = SweepSummary::of(&results).unwrap();
    assert_eq!(summary.draws_reused, reused.len() as u64);
    assert!(summary.to_text(None).contains("(guided: "));
}

/// The replay line a guided sweep prints for a seed that re-ran another
/// seed's draw runs as printed and reproduces the run's fingerprint; the
/// sweep's own output lists it.
#[test]
fn a_guided_seeds_replay_line_reproduces_it() {
    let out = std::env::temp_dir().join(format!("ckptsim-guided-{}.jsonl", std::process::id()));
    let o = ckptsim(&[
        "sweep",
        "scenarios/flip27.toml",
        "--seeds",
        "0..24",
        "--swarm",
        "--guided",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    let results = sweep::read_jsonl("out", &text).unwrap();
    let r = results
        .iter()
        .find(|r| r.draw_seed.is_some())
        .expect("a seed re-ran a draw");
    let words: Vec<&str> = r.replay.split_whitespace().collect();
    assert_eq!(words[0], "ckptsim");
    assert!(words.contains(&"--draw-seed"), "{}", r.replay);
    let mut args = words[1..].to_vec();
    args.push("--json");
    let o = ckptsim(&args);
    let run: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(run["fingerprint"], r.fingerprint.as_str(), "{}", r.replay);
    assert_eq!(run["replay"], r.replay.as_str());
    // Without --draw-seed the seed draws its own configuration: another run.
    let own: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--draw-seed")
        .collect();
    let p = r.draw_seed.unwrap().to_string();
    let own: Vec<&str> = own.into_iter().filter(|a| *a != p).collect();
    let o = ckptsim(&own);
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(run["fingerprint"], r.fingerprint.as_str());
}

/// `--guided` guides a swarm and needs the whole range; `--draw-seed`
/// names a swarm draw: each refused otherwise, with why (exit 2).
#[test]
fn guided_and_draw_seed_are_refused_where_they_mean_nothing() {
    for (args, why) in [
        (
            &["sweep", "scenarios/tiny.toml", "--guided"][..],
            "add --swarm",
        ),
        (
            &[
                "sweep",
                "scenarios/tiny.toml",
                "--swarm",
                "--guided",
                "--shard",
                "0/2",
            ][..],
            "cannot run a shard",
        ),
        (
            &["run", "scenarios/tiny.toml", "--draw-seed", "3"][..],
            "add --swarm",
        ),
    ] {
        let o = ckptsim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}
