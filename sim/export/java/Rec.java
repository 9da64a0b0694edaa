// A record of an exported ckptsim job: key, value, its lineage (the source
// record it derives from, as ckptsim's: global partition << 32 | offset;
// -1 none) and padding up to the scenario's record size. A POJO, so Flink
// serializes it field by field.
public class Rec {
    public long key;
    public long value;
    public long origin = -1;
    public byte[] pad;

    public Rec() {}

    public Rec(long key, long value, byte[] pad) {
        this.key = key;
        this.value = value;
        this.pad = pad;
    }

    public Rec(long key, long value, byte[] pad, long origin) {
        this(key, value, pad);
        this.origin = origin;
    }

    /** Padding for a record of `size` bytes (Flink's POJO serializer writes
     *  about 32 bytes of fields and flags besides the padding). */
    public static byte[] padding(long size) {
        return new byte[(int) Math.max(0, size - 32)];
    }
}
