//! Job topologies: a DAG of 2–6 operators with parallelisms and
//! partitionings, built and checked with petgraph.

use super::{MAX_OPERATORS, MAX_PARALLELISM};
use crate::scenario::schema::{self, Kind};
use crate::scenario::{Algorithm, Partitioning, Scenario};
use petgraph::graph::{DiGraph, NodeIndex};
use proptest::prelude::*;
/// The kind of a generated operator, with its kind-specific keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenKind {
    Source,
    Map { mul: i64, add: i64 },
    Filter { modulus: u64, keep_below: u64 },
    FlatMap { copies: u32 },
    KeyedCount,
    KeyedSum,
    Sink2pc,
}

impl GenKind {
    /// The operator's `kind` in the scenario file.
    pub fn kind(&self) -> Kind {
        match self {
            GenKind::Source => Kind::Source,
            GenKind::Map { .. } => Kind::Map,
            GenKind::Filter { .. } => Kind::Filter,
            GenKind::FlatMap { .. } => Kind::FlatMap,
            GenKind::KeyedCount => Kind::KeyedCount,
            GenKind::KeyedSum => Kind::KeyedSum,
            GenKind::Sink2pc => Kind::Sink2pc,
        }
    }

    /// The `kind` value in the scenario file.
    pub fn name(&self) -> String {
        schema::name_of(&self.kind())
    }

    /// Prefix of generated operator ids ("src0", "count3", "sink5").
    fn prefix(&self) -> &'static str {
        match self {
            GenKind::Source => "src",
            GenKind::Map { .. } => "map",
            GenKind::Filter { .. } => "filter",
            GenKind::FlatMap { .. } => "flatmap",
            GenKind::KeyedCount => "count",
            GenKind::KeyedSum => "sum",
            GenKind::Sink2pc => "sink",
        }
    }

    pub fn is_source(&self) -> bool {
        matches!(self, GenKind::Source)
    }

    pub fn is_sink(&self) -> bool {
        matches!(self, GenKind::Sink2pc)
    }

    /// Keyed operators read only `hash` edges.
    pub fn is_keyed(&self) -> bool {
        matches!(self, GenKind::KeyedCount | GenKind::KeyedSum)
    }
}

/// One generated operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOperator {
    /// Unique id: the kind's prefix and the operator's index (`map2`).
    pub id: String,
    pub kind: GenKind,
    /// 1 to [`MAX_PARALLELISM`].
    pub parallelism: u32,
}

/// One generated edge, by operator index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenEdge {
    pub from: usize,
    pub to: usize,
    pub partitioning: Partitioning,
}

/// A generated job graph. Operators are in topological order: sources first,
/// then the operators in between, then the sinks; every edge goes from a
/// lower to a higher index.
///
/// Invariants (checked with petgraph when it is built): acyclic; one or two
/// sources and at least one sink; every operator is reachable from a source
/// and reaches a sink; no duplicate edges; `forward` only between equal
/// parallelisms; keyed operators read only `hash` edges;
/// `max_parallelism` is at least every parallelism.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub max_parallelism: u32,
    pub operators: Vec<GenOperator>,
    pub edges: Vec<GenEdge>,
}

impl Topology {
    /// The job graph as a petgraph: node weights are operator indices, edge
    /// weights partitionings; node `i` is operator `i`.
    pub fn graph(&self) -> DiGraph<usize, Partitioning> {
        let mut graph = DiGraph::new();
        for i in 0..self.operators.len() {
            graph.add_node(i);
        }
        for e in &self.edges {
            graph.add_edge(NodeIndex::new(e.from), NodeIndex::new(e.to), e.partitioning);
        }
        graph
    }

    /// Indices of the source operators, in order.
    pub fn sources(&self) -> Vec<usize> {
        (0..self.operators.len())
            .filter(|&i| self.operators[i].kind.is_source())
            .collect()
    }

    /// Whether the graph has no cycle (petgraph's `is_cyclic_directed`).
    pub fn is_acyclic(&self) -> bool {
        !petgraph::algo::is_cyclic_directed(&self.graph())
    }

