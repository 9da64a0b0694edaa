//! Swarm testing (as FoundationDB and TigerBeetle do it): besides its input,
//! network and faults, each seed draws its own *configuration* — latencies,
//! buffer sizes and credits, checkpoint interval and timeout, operator costs,
//! crash rate, count and window — within declared ranges, so that one sweep
//! covers many regimes instead of one.
//!
//! Draws come from the seed's own `Swarm` stream, so a seed's configuration
//! is as replayable as its run, and independent of the other streams: the
//! same seed gets the same input whatever configuration it draws. Each knob
//! takes its range's minimum with probability 1/4, its maximum with 1/4, and
//! a uniform value otherwise (extremes are where bugs live).

use crate::engine::{SimDuration, SimRng, SimTime, Stream};
use crate::scenario::{
    check, CommitterPlacement, FileMerging, FlinkVersion, InputOrder, RandomCrashes, Scenario,
    ScenarioData, ScenarioErrors, StateBackend, StorageKind, SwarmSpec, MAX_BUFFER_RECORDS,
    MAX_DURATION,
};
use serde::{Deserialize, Serialize};
use std::fmt;

/// `t`, or the longest time a scenario may hold if `t` lies past it: a draw
/// stays a scenario the parser accepts.
fn at_most_max(t: u64) -> SimTime {
    SimTime(t.min(MAX_DURATION.0))
}

/// The configuration a seed drew: `(knob, value)` in draw order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwarmDraw {
    pub knobs: Vec<(String, String)>,
}

impl fmt::Display for SwarmDraw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.knobs.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{k}={v}")?;
        }
        Ok(())
    }
}

/// A draw that made the scenario invalid (never run): what was drawn, and
/// what validation said of the result.
#[derive(Debug)]
pub struct InvalidDraw {
    pub draw: SwarmDraw,
    pub errors: ScenarioErrors,
}

impl fmt::Display for InvalidDraw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the swarm draw `{}` makes the scenario invalid:\n{}",
            self.draw, self.errors
        )
    }
}

impl std::error::Error for InvalidDraw {}

/// The ranges `--swarm` uses for a scenario without a `[swarm]` table:
/// around the scenario's own values. The checkpoint timeout is left alone
/// (too short a timeout makes every checkpoint expire: a configuration
/// error, not a finding: drawn down to a quarter of the scenario's, but not
/// below four intervals, it still ended 12 of 200 seeds of `backpressure`
/// in a restart loop of expiring checkpoints). Crashes stay at most three,
/// and the restart limit is drawn last, from one to the scenario's, so that
/// some seeds see the restart strategy give up (a failed job is judged for
/// duplicates, not for liveness). Every range is ordered and stays within
/// the limits on values, whatever the scenario holds.
pub fn default_ranges(s: &Scenario) -> SwarmSpec {
    let n = &s.network;
    let cp = &s.checkpoint;
    let interval = cp.interval.unwrap_or(SimDuration::from_millis(100));
    let window = s
        .faults
        .random
        .as_ref()
        .map_or(SimDuration::from_secs(2), |r| SimDuration(r.window_end.0));
    let max_crashes = 3.min(s.faults.max_restarts);
    // `[lo, hi]` with `hi` capped at the longest duration, and never below `lo`.
    let range =
        |lo: SimDuration, hi: u64| Some((lo, SimDuration(hi.min(MAX_DURATION.0).max(lo.0))));
    let records_lo = (n.buffer_records / 4).max(1);
    SwarmSpec {
        enabled: true,
        latency_max: range(
            n.latency_min.max(SimDuration::from_micros(1)),
            n.latency_max.0.max(1_000).saturating_mul(20),
        ),
        buffer_records: Some((
            records_lo,
            n.buffer_records
                .saturating_mul(2)
                .min(MAX_BUFFER_RECORDS)
                .max(records_lo),
        )),
        buffer_credits: Some((1, n.buffer_credits.saturating_mul(4))),
        floating_buffers: Some((0, n.floating_buffers.saturating_mul(2).max(8))),
        // From a quarter of the interval, but not below 1 ms unless the
        // scenario's own interval is shorter.
        interval: cp.interval.and_then(|iv| {
            range(
                SimDuration((iv.0 / 4).max(iv.0.min(1_000_000))),
                iv.0.saturating_mul(4),
            )
        }),
        timeout: None,
        cost_percent: Some((50, 200)),
        crash_mean_interval: range(interval, interval.0.saturating_mul(10)),
        max_crashes: Some((0, max_crashes)),
        crash_window_end: Some((SimDuration(window.0 / 2), window)),
        notification_loss_percent: None,
        // Only where an operator coordinator sends events.
        operator_event_loss_percent: s
            .operators
            .iter()
            .any(|o| {
                matches!(&o.kind, crate::scenario::OperatorKind::Source(src)
                    if src.split_assignment == crate::scenario::SplitAssignment::Enumerator)
            })
            .then_some((0, 5)),
        storage_failure_percent: None,
        storage_slow_percent: None,
        coordinator_crashes: None,
        worker_crashes: None,
        latency_spike_extra: None,
        partition_duration: None,
        input_order: Some(InputOrder::ALL.to_vec()),
        during_recovery: Some(vec![false, true]),
        flink_version: Some(FlinkVersion::ALL.to_vec()),
        // Every backend where an operator keeps keyed state.
        state_backend: s.operators.iter().any(|o| o.kind.is_keyed()).then(|| {
            vec![
                StateBackend::Hashmap,
                StateBackend::Incremental,
                StateBackend::Changelog,
            ]
        }),
        // Every setting of file merging, where snapshots go into files.
        file_merging: Some(FileMerging::ALL.to_vec()),
        storage_crashes: Some((0, 2)),
        storage_sync: Some((SimDuration::ZERO, SimDuration::from_millis(1))),
        broker_outage: broker_outage_range(s, interval),
        rpc_latency_max: range(
            cp.rpc_latency,
            cp.rpc_latency.0.saturating_mul(20).max(5_000_000),
        ),
        source_rate: source_rates(s),
        // Where more than one checkpoint may be pending: up to three (or
        // the scenario's own bound, if higher).
        max_concurrent: (cp.interval.is_some() && cp.algorithm.max_concurrent().is_none())
            .then_some((1, cp.max_concurrent.max(3))),
        committer: s
            .operators
            .iter()
            .any(|o| matches!(o.kind, crate::scenario::OperatorKind::SinkCommitter))
            .then(|| CommitterPlacement::ALL.to_vec()),
        // Where the strategy counts restarts and allows more than one.
        max_restarts: (!matches!(
            s.faults.restart,
            crate::scenario::RestartStrategy::FailureRate { .. }
        ) && s.faults.max_restarts > 1)
            .then_some((1, s.faults.max_restarts)),
        ..event_time_ranges(s)
    }
}

