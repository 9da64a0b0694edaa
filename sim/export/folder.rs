//! An export's folder: written only where an export writes, never through
//! a link (`safe_fs`).

use super::lineage;
use crate::safe_fs::{OutDir, WriteError};
use std::path::Path;

/// What `flink-sweep` logs a run's `run.sh` into, next to it.
pub const RUN_LOG: &str = "run.log";

/// The export's files into `out`: a new or empty folder, or an earlier
/// export (every entry one an export writes, `real/` of its run and the
/// sweep's `run.log` included),
/// never through a link. A real run of an earlier export, and its data files
/// of sources this one lacks, are not this export's: removed.
pub fn write(out: &Path, files: &[(String, String)]) -> Result<(), WriteError> {
    let top = |name: &str| name.split('/').next().unwrap_or(name).to_string();
    let own: Vec<String> = files.iter().map(|(n, _)| top(n)).collect();
    let dir = OutDir::open(out, &|name| {
        name == "real"
            || name == "expected.tsv"
            || name == lineage::EXPECTED
            || name == RUN_LOG
            || own.iter().any(|o| o == name)
    })?;
    for stale in [
        "real/run.json",
        "real/rest.jsonl",
        "real/crashes.tsv",
        "real/watermark-lags.tsv",
        "expected.tsv",
        lineage::EXPECTED,
        RUN_LOG,
    ] {
        dir.remove(stale)?;
    }
    for data in dir.files_in("data")? {
        dir.remove(&format!("data/{data}"))?;
    }
    for (name, text) in files {
        dir.write(name, text.as_bytes())?;
    }
    Ok(())
}
