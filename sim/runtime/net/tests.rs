//! The network's rules, one message at a time.

use super::*;
use crate::engine::Stream;

/// Flink's `SingleInputGate`: one gate per receiving subtask and input
/// edge, whose channels (one per upstream subtask) share its floating
/// buffers; a second input edge has its own gate.
#[test]
fn the_channels_of_one_input_share_a_gate() {
    // Tasks 0 and 1 (one operator) and task 2 (another) feed task 3.
    let net = Net::new(
        vec![(0, 3, 0, 0), (1, 3, 1, 0), (2, 3, 2, 1)],
        4,
        SimRng::new(0, Stream::Network),
        16,
        2,
        8,
        1,
        (SimDuration(0), SimDuration(0)),
        SimDuration(1),
    );
    let gates: Vec<u32> = net.credit.channels.iter().map(|b| b.gate).collect();
    assert_eq!(gates, [0, 0, 1]);
    assert_eq!(net.credit.gates.len(), 2);
    assert!(net.credit.gates.iter().all(|g| g.free == 8));
}

fn one_channel() -> Net {
    Net::new(
        vec![(0, 1, 0, 0)],
        2,
        SimRng::new(0, Stream::Network),
        2,
        2,
        8,
        4,
        (SimDuration(0), SimDuration(0)),
        SimDuration(1),
    )
}

fn rec(offset: u64) -> Record {
    Record {
        key: offset,
        value: 0,
        lineage: crate::model::Lineage {
            partition: 0,
            offset,
        },
        emitted_at: SimTime::ZERO,
        timestamp: 0,
        payload: crate::model::Payload::NONE,
    }
}

fn barrier(id: CheckpointId, kind: BarrierKind) -> Barrier {
    Barrier {
        id,
        timestamp: SimTime::ZERO,
        kind,
    }
}

fn queued(net: &Net) -> Vec<String> {
    let c = &net.channels[0];
    c.wire
        .iter()
        .map(|(_, _, m)| m)
        .chain(&c.out_queue)
        .map(|m| match m {
            Msg::Data { seq, buf, .. } => format!("data {seq}+{}", buf.len()),
            Msg::Barrier(b) => format!("{:?} {}", b.kind, b.id),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Flink's `PrioritizedDeque.addPriorityElement`: a priority event goes
/// behind the priority events already waiting, ahead of the data. Two
/// barriers turned priority while the channel was held for an older
/// checkpoint leave in checkpoint order.
#[test]
fn priority_events_leave_in_the_order_they_were_queued() {
    let mut net = one_channel();
    net.channels[0].blocked_for = Some(4);
    for r in 0..3 {
        net.emit(0, rec(r));
    }
    net.send_event(0, Msg::Barrier(barrier(5, BarrierKind::Timeoutable)), false);
    net.emit(0, rec(3));
    net.send_event(0, Msg::Barrier(barrier(6, BarrierKind::Timeoutable)), false);
    let five = net.prioritize_queued_barrier(0, 5).expect("5 is queued");
    let six = net.prioritize_queued_barrier(0, 6).expect("6 is queued");
    assert_eq!((five.records.len(), six.records.len()), (3, 4));
    assert_eq!(
        queued(&net),
        [
            "Unaligned 5",
            "Unaligned 6",
            "data 0+2",
            "data 2+1",
            "data 3+1"
        ]
    );
    net.resume(0);
    assert_eq!(&queued(&net)[..2], ["Unaligned 5", "Unaligned 6"]);
}

/// Each unaligned barrier keeps the arrival mark of the data it
/// overtook at the receiver, also when a newer one arrives before it is
/// read: the capture of the older one takes exactly its own.
#[test]
fn the_capture_of_an_older_priority_barrier_uses_its_own_mark() {
    let mut net = one_channel();
    let data = |seq: u64, n: u64| Msg::Data {
        seq,
        buf: (seq..seq + n).map(rec).collect(),
        pb: None,
    };
    let wire = [
        data(0, 2),
        Msg::Barrier(barrier(5, BarrierKind::Unaligned)),
        data(2, 2),
        Msg::Barrier(barrier(6, BarrierKind::Unaligned)),
    ];
    for m in wire {
        net.channels[0].wire.push_back((SimTime::ZERO, 0, m));
        net.deliver(0);
    }
    // The receiver reads barrier 5 first and starts its capture.
    assert!(matches!(net.take_input(0, usize::MAX), Some(Msg::Barrier(b)) if b.id == 5));
    net.start_capture(0, 5);
    let five = net.take_capture(0, 5).expect("captured");
    assert_eq!(
        (five.first_seq, five.records.len(), five.open),
        (0, 2, false)
    );
    assert!(matches!(net.take_input(0, usize::MAX), Some(Msg::Barrier(b)) if b.id == 6));
    net.start_capture(0, 6);
    let six = net.take_capture(0, 6).expect("captured");
    assert_eq!((six.first_seq, six.records.len(), six.open), (0, 4, false));
}
