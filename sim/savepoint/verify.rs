//! What a snapshot directory says, checked before anything runs: every
//! value [`super::read_dir`] decodes is range-checked against the image
//! itself (operators, uids, kinds, key groups, partitions, offsets,
//! subtasks, transactions, generations, ids), so a crafted or edited
//! directory is refused, naming its file and field, instead of panicking,
//! wrapping a counter or turning into a check failure of the restored job.
//! [`super::rescale::assign`] then checks the image against the job.

use super::{Image, OperatorState};
use crate::model::flip27::EnumeratorState;
use crate::model::operator::{count_window_entries, sink_txns, KeyGroupBytes, KeyGroupState};
use crate::model::record::{key_group, Lineage, Record};
use crate::model::sinkv2::{committer_txns, merge_writer_states};
use crate::model::state::value_state_keys;
use crate::model::store::TxnId;
use crate::model::ExternalStore;
use crate::protocol::Algorithm;
use crate::scenario::validate::MAX_RECORDS;
use crate::scenario::{MAX_DURATION, MAX_PARALLELISM};
use std::collections::BTreeSet;

/// The largest generation a snapshot may carry: a restored job's attempts
/// are numbered from `(generation + 1) << 16` in 32 bits.
pub const MAX_GENERATION: u32 = (1 << 16) - 2;
/// The largest checkpoint id a snapshot may carry: the restored job
/// numbers its checkpoints after it.
pub const MAX_CHECKPOINT_ID: u64 = 1 << 48;
/// The largest `_metadata` file read.
pub const MAX_METADATA_BYTES: u64 = 16 << 20;
/// The largest state file read.
pub const MAX_STATE_FILE_BYTES: u64 = 1 << 30;

/// Which file of the directory a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    Metadata,
    /// The state file of the image's operator at this index.
    Operator(usize),
    Channels,
    External,
}

/// A value the image cannot hold: its file, and the field with what is
/// wrong with it.
#[derive(Debug)]
pub(super) struct Bad(pub Part, pub String);

type Checked = Result<(), Bad>;

fn bad(part: Part, field: &str, what: impl std::fmt::Display) -> Bad {
    Bad(part, format!("`{field}`: {what}"))
}

/// The sources' partitions as the metadata describes them: per source,
/// its uid, first global partition, partition count and the records of
/// each partition.
struct Partitions {
    sources: Vec<(String, u32, u32, Vec<u64>)>,
}

impl Partitions {
    fn of(uid: &str, p: &Partitions) -> Option<(u32, u32)> {
        p.sources
            .iter()
            .find(|(u, ..)| u == uid)
            .map(|(_, base, n, _)| (*base, *n))
    }

    /// How many records global partition `g` holds.
    fn len(&self, g: u32) -> Option<u64> {
        let i = self.sources.partition_point(|(_, base, ..)| *base <= g);
        let (_, base, n, records) = self.sources.get(i.checked_sub(1)?)?;
        (g - base < *n).then(|| records[(g - base) as usize])
    }

    fn total(&self) -> u64 {
        self.sources
            .last()
            .map_or(0, |(_, base, n, _)| u64::from(*base) + u64::from(*n))
    }

    fn lineage(&self, l: Lineage) -> Result<(), String> {
        match self.len(l.partition) {
            None => Err(format!(
                "lineage names partition {}, but the sources have {}",
                l.partition,
                self.total()
            )),
            Some(n) if l.offset >= n => Err(format!(
                "lineage names offset {} of partition {}, which holds {n} records",
                l.offset, l.partition
            )),
            Some(_) => Ok(()),
        }
    }

    /// A channel's in-flight elements: records, and watermarks in their
    /// exact form (`Record::watermark`), which travel among them.
    fn channel_records(&self, part: Part, field: &str, elements: &[Record]) -> Checked {
        for (i, r) in elements.iter().enumerate() {
            if r.lineage.partition == crate::model::Lineage::ELEMENT {
                if *r != Record::watermark(r.timestamp) {
                    let message = "names no source partition and is no watermark";
                    return Err(bad(part, &format!("{field}[{i}]"), message));
                }
                continue;
            }
            self.record(part, &format!("{field}[{i}]"), r)?;
        }
        Ok(())
    }

