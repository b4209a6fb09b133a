/* Why a spinning sleeper wakes late on a loaded Linux (EEVDF) machine: an experiment.
 *
 * A 60 Hz loop of absolute clock_nanosleep wakeups beside N busy threads, in interleaved
 * blocks of 50 frames per variant. Each variant sleeps to (deadline - margin), spins to
 * the deadline, then burns `burn` more µs of CPU (as a frame's work would), with or
 * without asking the scheduler for its shortest slice (sched_setattr's sched_runtime,
 * 100 µs, Linux 6.12+). Printed per variant: the native wakeup's oversleep (wake - its
 * target) and the frame's lateness (wake - deadline), p50/p99 (linear interpolation; p99 from 100 frames, so
 * BLOCKS >= 2), and the thread's CPU.
 *
 *   cc -O2 -o /tmp/eevdf-lag scripts/eevdf-lag.c -lpthread
 *   /tmp/eevdf-lag BUSY BLOCKS      # e.g. 2 12 (one busy thread per CPU), 5 12
 *
 * What it shows on the project's 2-core VM (docs/BENCHMARKS.md, "why a loaded frame is
 * late"): with the default slice a woken thread often waits for the busy thread's slice
 * to end (milliseconds); with a short slice it runs at once, as long as it has not used
 * more CPU than it was owed: on an oversubscribed machine even 20 µs of CPU after each
 * wakeup brings the millisecond waits back.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t ns) {
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {
    }
}

static void spin_until(uint64_t ns) {
    while (now_ns(CLOCK_MONOTONIC) < ns) {
        __builtin_ia32_pause();
    }
}

/* struct sched_attr, SCHED_ATTR_SIZE_VER1 */
struct attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t prio;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};

static void set_slice(uint64_t ns) { /* 0: the kernel's default */
    struct attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.runtime = ns;
    if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
        perror("sched_setattr");
    }
}

static volatile int stop;
static void *busy(void *arg) {
    (void)arg;
    volatile uint64_t x = 0;
    while (!stop) {
        x++;
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The q-th percentile of the sorted `v` as every sleeplab report computes it (linear
 * interpolation between closest ranks, position q/100·(n − 1), numpy's default), or "–"
 * where n·(1 − q/100) < 1: the sample does not resolve it (p99 needs 100). */
static void print_quantile(const uint64_t *v, int n, int q) {
    if (n < 1 || (q > 50 && n * (100 - q) < 100)) {
        printf(" %12s", "–");
        return;
    }
    double pos = q / 100.0 * (n - 1);
    int lo = (int)pos, hi = lo + 1 < n ? lo + 1 : lo;
    double x = (double)v[lo] + ((double)v[hi] - (double)v[lo]) * (pos - lo);
    printf(" %9.1f µs", x / 1e3);
}

struct variant {
    const char *name;
    unsigned margin_us, burn_us;
    int short_slice;
    uint64_t *late, *over, cpu;
    int n;
};

static struct variant variants[] = {
    {.name = "sleep", .margin_us = 0, .burn_us = 0, .short_slice = 0},
    {.name = "sleep, short slice", .margin_us = 0, .burn_us = 0, .short_slice = 1},
    {.name = "sleep + 20 µs CPU, short slice", .margin_us = 0, .burn_us = 20, .short_slice = 1},
    {.name = "sleep + 100 µs CPU, short slice", .margin_us = 0, .burn_us = 100, .short_slice = 1},
    {.name = "200 µs spin", .margin_us = 200, .burn_us = 0, .short_slice = 0},
    {.name = "200 µs spin, short slice", .margin_us = 200, .burn_us = 0, .short_slice = 1},
    {.name = "800 µs spin, short slice", .margin_us = 800, .burn_us = 0, .short_slice = 1},
};
#define NV (sizeof variants / sizeof variants[0])

int main(int argc, char **argv) {
    int nbusy = argc > 1 ? atoi(argv[1]) : 2;
    int blocks = argc > 2 ? atoi(argv[2]) : 12;
    if (nbusy < 0 || nbusy > 64 || blocks < 1) {
        fprintf(stderr, "usage: %s BUSY(0-64) BLOCKS(>=1)\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    pthread_t th[64];
    for (int i = 0; i < nbusy; i++) {
        pthread_create(&th[i], NULL, busy, NULL);
    }
    usleep(200000);
    const uint64_t period = 16666667;
    for (size_t v = 0; v < NV; v++) {
        variants[v].late = calloc((size_t)blocks * 50, 8);
        variants[v].over = calloc((size_t)blocks * 50, 8);
    }
    uint64_t deadline = now_ns(CLOCK_MONOTONIC) + period;
    for (int b = 0; b < blocks; b++) {
        for (size_t v = 0; v < NV; v++) {
            struct variant *x = &variants[v];
            set_slice(x->short_slice ? 100000 : 0);
            for (int f = 0; f < 50; f++) {
                uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                uint64_t target = deadline - x->margin_us * 1000u;
                sleep_until(target);
                uint64_t woke = now_ns(CLOCK_MONOTONIC);
                spin_until(deadline);
                uint64_t end = now_ns(CLOCK_MONOTONIC);
                x->over[x->n] = woke - target;
                x->late[x->n] = (end > deadline ? end : deadline) - deadline;
                x->n++;
                spin_until(end + x->burn_us * 1000u);
                x->cpu += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
                deadline += period;
                uint64_t t = now_ns(CLOCK_MONOTONIC);
                if (t + 1000000 > deadline) { /* overran: restart the schedule */
                    deadline = t + period;
                }
            }
        }
    }
    stop = 1;
    printf("%d busy threads, %d frames per variant, 60 Hz, timer slack 1 ns\n", nbusy, blocks * 50);
    printf("%-34s %12s %12s %12s %12s %8s\n", "variant", "oversleep p50", "p99", "late p50", "p99", "CPU %");
    for (size_t v = 0; v < NV; v++) {
        struct variant *x = &variants[v];
        qsort(x->over, (size_t)x->n, 8, cmp);
        qsort(x->late, (size_t)x->n, 8, cmp);
        printf("%-34s", x->name);
        print_quantile(x->over, x->n, 50);
        print_quantile(x->over, x->n, 99);
        print_quantile(x->late, x->n, 50);
        print_quantile(x->late, x->n, 99);
        printf(" %8.2f\n", 100.0 * (double)x->cpu / ((double)x->n * (double)period));
    }
    return 0;
}
