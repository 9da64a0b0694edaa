//! What a task does with its barrier handler's actions: block and unblock
//! inputs, snapshot and forward the barrier, capture channel state,
//! acknowledge, decline and cancel downstream. The coordinator's RPCs at
//! the task (source trigger, notifications) are `rpcs.rs`.

use super::*;

impl World<'_> {
    /// Carries out the actions task `t`'s barrier handler returned, in
    /// order.
    pub(super) fn apply_actions(&mut self, t: TaskId, actions: &mut Vec<HandlerAction>) {
        // One barrier's actions run in one step of the task's thread: an
        // action that frees the task to exit (an abort forgetting the
        // pending ack) must not let it exit before the next action (the
        // newer checkpoint's snapshot, whose ack it then owes).
        self.tasks.list[t as usize].exit.in_actions += 1;
        self.apply_actions_in_step(t, actions);
        let e = &mut self.tasks.list[t as usize].exit;
        e.in_actions -= 1;
        if e.in_actions == 0 && std::mem::take(&mut e.exit_held) {
            self.try_exit(t);
        }
    }

    fn apply_actions_in_step(&mut self, t: TaskId, actions: &mut Vec<HandlerAction>) {
        let late = self.plan.cfg.mutants.has(Mutant::UnalignedLateSnapshot);
        // Mutant: a snapshot put off until the capture has started.
        let mut deferred: Option<Barrier> = None;
        for a in actions.drain(..) {
            if self.names_a_missing_input(t, &a) {
                continue;
            }
            if let Some(b) = deferred {
                if !matches!(a, HandlerAction::CaptureInput(..)) {
                    deferred = None;
                    self.late_snapshot(t, b);
                }
            }
            self.apply_action(t, a, late, &mut deferred);
        }
        if let Some(b) = deferred {
            self.late_snapshot(t, b);
        }
        self.ack_at_first_barrier_mutant(t);
    }

    /// A handler naming an input the task does not have: a bug of the
    /// algorithm under test, not of the simulator (a protocol violation).
    fn names_a_missing_input(&mut self, t: TaskId, a: &HandlerAction) -> bool {
        let ti = t as usize;
        let (HandlerAction::Block(i)
        | HandlerAction::Unblock(i)
        | HandlerAction::CaptureInput(_, i)) = *a
        else {
            return false;
        };
        let n = self.plan.exec.tasks[ti].inputs.len();
        if (i as usize) < n {
            return false;
        }
        let name = self.plan.exec.tasks[ti].name.clone();
        self.violation(
            CheckId::Protocol,
            format!(
                "the barrier handler of task {name} asked for {a:?}, but the task has {n} inputs"
            ),
        );
        true
    }

    /// One handler action; a checkpoint the mutant `unaligned-late-snapshot`
    /// puts off lands in `deferred`.
    fn apply_action(
        &mut self,
        t: TaskId,
        a: HandlerAction,
        late: bool,
        deferred: &mut Option<Barrier>,
    ) {
        let ti = t as usize;
        match a {
            HandlerAction::Block(i) => {
                self.take_blocking_barrier(t, i);
                self.tasks.list[ti].blocked[i as usize] = true;
                self.hold(t, Some(i));
            }
            HandlerAction::Unblock(i) => self.unblock(t, i),
            HandlerAction::UnblockAll => {
                self.tasks.list[ti]
                    .blocked
                    .iter_mut()
                    .for_each(|b| *b = false);
                for i in 0..self.tasks.list[ti].blocked.len() as u32 {
                    self.release(t, Some(i));
                }
                for i in 0..self.tasks.list[ti].needs_resume.len() as u32 {
                    self.resume_input(t, i);
                }
            }
            HandlerAction::AlignmentStart(id) => self.alignment_start(t, id),
            HandlerAction::AlignmentEnd(id) => {
                self.mark(|| Timeline::AlignmentEnd { task: t, id });
                let task = &mut self.tasks.list[ti];
                task.last_alignment_ns = match task.alignment_start {
                    Some((sid, start)) if sid == id => self.net.now.since(start).0,
                    _ => 0,
                };
            }
            HandlerAction::Checkpoint(b) => {
                if b.kind == BarrierKind::Unaligned
                    && self.plan.cfg.algorithm.info().first_barrier == BarrierKind::Timeoutable
                {
                    self.rec.counters.switched_to_unaligned += 1;
                }
                if late && b.kind == BarrierKind::Unaligned {
                    *deferred = Some(b);
                } else {
                    self.checkpoint(t, b);
                }
            }
            HandlerAction::CaptureInput(id, i) => {
                let ch = self.plan.exec.tasks[ti].inputs[i as usize];
                self.net.start_capture(ch, id);
            }
            HandlerAction::AllBarriers(id) => self.all_barriers(t, id),
            HandlerAction::ArmTimer(id, at) => {
                let at = at.max(self.net.now);
                self.net.schedule(at, Ev::AlignmentTimer { task: t, id });
            }
            HandlerAction::Abort(id, reason) => self.abort_at_task(t, id, reason),
            HandlerAction::Drained(b) => self.forward_drain_marker(t, b),
        }
    }

    /// Input `i` of task `t` is unblocked and released at its sender.
    fn unblock(&mut self, t: TaskId, i: u32) {
        let ti = t as usize;
        self.take_blocking_barrier(t, i);
        self.tasks.list[ti].blocked[i as usize] = false;
        self.release(t, Some(i));
        if self.plan.cfg.mutants.has(Mutant::ObsoleteBarrierNoResume)
            && self.tasks.list[ti].needs_resume[i as usize]
        {
            // Mutant: an ignored (obsolete) barrier does not
            // release the channel it blocked at its sender.
            fired(Mutant::ObsoleteBarrierNoResume);
            self.tasks.list[ti].needs_resume[i as usize] = false;
        } else {
            self.resume_input(t, i);
        }
    }

    /// Task `t` starts aligning checkpoint `id`.
    fn alignment_start(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        self.crash_trigger(TriggerEvent::Alignment, Some(t), id);
        self.tasks.list[ti].started.insert(id);
        self.mark(|| Timeline::AlignmentStart { task: t, id });
        self.tasks.list[ti].alignment_start = Some((id, self.net.now));
        self.tasks.list[ti].last_alignment_ns = 0;
        if self.tasks.list[ti].blocked.len() > 1 {
            self.rec.counters.alignments += 1;
        }
    }

    /// Task `t` declines checkpoint `id`: its captures are dropped, its
    /// pending acknowledgement forgotten, the coordinator told.
    fn abort_at_task(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        let ti = t as usize;
        self.mark(|| Timeline::Declined {
            task: t,
            id,
            reason,
        });
        for i in 0..self.plan.exec.tasks[ti].inputs.len() {
            let ch = self.plan.exec.tasks[ti].inputs[i];
            self.net.drop_capture(ch, id);
        }
        if self.tasks.list[ti]
            .pending_ack
            .as_ref()
            .is_some_and(|p| p.id <= id)
        {
            self.tasks.list[ti].pending_ack = None;
        }
        self.decline(t, id, reason);
        self.try_exit(t);
    }

    /// Mutant `unaligned-ack-at-first-barrier`: acknowledge at the first
    /// barrier, captures still open.
    fn ack_at_first_barrier_mutant(&mut self, t: TaskId) {
        let ti = t as usize;
        if !self
            .plan
            .cfg
            .mutants
            .has(Mutant::UnalignedAckAtFirstBarrier)
        {
            return;
        }
        if let Some(p) = &self.tasks.list[ti].pending_ack {
            if p.waiting_barriers && !self.tasks.list[ti].is_source {
                fired(Mutant::UnalignedAckAtFirstBarrier);
                let id = p.id;
                self.all_barriers(t, id);
            }
        }
    }

    /// Mutant `unaligned-late-snapshot`: process one more queued buffer
    /// after the channel capture started, then snapshot.
    pub(super) fn late_snapshot(&mut self, t: TaskId, b: Barrier) {
        let ti = t as usize;
        let inputs = &self.plan.exec.tasks[ti].inputs;
        let next = inputs.iter().position(|&ch| {
            matches!(
                self.net.channels[ch as usize].in_queue.front(),
                Some(Msg::Data { .. })
            )
        });
        if let Some(i) = next {
            let ch = inputs[i];
            if let Some(Msg::Data { buf, .. }) = self.net.take_input(ch, usize::MAX) {
                fired(Mutant::UnalignedLateSnapshot);
                let head = self.tasks.list[ti].members[0].inst;
                self.rec
                    .schedule
                    .read(head, i as u32, buf.len() as u64, self.net.now);
                let from = self.plan.exec.channels[ch as usize].from_op.0;
                for &r in &buf {
                    if self.plan.time.on && r.is_element() {
                        self.input_element(t, i as u32, &r);
                        continue;
                    }
                    self.process_record(t, from, r);
                }
                self.rec.counters.records_processed += buf.len() as u64;
                self.net.recycle(buf);
            }
        }
        self.checkpoint(t, b);
    }

    /// The kind of barrier this task forwards for a checkpoint whose barrier
    /// arrived as `b` (before per-edge forced alignment).
    pub(super) fn out_kind(&self, b: Barrier) -> BarrierKind {
        if self.sp.by_id.contains_key(&b.id) {
            return BarrierKind::Aligned; // savepoints are never unaligned
        }
        match self.plan.cfg.algorithm.info().first_barrier {
            BarrierKind::Unaligned => BarrierKind::Unaligned,
            // A timeoutable checkpoint that went unaligned stays so.
            BarrierKind::Timeoutable if b.kind == BarrierKind::Unaligned => BarrierKind::Unaligned,
            BarrierKind::Timeoutable => BarrierKind::Timeoutable,
            BarrierKind::Aligned => BarrierKind::Aligned,
        }
    }

    /// The task-side checkpoint: snapshot the operator and forward the
    /// barrier, as one indivisible step on the task thread (Flink's
    /// `checkpointState`). An unaligned barrier overtakes the queued output,
    /// which becomes output channel state. The acknowledgement follows in
    /// [`World::maybe_ack`] once every input delivered the barrier.
    pub(super) fn checkpoint(&mut self, t: TaskId, b: Barrier) {
        if !self.begin_checkpoint(t, b) {
            return;
        }
        self.note_final_min(t, b.id);
        let ti = t as usize;
        // Flink's `checkpointState`: `prepareSnapshotPreBarrier` (what it
        // emits goes ahead of the barrier), the barrier forwarded, then every
        // operator's snapshot. Stop-the-world ran the hooks at its drain
        // marker.
        if !self.stop_the_world() {
            self.pre_barrier(t, b.id);
        }
        self.tasks.store.precommit_scope = Some(b.id);
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            self.net.ship_partial(ch);
        }
        let cut = self.task_cut(ti);
        let mut snapshot = TaskSnapshot::default();
        let mut writes = Vec::new();
        // Stop-the-world forwards nothing: the drain markers went first.
        if !self.stop_the_world() {
            self.forward_barrier(t, b, &mut snapshot, &mut writes);
        }
        let (states, log_pos) = self.snapshot_members(t, b.id);
        self.reader_snapshotted(t, b.id);
        self.tasks.store.precommit_scope = None;
        snapshot.states = states;
        snapshot.log_pos = log_pos;
        snapshot.watermarks = self.member_clocks(t);
        snapshot.timers = self.member_timers(t);
        self.note_end_state(t, &mut snapshot);
        self.note_promised(t, b.id);
        self.rec.counters.snapshots += 1;
        let state_bytes = snapshot.state_bytes(); // trace
        self.mark(|| Timeline::Snapshot {
            task: t,
            id: b.id,
            kind: b.kind,
            state_bytes,
        });
        if self.net.sched[ti].held_barriers > 0 {
            let at = b
                .timestamp
                .plus(self.plan.scenario.checkpoint.alignment_timeout)
                .max(self.net.now);
            self.net
                .schedule(at, Ev::OutputTimeout { task: t, id: b.id });
        }
        self.await_acknowledgement(t, b, snapshot, cut, writes);
    }

    /// Whether task `t` takes checkpoint `b` at all: not one older than its
    /// last, not one the coordinator already aborted (its barrier is
    /// cancelled downstream instead). Records the checkpoint as the task's
    /// last; a snapshot older than the one before is a protocol violation.
    fn begin_checkpoint(&mut self, t: TaskId, b: Barrier) -> bool {
        let ti = t as usize;
        if b.id <= self.tasks.list[ti].last_checkpoint {
            return false; // out of order (aborted previously?)
        }
        self.tasks.list[ti].started.insert(b.id);
        if self.tasks.list[ti].aborted.remove(&b.id) {
            // The coordinator already aborted it: cancel downstream instead.
            self.rec.counters.aborted_checkpoints_skipped += 1;
            self.broadcast_cancel(t, b.id, CancelCause::Skipped);
            return false;
        }
        self.tasks.list[ti].last_checkpoint = b.id;
        self.crash_trigger(TriggerEvent::Snapshot, Some(t), b.id);
        if !self.stop_the_world() {
            self.tasks.list[ti].closed.insert(b.id);
        }
        if b.id <= self.tasks.list[ti].snapshotted {
            let name = self.plan.exec.tasks[ti].name.clone();
            self.violation(
                CheckId::Protocol,
                format!(
                    "task {name} snapshotted checkpoint {} after checkpoint {}",
                    b.id, self.tasks.list[ti].snapshotted
                ),
            );
        }
        self.tasks.list[ti].snapshotted = b.id;
        true
    }

    /// Where task `ti`'s channels stand: records received on each input,
    /// sent on each output.
    pub(super) fn task_cut(&self, ti: usize) -> Cut {
        let info = &self.plan.exec.tasks[ti];
        Cut {
            inputs: info
                .inputs
                .iter()
                .map(|&ch| (ch, self.net.channels[ch as usize].received))
                .collect(),
            outputs: self.plan.task_outputs[ti]
                .iter()
                .map(|&ch| (ch, self.net.channels[ch as usize].sent))
                .collect(),
        }
    }

    /// The barrier goes out on every output of task `t`, of the kind each
    /// edge allows; an unaligned one overtakes the queued output, which
    /// becomes output channel state in `snapshot` (its writes in `writes`).
    fn forward_barrier(
        &mut self,
        t: TaskId,
        b: Barrier,
        snapshot: &mut TaskSnapshot,
        writes: &mut Vec<(SimTime, u64)>,
    ) {
        let ti = t as usize;
        let kind = self.out_kind(b);
        for j in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][j];
            let kind = if self.tasks.list[ti].out_uc[j] {
                kind
            } else if kind != BarrierKind::Aligned
                && self.plan.cfg.mutants.has(Mutant::PriorityOnForcedEdge)
            {
                fired(Mutant::PriorityOnForcedEdge);
                kind
            } else {
                BarrierKind::Aligned // Flink's FORCED_ALIGNED edge
            };
            let out = Barrier { kind, ..b };
            match kind {
                BarrierKind::Unaligned => {
                    let cap = self.net.send_priority_barrier(ch, out);
                    if !cap.records.is_empty() || cap.gap {
                        writes.extend_from_slice(&cap.writes);
                        snapshot.outputs.push(ChannelState {
                            ch,
                            first_seq: cap.first_seq,
                            records: cap.records,
                            bytes: cap.bytes,
                            gap: cap.gap,
                        });
                    }
                }
                BarrierKind::Timeoutable => {
                    self.net.sched[ti].held_barriers += 1;
                    self.net.send_event(ch, Msg::Barrier(out), false);
                }
                BarrierKind::Aligned => {
                    let priority = self.net.priority_barriers;
                    if priority && !self.net.channels[ch as usize].out_queue.is_empty() {
                        fired(Mutant::AlignedPriorityBarrier);
                    }
                    self.net.send_event(ch, Msg::Barrier(out), priority);
                }
            }
        }
    }

    /// The snapshot waits in the task for the rest of its barriers; the
    /// acknowledgement follows in [`World::maybe_ack`].
    fn await_acknowledgement(
        &mut self,
        t: TaskId,
        b: Barrier,
        snapshot: TaskSnapshot,
        cut: Cut,
        writes: Vec<(SimTime, u64)>,
    ) {
        let ti = t as usize;
        let task = &self.tasks.list[ti];
        let start = task
            .alignment_start
            .filter(|(id, _)| *id == b.id)
            .map(|(_, s)| s)
            .unwrap_or(self.net.now);
        self.tasks.list[ti].pending_ack = Some(PartialAck {
            id: b.id,
            snapshot,
            cut,
            input_ended: task.input_ended,
            start_delay_ns: start.since(b.timestamp).0,
            alignment_ns: 0,
            waiting_barriers: true,
            snapshot_at: self.tasks.snapshot_blocked.take().unwrap_or(self.net.now),
            writes,
        });
    }

    /// Every operator of task `t`'s chain snapshots `id`, tail first
    /// (Flink's `OperatorChain.snapshotState`); what a snapshot emits
    /// follows the barrier. Returns each member's state and where its
    /// schedule stood, head first.
    pub(super) fn snapshot_members(
        &mut self,
        t: TaskId,
        id: CheckpointId,
    ) -> (Vec<Vec<u8>>, Vec<crate::runtime::schedule::LogPos>) {
        let members = self.tasks.list[t as usize].members.len();
        let mut states = vec![Vec::new(); members];
        let mut log_pos = Vec::with_capacity(members);
        for m in (0..members).rev() {
            let (member, mut ctx) = self.ctx_parts(t, m);
            states[m] = member.op.snapshot(id, &mut ctx);
            let inst = member.inst;
            self.rec.schedule.push(inst, Step::Snapshot(id));
            log_pos.push(self.rec.schedule.pos(inst));
            self.emit_from(t, m);
        }
        self.tasks.snapshot_blocked = match self.tasks.store.blocks.is_empty() {
            true => None,
            false => self.blocked_until(t),
        };
        if let Some(until) = self.tasks.snapshot_blocked {
            self.tasks.list[t as usize].sync_until = until;
        }
        log_pos.reverse();
        (states, log_pos)
    }

    /// Every input delivered the barrier: close the input channel state.
    pub(super) fn all_barriers(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        let drop_inflight = self.plan.cfg.mutants.has(Mutant::UnalignedDropInflight);
        let pending = self.tasks.list[ti]
            .pending_ack
            .as_mut()
            .filter(|p| p.id == id);
        let inputs = &self.plan.exec.tasks[ti].inputs;
        match pending {
            Some(p) => {
                for &ch in inputs {
                    let Some(cap) = self.net.take_capture(ch, id) else {
                        continue;
                    };
                    if (!cap.records.is_empty() || cap.gap) && drop_inflight {
                        fired(Mutant::UnalignedDropInflight);
                    } else if !cap.records.is_empty() || cap.gap {
                        p.writes.extend_from_slice(&cap.writes);
                        p.snapshot.inputs.push(ChannelState {
                            ch,
                            first_seq: cap.first_seq,
                            records: cap.records,
                            bytes: cap.bytes,
                            gap: cap.gap,
                        });
                    }
                }
                p.waiting_barriers = false;
                let task = &self.tasks.list[ti];
                let alignment = match task.alignment_start {
                    Some((sid, _)) if sid == id => task.last_alignment_ns,
                    _ => 0,
                };
                if let Some(p) = self.tasks.list[ti].pending_ack.as_mut() {
                    p.alignment_ns = alignment;
                }
                self.maybe_ack(t);
            }
            None => {
                for &ch in inputs {
                    self.net.drop_capture(ch, id);
                }
            }
        }
    }

    /// Acknowledges the pending snapshot once every input delivered its
    /// barrier and no timeoutable barrier is held in an output queue; the
    /// ack reaches the coordinator after the state (and channel state) is
    /// written.
    pub(super) fn maybe_ack(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].sync_until > self.net.now {
            // The snapshot's call has not returned yet (a blocked flush):
            // the task acknowledges when it does, if it is still alive.
            return;
        }
        match &self.tasks.list[ti].pending_ack {
            Some(p) if !p.waiting_barriers && self.net.sched[ti].held_barriers == 0 => {}
            _ => return,
        }
        let Some(p) = self.tasks.list[ti].pending_ack.take() else {
            return;
        };
        if self.uses_channel_files(p.id) {
            self.complete_channel_file(t, p);
            self.try_exit(t);
            return;
        }
        let state = self.state_write_bytes(t, &p);
        let now = self.net.now;
        let s = &self.plan.scenario;
        let durable = writes_done(s, now, p.snapshot_at, state, &p.writes, true);
        let early = self
            .plan
            .cfg
            .mutants
            .has(Mutant::AckBeforeChannelStateWritten);
        let written = match early {
            true => writes_done(s, now, p.snapshot_at, state, &p.writes, false),
            false => durable,
        };
        if written < durable {
            // Mutant: the ack leaves when the operator state is written,
            // the channel-state write still running.
            fired(Mutant::AckBeforeChannelStateWritten);
        }
        self.send_ack(t, p, durable, written);
        // A task whose input had ended waited for this ack to exit.
        self.try_exit(t);
    }

    /// Sends task `t`'s ack of snapshot `p` once its writes are done
    /// (`written`; `durable` is when they really are), or its decline if the
    /// memory storage refuses the state.
    pub(super) fn send_ack(
        &mut self,
        t: TaskId,
        p: PartialAck,
        durable: SimTime,
        written: SimTime,
    ) {
        let (id, state) = (p.id, p.snapshot.state_bytes());
        let mut written = written;
        let mut ack = TaskAck {
            snapshot: p.snapshot,
            cut: p.cut,
            input_ended: p.input_ended,
            start_delay_ns: p.start_delay_ns,
            alignment_ns: p.alignment_ns,
            arrived: false,
            durable_at: durable,
            persisted_bytes: state,
            full_bytes: state,
        };
        if self.writes_files() && self.storage.handles.contains_key(&(id, t)) {
            ack.persisted_bytes = self.storage.state_bytes(id, t);
            ack.full_bytes = self.storage.full_bytes(id, t);
        }
        let now = self.net.now;
        let s = &self.plan.scenario;
        let in_flight_bytes = ack.snapshot.in_flight_bytes();
        let max = s.checkpoint.max_state_size;
        let too_large =
            s.checkpoint.storage == StorageKind::Memory && (state > max || in_flight_bytes > max);
        // The files are written, then synced before the ack leaves.
        let sync = self.sync_files(t, id, &ack);
        ack.durable_at = ack.durable_at.plus(sync);
        written = written.plus(sync);
        let s = &self.plan.scenario;
        let mut ack_at_ns = None;
        if too_large {
            // Flink's memory-backed checkpoint streams refuse state above
            // the max state size: the task's asynchronous part fails and
            // it declines the checkpoint.
            let at = now.plus(s.checkpoint.rpc_latency);
            self.net.schedule(
                at,
                Ev::StorageWriteFailed {
                    task: t,
                    id,
                    too_large: Some(state.max(in_flight_bytes)),
                },
            );
        } else if self.coord.record_ack(id, t, ack) {
            let rpc = self.plan.scenario.checkpoint.rpc_latency;
            let delay = SimDuration(written.since(now).0.saturating_add(rpc.0));
            let at = self.schedule_ack(t, id, delay);
            ack_at_ns = Some(at.0);
        }
        self.mark(|| Timeline::SnapshotDone {
            task: t,
            id,
            state_bytes: state,
            in_flight_bytes,
            ack_at_ns,
        });
    }

    /// The output side of the alignment timeout: barriers of `id` still
    /// queued behind data turn into priority barriers; the data they
    /// overtake becomes output channel state.
    pub(super) fn output_timeout(&mut self, t: TaskId, id: CheckpointId) {
        let ti = t as usize;
        if self.tasks.list[ti].status != Status::Running {
            return;
        }
        if self.tasks.list[ti]
            .pending_ack
            .as_ref()
            .is_none_or(|p| p.id != id)
        {
            return;
        }
        for j in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][j];
            let Some(cap) = self.net.prioritize_queued_barrier(ch, id) else {
                continue;
            };
            self.rec.counters.output_barriers_prioritized += 1;
            let drop = self
                .plan
                .cfg
                .mutants
                .has(Mutant::OutputTimeoutDropsOvertaken);
            if drop && !cap.records.is_empty() {
                fired(Mutant::OutputTimeoutDropsOvertaken);
            }
            if let Some(p) = self.tasks.list[ti].pending_ack.as_mut().filter(|_| !drop) {
                if !cap.records.is_empty() || cap.gap {
                    p.writes.extend_from_slice(&cap.writes);
                    p.snapshot.outputs.push(ChannelState {
                        ch,
                        first_seq: cap.first_seq,
                        records: cap.records,
                        bytes: cap.bytes,
                        gap: cap.gap,
                    });
                }
            }
        }
        self.maybe_ack(t);
    }

    /// `prepare_snapshot_pre_barrier` of every operator of task `t`, head
    /// first (Flink's `OperatorChain.prepareSnapshotPreBarrier`); what each
    /// emits goes through the chain and out before the barrier.
    pub(super) fn pre_barrier(&mut self, t: TaskId, id: CheckpointId) {
        self.tasks.store.precommit_scope = Some(id);
        for m in 0..self.tasks.list[t as usize].members.len() {
            let inst = self.tasks.list[t as usize].members[m].inst;
            self.rec.schedule.push(inst, Step::PreBarrier(id));
            let (member, mut ctx) = self.ctx_parts(t, m);
            member.op.prepare_snapshot_pre_barrier(id, &mut ctx);
            self.emit_from(t, m);
        }
        self.tasks.store.precommit_scope = None;
    }

    /// `stop-the-world`: everything upstream of this task is drained; pass
    /// the marker on, or tell the coordinator if this task has no outputs.
    /// The pre-barrier hooks run first: what they emit is drained too.
    pub(super) fn forward_drain_marker(&mut self, t: TaskId, b: Barrier) {
        let ti = t as usize;
        self.pre_barrier(t, b.id);
        self.quiesce_timers(t, b.id);
        self.tasks.list[ti].started.insert(b.id);
        self.tasks.list[ti].closed.insert(b.id);
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            self.net.send_event(ch, Msg::Barrier(b), false);
        }
        if self.plan.task_outputs[ti].is_empty() {
            let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
            self.net.schedule(at, Ev::Drained { task: t, id: b.id });
        }
    }

    pub(super) fn broadcast_cancel(&mut self, t: TaskId, id: CheckpointId, cause: CancelCause) {
        if self.plan.cfg.mutants.has(Mutant::SkipCancelMarker) {
            if !self.plan.task_outputs[t as usize].is_empty() {
                fired(Mutant::SkipCancelMarker);
            }
            return;
        }
        let ti = t as usize;
        self.tasks.list[ti].closed.insert(id);
        if !self.tasks.list[ti].cancel_sent.insert((id, cause))
            && !self.plan.task_outputs[ti].is_empty()
        {
            let name = self.plan.exec.tasks[ti].name.clone();
            self.violation(
                CheckId::Protocol,
                format!("task {name} sent a second cancellation marker for checkpoint {id} on each output"),
            );
        }
        for i in 0..self.plan.task_outputs[ti].len() {
            let ch = self.plan.task_outputs[ti][i];
            self.net.send_event(ch, Msg::Cancel(id), false);
            self.rec.counters.cancel_markers_sent += 1;
        }
    }

    /// The handler aborted a checkpoint: decline it and cancel downstream.
    pub(super) fn decline(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        self.decline_once(t, id, reason);
        if self.plan.cfg.mutants.has(Mutant::DeclineTwice) {
            // Mutant: the abort happens twice.
            fired(Mutant::DeclineTwice);
            self.decline_once(t, id, reason);
        }
    }

    pub(super) fn decline_once(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        if !self.tasks.list[t as usize].declined.insert(id) {
            let name = self.plan.exec.tasks[t as usize].name.clone();
            self.violation(
                CheckId::Protocol,
                format!("task {name} declined checkpoint {id} twice"),
            );
        }
        self.decline_rpc(t, id, reason);
        self.broadcast_cancel(t, id, CancelCause::Declined);
    }

    /// Task `t`'s decline of checkpoint `id` goes to the coordinator.
    pub(super) fn decline_rpc(&mut self, t: TaskId, id: CheckpointId, reason: AbortReason) {
        let at = self.net.now.plus(self.plan.scenario.checkpoint.rpc_latency);
        self.net.schedule(
            at,
            Ev::Decline {
                task: t,
                id,
                reason,
            },
        );
    }

    /// A barrier read from input `input` of task `t`: if it blocked its
    /// sender, the task owes that channel a resume, but only once its
    /// handler has taken the barrier (`Block` or `Unblock` of that input;
    /// Flink's `ChannelState.blockChannel`). Until then the channel is not
    /// among the ones an `UnblockAll` resumes: a newer barrier that subsumes
    /// the pending checkpoint first aborts it, resuming the channels of the
    /// older barriers only, and then blocks its own channel
    /// (`SingleCheckpointBarrierHandler.checkNewCheckpoint` runs before
    /// `barrierReceived`).
    pub(super) fn note_blocking_barrier(&mut self, t: TaskId, input: u32, id: CheckpointId) {
        let ch = self.plan.exec.tasks[t as usize].inputs[input as usize];
        self.tasks.barrier_read =
            (self.net.channels[ch as usize].blocked_for == Some(id)).then_some((t, input));
    }

    /// The handler blocked or released input `input` of task `t`: if the
    /// barrier just read there blocked its sender, the resume is owed now.
    fn take_blocking_barrier(&mut self, t: TaskId, input: u32) {
        if self.tasks.barrier_read == Some((t, input)) {
            self.tasks.barrier_read = None;
            self.tasks.list[t as usize].needs_resume[input as usize] = true;
        }
    }

    /// After the handler's actions for a barrier that blocked its sender:
    /// a handler that named neither `Block` nor `Unblock` for its input
    /// still leaves the sender waiting for a resume (the next `UnblockAll`).
    pub(super) fn settle_blocking_barrier(&mut self, t: TaskId) {
        if let Some((bt, input)) = self.tasks.barrier_read.take() {
            debug_assert_eq!(bt, t);
            self.tasks.list[bt as usize].needs_resume[input as usize] = true;
        }
    }

    /// Task `t` resumes consumption of input `input` if a barrier blocked
    /// its sender: the resume travels upstream (the channel's `latency_min`).
    fn resume_input(&mut self, t: TaskId, input: u32) {
        let slot = &mut self.tasks.list[t as usize].needs_resume[input as usize];
        if !std::mem::take(slot) {
            return;
        }
        let ch = self.plan.exec.tasks[t as usize].inputs[input as usize];
        let at = self
            .net
            .now
            .plus(SimDuration(self.net.channels[ch as usize].latency.0));
        self.net.schedule(at, Ev::ResumeConsumption { ch });
    }

    /// A resume reached the sender of `ch`: the channel sends again.
    /// Protocol: one resume per blocking barrier.
    pub(super) fn resume_consumption(&mut self, ch: ChannelId) {
        self.rec.counters.resumes += 1;
        if !self.net.resume(ch) {
            let msg = format!(
                "{} was resumed, but no barrier blocked it (a second resumeConsumption)",
                self.channel_name(ch)
            );
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
        pub const AlignedPriorityBarrier: Mutant = Mutant::declare(&MutantInfo {
            name: "aligned-priority-barrier",
            part: "aligned handler",
            what: "aligned barriers overtake queued output data",
            modelled_on: "FLINK-18252: aligned barriers sent as priority events",
            caught_by: "consistent-cut",
            applies: &[("alignment-crash", "aligned")],
        });
        pub const SkipCancelMarker: Mutant = Mutant::declare(&MutantInfo {
            name: "skip-cancel-marker",
            part: "cancellation and abort paths",
            what: "a task that aborts (or skips an aborted) checkpoint does not broadcast its cancellation marker",
            modelled_on: "FLINK-18238: no CancelCheckpointMarker for a checkpoint aborted by the JobManager",
            caught_by: "protocol",
            applies: &[("timeouts", "aligned")],
        });
        pub const ObsoleteBarrierNoResume: Mutant = Mutant::declare(&MutantInfo {
            name: "obsolete-barrier-no-resume",
            part: "producer-side blocking",
            what: "an obsolete aligned barrier is ignored without resuming the channel it blocked at the sender",
            modelled_on: "SingleCheckpointBarrierHandler: obsolete aligned barriers must still call resumeConsumption, since FLINK-16404 moved blocking to the producer",
            caught_by: "liveness",
            applies: &[("timeouts", "aligned")],
        });
        pub const AckBeforeChannelStateWritten: Mutant = Mutant::declare(&MutantInfo {
            name: "ack-before-channel-state-written",
            part: "channel-state writer",
            what: "with filesystem storage a task acknowledges once its operator state is written, while its channel-state write is still running; the coordinator completes a checkpoint whose channel state is not persisted",
            modelled_on: "the unaligned-checkpoint ack must wait for ChannelStateWriter to finish the input and output data (AsyncCheckpointRunnable waits for the channel state handles); acknowledging earlier completes a checkpoint whose in-flight data can still be lost",
            caught_by: "protocol",
            applies: &[("record-bytes", "unaligned")],
        });
        pub const AbortStopsNewerCapture: Mutant = Mutant::declare(&MutantInfo {
            name: "abort-stops-newer-capture",
            part: "abort notifications",
            what: "an abort notification that reaches a task after the next checkpoint's barrier stops that newer checkpoint's channel-state capture too",
            modelled_on: "ChannelStateWriter.abort(id) and the dispatcher's aborted-id bookkeeping: an abort must stop persisting for that id only (notifyCheckpointAborted can arrive after a newer barrier, since RPCs to different task managers overtake each other)",
            caught_by: "consistent-cut",
            applies: &[("abort-notifications", "unaligned")],
        });
        pub const UnalignedLateSnapshot: Mutant = Mutant::declare(&MutantInfo {
            name: "unaligned-late-snapshot",
            part: "unaligned capture",
            what: "an unaligned task processes a buffer between starting its channel capture and its snapshot",
            modelled_on: "FLINK-17564-style ordering bugs between channel-state capture and the operator snapshot",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "unaligned")],
        });
        pub const UnalignedDropInflight: Mutant = Mutant::declare(&MutantInfo {
            name: "unaligned-drop-inflight",
            part: "unaligned capture",
            what: "an unaligned task drops its recorded input channel state",
            modelled_on:
                "in-flight buffers missing from the channel state (persister state-machine bugs)",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "unaligned")],
        });
        pub const UnalignedAckAtFirstBarrier: Mutant = Mutant::declare(&MutantInfo {
            name: "unaligned-ack-at-first-barrier",
            part: "unaligned capture",
            what: "an unaligned task acknowledges at its first barrier, before its channel captures are closed",
            modelled_on: "completing the channel-state write before the last barrier (the async phase must wait for all barriers)",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "unaligned")],
        });
        pub const PriorityOnForcedEdge: Mutant = Mutant::declare(&MutantInfo {
            name: "priority-on-forced-edge",
            part: "unaligned capture",
            what:
                "unaligned barriers are sent over forward edges into a node Flink forces to align",
            modelled_on:
                "FLINK-36287 / FLINK-37870: unaligned checkpoints over edges inside sink topologies",
            caught_by: "consistent-cut",
            applies: &[("alignment-crash", "unaligned"), ("wordcount", "unaligned")],
        });
        pub const OutputTimeoutDropsOvertaken: Mutant = Mutant::declare(&MutantInfo {
            name: "output-timeout-drops-overtaken",
            part: "aligned-timeout switch",
            what: "the output-side timeout moves a queued barrier ahead of the data without recording that data as output channel state",
            modelled_on: "FLINK-27251: output buffers spilled at the alignment timeout",
            caught_by: "consistent-cut",
            applies: &[("backpressure", "aligned-timeout")],
        });
        pub const DeclineTwice: Mutant = Mutant::declare(&MutantInfo {
            name: "decline-twice",
            part: "cancellation and abort paths",
            what: "a task that aborts a checkpoint declines it and broadcasts its cancellation marker twice",
            modelled_on: "one checkpoint aborted twice in the task (abortInternal reached from a cancellation marker and again from a newer barrier or an abort notification)",
            caught_by: "protocol",
            applies: &[("timeouts", "aligned")],
        });
        pub const ChainNotifiesHeadOnly: Mutant = Mutant::declare(&MutantInfo {
            name: "chain-notifies-head-only",
            part: "operator chains",
            what: "a checkpoint-complete notification reaches only the head operator of a chained task, so a 2PC sink chained behind another operator never commits",
            modelled_on: "FLINK-23471 (an exception from one chained operator's notifyCheckpointComplete kept the operators after it from being notified); FLINK-2423's StreamCheckpointNotifierITCase checks that every chained operator is notified",
            caught_by: "exactly-once-output",
            applies: &[("chains", "aligned")],
        });
    }
}
