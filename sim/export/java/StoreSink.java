import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.StandardSinkTopologies;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

// The external store of an exported job: a directory. Every committed line
// is `sink<TAB>key<TAB>value`; `ckptsim flink-check` reads committed/ back.
//
// Transactional (a Sink V2 writer and committer, exactly-once): the writer
// writes each checkpoint's records into a new file under pending/ and hands
// its name to the committer before the barrier (prepareCommit); the
// committer moves it into committed/ once the checkpoint completed, and
// again after a restore (a file already moved is already committed).
// With a global committer (`postCommit()`, Sink V2's post-commit
// topology): the committer moves each file into staged/ and forwards it;
// the global committer moves it into committed/ (a table commit).
// At-least-once (`batch` > 0, no committer): the writer appends to
// committed/ directly, flushing every `batch` records and at every
// checkpoint, so a replay writes again what it wrote before. An upsert
// sink writes the same way into upsert/.
public final class StoreSink implements Sink<Rec>, SupportsCommitter<String> {
    private final String name;
    private final String dir;
    private final int batch;
    /** A scenario's Sink V2 writer (not a sink-2pc): its mutants apply. */
    private final boolean v2;
    private final Cost cost;
    private final Crash crash;

    public StoreSink(String name, String dir, int batch, boolean v2, Cost cost, Crash crash) {
        this.name = name;
        this.dir = dir;
        this.batch = batch;
        this.v2 = v2;
        this.cost = cost;
        this.crash = crash;
    }

    /** Where the writer writes without a committer. */
    private String direct = "committed";

    /** An at-least-once sink: the same writer, no committer. */
    public Sink<Rec> atLeastOnce() {
        return new AtLeastOnce(this);
    }

    /** An upsert sink: every row overwrites its key's in the table the
     *  files under upsert/ make, read in order (subtask, attempt, file). */
    public Sink<Rec> upsert() {
        direct = "upsert";
        return new AtLeastOnce(this);
    }

    /** A transactional sink whose committables a global committer publishes. */
    public PostCommit postCommit() {
        return new PostCommit(this);
    }

    public static final class PostCommit
            implements Sink<Rec>, SupportsCommitter<String>, SupportsPostCommitTopology<String> {
        private final StoreSink sink;

        PostCommit(StoreSink sink) {
            this.sink = sink;
        }

        @Override
        public CommittingSinkWriter<Rec, String> createWriter(WriterInitContext context) throws IOException {
            return sink.createWriter(context);
        }

        @Override
        public Committer<String> createCommitter(CommitterInitContext context) {
            return new StoreCommitter(sink.dir, "pending", "staged");
        }

        @Override
        public SimpleVersionedSerializer<String> getCommittableSerializer() {
            return sink.getCommittableSerializer();
        }

        @Override
        public void addPostCommitTopology(DataStream<CommittableMessage<String>> committables) {
            final String dir = sink.dir;
            final StoreSink s = sink;
            StandardSinkTopologies.addGlobalCommitter(
                    committables,
                    context -> new StoreCommitter(dir, "staged", "committed"),
                    s::getCommittableSerializer);
        }
    }

    static final class AtLeastOnce implements Sink<Rec> {
        private final StoreSink sink;

        AtLeastOnce(StoreSink sink) {
            this.sink = sink;
        }

        @Override
        public SinkWriter<Rec> createWriter(WriterInitContext context) throws IOException {
            return sink.createWriter(context);
        }
    }

    @Override
    public CommittingSinkWriter<Rec, String> createWriter(WriterInitContext context) throws IOException {
        return new Writer(context.getTaskInfo().getIndexOfThisSubtask(), context.getTaskInfo().getAttemptNumber());
    }

    @Override
    public Committer<String> createCommitter(CommitterInitContext context) {
        return new StoreCommitter(dir, "pending", "committed");
    }

