//! The transactional log without a job: fencing, markers, the last stable
//! offset, timeouts, isolation levels and committed offsets.

use super::*;
use crate::model::record::Lineage;

const TP: TopicPartition = TopicPartition {
    topic: 0,
    partition: 0,
};
const TP1: TopicPartition = TopicPartition {
    topic: 0,
    partition: 1,
};

fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

fn rec(value: i64) -> Record {
    Record {
        key: 1,
        value,
        lineage: Lineage::default(),
        emitted_at: SimTime(0),
        timestamp: 0,
        payload: Default::default(),
    }
}

fn values(log: &TxLog, tp: TopicPartition, isolation: Isolation) -> Vec<i64> {
    log.read(tp, 0, isolation, usize::MAX)
        .0
        .into_iter()
        .map(|(_, r)| r.value)
        .collect()
}

fn log() -> TxLog {
    let mut log = TxLog::new();
    log.create_topic(0, 2);
    log
}

/// A committed transaction becomes readable to `read_committed` at its
/// marker; an aborted one never does, though `read_uncommitted` sees both.
#[test]
fn read_committed_sees_committed_transactions_only() {
    let mut log = log();
    let p = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", p, TP, t(0)).unwrap();
    log.produce(TP, Some(("a", p)), rec(1)).unwrap();
    assert!(values(&log, TP, Isolation::ReadCommitted).is_empty());
    assert_eq!(values(&log, TP, Isolation::ReadUncommitted), [1]);
    log.end_txn("a", p, true).unwrap();
    assert_eq!(values(&log, TP, Isolation::ReadCommitted), [1]);
    log.add_partition("a", p, TP, t(1)).unwrap();
    log.produce(TP, Some(("a", p)), rec(2)).unwrap();
    log.end_txn("a", p, false).unwrap();
    assert_eq!(values(&log, TP, Isolation::ReadCommitted), [1]);
    assert_eq!(values(&log, TP, Isolation::ReadUncommitted), [1, 2]);
    // Data, marker, data, marker: the next read starts past them all.
    assert_eq!(log.read(TP, 0, Isolation::ReadCommitted, 10).1, 4);
    assert_eq!(log.markers(TP), [(1, p.id, true), (3, p.id, false)]);
    assert_eq!(log.status("a").unwrap().2, Some(AbortCause::Requested));
}

/// An open transaction holds the last stable offset at its first offset:
/// a `read_committed` reader stalls there, behind data other producers
/// committed after it, until it ends.
#[test]
fn an_open_transaction_stalls_read_committed_readers() {
    let mut log = log();
    let a = log.init_producer("a", SimDuration::from_secs(60));
    let b = log.init_producer("b", SimDuration::from_secs(60));
    log.add_partition("a", a, TP, t(0)).unwrap();
    log.produce(TP, Some(("a", a)), rec(1)).unwrap();
    log.add_partition("b", b, TP, t(0)).unwrap();
    log.produce(TP, Some(("b", b)), rec(2)).unwrap();
    log.end_txn("b", b, true).unwrap();
    assert_eq!(log.last_stable_offset(TP), 0);
    assert_eq!(log.high_watermark(TP), 3);
    assert!(values(&log, TP, Isolation::ReadCommitted).is_empty());
    let open = log.open_transactions(TP);
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].transactional_id, "a");
    assert_eq!(open[0].started_at, Some(t(0)));
    log.end_txn("a", a, true).unwrap();
    assert_eq!(values(&log, TP, Isolation::ReadCommitted), [1, 2]);
    assert!(log.open_transactions(TP).is_empty());
}

/// `InitProducerId` with the same transactional id aborts what the old
/// producer had open and fences it: its writes and its `EndTxn` fail.
#[test]
fn a_new_producer_aborts_and_fences_the_old_one() {
    let mut log = log();
    let old = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", old, TP, t(0)).unwrap();
    log.add_partition("a", old, TP1, t(0)).unwrap();
    log.produce(TP, Some(("a", old)), rec(1)).unwrap();
    log.produce(TP1, Some(("a", old)), rec(2)).unwrap();
    let new = log.init_producer("a", SimDuration::from_secs(60));
    assert_eq!((new.id, new.epoch), (old.id, old.epoch + 1));
    assert_eq!(log.status("a").unwrap().2, Some(AbortCause::NewProducer));
    let fenced = LogError::ProducerFenced {
        epoch: 0,
        current: 1,
    };
    assert_eq!(log.end_txn("a", old, true), Err(fenced.clone()));
    assert_eq!(log.add_partition("a", old, TP, t(1)), Err(fenced.clone()));
    assert_eq!(log.produce(TP, Some(("a", old)), rec(3)), Err(fenced));
    assert!(values(&log, TP, Isolation::ReadCommitted).is_empty());
    assert!(values(&log, TP1, Isolation::ReadCommitted).is_empty());
    assert_eq!(log.last_stable_offset(TP), log.high_watermark(TP));
    assert_eq!(log.markers(TP1), [(1, old.id, false)]);
}

