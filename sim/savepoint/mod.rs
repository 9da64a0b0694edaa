//! Savepoints and retained checkpoints as files, and restoring a job from
//! them at a new parallelism (`docs/savepoints.md`).
//!
//! A run produces a [`SnapshotOut`]: native operator state and channel
//! state per task of its execution graph. [`Image::from_run`] turns it into
//! a parallelism-independent image: per operator (matched by uid) the state
//! in its canonical layout (source offsets by partition, keyed state by key
//! group, a 2PC sink's pending transactions as list state), and the
//! in-flight records per channel. [`write_dir`] and [`read_dir`] store it
//! as a versioned directory with checksums; [`rescale::assign`] maps it onto
//! a job with any parallelism.

mod outside;
pub mod rescale;
pub mod verify;

use crate::model::graph::ExecGraph;
use crate::model::kinds::StateLayout;
use crate::model::operator::{keyed_groups, source_offsets, KeyGroupState};
use crate::model::{CheckpointId, ExternalStore, JobGraph, Record};
use crate::runtime::{SnapshotKind, SnapshotOut};
use crate::scenario::{KeyDistribution, OperatorKind, Scenario};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// `format` in `_metadata`.
pub const FORMAT: &str = "ckptsim-snapshot";
/// The format version this build writes and reads.
pub const VERSION: u32 = 3;
/// The metadata file in a snapshot directory.
pub const METADATA: &str = "_metadata";

/// A savepoint or retained checkpoint, independent of parallelism.
#[derive(Clone)]
pub struct Image {
    pub meta: Meta,
    /// Per operator of the snapshot's job, in its order.
    pub operators: Vec<OperatorImage>,
    pub channels: Vec<ChannelRecords>,
    /// The external systems as the snapshot's job left them.
    pub store: ExternalStore,
}

/// What `_metadata` says besides the file list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub kind: SnapshotKind,
    pub id: CheckpointId,
    /// The job (scenario) name and the algorithm it ran.
    pub job: String,
    pub algorithm: String,
    /// The seed whose workload stream generated the sources' input logs:
    /// a restored job reads the same logs.
    pub input_seed: u64,
    /// 0 for a job started from scratch, +1 per restore.
    pub generation: u32,
    pub completed_at_ns: u64,
    /// The job's clock when the run that took the snapshot started: 0 for
    /// a job started from scratch; a restored run starts at its snapshot's
    /// `started_at_ns + completed_at_ns`. Its faults are planned on the
    /// job's clock (`fault::after_restore`). Written only when not 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub started_at_ns: u64,
    pub stop: bool,
    pub drain: bool,
    /// Number of key groups: fixed for the job's lifetime.
    pub max_parallelism: u32,
    /// The sources in order, with what determines their input logs.
    pub sources: Vec<SourceInput>,
}

/// What generates one source's input log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInput {
    pub uid: String,
    pub partitions: u32,
    pub records_per_partition: u64,
    /// One length per partition, when they differ (`partition_records`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_records: Vec<u64>,
    pub keys: u64,
    pub key_distribution: String,
    /// Percent of records on the hot key 0 (`hot_key_percent`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hot_key_percent: u32,
    pub value_max: u64,
    /// Event time (milliseconds): the step per record, the most a record
    /// lies below its place, and the skew between partitions. Written
    /// only when not the default (1, 0, 0).
    #[serde(default = "one_ms", skip_serializing_if = "is_one_ms")]
    pub event_time_step_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub out_of_orderness_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub partition_skew_ms: u64,
    /// Its records carry payloads. Written only when they do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub payloads: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn one_ms() -> u64 {
    1
}

fn is_one_ms(n: &u64) -> bool {
    *n == 1
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl SourceInput {
    /// How many records partition `p` (of this source) holds.
    pub fn records_of(&self, p: u32) -> u64 {
        let listed = self.partition_records.get(p as usize);
        listed.copied().unwrap_or(self.records_per_partition)
    }
}

/// One operator's state in its canonical layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperatorImage {
    pub uid: String,
    /// The operator kind's name (`keyed-count`, ...).
    pub kind: String,
    /// Parallelism when the snapshot was taken.
    pub parallelism: u32,
    pub state: OperatorState,
}

