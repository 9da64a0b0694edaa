// Plain Flink job (only Flink's own classes) probing whether a Sink V2 global committer
// (StandardSinkTopologies.addGlobalCommitter) loses committables when the writer subtasks
// reach end of input at different checkpoints.
//
// usage: java -cp <flink-dist + log4j jars>:<classes> UnevenWriters <uneven|equal> <aligned|unaligned> [end]
//   uneven : source subtask 0 emits SHORT records, subtask 1 emits LONG records
//   equal  : both source subtasks emit EQUAL records (control)
// Every record sleeps ~1 ms in a chained operator, checkpoint interval 100 ms.
//   end (optional, default "now"): when a source reader gets end of input after its split is done
//     now       : immediately (the writer's end-of-input batch is non-empty, it goes to the final checkpoint)
//     each:<ms> : <ms> idle after THIS reader's split is done (its records are all flushed by regular
//                 checkpoints first, so its end-of-input batch is empty); readers still end at different times
//     sync:<ms> : <ms> idle after BOTH readers' splits are done, then both get end of input together
//                 (same checkpoint, empty end-of-input batches)
// Prints one line: RESULT lost=<records not globally committed> committed=<n> expected=<N> status=<job status> ...

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource.NumberSequenceSplit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.StandardSinkTopologies;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

public class UnevenWriters {

    // Shared state: the MiniCluster runs in this JVM and the job classes come from the
    // application class path, so statics are visible to the operators and to main().
    static final Map<Integer, Long> LAST_CKPT_SEEN = new ConcurrentHashMap<>();
    static final List<String> PRODUCED = Collections.synchronizedList(new ArrayList<>());
    static final List<String> GLOBALLY_COMMITTED = Collections.synchronizedList(new ArrayList<>());
    static final List<String> GLOBAL_COMMIT_CALLS = Collections.synchronizedList(new ArrayList<>());
    static final long T0 = System.nanoTime();

    static long ms() { return (System.nanoTime() - T0) / 1_000_000; }

    // ---------------------------------------------------------------- source
    /** NumberSequenceSource whose split i (of length len[i]) always goes to reader subtask i. */
    public static class FixedSplitSource extends NumberSequenceSource {
        private final long len0, len1;
        private final String end;
        public FixedSplitSource(long len0, long len1, String end) {
            super(0, len0 + len1 - 1); this.len0 = len0; this.len1 = len1; this.end = end;
        }

        @Override
        public SplitEnumerator<NumberSequenceSplit, Collection<NumberSequenceSplit>> createEnumerator(
                SplitEnumeratorContext<NumberSequenceSplit> ctx) {
            List<NumberSequenceSplit> s = new ArrayList<>();
            s.add(new NumberSequenceSplit("0", 0, len0 - 1));
            s.add(new NumberSequenceSplit("1", len0, len0 + len1 - 1));
            return new FixedEnumerator(ctx, s, end);
        }

        @Override
        public SplitEnumerator<NumberSequenceSplit, Collection<NumberSequenceSplit>> restoreEnumerator(
                SplitEnumeratorContext<NumberSequenceSplit> ctx, Collection<NumberSequenceSplit> state) {
            return new FixedEnumerator(ctx, state, end);
        }
    }

