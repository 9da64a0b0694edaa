//! `stalls`: the search for checkpoint stalls under forced alignment
//! (`crate::stalls`), written as a catalogue.

use super::*;
use crate::stalls::{self, StallSpec};

pub(crate) struct StallsArgs {
    pub(crate) cases: u64,
    pub(crate) seed: u64,
    pub(crate) algorithms: String,
    pub(crate) out: PathBuf,
    pub(crate) jobs: Option<usize>,
    pub(crate) explain: Option<PathBuf>,
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
    let explained = match &a.explain {
        None => None,
        Some(p) => {
            let sc = load_scenario(p)?;
            let text =
                crate::input::read_text(p, crate::scenario::MAX_FILE_BYTES).map_err(|e| {
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
            Some(
                stalls::explain(&shown, &sc, seed, algorithm)
                    .map_err(|e| UsageError(format!("error: --explain: {e}")))?,
            )
        }
    };
    let spec = StallSpec {
        cases: a.cases,
        seed: a.seed,
        algorithms,
    };
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
    if let Some(p) = &a.explain {
        command.push_str(&format!(" --explain {}", p.display()));
    }
    if let Some(p) = &a.notes {
        command.push_str(&format!(" --notes {}", p.display()));
    }
    command.push_str(&format!(" --out {}", a.out.display()));
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
        a.out.join("README.md").display()
    );
    emit(&text);
    Ok(0)
}