/// The event-time and timer knobs' default ranges: the event-time ones
/// where a source emits watermarks, the timer ones where a keyed process
/// function runs (none elsewhere).
fn event_time_ranges(s: &Scenario) -> SwarmSpec {
    let event_time = s.operators.iter().any(|o| {
        o.kind
            .source_spec()
            .is_some_and(|src| src.watermark_interval > SimDuration::ZERO)
    });
    let timers = s
        .operators
        .iter()
        .any(|o| matches!(o.kind, crate::scenario::OperatorKind::KeyedProcess { .. }));
    let aligned = s.operators.iter().any(|o| {
        o.kind
            .source_spec()
            .is_some_and(|src| !src.alignment_group.is_empty())
    });
    SwarmSpec {
        watermark_interval: event_time.then_some((ms(1), ms(200))),
        out_of_orderness: event_time.then_some((SimDuration::ZERO, ms(100))),
        partition_skew: event_time.then_some((SimDuration::ZERO, ms(1000))),
        watermark_bound_percent: event_time.then_some((0, 150)),
        idle_timeout: event_time.then_some((ms(5), ms(500))),
        timer_delay: timers.then_some((SimDuration::ZERO, ms(200))),
        processing_delay: timers.then_some((ms(1), ms(100))),
        // Aligned event time advances by at most the drift per round of
        // reports and announcements: a drift of 20 ms every 50 ms still
        // moves it 200 ms a second.
        alignment_max_drift: aligned.then_some((ms(20), ms(200))),
        alignment_update_interval: aligned.then_some((ms(1), ms(50))),
        ..SwarmSpec::default()
    }
}

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// The default range of `source_rate`: from a rate at which the longest
/// partition takes two seconds (or a quarter of `max_time`, if shorter:
/// about where the crash windows are) to one at which it takes a quarter of
/// a second; none without sources.
fn source_rates(s: &Scenario) -> Option<(u32, u32)> {
    let longest = s
        .operators
        .iter()
        .filter_map(|op| match &op.kind {
            crate::scenario::OperatorKind::Source(src) => {
                (0..src.partitions).map(|p| src.records_of(p)).max()
            }
            _ => None,
        })
        .max()?;
    let quarter = (s.limits.max_time.0 / 4).clamp(1, 2_000_000_000);
    let lo = u128::from(longest) * 1_000_000_000 / u128::from(quarter) + 1;
    let lo = u32::try_from(lo).unwrap_or(u32::MAX).min(1_000_000_000);
    let hi = u32::try_from(longest.saturating_mul(4)).unwrap_or(u32::MAX);
    Some((lo, hi.clamp(lo, 1_000_000_000)))
}

