//! The algorithms, one entry each: everything the rest of ckptsim knows
//! about an algorithm comes from its [`AlgorithmInfo`] (its name on the
//! command line and in scenarios, its description for `ckptsim list` and
//! the docs, the guarantee it promises, the kind of barrier its checkpoints
//! start with, its concurrency limit, how the coordinator and the tasks
//! treat it, its handler constructor, its colour in charts).
//!
//! Adding an algorithm is one new file in `sim/protocol/` (its handler and
//! its `INFO`, with its `pub mod` line) plus one line in [`REGISTRY`] and
//! its row in docs/algorithms.md's table (a test holds the table to the
//! registry); the CLI's values, `ckptsim list` and the tests' algorithm
//! sets derive from it. The Flink export maps only the algorithms Flink
//! has, by name (docs/algorithms.md walks through an example).

use super::{BarrierHandler, BarrierKind, HandlerConfig};
use serde::{Deserialize, Serialize};
use std::sync::RwLock;

/// Every algorithm, in the order of `ckptsim list`.
pub static REGISTRY: &[&AlgorithmInfo] = &[
    &super::aligned::INFO,
    &super::unaligned::INFO,
    &super::aligned_timeout::INFO,
    &super::at_least_once::INFO,
    &super::chandy_lamport::INFO,
    &super::stop_the_world::INFO,
    &super::uncoordinated::INFO,
    &super::cic_bcs::INFO,
    &super::cic_hmnr::INFO,
    &super::none::INFO,
];

/// How the coordinator takes a checkpoint.
#[derive(Clone, Copy, Debug)]
pub enum Coordination {
    /// Barriers from the sources through the job (Flink's).
    Barriers,
    /// Pause the sources, wait until every channel drained (drain markers
    /// report to the coordinator), then ask every task for its snapshot.
    StopTheWorld,
    /// No coordination: every task checkpoints on its own timer, and when
    /// its [`LocalRule`](super::local::LocalRule) forces it; every task
    /// logs what it sends; the coordinator computes recovery lines
    /// (`runtime::world::local`). The constructor gives each task its rule.
    Local(fn(&super::local::LocalConfig) -> Box<dyn super::local::LocalRule>),
}

/// Compared by kind (two `Local` rules are the same kind of coordination).
impl PartialEq for Coordination {
    fn eq(&self, other: &Coordination) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}
impl Eq for Coordination {}

impl Coordination {
    /// The uncoordinated families (`Local`).
    pub fn is_local(self) -> bool {
        matches!(self, Coordination::Local(_))
    }
}

/// One algorithm: everything ckptsim knows about it.
pub struct AlgorithmInfo {
    /// Its name on the command line and in scenario files.
    pub name: &'static str,
    /// One line for `ckptsim list` and the docs table.
    pub description: &'static str,
    /// The strongest guarantee it promises for state and 2PC output.
    pub promise: Guarantee,
    /// Takes periodic checkpoints at all (`none` does not; its savepoints
    /// still work).
    pub checkpoints: bool,
    /// The kind of barrier its checkpoints start with at the sources
    /// (savepoints are always aligned).
    pub first_barrier: BarrierKind,
    /// The most concurrent checkpoints it supports, if limited.
    pub max_concurrent: Option<u32>,
    pub coordination: Coordination,
    /// A task must close every checkpoint it started (with its barrier or a
    /// cancellation marker) before a newer one (FLINK-18238); Flink's
    /// at-least-once tracker drops superseded checkpoints silently.
    pub closes_superseded: bool,
    /// Its savepoints are aligned (a Chandy–Lamport savepoint is a
    /// Chandy–Lamport snapshot and may carry channel state).
    pub aligned_savepoints: bool,
    /// Flink's forced alignment applies: a task with a forward or broadcast
    /// input gets the aligned handler.
    pub forced_alignment: bool,
    /// Its aligned (and timeoutable) barriers block the producer's side of
    /// the channel once handed out, until the consumer's resume arrives
    /// (Flink's `isBlockingUpstream` barrier types, `resumeConsumption`);
    /// unaligned barriers never block.
    pub blocks_upstream: bool,
    /// Its colour in charts (RGB).
    pub colour: (u8, u8, u8),
    /// Its per-task barrier handler.
    pub handler: fn(&HandlerConfig) -> Box<dyn BarrierHandler>,
}

