//! Every file ckptsim reads is untrusted: only a regular file (links
//! followed; a FIFO, device, socket or directory is never read) of at most
//! a given size is read, checked before opening, again on what was opened
//! (so a FIFO swapped in meanwhile is refused, not waited on), and while
//! reading. Names that come from files are printed only through
//! [`printable`], so that none can move a terminal's cursor or rewrite what
//! it shows.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    Missing,
    NotRegular,
    TooLarge { limit: u64 },
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing => f.write_str("no such file"),
            ReadError::NotRegular => {
                f.write_str("not a regular file (a directory, FIFO, device or socket)")
            }
            ReadError::TooLarge { limit } => {
                write!(
                    f,
                    "larger than the {limit} bytes ckptsim reads from such a file"
                )
            }
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The bytes of the regular file at `path`, if it holds at most `limit`.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(e),
    };
    let md = std::fs::metadata(path).map_err(io)?;
    if !md.is_file() {
        return Err(ReadError::NotRegular);
    }
    if md.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    let file = open_without_waiting(path).map_err(io)?;
    // What was opened, not what the path named a moment ago.
    let md = file.metadata().map_err(io)?;
    if !md.is_file() {
        return Err(ReadError::NotRegular);
    }
    let mut bytes = Vec::with_capacity(md.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Opens `path` for reading without waiting for a writer: a FIFO put in
/// place of the file since it was checked opens at once (and is refused),
/// where a plain open would block until something writes to it.
#[cfg(unix)]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// `name` with every control character (C0, DEL, C1: escape sequences, line
/// breaks, carriage returns, backspaces) written as `\u{..}`: a name from a
/// file or a path, fit to print on a terminal.
pub fn printable(name: &str) -> Cow<'_, str> {
    escape_controls(name, |_| false)
}

/// `text` (a message of several lines) with every control character but
/// line breaks and tabs written as `\u{..}`.
pub fn printable_text(text: &str) -> Cow<'_, str> {
    escape_controls(text, |c| c == '\n' || c == '\t')
}

/// `word` as one word of a POSIX shell command line: as it is when it holds
/// only characters no shell treats specially, else in single quotes (a
/// quote inside as `'\''`). Control characters are escaped as
/// [`printable`] does first, so a printed command cannot rewrite a
/// terminal (such a word then names something else, which is better than
/// a line that moves the cursor).
pub fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./+:@%,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return Cow::Borrowed(word);
    }
    let shown = printable(word);
    Cow::Owned(format!("'{}'", shown.replace('\'', "'\\''")))
}

fn escape_controls(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c.is_control() && !keep(c) {
            true => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The text of the regular file at `path` (UTF-8, at most `limit` bytes),
/// or why not, as a sentence.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let bytes = read(path, limit).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is not)",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("ckptsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read(&file, 10).unwrap().len(), 10);
        assert!(matches!(
            read(&file, 9),
            Err(ReadError::TooLarge { limit: 9 })
        ));
        assert!(matches!(read(&dir, 100), Err(ReadError::NotRegular)));
        assert!(matches!(
            read(&dir.join("none"), 100),
            Err(ReadError::Missing)
        ));
        #[cfg(unix)]
        assert!(matches!(
            read(Path::new("/dev/zero"), 100),
            Err(ReadError::NotRegular)
        ));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text(&file, 10).unwrap_err(),
            "not UTF-8 text (byte 0 is not)"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("plain name"), "plain name");
        assert_eq!(printable("a\u{1b}[2Jb\nc\r"), "a\\u{1b}[2Jb\\u{a}c\\u{d}");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(printable_text("a\n\tb\u{7}"), "a\n\tb\\u{7}");
    }

    #[test]
    fn shell_words_stay_one_word() {
        assert_eq!(
            shell_word("target/release/ckptsim"),
            "target/release/ckptsim"
        );
        assert_eq!(shell_word("ckptsim"), "ckptsim");
        assert_eq!(shell_word("my dir/ckptsim"), "'my dir/ckptsim'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$(rm -rf x)"), "'$(rm -rf x)'");
        assert_eq!(shell_word("a=b"), "'a=b'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a\nb"), "'a\\u{a}b'");
    }
}
