//! Entry points for fuzzers: the test suite's (`tests/fuzz.rs`, proptest on
//! stable Rust) and `cargo fuzz`'s (`fuzz/`, for a nightly toolchain). Each
//! takes arbitrary input and returns whatever it is: a scenario text or a
//! snapshot directory is refused, or it runs (plain and in swarm mode)
//! within bounds and is judged. A panic, an abort or a run past its bounds
//! is a bug of ckptsim.

use crate::harness::{execute, execute_job, Execution};
use crate::report::Summary;
use crate::runtime::{JobOptions, RunConfig, SnapshotKind};
use crate::savepoint::{self, rescale, Image};
use crate::scenario::{self, SavepointSpec, Scenario};
use crate::{mutant::Mutants, swarm};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A fuzzed job runs only if its sources hold at most this many records
/// (the generated input is built up front).
pub const MAX_RECORDS: u64 = 20_000;
/// A fuzzed job runs at most this many events.
pub const MAX_EVENTS: u64 = 200_000;

/// What became of one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Refused as bad input (exit code 2 on the command line).
    Refused,
    /// Valid, and larger than a fuzzed run may be: not run.
    TooLarge,
    /// Run and judged; whether it passed.
    Ran { passed: bool },
}

/// Scenario text, as `ckptsim run` reads it: parsed, and if valid run with
/// seed 0 and in swarm mode with seed 1, each summarised as the command
/// line would.
pub fn scenario_text(bytes: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Outcome::Refused;
    };
    match scenario::parse_str(text, "fuzz.toml") {
        Err(errors) => {
            let _ = errors.to_string();
            Outcome::Refused
        }
        Ok(s) => scenario(&s),
    }
}

/// A valid scenario run plainly (seed 0) and in swarm mode (seed 1).
pub fn scenario(s: &Scenario) -> Outcome {
    let spec = s.swarm.clone().unwrap_or_else(|| swarm::default_ranges(s));
    let (drawn, _) = swarm::draw(s, &spec, 1).unwrap_or_else(|invalid| panic!("{invalid}"));
    let mut passed = true;
    for (s, seed) in [(s, 0), (&drawn, 1)] {
        match bounded(s) {
            None => return Outcome::TooLarge,
            Some(s) => passed &= summarise(&s, &execute(&s, &config(&s, seed)), seed),
        }
    }
    Outcome::Ran { passed }
}

fn config(s: &Scenario, seed: u64) -> RunConfig {
    RunConfig {
        seed,
        algorithm: s.checkpoint.algorithm,
        mutants: Mutants::NONE,
        record_trace: false,
    }
}

/// The scenario with the fuzzer's event bound, if it is small enough to run.
fn bounded(s: &Scenario) -> Option<Scenario> {
    if s.source_records() > MAX_RECORDS {
        return None;
    }
    let mut edit = scenario::ScenarioData::clone(s);
    edit.limits.max_events = edit.limits.max_events.min(MAX_EVENTS);
    Some(scenario::check(&edit, "fuzz").expect("a lower event bound keeps a scenario valid"))
}

/// Summarises a run as `ckptsim run` does; whether it passed.
fn summarise(s: &Scenario, e: &Execution, seed: u64) -> bool {
    let summary = Summary::new("fuzz.toml", seed, s.checkpoint.algorithm.name(), &[], e);
    let _ = summary.to_text(false);
    let _ = serde_json::to_string(&summary);
    e.verdict.passed
}

/// A snapshot directory, as `ckptsim run --from-savepoint DIR` reads it
/// for `job`: read and checked, mapped onto the job, and the restored job
/// run.
pub fn snapshot_dir(dir: &Path, job: &Scenario) -> Outcome {
    let image = match savepoint::read_dir(dir) {
        Ok(image) => image,
        Err(e) => {
            let _ = e.to_string();
            return Outcome::Refused;
        }
    };
    restore(&image, job)
}

/// A job restored from an image (read from files, or crafted) and run.
pub fn restore(image: &Image, job: &Scenario) -> Outcome {
    let plan = match rescale::assign(image, job, true) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = e.to_string();
            return Outcome::Refused;
        }
    };
    let Some(s) = bounded(job) else {
        return Outcome::TooLarge;
    };
    let options = JobOptions {
        restore: Some(Arc::new(plan.restore)),
        ..JobOptions::default()
    };
    let e = execute_job(&s, &config(&s, 0), &options, image.meta.input_seed);
    Outcome::Ran {
        passed: summarise(&s, &e, 0),
    }
}

/// A savepoint of `s` requested at `at_ms` (seed `seed`), or `None` if the
/// job ended before one completed.
pub fn take_savepoint(s: &Scenario, at_ms: u64, seed: u64) -> Option<Image> {
    let mut edit = scenario::ScenarioData::clone(s);
    edit.savepoints = vec![SavepointSpec {
        at: crate::engine::SimTime(at_ms.saturating_mul(1_000_000)),
        stop: false,
        drain: false,
        format: crate::scenario::SavepointFormat::Canonical,
    }];
    // A time past the longest a scenario may hold: no savepoint.
    let s = scenario::check(&edit, "fuzz").ok()?;
    let job = JobOptions {
        cancel_after_savepoint: true,
        retry_failed_savepoints: true,
        keep_snapshots: true,
        ..JobOptions::default()
    };
    let e = execute_job(&s, &config(&s, seed), &job, seed);
    let snap = e
        .output
        .snapshots
        .iter()
        .find(|x| x.kind == SnapshotKind::Savepoint)?;
    Image::from_run(&s, snap, &e.output.store, seed, 0).ok()
}