/// Canonical state layouts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OperatorState {
    /// No state (map, filter, flat-map, at-least-once sink).
    Stateless,
    /// A source's offsets by global partition.
    Source { offsets: Vec<(u32, u64)> },
    /// Keyed state by key group, sorted.
    Keyed { key_groups: Vec<KeyGroupState> },
    /// A 2PC sink's native state per old subtask (list state: its pending
    /// transactions are dealt round-robin to the new subtasks).
    Sink2pc { subtasks: Vec<Vec<u8>> },
    /// Keyed state whose values are the operator's own encoding, one byte
    /// string per key group, sorted (a count window's open windows, a
    /// registered kind's `model::state::ValueState`); moved by key group
    /// like `Keyed`.
    KeyedBytes {
        key_groups: Vec<crate::model::operator::KeyGroupBytes>,
    },
    /// A Sink V2 writer's native state per old subtask: every new subtask
    /// gets them merged (the highest checkpoint id and sequence number).
    SinkWriter { subtasks: Vec<Vec<u8>> },
    /// A Sink V2 committer's native state per old subtask: its committables
    /// are dealt round-robin to the new subtasks, each committed once, at
    /// restore.
    SinkCommitter { subtasks: Vec<Vec<u8>> },
    /// A FLIP-27 source: the readers' splits with their offsets (list state
    /// redistributed over the new readers) and its split enumerator's
    /// checkpoint (`model::flip27::EnumeratorState`, as encoded), restored
    /// as it is.
    SplitSource {
        splits: Vec<(u32, u64)>,
        enumerator: Vec<u8>,
    },
    /// List state (a `buffer`'s held records), every old subtask's entries
    /// in subtask order: dealt to the new subtasks in contiguous chunks;
    /// union list state is joined again at restore.
    List { entries: Vec<crate::model::Record> },
    /// Broadcast state: every old subtask's copy, in subtask order; new
    /// subtask `i` gets copy `i mod` the old parallelism.
    Broadcast { copies: Vec<Vec<u8>> },
    /// A Kafka sink's (`sink-log`) native state per old subtask: its
    /// committables and transactional-id ownership, dealt to the new
    /// subtasks as the writer's and committer's list states
    /// (`model::txlog::rescale`).
    LogSink { subtasks: Vec<Vec<u8>> },
    /// A Kafka source's (`source-log`) native state per old reader: its
    /// splits with their offsets, dealt to the new readers as list state.
    LogSource { subtasks: Vec<Vec<u8>> },
    /// An operator of a registered kind (`model::registry`): each old
    /// subtask's bytes as its `snapshot` returned them, restored subtask by
    /// subtask at the same parallelism only (ckptsim cannot split them).
    Opaque { subtasks: Vec<Vec<u8>> },
}

impl OperatorState {
    pub fn is_empty(&self) -> bool {
        match self {
            OperatorState::Stateless => true,
            OperatorState::Source { offsets } => offsets.is_empty(),
            OperatorState::Keyed { key_groups } => key_groups.is_empty(),
            OperatorState::KeyedBytes { key_groups } => key_groups.is_empty(),
            OperatorState::Sink2pc { subtasks } => subtasks
                .iter()
                .all(|s| crate::model::operator::sink_pending(s).is_none_or(|p| p.is_empty())),
            OperatorState::SinkWriter { .. } => true,
            OperatorState::SplitSource { .. } => false,
            OperatorState::List { entries } => entries.is_empty(),
            OperatorState::Broadcast { copies } => copies.iter().all(|c| {
                crate::model::opstate::BroadcastState::decode(c).is_ok_and(|b| b.table.is_empty())
            }),
            OperatorState::SinkCommitter { subtasks } => subtasks
                .iter()
                .all(|s| crate::model::sinkv2::committables(s).is_none_or(|n| n == 0)),
            OperatorState::LogSink { subtasks } => subtasks.iter().all(|s| {
                crate::model::txlog::rescale::sink_committables(s).is_ok_and(|c| c.is_empty())
            }),
            OperatorState::LogSource { .. } => false,
            OperatorState::Opaque { subtasks } => subtasks.iter().all(Vec::is_empty),
        }
    }
}

/// The in-flight records of one channel (input channel state, then output
/// channel state: the order a restore replays them in).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChannelRecords {
    pub from: String,
    pub from_subtask: u32,
    pub to: String,
    pub to_subtask: u32,
    pub records: Vec<Record>,
}

