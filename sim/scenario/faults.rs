//! Validation of `[faults]` and its tables: crashes of subtasks, workers
//! and the coordinator, random crash tables, the restart strategy, storage
//! and notification faults, latency spikes, partitions and slow tasks.

use super::schema::{self, name_of, Duration, File, Random, Restart, Strategy, StrategyDefaults};
use super::validate::{dense_id, help, time, Validator};
use super::{
    CoordinatorFaults, CrashSpec, CrashTrigger, FaultSpec, LatencySpike, OperatorId, Partition,
    RandomCrashes, RestartStrategy, SlowTask, TargetedFault, TriggerEvent, WorkerCrash,
};
use crate::engine::{SimDuration, SimTime};

/// The keys that time a crash, as a crash table writes them.
struct TriggerKeys<'a> {
    at: Option<Duration>,
    on: Option<TriggerEvent>,
    checkpoint: Option<i64>,
    of: &'a Option<String>,
    delay: Option<Duration>,
}

impl<'a> TriggerKeys<'a> {
    fn of(
        at: Option<Duration>,
        on: Option<TriggerEvent>,
        checkpoint: &Option<i64>,
        of: &'a Option<String>,
        delay: Option<Duration>,
    ) -> TriggerKeys<'a> {
        TriggerKeys {
            at,
            on,
            checkpoint: *checkpoint,
            of,
            delay,
        }
    }
}

impl Validator<'_, '_> {
    /// `[faults]` and its tables; `workers` is the cluster's, if it has one.
    pub(super) fn faults(&mut self, f: &File, workers: Option<u32>) -> FaultSpec {
        let x = &f.faults;
        let (worker_crashes, random_workers) = self.worker_crashes(x, workers);
        let latency_spikes = self.latency_spikes(x, workers);
        let partitions = self.partitions(x, workers);
        self.at = "faults".into();
        let spec = x.check(self);
        let (crashes, random) = self.task_crashes(x);
        let restart = self.nested("restart", Some(&x.restart), Self::restart);
        let notifications =
            self.nested("notifications", x.notifications.as_ref(), |v, n| n.check(v));
        let events = self.nested("operator_events", x.operator_events.as_ref(), |v, e| {
            e.check(v)
        });
        let storage = self.nested("storage", x.storage.as_ref(), |v, s| {
            let mut spec = s.check(v);
            let crashes = s.crashes.iter().enumerate();
            let crashes = crashes.filter_map(|(i, t)| v.text_dur(&format!("crashes[{i}]"), t));
            spec.crashes = crashes.map(time).collect();
            spec
        });
        let coordinator = self.coordinator(x);
        let slow_tasks = self.slow_tasks(x);
        let broker = self.broker_faults(&x.broker);
        self.at = "faults".into();
        let storage_failures = self.targeted("faults.storage_failures", &x.storage_failures);
        let lost_notifications = self.targeted("faults.lost_notifications", &x.lost_notifications);
        FaultSpec {
            storage_failures,
            lost_notifications,
            crashes,
            random,
            restart: restart.unwrap_or_default(),
            notifications,
            operator_events: events,
            storage,
            coordinator,
            slow_tasks,
            worker_crashes,
            random_workers,
            latency_spikes,
            partitions,
            broker,
            ..spec
        }
    }

    /// `[[faults.worker_crashes]]` and `[faults.random_workers]` (both need
    /// a cluster, `workers`).
    fn worker_crashes(
        &mut self,
        x: &schema::Faults,
        workers: Option<u32>,
    ) -> (Vec<WorkerCrash>, Option<RandomCrashes>) {
        let worker_crashes = self.each("faults.worker_crashes", &x.worker_crashes, |v, w| {
            let keys = TriggerKeys::of(w.at, w.on, &w.checkpoint, &w.of, w.delay);
            let trigger = v.crash_trigger(&keys);
            let at = v.at_or_on(&keys);
            let workers = v.cluster_for(workers, "worker crashes need")?;
            let worker = v.required("worker", &w.worker).copied();
            let worker = worker.and_then(|n| v.worker(n, workers));
            Some(WorkerCrash {
                at: at?,
                worker: worker?,
                trigger: trigger?,
            })
        });
        self.at = "faults".into();
        let random_workers = self.nested("random_workers", x.random_workers.as_ref(), |v, r| {
            let n = v.cluster_for(workers, "worker crashes need");
            let mut spec = v.random(r, Some("operators"))?;
            for (i, &w) in r.workers.iter().enumerate() {
                let key = format!("workers[{i}]");
                let range = Some(0..=i64::from(n.unwrap_or(u32::MAX)) - 1);
                spec.workers.extend(v.checked::<u32>(&key, w, range));
            }
            Some(spec)
        });
        let random_workers = random_workers.flatten();
        (worker_crashes, random_workers)
    }

