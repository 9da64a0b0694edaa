//! The catalogue of a stall search as files: `README.md` (totals, the
//! shapes, the stalls `deadlock_risk` did not predict, the control, panics,
//! and optionally one reproducer explained and hand-written notes),
//! `runs.csv` and `runs.json` (every run), `shapes/shape-N.toml` (a
//! scenario per shape that stalls as recorded in its header). Nothing here
//! reads a clock: the same search writes the same bytes. The folder is new,
//! empty or an earlier catalogue, and nothing is written through a link
//! (`safe_fs`).

use super::{Class, Explained, Search};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes the catalogue into `dir` (created if missing) and returns the
/// files written. `command` is the line that regenerates it.
pub fn write(
    s: &Search,
    dir: &Path,
    command: &str,
    notes: Option<&str>,
    explained: Option<&Explained>,
) -> std::io::Result<Vec<PathBuf>> {
    // The command names paths: a line break in one would end the shapes'
    // comment lines.
    let command = crate::input::printable(command);
    let command: &str = &command;
    let own = |name: &str| ["README.md", "runs.csv", "runs.json", "shapes"].contains(&name);
    let out = crate::safe_fs::OutDir::open(dir, &own)?;
    let mut files = Vec::new();
    let mut put = |name: String, text: String| -> std::io::Result<()> {
        files.push(out.write(&name, text.as_bytes())?);
        Ok(())
    };
    // Old examples of a previous search would read as this one's.
    for name in out.files_in("shapes")? {
        if name.ends_with(".toml") {
            out.remove(&format!("shapes/{name}"))?;
        }
    }
    for (i, shape) in s.shapes().iter().enumerate() {
        let (case, alg) = &shape.example;
        let c = &s.cases[*case as usize];
        let k = s
            .spec
            .runs()
            .iter()
            .position(|a| a.name() == alg)
            .unwrap_or(0);
        let r = &c.runs[k];
        let text = format!(
            "# A stall found by `{command}`: case {case}, {alg}.\n\
             # Shape: {}\n\
             #\n\
             # ckptsim: --seed {} --algorithm {alg}\n\
             # expect-fail: {}\n\
             #\n{}",
            shape.shape,
            c.seed,
            r.failed_checks.join(", "),
            c.tomls[k]
        );
        put(format!("shapes/shape-{}.toml", i + 1), text)?;
    }
    put(
        "README.md".to_string(),
        readme(s, command, notes, explained),
    )?;
    put("runs.csv".to_string(), csv(s))?;
    let json = serde_json::to_string_pretty(s).map_err(std::io::Error::other)?;
    put("runs.json".to_string(), format!("{json}\n"))?;
    Ok(files)
}

fn csv(s: &Search) -> String {
    let mut out = String::from(
        "case,seed,algorithm,class,outcome,failed_checks,checkpoints_completed,checkpoints_expired,sink_end_ns,end_ns,predicted,shape\n",
    );
    let quote = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for c in &s.cases {
        for r in &c.runs {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                c.case,
                c.seed,
                r.algorithm,
                r.class.name(),
                quote(&r.outcome),
                quote(&r.failed_checks.join(" ")),
                r.checkpoints_completed,
                r.checkpoints_expired,
                r.sink_end_ns,
                r.end_ns,
                r.predicted,
                quote(r.shape.as_deref().unwrap_or("")),
            );
        }
    }
    out
}

fn ms(ns: u64) -> String {
    format!("{}.{:03} ms", ns / 1_000_000, ns / 1_000 % 1_000)
}

