//! The reference job of `scenarios/bench.toml` written for madsim.
//!
//! Two source subtasks of 50,000 records each over 1,000 keys (cyclic)
//! hash-partition into two tasks, each a keyed count chained with a
//! two-phase-commit sink. Channels are madsim's reliable ordered
//! connections carrying buffers of 32 records with 2 credits per channel;
//! latency 50–200 µs. A coordinator node triggers aligned checkpoints every
//! 200 ms (one at a time); sources snapshot their offset and send a barrier
//! behind their buffered data, a task aligns the barriers of its two
//! inputs, snapshots its counts and pre-commits its transaction in the
//! external system, and commits it when the coordinator notifies the
//! checkpoint complete. At 1 s the node of `count[0]` is killed; after a
//! detection delay of 50 ms the coordinator kills every task, waits the
//! restart delay of 100 ms and restarts them from the last completed
//! checkpoint (sources rewind, counts restore, the checkpoint's prepared
//! transactions commit and later ones abort). At the end of its inputs a
//! task commits what it holds. Costs are virtual time per record, slept
//! once per buffer: 40 µs at a source, 5 + 2 µs at a task.
//!
//! It checks nothing but that the external system holds the 100,000
//! records at the end (exit 1 otherwise). It prints the virtual time, the
//! records committed and the wall time of the runtime in process.
//!
//! `reference-madsim [SEED]` (default 0).

// Inside madsim's runtime `Instant::now` is virtual time; the one call
// outside it measures the runtime's wall time.
#![allow(clippy::disallowed_methods)]

use futures::channel::mpsc;
use futures::stream::{select_all, BoxStream};
use futures::{FutureExt, StreamExt};
use madsim::net::{Endpoint, Receiver, Sender};
use madsim::runtime::{Handle, NodeHandle, Runtime};
use madsim::time::{sleep, Instant};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SOURCES: usize = 2;
const TASKS: usize = 2;
const RECORDS: u64 = 50_000;
const KEYS: u64 = 1_000;
const BUFFER: usize = 32;
const CREDITS: u32 = 2;
const SOURCE_COST: Duration = Duration::from_micros(40);
const TASK_COST: Duration = Duration::from_micros(5 + 2);
const INTERVAL: Duration = Duration::from_millis(200);
const CRASH_AT: Duration = Duration::from_secs(1);
const DETECTION: Duration = Duration::from_millis(50);
const RESTART: Duration = Duration::from_millis(100);

/// A record: its key.
type Key = u32;

enum Msg {
    /// A task or source says who it is on a new connection.
    Hello {
        who: Who,
        attempt: u64,
    },
    Data(Vec<Key>),
    Barrier(u64),
    End,
    Credit,
    Trigger(u64),
    Ack {
        who: Who,
        attempt: u64,
        cp: u64,
        snapshot: Snapshot,
    },
    Notify(u64),
    Done {
        attempt: u64,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Who {
    Source(usize),
    Task(usize),
}

#[derive(Clone)]
enum Snapshot {
    Offset(u64),
    /// A task's counts; its transaction is prepared in the external system
    /// under the checkpoint's id.
    Counts(BTreeMap<Key, u64>),
}

/// What survives a crash: the last completed checkpoint, the attempt, and
/// the external system the sinks write to.
#[derive(Default)]
struct Durable {
    attempt: u64,
    checkpoint: Option<(u64, BTreeMap<Who, Snapshot>)>,
    /// Prepared transactions by (task, checkpoint).
    prepared: BTreeMap<(usize, u64), Vec<(Key, u64)>>,
    committed: Vec<(Key, u64)>,
    /// For the report: checkpoints completed, the one restored, records
    /// emitted by the sources (replays included), buffers shipped.
    completed: u64,
    restored: Option<u64>,
    emitted: u64,
    buffers: u64,
}

type Shared = Arc<Mutex<Durable>>;

fn ip(last: u8) -> std::net::IpAddr {
    std::net::IpAddr::from([10, 0, 0, last])
}

fn addr(last: u8) -> SocketAddr {
    SocketAddr::new(ip(last), 1000)
}

const COORDINATOR: u8 = 1;

fn source_ip(i: usize) -> u8 {
    10 + i as u8
}

fn task_ip(i: usize) -> u8 {
    20 + i as u8
}

fn send(tx: &Sender, msg: Msg) -> impl std::future::Future<Output = ()> + '_ {
    // A send to a killed peer fails; the peer's restart makes new ones.
    tx.send(Box::new(msg)).map(|_| ())
}

fn unbox(payload: Box<dyn std::any::Any + Send + Sync>) -> Msg {
    *payload.downcast::<Msg>().expect("a Msg")
}

/// Connects to `to`, retrying while it is not bound yet.
async fn connect(ep: &Endpoint, to: SocketAddr) -> (Sender, Receiver) {
    loop {
        if let Ok(pair) = ep.connect1(to).await {
            return pair;
        }
        sleep(Duration::from_millis(1)).await;
    }
}

/// The task (0 or 1) a key is partitioned to.
fn partition(key: Key) -> usize {
    ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63) as usize
}

