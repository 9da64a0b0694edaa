// A record of an exported ckptsim job: key, value and padding up to the
// scenario's record size. A POJO, so Flink serializes it field by field.
public class Rec {
    public long key;
    public long value;
    public byte[] pad;

    public Rec() {}

    public Rec(long key, long value, byte[] pad) {
        this.key = key;
        this.value = value;
        this.pad = pad;
    }

    /** Padding for a record of `size` bytes (Flink's POJO serializer writes
     *  about 24 bytes of fields and flags besides the padding). */
    public static byte[] padding(long size) {
        return new byte[(int) Math.max(0, size - 24)];
    }
}