struct Drawer {
    rng: SimRng,
    draw: SwarmDraw,
}

impl Drawer {
    /// Minimum, maximum or uniform in between.
    fn pick(&mut self, lo: u64, hi: u64) -> u64 {
        match self.rng.below(4) {
            0 => lo,
            1 => hi,
            _ => self.rng.between(lo, hi),
        }
    }

    fn duration(&mut self, knob: &str, r: (SimDuration, SimDuration)) -> SimDuration {
        let d = SimDuration(self.pick(r.0 .0, r.1 .0));
        self.draw.knobs.push((knob.to_string(), d.to_string()));
        d
    }

    fn int(&mut self, knob: &str, r: (u32, u32)) -> u32 {
        let v = self.pick(r.0.into(), r.1.into()) as u32;
        self.draw.knobs.push((knob.to_string(), v.to_string()));
        v
    }
}

/// The scenario as seed `seed` configures it within `spec`, validated
/// again, and what it drew; a draw that makes it invalid is an error. The
/// knobs are drawn in a fixed order (a seed's draw depends on it).
pub fn draw(
    s: &Scenario,
    spec: &SwarmSpec,
    seed: u64,
) -> Result<(Scenario, SwarmDraw), InvalidDraw> {
    let mut out = ScenarioData::clone(s);
    let mut d = Drawer {
        rng: SimRng::new(seed, Stream::Swarm),
        draw: SwarmDraw::default(),
    };
    draw_network(&mut out, spec, &mut d);
    draw_checkpoints(&mut out, spec, &mut d);
    draw_costs(&mut out, spec, &mut d);
    draw_random_crashes(&mut out, spec, &mut d);
    draw_fault_kinds(&mut out, spec, &mut d);
    draw_late_knobs(&mut out, spec, &mut d);
    draw_event_time(&mut out, spec, &mut d);
    draw_timers(&mut out, spec, &mut d);
    draw_alignment(&mut out, spec, &mut d);
    draw_storage(&mut out, spec, &mut d);
    draw_broker(&mut out, spec, &mut d);
    match check(&out, &s.name) {
        Ok(valid) => Ok((valid, d.draw)),
        Err(errors) => Err(InvalidDraw {
            draw: d.draw,
            errors,
        }),
    }
}

/// Where a log sink writes, an outage of up to three intervals.
fn broker_outage_range(s: &Scenario, interval: SimDuration) -> Option<(SimDuration, SimDuration)> {
    let writes = (s.operators.iter())
        .any(|o| matches!(o.kind, crate::scenario::OperatorKind::SinkLog { .. }));
    let hi = SimDuration(interval.0.saturating_mul(3).min(MAX_DURATION.0));
    writes.then_some((SimDuration::ZERO, hi))
}

/// A broker fault, drawn last of all: its length (0: none), its start in
/// the crash window (or the first two seconds), its kind (`down`, `lost`,
/// or `slow` by a quarter of its length) and the brokers it hits (the
/// partitions' leaders or the transaction coordinator).
fn draw_broker(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    use crate::scenario::{BrokerFault, BrokerRole, BrokerWindow};
    let Some(r) = spec.broker_outage else {
        return;
    };
    let length = d.duration("broker_outage", r);
    let (start, end) = (out.faults.random.as_ref())
        .map_or((SimTime::ZERO, SimTime(2_000_000_000)), |r| {
            (r.window_start, r.window_end)
        });
    let last = SimDuration(end.0.max(start.0.saturating_add(1)) - 1);
    let from = SimTime(
        d.duration("broker_outage_from", (SimDuration(start.0), last))
            .0,
    );
    let kind = d.int("broker_outage_kind", (0, 2));
    let role = match d.int("broker_outage_role", (0, 1)) {
        0 => BrokerRole::Leader,
        _ => BrokerRole::Coordinator,
    };
    if length > SimDuration::ZERO {
        let fault = match kind {
            0 => BrokerFault::Down,
            1 => BrokerFault::Lost,
            _ => BrokerFault::Slow(SimDuration((length.0 / 4).max(1))),
        };
        let until = at_most_max(from.0.saturating_add(length.0));
        out.faults.broker.push(BrokerWindow {
            from,
            until,
            fault,
            role,
        });
    }
}