/// What a task or source reads: its channel index (`usize::MAX` for the
/// coordinator) and the message.
type Inbox = Vec<BoxStream<'static, (usize, Msg)>>;

/// Binds the node's endpoint, connects to the coordinator and says who it
/// is: the endpoint, the way to the coordinator, and an inbox holding the
/// coordinator's messages.
async fn join(ip: u8, who: Who, attempt: u64) -> (Endpoint, Sender, Inbox) {
    let ep = Endpoint::bind(addr(ip)).await.unwrap();
    let (jm_tx, jm_rx) = connect(&ep, addr(COORDINATOR)).await;
    send(&jm_tx, Msg::Hello { who, attempt }).await;
    let inbox: Inbox = vec![jm_rx.map(|m| (usize::MAX, unbox(m.unwrap()))).boxed()];
    (ep, jm_tx, inbox)
}

/// A source subtask: its records from its checkpointed offset on.
async fn source(i: usize, durable: Shared) {
    let (attempt, mut offset) = {
        let d = durable.lock().unwrap();
        let offset = match d.checkpoint.as_ref().map(|(_, s)| &s[&Who::Source(i)]) {
            Some(Snapshot::Offset(o)) => *o,
            _ => 0,
        };
        (d.attempt, offset)
    };
    let (ep, jm_tx, mut inputs) = join(source_ip(i), Who::Source(i), attempt).await;
    let mut outs = Vec::new();
    for t in 0..TASKS {
        let (tx, rx) = connect(&ep, addr(task_ip(t))).await;
        send(
            &tx,
            Msg::Hello {
                who: Who::Source(i),
                attempt,
            },
        )
        .await;
        outs.push(tx);
        inputs.push(rx.map(move |m| (t, unbox(m.unwrap()))).boxed());
    }
    let mut inbox = select_all(inputs);
    let mut credits = [CREDITS; TASKS];
    let mut buffers: [Vec<Key>; TASKS] = Default::default();
    // Per channel, what waits for a credit (data) or for the data before it.
    let mut queued: [std::collections::VecDeque<Msg>; TASKS] = Default::default();
    let mut ended = false;
    loop {
        // Ship what the credits allow.
        for t in 0..TASKS {
            while let Some(front) = queued[t].front() {
                if matches!(front, Msg::Data(_)) {
                    if credits[t] == 0 {
                        break;
                    }
                    credits[t] -= 1;
                }
                send(&outs[t], queued[t].pop_front().unwrap()).await;
            }
        }
        let blocked = queued.iter().any(|q| !q.is_empty());
        if ended && !blocked {
            return;
        }
        let msg = if blocked || offset == RECORDS {
            inbox.next().await
        } else if let Some(msg) = inbox.next().now_or_never() {
            msg
        } else {
            // Produce up to a buffer's worth of records.
            let n = (BUFFER as u64).min(RECORDS - offset);
            sleep(SOURCE_COST * n as u32).await;
            for r in offset..offset + n {
                let key = ((i as u64 * RECORDS + r) % KEYS) as Key;
                let t = partition(key);
                buffers[t].push(key);
                if buffers[t].len() == BUFFER {
                    queued[t].push_back(Msg::Data(std::mem::take(&mut buffers[t])));
                }
            }
            offset += n;
            durable.lock().unwrap().emitted += n;
            if offset == RECORDS {
                for t in 0..TASKS {
                    flush(&mut buffers[t], &mut queued[t]);
                    queued[t].push_back(Msg::End);
                }
                ended = true;
            }
            continue;
        };
        let Some((from, msg)) = msg else { return };
        match msg {
            Msg::Credit => credits[from] += 1,
            Msg::Trigger(cp) if !ended => {
                for t in 0..TASKS {
                    flush(&mut buffers[t], &mut queued[t]);
                    queued[t].push_back(Msg::Barrier(cp));
                }
                let snapshot = Snapshot::Offset(offset);
                let ack = Msg::Ack {
                    who: Who::Source(i),
                    attempt,
                    cp,
                    snapshot,
                };
                send(&jm_tx, ack).await;
            }
            _ => {}
        }
    }
}

fn flush(buffer: &mut Vec<Key>, queue: &mut std::collections::VecDeque<Msg>) {
    if !buffer.is_empty() {
        queue.push_back(Msg::Data(std::mem::take(buffer)));
    }
}

