/* Does a thread that spins right after waking from a sleep lose its CPU more often than
 * one that never stopped spinning, and does it depend on how long ago it woke? An
 * experiment.
 *
 * One thread, pinned to CPU, runs a 60 Hz loop on absolute CLOCK_MONOTONIC deadlines in
 * two modes, interleaved in blocks of 30 frames (A B A B …, as many of each):
 *   A, halt then spin: clock_nanosleep (TIMER_ABSTIME) to deadline − WINDOW, then spin
 *      to the deadline. On a quiet machine the CPU has nothing else to run while the
 *      thread sleeps, so it idles: on a virtual machine its vCPU halts, and the host
 *      has to run it again for the wake.
 *   B, never halt: spin the whole frame, from the previous deadline on, and look only at
 *      the same window [deadline − WINDOW, deadline].
 * A spin reads the clock in a loop (with a pause instruction); a gap is the time between
 * two consecutive reads of at least 20 µs: the thread did not run. Each gap is recorded
 * with its length and its offset into the window: in A from the wake's own clock read
 * (the first read after clock_nanosleep returns; the gaps counted start from that read
 * on, the oversleep itself is not one), in B from deadline − WINDOW (the gaps counted
 * start from B's first read at or after it; one that began before is left out, as A's
 * sleep is). Also recorded: each A wake's lateness past deadline − WINDOW, and in both
 * modes whether a gap of at least 50 µs straddled the deadline (the first read at or
 * after the deadline came at least 50 µs after the one before it): a late frame that no
 * margin would have saved. An A frame that woke at or after its deadline, or a B frame
 * whose first read of the window came at or after it, is counted apart.
 * Printed, per mode: the gaps of ≥ 20, ≥ 50 and ≥ 100 µs in the window, each as a count
 * and as a rate per ms spun in the window (A spins from its wake, so a little less than
 * the window; B the whole window); the deadlines a
 * gap straddled; the gaps of ≥ 50 µs by offset, in bins of 250 µs, counted and per 1000
 * frames (is the hazard uniform over the window, or does it gather after the wake?); the
 * ratio of the ≥ 100 µs rates, A over B; A's wake lateness, p50 / p99 / max.
 *
 *   cc -O2 -o /tmp/wake-gaps scripts/wake-gaps.c -lpthread
 *   /tmp/wake-gaps SECONDS CPU [WINDOW_US]
 *   /tmp/wake-gaps 60 0          # 60 s on CPU 0 (30 s of each mode), window 2000 µs
 *   /tmp/wake-gaps 60 1 500      # on CPU 1, window 500 µs (250..10000, a multiple of 250)
 * SECONDS is rounded to whole seconds (at least 1): one second is a block of each mode.
 *
 * What it costs: B's blocks burn all of the CPU, half of the run. The thread runs as
 * SCHED_OTHER (set explicitly, so that a run under chrt cannot make it a real-time
 * spinner that shuts the CPU's kernel threads out): the scheduler takes the CPU from it
 * whenever another task needs it, and such a preemption is a gap it records, as it
 * should be.
 *
 * Why it matters here: a "precise" sleeper (sleep to a margin before the deadline, then
 * spin) whose p99 lateness on a noisy VM cannot drop below about a third of a plain
 * sleep's, whatever its margin. If gaps of ≥ 50–100 µs come at a constant rate during
 * the spin, not just right after the wake, the chance that one straddles the deadline
 * does not depend on the margin; if they gather after the wake, a longer margin moves
 * the deadline out of their reach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define PERIOD_NS 16666667u  /* 60 Hz */
#define BLOCK 30             /* frames per block */
#define MAX_SECONDS 3600
#define MAX_FRAMES (MAX_SECONDS * BLOCK) /* per mode: one block of each a second */
#define MIN_GAP_NS 20000u
#define BIG_GAP_NS 50000u    /* the bins, and a straddled deadline */
#define HUGE_GAP_NS 100000u
#define BIN_NS 250000u
#define MAX_BINS (10000000u / BIN_NS)
#define MAX_GAPS (1u << 20)  /* per mode */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t ns) {
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

struct gap {
    uint32_t off, len; /* ns; len saturates at ~4.3 s */
};

