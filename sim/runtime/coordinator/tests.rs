//! Table-driven: a sequence of inputs per case, the exact actions out.

use super::*;
use Action::*;

const MS: u64 = 1_000_000;

fn t(ms: u64) -> SimTime {
    SimTime(ms * MS)
}

fn config(tasks: usize) -> Config {
    Config {
        interval: Some(SimDuration::from_millis(100)),
        min_pause: SimDuration::ZERO,
        timeout: SimDuration::from_millis(50),
        rpc_latency: SimDuration::from_millis(1),
        max_concurrent: 1,
        queue_requests: true,
        tolerable_failures: 1,
        retained: 1,
        tasks,
        mutants: Mutants::NONE,
    }
}

#[derive(Clone)]
enum In {
    /// Periodic trigger of a generation at a time, with the job's facts.
    Periodic(u64, u32, Facts),
    /// A savepoint requested at a time (stop?).
    Savepoint(u64, bool),
    /// A task's snapshot for a checkpoint is written (input ended?).
    Write(CheckpointId, u32, bool),
    Ack(u32, CheckpointId),
    /// The metadata is written at a time: take it and complete it.
    Finalized(u64, CheckpointId),
    Expire(u64, CheckpointId),
    Decline(u64, CheckpointId),
    StorageFailed(u64, CheckpointId),
    AbortAll(u64, Outcome),
    /// A pending checkpoint ended at a time: run a queued request.
    RunQueued(u64, Facts),
}

const RUNNING: Facts = Facts {
    running: true,
    savepoint_due: false,
    recovering: false,
    triggering: false,
};

fn ack(input_ended: bool) -> TaskAck {
    TaskAck {
        snapshot: TaskSnapshot::default(),
        cut: Cut::default(),
        input_ended,
        start_delay_ns: 0,
        alignment_ns: 0,
        arrived: false,
        persisted_bytes: 0,
        full_bytes: 0,
        durable_at: crate::engine::SimTime::ZERO,
    }
}

fn run(cfg: Config, steps: &[In]) -> (Coordinator, Vec<Vec<Action>>) {
    let mut c = Coordinator::new(cfg);
    let out = steps
        .iter()
        .map(|s| {
            let mut out = Vec::new();
            match s.clone() {
                In::Periodic(now, g, facts) => c.periodic(t(now), g, facts, &mut out),
                In::Savepoint(now, stop) => {
                    let sp = SavepointSpec {
                        at: t(now),
                        stop,
                        drain: false,
                        format: crate::scenario::SavepointFormat::Canonical,
                    };
                    c.trigger(t(now), Some(sp), &mut out);
                }
                In::Write(id, task, ended) => {
                    c.record_ack(id, task, ack(ended));
                }
                In::Ack(task, id) => c.ack(task, id, &mut out),
                In::Finalized(now, id) => {
                    if let Some(p) = c.take_finalized(id) {
                        c.complete(t(now), p, &mut out);
                    }
                }
                In::Expire(now, id) => c.expire(t(now), id, &mut out),
                In::Decline(now, id) => c.abort(t(now), id, Outcome::Declined, &mut out),
                In::StorageFailed(now, id) => c.storage_failed(t(now), id, &mut out),
                In::AbortAll(now, outcome) => c.abort_all(t(now), outcome, &mut out),
                In::RunQueued(now, facts) => c.run_queued(t(now), facts, &mut out),
            }
            out
        })
        .collect();
    (c, out)
}

/// The actions of a periodic trigger at `now` that starts checkpoint `id`.
fn triggered(now: u64, generation: u32, id: CheckpointId) -> Vec<Action> {
    vec![
        ArmPeriodic {
            at: t(now + 100),
            generation,
        },
        Triggered {
            id,
            savepoint: false,
        },
        ArmTimeout {
            id,
            at: t(now + 50),
        },
        TriggerSources {
            id,
            timestamp: t(now),
            at: t(now + 1),
        },
    ]
}

