import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

// Chained to a source that emits watermarks: passes everything on, and
// notes when the source emitted each watermark (its latest emission of the
// value, as the simulator's watermark lag counts it), so that a sink
// writer can tell how long the watermark took to cross the job.
public final class WatermarkProbe extends AbstractStreamOperator<Rec> implements OneInputStreamOperator<Rec, Rec> {
    @Override
    public void processElement(StreamRecord<Rec> element) {
        output.collect(element);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        Harness.watermarkBorn(mark.getTimestamp());
        super.processWatermark(mark);
    }
}
