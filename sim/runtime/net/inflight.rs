//! The network's side of channel-state capture (`capture.rs`): starting a
//! capture at an input channel, taking or dropping it, and the queued output
//! a priority barrier overtakes at the sender.

use super::capture::Capture;
use super::{Msg, Net};
use crate::model::{ChannelId, CheckpointId};
use crate::protocol::{Barrier, BarrierKind};

impl Net {
    /// Starts recording input channel `ch`'s in-flight records for
    /// checkpoint `id` (Flink's `checkpointStarted` on an input channel): the
    /// queued data ahead of the channel's barrier now, then every data buffer
    /// that arrives before the barrier. If the barrier arrived as a priority
    /// event, the data it overtook (`seq < mark`) is what is queued ahead of
    /// it. A timeoutable barrier found in the queue becomes a priority event.
    pub fn start_capture(&mut self, ch: ChannelId, id: CheckpointId) {
        let mut cap = Capture::new(id);
        self.capture_recovered(ch, &mut cap);
        let (sizes, now) = (&self.sizes, self.now);
        let c = &mut self.channels[ch as usize];
        let mark = c
            .barrier_marks
            .iter()
            .find(|&&(bid, _)| bid == id)
            .map(|&(_, m)| m);
        c.barrier_marks.retain(|&(bid, _)| bid > id);
        match mark {
            Some(mark) => {
                for m in &c.in_queue {
                    if let Msg::Data { seq, buf, .. } = m {
                        if *seq < mark {
                            cap.push(*seq, buf, sizes, now);
                        }
                    }
                }
            }
            _ => {
                let mut found = None;
                for (k, m) in c.in_queue.iter().enumerate() {
                    match m {
                        Msg::Data { seq, buf, .. } => cap.push(*seq, buf, sizes, now),
                        Msg::Barrier(b) if b.id >= id => {
                            found = Some((k, b.kind));
                            break;
                        }
                        _ => {}
                    }
                }
                match found {
                    Some((k, kind)) => {
                        if kind == BarrierKind::Timeoutable && k >= c.in_priority {
                            let msg = c.in_queue.remove(k).expect("found above");
                            c.in_queue.insert(c.in_priority, msg);
                            c.in_priority += 1;
                        }
                    }
                    None => cap.open = true,
                }
            }
        }
        let promoted = c.in_priority > 0;
        c.capture = Some(cap);
        if promoted {
            self.priority_gained(ch);
        }
    }

    /// Takes the channel state captured for checkpoint `id`, if any.
    pub fn take_capture(&mut self, ch: ChannelId, id: CheckpointId) -> Option<Capture> {
        let c = &mut self.channels[ch as usize];
        let mut cap = match &c.capture {
            Some(cap) if cap.id == id => c.capture.take()?,
            _ => return None,
        };
        let status = |r: &crate::model::Record| {
            matches!(r.element(), Some(crate::model::Element::Status { .. }))
        };
        if self.strip_statuses && cap.records.iter().any(status) {
            // Mutant: the state keeps the records, not the statuses.
            crate::mutant::fired(crate::mutant::Mutant::ChannelStateDropsWatermarkStatus);
            cap.records.retain(|r| !status(r));
        }
        Some(cap)
    }

    /// Drops any capture for checkpoints up to `id` (aborted).
    pub fn drop_capture(&mut self, ch: ChannelId, id: CheckpointId) {
        let c = &mut self.channels[ch as usize];
        if c.capture.as_ref().is_some_and(|cap| cap.id <= id) {
            c.capture = None;
        }
    }

    /// Copies the data queued in the sender's output queue ahead of the
    /// first message for which `stop` holds: the output channel state a
    /// priority barrier overtakes (Flink's `processPriorityBuffer`).
    fn queued_output(&self, ch: ChannelId, stop: impl Fn(&Msg) -> bool) -> Capture {
        let mut cap = Capture::default();
        for m in &self.channels[ch as usize].out_queue {
            if stop(m) {
                break;
            }
            if let Msg::Data { seq, buf, .. } = m {
                cap.push(*seq, buf, &self.sizes, self.now);
            }
        }
        cap
    }

    /// Sends an unaligned barrier that overtakes the queued output, and
    /// returns the overtaken records (output channel state).
    pub fn send_priority_barrier(&mut self, ch: ChannelId, b: Barrier) -> Capture {
        self.ship_partial(ch);
        let mut cap = self.queued_output(ch, |_| false);
        if self.local_state_lost && self.credit.channels[ch as usize].local {
            crate::mutant::fired(crate::mutant::Mutant::LocalChannelStateLost);
            cap = Capture::new(b.id);
        }
        cap.id = b.id;
        self.push_out(ch, Msg::Barrier(b), true);
        cap
    }

    /// Whether a barrier of checkpoint `id` still waits in the output queue.
    pub fn barrier_queued(&self, ch: ChannelId, id: CheckpointId) -> bool {
        self.channels[ch as usize]
            .out_queue
            .iter()
            .any(|m| matches!(m, Msg::Barrier(b) if b.id == id))
    }

    /// Output-side alignment timeout (Flink's
    /// `PipelinedSubpartition.alignedBarrierTimeout`): if the timeoutable
    /// barrier of `id` still waits in the output queue, the data ahead of it
    /// becomes output channel state and the barrier turns into a priority
    /// event. Returns the captured records, or `None` if it had left.
    pub fn prioritize_queued_barrier(
        &mut self,
        ch: ChannelId,
        id: CheckpointId,
    ) -> Option<Capture> {
        // Only timeoutable barriers: a forced-aligned edge's barrier stays
        // in line whatever the timeout.
        let is_it = |m: &Msg| matches!(m, Msg::Barrier(b) if b.id == id && b.kind == BarrierKind::Timeoutable);
        let k = self.channels[ch as usize]
            .out_queue
            .iter()
            .position(is_it)?;
        let mut cap = self.queued_output(ch, is_it);
        cap.id = id;
        let c = &mut self.channels[ch as usize];
        let Some(Msg::Barrier(b)) = c.out_queue.remove(k) else {
            unreachable!("position found a barrier");
        };
        let from = c.from;
        if b.kind == BarrierKind::Timeoutable {
            self.release_held(from);
        }
        self.push_out(ch, Msg::Barrier(b.as_unaligned()), true);
        Some(cap)
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const ChannelStateDropsWatermarkStatus: Mutant = Mutant::declare(&MutantInfo {
            name: "channel-state-drops-watermark-status",
            part: "unaligned capture",
            what: "in-flight data persisted by an unaligned checkpoint leaves out the watermark statuses among the records: after a restore, a channel whose sender had gone idle holds its receiver's watermark back as if active, or one active again stays idle",
            modelled_on: "a channel state that keeps only records (not every stream element): Flink persists in-flight buffers as serialised, watermark statuses included",
            caught_by: "consistent-cut",
            applies: &[("event-time-idle", "unaligned")],
        });

        pub const LocalChannelStateLost: Mutant = Mutant::declare(&MutantInfo {
            name: "local-channel-state-lost",
            part: "unaligned capture",
            what: "an unaligned barrier on a local channel overtakes the sender's queued output without persisting it, as if a channel with no receiver-side buffers had nothing in flight: the overtaken records are in neither snapshot",
            modelled_on: "treating a LocalInputChannel as empty: Flink persists a local channel's in-flight data from the producer's subpartition, where all of it waits",
            caught_by: "consistent-cut",
            applies: &[("local-channels", "unaligned")],
        });
    }
}
