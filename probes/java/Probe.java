// sleeplab probe for the JVM: measures Java's own wait functions with System.nanoTime
// and prints them in the sleeplab-probe/1 line protocol (spec/probe-protocol.md).
//
// Two files (ProbeArgs.java: the methods and arguments; this: the measuring and the
// output), default package, no dependencies. Source level: Java 11 (checked with
// `javac --release 11`). Build and run: see probes/java/README.md.

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

public final class Probe extends ProbeArgs {
    // ---- output ---------------------------------------------------------------------

    static String jsonString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2);
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }


    /** The kernel id of the calling thread (Linux: /proc/thread-self is PID/task/TID), or -1. */
    static long kernelThreadId() {
        try {
            return Long.parseLong(Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName().toString());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The header; a measurement's names its measuring thread `tid` (where it is known, else
     * -1) and says whether timestamps follow.
     */
    static String header(String method, String mode, long tid) {
        StringBuilder b = new StringBuilder(256);
        b.append("{\"protocol\":").append(jsonString(PROTOCOL));
        b.append(",\"runtime\":\"java\"");
        b.append(",\"implementation\":").append(jsonString(implementation()));
        b.append(",\"runtime_version\":").append(jsonString(System.getProperty("java.version", "?")
            + " (VM " + System.getProperty("java.vm.version", "?") + ")"));
        b.append(",\"clock\":\"System.nanoTime\"");
        b.append(",\"platform\":").append(jsonString(
            System.getProperty("os.name", "?").toLowerCase(Locale.ROOT) + " " + System.getProperty("os.arch", "?")));
        if (method != null) {
            b.append(",\"method\":").append(jsonString(method));
            b.append(",\"mode\":").append(jsonString(mode));
            if (tid > 0) {
                b.append(",\"tid\":").append(tid);
            }
            if (timestamps) {
                b.append(",\"timestamps\":true");
            }
        } else if (TIMESTAMPS_OFFERED) {
            // The optional arguments this probe takes (spec: the --list header's "options").
            b.append(",\"options\":[\"timestamps\"]");
        }
        b.append(",\"java_vm_name\":").append(jsonString(System.getProperty("java.vm.name", "?")));
        b.append(",\"java_vendor\":").append(jsonString(System.getProperty("java.vendor", "?")));
        b.append('}');
        return b.toString();
    }

    static BufferedWriter stdout() {
        return new BufferedWriter(
            new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.US_ASCII), 1 << 16);
    }

    static void printList(BufferedWriter out) throws IOException {
        out.write(header(null, null, -1));
        out.write('\n');
        for (int m = 0; m < NAMES.length; m++) {
            StringBuilder b = new StringBuilder(256);
            b.append("{\"method\":").append(jsonString(NAMES[m]));
            b.append(",\"kind\":").append(jsonString(KINDS[m]));
            b.append(",\"available\":").append(available(m));
            if (!available(m)) {
                b.append(",\"reason\":").append(jsonString(unavailableReason(m)));
            }
            b.append(",\"description\":").append(jsonString(DESCRIPTIONS[m]));
            b.append('}');
            out.write(b.toString());
            out.write('\n');
        }
        out.write("end\n");
        out.flush();
    }

    /** One w/s/t line; with --timestamps and `starts` given, the call's start as a second field. */
    static void printLine(BufferedWriter out, char tag, long value, long[] starts, int i) throws IOException {
        out.write(tag);
        out.write(' ');
        out.write(Long.toString(value));
        if (timestamps && starts != null) {
            out.write(' ');
            out.write(Long.toString(starts[i]));
        }
        out.write('\n');
    }

    /**
     * Prints one finished cell: its notes, (with --timestamps a periodic cell's t0,) w lines,
     * s/t lines, done. `warmStarts` and `starts` are the one-shot calls' starts (null for periodic).
     */
    static void printCell(BufferedWriter out, long value, List<String> notes, long[] warm, long[] warmStarts,
                          int nWarm, char sampleTag, long[] samples, long[] starts, int nSamples, long t0)
        throws IOException {
        out.write("cell ");
        out.write(Long.toString(value));
        out.write('\n');
        for (String n : notes) {
            out.write("# ");
            out.write(n);
            out.write('\n');
        }
        if (timestamps && sampleTag == 't') {
            out.write("t0 ");
            out.write(Long.toString(t0));
            out.write('\n');
        }
        for (int i = 0; i < nWarm; i++) {
            printLine(out, 'w', warm[i], warmStarts, i);
        }
        for (int i = 0; i < nSamples; i++) {
            printLine(out, sampleTag, samples[i], starts, i);
        }
        out.write("done ");
        out.write(Long.toString(value));
        out.write(' ');
        out.write(Integer.toString(nSamples));
        out.write('\n');
        out.flush();
    }

    // ---- one-shot measurement ------------------------------------------------------------

    /** The monitor that Object.wait waits on; nobody ever notifies it. */
    static final Object LOCK = new Object();

    /**
     * One timed call. Everything the call needs is computed before: the dispatch happens
     * before the first clock read, and each case holds clock read, wait, clock read; the
     * opening read is stored as the call's start (`starts[i]`) after the closing one.
     */
    static long once(int m, long d, long ms, int ns, Duration dur, long[] starts, int i) throws Throwable {
        switch (m) {
            case SLEEP_MS: {
                long t0 = System.nanoTime();
                Thread.sleep(ms);
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            case SLEEP_MS_NS: {
                long t0 = System.nanoTime();
                Thread.sleep(ms, ns);
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            case SLEEP_DURATION: {
                long t0 = System.nanoTime();
                SLEEP_DURATION_MH.invokeExact(dur);
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            case PARK_NANOS: {
                long t0 = System.nanoTime();
                LockSupport.parkNanos(d);
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            case WAIT_MS: {
                synchronized (LOCK) {
                    long t0 = System.nanoTime();
                    LOCK.wait(ms);
                    long t1 = System.nanoTime();
                    starts[i] = t0;
                    return t1 - t0;
                }
            }
            case WAIT_MS_NS: {
                synchronized (LOCK) {
                    long t0 = System.nanoTime();
                    LOCK.wait(ms, ns);
                    long t1 = System.nanoTime();
                    starts[i] = t0;
                    return t1 - t0;
                }
            }
            case YIELD: {
                long t0 = System.nanoTime();
                Thread.yield();
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            case SPIN: {
                long t0 = System.nanoTime();
                while (System.nanoTime() - t0 < d) {
                    Thread.onSpinWait();
                }
                long t1 = System.nanoTime();
                starts[i] = t0;
                return t1 - t0;
            }
            default:
                throw new IllegalStateException("not a one-shot method: " + m);
        }
    }

    static void runOneshot(Config c, BufferedWriter out) throws Throwable {
        int m = c.method;
        // This (main) thread measures.
        out.write(header(NAMES[m], "oneshot", kernelThreadId()));
        out.write('\n');
        out.flush();
        long[] warm = new long[(int) c.warmup];
        long[] warmStarts = new long[warm.length];
        int cap = (int) (c.count >= 0 ? c.count : c.maxCount);
        long[] samples = new long[cap];
        long[] starts = new long[cap];
        for (long d : c.durations) {
            List<String> notes = new ArrayList<>(2);
            long ms = d / 1_000_000L;
            int ns = 0;
            Duration dur = null;
            switch (m) {
                case SLEEP_MS:
                    if (d % 1_000_000L != 0) {
                        notes.add("Thread.sleep(" + ms + "): the request is truncated to whole ms by integer division");
                    }
                    break;
                case SLEEP_MS_NS:
                    ns = (int) (d % 1_000_000L);
                    break;
                case SLEEP_DURATION:
                    dur = Duration.ofNanos(d);
                    break;
                case WAIT_MS:
                    if (ms == 0) {
                        ms = 1;
                        notes.add("clamp: Object.wait(0) waits forever, so this request under 1 ms calls Object.wait(1)");
                    } else if (d % 1_000_000L != 0) {
                        notes.add("Object.wait(" + ms + "): the request is truncated to whole ms by integer division");
                    }
                    break;
                case WAIT_MS_NS:
                    ns = (int) (d % 1_000_000L);
                    if (ms == 0 && ns == 0) {
                        ns = 1;
                        notes.add("clamp: Object.wait(0, 0) waits forever, so d = 0 calls Object.wait(0, 1)");
                    }
                    break;
                default:
                    break;
            }
            for (int i = 0; i < warm.length; i++) {
                warm[i] = once(m, d, ms, ns, dur, warmStarts, i);
            }
            int n = 0;
            if (c.count >= 0) {
                for (; n < cap; n++) {
                    samples[n] = once(m, d, ms, ns, dur, starts, n);
                }
            } else {
                long sum = 0;
                while (n < cap && sum < c.budget) {
                    long e = once(m, d, ms, ns, dur, starts, n);
                    samples[n++] = e;
                    sum += e;
                }
            }
            printCell(out, d, notes, warm, warmStarts, warm.length, 's', samples, starts, n, 0);
        }
        out.write("end\n");
        out.flush();
    }

    // ---- periodic measurement ------------------------------------------------------------

    static final class Ticks implements Runnable {
        final long[] at;
        final CountDownLatch finished = new CountDownLatch(1);
        int n; // written by the scheduler thread only; read by main after finished.await()

        Ticks(int total) {
            at = new long[total];
        }

        @Override
        public void run() {
            long now = System.nanoTime();
            int i = n;
            if (i < at.length) {
                at[i] = now;
                n = i + 1;
                if (i + 1 == at.length) {
                    finished.countDown();
                }
            }
        }
    }

    static void runPeriodic(Config c, BufferedWriter out) throws Throwable {
        int w = (int) c.warmup;
        int total = (int) (c.warmup + c.count);
        Ticks ticks = new Ticks(total);
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "probe-ticker");
            t.setDaemon(true);
            return t;
        });
        ex.prestartCoreThread();
        // The executor's one thread receives the ticks and reads their arrival: it measures.
        long tid = ex.submit(Probe::kernelThreadId).get();
        out.write(header(NAMES[c.method], "periodic", tid));
        out.write('\n');
        out.flush();
        long t0 = System.nanoTime();
        ScheduledFuture<?> f = ex.scheduleAtFixedRate(ticks, c.period, c.period, TimeUnit.NANOSECONDS);
        long armed = System.nanoTime();
        ticks.finished.await();
        f.cancel(false);
        ex.shutdown();
        long[] warm = new long[w];
        long[] samples = new long[total - w];
        for (int i = 0; i < total; i++) {
            long rel = ticks.at[i] - t0;
            if (i < w) {
                warm[i] = rel;
            } else {
                samples[i - w] = rel;
            }
        }
        List<String> notes = new ArrayList<>(1);
        // The executor takes its own start time inside the call; a slow (cold) call shifts
        // every tick by up to this much, which the reader should not blame on the timer.
        notes.add("t0 is read just before scheduleAtFixedRate(); the call returned " + (armed - t0) + " ns after t0");
        printCell(out, c.period, notes, warm, null, w, 't', samples, null, total - w, t0);
        out.write("end\n");
        out.flush();
    }

    // ---- main -----------------------------------------------------------------------

    public static void main(String[] args) throws Throwable {
        Config c;
        try {
            c = parseArgs(args);
        } catch (UsageError e) {
            fail(2, e.getMessage());
            return;
        }
        timestamps = c.timestamps;
        BufferedWriter out = stdout();
        if (c.list) {
            printList(out);
            return;
        }
        if (!available(c.method)) {
            fail(3, "method '" + NAMES[c.method] + "' is unavailable: " + unavailableReason(c.method));
            return;
        }
        if (KINDS[c.method].equals("periodic")) {
            runPeriodic(c, out);
        } else {
            runOneshot(c, out);
        }
        out.flush();
        System.exit(0);
    }
}
