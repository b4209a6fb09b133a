/* The spin side of scripts/host-validate.sh: a thread pinned to one CPU reads
 * CLOCK_MONOTONIC in a tight loop for SECONDS and writes every gap of at least 5 µs
 * between two consecutive reads (the threshold of sleeplab's spin log), so that a
 * plain-text trace of the same moment can say which gaps the guest kernel did something
 * in and which it did not. It shares no code with sleeplab.
 *
 * With PERIOD_US and SPIN_US it spins only the last SPIN_US of every PERIOD_US, after an
 * absolute clock_nanosleep to that point (1 ns timer slack): a spin that follows a halt,
 * as a precise sleeper's does.
 *
 * Output (text, one item a line): `tid TID`, `span FIRST LAST` (the first and last
 * clock reads, ns), `spun NS` (the time spent spinning), `dropped N` (gaps not kept),
 * then `gap FROM TO` per gap (the reads before and after it, ns).
 *
 *   cc -O2 -o /tmp/host-spin scripts/host-spin.c
 *   /tmp/host-spin 2 0 > gaps.txt            # 2 s on CPU 0, spinning throughout
 *   /tmp/host-spin 2 0 4000 1000 > gaps.txt  # the last 1 ms of every 4 ms
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIN_GAP_NS 5000u
#define MAX_GAPS 1000000

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 0;
    if ((argc != 3 && argc != 5) || !(seconds > 0 && seconds <= 600)) {
        fprintf(stderr,
                "host-spin: usage: host-spin SECONDS CPU [PERIOD_US SPIN_US] (SECONDS in (0, 600], not %s)\n",
                argc > 1 ? argv[1] : "missing");
        return 2;
    }
    long period_us = argc == 5 ? atol(argv[3]) : 0, spin_us = argc == 5 ? atol(argv[4]) : 0;
    if (argc == 5 && !(period_us > 0 && spin_us > 0 && spin_us <= period_us && period_us <= 1000000)) {
        fprintf(stderr, "host-spin: need 0 < SPIN_US <= PERIOD_US <= 1000000, not %s %s\n", argv[3],
                argv[4]);
        return 2;
    }
    char *end;
    long cpu = strtol(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE) {
        fprintf(stderr, "host-spin: CPU must be a CPU number, not %s\n", argv[2]);
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "host-spin: cannot pin to CPU %ld\n", cpu);
        return 1;
    }
    uint64_t *gaps = malloc(2 * MAX_GAPS * sizeof *gaps);
    if (!gaps) {
        fprintf(stderr, "host-spin: out of memory\n");
        return 1;
    }
    /* Every page of the gap buffer touched now: a first store inside the spin would
     * fault between two clock reads (no irq, softirq or switch on record: the reader
     * would book it to the host). */
    memset(gaps, 0, 2 * MAX_GAPS * sizeof *gaps);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    size_t n = 0, dropped = 0;
    uint64_t first = now_ns(), last = first, spun = 0, stop = first + (uint64_t)(seconds * 1e9);
    uint64_t period = (uint64_t)period_us * 1000u, spin = (uint64_t)spin_us * 1000u;
    uint64_t next = first + period;
    while (last < stop) {
        /* One spin: to `next` in the periodic mode, to `stop` otherwise. */
        uint64_t until = period ? next : stop;
        if (period) {
            uint64_t wake = until - spin;
            struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
            }
            next += period;
        }
        uint64_t from = now_ns(), prev = from;
        while (prev < until) {
            uint64_t t = now_ns();
            if (t - prev >= MIN_GAP_NS) {
                if (n < MAX_GAPS) {
                    gaps[2 * n] = prev;
                    gaps[2 * n + 1] = t;
                    n++;
                } else {
                    dropped++;
                }
            }
            prev = t;
        }
        spun += prev - from;
        last = prev;
    }
    printf("tid %ld\nspan %llu %llu\nspun %llu\ndropped %zu\n", (long)gettid(),
           (unsigned long long)first, (unsigned long long)last, (unsigned long long)spun, dropped);
    for (size_t i = 0; i < n; i++)
        printf("gap %llu %llu\n", (unsigned long long)gaps[2 * i], (unsigned long long)gaps[2 * i + 1]);
    free(gaps);
    return 0;
}
