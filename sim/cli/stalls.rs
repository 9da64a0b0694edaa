//! `stalls`: the search for checkpoint stalls under forced alignment
//! (`crate::stalls`), written as a catalogue.

use super::*;
use crate::stalls::{self, StallSpec};

#[derive(clap::Args)]
pub(crate) struct StallsArgs {
    /// Generated topologies to run.
    #[arg(long, default_value_t = 100)]
    pub(crate) cases: u64,
    /// Fixes every generated topology and simulation seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Algorithms to search, comma separated (`aligned` always runs as
    /// the control).
    #[arg(long, default_value = "unaligned,aligned-timeout")]
    pub(crate) algorithms: String,
    /// The Flink release whose task thread every case follows
    /// (`[checkpoint] flink_version`: 1.20, 2.0, 2.1, 2.2 or 2.3).
    #[arg(long, default_value = "2.3", value_parser = flink_version)]
    pub(crate) flink_version: crate::scenario::FlinkVersion,
    /// The output directory.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Worker threads, 1 to 1024 (default: every core).
    #[arg(long, value_parser = jobs_range())]
    pub(crate) jobs: Option<usize>,
    /// A reproducer (seed and algorithm from its `# ckptsim:` line) to
    /// explain in the README: topology, blocking chain, trace, variants.
    #[arg(long, value_name = "FILE")]
    pub(crate) explain: Option<PathBuf>,
    /// A Markdown file whose text is added to the README as notes.
    #[arg(long)]
    pub(crate) notes: Option<PathBuf>,
}

pub(crate) fn stalls_cmd(a: StallsArgs) -> Result<u8> {
    if !(1..=stalls::MAX_CASES).contains(&a.cases) {
        return Err(UsageError(format!(
            "error: --cases {}: must be between 1 and {}",
            a.cases,
            stalls::MAX_CASES
        ))
        .into());
    }
    let mut algorithms = Vec::new();
    for name in a.algorithms.split(',').map(str::trim) {
        let alg = Algorithm::from_name(name).ok_or_else(|| {
            UsageError(format!(
                "error: --algorithms: unknown algorithm `{name}`\n  help: known algorithms: {}",
                Algorithm::names()
            ))
        })?;
        if !algorithms.contains(&alg) {
            algorithms.push(alg);
        }
    }
    let notes = a
        .notes
        .as_ref()
        .map(|p| {
            crate::input::read_text(p, NOTES_BYTES).map_err(|e| {
                UsageError(format!("error: --notes: cannot read {}: {e}", p.display()))
            })
        })
        .transpose()?;
    let explained = a.explain.as_deref().map(explain_reproducer).transpose()?;
    let spec = StallSpec {
        cases: a.cases,
        seed: a.seed,
        algorithms,
        flink_version: a.flink_version,
    };
    // A link in the folder is refused before the search, not after it.
    crate::safe_fs::OutDir::check_links(&a.out).map_err(|e| UsageError(format!("error: {e}")))?;
    let command = stalls_command_line(&a, &spec);
    let jobs = jobs(a.jobs);
    let bar = progress_bar(spec.cases, "{bar:40} {pos}/{len} cases  eta {eta}");
    let search = on_threads(jobs, &bar, |progress| stalls::search(&spec, progress))?;
    stalls::output::write(
        &search,
        &a.out,
        &command,
        notes.as_deref(),
        explained.as_ref(),
    )
    .map_err(|e| UsageError(format!("error: cannot write {}: {e}", a.out.display())))?;
    emit(&search_text(&search, &a.out));
    Ok(0)
}

/// `--explain FILE`: the reproducer run at the seed and under the algorithm
/// its `# ckptsim:` line names, explained.
fn explain_reproducer(p: &Path) -> Result<stalls::Explained> {
    let sc = load_scenario(p)?;
    let text = crate::input::read_text(p, crate::scenario::MAX_FILE_BYTES).map_err(|e| {
        UsageError(format!(
            "error: --explain: cannot read {}: {e}",
            p.display()
        ))
    })?;
    let (args, _) = crate::shrink::reproducer_header(&text);
    let (mut seed, mut algorithm) = (0, sc.checkpoint.algorithm);
    let words: Vec<String> = args
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    for w in words.windows(2) {
        match w[0].as_str() {
            "--seed" => {
                seed = w[1].parse().map_err(|_| {
                    UsageError(format!(
                        "error: {}: `# ckptsim:` line: bad seed `{}`",
                        p.display(),
                        w[1]
                    ))
                })?
            }
            "--algorithm" => algorithm = parse_algorithm(Some(w[1].clone()), &sc)?,
            _ => {}
        }
    }
    let shown = p.display().to_string();
    let explained = stalls::explain(&shown, &sc, seed, algorithm)
        .map_err(|e| UsageError(format!("error: --explain: {e}")))?;
    Ok(explained)
}

/// The command line that writes the catalogue again, as its README shows it.
fn stalls_command_line(a: &StallsArgs, spec: &StallSpec) -> String {
    let mut command = format!(
        "{} stalls --cases {} --seed {} --algorithms {}",
        crate::program::name(),
        spec.cases,
        spec.seed,
        spec.algorithms
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(",")
    );
    if !spec.flink_version.is_newest() {
        command.push_str(&format!(" --flink-version {}", spec.flink_version.name()));
    }
    if let Some(p) = &a.explain {
        command.push_str(&format!(
            " --explain {}",
            crate::input::shell_word(&p.display().to_string())
        ));
    }
    if let Some(p) = &a.notes {
        command.push_str(&format!(
            " --notes {}",
            crate::input::shell_word(&p.display().to_string())
        ));
    }
    command.push_str(&format!(
        " --out {}",
        crate::input::shell_word(&a.out.display().to_string())
    ));
    command
}

/// The search's tally per algorithm and its shapes, as printed.
fn search_text(search: &stalls::Search, out: &Path) -> String {
    let mut text = String::new();
    for (alg, tally) in search.tally() {
        let parts: Vec<String> = stalls::Class::ALL
            .iter()
            .map(|c| format!("{} {}", tally.get(c).copied().unwrap_or(0), c.name()))
            .collect();
        let _ = writeln!(text, "{alg:<16} {}", parts.join(", "));
    }
    let shapes = search.shapes();
    let _ = writeln!(text, "shapes           {}", shapes.len());
    for (i, s) in shapes.iter().enumerate() {
        let _ = writeln!(
            text,
            "  {}. {} ({} topologies, {} of {} runs predicted)",
            i + 1,
            s.shape,
            s.topologies,
            s.predicted,
            s.runs
        );
    }
    let _ = writeln!(text, "unpredicted      {}", search.unpredicted().len());
    let _ = writeln!(
        text,
        "wrote            {}",
        super::shown(&out.join("README.md"))
    );
    text
}

/// `--flink-version`: a release `[checkpoint] flink_version` knows.
fn flink_version(text: &str) -> std::result::Result<crate::scenario::FlinkVersion, String> {
    crate::scenario::FlinkVersion::ALL
        .into_iter()
        .find(|v| v.name() == text)
        .ok_or_else(|| {
            let known: Vec<&str> = crate::scenario::FlinkVersion::ALL
                .iter()
                .map(|v| v.name())
                .collect();
            format!(
                "unknown Flink version `{text}` (known: {})",
                known.join(", ")
            )
        })
}
