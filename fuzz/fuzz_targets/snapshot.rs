//! Any bytes as one file of a real savepoint directory (byte 0 picks the
//! savepoint, byte 1 the file, byte 2 whether the directory is signed again
//! so that the bytes reach the decoders): refused, or restored and run
//! within bounds. A panic or abort is a bug.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn bases() -> &'static [(PathBuf, ckptsim::scenario::Scenario)] {
    static BASES: OnceLock<Vec<(PathBuf, ckptsim::scenario::Scenario)>> = OnceLock::new();
    BASES.get_or_init(|| {
        let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let into = std::env::temp_dir().join(format!("ckptsim-fuzz-bases-{}", std::process::id()));
        ckptsim::fuzz::base_snapshots(&scenarios, &into)
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let scratch = std::env::temp_dir().join(format!("ckptsim-fuzz-case-{}", std::process::id()));
    let _ = ckptsim::fuzz::snapshot_bytes(bases(), &scratch, data);
});
