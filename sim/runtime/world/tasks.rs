//! The tasks component: every task's state (its chain of operators, its
//! barrier handler, what it has read, blocked, snapshotted and sent) and the
//! scratch a task's step works in (the scheduler's choice of input, the
//! records passed along the chain, the handler's actions), plus the external
//! store its sinks write to.
//!
//! The task mailbox of Flink (`MailboxProcessor`: the step, timers and
//! control messages as mails of one queue) belongs here, as a field of
//! `Tasks` beside `list`, with its methods in this file; the event loop in
//! `world/mod.rs` hands a task its mails. It must never reach into another
//! component: what a step does to the network, the coordinator or the
//! recorder goes through `World`'s methods in `world/task.rs` and
//! `world/barriers.rs`.

use crate::engine::{SimRng, SimTime};
use crate::model::store::ExternalStore;
use crate::model::{CheckpointId, Operator, Record, TaskId};
use crate::protocol::{BarrierHandler, HandlerAction};
use crate::runtime::coordinator::{Cut, TaskSnapshot};
use crate::runtime::scheduler::Scheduler;
use std::collections::{BTreeSet, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Running,
    Dead,
    Finished,
    Cancelled,
}

/// One operator of a task's chain.
pub(super) struct Member {
    /// Its index in the scenario.
    pub(super) index: u32,
    /// Its subtask's place in the schedule log (`ExecGraph::instance`).
    pub(super) inst: TaskId,
    pub(super) op: Box<dyn Operator>,
    /// Virtual time per record.
    pub(super) cost: u64,
    pub(super) is_sink: bool,
    /// Its event-time clock: its timer service's watermark, what
    /// `Context::watermark` says (`MIN_WATERMARK` when deployed, then the
    /// restored snapshot's).
    pub(super) watermark: i64,
    /// The last watermark it sent on (this deployment).
    pub(super) sent_watermark: i64,
    /// Its processing-time timers (`world/timers.rs`), if it reads
    /// processing time.
    pub(super) processing: Option<ProcessingTimers>,
}

/// A chain member's processing-time service: the earliest timer its
/// operator held after its last call, and the time (ns) the service is
/// armed for (Flink's `InternalTimerServiceImpl.nextTimer`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProcessingTimers {
    pub(super) head: Option<i64>,
    pub(super) armed: Option<u64>,
    /// For the check only: the earliest timer, found past due at a step
    /// start at this time (ns).
    pub(super) past_due: Option<(i64, u64)>,
}

pub(super) struct Task {
    pub(super) subtask: u32,
    pub(super) parallelism: u32,
    pub(super) is_source: bool,
    /// The chained operators, head first (`TaskInfo::chain`).
    pub(super) members: Vec<Member>,
    pub(super) handler: Box<dyn BarrierHandler>,
    pub(super) status: Status,
    /// Mails waiting for the task's thread (`world/mail.rs`).
    pub(super) mailbox: crate::runtime::mailbox::Mailbox,
    pub(super) blocked: Vec<bool>,
    /// Per input: a barrier read from it had blocked its sender, which
    /// waits for this task's resume.
    pub(super) needs_resume: Vec<bool>,
    pub(super) eod: Vec<bool>,
    pub(super) eod_remaining: u32,
    /// Some input's `EndOfData` came without drain (a stop-with-savepoint
    /// without drain upstream): at its end of input the task does not
    /// finish its operators.
    pub(super) eod_stopped: bool,
    pub(super) input_ended: bool,
    pub(super) last_checkpoint: CheckpointId,
    pub(super) last_notified: CheckpointId,
    pub(super) aborted: BTreeSet<CheckpointId>,
    pub(super) rr: Vec<u32>,
    /// The head's cost per record read; the other members' costs add up
    /// per record they process (`World::chain_cost`).
    pub(super) cost: u64,
    /// The chain's cost jitter (every member's, summed).
    pub(super) jitter: u64,
    /// Records taken from an input buffer per step (`step_quantum / cost`).
    pub(super) step_records: usize,
    /// Time the current alignment's first barrier arrived.
    pub(super) alignment_start: Option<(CheckpointId, SimTime)>,
    pub(super) last_alignment_ns: u64,
    /// The newest checkpoint snapshotted (this attempt), for the protocol
    /// check that snapshots follow checkpoint order, each once.
    pub(super) snapshotted: CheckpointId,
    /// Per output channel (as in `task_outputs`): the edge may carry
    /// unaligned barriers (not forward/broadcast, receiver not forced to align).
    pub(super) out_uc: Vec<bool>,
    /// A snapshot taken but not yet acknowledged (waiting for the last
    /// barrier or for held output barriers).
    pub(super) pending_ack: Option<PartialAck>,
    /// Inputs with restored input channel state, in the order they were
    /// restored: without checkpointing during recovery the task reads them
    /// in this order, one after the other, before any new input (the
    /// buffers wait on the channels, `Channel::recovered`).
    pub(super) recovery_order: VecDeque<u32>,
    /// `stop-the-world` source: paused for this checkpoint.
    pub(super) paused: Option<CheckpointId>,
    /// `stop-the-world`: drained for this checkpoint, its processing-time
    /// services wait for its snapshot (`world/timers.rs`).
    pub(super) timers_quiesced: Option<CheckpointId>,
    /// Checkpoints this task started (this attempt) and those it closed on
    /// its outputs with their barrier or a cancellation marker, for the
    /// protocol check that every started checkpoint is closed downstream.
    pub(super) started: BTreeSet<CheckpointId>,
    pub(super) closed: BTreeSet<CheckpointId>,
    /// Source stopped by a stop-with-savepoint: emits nothing more.
    pub(super) stopped: bool,
    /// Keyed operator whose every input is hash-partitioned: each record
    /// must belong to one of this subtask's key groups (routing check).
    pub(super) check_routing: bool,
    /// The key groups this subtask owns: `start..end`.
    pub(super) key_groups: (u32, u32),
    /// The job attempt this instance was deployed in: transactions it
    /// opened carry this attempt or a later one.
    pub(super) deploy_attempt: u32,
    /// Until when its last snapshot's call blocked its thread (a
    /// producer's flush): its acknowledgement leaves only after, and not
    /// at all if the task dies first.
    pub(super) sync_until: SimTime,
    /// Since and until when a call blocked its thread waiting for requests
    /// a broker fault delayed: noted as the fault's end when it returns.
    pub(super) flush_blocked: Option<(SimTime, SimTime)>,
    /// Checkpoints this instance declined, and those it sent cancellation
    /// markers for (the protocol check: at most once each).
    pub(super) declined: BTreeSet<CheckpointId>,
    pub(super) cancel_sent: BTreeSet<(CheckpointId, CancelCause)>,
    /// Event time: its valve or its source's watermarks (`None` without).
    pub(super) time: Option<Box<TaskTime>>,
    /// What it waits for between the end of its data and its exit
    /// (`world/exit.rs`).
    pub(super) exit: super::exit_state::ExitState,
}

