//! The run fingerprint: a BLAKE3 hash over a canonical byte encoding of every
//! event the simulator processed, in order.
//!
//! Events are encoded as fixed little-endian fields into a staging buffer that
//! is hashed in large chunks (BLAKE3 is fast on long inputs, slow per call on
//! tiny ones). Same scenario + seed + algorithm ⇒ same fingerprint, always.

const STAGE_BYTES: usize = 64 * 1024;

pub struct Fingerprint {
    hasher: blake3::Hasher,
    stage: Vec<u8>,
    events: u64,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            hasher: blake3::Hasher::new(),
            stage: Vec::with_capacity(STAGE_BYTES + 64),
            events: 0,
        }
    }
}

impl Fingerprint {
    /// Adds one event: its time, a kind tag and two integer fields.
    #[inline]
    pub fn event(&mut self, time: u64, tag: u8, a: u64, b: u64) {
        self.stage.extend_from_slice(&time.to_le_bytes());
        self.stage.push(tag);
        self.stage.extend_from_slice(&a.to_le_bytes());
        self.stage.extend_from_slice(&b.to_le_bytes());
        self.events += 1;
        if self.stage.len() >= STAGE_BYTES {
            self.hasher.update(&self.stage);
            self.stage.clear();
        }
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// The hex digest (first 16 bytes: 32 hex characters).
    pub fn finish(&mut self) -> String {
        self.hasher.update(&self.stage);
        self.stage.clear();
        let hash = self.hasher.finalize();
        hash.to_hex()[..32].to_string()
    }
}