/// A task: a keyed count chained with a two-phase-commit sink.
async fn task(i: usize, durable: Shared) {
    let (attempt, mut counts) = {
        let mut d = durable.lock().unwrap();
        let (counts, restored) = match &d.checkpoint {
            Some((cp, s)) => match &s[&Who::Task(i)] {
                Snapshot::Counts(c) => (c.clone(), Some(*cp)),
                Snapshot::Offset(_) => unreachable!(),
            },
            None => (BTreeMap::new(), None),
        };
        // Commit the restored checkpoint's transactions, abort later ones.
        let mine: Vec<_> = d
            .prepared
            .range((i, 0)..(i + 1, 0))
            .map(|(k, _)| *k)
            .collect();
        for k in mine {
            let records = d.prepared.remove(&k).unwrap();
            if restored.is_some_and(|cp| k.1 <= cp) {
                d.committed.extend(records);
            }
        }
        (d.attempt, counts)
    };
    let (ep, jm_tx, mut inputs) = join(task_ip(i), Who::Task(i), attempt).await;
    let mut outs: Vec<Option<Sender>> = (0..SOURCES).map(|_| None).collect();
    for _ in 0..SOURCES {
        let (tx, mut rx, _) = ep.accept1().await.unwrap();
        let Msg::Hello {
            who: Who::Source(s),
            ..
        } = unbox(rx.recv().await.unwrap())
        else {
            panic!("a source says hello first")
        };
        outs[s] = Some(tx);
        inputs.push(rx.map(move |m| (s, unbox(m.unwrap()))).boxed());
    }
    let outs: Vec<Sender> = outs.into_iter().map(Option::unwrap).collect();
    let mut inbox = select_all(inputs);
    let mut transaction: Vec<(Key, u64)> = Vec::new();
    // Alignment: the channels whose barrier came, and what they sent after
    // it.
    let mut blocked = [false; SOURCES];
    let mut held: Vec<(usize, Msg)> = Vec::new();
    let mut ended = [false; SOURCES];
    let mut replay: std::collections::VecDeque<(usize, Msg)> = Default::default();
    loop {
        let (from, msg) = match replay.pop_front() {
            Some(m) => m,
            None => match inbox.next().await {
                Some(m) => m,
                None => return,
            },
        };
        if from < SOURCES && blocked[from] {
            held.push((from, msg));
            continue;
        }
        match msg {
            Msg::Data(keys) => {
                durable.lock().unwrap().buffers += 1;
                sleep(TASK_COST * keys.len() as u32).await;
                for key in keys {
                    let c = counts.entry(key).or_insert(0);
                    *c += 1;
                    transaction.push((key, *c));
                }
                send(&outs[from], Msg::Credit).await;
            }
            Msg::Barrier(cp) => {
                blocked[from] = true;
                if blocked.iter().zip(&ended).all(|(b, e)| *b || *e) {
                    let records = std::mem::take(&mut transaction);
                    durable.lock().unwrap().prepared.insert((i, cp), records);
                    let snapshot = Snapshot::Counts(counts.clone());
                    let ack = Msg::Ack {
                        who: Who::Task(i),
                        attempt,
                        cp,
                        snapshot,
                    };
                    send(&jm_tx, ack).await;
                    blocked = [false; SOURCES];
                    replay.extend(held.drain(..));
                }
            }
            Msg::End => {
                ended[from] = true;
                if ended.iter().all(|e| *e) {
                    durable.lock().unwrap().committed.append(&mut transaction);
                    send(&jm_tx, Msg::Done { attempt }).await;
                    return;
                }
            }
            Msg::Notify(cp) => {
                let mut d = durable.lock().unwrap();
                let mine: Vec<_> = d
                    .prepared
                    .range((i, 0)..=(i, cp))
                    .map(|(k, _)| *k)
                    .collect();
                for k in mine {
                    let records = d.prepared.remove(&k).unwrap();
                    d.committed.extend(records);
                }
            }
            _ => {}
        }
    }
}