/// `[network]`: latency, buffers, credits, floating buffers, input order.
fn draw_network(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let Some(r) = spec.latency_max {
        let max = d.duration("latency_max", r);
        out.network.latency_max = max;
        out.network.latency_min = out.network.latency_min.min(max);
    }
    if let Some(r) = spec.buffer_records {
        out.network.buffer_records = d.int("buffer_records", r);
    }
    if let Some(r) = spec.buffer_credits {
        out.network.buffer_credits = d.int("buffer_credits", r);
    }
    if let Some(r) = spec.floating_buffers {
        out.network.floating_buffers = d.int("floating_buffers", r);
    }
    if let Some(orders) = spec.input_order.as_ref().filter(|o| !o.is_empty()) {
        let order = orders[d.rng.below(orders.len() as u64) as usize];
        d.draw
            .knobs
            .push(("input_order".to_string(), order.name().to_string()));
        out.network.input_order = order;
    }
}

/// `[checkpoint]`: the interval (and with it the first delay) and the
/// timeout.
fn draw_checkpoints(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let (Some(r), Some(_)) = (spec.interval, out.checkpoint.interval) {
        let iv = d.duration("interval", r);
        out.checkpoint.interval = Some(iv);
        out.checkpoint.first_delay = iv;
    }
    if let Some(r) = spec.timeout {
        out.checkpoint.timeout = d.duration("timeout", r);
    }
}

/// Every operator's cost and jitter, scaled by a percentage each.
fn draw_costs(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let Some(r) = spec.cost_percent {
        for (i, op) in out.operators.iter_mut().enumerate() {
            let pct = u64::from(d.int(&format!("cost_percent[{i}]"), r));
            let scale =
                |d: SimDuration| SimDuration((d.0.saturating_mul(pct) / 100).min(MAX_DURATION.0));
            op.cost = scale(op.cost);
            op.cost_jitter = scale(op.cost_jitter);
        }
    }
}

/// The random crash table: mean interval, most crashes, end of the window
/// (a scenario without one gets one).
fn draw_random_crashes(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    let crash_knobs = (
        spec.crash_mean_interval,
        spec.max_crashes,
        spec.crash_window_end,
    );
    if crash_knobs != (None, None, None) {
        let base = out.faults.random.clone().unwrap_or(RandomCrashes {
            mean_interval: SimDuration::from_secs(1),
            window_start: SimTime::ZERO,
            window_end: SimTime(2_000_000_000),
            max_crashes: 0,
            operators: Vec::new(),
            workers: Vec::new(),
        });
        let mean_interval = match spec.crash_mean_interval {
            Some(r) => d.duration("crash_mean_interval", r),
            None => base.mean_interval,
        };
        let max_crashes = match spec.max_crashes {
            Some(r) => d.int("max_crashes", r),
            None => base.max_crashes,
        };
        let window_end = match spec.crash_window_end {
            Some(r) => SimTime(d.duration("crash_window_end", r).0),
            None => base.window_end,
        };
        let window_end = window_end.max(at_most_max(base.window_start.0 + 1_000_000));
        out.faults.random = Some(RandomCrashes {
            mean_interval,
            window_start: base.window_start,
            window_end,
            max_crashes,
            ..base
        });
    }
}

/// Drawn after the fault kinds, so that scenarios without these knobs draw
/// what they always drew: checkpoints during recovery, the RPC latency
/// jitter, the source rates, and (last of all) the Flink release.
fn draw_late_knobs(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let Some(values) = spec.during_recovery.as_ref().filter(|v| !v.is_empty()) {
        let on = values[d.rng.below(values.len() as u64) as usize];
        d.draw
            .knobs
            .push(("during_recovery".to_string(), on.to_string()));
        out.checkpoint.during_recovery = on;
    }
    if let Some(r) = spec.rpc_latency_max {
        let max = d.duration("rpc_latency_max", r);
        out.checkpoint.rpc_latency_max = max.max(out.checkpoint.rpc_latency);
    }
    // Drawn last: scenarios without sources draw what they always drew.
    if let Some(r) = spec.source_rate {
        if d.rng.below(2) == 1 {
            let rate = d.int("source_rate", r);
            for op in &mut out.operators {
                if let crate::scenario::OperatorKind::Source(src) = &mut op.kind {
                    src.records_per_second = u64::from(rate);
                    src.partition_rates.clear();
                }
            }
        }
    }
    // After everything else: the draws before it stay what they were.
    if let Some(versions) = spec.flink_version.as_ref().filter(|v| !v.is_empty()) {
        let v = versions[d.rng.below(versions.len() as u64) as usize];
        d.draw
            .knobs
            .push(("flink_version".to_string(), v.name().to_string()));
        out.checkpoint.flink_version = v;
    }
    draw_last_knobs(out, spec, d);
}

