//! The model of a streaming job: records and key groups, the job and
//! execution graphs, operators (a public trait and the built-ins), the
//! generated input, and the external store sinks write to.

pub mod alignment;
mod calls;
pub mod event_time;
pub mod facts;
pub mod flip27;
pub mod graph;
pub mod idleness;
pub mod iterate;
pub mod keyed;
pub mod kinds;
pub mod operator;
pub mod opstate;
pub mod payload;
pub mod record;
pub mod registry;
pub mod sinkv2;
pub mod state;
pub mod store;
pub mod timers;
pub mod txlog;
pub mod workload;

pub use graph::{ChannelId, ExecGraph, JobGraph, TaskId};
pub use operator::{CheckpointId, Context, Operator, OperatorFactory, SourcePoll};
pub use record::{Element, Lineage, Payload, Record, RecordSizes};
pub use store::ExternalStore;
pub use workload::Workload;
