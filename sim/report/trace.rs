//! Traces of one run, for people who want to see what happened when:
//!
//! - [`write_jsonl`]: every processed event, one JSON object per line, with
//!   its virtual time and named fields (task and channel names, checkpoint
//!   ids, reasons).
//! - [`write_perfetto`]: a timeline in Chrome's trace-event format (JSON), in
//!   virtual microseconds, for <https://ui.perfetto.dev> or `chrome://tracing`:
//!   one track per subtask (its steps, barriers, crash and recovery), one
//!   per subtask for its checkpoint work (alignments, snapshots until their
//!   ack arrives), and one for the coordinator (one span per checkpoint,
//!   recoveries).
//!
//! Both need a run made with `RunConfig::record_trace`; the world then keeps
//! the event list (`RunOutput::trace`) and the timeline facts the event list
//! does not show (`RunOutput::timeline`). Recording changes nothing in the
//! run. The files are pure functions of the scenario and the run: the same
//! seed writes the same bytes. The formats are described in `docs/traces.md`.

use crate::engine::SimDuration;
use crate::model::{ChannelId, CheckpointId, ExecGraph, JobGraph, TaskId};
use crate::protocol::{AbortReason, BarrierKind};
use crate::runtime::coordinator::Outcome as CpOutcome;
use crate::runtime::event::Ev;
use crate::runtime::{RunOutcome, RunOutput};
use crate::runtime::{Timeline, TraceEntry};
use crate::scenario::Scenario;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

mod chrome;
use chrome::{assign_tracks, write_chrome_json};

/// Writes every processed event of the run as one JSON object per line:
/// `index`, `time_ns`, `attempt`, `event`, then the event's own fields by
/// name (`task`, `channel`, `checkpoint`, …; see `docs/traces.md`).
pub fn write_jsonl(scenario: &Scenario, output: &RunOutput, w: &mut dyn Write) -> io::Result<()> {
    require_trace(output)?;
    let names = Names::new(scenario, output)?;
    let mut w = BufWriter::new(w);
    for e in &output.trace {
        let line = jsonl_line(&names, e)?;
        serde_json::to_writer(&mut w, &line)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// Writes the run as a Chrome trace-event JSON object (`traceEvents`,
/// `displayTimeUnit`, `otherData`), timestamps in virtual microseconds.
pub fn write_perfetto(
    scenario: &Scenario,
    output: &RunOutput,
    w: &mut dyn Write,
) -> io::Result<()> {
    require_trace(output)?;
    let names = Names::new(scenario, output)?;
    let mut b = Timelines::new(&names, output);
    b.build()?;
    let tracks = assign_tracks(&names, &mut b.spans);
    let mut w = BufWriter::new(w);
    write_chrome_json(scenario, output, &b, &tracks, &mut w)?;
    w.flush()
}

fn require_trace(output: &RunOutput) -> io::Result<()> {
    if output.config.record_trace {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "this run recorded no trace: run it with `RunConfig { record_trace: true, .. }` \
             to write a trace",
        ))
    }
}

fn mismatch(what: &str, id: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("the run refers to {what} {id}, which the scenario does not have: was the run made from this scenario?"),
    )
}

// ------------------------------------------------------------ names

/// Task and channel names of the scenario's execution graph.
struct Names {
    tasks: Vec<String>,
    /// `"from -> to"`, by channel id.
    channels: Vec<String>,
    is_source: Vec<bool>,
    /// The crash plan's targets, by crash index.
    crash_tasks: Vec<TaskId>,
}

