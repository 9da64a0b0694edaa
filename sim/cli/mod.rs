//! The commands, one file per family; `sim/main.rs` parses and dispatches.

pub(crate) mod explore;
pub(crate) mod run;
pub(crate) mod stalls;

/// Worker threads: `jobs`, or every core.
pub(crate) fn jobs(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// A progress bar on a terminal (`None` when standard error is not one).
pub(crate) fn progress_bar(total: u64, template: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

/// Runs `work` on `jobs` threads, reporting progress to `bar`.
pub(crate) fn on_threads<T: Send>(
    jobs: usize,
    bar: &Option<indicatif::ProgressBar>,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T + Send,
) -> anyhow::Result<T> {
    let progress = |n: u64| {
        if let Some(b) = bar {
            b.set_position(n);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let out = pool.install(|| work(&progress));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(out)
}
