import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.MergingWindowAssigner;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.util.Collection;

// ckptsim's `event-time-window` on Flink's own WindowOperator: Flink's
// tumbling, sliding or session assigner with its EventTimeTrigger, allowed
// lateness and late side output, and a sum of the values as the window's
// reduce function (the result keeps the last record's padding, as the
// simulated result keeps the last record's lineage). The assigner is
// wrapped only to count the records the operator reads, for the injected
// crashes and the per-record cost: WindowOperator asks the assigner once
// per record, on the task thread, which the result function's open() names.
public final class Windows {
    private Windows() {}

    /** The subtask and attempt of the window operator on this task thread. */
    private static final ThreadLocal<int[]> TASK = ThreadLocal.withInitial(() -> new int[] {0, 0});

    /** value = a.value + b.value: the window's sum. */
    public static final class Sum implements ReduceFunction<Rec> {
        @Override
        public Rec reduce(Rec a, Rec b) {
            return new Rec(b.key, a.value + b.value, b.pad);
        }
    }

    /** Emits the window's sum; its open() tells the assigner its subtask. */
    public static final class Result extends ProcessWindowFunction<Rec, Rec, Long, TimeWindow> {
        @Override
        public void open(OpenContext context) throws Exception {
            super.open(context);
            TASK.set(new int[] {
                getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                getRuntimeContext().getTaskInfo().getAttemptNumber()
            });
        }

        @Override
        public void process(Long key, Context context, Iterable<Rec> sums, Collector<Rec> out) {
            for (Rec r : sums) {
                out.collect(r);
            }
        }
    }

    /** Counts a record read: the crash plan and the cost. */
    static final class Reads implements java.io.Serializable {
        private final String name;
        private final Cost cost;
        private final Crash crash;
        private transient long taken;
        private transient boolean started;

        Reads(String name, Cost cost, Crash crash) {
            this.name = name;
            this.cost = cost;
            this.crash = crash;
        }

        void read() {
            int[] task = TASK.get();
            if (!started) {
                started = true;
                crash.check(name, task[0], task[1], 0);
            }
            taken++;
            crash.check(name, task[0], task[1], taken);
            try {
                cost.pay();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RuntimeException("interrupted while paying the cost of a record", e);
            }
        }
    }

    /** A tumbling or sliding assigner, counting the records it assigns. */
    public static final class Assign extends WindowAssigner<Object, TimeWindow> {
        private final WindowAssigner<Object, TimeWindow> inner;
        private final Reads reads;

        public Assign(WindowAssigner<Object, TimeWindow> inner, String name, Cost cost, Crash crash) {
            this.inner = inner;
            this.reads = new Reads(name, cost, crash);
        }

        @Override
        public Collection<TimeWindow> assignWindows(Object element, long timestamp, WindowAssignerContext context) {
            reads.read();
            return inner.assignWindows(element, timestamp, context);
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return inner.getDefaultTrigger();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
            return inner.getWindowSerializer(config);
        }

        @Override
        public boolean isEventTime() {
            return inner.isEventTime();
        }
    }

    /** A session assigner, counting the records it assigns. */
    public static final class Merging extends MergingWindowAssigner<Object, TimeWindow> {
        private final MergingWindowAssigner<Object, TimeWindow> inner;
        private final Reads reads;

        public Merging(MergingWindowAssigner<Object, TimeWindow> inner, String name, Cost cost, Crash crash) {
            this.inner = inner;
            this.reads = new Reads(name, cost, crash);
        }

        @Override
        public Collection<TimeWindow> assignWindows(Object element, long timestamp, WindowAssignerContext context) {
            reads.read();
            return inner.assignWindows(element, timestamp, context);
        }

        @Override
        public void mergeWindows(Collection<TimeWindow> windows, MergeCallback<TimeWindow> callback) {
            inner.mergeWindows(windows, callback);
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return inner.getDefaultTrigger();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
            return inner.getWindowSerializer(config);
        }

        @Override
        public boolean isEventTime() {
            return inner.isEventTime();
        }
    }
}