    /// `[[faults.latency_spikes]]`.
    fn latency_spikes(&mut self, x: &schema::Faults, workers: Option<u32>) -> Vec<LatencySpike> {
        self.each("faults.latency_spikes", &x.latency_spikes, |v, s| {
            let keys = TriggerKeys::of(None, s.on, &s.checkpoint, &s.of, s.delay);
            let (window, trigger) = v.fault_window(s.from, &s.until, s.duration, &keys);
            let extra = v.required_dur("extra", &s.extra);
            let edge = match &s.edge {
                None => Some(None),
                Some(text) => v.spike_edge(text).map(Some),
            };
            let worker = match (s.worker, workers) {
                (None, _) => Some(None),
                (Some(_), None) => {
                    let message = "a latency spike on a worker needs a [cluster] section";
                    v.report("", message, None);
                    None
                }
                (Some(n), Some(workers)) => v.worker(n, workers).map(Some),
            };
            let ((from, until), extra, edge, worker) = (window?, extra?, edge?, worker?);
            Some(LatencySpike {
                from,
                until,
                extra,
                edge,
                worker,
                trigger: trigger?,
            })
        })
    }

    /// `[[faults.partitions]]` (needs a cluster, `workers`).
    fn partitions(&mut self, x: &schema::Faults, workers: Option<u32>) -> Vec<Partition> {
        self.each("faults.partitions", &x.partitions, |v, p| {
            let keys = TriggerKeys::of(None, p.on, &p.checkpoint, &p.of, p.delay);
            let (window, trigger) = v.fault_window(p.from, &p.until, p.duration, &keys);
            let workers = v.cluster_for(workers, "a partition needs")?;
            let list = v.required("workers", &p.workers)?;
            let mut cut: Vec<u32> = Vec::new();
            let mut bad = false;
            for &w in list {
                match u32::try_from(w).ok().filter(|&w| w < workers) {
                    Some(w) if !cut.contains(&w) => cut.push(w),
                    Some(_) => {}
                    None => {
                        let last = workers - 1;
                        let message = format!(
                            "worker {w} does not exist: the cluster has workers 0 to {last}"
                        );
                        v.report("workers", message, None);
                        bad = true;
                    }
                }
            }
            if !bad && (cut.is_empty() || cut.len() as u64 >= u64::from(workers)) {
                let message = "a partition cuts off some workers, not none or all";
                v.report("workers", message, None);
                return None;
            }
            let (from, until) = window.filter(|_| !bad)?;
            cut.sort_unstable();
            Some(Partition {
                from,
                until,
                workers: cut,
                trigger: trigger?,
            })
        })
    }

    /// `[[faults.crashes]]` and `[faults.random]`.
    fn task_crashes(&mut self, x: &schema::Faults) -> (Vec<CrashSpec>, Option<RandomCrashes>) {
        let crashes = self.each("faults.crashes", &x.crashes, |v, c| {
            let task = v.task(&c.task);
            let keys = TriggerKeys::of(c.at, c.on, &c.checkpoint, &c.of, c.delay);
            let trigger = v.crash_trigger(&keys);
            let at = v.at_or_on(&keys);
            let repeat = c.repeat.unwrap_or(false);
            if repeat && (c.on.is_none() || c.checkpoint.is_some()) {
                let help = help(
                    "repeat needs `on` without `checkpoint`: an event that happens again in every attempt",
                );
                v.report("repeat", "`repeat` needs a crash after an event of any checkpoint", help);
                return None;
            }
            let (operator, subtask) = task?;
            Some(CrashSpec {
                at: at?,
                operator,
                subtask,
                trigger: trigger?,
                repeat,
            })
        });
        self.at = "faults".into();
        let random = self
            .nested("random", x.random.as_ref(), |v, r| {
                let mut spec = v.random(r, Some("workers"))?;
                for (i, op) in r.operators.iter().enumerate() {
                    spec.operators
                        .extend(v.resolve(op, &format!("operators[{i}]")).map(dense_id));
                }
                Some(spec)
            })
            .flatten();
        (crashes, random)
    }

