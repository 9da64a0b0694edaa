//! Seeded randomness, one independent ChaCha8 stream per concern.
//!
//! Every random decision in a run comes from one `u64` seed. Each concern
//! (workload data, network latency, scheduling, faults, swarm configuration)
//! draws from its own stream, so adding a draw to one concern never shifts
//! another: two algorithms run on the same seed see the same records and the
//! same crash times. Values are sampled only through the helpers below, never
//! through `rand`'s distributions, whose outputs may change between versions.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The concerns that draw randomness; the discriminant is the ChaCha stream id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    Workload = 1,
    Network = 2,
    Scheduling = 3,
    Faults = 4,
    Swarm = 5,
    /// Lost checkpoint-complete notifications.
    Notifications = 6,
    /// Checkpoint storage write failures and slowness.
    Storage = 7,
    /// Coordinator crash times.
    CoordinatorFaults = 8,
    /// Worker crash times.
    WorkerFaults = 9,
    /// Record sizes drawn from a size range (`record_size_max`).
    RecordSizes = 10,
    /// Coordinator → task RPC latencies (`rpc_latency_max`).
    Rpc = 11,
    /// Lost operator events (coordinator → subtask).
    OperatorEvents = 12,
    /// The uncoordinated families' checkpoint timers (their jitter).
    LocalTimers = 13,
    /// Event timestamps: their disorder and the skew between partitions.
    EventTimes = 14,
}

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct SimRng {
    inner: ChaCha8Rng,
}

/// Expands a `u64` seed to ChaCha's 32-byte key with splitmix64, which is
/// fixed here rather than borrowed from a crate whose expansion might change.
fn expand_seed(seed: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut x = seed;
    for chunk in out.chunks_exact_mut(8) {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        chunk.copy_from_slice(&splitmix64(x).to_le_bytes());
    }
    out
}

/// The splitmix64 finaliser: a fixed, fast 64-bit mixing function.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SimRng {
    pub fn new(seed: u64, stream: Stream) -> SimRng {
        let mut inner = ChaCha8Rng::from_seed(expand_seed(seed));
        inner.set_stream(stream as u64);
        SimRng { inner }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    /// Uniform in `0..n` (Lemire's multiply-and-reject, unbiased). `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SimRng::below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "SimRng::between({lo}, {hi})");
        if lo == 0 && hi == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        assert!(den > 0);
        num >= den || self.below(den) < num
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent() {
        let mut a = SimRng::new(7, Stream::Network);
        let mut b = SimRng::new(7, Stream::Faults);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_ne!(xs, ys);
    }

    #[test]
    fn below_is_in_range() {
        let mut r = SimRng::new(1, Stream::Scheduling);
        for n in 1..200 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.between(5, 5), 5);
    }
}