/// A snapshot that cannot be written, read or restored: the file (if
/// any), what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    pub path: Option<PathBuf>,
    pub message: String,
    pub help: Option<String>,
}

impl SnapshotError {
    fn new(path: Option<&Path>, message: impl Into<String>, help: Option<&str>) -> SnapshotError {
        SnapshotError {
            path: path.map(Path::to_path_buf),
            message: message.into(),
            help: help.map(str::to_string),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", p.display(), self.message)?,
            None => write!(f, "{}", self.message)?,
        }
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SnapshotError {}

fn key_distribution_name(d: KeyDistribution) -> &'static str {
    match d {
        KeyDistribution::Uniform => "uniform",
        KeyDistribution::Cyclic => "cyclic",
        KeyDistribution::Skewed => "skewed",
    }
}

/// The sources of a scenario, as the metadata records them.
pub fn source_inputs(s: &Scenario) -> Vec<SourceInput> {
    s.operators
        .iter()
        .filter_map(|op| match &op.kind {
            OperatorKind::Source(src) => Some(SourceInput {
                uid: op.id.clone(),
                partitions: src.partitions,
                records_per_partition: src.records_per_partition,
                partition_records: src.partition_records.clone(),
                keys: src.keys,
                key_distribution: key_distribution_name(src.key_distribution).to_string(),
                hot_key_percent: src.hot_key_percent,
                value_max: src.value_max,
                event_time_step_ms: src.event_time_step.nanos() / 1_000_000,
                out_of_orderness_ms: src.out_of_orderness.nanos() / 1_000_000,
                partition_skew_ms: src.partition_skew.nanos() / 1_000_000,
                payloads: src.payloads,
            }),
            _ => None,
        })
        .collect()
}

/// One operator's state in its savepoint form, from its subtasks' snapshot
/// bytes (`states`, in subtask order) by its kind's state layout;
/// `enumerator` gives its coordinator's checkpoint (a FLIP-27 source's).
fn image_of(
    kind: &OperatorKind,
    states: &[&[u8]],
    uid: &str,
    enumerator: impl FnOnce() -> Option<Vec<u8>>,
) -> Result<OperatorState, SnapshotError> {
    let undecodable = |what: &str| {
        SnapshotError::new(
            None,
            format!("operator `{uid}`: its {what} state does not decode"),
            None,
        )
    };
    // Every subtask's decoded entries, concatenated in subtask order.
    fn each<T>(
        states: &[&[u8]],
        decode: impl Fn(&[u8]) -> Option<Vec<T>>,
        fail: impl Fn() -> SnapshotError,
    ) -> Result<Vec<T>, SnapshotError> {
        let mut all = Vec::new();
        for bytes in states.iter().filter(|b| !b.is_empty()) {
            all.extend(decode(bytes).ok_or_else(&fail)?);
        }
        Ok(all)
    }
    let copies = || states.iter().map(|b| b.to_vec()).collect::<Vec<_>>();
    Ok(match kind.state_layout() {
        StateLayout::Stateless => OperatorState::Stateless,
        StateLayout::SplitSource => {
            let mut splits = each(states, source_offsets, || undecodable("reader"))?;
            splits.sort_unstable();
            let enumerator = enumerator().ok_or_else(|| undecodable("split enumerator"))?;
            OperatorState::SplitSource { splits, enumerator }
        }
        StateLayout::SourceOffsets => {
            let mut offsets = each(states, source_offsets, || undecodable("source"))?;
            offsets.sort_unstable();
            OperatorState::Source { offsets }
        }
        StateLayout::Keyed => {
            let mut key_groups = each(states, keyed_groups, || undecodable("keyed"))?;
            key_groups.sort_unstable_by_key(|(kg, _)| *kg);
            OperatorState::Keyed { key_groups }
        }
        StateLayout::KeyedBytes => {
            let decode = crate::model::operator::keyed_byte_groups;
            let mut key_groups = each(states, decode, || undecodable(kind.name()))?;
            key_groups.sort_unstable_by_key(|(kg, _)| *kg);
            OperatorState::KeyedBytes { key_groups }
        }
        StateLayout::List(_) => {
            let decode = |b: &[u8]| {
                crate::model::opstate::ListState::decode(b)
                    .ok()
                    .map(|l| l.entries)
            };
            let entries = each(states, decode, || undecodable("list"))?;
            OperatorState::List { entries }
        }
        StateLayout::Broadcast => OperatorState::Broadcast { copies: copies() },
        StateLayout::Sink2pc => OperatorState::Sink2pc { subtasks: copies() },
        StateLayout::SinkWriter => OperatorState::SinkWriter { subtasks: copies() },
        StateLayout::SinkCommitter => OperatorState::SinkCommitter { subtasks: copies() },
        StateLayout::LogSink => OperatorState::LogSink { subtasks: copies() },
        StateLayout::LogSource => OperatorState::LogSource { subtasks: copies() },
        StateLayout::Opaque => OperatorState::Opaque { subtasks: copies() },
    })
}

impl Image {
    /// The image of a snapshot a run of `scenario` produced. `input_seed`
    /// generated the run's input; `generation` is the run's own (0 unless
    /// it was restored itself).
    pub fn from_run(
        scenario: &Scenario,
        snap: &SnapshotOut,
        store: &ExternalStore,
        input_seed: u64,
        generation: u32,
    ) -> Result<Image, SnapshotError> {
        let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
        let mut operators = Vec::with_capacity(scenario.operators.len());
        for (i, op) in scenario.operators.iter().enumerate() {
            let (first, member) = (exec.first_task[i] as usize, exec.member[i] as usize);
            let states: Vec<&[u8]> = (0..op.parallelism as usize)
                .map(|s| {
                    snap.states[first + s]
                        .as_ref()
                        .and_then(|t| t.states.get(member))
                        .map_or(&[][..], Vec::as_slice)
                })
                .collect();
            let state = image_of(&op.kind, &states, &op.id, || {
                let mine = snap.coordinators.iter().find(|(o, _)| *o == i as u32);
                mine.map(|(_, s)| s.clone())
            })?;
            operators.push(OperatorImage {
                uid: op.id.clone(),
                kind: op.kind.name().to_string(),
                parallelism: op.parallelism,
                state,
            });
        }
        // Channel state: per channel, the receiver's input state, then the
        // sender's output state.
        let mut per_channel: BTreeMap<u32, (Vec<Record>, Vec<Record>)> = BTreeMap::new();
        for t in snap.states.iter().flatten() {
            for cs in &t.inputs {
                per_channel.entry(cs.ch).or_default().0.extend(&cs.records);
            }
            for cs in &t.outputs {
                per_channel.entry(cs.ch).or_default().1.extend(&cs.records);
            }
        }
        let channels = per_channel
            .into_iter()
            .filter(|(_, (i, o))| !i.is_empty() || !o.is_empty())
            .map(|(ch, (mut input, output))| {
                input.extend(output);
                let c = &exec.channels[ch as usize];
                let (from, to) = (&exec.tasks[c.from as usize], &exec.tasks[c.to as usize]);
                ChannelRecords {
                    from: scenario.op(c.from_op).id.clone(),
                    from_subtask: from.subtask,
                    to: scenario.op(c.to_op).id.clone(),
                    to_subtask: to.subtask,
                    records: input,
                }
            })
            .collect();
        Ok(Image {
            meta: Meta {
                kind: snap.kind,
                id: snap.id,
                job: scenario.name.clone(),
                algorithm: scenario.checkpoint.algorithm.name().to_string(),
                input_seed,
                generation,
                completed_at_ns: snap.completed_at.0,
                started_at_ns: 0,
                stop: snap.stop,
                drain: snap.drain,
                max_parallelism: scenario.max_parallelism,
                sources: source_inputs(scenario),
            },
            operators,
            channels,
            store: store.clone(),
        })
    }

