/*
 * A 60 Hz C loop: nanosleep vs sleeplab_sleep_ns vs a pure spin, interleaved in blocks
 * (the C counterpart of bindings/python/bench/pace.py; same JSON, rendered by
 * bindings/python/bench/report.py).
 *
 * Each frame k of a block is due at start + k*period on CLOCK_MONOTONIC; the loop waits the
 * remaining time with the contender (`wait(deadline - now)`) and records lateness = wake -
 * deadline. nanosleep resumes with its remainder after EINTR, as careful C code does.
 * nanosleep and the spin run at the thread's default timer slack (prctl reset), sleeplab at
 * the 1 ns its sleeper sets. CPU = CLOCK_THREAD_CPUTIME_ID over the blocks' wall time.
 *
 *   pace [--frames N] [--block B] [--rate HZ]     JSON on stdout; exit 2 on bad arguments
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sleeplab.h"

enum { NANOSLEEP, SLEEPLAB, SPIN, CONTENDERS };
static const char *NAMES[CONTENDERS] = {"nanosleep", "sleeplab_sleep_ns", "spin"};

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static void wait_nanosleep(uint64_t ns) {
    struct timespec req = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}, rem;
    while (nanosleep(&req, &rem) == -1 && errno == EINTR) {
        req = rem;
    }
}

static void wait_spin(uint64_t ns) {
    uint64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

static int parse(const char *s, long min, long max, long *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    long frames = 1200, block = 60, rate = 60;
    for (int i = 1; i < argc; i++) {
        long *target = !strcmp(argv[i], "--frames") ? &frames
                       : !strcmp(argv[i], "--block") ? &block
                       : !strcmp(argv[i], "--rate")  ? &rate
                                                     : NULL;
        if (target == NULL || i + 1 >= argc || parse(argv[i + 1], 1, 100000000, target) != 0) {
            fprintf(stderr, "pace: bad argument '%s' (usage: pace [--frames N] [--block B] "
                            "[--rate HZ], each an integer >= 1)\n", argv[i]);
            return 2;
        }
        i++;
    }
    uint64_t period = 1000000000u / (uint64_t)rate;
    int64_t *lateness[CONTENDERS];
    uint64_t cpu[CONTENDERS] = {0}, wall[CONTENDERS] = {0};
    int slack[CONTENDERS] = {0};
    for (int c = 0; c < CONTENDERS; c++) {
        lateness[c] = calloc((size_t)frames, sizeof(int64_t));
        if (lateness[c] == NULL) {
            fprintf(stderr, "pace: out of memory\n");
            return 1;
        }
    }
    double load_before[3] = {0}, load_after[3] = {0};
    getloadavg(load_before, 3);

    sleeplab_sleeper *sleeper = sleeplab_sleeper_new(); /* sets this thread's slack to 1 ns */
    if (sleeper == NULL) {
        fprintf(stderr, "pace: sleeplab_sleeper_new failed\n");
        return 1;
    }
    for (long done = 0; done < frames; done += block) {
        long n = frames - done < block ? frames - done : block;
        for (int c = 0; c < CONTENDERS; c++) {
            prctl(PR_SET_TIMERSLACK, c == SLEEPLAB ? 1UL : 0UL, 0, 0, 0);
            slack[c] = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
            uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = now_ns();
            uint64_t start = wall0 + period;
            for (long k = 0; k < n; k++) {
                uint64_t deadline = start + (uint64_t)k * period, t = now_ns();
                if (deadline > t) {
                    if (c == NANOSLEEP) {
                        wait_nanosleep(deadline - t);
                    } else if (c == SLEEPLAB) {
                        if (sleeplab_sleep_ns(sleeper, deadline - t) != SLEEPLAB_OK) {
                            fprintf(stderr, "pace: sleeplab_sleep_ns failed\n");
                            return 1;
                        }
                    } else {
                        wait_spin(deadline - t);
                    }
                }
                lateness[c][done + k] = (int64_t)(now_ns() - deadline);
            }
            cpu[c] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
            wall[c] += now_ns() - wall0;
        }
    }
    sleeplab_sleeper_free(sleeper);
    getloadavg(load_after, 3);

    struct utsname u;
    uname(&u);
    printf("{\"bench\":\"c\",\"rate_hz\":%ld,\"frames\":%ld,\"block\":%ld,"
           "\"runtime\":\"C (libsleeplab %s)\",\"machine\":{\"system\":\"%s-%s-%s\",\"cpus\":%ld},"
           "\"load_before\":[%.2f,%.2f,%.2f],\"load_after\":[%.2f,%.2f,%.2f],\"contenders\":[",
           rate, frames, block, sleeplab_version(), u.sysname, u.release, u.machine,
           sysconf(_SC_NPROCESSORS_ONLN), load_before[0], load_before[1], load_before[2],
           load_after[0], load_after[1], load_after[2]);
    for (int c = 0; c < CONTENDERS; c++) {
        printf("%s{\"name\":\"%s\",\"cpu_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64
               ",\"timer_slack_ns\":%d,\"lateness_ns\":[",
               c ? "," : "", NAMES[c], cpu[c], wall[c], slack[c]);
        for (long k = 0; k < frames; k++) {
            printf("%s%" PRId64, k ? "," : "", lateness[c][k]);
        }
        printf("]}");
        free(lateness[c]);
    }
    printf("]}\n");
    return 0;
}
