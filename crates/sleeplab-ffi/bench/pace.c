/*
 * A 60 Hz C loop: nanosleep vs sleeplab_sleep_ns vs sleeplab_sleep_until_ns vs a pure spin,
 * interleaved in blocks (the C counterpart of bindings/python/bench/pace.py; same JSON,
 * rendered by bindings/python/bench/report.py).
 *
 * Each frame k of a block is due at start + k*period on CLOCK_MONOTONIC; the loop waits the
 * remaining time with the contender (`wait(deadline - now)`; the absolute form is handed the
 * deadline itself) and records lateness = wake - deadline. Every contender does the same work
 * per frame (so that no contender's figure carries another's work): one call of its wait
 * only while the deadline is ahead (a frame whose deadline has passed calls no
 * contender), then the same bookkeeping: the frame's readings
 * (deadline, when the wait was called, when the loop got control back) and, for the two
 * sleeplab contenders (one sleeper each, so each learns its own margin), the sleeper's own
 * view from sleeplab_sleeper_last_report: the margin it planned, its native oversleep (-1
 * without a native phase), its spin, its own lateness against the deadline it was given,
 * that deadline minus the loop's, the return path (the loop's wake reading minus the
 * sleeper's), when its native sleep returned (start + native time) and its own last clock
 * read; null for a frame it was not called in. The bookkeeping's CPU is measured for every
 * contender and left out of its CPU. nanosleep resumes with its remainder after EINTR, as
 * careful C code does. nanosleep and the spin run at the thread's default timer slack
 * (prctl reset), sleeplab at the 1 ns its sleeper sets. CPU = CLOCK_THREAD_CPUTIME_ID over
 * the blocks' wall time, minus the bookkeeping.
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

enum { NANOSLEEP, SLEEPLAB, SLEEPLAB_UNTIL, SPIN, CONTENDERS };
static const char *NAMES[CONTENDERS] = {"nanosleep", "sleeplab_sleep_ns", "sleeplab_sleep_until_ns",
                                        "spin"};

/* The sleeper's view of each frame (sleeplab contenders only); see the file comment. */
enum {
    MARGIN,
    OVERSLEEP,
    SPIN_NS,
    OWN_LATENESS,
    DEADLINE_SHIFT,
    RETURN_PATH,
    NATIVE_END,
    SLEEPER_WOKE,
    FIELDS
};
static const char *FIELD_NAMES[FIELDS] = {
    "margin_ns",         "native_oversleep_ns", "spin_ns",       "lateness_ns",
    "deadline_shift_ns", "return_ns",           "native_end_ns", "sleeper_woke_ns"};

/* Every contender's readings of each frame (absolute CLOCK_MONOTONIC ns). */
enum { DEADLINE, CALLED, RETURNED, STAMPS };
static const char *STAMP_NAMES[STAMPS] = {"deadline_ns", "called_ns", "returned_ns"};

static int is_sleeplab(int c) { return c == SLEEPLAB || c == SLEEPLAB_UNTIL; }

/* Records the sleeper's view of the frame due at `deadline` that the loop saw end at `woke`. */
static int record_view(sleeplab_sleeper *s, uint64_t deadline, uint64_t woke, int64_t *row[FIELDS],
                       long k) {
    sleeplab_report r;
    int rc = sleeplab_sleeper_last_report(s, &r);
    if (rc != SLEEPLAB_OK) {
        return rc;
    }
    row[MARGIN][k] = (int64_t)r.margin_ns;
    row[OVERSLEEP][k] = r.had_native_phase ? (int64_t)r.native_oversleep_ns : -1;
    row[SPIN_NS][k] = (int64_t)r.spin_ns;
    row[OWN_LATENESS][k] = (int64_t)r.lateness_ns;
    row[DEADLINE_SHIFT][k] = (int64_t)(r.deadline_ns - deadline);
    row[RETURN_PATH][k] = (int64_t)(woke - r.woke_ns);
    row[NATIVE_END][k] = (int64_t)(r.start_ns + r.native_ns);
    row[SLEEPER_WOKE][k] = (int64_t)r.woke_ns;
    return 0;
}

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

