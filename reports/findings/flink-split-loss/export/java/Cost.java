import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

// A task's per-record cost: `cost` plus up to `jitter` per record, owed and
// paid by parking the thread once the debt reaches a millisecond, so that
// costs below the timer's resolution keep their average rate.
public final class Cost implements java.io.Serializable {
    private static final long PARK_ABOVE_NS = 1_000_000L;
    private final long costNs;
    private final long jitterNs;
    private transient long owed;
    private transient SplittableRandom rng;

    public Cost(long costNs, long jitterNs) {
        this.costNs = costNs;
        this.jitterNs = jitterNs;
    }

    public void pay() throws InterruptedException {
        if (costNs == 0 && jitterNs == 0) {
            return;
        }
        if (rng == null) {
            rng = new SplittableRandom(costNs * 31 + jitterNs);
        }
        owed += costNs + (jitterNs > 0 ? rng.nextLong(jitterNs + 1) : 0);
        if (owed >= PARK_ABOVE_NS) {
            long start = System.nanoTime();
            LockSupport.parkNanos(owed);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            // Oversleeping is credited to the next records.
            owed -= System.nanoTime() - start;
            owed = Math.max(owed, -PARK_ABOVE_NS);
        }
    }
}