/// A task's event time (`world/event_time.rs`), reset with the task.
pub(super) struct TaskTime {
    /// A source task: its splits' watermarks.
    pub(super) source: Option<crate::model::event_time::SourceWatermarks>,
    /// A task with inputs: the valve over its input channels (by input).
    pub(super) valve: Option<crate::model::event_time::Valve>,
    /// An aligned reader: its side of watermark alignment.
    pub(super) alignment: Option<crate::model::alignment::ReaderAlignment>,
    /// A periodic emit came while the source was paused: it runs when the
    /// source resumes.
    pub(super) emit_deferred: bool,
    /// When its input watermark last advanced (or it was deployed), and
    /// whether a stall was noted since (once per deployment).
    pub(super) advanced_at: SimTime,
    pub(super) stall_noted: bool,
    /// The watermark status the task's outputs last announced (Flink's
    /// `RecordWriterOutput.announcedStatus`, the same along the chain):
    /// a redeployed task starts active.
    pub(super) idle: bool,
}

/// Why a task sends a cancellation marker. Flink sends one of each for the
/// same checkpoint when a barrier of a checkpoint the coordinator already
/// aborted is skipped (`SubtaskCheckpointCoordinatorImpl.checkpointState`)
/// and the handler then aborts it too (`abortCheckpointOnBarrier`): the
/// protocol check allows one marker per cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CancelCause {
    Skipped,
    Declined,
}

/// A task's snapshot on its way to an acknowledgement.
#[derive(Clone)]
pub(super) struct PartialAck {
    pub(super) id: CheckpointId,
    pub(super) snapshot: TaskSnapshot,
    pub(super) cut: Cut,
    pub(super) input_ended: bool,
    pub(super) start_delay_ns: u64,
    pub(super) alignment_ns: u64,
    /// Not every input delivered the barrier yet (channel state still open).
    pub(super) waiting_barriers: bool,
    /// When the snapshot was taken: the task's writes start then.
    pub(super) snapshot_at: SimTime,
    /// The channel state as the channel-state writer gets it: when each
    /// part was captured, and its bytes.
    pub(super) writes: Vec<(SimTime, u64)>,
}

/// A chained member pushing what it emitted through the members chained
/// after it: record `next_record` of `batch` goes to its successor
/// `next_successor` next (each successor takes the whole batch, one record
/// at a time, before the following one).
pub(super) struct ChainFrame {
    pub(super) member: usize,
    pub(super) batch: Vec<Record>,
    pub(super) next_successor: usize,
    pub(super) next_record: usize,
}