    /// The job's clock when the snapshot completed: when a run restored
    /// from it starts.
    pub fn job_time_ns(&self) -> u64 {
        self.meta
            .started_at_ns
            .saturating_add(self.meta.completed_at_ns)
    }

    /// In-flight records the image holds.
    pub fn in_flight_records(&self) -> usize {
        self.channels.iter().map(|c| c.records.len()).sum()
    }

    /// Operator state bytes, as written.
    pub fn state_bytes(&self) -> usize {
        self.operators.iter().map(|o| encode(&o.state).len()).sum()
    }
}

// ---------------------------------------------------------------- files

/// `_metadata`: the image's description and its files with checksums.
#[derive(Serialize, Deserialize)]
struct Metadata {
    format: String,
    version: u32,
    #[serde(flatten)]
    meta: Meta,
    operators: Vec<OperatorEntry>,
    channel_state: FileEntry,
    external: FileEntry,
    /// [`metadata_hash`] of this metadata: an edited `_metadata` is refused
    /// like a damaged state file.
    metadata_blake3: String,
}

/// blake3 of a `_metadata` JSON object with `metadata_blake3` empty, as
/// compact JSON in the order written: every change but white space changes
/// it, an unknown key included.
fn metadata_hash(value: &serde_json::Value) -> String {
    let mut value = value.clone();
    if let Some(object) = value.as_object_mut() {
        object.insert("metadata_blake3".into(), "".into());
    }
    let text = serde_json::to_string(&value).expect("JSON values serialise");
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

#[derive(Serialize, Deserialize)]
struct OperatorEntry {
    uid: String,
    kind: String,
    parallelism: u32,
    #[serde(flatten)]
    file: FileEntry,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    file: String,
    bytes: u64,
    blake3: String,
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("snapshot data serialises")
}

fn io_error(path: &Path, e: std::io::Error, action: &str) -> SnapshotError {
    SnapshotError::new(Some(path), format!("cannot {action}: {e}"), None)
}

/// Refuses a snapshot directory that exists and is not empty: a snapshot
/// is never written over another. The commands check it before the job
/// runs, and [`write_dir`] again before it writes.
pub fn check_new_dir(dir: &Path) -> Result<(), SnapshotError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(SnapshotError::new(
            Some(dir),
            "is a symbolic link; ckptsim writes a snapshot only into a folder it creates or an empty one, never through a link",
            Some("remove the link, or name a new directory"),
        ));
    }
    if let Ok(mut entries) = std::fs::read_dir(dir) {
        if entries.next().is_some() {
            return Err(SnapshotError::new(
                Some(dir),
                "the directory exists and is not empty",
                Some("choose a new directory; a snapshot is never written over another"),
            ));
        }
    }
    Ok(())
}

