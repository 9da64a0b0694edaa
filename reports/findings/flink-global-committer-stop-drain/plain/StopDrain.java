// Plain Flink job (only Flink's own classes): does stop-with-savepoint (with or without --drain)
// lose the savepoint's committables at a Sink V2 global committer
// (SupportsCommitter + SupportsPostCommitTopology + StandardSinkTopologies.addGlobalCommitter)?
// Adapted from ../../flink-global-committer-loss/plain/GlobalCommitterLoss.java.
//
// Usage:
//   java -cp <flink-dist>:<log4j jars>:. StopDrain drain=<true|false> [key=value ...]
// Keys (defaults in brackets):
//   drain=false       stopWithSavepoint(advanceToEndOfEventTime = drain, ...)
//   stopAfterMs=1500  how long the job runs before stop-with-savepoint, counted from the first
//                     committable the writers prepare (= job running, first checkpoint taken)
//   sleepUs=1000      sleep per record in the map (the source is fromSequence(0, 10^12-1), so it
//                     never ends by itself during the test)
//   interval=50       checkpoint interval in ms (aligned checkpoints)
//   sinkPar=2         parallelism of source, map, writer and committer
//   restore=true      after the stopped job ended, run the same job again restored from the savepoint
//                     (execution.state-recovery.path), for restoreMs, then cancel it; reports which of
//                     the lost committables the restored job globally commits
//   restoreMs=1500    how long the restored job runs (after its first checkpoint) before it is cancelled
//   trace=false       true: build the global committer by hand with the same settings as
//                     GlobalCommitterTransformationTranslator (global(), parallelism 1, max parallelism 1,
//                     chaining ALWAYS, commitOnInput=true) but as a subclass that logs processElement,
//                     notifyCheckpointComplete, snapshotState, finish, close; prints TRACE lines
//   commitOnInput=true  trace=true only: commitOnInput of the hand-built operator (false = NOT what
//                     the translator does for this job; kept to show the difference)
//   ckptLog=<path>    the Flink log file (set by reproduce.sh), read for checkpoint ids, job status and
//                     FinishedDataOutput's "Unexpected record after finish() received." lines
//
// Prints one line:
//   RESULT drain=... lostCommittables=<count> lostRecords=<records> committedRecords=... producedRecords=...
//          droppedAfterEndOfData=<n>(atGlobalCommitter=<m>) savepointCkpt=<id> savepoint=<path> status=...
//          lost=[<committable>@<ckpt label>,...] ... restore...

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
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

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class StopDrain {

    // Everything runs in one JVM (local MiniCluster, job classes on the system class path),
    // so static collections are shared between the job's operators and main().
    /** 1 = the job that is stopped with a savepoint, 2 = the job restored from that savepoint. */
    static volatile int phase = 1;
    static final ConcurrentLinkedQueue<String> PRODUCED = new ConcurrentLinkedQueue<>();
    /** committable -> checkpoint id of the writer's next snapshotState after the committable was prepared. */
    static final ConcurrentHashMap<String, Long> SNAPSHOT_ID = new ConcurrentHashMap<>();
    static final ConcurrentLinkedQueue<String> PRODUCED_2 = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> SUBTASK_COMMITTED_1 = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> SUBTASK_COMMITTED_2 = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> GLOBALLY_COMMITTED_1 = new ConcurrentLinkedQueue<>();
    static final ConcurrentLinkedQueue<String> GLOBALLY_COMMITTED_2 = new ConcurrentLinkedQueue<>();
    /** trace=true: events of the (hand-built, logging) global committer operator and the committers. */
    static volatile boolean traceMode = false;
    /** trace=true: commitOnInput of the hand-built GlobalCommitterOperator. */
    static volatile boolean traceCommitOnInput = true;
    static final ConcurrentLinkedQueue<String> TRACE = new ConcurrentLinkedQueue<>();
    static final long T0 = System.nanoTime();

    static void trace(String s) {
        if (traceMode) {
            TRACE.add(String.format("%9.3fms P%d [%s] %s", (System.nanoTime() - T0) / 1e6, phase,
                    Thread.currentThread().getName(), s));
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> kv = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0) throw new IllegalArgumentException("expected key=value: " + a);
            kv.put(a.substring(0, eq), a.substring(eq + 1));
        }
        final boolean drain = Boolean.parseBoolean(kv.getOrDefault("drain", "false"));
        final long stopAfterMs = Long.parseLong(kv.getOrDefault("stopAfterMs", "1500"));
        final long sleepUs = Long.parseLong(kv.getOrDefault("sleepUs", "1000"));
        final long interval = Long.parseLong(kv.getOrDefault("interval", "50"));
        final int sinkPar = Integer.parseInt(kv.getOrDefault("sinkPar", "2"));
        final boolean restore = Boolean.parseBoolean(kv.getOrDefault("restore", "true"));
        final long restoreMs = Long.parseLong(kv.getOrDefault("restoreMs", "1500"));
        final String ckptLog = kv.getOrDefault("ckptLog", "");
        traceMode = Boolean.parseBoolean(kv.getOrDefault("trace", "false"));
        traceCommitOnInput = Boolean.parseBoolean(kv.getOrDefault("commitOnInput", "true"));

        // Which commitOnInput did the translator give the global committer? (throwaway copy of the job)
        final String gcCommitOnInput = inspectCommitOnInput(interval, sleepUs, sinkPar);

        // ---------------- phase 1: run, then stop-with-savepoint ----------------
        JobClient client = buildJob(interval, sleepUs, sinkPar, null).executeAsync("stop-drain-" + drain);
        long t0 = System.nanoTime();
        while (PRODUCED.isEmpty()) {
            if (System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(60)) {
                throw new IllegalStateException("no committable prepared within 60 s");
            }
            Thread.sleep(5);
        }
        Thread.sleep(stopAfterMs);
        String spDir = "file:///tmp/sd-sp/" + UUID.randomUUID();
        trace("driver: stopWithSavepoint(drain=" + drain + ") called");
        String savepoint;
        String stopFailure = "";
        try {
            savepoint = client.stopWithSavepoint(drain, spDir, SavepointFormatType.CANONICAL)
                    .get(90, TimeUnit.SECONDS);
        } catch (Exception e) {
            savepoint = "none";
            stopFailure = " stopFailure=" + rootCause(e);
        }
        String result1;
        try {
            client.getJobExecutionResult().get(90, TimeUnit.SECONDS);
            result1 = "result-ok";
        } catch (Exception e) {
            result1 = "result-failed:" + rootCause(e);
        }
        // snapshot of phase 1 (the restored job must not change these)
        final List<String> produced = new ArrayList<>(new LinkedHashSet<>(PRODUCED));
        final Set<String> committed1 = new LinkedHashSet<>(GLOBALLY_COMMITTED_1);
        final Set<String> subCommitted1 = new LinkedHashSet<>(SUBTASK_COMMITTED_1);
        final Map<String, Long> snapId = new HashMap<>(SNAPSHOT_ID);
        List<String> log1 = readLog(ckptLog);
        final List<String> trace1 = new ArrayList<>(TRACE);

        // ---------------- phase 2 (optional): restore from the savepoint ----------------
        String restoreInfo = " restore=false";
        if (restore && !savepoint.equals("none")) {
            phase = 2;
            String status2;
            try {
                JobClient c2 = buildJob(interval, sleepUs, sinkPar, savepoint).executeAsync("stop-drain-restored");
                long t2 = System.nanoTime();
                boolean sawCheckpoint = false;
                long deadline = -1;
                while (true) {
                    JobStatus js = c2.getJobStatus().get(30, TimeUnit.SECONDS);
                    if (js.isGloballyTerminalState()) break;
                    if (!sawCheckpoint && ckptCompletedAfter(ckptLog, log1.size())) {
                        sawCheckpoint = true;
                        deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(restoreMs);
                    }
                    if ((deadline > 0 && System.nanoTime() > deadline)
                            || System.nanoTime() - t2 > TimeUnit.SECONDS.toNanos(60)) {
                        c2.cancel().get(30, TimeUnit.SECONDS);
                        break;
                    }
                    Thread.sleep(20);
                }
                try {
                    c2.getJobExecutionResult().get(60, TimeUnit.SECONDS);
                    status2 = "result-ok";
                } catch (Exception e) {
                    status2 = "result-failed:" + rootCause(e);
                }
            } catch (Exception e) {
                status2 = "restore-failed:" + rootCause(e);
            }
            List<String> logAll = readLog(ckptLog);
            List<String> log2 = logAll.subList(Math.min(log1.size(), logAll.size()), logAll.size());
            status2 = lastJobState(log2) + "(" + status2 + ")";
            Set<String> committed2 = new LinkedHashSet<>(GLOBALLY_COMMITTED_2);
            Set<String> subCommitted2 = new LinkedHashSet<>(SUBTASK_COMMITTED_2);
            // filled in below, once "lost" is known
            restoreInfo = "@@" + status2 + "@@" + String.join(",", committed2) + "@@" + String.join(",", subCommitted2)
                    + "@@" + countDrops(log2)[0];
        }

        // ---------------- evaluation of phase 1 ----------------
        long producedRecords = 0, committedRecords = 0, lostRecords = 0;
        List<String> lost = new ArrayList<>();
        for (String c : produced) {
            long cnt = count(c);
            producedRecords += cnt;
            if (committed1.contains(c)) committedRecords += cnt;
            else { lost.add(c); lostRecords += cnt; }
        }
        long extraCommitted = 0; // globally committed but not produced (should not happen)
        for (String c : committed1) if (!produced.contains(c)) extraCommitted++;

        long savepointCkpt = -1;
        String savepointType = "?";
        Set<Long> completed = new TreeSet<>();
        Set<Long> aborted = new TreeSet<>();
        Pattern abo = Pattern.compile("Failed to trigger or complete checkpoint (\\d+) ");
        Pattern trig = Pattern.compile("Triggering checkpoint (\\d+) \\(type=(.*)\\) @");
        Pattern comp = Pattern.compile("Completed checkpoint (\\d+) for job");
        for (String line : log1) {
            Matcher m = trig.matcher(line);
            if (m.find() && m.group(2).contains("Savepoint")) {
                savepointCkpt = Long.parseLong(m.group(1));
                Matcher n = Pattern.compile("name='([^']*)'").matcher(m.group(2));
                savepointType = n.find() ? n.group(1).replace(' ', '_') : "savepoint";
            }
            m = comp.matcher(line);
            if (m.find()) completed.add(Long.parseLong(m.group(1)));
            m = abo.matcher(line);
            if (m.find()) aborted.add(Long.parseLong(m.group(1)));
        }
        int[] drops = countDrops(log1);
        String status1 = lastJobState(log1) + "(" + result1 + ")";

        // label each lost committable with the checkpoint it belongs to
        List<String> lostLabelled = new ArrayList<>();
        Set<String> lostCkpts = new TreeSet<>();
        int lostSubtaskCommitted = 0;
        for (String c : lost) {
            Long id = snapId.get(c);
            String label = id == null ? "none" : (id == savepointCkpt ? "sp" + id : "ck" + id + (aborted.contains(id) ? "(aborted)" : ""));
            if (c.endsWith(":F")) label += "(EOI)"; // prepared at endInput, sent with checkpointId=EOI
            lostLabelled.add(c + "@" + label);
            lostCkpts.add(label);
            if (subCommitted1.contains(c)) lostSubtaskCommitted++;
        }

        if (restoreInfo.startsWith("@@")) {
            String[] p = restoreInfo.split("@@", -1);
            Set<String> c2 = new LinkedHashSet<>();
            for (String s : p[2].split(",")) if (!s.isEmpty()) c2.add(s);
            Set<String> s2 = new LinkedHashSet<>();
            for (String s : p[3].split(",")) if (!s.isEmpty()) s2.add(s);
            int lostRecommitted = 0, lostSubRecommitted = 0;
            long lostRecRecords = 0;
            for (String c : lost) {
                if (c2.contains(c)) { lostRecommitted++; lostRecRecords += count(c); }
                if (s2.contains(c)) lostSubRecommitted++;
            }
            int phase1InRestore = 0; // phase-1 committables (lost or not) the restored job globally committed
            List<String> phase1InRestoreL = new ArrayList<>();
            for (String c : c2) {
                if (!c.startsWith("P1:")) continue;
                phase1InRestore++;
                Long id = snapId.get(c);
                phase1InRestoreL.add(c + "@" + (id == null ? "none" : (id == savepointCkpt ? "sp" + id : "ck" + id))
                        + (committed1.contains(c) ? "(alsoCommittedBeforeStop)" : "(lostBeforeStop)"));
            }
            long p2Records = 0;
            for (String c : new LinkedHashSet<>(PRODUCED_2)) p2Records += count(c);
            restoreInfo = " restoreStatus=" + p[1] + " restoreProducedRecords=" + p2Records
                    + " lostGloballyCommittedOnRestore=" + lostRecommitted + "/" + lost.size()
                    + "(records=" + lostRecRecords + ")"
                    + " lostReCommittedBySubtaskCommitterOnRestore=" + lostSubRecommitted + "/" + lost.size()
                    + " phase1CommittablesGloballyCommittedOnRestore=" + phase1InRestore
                    + phase1InRestoreL.toString().replace(" ", "")
                    + " restoreDroppedAfterEndOfData=" + p[4];
        }

        if (traceMode) {
            // phase 1 only: events from 300 ms before the stop-with-savepoint call on
            double stopAt = -1;
            for (String t : trace1) if (t.contains("driver: stopWithSavepoint")) stopAt = Double.parseDouble(t.trim().split("ms")[0]);
            for (String t : trace1) {
                if (Double.parseDouble(t.trim().split("ms")[0]) >= stopAt - 300) System.out.println("TRACE " + t);
            }
        }
        System.out.println("RESULT drain=" + drain
                + " lostCommittables=" + lost.size() + " lostRecords=" + lostRecords
                + " committedRecords=" + committedRecords + " producedRecords=" + producedRecords
                + " droppedAfterEndOfData=" + drops[0] + "(atGlobalCommitter=" + drops[1] + ")"
                + " savepointCkpt=" + savepointCkpt + "(" + savepointType + ")"
                + " savepoint=" + savepoint + " status=" + status1
                + " lost=" + lostLabelled.toString().replace(" ", "")
                + " lostCkpts=" + lostCkpts.toString().replace(" ", "")
                + " lostCommittedBySubtaskCommitter=" + lostSubtaskCommitted + "/" + lost.size()
                + " producedCommittables=" + produced.size() + " extraCommitted=" + extraCommitted
                + " completedCheckpoints=" + completed.size() + " abortedCheckpoints=" + aborted.toString().replace(" ", "")
                + " lastCompleted=" + (completed.isEmpty() ? -1 : Collections.max(completed))
                + " interval=" + interval + " sinkPar=" + sinkPar + " stopAfterMs=" + stopAfterMs + " trace=" + traceMode
                + " gcCommitOnInput=" + gcCommitOnInput
                + (traceMode ? " traceCommitOnInput=" + traceCommitOnInput : "")
                + stopFailure + restoreInfo);
        System.exit(0);
    }

    static StreamExecutionEnvironment buildJob(long interval, long sleepUs, int par, String restorePath) {
        Map<String, String> confMap = new HashMap<>();
        confMap.put("execution.checkpointing.unaligned.enabled", "false");
        confMap.put("execution.checkpointing.interval", interval + " ms");
        confMap.put("execution.runtime-mode", "STREAMING");
        if (restorePath != null) confMap.put("execution.state-recovery.path", restorePath);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(confMap));
        env.enableCheckpointing(interval);
        // The source does not end during the test: 10^12 values, the map sleeps sleepUs per value.
        env.fromSequence(0, 1_000_000_000_000L - 1).setParallelism(par)
                .map(new SlowMap(sleepUs)).setParallelism(par).name("slow-map")
                .sinkTo(new ProbeSink()).setParallelism(par).name("probe-sink");
        return env;
    }

    /** Builds the same job in a throwaway environment and reads GlobalCommitterOperator.commitOnInput. */
    static String inspectCommitOnInput(long interval, long sleepUs, int par) {
        // the sink (and its post-commit topology) is expanded inside getStreamGraph(), so the standard
        // StandardSinkTopologies.addGlobalCommitter path must be selected until the graph is built
        boolean tm = traceMode;
        traceMode = false;
        try {
            return inspectCommitOnInput0(interval, sleepUs, par);
        } finally {
            traceMode = tm;
        }
    }

    static String inspectCommitOnInput0(long interval, long sleepUs, int par) {
        try {
            StreamExecutionEnvironment env = buildJob(interval, sleepUs, par, null);
            List<String> found = new ArrayList<>();
            for (org.apache.flink.streaming.api.graph.StreamNode n : env.getStreamGraph().getStreamNodes()) {
                Object f = n.getOperatorFactory();
                if (f instanceof org.apache.flink.streaming.api.operators.SimpleOperatorFactory) {
                    Object op = ((org.apache.flink.streaming.api.operators.SimpleOperatorFactory<?>) f).getOperator();
                    if (op instanceof GlobalCommitterOperator) {
                        java.lang.reflect.Field fld = GlobalCommitterOperator.class.getDeclaredField("commitOnInput");
                        fld.setAccessible(true);
                        found.add(String.valueOf(fld.get(op)));
                    }
                }
            }
            String up = "?";
            if (lastPostCommitInput != null) {
                java.lang.reflect.Method m = org.apache.flink.streaming.runtime.translators.GlobalCommitterTransformationTranslator.class
                        .getDeclaredMethod("hasUpstreamCommitter", DataStream.class);
                m.setAccessible(true);
                up = String.valueOf(m.invoke(null, lastPostCommitInput));
            }
            return (found.isEmpty() ? "notFound" : String.join(",", found))
                    + "(checkpointingEnabled=" + env.getCheckpointConfig().isCheckpointingEnabled()
                    + ",hasUpstreamCommitter=" + up + ")";
        } catch (Throwable t) {
            return "inspectFailed:" + rootCause(t);
        }
    }

    static volatile DataStream<?> lastPostCommitInput;

    static long count(String committable) {
        return Long.parseLong(committable.split(":")[4]);
    }

    static String rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) t = t.getCause();
        return t.getClass().getSimpleName() + ":" + String.valueOf(t.getMessage()).replace(' ', '_');
    }

    static List<String> readLog(String path) throws Exception {
        if (path.isEmpty() || !Files.exists(Paths.get(path))) return new ArrayList<>();
        return Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8);
    }

    static boolean ckptCompletedAfter(String path, int fromLine) throws Exception {
        List<String> l = readLog(path);
        for (int i = fromLine; i < l.size(); i++) if (l.get(i).contains("Completed checkpoint")) return true;
        return path.isEmpty();
    }

    static String lastJobState(List<String> log) {
        Pattern js = Pattern.compile("Job .* switched from state (\\w+) to (\\w+)");
        String last = "?";
        for (String line : log) {
            Matcher m = js.matcher(line);
            if (m.find()) last = m.group(2);
        }
        return last;
    }

    /** [all "Unexpected record after finish() received" lines, those in the Global Committer's task]. */
    static int[] countDrops(List<String> log) {
        int all = 0, gc = 0;
        for (String line : log) {
            if (line.contains("Unexpected record after finish() received")) {
                all++;
                if (line.contains("Global Committer")) gc++;
            }
        }
        return new int[] {all, gc};
    }

    /** Sleeps a little per record so the job does not race through the sequence. */
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
    // The sink: writer (with a trivial writer state, only to learn the checkpoint id of each
    // committable), per-subtask committer, global committer via StandardSinkTopologies.
    // ------------------------------------------------------------------------------------------

    static class ProbeSink implements Sink<Long>, SupportsCommitter<String>, SupportsPostCommitTopology<String>,
            SupportsWriterState<Long, String> {

        @Override
        public SinkWriter<Long> createWriter(WriterInitContext context) {
            return new BatchWriter(context.getTaskInfo().getIndexOfThisSubtask(),
                    context.getTaskInfo().getAttemptNumber());
        }

        @Override
        public StatefulSinkWriter<Long, String> restoreWriter(WriterInitContext context, Collection<String> state) {
            return new BatchWriter(context.getTaskInfo().getIndexOfThisSubtask(),
                    context.getTaskInfo().getAttemptNumber());
        }

        @Override
        public SimpleVersionedSerializer<String> getWriterStateSerializer() {
            return new StringSerializer();
        }

        @Override
        public Committer<String> createCommitter(CommitterInitContext context) {
            return new SubtaskCommitter();
        }

        @Override
        public SimpleVersionedSerializer<String> getCommittableSerializer() {
            return new StringSerializer();
        }

        @Override
        public void addPostCommitTopology(DataStream<CommittableMessage<String>> committables) {
            lastPostCommitInput = committables;
            if (!traceMode) {
                StandardSinkTopologies.addGlobalCommitter(
                        committables,
                        (SerializableFunction<CommitterInitContext, Committer<String>>) ctx -> new GlobalCommitter(),
                        (SerializableSupplier<SimpleVersionedSerializer<String>>) StringSerializer::new);
            } else {
                // As GlobalCommitterTransformationTranslator builds it, with a logging subclass. For a
                // streaming job with checkpointing and an upstream committer the translator passes
                // commitOnInput = true (commitOnInput = isBatch || !checkpointing || hasUpstreamCommitter;
                // the RESULT field gcCommitOnInput shows what it chose for this job).
                SingleOutputStreamOperator<Void> gc = committables.global().transform(
                        "Global Committer", Types.VOID,
                        new TracingGlobalCommitterOperator(traceCommitOnInput,
                                (SerializableFunction<CommitterInitContext, Committer<String>>) ctx -> new GlobalCommitter(),
                                (SerializableSupplier<SimpleVersionedSerializer<String>>) StringSerializer::new));
                PhysicalTransformation<Void> t = (PhysicalTransformation<Void>) gc.getTransformation();
                t.setChainingStrategy(ChainingStrategy.ALWAYS);
                t.setParallelism(1);
                t.setMaxParallelism(1);
            }
        }
    }

    /**
     * Buffers records; one committable "P<phase>:subtask:attempt:seq:count[:F]" per non-empty batch
     * (F = prepared after flush(endOfInput=true), i.e. at endInput, which Flink sends with checkpointId EOI).
     */
    static class BatchWriter implements CommittingSinkWriter<Long, String>, StatefulSinkWriter<Long, String> {
        final int subtask;
        final int attempt;
        final int ph = phase;
        long seq;
        long count;
        boolean endOfInput;
        final List<String> unlabelled = new ArrayList<>();

        BatchWriter(int subtask, int attempt) {
            this.subtask = subtask;
            this.attempt = attempt;
        }

        @Override
        public void write(Long element, Context context) {
            count++;
        }

        @Override
        public void flush(boolean endOfInput) {
            if (endOfInput) this.endOfInput = true;
        }

        @Override
        public Collection<String> prepareCommit() {
            if (count == 0) return Collections.emptyList();
            String c = "P" + ph + ":" + subtask + ":" + attempt + ":" + (seq++) + ":" + count + (endOfInput ? ":F" : "");
            count = 0;
            (ph == 1 ? PRODUCED : PRODUCED_2).add(c);
            unlabelled.add(c);
            return Collections.singletonList(c);
        }

        /** Called by SinkWriterOperator.snapshotState, after prepareCommit of the same checkpoint. */
        @Override
        public List<String> snapshotState(long checkpointId) {
            for (String c : unlabelled) SNAPSHOT_ID.put(c, checkpointId);
            unlabelled.clear();
            return Collections.emptyList();
        }

        @Override
        public void close() {}
    }

    /** Per-subtask committer: records what it commits (it emits these downstream right after). */
    static class SubtaskCommitter implements Committer<String> {
        final int ph = phase;
        @Override
        public void commit(Collection<CommitRequest<String>> requests) {
            List<String> cs = new ArrayList<>();
            for (CommitRequest<String> r : requests) {
                (ph == 1 ? SUBTASK_COMMITTED_1 : SUBTASK_COMMITTED_2).add(r.getCommittable());
                cs.add(r.getCommittable());
            }
            trace("committer commit (then emits downstream) " + cs);
        }

        @Override
        public void close() {}
    }

    /** The global (post-commit) committer: records each committable it commits. */
    static class GlobalCommitter implements Committer<String> {
        final int ph = phase;
        @Override
        public void commit(Collection<CommitRequest<String>> requests) {
            List<String> cs = new ArrayList<>();
            for (CommitRequest<String> r : requests) {
                (ph == 1 ? GLOBALLY_COMMITTED_1 : GLOBALLY_COMMITTED_2).add(r.getCommittable());
                cs.add(r.getCommittable());
            }
            trace("GLOBAL commit " + cs);
        }

        @Override
        public void close() {}
    }

    /** GlobalCommitterOperator logging the order of events (trace=true). */
    static class TracingGlobalCommitterOperator extends GlobalCommitterOperator<String, Void> {
        TracingGlobalCommitterOperator(boolean commitOnInput,
                SerializableFunction<CommitterInitContext, Committer<String>> f,
                SerializableSupplier<SimpleVersionedSerializer<String>> s) {
            super(f, s, commitOnInput);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            trace("GC notifyCheckpointComplete(" + checkpointId + ") enter");
            super.notifyCheckpointComplete(checkpointId);
            trace("GC notifyCheckpointComplete(" + checkpointId + ") exit");
        }

        @Override
        public void processElement(StreamRecord<CommittableMessage<String>> element) throws Exception {
            CommittableMessage<String> m = element.getValue();
            if (m instanceof CommittableSummary) {
                CommittableSummary<String> s = (CommittableSummary<String>) m;
                trace("GC received summary ckpt=" + s.getCheckpointIdOrEOI() + " subtask=" + s.getSubtaskId()
                        + " n=" + s.getNumberOfCommittables());
            } else {
                CommittableWithLineage<String> c = (CommittableWithLineage<String>) m;
                trace("GC received committable ckpt=" + c.getCheckpointIdOrEOI() + " " + c.getCommittable());
            }
            super.processElement(element);
        }

        @Override
        public void snapshotState(org.apache.flink.runtime.state.StateSnapshotContext context) throws Exception {
            trace("GC snapshotState(" + context.getCheckpointId() + ")");
            super.snapshotState(context);
        }

        @Override
        public void finish() throws Exception {
            trace("GC finish()");
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