    /// `[faults.coordinator]`: its keys, crash times, random crashes and
    /// crashes after events.
    fn coordinator(&mut self, x: &schema::Faults) -> Option<CoordinatorFaults> {
        self.nested("coordinator", x.coordinator.as_ref(), |v, c| {
            let mut spec = c.check(v);
            let crashes = c.crashes.iter().enumerate();
            let crashes = crashes.filter_map(|(i, t)| v.text_dur(&format!("crashes[{i}]"), t));
            spec.crashes = crashes.map(time).collect();
            spec.random = v
                .nested("random", c.random.as_ref(), |v, r| v.random(r, None))
                .flatten();
            spec.crash_on = v.each("faults.coordinator.crash_on", &c.crash_on, |v, x| {
                let on = *v.required("on", &x.on)?;
                let keys = TriggerKeys::of(None, Some(on), &x.checkpoint, &x.of, x.delay);
                v.crash_trigger(&keys)?
            });
            v.at = "faults.coordinator".into();
            spec
        })
    }

    /// `[[faults.slow_tasks]]`.
    fn slow_tasks(&mut self, x: &schema::Faults) -> Vec<SlowTask> {
        self.each("faults.slow_tasks", &x.slow_tasks, |v, s| {
            let keys = TriggerKeys::of(None, s.on, &s.checkpoint, &s.of, s.delay);
            let (window, trigger) = v.fault_window(s.from, &s.until, s.duration, &keys);
            let d = schema::SlowTask::default();
            let factor = v.int("factor", s.factor, d.factor);
            let (operator, subtask) = v.task(&s.task)?;
            let (from, until) = window?;
            Some(SlowTask {
                operator,
                subtask,
                from,
                until,
                factor,
                trigger: trigger?,
            })
        })
    }

    /// `[[faults.storage_failures]]` or `[[faults.lost_notifications]]`:
    /// `checkpoint` (required, at least 1) and `of`, a subtask.
    fn targeted(&mut self, table: &str, list: &[schema::Targeted]) -> Vec<TargetedFault> {
        self.each(table, list, |v, x| {
            let checkpoint = v.required("checkpoint", &x.checkpoint).copied();
            let checkpoint =
                checkpoint.and_then(|n| v.checked::<u64>("checkpoint", n, Some(1..=i64::MAX)));
            let of = match &x.of {
                None => Some(None),
                Some(_) => v.task_at("of", &x.of).map(Some),
            };
            Some(TargetedFault {
                checkpoint: checkpoint?,
                of: of?,
            })
        })
    }

    /// The cluster's workers, or a problem at the table: "`what` a [cluster] section".
    fn cluster_for(&mut self, workers: Option<u32>, what: &str) -> Option<u32> {
        if workers.is_none() {
            let help = help("add [cluster] with workers and slots_per_worker");
            self.report("", format!("{what} a [cluster] section"), help);
        }
        workers
    }

    /// `worker`: an index below `workers`.
    fn worker(&mut self, n: i64, workers: u32) -> Option<u32> {
        self.checked("worker", n, Some(0..=i64::from(workers) - 1))
    }

    /// A fault's window and trigger: `from` and `until`, or `on` (with its
    /// keys) and `duration`, which then is the window from 0. The keys of
    /// the other way are refused.
    #[allow(clippy::type_complexity)]
    fn fault_window(
        &mut self,
        from: Option<Duration>,
        until: &Option<Duration>,
        duration: Option<Duration>,
        keys: &TriggerKeys,
    ) -> (Option<(SimTime, SimTime)>, Option<Option<CrashTrigger>>) {
        let trigger = self.crash_trigger(keys);
        if keys.on.is_none() {
            let given = [
                ("duration", duration.is_some()),
                ("checkpoint", keys.checkpoint.is_some()),
                ("of", keys.of.is_some()),
                ("delay", keys.delay.is_some()),
            ];
            for (key, _) in given.iter().filter(|k| k.1) {
                let help = help("add on = \"snapshot\" (or another event), or remove it");
                self.report(
                    key,
                    format!("`{key}` applies only to a window with `on`"),
                    help,
                );
            }
            return (self.window(from.unwrap_or_default(), until), trigger);
        }
        for (key, given) in [("from", from.is_some()), ("until", until.is_some())] {
            if given {
                let help = help(
                    "with `on`, the window starts `delay` after the event and lasts `duration`",
                );
                self.report(key, format!("`{key}` and `on` cannot both be given"), help);
            }
        }
        let length = self.required_dur("duration", &duration);
        if length == Some(SimDuration::ZERO) {
            self.report("duration", "duration must be greater than 0", None);
            return (None, trigger);
        }
        let window = length.map(|d| (SimTime::ZERO, time(d)));
        (
            window.filter(|_| from.is_none() && until.is_none()),
            trigger,
        )
    }

