//! What the simulator models by Flink release, as the export sees it: the
//! refusal of a job for a release that behaves otherwise than the scenario
//! asks, and the differences named in it and in the mapping table.

use super::Options;
use crate::scenario::{FlinkVersion, Scenario};

/// A job for a release without a 2.x job, or for a release whose behaviour
/// differs from the one the scenario asks for in something the simulator
/// models by release (unless `any_version`): the real run would not be the
/// simulated one.
pub(super) fn version_refusal(scenario: &Scenario, opts: &Options) -> Option<String> {
    let Some(_) = opts.release.release() else {
        return Some(format!(
            "--flink-release {}: the exported job is a Flink 2.x job",
            opts.release.name()
        ));
    };
    let asked = scenario.checkpoint.flink_version;
    let differences = version_differences(asked, opts.release);
    (!differences.is_empty() && !opts.any_version).then(|| {
        // No 2.x release runs 1.20 or the development line.
        let hint = match asked.release() {
            Some(_) => format!("export with --flink-release {}, or ", asked.name()),
            None => "no 2.x release runs it; ".to_string(),
        };
        format!(
            "checkpoint.flink_version: the scenario asks for Flink {}, the job is for Flink {}, and they differ where the simulator models them: {}; \
             {hint}pass --any-flink-version",
            asked.name(),
            opts.release.name(),
            differences.join("; "),
        )
    })
}

/// A behaviour the simulator models by release: what, whether a release
/// has it, its way with and without.
type Behaviour = (
    &'static str,
    fn(FlinkVersion) -> bool,
    &'static str,
    &'static str,
);

/// What the simulator models by release and `a` and `b` do differently,
/// each as `what: a's way in A, b's way in B`.
pub(super) fn version_differences(a: FlinkVersion, b: FlinkVersion) -> Vec<String> {
    let behaviours: [Behaviour; 4] = [
        (
            "a source's unaligned trigger (FLINK-35051)",
            FlinkVersion::urgent_unaligned_trigger,
            "an urgent mail",
            "an ordinary mail",
        ),
        (
            "a reader whose splits are all idle (FLINK-38454)",
            FlinkVersion::flushes_idle_splits,
            "flushes their largest watermark",
            "keeps the last active split's",
        ),
        (
            "watermark alignment (FLINK-39073)",
            FlinkVersion::alignment_skips_idle_splits,
            "leaves idle splits alone",
            "pauses idle splits too",
        ),
        (
            "a task whose committer feeds a global committer (FLINK-38614)",
            FlinkVersion::defers_committer_end_of_data,
            "sends EndOfData after its final checkpoint's committables",
            "sends EndOfData at its end of input",
        ),
    ];
    behaviours
        .iter()
        .filter(|(_, has, _, _)| has(a) != has(b))
        .map(|&(what, has, yes, no)| {
            let way = |v: FlinkVersion| if has(v) { yes } else { no };
            format!(
                "{what}: {} in {}, {} in {}",
                way(a),
                a.name(),
                way(b),
                b.name()
            )
        })
        .collect()
}

pub(super) fn urgency(v: FlinkVersion) -> &'static str {
    match v.urgent_unaligned_trigger() {
        true => "an urgent mail",
        false => "an ordinary mail",
    }
}
