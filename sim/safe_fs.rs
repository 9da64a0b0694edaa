//! Every folder ckptsim writes a command's files into (`flink-export`,
//! `stalls`, `compare`, `coverage-report`, `sweep --trace-failures`,
//! `savepoint --out`, `--checkpoint-dir`): it writes only files it creates
//! itself, never through a link or into a file it did not make. A single
//! file a command writes (`sweep --out FILE`, `shrink --out`, `explore
//! --out`, `run --trace`, `--perfetto`) is [`write_file`]d: written anew
//! next to its path and renamed over it, a link at the path refused.
//!
//! A folder is taken only if it is new, empty, or holds nothing but what the
//! command writes (an earlier run's output); the folder itself and every
//! entry of it that is written, removed or written into must not be a
//! symbolic link. A file is replaced by removing the old one and creating a
//! new one with `O_CREAT | O_EXCL` (Rust's `create_new`), which never
//! follows a link at the last component and never writes into another name
//! of a hard-linked file. This module must never follow a link below the
//! folder the user named, and never remove anything but a regular file it is
//! about to write again, or a stale one the command names.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// Why a folder or file was not written: the path and a sentence.
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub why: String,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.why)
    }
}

impl std::error::Error for WriteError {}

impl From<WriteError> for std::io::Error {
    fn from(e: WriteError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }
}

fn error(path: &Path, why: impl Into<String>) -> WriteError {
    WriteError {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

const LINK: &str = "is a symbolic link; ckptsim writes only files it creates itself (remove the link, or name a new folder)";

/// A folder a command writes its files into, checked by [`OutDir::open`].
#[derive(Clone, Debug)]
pub struct OutDir {
    path: PathBuf,
}

impl OutDir {
    /// `dir`, created if missing; otherwise it must be a folder (not a link
    /// to one) whose every entry `own` accepts by name (what the command
    /// writes, from an earlier run), none of them a link.
    pub fn open(dir: &Path, own: &dyn Fn(&str) -> bool) -> Result<OutDir, WriteError> {
        match std::fs::symlink_metadata(dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| error(dir, format!("cannot create the folder: {e}")))?;
            }
            Err(e) => return Err(error(dir, format!("cannot read: {e}"))),
            Ok(m) if m.file_type().is_symlink() => return Err(error(dir, LINK)),
            Ok(m) if !m.is_dir() => return Err(error(dir, "exists and is not a folder")),
            Ok(_) => {}
        }
        let entries =
            std::fs::read_dir(dir).map_err(|e| error(dir, format!("cannot read: {e}")))?;
        let mut foreign = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| error(dir, format!("cannot read: {e}")))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry
                .file_type()
                .map_err(|e| error(&entry.path(), format!("cannot read: {e}")))?;
            if kind.is_symlink() {
                return Err(error(&entry.path(), LINK));
            }
            if !own(&name) {
                foreign.push(name);
            }
        }
        foreign.sort();
        if let Some(first) = foreign.first() {
            let more = match foreign.len() {
                1 => String::new(),
                n => format!(
                    " and {} other entr{}",
                    n - 1,
                    if n == 2 { "y" } else { "ies" }
                ),
            };
            return Err(error(
                dir,
                format!(
                    "holds `{}`{more}, which this command does not write: name a new or empty folder, or an earlier output of the same command",
                    crate::input::printable(first)
                ),
            ));
        }
        Ok(OutDir {
            path: dir.to_path_buf(),
        })
    }

    /// Refuses `dir` if it, or an entry of it, is a symbolic link (a check
    /// before a long run that will write there).
    pub fn check_links(dir: &Path) -> Result<(), WriteError> {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => return Err(error(dir, LINK)),
            Ok(m) if m.is_dir() => {}
            _ => return Ok(()),
        }
        let entries =
            std::fs::read_dir(dir).map_err(|e| error(dir, format!("cannot read: {e}")))?;
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                return Err(error(&entry.path(), LINK));
            }
        }
        Ok(())
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `rel` (`/`-separated, below the folder), its folders made as real
    /// folders; a folder on the way or the file itself that is a link is
    /// refused.
    fn prepare(&self, rel: &str) -> Result<PathBuf, WriteError> {
        let mut at = self.path.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        let (file, folders) = parts.split_last().unwrap_or((&"", &[]));
        for part in folders {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => return Err(error(&at, LINK)),
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(error(&at, "exists and is not a folder")),
                Err(e) if e.kind() == ErrorKind::NotFound => std::fs::create_dir(&at)
                    .map_err(|e| error(&at, format!("cannot create the folder: {e}")))?,
                Err(e) => return Err(error(&at, format!("cannot read: {e}"))),
            }
        }
        at.push(file);
        Ok(at)
    }

    /// Makes folder `rel` (below this one) and those on the way, as real
    /// folders; a link on the way is refused.
    pub fn make_dir(&self, rel: &str) -> Result<PathBuf, WriteError> {
        let path = self.prepare(&format!("{rel}/x"))?;
        Ok(path.parent().unwrap_or(&self.path).to_path_buf())
    }

    /// Creates `rel` anew (an earlier regular file there is removed first):
    /// the file, open for writing.
    pub fn create(&self, rel: &str) -> Result<(PathBuf, File), WriteError> {
        let path = self.prepare(rel)?;
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(error(&path, LINK)),
            Ok(m) if m.is_file() => std::fs::remove_file(&path)
                .map_err(|e| error(&path, format!("cannot replace: {e}")))?,
            Ok(_) => return Err(error(&path, "exists and is not a regular file")),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(error(&path, format!("cannot read: {e}"))),
        }
        // O_EXCL: if anything appeared at the path since, this fails
        // instead of following it.
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| error(&path, format!("cannot create: {e}")))?;
        Ok((path, file))
    }

    /// Writes `rel` anew with `bytes`; the path written.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<PathBuf, WriteError> {
        let (path, mut file) = self.create(rel)?;
        file.write_all(bytes)
            .map_err(|e| error(&path, format!("cannot write: {e}")))?;
        Ok(path)
    }

    /// Removes `rel` if it is a regular file (a stale output of an earlier
    /// run); a link there is refused, anything else left alone.
    pub fn remove(&self, rel: &str) -> Result<(), WriteError> {
        let path = self.prepare(rel)?;
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Err(error(&path, LINK)),
            Ok(m) if m.is_file() => {
                std::fs::remove_file(&path).map_err(|e| error(&path, format!("cannot remove: {e}")))
            }
            _ => Ok(()),
        }
    }

    /// The names in folder `rel` (below this one) that are regular files,
    /// sorted; a link among them is refused.
    pub fn files_in(&self, rel: &str) -> Result<Vec<String>, WriteError> {
        let dir = self.prepare(&format!("{rel}/x"))?;
        let dir = dir.parent().unwrap_or(&self.path).to_path_buf();
        let entries =
            std::fs::read_dir(&dir).map_err(|e| error(&dir, format!("cannot read: {e}")))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| error(&dir, format!("cannot read: {e}")))?;
            let kind = entry
                .file_type()
                .map_err(|e| error(&entry.path(), format!("cannot read: {e}")))?;
            if kind.is_symlink() {
                return Err(error(&entry.path(), LINK));
            }
            if kind.is_file() {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }
}

