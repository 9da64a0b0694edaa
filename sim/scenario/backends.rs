//! Where snapshots go and how: the checkpoint storage, the state backend,
//! file merging and a savepoint's format.

use serde::{Deserialize, Serialize};

/// Where snapshots go (`[checkpoint] storage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StorageKind {
    /// The coordinator's heap.
    Memory,
    /// A durable file system with write latency and bandwidth.
    Filesystem,
}

/// How keyed state goes into snapshots (`[checkpoint] state_backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateBackend {
    /// Full snapshots: each writes the whole state (Flink's `HashMapStateBackend`).
    Hashmap,
    /// Incremental snapshots: immutable runs shared between checkpoints.
    Incremental,
    /// A log of state changes with periodic materialization (FLIP-158).
    Changelog,
}

impl StateBackend {
    pub fn name(self) -> &'static str {
        match self {
            StateBackend::Hashmap => "hashmap",
            StateBackend::Incremental => "incremental",
            StateBackend::Changelog => "changelog",
        }
    }
}

/// A savepoint's format (`[[savepoints]] format`, Flink's `--type`): every
/// backend's state in the common format, or the state backend's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SavepointFormat {
    Canonical,
    Native,
}

/// File merging's settings as `[swarm] file_merging` draws them: off, on
/// within a checkpoint, or on across checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileMerging {
    Off,
    On,
    AcrossCheckpoints,
}

impl FileMerging {
    pub const ALL: [FileMerging; 3] = [
        FileMerging::Off,
        FileMerging::On,
        FileMerging::AcrossCheckpoints,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FileMerging::Off => "off",
            FileMerging::On => "on",
            FileMerging::AcrossCheckpoints => "across-checkpoints",
        }
    }
}
