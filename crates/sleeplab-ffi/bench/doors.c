/*
 * Every C door of libsleeplab as a user walks through it, against the plain sleeps it
 * replaces: a 60 Hz loop per contender, each on a thread of its own (a plain sleep keeps
 * the thread's default timer slack; a sleeper sets its own thread's), each built when its
 * thread starts and used from its first frame (no warm-up), contenders taking turns block
 * by block. The C counterpart of crates/sleeplab/examples/doors.rs, in the same JSON
 * format (read by scripts/bench_doors_report.py).
 *
 *   nanosleep                nanosleep(period), resumed with its remainder after EINTR
 *   clock_nanosleep          an absolute clock_nanosleep to each grid instant
 *   sleeplab_sleep_ns        sleeplab_sleep_ns(sleeper, period)
 *   sleeplab_sleep_until_ns  sleeplab_sleep_until_ns(sleeper, grid instant)
 *   sleeplab_ticker_tick     sleeplab_ticker_tick (missed ticks skipped)
 *
 * A frame's lateness is the loop's clock read after the call minus what the call was asked
 * for: the grid instant (absolute and periodic forms; an absolute grid starts a period after
 * each block begins), or the clock read before the call plus the period (relative forms).
 * The ticker keeps its own grid; the first tick of each block (overdue after the pause
 * between blocks: it fires at once) is not counted. CPU is the contender thread's
 * CLOCK_THREAD_CPUTIME_ID over the block's wall time.
 *
 *   doors [--frames N] [--block B] [--rate HZ]     JSON on stdout; exit 2 on bad arguments
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "sleeplab.h"

enum { NANOSLEEP, CLOCK_NANOSLEEP, SLEEP_NS, SLEEP_UNTIL_NS, TICKER, CONTENDERS };
static const char *NAMES[CONTENDERS] = {"nanosleep", "clock_nanosleep", "sleeplab_sleep_ns",
                                        "sleeplab_sleep_until_ns", "sleeplab_ticker_tick"};
static const int PLAIN[CONTENDERS] = {1, 1, 0, 0, 0};
static const char *FORMS[CONTENDERS] = {"relative", "absolute", "relative", "absolute",
                                        "periodic"};

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* One contender's thread and its turn: the main thread sets `frames` and `go`, the
 * contender runs the block and clears `go`. */
struct lane {
    int which;
    uint64_t period;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go, quit, ready;
    size_t frames;
    uint64_t slack_ns;
    /* Every frame's lateness (ns, signed), blocks one after the other, and per block its
     * CPU and wall time. */
    int64_t *late;
    size_t n_late;
    uint64_t *cpu, *wall;
    size_t n_blocks;
};

/* The door of one lane, built on its thread. */
struct door {
    struct sleeplab_sleeper *sleeper;
    struct sleeplab_ticker *ticker;
};

static int build(struct lane *l, struct door *d) {
    memset(d, 0, sizeof *d);
    switch (l->which) {
    case SLEEP_NS:
    case SLEEP_UNTIL_NS:
        d->sleeper = sleeplab_sleeper_new();
        return d->sleeper ? 0 : -1;
    case TICKER:
        return sleeplab_ticker_new(NULL, l->period, SLEEPLAB_MISSED_SKIP, &d->ticker);
    default:
        return 0;
    }
}

static void run_block(struct lane *l, struct door *d, size_t frames) {
    uint64_t period = l->period, cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = now_ns();
    uint64_t start = wall0 + period;
    struct sleeplab_tick tick;
    if (l->which == TICKER)
        sleeplab_ticker_tick(d->ticker, &tick); /* the overdue first tick: not counted */
    for (size_t k = 0; k < frames; k++) {
        uint64_t asked = start + k * period;
        switch (l->which) {
        case NANOSLEEP: {
            asked = now_ns() + period;
            struct timespec req = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)};
            struct timespec rem;
            while (nanosleep(&req, &rem) == -1 && errno == EINTR)
                req = rem;
            break;
        }
        case CLOCK_NANOSLEEP: {
            struct timespec ts = {(time_t)(asked / 1000000000u), (long)(asked % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
            break;
        }
        case SLEEP_NS:
            asked = now_ns() + period;
            sleeplab_sleep_ns(d->sleeper, period);
            break;
        case SLEEP_UNTIL_NS:
            sleeplab_sleep_until_ns(d->sleeper, asked);
            break;
        case TICKER:
            sleeplab_ticker_tick(d->ticker, &tick);
            asked = tick.scheduled_ns;
            break;
        }
        l->late[l->n_late++] = (int64_t)(now_ns() - asked);
    }
    l->cpu[l->n_blocks] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    l->wall[l->n_blocks] = now_ns() - wall0;
    l->n_blocks++;
}

