//! The uncoordinated families at run time (`Coordination::Local`:
//! `uncoordinated`, `cic-bcs`, `cic-hmnr`).
//!
//! - Every task takes **basic checkpoints** on its own timer (the interval,
//!   give or take `local_jitter`, from the `LocalTimers` stream) and one at
//!   the end of its input; its [`LocalRule`] may **force** one before it
//!   reads a buffer. A checkpoint ships the open output buffers, records the
//!   absolute positions of every channel it reads and writes (a `Cut`), runs
//!   the operators' pre-barrier hooks and snapshots (a sink pre-commits its
//!   transaction), and writes the state with the log's new part; the
//!   acknowledgement makes it durable at the coordinator.
//! - Every record a task sends is **logged** at its sender
//!   (`runtime::net::Logs`).
//! - On every acknowledgement the coordinator computes the **recovery
//!   line** (`coordinator::line::max_consistent`) and notifies each task
//!   whose checkpoint in the line moved: a sink commits what it
//!   pre-committed up to there, logs drop what no line can need again, and
//!   checkpoints below the line are dropped.
//! - On a failure every task is restored from its own checkpoint in the
//!   line (never below the last line: lines only move forward), and each
//!   sender replays its log from what the receiver had read to what the
//!   sender had sent, ahead of anything new (as restored output channel
//!   state). The line is checked like a completed checkpoint's cut.
//!
//! **Simplifications:** every failure restores every task (a global stop,
//! as CheckMate does; no region failover); savepoints, Sink V2 and FLIP-27
//! enumerators are refused by the scenario check for these algorithms.
//!
//! Their state is `Local` (`local_state.rs`).

use super::local_state::{Local, LocalCheckpoint};
use super::*;
use crate::protocol::local::{LocalConfig, LocalRule, Piggyback};
use crate::protocol::Coordination;
use crate::runtime::coordinator::line;

