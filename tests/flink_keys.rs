//! Flink's configuration keys in a `[flink]` table (docs/scenarios.md,
//! `scenario::schema::flink`): each is read as the ckptsim key it stands
//! for, so a file written with Flink's keys is the native file (the same
//! fingerprints); a key given both ways, a key of another restart strategy
//! and a bad value are errors at the Flink key; unknown keys get "did you
//! mean" toward the nearest of both spellings.

use crate::common::{check, scenario_path};
use ckptsim::scenario::schema::flink::{Conv, ALIASES};
use ckptsim::scenario::{parse_str, write::to_toml, Algorithm, ScenarioError};

fn wordcount() -> String {
    std::fs::read_to_string(scenario_path("wordcount")).unwrap()
}

/// `text` with each `(from, to)` replaced once (each must occur once).
fn edited(text: &str, edits: &[(&str, &str)]) -> String {
    let mut text = text.to_string();
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "`{from}`");
        text = text.replacen(from, to, 1);
    }
    text
}

/// wordcount with `[flink]` keys appended.
fn with_flink(keys: &str) -> String {
    format!("{}\n[flink]\n{keys}\n", wordcount())
}

fn errors(text: &str) -> Vec<ScenarioError> {
    match parse_str(text, "f.toml") {
        Ok(_) => panic!("expected errors"),
        Err(e) => e.0,
    }
}

