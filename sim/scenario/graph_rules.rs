//! The job-graph rules of validation: sources have no inputs, every
//! other operator has one, sinks have no outputs, forward and keyed inputs
//! fit, no duplicate edges, no cycles (named by their shortest path), and
//! bounded channels and records.

use super::validate::{help, Validator, MAX_CHANNELS, MAX_RECORDS};
use super::*;

/// An edge whose ends are known: its index in the file, from, to, its
/// partitioning (`None` when missing or unknown) and whether it is a
/// feedback edge.
pub(super) type KnownEdge = (usize, usize, usize, Option<Partitioning>, bool);

impl Validator<'_, '_> {
    /// The job-graph rules, for the edges whose ends are known: each
    /// edge's own rules in file order, then the feedback edges, then what
    /// the job as a whole needs, then its bounds.
    pub(super) fn graph(&mut self, edges: &[KnownEdge], all_resolved: bool) {
        let n = self.ops.len();
        // Accepted edges so far (no duplicates, no cycle closers): acyclic.
        let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut has_input = vec![false; n];
        // Feedback edges are checked once every other edge is in.
        let mut feedback = Vec::new();
        // The first edge of each `from -> to`, by its ends.
        let mut first_edge = std::collections::BTreeMap::new();
        for &(index, from, to, partitioning, back) in edges {
            self.at = format!("edges[{index}]");
            has_input[to] = true;
            if back {
                feedback.push((index, from, to, partitioning));
            }
            if let Some(&first) = first_edge.get(&(from, to)) {
                self.duplicate_edge(first, from, to);
                continue;
            }
            first_edge.insert((from, to), index);
            self.edge_ends(from, to, partitioning);
            self.edge_partitioning(from, to, partitioning);
            if !back {
                self.cycle_closed_by(&mut successors, from, to);
            }
        }
        for (index, from, to, partitioning) in feedback {
            self.at = format!("edges[{index}]");
            self.feedback_edge(&successors, from, to, partitioning);
        }
        self.at.clear();
        self.job_inputs_and_outputs(edges, has_input, all_resolved);
        self.log_sources(&successors);
        self.job_bounds(edges);
    }

    fn op_name(&self, i: usize) -> String {
        self.ops[i].id.to_string()
    }

    fn op_kind(&self, i: usize) -> Option<OperatorKind> {
        self.ops[i].kind.clone()
    }

    fn is_kind(&self, i: usize, test: impl Fn(&OperatorKind) -> bool) -> bool {
        self.ops[i].kind.as_ref().is_some_and(test)
    }

    /// `from -> to` repeats edge `first` of the file: reported.
    fn duplicate_edge(&mut self, first: usize, from: usize, to: usize) {
        let (a, b) = (self.op_name(from), self.op_name(to));
        let help = (self.line_of)(&format!("edges[{first}]"))
            .map(|line| format!("the first {a} -> {b} edge is on line {line}; remove one"));
        self.report("", format!("duplicate edge {a} -> {b}"), help);
    }

