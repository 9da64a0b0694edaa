//! Writing a comparison into a results directory:
//!
//! - `results.json`: the whole [`Comparison`] (groups and every run);
//! - `results.csv`: one row per run, hand-written with RFC 4180 quoting
//!   (a run that panicked has its message and replay line and no metrics);
//! - SVG charts (plotters' SVG backend, rendered into a string, so the bytes
//!   depend only on the data): per algorithm without `--vary`, along the axis
//!   with it; only with the `cli` feature (`charts.rs`);
//! - `README.md`: how to regenerate, what was run, a table, the charts, an
//!   automatic reading and optional hand-written notes.
//!
//! Everything is deterministic: no wall clock, fixed number formatting,
//! fixed colours per algorithm name, `Vec`/`BTreeMap` iteration only.

use super::{Comparison, Group, Stat, METRICS};
use std::io;
use std::path::{Path, PathBuf};

#[cfg(feature = "cli")]
mod charts;
mod readme;
#[cfg(feature = "cli")]
pub use charts::colour;
use readme::readme;
pub use readme::results_text;

/// An algorithm name and a value.
type Named<'a> = (&'a str, f64);

/// Writes the results directory (creating it if needed) and returns the
/// files written, in a fixed order: `results.json`, `results.csv`, the
/// charts, `README.md`.
pub fn write(c: &Comparison, dir: &Path, notes: Option<&str>) -> io::Result<Vec<PathBuf>> {
    // Never through a link: `safe_fs` refuses one in the folder.
    let out = crate::safe_fs::OutDir::open(dir, &is_report_name)?;
    // A previous report's files go first: none of them is left stale.
    for name in out.files_in(".")? {
        if is_report_name(&name) {
            out.remove(&name)?;
        }
    }
    let mut files = Vec::new();
    let mut put = |name: &str, contents: &str| -> io::Result<()> {
        files.push(out.write(name, contents.as_bytes())?);
        Ok(())
    };
    let mut json = serde_json::to_string_pretty(c).map_err(io::Error::other)?;
    json.push('\n');
    put("results.json", &json)?;
    put("results.csv", &csv(c))?;
    // (title, file) of every chart written.
    #[cfg_attr(not(feature = "cli"), allow(unused_mut))]
    let mut drawn: Vec<(String, String)> = Vec::new();
    #[cfg(feature = "cli")]
    for chart in charts::charts(c) {
        put(&chart.file, &charts::render(&chart)?)?;
        drawn.push((chart.title, chart.file));
    }
    put("README.md", &readme(c, &drawn, notes))?;
    Ok(files)
}

/// A file a report writes: `README.md`, `results.json`, `results.csv`, a
/// chart (`*.svg`).
fn is_report_name(name: &str) -> bool {
    ["README.md", "results.json", "results.csv"].contains(&name) || name.ends_with(".svg")
}

/// A report's file, a regular one (not a link).
fn is_report_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    regular && is_report_name(name)
}

/// Whether `dir` may receive a report: it does not exist, or holds only a
/// previous report's files (which [`write()`] replaces). Otherwise the first
/// other entry, for the message.
pub fn check_out_dir(dir: &Path) -> Result<(), String> {
    // A link, at the folder or in it, is refused as `write` would.
    if std::fs::symlink_metadata(dir).is_ok() {
        crate::safe_fs::OutDir::check_links(dir).map_err(|e| e.to_string())?;
    }
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(format!("{} exists and is not a directory", dir.display()));
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut others: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| !is_report_file(p))
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    others.sort();
    match others.first() {
        None => Ok(()),
        Some(first) => Err(format!(
            "{} holds `{first}`{}, which no report writes: give --out an empty directory or a previous report's",
            dir.display(),
            match others.len() {
                1 => String::new(),
                n => format!(" and {} other {}", n - 1, if n == 2 { "entry" } else { "entries" }),
            }
        )),
    }
}

// ---------------------------------------------------------------------------
// Looking things up

/// The algorithms in report order: `c.algorithms`, then any other name that
/// appears in the groups (defensive: they should agree).
fn algorithms(c: &Comparison) -> Vec<String> {
    let mut out = c.algorithms.clone();
    for g in &c.groups {
        if !out.contains(&g.algorithm) {
            out.push(g.algorithm.clone());
        }
    }
    out
}