/// Savepoints of five shipped scenarios (under `scenarios`), written under
/// `into`, with the job that took each: the last (`rescale` under
/// Chandy–Lamport, whose savepoints carry channel state) has in-flight
/// records.
pub fn base_snapshots(scenarios: &Path, into: &Path) -> Vec<(PathBuf, Scenario)> {
    let plans: &[(&str, u64, Option<&str>)] = &[
        ("wordcount", 300, None),
        ("flip27", 150, None),
        ("operator-state", 150, None),
        ("sink-v2", 150, None),
        ("rescale", 300, Some("chandy-lamport")),
    ];
    let mut bases = Vec::new();
    for &(name, at, algorithm) in plans {
        let path = scenarios.join(format!("{name}.toml"));
        let mut job = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if let Some(a) = algorithm.and_then(crate::protocol::Algorithm::from_name) {
            let mut edit = scenario::ScenarioData::clone(&job);
            edit.checkpoint.algorithm = a;
            job = scenario::check(&edit, name).unwrap_or_else(|e| panic!("{e}"));
        }
        let image = (0..20)
            .find_map(|seed| take_savepoint(&job, at, seed))
            .unwrap_or_else(|| panic!("{name}: no savepoint within 20 seeds"));
        let dir = into.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        savepoint::write_dir(&dir, &image).unwrap_or_else(|e| panic!("{e}"));
        bases.push((dir, job));
    }
    bases
}

/// One fuzzer input against the base snapshots: byte 0 picks the base,
/// byte 1 the file, byte 2's low bit whether the directory is signed again;
/// the rest is the file's new content. The case runs in a fresh copy under
/// `scratch`, removed afterwards.
pub fn snapshot_bytes(bases: &[(PathBuf, Scenario)], scratch: &Path, data: &[u8]) -> Outcome {
    let [b, f, resign, content @ ..] = data else {
        return Outcome::Refused;
    };
    let (base, job) = &bases[*b as usize % bases.len()];
    let _ = std::fs::remove_dir_all(scratch);
    if std::fs::create_dir_all(scratch).is_err() {
        return Outcome::Refused;
    }
    let originals = files(base);
    for file in &originals {
        if let Some(name) = file.file_name() {
            let _ = std::fs::copy(file, scratch.join(name));
        }
    }
    let file = scratch.join(
        originals[*f as usize % originals.len()]
            .file_name()
            .unwrap_or_default(),
    );
    let outcome = match replace_file(scratch, &file, content, resign & 1 == 1) {
        Ok(()) => snapshot_dir(scratch, job),
        Err(_) => Outcome::Refused,
    };
    let _ = std::fs::remove_dir_all(scratch);
    outcome
}

/// The files of a snapshot directory, `_metadata` first.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort_by_key(|p| {
        (
            p.file_name() != Some(savepoint::METADATA.as_ref()),
            p.clone(),
        )
    });
    files
}

/// Replaces one file of a snapshot directory with `bytes` and, if `resign`,
/// signs the directory again as its writer would (the file's size and
/// checksum in `_metadata`, then `_metadata`'s own checksum), so that the
/// new content reaches the decoders and the range checks instead of the
/// checksums. Both files are written as [`crate::safe_fs::write_file`]
/// writes, never through a link.
pub fn replace_file(dir: &Path, file: &Path, bytes: &[u8], resign: bool) -> std::io::Result<()> {
    let write = |path: &Path, bytes: &[u8]| -> std::io::Result<()> {
        Ok(crate::safe_fs::write_file(path, bytes)?)
    };
    write(file, bytes)?;
    if !resign {
        return Ok(());
    }
    let meta_path = dir.join(savepoint::METADATA);
    let Ok(mut meta) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&meta_path)?)
    else {
        return Ok(());
    };
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let hash = blake3::hash(bytes).to_hex().to_string();
    let sign = |entry: &mut serde_json::Value| {
        if entry.get("file").and_then(|f| f.as_str()) == Some(name) {
            entry["bytes"] = bytes.len().into();
            entry["blake3"] = hash.clone().into();
        }
    };
    if let Some(ops) = meta.get_mut("operators").and_then(|o| o.as_array_mut()) {
        ops.iter_mut().filter(|o| o.is_object()).for_each(sign);
    }
    for key in ["channel_state", "external"] {
        if let Some(entry) = meta.get_mut(key).filter(|e| e.is_object()) {
            sign(entry);
        }
    }
    if meta.is_object() {
        meta["metadata_blake3"] = "".into();
        let own = blake3::hash(serde_json::to_string(&meta)?.as_bytes());
        meta["metadata_blake3"] = own.to_hex().to_string().into();
    }
    write(&meta_path, serde_json::to_string_pretty(&meta)?.as_bytes())
}
