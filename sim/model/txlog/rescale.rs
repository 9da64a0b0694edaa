//! A snapshot's state of the log's operators dealt to a job at another
//! parallelism, as Flink's runtime deals the list states their connector
//! keeps: every old subtask's entries in subtask order, in contiguous runs
//! of nearly equal length, the first ones a run longer
//! ([`even_split`]: `RoundRobinOperatorStateRepartitioner`). At the same
//! parallelism each subtask keeps its own state, as in Flink.
//!
//! - **`sink-log`** keeps two list states, as the `KafkaSink`'s writer and
//!   committer do (here one operator):
//!   - the committer's: one entry per old subtask, its committables not
//!     yet committed; a new subtask commits those it gets at its restore;
//!   - the writer's (`KafkaWriterState`): one entry per transactional-id
//!     subtask an old subtask owned, the first with the pool's counter and
//!     the ids of its pre-committed transactions. A new subtask owns the
//!     id subtasks of the entries it gets, or its own if it gets none
//!     (`TransactionOwnership.EXPLICIT_BY_WRITER_STATE`), out of the larger
//!     of the old total and the new parallelism; it names new ids after
//!     the first it owns and aborts the ongoing transactions of every id
//!     whose subtask modulo that total it owns, except the pre-committed
//!     ones its entries list (another subtask's committer may be the one
//!     that commits them). The incrementing naming owns by subtask index
//!     (`IMPLICIT_BY_SUBTASK_ID`) and probes `subtask + k × parallelism`
//!     at restore, which covers a downscale's removed subtasks.
//! - **`source-log`** keeps the reader's splits (`KafkaPartitionSplit`s
//!   with their offsets), one entry each; a new reader gets a run of them,
//!   possibly none (Kafka's enumerator does not hand out again a partition
//!   its checkpoint says it assigned).

use super::sink::{decode_state, encode_state, LogSinkState, Ownership};
use crate::model::operator::{decode, encode, CheckpointId};
use crate::model::opstate::even_split;
use serde::{Deserialize, Serialize};

/// One entry of the writer's list state.
struct WriterEntry {
    owned: u32,
    total: u32,
    /// The first entry of its subtask: the pool's counter, the ids the
    /// pool knew (with their producers) and the pre-committed ids.
    first: Option<FirstOfSubtask>,
}

struct FirstOfSubtask {
    created: u32,
    known: Vec<String>,
    producers: Vec<(String, super::Producer)>,
    precommitted: Vec<String>,
}

/// The `sink-log` states of `old.len()` subtasks dealt to `p` (empty
/// bytes: a subtask that snapshotted nothing).
pub fn sink_states(old: &[Vec<u8>], p: u32) -> Result<Vec<Vec<u8>>, String> {
    if old.len() == p as usize {
        return Ok(old.to_vec());
    }
    let old_p = old.len() as u32;
    let mut checkpoint: CheckpointId = 0;
    let mut committer: Vec<Vec<super::sink::Committable>> = Vec::new();
    let mut writer: Vec<WriterEntry> = Vec::new();
    for (j, bytes) in old.iter().enumerate() {
        if bytes.is_empty() {
            committer.push(Vec::new());
            continue;
        }
        let (state, own) = decode_state(bytes).map_err(|e| format!("subtask {j}: {e}"))?;
        let own = match own {
            Some(own) if !own.owned.is_empty() => own,
            _ => Ownership::own(j as u32, old_p),
        };
        checkpoint = checkpoint.max(state.checkpoint);
        let precommitted = (state.pending.iter())
            .map(|c| c.transactional_id.clone())
            .chain(own.held.iter().cloned())
            .collect();
        let mut first = Some(FirstOfSubtask {
            created: state.created,
            known: state.known,
            producers: state.producers,
            precommitted,
        });
        for &owned in &own.owned {
            writer.push(WriterEntry {
                owned,
                total: own.total,
                first: first.take(),
            });
        }
        committer.push(state.pending);
    }
    let committer_runs = even_split(committer.len(), p);
    let writer_runs = even_split(writer.len(), p);
    let mut out = Vec::with_capacity(p as usize);
    for s in 0..p {
        let entries = &writer[writer_runs[s as usize].clone()];
        let pending = committer[committer_runs[s as usize].clone()].concat();
        out.push(sink_state(s, p, checkpoint, entries, pending));
    }
    Ok(out)
}