impl Names {
    fn new(scenario: &Scenario, output: &RunOutput) -> io::Result<Names> {
        let exec = ExecGraph::build(scenario, &JobGraph::build(scenario));
        let tasks: Vec<String> = exec.tasks.iter().map(|t| t.name.clone()).collect();
        let channels = exec
            .channels
            .iter()
            .map(|c| format!("{} -> {}", tasks[c.from as usize], tasks[c.to as usize]))
            .collect();
        let is_source = exec
            .tasks
            .iter()
            .map(|t| scenario.op(t.operator).kind.is_source())
            .collect();
        let mut crash_tasks = Vec::new();
        for c in &output.crash_plan {
            let op = c.operator.0 as usize;
            if op >= exec.first_task.len() || c.subtask >= scenario.operators[op].parallelism {
                return Err(mismatch("crash target operator", op as u64));
            }
            crash_tasks.push(exec.task_of(c.operator, c.subtask));
        }
        Ok(Names {
            tasks,
            channels,
            is_source,
            crash_tasks,
        })
    }

    fn task(&self, t: TaskId) -> io::Result<&str> {
        self.tasks
            .get(t as usize)
            .map(String::as_str)
            .ok_or_else(|| mismatch("task", t.into()))
    }

    fn channel(&self, ch: ChannelId) -> io::Result<&str> {
        self.channels
            .get(ch as usize)
            .map(String::as_str)
            .ok_or_else(|| mismatch("channel", ch.into()))
    }
}

fn kind_name(k: BarrierKind) -> &'static str {
    match k {
        BarrierKind::Aligned => "aligned",
        BarrierKind::Timeoutable => "timeoutable",
        BarrierKind::Unaligned => "unaligned",
    }
}

fn reason_name(r: AbortReason) -> &'static str {
    match r {
        AbortReason::Subsumed => "subsumed",
        AbortReason::CancellationMarker => "cancellation-marker",
        AbortReason::TaskFinished => "task-finished",
    }
}

fn outcome_name(o: CpOutcome) -> &'static str {
    match o {
        CpOutcome::Completed => "completed",
        CpOutcome::Expired => "expired",
        CpOutcome::Declined => "declined",
        CpOutcome::Subsumed => "subsumed",
        CpOutcome::Failover => "failover",
        CpOutcome::Cancelled => "cancelled",
        CpOutcome::StorageFailed => "storage-failed",
        CpOutcome::StateTooLarge => "state-too-large",
    }
}

// ------------------------------------------------------------ JSON lines

/// One line of the JSON-lines trace. Fields that an event kind does not
/// have are left out.
#[derive(Serialize)]
struct JsonlLine<'a> {
    index: u64,
    time_ns: u64,
    attempt: u32,
    event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<CheckpointId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    barrier: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    triggered_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_completed: Option<CheckpointId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    crash: Option<u32>,
}

