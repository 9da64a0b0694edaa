//! The duration types of the file format: a duration or a time as text,
//! and a checkpoint interval that may be `"none"`.

use crate::engine::{duration_text, parse_duration, SimDuration, SimTime};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A duration or a time as files write it: `"500ms"`, `"1.5s"`, `"100us"`.
/// Read with [`parse_duration`]; written exactly by [`duration_text`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub SimDuration);

impl Duration {
    pub fn time(self) -> SimTime {
        SimTime(self.0.nanos())
    }
}

impl From<SimTime> for Duration {
    fn from(t: SimTime) -> Self {
        Duration(SimDuration(t.0))
    }
}

pub(super) const fn us(n: u64) -> Duration {
    Duration(SimDuration::from_micros(n))
}
pub(super) const fn ms(n: u64) -> Duration {
    Duration(SimDuration::from_millis(n))
}

/// Reads a string through a function inside the deserializer, so that a
/// value it refuses is placed at itself.
/// The second field says what the text is, for a value of another type
/// ("expected a duration such as \"500ms\"").
pub(super) struct Text<F>(pub(super) F, pub(super) &'static str);

/// What a duration is, in messages.
pub(super) const A_DURATION: &str = "a duration such as \"500ms\" (a string)";

impl<T, F: FnOnce(&str) -> Result<T, String>> de::Visitor<'_> for Text<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.1)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&duration_text(self.0))
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Text(
            |text: &str| parse_duration(text).map(Duration),
            A_DURATION,
        ))
    }
}

/// `interval`: a duration, or `"none"` for no periodic checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interval(pub Option<SimDuration>);

impl Serialize for Interval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(d) => Duration(d).serialize(s),
            None => s.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let read = |text: &str| match text.trim() {
            "none" => Ok(Interval(None)),
            _ => parse_duration(text).map(|d| Interval(Some(d))),
        };
        d.deserialize_str(Text(read, "a duration such as \"500ms\", or \"none\""))
    }
}
