//! A snapshot against the outside world it carries: the operators' state
//! must agree with the external store the snapshot holds, or the restored
//! job fails and the checkers blame the job for a lie of the directory.
//! [`check`] refuses, naming the operator's state file and field: a
//! transaction listed twice; a checkpoint id in a sink's state beyond the
//! snapshot's own; a pre-committed transaction dropped from a 2PC sink's
//! state or from every Sink V2 committer's (a restore would never commit
//! it: loss); a source offset rewound
//! below records the store already committed from it (a restore would
//! commit them again: duplicates). It runs after [`super::verify::check`]
//! has found the image whole, and never changes the image.

use super::verify::{Bad, Part};
use super::{Image, OperatorState};
use crate::model::kinds::Role;
use crate::model::operator::sink_state_parts;
use crate::model::sinkv2::{
    committable_txn, committer_txns, global_committer_txns, writer_state_parts,
};
use crate::model::store::{TxnId, TxnState};
use std::collections::BTreeMap;

type Checked = Result<(), Bad>;
/// The transactions a sink's or committer's state bytes name.
type Txns = fn(&[u8]) -> Result<Vec<TxnId>, String>;

fn bad(i: usize, field: &str, what: impl std::fmt::Display) -> Bad {
    Bad(Part::Operator(i), format!("`{field}`: {what}"))
}

/// Checks the image's operator state against its external store.
pub(super) fn check(image: &Image) -> Checked {
    listed_once(image)?;
    for (i, op) in image.operators.iter().enumerate() {
        match &op.state {
            OperatorState::Sink2pc { subtasks } => {
                for (j, s) in subtasks.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
                    sink_2pc(image, i, j, s)?;
                }
            }
            OperatorState::SinkWriter { subtasks } => {
                for (j, s) in subtasks.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
                    sink_writer(image, i, j, s)?;
                }
            }
            _ => {}
        }
    }
    offsets(image)
}

/// A checkpoint id a sink's state names is at most the snapshot's own: a
/// state taken for checkpoint `n` knows nothing later, and a restored
/// writer tags its last transaction after it, for a checkpoint the
/// restored job may never complete.
fn beyond_snapshot(image: &Image, i: usize, field: &str, cp: u64) -> Checked {
    let id = image.meta.id;
    if cp <= id {
        return Ok(());
    }
    Err(bad(
        i,
        field,
        format!("checkpoint id {cp} is beyond the snapshot's own id {id}: the state cannot know a later checkpoint, and its last transaction would never be committed"),
    ))
}

