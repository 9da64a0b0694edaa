//! Virtual time: integer nanoseconds since the start of a run.
//!
//! Nothing in the simulation reads a wall clock. Durations in scenario files
//! are parsed here from decimal strings with integer arithmetic only, so
//! `"7.3s"` is exactly 7_300_000_000 ns on every machine.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in virtual time, in nanoseconds since the run started.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A span of virtual time in nanoseconds.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn nanos(self) -> u64 {
        self.0
    }

    /// Saturating: time never wraps.
    pub fn plus(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }

    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_nanos(n: u64) -> Self {
        SimDuration(n)
    }
    pub const fn from_micros(n: u64) -> Self {
        SimDuration(n * 1_000)
    }
    pub const fn from_millis(n: u64) -> Self {
        SimDuration(n * 1_000_000)
    }
    pub const fn from_secs(n: u64) -> Self {
        SimDuration(n * 1_000_000_000)
    }
    pub fn nanos(self) -> u64 {
        self.0
    }
    pub fn times(self, n: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(n))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&SimDuration(self.0), f)
    }
}

impl fmt::Display for SimDuration {
    /// Shortest exact rendering in the largest unit that keeps it readable:
    /// `7.3s`, `200ms`, `1.5us`, `12ns`. Round-trips through [`parse_duration`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let (unit, scale) = if n >= 1_000_000_000 {
            ("s", 1_000_000_000)
        } else if n >= 1_000_000 {
            ("ms", 1_000_000)
        } else if n >= 1_000 {
            ("us", 1_000)
        } else {
            return write!(f, "{n}ns");
        };
        let whole = n / scale;
        let frac = n % scale;
        if frac == 0 {
            return write!(f, "{whole}{unit}");
        }
        let width = scale.ilog10() as usize;
        let digits = format!("{frac:0width$}");
        write!(f, "{whole}.{}{unit}", digits.trim_end_matches('0'))
    }
}

impl SimDuration {
    /// Rounded for reading, to at most three decimals of the unit
    /// `Display` picks (`1.317633ms` → `1.318ms`, `2.0004s` → `2s`); a
    /// duration under a millisecond stays exact. For summaries; event
    /// times and files keep the exact value.
    pub fn readable(self) -> SimDuration {
        let n = self.0;
        let grain = match n {
            1_000_000_000.. => 1_000_000,
            1_000_000.. => 1_000,
            _ => 1,
        };
        SimDuration(n.saturating_add(grain / 2) / grain * grain)
    }
}

/// The exact text of a duration, as scenario files write it: an integer in
/// the largest unit that holds it exactly (`"2h"`, `"90s"`, `"1001us"`,
/// `"3000000007ns"`), `"0s"` for zero. [`parse_duration`] reads it back to
/// the same value.
pub fn duration_text(d: SimDuration) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ];
    let n = d.nanos();
    if n == 0 {
        return "0s".to_string();
    }
    let (unit, scale) = UNITS
        .into_iter()
        .find(|(_, scale)| n.is_multiple_of(*scale))
        .unwrap_or(("ns", 1));
    format!("{}{unit}", n / scale)
}

/// Parses `"7.3s"`, `"200ms"`, `"150us"` (or `"150µs"`), `"10ns"`, `"2m"`, `"0"`.
/// Integer arithmetic only; fractions finer than a nanosecond are an error.
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let s = text.trim();
    if s == "0" {
        return Ok(SimDuration::ZERO);
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .ok_or_else(|| {
            format!("duration `{text}` has no unit: write e.g. \"200ms\", \"1.5s\", \"50us\" or \"10ns\"")
        })?;
    let (num, unit) = s.split_at(split);
    let scale: u64 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other => {
            return Err(format!(
                "duration `{text}` has unknown unit `{other}`: use ns, us, ms, s, m or h"
            ))
        }
    };
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!("duration `{text}` has no number before its unit"));
    }
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    let bad = || format!("duration `{text}` is not a number followed by a unit");
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| bad())?
    };
    let mut total = int
        .checked_mul(scale)
        .ok_or_else(|| format!("duration `{text}` is too large"))?;
    if !frac_part.is_empty() {
        if !frac_part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let mut place = scale;
        for b in frac_part.bytes() {
            if place < 10 {
                if b != b'0' {
                    return Err(format!("duration `{text}` is finer than one nanosecond"));
                }
                continue;
            }
            place /= 10;
            total = total
                .checked_add(u64::from(b - b'0') * place)
                .ok_or_else(|| format!("duration `{text}` is too large"))?;
        }
    }
    Ok(SimDuration(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_durations_keep_three_decimals_of_their_unit() {
        for (ns, text) in [
            (1_317_633, "1.318ms"),
            (141_296_996, "141.297ms"),
            (816_626, "816.626us"),
            (2_000_400_000, "2s"),
            (59_999_999, "60ms"),
            (999_999_600, "1s"),
            (7, "7ns"),
            (u64::MAX, "18446744073.709s"),
        ] {
            assert_eq!(SimDuration(ns).readable().to_string(), text, "{ns}");
        }
    }

    #[test]
    fn parses_and_prints() {
        for (text, ns) in [
            ("7.3s", 7_300_000_000),
            ("200ms", 200_000_000),
            ("1.5us", 1_500),
            ("10ns", 10),
            ("0", 0),
            ("2m", 120_000_000_000),
            ("0.000000001s", 1),
        ] {
            assert_eq!(parse_duration(text), Ok(SimDuration(ns)), "{text}");
        }
        assert_eq!(SimDuration(7_300_000_000).to_string(), "7.3s");
        assert_eq!(SimDuration(1_500).to_string(), "1.5us");
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("0.5ns").is_err());
        // The whole part fits in u64 nanoseconds, the fraction tips it over.
        assert_eq!(
            parse_duration("18446744073.709551615s"),
            Ok(SimDuration(u64::MAX))
        );
        assert_eq!(
            parse_duration("18446744073.709551616s"),
            Err("duration `18446744073.709551616s` is too large".to_string())
        );
        assert!(parse_duration("18446744073.999999999s").is_err());
        for ns in [1u64, 999, 1_000, 1_234_567, 7_300_000_000, 90_000_000_001] {
            let d = SimDuration(ns);
            assert_eq!(parse_duration(&d.to_string()), Ok(d));
        }
    }
}