/// Ending a transaction that added no partition is `INVALID_TXN_STATE`, as
/// is ending one twice; a transactional write needs its partition added.
#[test]
fn an_empty_transaction_cannot_end() {
    let mut log = log();
    let p = log.init_producer("a", SimDuration::from_secs(60));
    let empty = Err(LogError::InvalidTxnState(TxnStatus::Empty));
    assert_eq!(log.end_txn("a", p, true), empty);
    assert_eq!(
        log.produce(TP, Some(("a", p)), rec(1)),
        Err(LogError::InvalidTxnState(TxnStatus::Empty))
    );
    log.add_partition("a", p, TP, t(0)).unwrap();
    assert_eq!(
        log.produce(TP1, Some(("a", p)), rec(1)),
        Err(LogError::PartitionNotAdded(TP1))
    );
    log.end_txn("a", p, true).unwrap();
    assert_eq!(
        log.end_txn("a", p, true),
        Err(LogError::InvalidTxnState(TxnStatus::CompleteCommit))
    );
    let unknown = TopicPartition {
        topic: 9,
        partition: 0,
    };
    assert_eq!(
        log.produce(unknown, None, rec(1)),
        Err(LogError::UnknownPartition(unknown))
    );
}

/// The coordinator aborts a transaction older than its timeout and bumps
/// the epoch: a committer that resumes it later is fenced and its records
/// are lost; one younger than the timeout stays open.
#[test]
fn the_broker_aborts_a_transaction_past_its_timeout() {
    let mut log = log();
    let a = log.init_producer("a", SimDuration::from_millis(100));
    let b = log.init_producer("b", SimDuration::from_millis(100));
    log.add_partition("a", a, TP, t(0)).unwrap();
    log.produce(TP, Some(("a", a)), rec(1)).unwrap();
    log.add_partition("b", b, TP1, t(50)).unwrap();
    log.produce(TP1, Some(("b", b)), rec(2)).unwrap();
    assert!(
        log.expire(t(100)).is_empty(),
        "not older than its timeout yet"
    );
    assert_eq!(log.expire(t(120)), ["a"]);
    assert_eq!(log.timed_out, [("a".to_string(), a, t(120))]);
    let (status, now, cause) = log.status("a").unwrap();
    assert_eq!(
        (status, now.epoch, cause),
        (TxnStatus::CompleteAbort, 1, Some(AbortCause::TimedOut))
    );
    assert!(matches!(
        log.end_txn("a", a, true),
        Err(LogError::ProducerFenced { .. })
    ));
    assert!(values(&log, TP, Isolation::ReadCommitted).is_empty());
    assert_eq!(values(&log, TP, Isolation::ReadUncommitted), [1]);
    log.end_txn("b", b, true).unwrap();
    assert_eq!(values(&log, TP1, Isolation::ReadCommitted), [2]);
}

/// Non-transactional writes are visible at once, below any open
/// transaction's first offset; consumer groups keep their own offsets.
#[test]
fn plain_writes_and_committed_offsets() {
    let mut log = log();
    log.produce(TP, None, rec(1)).unwrap();
    let p = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", p, TP, t(0)).unwrap();
    log.produce(TP, Some(("a", p)), rec(2)).unwrap();
    log.produce(TP, None, rec(3)).unwrap();
    assert_eq!(values(&log, TP, Isolation::ReadCommitted), [1]);
    let (first, next) = log.read(TP, 0, Isolation::ReadCommitted, 1);
    assert_eq!((first.len(), next), (1, 1));
    log.commit_offset("g", TP, next);
    assert_eq!(log.committed_offset("g", TP), Some(1));
    assert_eq!(log.committed_offset("h", TP), None);
    log.end_txn("a", p, true).unwrap();
    assert_eq!(log.read(TP, next, Isolation::ReadCommitted, 10).0.len(), 2);
}

