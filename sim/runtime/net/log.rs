//! Sender-based message logs, for the uncoordinated families: every record
//! a task puts on a channel is appended to that channel's log, at its
//! absolute position (records the sender put on the channel since the job
//! started, along its effective history). A checkpoint of the sender writes
//! the log's new part with its state (`take_unsaved`); a restore replays
//! the part a recovery line needs (`range`); what no line can need any more
//! is dropped (`drop_below`), and what a rollback undoes is cut off
//! (`cut_from`).

use crate::model::{ChannelId, Record, RecordSizes};
use std::collections::VecDeque;

/// One channel's log.
#[derive(Clone, Debug, Default)]
pub struct ChannelLog {
    /// The absolute position of `records[0]`.
    first: u64,
    records: VecDeque<Record>,
    /// Bytes appended since the sender's last checkpoint.
    unsaved: u64,
}

/// Every channel's log.
#[derive(Clone, Debug, Default)]
pub struct Logs {
    /// Appending is on (off without an uncoordinated algorithm, and while
    /// a restore replays logged records).
    pub on: bool,
    channels: Vec<ChannelLog>,
    /// Bytes logged in all, and the most records held at once.
    pub bytes: u64,
    pub peak_records: u64,
    held: u64,
}

impl Logs {
    /// Logs for `channels` channels, on.
    pub fn new(channels: usize) -> Logs {
        Logs {
            on: true,
            channels: vec![ChannelLog::default(); channels],
            ..Logs::default()
        }
    }

    #[inline]
    pub fn append(&mut self, ch: ChannelId, r: Record, sizes: &RecordSizes) {
        let size = sizes.of(r.lineage);
        let log = &mut self.channels[ch as usize];
        log.records.push_back(r);
        log.unsaved += size;
        self.bytes += size;
        self.held += 1;
        self.peak_records = self.peak_records.max(self.held);
    }

    /// The absolute position after the last logged record.
    pub fn end(&self, ch: ChannelId) -> u64 {
        let log = &self.channels[ch as usize];
        log.first + log.records.len() as u64
    }

    /// The logged records at positions `from..to` that the log still
    /// holds, and the position of the first of them (above `from` when the
    /// log was cut below it).
    pub fn range(&self, ch: ChannelId, from: u64, to: u64) -> (u64, Vec<Record>) {
        let log = &self.channels[ch as usize];
        let start = from.max(log.first);
        let end = to.min(self.end(ch));
        if start >= end {
            return (start, Vec::new());
        }
        let skip = (start - log.first) as usize;
        let take = (end - start) as usize;
        (
            start,
            log.records.iter().skip(skip).take(take).copied().collect(),
        )
    }

    /// Drops the records below position `at`: no recovery line can need
    /// them any more.
    pub fn drop_below(&mut self, ch: ChannelId, at: u64) {
        let log = &mut self.channels[ch as usize];
        while log.first < at && log.records.pop_front().is_some() {
            log.first += 1;
            self.held -= 1;
        }
    }

    /// Cuts the records from position `at` on: a rollback undid their send
    /// (they are sent again). The log then continues at `at`.
    pub fn cut_from(&mut self, ch: ChannelId, at: u64) {
        let log = &mut self.channels[ch as usize];
        if at < log.first {
            self.held -= log.records.len() as u64;
            log.records.clear();
            log.first = at;
        } else {
            let keep = (at - log.first) as usize;
            let cut = log.records.len().saturating_sub(keep);
            log.records.truncate(keep);
            self.held -= cut as u64;
        }
        log.unsaved = 0;
    }

    /// The bytes logged on `ch` since the sender's last checkpoint, which
    /// its checkpoint now writes.
    pub fn take_unsaved(&mut self, ch: ChannelId) -> u64 {
        std::mem::take(&mut self.channels[ch as usize].unsaved)
    }

    /// Records held in all.
    pub fn held(&self) -> u64 {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Lineage;

    fn rec(i: u64) -> Record {
        Record {
            key: i,
            value: i as i64,
            lineage: Lineage {
                partition: 0,
                offset: i,
            },
            emitted_at: crate::engine::SimTime::ZERO,
            timestamp: 0,
            payload: crate::model::Payload::NONE,
        }
    }

    #[test]
    fn a_log_keeps_positions_across_drops_and_cuts() {
        let sizes = RecordSizes::uniform(10);
        let mut logs = Logs::new(1);
        for i in 0..6 {
            logs.append(0, rec(i), &sizes);
        }
        assert_eq!(logs.take_unsaved(0), 60);
        assert_eq!(logs.take_unsaved(0), 0);
        logs.drop_below(0, 2);
        assert_eq!(logs.range(0, 1, 4), (2, vec![rec(2), rec(3)]));
        logs.cut_from(0, 4);
        assert_eq!(logs.end(0), 4);
        assert_eq!(logs.held(), 2);
        logs.append(0, rec(9), &sizes);
        assert_eq!(logs.range(0, 3, 9), (3, vec![rec(3), rec(9)]));
        logs.cut_from(0, 1);
        assert_eq!((logs.end(0), logs.held()), (1, 0));
        assert_eq!(logs.peak_records, 6);
    }
}
