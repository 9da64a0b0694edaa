//! Coverage-guided swarm (`sweep --swarm --guided`): the seeds run in
//! fixed batches, and each seed of a later batch either draws its own
//! configuration (as plain `--swarm` does) or re-runs the swarm draw of an
//! earlier seed that hit a rare coverage target, or that could reach a
//! target no seed has hit yet. Its input, network and faults still come
//! from its own seed, so a re-used draw meets new timing.
//!
//! Determinism: the batches depend only on the seed range, and a seed's
//! choice only on its number and the results of the batches before its
//! own, taken in seed order; so a guided sweep's results do not depend on
//! `--jobs` or on timing. Replay: a seed that re-ran another seed's draw
//! records it ([`Guidance::parents`], `SeedResult::draw_seed`) and its
//! replay line says `--draw-seed P`, which `run` and `shrink` accept.
//!
//! This module chooses configurations; it never looks at a verdict, so a
//! failing seed is as good a parent as a passing one.

use super::{run_identified, SeedResult, SweepSpec};
use crate::coverage::{Target, CATALOGUE};
use crate::panics;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// What makes a sweep guided: for each seed that re-runs another seed's
/// swarm draw, that seed (always one that drew its own configuration).
/// Empty before the first batch has run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Guidance {
    pub parents: BTreeMap<u64, u64>,
}

impl Guidance {
    /// The guidance a guided sweep's results record (`draw_seed`), so that
    /// the spec that ran them can replay any of its seeds.
    pub fn of(results: &[SeedResult]) -> Guidance {
        Guidance {
            parents: results
                .iter()
                .filter_map(|r| Some((r.seed, r.draw_seed?)))
                .collect(),
        }
    }
}

/// Seeds per batch for a sweep of `seeds` seeds: about a tenth of the
/// range, so that nine batches in ten are guided, between 8 and 250 (a
/// batch is also the unit of parallel work).
pub fn batch_size(seeds: u64) -> usize {
    (seeds / 10).clamp(8, 250) as usize
}

/// One seed in two of a later batch draws its own configuration: guidance
/// exploits what the sweep found without ceasing to explore.
const EXPLORE_ONE_IN: u64 = 2;

/// Runs a guided sweep: the batches in order, each on `jobs` threads,
/// stopping after the batch in which the `max_failures`-th failing seed
/// ran (the results are then cut after that seed, as `run_until` does).
pub(super) fn run(
    spec: &SweepSpec,
    jobs: usize,
    max_failures: Option<u64>,
    progress: &(dyn Fn(u64, bool) + Sync),
) -> Vec<SeedResult> {
    let _capture = panics::Capture::install();
    let seeds = spec.seeds();
    let identity = spec.identity();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build();
    let done = AtomicU64::new(0);
    let mut spec = spec.clone();
    let mut results: Vec<SeedResult> = Vec::with_capacity(seeds.len());
    for (i, batch) in seeds.chunks(batch_size(seeds.len() as u64)).enumerate() {
        if i > 0 {
            let rare = RareTargets::of(&results);
            let g = spec.guided.get_or_insert_with(Guidance::default);
            for &seed in batch {
                if let Some(parent) = rare.choose(seed) {
                    g.parents.insert(seed, parent);
                }
            }
        }
        let spec = &spec;
        let work = || {
            batch
                .par_iter()
                .map(|&seed| {
                    let r = run_identified(spec, seed, &identity);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, !r.passed);
                    r
                })
                .collect::<Vec<_>>()
        };
        results.extend(match &pool {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        });
        if let Some(cut) = max_failures.and_then(|max| nth_failing(&results, max)) {
            results.retain(|r| r.seed <= cut);
            break;
        }
    }
    results
}

/// The seed of the `n`-th failing result, if that many failed.
fn nth_failing(results: &[SeedResult], n: u64) -> Option<u64> {
    let i = usize::try_from(n.checked_sub(1)?).ok()?;
    results.iter().filter(|r| !r.passed).nth(i).map(|r| r.seed)
}

/// The targets guidance aims at after some batches, each with the seeds
/// whose draws are worth running again for it.
struct RareTargets {
    /// In catalogue order: a rare target (hit by at most one applicable
    /// seed in ten) with the seeds that hit it, or a target no seed hit
    /// with the seeds it applied to that hit most of its mechanism.
    aims: Vec<Vec<u64>>,
}