fn jsonl_line<'a>(names: &'a Names, e: &TraceEntry) -> io::Result<JsonlLine<'a>> {
    let mut l = JsonlLine {
        index: e.index,
        time_ns: e.time_ns,
        attempt: e.attempt,
        event: e.event,
        task: None,
        channel: None,
        checkpoint: None,
        barrier: None,
        triggered_ns: None,
        reason: None,
        latest_completed: None,
        generation: None,
        crash: None,
    };
    match e.ev {
        Ev::Wake { task }
        | Ev::LocalTimer { task }
        | Ev::WatermarkTimer { task }
        | Ev::MaterializeTimer { task }
        | Ev::Materialized { task, .. }
        | Ev::WatermarkReport { task }
        | Ev::ProcessingTimer { task, .. }
        | Ev::Flush { task }
        | Ev::FailureDetected { task }
        | Ev::ToSubtask { task, .. }
        | Ev::EventAck { task, .. }
        | Ev::ToCoordinator { task, .. } => {
            l.task = Some(names.task(task)?);
        }
        Ev::Deliver { ch } | Ev::ResumeConsumption { ch } | Ev::Credit { ch } => {
            l.channel = Some(names.channel(ch)?)
        }
        Ev::PeriodicTrigger { generation }
        | Ev::CoordinatorTick { generation, .. }
        | Ev::AlignmentAnnounce { generation, .. } => l.generation = Some(generation),
        Ev::TriggerSource { task, barrier } | Ev::SnapshotTask { task, barrier } => {
            l.task = Some(names.task(task)?);
            l.checkpoint = Some(barrier.id);
            l.barrier = Some(kind_name(barrier.kind));
            l.triggered_ns = Some(barrier.timestamp.0);
        }
        Ev::Ack { task, id }
        | Ev::NotifyComplete { task, id }
        | Ev::AlignmentTimer { task, id }
        | Ev::OutputTimeout { task, id }
        | Ev::Drained { task, id }
        | Ev::SubtaskCheckpointed { task, id }
        | Ev::StorageWriteFailed { task, id, .. } => {
            l.task = Some(names.task(task)?);
            l.checkpoint = Some(id);
        }
        Ev::Decline { task, id, reason } => {
            l.task = Some(names.task(task)?);
            l.checkpoint = Some(id);
            l.reason = Some(reason_name(reason));
        }
        Ev::CheckpointTimeout { id } | Ev::Finalized { id } | Ev::FinalizeFailed { id } => {
            l.checkpoint = Some(id)
        }
        Ev::NotifyAborted {
            task,
            id,
            latest_completed,
        } => {
            l.task = Some(names.task(task)?);
            l.checkpoint = Some(id);
            l.latest_completed = Some(latest_completed);
        }
        Ev::Crash { index } => {
            let t = *names
                .crash_tasks
                .get(index as usize)
                .ok_or_else(|| mismatch("crash", index.into()))?;
            l.task = Some(names.task(t)?);
            l.crash = Some(index);
        }
        Ev::CoordinatorCrash { index } => l.crash = Some(index),
        Ev::StorageCrash { index } => l.crash = Some(index),
        Ev::WorkerCrash { index } => l.crash = Some(index),
        Ev::NetworkFault { index, .. } => l.crash = Some(index),
        Ev::Restart
        | Ev::CoordinatorRecovered
        | Ev::WorkerLost { .. }
        | Ev::SavepointDue
        | Ev::Cancel => {}
        Ev::SavepointDone { task, id } => {
            l.task = Some(names.task(task)?);
            l.checkpoint = Some(id);
        }
    }
    Ok(l)
}

// ------------------------------------------------------------ timeline

/// Where a span or instant is drawn. Each group gets one track, or more if
/// its spans overlap without nesting (the trace format needs the spans of
/// one track to nest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Coordinator,
    /// A subtask's thread: its steps, barriers, crash and recovery.
    Task(TaskId),
    /// A subtask's checkpoint work: alignments and snapshots.
    Checkpoints(TaskId),
}

impl Group {
    /// Track order: the coordinator, then each subtask's two groups.
    fn order(self) -> GroupKey {
        match self {
            Group::Coordinator => (0, 0),
            Group::Task(t) => (1 + u64::from(t), 0),
            Group::Checkpoints(t) => (1 + u64::from(t), 1),
        }
    }

    /// The trace-event category of what is drawn on it.
    fn cat(self) -> &'static str {
        match self {
            Group::Coordinator => "coordinator",
            Group::Task(_) => "task",
            Group::Checkpoints(_) => "checkpoint",
        }
    }
}

/// A group's place in the track order.
type GroupKey = (u64, u8);

/// A complete event ("X"): `[start, end]` in virtual nanoseconds.
struct Span {
    group: Group,
    start: u64,
    end: u64,
    name: String,
    args: Value,
    /// The track it was assigned (an index into the group's tracks).
    lane: usize,
}

/// An instant event ("i", thread scope), on the group's first track.
struct Instant {
    group: Group,
    ts: u64,
    name: String,
    args: Value,
}

/// A task-side snapshot whose ack has not been sent yet.
struct OpenSnapshot {
    id: CheckpointId,
    start: u64,
    kind: BarrierKind,
}

/// A snapshot's completion: when every barrier was in and the ack left,
/// what was written, and when the ack reaches the coordinator.
struct Done {
    ack_sent_ns: u64,
    state_bytes: u64,
    in_flight_bytes: u64,
    ack_at_ns: Option<u64>,
}

/// A task that crashed or was cancelled, until it resumes after a restart.
struct Down {
    since: u64,
    cause: &'static str,
    restart_at: Option<u64>,
}

