import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

// A FLIP-27 source over the simulated workload: each partition of the
// scenario's source is a split holding exactly the records the simulation
// generated for the seed (data/<source>.txt). Splits go to readers as the
// scenario says: `static` (partition i to subtask i % parallelism, all at
// the start, in one event) or `enumerator` (on request, `initial` known at
// the start, one more every `discoveryMs`; with `push`, each reader's
// splits pushed to it in one event when it registers, as Kafka's
// enumerator does). A reader's state is its splits and offsets.
// `repeat`: a split never ends, record o is record o % n of its partition.
// `eventTime`: each record carries its simulated timestamp and is emitted
// through its split's own output, so that Flink's SourceOperator runs the
// watermark strategy per split and combines the splits' watermarks; a
// split's output is released when the split ends; splits paused for
// watermark alignment (pauseOrResumeSplits) are not read until resumed.
public final class RecordSource implements Source<Rec, RecordSource.Split, RecordSource.EnumState> {
    private final String name;
    private final String dataFile;
    private final int partitions;
    private final boolean enumerator;
    /** `enumerator`: push splits (Kafka's way) instead of answering requests;
     *  `endAtAssignment`: tell every reader the end once all are found. */
    public boolean push;
    public boolean endAtAssignment;
    private final int initial;
    private final long discoveryMs;
    private final long[] rates;
    private final boolean repeat;
    private final boolean eventTime;
    private final Cost cost;
    private final Crash crash;
    /** The global index of this source's first partition (for lineage). */
    public int firstPartition;

    public RecordSource(String name, String dataFile, int partitions, boolean enumerator, int initial,
            long discoveryMs, long[] rates, boolean repeat, boolean eventTime, Cost cost, Crash crash) {
        this.name = name;
        this.dataFile = dataFile;
        this.partitions = partitions;
        this.enumerator = enumerator;
        this.initial = initial;
        this.discoveryMs = discoveryMs;
        this.rates = rates;
        this.repeat = repeat;
        this.eventTime = eventTime;
        this.cost = cost;
        this.crash = crash;
    }