/// The group of `algorithm` at axis value `value` (`None`: not varying).
fn group<'a>(c: &'a Comparison, algorithm: &str, value: Option<&str>) -> Option<&'a Group> {
    c.groups
        .iter()
        .find(|g| g.algorithm == algorithm && (value.is_none() || g.vary.as_deref() == value))
}

/// A metric of a group, if it has any samples.
fn stat(g: Option<&Group>, key: &str) -> Option<Stat> {
    g.and_then(|g| g.metrics.get(key))
        .copied()
        .filter(|s| s.n > 0)
}

fn p50(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.p50).filter(|v| v.is_finite())
}

fn p99(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.p99).filter(|v| v.is_finite())
}

fn max(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.max).filter(|v| v.is_finite())
}

// ---------------------------------------------------------------------------
// Number formatting (fixed, so files are byte-for-byte reproducible)

/// About three significant digits, no exponent.
fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Compact labels for axes and bars: `1.5k`, `120k`, `3.2M` (the charts'
/// only, so unused without the `cli` feature).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
fn short(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a == 0.0 {
        "0".to_string()
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.0e}")
    }
}

/// A duration given in milliseconds, for prose.
fn dur(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// A size given in KiB, for prose.
fn size(kib: f64) -> String {
    if kib >= 1024.0 {
        format!("{:.1} MiB", kib / 1024.0)
    } else if kib >= 10.0 {
        format!("{kib:.0} KiB")
    } else {
        format!("{kib:.1} KiB")
    }
}

fn rate(rps: f64) -> String {
    format!("{rps:.0} rec/s")
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

/// `×15`, `×2.5`, `×0.40`.
fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("×{r:.0}")
    } else if r >= 1.0 {
        format!("×{r:.1}")
    } else {
        format!("×{r:.2}")
    }
}

