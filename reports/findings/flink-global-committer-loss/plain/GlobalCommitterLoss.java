// Plain Flink job (only Flink's own classes) probing FLINK-38614:
// a Sink V2 with SupportsCommitter + SupportsPostCommitTopology (global committer)
// may lose the committables of the final (FLIP-147) checkpoint.
//
// Usage:
//   java -cp <flink-dist>:<log4j jars>:. GlobalCommitterLoss <aligned|unaligned> [key=value ...]
// Keys (defaults in brackets):
//   n=2000            records produced by the bounded source (fromSequence, parallelism 2)
//   sleepUs=1000      busy-ish sleep per record in the map, in microseconds (job length)
//   interval=50       checkpoint interval in ms
//   sinkPar=2         parallelism of writer + committer
//   commitSleepMs=0   sleep inside the per-subtask Committer.commit (slower committer)
//   tail=0            per source subtask, extra values at the end that the map sleeps on but a filter drops
//   trace=false       true: build the global committer by hand (same operator class, same
//                     settings as GlobalCommitterTransformationTranslator: global(), parallelism 1,
//                     max parallelism 1, chaining ALWAYS, commitOnInput=false) but as a subclass
//                     that logs notifyCheckpointComplete / processElement, to show the order.
//                     false: the standard StandardSinkTopologies.addGlobalCommitter path.
//   ckptLog=<path>    log file that log4j writes CheckpointCoordinator lines to (set by reproduce.sh);
//                     used to count completed checkpoints.
//
// Prints one line:
//   RESULT lost=<records> committed=<records> expected=<n> checkpoints=<completed> lastCkpt=<id>
//          status=<final job status> lostCommittables=<list> mode=... ...

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.connector.sink2.StandardSinkTopologies;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.transformations.PhysicalTransformation;
import org.apache.flink.streaming.runtime.operators.sink.GlobalCommitterOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.flink.util.function.SerializableSupplier;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class GlobalCommitterLoss {

    // Everything runs in one JVM (local MiniCluster, job classes on the system class path),
    // so static collections are shared between the job's operators and main().
    static final ConcurrentLinkedQueue<String> GLOBALLY_COMMITTED = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> PRODUCED = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> TRACE = new ConcurrentLinkedQueue<>();
    static final long T0 = System.nanoTime();
    // trace mode only: committable -> "ckpt@nanos" when GlobalCommitterOperator.processElement saw it,
    // and the checkpoint ids / times of its notifyCheckpointComplete calls, and its finish() time.
    static final java.util.concurrent.ConcurrentHashMap<String, long[]> GC_RECEIVED = new java.util.concurrent.ConcurrentHashMap<>();
    static final ConcurrentLinkedQueue<long[]> GC_NOTIFIED = new ConcurrentLinkedQueue<>();
    static volatile long gcFinishNanos = -1;

    static void trace(String s) {
        TRACE.add(String.format("%8.3fms [%s] %s",
                (System.nanoTime() - T0) / 1e6, Thread.currentThread().getName(), s));
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "aligned";
        Map<String, String> kv = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            kv.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        final long n = Long.parseLong(kv.getOrDefault("n", "2000"));
        final long sleepUs = Long.parseLong(kv.getOrDefault("sleepUs", "1000"));
        final long interval = Long.parseLong(kv.getOrDefault("interval", "50"));
        final int sinkPar = Integer.parseInt(kv.getOrDefault("sinkPar", "2"));
        final long commitSleepMs = Long.parseLong(kv.getOrDefault("commitSleepMs", "0"));
        final boolean traceMode = Boolean.parseBoolean(kv.getOrDefault("trace", "false"));
        final String ckptLog = kv.getOrDefault("ckptLog", "");
        final long tail = Long.parseLong(kv.getOrDefault("tail", "0"));
        final boolean unaligned = mode.equals("unaligned");
        if (!unaligned && !mode.equals("aligned")) {
            throw new IllegalArgumentException("mode must be aligned or unaligned: " + mode);
        }

        Map<String, String> confMap = new HashMap<>();
        confMap.put("execution.checkpointing.unaligned.enabled", Boolean.toString(unaligned));
        confMap.put("execution.checkpointing.interval", interval + " ms");
        confMap.put("execution.runtime-mode", "STREAMING");
        Configuration conf = Configuration.fromMap(confMap);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.enableCheckpointing(interval);

        // tail > 0: fromSequence (2 splits, one per source subtask) produces 2 * (n/2 + tail) values;
        // the slow map still takes its time on the last `tail` values of each half, but a filter drops
        // them, so each subtask's input ends ~tail*sleepUs after its last record reached the writer
        // (the writer's last batch before endInput is then usually empty). Kept values are renumbered
        // to 0..n-1 so the committed sum can still be checked. n must be even.
        final long half = n / 2 + tail;
        DataStream<Long> mapped = env.fromSequence(0, tail > 0 ? 2 * half - 1 : n - 1).setParallelism(2)
                .map(new SlowMap(sleepUs)).setParallelism(2).name("slow-map");
        if (tail > 0) {
            final long keep = n / 2;
            mapped = mapped.filter(v -> v % half < keep).setParallelism(2).name("drop-tail")
                    .map(v -> (v / half) * keep + v % half).setParallelism(2).name("renumber");
        }
        mapped.sinkTo(new LossProbeSink(commitSleepMs, traceMode)).setParallelism(sinkPar).name("probe-sink");

        JobClient client = env.executeAsync("global-committer-loss-" + mode);
        // The per-job MiniCluster client completes the result normally only for a FINISHED job;
        // the final status is also read from the JobMaster's "switched from state X to Y" log line.
        String status;
        String failure = "";
        try {
            client.getJobExecutionResult().get();
            status = "result-ok";
        } catch (Exception e) {
            status = "result-failed";
            Throwable t = e;
            while (t.getCause() != null) t = t.getCause();
            failure = " failure=" + t.getClass().getSimpleName() + ":" + String.valueOf(t.getMessage()).replace(' ', '_');
        }

        // Dedupe by committable string.
        Set<String> committed = new LinkedHashSet<>(GLOBALLY_COMMITTED);
        long committedRecords = 0;
        long committedSum = 0;
        for (String c : committed) {
            String[] p = c.split(":");
            committedRecords += Long.parseLong(p[3]);
            committedSum += Long.parseLong(p[4]);
        }
        List<String> lostCommittables = new ArrayList<>();
        for (String c : new LinkedHashSet<>(PRODUCED)) {
            if (!committed.contains(c)) lostCommittables.add(c);
        }

        int completed = -1;
        int droppedAfterFinish = 0;
        int droppedAtGlobalCommitter = 0;
        long lastCkpt = -1;
        if (!ckptLog.isEmpty() && Files.exists(Paths.get(ckptLog))) {
            Pattern p = Pattern.compile("Completed checkpoint (\\d+) for job");
            Set<Long> ids = new TreeSet<>();
            for (String line : Files.readAllLines(Paths.get(ckptLog), StandardCharsets.UTF_8)) {
                Matcher m = p.matcher(line);
                if (m.find()) ids.add(Long.parseLong(m.group(1)));
            }
            completed = ids.size();
            lastCkpt = ids.isEmpty() ? -1 : Collections.max(ids);
            Pattern js = Pattern.compile("Job .* switched from state (\\w+) to (\\w+)");
            String last = "?";
            for (String line : Files.readAllLines(Paths.get(ckptLog), StandardCharsets.UTF_8)) {
                Matcher m = js.matcher(line);
                if (m.find()) last = m.group(2);
            }
            status = last + "(" + status + ")";
            for (String line : Files.readAllLines(Paths.get(ckptLog), StandardCharsets.UTF_8)) {
                if (line.contains("Unexpected record after finish() received")) {
                    droppedAfterFinish++;
                    if (line.contains("Global Committer")) droppedAtGlobalCommitter++;
                }
            }
        }

        long lost = n - committedRecords;
        long expectedSum = n * (n - 1) / 2;
        boolean isLoss = lost != 0 || committedSum != expectedSum;
        // trace mode: classify each lost committable
        //   neverReceived          : never reached GlobalCommitterOperator.processElement
        //   receivedAfterLastNotify: reached it only after its last notifyCheckpointComplete
        //   receivedNotCommitted   : reached it before a notifyCheckpointComplete(>= its checkpoint),
        //                            which still did not commit it (checkpoint not globally complete)
        String classes = "";
        if (traceMode) {
            int never = 0, afterLast = 0, notCommitted = 0;
            long lastNotifyNanos = -1, maxNotified = -1;
            for (long[] e : GC_NOTIFIED) { lastNotifyNanos = Math.max(lastNotifyNanos, e[1]); }
            for (String c : lostCommittables) {
                long[] r = GC_RECEIVED.get(c);
                if (r == null) { never++; continue; }
                boolean notifiedLater = false;
                for (long[] e : GC_NOTIFIED) if (e[0] >= r[0] && e[1] > r[1]) notifiedLater = true;
                if (notifiedLater) notCommitted++; else afterLast++;
            }
            classes = " lostClass=neverReceived:" + never + ",receivedAfterLastNotify:" + afterLast
                    + ",receivedNotCommitted:" + notCommitted;
        }
        if (traceMode || isLoss) {
            System.out.println("---- trace (global committer operator + committers), loss=" + isLoss);
            for (String s : TRACE) System.out.println("TRACE " + s);
        }
        System.out.println("RESULT lost=" + lost + " committed=" + committedRecords + " expected=" + n
                + " checkpoints=" + completed + " lastCkpt=" + lastCkpt + " status=" + status
                + " sumOk=" + (committedSum == expectedSum)
                + " droppedAfterEndOfData=" + droppedAfterFinish + "(atGlobalCommitter=" + droppedAtGlobalCommitter + ")"
                + " lostCommittables=" + lostCommittables.toString().replace(" ", "")
                + " mode=" + mode + " interval=" + interval + " sinkPar=" + sinkPar
                + " commitSleepMs=" + commitSleepMs + " tail=" + tail + " trace=" + traceMode + classes + failure);
        System.exit(0);
    }

    /** Sleeps a little per record so the bounded job lasts long enough for several checkpoints. */
    static class SlowMap extends RichMapFunction<Long, Long> {
        final long sleepUs;
        SlowMap(long sleepUs) { this.sleepUs = sleepUs; }
        @Override
        public Long map(Long v) {
            if (sleepUs > 0) LockSupport.parkNanos(sleepUs * 1000L);
            return v;
        }
    }

    // ------------------------------------------------------------------------------------------
    // The sink
    // ------------------------------------------------------------------------------------------

    static class LossProbeSink implements Sink<Long>, SupportsCommitter<String>, SupportsPostCommitTopology<String> {
        final long commitSleepMs;
        final boolean traceMode;

        LossProbeSink(long commitSleepMs, boolean traceMode) {
            this.commitSleepMs = commitSleepMs;
            this.traceMode = traceMode;
        }

        @Override
        public SinkWriter<Long> createWriter(WriterInitContext context) {
            return new BatchWriter(context.getTaskInfo().getIndexOfThisSubtask(),
                    context.getTaskInfo().getAttemptNumber());
        }

        @Override
        public Committer<String> createCommitter(CommitterInitContext context) {
            return new SubtaskCommitter(context.getTaskInfo().getIndexOfThisSubtask(), commitSleepMs);
        }

        @Override
        public SimpleVersionedSerializer<String> getCommittableSerializer() {
            return new StringSerializer();
        }

        @Override
        public void addPostCommitTopology(DataStream<CommittableMessage<String>> committables) {
            if (!traceMode) {
                StandardSinkTopologies.addGlobalCommitter(
                        committables,
                        (SerializableFunction<CommitterInitContext, Committer<String>>) ctx -> new GlobalCommitter(),
                        (SerializableSupplier<SimpleVersionedSerializer<String>>) StringSerializer::new);
            } else {
                // Same as GlobalCommitterTransformationTranslator does for a streaming job with
                // checkpointing and an upstream committer (commitOnInput = false), with a logging subclass.
                SingleOutputStreamOperator<Void> gc = committables.global().transform(
                        "Global Committer", Types.VOID,
                        new TracingGlobalCommitterOperator(
                                (SerializableFunction<CommitterInitContext, Committer<String>>) ctx -> new GlobalCommitter(),
                                (SerializableSupplier<SimpleVersionedSerializer<String>>) StringSerializer::new));
                PhysicalTransformation<Void> t = (PhysicalTransformation<Void>) gc.getTransformation();
                t.setChainingStrategy(ChainingStrategy.ALWAYS);
                t.setParallelism(1);
                t.setMaxParallelism(1);
            }
        }
    }

    /** Buffers records; one committable "subtask:attempt:seq:count:sum[:F]" per non-empty batch. */
    static class BatchWriter implements CommittingSinkWriter<Long, String> {
        final int subtask;
        final int attempt;
        long seq;
        long count;
        long sum;
        boolean endOfInput;

        BatchWriter(int subtask, int attempt) {
            this.subtask = subtask;
            this.attempt = attempt;
        }

        @Override
        public void write(Long element, Context context) {
            count++;
            sum += element;
        }

        @Override
        public void flush(boolean endOfInput) {
            if (endOfInput) this.endOfInput = true;
        }

        @Override
        public Collection<String> prepareCommit() {
            if (count == 0) return Collections.emptyList();
            String c = subtask + ":" + attempt + ":" + (seq++) + ":" + count + ":" + sum + (endOfInput ? ":F" : "");
            count = 0;
            sum = 0;
            PRODUCED.add(c);
            trace("writer " + subtask + " prepareCommit -> " + c);
            return Collections.singletonList(c);
        }

        @Override
        public void close() {}
    }

    /** Per-subtask committer: does nothing visible except (optionally) taking its time. */
    static class SubtaskCommitter implements Committer<String> {
        final int subtask;
        final long sleepMs;

        SubtaskCommitter(int subtask, long sleepMs) {
            this.subtask = subtask;
            this.sleepMs = sleepMs;
        }

        @Override
        public void commit(Collection<CommitRequest<String>> requests) throws InterruptedException {
            if (sleepMs > 0) Thread.sleep(sleepMs);
            List<String> cs = new ArrayList<>();
            for (CommitRequest<String> r : requests) cs.add(r.getCommittable());
            trace("committer " + subtask + " commit " + cs);
        }

        @Override
        public void close() {}
    }

    /** The global (post-commit) committer: records each committable it commits. */
    static class GlobalCommitter implements Committer<String> {
        @Override
        public void commit(Collection<CommitRequest<String>> requests) {
            List<String> cs = new ArrayList<>();
            for (CommitRequest<String> r : requests) {
                GLOBALLY_COMMITTED.add(r.getCommittable());
                cs.add(r.getCommittable());
            }
            trace("GLOBAL commit " + cs);
        }

        @Override
        public void close() {}
    }

    /** GlobalCommitterOperator with commitOnInput=false, logging the order of events. */
    static class TracingGlobalCommitterOperator extends GlobalCommitterOperator<String, Void> {
        TracingGlobalCommitterOperator(
                SerializableFunction<CommitterInitContext, Committer<String>> f,
                SerializableSupplier<SimpleVersionedSerializer<String>> s) {
            super(f, s, false);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            trace("GC notifyCheckpointComplete(" + checkpointId + ") enter");
            GC_NOTIFIED.add(new long[] {checkpointId, System.nanoTime()});
            super.notifyCheckpointComplete(checkpointId);
            trace("GC notifyCheckpointComplete(" + checkpointId + ") exit");
        }

        @Override
        public void processElement(StreamRecord<CommittableMessage<String>> element) throws Exception {
            CommittableMessage<String> m = element.getValue();
            if (m instanceof CommittableSummary) {
                CommittableSummary<String> s = (CommittableSummary<String>) m;
                trace("GC received summary ckpt=" + s.getCheckpointId() + " subtask=" + s.getSubtaskId()
                        + "/" + s.getNumberOfSubtasks() + " n=" + s.getNumberOfCommittables());
            } else {
                CommittableWithLineage<String> c = (CommittableWithLineage<String>) m;
                trace("GC received committable ckpt=" + c.getCheckpointId() + " subtask=" + c.getSubtaskId()
                        + " " + c.getCommittable());
                GC_RECEIVED.put(c.getCommittable(), new long[] {c.getCheckpointId(), System.nanoTime()});
            }
            super.processElement(element);
        }

        @Override
        public void finish() throws Exception {
            trace("GC finish()");
            gcFinishNanos = System.nanoTime();
            super.finish();
        }

        @Override
        public void close() throws Exception {
            trace("GC close()");
            super.close();
        }
    }

    static class StringSerializer implements SimpleVersionedSerializer<String> {
        @Override
        public int getVersion() { return 1; }
        @Override
        public byte[] serialize(String s) { return s.getBytes(StandardCharsets.UTF_8); }
        @Override
        public String deserialize(int version, byte[] b) { return new String(b, StandardCharsets.UTF_8); }
    }
}