/// New subtask `s`'s state from its runs of the two lists.
fn sink_state(
    s: u32,
    p: u32,
    checkpoint: CheckpointId,
    entries: &[WriterEntry],
    pending: Vec<super::sink::Committable>,
) -> Vec<u8> {
    let mut owned: Vec<u32> = entries.iter().map(|e| e.owned).collect();
    owned.sort_unstable();
    let own = match owned.first() {
        None => Ownership::own(s, p),
        Some(_) => Ownership {
            total: (entries.iter().map(|e| e.total).max().unwrap_or(0)).max(p),
            owned,
            held: Vec::new(),
        },
    };
    let mut state = LogSinkState {
        checkpoint,
        pending,
        ..LogSinkState::default()
    };
    let mut held = Vec::new();
    for e in entries {
        let Some(f) = &e.first else {
            continue;
        };
        if Some(&e.owned) == own.owned.first() {
            state.created = f.created;
        }
        state.known.extend(f.known.iter().cloned());
        state.producers.extend(f.producers.iter().cloned());
        held.extend(f.precommitted.iter().cloned());
    }
    state.known.sort();
    state.known.dedup();
    // What this subtask's own committer commits is not held for another.
    let mine: Vec<&String> = state.pending.iter().map(|c| &c.transactional_id).collect();
    held.retain(|id| !mine.contains(&id));
    held.sort();
    held.dedup();
    let own = Ownership { held, ..own };
    encode_state(&state, &own, &Ownership::own(s, p))
}

/// A `source-log` reader's state, as `source.rs` encodes it.
#[derive(Serialize, Deserialize)]
struct Splits {
    splits: Vec<(u32, u64)>,
}

/// The `source-log` states of `old.len()` readers dealt to `p`: every
/// reader gets its run of the splits, possibly none (a state with no
/// split, not an empty one: an empty state is a fresh start).
pub fn source_states(old: &[Vec<u8>], p: u32) -> Result<Vec<Vec<u8>>, String> {
    if old.len() == p as usize {
        return Ok(old.to_vec());
    }
    let splits = source_splits(old)?;
    Ok((even_split(splits.len(), p).into_iter())
        .map(|r| {
            encode(&Splits {
                splits: splits[r].to_vec(),
            })
        })
        .collect())
}

/// A reader's state holding `splits`.
pub fn source_state(splits: &[(u32, u64)]) -> Vec<u8> {
    encode(&Splits {
        splits: splits.to_vec(),
    })
}

/// Every reader's splits, in subtask order.
pub fn source_splits(old: &[Vec<u8>]) -> Result<Vec<(u32, u64)>, String> {
    let mut all = Vec::new();
    for (j, bytes) in old.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
        let s: Splits = decode(bytes, "source-log").map_err(|e| format!("subtask {j}: {e}"))?;
        all.extend(s.splits);
    }
    Ok(all)
}

/// The transactional ids a `sink-log` state lists as pre-committed (its
/// committables), for a snapshot's checks.
pub fn sink_committables(bytes: &[u8]) -> Result<Vec<String>, String> {
    let (state, _) = decode_state(bytes)?;
    Ok(state
        .pending
        .into_iter()
        .map(|c| c.transactional_id)
        .collect())
}