    @Override
    public Boundedness getBoundedness() {
        return repeat ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<Rec, Split> createReader(SourceReaderContext ctx) throws Exception {
        return new Reader(this, ctx);
    }

    @Override
    public SplitEnumerator<Split, EnumState> createEnumerator(SplitEnumeratorContext<Split> ctx) {
        EnumState fresh = new EnumState();
        fresh.discovered = enumerator ? Math.min(initial, partitions) : partitions;
        for (int p = 0; p < fresh.discovered; p++) {
            fresh.unassigned.add(new Split(p, 0));
        }
        return new Enumerator(this, ctx, fresh);
    }

    @Override
    public SplitEnumerator<Split, EnumState> restoreEnumerator(SplitEnumeratorContext<Split> ctx, EnumState state) {
        return new Enumerator(this, ctx, state);
    }

    @Override
    public SimpleVersionedSerializer<Split> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<EnumState> getEnumeratorCheckpointSerializer() {
        return new EnumStateSerializer();
    }

    /** A partition and the offset of its next record. */
    public static final class Split implements SourceSplit {
        final int partition;
        long offset;

        Split(int partition, long offset) {
            this.partition = partition;
            this.offset = offset;
        }

        @Override
        public String splitId() {
            return Integer.toString(partition);
        }
    }

    /** The enumerator's checkpoint: splits discovered, those not assigned. */
    public static final class EnumState {
        int discovered;
        List<Split> unassigned = new ArrayList<>();
    }

    static final class SplitSerializer implements SimpleVersionedSerializer<Split> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Split s) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            write(new DataOutputStream(bytes), s);
            return bytes.toByteArray();
        }

        @Override
        public Split deserialize(int version, byte[] b) throws IOException {
            return read(new DataInputStream(new ByteArrayInputStream(b)));
        }

        static void write(DataOutputStream out, Split s) throws IOException {
            out.writeInt(s.partition);
            out.writeLong(s.offset);
        }

        static Split read(DataInputStream in) throws IOException {
            return new Split(in.readInt(), in.readLong());
        }
    }

    static final class EnumStateSerializer implements SimpleVersionedSerializer<EnumState> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(EnumState s) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(s.discovered);
            out.writeInt(s.unassigned.size());
            for (Split split : s.unassigned) {
                SplitSerializer.write(out, split);
            }
            return bytes.toByteArray();
        }

        @Override
        public EnumState deserialize(int version, byte[] b) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
            EnumState s = new EnumState();
            s.discovered = in.readInt();
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                s.unassigned.add(SplitSerializer.read(in));
            }
            return s;
        }
    }

    static final class Enumerator implements SplitEnumerator<Split, EnumState> {
        private final RecordSource source;
        private final SplitEnumeratorContext<Split> ctx;
        private final EnumState state;
        private final TreeSet<Integer> waiting = new TreeSet<>();
        /** Pushing: the readers that registered (not checkpointed: they register again). */
        private final TreeSet<Integer> registered = new TreeSet<>();
        private final TreeSet<Integer> told = new TreeSet<>();

        Enumerator(RecordSource source, SplitEnumeratorContext<Split> ctx, EnumState state) {
            this.source = source;
            this.ctx = ctx;
            this.state = state;
        }

        @Override
        public void start() {
            if (source.enumerator && state.discovered < source.partitions) {
                ctx.callAsync(() -> null, (ignored, error) -> discover(), source.discoveryMs, source.discoveryMs);
            }
        }

        private void discover() {
            if (state.discovered < source.partitions) {
                state.unassigned.add(new Split(state.discovered, 0));
                state.discovered++;
            }
            if (source.push) {
                push(-1);
                return;
            }
            for (Integer reader : new ArrayList<>(waiting)) {
                handleSplitRequest(reader, null);
            }
        }

        /** Pushing: every unassigned split whose reader (the splits in
         *  discovery order, dealt round-robin) registered goes to it; once
         *  every split is found, the waiting readers hear the end (and, with
         *  `endAtAssignment`, every registered one). */
        private boolean push(int who) {
            boolean got = false;
            int parallelism = ctx.currentParallelism();
            // One event per reader with all its splits, as Kafka's
            // enumerator assigns them: the source operator creates every
            // split's watermark output before the reader reads any, so no
            // split starts behind a watermark its sibling already let out.
            Map<Integer, List<Split>> batch = new TreeMap<>();
            List<Split> keep = new ArrayList<>();
            for (Split s : state.unassigned) {
                int reader = s.partition % parallelism;
                if (registered.contains(reader) && ctx.registeredReaders().containsKey(reader)) {
                    batch.computeIfAbsent(reader, r -> new ArrayList<>()).add(s);
                    got |= reader == who;
                } else {
                    keep.add(s);
                }
            }
            state.unassigned = keep;
            if (!batch.isEmpty()) {
                ctx.assignSplits(new SplitsAssignment<>(batch));
            }
            if (state.discovered >= source.partitions) {
                for (Integer r : new ArrayList<>(waiting)) {
                    ctx.signalNoMoreSplits(r);
                }
                waiting.clear();
                if (source.endAtAssignment) {
                    for (Integer r : registered) {
                        if (told.add(r)) {
                            ctx.signalNoMoreSplits(r);
                        }
                    }
                }
            }
            return got;
        }

        @Override
        public void handleSplitRequest(int subtask, String host) {
            if (!ctx.registeredReaders().containsKey(subtask)) {
                return;
            }
            if (source.push) {
                // The first request registers the reader: it gets its splits;
                // a later one waits for the end.
                if (registered.add(subtask) && push(subtask)) {
                    return;
                }
                waiting.add(subtask);
                push(-1);
                return;
            }
            waiting.remove(subtask);
            if (!state.unassigned.isEmpty()) {
                ctx.assignSplit(state.unassigned.remove(0), subtask);
            } else if (state.discovered >= source.partitions) {
                ctx.signalNoMoreSplits(subtask);
            } else {
                waiting.add(subtask);
            }
        }

        @Override
        public void addSplitsBack(List<Split> splits, int subtask) {
            state.unassigned.addAll(splits);
            state.unassigned.sort((a, b) -> Integer.compare(a.partition, b.partition));
            registered.remove(subtask);
            told.remove(subtask);
            waiting.remove(subtask);
        }

        @Override
        public void addReader(int subtask) {
            if (source.enumerator) {
                return;
            }
            int parallelism = ctx.currentParallelism();
            List<Split> mine = new ArrayList<>();
            state.unassigned.removeIf(s -> {
                boolean ours = s.partition % parallelism == subtask;
                if (ours) {
                    mine.add(s);
                }
                return ours;
            });
            // All at once, in one event (partitions fixed at deployment).
            if (!mine.isEmpty()) {
                Map<Integer, List<Split>> batch = new TreeMap<>();
                batch.put(subtask, mine);
                ctx.assignSplits(new SplitsAssignment<>(batch));
            }
            ctx.signalNoMoreSplits(subtask);
        }

        @Override
        public EnumState snapshotState(long checkpointId) {
            EnumState copy = new EnumState();
            copy.discovered = state.discovered;
            for (Split s : state.unassigned) {
                copy.unassigned.add(new Split(s.partition, s.offset));
            }
            return copy;
        }

        @Override
        public void close() {}
    }

    /** When the first reader of the job (in this JVM) started: partition
     *  rates count from it, as the simulated ones count from time zero, so
     *  that the time the cluster takes to deploy is not read as a backlog;
     *  a restarted reader catches up with the schedule, as a simulated one. */
    private static final java.util.concurrent.atomic.AtomicLong FIRST_START =
            new java.util.concurrent.atomic.AtomicLong();

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ckptsim-source-timer");
        t.setDaemon(true);
        return t;
    });

    /** Mutant no-source-rewind: every split's latest offset in this JVM. */
    private static final java.util.concurrent.ConcurrentHashMap<String, Long> LIVE =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static final java.util.concurrent.ConcurrentHashMap<String, Integer> ATTEMPTS =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** The highest attempt any reader of this JVM runs in: the restarts. */
    static int restarts() {
        return ATTEMPTS.values().stream().mapToInt(n -> n - 1).max().orElse(0);
    }

    static final class Reader implements SourceReader<Rec, Split> {
        private final RecordSource source;
        private final SourceReaderContext ctx;
        private final ArrayDeque<Split> splits = new ArrayDeque<>();
        private long[][] keys;
        private long[][] values;
        private long[][] sizes;
        private long[][] stamps;
        private final Set<String> paused = new HashSet<>();
        private boolean noMoreSplits;
        private boolean requested;
        private long emitted;
        private int attempt;
        private CompletableFuture<Void> available = new CompletableFuture<>();

        Reader(RecordSource source, SourceReaderContext ctx) {
            this.source = source;
            this.ctx = ctx;
        }

        @Override
        public void start() {
            FIRST_START.compareAndSet(0, System.currentTimeMillis());
            load();
            // The reader context does not say the attempt: in one JVM (the
            // MiniCluster), the readers created before for this subtask.
            attempt = ATTEMPTS.merge(source.name + "/" + ctx.getIndexOfSubtask(), 1, Integer::sum) - 1;
            source.crash.check(source.name, ctx.getIndexOfSubtask(), attempt, 0);
            if (source.enumerator) {
                request();
            }
        }

        private void request() {
            if (!requested) {
                requested = true;
                ctx.sendSplitRequest();
            }
        }

        /** data/<source>.txt: one line per partition, `key,value,size,timestamp` records. */
        private void load() {
            try {
                List<String> lines = Files.readAllLines(Paths.get(source.dataFile), StandardCharsets.UTF_8);
                keys = new long[source.partitions][];
                values = new long[source.partitions][];
                sizes = new long[source.partitions][];
                stamps = new long[source.partitions][];
                for (int p = 0; p < source.partitions; p++) {
                    String line = p < lines.size() ? lines.get(p).trim() : "";
                    String[] recs = line.isEmpty() ? new String[0] : line.split(" ");
                    keys[p] = new long[recs.length];
                    values[p] = new long[recs.length];
                    sizes[p] = new long[recs.length];
                    stamps[p] = new long[recs.length];
                    for (int i = 0; i < recs.length; i++) {
                        String[] f = recs[i].split(",");
                        keys[p][i] = Long.parseLong(f[0]);
                        values[p][i] = Long.parseLong(f[1]);
                        sizes[p][i] = Long.parseLong(f[2]);
                        stamps[p][i] = f.length > 3 ? Long.parseLong(f[3]) : 0;
                    }
                }
            } catch (IOException e) {
                throw new RuntimeException("cannot read " + source.dataFile, e);
            }
        }

        @Override
        public InputStatus pollNext(ReaderOutput<Rec> output) throws Exception {
            // Paused splits (watermark alignment) are passed over, at most
            // once each per call.
            int skipped = 0;
            while (true) {
                Split split = splits.peek();
                if (split == null) {
                    if (noMoreSplits) {
                        return InputStatus.END_OF_INPUT;
                    }
                    if (source.enumerator) {
                        request();
                    }
                    return nothing(-1);
                }
                int p = split.partition;
                long n = keys[p].length;
                if (n == 0 || (!source.repeat && split.offset >= n)) {
                    splits.poll();
                    paused.remove(split.splitId());
                    if (source.eventTime) {
                        output.releaseOutputForSplit(split.splitId());
                    }
                    if (source.enumerator) {
                        requested = false;
                        request();
                    }
                    continue;
                }
                if (paused.contains(split.splitId())) {
                    if (++skipped >= splits.size()) {
                        return nothing(-1);
                    }
                    splits.poll();
                    splits.add(split);
                    continue;
                }
                long rate = source.rates[p];
                if (rate > 0) {
                    long readyMs = FIRST_START.get() + split.offset * 1000 / rate;
                    long now = System.currentTimeMillis();
                    if (now < readyMs) {
                        return nothing(readyMs - now);
                    }
                }
                int i = (int) (split.offset % n);
                long origin = ((long) (source.firstPartition + p) << 32) | split.offset;
                // Repeated (`repeat`), each round's timestamps follow the last's.
                long stamp = stamps[p][i] + (split.offset / n) * (stamps[p][(int) n - 1] + 1);
                split.offset++;
                if (Mutants.on("no-source-rewind")) {
                    LIVE.put(source.name + "/" + p, split.offset);
                }
                emitted++;
                source.crash.check(source.name, ctx.getIndexOfSubtask(), attempt, emitted);
                source.cost.pay();
                Harness.SOURCE_RECORDS.increment();
                Rec r = new Rec(keys[p][i], values[p][i], Rec.padding(sizes[p][i]), origin);
                if (source.eventTime) {
                    SourceOutput<Rec> out = output.createOutputForSplit(split.splitId());
                    out.collect(r, stamp);
                } else {
                    output.collect(r);
                }
                // One split after the other, as the simulated source reads
                // its partitions round-robin one record at a time.
                splits.poll();
                splits.add(split);
                return InputStatus.MORE_AVAILABLE;
            }
        }

        private InputStatus nothing(long wakeMs) {
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            if (wakeMs >= 0) {
                CompletableFuture<Void> f = available;
                TIMER.schedule(() -> f.complete(null), Math.max(1, wakeMs), TimeUnit.MILLISECONDS);
            }
            return InputStatus.NOTHING_AVAILABLE;
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            source.crash.snapshot(emitted);
            List<Split> out = new ArrayList<>();
            for (Split s : splits) {
                out.add(new Split(s.partition, s.offset));
            }
            return out;
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return available;
        }

        @Override
        public void addSplits(List<Split> added) {
            for (Split s : added) {
                String id = source.name + "/" + s.partition;
                if (Mutants.on("no-source-rewind")) {
                    // Live offsets (as a broker would hold them), not the checkpoint's.
                    s.offset = Math.max(s.offset, LIVE.getOrDefault(id, 0L));
                }
                if (Mutants.on("source-offset-off-by-one") && s.offset > 0) {
                    s.offset++;
                }
            }
            splits.addAll(added);
            requested = false;
            available.complete(null);
        }

        @Override
        public void pauseOrResumeSplits(Collection<String> pause, Collection<String> resume) {
            paused.addAll(pause);
            paused.removeAll(resume);
            available.complete(null);
        }

        @Override
        public void notifyNoMoreSplits() {
            noMoreSplits = true;
            available.complete(null);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            source.crash.notified(emitted);
        }

        @Override
        public void close() {}
    }
}