impl World<'_> {
    /// The algorithm is one of the uncoordinated families.
    pub(super) fn is_local(&self) -> bool {
        self.local.is_some()
    }

    fn loc(&mut self) -> &mut Local {
        self.local.as_mut().expect("an uncoordinated run")
    }

    /// The start of a run: logs on, every task's stamp, every timer.
    pub(super) fn local_start(&mut self) {
        self.net.logs = crate::runtime::net::Logs::new(self.net.channels.len());
        for t in 0..self.tasks.list.len() as TaskId {
            self.stamp(t);
        }
        self.arm_local_timers(true);
    }

    /// What task `t`'s buffers carry from now on.
    fn stamp(&mut self, t: TaskId) {
        let pb = self.loc().rules[t as usize].piggyback().map(Rc::new);
        let n = self.tasks.list.len();
        let stamps = &mut self.net.stamps;
        if stamps.len() < n {
            stamps.resize(n, None);
        }
        stamps[t as usize] = pb;
    }

    /// Every task's next basic checkpoint (`first`: at the first delay).
    fn arm_local_timers(&mut self, first: bool) {
        let cp = &self.plan.scenario.checkpoint;
        let Some(interval) = cp.interval else {
            return;
        };
        let base = if first { cp.first_delay } else { interval };
        for t in 0..self.tasks.list.len() as TaskId {
            self.arm_local_timer(t, base);
        }
    }

    /// Task `t`'s next timer: `base` from now, give or take `local_jitter`
    /// (at most `base`).
    fn arm_local_timer(&mut self, t: TaskId, base: SimDuration) {
        let jitter = self.plan.scenario.checkpoint.local_jitter.0.min(base.0);
        let d = base.0 - jitter + self.loc().rng.below(2 * jitter + 1);
        let at = self.net.now.plus(SimDuration(d));
        self.net.schedule(at, Ev::LocalTimer { task: t });
    }

    /// Task `t`'s timer: a basic checkpoint, and the next timer; while its
    /// thread is blocked in a call, the timer waits for the call's return.
    pub(super) fn local_timer(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running || self.loc().final_id[ti].is_some() {
            return;
        }
        let now = self.net.now;
        if let Some((_, until)) = self.tasks.list[ti].flush_blocked.filter(|&(_, u)| u > now) {
            // Its thread is in a blocked call (a commit waiting for the
            // transaction coordinator): the checkpoint waits for it.
            self.net.schedule(until, Ev::LocalTimer { task: t });
            return;
        }
        self.local_checkpoint(t, None, None);
        let interval = self.plan.scenario.checkpoint.interval.unwrap_or_default();
        self.arm_local_timer(t, interval);
    }

    /// Task `t` is about to read a buffer carrying `pb` from channel `ch`
    /// (`n` of its records, already counted as read): the rule may force a
    /// checkpoint first; then it merges what the buffer carries.
    pub(super) fn local_read(&mut self, t: TaskId, ch: ChannelId, n: u64, pb: &Piggyback) {
        let from = self.plan.exec.channels[ch as usize].from;
        for i in 0..self.plan.task_outputs[t as usize].len() {
            let out = self.plan.task_outputs[t as usize][i];
            if self.net.channels[out as usize].sent > self.loc().sent_at_checkpoint[out as usize] {
                let to = self.plan.exec.channels[out as usize].to;
                self.loc().rules[t as usize].sent_to(to);
            }
        }
        if self.loc().rules[t as usize].forces(from, pb) {
            self.local_checkpoint(t, Some(pb), Some((ch, n)));
        }
        self.loc().rules[t as usize].delivered(from, pb);
        self.stamp(t);
    }

    /// Task `t` takes a checkpoint of its own: basic (`forced_by` `None`),
    /// or forced before reading a buffer of `unread.0` whose `unread.1`
    /// records are counted as read already.
    pub(super) fn local_checkpoint(
        &mut self,
        t: TaskId,
        forced_by: Option<&Piggyback>,
        unread: Option<(ChannelId, u64)>,
    ) -> CheckpointId {
        let ti = t as usize;
        let id = {
            let l = self.loc();
            l.next_id += 1;
            l.next_id - 1
        };
        self.tasks.list[ti].last_checkpoint = id;
        self.tasks.list[ti].snapshotted = id;
        self.crash_trigger(TriggerEvent::Snapshot, Some(t), id);
        self.pre_barrier(t, id);
        self.tasks.store.precommit_scope = Some(id);
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            self.net.ship_partial(ch);
        }
        let cut = self.local_cut(ti, unread);
        let (states, log_pos) = self.snapshot_members(t, id);
        self.tasks.store.precommit_scope = None;
        self.loc().rules[ti].checkpointed(forced_by);
        self.stamp(t);
        self.rec.counters.snapshots += 1;
        match forced_by {
            Some(_) => self.rec.counters.local_checkpoints_forced += 1,
            None => self.rec.counters.local_checkpoints_basic += 1,
        }
        let snapshot = TaskSnapshot {
            states,
            log_pos,
            watermarks: self.member_clocks(t),
            timers: self.member_timers(t),
            ..TaskSnapshot::default()
        };
        // The log's new part is written with the state.
        let mut log_bytes = 0;
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            log_bytes += self.net.logs.take_unsaved(ch);
            self.loc().sent_at_checkpoint[ch as usize] = self.net.channels[ch as usize].sent;
        }
        let state_bytes = snapshot.state_bytes();
        let now = self.net.now;
        let written_from = self.tasks.snapshot_blocked.take().unwrap_or(now);
        let durable = writes_done(
            &self.plan.scenario,
            now,
            written_from,
            state_bytes + log_bytes,
            &[],
            true,
        );
        let rule = self.loc().rules[ti].boxed_clone();
        let index = rule.index();
        // The rules' promises are about the checkpoints taken, whether or
        // not their writes succeed.
        if !self.loc().restarted {
            self.loc().history[ti].push((id, cut.clone(), index));
        }
        self.loc().writing.insert(
            (t, id),
            LocalCheckpoint {
                id,
                at: now,
                snapshot,
                cut,
                rule,
            },
        );
        self.mark(|| Timeline::Snapshot {
            task: t,
            id,
            kind: BarrierKind::Aligned,
            state_bytes,
        });
        let rpc = self.plan.scenario.checkpoint.rpc_latency;
        let delay = SimDuration(durable.since(now).0.saturating_add(rpc.0));
        self.schedule_ack(t, id, delay);
        id
    }

    /// Where task `ti` stands on its channels, by absolute position:
    /// records read per input (less `unread.1` on channel `unread.0`, a
    /// buffer counted as read but not read yet), sent per output.
    fn local_cut(&self, ti: usize, unread: Option<(ChannelId, u64)>) -> Cut {
        let offset = &self.local.as_ref().expect("an uncoordinated run").offset;
        let read = |ch: ChannelId| {
            let n = self.net.channels[ch as usize].received;
            let skip = unread.filter(|(c, _)| *c == ch).map_or(0, |(_, k)| k);
            offset[ch as usize] + n - skip
        };
        let sent = |ch: ChannelId| offset[ch as usize] + self.net.channels[ch as usize].sent;
        Cut {
            inputs: self.plan.exec.tasks[ti]
                .inputs
                .iter()
                .map(|&ch| (ch, read(ch)))
                .collect(),
            outputs: self.plan.task_outputs[ti]
                .iter()
                .map(|&ch| (ch, sent(ch)))
                .collect(),
        }
    }

    /// Task `t`'s input ended: its final checkpoint. It finishes once the
    /// line holds it.
    pub(super) fn local_final(&mut self, t: TaskId) {
        if self.tasks.list[t as usize].status != Status::Running {
            return;
        }
        let id = self.local_checkpoint(t, None, None);
        self.loc().final_id[t as usize] = Some(id);
    }

    /// The write of task `t`'s checkpoint `id` failed: it never becomes
    /// durable.
    pub(super) fn local_write_failed(&mut self, t: TaskId, id: CheckpointId) {
        if self.loc().writing.remove(&(t, id)).is_some() {
            self.rec.counters.checkpoints_storage_failed += 1;
            if self.loc().final_id[t as usize] == Some(id) {
                // The end of input is checkpointed again.
                self.loc().final_id[t as usize] = None;
                self.local_final(t);
            }
        }
    }

    /// Task `t`'s checkpoint `id` is durable: the line may move.
    pub(super) fn local_ack(&mut self, t: TaskId, id: CheckpointId) {
        let Some(c) = self.loc().writing.remove(&(t, id)) else {
            return;
        };
        if self.tasks.list[t as usize].status == Status::Dead {
            return; // its asynchronous part died with it
        }
        self.crash_trigger(TriggerEvent::Ack, Some(t), id);
        let now = self.net.now;
        let mut stats = crate::runtime::coordinator::CheckpointStats {
            id,
            trigger_ns: c.at.0,
            end_ns: now.0,
            duration_ns: now.since(c.at).0,
            outcome: CpOutcome::Completed,
            state_bytes: c.snapshot.state_bytes(),
            persisted_bytes: c.snapshot.state_bytes(),
            full_bytes: c.snapshot.state_bytes(),
            in_flight_bytes: 0,
            unaligned: false,
            acks: 1,
            start_delay_max_ns: 0,
            alignment_max_ns: 0,
            start_delay_ns: vec![None; self.tasks.list.len()],
            alignment_ns: vec![None; self.tasks.list.len()],
            savepoint: false,
        };
        stats.start_delay_ns[t as usize] = Some(0);
        stats.alignment_ns[t as usize] = Some(0);
        self.coord.stats.push(stats);
        self.rec.counters.checkpoints_completed += 1;
        let l = self.loc();
        let t = t as usize;
        // Writes may finish out of order (a slow one): a checkpoint older
        // than the task's in the line is of no use any more.
        if l.line[t].as_ref().is_some_and(|c| c.id > id) {
            return;
        }
        let above = &mut l.above[t];
        above.insert(above.partition_point(|a| a.id < id), Rc::new(c));
        self.advance_line();
    }

    /// The maximum consistent line over the durable checkpoints: each
    /// task's candidates, newest first, down to its checkpoint in the
    /// current line.
    fn compute_line(&mut self) -> (Vec<Option<Rc<LocalCheckpoint>>>, u64) {
        let ignore = self.plan.cfg.mutants.has(Mutant::LineIgnoresOrphans);
        let l = self.local.as_ref().expect("an uncoordinated run");
        let initial = Cut::default();
        let candidates: Vec<Vec<&Cut>> = (0..l.line.len())
            .map(|t| {
                let mut c: Vec<&Cut> = l.above[t].iter().rev().map(|c| &c.cut).collect();
                c.push(l.line[t].as_ref().map_or(&initial, |c| &c.cut));
                c
            })
            .collect();
        let (pos, rolled) = line::max_consistent(&candidates, &l.ends, ignore);
        if ignore && rolled == 0 {
            let honest = line::max_consistent(&candidates, &l.ends, false);
            if honest.0 != pos {
                fired(Mutant::LineIgnoresOrphans);
            }
        }
        let chosen = pos
            .iter()
            .enumerate()
            .map(|(t, &p)| {
                let above = &l.above[t];
                match p < above.len() {
                    true => Some(above[above.len() - 1 - p].clone()),
                    false => l.line[t].clone(),
                }
            })
            .collect();
        (chosen, rolled)
    }

    /// Moves the line to the maximum consistent one: the tasks whose
    /// checkpoint in it moved are notified, logs and checkpoints below it
    /// are dropped.
    fn advance_line(&mut self) {
        let (chosen, _) = self.compute_line();
        let moved: Vec<(TaskId, CheckpointId)> = chosen
            .iter()
            .enumerate()
            .filter_map(|(t, c)| {
                let c = c.as_ref()?;
                let old = self.loc().line[t].as_ref().map(|o| o.id);
                (old != Some(c.id)).then_some((t as TaskId, c.id))
            })
            .collect();
        if moved.is_empty() {
            return;
        }
        self.rec.counters.recovery_lines += 1;
        {
            let l = self.loc();
            for (t, c) in chosen.into_iter().enumerate() {
                let Some(c) = c else { continue };
                l.above[t].retain(|a| a.id > c.id);
                l.line[t] = Some(c);
            }
        }
        self.check_line("the recovery line");
        self.truncate_logs();
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        for (t, id) in moved {
            self.send_notify_complete(at, t, id);
        }
    }

    /// Drops the logged records every receiver's checkpoint in the line had
    /// read: no later line goes below it. (Mutant `log-truncated-early`:
    /// below what the receiver's newest durable checkpoint had read.)
    fn truncate_logs(&mut self) {
        let early = self.plan.cfg.mutants.has(Mutant::LogTruncatedEarly);
        let l = self.local.as_ref().expect("an uncoordinated run");
        let mut cuts = Vec::new();
        for (ch, &(_, r)) in l.ends.iter().enumerate() {
            let ch = ch as ChannelId;
            let mut at = line::count(&l.cut_of(r as usize).inputs, ch);
            if early {
                let newest = l.above[r as usize]
                    .last()
                    .map(|c| line::count(&c.cut.inputs, ch));
                if let Some(n) = newest.filter(|&n| n > at) {
                    fired(Mutant::LogTruncatedEarly);
                    at = n;
                }
            }
            cuts.push(at);
        }
        for (ch, at) in cuts.into_iter().enumerate() {
            self.net.logs.drop_below(ch as ChannelId, at);
        }
    }

    /// Consistent cut of the line (`what` names it): per channel, what the
    /// receiver's checkpoint read is at most what the sender's sent (an
    /// orphan otherwise: a record read whose sending the line undoes).
    fn check_line(&mut self, what: &str) {
        let l = self.local.as_ref().expect("an uncoordinated run");
        let cuts: Vec<&Cut> = (0..l.line.len()).map(|t| l.cut_of(t)).collect();
        let found = line::orphans(&cuts, &l.ends);
        let ids: Vec<CheckpointId> = l
            .line
            .iter()
            .map(|c| c.as_ref().map_or(0, |c| c.id))
            .collect();
        let ends = l.ends.clone();
        for (ch, read, sent) in found {
            let (s, r) = ends[ch as usize];
            let msg = format!(
                "{what}: {}: the receiver's checkpoint {} read {read} records, the sender's checkpoint {} sent {sent}: {} orphan records (read, but not sent in the line)",
                self.channel_name(ch),
                ids[r as usize],
                ids[s as usize],
                read - sent
            );
            self.violation(CheckId::ConsistentCut, msg);
        }
    }

    /// The restore of a failover: the maximum consistent line over every
    /// durable checkpoint, as a `Completed` whose snapshots are each task's
    /// own (`lines`: each task's checkpoint id) and whose output channel
    /// state is each sender's log from what its receiver had read to what
    /// it had sent (`None`: every task starts from scratch and nothing is
    /// replayed). Checkpoints above the line are dropped, the logs cut
    /// where the senders resume, and every channel's numbering continues
    /// from the receiver's position. Checked: no orphan, and every record
    /// in transit in the line is replayed, once.
    pub(super) fn local_restore_point(&mut self) -> Option<Rc<Completed>> {
        let (chosen, rolled) = self.compute_line();
        let now = self.net.now;
        let mut to_start = 0;
        {
            let l = self.loc();
            l.restarted = true;
            l.writing.clear();
            for (t, c) in chosen.into_iter().enumerate() {
                if c.is_none() && !l.above[t].is_empty() {
                    to_start += 1;
                }
                l.above[t].clear();
                if c.is_some() {
                    l.line[t] = c;
                }
                l.final_id[t] = None;
            }
        }
        self.rec.counters.local_checkpoints_rolled_back += rolled;
        self.rec.counters.local_rollbacks_to_start += to_start;
        self.check_line("the recovery line restored");
        let l = self.local.as_ref().expect("an uncoordinated run");
        let n = l.line.len();
        let mut states: Vec<Option<TaskSnapshot>> = vec![None; n];
        let mut lines = vec![0; n];
        let mut furthest = 0u64;
        for (t, c) in l.line.iter().enumerate() {
            match c {
                Some(c) => {
                    states[t] = Some(c.snapshot.clone());
                    lines[t] = c.id;
                    furthest = furthest.max(now.since(c.at).0);
                }
                None => furthest = furthest.max(now.0),
            }
        }
        let count = line::count;
        let spans: Vec<(ChannelId, TaskId, u64, u64)> = (l.ends.iter().enumerate())
            .map(|(ch, &(s, r))| {
                let ch = ch as ChannelId;
                let sent = count(&l.cut_of(s as usize).outputs, ch);
                let read = count(&l.cut_of(r as usize).inputs, ch);
                (ch, s, read, sent)
            })
            .collect();
        let mut replayed = 0;
        for (ch, s, read, sent) in spans {
            let (first, records) = self.net.logs.range(ch, read, sent);
            self.net.logs.cut_from(ch, sent);
            self.loc().offset[ch as usize] = first.min(sent);
            if first > read && read < sent {
                let lost = first.min(sent) - read;
                let msg = format!(
                    "the recovery line restored: {}: the sender's log no longer holds records [{read}, {}) that the receiver's checkpoint had not read: {lost} records in transit are lost",
                    self.channel_name(ch),
                    first.min(sent)
                );
                self.violation(CheckId::ConsistentCut, msg);
            }
            if records.is_empty() {
                continue;
            }
            replayed += records.len() as u64;
            let bytes = records.iter().map(|r| self.net.sizes.of(r.lineage)).sum();
            let snap = states[s as usize].get_or_insert_with(TaskSnapshot::default);
            snap.outputs.push(ChannelState {
                ch,
                first_seq: first,
                records,
                bytes,
                gap: false,
            });
        }
        self.rec.counters.log_records_replayed += replayed;
        self.rec.counters.rollback_ns += furthest;
        // The replay is not logged again (restored output goes through
        // the channels' usual emit); `local_restored` turns logging on.
        self.net.logs.on = false;
        let id = lines.iter().copied().max().unwrap_or(0);
        if id == 0 && replayed == 0 {
            return None;
        }
        Some(Rc::new(Completed {
            id,
            trigger_time: now,
            completed_at: now,
            state_bytes: states.iter().flatten().map(|s| s.state_bytes()).sum(),
            in_flight_bytes: states.iter().flatten().map(|s| s.in_flight_bytes()).sum(),
            states,
            coordinators: Vec::new(),
            lines: Some(lines),
        }))
    }

    /// After a restore: the rules resume from the line, every task's stamp
    /// and timer again, logging on.
    pub(super) fn local_restored(&mut self) {
        let Coordination::Local(make) = self.plan.cfg.algorithm.info().coordination else {
            return;
        };
        let tasks = self.tasks.list.len() as u32;
        let mutants = self.plan.cfg.mutants;
        for t in 0..self.tasks.list.len() {
            let l = self.loc();
            l.rules[t] = match &l.line[t] {
                Some(c) => c.rule.boxed_clone(),
                None => make(&LocalConfig {
                    task: t as u32,
                    tasks,
                    mutants,
                }),
            };
            self.stamp(t as TaskId);
        }
        for ch in 0..self.net.channels.len() {
            self.loc().sent_at_checkpoint[ch] = self.net.channels[ch].sent;
        }
        self.net.logs.on = true;
        self.arm_local_timers(false);
    }

    /// Task `t` finishes when notified of `id`: its final checkpoint is in
    /// the line.
    pub(super) fn local_finished_by(&self, t: TaskId, id: CheckpointId) -> bool {
        let l = self.local.as_ref().expect("an uncoordinated run");
        l.final_id[t as usize].is_some_and(|f| id >= f)
    }

    /// Task `t` finishes once notified of its final checkpoint, but not
    /// inside a call that blocked its thread (a commit waiting for the
    /// transaction coordinator): it finishes when the call returns
    /// (`block_returned`), or fails if the call throws then.
    pub(super) fn local_try_finish(&mut self, t: TaskId) {
        let task = &self.tasks.list[t as usize];
        if task.status != Status::Running || !self.local_finished_by(t, task.last_notified) {
            return;
        }
        let blocked = task.flush_blocked.is_some_and(|(_, u)| u > self.net.now);
        if blocked || self.blocked_until(t).is_some() {
            return;
        }
        self.tasks.set_status(t as usize, Status::Finished);
        self.net.sched[t as usize].alive = false;
        self.mark(|| Timeline::Finished { task: t });
        if self.tasks.all(Status::Finished) {
            self.job.status = JobStatus::Finished;
        }
    }

    /// The notification of task `t`'s final checkpoint (never lost: the
    /// task waits for it to finish).
    pub(super) fn local_final_notification(&self, t: TaskId, id: CheckpointId) -> bool {
        self.local
            .as_ref()
            .is_some_and(|l| l.final_id[t as usize] == Some(id))
    }

    /// The coordinator crashed and its checkpoints were lost with memory
    /// storage: every line goes back to the initial state.
    pub(super) fn local_lost(&mut self) {
        let l = self.loc();
        let lost = l.above.iter().map(Vec::len).sum::<usize>() + l.line.iter().flatten().count();
        l.above.iter_mut().for_each(Vec::clear);
        l.line.iter_mut().for_each(|c| *c = None);
        l.writing.clear();
        self.rec.counters.checkpoints_lost_with_coordinator += lost as u64;
        self.faults.fx.lost_checkpoints |= lost > 0;
    }

    /// The end of a run without a restart: every checkpoint belongs to a
    /// consistent global checkpoint when the rule promises it (CIC), and
    /// the rule's index lines are consistent when it promises them (BCS).
    /// Each task's state at the end counts as its last checkpoint.
    pub(super) fn check_local_history(&mut self) {
        let Some(l) = self.local.as_ref() else {
            return;
        };
        if l.restarted {
            return;
        }
        let ends: Vec<Cut> = (0..self.tasks.list.len())
            .map(|t| self.local_cut(t, None))
            .collect();
        let initial = Cut::default();
        let history: Vec<Vec<&Cut>> = (0..self.tasks.list.len())
            .map(|t| {
                let mut h = vec![&initial];
                h.extend(l.history[t].iter().map(|(_, c, _)| c));
                h.push(&ends[t]);
                h
            })
            .collect();
        let mut found = Vec::new();
        let promises = |f: fn(&dyn LocalRule) -> bool| l.rules.first().is_some_and(|r| f(&**r));
        // On a DAG no checkpoint can be useless (a Z-cycle needs a cycle of
        // channels): they are looked for on jobs with feedback edges only.
        let mut useless = 0;
        if self.loops.is_some() {
            for (t, h) in history.iter().enumerate() {
                for x in 1..h.len() - 1 {
                    if line::useful(&history, &l.ends, t, x) {
                        continue;
                    }
                    useless += 1;
                    if promises(|r| r.no_useless()) {
                        found.push(format!(
                            "checkpoint {} of task {} belongs to no consistent global checkpoint (a useless checkpoint)",
                            l.history[t][x - 1].0,
                            self.plan.exec.tasks[t].name
                        ));
                    }
                }
            }
        }
        self.rec.counters.useless_checkpoints += useless;
        if promises(|r| r.index_lines()) {
            let top = l
                .history
                .iter()
                .flatten()
                .map(|(_, _, i)| *i)
                .max()
                .unwrap_or(0);
            for n in 1..=top {
                let cuts: Vec<&Cut> = (0..self.tasks.list.len())
                    .map(|t| {
                        l.history[t]
                            .iter()
                            .find(|(_, _, i)| *i >= n)
                            .map_or(&ends[t], |(_, c, _)| c)
                    })
                    .collect();
                for (ch, read, sent) in line::orphans(&cuts, &l.ends) {
                    found.push(format!(
                        "the checkpoints of index {n} do not form a consistent global checkpoint: {} read {read} records, {sent} were sent",
                        self.channel_name(ch)
                    ));
                }
            }
        }
        for msg in found.into_iter().take(10) {
            self.violation(CheckId::Protocol, msg);
        }
    }
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const LineIgnoresOrphans: Mutant = Mutant::declare(&MutantInfo {
            name: "line-ignores-orphans",
            part: "recovery lines (uncoordinated)",
            what: "the recovery line is every task's newest durable checkpoint: a receiver keeps records its sender's checkpoint had not sent yet, and the sender sends them again",
            modelled_on: "the classic mistake of independent checkpointing: restoring the latest local checkpoints without the rollback-dependency fixpoint (Bhargava and Lian 1988; CheckMate's recovery line rolls a node back while any orphan edge remains)",
            caught_by: "consistent-cut",
            applies: &[("faults", "uncoordinated")],
        });
        pub const LogTruncatedEarly: Mutant = Mutant::declare(&MutantInfo {
            name: "log-truncated-early",
            part: "message logs (uncoordinated)",
            what: "a sender's log is cut below what the receiver's newest checkpoint read, not what its checkpoint in the recovery line read: a rollback below that newest checkpoint finds the records in transit gone",
            modelled_on: "log garbage collection must stay below the global recovery line (Elnozahy et al., ACM CSUR 2002, §3.4; CheckMate truncates logs only below the line): a receiver's newest checkpoint may still be rolled back",
            caught_by: "consistent-cut",
            applies: &[("faults", "uncoordinated")],
        });
    }
}