    @Override
    public SimpleVersionedSerializer<String> getCommittableSerializer() {
        return new SimpleVersionedSerializer<String>() {
            @Override
            public int getVersion() {
                return 1;
            }

            @Override
            public byte[] serialize(String s) {
                return s.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String deserialize(int version, byte[] b) {
                return new String(b, StandardCharsets.UTF_8);
            }
        };
    }

    final class Writer implements CommittingSinkWriter<Rec, String> {
        private final int subtask;
        private final int attempt;
        private long taken;
        private long seq;
        private BufferedWriter out;
        private String file;
        private final List<String> pending = new ArrayList<>();
        private boolean ended;

        Writer(int subtask, int attempt) throws IOException {
            this.subtask = subtask;
            this.attempt = attempt;
            Files.createDirectories(Paths.get(dir, "pending"));
            Files.createDirectories(Paths.get(dir, "committed"));
            Files.createDirectories(Paths.get(dir, direct));
            crash.check(name, subtask, attempt, 0);
        }

        private void open() throws IOException {
            if (out != null) {
                return;
            }
            String sub = batch > 0 ? direct : "pending";
            file = name + "-" + subtask + "-" + attempt + "-" + seq + ".tsv";
            seq++;
            out = Files.newBufferedWriter(Paths.get(dir, sub, file), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }

        @Override
        public void write(Rec r, Context context) throws IOException, InterruptedException {
            taken++;
            crash.check(name, subtask, attempt, taken);
            cost.pay();
            Harness.SINK_RECORDS.increment();
            if (batch > 0) {
                pending.add(name + "\t" + r.key + "\t" + r.value + "\t" + r.origin + "\n");
                if (pending.size() >= batch) {
                    flushBatch();
                }
                return;
            }
            open();
            out.write(name + "\t" + r.key + "\t" + r.value + "\t" + r.origin + "\n");
        }

        @Override
        public void writeWatermark(org.apache.flink.api.common.eventtime.Watermark watermark) {
            Harness.watermarkArrived(watermark.getTimestamp());
        }

        private void flushBatch() throws IOException {
            if (pending.isEmpty()) {
                return;
            }
            open();
            if (direct.equals("upsert") && Mutants.on("upsert-batch-reordered")) {
                // The batch newest first: an older row of a key overwrites a newer one.
                java.util.Collections.reverse(pending);
            }
            for (String line : pending) {
                out.write(line);
            }
            out.flush();
            pending.clear();
        }

        @Override
        public void flush(boolean endOfInput) throws IOException {
            ended |= endOfInput;
            if (batch > 0) {
                if (!endOfInput && Mutants.on("sink-ack-without-flush")) {
                    return;
                }
                flushBatch();
            } else if (out != null) {
                out.flush();
            }
        }

        @Override
        public Collection<String> prepareCommit() throws IOException {
            // The writer's part of a checkpoint (before its barrier).
            crash.snapshot(taken);
            if (batch > 0 || out == null) {
                return Collections.emptyList();
            }
            if (ended && v2 && Mutants.on("writer-keeps-last-transaction")) {
                return Collections.emptyList();
            }
            out.close();
            out = null;
            return Collections.singletonList(file);
        }

        @Override
        public void close() throws IOException {
            if (out != null) {
                out.close();
            }
        }
    }

    /** Moves each committable's file from `from`/ to `to`/ (from pending/
     *  as well: a file a crash left there before its first move). */
    static final class StoreCommitter implements Committer<String> {
        private final String dir;
        private final String from;
        private final String to;

        StoreCommitter(String dir, String from, String to) {
            this.dir = dir;
            this.from = from;
            this.to = to;
        }

        @Override
        public void commit(Collection<CommitRequest<String>> requests) throws IOException {
            Files.createDirectories(Paths.get(dir, to));
            for (CommitRequest<String> request : requests) {
                Path src = Paths.get(dir, from, request.getCommittable());
                Path pending = Paths.get(dir, "pending", request.getCommittable());
                Path dst = Paths.get(dir, to, request.getCommittable());
                if (Files.exists(src)) {
                    Files.move(src, dst, StandardCopyOption.ATOMIC_MOVE);
                } else if (Files.exists(pending)) {
                    Files.move(pending, dst, StandardCopyOption.ATOMIC_MOVE);
                } else if (Files.exists(dst) || Files.exists(Paths.get(dir, "committed", request.getCommittable()))) {
                    request.signalAlreadyCommitted();
                } else {
                    request.signalFailedWithKnownReason(new IOException("transaction " + src + " is gone"));
                }
            }
        }

        @Override
        public void close() {}
    }
}
