import java.util.ArrayList;
import java.util.List;

// The crashes of the simulated run, as failures injected into the real job.
// A point of subtask `subtask` of this operator, in its attempt `attempt`,
// fires (the task throws) at a record:
// - plain: when it has taken `records` records (read, or emitted for a
//   source) in that attempt;
// - anchored to its own event: when it has taken `after` records since the
//   `nth` snapshot (`s`) or checkpoint notification (`n`) of its attempt;
// - anchored to another task's event (`x`): at its first record after that
//   task's watch (`w`, in that operator's plan) saw the same: the job's
//   latest event before the simulated crash, wherever it was.
// So the crash comes at the same *event* as in the simulated run where
// record counts differ. A crashed task then stands still for the
// scenario's detection delay (its thread sleeps: no records, no barriers,
// no acknowledgements) before it fails, as a dead task does until the
// simulated job manager notices: a checkpoint the task had acknowledged can
// complete meanwhile, and the failover restores it. Flink fails over at once where the simulator waits
// its detection delay, so a subtask can be in a later attempt than the
// simulated one was: then the first later attempt that gets as far fails
// instead. Each crash fires once (in this JVM: the MiniCluster's). A Crash
// is deserialised with its operator for every subtask and attempt, so the
// events it counts are that attempt's.
public final class Crash implements java.io.Serializable {
    private static final java.util.Set<String> FIRED = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Crash points a watch set off: `operator/subtask/attempt/records`. */
    private static final java.util.Set<String> SET_OFF = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final int operator;
    private final long detectionMs;
    /** subtask, attempt, records, event (0 none, 1 snapshot, 2 notification, 3 another task's), nth, after. */
    private final List<long[]> points = new ArrayList<>();
    /** subtask, attempt, event, nth, after, then the point: operator, subtask, attempt, records. */
    private final List<long[]> watches = new ArrayList<>();
    /** Per point, then per watch: the records taken at its event (-1: not yet). */
    private final long[] at;
    /** Events seen in this attempt, per kind. */
    private final long[] seen = new long[3];

    /** `plan`: see `crash_plan` in the exporter (empty: none);
     *  `detectionMs`: how long a crashed task stands still before it fails. */
    public Crash(int operator, long detectionMs, String plan) {
        this.operator = operator;
        this.detectionMs = detectionMs;
        for (String p : plan.split(";")) {
            if (p.isEmpty()) {
                continue;
            }
            String[] f = p.split(":");
            if (f[0].equals("w")) {
                watches.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), kind(f[3]), Long.parseLong(f[4]),
                        Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]),
                        Long.parseLong(f[9])});
                continue;
            }
            long event = f.length > 3 ? kind(f[3]) : 0;
            long nth = f.length > 4 ? Long.parseLong(f[4]) : 0;
            long after = f.length > 5 ? Long.parseLong(f[5]) : 0;
            points.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), event, nth, after});
        }
        at = new long[points.size() + watches.size()];
        java.util.Arrays.fill(at, -1);
    }

    private static long kind(String letter) {
        return letter.equals("s") ? 1 : letter.equals("n") ? 2 : 3;
    }

    private static String key(long operator, long subtask, long attempt, long records) {
        return operator + "/" + subtask + "/" + attempt + "/" + records;
    }

    /** The operator took a snapshot, having taken `records` records. */
    public void snapshot(long records) {
        event(1, records);
    }

    /** The operator was notified of a completed checkpoint. */
    public void notified(long records) {
        event(2, records);
    }

    private synchronized void event(int kind, long records) {
        seen[kind]++;
        for (int i = 0; i < points.size(); i++) {
            long[] p = points.get(i);
            if (p[3] == kind && p[4] == seen[kind]) {
                at[i] = records;
            }
        }
        for (int i = 0; i < watches.size(); i++) {
            long[] w = watches.get(i);
            if (w[2] == kind && w[3] == seen[kind]) {
                at[points.size() + i] = records;
            }
        }
    }

    /** Throws when this record is a crash point. */
    public synchronized void check(String name, int subtask, int attempt, long records) {
        for (int i = 0; i < watches.size(); i++) {
            long[] w = watches.get(i);
            long since = at[points.size() + i];
            // The watched task has taken `after` records since its event.
            if (w[0] == subtask && attempt >= w[1] && since >= 0 && records - since > w[4]) {
                SET_OFF.add(key(w[5], w[6], w[7], w[8]));
            }
        }
        for (int i = 0; i < points.size(); i++) {
            long[] p = points.get(i);
            if (p[0] != subtask || attempt < p[1]) {
                continue;
            }
            boolean due;
            if (p[3] == 0) {
                due = p[2] == records;
            } else if (p[3] == 3) {
                due = SET_OFF.contains(key(operator, p[0], p[1], p[2]));
            } else {
                // The record after `after` records since the event.
                due = at[i] >= 0 && records - at[i] == p[5] + 1;
            }
            if (!due) {
                continue;
            }
            if (FIRED.add(key(operator, p[0], p[1], p[2]))) {
                Harness.injected(name, subtask, (int) p[1], p[2], attempt, records);
                try {
                    Thread.sleep(detectionMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new RuntimeException("ckptsim: injected crash of " + name + " subtask " + subtask
                        + " (attempt " + attempt + ", after " + records + " records"
                        + (p[3] == 0 ? "" : p[3] == 3 ? ", at another task's event"
                                : ", " + p[5] + " after its " + (p[3] == 1 ? "snapshot" : "notification")
                                        + " " + p[4] + " of the attempt")
                        + ")");
            }
        }
    }
}
