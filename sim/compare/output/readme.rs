//! The `README.md` of a comparison: how to regenerate it, what was run, the
//! results table, the charts, an automatic reading of the numbers and the
//! optional hand-written notes.

use super::*;

/// A table cell: `|` escaped, so names and values cannot break the table.
fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `charts`: the (title, file) of every chart written.
pub(super) fn readme(c: &Comparison, charts: &[(String, String)], notes: Option<&str>) -> String {
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line(&format!("# Comparison: {}", c.scenario));
    line("");
    line("## Regenerate");
    line("");
    line("```sh");
    line(&c.command);
    line("```");
    line("");
    line("## What was run");
    line("");
    what_was_run(c).iter().for_each(|l| line(l));
    line("");
    line("## Results");
    line("");
    results_table(c).iter().for_each(|l| line(l));
    failed_runs(c).iter().for_each(|l| line(l));
    if !charts.is_empty() {
        line("## Charts");
        line("");
        for (title, file) in charts {
            line(&format!("![{title}]({file})"));
            line("");
        }
    }
    line("## Reading");
    line("");
    for l in reading(c) {
        line(&l);
    }
    if let Some(notes) = notes {
        line("");
        line("## Notes");
        line("");
        out.push_str(notes);
        if !notes.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The "What was run" list: scenario, algorithms, seeds, axis, runs.
fn what_was_run(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = |s: &str| out.push(s.to_string());
    line(&format!("- Scenario: `{}`", c.scenario));
    line(&format!("- Algorithms: {}", c.algorithms.join(", ")));
    line(&format!(
        "- Seeds: `{}` (the same inputs and crash times for every algorithm)",
        c.seeds
    ));
    match &c.vary {
        Some(v) if !v.axes.is_empty() => {
            let axes: Vec<String> = v
                .axes
                .iter()
                .map(|a| format!("`{}` = {}", a.key, a.values.join(", ")))
                .collect();
            line(&format!(
                "- Axes: every combination of {} (a row's values in this order)",
                axes.join("; ")
            ));
        }
        Some(v) => line(&format!("- Axis: `{}` = {}", v.key, v.values.join(", "))),
        None => line("- Axis: none"),
    }
    if c.swarm {
        line("- Swarm: each seed drew its configuration from the swarm ranges, the same draw for every algorithm (`ckptsim run --swarm` replays one)");
    }
    if !c.mutants.is_empty() {
        line(&format!("- Mutants: {}", c.mutants.join(", ")));
    }
    let failed = c.runs.iter().filter(|r| !r.passed).count();
    let panicked = c.runs.iter().filter(|r| r.panic.is_some()).count();
    if panicked == 0 {
        line(&format!(
            "- Runs: {} ({} failed their checks)",
            c.runs.len(),
            failed
        ));
    } else {
        line(&format!(
            "- Runs: {} ({} failed their checks, {panicked} panicked)",
            c.runs.len(),
            failed - panicked
        ));
    }
    out
}

/// The results table and the metrics' meanings.
fn results_table(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = |s: &str| out.push(s.to_string());
    let (header, rows) = results(c);
    let cells = |row: &[String]| row.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ");
    let header: Vec<String> = header
        .iter()
        .enumerate()
        .map(|(i, h)| match (i, &c.vary) {
            (1, Some(_)) => format!("`{h}`"),
            _ => h.clone(),
        })
        .collect();
    line(&format!("| {} |", header.join(" | ")));
    let text_columns = if c.vary.is_some() { 2 } else { 1 };
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if i < text_columns { "---" } else { "---:" })
        .collect();
    line(&format!("|{}|", rule.join("|")));
    for row in &rows {
        line(&format!("| {} |", cells(row)));
    }
    line("");
    line("Per-checkpoint metrics (duration, alignment, sizes) and recovery are pooled over all seeds; per-run metrics (checkpoints, throughput, latency, replayed) are medians over seeds. `-`: no data (e.g. no completed checkpoint, nothing committed, no failure).");
    line("");
    let watermarks = match crate::compare::has_event_time(c) {
        true => crate::compare::WATERMARK_METRICS,
        false => &[],
    };
    for (key, description) in METRICS.iter().chain(watermarks) {
        line(&format!("- `{key}`: {description}"));
    }
    line("");
    out
}

/// The failed runs, each with its replay line; nothing if none failed.
fn failed_runs(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = |s: &str| out.push(s.to_string());
    let failures: Vec<_> = c.runs.iter().filter(|r| !r.passed).collect();
    if !failures.is_empty() {
        line("## Failed runs");
        line("");
        line("Each with its replay line. A run that panicked (a bug of ckptsim itself) is left out of every metric above.");
        line("");
        for r in failures {
            let at = r
                .vary
                .as_ref()
                .map(|v| format!(", {} = {}", c.vary.as_ref().map_or("", |x| &x.key), v))
                .unwrap_or_default();
            let what = match &r.panic {
                Some(p) => format!("panic: {p}"),
                None => format!("failed {}", r.failed_checks.join(", ")),
            };
            line(&format!(
                "- {}, seed {}{at}: {}",
                r.algorithm,
                r.seed,
                md(&what)
            ));
            if let Some(replay) = &r.replay {
                line(&format!("  `{replay}`"));
            }
        }
        line("");
    }
    out
}

/// The automatic reading, as Markdown lines.
fn reading(c: &Comparison) -> Vec<String> {
    let algs = algorithms(c);
    let mut out = Vec::new();
    match &c.vary {
        None => {
            let groups: Vec<(String, Option<&Group>)> = algs
                .iter()
                .map(|a| (a.clone(), group(c, a, None)))
                .collect();
            out.extend(reading_at(&groups));
        }
        Some(v) => {
            let (Some(first), Some(last)) = (v.values.first(), v.values.last()) else {
                out.push("- The axis has no values.".to_string());
                return out;
            };
            out.push(format!(
                "Along `{}`, from {first} to {last} (medians):",
                v.key
            ));
            out.push(String::new());
            for a in &algs {
                let (g0, g1) = (group(c, a, Some(first)), group(c, a, Some(last)));
                let change = |key: &str, f: fn(f64) -> String| {
                    let (x, y) = (p50(g0, key), p50(g1, key));
                    let mut s = format!("{} → {}", or_dash(x, f), or_dash(y, f));
                    match (x, y) {
                        (Some(x), Some(y)) if x > 0.0 => {
                            s.push_str(&format!(" ({})", ratio(y / x)))
                        }
                        _ => {}
                    }
                    s
                };
                out.push(format!(
                    "- {a}: duration {}; in-flight {}; throughput {}",
                    change("checkpoint_duration_ms", dur),
                    change("in_flight_kib", size),
                    change("throughput_rps", rate),
                ));
            }
            for value in if first == last {
                vec![first]
            } else {
                vec![first, last]
            } {
                out.push(String::new());
                out.push(format!("At `{}` = {value}:", v.key));
                out.push(String::new());
                let groups: Vec<(String, Option<&Group>)> = algs
                    .iter()
                    .map(|a| (a.clone(), group(c, a, Some(value))))
                    .collect();
                out.extend(reading_at(&groups));
            }
        }
    }
    out
}

/// The lowest and the highest of `(algorithm, value)` (first on ties).
fn extremes<'a>(values: &[Named<'a>]) -> Option<(Named<'a>, Named<'a>)> {
    let first = *values.first()?;
    let (mut lo, mut hi) = (first, first);
    for &(a, v) in values {
        if v < lo.1 {
            lo = (a, v);
        }
        if v > hi.1 {
            hi = (a, v);
        }
    }
    Some((lo, hi))
}