/// One seed that ran, by catalogue index: whether each target applied to
/// it and whether it hit it.
struct Reached {
    draw: u64,
    applies: Vec<bool>,
    hit: Vec<bool>,
}

impl Reached {
    fn of(r: &SeedResult) -> Reached {
        let has = |n: &crate::coverage::Need| r.coverage.features.iter().any(|f| f == n.name());
        Reached {
            draw: own_draw(r),
            applies: CATALOGUE.iter().map(|t| t.needs.iter().all(has)).collect(),
            hit: CATALOGUE
                .iter()
                .map(|t| r.coverage.hit.iter().any(|h| h == t.name))
                .collect(),
        }
    }
}

impl RareTargets {
    fn of(results: &[SeedResult]) -> RareTargets {
        // Seeds that did not run (invalid draws, panics) have no features.
        let ran: Vec<Reached> = results
            .iter()
            .filter(|r| !r.coverage.features.is_empty())
            .map(Reached::of)
            .collect();
        let mut aims = Vec::new();
        for (i, t) in CATALOGUE.iter().enumerate() {
            let applies: Vec<&Reached> = ran.iter().filter(|r| r.applies[i]).collect();
            let hitters: Vec<u64> = applies
                .iter()
                .filter(|r| r.hit[i])
                .map(|r| r.draw)
                .collect();
            if !hitters.is_empty() && hitters.len() * 10 <= applies.len() {
                aims.push(hitters);
            } else if hitters.is_empty() && !applies.is_empty() {
                aims.push(closest(&applies, t));
            }
        }
        RareTargets { aims }
    }

    /// The seed whose draw `seed` re-runs, or none when it draws its own:
    /// one seed in [`EXPLORE_ONE_IN`] explores, the others pick an aim,
    /// then a seed of it, uniformly (so every rare target gets as many
    /// tries, however few seeds hit it).
    fn choose(&self, seed: u64) -> Option<u64> {
        let mut rng = Mix(seed ^ 0x6775_6964_6564_2121);
        if self.aims.is_empty() || rng.below(EXPLORE_ONE_IN) == 0 {
            return None;
        }
        let aim = &self.aims[rng.below(self.aims.len() as u64) as usize];
        let parent = aim[rng.below(aim.len() as u64) as usize];
        (parent != seed).then_some(parent)
    }
}

/// The seeds among `applies` (where target `t` applied and none hit it)
/// that hit the most targets of `t`'s mechanism: the nearest misses.
fn closest(applies: &[&Reached], t: &Target) -> Vec<u64> {
    let near = |r: &Reached| {
        CATALOGUE
            .iter()
            .zip(&r.hit)
            .filter(|(u, &hit)| hit && u.mechanism == t.mechanism)
            .count()
    };
    let best = applies.iter().map(|r| near(r)).max().unwrap_or(0);
    applies
        .iter()
        .filter(|r| near(r) == best)
        .map(|r| r.draw)
        .collect()
}

/// The seed whose own draw `r` ran: re-running a re-run draw names its
/// origin, so every `--draw-seed` names a seed that drew it.
fn own_draw(r: &SeedResult) -> u64 {
    r.draw_seed.unwrap_or(r.seed)
}

/// splitmix64: guidance's own choices, apart from every simulation stream
/// (a seed's run never sees them).
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform enough below `n` (> 0) for choosing among a few thousand.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_a_tenth_of_the_range_within_bounds() {
        assert_eq!(batch_size(12), 8);
        assert_eq!(batch_size(1000), 100);
        assert_eq!(batch_size(10_000), 250);
    }

    #[test]
    fn choices_depend_on_the_seed_only() {
        let rare = RareTargets {
            aims: vec![vec![1, 2, 3], vec![4]],
        };
        let a: Vec<Option<u64>> = (10..60).map(|s| rare.choose(s)).collect();
        let b: Vec<Option<u64>> = (10..60).map(|s| rare.choose(s)).collect();
        assert_eq!(a, b);
        let explored = a.iter().filter(|c| c.is_none()).count();
        assert!((10..=40).contains(&explored), "{explored} of 50 explore");
        assert!(a.contains(&Some(4)), "the single-seed aim is chosen too");
    }
}
