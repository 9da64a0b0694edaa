//! `ckptsim flink-export`: a scenario as a runnable Flink 2.x DataStream job,
//! and `ckptsim flink-check`: the real run's REST samples and committed output
//! turned into ckptsim's metrics and checked against the same oracle.
//!
//! | module | what |
//! |---|---|
//! | this one | what can be exported (the refusals), what maps how (the mapping table), the files |
//! | `java` | the generated `CkptsimJob.java`: configuration and topology |
//! | `real` | reading a real run back: metrics with ckptsim's names, the checks, the side-by-side table |
//!
//! The Java classes every job shares (`sim/export/java/*.java`: the FLIP-27
//! source over the simulated records, the operator kinds, the Sink V2
//! writer and committer on a directory store, the MiniCluster and its REST
//! sampler) are written next to the generated one; `run.sh` fetches Flink's
//! jars (the `apache-flink-libraries` wheel), compiles with `javac` and runs.
//! Everything written is a function of the scenario, the seed and the
//! options: two exports are identical byte for byte.

use crate::check::oracle::Oracle;
use crate::harness;
use crate::model::operator::BuiltinFactory;
use crate::model::record::{Lineage, RecordSizes};
use crate::model::Workload;
use crate::mutant::Mutants;
use crate::runtime::output::CrashPoint;
use crate::runtime::RunConfig;
use crate::scenario::{
    Algorithm, FailoverStrategy, FlinkVersion, InputOrder, Partitioning, RestartStrategy, Scenario,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::Arc;

mod event_time;
mod folder;
mod java;
pub mod lineage;
pub use folder::{write, RUN_LOG};
pub mod sweep;
mod versions;
use versions::{urgency, version_differences, version_refusal};
pub mod real;

/// A string as the one Java literal the generated job holds it in (no
/// input can leave it; the proof is at the function).
pub use java::string as java_string;

/// The Flink version `run.sh` fetches by default (`--flink-release`
/// chooses another).
pub const FLINK_VERSION: &str = "2.3.0";

pub use crate::model::kinds::Fidelity;
use crate::model::kinds::{Flink, Role, SinkRole};

/// One row of the mapping table: a scenario key, how it maps, and to what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    pub key: String,
    pub fidelity: Fidelity,
    pub flink: String,
}

/// What `flink-export` was asked for.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    pub algorithm: Algorithm,
    /// Sources never end: record `o` of a partition is its record
    /// `o % n` (to see a freeze or steady-state timings on real Flink).
    pub repeat: bool,
    /// With `repeat`: how long the real job runs before it is cancelled.
    pub duration_ms: u64,
    /// The longest a real run may take (a bounded job that has not
    /// finished by then fails liveness).
    pub limit_ms: u64,
    /// Mutants the exported job carries (those in [`EXPORTABLE_MUTANTS`]);
    /// the simulated run carries them too.
    pub mutants: Mutants,
    /// Drop the faults a real job cannot be given (every one but task
    /// crashes) instead of refusing the scenario; the simulated side runs
    /// without them too, and the mapping names each one dropped.
    pub drop_faults: bool,
    /// One task manager, every channel local (no receiver-side buffers);
    /// by default every chain's subtask has a task manager of its own, so
    /// that every channel is remote, as the simulator's are.
    pub local_channels: bool,
    /// The Flink release the job is for (`run.sh` fetches it).
    pub release: FlinkVersion,
    /// Export although the scenario's `[checkpoint] flink_version` asks for
    /// another release's behaviour than `release` has.
    pub any_version: bool,
}

impl Options {
    /// An export of `seed` under `algorithm` with every other option at
    /// the command's default (`flink-export` without flags).
    pub fn new(seed: u64, algorithm: Algorithm) -> Options {
        Options {
            seed,
            algorithm,
            repeat: false,
            duration_ms: 60_000,
            limit_ms: 600_000,
            mutants: Mutants::NONE,
            drop_faults: false,
            local_channels: false,
            release: FlinkVersion::default(),
            any_version: false,
        }
    }
}

/// The mutants an exported job can carry: each breaks the Java job the way
/// it breaks the simulated one, so that a real run shows the check of
/// `flink-check` catching it.
pub const EXPORTABLE_MUTANTS: [&str; 6] = [
    "no-source-rewind",
    "source-offset-off-by-one",
    "sink-ack-without-flush",
    "upsert-batch-reordered",
    "window-no-flush-at-end",
    "writer-keeps-last-transaction",
];