    fn records(&self, part: Part, field: &str, records: &[Record]) -> Checked {
        for (i, r) in records.iter().enumerate() {
            self.record(part, &format!("{field}[{i}]"), r)?;
        }
        Ok(())
    }

    fn record(&self, part: Part, field: &str, r: &Record) -> Checked {
        self.lineage(r.lineage).map_err(|e| bad(part, field, e))?;
        if r.emitted_at.0 > MAX_DURATION.nanos() {
            let field = format!("{field}.emitted_at");
            return Err(bad(part, &field, "beyond the longest run"));
        }
        Ok(())
    }
}

/// Checks everything the image holds against itself.
pub(super) fn check(image: &Image) -> Checked {
    meta(&image.meta)?;
    let partitions = partitions(image)?;
    // The store's own structure first: the operators' checks look
    // transactions up in it.
    image
        .store
        .check()
        .map_err(|e| bad(Part::External, "transactions", e))?;
    let mut uids = BTreeSet::new();
    for (i, op) in image.operators.iter().enumerate() {
        if !uids.insert(op.uid.as_str()) {
            return Err(bad(
                Part::Metadata,
                &format!("operators[{i}].uid"),
                format!("operator `{}` is listed twice", op.uid),
            ));
        }
        operator_entry(image, i)?;
        operator(image, i, &partitions)?;
    }
    channels(image, &partitions)?;
    store(image, &partitions)?;
    payloads(image)
}

/// Every payload a record of the snapshot names is in the store's payload
/// table, under the name of its bytes.
fn payloads(image: &Image) -> Checked {
    let table = &image.store.payloads;
    for (name, bytes) in table.iter() {
        if crate::model::payload::name_of(bytes) != name {
            return Err(bad(
                Part::External,
                &format!("payloads[{:016x}]", name.0),
                "the bytes kept under this name have another name",
            ));
        }
    }
    let missing = |part, field: String, records: &[Record]| -> Checked {
        match records.iter().position(|r| !table.contains(r.payload)) {
            Some(i) => Err(bad(
                part,
                &format!("{field}[{i}].payload"),
                format!(
                    "payload {:016x} is not in the store's payload table",
                    records[i].payload.0
                ),
            )),
            None => Ok(()),
        }
    };
    for (i, ch) in image.channels.iter().enumerate() {
        missing(Part::Channels, format!("[{i}].records"), &ch.records)?;
    }
    for (id, _, records) in image.store.transactions() {
        missing(
            Part::External,
            format!("transactions[{id}].records"),
            records,
        )?;
    }
    for (i, r) in image.store.committed().iter().enumerate() {
        if !table.contains(r.payload) {
            return Err(bad(
                Part::External,
                &format!("committed[{i}].payload"),
                format!(
                    "payload {:016x} is not in the store's payload table",
                    r.payload.0
                ),
            ));
        }
    }
    Ok(())
}