/// The mutants that break this file's rules, declared next to them (the
/// registry, [`crate::mutant::MUTANTS`], lists each once); the hook is in
/// `savepoint::rescale`, which deals the states.
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const RemovedReadersSplitsDropped: Mutant = Mutant::declare(&MutantInfo {
            name: "removed-readers-splits-dropped",
            part: "log source",
            what: "a restore of the log source at a new parallelism gives new reader i the splits of old reader i only: after a downscale the splits of the removed readers belong to no reader, their records are never read, and the enumerator does not hand them out again (its checkpoint says they were assigned)",
            modelled_on: "FLINK-21817 (the new Kafka source could break its subtask and split assignment upon rescale); the reader state is split list state, dealt by the runtime over the new readers",
            caught_by: "exactly-once-output",
            applies: &[("log-rescale", "aligned")],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::model::txlog::sink::Committable;
    use crate::model::txlog::Producer;

    fn committable(id: &str, checkpoint: CheckpointId) -> Committable {
        Committable {
            checkpoint,
            transactional_id: id.to_string(),
            producer: Producer { id: 1, epoch: 0 },
            records: 1,
            opened_at: SimTime::ZERO,
        }
    }

    fn state(pending: &[&str], created: u32, own: Option<Ownership>, s: u32, p: u32) -> Vec<u8> {
        let state = LogSinkState {
            checkpoint: 5,
            pending: pending.iter().map(|id| committable(id, 5)).collect(),
            created,
            known: (0..created).map(|n| format!("out-{s}-{n}")).collect(),
            producers: Vec::new(),
        };
        let default = Ownership::own(s, p);
        encode_state(&state, own.as_ref().unwrap_or(&default), &default)
    }

    fn decoded(bytes: &[u8]) -> (LogSinkState, Option<Ownership>) {
        decode_state(bytes).unwrap()
    }

    #[test]
    fn a_job_never_rescaled_writes_no_ownership() {
        let bytes = state(&["out-0-1"], 2, None, 0, 3);
        assert_eq!(decoded(&bytes).1, None);
        let same = sink_states(&[bytes.clone(), bytes.clone()], 2).unwrap();
        assert_eq!(same, [bytes.clone(), bytes]);
    }

    #[test]
    fn a_downscale_gives_a_subtask_the_ids_of_the_removed_ones() {
        let old: Vec<Vec<u8>> = (0..3)
            .map(|s| state(&[&format!("out-{s}-1")], 2, None, s, 3))
            .collect();
        let new = sink_states(&old, 2).unwrap();
        // Writer entries 0, 1, 2: subtask 0 takes the first two.
        let (s0, o0) = decoded(&new[0]);
        let o0 = o0.unwrap();
        assert_eq!((o0.owned.as_slice(), o0.total), ([0, 1].as_slice(), 3));
        assert_eq!(s0.pending.len(), 2);
        assert!(o0.held.is_empty(), "{o0:?}");
        let (s1, o1) = decoded(&new[1]);
        let o1 = o1.unwrap();
        assert_eq!((o1.owned.as_slice(), o1.total), ([2].as_slice(), 3));
        assert_eq!(s1.pending[0].transactional_id, "out-2-1");
        assert_eq!(s0.known, ["out-0-0", "out-0-1", "out-1-0", "out-1-1"]);
    }

    #[test]
    fn an_upscale_gives_the_new_subtasks_their_own_ids() {
        let old: Vec<Vec<u8>> = (0..2)
            .map(|s| state(&[&format!("out-{s}-1")], 2, None, s, 2))
            .collect();
        let new = sink_states(&old, 4).unwrap();
        for (s, bytes) in new.iter().enumerate() {
            let (st, own) = decoded(bytes);
            let own = own.unwrap_or_else(|| Ownership::own(s as u32, 4));
            assert_eq!(
                (own.owned.as_slice(), own.total),
                ([s as u32].as_slice(), 4)
            );
            assert_eq!(st.pending.len(), usize::from(s < 2));
        }
    }

    #[test]
    fn precommitted_ids_travel_with_their_owner_when_the_committer_lands_elsewhere() {
        // Old subtask 0 owns ids 0 and 2 after an earlier downscale. At 3
        // the committers' entries go to new subtasks 0 and 1, the writers'
        // (owning 0, 2 and 1) to 0, 1 and 2: out-1-4 is committed by new
        // subtask 1 and owned by new subtask 2, which must leave it be.
        let own = Ownership {
            owned: vec![0, 2],
            total: 4,
            held: Vec::new(),
        };
        let old = vec![
            state(&["out-0-3"], 4, Some(own), 0, 2),
            state(&["out-1-4"], 1, None, 1, 2),
        ];
        let new = sink_states(&old, 3).unwrap();
        let (s0, o0) = decoded(&new[0]);
        let o0 = o0.unwrap();
        assert_eq!((o0.owned.as_slice(), o0.total), ([0].as_slice(), 4));
        assert_eq!(s0.pending[0].transactional_id, "out-0-3");
        assert!(o0.held.is_empty(), "its own committer commits it: {o0:?}");
        let (s1, o1) = decoded(&new[1]);
        assert_eq!(o1.unwrap().owned, [2]);
        assert_eq!(s1.pending[0].transactional_id, "out-1-4");
        let (s2, o2) = decoded(&new[2]);
        let o2 = o2.unwrap();
        assert_eq!(o2.owned, [1]);
        assert_eq!(o2.held, ["out-1-4"]);
        assert!(s2.pending.is_empty());
    }

    #[test]
    fn a_reader_without_splits_gets_a_state_with_none() {
        let old = vec![
            encode(&Splits {
                splits: vec![(0, 5), (2, 7)],
            }),
            encode(&Splits {
                splits: vec![(1, 3)],
            }),
        ];
        let new = source_states(&old, 4).unwrap();
        let splits: Vec<Vec<(u32, u64)>> = new
            .iter()
            .map(|b| decode::<Splits>(b, "t").unwrap().splits)
            .collect();
        assert_eq!(splits, [vec![(0, 5)], vec![(2, 7)], vec![(1, 3)], vec![]]);
        assert!(new.iter().all(|b| !b.is_empty()));
        assert!(source_states(&[vec![0xff, 0xff]], 2).is_err());
    }
}