/// Writes `image` into `dir`, which must not exist or be empty.
pub fn write_dir(dir: &Path, image: &Image) -> Result<(), SnapshotError> {
    check_new_dir(dir)?;
    // An empty folder (or a new one), no entry of it a link, each file
    // created anew: nothing is written through a link.
    let out = crate::safe_fs::OutDir::open(dir, &|_| false)
        .map_err(|e| SnapshotError::new(Some(&e.path), e.why, None))?;
    let write = |name: &str, bytes: &[u8]| -> Result<FileEntry, SnapshotError> {
        out.write(name, bytes)
            .map_err(|e| SnapshotError::new(Some(&e.path), e.why, None))?;
        Ok(FileEntry {
            file: name.to_string(),
            bytes: bytes.len() as u64,
            blake3: blake3::hash(bytes).to_hex().to_string(),
        })
    };
    let mut operators = Vec::new();
    for op in &image.operators {
        let file = write(&format!("{}.state", op.uid), &encode(&op.state))?;
        operators.push(OperatorEntry {
            uid: op.uid.clone(),
            kind: op.kind.clone(),
            parallelism: op.parallelism,
            file,
        });
    }
    let channel_state = write("channels.state", &encode(&image.channels))?;
    let external = write("external.state", &encode(&image.store))?;
    let mut metadata = Metadata {
        format: FORMAT.to_string(),
        version: VERSION,
        meta: image.meta.clone(),
        operators,
        channel_state,
        external,
        metadata_blake3: String::new(),
    };
    metadata.metadata_blake3 =
        metadata_hash(&serde_json::to_value(&metadata).expect("metadata serialises"));
    let mut text = serde_json::to_string_pretty(&metadata).expect("metadata serialises");
    text.push('\n');
    write(METADATA, text.as_bytes())?;
    Ok(())
}