/// The metadata's own numbers: generation, id, completion time, max
/// parallelism and algorithm.
fn meta(meta: &super::Meta) -> Checked {
    let m = Part::Metadata;
    if meta.generation > MAX_GENERATION {
        return Err(bad(
            m,
            "generation",
            format!(
                "{} is beyond the largest a restore can continue from ({MAX_GENERATION})",
                meta.generation
            ),
        ));
    }
    if meta.id > MAX_CHECKPOINT_ID {
        return Err(bad(
            m,
            "id",
            format!(
                "checkpoint id {} is beyond the largest supported ({MAX_CHECKPOINT_ID})",
                meta.id
            ),
        ));
    }
    if meta.completed_at_ns > MAX_DURATION.nanos() {
        return Err(bad(m, "completed_at_ns", "beyond the longest run"));
    }
    // Each generation before this one ran at most the longest run.
    if meta.started_at_ns > u64::from(meta.generation) * MAX_DURATION.nanos() {
        return Err(bad(
            m,
            "started_at_ns",
            format!(
                "beyond {} longest runs (one per generation before this one)",
                meta.generation
            ),
        ));
    }
    if !(1..=MAX_PARALLELISM).contains(&meta.max_parallelism) {
        return Err(bad(
            m,
            "max_parallelism",
            format!(
                "{} is not within 1..={MAX_PARALLELISM}",
                meta.max_parallelism
            ),
        ));
    }
    if Algorithm::from_name(&meta.algorithm).is_none() {
        return Err(bad(
            m,
            "algorithm",
            format!("unknown algorithm `{}`", meta.algorithm),
        ));
    }
    Ok(())
}

/// Operator `i`'s entry in the metadata: a known kind, a parallelism
/// within the max parallelism, and a state of the kind's layout.
fn operator_entry(image: &Image, i: usize) -> Checked {
    let (m, op) = (Part::Metadata, &image.operators[i]);
    let field = |key: &str| format!("operators[{i}].{key}");
    let Some(info) = crate::model::kinds::find(&op.kind) else {
        return Err(bad(
            m,
            &field("kind"),
            format!("unknown operator kind `{}`", op.kind),
        ));
    };
    let max_p = image.meta.max_parallelism;
    if !(1..=max_p).contains(&op.parallelism) {
        return Err(bad(
            m,
            &field("parallelism"),
            format!(
                "{} is not within 1..={max_p} (the max parallelism)",
                op.parallelism
            ),
        ));
    }
    let expected = state_of(&op.kind);
    let builtin = crate::model::kinds::REGISTRY
        .iter()
        .any(|k| std::ptr::eq(*k, info));
    // A registered kind declares its layout by its params, which the image
    // does not hold: any layout but the native ones (its `KeyedBytes` are
    // a `model::state::ValueState`'s).
    let native = ["source", "sink-2pc", "sink-writer", "sink-committer"];
    let fits = match builtin {
        false => !native.contains(&variant(&op.state)),
        true => variant(&op.state) == expected,
    };
    if !fits {
        return Err(bad(
            Part::Operator(i),
            "state",
            format!(
                "holds {} state, but a {} operator's is {expected}",
                variant(&op.state),
                op.kind
            ),
        ));
    }
    Ok(())
}

/// Each channel's ends are operators of the image, and its records lie in
/// the sources' partitions.
fn channels(image: &Image, partitions: &Partitions) -> Checked {
    let c = Part::Channels;
    for (i, ch) in image.channels.iter().enumerate() {
        for (end, uid, subtask) in [
            ("from", &ch.from, ch.from_subtask),
            ("to", &ch.to, ch.to_subtask),
        ] {
            let Some(op) = image.operators.iter().find(|o| &o.uid == uid) else {
                return Err(bad(
                    c,
                    &format!("[{i}].{end}"),
                    format!("operator `{uid}` is not in the snapshot"),
                ));
            };
            if subtask >= op.parallelism {
                return Err(bad(
                    c,
                    &format!("[{i}].{end}_subtask"),
                    format!(
                        "subtask {subtask} of `{uid}`, which had parallelism {}",
                        op.parallelism
                    ),
                ));
            }
        }
        partitions.channel_records(c, &format!("[{i}].records"), &ch.records)?;
    }
    Ok(())
}