static void *lane_main(void *arg) {
    struct lane *l = arg;
    struct door d;
    int ok = build(l, &d) == 0;
    pthread_mutex_lock(&l->lock);
    l->slack_ns = (uint64_t)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    l->ready = ok ? 1 : -1;
    pthread_cond_broadcast(&l->cond);
    while (ok) {
        while (!l->go && !l->quit)
            pthread_cond_wait(&l->cond, &l->lock);
        if (l->quit)
            break;
        size_t frames = l->frames;
        pthread_mutex_unlock(&l->lock);
        run_block(l, &d, frames);
        pthread_mutex_lock(&l->lock);
        l->go = 0;
        pthread_cond_broadcast(&l->cond);
    }
    pthread_mutex_unlock(&l->lock);
    sleeplab_sleeper_free(d.sleeper);
    sleeplab_ticker_free(d.ticker);
    return NULL;
}

static int parse_count(const char *flag, const char *v, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    if (!v || errno || *end || n < 1 || n > 10000000 || v[0] == '-') {
        fprintf(stderr, "doors: %s %s: a count from 1 to 10000000\n", flag, v ? v : "(missing)");
        return -1;
    }
    *out = (size_t)n;
    return 0;
}

int main(int argc, char **argv) {
    size_t frames = 600, block = 50;
    double rate = 60.0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--frames")) {
            if (parse_count(argv[i], v, &frames))
                return 2;
            i++;
        } else if (!strcmp(argv[i], "--block")) {
            if (parse_count(argv[i], v, &block))
                return 2;
            i++;
        } else if (!strcmp(argv[i], "--rate")) {
            char *end;
            rate = v ? strtod(v, &end) : 0;
            if (!v || *end || !(rate > 0 && rate <= 100000)) {
                fprintf(stderr, "doors: --rate %s: a rate in (0, 100000] Hz\n", v ? v : "(missing)");
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "doors: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    uint64_t period = (uint64_t)(1e9 / rate + 0.5);
    size_t max_blocks = (frames + block - 1) / block;
    struct lane lanes[CONTENDERS];
    for (int c = 0; c < CONTENDERS; c++) {
        struct lane *l = &lanes[c];
        memset(l, 0, sizeof *l);
        l->which = c;
        l->period = period;
        l->late = calloc(frames, sizeof *l->late);
        l->cpu = calloc(max_blocks, sizeof *l->cpu);
        l->wall = calloc(max_blocks, sizeof *l->wall);
        if (!l->late || !l->cpu || !l->wall) {
            fprintf(stderr, "doors: out of memory\n");
            return 1;
        }
        pthread_mutex_init(&l->lock, NULL);
        pthread_cond_init(&l->cond, NULL);
        if (pthread_create(&l->thread, NULL, lane_main, l)) {
            fprintf(stderr, "doors: cannot start a thread for %s\n", NAMES[c]);
            return 1;
        }
        pthread_mutex_lock(&l->lock);
        while (!l->ready)
            pthread_cond_wait(&l->cond, &l->lock);
        pthread_mutex_unlock(&l->lock);
        if (l->ready < 0) {
            fprintf(stderr, "doors: %s could not be built\n", NAMES[c]);
            return 1;
        }
    }
    /* Blocks in turn, each round starting one contender later. */
    for (size_t done = 0, turn = 0; done < frames; turn++) {
        size_t n = frames - done < block ? frames - done : block;
        for (int i = 0; i < CONTENDERS; i++) {
            struct lane *l = &lanes[(i + turn) % CONTENDERS];
            pthread_mutex_lock(&l->lock);
            l->frames = n;
            l->go = 1;
            pthread_cond_broadcast(&l->cond);
            while (l->go)
                pthread_cond_wait(&l->cond, &l->lock);
            pthread_mutex_unlock(&l->lock);
        }
        done += n;
    }
    printf("{\"format\":\"sleeplab doors\",\"version\":1,\"language\":\"c\",\"rate_hz\":%g,"
           "\"frames\":%zu,\"block\":%zu,\"contenders\":[",
           rate, frames, block);
    for (int c = 0; c < CONTENDERS; c++) {
        struct lane *l = &lanes[c];
        printf("%s{\"name\":\"%s\",\"plain\":%s,\"form\":\"%s\",\"timer_slack_ns\":%" PRIu64
               ",\"blocks\":[",
               c ? "," : "", NAMES[c], PLAIN[c] ? "true" : "false", FORMS[c], l->slack_ns);
        for (size_t b = 0, at = 0; b < l->n_blocks; b++) {
            size_t n = frames - b * block < block ? frames - b * block : block;
            printf("%s{\"cpu_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"lateness_ns\":[", b ? "," : "",
                   l->cpu[b], l->wall[b]);
            for (size_t k = 0; k < n; k++, at++)
                printf("%s%" PRId64, k ? "," : "", l->late[at]);
            printf("]}");
        }
        printf("]}");
        pthread_mutex_lock(&l->lock);
        l->quit = 1;
        pthread_cond_broadcast(&l->cond);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
    }
    printf("]}\n");
    return 0;
}