fn explained_section(out: &mut String, x: &Explained) {
    let _ = writeln!(out, "## The reproducer\n");
    let _ = writeln!(
        out,
        "`{}` at seed {} under `{}`: {}, {} checkpoints completed, {} expired; the sinks took in their last record at {} of a {} run.\n",
        x.path,
        x.seed,
        x.algorithm,
        x.run.class.name(),
        x.run.checkpoints_completed,
        x.run.checkpoints_expired,
        ms(x.run.sink_end_ns),
        ms(x.run.end_ns),
    );
    let _ = writeln!(out, "### The topology\n");
    let _ = writeln!(out, "```mermaid\n{}```\n", x.mermaid);
    let _ = writeln!(
        out,
        "Forced to align (a `broadcast` or `forward` input): {}.\n",
        x.forced.join(", ")
    );
    if let Some(chain) = &x.run.chain {
        let _ = writeln!(out, "### The blocking chain\n");
        let _ = writeln!(
            out,
            "Read from the trace of checkpoint {}:\n",
            chain.checkpoint
        );
        for (i, step) in chain.steps().iter().enumerate() {
            let _ = writeln!(out, "{}. {step}", i + 1);
        }
        let _ = writeln!(
            out,
            "\nOperators that started aligning checkpoint {} and never finished: {}.\n",
            chain.checkpoint,
            chain.holding.join(", ")
        );
    }
    let _ = writeln!(out, "### The trace\n");
    let _ = writeln!(
        out,
        "The run's checkpoint events (`{} run {} --seed {} --algorithm {} --trace t.jsonl` writes every event), and when each task last processed records:\n",
        crate::program::name(),
        x.path,
        x.seed,
        x.algorithm
    );
    let _ = writeln!(out, "```text");
    for l in &x.excerpt {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "```\n");
    let _ = writeln!(out, "### When it does not happen\n");
    let _ = writeln!(
        out,
        "The same scenario and seed, changed one way at a time (each row is a run):\n"
    );
    let _ = writeln!(
        out,
        "| variant | algorithm | result | checkpoints completed | sinks' last record |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|");
    for (what, r) in &x.variants {
        let _ = writeln!(
            out,
            "| {what} | {} | {} | {} | {} |",
            r.algorithm,
            r.class.name(),
            r.checkpoints_completed,
            ms(r.sink_end_ns)
        );
    }
    out.push('\n');
}

