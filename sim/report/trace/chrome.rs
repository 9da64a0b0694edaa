//! The Chrome trace-event file of a run's timeline: its spans laid out on
//! tracks, and the JSON written by hand (exact decimal timestamps).

use super::*;

/// One thread track of the trace.
pub(super) struct Track {
    tid: u32,
    name: String,
}

/// Tracks by group, lane 0 first.
pub(super) type Tracks = BTreeMap<GroupKey, Vec<Track>>;

/// Puts every span on a track of its group where it nests properly (inside
/// or after the spans already there), opening another track of the group
/// when none fits, and numbers the tracks. Every subtask gets its two
/// tracks and the coordinator its own, even when empty.
pub(super) fn assign_tracks(names: &Names, spans: &mut [Span]) -> Tracks {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    // By start, longer first (a parent before its children), then by
    // creation order: deterministic.
    order.sort_by_key(|&i| {
        let s = &spans[i];
        (s.group.order(), s.start, std::cmp::Reverse(s.end), i)
    });
    // Per group, per lane: the ends of the spans still open (a stack).
    let mut lanes: BTreeMap<GroupKey, Vec<Vec<u64>>> = BTreeMap::new();
    for i in order {
        let (start, end, key) = (spans[i].start, spans[i].end, spans[i].group.order());
        let stacks = lanes.entry(key).or_default();
        let mut placed = None;
        for (lane, stack) in stacks.iter_mut().enumerate() {
            while stack.last().is_some_and(|&e| e <= start) {
                stack.pop();
            }
            if stack.last().is_none_or(|&e| e >= end) {
                stack.push(end);
                placed = Some(lane);
                break;
            }
        }
        spans[i].lane = placed.unwrap_or_else(|| {
            stacks.push(vec![end]);
            stacks.len() - 1
        });
    }
    let mut groups = vec![Group::Coordinator];
    for t in 0..names.tasks.len() as TaskId {
        groups.push(Group::Task(t));
        groups.push(Group::Checkpoints(t));
    }
    let mut tracks = Tracks::new();
    let mut next_tid = 1;
    for g in groups {
        let n = lanes.get(&g.order()).map_or(0, Vec::len).max(1);
        let base = match g {
            Group::Coordinator => "coordinator".to_string(),
            Group::Task(t) => names.tasks[t as usize].clone(),
            Group::Checkpoints(t) => format!("{} checkpoints", names.tasks[t as usize]),
        };
        let list = (0..n)
            .map(|lane| {
                let name = match lane {
                    0 => base.clone(),
                    k => format!("{base} ({})", k + 1),
                };
                let tid = next_tid;
                next_tid += 1;
                Track { tid, name }
            })
            .collect();
        tracks.insert(g.order(), list);
    }
    tracks
}

// ------------------------------------------------------------ writing

const PID: u32 = 1;

/// Virtual nanoseconds as exact decimal microseconds (`1234.5`, `7`).
fn us(ns: u64) -> String {
    let (whole, frac) = (ns / 1000, ns % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:03}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// One trace event, written by hand so that timestamps are exact decimals
/// and keys come in a readable order.
struct Event<'a> {
    ts: u64,
    dur: Option<u64>,
    tid: u32,
    ph: &'static str,
    name: &'a str,
    cat: &'static str,
    args: &'a Value,
}

fn write_event(w: &mut dyn Write, e: &Event) -> io::Result<()> {
    w.write_all(b"{\"name\":")?;
    serde_json::to_writer(&mut *w, e.name)?;
    write!(
        w,
        ",\"cat\":\"{}\",\"ph\":\"{}\",\"ts\":{}",
        e.cat,
        e.ph,
        us(e.ts)
    )?;
    if let Some(d) = e.dur {
        write!(w, ",\"dur\":{}", us(d))?;
    }
    if e.ph == "i" {
        w.write_all(b",\"s\":\"t\"")?;
    }
    write!(w, ",\"pid\":{PID},\"tid\":{},\"args\":", e.tid)?;
    serde_json::to_writer(&mut *w, e.args)?;
    w.write_all(b"}")
}

pub(super) fn write_chrome_json(
    scenario: &Scenario,
    output: &RunOutput,
    b: &Timelines,
    tracks: &Tracks,
    w: &mut dyn Write,
) -> io::Result<()> {
    let cfg = &output.config;
    let outcome = output.outcome.describe();
    let process = format!(
        "{} (seed {}, {})",
        scenario.name,
        cfg.seed,
        cfg.algorithm.name()
    );
    let other = json!({
        "scenario": scenario.name,
        "seed": cfg.seed,
        "algorithm": cfg.algorithm.name(),
        "mutants": cfg.mutants.names(),
        "outcome": outcome,
        "events": output.events,
        "end_time_ns": output.end_time.0,
        "fingerprint": output.fingerprint,
        "time_unit": "virtual microseconds",
    });
    w.write_all(b"{\"otherData\":")?;
    serde_json::to_writer(&mut *w, &other)?;
    w.write_all(b",\n\"traceEvents\":[\n")?;
    // Metadata: the process (the job), then every track's name and order.
    write!(
        w,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{PID},\"args\":"
    )?;
    serde_json::to_writer(&mut *w, &json!({ "name": process }))?;
    w.write_all(b"}")?;
    for list in tracks.values() {
        for t in list {
            write!(
                w,
                ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{},\"args\":",
                t.tid
            )?;
            serde_json::to_writer(&mut *w, &json!({ "name": t.name }))?;
            // Keep the tracks in this order in the UI.
            let sort = json!({ "sort_index": t.tid });
            write!(w, "}},\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{},\"args\":{sort}}}", t.tid)?;
        }
    }
    let tid_of = |g: Group, lane: usize| tracks[&g.order()][lane].tid;
    let mut events: Vec<Event> = Vec::with_capacity(b.spans.len() + b.instants.len());
    for s in &b.spans {
        events.push(Event {
            ts: s.start,
            dur: Some(s.end - s.start),
            tid: tid_of(s.group, s.lane),
            ph: "X",
            name: &s.name,
            cat: s.group.cat(),
            args: &s.args,
        });
    }
    for i in &b.instants {
        events.push(Event {
            ts: i.ts,
            dur: None,
            tid: tid_of(i.group, 0),
            ph: "i",
            name: &i.name,
            cat: i.group.cat(),
            args: &i.args,
        });
    }
    // Time order; at one time a parent (longer) before its children.
    events.sort_by_key(|e| (e.ts, std::cmp::Reverse(e.dur.unwrap_or(0)), e.tid));
    for e in &events {
        w.write_all(b",\n")?;
        write_event(w, e)?;
    }
    w.write_all(b"\n],\n\"displayTimeUnit\":\"ms\"}\n")
}