fn or_dash(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

// ---------------------------------------------------------------------------
// results.csv

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// p50 and p99 of one run's per-checkpoint values, scaled.
fn run_stat(values: &[u64], scale: f64) -> Stat {
    let v: Vec<f64> = values.iter().map(|&x| x as f64 / scale).collect();
    Stat::of(&v)
}

fn cell(s: Stat, f: fn(&Stat) -> f64) -> String {
    if s.n == 0 {
        String::new()
    } else {
        format!("{:.3}", f(&s))
    }
}

/// `results.csv`'s header: the axis key after the algorithm when varying,
/// the uncoordinated families' columns when `local`.
fn csv_header(c: &Comparison, local: bool) -> Vec<String> {
    let mut header: Vec<String> = vec!["algorithm".to_string()];
    if let Some(v) = &c.vary {
        header.push(v.key.clone());
    }
    header.extend(
        [
            "seed",
            "passed",
            "guarantee",
            "checkpoints_completed",
            "checkpoints_aborted",
            "duration_p50_ms",
            "duration_p99_ms",
            "alignment_p50_ms",
            "alignment_p99_ms",
            "state_kib_p50",
            "in_flight_kib_p50",
            "throughput_rps",
            "input_rps",
            "latency_p50_ms",
            "latency_p99_ms",
            "recovery_p50_ms",
            "records_replayed",
            "virtual_time_ms",
        ]
        .map(String::from),
    );
    if local {
        header.extend(
            [
                "forced_checkpoints",
                "rolled_back_checkpoints",
                "protocol_bytes",
            ]
            .map(String::from),
        );
    }
    if super::has_event_time(c) {
        header.extend(["watermark_lag_p50_ms", "watermark_lag_p99_ms"].map(String::from));
    }
    if super::has_files(c) {
        header.extend(["checkpointed_kib_p50", "full_kib_p50", "restore_p50_ms"].map(String::from));
    }
    header.extend(["failed_checks", "panic", "replay"].map(String::from));
    header
}

fn csv(c: &Comparison) -> String {
    let local = super::has_local(c.runs.iter().map(|r| &r.algorithm));
    let header = csv_header(c, local);
    let mut out = String::new();
    let mut line = |fields: &[String]| {
        let fields: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    };
    line(&header);
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    for r in &c.runs {
        let mut row = vec![r.algorithm.clone()];
        if c.vary.is_some() {
            row.push(r.vary.clone().unwrap_or_default());
        }
        let duration = run_stat(&r.duration_ns, 1e6);
        let alignment = run_stat(&r.alignment_ns, 1e6);
        // Latency 0 means nothing was committed (as in the group metrics).
        let latency = |ns: u64| if ns > 0 { ms(ns) } else { String::new() };
        row.extend([
            r.seed.to_string(),
            r.passed.to_string(),
            r.guarantee.clone(),
        ]);
        let mut metrics = vec![
            r.checkpoints_completed.to_string(),
            r.checkpoints_aborted.to_string(),
            cell(duration, |s| s.p50),
            cell(duration, |s| s.p99),
            cell(alignment, |s| s.p50),
            cell(alignment, |s| s.p99),
            cell(run_stat(&r.state_bytes, 1024.0), |s| s.p50),
            cell(run_stat(&r.in_flight_bytes, 1024.0), |s| s.p50),
            format!("{:.3}", r.throughput_rps),
            format!("{:.3}", r.input_rps),
            latency(r.latency_p50_ns),
            latency(r.latency_p99_ns),
            cell(run_stat(&r.recovery_ns, 1e6), |s| s.p50),
            r.records_replayed.to_string(),
            ms(r.virtual_time_ns),
        ];
        if local {
            metrics.extend([
                r.forced_checkpoints.to_string(),
                r.rolled_back_checkpoints.to_string(),
                r.protocol_bytes.to_string(),
            ]);
        }
        if super::has_event_time(c) {
            let lag = |ns: Option<u64>| ns.map(ms).unwrap_or_default();
            metrics.extend([lag(r.watermark_lag_p50_ns), lag(r.watermark_lag_p99_ns)]);
        }
        if super::has_files(c) {
            metrics.extend([
                cell(run_stat(&r.persisted_bytes, 1024.0), |s| s.p50),
                cell(run_stat(&r.full_bytes, 1024.0), |s| s.p50),
                cell(run_stat(&r.restore_ns, 1e6), |s| s.p50),
            ]);
        }
        // A run that panicked measured nothing: empty cells, not zeros.
        row.extend(
            metrics
                .into_iter()
                .map(|m| if r.panic.is_some() { String::new() } else { m }),
        );
        row.extend([
            r.failed_checks.join(" "),
            r.panic.as_ref().map(|p| p.to_string()).unwrap_or_default(),
            r.replay.clone().unwrap_or_default(),
        ]);
        line(&row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{group as aggregate, Comparison, RunMetrics, Vary};
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn run(
        algorithm: &str,
        seed: u64,
        vary: Option<&str>,
        duration_ms: &[u64],
        alignment_ms: &[u64],
        in_flight_kib: &[u64],
        throughput: f64,
        recovery_ms: &[u64],
    ) -> RunMetrics {
        let n = duration_ms.len();
        let passed = seed != 2 || algorithm != "aligned";
        RunMetrics {
            algorithm: algorithm.to_string(),
            seed,
            vary: vary.map(String::from),
            passed,
            guarantee: "exactly-once".to_string(),
            checkpoints_completed: n as u64,
            checkpoints_aborted: 0,
            duration_ns: duration_ms.iter().map(|v| v * 1_000_000).collect(),
            alignment_ns: alignment_ms.iter().map(|v| v * 1_000_000).collect(),
            start_delay_ns: vec![1_000; n],
            state_bytes: vec![64 * 1024; n],
            persisted_bytes: vec![64 * 1024; n],
            full_bytes: vec![64 * 1024; n],
            in_flight_bytes: in_flight_kib.iter().map(|v| v * 1024).collect(),
            throughput_rps: throughput,
            input_rps: throughput * 2.0,
            latency_p50_ns: if throughput > 0.0 { 3_000_000 } else { 0 },
            latency_p99_ns: if throughput > 0.0 {
                40_000_000 + seed
            } else {
                0
            },
            watermark_lag_p50_ns: None,
            watermark_lag_p99_ns: None,
            recovery_ns: recovery_ms.iter().map(|v| v * 1_000_000).collect(),
            restore_ns: Vec::new(),
            records_replayed: 100 * seed,
            forced_checkpoints: 0,
            rolled_back_checkpoints: 0,
            protocol_bytes: 0,
            virtual_time_ns: 10_000_000_000,
            events: 1000,
            failed_checks: if passed {
                Vec::new()
            } else {
                vec!["exactly-once-output".to_string()]
            },
            panic: None,
            replay: (!passed).then(|| {
                format!("ckptsim run scenarios/test.toml --seed {seed} --algorithm {algorithm}")
            }),
        }
    }

    /// Runs for one axis value (or none): aligned is slow, unaligned fast
    /// with in-flight data, `none` has no checkpoints at all.
    fn runs_at(vary: Option<&str>, scale: u64) -> Vec<RunMetrics> {
        let mut out = Vec::new();
        for seed in 1..=3 {
            out.push(run(
                "aligned",
                seed,
                vary,
                &[880 * scale, 900 * scale + seed, 1200 * scale],
                &[870 * scale, 890 * scale, 1190 * scale],
                &[0, 0, 0],
                9000.0,
                &[1500],
            ));
            out.push(run(
                "unaligned",
                seed,
                vary,
                &[2, 3 + seed, 4],
                &[0, 0, 0],
                &[100 * scale, 120 * scale, 300],
                9600.0,
                &[800 + seed],
            ));
            out.push(run("none", seed, vary, &[], &[], &[], 10000.0, &[]));
        }
        out
    }

    fn comparison(runs: Vec<RunMetrics>, algorithms: &[&str], vary: Option<Vary>) -> Comparison {
        let values: Vec<Option<String>> = match &vary {
            Some(v) => v.values.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        let mut groups = Vec::new();
        for v in &values {
            for a in algorithms {
                let these: Vec<&RunMetrics> = runs
                    .iter()
                    .filter(|r| r.algorithm == *a && r.vary == *v)
                    .collect();
                groups.push(aggregate(a, v.as_ref(), &these));
            }
        }
        Comparison {
            scenario: "scenarios/test, \"quoted\".toml".to_string(),
            command: "ckptsim compare scenarios/test.toml --algorithms aligned,unaligned,none --seeds 1..4 --out out".to_string(),
            algorithms: algorithms.iter().map(|a| a.to_string()).collect(),
            mutants: Vec::new(),
            seeds: "1..4".to_string(),
            vary,
            swarm: false,
            groups,
            runs,
        }
    }

    fn plain() -> Comparison {
        comparison(runs_at(None, 1), &["aligned", "unaligned", "none"], None)
    }

    fn varied() -> Comparison {
        let values = ["100ms", "1s", "10s"];
        let mut runs = Vec::new();
        for (i, v) in values.iter().enumerate() {
            runs.extend(runs_at(Some(v), [1, 4, 15][i]));
        }
        comparison(
            runs,
            &["aligned", "unaligned", "none"],
            Some(Vary {
                key: "checkpoint.interval".to_string(),
                values: values.iter().map(|v| v.to_string()).collect(),
                axes: Vec::new(),
            }),
        )
    }

    /// The (title, file) of every chart, as `write` lists them.
    #[cfg(feature = "cli")]
    fn listed(c: &Comparison) -> Vec<(String, String)> {
        charts::charts(c)
            .into_iter()
            .map(|ch| (ch.title, ch.file))
            .collect()
    }

    fn temp_dir(suffix: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ckptsim-out-{}-{suffix}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn read_all(files: &[PathBuf]) -> Vec<Vec<u8>> {
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    }

    fn name(p: &Path) -> String {
        p.file_name().unwrap().to_string_lossy().to_string()
    }

    fn assert_svg(text: &str, file: &str) {
        let t = text.trim();
        assert!(
            t.starts_with("<svg") || t.starts_with("<?xml"),
            "{file}: {t:.80}"
        );
        assert!(t.ends_with("</svg>"), "{file}");
        assert_eq!(t.matches("<svg").count(), 1, "{file}");
    }

    /// Writes, checks the files, writes again and compares bytes.
    fn check(c: &Comparison, suffix: &str, notes: Option<&str>, legend: bool) -> Vec<PathBuf> {
        let dir = temp_dir(suffix);
        let files = write(c, &dir, notes).unwrap();
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(names[..2], ["results.json", "results.csv"]);
        assert_eq!(names.last().unwrap(), "README.md");
        for f in &files {
            assert!(f.is_file(), "{}", f.display());
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains(&c.command));
        assert!(readme.starts_with(&format!("# Comparison: {}\n", c.scenario)));
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let n = name(f);
            if n.ends_with(".svg") {
                assert_svg(&text, &n);
                assert!(readme.contains(&format!("]({n})")), "README lacks {n}");
                if legend {
                    for a in &c.algorithms {
                        assert!(text.contains(&format!(">\n{a}\n</text>")), "{n} lacks {a}");
                    }
                }
            }
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), c.runs.len());
        assert_eq!(json["groups"].as_array().unwrap().len(), c.groups.len());
        // CSV: a header and one line per run, all with the same number of
        // columns (no field here holds a quote or comma except the ones
        // we check for separately).
        let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), c.runs.len() + 1);
        let columns = lines[0].split(',').count();
        assert_eq!(columns, if c.vary.is_some() { 23 } else { 22 });
        for l in &lines {
            assert_eq!(l.split(',').count(), columns, "{l}");
        }
        if let Some(v) = &c.vary {
            assert!(lines[0].starts_with(&format!("algorithm,{},seed,", v.key)));
        }
        // Deterministic: the same bytes again, in place and elsewhere.
        let first = read_all(&files);
        let again = write(c, &dir, notes).unwrap();
        assert_eq!(files, again);
        assert_eq!(first, read_all(&again));
        let other = temp_dir(&format!("{suffix}-2"));
        let elsewhere = write(c, &other, notes).unwrap();
        assert_eq!(first, read_all(&elsewhere));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&other);
        files
    }

    #[test]
    #[cfg(feature = "cli")]
    fn writes_static_comparison() {
        let c = plain();
        let notes = "Published: aligned ≈ 1 s under backpressure.\n| not | a table |";
        let files = check(&c, "plain", Some(notes), true);
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(
            names,
            [
                "results.json",
                "results.csv",
                "checkpoint-duration.svg",
                "alignment.svg",
                "checkpoint-size.svg",
                "throughput-latency.svg",
                "recovery.svg",
                "README.md"
            ]
        );
        let readme = readme(&c, &listed(&c), Some(notes));
        assert!(readme.contains(
            "## Notes\n\nPublished: aligned ≈ 1 s under backpressure.\n| not | a table |\n"
        ));
        assert!(readme.contains("lowest **unaligned**"), "{readme}");
        assert!(readme.contains("highest **aligned**"), "{readme}");
        assert!(
            readme.contains("Persists in-flight data: unaligned"),
            "{readme}"
        );
        assert!(readme.contains("  - aligned: 90% of none"), "{readme}");
        assert!(
            readme.contains("No completed checkpoints: none."),
            "{readme}"
        );
        assert!(readme.contains("aligned (1 of 3)"), "{readme}");
        // Durations span 2 ms .. 1200 ms: a log axis (labels at powers of 10).
        let svg = charts::render(&charts::charts(&c)[0]).unwrap();
        assert!(
            svg.contains(">\n1.0k\n</text>") && svg.contains(">\n10\n</text>"),
            "{svg}"
        );
        // `none` has no checkpoints: marked in the legend.
        assert!(svg.contains("no data"));
    }

    #[test]
    #[cfg(feature = "cli")]
    fn writes_varied_comparison() {
        let c = varied();
        let files = check(&c, "vary", None, true);
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(
            names,
            [
                "results.json",
                "results.csv",
                "vary-checkpoint-duration.svg",
                "vary-alignment.svg",
                "vary-state-size.svg",
                "vary-in-flight-size.svg",
                "vary-throughput.svg",
                "vary-latency.svg",
                "vary-recovery.svg",
                "README.md"
            ]
        );
        let readme = readme(&c, &listed(&c), None);
        assert!(!readme.contains("## Notes"));
        assert!(
            readme.contains("- aligned: duration 902 ms → 13.5 s (×15)"),
            "{readme}"
        );
        assert!(
            readme.contains("At `checkpoint.interval` = 10s:"),
            "{readme}"
        );
        // The axis values label the x axis.
        let svg = charts::render(&charts::charts(&c)[0]).unwrap();
        for v in ["100ms", "1s", "10s", "checkpoint.interval"] {
            assert!(svg.contains(&format!(">\n{v}\n</text>")), "{v}");
        }
    }

    #[test]
    fn writes_empty_comparison() {
        // Every metric empty: no checkpoints, nothing committed, no
        // failures, zero throughput.
        let mut runs = Vec::new();
        for a in ["aligned", "none"] {
            let mut r = run(a, 1, None, &[], &[], &[], 0.0, &[]);
            r.records_replayed = 0;
            runs.push(r);
        }
        let mut c = comparison(runs, &["aligned", "none"], None);
        for g in &mut c.groups {
            for s in g.metrics.values_mut() {
                *s = Stat::default();
            }
        }
        check(&c, "empty", None, true);
        let dir = temp_dir("empty-svg");
        for f in write(&c, &dir, None).unwrap() {
            if name(&f).ends_with(".svg") {
                assert!(std::fs::read_to_string(&f).unwrap().contains("no data"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);

        // Nothing at all: no algorithms, no runs, no groups; and an axis
        // whose groups are all missing.
        let nothing = comparison(Vec::new(), &[], None);
        check(&nothing, "nothing", None, false);
        let axis = comparison(
            Vec::new(),
            &["aligned"],
            Some(Vary {
                key: "network.buffer_credits".to_string(),
                values: vec!["2".to_string()],
                axes: Vec::new(),
            }),
        );
        check(&axis, "nothing-vary", None, true);
    }

    /// A run that panicked: listed with its message and replay line, left
    /// out of the metrics, empty metric cells in the CSV.
    #[test]
    #[cfg(feature = "cli")]
    fn a_panicked_run_is_a_failed_run_without_metrics() {
        let mut runs = runs_at(None, 1);
        let mut p = run("unaligned", 4, None, &[], &[], &[], 0.0, &[]);
        p.passed = false;
        p.guarantee = "unknown".to_string();
        p.failed_checks = vec!["panic".to_string()];
        p.panic = Some(crate::panics::Panicked {
            message: "simulator-panic mutant: failover of a crash".to_string(),
            location: "sim/runtime/world.rs:10:13".to_string(),
        });
        p.replay =
            Some("ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned".to_string());
        runs.push(p);
        let c = comparison(runs, &["aligned", "unaligned", "none"], None);
        let g = c
            .groups
            .iter()
            .find(|g| g.algorithm == "unaligned")
            .unwrap();
        assert_eq!((g.runs, g.failed_runs, g.panicked_runs), (4, 1, 1));
        assert_eq!(
            g.metrics["throughput_rps"].n, 3,
            "the panicked run has no throughput"
        );
        check(&c, "panicked", None, true);
        let readme = readme(&c, &listed(&c), None);
        for needle in [
            "- Runs: 10 (1 failed their checks, 1 panicked)",
            "## Failed runs",
            "- unaligned, seed 4: panic: simulator-panic mutant: failover of a crash (at sim/runtime/world.rs:10:13)",
            "  `ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned`",
            "- aligned, seed 2: failed exactly-once-output",
            "Runs that failed their guarantee checks: aligned (1 of 3).",
            "Runs that panicked (bugs of ckptsim itself, left out of the metrics): unaligned (1 of 4).",
        ] {
            assert!(readme.contains(needle), "missing {needle:?} in\n{readme}");
        }
        let text = csv(&c);
        let row = text
            .lines()
            .find(|l| l.starts_with("unaligned,4,"))
            .unwrap();
        assert_eq!(
            row,
            "unaligned,4,false,unknown,,,,,,,,,,,,,,,,panic,simulator-panic mutant: failover of a crash (at sim/runtime/world.rs:10:13),ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned"
        );
    }

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        let mut c = plain();
        c.vary = Some(Vary {
            key: "operators.sink,cost".to_string(),
            values: vec!["1ms".to_string()],
            axes: Vec::new(),
        });
        let text = csv(&c);
        assert!(text.starts_with("algorithm,\"operators.sink,cost\",seed,passed,"));
        // A run with no checkpoints leaves those cells empty.
        let none = text.lines().find(|l| l.starts_with("none,")).unwrap();
        assert!(
            none.starts_with(
                "none,,1,true,exactly-once,0,0,,,,,,,10000.000,20000.000,3.000,40.000,,100,"
            ),
            "{none}"
        );
    }

    #[test]
    fn formats_numbers_fixed() {
        assert_eq!(num(1234.5678), "1235");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(0.5), "0.50");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(25000.0), "25k");
        assert_eq!(dur(880.0), "880 ms");
        assert_eq!(dur(13_200.0), "13.2 s");
        assert_eq!(ratio(15.2), "×15");
        assert_eq!(ratio(0.5), "×0.50");
        assert_eq!(size(2048.0), "2.0 MiB");
    }
}