/// The sources' partitions, from the metadata.
fn partitions(image: &Image) -> Result<Partitions, Bad> {
    let m = Part::Metadata;
    let mut p = Partitions {
        sources: Vec::new(),
    };
    let mut records = 0u64;
    for (i, s) in image.meta.sources.iter().enumerate() {
        let field = |key: &str| format!("sources[{i}].{key}");
        if p.sources.iter().any(|(u, ..)| *u == s.uid) {
            return Err(bad(
                m,
                &field("uid"),
                format!("source `{}` is listed twice", s.uid),
            ));
        }
        for (key, value) in [
            ("partitions", u64::from(s.partitions)),
            ("records_per_partition", s.records_per_partition),
            ("keys", s.keys),
        ] {
            if value == 0 {
                return Err(bad(m, &field(key), "0: a source has at least one"));
            }
        }
        let listed = s.partition_records.len();
        if listed != 0 && listed != s.partitions as usize {
            return Err(bad(
                m,
                &field("partition_records"),
                format!("{listed} lengths for {} partitions", s.partitions),
            ));
        }
        if let Some(j) = s.partition_records.iter().position(|&n| n == 0) {
            let key = format!("partition_records[{j}]");
            return Err(bad(
                m,
                &field(&key),
                "0: a partition has at least one record",
            ));
        }
        if s.hot_key_percent > 100 {
            let message = format!("{} is not a percentage", s.hot_key_percent);
            return Err(bad(m, &field("hot_key_percent"), message));
        }
        // Counted before anything is allocated per partition: a partition
        // holds at least one record, so their number is bounded too.
        let mut p_records = 0u64;
        for j in 0..s.partitions {
            p_records = p_records.saturating_add(s.records_of(j));
            if records.saturating_add(p_records) > MAX_RECORDS {
                break;
            }
        }
        records = records.saturating_add(p_records);
        if records > MAX_RECORDS {
            return Err(bad(
                m,
                &field("records_per_partition"),
                format!("the sources hold more than {MAX_RECORDS} records in all"),
            ));
        }
        if !["uniform", "cyclic", "skewed"].contains(&s.key_distribution.as_str()) {
            return Err(bad(
                m,
                &field("key_distribution"),
                format!("unknown key distribution `{}`", s.key_distribution),
            ));
        }
        let base = p.total() as u32; // at most MAX_RECORDS partitions
        let lengths = (0..s.partitions).map(|j| s.records_of(j)).collect();
        p.sources.push((s.uid.clone(), base, s.partitions, lengths));
    }
    Ok(p)
}

/// The state layout each operator kind's snapshot has.
fn state_of(kind: &str) -> &'static str {
    match kind {
        "source" => "source",
        "keyed-count" | "keyed-sum" | "min-label" => "keyed",
        "count-window" | "event-time-window" | "keyed-process" => "keyed-bytes",
        "buffer" => "list",
        "broadcast-process" => "broadcast",
        "sink-2pc" => "sink-2pc",
        "sink-writer" => "sink-writer",
        "sink-committer" => "sink-committer",
        // Its committables and transactional-id ownership.
        "sink-log" => "sink-log",
        // Its splits' offsets.
        "source-log" => "source-log",
        k if crate::scenario::registry::find(k).is_some() => "opaque",
        _ => "no",
    }
}

fn variant(state: &OperatorState) -> &'static str {
    match state {
        OperatorState::Stateless => "no",
        OperatorState::Source { .. } | OperatorState::SplitSource { .. } => "source",
        OperatorState::Keyed { .. } => "keyed",
        OperatorState::KeyedBytes { .. } => "keyed-bytes",
        OperatorState::List { .. } => "list",
        OperatorState::Broadcast { .. } => "broadcast",
        OperatorState::Sink2pc { .. } => "sink-2pc",
        OperatorState::SinkWriter { .. } => "sink-writer",
        OperatorState::SinkCommitter { .. } => "sink-committer",
        OperatorState::LogSink { .. } => "sink-log",
        OperatorState::LogSource { .. } => "source-log",
        OperatorState::Opaque { .. } => "opaque",
    }
}

