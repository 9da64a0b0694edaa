//! Scenario -> File: every key written, so a file means the same whatever
//! the defaults become.

use super::crash_tables::{targeted, window_keys};
use super::*;

/// Each of `items` through `f`.
fn all<T, U>(items: &[T], f: impl Fn(&T) -> U) -> Vec<U> {
    items.iter().map(f).collect()
}

impl From<&Scenario> for File {
    fn from(s: &Scenario) -> File {
        File::from(&**s)
    }
}

/// Operators by name, as files name them. An index past the operators
/// (never in a validated scenario) is written as `#<index>`, which
/// validation refuses.
struct Names<'a>(&'a [crate::scenario::OperatorSpec]);

impl Names<'_> {
    fn name(&self, id: OperatorId) -> String {
        match self.0.get(id.0 as usize) {
            Some(op) => op.id.clone(),
            None => format!("#{}", id.0),
        }
    }

    /// A subtask: `"op[i]"`.
    fn task(&self, id: OperatorId, subtask: u32) -> Option<String> {
        Some(format!("{}[{subtask}]", self.name(id)))
    }
}

impl From<&ScenarioData> for File {
    fn from(s: &ScenarioData) -> File {
        let names = Names(&s.operators);
        let (n, c) = (&s.network, &s.checkpoint);
        File {
            version: Some(FORMAT_VERSION.into()),
            name: Some(s.name.clone()),
            description: s.description.clone(),
            max_parallelism: s.max_parallelism.into(),
            operator_chaining: s.operator_chaining,
            network: Network {
                buffer_size: n.buffer_size.map(Bytes),
                ..n.into()
            },
            operators: all(&s.operators, operator),
            edges: all(&s.edges, |e| edge(e, &names)),
            checkpoint: Checkpoint {
                interval: Interval(c.interval),
                max_state_size: (c.storage == StorageKind::Memory)
                    .then_some(Bytes(c.max_state_size)),
                file_merging_max_file_size: c
                    .file_merging
                    .then_some(Bytes(c.file_merging_max_file_size)),
                ..c.into()
            },
            faults: faults(&s.faults, &names),
            limits: (&s.limits).into(),
            expect: s.expect.clone(),
            replay: Replay {
                crash_points: s
                    .replay
                    .crash_points
                    .iter()
                    .filter_map(|&(o, n)| names.task(o, n))
                    .collect(),
                ..(&s.replay).into()
            },
            swarm: s.swarm.as_ref().map(swarm),
            savepoints: <Vec<Savepoint>>::write(&s.savepoints),
            cluster: s.cluster.as_ref().map(Into::into),
            cancel_at: s.cancel_at.map(Duration::from),
        }
    }
}

fn edge(e: &crate::scenario::EdgeSpec, names: &Names) -> Edge {
    Edge {
        from: Some(names.name(e.from)),
        to: Some(names.name(e.to)),
        partitioning: Some(e.partitioning),
        chain: e.chain,
        feedback: e.feedback,
        side_output: match e.side_output_late {
            true => "late".to_string(),
            false => String::new(),
        },
        latency_min: e.latency_min.map(Duration),
        latency_max: e.latency_max.map(Duration),
        buffer_credits: e.buffer_credits.map(i64::from),
        buffer_size: e.buffer_size.map(Bytes),
    }
}

/// `[faults]` and its tables, operators and subtasks by name.
fn faults(f: &FaultSpec, names: &Names) -> Faults {
    let task = |o: OperatorId, n: u32| names.task(o, n);
    Faults {
        crashes: all(&f.crashes, |c| crash(c, names)),
        worker_crashes: all(&f.worker_crashes, |w| worker_crash(w, names)),
        restart: restart(&f.restart),
        slow_tasks: all(&f.slow_tasks, |st| {
            let (from, until, on, checkpoint, of, delay, duration) =
                window_keys(st.from, st.until, &st.trigger, &task);
            SlowTask {
                task: task(st.operator, st.subtask),
                from,
                until,
                factor: st.factor.into(),
                on,
                checkpoint,
                of,
                delay,
                duration,
            }
        }),
        latency_spikes: all(&f.latency_spikes, |sp| {
            let (from, until, on, checkpoint, of, delay, duration) =
                window_keys(sp.from, sp.until, &sp.trigger, &task);
            Spike {
                from,
                until,
                extra: Some(Duration(sp.extra)),
                edge: sp
                    .edge
                    .map(|(a, b)| format!("{}->{}", names.name(a), names.name(b))),
                worker: sp.worker.map(i64::from),
                on,
                checkpoint,
                of,
                delay,
                duration,
            }
        }),
        partitions: all(&f.partitions, |p| {
            let (from, until, on, checkpoint, of, delay, duration) =
                window_keys(p.from, p.until, &p.trigger, &task);
            Partition {
                from,
                until,
                workers: Some(p.workers.iter().map(|&w| i64::from(w)).collect()),
                on,
                checkpoint,
                of,
                delay,
                duration,
            }
        }),
        random: f.random.as_ref().map(|r| Random {
            operators: r.operators.iter().map(|&o| names.name(o)).collect(),
            ..r.into()
        }),
        coordinator: f.coordinator.as_ref().map(|c| Coordinator {
            crash_on: all(&c.crash_on, |tr| CoordinatorCrash {
                on: Some(tr.on),
                checkpoint: tr.checkpoint.map(int),
                of: tr.of.and_then(|(o, n)| task(o, n)),
                delay: Some(Duration(tr.delay)),
            }),
            ..c.into()
        }),
        random_workers: f.random_workers.as_ref().map(|r| Random {
            workers: r.workers.iter().map(|&w| i64::from(w)).collect(),
            ..r.into()
        }),
        storage_failures: all(&f.storage_failures, |x| targeted(x, &task)),
        lost_notifications: all(&f.lost_notifications, |x| targeted(x, &task)),
        broker: all(&f.broker, broker_fault),
        ..f.into()
    }
}