struct mode {
    const char *name;
    long frames;
    uint64_t spun_ns;   /* of the window, from the first read in it to the deadline */
    long straddled;     /* deadlines a gap >= 50 µs straddled */
    long started_late;  /* A woke, or B's first read of the window came, at or after the deadline */
    long restarts;      /* frames that ended so late the schedule started over */
    size_t ngaps;
    long overflow;      /* gaps not stored: the store was full */
    struct gap *gaps;
};

/* Fixed stores, touched before the loop so that no page fault lands between two reads. */
static struct gap gap_store[2][MAX_GAPS];
static uint64_t wake_late[MAX_FRAMES]; /* A's wake past deadline − window, ns */

static void record(struct mode *m, uint64_t off, uint64_t len) {
    if (m->ngaps < MAX_GAPS)
        m->gaps[m->ngaps++] =
            (struct gap){(uint32_t)off, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len};
    else
        m->overflow++;
}

/* Spins from the read `prev` (at `start`, offsets from `origin`) to the first read at or
 * after `deadline`, recording the gaps; returns that read. */
static uint64_t spin_window(struct mode *m, uint64_t origin, uint64_t prev, uint64_t deadline) {
    uint64_t start = prev;
    for (;;) {
        cpu_relax();
        uint64_t t = now_ns(), d = t - prev;
        if (d >= MIN_GAP_NS)
            record(m, prev - origin, d);
        if (t >= deadline) {
            if (d >= BIG_GAP_NS)
                m->straddled++;
            m->spun_ns += deadline - start;
            return t;
        }
        prev = t;
    }
}

static uint64_t halt_frame(struct mode *m, uint64_t from, uint64_t deadline) {
    sleep_until(from);
    uint64_t wake = now_ns();
    wake_late[m->frames++] = wake > from ? wake - from : 0;
    if (wake >= deadline) {
        m->started_late++;
        return wake;
    }
    return spin_window(m, wake, wake, deadline);
}

static uint64_t never_frame(struct mode *m, uint64_t from, uint64_t deadline) {
    uint64_t before = now_ns(), t = before;
    while (t < from) {
        cpu_relax();
        before = t;
        t = now_ns();
    }
    m->frames++;
    if (t >= deadline) { /* one gap held the whole window */
        m->started_late++;
        if (t - before >= BIG_GAP_NS)
            m->straddled++;
        return t;
    }
    return spin_window(m, from, t, deadline);
}

/* Prints `s` left-aligned (right if `right`) in `width` columns, counting UTF-8
 * characters, not bytes. */
static void cell(const char *s, int width, int right) {
    int n = 0;
    for (const char *p = s; *p; p++)
        n += ((unsigned char)*p & 0xC0) != 0x80;
    if (right)
        printf("%*s%s", width > n ? width - n : 0, "", s);
    else
        printf("%s%*s", s, width > n ? width - n : 0, "");
}

/* A rate to three significant digits, never in exponent notation. */
static void fmt_rate(char *buf, size_t size, double r) {
    int decimals = 2;
    for (double x = r; x > 0 && x < 1 && decimals < 9; x *= 10)
        decimals++;
    snprintf(buf, size, "%.*f", r == 0 ? 0 : decimals, r);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile of the sorted `v`, nearest rank (the ⌈p/100 · n⌉-th smallest),
 * into `buf` in µs, or "–" where n·(1 − p/100) < 1: the sample does not resolve it. */
static void fmt_quantile(char *buf, size_t size, const uint64_t *v, long n, int p) {
    if (n < 1 || n * (100 - p) < 100) {
        snprintf(buf, size, "–");
        return;
    }
    long k = (p * n + 99) / 100;
    snprintf(buf, size, "%.1f µs", (double)v[k - 1] / 1e3);
}

/* The time `m` spun in its windows, ms (at least 1 ns: no division by zero). */
static double spun_ms(const struct mode *m) {
    return (double)(m->spun_ns > 0 ? m->spun_ns : 1) / 1e6;
}

static long count_at_least(const struct mode *m, uint64_t ns) {
    long c = 0;
    for (size_t i = 0; i < m->ngaps; i++)
        c += m->gaps[i].len >= ns;
    return c;
}

static int parse_long(const char *s, long *out) {
    char *end;
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    *out = strtol(s, &end, 10);
    return *end == '\0' && errno == 0;
}

/* The CPUs in `set` as ranges, "0-1,4". */
static void fmt_cpus(char *buf, size_t size, const cpu_set_t *set) {
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && used < size; c++) {
        if (!CPU_ISSET(c, set) || (c > 0 && CPU_ISSET(c - 1, set)))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e > c ? snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", c, e)
                      : snprintf(buf + used, size - used, "%s%d", used ? "," : "", c);
        used += w > 0 ? (size_t)w : 0;
    }
}