/// An algorithm: a handle on its registry entry (compared by name).
#[derive(Clone, Copy)]
pub struct Algorithm(&'static AlgorithmInfo);

#[allow(non_upper_case_globals)]
impl Algorithm {
    pub const Aligned: Algorithm = Algorithm(&super::aligned::INFO);
    pub const Unaligned: Algorithm = Algorithm(&super::unaligned::INFO);
    pub const AlignedTimeout: Algorithm = Algorithm(&super::aligned_timeout::INFO);
    pub const AtLeastOnce: Algorithm = Algorithm(&super::at_least_once::INFO);
    pub const ChandyLamport: Algorithm = Algorithm(&super::chandy_lamport::INFO);
    pub const StopTheWorld: Algorithm = Algorithm(&super::stop_the_world::INFO);
    pub const Uncoordinated: Algorithm = Algorithm(&super::uncoordinated::INFO);
    pub const CicBcs: Algorithm = Algorithm(&super::cic_bcs::INFO);
    pub const CicHmnr: Algorithm = Algorithm(&super::cic_hmnr::INFO);
    pub const None: Algorithm = Algorithm(&super::none::INFO);
}

/// Algorithms of a user's own, registered at run time ([`register`]), after
/// the built-ins.
static REGISTERED: RwLock<Vec<&'static AlgorithmInfo>> = RwLock::new(Vec::new());

/// A registered name (`what`: "algorithm", "operator kind") is lowercase
/// letters, digits and dashes, and not empty.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let well_formed = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    match well_formed {
        true => Ok(()),
        false => Err(format!(
            "{what} name `{name}`: use lowercase letters, digits and dashes"
        )),
    }
}

/// Registers an algorithm of the caller's own next to the built-ins: from
/// then on scenario files, `--algorithm`, `ckptsim list` and every command
/// know its name, and the same checks judge it. A user's binary registers
/// its algorithms through `cli::main_with` before any command runs. Refused
/// when the name is taken or is not lowercase letters, digits and dashes.
pub fn register(info: &'static AlgorithmInfo) -> Result<(), String> {
    let name = info.name;
    check_name("algorithm", name)?;
    if Algorithm::from_name(name).is_some() {
        return Err(format!("an algorithm named `{name}` exists already"));
    }
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    registered.push(info);
    Ok(())
}

impl Algorithm {
    /// Every algorithm: the built-ins in registry order, then those
    /// registered at run time.
    pub fn all() -> impl Iterator<Item = Algorithm> {
        let registered: Vec<&'static AlgorithmInfo> = REGISTERED
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|e| e.into_inner().clone());
        REGISTRY.iter().copied().chain(registered).map(Algorithm)
    }

    /// An algorithm outside [`REGISTRY`]: a handler of the caller's own
    /// (a test's, or a library user's), run through the same runtime and
    /// judged by the same checks. Scenario files and the command line do not
    /// know its name; set it on a parsed scenario
    /// (`scenario.checkpoint.algorithm = Algorithm::custom(&MY_INFO)`).
    pub fn custom(info: &'static AlgorithmInfo) -> Algorithm {
        Algorithm(info)
    }

    /// The algorithm registered under `name`.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::all().find(|a| a.name() == name)
    }

    /// Every name, comma separated, for messages.
    pub fn names() -> String {
        Algorithm::all()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn info(self) -> &'static AlgorithmInfo {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The strongest guarantee the algorithm promises for state and 2PC output.
    pub fn promise(self) -> Guarantee {
        self.0.promise
    }

    /// The most concurrent checkpoints the algorithm supports, if limited.
    /// Flink refuses `maxConcurrentCheckpoints > 1` with unaligned
    /// checkpoints; the capture-based and stop-the-world variants here keep
    /// one channel-state capture (or one pause) at a time.
    pub fn max_concurrent(self) -> Option<u32> {
        self.0.max_concurrent
    }
}

