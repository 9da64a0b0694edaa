//! A task's step: restored input first, then priority events, then one
//! input chosen among the ready ones; records run through the operator and
//! out through the partitioner; sources poll; end of input.

use super::*;

impl World<'_> {
    // ------------------------------------------------------------ tasks

    /// Member `m` of task `t`'s chain, with its operator's context.
    pub(super) fn ctx_parts(&mut self, t: TaskId, m: usize) -> (&mut Member, Context<'_>) {
        let task = &mut self.tasks.list[t as usize];
        let (subtask, parallelism) = (task.subtask, task.parallelism);
        let member = &mut task.members[m];
        let watermark = member.watermark;
        let ctx = Context {
            subtask,
            parallelism,
            operator: member.index,
            max_parallelism: self.plan.scenario.max_parallelism,
            attempt: self.net.attempt,
            now: self.net.now,
            restored: None,
            watermark,
            store: &mut self.tasks.store,
            out: &mut self.tasks.out,
            late: &mut self.tasks.late,
            fired: &mut self.tasks.fired,
            mutants: self.plan.cfg.mutants,
        };
        (member, ctx)
    }

    /// Task `t`'s thread takes its next step: a source polls; any other
    /// task reads its restored channel state first, then priority events,
    /// then one input chosen among the ready ones, until it reads a buffer
    /// (which keeps it busy) or nothing is ready.
    pub(super) fn wake(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].flush_blocked.is_some() {
            self.block_returned(t);
        }
        let synced = self.tasks.list[ti].sync_until;
        if synced > SimTime::ZERO && synced <= self.net.now {
            // A snapshot's blocked call returned: its acknowledgement leaves.
            self.tasks.list[ti].sync_until = SimTime::ZERO;
            if self.tasks.list[ti].status == Status::Running {
                self.maybe_ack(t);
            }
        }
        let Some(mails_wait) = self.may_step(t) else {
            return;
        };
        self.step_starts(t);
        self.judge_processing_timers(t);
        self.step(t);
        self.timers_registered(t);
        if mails_wait {
            self.mails_after_step(t);
        }
    }

    /// The step itself, once [`may_step`](Self::may_step) allowed it.
    fn step(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].is_source {
            self.source_step(t);
            return;
        }
        if self.net.sched[ti].full_outputs > 0 {
            // Backpressured: only priority events (unaligned barriers) get
            // through, in the loop below.
        } else if let Some(input) = self.recovered_first(ti) {
            // Restored input channel state goes first (Flink's
            // RecoveredInputChannel), before anything on the real channels.
            let ch = self.plan.exec.tasks[ti].inputs[input as usize];
            let buf = self
                .net
                .take_recovered(ch, usize::MAX)
                .expect("has buffers");
            self.read_recovered(t, input, buf);
            return;
        }
        while let Some(pick) = self.next_input(t) {
            if !self.read_input(t, pick) || self.tasks.list[ti].status != Status::Running {
                return;
            }
        }
    }

    /// Whether task `t` may take a step now: it runs, its last step is
    /// over, no crash point fired, and it is not backpressured (unless a
    /// priority event waits). Counts a backpressure stall. `Some(true)`:
    /// the mails queued wait until after the step (a choice only under
    /// `explore --mail-orders`, `World::mails_wait_a_step`).
    fn may_step(&mut self, t: TaskId) -> Option<bool> {
        let ti = t as usize;
        self.net.sched[ti].wake_pending = false;
        if self.tasks.list[ti].status != Status::Running {
            return None;
        }
        if self.net.sched[ti].busy_until > self.net.now {
            // Woken early (an output drained while the task was still busy
            // with its last step): come back when the step is over.
            self.net.poke(t);
            return None;
        }
        if self.faults.first_crash_point < self.faults.crash_plan.len() && self.crash_point(t) {
            return None;
        }
        // Between two default actions the thread runs its mails, also while
        // the default action is suspended by backpressure.
        let mails_wait = !self.tasks.list[ti].mailbox.is_empty() && self.mails_wait_a_step(t);
        if !mails_wait && !self.tasks.list[ti].mailbox.is_empty() {
            self.run_mails_before_step(t);
            if self.tasks.list[ti].status != Status::Running {
                return None;
            }
        }
        if self.net.sched[ti].full_outputs > 0 && !self.priority_input(ti) {
            self.rec.counters.backpressure_stalls += 1;
            return None;
        }
        Some(mails_wait)
    }

    /// The input task `t` reads next: a priority event first (Flink
    /// processes them eagerly), else one of the ready inputs as the
    /// scheduler picks; `None` when backpressured or nothing is ready (then
    /// the task is idle).
    fn next_input(&mut self, t: TaskId) -> Option<u32> {
        let ti = t as usize;
        if let Some(p) = self.first_priority(ti) {
            return Some(p);
        }
        if self.net.sched[ti].full_outputs > 0 {
            return None;
        }
        self.tasks.ready.clear();
        let blocked = &self.tasks.list[ti].blocked;
        let inputs = &self.plan.exec.tasks[ti].inputs;
        let oldest =
            self.net
                .oldest_ready(ti, inputs, readable(self.net.blocking_barriers, blocked));
        if let Some(oldest) = oldest {
            // Flink's input order: the pick `scheduler::Fifo` makes among
            // every ready input, found by age.
            if oldest.is_none() {
                self.loop_idle(t);
            }
            return oldest;
        }
        let readable = readable(self.net.blocking_barriers, &self.tasks.list[ti].blocked);
        let inputs = &self.plan.exec.tasks[ti].inputs;
        self.net
            .ready_inputs(ti, inputs, readable, &mut self.tasks.ready);
        match self.tasks.ready.len() {
            0 => {
                self.loop_idle(t);
                None
            }
            1 => Some(self.tasks.ready[0]),
            _ => {
                self.tasks.since.clear();
                for &i in &self.tasks.ready {
                    let ch = inputs[i as usize];
                    self.tasks.since.push(self.net.channels[ch as usize].avail);
                }
                Some(self.tasks.scheduler.pick(
                    t,
                    &self.tasks.ready,
                    &self.tasks.since,
                    &mut self.tasks.sched_rng,
                ))
            }
        }
    }

    /// Task `t` reads the head of its input `pick`: a buffer (restored or
    /// not) ends the step (`false`); an event (barrier, cancel, end of
    /// data) is handled and the step goes on (`true`).
    fn read_input(&mut self, t: TaskId, pick: u32) -> bool {
        let ti = t as usize;
        let ch = self.plan.exec.tasks[ti].inputs[pick as usize];
        let step = self.tasks.list[ti].step_records;
        if self.net.has_recovered(ch) && !self.net.has_priority(ch) && !self.new_data_first(ch) {
            // Checkpointing during recovery: the channel's restored
            // buffers are its head.
            let buf = self.net.take_recovered(ch, step).expect("has buffers");
            self.read_recovered(t, pick, buf);
            return false;
        }
        let msg = self
            .net
            .take_input(ch, step)
            .expect("ready channel has input");
        match msg {
            Msg::Data { buf, pb, .. } => {
                if let Some(pb) = pb {
                    self.local_read(t, ch, buf.len() as u64, &pb);
                }
                self.read_data(t, pick, ch, buf);
                return false;
            }
            Msg::Barrier(b) => self.read_barrier(t, pick, ch, b),
            Msg::Cancel(id) => {
                self.mark(|| Timeline::CancelRead { task: t, ch, id });
                let mut actions = std::mem::take(&mut self.tasks.actions);
                self.tasks.list[ti]
                    .handler
                    .on_cancel(pick, id, &mut actions);
                self.apply_actions(t, &mut actions);
                self.tasks.actions = actions;
            }
            Msg::EndOfData { drain } => {
                self.read_end_of_data(t, pick, drain);
                self.end_of_data_consumed(ch);
            }
            Msg::EndOfPartition => self.read_end_of_partition(t, pick),
        }
        true
    }

    /// A buffer of records through task `t`'s chain; records replayed from
    /// in-flight state are counted against what recovery still owes.
    fn read_data(&mut self, t: TaskId, pick: u32, ch: ChannelId, buf: Vec<Record>) {
        self.judge_rerun(t);
        // After a drained end of data the operators have finished, and
        // what still comes is dropped; a stopped one (no drain) reads on,
        // as Flink's input processor only swaps in `FinishedDataOutput`
        // for `END_OF_DATA`, not for `STOPPED`.
        let task = &self.tasks.list[t as usize];
        if task.input_ended && !task.eod_stopped && !self.is_feedback(ch) {
            return self.drop_after_end_of_data(t, ch, buf);
        }
        let n = self.read_buffer(t, pick, buf);
        let left = &mut self.recovery.out_left[ch as usize];
        let mut replayed = 0; // trace
        if *left > 0 {
            let k = n.min(*left);
            *left -= k;
            self.recovery.pending -= k;
            self.rec.counters.in_flight_records_replayed += k;
            replayed = k;
        }
        self.busy(t, n, replayed);
    }

    /// A barrier read from channel `ch`, handed to the task's barrier
    /// handler, whose actions the World carries out.
    fn read_barrier(&mut self, t: TaskId, pick: u32, ch: ChannelId, b: Barrier) {
        self.mark(|| Timeline::BarrierRead {
            task: t,
            ch,
            id: b.id,
            kind: b.kind,
        });
        self.note_blocking_barrier(t, pick, b.id);
        let mut actions = std::mem::take(&mut self.tasks.actions);
        let now = self.net.now;
        self.tasks.list[t as usize]
            .handler
            .on_barrier(pick, b, now, &mut actions);
        self.apply_actions(t, &mut actions);
        self.tasks.actions = actions;
        self.settle_blocking_barrier(t);
        self.barrier_taken(t, pick, b);
    }

    /// End of data on input `pick`; the last one ends the task's input,
    /// drained if every input's was (Flink's `EndOfDataStatus.DRAINED`,
    /// otherwise `STOPPED`).
    fn read_end_of_data(&mut self, t: TaskId, pick: u32, drain: bool) {
        let task = &mut self.tasks.list[t as usize];
        if !task.eod[pick as usize] {
            task.eod[pick as usize] = true;
            task.eod_remaining -= 1;
            task.eod_stopped |= !drain;
            if task.eod_remaining == 0 {
                let drain = !task.eod_stopped;
                self.end_data(t, drain);
            }
        }
    }

    /// Hands announced timeoutable barriers to their receivers' handlers.
    pub(super) fn announce(&mut self) {
        let announced = std::mem::take(&mut self.net.announced);
        for &(ch, b) in &announced {
            let c = &self.plan.exec.channels[ch as usize];
            let (t, input) = (c.to, c.input_index);
            if self.tasks.list[t as usize].status != Status::Running {
                continue;
            }
            let mut actions = std::mem::take(&mut self.tasks.actions);
            let now = self.net.now;
            self.tasks.list[t as usize]
                .handler
                .on_announcement(input, b, now, &mut actions);
            self.apply_actions(t, &mut actions);
            self.tasks.actions = actions;
            self.net.poke(t);
        }
        let mut announced = announced;
        announced.clear();
        if self.net.announced.is_empty() {
            self.net.announced = announced;
        }
    }

    /// A priority event waits on an unblocked input of a non-source task.
    pub(super) fn priority_input(&mut self, ti: usize) -> bool {
        !self.tasks.list[ti].is_source && self.first_priority(ti).is_some()
    }

    /// The first input of task `ti` it may read whose head is a priority
    /// event.
    fn first_priority(&mut self, ti: usize) -> Option<u32> {
        let readable = readable(self.net.blocking_barriers, &self.tasks.list[ti].blocked);
        self.net
            .priority_input(ti, &self.plan.exec.tasks[ti].inputs, readable)
    }

    /// Without checkpointing during recovery: the input whose restored
    /// buffers the task reads next, before anything else.
    fn recovered_first(&mut self, ti: usize) -> Option<u32> {
        if self.net.during_recovery {
            return None;
        }
        while let Some(&input) = self.tasks.list[ti].recovery_order.front() {
            let ch = self.plan.exec.tasks[ti].inputs[input as usize];
            if self.net.has_recovered(ch) {
                return Some(input);
            }
            self.tasks.list[ti].recovery_order.pop_front();
        }
        None
    }

    /// Task `t` reads a buffer from input `input`: every record through the
    /// operator, the buffer back to the pool. Returns its records.
    #[inline]
    fn read_buffer(&mut self, t: TaskId, input: u32, buf: Vec<Record>) -> u64 {
        let n = buf.len() as u64;
        let head = self.tasks.list[t as usize].members[0].inst;
        self.rec.schedule.read(head, input, n, self.net.now);
        let from = self.plan.exec.channels
            [self.plan.exec.tasks[t as usize].inputs[input as usize] as usize]
            .from_op
            .0;
        let mut watermarks = 0;
        for &r in &buf {
            if self.plan.time.on && r.is_element() {
                watermarks += 1;
                self.input_element(t, input, &r);
                continue;
            }
            self.process_record(t, from, r);
        }
        if self.plan.time.on && n > watermarks {
            self.watch_watermark(t);
        }
        self.net.recycle(buf);
        self.rec.counters.records_processed += n - watermarks;
        if self.plan.committers[t as usize].is_some_and(|(m, _)| m == 0) {
            self.rec.counters.committables_through_network += n - watermarks;
        }
        n
    }

    /// Task `t` reads restored records from input `input`.
    fn read_recovered(&mut self, t: TaskId, input: u32, buf: Vec<Record>) {
        self.crash_trigger(TriggerEvent::Replay, Some(t), 0);
        let n = self.read_buffer(t, input, buf);
        self.rec.counters.in_flight_records_replayed += n;
        self.recovery.pending -= n;
        self.busy(t, n, n);
    }

    /// The task is busy processing `n` records from now (`replayed` of them
    /// restored in-flight records, for the trace).
    pub(super) fn busy(&mut self, t: TaskId, n: u64, replayed: u64) {
        let task = &self.tasks.list[t as usize];
        let chained = std::mem::take(&mut self.tasks.chain_cost);
        let mut cost = task.cost.saturating_mul(n).saturating_add(chained);
        if task.jitter > 0 {
            cost = cost.saturating_add(self.tasks.sched_rng.below(task.jitter.saturating_add(1)));
        }
        let head_sink = task.members[0].is_sink;
        let cost = self.straggle(t, cost);
        if head_sink {
            self.tasks.sink_records += n;
        }
        let s = &mut self.net.sched[t as usize];
        s.busy_until = self.net.now.plus(SimDuration(cost));
        let until_ns = s.busy_until.0;
        self.sink_took(SimTime(until_ns));
        self.net.poke(t);
        self.mark(|| Timeline::Step {
            task: t,
            records: n,
            replayed,
            until_ns,
        });
    }

    /// Records reached sink operators (`sink_records`): counted, taken in
    /// by `until`.
    pub(super) fn sink_took(&mut self, until: SimTime) {
        let n = std::mem::take(&mut self.tasks.sink_records);
        if n > 0 {
            self.rec.counters.sink_records_in += n;
            self.rec.sink_end = self.rec.sink_end.max(until);
        }
    }

    pub(super) fn process_record(&mut self, t: TaskId, from: u32, r: Record) {
        if self.tasks.list[t as usize].check_routing {
            self.check_routing(t, r.key);
        }
        let (member, mut ctx) = self.ctx_parts(t, 0);
        member.op.process_from(from, r, &mut ctx);
        self.received_by(t, 0, &r);
        self.emit_from(t, 0);
    }

    /// Mutant `new-data-before-recovered`: the channel's new data is read
    /// before its restored buffers.
    fn new_data_first(&self, ch: ChannelId) -> bool {
        let on = self.plan.cfg.mutants.has(Mutant::NewDataBeforeRecovered)
            && matches!(
                self.net.channels[ch as usize].in_queue.front(),
                Some(Msg::Data { .. })
            );
        if on {
            fired(Mutant::NewDataBeforeRecovered);
        }
        on
    }

    /// Member `m` of task `t` processed `r`: a committer's committable is
    /// noted in the commit ledger (`commits.rs`).
    #[inline]
    fn received_by(&mut self, t: TaskId, m: usize, r: &Record) {
        self.note_fired(t, m); // a timer fired while processing a record
        if !self.tasks.late.is_empty() {
            self.route_late(t, m);
        }
        if let Some((c, writer)) = self.plan.committers[t as usize] {
            debug_assert!(!r.is_element());
            if c == m {
                self.note_committable(t, writer, r);
            }
        }
    }

    /// What member `m` of task `t` emitted (in `out`): each record through
    /// the members chained after it, one record at a time as Flink's
    /// chained outputs push it, then out on `m`'s own edges. Flink's
    /// chained outputs recurse, one call per member; here an explicit stack
    /// of [`ChainFrame`]s does the same steps in the same order, so that a
    /// chain of any length runs in constant native stack.
    pub(super) fn emit_from(&mut self, t: TaskId, m: usize) {
        if self.emit_into_last(t, m) {
            return;
        }
        let mut stack = std::mem::take(&mut self.tasks.chain_stack);
        self.enter_chain(t, m, &mut stack);
        while let Some(f) = stack.last_mut() {
            let successors = &self.plan.exec.tasks[t as usize].chained[f.member];
            if f.next_successor == successors.len() {
                // Every successor took the batch: it leaves on `member`'s
                // own edges.
                let f = stack.pop().expect("a frame is on the stack");
                let spare = std::mem::replace(&mut self.tasks.out, f.batch);
                self.tasks.chain_bufs.push(spare);
                self.route_out(t, f.member);
                continue;
            }
            let c = successors[f.next_successor] as usize;
            if f.next_record == 0 {
                let n = f.batch.len() as u64;
                self.fed(t, c, n);
            }
            let f = stack.last_mut().expect("a frame is on the stack");
            let r = f.batch[f.next_record];
            f.next_record += 1;
            if f.next_record == f.batch.len() {
                f.next_successor += 1;
                f.next_record = 0;
            }
            self.chained_takes(t, c, r);
            self.enter_chain(t, c, &mut stack);
        }
        self.tasks.chain_stack = stack;
    }

    /// [`World::emit_from`] when `m`'s only chained successor is the last
    /// of its chain (a keyed count chained with its sink): the same steps
    /// in the same order without a frame per batch. False if that is not
    /// the case or `m` emitted nothing.
    fn emit_into_last(&mut self, t: TaskId, m: usize) -> bool {
        let chained = &self.plan.exec.tasks[t as usize].chained;
        let c = match chained[m][..] {
            [c] if chained[c as usize].is_empty() => c as usize,
            _ => return false,
        };
        if self.tasks.out.is_empty() {
            return false;
        }
        let spare = self.tasks.chain_bufs.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.tasks.out, spare);
        self.fed(t, c, batch.len() as u64);
        for &r in &batch {
            self.chained_takes(t, c, r);
            if !self.tasks.out.is_empty() {
                self.route_out(t, c);
            }
        }
        // Every record went through `c`: the batch leaves on `m`'s own
        // edges.
        let spare = std::mem::replace(&mut self.tasks.out, batch);
        self.tasks.chain_bufs.push(spare);
        self.route_out(t, m);
        true
    }

    /// Member `c` of task `t` takes `r` from the member chained before it.
    #[inline]
    fn chained_takes(&mut self, t: TaskId, c: usize, r: Record) {
        if let Some(e) = r.element().filter(|_| self.plan.time.on) {
            // The member before forwarded its watermark, or its status (the
            // chain shares one: it goes on as it is).
            match e {
                crate::model::Element::Watermark(w) => self.emit_watermark(t, c, w),
                crate::model::Element::Status { .. } => self.tasks.out.push(r),
            }
        } else {
            let (member, mut ctx) = self.ctx_parts(t, c);
            member.op.process(r, &mut ctx);
            self.received_by(t, c, &r);
        }
    }

    /// Member `m` of task `t` emitted what `out` holds: nothing to do if
    /// empty; out on its edges if nothing is chained after it; otherwise a
    /// frame that pushes it through its successors.
    fn enter_chain(&mut self, t: TaskId, m: usize, stack: &mut Vec<ChainFrame>) {
        if self.tasks.out.is_empty() {
            return;
        }
        if self.plan.exec.tasks[t as usize].chained[m].is_empty() {
            self.route_out(t, m);
            return;
        }
        let spare = self.tasks.chain_bufs.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.tasks.out, spare);
        stack.push(ChainFrame {
            member: m,
            batch,
            next_successor: 0,
            next_record: 0,
        });
    }

    /// Member `c` of task `t` is about to process `n` records from the
    /// member before it: their cost, and its schedule (one read step).
    fn fed(&mut self, t: TaskId, c: usize, n: u64) {
        let member = &self.tasks.list[t as usize].members[c];
        self.tasks.chain_cost = self
            .tasks
            .chain_cost
            .saturating_add(member.cost.saturating_mul(n));
        self.tasks.sink_records += n * u64::from(member.is_sink);
        self.rec.schedule.read(member.inst, 0, n, self.net.now);
        self.rec.counters.chained_records += n;
    }

    /// Routing: notes a keyed record that reached a subtask not owning its
    /// key group at the current parallelism (after a rescale too), for the
    /// routing check.
    pub(super) fn check_routing(&mut self, t: TaskId, key: u64) {
        self.rec.counters.records_routing_checked += 1;
        let task = &self.tasks.list[t as usize];
        let kg = crate::model::record::key_group(key, self.plan.scenario.max_parallelism);
        if kg < task.key_groups.0 || kg >= task.key_groups.1 {
            let time_ns = self.net.now.0;
            let (owned, parallelism) = (task.key_groups, task.parallelism);
            self.rec.evidence.misrouted.note(|| MisroutedRead {
                time_ns,
                task: t,
                key,
                owned,
                parallelism,
            });
        }
    }

    /// Routes what member `m` emitted to its output channels: records on
    /// its edges but for its late-data side outputs, stream elements on
    /// every edge.
    fn route_out(&mut self, t: TaskId, m: usize) {
        debug_assert!(
            self.tasks.late.is_empty(),
            "late records leave after `process`"
        );
        if self.tasks.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.tasks.out);
        let max_p = self.plan.scenario.max_parallelism;
        let outputs: &[OutputEdge] = &self.plan.exec.tasks[t as usize].outputs;
        for (e, edge) in outputs.iter().enumerate() {
            if edge.member as usize != m {
                continue;
            }
            for &r in &out {
                if self.plan.time.on && r.is_element() {
                    // Every channel, whatever the partitioning
                    // (`RecordWriterOutput.emitWatermark` broadcasts).
                    for &ch in &edge.channels {
                        if !self.is_feedback(ch) {
                            self.net.emit(ch, r);
                        }
                    }
                } else if !edge.late {
                    let rr = &mut self.tasks.list[t as usize].rr[e];
                    partition(&mut self.net, rr, edge, r, max_p);
                }
            }
        }
        out.clear();
        self.tasks.out = out;
    }

    /// Routes the late records member `m` just emitted onto its late-data
    /// side outputs; without one they are dropped (Flink's
    /// `numLateRecordsDropped`).
    fn route_late(&mut self, t: TaskId, m: usize) {
        let late = std::mem::take(&mut self.tasks.late);
        let max_p = self.plan.scenario.max_parallelism;
        let outputs: &[OutputEdge] = &self.plan.exec.tasks[t as usize].outputs;
        let mut routed = false;
        for (e, edge) in outputs.iter().enumerate() {
            if edge.member as usize != m || !edge.late {
                continue;
            }
            routed = true;
            for &r in &late {
                let rr = &mut self.tasks.list[t as usize].rr[e];
                partition(&mut self.net, rr, edge, r, max_p);
            }
        }
        let n = late.len() as u64;
        match routed {
            true => self.rec.counters.late_records_side_output += n,
            false => self.rec.counters.late_records_dropped += n,
        }
        self.tasks.late = late;
        self.tasks.late.clear();
    }

    /// How many records a source emits per step: one buffer's worth
    /// (`buffer_records`, or as many of its records as fit in
    /// `buffer_size`, by their mean size), of its smallest output buffers.
    fn poll_batch(&self, t: TaskId) -> usize {
        let outputs = &self.plan.task_outputs[t as usize];
        let channels = outputs.iter().map(|&ch| &self.net.channels[ch as usize]);
        let (n, bytes) = match outputs.is_empty() {
            true => (self.net.buffer_records, self.net.buffer_bytes),
            false => channels.fold((usize::MAX, u64::MAX), |(n, b), c| {
                (n.min(c.buffer_records), b.min(c.buffer_bytes))
            }),
        };
        if bytes == u64::MAX {
            return n;
        }
        let op = self.plan.exec.tasks[t as usize].operator;
        let mean = self.plan.scenario.op(op).kind.mean_record_bytes();
        let fit = bytes / mean.max(1);
        n.min(usize::try_from(fit).unwrap_or(usize::MAX)).max(1)
    }

    pub(super) fn source_step(&mut self, t: TaskId) {
        let ti = t as usize;
        if self.tasks.list[ti].input_ended
            || self.tasks.list[ti].paused.is_some()
            || self.tasks.list[ti].stopped
            || self.waiting_for_alignment(t)
        {
            return;
        }
        self.judge_rerun(t);
        // A buffer's worth, or what the chain processes in one step.
        let batch = self.poll_batch(t).min(self.tasks.list[ti].step_records);
        let poll = {
            let (member, mut ctx) = self.ctx_parts(t, 0);
            member.op.poll_source(batch, &mut ctx)
        };
        match poll {
            SourcePoll::Emitted(n) => {
                let merge = !self.plan.rated_sources;
                let inst = self.tasks.list[ti].members[0].inst;
                self.rec
                    .schedule
                    .emit(inst, n as u64, self.net.now.0, merge);
                // A log source's records carry the lineage they were
                // written with: the input's high water is its sources'.
                let op = self.plan.exec.tasks[ti].operator;
                let input = match self.plan.scenario.op(op).kind.reads_input() {
                    true => self.tasks.out.len(),
                    false => 0,
                };
                for i in 0..input {
                    let l = self.tasks.out[i].lineage;
                    if l.partition as usize >= self.tasks.high_water.len() {
                        self.bad_lineage(t, l);
                        continue;
                    }
                    let hw = &mut self.tasks.high_water[l.partition as usize];
                    if l.offset < *hw {
                        self.rec.counters.records_replayed += 1;
                    } else {
                        *hw = l.offset + 1;
                    }
                    self.recovery_emitted(t, l.partition, l.offset);
                }
                self.rec.counters.records_emitted += n as u64;
                self.source_records_timed(t);
                self.emit_from(t, 0);
                self.busy(t, n as u64, 0);
            }
            // A reader waiting for a split: its request goes out, and the
            // event that answers it wakes the task.
            SourcePoll::Idle => self.tasks.out.clear(),
            // Its partitions' next records are there only later (a rate).
            SourcePoll::IdleUntil(_) if self.plan.cfg.mutants.has(Mutant::IdleSourceEndsInput) => {
                fired(Mutant::IdleSourceEndsInput);
                self.tasks.out.clear();
                self.recovery_source_exhausted(t);
                self.end_of_input(t)
            }
            SourcePoll::IdleUntil(at) => {
                self.tasks.out.clear();
                self.net.wake_at(t, at);
            }
            SourcePoll::Exhausted | SourcePoll::NotASource => {
                self.recovery_source_exhausted(t);
                self.end_of_input(t)
            }
        }
        if self.ops.coordinated(t) {
            self.reader_events(t);
        }
        self.deferred_emit(t);
    }

    /// A source emitted a record whose lineage names a partition the input
    /// does not have (a bug of a user's source).
    #[cold]
    pub(super) fn bad_lineage(&mut self, t: TaskId, l: crate::model::Lineage) {
        if self
            .rec
            .evidence
            .violations
            .iter()
            .filter(|v| v.check == CheckId::Protocol)
            .count()
            < 5
        {
            let name = self.plan.exec.tasks[t as usize].name.clone();
            self.violation(
                CheckId::Protocol,
                format!(
                    "source {name} emitted a record of partition {} (offset {}), which the input does not have",
                    l.partition, l.offset
                ),
            );
        }
    }

    pub(super) fn flush(&mut self, t: TaskId) {
        self.net.sched[t as usize].flush_pending = false;
        if self.tasks.list[t as usize].status != Status::Running {
            return;
        }
        for i in 0..self.plan.task_outputs[t as usize].len() {
            let ch = self.plan.task_outputs[t as usize][i];
            self.net.ship_partial(ch);
        }
    }

    /// Each chain's tasks with the state of the latest completed checkpoint
    /// per operator.
    pub(super) fn task_reports(&self) -> Vec<TaskReport> {
        let latest = self.coord.latest();
        let mut reports: Vec<TaskReport> = Vec::new();
        for (t, info) in self.plan.exec.tasks.iter().enumerate() {
            if info.subtask == 0 {
                let ops = info
                    .chain
                    .iter()
                    .map(|&o| self.plan.scenario.op(o).id.clone());
                reports.push(TaskReport {
                    name: ops.clone().collect::<Vec<_>>().join("->"),
                    subtasks: 0,
                    operators: ops.collect(),
                    state_bytes: vec![0; info.chain.len()],
                });
            }
            let Some(r) = reports.last_mut() else {
                continue;
            };
            r.subtasks += 1;
            let snap = latest
                .as_ref()
                .and_then(|c| c.states.get(t))
                .and_then(Option::as_ref);
            for (m, bytes) in snap.iter().flat_map(|s| s.states.iter().enumerate()) {
                if let Some(b) = r.state_bytes.get_mut(m) {
                    *b += bytes.len() as u64;
                }
            }
        }
        reports
    }
}