/// One operator's state against the image.
fn operator(image: &Image, i: usize, partitions: &Partitions) -> Checked {
    let op = &image.operators[i];
    let c = OpCheck {
        image,
        op,
        part: Part::Operator(i),
        max_p: image.meta.max_parallelism,
    };
    let part = c.part;
    match &op.state {
        OperatorState::Stateless => Ok(()),
        // The kind's own bytes, one per subtask: its `restore` judges them.
        OperatorState::Opaque { subtasks } => c.per_subtask("subtasks", subtasks.len()),
        OperatorState::LogSink { subtasks } | OperatorState::LogSource { subtasks } => {
            c.log(subtasks)
        }
        OperatorState::Source { offsets } => {
            source_splits(part, "offsets", &op.uid, offsets, partitions).map(|_| ())
        }
        OperatorState::SplitSource { splits, enumerator } => {
            c.split_source(splits, enumerator, partitions)
        }
        OperatorState::Keyed { key_groups } => c.keyed(key_groups),
        OperatorState::KeyedBytes { key_groups } => c.keyed_bytes(key_groups, partitions),
        OperatorState::List { entries } => partitions.records(part, "entries", entries),
        OperatorState::Broadcast { copies: native }
        | OperatorState::Sink2pc { subtasks: native }
        | OperatorState::SinkWriter { subtasks: native }
        | OperatorState::SinkCommitter { subtasks: native } => c.native(native),
    }
}

/// What the checks of one operator's state share.
struct OpCheck<'a> {
    image: &'a Image,
    op: &'a super::OperatorImage,
    part: Part,
    max_p: u32,
}