/// Every transaction a sink's or committer's state names, once over the
/// whole image: a restore commits each entry, and two entries for one
/// transaction are two owners of it.
fn listed_once(image: &Image) -> Checked {
    let mut seen: BTreeMap<TxnId, (usize, usize)> = BTreeMap::new();
    for (i, op) in image.operators.iter().enumerate() {
        let (subtasks, of): (_, Txns) = match &op.state {
            OperatorState::Sink2pc { subtasks } => (subtasks, crate::model::operator::sink_txns),
            OperatorState::SinkCommitter { subtasks } => (subtasks, committer_txns),
            _ => continue,
        };
        for (j, s) in subtasks.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
            let field = format!("subtasks[{j}]");
            for txn in of(s).map_err(|e| bad(i, &field, e))? {
                if let Some((oi, oj)) = seen.insert(txn, (i, j)) {
                    let first = &image.operators[oi].uid;
                    return Err(bad(
                        i,
                        &field,
                        format!("lists {txn} twice (it is listed already by subtask {oj} of `{first}`): a transaction has one owner"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Subtask `j` of 2PC sink `i`: no pending checkpoint beyond the
/// snapshot's, and every transaction the attempt that took the snapshot
/// opened before it (numbered below the state's sequence counter) and the
/// store holds pre-committed is listed as pending. Only a snapshot
/// pre-commits, and a pending transaction stays listed until it is
/// committed, so one missing is one a restore would never commit.
fn sink_2pc(image: &Image, i: usize, j: usize, state: &[u8]) -> Checked {
    let field = format!("subtasks[{j}]");
    let (current, pending, next_seq) = sink_state_parts(state).map_err(|e| bad(i, &field, e))?;
    for &(cp, _) in &pending {
        beyond_snapshot(image, i, &field, cp)?;
    }
    let listed: Vec<TxnId> = current
        .into_iter()
        .chain(pending.iter().map(|&(_, t)| t))
        .collect();
    let attempt = listed.iter().map(|t| t.attempt).max();
    match dropped(image, (i, j, next_seq), attempt, &listed) {
        None => Ok(()),
        Some((id, records)) => Err(bad(
            i,
            &field,
            format!(
                "does not list {id} as pending, but the external store holds it pre-committed ({records} records, opened before the snapshot by the attempt that took it): a restore would never commit it, and its records would be lost"
            ),
        )),
    }
}

/// Subtask `j` of Sink V2 writer `i`: its checkpoint id is not beyond the
/// snapshot's, and every transaction the attempt that took the snapshot
/// opened before it and pre-committed (handed over as a committable) is
/// listed by a committer or a global committer, or in flight to one: a
/// committer's state keeps a committable until it is committed (or
/// forwarded), a global committer's until it is published.
fn sink_writer(image: &Image, i: usize, j: usize, state: &[u8]) -> Checked {
    let field = format!("subtasks[{j}]");
    let (next_seq, cp) = writer_state_parts(state).map_err(|e| bad(i, &field, e))?;
    beyond_snapshot(image, i, &field, cp)?;
    let mut listed = Vec::new();
    for op in &image.operators {
        if let OperatorState::SinkCommitter { subtasks } = &op.state {
            for s in subtasks.iter().filter(|s| !s.is_empty()) {
                // Decoded whole by `listed_once` already.
                listed.extend(committer_txns(s).unwrap_or_default());
            }
        }
        // A global committer holds what its committers forwarded.
        if let OperatorState::Opaque { subtasks } = &op.state {
            if op.kind == "sink-global-committer" {
                for s in subtasks.iter().filter(|s| !s.is_empty()) {
                    let txns = global_committer_txns(s).map_err(|e| bad(i, &field, e))?;
                    listed.extend(txns);
                }
            }
        }
    }
    let in_flight = image.channels.iter().flat_map(|c| &c.records);
    listed.extend(
        in_flight
            .filter_map(|r| committable_txn(r, i as u32))
            .map(|(t, _)| t),
    );
    match dropped(image, (i, j, next_seq), None, &listed) {
        None => Ok(()),
        Some((id, records)) => Err(bad(
            i,
            &field,
            format!(
                "pre-committed {id} ({records} records) before the snapshot, but no committer lists it and none is in flight: a restore would never commit it, and its records would be lost"
            ),
        )),
    }
}

/// A transaction of sink subtask `(i, j)` the store holds pre-committed
/// that `listed` lacks, opened before the snapshot (numbered below
/// `next_seq`) by the attempt that took it: `attempt` if known, else the
/// latest of this generation that opened one before it. Returns it with
/// its record count.
fn dropped(
    image: &Image,
    (i, j, next_seq): (usize, usize, u64),
    attempt: Option<u32>,
    listed: &[TxnId],
) -> Option<(TxnId, usize)> {
    let (sink, subtask) = (i as u32, j as u32);
    // This generation's attempts only: an earlier job's leftovers are not
    // this state's to list.
    let generation = u64::from(image.meta.generation);
    let attempts = (generation << 16)..((generation + 1) << 16);
    let mine = |id: &TxnId| {
        id.sink == sink
            && id.subtask == subtask
            && id.seq < next_seq
            && attempts.contains(&u64::from(id.attempt))
    };
    let attempt = attempt.or_else(|| {
        let opened = image.store.transactions().map(|(id, ..)| id);
        opened.filter(|id| mine(id)).map(|id| id.attempt).max()
    })?;
    let found = image.store.transactions().find(|(id, state, _)| {
        *state == TxnState::PreCommitted
            && id.attempt == attempt
            && mine(id)
            && !listed.contains(id)
    });
    found.map(|(id, _, records)| (id, records.len()))
}

/// Per global partition, the highest offset a record committed by a
/// transactional sink came from, with that sink: what a restore must not
/// read again. Records of direct and upsert sinks are left out: they are
/// written before the checkpoint that covers them, and repeated by design.
fn committed_up_to(image: &Image) -> BTreeMap<u32, (u64, u32)> {
    let transactional: Vec<bool> = image
        .operators
        .iter()
        .map(|op| {
            crate::model::kinds::find(&op.kind)
                .is_some_and(|k| matches!(k.role, Role::Sink(r) if r.transactional()))
        })
        .collect();
    let mut highest: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
    for r in image.store.committed().iter() {
        if !transactional.get(r.sink as usize).copied().unwrap_or(false) {
            continue;
        }
        let l = r.lineage;
        let e = highest.entry(l.partition).or_insert((l.offset, r.sink));
        if l.offset > e.0 {
            *e = (l.offset, r.sink);
        }
    }
    highest
}

/// Each source's offsets are past every record the store committed from
/// its partitions: a restore reads a partition from its offset on (a
/// static source's partition with no offset from 0), so a record committed
/// from at or after it would be committed again.
fn offsets(image: &Image) -> Checked {
    let committed = committed_up_to(image);
    if committed.is_empty() {
        return Ok(());
    }
    let mut base = 0u32;
    for s in &image.meta.sources {
        let range = base..base.saturating_add(s.partitions);
        base = range.end;
        let Some(i) = image.operators.iter().position(|o| o.uid == s.uid) else {
            continue;
        };
        let (listed, field) = match &image.operators[i].state {
            OperatorState::Source { offsets } => (offsets, "offsets"),
            OperatorState::SplitSource { splits, .. } => (splits, "splits"),
            _ => continue,
        };
        let rewound = |g: u32, from: u64| {
            committed.get(&g).filter(|(o, _)| *o >= from).map(|&(o, sink)| {
                let sink = &image.operators[sink as usize].uid;
                format!("but the external store already committed a record from its offset {o} (sink `{sink}`): a restore would commit it again")
            })
        };
        for (j, &(g, from)) in listed.iter().enumerate() {
            if let Some(why) = rewound(g, from) {
                let what = format!("partition {g} restarts at offset {from}, {why}");
                return Err(bad(i, &format!("{field}[{j}]"), what));
            }
        }
        // A split source's unlisted splits are the enumerator's: finished
        // or not yet read, as it says.
        if field == "offsets" {
            for g in range.filter(|g| !listed.iter().any(|(p, _)| p == g)) {
                if let Some(why) = rewound(g, 0) {
                    let what =
                        format!("partition {g} has no offset (a restore reads it from 0), {why}");
                    return Err(bad(i, field, what));
                }
            }
        }
    }
    Ok(())
}
