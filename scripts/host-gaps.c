/* What interrupts a thread that never sleeps: an experiment.
 *
 * A thread per CPU (or on the one CPU given), pinned, reads CLOCK_MONOTONIC in a tight
 * loop for SECONDS and records every gap of at least 10 µs between two consecutive
 * reads: the time the thread did not run. For each CPU it prints how many gaps of each
 * size it saw, the share of the time they took, how much of it the guest scheduler
 * accounts as waiting on a run queue (/proc/thread-self/schedstat: another task of this
 * machine ran; the rest is interrupts or, on a virtual machine, the host), and whether
 * the gaps of at least 50 µs recur with a fixed period (the most common distance between
 * two of them, to 0.1 ms, and how many have another exactly that much later).
 *
 *   cc -O2 -o /tmp/host-gaps scripts/host-gaps.c -lpthread
 *   /tmp/host-gaps 5          # 5 s, every CPU at once (the guest's own threads then
 *                             # have to preempt a spinner: run-queue time)
 *   /tmp/host-gaps 5 0        # 5 s on CPU 0 alone, the other CPUs left to the guest
 *
 * Why it matters here (docs/BENCHMARKS.md, "reading the frontier benchmark"): on the
 * project's 2-core VM a spinning thread loses 10–20 µs many hundred times a second, and
 * at times ~90 µs every 100.0 ms, almost none of it on a run queue. Six 60 Hz frames are
 * exactly 100 ms, so such a stall keeps hitting the same frame of every sixth while its
 * phase drifts past a deadline: a cluster of late frames in whichever contender's block
 * runs then, whatever that contender does.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIN_GAP_NS 10000u
#define BIG_GAP_NS 50000u
#define MAX_GAPS 200000

static double seconds;

struct gap {
    uint64_t at, len;
};

struct result {
    int cpu;
    uint64_t wall_ns, run_queue_ns;
    size_t n;
    struct gap *gaps;
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The run-queue wait of the calling thread so far, ns (0 if unreadable). */
static uint64_t run_queue_ns(void) {
    unsigned long long run = 0, wait = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &run, &wait) != 2)
        wait = 0;
    fclose(f);
    return wait;
}

static void *spin(void *arg) {
    struct result *r = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(r->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        fprintf(stderr, "host-gaps: cannot pin to CPU %d\n", r->cpu);
    uint64_t rq0 = run_queue_ns();
    uint64_t t0 = now_ns(), prev = t0, end = t0 + (uint64_t)(seconds * 1e9);
    while (prev < end) {
        uint64_t t = now_ns();
        if (t - prev >= MIN_GAP_NS && r->n < MAX_GAPS)
            r->gaps[r->n++] = (struct gap){prev - t0, t - prev};
        prev = t;
    }
    r->wall_ns = prev - t0;
    r->run_queue_ns = run_queue_ns() - rq0;
    return NULL;
}

static void report(const struct result *r) {
    static const uint64_t edges[] = {20000, 50000, 100000, 200000, 1000000, UINT64_MAX};
    static const char *names[] = {"10-20 µs", "20-50 µs", "50-100 µs", "100-200 µs", "0.2-1 ms", ">= 1 ms"};
    size_t count[6] = {0};
    uint64_t lost = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t k = 0;
        while (r->gaps[i].len >= edges[k])
            k++;
        count[k]++;
        lost += r->gaps[i].len;
    }
    printf("CPU %d: %zu gaps >= 10 µs in %.1f s (%.0f a second), %.2f %% of the time; on a run queue: %.1f µs\n",
           r->cpu, r->n, r->wall_ns / 1e9, r->n / (r->wall_ns / 1e9), 100.0 * lost / r->wall_ns,
           r->run_queue_ns / 1e3);
    printf("  by size:");
    for (size_t k = 0; k < 6; k++)
        printf(" %s %zu%s", names[k], count[k], k < 5 ? "," : "\n");
    /* A periodic stall: for every pair of big gaps at most 1 s apart, their distance to
     * 0.1 ms; the most common distance is the period, told with how many big gaps have
     * another exactly one period later (±0.1 ms). */
    enum { BINS = 10001 };
    unsigned *hist = calloc(BINS, sizeof *hist);
    if (!hist) {
        printf("  gaps >= 50 µs: no memory to look for a period\n");
        return;
    }
    size_t big = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->gaps[i].len < BIG_GAP_NS)
            continue;
        big++;
        for (size_t j = i + 1; j < r->n && r->gaps[j].at - r->gaps[i].at <= 1000000000u; j++)
            if (r->gaps[j].len >= BIG_GAP_NS)
                hist[(r->gaps[j].at - r->gaps[i].at + 50000) / 100000]++;
    }
    size_t period = 0;
    for (size_t b = 1; b < BINS; b++)
        if (hist[b] > hist[period])
            period = b;
    size_t followed = 0;
    for (size_t i = 0; period > 0 && i < r->n; i++) {
        if (r->gaps[i].len < BIG_GAP_NS)
            continue;
        uint64_t want = r->gaps[i].at + period * 100000u;
        for (size_t j = i + 1; j < r->n && r->gaps[j].at <= want + 100000u; j++)
            if (r->gaps[j].len >= BIG_GAP_NS && r->gaps[j].at + 100000u >= want) {
                followed++;
                break;
            }
    }
    if (big < 3 || period == 0)
        printf("  gaps >= 50 µs: %zu, too few to look for a period\n", big);
    else
        printf("  gaps >= 50 µs: %zu; the most common distance between two of them %.1f ms: "
               "%zu of them have another exactly that much later\n",
               big, period / 10.0, followed);
    free(hist);
}

int main(int argc, char **argv) {
    seconds = argc > 1 ? atof(argv[1]) : 5;
    if (!(seconds > 0 && seconds <= 600)) {
        fprintf(stderr, "host-gaps: SECONDS must be in (0, 600], not %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || cpus > 1024)
        cpus = 1;
    long first = 0, last = cpus - 1;
    if (argc > 2) {
        char *end;
        long c = strtol(argv[2], &end, 10);
        if (*argv[2] == '\0' || *end != '\0' || c < 0 || c >= cpus) {
            fprintf(stderr, "host-gaps: CPU must be 0..%ld, not %s\n", cpus - 1, argv[2]);
            return 2;
        }
        first = last = c;
    }
    long n = last - first + 1;
    struct result *r = calloc((size_t)n, sizeof *r);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!r || !t) {
        fprintf(stderr, "host-gaps: out of memory\n");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        r[i].cpu = (int)(first + i);
        r[i].gaps = malloc(MAX_GAPS * sizeof(struct gap));
        if (!r[i].gaps || pthread_create(&t[i], NULL, spin, &r[i]) != 0) {
            fprintf(stderr, "host-gaps: cannot start the thread for CPU %d\n", r[i].cpu);
            return 1;
        }
    }
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (long i = 0; i < n; i++)
        report(&r[i]);
    return 0;
}