impl OpCheck<'_> {
    /// One state per subtask of the operator.
    fn per_subtask(&self, field: &str, n: usize) -> Checked {
        if n == self.op.parallelism as usize {
            return Ok(());
        }
        Err(bad(
            self.part,
            field,
            format!(
                "{n} subtask states, but the operator had parallelism {}",
                self.op.parallelism
            ),
        ))
    }

    /// Every transaction named is one the external store holds.
    fn known_txns(&self, field: &str, txns: Result<Vec<TxnId>, String>) -> Checked {
        for txn in txns.map_err(|e| bad(self.part, field, e))? {
            if self.image.store.state(txn).is_none() {
                return Err(bad(
                    self.part,
                    field,
                    format!("names {txn}, which the external store does not hold"),
                ));
            }
        }
        Ok(())
    }

    /// Key groups below the max parallelism, in order, each once.
    fn key_groups(&self, field: &str, groups: impl Iterator<Item = u32>) -> Checked {
        let (part, max_p) = (self.part, self.max_p);
        let mut last = None;
        for (j, kg) in groups.enumerate() {
            if kg >= max_p {
                return Err(bad(
                    part,
                    &format!("{field}[{j}]"),
                    format!("key group {kg} is not below max_parallelism {max_p}"),
                ));
            }
            if last.is_some_and(|l| l >= kg) {
                return Err(bad(
                    part,
                    &format!("{field}[{j}]"),
                    format!("key group {kg} is out of order or repeated"),
                ));
            }
            last = Some(kg);
        }
        Ok(())
    }

    /// `key` is in key group `kg`.
    fn owned(&self, field: &str, kg: u32, key: u64) -> Checked {
        let actual = key_group(key, self.max_p);
        if actual == kg {
            return Ok(());
        }
        let message = format!("key {key} belongs to key group {actual}, not {kg}");
        Err(bad(self.part, field, message))
    }

    /// A FLIP-27 source's splits and its enumerator: every discovered split
    /// is in one place at most, a reader or the enumerator's unassigned
    /// list (a finished reader's splits are in neither).
    fn split_source(
        &self,
        splits: &[(u32, u64)],
        enumerator: &[u8],
        partitions: &Partitions,
    ) -> Checked {
        let part = self.part;
        let (base, n) = source_splits(part, "splits", &self.op.uid, splits, partitions)?;
        let e = EnumeratorState::decode(enumerator).map_err(|e| bad(part, "enumerator", e))?;
        if e.discovered > n {
            return Err(bad(
                part,
                "enumerator.discovered",
                format!("{} splits, but the source has {n} partitions", e.discovered),
            ));
        }
        let mut place = vec![0u32; e.discovered as usize];
        let splits = splits.iter().map(|&(g, _)| g);
        for (j, g) in splits.chain(e.unassigned.iter().copied()).enumerate() {
            let slot = g.checked_sub(base).and_then(|s| place.get_mut(s as usize));
            match slot {
                Some(count) => *count += 1,
                None => {
                    return Err(bad(
                        part,
                        "enumerator.unassigned",
                        format!("split {g} (entry {j}) was never discovered"),
                    ))
                }
            }
        }
        match place.iter().position(|&c| c > 1) {
            Some(s) => Err(bad(
                part,
                "enumerator.unassigned",
                format!(
                    "split {} is held {} times (at most once: by a reader or the enumerator)",
                    base + s as u32,
                    place[s]
                ),
            )),
            None => Ok(()),
        }
    }

    /// Keyed state: key groups in order, each key in its group, once.
    fn keyed(&self, groups: &[KeyGroupState]) -> Checked {
        self.key_groups("key_groups", groups.iter().map(|(kg, _)| *kg))?;
        for (j, (kg, entries)) in groups.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for (k, &(key, _)) in entries.iter().enumerate() {
                let field = format!("key_groups[{j}].entries[{k}]");
                self.owned(&field, *kg, key)?;
                if !seen.insert(key) {
                    return Err(bad(self.part, &field, format!("key {key} is listed twice")));
                }
            }
        }
        Ok(())
    }

    /// A count window's key groups: each key in its group, each window's
    /// lineage in the sources' partitions. A registered kind's are a
    /// `ValueState`'s: each key in its group, once.
    fn keyed_bytes(&self, groups: &[KeyGroupBytes], partitions: &Partitions) -> Checked {
        self.key_groups("key_groups", groups.iter().map(|(kg, _)| *kg))?;
        if self.op.kind != "count-window" {
            return self.value_state(groups);
        }
        for (j, (kg, bytes)) in groups.iter().enumerate() {
            let field = format!("key_groups[{j}]");
            let entries = count_window_entries(bytes).map_err(|e| bad(self.part, &field, e))?;
            for (k, (key, lineage)) in entries.into_iter().enumerate() {
                let field = format!("{field}.entries[{k}]");
                self.owned(&field, *kg, key)?;
                partitions
                    .lineage(lineage)
                    .map_err(|e| bad(self.part, &field, e))?;
            }
        }
        Ok(())
    }

    /// A `model::state::ValueState`'s key groups: each key in its group,
    /// once (the values are the kind's: its `restore` judges them).
    fn value_state(&self, groups: &[KeyGroupBytes]) -> Checked {
        for (j, (kg, bytes)) in groups.iter().enumerate() {
            let field = format!("key_groups[{j}]");
            let keys = value_state_keys(bytes).map_err(|e| bad(self.part, &field, e))?;
            let mut seen = BTreeSet::new();
            for (k, key) in keys.into_iter().enumerate() {
                let field = format!("{field}.entries[{k}]");
                self.owned(&field, *kg, key)?;
                if !seen.insert(key) {
                    return Err(bad(self.part, &field, format!("key {key} is listed twice")));
                }
            }
        }
        Ok(())
    }

    /// One native state per subtask (a broadcast copy per subtask), each
    /// decoding as its kind's.
    /// A Kafka sink's or source's state per subtask: each decodes; a
    /// sink's committables are listed once over its subtasks, a source's
    /// splits are distinct partitions. (What the log holds is checked by
    /// the restore: a committable it cannot resume fails the task.)
    fn log(&self, subtasks: &[Vec<u8>]) -> Checked {
        use crate::model::txlog::rescale::{sink_committables, source_splits};
        self.per_subtask("subtasks", subtasks.len())?;
        let mut seen = std::collections::BTreeSet::new();
        for (j, s) in subtasks.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
            let field = format!("subtasks[{j}]");
            let listed: Vec<String> = match &self.op.state {
                OperatorState::LogSink { .. } => sink_committables(s),
                _ => source_splits(std::slice::from_ref(s))
                    .map(|v| v.iter().map(|(p, _)| format!("partition {p}")).collect()),
            }
            .map_err(|e| bad(self.part, &field, e))?;
            for what in listed {
                if !seen.insert(what.clone()) {
                    let message = format!("lists {what} twice: it has one owner");
                    return Err(bad(self.part, &field, message));
                }
            }
        }
        Ok(())
    }

    fn native(&self, native: &[Vec<u8>]) -> Checked {
        let field = match &self.op.state {
            OperatorState::Broadcast { .. } => "copies",
            _ => "subtasks",
        };
        self.per_subtask(field, native.len())?;
        for (j, s) in native.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
            let field = format!("{field}[{j}]");
            let decoded = |r: Result<(), String>| r.map_err(|e| bad(self.part, &field, e));
            match &self.op.state {
                OperatorState::Broadcast { .. } => {
                    decoded(crate::model::opstate::BroadcastState::decode(s).map(drop))?
                }
                OperatorState::Sink2pc { .. } => self.known_txns(&field, sink_txns(s))?,
                OperatorState::SinkWriter { .. } => decoded(merge_writer_states(&[s]).map(drop))?,
                _ => self.known_txns(&field, committer_txns(s))?,
            }
        }
        Ok(())
    }
}