const FILE_LINK: &str = "is a symbolic link; ckptsim does not write through a link it did not create (remove the link, or name another file)";

/// Refuses `path` as a file to write if it is a symbolic link or anything
/// but a regular file (a check before a long run that will write there).
pub fn check_file(path: &Path) -> Result<(), WriteError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(error(path, FILE_LINK)),
        Ok(m) if !m.is_file() => Err(error(path, "exists and is not a regular file")),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(error(path, format!("cannot read: {e}"))),
    }
}

/// Writes the file `path` with what `fill` writes: into a new file next
/// to it (created with `O_CREAT | O_EXCL`, so never through a link), then
/// renamed over `path` (a rename replaces the name, never what a link
/// there points to, nor another name of a hard-linked file). A link or a
/// non-regular file at `path` is refused and left as it is; on a failure
/// the new file is removed and `path` is unchanged.
pub fn write_file_with(
    path: &Path,
    fill: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    check_file(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| error(path, "names no file"))?
        .to_string_lossy();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A name of its own per write (process and counter): `O_EXCL` then
    // fails only on a name someone else planted.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.ckptsim-{}-{n}.tmp", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| error(&temp, format!("cannot create: {e}")))?;
    let mut out = std::io::BufWriter::new(file);
    let written = fill(&mut out)
        .and_then(|()| out.flush())
        .map_err(|e| error(path, format!("cannot write: {e}")))
        .and_then(|()| {
            // Checked again just before the rename: a link planted while
            // the file was written is refused too (the rename would only
            // replace it, but the user did not ask for that).
            check_file(path)?;
            std::fs::rename(&temp, path).map_err(|e| error(path, format!("cannot write: {e}")))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Writes the file `path` with `bytes`, as [`write_file_with`] does.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_file_with(path, &|w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(what: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ckptsim-safefs-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn files_are_replaced_never_written_through() {
        let dir = temp("replace");
        let out = OutDir::open(&dir, &|_| true).unwrap();
        out.write("a/b.txt", b"one").unwrap();
        out.write("a/b.txt", b"two").unwrap();
        assert_eq!(std::fs::read(dir.join("a/b.txt")).unwrap(), b"two");
        // A hard link's other name keeps its content.
        std::fs::hard_link(dir.join("a/b.txt"), dir.join("other")).unwrap();
        out.write("a/b.txt", b"three").unwrap();
        assert_eq!(std::fs::read(dir.join("other")).unwrap(), b"two");
        #[cfg(unix)]
        {
            let victim = temp("victim");
            std::fs::write(&victim, b"victim").unwrap();
            std::os::unix::fs::symlink(&victim, dir.join("link")).unwrap();
            assert!(out
                .write("link", b"x")
                .unwrap_err()
                .why
                .contains("symbolic link"));
            assert!(out.remove("link").is_err());
            std::os::unix::fs::symlink(std::env::temp_dir(), dir.join("sub")).unwrap();
            assert!(out.write("sub/f", b"x").is_err());
            assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
            assert!(
                OutDir::open(&dir, &|_| true).is_err(),
                "a link in the folder"
            );
            for p in [dir.join("link"), dir.join("sub"), victim] {
                std::fs::remove_file(p).unwrap();
            }
        }
        let e = OutDir::open(&dir, &|n| n == "a").unwrap_err();
        assert!(e.why.contains("does not write"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_single_file_is_replaced_never_written_through() {
        let dir = temp("file");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.jsonl");
        write_file(&path, b"one").unwrap();
        write_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        std::fs::hard_link(&path, dir.join("other")).unwrap();
        write_file(&path, b"three").unwrap();
        assert_eq!(std::fs::read(dir.join("other")).unwrap(), b"two");
        assert_eq!(std::fs::read(&path).unwrap(), b"three");
        #[cfg(unix)]
        {
            let victim = dir.join("victim");
            std::fs::write(&victim, b"victim").unwrap();
            let link = dir.join("link");
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            let e = write_file(&link, b"x").unwrap_err();
            assert!(e.why.contains("symbolic link"), "{e}");
            assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
        }
        assert!(write_file(&dir, b"x").is_err(), "a folder");
        // Nothing is left behind but what was named.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["link", "other", "out.jsonl", "victim"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
