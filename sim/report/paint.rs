//! Colour for verdicts on a terminal: green for a pass, red for a failure,
//! yellow for an incomplete run. Off unless the command line turns it on
//! ([`wanted`]: the `NO_COLOR`, `CLICOLOR_FORCE` and `CLICOLOR`
//! conventions, as clap's own help reads them), so piped output, files and
//! library callers get plain text unless asked.

use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// Turns colour on or off for the rest of the process.
pub fn set(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether the command line should colour, read by `anstyle-query` (the
/// crate clap's help reads them with): `NO_COLOR` not empty, never
/// (no-color.org); else `CLICOLOR_FORCE` not empty, always, into a pipe or
/// a file too; else `CLICOLOR=0`, never; else when standard output is a
/// terminal that has colour (`TERM` set and not `dumb`, or `CLICOLOR` set).
#[cfg(feature = "cli")]
pub fn wanted() -> bool {
    use std::io::IsTerminal;
    choose(
        anstyle_query::no_color(),
        anstyle_query::clicolor_force(),
        anstyle_query::clicolor(),
        std::io::stdout().is_terminal(),
        anstyle_query::term_supports_color(),
    )
}

/// The rule of [`wanted`], on what it read.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
fn choose(
    no_color: bool,
    force: bool,
    clicolor: Option<bool>,
    terminal: bool,
    term_colour: bool,
) -> bool {
    if no_color {
        false
    } else if force {
        true
    } else {
        match clicolor {
            Some(false) => false,
            Some(true) => terminal,
            None => terminal && term_colour,
        }
    }
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
    use super::{choose, paint};

    #[test]
    fn no_color_wins_then_force_then_clicolor_then_the_terminal() {
        assert!(!choose(true, true, Some(true), true, true));
        assert!(choose(false, true, Some(false), false, false));
        assert!(!choose(false, false, Some(false), true, true));
        assert!(choose(false, false, Some(true), true, false));
        assert!(choose(false, false, None, true, true));
        assert!(!choose(false, false, None, true, false));
        assert!(!choose(false, false, None, false, true));
        assert!(!choose(false, false, Some(true), false, true));
    }

    #[test]
    fn verdicts_are_coloured_only_when_on() {
        assert_eq!(paint("PASS", true), "\x1b[1;32mPASS\x1b[0m");
        assert_eq!(paint("FAIL", true), "\x1b[1;31mFAIL\x1b[0m");
        assert_eq!(paint("incomplete", true), "\x1b[1;33mincomplete\x1b[0m");
        assert_eq!(paint("PASS", false), "PASS");
        assert_eq!(paint("other", true), "other");
    }
}
