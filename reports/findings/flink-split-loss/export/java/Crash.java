import java.util.ArrayList;
import java.util.List;

// The crashes of the simulated run, as failures injected into the real job:
// subtask `subtask` of the operator, in its attempt `attempt`, fails when it
// has taken `records` records (read, or emitted for a source) in that
// attempt. Flink fails over at once where the simulator waits its
// detection delay, so a subtask can be in a later attempt than the
// simulated one was: then the first later attempt that takes as many
// records fails instead. Each crash fires once (in this JVM: the
// MiniCluster's).
public final class Crash implements java.io.Serializable {
    private static final java.util.Set<String> FIRED = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<long[]> points = new ArrayList<>();

    /** `"subtask:attempt:records;..."` (empty: none). */
    public Crash(String plan) {
        for (String p : plan.split(";")) {
            if (p.isEmpty()) {
                continue;
            }
            String[] f = p.split(":");
            points.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
    }

    /** Throws when this record is a crash point. */
    public void check(String operator, int subtask, int attempt, long records) {
        for (long[] p : points) {
            if (p[0] != subtask || attempt < p[1] || p[2] != records) {
                continue;
            }
            String key = operator + "/" + p[0] + "/" + p[1] + "/" + p[2];
            if (FIRED.add(key)) {
                Harness.injected(operator, subtask, (int) p[1], records, attempt);
                throw new RuntimeException("ckptsim: injected crash of " + operator + " subtask " + subtask
                        + " (attempt " + attempt + ", after " + records + " records)");
            }
        }
    }
}
