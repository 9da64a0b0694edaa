//! The payload table: the bytes of the users' own record types, named by
//! their content.
//!
//! A record carries a [`Payload`], a 64-bit name of its payload's bytes;
//! the bytes are here, once per distinct value. Names come from the content
//! alone, so the simulation and the oracle, which keep tables of their own,
//! name equal values alike whatever order they made them in, and the
//! judge compares names. Two different byte strings with one name (a
//! chance of about n²/2⁶⁵ for n distinct payloads) are counted as a
//! collision, and a run with a collision is not judged on its payloads
//! (`exactly-once-output` says so) rather than judged wrong.

use super::record::Payload;
use crate::engine::rng::splitmix64;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The payloads of one run (or one oracle), by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Payloads {
    bytes: BTreeMap<u64, Vec<u8>>,
    /// Distinct byte strings that got a name already taken.
    collisions: u64,
}

/// The name of these bytes: never [`Payload::NONE`].
pub fn name_of(bytes: &[u8]) -> Payload {
    let mut h = splitmix64(0x9AE1_0AD5 ^ bytes.len() as u64);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = splitmix64(h ^ u64::from_le_bytes(word));
    }
    Payload(h.max(1))
}

impl Payloads {
    /// Keeps these bytes and returns their name.
    pub fn put(&mut self, bytes: Vec<u8>) -> Payload {
        let name = name_of(&bytes);
        match self.bytes.get(&name.0) {
            Some(kept) if *kept != bytes => self.collisions += 1,
            Some(_) => {}
            None => {
                self.bytes.insert(name.0, bytes);
            }
        }
        name
    }

    /// The bytes of a payload, if this table has them.
    pub fn get(&self, payload: Payload) -> Option<&[u8]> {
        self.bytes.get(&payload.0).map(Vec::as_slice)
    }

    /// Every payload with its bytes, by name.
    pub fn iter(&self) -> impl Iterator<Item = (Payload, &[u8])> {
        self.bytes.iter().map(|(&n, b)| (Payload(n), b.as_slice()))
    }

    /// Whether a record may carry this payload here: none, or one whose
    /// bytes the table has.
    pub fn contains(&self, payload: Payload) -> bool {
        payload.is_none() || self.bytes.contains_key(&payload.0)
    }

    /// Distinct byte strings that got a name already taken.
    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// How many distinct payloads the table holds.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Takes every payload of `other` (a restored table).
    pub fn absorb(&mut self, other: &Payloads) {
        for (&name, bytes) in &other.bytes {
            self.put_named(name, bytes);
        }
        self.collisions = self.collisions.saturating_add(other.collisions);
    }

    fn put_named(&mut self, name: u64, bytes: &[u8]) {
        match self.bytes.get(&name) {
            Some(kept) if kept.as_slice() != bytes => self.collisions += 1,
            Some(_) => {}
            None => {
                self.bytes.insert(name, bytes.to_vec());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_depend_on_the_content_only() {
        let (mut a, mut b) = (Payloads::default(), Payloads::default());
        let x = a.put(b"first".to_vec());
        let y = a.put(b"second".to_vec());
        assert_eq!(b.put(b"second".to_vec()), y);
        assert_eq!(b.put(b"first".to_vec()), x);
        assert_ne!(x, y);
        assert_eq!(a.get(x), Some(&b"first"[..]));
        assert_eq!(a.len(), 2);
        assert_eq!(a.collisions(), 0);
    }

    #[test]
    fn trailing_zero_bytes_and_lengths_are_told_apart() {
        let names = [&b""[..], b"\0", b"\0\0", b"a", b"a\0", b"a\0\0\0\0\0\0\0\0"];
        let mut seen: Vec<Payload> = names.iter().map(|b| name_of(b)).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), names.len());
        assert!(seen.iter().all(|p| !p.is_none()));
    }
}