/// Drawn after the Flink release, so that every draw before them stays
/// what it was: the bound on pending checkpoints, where Sink V2
/// committers run and (last of all) the restart limit.
fn draw_last_knobs(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let (Some(r), Some(_)) = (spec.max_concurrent, out.checkpoint.interval) {
        out.checkpoint.max_concurrent = d.int("max_concurrent", r);
    }
    if let Some(places) = spec.committer.as_ref().filter(|p| !p.is_empty()) {
        let place = places[d.rng.below(places.len() as u64) as usize];
        d.draw
            .knobs
            .push(("committer".to_string(), place.name().to_string()));
        place_committers(out, place);
    }
    if let Some(r) = spec.max_restarts {
        out.faults.max_restarts = d.int("max_restarts", r);
    }
}

/// The checkpoint storage, after everything else (a scenario that writes
/// no files draws what it always drew): the state backend (`incremental`
/// and `changelog` move `memory` storage to `filesystem`), then, where
/// snapshots go into
/// files, storage crashes at drawn times in the crash window and the sync
/// delay.
fn draw_storage(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    if let Some(backends) = spec.state_backend.as_ref().filter(|b| !b.is_empty()) {
        let b = backends[d.rng.below(backends.len() as u64) as usize];
        d.draw
            .knobs
            .push(("state_backend".to_string(), b.name().to_string()));
        out.checkpoint.state_backend = b;
        if b != StateBackend::Hashmap && out.checkpoint.storage == StorageKind::Memory {
            out.checkpoint.storage = StorageKind::Filesystem;
        }
    }
    if out.checkpoint.storage != StorageKind::Filesystem {
        return;
    }
    if let Some(r) = spec.storage_crashes {
        let n = d.int("storage_crashes", r);
        let end = out
            .faults
            .random
            .as_ref()
            .map_or(SimDuration::from_secs(1), |r| SimDuration(r.window_end.0));
        let times: Vec<SimTime> = (0..n)
            .map(|_| SimTime(d.rng.between(0, end.0.max(1))))
            .collect();
        let base = out
            .faults
            .storage
            .clone()
            .unwrap_or(crate::scenario::StorageFaults {
                failure_percent: 0,
                slow_percent: 0,
                slow_latency: SimDuration::from_millis(5),
                crashes: Vec::new(),
            });
        let mut crashes = base.crashes.clone();
        crashes.extend(times);
        out.faults.storage = Some(crate::scenario::StorageFaults { crashes, ..base });
    }
    if let Some(r) = spec.storage_sync {
        out.checkpoint.storage_sync = d.duration("storage_sync", r);
    }
    if let Some(modes) = spec.file_merging.as_ref().filter(|m| !m.is_empty()) {
        let m = modes[d.rng.below(modes.len() as u64) as usize];
        d.draw
            .knobs
            .push(("file_merging".to_string(), m.name().to_string()));
        out.checkpoint.file_merging = m != FileMerging::Off;
        out.checkpoint.file_merging_across_checkpoints = m == FileMerging::AcrossCheckpoints;
    }
}

/// Event time, after everything else (a scenario without it draws what it
/// always drew): whole milliseconds, as event time is.
fn draw_event_time(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    let whole_ms = |d: &mut Drawer, knob: &str, r: Option<(SimDuration, SimDuration)>| {
        r.map(|(lo, hi)| {
            let n = d.pick(lo.0 / 1_000_000, hi.0 / 1_000_000);
            d.draw.knobs.push((knob.to_string(), format!("{n}ms")));
            ms(n)
        })
    };
    let interval = whole_ms(d, "watermark_interval", spec.watermark_interval);
    let disorder = whole_ms(d, "out_of_orderness", spec.out_of_orderness);
    let skew = whole_ms(d, "partition_skew", spec.partition_skew);
    let percent = spec
        .watermark_bound_percent
        .map(|r| d.int("watermark_bound_percent", r));
    // On half the seeds: idleness is a choice of the job, and both are
    // worth testing.
    let idle = spec.idle_timeout.map(|range| match d.pick(0, 1) {
        0 => {
            d.draw
                .knobs
                .push(("idle_timeout".to_string(), "0ms".to_string()));
            SimDuration::ZERO
        }
        _ => whole_ms(d, "idle_timeout", Some(range)).unwrap_or_default(),
    });
    for op in &mut out.operators {
        let crate::scenario::OperatorKind::Source(src) = &mut op.kind else {
            continue;
        };
        if let Some(i) = interval.filter(|_| src.watermark_interval > SimDuration::ZERO) {
            src.watermark_interval = i.max(ms(1));
        }
        if let Some(o) = disorder {
            src.out_of_orderness = o;
            src.watermark_bound = o;
        }
        if let Some(p) = skew {
            src.partition_skew = p;
        }
        if let Some(p) = percent {
            let bound = src.out_of_orderness.0 / 1_000_000 * u64::from(p) / 100;
            src.watermark_bound = ms(bound);
        }
        if let Some(t) = idle.filter(|_| src.watermark_interval > SimDuration::ZERO) {
            src.idle_timeout = t;
        }
    }
}

