// sleeplab probe for the JVM, its first part: the methods it offers, whether each is
// available here, and its arguments (spec/probe-protocol.md). Probe extends it, so the
// measuring code names these as its own. Built with Probe.java (javac -sourcepath).

import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

abstract class ProbeArgs {
    static final String PROTOCOL = "sleeplab-probe/1";
    /** Largest number of samples one cell may hold (arrays are pre-allocated). */
    static final long MAX_SAMPLES = 100_000_000L;
    static final long DEFAULT_MAX_COUNT = 100_000L;

    // ---- methods -------------------------------------------------------------------

    static final int SLEEP_MS = 0;
    static final int SLEEP_MS_NS = 1;
    static final int SLEEP_DURATION = 2;
    static final int PARK_NANOS = 3;
    static final int WAIT_MS = 4;
    static final int WAIT_MS_NS = 5;
    static final int YIELD = 6;
    static final int SPIN = 7;
    static final int FIXED_RATE = 8;

    static final String[] NAMES = {
        "Thread.sleep-ms",
        "Thread.sleep-ms-ns",
        "Thread.sleep-Duration",
        "LockSupport.parkNanos",
        "Object.wait-ms",
        "Object.wait-ms-ns",
        "Thread.yield",
        "Thread.onSpinWait-busy",
        "ScheduledExecutorService.scheduleAtFixedRate",
    };
    static final String[] KINDS = {
        "oneshot", "oneshot", "oneshot", "oneshot", "oneshot", "oneshot", "yield", "oneshot", "periodic",
    };
    static final String[] DESCRIPTIONS = {
        "Thread.sleep(d / 1_000_000): whole milliseconds by integer division, as users write it; "
            + "a request under 1 ms becomes Thread.sleep(0)",
        "Thread.sleep(d / 1_000_000, (int) (d % 1_000_000)): the exact ms + ns split "
            + "(JDK 17's Thread.sleep(long,int) rounds any nanos > 0 up to the next whole ms)",
        "Thread.sleep(Duration.ofNanos(d)) (Java 19+), called through a constant MethodHandle; "
            + "the Duration is built before the timed region",
        "LockSupport.parkNanos(d): one call, nobody unparks; an early return is reported, not hidden",
        "synchronized (lock) { lock.wait(max(1, d / 1_000_000)) }: whole ms by integer division; "
            + "wait(0) would wait forever, so a request under 1 ms is clamped to wait(1) and the cell "
            + "carries a # note; nobody notifies, one call, no loop",
        "synchronized (lock) { lock.wait(d / 1_000_000, (int) (d % 1_000_000)) }: exact ms + ns split "
            + "(the JDK rounds any nanos > 0 up to the next whole ms); wait(0, 0) would wait forever, "
            + "so d = 0 is clamped to wait(0, 1) with a # note; nobody notifies, one call, no loop",
        "Thread.yield()",
        "busy wait: while (System.nanoTime() - t0 < d) Thread.onSpinWait()",
        "single-thread ScheduledThreadPoolExecutor.scheduleAtFixedRate(task, P, P, NANOSECONDS); "
            + "the task stores System.nanoTime() into a pre-allocated long[]; main waits on a CountDownLatch",
    };

    /** Thread.sleep(Duration), Java 19+; null where the runtime lacks it. */
    static final MethodHandle SLEEP_DURATION_MH;
    static final String SLEEP_DURATION_REASON;

