//! Writing a comparison (being written).
use super::Comparison;
use std::path::{Path, PathBuf};
pub fn write(_c: &Comparison, _dir: &Path, _notes: Option<&str>) -> std::io::Result<Vec<PathBuf>> {
    Ok(Vec::new())
}