/// A sink of the job and how its committed output is judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinkInfo {
    pub name: String,
    /// Transactional (a Sink V2 committer): exactly-once.
    pub transactional: bool,
    /// Its values are compared exactly; otherwise by key and count only
    /// (an operator upstream depends on arrival order, which differs).
    pub values_exact: bool,
    /// An upsert sink: judged by the table it leaves (`store/upsert/`).
    #[serde(default)]
    pub upsert: bool,
    /// Judged by lineage too (`expected-lineage.tsv`; see `lineage`).
    #[serde(default)]
    pub lineage: bool,
    /// Why its output is not judged at all (a matter of the real run's
    /// timing: late records, processing-time timers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unjudged: Option<String>,
}

/// `export.json`: what `flink-check` needs to judge the real run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub scenario: String,
    pub seed: u64,
    pub algorithm: String,
    pub flink_version: String,
    pub repeat: bool,
    pub duration_ms: u64,
    pub limit_ms: u64,
    /// Mutants the job carries (none in exports that predate them).
    #[serde(default)]
    pub mutants: Vec<String>,
    /// The guarantee the real run is checked against.
    pub guarantee: String,
    pub sinks: Vec<SinkInfo>,
    /// The checkpoint interval (none: checkpointing off) and timeout.
    pub checkpoint_interval_ms: Option<u64>,
    pub checkpoint_timeout_ms: u64,
    /// The simulated run's crashes, injected at the same record counts.
    pub crashes: Vec<CrashPoint>,
    /// Every operator's id, by index (what `crashes` name).
    #[serde(default)]
    pub operators: Vec<String>,
    pub mapping: Vec<Mapping>,
}

/// A scenario exported: every file (path relative to the output
/// directory, content) and the manifest.
pub struct Export {
    pub files: Vec<(String, String)>,
    pub manifest: Manifest,
}

/// The shared Java classes, written into every export.
const JAVA: [(&str, &str); 11] = [
    ("Mutants.java", include_str!("java/Mutants.java")),
    ("Rec.java", include_str!("java/Rec.java")),
    ("Cost.java", include_str!("java/Cost.java")),
    ("Crash.java", include_str!("java/Crash.java")),
    ("RecordSource.java", include_str!("java/RecordSource.java")),
    ("CkptOp.java", include_str!("java/CkptOp.java")),
    ("StoreSink.java", include_str!("java/StoreSink.java")),
    ("Harness.java", include_str!("java/Harness.java")),
    ("Windows.java", include_str!("java/Windows.java")),
    ("TimerSum.java", include_str!("java/TimerSum.java")),
    (
        "WatermarkProbe.java",
        include_str!("java/WatermarkProbe.java"),
    ),
];

const RUN_SH: &str = include_str!("run.sh");

/// Why `scenario` cannot be exported with `opts`: what Flink cannot
/// express, the release asked for, and mutants the Java job lacks.
fn all_refusals(scenario: &Scenario, opts: &Options) -> Vec<String> {
    let mut refusals = refusals(scenario, opts.algorithm);
    refusals.extend(version_refusal(scenario, opts));
    for m in opts.mutants.names() {
        if !EXPORTABLE_MUTANTS.contains(&m) {
            refusals.push(format!(
                "--mutant {m}: not in the Java job (exportable: {})",
                EXPORTABLE_MUTANTS.join(", ")
            ));
        }
    }
    refusals
}