/// Reads one file of a snapshot directory: a regular file (never a FIFO,
/// device or directory, followed through links) of at most `limit` bytes,
/// and of `expected` bytes when the metadata says so.
fn read_file(
    path: &Path,
    limit: u64,
    expected: Option<u64>,
    (what, missing, help): (&str, &str, &str),
) -> Result<Vec<u8>, SnapshotError> {
    use crate::input::ReadError;
    // Never more than the metadata says: a longer file is refused unread.
    let bytes =
        crate::input::read(path, expected.unwrap_or(limit).min(limit)).map_err(|e| match e {
            ReadError::Missing => SnapshotError::new(Some(path), missing, Some(help)),
            ReadError::NotRegular => SnapshotError::new(
                Some(path),
                format!("not a regular file ({what}); a snapshot holds only regular files"),
                Some("a FIFO, device, socket or directory is never read as snapshot data"),
            ),
            ReadError::TooLarge { .. } if expected.is_some_and(|e| e <= limit) => {
                SnapshotError::new(
                    Some(path),
                    format!(
                        "too long: more than the {} bytes _metadata says",
                        expected.unwrap_or(limit)
                    ),
                    Some("the file is damaged; restore from a complete copy"),
                )
            }
            ReadError::TooLarge { limit } => SnapshotError::new(
                Some(path),
                format!("more than the {limit} bytes a snapshot file may hold ({what})"),
                None,
            ),
            ReadError::Io(e) => io_error(path, e, "read"),
        })?;
    match expected {
        Some(e) if bytes.len() as u64 != e => Err(SnapshotError::new(
            Some(path),
            format!(
                "{}: {} bytes, _metadata says {e}",
                if (bytes.len() as u64) < e {
                    "truncated"
                } else {
                    "too long"
                },
                bytes.len()
            ),
            Some("the file is damaged; restore from a complete copy"),
        )),
        _ => Ok(bytes),
    }
}

/// Reads a snapshot directory: only regular files of bounded size, the
/// metadata's own checksum and every file's size and checksum, then every
/// decoded value range-checked ([`verify`]) and the operators' state
/// checked against the external store the directory carries
/// (`outside`). Nothing in the directory is trusted before that.
pub fn read_dir(dir: &Path) -> Result<Image, SnapshotError> {
    let meta_path = dir.join(METADATA);
    let metadata = read_metadata(&meta_path)?;
    file_names(&metadata, &meta_path)?;
    let decode_err = |entry: &FileEntry, e: postcard::Error| {
        SnapshotError::new(
            Some(&dir.join(&entry.file)),
            format!("cannot decode: {e}"),
            None,
        )
    };
    let mut operators = Vec::new();
    for op in &metadata.operators {
        let bytes = read_listed(dir, &op.file, &format!("operator `{}`", op.uid))?;
        let state: OperatorState =
            postcard::from_bytes(&bytes).map_err(|e| decode_err(&op.file, e))?;
        operators.push(OperatorImage {
            uid: op.uid.clone(),
            kind: op.kind.clone(),
            parallelism: op.parallelism,
            state,
        });
    }
    let bytes = read_listed(dir, &metadata.channel_state, "the channel state")?;
    let channels: Vec<ChannelRecords> =
        postcard::from_bytes(&bytes).map_err(|e| decode_err(&metadata.channel_state, e))?;
    let bytes = read_listed(dir, &metadata.external, "the external store")?;
    let store: ExternalStore =
        postcard::from_bytes(&bytes).map_err(|e| decode_err(&metadata.external, e))?;
    let image = Image {
        meta: metadata.meta.clone(),
        operators,
        channels,
        store,
    };
    // Whole first, then against the outside world it carries.
    let checked = verify::check(&image).and_then(|()| outside::check(&image));
    checked.map_err(|verify::Bad(part, message)| {
        let path = match part {
            verify::Part::Metadata => meta_path.clone(),
            verify::Part::Operator(i) => dir.join(&metadata.operators[i].file.file),
            verify::Part::Channels => dir.join(&metadata.channel_state.file),
            verify::Part::External => dir.join(&metadata.external.file),
        };
        SnapshotError::new(
            Some(&path),
            message,
            Some("the snapshot contradicts itself: it was edited or damaged; restore from another one"),
        )
    })?;
    Ok(image)
}

