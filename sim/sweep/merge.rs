//! `merge`: the result lines of one sweep, written by shards on any number
//! of machines, back into the sweep's summary. Lines merge only when they
//! belong to one sweep ([`SweepIdentity`]); every seed of the range must be
//! there once, in the shard its line names.

use super::{read_jsonl, MergeError, SeedRange, SeedResult, Shard, SweepIdentity, SweepSummary};
use serde::Serialize;
use std::collections::BTreeMap;

/// One file of result lines: its name as shown, and its text.
pub struct SweepInput {
    pub file: String,
    pub text: String,
}

/// Seeds of the sweep's range that no line has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub seeds: u64,
    /// Shards (`I/N`) with no line at all, the first 20.
    pub shards: Vec<String>,
    /// The missing seeds as ranges `A..B`, the first 10.
    pub ranges: Vec<String>,
}

/// A merge: the summary, the sweep, and what is missing (only with
/// `allow_missing`; otherwise missing seeds are an error).
pub struct Merged {
    pub summary: SweepSummary,
    pub identity: SweepIdentity,
    pub missing: Option<Missing>,
}

/// Where a line came from: `file:line`.
struct Located {
    at: String,
    result: SeedResult,
}

/// Merges the result lines of `inputs`. Refused, naming files and lines:
/// a line without a sweep identity, lines of different sweeps (scenario
/// content, ckptsim version, seed range, shard count, algorithm, mutants,
/// swarm), a seed outside its line's shard, a seed twice. Seeds of the range
/// that no line has are an error too, unless `allow_missing`: then they are
/// reported in [`Merged::missing`].
pub fn merge(inputs: &[SweepInput], allow_missing: bool) -> Result<Merged, MergeError> {
    let mut lines = Vec::new();
    for input in inputs {
        let results = read_jsonl(&input.file, &input.text)?;
        let numbers = input
            .text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, _)| i + 1);
        for (result, n) in results.into_iter().zip(numbers) {
            lines.push(Located {
                at: format!("{}:{n}", input.file),
                result,
            });
        }
    }
    let Some(first) = lines.first() else {
        return Err(MergeError("no result lines to merge".to_string()));
    };
    let identity = identity_of(first)?;
    let range =
        SeedRange::parse(&identity.seeds).map_err(|e| MergeError(format!("{}: {e}", first.at)))?;
    let count = shard_of(first, &identity)?.count;
    let mut at_seed: BTreeMap<u64, &str> = BTreeMap::new();
    let mut shards_seen = vec![false; usize::try_from(count).unwrap_or(usize::MAX).min(1 << 20)];
    for line in &lines {
        let id = identity_of(line)?;
        let differs = differences(first, &identity, line, &id);
        if !differs.is_empty() {
            return Err(MergeError(format!(
                "{} and {} come from different sweeps: {}",
                first.at,
                line.at,
                differs.join("; ")
            )));
        }
        let shard = shard_of(line, &id)?;
        let seed = line.result.seed;
        if seed < range.start || seed >= range.end || (seed - range.start) % count != shard.index {
            return Err(MergeError(format!(
                "{}: seed {seed} is not in shard {}/{} of seeds {}",
                line.at, shard.index, shard.count, identity.seeds
            )));
        }
        if let Some(before) = at_seed.insert(seed, &line.at) {
            return Err(MergeError(format!(
                "seed {seed} appears twice: {before} and {} (overlapping shards, or a file given twice?)",
                line.at
            )));
        }
        if let Some(seen) = shards_seen.get_mut(shard.index as usize) {
            *seen = true;
        }
    }
    let missing = missing(range, count, &at_seed, &shards_seen);
    if let (Some(m), false) = (&missing, allow_missing) {
        return Err(MergeError(format!(
            "no result for {} of the sweep's {} ({} --seeds {}): {}; merge the missing shards' files too, or pass --allow-missing to summarise what is there",
            m.seeds,
            crate::engine::count(range.len(), "seed"),
            first.result.scenario,
            identity.seeds,
            describe_missing(m)
        )));
    }
    let results: Vec<SeedResult> = lines.into_iter().map(|l| l.result).collect();
    let summary = SweepSummary::of(&results)?;
    Ok(Merged {
        summary,
        identity: SweepIdentity {
            shard: None,
            ..identity
        },
        missing,
    })
}