/// Exports `scenario` (`file` names it in messages), or every reason it
/// cannot be, each as `key: why`.
pub fn export(scenario: &Scenario, opts: &Options) -> Result<Export, Vec<String>> {
    let (kept, dropped) = match opts.drop_faults {
        true => without_faults(scenario),
        false => (scenario.clone(), vec![]),
    };
    let kept = match opts.local_channels {
        true => one_worker(&kept),
        false => kept,
    };
    let scenario = &kept;
    let refusals = all_refusals(scenario, opts);
    if !refusals.is_empty() {
        return Err(refusals);
    }
    let cfg = RunConfig {
        seed: opts.seed,
        algorithm: opts.algorithm,
        mutants: opts.mutants,
        record_trace: false,
    };
    let execution = harness::execute(scenario, &cfg);
    let crashes = execution.output.crash_points.clone();
    let summary = crate::report::Summary::new(
        &scenario.name,
        opts.seed,
        opts.algorithm.name(),
        &opts.mutants.names(),
        &execution,
    );
    let mut summary = summary;
    // Wall-clock readings: an export is a function of its inputs alone.
    summary.wall_ms = 0.0;
    summary.events_per_sec = 0.0;
    let simulated = serde_json::to_string_pretty(&summary).unwrap_or_default();
    let workload = Workload::generate(scenario, opts.seed);
    let mut files = vec![];
    for (name, text) in JAVA {
        files.push((format!("java/{name}"), text.to_string()));
    }
    files.push((
        "java/CkptsimJob.java".to_string(),
        java::job(scenario, opts, &crashes),
    ));
    files.extend(data_files(scenario, &workload, opts.seed));
    let sinks = sinks(scenario, opts.seed, opts.algorithm);
    if !opts.repeat {
        files.push(("expected.tsv".to_string(), expected(scenario, opts.seed)));
        if sinks.iter().any(|s| s.lineage) {
            files.push((
                lineage::EXPECTED.to_string(),
                lineage::expected_tsv(scenario, opts.seed, &sinks),
            ));
        }
    }
    files.push(("simulated.json".to_string(), simulated + "\n"));
    // The scenario itself, every key written: a real run that fails can be
    // replayed, shrunk and explored in the simulator.
    files.push((
        "scenario.toml".to_string(),
        crate::scenario::write::to_toml(scenario),
    ));
    files.push(("run.sh".to_string(), run_sh(release(opts))));
    files.push(("log4j2.properties".to_string(), LOG4J.to_string()));
    let mut mapping = mapping(scenario, opts);
    for key in dropped {
        mapping.push(Mapping {
            key: key.to_string(),
            fidelity: Fidelity::NotAtAll,
            flink: "dropped (--drop-faults): a real job cannot be given it; the simulated side runs without it too".into(),
        });
    }
    files.push((
        "MAPPING.md".to_string(),
        mapping_md(scenario, opts, &mapping),
    ));
    let guarantee = scenario.expected_guarantee(opts.algorithm);
    let manifest = Manifest {
        scenario: scenario.name.clone(),
        seed: opts.seed,
        algorithm: opts.algorithm.name().to_string(),
        flink_version: release(opts).to_string(),
        repeat: opts.repeat,
        duration_ms: opts.duration_ms,
        limit_ms: opts.limit_ms,
        mutants: opts.mutants.names().iter().map(|m| m.to_string()).collect(),
        guarantee: guarantee.name().to_string(),
        sinks,
        checkpoint_interval_ms: scenario.checkpoint.interval.map(|d| d.nanos() / 1_000_000),
        checkpoint_timeout_ms: scenario.checkpoint.timeout.nanos() / 1_000_000,
        crashes,
        operators: scenario.operators.iter().map(|o| o.id.clone()).collect(),
        mapping,
    };
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    files.push(("export.json".to_string(), text + "\n"));
    files.sort();
    Ok(Export { files, manifest })
}

/// Logging of the real run: Flink's log at INFO into real/flink.log.
const LOG4J: &str = "\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:ckptsim.out}/real/flink.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-60c %x - %m%n
";

/// Everything in `scenario` that a Flink job cannot express, as
/// `key: why` (empty: it can be exported).
/// The release an export is for (`FLINK_VERSION` for a version without
/// a 2.x release, which [`version_refusal`] refuses).
fn release(opts: &Options) -> &'static str {
    opts.release.release().unwrap_or(FLINK_VERSION)
}

/// `run.sh`, fetching `release` by default.
fn run_sh(release: &str) -> String {
    let default = format!("version=${{CKPTSIM_FLINK_VERSION:-{FLINK_VERSION}}}");
    RUN_SH.replacen(
        &default,
        &format!("version=${{CKPTSIM_FLINK_VERSION:-{release}}}"),
        1,
    )
}

