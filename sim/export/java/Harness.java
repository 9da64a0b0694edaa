import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

// Runs an exported job on a local MiniCluster bound to loopback and samples
// its REST API while it runs: the job (status, per-vertex records in and
// out) and its checkpoints every `sampleMs`, per-vertex backpressure every
// few samples, and at the end every checkpoint's details per vertex. Each
// response goes to real/rest.jsonl as it came; `ckptsim flink-check` turns
// them into ckptsim's metrics. real/run.json says how the run ended.
public final class Harness {
    private static final long SAMPLE_MS = 250;
    /** Records the sources emitted and the sink writers took, in this JVM. */
    static final java.util.concurrent.atomic.LongAdder SOURCE_RECORDS = new java.util.concurrent.atomic.LongAdder();
    static final java.util.concurrent.atomic.LongAdder SINK_RECORDS = new java.util.concurrent.atomic.LongAdder();
    private static final Pattern VERTEX = Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f]{32})\"");
    private static final Pattern CHECKPOINT = Pattern.compile("\"id\"\\s*:\\s*(\\d+)");

    /** When a source last emitted each watermark (System.nanoTime()). */
    private static final java.util.concurrent.ConcurrentHashMap<Long, Long> BIRTHS =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Per watermark a sink writer took (MAX_WATERMARK aside): the time since a source emitted it. */
    private static final List<Long> LAGS = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    static void watermarkBorn(long watermark) {
        BIRTHS.put(watermark, System.nanoTime());
    }

    /** real/watermark-lags.tsv: per watermark a sink writer took, `ms since the start, watermark, lag ns`. */
    private static final StringBuffer LAG_LINES = new StringBuffer();
    private static final long T0 = System.nanoTime();

    static void watermarkArrived(long watermark) {
        Long born = BIRTHS.get(watermark);
        if (born != null && watermark != Long.MAX_VALUE) {
            long now = System.nanoTime();
            LAGS.add(now - born);
            LAG_LINES.append((now - T0) / 1_000_000).append('\t').append(watermark).append('\t')
                    .append(now - born).append('\n');
        }
    }

    /** `,"watermark_lag_p50_ns":..,"watermark_lag_p99_ns":..` (nothing without lags). */
    private static String lagJson() {
        List<Long> lags;
        synchronized (LAGS) {
            lags = new java.util.ArrayList<>(LAGS);
        }
        if (lags.isEmpty()) {
            return "";
        }
        java.util.Collections.sort(lags);
        return ",\"watermark_lags\":" + lags.size() + ",\"watermark_lag_p50_ns\":" + percentile(lags, 50)
                + ",\"watermark_lag_p99_ns\":" + percentile(lags, 99);
    }

    /** The nearest-rank percentile of sorted values, as ckptsim's. */
    private static long percentile(List<Long> sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.size());
        return sorted.get(Math.max(1, rank) - 1);
    }

    /** real/crashes.tsv: every crash injected, as it fires. */
    private static volatile Path crashes;

    /** Notes an injected crash: `operator subtask attempt records` as
     *  planned, then the attempt it fired in and its records there. */
    static synchronized void injected(String operator, int subtask, int attempt, long records, int actual,
            long actualRecords) {
        if (crashes == null) {
            return;
        }
        String line = operator + "\t" + subtask + "\t" + attempt + "\t" + records + "\t" + actual + "\t"
                + actualRecords + "\n";
        try {
            Files.write(crashes, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new RuntimeException("cannot write " + crashes, e);
        }
    }

    private final Path real;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final long startMs = System.currentTimeMillis();
    private String base;

    private Harness(Path real) {
        this.real = real;
    }

    /** Runs the job until it ends, or for `durationMs` (> 0) and then cancels it. */
    public static void run(StreamExecutionEnvironment env, Configuration conf, int taskManagers, int slots,
            Path out, long durationMs, long limitMs) throws Exception {
        Path real = out.resolve("real");
        Files.createDirectories(real);
        Files.deleteIfExists(real.resolve("rest.jsonl"));
        Files.deleteIfExists(real.resolve("crashes.tsv"));
        crashes = real.resolve("crashes.tsv");
        new Harness(real).go(env, conf, taskManagers, slots, durationMs, limitMs);
    }

    private void go(StreamExecutionEnvironment env, Configuration conf, int taskManagers, int slots,
            long durationMs, long limitMs) throws Exception {
        StreamGraph graph = env.getStreamGraph();
        graph.setJobName("ckptsim");
        graph.setJobId(new JobID());
        MiniClusterConfiguration cfg = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(taskManagers)
                .setNumSlotsPerTaskManager(slots)
                .build();
        String ended;
        String failure = "";
        try (MiniCluster cluster = new MiniCluster(cfg)) {
            cluster.start();
            base = cluster.getRestAddress().get().toString().replaceAll("/$", "");
            JobID id = cluster.submitJob(graph).get().getJobID();
            String job = "/jobs/" + id;
            Set<String> vertices = new LinkedHashSet<>();
            long n = 0;
            while (true) {
                JobStatus status = cluster.getJobStatus(id).get();
                long elapsed = System.currentTimeMillis() - startMs;
                String body = sample(job);
                if (body != null) {
                    Matcher m = VERTEX.matcher(body);
                    while (m.find()) {
                        vertices.add(m.group(1));
                    }
                }
                sample(job + "/checkpoints");
                counters();
                if (n % 8 == 0) {
                    for (String v : vertices) {
                        sample(job + "/vertices/" + v + "/backpressure");
                    }
                }
                n++;
                if (status.isGloballyTerminalState()) {
                    ended = status.name().toLowerCase();
                    break;
                }
                if (durationMs > 0 && elapsed >= durationMs) {
                    ended = "stopped";
                    break;
                }
                if (elapsed >= limitMs) {
                    ended = "time-limit";
                    break;
                }
                Thread.sleep(SAMPLE_MS);
            }
            counters();
            details(job, vertices);
            if (ended.equals("stopped") || ended.equals("time-limit")) {
                cluster.cancelJob(id).get();
            } else {
                JobResult result = cluster.requestJobResult(id).get();
                if (result.getSerializedThrowable().isPresent()) {
                    StringWriter w = new StringWriter();
                    result.getSerializedThrowable().get().printStackTrace(new PrintWriter(w));
                    failure = w.toString();
                }
            }
        }
        long wall = System.currentTimeMillis() - startMs;
        String json = "{\"ended\":" + quote(ended) + ",\"wall_ms\":" + wall + ",\"failure\":" + quote(failure) + lagJson() + "}\n";
        Files.write(real.resolve("run.json"), json.getBytes(StandardCharsets.UTF_8));
        Files.write(real.resolve("watermark-lags.tsv"), LAG_LINES.toString().getBytes(StandardCharsets.UTF_8));
        System.out.println("ckptsim: the job " + ended + " after " + wall + " ms; samples in " + real);
    }

    /** Every checkpoint's details and its subtasks' per vertex. */
    private void details(String job, Set<String> vertices) throws IOException, InterruptedException {
        String all = sample(job + "/checkpoints");
        if (all == null) {
            return;
        }
        Set<String> ids = new LinkedHashSet<>();
        Matcher m = CHECKPOINT.matcher(all);
        while (m.find()) {
            ids.add(m.group(1));
        }
        List<String> sorted = new ArrayList<>(ids);
        for (String cp : sorted) {
            if (sample(job + "/checkpoints/details/" + cp) == null) {
                continue;
            }
            for (String v : vertices) {
                sample(job + "/checkpoints/details/" + cp + "/subtasks/" + v);
            }
        }
    }

    /** The job's own counters, as a sample of path `ckptsim/counters`. */
    private void counters() throws IOException {
        long t = System.currentTimeMillis() - startMs;
        String line = "{\"t_ms\":" + t + ",\"path\":\"ckptsim/counters\",\"code\":200,\"body\":{\"source_records\":"
                + SOURCE_RECORDS.sum() + ",\"sink_records\":" + SINK_RECORDS.sum() + ",\"restarts\":"
                + RecordSource.restarts() + "}}\n";
        Files.write(real.resolve("rest.jsonl"), line.getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** GETs `path`, appends it to rest.jsonl; the body, or null. */
    private String sample(String path) throws IOException, InterruptedException {
        long t = System.currentTimeMillis() - startMs;
        String body;
        int code;
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            code = r.statusCode();
            body = r.body();
        } catch (IOException e) {
            code = 0;
            body = null;
        }
        boolean json = body != null && !body.isEmpty() && (body.startsWith("{") || body.startsWith("["));
        String line = "{\"t_ms\":" + t + ",\"path\":" + quote(path) + ",\"code\":" + code + ",\"body\":"
                + (json ? body.replace("\n", " ") : "null") + "}\n";
        Files.write(real.resolve("rest.jsonl"), line.getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return code == 200 ? body : null;
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }
}