    /// A `from`/`until` window: `until` is required and after `from`.
    pub(super) fn window(
        &mut self,
        from: Duration,
        until: &Option<Duration>,
    ) -> Option<(SimTime, SimTime)> {
        let from = self.bounded("from", from.0);
        let until = self.required_dur("until", until);
        let ordered = self.after(("from", from), ("until", until));
        Some((time(from?), time(until?))).filter(|_| ordered)
    }

    /// The later of two times (a key and its value, if known) after the
    /// earlier, or a problem at the later; `false` only then.
    fn after(
        &mut self,
        earlier: (&str, Option<SimDuration>),
        later: (&str, Option<SimDuration>),
    ) -> bool {
        let ((a, Some(from)), (b, Some(until))) = (earlier, later) else {
            return true;
        };
        if until <= from {
            self.report(b, format!("{b} ({until}) must be after {a} ({from})"), None);
        }
        until > from
    }

    /// `edge = "from->to"` of a latency spike.
    fn spike_edge(&mut self, text: &str) -> Option<(OperatorId, OperatorId)> {
        let Some((a, b)) = text.split_once("->") else {
            let help = help("write e.g. edge = \"split->count\"");
            self.report("edge", format!("edge `{text}` is not `from->to`"), help);
            return None;
        };
        let (a, b) = (
            self.resolve(a.trim(), "edge"),
            self.resolve(b.trim(), "edge"),
        );
        Some((dense_id(a?), dense_id(b?)))
    }

    /// A crash's time: `at`, or a placeholder with `on` (the trigger keys
    /// without `on`, and `at` with it, are refused).
    fn at_or_on(&mut self, c: &TriggerKeys) -> Option<SimTime> {
        match (&c.on, c.at) {
            (Some(_), Some(_)) => {
                let help = help("a crash happens at a time or after an event: remove one");
                self.report("at", "`at` and `on` cannot both be given", help);
                None
            }
            (Some(_), None) => Some(SimTime::ZERO),
            (None, _) => {
                for key in ["checkpoint", "of", "delay"] {
                    let given = match key {
                        "checkpoint" => c.checkpoint.is_some(),
                        "of" => c.of.is_some(),
                        _ => c.delay.is_some(),
                    };
                    if given {
                        let help = help("add on = \"snapshot\" (or another event), or remove it");
                        let message = format!("`{key}` applies only to a crash with `on`");
                        self.report(key, message, help);
                    }
                }
                self.required_dur("at", &c.at).map(time)
            }
        }
    }

    /// A crash's `on`, `checkpoint`, `of` and `delay`: `Some(None)` for a
    /// crash at a time, `None` after a problem.
    fn crash_trigger(&mut self, c: &TriggerKeys) -> Option<Option<CrashTrigger>> {
        let Some(on) = c.on else {
            return Some(None);
        };
        let checkpoint = match c.checkpoint {
            Some(n) => Some(self.checked::<u32>("checkpoint", n, None)?),
            None => None,
        };
        if checkpoint.is_some() && matches!(on, TriggerEvent::Replay) {
            let help = help(
                "a replay follows a restore, whichever checkpoint it was: remove `checkpoint`",
            );
            self.report(
                "checkpoint",
                "`checkpoint` does not apply to on = \"replay\"",
                help,
            );
            return None;
        }
        let of = match &c.of {
            Some(_) if !on.is_a_tasks() => {
                let message = format!(
                    "`of` does not apply to on = \"{}\": it is not one task's event",
                    name_of(&on)
                );
                self.report("of", message, help("remove `of`"));
                return None;
            }
            Some(_) => Some(self.task_at("of", c.of)?),
            None => None,
        };
        let delay = self.dur("delay", c.delay, Duration::default());
        Some(Some(CrashTrigger {
            on,
            checkpoint: checkpoint.map(u64::from),
            of,
            delay,
        }))
    }

    /// The required `task = "op[n]"`: an operator and one of its subtasks.
    fn task(&mut self, task: &Option<String>) -> Option<(OperatorId, u32)> {
        self.task_at("task", task)
    }