pub fn refusals(scenario: &Scenario, algorithm: Algorithm) -> Vec<String> {
    let mut out = vec![];
    let mut no = |key: &str, why: &str| out.push(format!("{key}: {why}"));
    if flink_mode(algorithm).is_none() {
        no(
            "algorithm",
            &format!(
                "`{}` has no Flink counterpart (Flink checkpoints aligned, unaligned, \
                 aligned with a timeout, or at-least-once)",
                algorithm.name()
            ),
        );
    }
    for op in &scenario.operators {
        let key = format!("operators.{}.kind", op.id);
        if let Flink::Refused(why) = op.kind.flink() {
            no(&key, &format!("`{}`: {why}", op.kind.name()));
        }
        if op.kind.is_keyed() {
            let ins = scenario
                .edges
                .iter()
                .filter(|e| scenario.op(e.to).id == op.id);
            if ins.clone().any(|e| e.partitioning != Partitioning::Hash) {
                no(
                    &key,
                    "a keyed operator with an input that is not `hash` (Flink keys state by keyBy)",
                );
            }
        }
    }
    if scenario.edges.iter().any(|e| e.feedback) {
        no(
            "edges.feedback",
            "a cycle (Flink 2.x has no DataStream iterations)",
        );
    }
    if !scenario.savepoints.is_empty() {
        no("savepoints", "savepoints by hand are not exported");
    }
    if scenario.cancel_at.is_some() {
        no("cancel_at", "a cancelled job is not exported");
    }
    if scenario.swarm.as_ref().is_some_and(|s| s.enabled) {
        no(
            "swarm.enabled",
            "every run draws its own configuration; export a drawn scenario instead",
        );
    }
    if !scenario.replay.mutants.is_empty() {
        no(
            "replay.mutants",
            "a mutant breaks the simulator's runtime, not the job",
        );
    }
    // The faults `--drop-faults` would drop: every one but task crashes.
    for key in without_faults(scenario).1 {
        no(
            key,
            "this fault cannot be injected into a real job (only task crashes are; --drop-faults exports the job without it)",
        );
    }
    out
}

/// `scenario` on one worker with local channels (`--local-channels`): the
/// simulated side of the export runs as the real one, every channel local.
fn one_worker(scenario: &Scenario) -> Scenario {
    let mut s = crate::scenario::ScenarioData::clone(scenario);
    let widest = s.operators.iter().map(|o| o.parallelism).max().unwrap_or(1);
    let cluster = s
        .cluster
        .get_or_insert_with(|| crate::scenario::ClusterSpec {
            workers: 1,
            slots_per_worker: widest,
            placement: crate::scenario::Placement::Pack,
            heartbeat_timeout: crate::engine::SimDuration::from_millis(50),
            replacement_delay: crate::engine::SimDuration::from_millis(100),
            local_channels: true,
        });
    cluster.workers = 1;
    cluster.slots_per_worker = cluster.slots_per_worker.max(widest);
    cluster.local_channels = true;
    crate::scenario::check(&s, &scenario.name).expect("a valid scenario on one worker is valid")
}

/// `scenario` without the faults a real job cannot be given, and the keys
/// of those it had.
fn without_faults(scenario: &Scenario) -> (Scenario, Vec<&'static str>) {
    let mut s = crate::scenario::ScenarioData::clone(scenario);
    let f = &mut s.faults;
    let mut dropped = vec![];
    let mut drop = |key: &'static str, had: bool| {
        if had {
            dropped.push(key);
        }
    };
    drop("faults.coordinator", f.coordinator.take().is_some());
    drop(
        "faults.worker_crashes",
        !std::mem::take(&mut f.worker_crashes).is_empty(),
    );
    drop("faults.random_workers", f.random_workers.take().is_some());
    drop(
        "faults.partitions",
        !std::mem::take(&mut f.partitions).is_empty(),
    );
    drop(
        "faults.latency_spikes",
        !std::mem::take(&mut f.latency_spikes).is_empty(),
    );
    drop("faults.storage", f.storage.take().is_some());
    drop(
        "faults.storage_failures",
        !std::mem::take(&mut f.storage_failures).is_empty(),
    );
    drop("faults.notifications", f.notifications.take().is_some());
    drop(
        "faults.lost_notifications",
        !std::mem::take(&mut f.lost_notifications).is_empty(),
    );
    drop("faults.operator_events", f.operator_events.take().is_some());
    drop(
        "faults.slow_tasks",
        !std::mem::take(&mut f.slow_tasks).is_empty(),
    );
    drop("faults.broker", !std::mem::take(&mut f.broker).is_empty());
    let s = crate::scenario::check(&s, &scenario.name)
        .expect("a valid scenario without some of its faults is valid");
    (s, dropped)
}

/// Flink's checkpointing mode for an algorithm: (exactly-once, unaligned,
/// aligned-checkpoint timeout in use).
fn flink_mode(algorithm: Algorithm) -> Option<(bool, bool, bool)> {
    match algorithm.name() {
        "aligned" => Some((true, false, false)),
        "unaligned" => Some((true, true, false)),
        "aligned-timeout" => Some((true, true, true)),
        "at-least-once" => Some((false, false, false)),
        _ => None,
    }
}