    /// Whether every operator is reachable from some source and reaches some
    /// sink.
    pub fn is_connected(&self) -> bool {
        let graph = self.graph();
        let n = self.operators.len();
        let kind = |i: usize| &self.operators[i].kind;
        let reaches = |a: usize, b: usize| {
            petgraph::algo::has_path_connecting(&graph, NodeIndex::new(a), NodeIndex::new(b), None)
        };
        (0..n).all(|i| {
            (0..n).any(|s| kind(s).is_source() && reaches(s, i))
                && (0..n).any(|t| kind(t).is_sink() && reaches(i, t))
        })
    }

    /// The job graph of a parsed scenario, for the predicates below; `None`
    /// if it has an operator kind the strategies never generate
    /// (`sink-at-least-once`). Operators keep file order.
    pub fn from_scenario(scenario: &Scenario) -> Option<Topology> {
        use crate::scenario::OperatorKind as K;
        let operators = scenario
            .operators
            .iter()
            .map(|op| {
                let kind = match &op.kind {
                    K::Source(_) => GenKind::Source,
                    K::Map { mul, add } => GenKind::Map {
                        mul: *mul,
                        add: *add,
                    },
                    K::Filter {
                        modulus,
                        keep_below,
                    } => GenKind::Filter {
                        modulus: *modulus,
                        keep_below: *keep_below,
                    },
                    K::FlatMap { copies } => GenKind::FlatMap { copies: *copies },
                    K::KeyedCount => GenKind::KeyedCount,
                    K::KeyedSum => GenKind::KeyedSum,
                    K::Sink2pc => GenKind::Sink2pc,
                    K::SinkAtLeastOnce { .. }
                    | K::SinkUpsert { .. }
                    | K::SinkLog { .. }
                    | K::SourceLog { .. }
                    | K::CountWindow { .. }
                    | K::EventTimeWindow { .. }
                    | K::KeyedProcess { .. }
                    | K::MinLabel { .. }
                    | K::Buffer { .. }
                    | K::BroadcastProcess { .. }
                    | K::SinkWriter
                    | K::SinkCommitter
                    | K::SinkGlobalCommitter
                    | K::Custom(_) => return None,
                };
                Some(GenOperator {
                    id: op.id.clone(),
                    kind,
                    parallelism: op.parallelism,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let edges = scenario
            .edges
            .iter()
            .map(|e| GenEdge {
                from: e.from.0 as usize,
                to: e.to.0 as usize,
                partitioning: e.partitioning,
            })
            .collect();
        Some(Topology {
            max_parallelism: scenario.max_parallelism,
            operators,
            edges,
        })
    }

    /// Whether operator `i` has a `forward` or `broadcast` input: with
    /// `unaligned` and `aligned-timeout` it then aligns all its inputs
    /// (Flink's forced alignment, see `docs/algorithms.md`).
    pub fn forced_aligned(&self, i: usize) -> bool {
        self.edges.iter().any(|e| {
            e.to == i
                && matches!(
                    e.partitioning,
                    Partitioning::Forward | Partitioning::Broadcast
                )
        })
    }

    /// Whether the graph has a shape in which `algorithm` can deadlock, a
    /// known finding of the model (kept as
    /// `tests/regressions/unaligned-forced-alignment-deadlock.toml`). Only
    /// `unaligned` and `aligned-timeout` have one:
    ///
    /// an operator `T` that blocks inputs while other barriers are missing —
    /// with `unaligned` a forced-aligned one; with `aligned-timeout` any, as
    /// channels that delivered their aligned barrier stay blocked after a
    /// switch to unaligned — reads an operator `U` that works unaligned
    /// (neither a source nor forced aligned) or is downstream of one, and
    /// another operator `X`; and a forced-aligned operator `A` (not `T`) is
    /// upstream of `U` and upstream of (or is) `X`.
    ///
    /// The unaligned operator snapshots at its first barrier (or when its
    /// alignment times out) and forwards its barrier at once, so `U`
    /// forwards its barrier to `T` before the data ahead of the barrier
    /// upstream has passed; `T` blocks that channel while it waits for `X`'s
    /// barrier; `U`'s post-barrier output to `T` fills and `U` stops
    /// reading, which backs up everything between `A` and `U`; `A` aligns,
    /// so its barrier waits in line behind input it no longer reads, and `X`
    /// never gets it.
    pub fn deadlock_risk(&self, algorithm: Algorithm) -> bool {
        // Only checkpoints that can go unaligned forward a barrier before
        // their alignment ends; a timeoutable one keeps the channels that
        // already delivered their barrier blocked after the switch
        // (FLINK-22638), so any such channel can be the blocker.
        let any_blocker = match algorithm.info().first_barrier {
            crate::protocol::BarrierKind::Unaligned => false,
            crate::protocol::BarrierKind::Timeoutable => true,
            crate::protocol::BarrierKind::Aligned => return false,
        };
        let graph = self.graph();
        let n = self.operators.len();
        let reaches = |a: usize, b: usize| {
            a == b
                || petgraph::algo::has_path_connecting(
                    &graph,
                    NodeIndex::new(a),
                    NodeIndex::new(b),
                    None,
                )
        };
        let source = |i: usize| self.operators[i].kind.is_source();
        let forced = |i: usize| !source(i) && self.forced_aligned(i);
        let unaligned = |i: usize| !source(i) && !self.forced_aligned(i);
        let early = |i: usize| (0..n).any(|w| unaligned(w) && reaches(w, i));
        let blocker = |i: usize| forced(i) || (any_blocker && !source(i));
        (0..n).filter(|&t| blocker(t)).any(|t| {
            let inputs: Vec<usize> = self
                .edges
                .iter()
                .filter(|e| e.to == t)
                .map(|e| e.from)
                .collect();
            inputs.iter().filter(|&&u| early(u)).any(|&u| {
                inputs
                    .iter()
                    .filter(|&&x| x != u)
                    .any(|&x| (0..n).any(|a| a != t && forced(a) && reaches(a, u) && reaches(a, x)))
            })
        })
    }

    /// Every rule in the type's documentation; `Err` names the first broken one.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.operators.len();
        if !(2..=MAX_OPERATORS).contains(&n) {
            return Err(format!("{n} operators"));
        }
        let sources = self.sources().len();
        if !(1..=2).contains(&sources) {
            return Err(format!("{sources} sources"));
        }
        if !self.operators.iter().any(|o| o.kind.is_sink()) {
            return Err("no sink".to_string());
        }
        if let Some(o) = self
            .operators
            .iter()
            .find(|o| !(1..=MAX_PARALLELISM).contains(&o.parallelism))
        {
            return Err(format!("parallelism {} of {}", o.parallelism, o.id));
        }
        if self
            .operators
            .iter()
            .any(|o| o.parallelism > self.max_parallelism)
        {
            return Err("max_parallelism below a parallelism".to_string());
        }
        for (i, e) in self.edges.iter().enumerate() {
            let (from, to) = (&self.operators[e.from], &self.operators[e.to]);
            if e.from >= e.to {
                return Err(format!("edge {} -> {} goes backwards", from.id, to.id));
            }
            if to.kind.is_source() || from.kind.is_sink() {
                return Err(format!("edge {} -> {}", from.id, to.id));
            }
            if self.edges[..i]
                .iter()
                .any(|d| (d.from, d.to) == (e.from, e.to))
            {
                return Err(format!("duplicate edge {} -> {}", from.id, to.id));
            }
            if e.partitioning == Partitioning::Forward && from.parallelism != to.parallelism {
                return Err(format!("forward edge {} -> {}", from.id, to.id));
            }
            if to.kind.is_keyed() && e.partitioning != Partitioning::Hash {
                return Err(format!("keyed {} reads a non-hash edge", to.id));
            }
        }
        if petgraph::algo::toposort(&self.graph(), None).is_err() {
            return Err("cyclic".to_string());
        }
        if !self.is_connected() {
            return Err("not connected".to_string());
        }
        Ok(())
    }

    /// Records entering each operator (for a source: records it emits) when
    /// the sources emit `source_records` (one value per source, in order),
    /// counting every flat-map copy and every broadcast copy and assuming
    /// filters keep everything: an upper bound on the work of each operator.
    pub fn flow(&self, source_records: &[u64]) -> Vec<u64> {
        let n = self.operators.len();
        let mut input = vec![0u64; n];
        let mut output = vec![0u64; n];
        let mut next_source = 0;
        // Operators are in topological order.
        for i in 0..n {
            let op = &self.operators[i];
            if op.kind.is_source() {
                input[i] = source_records.get(next_source).copied().unwrap_or(0);
                next_source += 1;
            } else {
                input[i] = self
                    .edges
                    .iter()
                    .filter(|e| e.to == i)
                    .map(|e| match e.partitioning {
                        Partitioning::Broadcast => output[e.from] * u64::from(op.parallelism),
                        _ => output[e.from],
                    })
                    .sum();
            }
            output[i] = match op.kind {
                GenKind::FlatMap { copies } => input[i] * u64::from(copies),
                GenKind::Sink2pc => 0,
                _ => input[i],
            };
        }
        input
    }
}

/// Kinds of the operators between sources and sinks, with their keys.
fn middle_kind() -> impl Strategy<Value = GenKind> {
    prop_oneof![
        (-3i64..=3, -10i64..=10).prop_map(|(mul, add)| GenKind::Map { mul, add }),
        (1u64..=5, 0u64..=5).prop_map(|(modulus, keep)| GenKind::Filter {
            modulus,
            // At least one key class survives unless the draw says 0.
            keep_below: keep.min(modulus),
        }),
        (1u32..=3).prop_map(|copies| GenKind::FlatMap { copies }),
        Just(GenKind::KeyedCount),
        Just(GenKind::KeyedSum),
    ]
}

/// The draws for one non-source operator (shrinking works on these).
#[derive(Clone, Debug)]
struct NodeDraw {
    /// Ignored for sinks.
    kind: GenKind,
    /// 1–4, or 0: the parallelism of its first input.
    parallelism: u32,
    /// Which earlier operators feed it (bit `c`: the `c`-th candidate, in
    /// operator order); none set: one chosen by `fallback`.
    inputs: u8,
    /// Picks the input when `inputs` selects none, and the downstream
    /// operator when nothing reads this one.
    fallback: u8,
    /// Partitioning choice for the edge from its `c`-th candidate input.
    partitioning: Vec<u8>,
}

fn node_draw() -> impl Strategy<Value = NodeDraw> {
    (
        middle_kind(),
        0u32..=MAX_PARALLELISM,
        any::<u8>(),
        any::<u8>(),
        prop::collection::vec(any::<u8>(), MAX_OPERATORS),
    )
        .prop_map(
            |(kind, parallelism, inputs, fallback, partitioning)| NodeDraw {
                kind,
                parallelism,
                inputs,
                fallback,
                partitioning,
            },
        )
}

/// A random job graph of 2–6 operators: one or two sources, at least one
/// `sink-2pc`, maps, filters, flat-maps and keyed counts/sums in between;
/// parallelism 1–4 (often equal to the upstream operator's, so `forward`
/// edges occur); per edge a partitioning that the validator accepts
/// (`forward` only between equal parallelisms, `hash` into keyed operators,
/// `hash`, `rebalance` or `broadcast` anywhere else). Operators may have
/// several inputs and several outputs. See [`Topology`] for the invariants;
/// they are checked with petgraph on every draw.
///
/// The operators are drawn as lists (sources, operators in between, sinks),
/// so shrinking removes whole operators, then simplifies the rest: fewer
/// inputs, `map` before other kinds, lower parallelism.
pub fn topology() -> impl Strategy<Value = Topology> {
    (
        prop::collection::vec((0u32..=MAX_PARALLELISM, any::<u8>()), 1..=2),
        prop::collection::vec(node_draw(), 0..=MAX_OPERATORS - 2),
        prop::collection::vec(node_draw(), 1..=3),
        prop_oneof![Just(128u32), 4u32..=64],
    )
        .prop_map(|(sources, middles, sinks, max_parallelism)| {
            build_topology(&sources, &middles, &sinks, max_parallelism)
        })
}

/// The edges into each operator from its inputs, in order: `hash` into a
/// keyed operator, otherwise the drawn `choice` among the partitionings
/// the two parallelisms allow.
fn draw_edges(
    inputs: &[Vec<usize>],
    operators: &[GenOperator],
    choice: impl Fn(usize, usize) -> usize,
) -> Vec<GenEdge> {
    let mut edges = Vec::new();
    for (to, ins) in inputs.iter().enumerate() {
        let mut ins = ins.clone();
        ins.sort_unstable();
        for from in ins {
            let (pf, pt) = (operators[from].parallelism, operators[to].parallelism);
            let partitioning = if operators[to].kind.is_keyed() {
                Partitioning::Hash
            } else {
                let mut options = Vec::with_capacity(4);
                if pf == pt {
                    options.push(Partitioning::Forward);
                }
                options.extend([
                    Partitioning::Hash,
                    Partitioning::Rebalance,
                    Partitioning::Broadcast,
                ]);
                options[choice(to, from) % options.len()]
            };
            edges.push(GenEdge {
                from,
                to,
                partitioning,
            });
        }
    }
    edges
}

fn build_topology(
    sources: &[(u32, u8)],
    middles: &[NodeDraw],
    sinks: &[NodeDraw],
    max_parallelism: u32,
) -> Topology {
    let s = sources.len();
    let k = sinks.len();
    let middles = &middles[..middles.len().min(MAX_OPERATORS - s - k)];
    let first_sink = s + middles.len();
    let n = first_sink + k;
    // Draws of operator `j` (`None` for sources).
    let node = |j: usize| -> Option<&NodeDraw> {
        if j < s {
            None
        } else if j < first_sink {
            Some(&middles[j - s])
        } else {
            Some(&sinks[j - first_sink])
        }
    };
    let fallback = |j: usize| match node(j) {
        None => sources[j].1 as usize,
        Some(d) => d.fallback as usize,
    };
    let kinds: Vec<GenKind> = (0..n)
        .map(|j| match node(j) {
            None => GenKind::Source,
            Some(_) if j >= first_sink => GenKind::Sink2pc,
            Some(d) => d.kind.clone(),
        })
        .collect();

    // Inputs: a non-empty subset of the earlier non-sink operators.
    let mut inputs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, slot) in inputs.iter_mut().enumerate().skip(s) {
        let d = node(j).expect("not a source");
        let candidates = j.min(first_sink);
        let mut chosen: Vec<usize> = (0..candidates)
            .filter(|&c| d.inputs & (1 << c) != 0)
            .collect();
        if chosen.is_empty() {
            chosen.push(d.fallback as usize % candidates);
        }
        *slot = chosen;
    }
    let mut parallelism = vec![1u32; n];
    for j in 0..n {
        let drawn = match node(j) {
            None => sources[j].0,
            Some(d) => d.parallelism,
        };
        parallelism[j] = match (drawn, inputs[j].first()) {
            (0, Some(&first)) => parallelism[first],
            (0, None) => 1,
            (p, _) => p,
        };
    }
    // Outputs: an operator nothing reads feeds a later non-source operator.
    for i in 0..first_sink {
        if !inputs.iter().any(|ins| ins.contains(&i)) {
            let first = i.max(s - 1) + 1;
            let t = first + fallback(i) % (n - first);
            inputs[t].push(i);
        }
    }

    let operators: Vec<GenOperator> = kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| GenOperator {
            id: format!("{}{i}", kind.prefix()),
            kind,
            parallelism: parallelism[i],
        })
        .collect();
    let choice = |to: usize, from: usize| node(to).map_or(0, |d| d.partitioning[from] as usize);
    let edges = draw_edges(&inputs, &operators, choice);
    let topology = Topology {
        max_parallelism,
        operators,
        edges,
    };
    if let Err(e) = topology.validate() {
        panic!("strategies::topology built an invalid topology ({e}): {topology:?}");
    }
    topology
}