/// `_metadata`, read and checked: a ckptsim snapshot of this version,
/// unedited (its own checksum), that decodes.
fn read_metadata(meta_path: &Path) -> Result<Metadata, SnapshotError> {
    let bytes = read_file(
        meta_path,
        verify::MAX_METADATA_BYTES,
        None,
        (
            "the snapshot's metadata",
            "no such file",
            "pass the directory `ckptsim savepoint --out` or `run --checkpoint-dir` wrote (it holds a _metadata file)",
        ),
    )?;
    let corrupt = |message: String| {
        SnapshotError::new(
            Some(meta_path),
            message,
            Some("the metadata is corrupt or truncated; take the snapshot again"),
        )
    };
    let text = String::from_utf8(bytes).map_err(|_| corrupt("not UTF-8 text".to_string()))?;
    // The format tag first, so a foreign file is named as such.
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        corrupt(format!(
            "line {}, column {}: not valid JSON: {e}",
            e.line(),
            e.column()
        ))
    })?;
    format_and_version(&value, meta_path)?;
    let hash = metadata_hash(&value);
    let stored = value
        .get("metadata_blake3")
        .and_then(|h| h.as_str())
        .unwrap_or_default()
        .to_string();
    if hash != stored {
        return Err(SnapshotError::new(
            Some(meta_path),
            format!(
                "`metadata_blake3`: checksum mismatch (blake3 {}…, the file says {}…): _metadata was edited or is damaged",
                &hash[..12],
                stored.get(..12).unwrap_or(&stored)
            ),
            Some("restore from an undamaged copy; a snapshot's files are not edited by hand"),
        ));
    }
    serde_json::from_value(value).map_err(|e| corrupt(format!("invalid metadata: {e}")))
}

/// The metadata's `format` is ckptsim's and its `version` this build's.
fn format_and_version(value: &serde_json::Value, meta_path: &Path) -> Result<(), SnapshotError> {
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        other => {
            return Err(SnapshotError::new(
                Some(meta_path),
                format!(
                    "not a ckptsim snapshot (format is {})",
                    other.map_or("missing".to_string(), |f| format!("`{f}`"))
                ),
                None,
            ))
        }
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(VERSION) => Ok(()),
        v => Err(SnapshotError::new(
            Some(meta_path),
            format!(
                "format version {} is not supported (this ckptsim reads version {VERSION})",
                v.map_or("?".to_string(), |v| v.to_string())
            ),
            (v == Some(1)).then_some(
                "version 1 had no checksum over _metadata; take the snapshot again with this ckptsim",
            ),
        )),
    }
}

/// Each file is where the writer puts it: an operator cannot be pointed at
/// another one's state.
fn file_names(metadata: &Metadata, meta_path: &Path) -> Result<(), SnapshotError> {
    let mut names = vec![(
        "channel_state".to_string(),
        &metadata.channel_state,
        "channels.state".to_string(),
    )];
    names.push((
        "external".to_string(),
        &metadata.external,
        "external.state".to_string(),
    ));
    for (i, op) in metadata.operators.iter().enumerate() {
        names.push((
            format!("operators[{i}].file"),
            &op.file,
            format!("{}.state", op.uid),
        ));
    }
    for (field, entry, name) in &names {
        if entry.file != *name || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(SnapshotError::new(
                Some(meta_path),
                format!("`{field}`: `{}` is not the file this entry's data is written to (`{name}`, a plain file name)", entry.file),
                Some("restore from an undamaged copy; a snapshot's files are not edited by hand"),
            ));
        }
    }
    Ok(())
}

/// A file `_metadata` lists (for `what`), of the size and checksum it says.
fn read_listed(dir: &Path, entry: &FileEntry, what: &str) -> Result<Vec<u8>, SnapshotError> {
    let path = dir.join(&entry.file);
    let missing = format!("no such file (_metadata lists it for {what})");
    let bytes = read_file(
        &path,
        verify::MAX_STATE_FILE_BYTES,
        Some(entry.bytes),
        (
            what,
            &missing,
            "the snapshot directory is incomplete; restore from a complete copy",
        ),
    )?;
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if hash != entry.blake3 {
        return Err(SnapshotError::new(
            Some(&path),
            format!(
                "checksum mismatch (blake3 {}…, _metadata says {}…): the file is corrupt",
                &hash[..12],
                entry.blake3.get(..12).unwrap_or(&entry.blake3)
            ),
            Some("restore from an undamaged copy"),
        ));
    }
    Ok(bytes)
}