/// A read_committed reader of a topic reads each partition in order, each
/// record at the time its transaction's commit marker was written (its own
/// write without a transaction); aborted and open data never.
#[test]
fn the_committed_view_stamps_records_with_their_commit() {
    let mut log = log();
    log.tick(t(1));
    log.produce(TP1, None, rec(9)).unwrap();
    let a = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", a, TP, t(2)).unwrap();
    log.produce(TP, Some(("a", a)), rec(1)).unwrap();
    log.tick(t(5));
    log.end_txn("a", a, true).unwrap();
    log.add_partition("a", a, TP, t(6)).unwrap();
    log.produce(TP, Some(("a", a)), rec(2)).unwrap();
    log.end_txn("a", a, false).unwrap();
    log.add_partition("a", a, TP, t(7)).unwrap();
    log.produce(TP, Some(("a", a)), rec(3)).unwrap();
    let view: Vec<(i64, SimTime)> = (log.committed_view(0).into_iter())
        .map(|(r, at)| (r.value, at))
        .collect();
    assert_eq!(view, [(1, t(5)), (9, t(1))]);
    assert_eq!(log.topic_offsets(0), [(0, 4, 5), (1, 1, 1)]);
    let open = log.open_in_topic(0);
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].transactional_id.as_str(), open[0].first_offset),
        ("a", 4)
    );
}

/// Each request runs the coordinator's timeout scan first: a transaction
/// past its timeout is aborted before the request sees it, and its
/// producer is fenced.
#[test]
fn a_request_after_the_timeout_finds_the_transaction_aborted() {
    let mut log = log();
    let a = log.init_producer("a", SimDuration::from_millis(10));
    log.add_partition("a", a, TP, t(0)).unwrap();
    log.produce(TP, Some(("a", a)), rec(1)).unwrap();
    log.tick(t(5));
    assert_eq!(log.status("a").unwrap().0, TxnStatus::Ongoing);
    log.tick(t(11));
    let (status, now, cause) = log.status("a").unwrap();
    assert_eq!(
        (status, cause),
        (TxnStatus::CompleteAbort, Some(AbortCause::TimedOut))
    );
    assert!(now.epoch > a.epoch);
    assert!(matches!(
        log.end_txn("a", a, true),
        Err(LogError::ProducerFenced { .. })
    ));
}

/// `ListTransactions` by prefix: every id that starts with it, none other.
#[test]
fn transactions_are_listed_by_prefix() {
    let mut log = log();
    for id in ["out-0-0", "out-1-0", "other-0-0", "out2-0-0"] {
        log.init_producer(id, SimDuration::from_secs(1));
    }
    let ids: Vec<String> = (log.list_transactions("out-").into_iter())
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["out-0-0", "out-1-0"]);
}

fn as_of(log: &TxLog, tp: TopicPartition, isolation: Isolation, now: SimTime) -> (Vec<i64>, u64) {
    let (records, next) = log.read_as_of(tp, 0, isolation, usize::MAX, now);
    (records.into_iter().map(|(_, r)| r.value).collect(), next)
}

/// A fetch at `now` sees what was written before `now`; `read_committed`
/// stops at a transaction open as of then, though it commits later, and
/// reads past it from its commit on.
#[test]
fn a_read_as_of_a_time_sees_the_log_as_it_was() {
    let mut log = log();
    log.tick(t(1));
    let p = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", p, TP, t(1)).unwrap();
    log.produce(TP, Some(("a", p)), rec(1)).unwrap();
    log.tick(t(2));
    log.produce(TP, None, rec(2)).unwrap();
    log.tick(t(3));
    log.end_txn("a", p, true).unwrap();
    let rc = Isolation::ReadCommitted;
    assert_eq!(as_of(&log, TP, rc, t(1)), (vec![], 0), "nothing before 1ms");
    assert_eq!(
        as_of(&log, TP, rc, t(3)),
        (vec![], 0),
        "stalled at the open one"
    );
    assert_eq!(
        as_of(&log, TP, rc, t(4)),
        (vec![1, 2], 3),
        "committed at 3ms"
    );
    let ru = Isolation::ReadUncommitted;
    assert_eq!(as_of(&log, TP, ru, t(2)), (vec![1], 1));
    assert_eq!(as_of(&log, TP, ru, t(3)), (vec![1, 2], 2));
}