/// The coordinator: triggers, acknowledgements, completion, failover.
async fn coordinator(
    durable: Shared,
    nodes: Vec<NodeHandle>,
    mut failures: mpsc::UnboundedReceiver<()>,
) {
    let ep = Endpoint::bind(addr(COORDINATOR)).await.unwrap();
    let (conn_tx, conn_rx) = mpsc::unbounded::<(Who, u64, Sender)>();
    let (msg_tx, mut msg_rx) = mpsc::unbounded::<Msg>();
    // Accept connections; forward their messages.
    madsim::task::spawn(async move {
        loop {
            let (tx, mut rx, _) = ep.accept1().await.unwrap();
            let (conn_tx, msg_tx) = (conn_tx.clone(), msg_tx.clone());
            madsim::task::spawn(async move {
                let Msg::Hello { who, attempt } = unbox(rx.recv().await.unwrap()) else {
                    panic!("hello first")
                };
                let _ = conn_tx.unbounded_send((who, attempt, tx));
                while let Ok(m) = rx.recv().await {
                    let _ = msg_tx.unbounded_send(unbox(m));
                }
            });
        }
    });
    let mut conn_rx = conn_rx;
    let mut peers: BTreeMap<Who, Sender> = BTreeMap::new();
    let mut next_cp = 1;
    let mut pending: Option<(u64, BTreeMap<Who, Snapshot>)> = None;
    let mut done = 0;
    let mut next_trigger = Instant::now() + INTERVAL;
    loop {
        let attempt = durable.lock().unwrap().attempt;
        futures::select_biased! {
            _ = failures.next() => {
                // Global failover: every task down, then all restarted
                // from the last completed checkpoint.
                pending = None;
                peers.clear();
                for n in &nodes {
                    Handle::current().kill(n.id());
                }
                sleep(RESTART).await;
                {
                    let mut d = durable.lock().unwrap();
                    d.attempt += 1;
                    d.restored = d.checkpoint.as_ref().map(|(cp, _)| *cp);
                }
                for n in &nodes {
                    Handle::current().restart(n.id());
                }
                next_trigger = Instant::now() + INTERVAL;
            }
            conn = conn_rx.next() => {
                let (who, a, tx) = conn.unwrap();
                if a == attempt {
                    peers.insert(who, tx);
                }
            }
            msg = msg_rx.next() => match msg.unwrap() {
                Msg::Ack { who, attempt: a, cp, snapshot } if a == attempt => {
                    let Some((p, acks)) = pending.as_mut() else { continue };
                    if *p != cp {
                        continue;
                    }
                    acks.insert(who, snapshot);
                    if acks.len() == SOURCES + TASKS {
                        let (cp, acks) = pending.take().unwrap();
                        {
                            let mut d = durable.lock().unwrap();
                            d.checkpoint = Some((cp, acks));
                            d.completed += 1;
                        }
                        for t in 0..TASKS {
                            if let Some(tx) = peers.get(&Who::Task(t)) {
                                send(tx, Msg::Notify(cp)).await;
                            }
                        }
                    }
                }
                Msg::Done { attempt: a } if a == attempt => {
                    done += 1;
                    if done == TASKS {
                        return;
                    }
                }
                _ => {}
            },
            _ = madsim::time::sleep_until(next_trigger).fuse() => {
                next_trigger += INTERVAL;
                if pending.is_none() && peers.len() == SOURCES + TASKS {
                    let cp = next_cp;
                    next_cp += 1;
                    pending = Some((cp, BTreeMap::new()));
                    for s in 0..SOURCES {
                        send(&peers[&Who::Source(s)], Msg::Trigger(cp)).await;
                    }
                }
            }
        }
    }
}

fn main() {
    let seed = std::env::args()
        .nth(1)
        .map_or(0, |s| s.parse().expect("a seed"));
    let watch = std::time::Instant::now();
    let mut config = madsim::Config::default();
    config.net.send_latency = Duration::from_micros(50)..Duration::from_micros(200);
    let runtime = Runtime::with_seed_and_config(seed, config);
    let (virtual_ns, committed) = runtime.block_on(async move {
        let durable: Shared = Arc::default();
        let handle = Handle::current();
        let mut nodes = Vec::new();
        for t in 0..TASKS {
            let d = durable.clone();
            let node = handle.create_node().name(format!("count->sink[{t}]")).ip(ip(task_ip(t)));
            nodes.push(node.init(move || task(t, d.clone())).build());
        }
        for s in 0..SOURCES {
            let d = durable.clone();
            let node = handle.create_node().name(format!("source[{s}]")).ip(ip(source_ip(s)));
            nodes.push(node.init(move || source(s, d.clone())).build());
        }
        let (fail_tx, fail_rx) = mpsc::unbounded();
        let jm = handle.create_node().name("coordinator").ip(ip(COORDINATOR)).build();
        let crashed = nodes[0].id();
        let start = Instant::now();
        madsim::task::spawn(async move {
            sleep(CRASH_AT).await;
            Handle::current().kill(crashed);
            sleep(DETECTION).await;
            let _ = fail_tx.unbounded_send(());
        });
        jm.spawn(coordinator(durable.clone(), nodes, fail_rx)).await.unwrap();
        let d = durable.lock().unwrap();
        println!(
            "checkpoints  {} completed, restart from checkpoint {:?}\nemitted      {} records, {} buffers read",
            d.completed, d.restored, d.emitted, d.buffers
        );
        (start.elapsed().as_nanos(), d.committed.len())
    });
    drop(runtime);
    let wall = watch.elapsed();
    println!("virtual time {:.3}s", virtual_ns as f64 / 1e9);
    println!("records      {committed} committed");
    println!("runtime ns   {}", wall.as_nanos());
    if committed != (SOURCES as u64 * RECORDS) as usize {
        std::process::exit(1);
    }
}
