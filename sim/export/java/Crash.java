import java.util.ArrayList;
import java.util.List;

// The crashes of the simulated run, as failures injected into the real job:
// subtask `subtask` of the operator, in its attempt `attempt`, fails when it
// has taken `records` records (read, or emitted for a source) in that
// attempt.
public final class Crash implements java.io.Serializable {
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
            if (p[0] == subtask && p[1] == attempt && p[2] == records) {
                Harness.injected(operator, subtask, attempt, records);
                throw new RuntimeException("ckptsim: injected crash of " + operator + " subtask " + subtask
                        + " (attempt " + attempt + ", after " + records + " records)");
            }
        }
    }
}