/// data/<source>.txt: one line per partition, `key,value,size` per record
/// (and `,timestamp` for a source that emits watermarks).
fn data_files(scenario: &Scenario, workload: &Workload, seed: u64) -> Vec<(String, String)> {
    let sizes = RecordSizes::new(scenario, seed);
    let mut out = vec![];
    for (i, op) in scenario.operators.iter().enumerate() {
        let Some(src) = op.kind.source_spec() else {
            continue;
        };
        let first = scenario.first_partition(crate::scenario::OperatorId(i as u32));
        let event_time = src.watermark_interval > crate::engine::SimDuration::ZERO;
        let mut text = String::new();
        for p in 0..src.partitions {
            let global = first + p;
            for (offset, &(key, value)) in workload.partition(global).iter().enumerate() {
                let lineage = Lineage {
                    partition: global,
                    offset: offset as u64,
                };
                if offset > 0 {
                    text.push(' ');
                }
                let _ = write!(text, "{key},{value},{}", sizes.of(lineage));
                if event_time {
                    let _ = write!(text, ",{}", workload.timestamp(global, offset as u64));
                }
            }
            text.push('\n');
        }
        out.push((format!("data/{}.txt", op.id), text));
    }
    out
}

/// The sinks, and whether their values can be compared exactly.
fn sinks(scenario: &Scenario, seed: u64, algorithm: Algorithm) -> Vec<SinkInfo> {
    let workload = Arc::new(Workload::generate(scenario, seed));
    let factory = BuiltinFactory::new(Arc::new(scenario.clone()), workload.clone());
    let oracle = Oracle::build(scenario, &workload, &factory);
    let exactly_once = flink_mode(algorithm).is_some_and(|m| m.0);
    scenario
        .operators
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind.is_sink())
        .map(|(i, o)| {
            let upsert = oracle.upsert_table(i as u32);
            let mut values_exact = match upsert {
                Some((_, keys_only)) => !keys_only,
                None => !oracle.order_dependent.contains(&(i as u32)),
            };
            let mut unjudged = None;
            if let Some((exact, why)) = event_time::sink_judgement(scenario, i, &factory) {
                values_exact = exact && upsert.is_none_or(|(_, keys_only)| !keys_only);
                unjudged = why;
            }
            SinkInfo {
                name: o.id.clone(),
                transactional: exactly_once
                    && matches!(o.kind.role(), Role::Sink(s) if s.transactional()),
                values_exact,
                upsert: o.kind.role() == Role::Sink(SinkRole::Upsert),
                lineage: unjudged.is_none() && lineage::judged(scenario, i),
                unjudged,
            }
        })
        .collect()
}

/// expected.tsv: the failure-free output, `sink<TAB>key<TAB>value`, sorted.
fn expected(scenario: &Scenario, seed: u64) -> String {
    let workload = Arc::new(Workload::generate(scenario, seed));
    let factory = BuiltinFactory::new(Arc::new(scenario.clone()), workload.clone());
    let oracle = Oracle::build_detailed(scenario, &workload, &factory, None);
    let mut rows: Vec<(String, u64, i64)> = oracle
        .expected_values()
        .iter()
        .map(|&(sink, key, value, _)| (scenario.operators[sink as usize].id.clone(), key, value))
        .collect();
    // Upsert sinks: the table they leave, one row per key.
    for (i, op) in scenario.operators.iter().enumerate() {
        if let Some((table, _)) = oracle.upsert_table(i as u32) {
            rows.extend(table.iter().map(|(&k, &(v, _))| (op.id.clone(), k, v)));
        }
    }
    rows.sort();
    let mut text = String::new();
    for (sink, key, value) in rows {
        let _ = writeln!(text, "{sink}\t{key}\t{value}");
    }
    text
}

/// The mapping table for this scenario: every key that reaches the job,
/// and the simulator's keys that do not.
pub fn mapping(scenario: &Scenario, opts: &Options) -> Vec<Mapping> {
    let mut r = Rows(Vec::new());
    checkpoint_rows(&mut r, scenario, opts);
    job_rows(&mut r);
    network_rows(&mut r, scenario);
    graph_rows(&mut r, scenario);
    event_time::mapping_rows(scenario, &mut r.0);
    fault_rows(&mut r, scenario);
    run_rows(&mut r, scenario, opts);
    r.0
}

/// The mapping table as it is written.
struct Rows(Vec<Mapping>);

impl Rows {
    fn row(&mut self, key: &str, fidelity: Fidelity, flink: String) {
        self.0.push(Mapping {
            key: key.to_string(),
            fidelity,
            flink,
        })
    }
}