/// Whether a task may read its input `i`, given its blocked inputs. Where
/// barriers block their senders (Flink since FLINK-16404, `blocking`) the
/// receiver's blocked set is bookkeeping: nothing arrives behind a blocking
/// barrier, and what arrived before it is read.
fn readable(blocking: bool, blocked: &[bool]) -> impl Fn(usize) -> bool + '_ {
    move |i| blocking || !blocked[i]
}

/// The mutants that break this file's code, declared next to it (the
/// registry, [`crate::mutant::MUTANTS`], lists each once).
mod mutants {
    use crate::mutant::{Mutant, MutantInfo};

    #[allow(non_upper_case_globals)]
    impl Mutant {
        pub const IdleSourceEndsInput: Mutant = Mutant::declare(&MutantInfo {
            name: "idle-source-ends-input",
            part: "partition rates",
            what: "a source whose partitions have no record there yet (a rate) reports the end of its input instead of waiting: the records still to come are never read",
            modelled_on: "the SourceReader contract: pollNext returns NOTHING_AVAILABLE and completes isAvailable() when data arrives, END_OF_INPUT only when nothing will ever come; a reader that returns END_OF_INPUT for a momentarily empty split finishes early",
            caught_by: "exactly-once-output",
            applies: &[("uneven", "aligned")],
        });
        pub const NewDataBeforeRecovered: Mutant = Mutant::declare(&MutantInfo {
            name: "new-data-before-recovered",
            part: "recovered input channels",
            what: "while a channel's restored in-flight buffers are replayed, a new buffer that arrived on the same channel is read before them",
            modelled_on: "recovered input channels handing over to the live channel too early (the RecoveredInputChannel → RemoteInputChannel conversion racing with restored buffers), which reorders a channel after an unaligned restore",
            caught_by: "channel-order",
            applies: &[("recovery-checkpoints", "unaligned")],
        });
    }
}

/// Sends record `r` down `edge` by its partitioning (`rr`: the edge's
/// round-robin position).
fn partition(net: &mut Net, rr: &mut u32, edge: &OutputEdge, r: Record, max_p: u32) {
    match edge.partitioning {
        Partitioning::Forward => net.emit(edge.channels[0], r),
        Partitioning::Hash => {
            let p = edge.channels.len() as u32;
            let s = subtask_for_key(r.key, p, max_p);
            net.emit(edge.channels[s as usize], r);
        }
        Partitioning::Rebalance => {
            let s = *rr as usize % edge.channels.len();
            *rr = rr.wrapping_add(1);
            net.emit(edge.channels[s], r);
        }
        Partitioning::Broadcast => {
            for &ch in &edge.channels {
                net.emit(ch, r);
            }
        }
    }
}
