//! The engine: virtual time, the event queue, seeded random streams, the
//! run fingerprint, sizes in bytes as text and the allocator's setting. It knows nothing about stream processing.

pub mod fingerprint;
pub mod heap;
pub mod queue;
pub mod rng;
pub mod size;
pub mod text;
pub mod time;

pub use fingerprint::Fingerprint;
pub use queue::EventQueue;
pub use rng::{SimRng, Stream};
pub use size::{bytes_text, parse_bytes};
pub use text::count;
pub use time::{duration_text, parse_duration, SimDuration, SimTime};