/// `checkpoint.flink_version`: the release asked for against the one the
/// job runs on, and where the simulator models them differently.
fn version_row(r: &mut Rows, asked: FlinkVersion, opts: &Options) {
    let differences = version_differences(asked, opts.release);
    let (fidelity, how) = match differences.is_empty() {
        true => (
            Fidelity::Exact,
            format!(
                "the same in everything the simulator models by release (a source's unaligned trigger is {})",
                urgency(opts.release)
            ),
        ),
        false => (Fidelity::Approximate, differences.join("; ")),
    };
    r.row(
        "checkpoint.flink_version",
        fidelity,
        format!(
            "the scenario asks for Flink {}, the job runs on Flink {}: {how}",
            asked.name(),
            release(opts),
        ),
    );
}

/// File merging's row: Flink 2.x's keys, the files not judged on Flink.
fn merging_row(r: &mut Rows, c: &crate::scenario::CheckpointSpec) {
    if c.file_merging {
        r.row(
            "checkpoint.file_merging, file_merging_across_checkpoints, file_merging_max_file_size",
            Fidelity::Approximate,
            "execution.checkpointing.file-merging.enabled, across-checkpoint-boundary, max-file-size (Flink 2.x names; the merged files are not judged on Flink)".into(),
        );
    }
}

/// `[checkpoint]`: the algorithm and Flink's checkpointing options.
fn checkpoint_rows(r: &mut Rows, scenario: &Scenario, opts: &Options) {
    use Fidelity::*;
    let c = &scenario.checkpoint;
    version_row(r, c.flink_version, opts);
    let algorithm = opts.algorithm.name();
    let how = match algorithm {
        "aligned" => "execution.checkpointing.mode = EXACTLY_ONCE, unaligned off",
        "unaligned" => "unaligned.enabled = true, aligned-checkpoint-timeout = 0",
        "aligned-timeout" => "unaligned.enabled = true, aligned-checkpoint-timeout",
        _ => "execution.checkpointing.mode = AT_LEAST_ONCE",
    };
    r.row(
        "checkpoint.algorithm",
        Exact,
        format!("`{algorithm}`: {how}"),
    );
    r.row(
        "checkpoint.interval",
        Exact,
        "execution.checkpointing.interval".into(),
    );
    r.row(
        "checkpoint.first_delay",
        Approximate,
        "Flink's first trigger comes after a random delay between min-pause and the interval"
            .into(),
    );
    r.row(
        "checkpoint.min_pause",
        Exact,
        "execution.checkpointing.min-pause".into(),
    );
    r.row(
        "checkpoint.timeout",
        Exact,
        "execution.checkpointing.timeout".into(),
    );
    r.row(
        "checkpoint.max_concurrent",
        Exact,
        "execution.checkpointing.max-concurrent-checkpoints".into(),
    );
    if algorithm == "aligned-timeout" {
        r.row(
            "checkpoint.alignment_timeout",
            Exact,
            "execution.checkpointing.aligned-checkpoint-timeout".into(),
        );
    }
    r.row(
        "checkpoint.tolerable_failures",
        Exact,
        "execution.checkpointing.tolerable-failed-checkpoints".into(),
    );
    r.row(
        "checkpoint.retained",
        Exact,
        "execution.checkpointing.num-retained".into(),
    );
    r.row(
        "checkpoint.storage",
        Exact,
        "execution.checkpointing.storage = jobmanager | filesystem (real/checkpoints)".into(),
    );
    r.row(
        "checkpoint.storage_latency, storage_bytes_per_sec, rpc_latency, rpc_latency_max",
        NotAtAll,
        "the real machine's disk and RPC".into(),
    );
    r.row(
        "checkpoint.max_state_size",
        NotAtAll,
        "JobManagerCheckpointStorage's own limit (5 MiB)".into(),
    );
    if c.state_backend != crate::scenario::StateBackend::Hashmap
        || c.storage_sync > crate::engine::SimDuration::ZERO
    {
        r.row(
            "checkpoint.state_backend, max_runs, materialization_interval, changelog_replay_cost, storage_sync",
            NotAtAll,
            "the real job keeps Flink's default state backend (HashMapStateBackend, full snapshots); the simulated backend's files are not judged on Flink".into(),
        );
    }
    r.row(
        "checkpoint.max_subtasks_per_channel_state_file",
        Exact,
        "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file".into(),
    );
    merging_row(r, c);
    if c.during_recovery {
        r.row(
            "checkpoint.during_recovery",
            Approximate,
            "execution.checkpointing.during-recovery.enabled (ignored by a Flink without it)"
                .into(),
        );
    }
}