/// The failure-free run's log: no reader reads an aborted transaction's
/// data, `read_uncommitted` included; `read_committed` still waits for its
/// end, as the run's readers did; the groups' offsets are gone.
#[test]
fn the_failure_free_log_hides_aborted_data() {
    let mut log = log();
    log.tick(t(1));
    let p = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", p, TP, t(1)).unwrap();
    log.produce(TP, Some(("a", p)), rec(1)).unwrap();
    log.produce(TP, None, rec(2)).unwrap();
    log.tick(t(5));
    log.end_txn("a", p, false).unwrap();
    log.commit_offset("g", TP, 2);
    let ru = Isolation::ReadUncommitted;
    assert_eq!(as_of(&log, TP, ru, t(2)).0, [1, 2]);
    let free = log.into_failure_free();
    assert_eq!(as_of(&free, TP, ru, t(2)).0, [2]);
    let rc = Isolation::ReadCommitted;
    assert_eq!(as_of(&free, TP, rc, t(2)), (vec![], 0));
    assert_eq!(as_of(&free, TP, rc, t(6)), (vec![2], 3));
    assert_eq!(free.committed_offset("g", TP), None);
}

/// A topic is closed while its writer has finished; a reader at its end
/// has read it all only then.
#[test]
fn a_closed_topic_ends_its_readers() {
    let mut log = log();
    log.tick(t(1));
    log.produce(TP, None, rec(1)).unwrap();
    assert!(!log.read_to_end(TP, 1, t(2)));
    log.close_topic(0, t(2));
    assert!(!log.read_to_end(TP, 1, t(2)), "closed at 2ms, seen after");
    assert!(log.read_to_end(TP, 1, t(3)));
    assert!(!log.read_to_end(TP, 0, t(3)), "a record is left");
    log.reopen_topic(0, t(4));
    assert!(log.closed_as_of(0, t(4)) && !log.closed_as_of(0, t(5)));
    assert_eq!(log.partition_count(0), 2);
}

/// A job restored from a snapshot of another run starts its clock at zero:
/// the log it carries in is there from its start, and its topics are open
/// (their writers run again).
#[test]
fn a_log_carried_into_a_new_job_is_there_from_its_start() {
    let mut log = log();
    log.tick(t(100));
    let p = log.init_producer("a", SimDuration::from_secs(60));
    log.add_partition("a", p, TP, t(100)).unwrap();
    log.produce(TP, Some(("a", p)), rec(1)).unwrap();
    log.tick(t(120));
    log.end_txn("a", p, true).unwrap();
    log.close_topic(0, t(150));
    let rc = Isolation::ReadCommitted;
    assert_eq!(
        as_of(&log, TP, rc, t(5)),
        (vec![], 0),
        "before it was written"
    );
    log.carry_into_new_job();
    assert_eq!(as_of(&log, TP, rc, t(1)), (vec![1], 2));
    assert!(!log.closed_as_of(0, t(200)), "its writer runs again");
}

const CFG: broker::ProducerConfig = broker::ProducerConfig {
    delivery_timeout: SimDuration(30_000_000),
    request_timeout: SimDuration(10_000_000),
    retry_backoff: SimDuration(2_000_000),
};

fn window(from: u64, until: u64, fault: broker::BrokerFault) -> broker::BrokerWindow {
    broker::BrokerWindow {
        from: t(from),
        until: t(until),
        fault,
        role: BrokerRole::Leader,
    }
}