/// Timers, after event time (a scenario without a keyed process function
/// draws what it always drew): whole milliseconds.
fn draw_timers(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    let mut whole_ms = |knob: &str, (lo, hi): (SimDuration, SimDuration)| {
        let n = d.pick(lo.0 / 1_000_000, hi.0 / 1_000_000);
        d.draw.knobs.push((knob.to_string(), format!("{n}ms")));
        ms(n)
    };
    let delay = spec.timer_delay.map(|r| whole_ms("timer_delay", r));
    // On half the seeds: processing-time timers are a choice of the job.
    let processing = spec.processing_delay.map(|r| match d.pick(0, 1) {
        0 => {
            d.draw
                .knobs
                .push(("processing_delay".to_string(), "0ms".to_string()));
            SimDuration::ZERO
        }
        _ => {
            let n = d.pick(r.0 .0 / 1_000_000, r.1 .0 / 1_000_000);
            d.draw
                .knobs
                .push(("processing_delay".to_string(), format!("{n}ms")));
            ms(n)
        }
    });
    for op in &mut out.operators {
        let crate::scenario::OperatorKind::KeyedProcess {
            timer_delay,
            processing_delay,
        } = &mut op.kind
        else {
            continue;
        };
        if let Some(t) = delay {
            *timer_delay = t;
        }
        if let Some(p) = processing {
            *processing_delay = p;
        }
    }
}

/// Watermark alignment, after timers (a scenario without an alignment
/// group draws what it always drew): whole milliseconds, at least 1.
fn draw_alignment(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    let mut whole_ms = |knob: &str, (lo, hi): (SimDuration, SimDuration)| {
        let n = d.pick(lo.0 / 1_000_000, hi.0 / 1_000_000).max(1);
        d.draw.knobs.push((knob.to_string(), format!("{n}ms")));
        ms(n)
    };
    let drift = spec
        .alignment_max_drift
        .map(|r| whole_ms("alignment_max_drift", r));
    let interval = spec
        .alignment_update_interval
        .map(|r| whole_ms("alignment_update_interval", r));
    for op in &mut out.operators {
        let crate::scenario::OperatorKind::Source(src) = &mut op.kind else {
            continue;
        };
        if src.alignment_group.is_empty() {
            continue;
        }
        if let Some(t) = drift {
            src.alignment_max_drift = t;
        }
        if let Some(t) = interval {
            src.alignment_update_interval = t;
        }
    }
}

/// Moves every Sink V2 committer to `place`: off its writer's chain, or
/// to one global committer that reads every writer.
fn place_committers(out: &mut ScenarioData, place: CommitterPlacement) {
    use crate::scenario::{OperatorKind, Partitioning};
    let committers: Vec<usize> = (0..out.operators.len())
        .filter(|&i| matches!(out.operators[i].kind, OperatorKind::SinkCommitter))
        .collect();
    for &c in &committers {
        let inputs = out.edges.iter_mut().filter(|e| e.to.0 as usize == c);
        match place {
            CommitterPlacement::Chained => {}
            CommitterPlacement::Unchained => inputs.for_each(|e| e.chain = false),
            CommitterPlacement::Global => {
                inputs.for_each(|e| e.partitioning = Partitioning::Rebalance);
                out.operators[c].parallelism = 1;
            }
        }
    }
}