/// The job's shape: key groups, chaining, parallelism, costs.
fn job_rows(r: &mut Rows) {
    use Fidelity::*;
    r.row(
        "max_parallelism",
        Approximate,
        "pipeline.max-parallelism; Flink hashes keys to key groups with murmur, so a key lands on another subtask".into(),
    );
    r.row(
        "operator_chaining, operators.chaining, edges.chain",
        Exact,
        "pipeline.operator-chaining.enabled, startNewChain(), disableChaining()".into(),
    );
    r.row("operators.parallelism", Exact, "setParallelism".into());
    r.row(
        "operators.cost, cost_jitter",
        Approximate,
        "owed per record and paid by parking the task thread once a millisecond is owed".into(),
    );
}

/// `[network]`: buffers, latencies, flushing, input order.
fn network_rows(r: &mut Rows, scenario: &Scenario) {
    use Fidelity::*;
    let n = &scenario.network;
    r.row(
        "network.buffer_size, buffer_records",
        Approximate,
        format!(
            "taskmanager.memory.segment-size = {} (a power of two, at least 4 KiB)",
            java::segment_size(scenario)
        ),
    );
    r.row(
        "network.buffer_credits, floating_buffers, output_buffers",
        NotAtAll,
        "Flink 2.3 fixes 2 exclusive buffers per channel and 8 floating per gate".into(),
    );
    r.row(
        "network.latency_min, latency_max, step_quantum",
        NotAtAll,
        "local channels of one MiniCluster".into(),
    );
    r.row(
        "network.flush_timeout",
        Approximate,
        format!(
            "execution.buffer-timeout.interval = {} ms (whole milliseconds)",
            java::buffer_timeout_ms(scenario)
        ),
    );
    let order = match n.input_order {
        InputOrder::Fifo => (Exact, "Flink's own order"),
        InputOrder::Random => (NotAtAll, "Flink reads its inputs in the order data arrives"),
    };
    r.row("network.input_order", order.0, order.1.into());
}

/// Each operator by its kind's Flink mapping, each edge by its partitioning.
fn graph_rows(r: &mut Rows, scenario: &Scenario) {
    use Fidelity::*;
    for op in &scenario.operators {
        let (fidelity, flink) = match op.kind.flink() {
            Flink::Maps { fidelity, how, .. } => (fidelity, how),
            Flink::Refused(_) => (NotAtAll, "refused".to_string()),
        };
        r.row(
            &format!("operators.{}: {}", op.id, op.kind.name()),
            fidelity,
            flink,
        );
    }
    for e in &scenario.edges {
        let flink = match e.partitioning {
            Partitioning::Forward => "forward()",
            Partitioning::Hash => "keyBy(key) (Flink's key groups)",
            Partitioning::Rebalance => "rebalance() (Flink starts each sender at a random channel)",
            Partitioning::Broadcast => "broadcast()",
        };
        let key = format!(
            "edges {} -> {}",
            scenario.op(e.from).id,
            scenario.op(e.to).id
        );
        let fidelity = if e.partitioning == Partitioning::Rebalance {
            Approximate
        } else {
            Exact
        };
        r.row(&key, fidelity, flink.into());
    }
}

/// `[faults]`: failover, restarts, crashes.
fn fault_rows(r: &mut Rows, scenario: &Scenario) {
    use Fidelity::*;
    let f = &scenario.faults;
    let failover = match f.failover {
        FailoverStrategy::Full => "full",
        FailoverStrategy::Region => "region",
    };
    r.row(
        "faults.failover",
        Exact,
        format!("jobmanager.execution.failover-strategy = {failover}"),
    );
    r.row(
        "faults.restart, restart_delay, max_restarts",
        Exact,
        format!("restart-strategy.type = {}", f.restart.name()),
    );
    r.row(
        "faults.detection_delay",
        Approximate,
        "a crashed task stands still for the delay (its thread sleeps: no records, barriers or acknowledgements), then fails; Flink fails over when the exception reaches the job manager".into(),
    );
    if !f.crashes.is_empty() || f.random.is_some() {
        r.row(
            "faults.crashes, faults.random",
            Approximate,
            "the simulated run's crashes, injected in the same subtask at the same event: as many records after the same snapshot or notification (of the crashed task, or of the task with the job's latest such event) where the operators tell of them, else at the same record count; in the same attempt or the first later one that gets as far".into(),
        );
    }
}

