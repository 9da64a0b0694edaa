//! Wall-clock measurement for reports (events per second, run time). This is
//! the one place that reads a real clock, and nothing it returns ever feeds
//! back into a simulation, except that `--max-wall` may end a run (outcome
//! `wall-limit`: incomplete, never a verdict; see `runtime::limits`). It
//! depends on nothing in the crate, so the harness, the reports and the CLI
//! can all time what they do.

#[allow(clippy::disallowed_methods)]
fn now() -> std::time::Instant {
    std::time::Instant::now()
}

pub struct Stopwatch(std::time::Instant);

impl Stopwatch {
    pub fn start() -> Stopwatch {
        Stopwatch(now())
    }
    pub fn elapsed_ns(&self) -> u64 {
        now().duration_since(self.0).as_nanos() as u64
    }
}