#define USAGE "(usage: wake-gaps SECONDS CPU [WINDOW_US])"

int main(int argc, char **argv) {
    if (argc > 4) {
        fprintf(stderr, "wake-gaps: one argument too many: %s " USAGE "\n", argv[4]);
        return 2;
    }
    if (argc < 2) {
        fprintf(stderr, "wake-gaps: SECONDS missing " USAGE "\n");
        return 2;
    }
    char *end;
    double seconds = strtod(argv[1], &end);
    if (end == argv[1] || *end != '\0' || !(seconds > 0 && seconds <= MAX_SECONDS)) {
        fprintf(stderr, "wake-gaps: SECONDS must be a number in (0, %d], not %s\n", MAX_SECONDS,
                argv[1]);
        return 2;
    }
    if (argc < 3) {
        fprintf(stderr, "wake-gaps: CPU missing " USAGE "\n");
        return 2;
    }
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("wake-gaps: sched_getaffinity");
        return 1;
    }
    long cpu;
    if (!parse_long(argv[2], &cpu) || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
        char cpus[256];
        fmt_cpus(cpus, sizeof cpus, &allowed);
        fprintf(stderr, "wake-gaps: CPU must be an online CPU this process may use (%s), not %s\n",
                cpus, argv[2]);
        return 2;
    }
    long window_us = 2000;
    if (argc > 3 && (!parse_long(argv[3], &window_us) || window_us < 250 || window_us > 10000 ||
                     window_us % 250 != 0)) {
        fprintf(stderr, "wake-gaps: WINDOW_US must be a multiple of 250 in 250..10000, not %s\n",
                argv[3]);
        return 2;
    }

    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        fprintf(stderr, "wake-gaps: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
        return 1;
    }
    struct sched_param sp = {.sched_priority = 0};
    if (sched_setscheduler(0, SCHED_OTHER, &sp) != 0)
        fprintf(stderr, "wake-gaps: cannot set SCHED_OTHER: %s\n", strerror(errno));
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

    long pairs = (long)(seconds + 0.5);
    if (pairs < 1)
        pairs = 1;
    const uint64_t window = (uint64_t)window_us * 1000u;
    const unsigned nbins = (unsigned)(window / BIN_NS);
    struct mode modes[2] = {
        {.name = "A: halt then spin", .gaps = gap_store[0]},
        {.name = "B: never halt", .gaps = gap_store[1]},
    };
    memset(gap_store, 1, sizeof gap_store);
    memset(wake_late, 1, sizeof wake_late);

    uint64_t deadline = now_ns() + PERIOD_NS;
    for (long b = 0; b < 2 * pairs; b++) {
        struct mode *m = &modes[b % 2];
        for (int f = 0; f < BLOCK; f++) {
            uint64_t last = b % 2 == 0 ? halt_frame(m, deadline - window, deadline)
                                       : never_frame(m, deadline - window, deadline);
            deadline += PERIOD_NS;
            if (last + window + 1000000u > deadline) { /* overran: start the schedule over */
                deadline = last + PERIOD_NS;
                m->restarts++;
            }
        }
    }

    /* The report: two columns, A and B. */
    const long frames = modes[0].frames;
    char a[64], c[64];
    printf("CPU %ld, %ld s at 60 Hz, %ld frames per mode, window %ld µs, blocks of %d frames, "
           "order ABAB…\n",
           cpu, pairs, frames, window_us, BLOCK);
    printf("A: halt then spin: clock_nanosleep to deadline − window, then spin to the deadline\n");
    printf("B: never halt: spin the whole frame; its gaps counted in the same window\n");
    printf("gap: ≥ 20 µs between two clock reads; rate: count / ms spun in the window\n\n");
    const int label = 42, col = 14;
    cell("", label, 0);
    cell(modes[0].name, 2 * col, 1);
    cell(modes[1].name, 2 * col, 1);
    printf("\n");
    cell("frames", label, 0);
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "%ld", modes[i].frames);
        cell(a, 2 * col, 1);
    }
    printf("\n");
    cell("window spun, ms (A: from the wake)", label, 0);
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "%.1f", (double)modes[i].spun_ns / 1e6);
        cell(a, 2 * col, 1);
    }
    printf("\n");
    static const uint64_t sizes[] = {MIN_GAP_NS, BIG_GAP_NS, HUGE_GAP_NS};
    long counts[2][3];
    for (int s = 0; s < 3; s++) {
        snprintf(a, sizeof a, "gaps ≥ %u µs: count, per ms", (unsigned)(sizes[s] / 1000));
        cell(a, label, 0);
        for (int i = 0; i < 2; i++) {
            counts[i][s] = count_at_least(&modes[i], sizes[s]);
            snprintf(c, sizeof c, "%ld", counts[i][s]);
            cell(c, col, 1);
            fmt_rate(c, sizeof c, (double)counts[i][s] / spun_ms(&modes[i]));
            cell(c, col, 1);
        }
        printf("\n");
    }
    const char *more[] = {"deadlines straddled by a gap ≥ 50 µs",
                          "window started at or after the deadline",
                          "frames so late the schedule started over"};
    for (int r = 0; r < 3; r++) {
        cell(more[r], label, 0);
        for (int i = 0; i < 2; i++) {
            long v = r == 0 ? modes[i].straddled : r == 1 ? modes[i].started_late : modes[i].restarts;
            snprintf(a, sizeof a, "%ld", v);
            cell(a, 2 * col, 1);
        }
        printf("\n");
    }
    for (int i = 0; i < 2; i++)
        if (modes[i].overflow > 0)
            printf("%s: the gap store was full: %ld gaps not recorded, not in the counts\n",
                   modes[i].name, modes[i].overflow);

    printf("\ngaps ≥ 50 µs by offset into the window (A: from the wake's read; B: from deadline − "
           "window)\n");
    cell("offset, µs", label, 0);
    for (int i = 0; i < 2; i++) {
        cell("count", col, 1);
        cell("per 1000 fr", col, 1);
    }
    printf("\n");
    long bins[2][MAX_BINS];
    memset(bins, 0, sizeof bins);
    for (int i = 0; i < 2; i++)
        for (size_t g = 0; g < modes[i].ngaps; g++)
            if (modes[i].gaps[g].len >= BIG_GAP_NS) {
                unsigned k = modes[i].gaps[g].off / BIN_NS;
                bins[i][k < nbins ? k : nbins - 1]++;
            }
    for (unsigned k = 0; k < nbins; k++) {
        snprintf(a, sizeof a, "%5u–%u", k * (BIN_NS / 1000), (k + 1) * (BIN_NS / 1000));
        cell(a, label, 0);
        for (int i = 0; i < 2; i++) {
            snprintf(c, sizeof c, "%ld", bins[i][k]);
            cell(c, col, 1);
            snprintf(c, sizeof c, "%.1f", 1000.0 * (double)bins[i][k] / (double)modes[i].frames);
            cell(c, col, 1);
        }
        printf("\n");
    }

    printf("\ngaps ≥ 100 µs, rate A over B: ");
    if (counts[1][2] >= 1)
        printf("%.2f (A %ld in %.1f ms spun, B %ld in %.1f ms)\n",
               ((double)counts[0][2] / spun_ms(&modes[0])) /
                   ((double)counts[1][2] / spun_ms(&modes[1])),
               counts[0][2], spun_ms(&modes[0]), counts[1][2], spun_ms(&modes[1]));
    else
        printf("never-halt saw none (A %ld, B 0)\n", counts[0][2]);

    qsort(wake_late, (size_t)modes[0].frames, sizeof wake_late[0], cmp_u64);
    fmt_quantile(a, sizeof a, wake_late, modes[0].frames, 50);
    fmt_quantile(c, sizeof c, wake_late, modes[0].frames, 99);
    printf("A's wake past deadline − window, nearest rank (n = %ld): p50 %s, p99 %s, max %.1f µs\n",
           modes[0].frames, a, c, (double)wake_late[modes[0].frames - 1] / 1e3);
    return 0;
}
