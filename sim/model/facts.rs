//! Facts of an operator kind the runtime needs, each a small method with
//! one meaning, so that the runtime asks the kind instead of matching on it
//! (`grep "OperatorKind::" sim/runtime` finds nothing it decides by).
//!
//! They answer from the kind's validated keys only; they must never look at
//! a run (time, tasks, state): the run plan reads them once.

use crate::scenario::{OperatorKind, RECORD_BYTES};

impl OperatorKind {
    /// A source some partition of which emits at a rate, or one that reads
    /// the log (when it polls changes what it emits).
    pub fn emits_at_rate(&self) -> bool {
        matches!(self, OperatorKind::SourceLog { .. })
            || self.source_spec().is_some_and(|src| {
                src.records_per_second > 0 || src.partition_rates.iter().any(|&r| r > 0)
            })
    }

    /// A source whose records are the generated input's (not a topic's of
    /// the log, which carry the lineage they were written with).
    pub fn reads_input(&self) -> bool {
        self.source_spec().is_some()
    }

    /// The mean size in bytes of a record it reads or emits: a source's
    /// configured record size, `RECORD_BYTES` for every other kind.
    pub fn mean_record_bytes(&self) -> u64 {
        match self.source_spec() {
            Some(src) => (src.record_size + src.record_size_max) / 2,
            None => RECORD_BYTES,
        }
    }

    /// Records it emits per record it takes in, at most (a flat-map's
    /// copies; 1 for every other kind that passes records on).
    pub fn copies_per_record(&self) -> u32 {
        match self {
            OperatorKind::FlatMap { copies } => *copies,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse_str, shipped::shipped, OperatorKind};

    /// The kinds of a shipped scenario's operators, by id.
    fn kinds(name: &str) -> Vec<(String, OperatorKind)> {
        let text = shipped(name).unwrap_or_else(|| panic!("no scenario {name}"));
        let s = parse_str(text, name).unwrap_or_else(|e| panic!("{e}"));
        s.operators
            .iter()
            .map(|o| (o.id.clone(), o.kind.clone()))
            .collect()
    }

    #[test]
    fn a_rated_source_has_its_settings_and_emits_at_a_rate() {
        let k = kinds("checkmate");
        let (sources, others): (Vec<_>, Vec<_>) = k.iter().partition(|(_, k)| k.is_source());
        assert!(!sources.is_empty() && !others.is_empty());
        for (id, kind) in &sources {
            let src = kind.source_spec().unwrap_or_else(|| panic!("{id}"));
            assert!(kind.emits_at_rate(), "{id}");
            assert_eq!(
                kind.mean_record_bytes(),
                (src.record_size + src.record_size_max) / 2
            );
        }
        for (id, kind) in &others {
            assert!(kind.source_spec().is_none(), "{id}");
            assert!(!kind.emits_at_rate(), "{id}");
            assert_eq!(kind.mean_record_bytes(), crate::scenario::RECORD_BYTES);
            assert_eq!(kind.copies_per_record(), 1, "{id}");
        }
    }

    #[test]
    fn only_a_union_buffer_has_union_list_state_layout() {
        let k = kinds("operator-state");
        let union: Vec<&str> = k
            .iter()
            .filter(|(_, k)| k.state_layout().is_union())
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(union.len(), 1, "{union:?}");
        assert!(
            k.iter()
                .any(|(_, k)| matches!(k, OperatorKind::Buffer { .. })
                    && !k.state_layout().is_union())
        );
    }
}