/// A request's fate: answered at once with no fault; retried every
/// backoff while the brokers are down, every request timeout while
/// requests are lost, until an attempt falls past the window; expired at
/// its delivery timeout when none does in time; answered late when slow.
#[test]
fn a_request_is_retried_until_its_delivery_timeout() {
    use broker::{fate, BrokerFault, Fate};
    assert_eq!(
        fate(&[], t(5), &CFG),
        Fate::Lands {
            at: t(5),
            retries: 0
        }
    );
    let down = [window(10, 25, BrokerFault::Down)];
    assert_eq!(
        fate(&down, t(11), &CFG),
        Fate::Lands {
            at: t(25),
            retries: 7
        }
    );
    let long = [window(10, 100, BrokerFault::Down)];
    assert_eq!(
        fate(&long, t(11), &CFG),
        Fate::Expires {
            at: t(41),
            retries: 15
        }
    );
    let lost = [window(10, 25, BrokerFault::Lost)];
    assert_eq!(
        fate(&lost, t(10), &CFG),
        Fate::Lands {
            at: t(30),
            retries: 2
        }
    );
    let lost_long = [window(10, 45, BrokerFault::Lost)];
    assert!(matches!(
        fate(&lost_long, t(10), &CFG),
        Fate::Expires { at, .. } if at == t(40)
    ));
    let slow = [window(0, 50, BrokerFault::Slow(SimDuration(4_000_000)))];
    assert_eq!(
        fate(&slow, t(10), &CFG),
        Fate::Lands {
            at: t(14),
            retries: 0
        }
    );
    let too_slow = [window(0, 50, BrokerFault::Slow(SimDuration(31_000_000)))];
    assert!(matches!(fate(&too_slow, t(0), &CFG), Fate::Expires { .. }));
    // Back to back windows: down, then slow.
    let both = [
        window(10, 20, BrokerFault::Down),
        window(20, 30, BrokerFault::Slow(SimDuration(1_000_000))),
    ];
    assert_eq!(
        fate(&both, t(10), &CFG),
        Fate::Lands {
            at: t(21),
            retries: 5
        }
    );
}

/// A request waits in flight until its answer is due: then it lands,
/// stamped with that time, or its error waits for its client; a request
/// whose transaction timed out meanwhile is refused (fenced).
#[test]
fn requests_in_flight_land_when_due_or_fail_their_client() {
    use broker::BrokerFault;
    let client = Client {
        operator: 0,
        subtask: 0,
        attempt: 0,
    };
    let mut log = log();
    log.set_broker_faults(vec![window(10, 20, BrokerFault::Down)]);
    let due = log.send(client, None, vec![(TP, rec(1))], false, &CFG, t(12));
    assert_eq!(due, t(20));
    assert!(log.has_in_flight());
    assert_eq!(log.in_flight_until(client), Some(t(20)));
    assert!(log.in_flight_errors(client).is_empty());
    log.deliver(t(19));
    assert_eq!(
        values(&log, TP, Isolation::ReadUncommitted),
        Vec::<i64>::new()
    );
    log.deliver(t(20));
    assert_eq!(values(&log, TP, Isolation::ReadUncommitted), vec![1]);
    assert!(!log.has_in_flight());
    // Expired: the error reaches its client, not another attempt's.
    log.set_broker_faults(vec![window(100, 200, BrokerFault::Down)]);
    log.send(client, None, vec![(TP, rec(2))], false, &CFG, t(100));
    assert_eq!(log.in_flight_errors(client).len(), 1);
    log.deliver(t(130));
    assert!(log.has_errors());
    let next = Client {
        attempt: 1,
        ..client
    };
    assert!(log.take_errors(next).is_empty());
    log.send(client, None, vec![(TP, rec(3))], false, &CFG, t(150));
    log.deliver(t(180));
    let errors = log.take_errors(client);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].why.contains("expired"), "{errors:?}");
    assert_eq!(values(&log, TP, Isolation::ReadUncommitted), vec![1]);
    // A transaction that times out while its records are in flight.
    log.set_broker_faults(vec![window(300, 320, BrokerFault::Down)]);
    let p = log.init_producer_for("tx", SimDuration(5_000_000), client);
    log.add_partition("tx", p, TP, t(300)).unwrap();
    log.send(
        client,
        Some(("tx".into(), p)),
        vec![(TP, rec(4))],
        false,
        &CFG,
        t(300),
    );
    let predicted = log.in_flight_errors(client);
    assert!(predicted[0].why.contains("timed out"), "{predicted:?}");
    log.deliver(t(320));
    let errors = log.take_errors(client);
    assert!(errors[0].why.contains("fenced"), "{errors:?}");
    // A redeployed subtask's producer drops what the failed one had.
    log.set_broker_faults(vec![window(400, 420, BrokerFault::Down)]);
    log.send(client, None, vec![(TP, rec(5))], false, &CFG, t(400));
    // The failure-free run's copy has no broker fault and nothing in flight.
    let mut free = log.clone().into_failure_free();
    assert!(!free.has_in_flight());
    let due = free.send(client, None, vec![(TP, rec(6))], false, &CFG, t(405));
    assert_eq!(due, t(405));
    log.abandon(next);
    assert!(!log.has_in_flight());
}