    static class FixedEnumerator implements SplitEnumerator<NumberSequenceSplit, Collection<NumberSequenceSplit>> {
        private final SplitEnumeratorContext<NumberSequenceSplit> ctx;
        private final Map<Integer, NumberSequenceSource.NumberSequenceSplit> pending = new HashMap<>();
        private final String end;
        private final Set<Integer> done = new java.util.TreeSet<>();
        FixedEnumerator(SplitEnumeratorContext<NumberSequenceSplit> ctx, Collection<NumberSequenceSplit> splits, String end) {
            this.ctx = ctx; this.end = end;
            for (NumberSequenceSplit s : splits) pending.put(Integer.parseInt(s.splitId()), s);
        }
        @Override public void start() {}
        @Override public void handleSplitRequest(int subtask, String host) {
            NumberSequenceSplit s = pending.remove(subtask);
            if (s != null) { ctx.assignSplit(s, subtask); return; }
            if (end.equals("now")) { signalEnd(subtask); return; }
            long delay = Long.parseLong(end.substring(end.indexOf(':') + 1));
            if (end.startsWith("each:")) { later(delay, Collections.singletonList(subtask)); return; }
            done.add(subtask);                                    // sync:<ms>
            if (done.size() == ctx.currentParallelism()) later(delay, new ArrayList<>(done));
        }
        private void signalEnd(int subtask) {
            System.out.println("[" + ms() + "ms] ENUMERATOR no more splits -> reader " + subtask);
            ctx.signalNoMoreSplits(subtask);
        }
        private void later(long delayMs, List<Integer> subtasks) {
            Thread t = new Thread(() -> {
                try { Thread.sleep(delayMs); } catch (InterruptedException e) { return; }
                ctx.runInCoordinatorThread(() -> { for (int st : subtasks) signalEnd(st); });
            }, "delayed-end");
            t.setDaemon(true);
            t.start();
        }
        @Override public void addSplitsBack(List<NumberSequenceSplit> splits, int subtask) {
            for (NumberSequenceSplit s : splits) pending.put(Integer.parseInt(s.splitId()), s);
        }
        @Override public void addReader(int subtask) {}
        @Override public Collection<NumberSequenceSplit> snapshotState(long id) { return new ArrayList<>(pending.values()); }
        @Override public void close() {}
    }