/// Every task and the scratch of a step (see the module's docs).
pub(super) struct Tasks {
    /// By task id.
    pub(super) list: Vec<Task>,
    /// The scheduling stream: the scheduler's choices and cost jitter.
    pub(super) sched_rng: SimRng,
    /// Which ready input a task reads next (`runtime::scheduler`).
    pub(super) scheduler: Box<dyn Scheduler>,
    /// Scratch: when each ready input became available (for the scheduler).
    pub(super) since: Vec<u64>,
    pub(super) out: Vec<Record>,
    /// What the member call just made emitted into the late-data side
    /// output (`Context::emit_late`).
    pub(super) late: Vec<Record>,
    /// The timers that fired in the member call just made.
    pub(super) fired: Vec<crate::model::timers::FiredTimer>,
    /// Spare buffers for records passed between chained operators.
    pub(super) chain_bufs: Vec<Vec<Record>>,
    /// The chained members a step is pushing records through, innermost
    /// last (`World::emit_from`; kept for its allocation).
    pub(super) chain_stack: Vec<ChainFrame>,
    /// The cost of this step's records in chained operators after the head.
    pub(super) chain_cost: u64,
    /// Records that reached a sink operator in this step.
    pub(super) sink_records: u64,
    /// Until when the last snapshot's calls blocked their task's thread
    /// (a producer's flush): its state is written from then on.
    pub(super) snapshot_blocked: Option<SimTime>,
    pub(super) actions: Vec<HandlerAction>,
    /// The input whose barrier the handler is taking right now blocked its
    /// sender: it is owed a resume once the handler blocks or releases it
    /// (`World::note_blocking_barrier`).
    pub(super) barrier_read: Option<(TaskId, u32)>,
    pub(super) ready: Vec<u32>,
    /// Highest offset + 1 ever emitted per global partition.
    pub(super) high_water: Vec<u64>,
    /// What the sinks wrote outside the job.
    pub(super) store: ExternalStore,
    /// How many tasks are in each status and how many ended their input,
    /// kept by `set_status`, `end_input` and `replace` so that a task's
    /// end or exit asks "all finished?" without visiting every task.
    tally: Tally,
}

/// Counts over `Tasks::list` (see `Tasks::tally`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Tally {
    /// By `Status as usize`.
    status: [u32; 4],
    input_ended: u32,
}

impl Tally {
    fn of(list: &[Task]) -> Tally {
        let mut tally = Tally::default();
        for t in list {
            tally.add(t, 1);
        }
        tally
    }

    fn add(&mut self, t: &Task, n: i32) {
        let s = &mut self.status[t.status as usize];
        *s = s.wrapping_add_signed(n);
        if t.input_ended {
            self.input_ended = self.input_ended.wrapping_add_signed(n);
        }
    }
}

impl Tasks {
    /// No tasks yet (`World::new` deploys them), `partitions` source
    /// partitions never emitted.
    pub(super) fn new(
        sched_rng: SimRng,
        scheduler: Box<dyn Scheduler>,
        partitions: usize,
    ) -> Tasks {
        Tasks {
            list: Vec::new(),
            sched_rng,
            scheduler,
            since: Vec::new(),
            out: Vec::with_capacity(64),
            late: Vec::new(),
            fired: Vec::new(),
            chain_bufs: Vec::new(),
            chain_stack: Vec::new(),
            chain_cost: 0,
            sink_records: 0,
            snapshot_blocked: None,
            actions: Vec::with_capacity(8),
            barrier_read: None,
            ready: Vec::with_capacity(16),
            high_water: vec![0; partitions],
            store: ExternalStore::default(),
            tally: Tally::default(),
        }
    }

    /// The tasks deployed at the start.
    pub(super) fn deploy(&mut self, list: Vec<Task>) {
        self.tally = Tally::of(&list);
        self.list = list;
    }

    /// Task `ti` redeployed as `fresh`.
    pub(super) fn replace(&mut self, ti: usize, fresh: Task) {
        self.tally.add(&self.list[ti], -1);
        self.tally.add(&fresh, 1);
        self.list[ti] = fresh;
    }

    pub(super) fn set_status(&mut self, ti: usize, status: Status) {
        let t = &mut self.list[ti];
        self.tally.status[t.status as usize] -= 1;
        self.tally.status[status as usize] += 1;
        t.status = status;
    }

    /// Every task that is not dead is cancelled.
    pub(super) fn cancel_live(&mut self) {
        for ti in 0..self.list.len() {
            if self.list[ti].status != Status::Dead {
                self.set_status(ti, Status::Cancelled);
            }
        }
    }

    pub(super) fn end_input(&mut self, ti: usize) {
        if !self.list[ti].input_ended {
            self.list[ti].input_ended = true;
            self.tally.input_ended += 1;
        }
    }

    /// How many tasks are `status`.
    pub(super) fn count(&self, status: Status) -> usize {
        self.tally.status[status as usize] as usize
    }

    pub(super) fn all(&self, status: Status) -> bool {
        self.count(status) == self.list.len()
    }

    pub(super) fn all_input_ended(&self) -> bool {
        self.tally.input_ended as usize == self.list.len()
    }

    /// The counts agree with the tasks (checked at the end of a run: a
    /// status written around `set_status` would skew them).
    pub(super) fn tally_holds(&self) -> bool {
        self.tally == Tally::of(&self.list)
    }
}