    /// What may feed what: sources read no inputs, sinks write no outputs
    /// (a Sink V2 writer writes to committers only, a committer to a global
    /// committer only), a committer reads writers only, over a forward edge
    /// unless it is global, and a global committer reads committers only.
    fn edge_ends(&mut self, from: usize, to: usize, partitioning: Option<Partitioning>) {
        let (a, b) = (self.op_name(from), self.op_name(to));
        if self.is_kind(to, OperatorKind::is_source) {
            let help = help("sources read their own log: remove this edge");
            self.report("to", format!("source `{b}` cannot have inputs"), help);
        }
        let writer = |v: &Self, i| v.is_kind(i, |k| matches!(k, OperatorKind::SinkWriter));
        let committer = |v: &Self, i| v.is_kind(i, OperatorKind::is_committer);
        let global = |v: &Self, i| v.is_kind(i, OperatorKind::is_global_committer);
        let allowed = (writer(self, from) && committer(self, to))
            || (committer(self, from) && global(self, to));
        let sink = self
            .op_kind(from)
            .filter(|k| k.is_sink() || k.is_committer() || k.is_global_committer());
        if let Some(k) = sink.filter(|_| !allowed) {
            let help = match k {
                OperatorKind::SinkWriter => {
                    "a Sink V2 writer hands its committables to a `sink-committer` only".to_string()
                }
                OperatorKind::SinkCommitter => {
                    "a Sink V2 committer forwards its committables to a `sink-global-committer` only"
                        .to_string()
                }
                _ => format!(
                    "a `{}` operator writes to the external store: remove this edge",
                    k.name()
                ),
            };
            self.report(
                "from",
                format!("sink `{a}` cannot have outputs"),
                Some(help),
            );
        }
        if committer(self, to) && self.op_kind(from).is_some() && !writer(self, from) {
            let message = format!("committer `{b}` reads from `{a}`, which is not a sink-writer");
            let help = help("a sink-committer reads the committables of sink-writers only");
            self.report("from", message, help);
        }
        if global(self, to) && self.op_kind(from).is_some() && !committer(self, from) {
            let message =
                format!("global committer `{b}` reads from `{a}`, which is not a sink-committer");
            let help = help("a sink-global-committer reads what sink-committers forward");
            self.report("from", message, help);
        }
        let single = self.ops[to].parallelism == Some(1);
        if committer(self, to) && partitioning != Some(Partitioning::Forward) && !single {
            let message = format!(
                "committer `{b}` of parallelism above 1 reads a non-forward edge from `{a}`"
            );
            let help = help(
                "a committer commits the committables of its own writer subtask (partitioning = \"forward\") \
                 or of every writer at parallelism 1 (a global committer)",
            );
            self.report("partitioning", message, help);
        }
    }

    /// What an edge's partitioning must fit: a forward edge joins equal
    /// parallelisms, keyed operators and upsert sinks read hash edges, and
    /// an upsert sink reads a keyed running aggregate.
    fn edge_partitioning(&mut self, from: usize, to: usize, partitioning: Option<Partitioning>) {
        let (a, b) = (self.op_name(from), self.op_name(to));
        let (pf, pt) = (self.ops[from].parallelism, self.ops[to].parallelism);
        if let (Some(Partitioning::Forward), Some(pf), Some(pt)) = (partitioning, pf, pt) {
            if pf != pt {
                let message = format!(
                    "forward edge {a} -> {b} connects parallelism {pf} to parallelism {pt}"
                );
                let help = help("use `rebalance` or `hash`, or make the parallelisms equal");
                self.report("partitioning", message, help);
            }
        }
        let upsert_into = self.is_kind(to, |k| matches!(k, OperatorKind::SinkUpsert { .. }));
        if let Some(p) = partitioning.filter(|p| *p != Partitioning::Hash) {
            if self.is_kind(to, OperatorKind::is_keyed) {
                let message = format!(
                    "keyed operator `{b}` reads a `{}` edge from `{a}`",
                    p.name()
                );
                let help = help("keyed operators read keyed streams: use partitioning = \"hash\"");
                self.report("partitioning", message, help);
            }
            if upsert_into {
                let message = format!("upsert sink `{b}` reads a `{}` edge from `{a}`", p.name());
                let help = help(
                    "an upsert sink overwrites each key's row from one subtask, in the key's \
                     order: use partitioning = \"hash\" (by key)",
                );
                self.report("partitioning", message, help);
            }
        }
        let running_aggregate =
            |k: &OperatorKind| matches!(k, OperatorKind::KeyedCount | OperatorKind::KeyedSum);
        if upsert_into && self.is_kind(from, |k| !running_aggregate(k)) {
            // A key's last row must not depend on how channels interleave:
            // only a running aggregate's last update per key is its final
            // value whatever the order its input arrived in.
            let message = format!(
                "upsert sink `{b}` reads from `{a}`, which is not a keyed running aggregate"
            );
            let help = help(
                "a key's last value depends on the order its records arrive in unless \
                 one keyed-count or keyed-sum subtask produces all of them: put one \
                 before the sink (Flink's SinkUpsertMaterializer plays this part)",
            );
            self.report("from", message, help);
        }
    }