/// "lowest X (a), highest Y (b): ×r" over the algorithms with data.
fn lowest_highest(what: &str, values: &[(&str, f64)], f: fn(f64) -> String) -> Option<String> {
    let ((lo_a, lo), (hi_a, hi)) = extremes(values)?;
    if values.len() == 1 {
        return Some(format!("- {what}: only {lo_a} has data ({}).", f(lo)));
    }
    if lo == hi {
        return Some(format!(
            "- {what}: {} for every algorithm with data.",
            f(lo)
        ));
    }
    let mut s = format!(
        "- {what}: lowest **{lo_a}** ({}), highest **{hi_a}** ({})",
        f(lo),
        f(hi)
    );
    if lo > 0.0 {
        s.push_str(&format!(", {} apart", ratio(hi / lo)));
    }
    s.push('.');
    Some(s)
}

/// The reading for one set of groups (one per algorithm).
fn reading_at(groups: &[(String, Option<&Group>)]) -> Vec<String> {
    let mut out = Vec::new();
    let values = |key: &str| -> Vec<(&str, f64)> {
        groups
            .iter()
            .filter_map(|(a, g)| p50(*g, key).map(|v| (a.as_str(), v)))
            .collect()
    };
    let durations = values("checkpoint_duration_ms");
    match lowest_highest("Median checkpoint duration", &durations, dur) {
        Some(s) => out.push(s),
        None => out.push("- No algorithm completed a checkpoint.".to_string()),
    }
    let without: Vec<&str> = groups
        .iter()
        .filter(|(_, g)| p50(*g, "checkpoint_duration_ms").is_none())
        .map(|(a, _)| a.as_str())
        .collect();
    if !without.is_empty() && !durations.is_empty() {
        out.push(format!(
            "- No completed checkpoints: {}.",
            without.join(", ")
        ));
    }
    // In-flight data: whoever persisted any, with the median and the max.
    let persisted: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| {
            let m = max(*g, "in_flight_kib").filter(|&m| m > 0.0)?;
            let median = p50(*g, "in_flight_kib").unwrap_or(0.0);
            Some(format!("{a} (median {}, max {})", size(median), size(m)))
        })
        .collect();
    if persisted.is_empty() {
        if !durations.is_empty() {
            out.push("- No algorithm persisted in-flight data.".to_string());
        }
    } else {
        out.push(format!(
            "- Persists in-flight data: {}.",
            persisted.join(", ")
        ));
    }
    // Throughput relative to the best.
    let throughput = values("throughput_rps");
    if let Some((_, (best_a, best))) = extremes(&throughput) {
        if best > 0.0 && throughput.len() > 1 {
            out.push(format!(
                "- Throughput (median over seeds) relative to the best, **{best_a}** ({}):",
                rate(best)
            ));
            for &(a, v) in &throughput {
                if a != best_a {
                    out.push(format!(
                        "  - {a}: {:.0}% of {best_a} ({})",
                        v / best * 100.0,
                        rate(v)
                    ));
                }
            }
        }
    }
    if let Some(s) = lowest_highest("End-to-end latency p99", &values("latency_p99_ms"), dur) {
        out.push(s);
    }
    if let Some(s) = lowest_highest("Median recovery time", &values("recovery_ms"), dur) {
        out.push(s);
    }
    let failing: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| {
            g.filter(|g| g.failed_runs > g.panicked_runs)
                .map(|g| (a, g))
        })
        .map(|(a, g)| format!("{a} ({} of {})", g.failed_runs - g.panicked_runs, g.runs))
        .collect();
    let panicking: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| g.filter(|g| g.panicked_runs > 0).map(|g| (a, g)))
        .map(|(a, g)| format!("{a} ({} of {})", g.panicked_runs, g.runs))
        .collect();
    if failing.is_empty() && panicking.is_empty() {
        out.push("- Every run passed its guarantee checks.".to_string());
    }
    if !failing.is_empty() {
        out.push(format!(
            "- Runs that failed their guarantee checks: {}.",
            failing.join(", ")
        ));
    }
    if !panicking.is_empty() {
        out.push(format!(
            "- Runs that panicked (bugs of ckptsim itself, left out of the metrics): {}.",
            panicking.join(", ")
        ));
    }
    out
}

