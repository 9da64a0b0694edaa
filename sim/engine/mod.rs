//! The engine: virtual time, the event queue, seeded random streams and the
//! run fingerprint. It knows nothing about stream processing.

pub mod fingerprint;
pub mod queue;
pub mod rng;
pub mod time;

pub use fingerprint::Fingerprint;
pub use queue::EventQueue;
pub use rng::{SimRng, Stream};
pub use time::{duration_text, parse_duration, SimDuration, SimTime};
