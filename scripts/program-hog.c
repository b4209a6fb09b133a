/* A known cause for `sleeplab explain -- CMD` to find: a SCHED_FIFO thread that, every
 * PERIOD_US microseconds for SECONDS seconds, spins for BURST_US microseconds on the CPU
 * it is pinned to (taskset), holding it against every normal thread there. It logs each
 * burst from its own clock reads (CLOCK_MONOTONIC, the first and the last of the spin)
 * as one CSV row of OUT: start_ns,end_ns. A waiter on the same CPU whose timer fires
 * inside a burst waits on the run queue until the burst ends: the ground truth of the
 * run-queue time explain books to this program by its name (program-hog).
 *
 *   cc -O2 -o /tmp/program-hog scripts/program-hog.c
 *   taskset -c 0 /tmp/program-hog SECONDS PERIOD_US BURST_US hog.csv
 *
 * Needs root (SCHED_FIFO). Bad input: one line naming it, exit 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static long parse(const char *what, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "program-hog: %s %s: a whole number from %ld to %ld\n", what, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: program-hog SECONDS PERIOD_US BURST_US OUT.csv\n");
        return 2;
    }
    long seconds = parse("SECONDS", argv[1], 1, 3600);
    long period_us = parse("PERIOD_US", argv[2], 100, 1000000);
    long burst_us = parse("BURST_US", argv[3], 1, period_us - 1);
    FILE *out = fopen(argv[4], "w");
    if (!out) {
        fprintf(stderr, "program-hog: %s: %s\n", argv[4], strerror(errno));
        return 2;
    }
    struct sched_param p = {.sched_priority = 10};
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) {
        fprintf(stderr, "program-hog: SCHED_FIFO: %s\n", strerror(errno));
        return 2;
    }
    uint64_t period = (uint64_t)period_us * 1000u, burst = (uint64_t)burst_us * 1000u;
    uint64_t next = now_ns() + period, stop = now_ns() + (uint64_t)seconds * 1000000000u;
    /* Buffered in memory and written at the end: no I/O between bursts. */
    size_t cap = (size_t)(seconds * 1000000 / period_us) + 2, n = 0;
    uint64_t *log = malloc(2 * cap * sizeof *log);
    if (!log) {
        fprintf(stderr, "program-hog: out of memory\n");
        return 2;
    }
    while (next < stop && n < cap) {
        struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        uint64_t start = now_ns(), t = start;
        while (t - start < burst)
            t = now_ns();
        log[2 * n] = start;
        log[2 * n + 1] = t;
        n++;
        next += period;
    }
    fprintf(out, "start_ns,end_ns\n");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%llu,%llu\n", (unsigned long long)log[2 * i],
                (unsigned long long)log[2 * i + 1]);
    free(log);
    return fclose(out) == 0 ? 0 : 2;
}