fn identity_of(line: &Located) -> Result<SweepIdentity, MergeError> {
    line.result.sweep.clone().ok_or_else(|| {
        MergeError(format!(
            "{}: the line has no sweep identity (written by a ckptsim before sweeps were identified); rerun its sweep",
            line.at
        ))
    })
}

/// The line's shard; a whole range is shard 0/1.
fn shard_of(line: &Located, id: &SweepIdentity) -> Result<Shard, MergeError> {
    match &id.shard {
        None => Ok(Shard { index: 0, count: 1 }),
        Some(s) => Shard::parse(s).map_err(|e| MergeError(format!("{}: {e}", line.at))),
    }
}

/// How two lines' sweeps differ, in words; empty when they are one sweep.
fn differences(a: &Located, ia: &SweepIdentity, b: &Located, ib: &SweepIdentity) -> Vec<String> {
    let mut out = Vec::new();
    let short = |h: &str| h.chars().take(12).collect::<String>();
    if ia.scenario_hash != ib.scenario_hash {
        out.push(format!(
            "scenario content {} ({}) vs {} ({})",
            short(&ia.scenario_hash),
            a.result.scenario,
            short(&ib.scenario_hash),
            b.result.scenario
        ));
    }
    if ia.ckptsim != ib.ckptsim {
        out.push(format!("ckptsim {} vs {}", ia.ckptsim, ib.ckptsim));
    }
    if ia.seeds != ib.seeds {
        out.push(format!("seed range {} vs {}", ia.seeds, ib.seeds));
    }
    let count = |s: &Option<String>| {
        s.as_deref()
            .and_then(|s| Shard::parse(s).ok())
            .map_or(1, |s| s.count)
    };
    if count(&ia.shard) != count(&ib.shard) {
        out.push(format!(
            "{} shards vs {}",
            count(&ia.shard),
            count(&ib.shard)
        ));
    }
    let (ra, rb) = (&a.result, &b.result);
    if ra.algorithm != rb.algorithm {
        out.push(format!("algorithm {} vs {}", ra.algorithm, rb.algorithm));
    }
    if ra.mutants != rb.mutants {
        out.push(format!("mutants {:?} vs {:?}", ra.mutants, rb.mutants));
    }
    if ra.swarm.is_some() != rb.swarm.is_some() {
        let swarm = |on: bool| if on { "swarm" } else { "no swarm" };
        out.push(format!(
            "{} vs {}",
            swarm(ra.swarm.is_some()),
            swarm(rb.swarm.is_some())
        ));
    }
    out
}

fn missing(
    range: SeedRange,
    count: u64,
    at_seed: &BTreeMap<u64, &str>,
    shards_seen: &[bool],
) -> Option<Missing> {
    let seeds = range.len() - at_seed.len() as u64;
    if seeds == 0 {
        return None;
    }
    let shards = shards_seen
        .iter()
        .enumerate()
        .filter(|&(i, seen)| !seen && (i as u64) < range.len())
        .map(|(i, _)| format!("{i}/{count}"))
        .take(20)
        .collect();
    // Gaps between present seeds, as ranges.
    let mut ranges = Vec::new();
    let mut next = range.start;
    for &seed in at_seed.keys().chain(std::iter::once(&range.end)) {
        if seed > next && ranges.len() < 10 {
            ranges.push(format!("{next}..{seed}"));
        }
        next = seed + 1;
    }
    Some(Missing {
        seeds,
        shards,
        ranges,
    })
}

/// The missing seeds in words: the shards without lines, else the gaps.
pub fn describe_missing(m: &Missing) -> String {
    if m.shards.is_empty() {
        format!("missing seeds {}", m.ranges.join(", "))
    } else {
        format!("shards {} have no lines", m.shards.join(", "))
    }
}
