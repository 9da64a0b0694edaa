import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.ArrayList;
import java.util.List;

// The built-in operator kinds of ckptsim as one Flink operator: a kind and
// its two parameters (a, b), the per-record cost and the injected crashes.
// Multi-input operators read the union of their inputs.
public final class CkptOp extends AbstractStreamOperator<Rec>
        implements OneInputStreamOperator<Rec, Rec>, BoundedOneInput {
    public enum Kind { MAP, FILTER, FLAT_MAP, KEYED_COUNT, KEYED_SUM, COUNT_WINDOW, BUFFER_SPLIT, BUFFER_UNION }

    private final String name;
    private final Kind kind;
    private final long a;
    private final long b;
    private final Cost cost;
    private final Crash crash;
    private transient int subtask;
    private transient int attempt;
    private transient long taken;
    private transient ValueState<Long> acc;
    private transient ListState<Long> window;
    private transient ListState<Rec> listState;
    private transient List<Rec> buffered;

    /** map: value * a + b; filter: key % a < b; flat-map: a copies, the
     *  i-th with value + i;
     *  count-window: a records; buffer: batches of a. */
    public CkptOp(String name, Kind kind, long a, long b, Cost cost, Crash crash) {
        this.name = name;
        this.kind = kind;
        this.a = a;
        this.b = b;
        this.cost = cost;
        this.crash = crash;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        if (kind == Kind.BUFFER_SPLIT || kind == Kind.BUFFER_UNION) {
            ListStateDescriptor<Rec> d = new ListStateDescriptor<>("buffer", Rec.class);
            listState = kind == Kind.BUFFER_SPLIT
                    ? context.getOperatorStateStore().getListState(d)
                    : context.getOperatorStateStore().getUnionListState(d);
            buffered = new ArrayList<>();
            int me = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            int n = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
            int i = 0;
            for (Rec r : listState.get()) {
                // Union list state: every subtask gets every entry, keeps its share.
                if (kind == Kind.BUFFER_SPLIT || i % n == me) {
                    buffered.add(r);
                }
                i++;
            }
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        if (kind == Kind.KEYED_COUNT || kind == Kind.KEYED_SUM) {
            acc = getRuntimeContext().getState(new ValueStateDescriptor<>("acc", Long.class));
        }
        if (kind == Kind.COUNT_WINDOW) {
            window = getRuntimeContext().getListState(new ListStateDescriptor<>("window", Long.class));
        }
        crash.check(name, subtask, attempt, 0);
    }

    @Override
    public void processElement(StreamRecord<Rec> element) throws Exception {
        Rec r = element.getValue();
        taken++;
        crash.check(name, subtask, attempt, taken);
        cost.pay();
        switch (kind) {
            case MAP:
                output.collect(new StreamRecord<>(new Rec(r.key, r.value * a + b, r.pad, r.origin)));
                break;
            case FILTER:
                if (Long.remainderUnsigned(r.key, a) < b) {
                    output.collect(new StreamRecord<>(r));
                }
                break;
            case FLAT_MAP:
                for (long i = 0; i < a; i++) {
                    output.collect(new StreamRecord<>(new Rec(r.key, r.value + i, r.pad, r.origin)));
                }
                break;
            case KEYED_COUNT: {
                Long c = acc.value();
                long next = (c == null ? 0 : c) + 1;
                acc.update(next);
                output.collect(new StreamRecord<>(new Rec(r.key, next, r.pad, r.origin)));
                break;
            }
            case KEYED_SUM: {
                Long s = acc.value();
                long next = (s == null ? 0 : s) + r.value;
                acc.update(next);
                output.collect(new StreamRecord<>(new Rec(r.key, next, r.pad, r.origin)));
                break;
            }
            case COUNT_WINDOW: {
                window.add(r.value);
                long count = 0;
                long sum = 0;
                for (Long v : window.get()) {
                    count++;
                    sum += v;
                }
                if (count >= a) {
                    window.clear();
                    output.collect(new StreamRecord<>(new Rec(r.key, sum, r.pad)));
                }
                break;
            }
            case BUFFER_SPLIT:
            case BUFFER_UNION:
                buffered.add(r);
                if (buffered.size() >= a) {
                    flushBuffer();
                }
                break;
        }
    }

    private void flushBuffer() {
        for (Rec r : buffered) {
            output.collect(new StreamRecord<>(r));
        }
        buffered.clear();
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        crash.snapshot(taken);
        if (listState != null) {
            listState.update(new ArrayList<>(buffered));
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        crash.notified(taken);
    }

    @Override
    public void endInput() throws Exception {
        if (kind == Kind.COUNT_WINDOW && !Mutants.on("window-no-flush-at-end")) {
            ListStateDescriptor<Long> d = new ListStateDescriptor<>("window", Long.class);
            List<Rec> open = new ArrayList<>();
            getKeyedStateBackend().applyToAllKeys(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, d,
                    (Object key, ListState<Long> state) -> {
                        long sum = 0;
                        boolean any = false;
                        for (Long v : state.get()) {
                            sum += v;
                            any = true;
                        }
                        if (any) {
                            open.add(new Rec((Long) key, sum, new byte[0]));
                        }
                    });
            for (Rec r : open) {
                output.collect(new StreamRecord<>(r));
            }
        }
        if (buffered != null) {
            flushBuffer();
        }
    }
}
