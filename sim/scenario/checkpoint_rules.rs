//! The `[checkpoint]` section's rules: its defaults that depend on other
//! keys, and the keys that apply only with a storage, a backend, an
//! algorithm or file merging.

use super::schema::{self, Duration, File};
use super::validate::{help, Validator};
use super::*;

impl Validator<'_, '_> {
    pub(super) fn checkpoint(&mut self, f: &File) -> CheckpointSpec {
        let c = &f.checkpoint;
        self.at = "checkpoint".into();
        let mut spec = c.check(self);
        let default_interval = schema::Checkpoint::default().interval.0.unwrap_or_default();
        spec.interval = c.interval.0.map(|i| match self.bounded("interval", i) {
            Some(SimDuration::ZERO) => {
                let help = help("write interval = \"none\" to disable periodic checkpoints");
                self.report("interval", "interval must be greater than 0", help);
                default_interval
            }
            i => i.unwrap_or(default_interval),
        });
        let first_delay = Duration(spec.interval.unwrap_or(SimDuration::ZERO));
        spec.first_delay = self.dur("first_delay", c.first_delay, first_delay);
        let interval = spec.interval.unwrap_or(SimDuration::ZERO);
        spec.local_jitter = self.dur(
            "local_jitter",
            c.local_jitter,
            Duration(SimDuration(interval.0 / 5)),
        );
        // Three intervals, within the longest duration a file may write.
        let materialization = match spec.interval {
            Some(i) => Duration(SimDuration(i.0.saturating_mul(3).min(MAX_DURATION.0))),
            None => Duration(SimDuration::from_secs(3)),
        };
        spec.materialization_interval = match c.materialization_interval {
            Some(d) => self.positive("materialization_interval", d, materialization),
            None => materialization.0,
        };
        let max_concurrent = spec.max_concurrent;
        if let Some(limit) = c.algorithm.max_concurrent().filter(|&l| max_concurrent > l) {
            let message = format!(
                "algorithm `{}` allows at most {limit} concurrent checkpoint, not {max_concurrent}",
                c.algorithm.name()
            );
            let help = format!(
                "set max_concurrent = {limit} (Flink refuses more with unaligned checkpoints)"
            );
            self.report("max_concurrent", message, Some(help));
        }
        if c.state_backend != StateBackend::Hashmap && c.storage != StorageKind::Filesystem {
            let help = help("set storage = \"filesystem\", or state_backend = \"hashmap\"");
            let message = format!(
                "the {} state backend shares files between checkpoints: it needs filesystem storage",
                c.state_backend.name()
            );
            self.report("state_backend", message, help);
        }
        if c.storage_sync > Duration::default() && c.storage != StorageKind::Filesystem {
            let help = help("remove storage_sync, or set storage = \"filesystem\"");
            let message =
                "storage_sync applies only to filesystem storage (memory storage writes no files)";
            self.report("storage_sync", message, help);
        }
        if c.max_state_size.is_some() && c.storage != StorageKind::Memory {
            let help = help("remove max_state_size, or set storage = \"memory\"");
            let message =
                "max_state_size applies only to memory storage (a file system has no limit)";
            self.report("max_state_size", message, help);
        }
        let (latency, bandwidth) = schema::Checkpoint::storage_speed(c.storage);
        spec.storage_latency = self.dur("storage_latency", c.storage_latency, latency);
        spec.storage_bytes_per_sec =
            self.int("storage_bytes_per_sec", c.storage_bytes_per_sec, bandwidth);
        spec.rpc_latency_max = self.dur(
            "rpc_latency_max",
            c.rpc_latency_max,
            Duration(spec.rpc_latency),
        );
        if spec.rpc_latency_max < spec.rpc_latency {
            let message = format!(
                "rpc_latency_max ({}) must not be below rpc_latency ({})",
                spec.rpc_latency_max, spec.rpc_latency
            );
            let help = help("raise rpc_latency_max, or remove it for no jitter");
            self.report("rpc_latency_max", message, help);
            spec.rpc_latency_max = spec.rpc_latency;
        }
        let max_state_size = schema::MAX_STATE_SIZE.0;
        spec.max_state_size = self
            .bytes("max_state_size", c.max_state_size, max_state_size, u64::MAX)
            .unwrap_or(max_state_size);
        self.file_merging(c, &mut spec);
        spec
    }

    /// `file_merging` and its keys: filesystem storage only.
    fn file_merging(&mut self, c: &schema::Checkpoint, spec: &mut CheckpointSpec) {
        let merged = schema::MAX_MERGED_FILE_SIZE.0;
        spec.file_merging_max_file_size = self
            .bytes(
                "file_merging_max_file_size",
                c.file_merging_max_file_size,
                merged,
                u64::MAX,
            )
            .unwrap_or(merged);
        if c.file_merging && c.storage != StorageKind::Filesystem {
            let help = help("set storage = \"filesystem\", or remove file_merging");
            let message =
                "file_merging merges the files of filesystem storage (memory storage writes none)";
            self.report("file_merging", message, help);
        }
        let extra = c.file_merging_across_checkpoints || c.file_merging_max_file_size.is_some();
        if extra && !c.file_merging {
            let key = match c.file_merging_across_checkpoints {
                true => "file_merging_across_checkpoints",
                false => "file_merging_max_file_size",
            };
            let help = help("set file_merging = true, or remove it");
            self.report(
                key,
                format!("{key} applies only with file_merging = true"),
                help,
            );
        }
    }
}
