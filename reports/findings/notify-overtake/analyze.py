#!/usr/bin/env python3
"""Reads a real run's Flink log (DEBUG for StreamTask and TaskExecutor, as
reproduce.sh sets it) and says, per task attempt, in which order the
checkpoint triggers and the completion notifications arrived (TaskExecutor:
"Trigger checkpoint", "Confirm completed checkpoint") and ran on the task
thread (StreamTask: "Starting checkpoint", "Notify checkpoint ... complete").

An overtake: the notification of N arrived before the trigger of a later
checkpoint M, yet M's snapshot ran first. Commit latency: from the job
manager's "Completed checkpoint N" to the task running N's notification
(the Sink V2 committer commits in it).

    python3 analyze.py RUN_DIR        # RUN_DIR/real/flink.log
"""
import re
import sys
from collections import defaultdict


def ms(stamp):
    h, m, rest = stamp.split(":")
    s, milli = rest.split(",")
    return ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(milli)


LINE = re.compile(r"^(\d\d:\d\d:\d\d,\d\d\d) +\w+ +\S+ +\[\] - (.*)$")
ARRIVE_TRIGGER = re.compile(r"Trigger checkpoint (\d+)@\d+ for \w+_\w+_(\d+)_(\d+)\.")
ARRIVE_NOTIFY = re.compile(r"Confirm completed checkpoint (\d+)@\d+ .* for \w+_\w+_(\d+)_(\d+)\.")
RUN_TRIGGER = re.compile(r"Starting checkpoint (\d+) .* on task .*\((\d+)/\d+\)#(\d+)$")
RUN_NOTIFY = re.compile(r"Notify checkpoint (\d+) complete on task .*\((\d+)/\d+\)#(\d+)$")
COMPLETED = re.compile(r"Completed checkpoint (\d+) for job")


def parse(path):
    """Per (subtask, attempt): events as (time, seq, what, checkpoint)."""
    tasks = defaultdict(list)
    completed = {}
    for seq, raw in enumerate(open(path, errors="replace")):
        m = LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        t, msg = ms(m.group(1)), m.group(2)
        for what, rx, one_based in (
            ("arrive-trigger", ARRIVE_TRIGGER, False),
            ("arrive-notify", ARRIVE_NOTIFY, False),
            ("run-trigger", RUN_TRIGGER, True),
            ("run-notify", RUN_NOTIFY, True),
        ):
            e = rx.search(msg)
            if e:
                sub = int(e.group(2)) - (1 if one_based else 0)
                tasks[(sub, int(e.group(3)))].append((t, seq, what, int(e.group(1))))
        c = COMPLETED.search(msg)
        if c:
            completed[int(c.group(1))] = t
    return tasks, completed


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def analyze(path):
    tasks, completed = parse(path)
    overtakes, late, notified, lost = [], 0, 0, 0
    latency, queued = [], []
    for key, evs in sorted(tasks.items()):
        # The first of each: a notification of N is logged again when an
        # abort mail carries N as the latest completed checkpoint.
        order, at = {}, {}
        for t, seq, w, c in evs:
            order.setdefault((w, c), seq)
            at.setdefault((w, c), t)
        for (w, n), seq in order.items():
            if w != "arrive-notify":
                continue
            ran = order.get(("run-notify", n))
            if ran is None:
                lost += 1
                continue
            notified += 1
            if n in completed:
                latency.append(at[("run-notify", n)] - completed[n])
            queued.append(at[("run-notify", n)] - at[("arrive-notify", n)])
            for (w2, m), s2 in order.items():
                if w2 != "run-trigger" or m <= n or s2 > ran:
                    continue
                late += 1
                arrived = order.get(("arrive-trigger", m))
                if arrived is not None and arrived > seq:
                    overtakes.append((key, n, m))
    return {
        "checkpoints_completed": len(completed),
        "notifications_run": notified,
        "notifications_not_run": lost,
        "snapshot_before_an_earlier_notification": late,
        "notifications_overtaken": len({(k, n) for k, n, _ in overtakes}),
        "overtakes": len(overtakes),
        "overtake_examples": overtakes[:3],
        "commit_latency_ms": {"p50": pct(latency, 0.5), "p99": pct(latency, 0.99), "max": max(latency, default=None)},
        "queued_ms": {"p50": pct(queued, 0.5), "p99": pct(queued, 0.99), "max": max(queued, default=None)},
    }


if __name__ == "__main__":
    r = analyze(sys.argv[1].rstrip("/") + "/real/flink.log")
    for k, v in r.items():
        print(f"{k}: {v}")