/// The richer fault model's knobs, drawn after every other knob so that
/// scenarios without them draw what they always drew. A kind whose draw is
/// 0 is off for the seed; crashes of the coordinator and of workers fall in
/// the random crash window (or the first two seconds).
fn draw_fault_kinds(out: &mut ScenarioData, spec: &SwarmSpec, d: &mut Drawer) {
    use crate::scenario::{CoordinatorFaults, MemoryLoss, NotificationFaults, StorageFaults};
    let (start, end) = out
        .faults
        .random
        .as_ref()
        .map_or((SimTime::ZERO, SimTime(2_000_000_000)), |r| {
            (r.window_start, r.window_end)
        });
    // At least 1 ms, and not past the longest time (a window starting
    // later than that less 1 ms is shorter).
    let span = end.0.saturating_sub(start.0).max(1_000_000);
    let span = span.min(MAX_DURATION.0.saturating_sub(start.0)).max(1);
    if let Some(r) = spec.notification_loss_percent {
        let loss_percent = d.int("notification_loss_percent", r);
        out.faults.notifications =
            (loss_percent > 0).then_some(NotificationFaults { loss_percent });
    }
    if spec.storage_failure_percent.is_some() || spec.storage_slow_percent.is_some() {
        let base = out.faults.storage.clone().unwrap_or(StorageFaults {
            failure_percent: 0,
            slow_percent: 0,
            slow_latency: SimDuration::from_millis(5),
            crashes: Vec::new(),
        });
        let failure_percent = match spec.storage_failure_percent {
            Some(r) => d.int("storage_failure_percent", r),
            None => base.failure_percent,
        };
        let slow_percent = match spec.storage_slow_percent {
            Some(r) => d.int("storage_slow_percent", r),
            None => base.slow_percent,
        };
        out.faults.storage = (failure_percent > 0 || slow_percent > 0).then_some(StorageFaults {
            failure_percent,
            slow_percent,
            ..base
        });
    }
    let random = |max_crashes: u32| RandomCrashes {
        mean_interval: SimDuration((span / u64::from(max_crashes.max(1))).max(1_000_000)),
        window_start: start,
        window_end: SimTime(start.0 + span),
        max_crashes,
        operators: Vec::new(),
        workers: Vec::new(),
    };
    if let Some(r) = spec.coordinator_crashes {
        let n = d.int("coordinator_crashes", r);
        let mut c = out.faults.coordinator.clone().unwrap_or(CoordinatorFaults {
            failover_delay: SimDuration::from_millis(20),
            on_memory_loss: MemoryLoss::RestartFromScratch,
            crashes: Vec::new(),
            random: None,
            crash_on: Vec::new(),
        });
        c.random = (n > 0).then(|| random(n));
        out.faults.coordinator = Some(c);
    }
    if let (Some(r), Some(_)) = (spec.worker_crashes, &out.cluster) {
        let n = d.int("worker_crashes", r);
        out.faults.random_workers = (n > 0).then(|| random(n));
    }
    let window = (SimDuration(start.0), SimDuration(start.0 + span - 1));
    if let Some(r) = spec.latency_spike_extra {
        let extra = d.duration("latency_spike_extra", r);
        let from = SimTime(d.duration("latency_spike_from", window).0);
        if extra > SimDuration::ZERO {
            out.faults
                .latency_spikes
                .push(crate::scenario::LatencySpike {
                    from,
                    until: at_most_max(from.0 + (span / 4).max(1_000_000)),
                    extra,
                    edge: None,
                    worker: None,
                    trigger: None,
                });
        }
    }
    let workers = out.cluster.as_ref().map_or(0, |c| c.workers);
    if let (Some(r), true) = (spec.partition_duration, workers >= 2) {
        let duration = d.duration("partition_duration", r);
        let from = SimTime(d.duration("partition_from", window).0);
        let worker = d.int("partition_worker", (0, workers - 1));
        if duration > SimDuration::ZERO {
            out.faults.partitions.push(crate::scenario::Partition {
                from,
                until: at_most_max(from.0 + duration.0),
                workers: vec![worker],
                trigger: None,
            });
        }
    }
    if let Some(r) = spec.operator_event_loss_percent {
        let loss_percent = d.int("operator_event_loss_percent", r);
        out.faults.operator_events =
            (loss_percent > 0).then_some(crate::scenario::OperatorEventFaults { loss_percent });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load;
    use std::path::Path;

    fn wordcount() -> Scenario {
        load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/wordcount.toml"
        )))
        .unwrap()
    }

    #[test]
    fn a_seed_draws_the_same_configuration_every_time() {
        let s = wordcount();
        let spec = default_ranges(&s);
        let (a, da) = draw(&s, &spec, 42).unwrap();
        let (b, db) = draw(&s, &spec, 42).unwrap();
        assert_eq!(da, db);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap()
        );
    }

    #[test]
    fn draws_stay_within_the_ranges_and_reach_both_ends() {
        let s = wordcount();
        let spec = default_ranges(&s);
        let (lo, hi) = spec.buffer_credits.unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let (c, draw) = draw(&s, &spec, seed).unwrap();
            let credits = c.network.buffer_credits;
            assert!((lo..=hi).contains(&credits), "{credits}");
            seen.insert(credits);
            assert!(c.network.latency_min <= c.network.latency_max);
            let r = c.faults.random.as_ref().unwrap();
            assert!(r.max_crashes <= 3 && r.window_end > r.window_start);
            assert!(draw.to_string().contains("buffer_credits="));
        }
        assert!(seen.contains(&lo) && seen.contains(&hi));
    }

    /// Default ranges are ordered and within the limits on values for any
    /// scenario: a checkpoint interval below 250 us once gave an inverted
    /// interval range (`--swarm` panicked), a large buffer overflowed u32.
    #[test]
    fn default_ranges_are_ordered_at_extreme_values() {
        use crate::scenario::{MAX_BUFFER_RECORDS, MAX_DURATION};
        for (interval, records, latency) in [
            (1, 1, 0),
            (100_000, 3, 1),
            (249_999, 16, 1_000),
            (250_000, 32_768, 50_000),
            (999_999, MAX_BUFFER_RECORDS, MAX_DURATION.0),
            (MAX_DURATION.0, MAX_BUFFER_RECORDS, MAX_DURATION.0),
        ] {
            let mut edit = ScenarioData::clone(&wordcount());
            edit.checkpoint.interval = Some(SimDuration(interval));
            edit.network.buffer_records = records;
            edit.network.latency_min = SimDuration(latency);
            edit.network.latency_max = SimDuration(latency);
            let s = check(&edit, "extreme").unwrap();
            let spec = default_ranges(&s);
            let durations = [spec.latency_max, spec.interval, spec.crash_mean_interval];
            for (lo, hi) in durations.into_iter().flatten() {
                assert!(lo <= hi && hi <= MAX_DURATION, "{interval}: {lo} > {hi}");
            }
            let (lo, hi) = spec.buffer_records.unwrap();
            assert!(lo <= hi && hi <= MAX_BUFFER_RECORDS, "{lo} > {hi}");
            let (iv_lo, iv_hi) = spec.interval.unwrap();
            assert!(iv_lo.0 <= interval && interval <= iv_hi.0);
            for seed in 0..20 {
                let (c, _) = draw(&s, &spec, seed).unwrap();
                assert!(c.network.latency_min <= c.network.latency_max);
                assert!(c.operators.iter().all(|o| o.cost <= MAX_DURATION));
            }
        }
    }

    /// Windows drawn at the end of the longest time a scenario may hold end
    /// there too, so the drawn scenario is still valid (shrinking writes it).
    #[test]
    fn draws_at_the_longest_time_stay_valid() {
        use crate::scenario::{ClusterSpec, Placement, MAX_DURATION};
        let mut s = ScenarioData::clone(&wordcount());
        s.cluster = Some(ClusterSpec {
            workers: 2,
            slots_per_worker: 2,
            placement: Placement::Spread,
            heartbeat_timeout: SimDuration::from_millis(50),
            replacement_delay: SimDuration::from_millis(100),
            local_channels: false,
        });
        let r = s.faults.random.as_mut().unwrap();
        r.window_start = SimTime(MAX_DURATION.0 - 500_000);
        r.window_end = SimTime(MAX_DURATION.0);
        let spec = SwarmSpec {
            crash_window_end: Some((SimDuration::ZERO, SimDuration::ZERO)),
            coordinator_crashes: Some((1, 1)),
            worker_crashes: Some((1, 1)),
            latency_spike_extra: Some((SimDuration::from_millis(1), SimDuration::from_millis(1))),
            partition_duration: Some((MAX_DURATION, MAX_DURATION)),
            ..SwarmSpec::default()
        };
        let s = check(&s, "longest").unwrap();
        for seed in 0..10 {
            if let Err(e) = draw(&s, &spec, seed) {
                panic!("seed {seed}: {e}");
            }
        }
    }

    /// A draw is validated again like a file: ranges made in code (as
    /// `default_ranges` makes them) that reach past the limits on values
    /// give an error naming the drawn key, never a scenario to run.
    #[test]
    fn a_draw_that_makes_the_scenario_invalid_is_refused() {
        let s = wordcount();
        let too_many = MAX_BUFFER_RECORDS + 1;
        let spec = SwarmSpec {
            buffer_records: Some((too_many, too_many)),
            ..SwarmSpec::default()
        };
        let invalid = draw(&s, &spec, 3).unwrap_err();
        assert_eq!(
            invalid.draw.to_string(),
            format!("buffer_records={too_many}")
        );
        let text = invalid.to_string();
        assert!(text.contains("buffer_records"), "{text}");
        // Within the limit the same draw is a valid scenario.
        let spec = SwarmSpec {
            buffer_records: Some((MAX_BUFFER_RECORDS, MAX_BUFFER_RECORDS)),
            ..SwarmSpec::default()
        };
        let (drawn, _) = draw(&s, &spec, 3).unwrap();
        assert_eq!(drawn.network.buffer_records, MAX_BUFFER_RECORDS);
    }

    #[test]
    fn an_empty_spec_changes_nothing() {
        let s = wordcount();
        let (c, draw) = draw(&s, &SwarmSpec::default(), 7).unwrap();
        assert!(draw.knobs.is_empty());
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::to_value(&s).unwrap()
        );
    }
}