    // ---------------------------------------------------------------- slow pass-through, notes checkpoint ids
    /** Chained before the writer; prepareSnapshotPreBarrier runs head-to-tail so the writer can read the id. */
    public static class SlowTag extends AbstractStreamOperator<Long> implements OneInputStreamOperator<Long, Long> {
        private final long sleepMs;
        public SlowTag(long sleepMs) { this.sleepMs = sleepMs; }
        @Override public void processElement(StreamRecord<Long> e) throws Exception {
            Thread.sleep(sleepMs);
            output.collect(e);
        }
        @Override public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
            super.prepareSnapshotPreBarrier(checkpointId);
            LAST_CKPT_SEEN.put(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), checkpointId);
        }
    }

    // ---------------------------------------------------------------- sink
    public static class StringSer implements SimpleVersionedSerializer<String> {
        @Override public int getVersion() { return 1; }
        @Override public byte[] serialize(String s) { return s.getBytes(StandardCharsets.UTF_8); }
        @Override public String deserialize(int v, byte[] b) { return new String(b, StandardCharsets.UTF_8); }
    }

    public static class TestSink implements Sink<Long>, SupportsCommitter<String>, SupportsPostCommitTopology<String> {
        @Override public SinkWriter<Long> createWriter(WriterInitContext ctx) {
            return new Writer(ctx.getTaskInfo().getIndexOfThisSubtask(), ctx.getTaskInfo().getAttemptNumber());
        }
        @Override public Committer<String> createCommitter(CommitterInitContext ctx) {
            return new Committer<String>() {   // per-subtask committer: nothing visible
                @Override public void commit(Collection<CommitRequest<String>> reqs) {}
                @Override public void close() {}
            };
        }
        @Override public SimpleVersionedSerializer<String> getCommittableSerializer() { return new StringSer(); }
        @Override public void addPostCommitTopology(DataStream<CommittableMessage<String>> committables) {
            StandardSinkTopologies.addGlobalCommitter(committables, GlobalCommitter::new, StringSer::new);
        }
    }

    static class Writer implements CommittingSinkWriter<Long, String> {
        final int subtask, attempt;
        long count, seq;
        boolean eoi;
        Writer(int subtask, int attempt) { this.subtask = subtask; this.attempt = attempt; }
        @Override public void write(Long v, Context c) { count++; }
        @Override public void flush(boolean endOfInput) { if (endOfInput) eoi = true; }
        @Override public Collection<String> prepareCommit() {
            seq++;
            Long ck = LAST_CKPT_SEEN.get(subtask);
            String tag = eoi ? "eoi(last-ckpt=" + ck + ")" : "ckpt" + ck;
            System.out.println("[" + ms() + "ms] WRITER " + subtask + " prepareCommit seq=" + seq + " " + tag + " count=" + count);
            if (count == 0) return Collections.emptyList();
            String c = subtask + ":" + attempt + ":" + seq + ":" + count + ":" + tag;
            count = 0;
            PRODUCED.add(c);
            return Collections.singletonList(c);
        }
        @Override public void close() {}
    }

    public static class GlobalCommitter implements Committer<String> {
        @Override public void commit(Collection<CommitRequest<String>> reqs) {
            List<String> cs = new ArrayList<>();
            for (CommitRequest<String> r : reqs) { cs.add(r.getCommittable()); GLOBALLY_COMMITTED.add(r.getCommittable()); }
            String line = "[" + ms() + "ms] GLOBAL commit call: " + cs;
            GLOBAL_COMMIT_CALLS.add(line);
            System.out.println(line);
        }
        @Override public void close() {}
    }

    // ---------------------------------------------------------------- main
    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "uneven";
        String ckMode = args.length > 1 ? args[1] : "aligned";
        String end = args.length > 2 ? args[2] : "now";
        long len0, len1;
        if (mode.equals("uneven")) { len0 = 200; len1 = 1500; }
        else if (mode.equals("equal")) { len0 = 850; len1 = 850; }
        else throw new IllegalArgumentException("mode must be uneven|equal");

        Map<String, String> m = new HashMap<>();
        m.put("execution.checkpointing.interval", "100 ms");
        m.put("execution.checkpointing.unaligned.enabled", String.valueOf(ckMode.equals("unaligned")));
        m.put("restart-strategy.type", "none");
        m.put("parallelism.default", "2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(m));
        env.setParallelism(2);

        env.fromSource(new FixedSplitSource(len0, len1, end), WatermarkStrategy.noWatermarks(), "fixed-split-source")
                .transform("slow-tag", Types.LONG, new SlowTag(1))
                .sinkTo(new TestSink()).name("test-sink");

        JobClient client = env.executeAsync("uneven-writers-" + mode + "-" + ckMode + "-" + end);
        String status;
        try {
            client.getJobExecutionResult().get();
            // getJobExecutionResult() only completes normally for a globally FINISHED job
            // (FAILED/CANCELED complete exceptionally); ask for the status too if the cluster still answers.
            try { status = String.valueOf(client.getJobStatus().get()); }
            catch (Exception e) {
                status = "FINISHED";
                System.out.println("(job status query after completion failed: " + e + "; status taken from the successful JobExecutionResult)");
            }
        } catch (Exception e) {
            status = "FAILED(" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")";
            e.printStackTrace(System.out);
        }

        Set<String> committed = new LinkedHashSet<>(GLOBALLY_COMMITTED);
        long committedRecords = 0;
        for (String c : committed) committedRecords += Long.parseLong(c.split(":")[3]);
        List<String> lostCommittables = new ArrayList<>();
        for (String p : new ArrayList<>(PRODUCED)) if (!committed.contains(p)) lostCommittables.add(p);
        long expected = len0 + len1;
        System.out.println("PRODUCED committables: " + PRODUCED);
        System.out.println("NOT globally committed: " + lostCommittables);
        System.out.println("RESULT lost=" + (expected - committedRecords) + " committed=" + committedRecords
                + " expected=" + expected + " status=" + status + " mode=" + mode + " ckpt=" + ckMode + " end=" + end
                + " duplicates=" + (GLOBALLY_COMMITTED.size() - committed.size())
                + " lostCommittables=" + lostCommittables.size());
        System.exit(0);
    }
}