    /// The required task named at `key`.
    pub(super) fn task_at(
        &mut self,
        key: &str,
        task: &Option<String>,
    ) -> Option<(OperatorId, u32)> {
        let text = self.required(key, task)?;
        let parsed = text
            .strip_suffix(']')
            .and_then(|inner| inner.rsplit_once('['))
            .and_then(|(op, n)| Some((op, n.parse::<u32>().ok()?)))
            .filter(|(op, _)| !op.is_empty());
        let Some((name, subtask)) = parsed else {
            let message =
                format!("task `{text}` is not an operator id followed by a subtask index");
            let help = help("write e.g. task = \"count[0]\" (subtasks are numbered from 0)");
            self.report(key, message, help);
            return None;
        };
        let operator = self.resolve(name, key)?;
        let parallelism = self.ops[operator].parallelism?;
        if subtask >= parallelism {
            let message = format!(
                "task `{text}` does not exist: operator `{name}` has parallelism {parallelism}"
            );
            let help = format!("subtasks of `{name}` are numbered 0 to {}", parallelism - 1);
            self.report(key, message, Some(help));
            return None;
        }
        Some((dense_id(operator), subtask))
    }

    /// A random crash table (the current one).
    /// A random crash table (the current one); `foreign`: a key that does
    /// not apply to this table, refused when written (`workers` is for
    /// worker crashes, `operators` for task crashes, neither for the
    /// coordinator's).
    fn random(&mut self, r: &Random, foreign: Option<&str>) -> Option<RandomCrashes> {
        let written = |key: &str| match key {
            "operators" => !r.operators.is_empty(),
            _ => !r.workers.is_empty(),
        };
        let foreign: Vec<&str> = match (foreign, self.at.as_str()) {
            (_, "faults.coordinator.random") => vec!["operators", "workers"],
            (Some(k), _) => vec![k],
            (None, _) => Vec::new(),
        };
        for key in foreign.into_iter().filter(|k| written(k)) {
            let message = format!("`{key}` does not apply to [{}]", self.at);
            let help = match key {
                "operators" => "`operators` restricts [faults.random] to some operators' subtasks",
                _ => "`workers` restricts [faults.random_workers] to some workers",
            };
            self.report(key, message, super::validate::help(help));
        }
        let mean = self.required_dur("mean_interval", &r.mean_interval);
        if mean == Some(SimDuration::ZERO) {
            let message = "mean_interval must be greater than 0";
            self.report("mean_interval", message, None);
        }
        let start = self.bounded("window_start", r.window_start.0);
        let end = self.required_dur("window_end", &r.window_end);
        self.after(("window_start", start), ("window_end", end));
        let spec = r.check(self);
        Some(RandomCrashes {
            mean_interval: mean?,
            window_start: time(start?),
            window_end: time(end?),
            ..spec
        })
    }

    /// `[faults.restart]`; keys of another strategy are mistakes.
    fn restart(&mut self, r: &Restart) -> RestartStrategy {
        use Strategy::{ExponentialDelay as Exp, FailureRate as Rate};
        let keys = [
            ("max_backoff", Exp, r.max_backoff.is_some()),
            ("backoff_multiplier", Exp, r.backoff_multiplier.is_some()),
            ("reset_threshold", Exp, r.reset_threshold.is_some()),
            ("max_failures", Rate, r.max_failures.is_some()),
            ("interval", Rate, r.interval.is_some()),
        ];
        for (key, owner, _) in keys.into_iter().filter(|k| k.2 && k.1 != r.strategy) {
            let (owner, strategy) = (name_of(&owner), name_of(&r.strategy));
            let message = format!("{key} belongs to the {owner} restart strategy, not {strategy}");
            let help = format!("remove {key}, or set strategy = \"{owner}\"");
            self.report(key, message, Some(help));
        }
        let d = StrategyDefaults::default();
        match r.strategy {
            Strategy::FixedDelay => RestartStrategy::FixedDelay,
            Exp => {
                let multiplier_permille = match r.backoff_multiplier {
                    Some(m) if !(1.0..=1000.0).contains(&m) => {
                        let message = format!("backoff_multiplier must lie in 1..=1000, not {m}");
                        self.report("backoff_multiplier", message, None);
                        d.multiplier_permille
                    }
                    Some(m) => (m * 1000.0).round() as u32,
                    None => d.multiplier_permille,
                };
                RestartStrategy::ExponentialDelay {
                    max_backoff: self.dur("max_backoff", r.max_backoff, d.max_backoff),
                    multiplier_permille,
                    reset_threshold: self.dur(
                        "reset_threshold",
                        r.reset_threshold,
                        d.reset_threshold,
                    ),
                }
            }
            Rate => RestartStrategy::FailureRate {
                max_failures: self.int("max_failures", r.max_failures, d.max_failures),
                interval: self.positive("interval", r.interval.unwrap_or(d.interval), d.interval),
            },
        }
    }
}
