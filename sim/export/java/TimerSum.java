import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

// ckptsim's `keyed-process` as a KeyedProcessFunction: each record adds its
// value to its key's sum (keyed ValueState) and registers an event-time
// timer `delayMs` after its timestamp and, with `processingDelayMs` > 0, a
// processing-time timer that long after now; Flink's timer service keeps
// one timer per key and time, in the keyed state's snapshot. A timer that
// fires emits (key, sum), with the key's last record's padding.
public final class TimerSum extends KeyedProcessFunction<Long, Rec, Rec> {
    private final String name;
    private final long delayMs;
    private final long processingDelayMs;
    private final Cost cost;
    private final Crash crash;
    private transient ValueState<Long> sum;
    private transient ValueState<Rec> last;
    private transient int subtask;
    private transient int attempt;
    private transient long taken;

    public TimerSum(String name, long delayMs, long processingDelayMs, Cost cost, Crash crash) {
        this.name = name;
        this.delayMs = delayMs;
        this.processingDelayMs = processingDelayMs;
        this.cost = cost;
        this.crash = crash;
    }

    @Override
    public void open(OpenContext context) throws Exception {
        super.open(context);
        sum = getRuntimeContext().getState(new ValueStateDescriptor<>("sum", Long.class));
        last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Rec.class));
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        crash.check(name, subtask, attempt, 0);
    }

    @Override
    public void processElement(Rec r, Context ctx, Collector<Rec> out) throws Exception {
        taken++;
        crash.check(name, subtask, attempt, taken);
        cost.pay();
        Long s = sum.value();
        sum.update((s == null ? 0 : s) + r.value);
        last.update(r);
        ctx.timerService().registerEventTimeTimer(ctx.timestamp() + delayMs);
        if (processingDelayMs > 0) {
            ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + processingDelayMs);
        }
    }

    @Override
    public void onTimer(long time, OnTimerContext ctx, Collector<Rec> out) throws Exception {
        Long s = sum.value();
        Rec r = last.value();
        out.collect(new Rec(ctx.getCurrentKey(), s == null ? 0 : s, r == null ? new byte[0] : r.pad));
    }
}