/// What is open on one subtask while the timeline is read.
#[derive(Default)]
struct TaskState {
    /// The last step span (cut short if the task dies during it).
    last_step: Option<usize>,
    /// Alignments in progress, by checkpoint id (several at once only for
    /// `at-least-once`).
    aligning: BTreeMap<CheckpointId, u64>,
    snapshot: Option<OpenSnapshot>,
    /// Snapshot spans whose ack is still on its way (cut short if a
    /// failover drops it).
    acking: Vec<usize>,
    down: Option<Down>,
}

/// Turns the run's timeline facts and checkpoint statistics into spans and
/// instants, in virtual nanoseconds.
struct Timelines<'a> {
    names: &'a Names,
    output: &'a RunOutput,
    end: u64,
    spans: Vec<Span>,
    instants: Vec<Instant>,
    tasks: Vec<TaskState>,
    /// The coordinator's recovery in progress: since, reason.
    recovering: Option<(u64, String)>,
    /// Trigger times of checkpoints, until their statistics show up.
    triggered: BTreeMap<CheckpointId, u64>,
}

fn dur_text(ns: u64) -> String {
    SimDuration(ns).to_string()
}

impl<'a> Timelines<'a> {
    fn new(names: &'a Names, output: &'a RunOutput) -> Timelines<'a> {
        let tasks = names.tasks.iter().map(|_| TaskState::default()).collect();
        Timelines {
            names,
            output,
            end: output.end_time.0,
            spans: Vec::new(),
            instants: Vec::new(),
            tasks,
            recovering: None,
            triggered: BTreeMap::new(),
        }
    }

    /// Adds a span and returns its index.
    fn span(&mut self, group: Group, name: String, start: u64, end: u64, args: Value) -> usize {
        let end = end.max(start);
        let lane = 0;
        self.spans.push(Span {
            group,
            start,
            end,
            name,
            args,
            lane,
        });
        self.spans.len() - 1
    }

    fn instant(&mut self, group: Group, name: String, ts: u64, args: Value) {
        self.instants.push(Instant {
            group,
            ts,
            name,
            args,
        });
    }

    fn state(&mut self, t: TaskId) -> io::Result<&mut TaskState> {
        self.tasks
            .get_mut(t as usize)
            .ok_or_else(|| mismatch("task", t.into()))
    }

    fn build(&mut self) -> io::Result<()> {
        let output = self.output;
        for m in &output.timeline {
            self.mark(m.time_ns, &m.what)?;
        }
        self.close_all();
        self.checkpoints();
        // Nothing is drawn past the end of the run (a step's busy period or
        // an ack in flight may reach beyond the event that ended it).
        let end = self.end;
        for s in &mut self.spans {
            s.end = s.end.min(end);
            s.start = s.start.min(s.end);
        }
        Ok(())
    }

    fn mark(&mut self, t: u64, what: &Timeline) -> io::Result<()> {
        match *what {
            Timeline::Step {
                task,
                records,
                replayed,
                until_ns,
            } => self.step(t, task, records, replayed, until_ns)?,
            Timeline::BarrierRead { task, ch, id, kind } => {
                self.resume(task, t)?;
                let args = json!({
                    "checkpoint": id,
                    "channel": self.names.channel(ch)?,
                    "kind": kind_name(kind),
                });
                self.instant(Group::Task(task), format!("barrier {id}"), t, args);
            }
            Timeline::CancelRead { task, ch, id } => {
                self.resume(task, t)?;
                let args = json!({ "checkpoint": id, "channel": self.names.channel(ch)? });
                self.instant(Group::Task(task), format!("cancel {id}"), t, args);
            }
            Timeline::AlignmentStart { task, id } => {
                self.resume(task, t)?;
                self.state(task)?.aligning.entry(id).or_insert(t);
            }
            Timeline::AlignmentEnd { task, id } => {
                if let Some(start) = self.state(task)?.aligning.remove(&id) {
                    self.alignment_span(task, id, start, t, "aligned");
                }
            }
            Timeline::Snapshot { task, id, kind, .. } => {
                self.resume(task, t)?;
                if let Some(old) = self.state(task)?.snapshot.take() {
                    let outcome = format!("superseded by checkpoint {id}");
                    self.snapshot_span(task, old, t, &outcome, None);
                }
                self.state(task)?.snapshot = Some(OpenSnapshot { id, start: t, kind });
            }
            Timeline::SnapshotDone {
                task,
                id,
                state_bytes,
                in_flight_bytes,
                ack_at_ns,
            } => {
                let done = Done {
                    ack_sent_ns: t,
                    state_bytes,
                    in_flight_bytes,
                    ack_at_ns,
                };
                self.snapshot_done(t, task, id, done)?;
            }
            Timeline::Declined { task, id, reason } => self.declined(t, task, id, reason)?,
            Timeline::InputEnded { task } => {
                self.resume(task, t)?;
                self.instant(Group::Task(task), "end of input".into(), t, json!({}));
            }
            Timeline::Finished { task } => {
                self.instant(Group::Task(task), "finished".into(), t, json!({}));
            }
            Timeline::Crash { task } => {
                let args = json!({ "task": self.names.task(task)? });
                self.instant(Group::Task(task), "crash".into(), t, args);
                self.cut(task, t, "crashed")?;
            }
            Timeline::Failover {
                ref reason,
                job_failed,
            } => self.failover(t, reason, job_failed)?,
            Timeline::Restart {
                from,
                restored_records,
            } => self.restart(t, from, restored_records),
            Timeline::Triggered { id } => {
                self.triggered.insert(id, t);
            }
        }
        Ok(())
    }

    /// A task step: a span of its busy period.
    fn step(
        &mut self,
        t: u64,
        task: TaskId,
        records: u64,
        replayed: u64,
        until_ns: u64,
    ) -> io::Result<()> {
        self.resume(task, t)?;
        let name = if self.names.is_source[task as usize] {
            "emit"
        } else if replayed > 0 {
            "replay"
        } else {
            "process"
        };
        let mut args = json!({ "records": records });
        if replayed > 0 {
            args["replayed"] = json!(replayed);
        }
        let i = self.span(Group::Task(task), name.into(), t, until_ns, args);
        self.state(task)?.last_step = Some(i);
        Ok(())
    }

    /// A task's snapshot is written: its span ends when the ack arrives.
    fn snapshot_done(
        &mut self,
        t: u64,
        task: TaskId,
        id: CheckpointId,
        done: Done,
    ) -> io::Result<()> {
        let snap = match self.state(task)?.snapshot.take() {
            Some(s) if s.id == id => s,
            other => {
                // Not the open snapshot (the world never does this):
                // leave that one open, draw this one from here.
                self.state(task)?.snapshot = other;
                let kind = BarrierKind::Aligned;
                OpenSnapshot { id, start: t, kind }
            }
        };
        // The span lasts until the ack reaches the coordinator
        // (state written, ack RPC), or ends here if none was sent.
        let acked = done.ack_at_ns.is_some();
        let outcome = match done.ack_at_ns {
            Some(_) => "acknowledged",
            None => "checkpoint had ended: no ack sent",
        };
        let end = done.ack_at_ns.unwrap_or(t);
        let i = self.snapshot_span(task, snap, end, outcome, Some(done));
        if acked {
            self.state(task)?.acking.push(i);
        }
        Ok(())
    }

    /// A task declined a checkpoint: its alignment and snapshot end.
    fn declined(
        &mut self,
        t: u64,
        task: TaskId,
        id: CheckpointId,
        reason: AbortReason,
    ) -> io::Result<()> {
        let outcome = format!("declined ({})", reason_name(reason));
        if let Some(start) = self.state(task)?.aligning.remove(&id) {
            self.alignment_span(task, id, start, t, &outcome);
        }
        // The world drops a pending snapshot of this or an older id.
        let st = self.state(task)?;
        if let Some(snap) = st.snapshot.take_if(|s| s.id <= id) {
            self.snapshot_span(task, snap, t, &outcome, None);
        }
        let args = json!({ "checkpoint": id, "reason": reason_name(reason) });
        self.instant(Group::Task(task), format!("decline {id}"), t, args);
        Ok(())
    }

    /// A global failover: every task still up is cut, acks in flight lost.
    fn failover(&mut self, t: u64, reason: &str, job_failed: bool) -> io::Result<()> {
        let args = json!({ "reason": reason, "job_failed": job_failed });
        self.instant(Group::Coordinator, "failover".into(), t, args);
        if job_failed {
            let args = json!({ "reason": reason });
            self.instant(Group::Coordinator, "job failed".into(), t, args);
        }
        self.recovering = Some((t, reason.to_string()));
        for task in 0..self.tasks.len() as TaskId {
            if self.tasks[task as usize].down.is_none() {
                self.cut(task, t, "cancelled")?;
            }
            self.lose_acks(task, t)?;
        }
        Ok(())
    }

    /// Every task redeployed: the coordinator's recovery span ends.
    fn restart(&mut self, t: u64, from: Option<CheckpointId>, restored_records: u64) {
        let restored = match from {
            Some(id) => json!(id),
            None => json!("none (from scratch)"),
        };
        if let Some((since, reason)) = self.recovering.take() {
            let args = json!({
                "reason": reason,
                "restored_checkpoint": restored,
                "restored_in_flight_records": restored_records,
                "outcome": "restarted",
            });
            self.span(Group::Coordinator, "recovery".into(), since, t, args);
        }
        let args = json!({
            "restored_checkpoint": restored,
            "restored_in_flight_records": restored_records,
        });
        self.instant(Group::Coordinator, "restart".into(), t, args);
        for st in &mut self.tasks {
            if let Some(d) = &mut st.down {
                d.restart_at.get_or_insert(t);
            }
        }
    }

    /// The task does something after a restart: its recovery span ends.
    fn resume(&mut self, task: TaskId, t: u64) -> io::Result<()> {
        let st = self.state(task)?;
        if let Some(d) = st.down.take_if(|d| d.restart_at.is_some()) {
            self.recovery_span(task, d, t, "resumed");
        }
        Ok(())
    }

    fn recovery_span(&mut self, task: TaskId, d: Down, end: u64, outcome: &str) {
        let args = json!({
            "cause": d.cause,
            "restart_ns": d.restart_at,
            "outcome": outcome,
        });
        self.span(Group::Task(task), "recovery".into(), d.since, end, args);
    }

    /// The task crashed or was cancelled at `t`: cut its step short, end
    /// its alignments and open snapshot, start its recovery. (An ack
    /// already sent still arrives until the failover: see `lose_acks`.)
    fn cut(&mut self, task: TaskId, t: u64, cause: &'static str) -> io::Result<()> {
        let st = self.state(task)?;
        let step = st.last_step.take();
        let aligning = std::mem::take(&mut st.aligning);
        let snapshot = st.snapshot.take();
        st.down.get_or_insert(Down {
            since: t,
            cause,
            restart_at: None,
        });
        if let Some(i) = step {
            let s = &mut self.spans[i];
            if s.end > t {
                s.end = t;
                s.args["cut_short"] = json!(cause);
            }
        }
        for (id, start) in aligning {
            self.alignment_span(task, id, start, t, cause);
        }
        if let Some(snap) = snapshot {
            self.snapshot_span(task, snap, t, cause, None);
        }
        Ok(())
    }

    /// A failover at `t` bumps the job attempt: acks still on their way
    /// are dropped when they arrive.
    fn lose_acks(&mut self, task: TaskId, t: u64) -> io::Result<()> {
        for i in std::mem::take(&mut self.state(task)?.acking) {
            let s = &mut self.spans[i];
            if s.end > t {
                s.end = t;
                s.args["outcome"] = json!("ack dropped by the failover");
            }
        }
        Ok(())
    }

    /// An alignment span; none if it took no time (every barrier was read
    /// in one step, or the task has one input).
    fn alignment_span(
        &mut self,
        task: TaskId,
        id: CheckpointId,
        start: u64,
        end: u64,
        outcome: &str,
    ) {
        if end <= start {
            return;
        }
        let args = json!({
            "checkpoint": id,
            "outcome": outcome,
            "duration": dur_text(end - start),
        });
        let name = format!("alignment {id}");
        self.span(Group::Checkpoints(task), name, start, end, args);
    }

    /// A snapshot span, from the task-side snapshot to `end`; returns its
    /// index.
    fn snapshot_span(
        &mut self,
        task: TaskId,
        s: OpenSnapshot,
        end: u64,
        outcome: &str,
        done: Option<Done>,
    ) -> usize {
        let mut args = json!({
            "checkpoint": s.id,
            "barrier": kind_name(s.kind),
            "outcome": outcome,
        });
        if let Some(d) = done {
            args["ack_sent_ns"] = json!(d.ack_sent_ns);
            args["ack_arrives_ns"] = json!(d.ack_at_ns);
            args["state_bytes"] = json!(d.state_bytes);
            args["in_flight_bytes"] = json!(d.in_flight_bytes);
        }
        let name = format!("snapshot {}", s.id);
        self.span(Group::Checkpoints(task), name, s.start, end, args)
    }

    /// The run ended: close whatever is still open.
    fn close_all(&mut self) {
        let end = self.end;
        let open = "open at the end of the run";
        for task in 0..self.tasks.len() as TaskId {
            let st = &mut self.tasks[task as usize];
            let aligning = std::mem::take(&mut st.aligning);
            let snapshot = st.snapshot.take();
            let down = st.down.take();
            for (id, start) in aligning {
                self.alignment_span(task, id, start, end, open);
            }
            if let Some(s) = snapshot {
                self.snapshot_span(task, s, end, open, None);
            }
            if let Some(d) = down {
                let outcome = match d.restart_at {
                    Some(_) => "restarted, not resumed by the end of the run",
                    None => "not restarted by the end of the run",
                };
                self.recovery_span(task, d, end, outcome);
            }
        }
        if let Some((since, reason)) = self.recovering.take() {
            let outcome = match self.output.outcome {
                RunOutcome::JobFailed(_) => "job failed",
                _ => open,
            };
            let args = json!({ "reason": reason, "outcome": outcome });
            self.span(Group::Coordinator, "recovery".into(), since, end, args);
        }
    }

    /// One coordinator span per checkpoint (trigger → completed or
    /// aborted, or the end of the run if still pending), and an instant at
    /// its end.
    fn checkpoints(&mut self) {
        let output = self.output;
        for s in &output.checkpoint_stats {
            self.triggered.remove(&s.id);
            let args = json!({
                "checkpoint": s.id,
                "outcome": outcome_name(s.outcome),
                "duration": dur_text(s.duration_ns),
                "duration_ns": s.duration_ns,
                "state_bytes": s.state_bytes,
                "in_flight_bytes": s.in_flight_bytes,
                "unaligned": s.unaligned,
                "acks": s.acks,
                "start_delay_max_ns": s.start_delay_max_ns,
                "alignment_max_ns": s.alignment_max_ns,
            });
            let name = format!("checkpoint {}", s.id);
            self.span(Group::Coordinator, name, s.trigger_ns, s.end_ns, args);
            let name = match s.outcome {
                CpOutcome::Completed => format!("completed {}", s.id),
                _ => format!("aborted {}", s.id),
            };
            let args = json!({ "checkpoint": s.id, "outcome": outcome_name(s.outcome) });
            self.instant(Group::Coordinator, name, s.end_ns, args);
        }
        let end = self.end;
        for (id, start) in std::mem::take(&mut self.triggered) {
            let args = json!({ "checkpoint": id, "outcome": "pending at the end of the run" });
            let name = format!("checkpoint {id}");
            self.span(Group::Coordinator, name, start, end, args);
        }
    }
}