/// A `[[faults.broker]]` table.
fn broker_fault(w: &crate::scenario::BrokerWindow) -> BrokerFaults {
    use crate::scenario::{BrokerFault, BrokerFaultKind};
    let (fault, extra) = match w.fault {
        BrokerFault::Down => (BrokerFaultKind::Down, None),
        BrokerFault::Lost => (BrokerFaultKind::Lost, None),
        BrokerFault::Slow(d) => (BrokerFaultKind::Slow, Some(Duration(d))),
    };
    BrokerFaults {
        from: Some(w.from.into()),
        until: Some(w.until.into()),
        fault: Some(fault),
        extra,
        role: (w.role != crate::scenario::BrokerRole::Leader).then_some(w.role),
    }
}

/// A `[[faults.crashes]]` table: at a time, or after an event.
fn crash(c: &CrashSpec, names: &Names) -> Crash {
    match &c.trigger {
        None => Crash {
            at: Some(Duration::from(c.at)),
            task: names.task(c.operator, c.subtask),
            ..Crash::default()
        },
        Some(tr) => Crash {
            task: names.task(c.operator, c.subtask),
            on: Some(tr.on),
            checkpoint: tr.checkpoint.map(int),
            of: tr.of.and_then(|(o, n)| names.task(o, n)),
            delay: Some(Duration(tr.delay)),
            repeat: c.repeat.then_some(true),
            ..Crash::default()
        },
    }
}

/// A `[[faults.worker_crashes]]` table.
fn worker_crash(w: &WorkerCrashSpec, names: &Names) -> WorkerCrash {
    let trigger = w.trigger.as_ref();
    WorkerCrash {
        at: w.trigger.is_none().then(|| Duration::from(w.at)),
        worker: Some(w.worker.into()),
        on: trigger.map(|tr| tr.on),
        checkpoint: trigger.and_then(|tr| tr.checkpoint.map(int)),
        of: trigger
            .and_then(|tr| tr.of)
            .and_then(|(o, n)| names.task(o, n)),
        delay: trigger.map(|tr| Duration(tr.delay)),
    }
}

fn operator(op: &crate::scenario::OperatorSpec) -> Operator {
    let mut written = Operator {
        id: Some(op.id.clone()),
        parallelism: Some(op.parallelism.into()),
        cost: Some(Duration(op.cost)),
        cost_jitter: Duration(op.cost_jitter),
        chaining: op.chaining,
        ..write_kind(&op.kind)
    };
    // Session windows have a gap and no size or slide; others no gap.
    if let OperatorKind::EventTimeWindow { session_gap, .. } = op.kind {
        match session_gap > crate::engine::SimDuration::ZERO {
            true => (written.window_size, written.window_slide) = (None, None),
            false => written.session_gap = None,
        }
    }
    // A source's lengths: one for all partitions, or one each.
    if let OperatorKind::Source(src) = &op.kind {
        match src.partition_records.is_empty() {
            true => written.partition_records = None,
            false => written.records_per_partition = None,
        }
        match src.partition_rates.is_empty() {
            true => written.partition_rates = None,
            false => written.records_per_second = None,
        }
    }
    written
}

fn restart(r: &RestartStrategy) -> Restart {
    match *r {
        RestartStrategy::FixedDelay => Restart::default(),
        RestartStrategy::ExponentialDelay {
            max_backoff,
            multiplier_permille,
            reset_threshold,
        } => Restart {
            strategy: Strategy::ExponentialDelay,
            max_backoff: Some(Duration(max_backoff)),
            backoff_multiplier: Some(f64::from(multiplier_permille) / 1000.0),
            reset_threshold: Some(Duration(reset_threshold)),
            ..Restart::default()
        },
        RestartStrategy::FailureRate {
            max_failures,
            interval,
        } => Restart {
            strategy: Strategy::FailureRate,
            max_failures: Some(max_failures.into()),
            interval: Some(Duration(interval)),
            ..Restart::default()
        },
    }
}

fn swarm(s: &SwarmSpec) -> Swarm {
    s.map(
        &mut (),
        |_, _, &(a, b)| Some(vec![duration_text(a), duration_text(b)]),
        |_, _, &(a, b)| Some(vec![a.into(), b.into()]),
    )
}