    static {
        MethodHandle mh = null;
        String reason = null;
        try {
            mh = MethodHandles.publicLookup().findStatic(
                Thread.class, "sleep", MethodType.methodType(void.class, Duration.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            reason = "Thread.sleep(Duration) needs Java 19 or later; this runtime is Java "
                + System.getProperty("java.version");
        }
        SLEEP_DURATION_MH = mh;
        SLEEP_DURATION_REASON = reason;
    }

    static boolean available(int m) {
        return m != SLEEP_DURATION || SLEEP_DURATION_MH != null;
    }

    static String unavailableReason(int m) {
        return m == SLEEP_DURATION ? SLEEP_DURATION_REASON : null;
    }

    // ---- argument errors --------------------------------------------------------------

    static final class UsageError extends Exception {
        private static final long serialVersionUID = 1L;

        UsageError(String msg) {
            super(msg);
        }
    }

    static void fail(int code, String msg) {
        System.err.println("probe: " + msg);
        System.err.flush();
        System.exit(code);
    }

    /** A non-negative decimal integer that fits a signed 64-bit long; nothing else. */
    static long parseNumber(String flag, String text) throws UsageError {
        if (text.isEmpty()) {
            throw new UsageError(flag + ": empty number");
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new UsageError(flag + ": malformed number '" + text
                    + "' (expected a non-negative decimal integer)");
            }
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new UsageError(flag + ": number '" + text + "' is too large");
        }
    }

    static long[] parseList(String flag, String text) throws UsageError {
        if (text.isEmpty()) {
            throw new UsageError(flag + ": empty list");
        }
        List<Long> out = new ArrayList<>();
        int start = 0;
        while (true) {
            int comma = text.indexOf(',', start);
            String item = comma < 0 ? text.substring(start) : text.substring(start, comma);
            if (item.isEmpty()) {
                throw new UsageError(flag + ": empty element in list '" + text + "'");
            }
            out.add(parseNumber(flag, item));
            if (comma < 0) {
                break;
            }
            start = comma + 1;
        }
        long[] a = new long[out.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = out.get(i);
        }
        return a;
    }

    static final class Config {
        boolean list;
        boolean timestamps;
        int method = -1;
        long[] durations;
        long count = -1;
        long budget = -1;
        long warmup = 0;
        long maxCount = DEFAULT_MAX_COUNT;
        long period = -1;
    }

    static Config parseArgs(String[] args) throws UsageError {
        Map<String, String> seen = new HashMap<>();
        boolean list = false;
        boolean timestamps = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--list":
                    if (list) {
                        throw new UsageError("--list given twice");
                    }
                    list = true;
                    break;
                case "--timestamps":
                    if (!TIMESTAMPS_OFFERED) {
                        throw new UsageError("unknown flag '" + a + "' (System.nanoTime is not CLOCK_MONOTONIC here)");
                    }
                    if (timestamps) {
                        throw new UsageError("--timestamps given twice");
                    }
                    timestamps = true;
                    break;
                case "--method":
                case "--durations-ns":
                case "--count":
                case "--budget-ns":
                case "--warmup":
                case "--max-count":
                case "--period-ns":
                    if (seen.containsKey(a)) {
                        throw new UsageError(a + " given twice");
                    }
                    if (i + 1 >= args.length) {
                        throw new UsageError(a + ": missing value");
                    }
                    seen.put(a, args[++i]);
                    break;
                default:
                    if (a.startsWith("-")) {
                        throw new UsageError("unknown flag '" + a + "'");
                    }
                    throw new UsageError("unexpected argument '" + a + "'");
            }
        }
        Config c = new Config();
        c.timestamps = timestamps;
        if (list) {
            if (!seen.isEmpty() || timestamps) {
                List<String> got = new ArrayList<>(seen.keySet());
                if (timestamps) {
                    got.add("--timestamps");
                }
                throw new UsageError("--list takes no other flags (got " + String.join(", ", got) + ")");
            }
            c.list = true;
            return c;
        }
        String method = seen.get("--method");
        if (method == null) {
            throw new UsageError("missing --method (or --list)");
        }
        for (int m = 0; m < NAMES.length; m++) {
            if (NAMES[m].equals(method)) {
                c.method = m;
            }
        }
        if (c.method < 0) {
            throw new UsageError("unknown method '" + method + "' (see --list)");
        }
        if (seen.containsKey("--durations-ns")) {
            c.durations = parseList("--durations-ns", seen.get("--durations-ns"));
        }
        if (seen.containsKey("--count")) {
            c.count = parseNumber("--count", seen.get("--count"));
            if (c.count < 1) {
                throw new UsageError("--count: '" + seen.get("--count") + "' must be at least 1");
            }
            if (c.count > MAX_SAMPLES) {
                throw new UsageError("--count: '" + seen.get("--count") + "' exceeds this probe's limit of "
                    + MAX_SAMPLES + " samples per cell");
            }
        }
        if (seen.containsKey("--budget-ns")) {
            c.budget = parseNumber("--budget-ns", seen.get("--budget-ns"));
            if (c.budget < 1) {
                throw new UsageError("--budget-ns: '" + seen.get("--budget-ns") + "' must be at least 1");
            }
        }
        if (seen.containsKey("--warmup")) {
            c.warmup = parseNumber("--warmup", seen.get("--warmup"));
            if (c.warmup > MAX_SAMPLES) {
                throw new UsageError("--warmup: '" + seen.get("--warmup") + "' exceeds this probe's limit of "
                    + MAX_SAMPLES);
            }
        }
        if (seen.containsKey("--max-count")) {
            c.maxCount = parseNumber("--max-count", seen.get("--max-count"));
            if (c.maxCount < 1) {
                throw new UsageError("--max-count: '" + seen.get("--max-count") + "' must be at least 1");
            }
            if (c.maxCount > MAX_SAMPLES) {
                throw new UsageError("--max-count: '" + seen.get("--max-count")
                    + "' exceeds this probe's limit of " + MAX_SAMPLES + " samples per cell");
            }
        }
        if (seen.containsKey("--period-ns")) {
            c.period = parseNumber("--period-ns", seen.get("--period-ns"));
            if (c.period < 1) {
                throw new UsageError("--period-ns: '" + seen.get("--period-ns") + "' must be at least 1");
            }
        }
        String name = NAMES[c.method];
        if (KINDS[c.method].equals("periodic")) {
            if (c.durations != null) {
                throw new UsageError("--durations-ns is not valid for periodic method '" + name
                    + "' (use --period-ns)");
            }
            if (c.budget >= 0) {
                throw new UsageError("--budget-ns is not valid for periodic method '" + name
                    + "' (use --count)");
            }
            if (seen.containsKey("--max-count")) {
                throw new UsageError("--max-count is not valid for periodic method '" + name + "'");
            }
            if (c.period < 0) {
                throw new UsageError("periodic method '" + name + "' needs --period-ns");
            }
            if (c.count < 0) {
                throw new UsageError("periodic method '" + name + "' needs --count");
            }
            if (c.warmup + c.count > MAX_SAMPLES) {
                throw new UsageError("--warmup + --count exceeds this probe's limit of " + MAX_SAMPLES);
            }
        } else {
            if (c.period >= 0) {
                throw new UsageError("--period-ns is not valid for " + KINDS[c.method] + " method '" + name
                    + "' (use --durations-ns)");
            }
            if (c.durations == null) {
                throw new UsageError(KINDS[c.method] + " method '" + name + "' needs --durations-ns");
            }
            if (c.count >= 0 && c.budget >= 0) {
                throw new UsageError("--count and --budget-ns given together (choose one)");
            }
            if (c.count < 0 && c.budget < 0) {
                throw new UsageError("one of --count or --budget-ns is required");
            }
        }
        return c;
    }

    static String implementation() {
        String vm = System.getProperty("java.vm.name", "");
        if (vm.contains("OpenJ9")) {
            return "OpenJ9";
        }
        if (vm.contains("GraalVM") || vm.contains("Substrate")) {
            return "GraalVM";
        }
        if (vm.startsWith("OpenJDK") || vm.contains("HotSpot")) {
            return vm.contains("HotSpot") ? "HotSpot" : "OpenJDK";
        }
        return vm.isEmpty() ? "unknown" : vm;
    }

    /**
     * Whether --timestamps is offered: on Linux, HotSpot's System.nanoTime is
     * clock_gettime(CLOCK_MONOTONIC) as an absolute count of ns (os::javaTimeNanos), the
     * kernel trace's clock, so the reading that opens a timed region is the call's start.
     */
    static final boolean TIMESTAMPS_OFFERED =
        System.getProperty("os.name", "").equals("Linux")
            && (implementation().equals("HotSpot") || implementation().equals("OpenJDK"));

    /** --timestamps: every one-shot line carries its call's start, a periodic cell its t0. */
    static boolean timestamps;
}
