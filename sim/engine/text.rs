//! Counts in words: `1 crash`, `2 crashes`. Every noun a message counts is
//! in [`NOUNS`] with its plural, so that sweeps can group messages that
//! differ only in a count (`shape`).

/// Singular and plural of every noun that messages count.
pub const NOUNS: &[(&str, &str)] = &[
    ("bytes", "bytes"),
    ("chain", "chains"),
    ("chart", "charts"),
    ("checkpoint", "checkpoints"),
    ("committed record", "committed records"),
    ("coordinator crash", "coordinator crashes"),
    ("crash", "crashes"),
    ("credit", "credits"),
    ("data buffer", "data buffers"),
    ("empty buffer", "empty buffers"),
    ("expected record", "expected records"),
    ("in-flight record", "in-flight records"),
    ("key", "keys"),
    ("latency spike", "latency spikes"),
    ("notification lost", "notifications lost"),
    ("operator", "operators"),
    ("partition", "partitions"),
    ("record", "records"),
    ("recovery", "recoveries"),
    ("region failover", "region failovers"),
    ("run", "runs"),
    ("seed", "seeds"),
    ("source record", "source records"),
    ("storage write failure", "storage write failures"),
    ("subtask", "subtasks"),
    ("task", "tasks"),
    ("value", "values"),
    ("worker crash", "worker crashes"),
    ("write", "writes"),
];

/// `n` and the noun in the number it takes: `count(1, "crash")` is
/// `1 crash`, `count(3, "crash")` is `3 crashes`. `one` is a noun of
/// [`NOUNS`] (any other gets an `s`).
pub fn count(n: u64, one: &str) -> String {
    format!("{n} {}", noun(n, one))
}

/// The noun alone, in the number `n` takes. A noun missing from
/// [`NOUNS`] gets an `s`.
pub fn noun(n: u64, one: &str) -> String {
    match NOUNS.iter().find(|(o, _)| *o == one) {
        Some((_, many)) if n != 1 => many.to_string(),
        _ if n != 1 => format!("{one}s"),
        _ => one.to_string(),
    }
}

/// `text` with every count's noun in the plural: "N crash" and "N crashes"
/// read alike. `N` stands for a number already replaced.
pub fn plural_shape(text: &str) -> String {
    let mut out = text.to_string();
    // Longest first, so that "N committed record" is not read as "N
    // committed" followed by something else.
    let mut nouns: Vec<&(&str, &str)> = NOUNS.iter().collect();
    nouns.sort_by_key(|(one, _)| std::cmp::Reverse(one.len()));
    for (one, many) in nouns {
        let from = format!("N {one}");
        let mut at = 0;
        while let Some(i) = out[at..].find(&from) {
            let start = at + i;
            let end = start + from.len();
            let whole_word = !out[end..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-');
            if whole_word {
                out.replace_range(start..end, &format!("N {many}"));
                at = start + 2 + many.len();
            } else {
                at = end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_right_number() {
        assert_eq!(count(1, "crash"), "1 crash");
        assert_eq!(count(0, "crash"), "0 crashes");
        assert_eq!(count(2, "recovery"), "2 recoveries");
        assert_eq!(count(1, "committed record"), "1 committed record");
        assert_eq!(count(1, "bytes"), "1 bytes");
    }

    #[test]
    fn shapes_read_singular_and_plural_alike() {
        assert_eq!(
            plural_shape("N crash, N recovery; N committed record"),
            plural_shape("N crashes, N recoveries; N committed records")
        );
        assert_eq!(plural_shape("N keyed"), "N keyed");
    }
}