/// The results table: its header and one row per group, as text cells
/// (the README writes them as Markdown, `compare` prints them aligned).
pub(crate) fn results(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["algorithm".to_string()];
    if let Some(v) = &c.vary {
        header.push(v.key.clone());
    }
    header.extend(
        [
            "checkpoints p50",
            "duration p50 ms",
            "duration p99 ms",
            "alignment p50 ms",
            "state KiB p50",
            "in-flight KiB p50",
            "throughput p50 rec/s",
            "input p50 rec/s",
            "latency p50 ms",
            "latency p99 ms",
            "recovery p50 ms",
            "replayed p50",
        ]
        .map(String::from),
    );
    let local = crate::compare::has_local(c.groups.iter().map(|g| &g.algorithm));
    if local {
        header.extend(["forced p50", "rolled back p50", "protocol KiB p50"].map(String::from));
    }
    let event_time = crate::compare::has_event_time(c);
    if event_time {
        header.extend(["watermark lag p50 ms", "watermark lag p99 ms"].map(String::from));
    }
    let files = crate::compare::has_files(c);
    if files {
        header.extend(["checkpointed KiB p50", "full KiB p50", "restore p50 ms"].map(String::from));
    }
    header.push("failed runs".to_string());
    let rows = c
        .groups
        .iter()
        .map(|g| {
            let g_ = Some(g);
            let mut row = vec![g.algorithm.clone()];
            if c.vary.is_some() {
                row.push(g.vary.clone().unwrap_or_default());
            }
            row.extend([
                or_dash(p50(g_, "checkpoints_completed"), count),
                or_dash(p50(g_, "checkpoint_duration_ms"), num),
                or_dash(p99(g_, "checkpoint_duration_ms"), num),
                or_dash(p50(g_, "alignment_ms"), num),
                or_dash(p50(g_, "state_kib"), num),
                or_dash(p50(g_, "in_flight_kib"), num),
                or_dash(p50(g_, "throughput_rps"), count),
                or_dash(p50(g_, "input_rps"), count),
                or_dash(p50(g_, "latency_p50_ms"), num),
                or_dash(p50(g_, "latency_p99_ms"), num),
                or_dash(p50(g_, "recovery_ms"), num),
                or_dash(p50(g_, "records_replayed"), count),
            ]);
            if local {
                row.extend([
                    or_dash(p50(g_, "forced_checkpoints"), count),
                    or_dash(p50(g_, "rolled_back_checkpoints"), count),
                    or_dash(p50(g_, "protocol_kib"), num),
                ]);
            }
            if event_time {
                row.extend([
                    or_dash(p50(g_, "watermark_lag_p50_ms"), num),
                    or_dash(p50(g_, "watermark_lag_p99_ms"), num),
                ]);
            }
            if files {
                row.extend([
                    or_dash(p50(g_, "checkpointed_kib"), num),
                    or_dash(p50(g_, "full_kib"), num),
                    or_dash(p50(g_, "restore_ms"), num),
                ]);
            }
            row.push(format!("{}/{}", g.failed_runs, g.runs));
            row
        })
        .collect();
    (header, rows)
}

/// The results table with aligned columns, for a terminal: the text
/// columns left-aligned, the numbers right-aligned.
pub fn results_text(c: &Comparison) -> String {
    let (header, rows) = results(c);
    let text_columns = if c.vary.is_some() { 2 } else { 1 };
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            let cells = rows.iter().map(|r| r[i].chars().count());
            cells.chain([header[i].chars().count()]).max().unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| match i < text_columns {
                true => format!("{cell:<w$}", w = widths[i]),
                false => format!("{cell:>w$}", w = widths[i]),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