    /// Accepts `from -> to` into `successors`, or reports the cycle it
    /// would close (only if `to` already reaches `from`), by its shortest
    /// path from the operator defined first.
    fn cycle_closed_by(&mut self, successors: &mut [Vec<usize>], from: usize, to: usize) {
        let cycle = match from == to {
            true => Some(vec![from]),
            false => shortest_path(successors, to, from),
        };
        let Some(mut cycle) = cycle else {
            successors[from].push(to);
            return;
        };
        // to .. from is the path; start at the operator defined first.
        cycle.rotate_right(1);
        let start = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
        cycle.rotate_left(start);
        cycle.push(cycle[0]);
        let names: Vec<String> = cycle.iter().map(|&i| self.op_name(i)).collect();
        let message = format!("the job graph has a cycle: {}", names.join(" -> "));
        let help = help("mark the edge that goes back to an earlier operator with feedback = true");
        self.report("", message, help);
    }

    /// A feedback edge closes a cycle of the other edges, and is `hash` or
    /// `rebalance`.
    fn feedback_edge(
        &mut self,
        successors: &[Vec<usize>],
        from: usize,
        to: usize,
        partitioning: Option<Partitioning>,
    ) {
        let closes = from == to || shortest_path(successors, to, from).is_some();
        if !closes {
            let (a, b) = (self.op_name(from), self.op_name(to));
            let message =
                format!("feedback edge {a} -> {b} closes no cycle: `{b}` does not reach `{a}`");
            self.report(
                "feedback",
                message,
                help("remove feedback = true, or point the edge back upstream"),
            );
        }
        if let Some(p) =
            partitioning.filter(|p| !matches!(p, Partitioning::Hash | Partitioning::Rebalance))
        {
            let message = format!(
                "a feedback edge is `hash` or `rebalance`, not `{}`",
                p.name()
            );
            let help = help("Flink forces alignment on forward and broadcast inputs, which a loop would wait on forever");
            self.report("partitioning", message, help);
        }
    }

    /// Every operator but a source has an input, every writer a committer,
    /// and the job a source.
    fn job_inputs_and_outputs(
        &mut self,
        edges: &[KnownEdge],
        has_input: Vec<bool>,
        all_resolved: bool,
    ) {
        for (i, has_input) in has_input.into_iter().enumerate() {
            // With an unresolved edge around, a missing input is most likely
            // that edge: do not pile a second error on the first.
            let needs_input = self.is_kind(i, |k| !k.is_source());
            if needs_input && !has_input && all_resolved && self.ops[i].referable {
                let id = self.op_name(i);
                let help = format!("add an [[edges]] table with to = \"{id}\"");
                let message = format!("operator `{id}` has no inputs");
                self.report(&format!("operators[{i}].id"), message, Some(help));
            }
        }
        // A writer's transactions are committed by a committer only.
        for i in 0..self.ops.len() {
            let is_writer = self.is_kind(i, |k| matches!(k, OperatorKind::SinkWriter));
            if is_writer && self.ops[i].referable && !edges.iter().any(|e| e.1 == i) {
                let id = self.op_name(i);
                let help = format!("add a sink-committer and an [[edges]] table from = \"{id}\"");
                let message = format!("sink-writer `{id}` has no sink-committer");
                self.report(&format!("operators[{i}].id"), message, Some(help));
            }
        }
        // A global committer: one, at parallelism 1, behind one committer.
        for i in 0..self.ops.len() {
            if !self.is_kind(i, OperatorKind::is_global_committer) || !self.ops[i].referable {
                continue;
            }
            let id = self.op_name(i);
            if self.ops[i].parallelism.is_some_and(|p| p != 1) {
                let message = format!("global committer `{id}` has a parallelism above 1");
                let help =
                    help("Flink runs the global committer at parallelism 1: set parallelism = 1");
                self.report(&format!("operators[{i}].parallelism"), message, help);
            }
            let inputs = edges.iter().filter(|e| e.2 == i).count();
            if inputs > 1 {
                let message = format!("global committer `{id}` reads {inputs} edges");
                let help = help("a sink-global-committer reads the one sink-committer of its sink");
                self.report(&format!("operators[{i}].id"), message, help);
            }
        }
        let mut outputs_of = vec![0usize; self.ops.len()];
        for e in edges {
            outputs_of[e.1] += 1;
        }
        for (i, &outputs) in outputs_of.iter().enumerate() {
            if self.is_kind(i, OperatorKind::is_committer) && outputs > 1 {
                let id = self.op_name(i);
                let message = format!("committer `{id}` forwards to {outputs} global committers");
                let help = help("a sink-committer feeds at most one sink-global-committer");
                self.report(&format!("operators[{i}].id"), message, help);
            }
        }
        self.windows_need_watermarks();
        let kinds_known = self.ops.iter().all(|op| op.kind.is_some());
        let mut kinds = self.ops.iter().filter_map(|op| op.kind.as_ref());
        if !self.ops.is_empty() && kinds_known && !kinds.any(OperatorKind::is_source) {
            let help = help("add an [[operators]] table with kind = \"source\"");
            self.report("", "the job has no source operator", help);
        }
    }