/// The cluster, the mutants and the repeated sources of the export.
fn run_rows(r: &mut Rows, scenario: &Scenario, opts: &Options) {
    use Fidelity::*;
    let cluster = scenario.cluster.as_ref().filter(|c| c.local_channels);
    let placement = if opts.local_channels {
        "one task manager: every channel is local, with no receiver-side buffers (--local-channels; the simulated side runs on one worker with local channels too)"
            .to_string()
    } else if let Some(c) = cluster {
        format!(
            "[cluster] with local channels: {} task managers of {} slots each, slot sharing (slot i runs subtask i of every operator), slots {}: channels within a task manager are local, others remote, as the simulator's",
            c.workers,
            c.slots_per_worker,
            match c.placement {
                crate::scenario::Placement::Spread => "spread out (cluster.evenly-spread-out-slots)",
                crate::scenario::Placement::Pack => "filled in order",
            }
        )
    } else if java::chain_subtasks(scenario) > java::MAX_TASK_MANAGERS {
        format!(
            "{} task managers for {} chain subtasks (one JVM, slot sharing groups per chain): most channels are remote, with credits, as the simulator's; some are local",
            java::MAX_TASK_MANAGERS,
            java::chain_subtasks(scenario)
        )
    } else {
        "a task manager per chain subtask (one JVM, slot sharing groups per chain, 16 MB of network memory each): every channel is remote, with credits, as the simulator's".to_string()
    };
    r.row("cluster", NotAtAll, placement);
    for m in opts.mutants.names() {
        r.row(
            &format!("--mutant {m}"),
            Approximate,
            "the same bug in the Java job".into(),
        );
    }
    if opts.repeat {
        r.row(
            "sources (--repeat)",
            Approximate,
            format!(
                "the partitions' records again and again, for {} ms",
                opts.duration_ms
            ),
        );
    }
}

fn mapping_md(scenario: &Scenario, opts: &Options, mapping: &[Mapping]) -> String {
    let mut s = format!(
        "# {} exported to Flink {}\n\nSeed {}, algorithm `{}`{}. Run it with `sh run.sh`; \
         check it with `{} flink-check .`.\n\n| key | maps | to |\n|---|---|---|\n",
        scenario.name,
        release(opts),
        opts.seed,
        opts.algorithm.name(),
        if opts.repeat {
            format!(", sources repeated for {} ms", opts.duration_ms)
        } else {
            String::new()
        },
        crate::program::name()
    );
    for m in mapping {
        let _ = writeln!(s, "| `{}` | {} | {} |", m.key, m.fidelity.name(), m.flink);
    }
    s
}

/// The restart strategy's Flink keys.
fn restart_keys(scenario: &Scenario) -> Vec<(&'static str, String)> {
    let f = &scenario.faults;
    let ms = |d: crate::engine::SimDuration| format!("{} ms", d.nanos() / 1_000_000);
    match &f.restart {
        RestartStrategy::FixedDelay => vec![
            ("restart-strategy.type", "fixed-delay".into()),
            (
                "restart-strategy.fixed-delay.attempts",
                f.max_restarts.to_string(),
            ),
            ("restart-strategy.fixed-delay.delay", ms(f.restart_delay)),
        ],
        RestartStrategy::ExponentialDelay {
            max_backoff,
            multiplier_permille,
            reset_threshold,
        } => vec![
            ("restart-strategy.type", "exponential-delay".into()),
            (
                "restart-strategy.exponential-delay.initial-backoff",
                ms(f.restart_delay),
            ),
            (
                "restart-strategy.exponential-delay.max-backoff",
                ms(*max_backoff),
            ),
            (
                "restart-strategy.exponential-delay.backoff-multiplier",
                format!("{}", f64::from(*multiplier_permille) / 1000.0),
            ),
            (
                "restart-strategy.exponential-delay.reset-backoff-threshold",
                ms(*reset_threshold),
            ),
            (
                "restart-strategy.exponential-delay.attempts-before-reset-backoff",
                f.max_restarts.to_string(),
            ),
            (
                "restart-strategy.exponential-delay.jitter-factor",
                "0".into(),
            ),
        ],
        RestartStrategy::FailureRate {
            max_failures,
            interval,
        } => vec![
            ("restart-strategy.type", "failure-rate".into()),
            (
                "restart-strategy.failure-rate.max-failures-per-interval",
                max_failures.to_string(),
            ),
            (
                "restart-strategy.failure-rate.failure-rate-interval",
                ms(*interval),
            ),
            ("restart-strategy.failure-rate.delay", ms(f.restart_delay)),
        ],
    }
}