/* v as a JSON array; with `present`, the frames without it are null. */
static void print_array(const int64_t *v, const char *present, long n) {
    printf("[");
    for (long k = 0; k < n; k++) {
        if (present != NULL && !present[k]) {
            printf("%snull", k ? "," : "");
        } else {
            printf("%s%" PRId64, k ? "," : "", v[k]);
        }
    }
    printf("]");
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
    int64_t *lateness[CONTENDERS], *view[CONTENDERS][FIELDS] = {{NULL}}, *stamp[CONTENDERS][STAMPS];
    char *viewed[CONTENDERS] = {NULL};
    uint64_t cpu[CONTENDERS] = {0}, wall[CONTENDERS] = {0}, bookkeeping[CONTENDERS] = {0};
    int slack[CONTENDERS] = {0};
    for (int c = 0; c < CONTENDERS; c++) {
        int bad = (lateness[c] = calloc((size_t)frames, sizeof(int64_t))) == NULL;
        bad |= (viewed[c] = calloc((size_t)frames, 1)) == NULL;
        for (int f = 0; f < STAMPS; f++) {
            bad |= (stamp[c][f] = calloc((size_t)frames, sizeof(int64_t))) == NULL;
        }
        for (int f = 0; is_sleeplab(c) && f < FIELDS; f++) {
            bad |= (view[c][f] = calloc((size_t)frames, sizeof(int64_t))) == NULL;
        }
        if (bad) {
            fprintf(stderr, "pace: out of memory\n");
            return 1;
        }
    }
    double load_before[3] = {0}, load_after[3] = {0};
    getloadavg(load_before, 3);

    /* One sleeper per sleeplab contender; each sets this thread's slack to 1 ns. */
    sleeplab_sleeper *sleepers[CONTENDERS] = {NULL};
    for (int c = 0; c < CONTENDERS; c++) {
        if (is_sleeplab(c) && (sleepers[c] = sleeplab_sleeper_new()) == NULL) {
            fprintf(stderr, "pace: sleeplab_sleeper_new failed\n");
            return 1;
        }
    }
    for (long done = 0; done < frames; done += block) {
        long n = frames - done < block ? frames - done : block;
        for (int c = 0; c < CONTENDERS; c++) {
            prctl(PR_SET_TIMERSLACK, is_sleeplab(c) ? 1UL : 0UL, 0, 0, 0);
            slack[c] = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
            uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = now_ns();
            uint64_t start = wall0 + period;
            uint64_t kept = 0; /* the CPU of this block's bookkeeping */
            for (long k = 0; k < n; k++) {
                uint64_t deadline = start + (uint64_t)k * period, t = now_ns();
                int rc = SLEEPLAB_OK, waited = deadline > t;
                if (waited) {
                    if (c == NANOSLEEP) {
                        wait_nanosleep(deadline - t);
                    } else if (c == SLEEPLAB) {
                        rc = sleeplab_sleep_ns(sleepers[c], deadline - t);
                    } else if (c == SLEEPLAB_UNTIL) {
                        rc = sleeplab_sleep_until_ns(sleepers[c], deadline);
                    } else {
                        wait_spin(deadline - t);
                    }
                }
                uint64_t woke = now_ns();
                uint64_t b0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                long i = done + k;
                lateness[c][i] = (int64_t)(woke - deadline);
                stamp[c][DEADLINE][i] = (int64_t)deadline;
                stamp[c][CALLED][i] = (int64_t)t;
                stamp[c][RETURNED][i] = (int64_t)woke;
                if (rc == SLEEPLAB_OK && is_sleeplab(c) && waited) {
                    rc = record_view(sleepers[c], deadline, woke, view[c], i);
                    viewed[c][i] = 1;
                }
                if (rc != SLEEPLAB_OK) {
                    fprintf(stderr, "pace: %s failed: %s\n", NAMES[c], sleeplab_strerror(rc));
                    return 1;
                }
                kept += clock_ns(CLOCK_THREAD_CPUTIME_ID) - b0;
            }
            cpu[c] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 - kept;
            bookkeeping[c] += kept;
            wall[c] += now_ns() - wall0;
        }
    }
    for (int c = 0; c < CONTENDERS; c++) {
        sleeplab_sleeper_free(sleepers[c]);
    }
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
        printf("%s{\"name\":\"%s\",\"cpu_ns\":%" PRIu64 ",\"bookkeeping_cpu_ns\":%" PRIu64
               ",\"wall_ns\":%" PRIu64 ",\"timer_slack_ns\":%d,\"lateness_ns\":",
               c ? "," : "", NAMES[c], cpu[c], bookkeeping[c], wall[c], slack[c]);
        print_array(lateness[c], NULL, frames);
        printf(",\"frames\":{");
        for (int f = 0; f < STAMPS; f++) {
            printf("%s\"%s\":", f ? "," : "", STAMP_NAMES[f]);
            print_array(stamp[c][f], NULL, frames);
            free(stamp[c][f]);
        }
        printf("}");
        if (is_sleeplab(c)) {
            printf(",\"sleeper\":{");
            for (int f = 0; f < FIELDS; f++) {
                printf("%s\"%s\":", f ? "," : "", FIELD_NAMES[f]);
                print_array(view[c][f], viewed[c], frames);
                free(view[c][f]);
            }
            printf("}");
        }
        printf("}");
        free(lateness[c]);
        free(viewed[c]);
    }
    printf("]}\n");
    return 0;
}
