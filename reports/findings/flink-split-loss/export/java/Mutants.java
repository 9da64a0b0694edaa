import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

// The ckptsim mutants an exported job carries, as the bugs they model,
// set once by the job's main before it runs (every task runs in the same
// JVM, the MiniCluster's). None are set unless `flink-export --mutant`.
public final class Mutants {
    private static volatile Set<String> on = new HashSet<>();

    private Mutants() {}

    public static void set(String names) {
        Set<String> s = new HashSet<>();
        for (String n : names.split(",")) {
            if (!n.isEmpty()) {
                s.add(n);
            }
        }
        on = s;
    }

    public static boolean on(String name) {
        return on.contains(name);
    }

    public static String list() {
        return String.join(",", new java.util.TreeSet<>(on));
    }

    static {
        set(System.getProperty("ckptsim.mutants", ""));
    }
}
