//! `[cluster]`: workers and their task slots.

use super::*;

section! {
    /// `[cluster]`: workers with task slots. With slot sharing (Flink's
    /// default), slot `i` holds subtask `i` of every operator, so the job
    /// needs as many slots as its highest parallelism.
    Cluster => ClusterSpec {
        /// Number of workers.
        #[key("integer, 1–100000", "`2`")]
        workers: u32 = 2,
        /// Slots per worker. With slot sharing, slot i runs subtask i of every operator:
        /// `workers × slots_per_worker` must reach the highest parallelism.
        #[key("integer, 1–100000", "`1`")]
        slots_per_worker: u32 = 1,
        /// `spread`: slot i on worker `i % workers`. `pack`: slot i on worker `i /
        /// slots_per_worker`.
        #[key("`\"spread\"` or `\"pack\"`", "`\"spread\"`")]
        #[serde(deserialize_with = "name")]
        placement: Placement = Placement::Spread,
        /// A lost worker is noticed this long after it crashed; a partition longer than
        /// this loses the cut-off workers.
        #[key("duration", "`\"50ms\"`")]
        heartbeat_timeout: Dur = ms(50),
        /// A replacement worker is ready this long after a crash; the job restarts no
        /// earlier.
        #[key("duration", "`\"100ms\"`")]
        replacement_delay: Dur = ms(100),
        /// Channels between subtasks on one worker are local, as Flink's are within one
        /// task manager: the receiver reads the sender's queue (one buffer at a time, no
        /// exclusive or floating buffers of its own) with no network latency. Off: every
        /// channel is remote, with credits.
        #[key("boolean", "`false`")]
        local_channels: bool = false,
    }
}
