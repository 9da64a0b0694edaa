import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.util.Collector;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A source with idleness goes idle while its last records wait in the
 * (slow) downstream's input; unaligned checkpoints capture them with the
 * idle status behind them; the downstream fails once; after the restore,
 * does the downstream follow the source's watermarks again?
 *
 * Record i has timestamp i ms. The source emits 1000 records, pauses 1.5 s
 * (so its idleness timeout passes), then emits the rest. A fresh rate
 * limiter (after a restore) does not pause before its 1000th record.
 */
public class StaleIdle {
    static final long N = 3000;
    static final AtomicBoolean FAILED = new AtomicBoolean(false);
    static final AtomicLong FIRED = new AtomicLong();
    static final AtomicLong PROCESSED = new AtomicLong();
    static final AtomicLong AFTER_RESTORE = new AtomicLong();
    static final AtomicLong MAX_WM_AFTER_RESTORE = new AtomicLong(Long.MIN_VALUE);
    static final AtomicLong FIRST_RECORD_AFTER_RESTORE = new AtomicLong(-1);
    static volatile long start;
    /** The record before which the source pauses (1000, or the last one). */
    static volatile long pauseAt = 1000;

    static class Phased implements RateLimiterStrategy {
        public RateLimiter createRateLimiter(int parallelism) {
            return new RateLimiter() {
                long n = 0;
                final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r);
                    t.setDaemon(true);
                    return t;
                });

                public CompletionStage<Void> acquire(int permits) {
                    n++;
                    if (n == pauseAt && !FAILED.get()) {
                        CompletableFuture<Void> f = new CompletableFuture<>();
                        timer.schedule(() -> f.complete(null), 1500, TimeUnit.MILLISECONDS);
                        return f;
                    }
                    return CompletableFuture.completedFuture(null);
                }
            };
        }
    }

    static class Probe extends KeyedProcessFunction<Long, Long, Long> {
        final long failAtMs;

        Probe(long failAtMs) {
            this.failAtMs = failAtMs;
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            if (PROCESSED.incrementAndGet() == 1) {
                start = System.currentTimeMillis();
            }
            Thread.sleep(3);
            ctx.timerService().registerEventTimeTimer(value);
            if (FAILED.get()) {
                AFTER_RESTORE.incrementAndGet();
                if (FIRST_RECORD_AFTER_RESTORE.compareAndSet(-1, value)) {
                    System.out.printf("RESTORED: first record %d at %d ms%n", value, System.currentTimeMillis() - start);
                }
                MAX_WM_AFTER_RESTORE.accumulateAndGet(ctx.timerService().currentWatermark(), Math::max);
            } else if (System.currentTimeMillis() - start > failAtMs && FAILED.compareAndSet(false, true)) {
                System.out.printf("FAIL at record %d, processed %d, %d ms after the first, watermark %d%n",
                        value, PROCESSED.get(), System.currentTimeMillis() - start, ctx.timerService().currentWatermark());
                throw new RuntimeException("the one failure");
            }
            out.collect(value);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Long> out) {
            FIRED.incrementAndGet();
        }
    }

    public static void main(String[] args) throws Exception {
        boolean unaligned = args[0].startsWith("unaligned");
        // Modes: aligned, unaligned, unaligned-no-idleness, aligned-idle-end,
        // aligned-idle-end-no-idleness.
        boolean idleness = !args[0].endsWith("-no-idleness");
        long failAt = Long.parseLong(args[1]);
        if (args[0].contains("idle-end")) {
            // No failure; the source pauses before its last record, so it is
            // idle when that record comes and its input ends.
            pauseAt = N;
            failAt = Long.MAX_VALUE;
        }
        Configuration conf = new Configuration();
        conf.setString("execution.checkpointing.interval", "100 ms");
        conf.setString("execution.checkpointing.unaligned.enabled", Boolean.toString(unaligned));
        conf.setString("restart-strategy.type", "fixed-delay");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "100 ms");
        conf.setString("pipeline.auto-watermark-interval", "20 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i, N, new Phased(), Types.LONG);
        WatermarkStrategy<Long> strategy =
                WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ZERO)
                        .withTimestampAssigner((e, t) -> e);
        if (idleness) {
            strategy = strategy.withIdleness(Duration.ofMillis(200));
        }
        env.fromSource(source, strategy, "src")
                .keyBy(x -> x % 4)
                .process(new Probe(failAt))
                .addSink(new DiscardingSink<>());
        env.execute("stale-idle");
        System.out.printf(
                "RESULT mode=%s failed=%s processed=%d after_restore=%d first_after_restore=%d max_watermark_after_restore=%d timers_fired=%d of %d%n",
                args[0], FAILED.get(), PROCESSED.get(), AFTER_RESTORE.get(),
                FIRST_RECORD_AFTER_RESTORE.get(), MAX_WM_AFTER_RESTORE.get(), FIRED.get(), N);
    }
}