fn aborted(id: CheckpointId, outcome: Outcome) -> Action {
    Aborted {
        id,
        outcome,
        savepoint: None,
    }
}

fn notify_aborted(id: CheckpointId, latest: CheckpointId, now: u64) -> Action {
    NotifyAborted {
        id,
        latest_completed: latest,
        at: t(now + 1),
    }
}

#[test]
fn table() {
    use In::*;
    type Case = (&'static str, Config, Vec<In>, Vec<Vec<Action>>);
    let two = || Config {
        max_concurrent: 2,
        ..config(2)
    };
    let cases: Vec<Case> = vec![
        (
            "a periodic trigger re-arms itself and starts a checkpoint",
            config(2),
            vec![Periodic(10, 0, RUNNING)],
            vec![triggered(10, 0, 1)],
        ),
        (
            "a stale generation does nothing",
            config(2),
            vec![Periodic(10, 7, RUNNING)],
            vec![vec![]],
        ),
        (
            "not running: skipped; at the limit or behind a due savepoint: queued",
            config(2),
            vec![
                Periodic(10, 0, Facts::default()),
                Periodic(20, 0, RUNNING),
                Periodic(30, 0, RUNNING),
                Periodic(
                    40,
                    0,
                    Facts {
                        savepoint_due: true,
                        ..RUNNING
                    },
                ),
            ],
            vec![
                vec![
                    ArmPeriodic {
                        at: t(110),
                        generation: 0,
                    },
                    Skipped(Skip::NotRunning),
                ],
                triggered(20, 0, 1),
                vec![
                    ArmPeriodic {
                        at: t(130),
                        generation: 0,
                    },
                    Queued,
                ],
                vec![
                    ArmPeriodic {
                        at: t(140),
                        generation: 0,
                    },
                    Queued,
                ],
            ],
        ),
        (
            "acks complete a checkpoint once every task's arrived, once",
            config(2),
            vec![
                Periodic(10, 0, RUNNING),
                Write(1, 0, false),
                Write(1, 1, false),
                Ack(0, 1),
                Ack(0, 1),
                Ack(1, 1),
                Ack(1, 1),
                Finalized(30, 1),
            ],
            vec![
                triggered(10, 0, 1),
                vec![],
                vec![],
                vec![],
                vec![],
                vec![Finalize { id: 1 }],
                vec![],
                vec![NotifyComplete { id: 1, at: t(31) }],
            ],
        ),
        (
            "a completion subsumes older pending checkpoints, which are told aborted",
            two(),
            vec![
                Periodic(10, 0, RUNNING),
                Periodic(20, 0, RUNNING),
                Write(2, 0, false),
                Write(2, 1, false),
                Ack(0, 2),
                Ack(1, 2),
                Finalized(40, 2),
            ],
            vec![
                triggered(10, 0, 1),
                triggered(20, 0, 2),
                vec![],
                vec![],
                vec![],
                vec![Finalize { id: 2 }],
                vec![
                    aborted(1, Outcome::Subsumed),
                    notify_aborted(1, 2, 40),
                    NotifyComplete { id: 2, at: t(41) },
                ],
            ],
        ),
        (
            "more expired checkpoints in a row than tolerated fail the job over",
            config(1),
            vec![
                Periodic(0, 0, RUNNING),
                Expire(50, 1),
                Periodic(100, 0, RUNNING),
                Expire(150, 2),
            ],
            vec![
                triggered(0, 0, 1),
                vec![aborted(1, Outcome::Expired), notify_aborted(1, 0, 50)],
                triggered(100, 0, 2),
                vec![
                    aborted(2, Outcome::Expired),
                    notify_aborted(2, 0, 150),
                    Failover {
                        reason: "more than 1 consecutive checkpoint failures".to_string(),
                    },
                ],
            ],
        ),
        (
            "a completion resets the count; declines and subsumptions do not count",
            Config {
                max_concurrent: 2,
                ..config(1)
            },
            vec![
                Periodic(0, 0, RUNNING),
                StorageFailed(10, 1),
                Periodic(100, 0, RUNNING),
                Write(2, 0, false),
                Ack(0, 2),
                Finalized(110, 2),
                Periodic(200, 0, RUNNING),
                Decline(210, 3),
                Periodic(300, 0, RUNNING),
                Expire(350, 4),
            ],
            vec![
                triggered(0, 0, 1),
                vec![aborted(1, Outcome::StorageFailed), notify_aborted(1, 0, 10)],
                triggered(100, 0, 2),
                vec![],
                vec![Finalize { id: 2 }],
                vec![NotifyComplete { id: 2, at: t(111) }],
                triggered(200, 0, 3),
                vec![aborted(3, Outcome::Declined), notify_aborted(3, 2, 210)],
                triggered(300, 0, 4),
                vec![aborted(4, Outcome::Expired), notify_aborted(4, 2, 350)],
            ],
        ),
        (
            "a savepoint holds periodic triggers back (queued); its expiry does not count; a failed stop fails over",
            config(1),
            vec![
                Savepoint(5, false),
                Periodic(10, 0, RUNNING),
                Expire(55, 1),
                Savepoint(60, true),
                Decline(70, 2),
            ],
            vec![
                vec![
                    Triggered {
                        id: 1,
                        savepoint: true,
                    },
                    ArmTimeout { id: 1, at: t(55) },
                    TriggerSources {
                        id: 1,
                        timestamp: t(5),
                        at: t(6),
                    },
                ],
                vec![
                    ArmPeriodic {
                        at: t(110),
                        generation: 0,
                    },
                    Queued,
                ],
                vec![
                    Aborted {
                        id: 1,
                        outcome: Outcome::Expired,
                        savepoint: Some(SavepointSpec {
                            at: t(5),
                            stop: false,
                            drain: false,
                            format: crate::scenario::SavepointFormat::Canonical,
                        }),
                    },
                    notify_aborted(1, 0, 55),
                ],
                vec![
                    Triggered {
                        id: 2,
                        savepoint: true,
                    },
                    ArmTimeout { id: 2, at: t(110) },
                    TriggerSources {
                        id: 2,
                        timestamp: t(60),
                        at: t(61),
                    },
                ],
                vec![
                    Aborted {
                        id: 2,
                        outcome: Outcome::Declined,
                        savepoint: Some(SavepointSpec {
                            at: t(60),
                            stop: true,
                            drain: false,
                            format: crate::scenario::SavepointFormat::Canonical,
                        }),
                    },
                    notify_aborted(2, 0, 70),
                    Failover {
                        reason: "stop-with-savepoint 2 failed (Declined)".to_string(),
                    },
                ],
            ],
        ),
        (
            "a failover aborts every pending checkpoint without notifying anyone",
            two(),
            vec![
                Periodic(0, 0, RUNNING),
                Periodic(10, 0, RUNNING),
                AbortAll(20, Outcome::Failover),
                Expire(50, 1),
            ],
            vec![
                triggered(0, 0, 1),
                triggered(10, 0, 2),
                vec![
                    aborted(1, Outcome::Failover),
                    aborted(2, Outcome::Failover),
                ],
                vec![],
            ],
        ),
    ];
    for (name, cfg, steps, expected) in cases {
        assert_eq!(run(cfg, &steps).1, expected, "case: {name}");
    }
}

#[test]
fn min_pause_moves_the_trigger_to_the_end_of_the_pause() {
    let cfg = Config {
        min_pause: SimDuration::from_millis(80),
        ..config(1)
    };
    let (c, out) = run(
        cfg,
        &[
            In::Periodic(0, 0, RUNNING),
            In::Write(1, 0, false),
            In::Ack(0, 1),
            In::Finalized(40, 1),
            In::Periodic(100, 0, RUNNING),
            In::Periodic(120, 1, RUNNING),
        ],
    );
    assert_eq!(
        out[4],
        vec![
            ArmPeriodic {
                at: t(200),
                generation: 0
            },
            Skipped(Skip::MinPause),
            ArmPeriodic {
                at: t(120),
                generation: 1
            },
        ]
    );
    assert_eq!(out[5], triggered(120, 1, 2));
    assert_eq!(c.periodic_generation, 1);
}

/// A checkpoint whose every task had ended its input is no final
/// checkpoint of the job: tasks exit on their own (FLIP-147), and the
/// coordinator goes on triggering until they have.
#[test]
fn checkpoints_go_on_after_every_input_ended() {
    let (c, out) = run(
        config(2),
        &[
            In::Periodic(0, 0, RUNNING),
            In::Write(1, 0, true),
            In::Write(1, 1, true),
            In::Ack(0, 1),
            In::Ack(1, 1),
            In::Finalized(10, 1),
            In::Periodic(100, 0, RUNNING),
        ],
    );
    assert_eq!((c.finishing, c.final_id), (false, None));
    assert_eq!(c.latest().map(|l| l.id), Some(1));
    assert_eq!(out.last(), Some(&triggered(100, 0, 2)));
}

/// A periodic trigger at 0 starts checkpoint 1, the one at 100 finds it
/// pending and is queued; checkpoint 1 completes at 150.
fn queued_then_completed(cfg: Config, then: &[In]) -> (Coordinator, Vec<Vec<Action>>) {
    let mut steps = vec![
        In::Periodic(0, 0, RUNNING),
        In::Periodic(100, 0, RUNNING),
        In::Write(1, 0, false),
        In::Ack(0, 1),
        In::Finalized(150, 1),
    ];
    steps.extend_from_slice(then);
    run(cfg, &steps)
}

#[test]
fn a_queued_request_runs_when_the_pending_checkpoint_ends() {
    let (c, out) = queued_then_completed(config(1), &[In::RunQueued(150, RUNNING)]);
    assert_eq!(
        out[1],
        vec![
            ArmPeriodic {
                at: t(200),
                generation: 0
            },
            Queued
        ]
    );
    assert_eq!(out[5], triggered(150, 0, 2)[1..].to_vec());
    assert!(c.queued.is_empty());
}

#[test]
fn a_queued_request_keeps_the_minimum_pause() {
    let cfg = Config {
        min_pause: SimDuration::from_millis(80),
        ..config(1)
    };
    let (c, out) = queued_then_completed(cfg, &[In::RunQueued(150, RUNNING)]);
    assert_eq!(
        out[5],
        vec![
            Skipped(Skip::MinPause),
            ArmPeriodic {
                at: t(230),
                generation: 1
            },
        ]
    );
    assert!(c.queued.is_empty(), "the request failed; the trigger moved");
}

#[test]
fn a_queued_request_waits_for_a_due_savepoint_and_dies_with_a_failover() {
    let savepoint_due = Facts {
        savepoint_due: true,
        ..RUNNING
    };
    let (c, out) = queued_then_completed(
        config(1),
        &[
            In::RunQueued(150, savepoint_due),
            In::AbortAll(160, Outcome::Failover),
            In::RunQueued(170, RUNNING),
        ],
    );
    assert_eq!(out[5], vec![]);
    assert_eq!(out[7], vec![]);
    assert!(c.queued.is_empty());
}

#[test]
fn mutant_queued_trigger_skips_min_pause_triggers_inside_the_pause() {
    let cfg = Config {
        min_pause: SimDuration::from_millis(80),
        mutants: Mutants::NONE.with(crate::mutant::Mutant::QueuedTriggerSkipsMinPause),
        ..config(1)
    };
    let (_, out) = queued_then_completed(cfg, &[In::RunQueued(150, RUNNING)]);
    assert_eq!(out[5], triggered(150, 0, 2)[1..].to_vec());
}