fn only_error(text: &str) -> ScenarioError {
    let mut errors = errors(text);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    errors.remove(0)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// wordcount with its checkpoint, network, restart and top-level settings
/// written as Flink's keys is wordcount: the same scenario written back,
/// and the same fingerprints.
#[test]
fn a_scenario_written_with_flinks_keys_is_the_native_one() {
    let native = parse_str(&wordcount(), "wordcount.toml").unwrap();
    let flink = edited(
        &wordcount(),
        &[
            ("max_parallelism = 128\n", ""),
            ("buffer_credits = 2\n", ""),
            ("flush_timeout = \"1ms\"\n", ""),
            ("algorithm = \"aligned\"\n", ""),
            ("interval = \"100ms\"\n", ""),
            ("timeout = \"2s\"\n", ""),
            ("detection_delay = \"50ms\"\n", ""),
            ("restart_delay = \"100ms\"\n", ""),
        ],
    );
    let flink = format!(
        "{flink}\n[flink]\n\
         pipeline.max-parallelism = 128\n\
         taskmanager.network.memory.buffers-per-channel = \"2\"\n\
         execution.buffer-timeout.interval = \"1 ms\"\n\
         execution.checkpointing.mode = \"EXACTLY_ONCE\"\n\
         execution.checkpointing.interval = \"100 ms\"\n\
         \"execution.checkpointing.timeout\" = 2000\n\
         heartbeat.timeout = \"50ms\"\n\
         restart-strategy.type = \"fixed-delay\"\n\
         restart-strategy.fixed-delay.delay = \"100 milliseconds\"\n"
    );
    let aliased = parse_str(&flink, "wordcount-flink.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(to_toml(&aliased), to_toml(&native));
    for seed in 0..3 {
        assert_eq!(
            check(&aliased, seed, &[]).output.fingerprint,
            check(&native, seed, &[]).output.fingerprint,
            "seed {seed}"
        );
    }
}

/// Mode, unaligned and the aligned-checkpoint timeout choose the algorithm
/// together, as Flink does; restart keys follow `restart-strategy.type`.
#[test]
fn flinks_keys_choose_the_algorithm_and_restart_strategy_as_flink_does() {
    let strip = |t: &str| edited(t, &[("algorithm = \"aligned\"\n", "")]);
    let algorithm = |keys: &str| {
        let sc = parse_str(&strip(&with_flink(keys)), "f.toml").unwrap_or_else(|e| panic!("{e}"));
        (sc.checkpoint.algorithm, sc.checkpoint.alignment_timeout)
    };
    let ms = |n| ckptsim::engine::SimDuration::from_millis(n);
    let default_timeout = ms(100);
    assert_eq!(
        algorithm("execution.checkpointing.unaligned.enabled = true"),
        (Algorithm::Unaligned, default_timeout)
    );
    assert_eq!(
        algorithm("execution.checkpointing.unaligned.enabled = \"true\"\nexecution.checkpointing.aligned-checkpoint-timeout = \"30 ms\""),
        (Algorithm::AlignedTimeout, ms(30))
    );
    assert_eq!(
        algorithm("execution.checkpointing.mode = \"at_least_once\""),
        (Algorithm::AtLeastOnce, default_timeout)
    );
    assert_eq!(
        algorithm("execution.checkpointing.unaligned.enabled = false"),
        (Algorithm::Aligned, default_timeout)
    );
    let text = strip(&with_flink(
        "execution.checkpointing.mode = \"AT_LEAST_ONCE\"\nexecution.checkpointing.unaligned.enabled = true",
    ));
    let e = only_error(&text);
    assert_eq!(e.line, Some(line_of(&text, "unaligned.enabled")));
    assert!(
        e.message
            .contains("needs execution.checkpointing.mode = \"EXACTLY_ONCE\""),
        "{}",
        e.message
    );

    // The same restart strategy as [faults.restart].
    let restart = |text: &str| {
        parse_str(text, "f.toml")
            .unwrap_or_else(|e| panic!("{e}"))
            .faults
            .restart
            .clone()
    };
    let native_text = format!(
        "{}\n[faults.restart]\nstrategy = \"exponential-delay\"\nmax_backoff = \"2s\"\nbackoff_multiplier = 2.0\n",
        edited(&wordcount(), &[("[faults]\n", "[faults]\nmax_restarts = 7\n")])
    );
    let flink_text = with_flink(
        "restart-strategy.type = \"exponential-delay\"\n\
         restart-strategy.exponential-delay.max-backoff = \"2 s\"\n\
         restart-strategy.exponential-delay.backoff-multiplier = \"2.0\"\n\
         restart-strategy.exponential-delay.attempts-before-reset-backoff = 7",
    );
    assert_eq!(restart(&flink_text), restart(&native_text));
    // `none`: no restarts.
    let none = parse_str(&with_flink("restart-strategy.type = \"none\""), "f.toml").unwrap();
    assert_eq!(none.faults.max_restarts, 0);
    // A key of another strategy than the chosen one.
    let text = with_flink(
        "restart-strategy.type = \"failure-rate\"\nrestart-strategy.fixed-delay.attempts = 3",
    );
    let e = only_error(&text);
    assert_eq!(e.line, Some(line_of(&text, "fixed-delay.attempts")));
    assert_eq!(
        e.message,
        "`restart-strategy.fixed-delay.attempts` belongs to restart-strategy.type `fixed-delay`, and the strategy is `failure-rate`"
    );
}

/// A setting given both ways is one error at the Flink key, naming the
/// line of ckptsim's key.
#[test]
fn a_key_given_both_ways_is_refused_at_the_flink_key() {
    let text = with_flink("execution.checkpointing.interval = \"10 s\"");
    let e = only_error(&text);
    assert_eq!(
        e.line,
        Some(line_of(&text, "execution.checkpointing.interval"))
    );
    assert_eq!(
        e.message,
        format!(
            "`execution.checkpointing.interval` is `checkpoint.interval` written Flink's way, and the file sets `checkpoint.interval` too (line {})",
            line_of(&text, "interval = \"100ms\"")
        )
    );
    assert_eq!(e.help.as_deref(), Some("keep one of the two"));
    // Through the command line: exit 2, located.
    let dir = std::env::temp_dir().join(format!("ckptsim-flink-both-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("both.toml");
    std::fs::write(&file, &text).unwrap();
    let o = crate::common::ckptsim(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = crate::common::stderr(&o);
    let at = format!(
        "{}:{}:",
        file.display(),
        line_of(&text, "execution.checkpointing.interval")
    );
    assert!(err.starts_with(&at), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Unknown keys: did you mean, toward the nearest of both spellings.
#[test]
fn unknown_keys_get_did_you_mean_toward_both_spellings() {
    let help = |text: &str| only_error(text).help.unwrap_or_default();
    let e = only_error(&with_flink("execution.checkpointing.intervall = \"1 s\""));
    assert_eq!(
        e.message,
        "unknown Flink key `execution.checkpointing.intervall` in [flink]"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("did you mean `execution.checkpointing.interval`?")
    );
    // ckptsim's own key written in [flink].
    let e = only_error(&with_flink("checkpoint.min_pause = \"1s\""));
    assert_eq!(
        e.message,
        "`checkpoint.min_pause` is ckptsim's own key, not Flink's"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("write it as `execution.checkpointing.min-pause` here, or as `min_pause` under [checkpoint]")
    );
    // Near ckptsim's key rather than any Flink key.
    assert_eq!(
        help(&with_flink("checkpoint.min_paus = \"1s\"")),
        "did you mean ckptsim's `checkpoint.min_pause` (Flink's `execution.checkpointing.min-pause`)?"
    );
    // A Flink key without a counterpart.
    let e = only_error(&with_flink("parallelism.default = 4"));
    assert_eq!(
        e.message,
        "Flink's `parallelism.default` has no counterpart in ckptsim: each [[operators]] entry sets its own `parallelism`"
    );
    // Flink's spelling in ckptsim's tables.
    let text = edited(
        &wordcount(),
        &[(
            "timeout = \"2s\"\n",
            "timeout = \"2s\"\nmin-pause = \"1s\"\n",
        )],
    );
    assert_eq!(
        help(&text),
        "did you mean `min_pause`? (Flink's `execution.checkpointing.min-pause`)"
    );
    let text = edited(
        &wordcount(),
        &[(
            "timeout = \"2s\"\n",
            "timeout = \"2s\"\ntolerable-failed-checkpoints = 1\n",
        )],
    );
    assert_eq!(
        help(&text),
        "did you mean `tolerable_failures`? (Flink's `execution.checkpointing.tolerable-failed-checkpoints`, which a [flink] table takes as it is)"
    );
    // Flink's keys at the top level.
    let text = edited(
        &wordcount(),
        &[(
            "max_parallelism = 128\n",
            "max_parallelism = 128\nexecution.checkpointing.interval = \"1 s\"\n",
        )],
    );
    assert!(
        help(&text).starts_with("Flink's configuration keys (`execution.…`) go in a [flink] table"),
        "{}",
        help(&text)
    );
}

/// Values in the wrong format for Flink, and values Flink's format reads
/// but ckptsim's check refuses, are errors at the Flink key.
#[test]
fn bad_values_are_errors_at_the_flink_key() {
    let text = with_flink("execution.checkpointing.min-pause = \"10 parsecs\"");
    let e = only_error(&text);
    assert_eq!(e.line, Some(line_of(&text, "10 parsecs")));
    assert_eq!(
        e.message,
        "execution.checkpointing.min-pause: \"10 parsecs\" is not a duration such as \"10 s\", \"500 ms\" or \"1 min\""
    );
    let e = only_error(&with_flink(
        "pipeline.operator-chaining.enabled = \"maybe\"",
    ));
    assert_eq!(
        e.message,
        "pipeline.operator-chaining.enabled: expected true or false, not \"maybe\""
    );
    let e = only_error(&with_flink("execution.checkpointing.storage = \"rocksdb\""));
    assert_eq!(
        e.message,
        "execution.checkpointing.storage: unknown value \"rocksdb\"; Flink's values: jobmanager, filesystem"
    );
    let e = only_error(&with_flink(
        "taskmanager.memory.segment-size = \"32 lightyears\"",
    ));
    assert!(
        e.message.contains("is not a size such as \"32 kb\""),
        "{}",
        e.message
    );
    // Read, then refused by ckptsim's check of the key it stands for.
    let text = edited(
        &with_flink("execution.checkpointing.timeout = \"0 s\""),
        &[("timeout = \"2s\"\n", "")],
    );
    let e = only_error(&text);
    assert_eq!(
        e.line,
        Some(line_of(&text, "execution.checkpointing.timeout"))
    );
    assert!(
        e.message.contains("timeout must be greater than 0"),
        "{}",
        e.message
    );
    assert!(
        e.help
            .as_deref()
            .unwrap_or_default()
            .contains("written as Flink's `execution.checkpointing.timeout` in [flink]"),
        "{e:?}"
    );
    let e = only_error(
        &with_flink("\"flink-not-a-table\" = 1\n[flink.x]\ny = 1")
            .replace("[flink]\n\"flink-not-a-table\" = 1\n", ""),
    );
    assert_eq!(e.message, "unknown Flink key `x.y` in [flink]");
}

/// Every alias names a key ckptsim reads: a [flink] file with that key
/// alone is never refused as an unknown key.
#[test]
fn every_alias_names_a_key_ckptsim_reads() {
    for a in ALIASES {
        let value = match a.conv {
            Conv::Duration => "\"200 ms\"".to_string(),
            Conv::Int => "1".to_string(),
            Conv::Bool => "false".to_string(),
            Conv::Size => "\"32 kb\"".to_string(),
            Conv::Float => "2.0".to_string(),
            Conv::Names(names) => format!("\"{}\"", names[0].0),
        };
        let mut keys = format!("\"{}\" = {value}", a.flink);
        if let Some(s) = a.strategy {
            keys.push_str(&format!("\n\"restart-strategy.type\" = \"{s}\""));
        }
        let text = format!("version = 1\nname = \"x\"\n[[operators]]\nid = \"s\"\nkind = \"source\"\nparallelism = 1\n[[operators]]\nid = \"k\"\nkind = \"sink-2pc\"\nparallelism = 1\n[[edges]]\nfrom = \"s\"\nto = \"k\"\npartitioning = \"forward\"\n[flink]\n{keys}\n");
        if let Err(e) = parse_str(&text, "x.toml") {
            assert!(
                !e.to_string().contains("unknown field")
                    && !e.to_string().contains("unknown Flink key"),
                "{}: {e}",
                a.flink
            );
        }
    }
}
