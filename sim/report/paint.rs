//! Colour for verdicts on a terminal: green for a pass, red for a failure,
//! yellow for an incomplete run. Off unless the command line turns it on
//! (standard output is a terminal and `NO_COLOR` is not set), so piped
//! output, files and library callers get plain text.

use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// Turns colour on or off for the rest of the process.
pub fn set(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether the command line should colour: standard output is a terminal
/// and `NO_COLOR` is unset (no-color.org).
pub fn wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `word` (`pass`, `PASS`, `FAIL`, `incomplete`, …) in its colour when
/// colour is on, else as it is.
pub fn verdict(word: &str) -> String {
    paint(word, ON.load(Ordering::Relaxed))
}

fn paint(word: &str, on: bool) -> String {
    let code = match word.to_ascii_lowercase().as_str() {
        "pass" => "32",
        "fail" => "31",
        "incomplete" => "33",
        _ => return word.to_string(),
    };
    match on {
        true => format!("\x1b[1;{code}m{word}\x1b[0m"),
        false => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::paint;

    #[test]
    fn verdicts_are_coloured_only_when_on() {
        assert_eq!(paint("PASS", true), "\x1b[1;32mPASS\x1b[0m");
        assert_eq!(paint("FAIL", true), "\x1b[1;31mFAIL\x1b[0m");
        assert_eq!(paint("incomplete", true), "\x1b[1;33mincomplete\x1b[0m");
        assert_eq!(paint("PASS", false), "PASS");
        assert_eq!(paint("other", true), "other");
    }
}