impl PartialEq for Algorithm {
    fn eq(&self, other: &Algorithm) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Algorithm {}

impl PartialOrd for Algorithm {
    fn partial_cmp(&self, other: &Algorithm) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
/// In registry order.
impl Ord for Algorithm {
    fn cmp(&self, other: &Algorithm) -> std::cmp::Ordering {
        let at = |a: &Algorithm| REGISTRY.iter().position(|i| i.name == a.name());
        at(self).cmp(&at(other))
    }
}

impl std::fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Algorithm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Algorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Algorithm, D::Error> {
        let name = String::deserialize(d)?;
        Algorithm::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown algorithm `{name}` (known: {})",
                Algorithm::names()
            ))
        })
    }
}

/// A delivery guarantee: what an algorithm promises and what the output
/// check measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Guarantee {
    ExactlyOnce,
    /// Output of upsert sinks: writes may repeat (and a key's row may go
    /// back to an older value during a replay), but the finished table is
    /// the exactly-once one. Implies at-least-once.
    EffectivelyOnce,
    AtLeastOnce,
    AtMostOnce,
    Broken,
}

impl Guarantee {
    /// Whether an observed guarantee keeps a declared one: exactly-once keeps
    /// every promise, effectively-once keeps its own and at-least-once,
    /// at-least-once and at-most-once keep their own, and `broken`
    /// (declared) accepts anything.
    pub fn satisfies(self, declared: Guarantee) -> bool {
        self == declared
            || self == Guarantee::ExactlyOnce
            || declared == Guarantee::Broken
            || (self == Guarantee::EffectivelyOnce && declared == Guarantee::AtLeastOnce)
    }

    /// The weaker of two guarantees (the one both keep; `broken` if neither
    /// implies the other).
    pub fn weaker(self, other: Guarantee) -> Guarantee {
        if self.satisfies(other) {
            other
        } else if other.satisfies(self) {
            self
        } else {
            Guarantee::Broken
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Guarantee::ExactlyOnce => "exactly-once",
            Guarantee::EffectivelyOnce => "effectively-once",
            Guarantee::AtLeastOnce => "at-least-once",
            Guarantee::AtMostOnce => "at-most-once",
            Guarantee::Broken => "broken",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static CLASH: AlgorithmInfo = AlgorithmInfo {
        name: "aligned",
        ..super::super::aligned::INFO
    };
    static MALFORMED: AlgorithmInfo = AlgorithmInfo {
        name: "Aligned Twice",
        ..super::super::aligned::INFO
    };

    #[test]
    fn a_taken_or_malformed_name_is_refused() {
        let before = Algorithm::all().count();
        assert!(register(&CLASH).unwrap_err().contains("exists already"));
        assert!(register(&MALFORMED).unwrap_err().contains("lowercase"));
        assert_eq!(Algorithm::all().count(), before);
    }

    #[test]
    fn names_are_unique_and_resolve() {
        for (i, info) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|o| o.name != info.name));
            assert_eq!(
                Algorithm::from_name(info.name).map(|a| a.name()),
                Some(info.name)
            );
        }
        assert_eq!(Algorithm::from_name("nope"), None);
        assert_eq!(Algorithm::Aligned, Algorithm::from_name("aligned").unwrap());
        assert!(Algorithm::Aligned < Algorithm::None);
    }

    #[test]
    fn effectively_once_sits_between_exactly_once_and_at_least_once() {
        use Guarantee::*;
        assert!(EffectivelyOnce.satisfies(EffectivelyOnce));
        assert!(EffectivelyOnce.satisfies(AtLeastOnce));
        assert!(!EffectivelyOnce.satisfies(ExactlyOnce));
        assert!(!EffectivelyOnce.satisfies(AtMostOnce));
        assert!(ExactlyOnce.satisfies(EffectivelyOnce));
        assert!(!AtLeastOnce.satisfies(EffectivelyOnce));
        assert_eq!(ExactlyOnce.weaker(EffectivelyOnce), EffectivelyOnce);
        assert_eq!(AtLeastOnce.weaker(EffectivelyOnce), AtLeastOnce);
        assert_eq!(EffectivelyOnce.weaker(AtMostOnce), Broken);
        assert_eq!(EffectivelyOnce.name(), "effectively-once");
    }
}