pub(super) fn readme(
    s: &Search,
    command: &str,
    notes: Option<&str>,
    explained: Option<&Explained>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Stalls under forced alignment\n");
    let _ = writeln!(out, "Generated by:\n\n```sh\n{command}\n```\n");
    if let Some(x) = explained {
        explained_section(&mut out, x);
    }
    if let Some(notes) = notes {
        let _ = writeln!(out, "## Notes\n");
        out.push_str(notes);
        if !notes.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    search_section(&mut out, s);
    catalogue_section(&mut out, s);
    unpredicted_section(&mut out, s);
    controls_section(&mut out, s);
    let _ = writeln!(
        out,
        "Every run: [runs.csv](runs.csv), [runs.json](runs.json)."
    );
    out
}

/// What was searched, and per algorithm how its runs ended.
fn search_section(out: &mut String, s: &Search) {
    let runs = s.spec.runs();
    let _ = writeln!(out, "## The search\n");
    let _ = writeln!(
        out,
        "{} generated topologies, each with at least one operator forced to align, each run under {} at one seed (no faults, one checkpoint at a time, unlimited tolerable checkpoint failures). A run **completes** (finished, every check held), its **checkpoints fail** (checks failed, but the data flowed or had all passed), or it **stalls** (not finished, some task never consumed all its input, and the sinks took in nothing for at least a checkpoint timeout before the end).\n",
        s.cases.len(),
        runs.iter().map(|a| format!("`{}`", a.name())).collect::<Vec<_>>().join(", "),
    );
    let _ = writeln!(out, "| algorithm | completes | checkpoints fail | stall | panic | stalls predicted by `deadlock_risk` | predicted that stall |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for (alg, tally) in s.tally() {
        let get = |c: Class| tally.get(&c).copied().unwrap_or(0);
        let rows = s
            .cases
            .iter()
            .filter_map(|c| c.runs.iter().find(|r| r.algorithm == alg));
        let (mut stall_pred, mut pred, mut pred_stall) = (0, 0, 0);
        for r in rows {
            let stall = r.class == Class::Stall;
            stall_pred += u64::from(stall && r.predicted);
            pred += u64::from(r.predicted);
            pred_stall += u64::from(stall && r.predicted);
        }
        let _ = writeln!(
            out,
            "| {alg} | {} | {} | {} | {} | {stall_pred} of {} | {pred_stall} of {pred} |",
            get(Class::Completes),
            get(Class::CheckpointsFail),
            get(Class::Stall),
            get(Class::Panic),
            get(Class::Stall),
        );
    }
    out.push('\n');
}

/// The stalling shapes, each with an example and its replay command.
fn catalogue_section(out: &mut String, s: &Search) {
    let shapes = s.shapes();
    let _ = writeln!(out, "## Catalogue of stalling shapes\n");
    if shapes.is_empty() {
        let _ = writeln!(out, "No run stalled.\n");
    } else {
        let _ = writeln!(
            out,
            "Each shape is a blocking chain read from the stalled run's trace, without operator names: `T` aligns and blocks the channel from `U`, which forwarded its barrier early; `X` is an input of `T` whose barrier never arrives; `A` never snapshots (its barrier waits in line behind data it no longer reads) and is upstream of `U` and of (or is) `X`.\n"
        );
        let _ = writeln!(out, "| # | shape | algorithms | topologies | runs | predicted by `deadlock_risk` | example |");
        let _ = writeln!(out, "|---:|---|---|---:|---:|---:|---|");
        for (i, sh) in shapes.iter().enumerate() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} of {} | [shape-{}.toml](shapes/shape-{}.toml) |",
                i + 1,
                sh.shape,
                sh.algorithms.join(", "),
                sh.topologies,
                sh.runs,
                sh.predicted,
                sh.runs,
                i + 1,
                i + 1
            );
        }
        out.push('\n');
        for (i, sh) in shapes.iter().enumerate() {
            let (case, alg) = &sh.example;
            let c = &s.cases[*case as usize];
            let r = c.runs.iter().find(|r| &r.algorithm == alg);
            let _ = writeln!(out, "### Shape {}\n", i + 1);
            let _ = writeln!(out, "Example: case {case}, `{}`.\n", c.topology);
            if let Some(chain) = r.and_then(|r| r.chain.as_ref()) {
                for (k, step) in chain.steps().iter().enumerate() {
                    let _ = writeln!(out, "{}. {step}", k + 1);
                }
                out.push('\n');
            }
            let _ = writeln!(
                out,
                "Replay (from this directory): `{} run shapes/shape-{}.toml --seed {} --algorithm {alg}`\n",
                crate::program::name(),
                i + 1,
                c.seed
            );
        }
    }
}

/// The stalls `deadlock_risk` did not predict.
fn unpredicted_section(out: &mut String, s: &Search) {
    let unpredicted = s.unpredicted();
    let _ = writeln!(out, "## Stalls `deadlock_risk` did not predict\n");
    if unpredicted.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        for (c, r) in unpredicted {
            let _ = writeln!(
                out,
                "- case {} (`{}`), seed {}: {}",
                c.case,
                r.algorithm,
                c.seed,
                r.shape.as_deref().unwrap_or("")
            );
        }
        out.push('\n');
    }
}

/// Stalls of the control algorithm and panics: none expected.
fn controls_section(out: &mut String, s: &Search) {
    let others: Vec<String> = s
        .cases
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (c, r)))
        .filter(|(_, r)| {
            r.class == Class::Panic || (r.class == Class::Stall && r.algorithm == "aligned")
        })
        .map(|(c, r)| {
            format!(
                "- case {}, seed {}, `{}`: {}",
                c.case,
                c.seed,
                r.algorithm,
                r.panic.as_deref().unwrap_or("stall")
            )
        })
        .collect();
    let _ = writeln!(out, "## Stalls of the control (`aligned`) and panics\n");
    if others.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        for l in others {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}