/// A source's (partition, offset) pairs: each partition one of its own,
/// once, with an offset within it. Returns its first global partition and
/// its partition count.
fn source_splits(
    part: Part,
    field: &str,
    uid: &str,
    offsets: &[(u32, u64)],
    partitions: &Partitions,
) -> Result<(u32, u32), Bad> {
    let Some((base, n)) = Partitions::of(uid, partitions) else {
        return Err(bad(
            part,
            "uid",
            format!("source `{uid}` is not among the metadata's sources"),
        ));
    };
    let mut seen = BTreeSet::new();
    for (j, &(g, offset)) in offsets.iter().enumerate() {
        let field = format!("{field}[{j}]");
        if g < base || g - base >= n {
            return Err(bad(
                part,
                &field,
                format!(
                    "partition {g} is not one of `{uid}`'s ({base}..{})",
                    u64::from(base) + u64::from(n)
                ),
            ));
        }
        if !seen.insert(g) {
            return Err(bad(part, &field, format!("partition {g} is listed twice")));
        }
        let records = partitions.len(g).unwrap_or(0);
        if offset > records {
            return Err(bad(
                part,
                &field,
                format!("offset {offset} is past the end of partition {g} ({records} records)"),
            ));
        }
    }
    Ok((base, n))
}

/// The external store: whole, its transactions of this job's sinks and
/// generations, its records of this job's sources.
fn store(image: &Image, partitions: &Partitions) -> Checked {
    let x = Part::External;
    let s: &ExternalStore = &image.store;
    let operators = image.operators.len() as u64;
    let next_attempt = (u64::from(image.meta.generation) + 1) << 16;
    for (id, _, records) in s.transactions() {
        if u64::from(id.sink) >= operators {
            return Err(bad(
                x,
                "transactions",
                format!("{id} names operator {}, of {operators}", id.sink),
            ));
        }
        if u64::from(id.attempt) >= next_attempt {
            return Err(bad(
                x,
                "transactions",
                format!(
                    "{id} was opened by attempt {}, after generation {} ended",
                    id.attempt, image.meta.generation
                ),
            ));
        }
        partitions.records(x, &format!("transactions[{id}].records"), records)?;
    }
    for (i, r) in s.committed().iter().enumerate() {
        let field = format!("committed[{i}]");
        if u64::from(r.sink) >= operators {
            return Err(bad(
                x,
                &field,
                format!("names operator {}, of {operators}", r.sink),
            ));
        }
        partitions
            .lineage(r.lineage)
            .map_err(|e| bad(x, &field, e))?;
    }
    Ok(())
}