fn coordinator(from: u64, until: u64, fault: broker::BrokerFault) -> broker::BrokerWindow {
    broker::BrokerWindow {
        role: BrokerRole::Coordinator,
        ..window(from, until, fault)
    }
}

/// A call to the coordinator is answered at its first retry past a
/// window, with no deadline; the caller gives up after `calls` waits of
/// `max_block`.
#[test]
fn a_coordinator_call_waits_for_the_answer_or_gives_up() {
    use super::coordinator::Call;
    use broker::BrokerFault;
    let mut log = TxLog::new();
    assert_eq!(log.coordinator_answer(t(10), &CFG), t(10));
    log.set_broker_faults(vec![coordinator(10, 25, BrokerFault::Down)]);
    // Retries every 2 ms from 10: the first at or past 25 is at 26.
    assert_eq!(log.coordinator_answer(t(10), &CFG), t(26));
    let block = SimDuration(10_000_000);
    let answered = log.coordinator_call(t(10), block, 3, &CFG);
    assert_eq!(
        answered,
        Call::Answered {
            at: t(26),
            timeouts: 1
        }
    );
    assert_eq!(
        log.coordinator_call(t(10), block, 1, &CFG),
        Call::GaveUp { at: t(20) }
    );
    // Without the window's end in sight (lost: 10 ms per attempt) the
    // answer still comes, long after any delivery timeout.
    log.set_broker_faults(vec![coordinator(0, 100, BrokerFault::Lost)]);
    assert_eq!(log.coordinator_answer(t(5), &CFG), t(105));
    // A leaders' window does not hold up the coordinator.
    log.set_broker_faults(vec![window(0, 100, BrokerFault::Down)]);
    assert_eq!(log.coordinator_answer(t(5), &CFG), t(5));
}

/// A produce request that adds a partition to its transaction waits for
/// the coordinator's `AddPartitionsToTxn`; one that adds none does not.
#[test]
fn a_request_that_adds_a_partition_waits_for_the_coordinator() {
    use broker::BrokerFault;
    let mut log = TxLog::new();
    log.create_topic(0, 1);
    let client = Client::default();
    log.set_broker_faults(vec![coordinator(10, 25, BrokerFault::Down)]);
    assert_eq!(
        log.send(client, None, vec![(TP, rec(1))], false, &CFG, t(12)),
        t(12)
    );
    assert_eq!(
        log.send(client, None, vec![(TP, rec(2))], true, &CFG, t(12)),
        t(26)
    );
}

/// A coordinator down or unreachable aborts nothing on timeout; once
/// back it aborts what timed out meanwhile, before the commit it held up,
/// which is refused and stamped as of its answer. A slow one aborts on
/// time.
#[test]
fn the_coordinator_aborts_on_timeout_once_it_is_back() {
    use broker::BrokerFault;
    let timeout = SimDuration(20_000_000);
    let open = |windows| {
        let mut log = TxLog::new();
        log.create_topic(0, 1);
        log.set_broker_faults(windows);
        let p = log.init_producer("tx", timeout);
        log.add_partition("tx", p, TP, t(0)).unwrap();
        log.produce(TP, Some(("tx", p)), rec(1)).unwrap();
        (log, p)
    };
    let (mut log, p) = open(vec![coordinator(10, 50, BrokerFault::Down)]);
    log.tick(t(40));
    assert!(log.timed_out.is_empty(), "down: nothing aborted at 40 ms");
    let refused = log.commit_as_of("tx", p, t(51));
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(log.timed_out, vec![("tx".to_string(), p, t(50))]);
    let (mut log, _) = open(vec![coordinator(10, 50, BrokerFault::Slow(SimDuration(1)))]);
    log.tick(t(40));
    assert_eq!(log.timed_out.len(), 1, "slow: aborted on time");
    // Within the timeout, the commit lands as of its answer: a reader
    // fetching before it sees nothing committed.
    let (mut log, p) = open(vec![coordinator(5, 15, BrokerFault::Down)]);
    assert_eq!(log.commit_as_of("tx", p, t(16)), Ok(()));
    let read = |log: &TxLog, at| log.read_as_of(TP, 0, Isolation::ReadCommitted, 10, t(at)).0;
    assert!(read(&log, 16).is_empty());
    assert_eq!(read(&log, 17).len(), 1);
}