    /// An event-time window fires on watermarks: some source must emit them.
    fn windows_need_watermarks(&mut self) {
        let watermarks = self.ops.iter().any(|op| match &op.kind {
            Some(OperatorKind::Source(s)) => {
                s.watermark_interval > crate::engine::SimDuration::ZERO
            }
            _ => false,
        });
        for i in 0..self.ops.len() {
            let what = match self.ops[i].kind {
                Some(OperatorKind::EventTimeWindow { .. }) => "event-time window",
                Some(OperatorKind::KeyedProcess { .. }) => "keyed process function",
                _ => continue,
            };
            if !watermarks && self.ops[i].referable {
                let id = self.op_name(i);
                let message = format!(
                    "{what} `{id}` never fires its event-time timers: no source emits watermarks"
                );
                let help = help("set watermark_interval on a source (e.g. watermark_interval = \"200ms\", Flink's default)");
                self.report(&format!("operators[{i}].kind"), message, help);
            }
        }
    }

    /// Every channel is allocated up front and the input generated in
    /// memory: bound both, so that a typo is an error, not an abort.
    fn job_bounds(&mut self, edges: &[KnownEdge]) {
        let parallelism = |v: &Self, i: usize| u64::from(v.ops[i].parallelism.unwrap_or(1));
        let channels: u64 = edges
            .iter()
            .map(|&(_, from, to, p, _)| match p {
                Some(Partitioning::Forward) => parallelism(self, from),
                _ => parallelism(self, from) * parallelism(self, to),
            })
            .sum();
        if channels > MAX_CHANNELS {
            self.report(
                "",
                format!("the job has {channels} channels; at most {MAX_CHANNELS} are supported"),
                help("lower the parallelism of operators joined by hash, rebalance or broadcast edges"),
            );
        }
        let records = self.ops.iter().filter_map(|op| match &op.kind {
            Some(OperatorKind::Source(s)) => Some(s.total_records()),
            _ => None,
        });
        let records = records.fold(0, u64::saturating_add);
        if records > MAX_RECORDS {
            self.report(
                "",
                format!("the sources hold {records} records in all; at most {MAX_RECORDS} are supported"),
                help("lower records_per_partition (or partition_records) or partitions"),
            );
        }
    }
}

/// Shortest path `start ..= goal` following `successors` (BFS, so the
/// result is deterministic for a given edge order).
///
/// Its cost is what it visits, not the size of the graph: it runs once per
/// edge, so a job of many operators must not pay for all of them each time.
fn shortest_path(successors: &[Vec<usize>], start: usize, goal: usize) -> Option<Vec<usize>> {
    // Each visited operator, with the one it was reached from.
    let mut parent: std::collections::BTreeMap<usize, Option<usize>> =
        std::collections::BTreeMap::from([(start, None)]);
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        if node == goal {
            let mut path = vec![goal];
            while let Some(&Some(p)) = parent.get(path.last()?) {
                path.push(p);
            }
            path.reverse();
            return Some(path);
        }
        for &next in &successors[node] {
            if let std::collections::btree_map::Entry::Vacant(v) = parent.entry(next) {
                v.insert(Some(node));
                queue.push_back(next);
            }
        }
    }
    None
}
