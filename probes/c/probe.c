/*
 * sleeplab probe for C on Linux/glibc: measures the POSIX and Linux wait
 * functions with clock_gettime(CLOCK_MONOTONIC) and prints the
 * `sleeplab-probe/1` line protocol (spec/probe-protocol.md).
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -o probe probes/c/probe.c
 *
 * One translation unit: this file includes its parts (waits.h, sleeplab_abi.h,
 * output.h, args.h), each a topic, in order; the build compiles probe.c alone.
 *
 * The methods named `sleeplab_*` call sleeplab's own C ABI (crates/sleeplab-ffi),
 * loaded at run time with dlopen: from $SLEEPLAB_LIB when set, else `libsleeplab.so`
 * on the library search path. Without it they are listed as unavailable.
 */
#define _GNU_SOURCE /* usleep, timerfd, prctl, pselect, CLOCK_MONOTONIC, TIMER_ABSTIME */

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000ULL
#define DEFAULT_MAX_COUNT 100000ULL
/* Every number must fit a signed 64-bit nanosecond count, like the other probes. */
#define MAX_NUMBER ((uint64_t)INT64_MAX)

enum kind { KIND_ONESHOT, KIND_YIELD, KIND_PERIODIC };
static const char *const kind_names[] = {"oneshot", "yield", "periodic"};

/*
 * The arguments of one cell, converted before the cell starts so that the
 * timed region only copies a prepared value into the call.
 */
struct wait_args {
    uint64_t ns;          /* the requested duration */
    struct timespec ts;   /* ns as a timespec (nanosleep family, pselect) */
    struct timeval tv;    /* ns / 1000 as a timeval (select) */
    useconds_t us;        /* ns / 1000 (usleep) */
    int ms;               /* ns / 1000000 (poll) */
};

/* A one-shot wait; `start` is the clock reading that opened the timed region. */
typedef void (*wait_fn)(const struct wait_args *a, const struct timespec *start);
/* A periodic run: fills `arrivals` (ns since t0) with `total` ticks; t0 into `t0_ns`. */
typedef void (*periodic_fn)(uint64_t period_ns, uint64_t total, uint64_t *arrivals,
                            uint64_t *multi_reads, uint64_t *t0_ns);

struct method {
    const char *name;
    enum kind kind;
    const char *description;
    wait_fn wait;          /* oneshot and yield */
    periodic_fn periodic;  /* periodic */
};

/* ---------------------------------------------------------------- errors */

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
/* A bad argument: one line on stderr, nothing on stdout, exit 2. */
static void die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("probe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void die_sys(const char *what, int err)
{
    fprintf(stderr, "probe: %s failed: %s\n", what, strerror(err));
    exit(1);
}

/* ----------------------------------------------------------------- clock */

static inline void now(struct timespec *ts)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
}

/* A CLOCK_MONOTONIC reading as the protocol's absolute ns (--timestamps). */
static inline uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * NS_PER_SEC + (uint64_t)t->tv_nsec;
}

static inline uint64_t ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
    return (uint64_t)((int64_t)(b->tv_sec - a->tv_sec) * (int64_t)NS_PER_SEC +
                      (b->tv_nsec - a->tv_nsec));
}

static inline struct timespec ts_add(struct timespec t, const struct timespec *d)
{
    t.tv_sec += d->tv_sec;
    t.tv_nsec += d->tv_nsec;
    if (t.tv_nsec >= (long)NS_PER_SEC) {
        t.tv_nsec -= (long)NS_PER_SEC;
        t.tv_sec += 1;
    }
    return t;
}

static struct timespec ns_to_ts(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / NS_PER_SEC), .tv_nsec = (long)(ns % NS_PER_SEC)};
    return ts;
}

#include "waits.h"
#include "sleeplab_abi.h"

/* ---------------------------------------------------------------- tables */

static const struct method methods[] = {
    {"nanosleep", KIND_ONESHOT, "nanosleep(&ts) with ts = d; resumed with the remainder on EINTR",
     wait_nanosleep, NULL},
    {"clock_nanosleep", KIND_ONESHOT,
     "clock_nanosleep(CLOCK_MONOTONIC, 0, &ts) with ts = d (relative)", wait_clock_nanosleep,
     NULL},
    {"clock_nanosleep-abs", KIND_ONESHOT,
     "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline) with deadline = now + d",
     wait_clock_nanosleep_abs, NULL},
    {"usleep", KIND_ONESHOT, "usleep(d / 1000) (microseconds, truncated)", wait_usleep, NULL},
    {"select", KIND_ONESHOT,
     "select(0, NULL, NULL, NULL, &tv) with tv = d / 1000 us (truncated)", wait_select, NULL},
    {"pselect", KIND_ONESHOT, "pselect(0, NULL, NULL, NULL, &ts, NULL) with ts = d",
     wait_pselect, NULL},
    {"poll", KIND_ONESHOT,
     "poll(NULL, 0, d / 1000000) (milliseconds, truncated: sub-ms requests become 0)",
     wait_poll, NULL},
    {"sched_yield", KIND_YIELD, "sched_yield()", wait_sched_yield, NULL},
    {"timerfd-interval", KIND_PERIODIC,
     "timerfd (CLOCK_MONOTONIC) armed at t0 + P with it_interval = P; read() the expiration count",
     NULL, periodic_timerfd},
    {"clock_nanosleep-abs-loop", KIND_PERIODIC,
     "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to t0 + k*P in a loop (cyclictest)", NULL,
     periodic_clock_nanosleep_abs},
    {"sleeplab_sleep_ns", KIND_ONESHOT,
     "sleeplab_sleep_ns(sleeper, d): sleeplab's precise sleep through its C ABI (one sleeper "
     "per run, default options: native sleep, then spin the learned margin)",
     wait_sleeplab, NULL},
    {"sleeplab_ticker", KIND_PERIODIC,
     "sleeplab_ticker_tick(ticker, NULL) on a ticker whose tick k is due at t0 + k*P "
     "(sleeplab's C ABI, missed ticks fire at once)",
     NULL, periodic_sleeplab_ticker},
};
#define N_METHODS (sizeof methods / sizeof methods[0])

#include "output.h"
#include "args.h"

/* ------------------------------------------------------------ measuring */

static void *alloc_samples(uint64_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / sizeof(uint64_t))
        die_sys("malloc", ENOMEM);
    uint64_t *p = malloc((size_t)n * sizeof *p);
    if (!p)
        die_sys("malloc", ENOMEM);
    memset(p, 0, (size_t)n * sizeof *p); /* touch every page before measuring */
    return p;
}

static struct wait_args make_args(uint64_t ns)
{
    struct wait_args a;
    uint64_t us = ns / 1000, ms = ns / 1000000;
    a.ns = ns;
    a.ts = ns_to_ts(ns);
    a.tv.tv_sec = (time_t)(us / 1000000);
    a.tv.tv_usec = (suseconds_t)(us % 1000000);
    a.us = us > UINT32_MAX ? UINT32_MAX : (useconds_t)us;
    a.ms = ms > INT32_MAX ? INT32_MAX : (int)ms;
    return a;
}

/* A `#` note, printed before the cell, for conversions the probe knows it makes. */
static void note_conversion(const struct method *m, const struct wait_args *a)
{
    uint64_t ns = a->ns;
    if (m->kind == KIND_YIELD && ns != 0)
        printf("# %s takes no duration; requested %" PRIu64 " ns ignored\n", m->name, ns);
    else if (m->wait == wait_usleep && (ns % 1000 != 0 || ns / 1000 != a->us))
        printf("# usleep: %" PRIu64 " ns passed as usleep(%u)\n", ns, (unsigned)a->us);
    else if (m->wait == wait_select && ns % 1000 != 0)
        printf("# select: %" PRIu64 " ns truncated to %" PRIu64 " us\n", ns, ns / 1000);
    else if (m->wait == wait_poll && (ns % 1000000 != 0 || ns / 1000000 != (uint64_t)a->ms))
        printf("# poll: %" PRIu64 " ns passed as a %d ms timeout\n", ns, a->ms);
}

static void run_oneshot(const struct method *m, const uint64_t *durations, size_t n_durations,
                        bool by_budget, uint64_t count, uint64_t budget, uint64_t warmup,
                        uint64_t max_count)
{
    uint64_t capacity = by_budget ? max_count : count;
    uint64_t *warm = alloc_samples(warmup);
    uint64_t *samples = alloc_samples(capacity);
    /* Each call's start (the clock read that opens its timed region), for --timestamps. */
    uint64_t *warm_start = alloc_samples(warmup);
    uint64_t *start = alloc_samples(capacity);
    const struct stamps st = {.warm = warm_start, .samples = start};
    const wait_fn wait = m->wait;

    for (size_t c = 0; c < n_durations; c++) {
        const struct wait_args a = make_args(durations[c]);
        struct timespec t1, t2;

        for (uint64_t i = 0; i < warmup; i++) {
            now(&t1);
            wait(&a, &t1);
            now(&t2);
            warm[i] = ts_diff_ns(&t1, &t2);
            warm_start[i] = ts_ns(&t1);
        }

        uint64_t n = 0, sum = 0;
        do {
            now(&t1);
            wait(&a, &t1);
            now(&t2);
            samples[n] = ts_diff_ns(&t1, &t2);
            start[n] = ts_ns(&t1);
            sum += samples[n];
            n++;
        } while (by_budget ? (sum < budget && n < capacity) : n < capacity);

        note_conversion(m, &a);
        print_cell(durations[c], "s", warm, warmup, samples, n, &st);
    }
    free(warm);
    free(samples);
    free(warm_start);
    free(start);
}

static void run_periodic(const struct method *m, uint64_t period, uint64_t count,
                         uint64_t warmup)
{
    uint64_t total = warmup + count, multi_reads = 0;
    uint64_t *arrivals = alloc_samples(total);
    struct stamps st = {0};
    m->periodic(period, total, arrivals, &multi_reads, &st.t0);
    if (multi_reads)
        printf("# %s: %" PRIu64 " reads returned more than one expiration; "
               "each expiration is reported with that read's arrival time\n",
               m->name, multi_reads);
    print_cell(period, "t", arrivals, warmup, arrivals + warmup, count, &st);
    free(arrivals);
}

int main(int argc, char **argv)
{
    struct options o;
    parse_args(argc, argv, &o);

    if (o.list) {
        if (o.method || o.durations || o.count || o.budget || o.warmup || o.max_count || o.period ||
            o.mlock || o.timestamps)
            die_usage("%s takes no other flags", "--list");
        print_list();
        return 0;
    }
    if (!o.method)
        die_usage("missing %s (or --list)", "--method");
    timestamps = o.timestamps;

    const struct method *m = NULL;
    for (size_t i = 0; i < N_METHODS; i++)
        if (strcmp(methods[i].name, o.method) == 0)
            m = &methods[i];
    if (!m)
        die_usage("unknown method: '%s'", o.method);

    /* Numbers are checked first, so a malformed one is always named. */
    uint64_t count = o.count ? parse_number("--count", o.count) : 0;
    uint64_t budget = o.budget ? parse_number("--budget-ns", o.budget) : 0;
    uint64_t warmup = o.warmup ? parse_number("--warmup", o.warmup) : 0;
    uint64_t max_count = o.max_count ? parse_number("--max-count", o.max_count) : DEFAULT_MAX_COUNT;
    uint64_t period = o.period ? parse_number("--period-ns", o.period) : 0;
    size_t n_durations = 0;
    uint64_t *durations = o.durations ? parse_list("--durations-ns", o.durations, &n_durations) : NULL;

    if (o.count && count == 0)
        die_usage("--count must be at least 1, got '%s'", o.count);
    if (o.budget && budget == 0)
        die_usage("--budget-ns must be at least 1, got '%s'", o.budget);
    if (o.max_count && max_count == 0)
        die_usage("--max-count must be at least 1, got '%s'", o.max_count);
    if (o.period && period == 0)
        die_usage("--period-ns must be at least 1, got '%s'", o.period);

    if (m->kind == KIND_PERIODIC) {
        if (o.durations)
            die_usage("--durations-ns is not valid for periodic method '%s' (use --period-ns)", m->name);
        if (o.budget)
            die_usage("--budget-ns is not valid for periodic method '%s'", m->name);
        if (o.max_count)
            die_usage("--max-count is not valid for periodic method '%s'", m->name);
        if (!o.period)
            die_usage("missing --period-ns for periodic method '%s'", m->name);
        if (!o.count)
            die_usage("missing --count for periodic method '%s'", m->name);
        /* The last tick is due at (warmup + count) * period ns after t0. */
        if (warmup > MAX_NUMBER - count || warmup + count > MAX_NUMBER / period)
            die_usage("--period-ns x (--warmup + --count) overflows: %" PRIu64 " x %" PRIu64,
                      period, warmup + count);
    } else {
        if (o.period)
            die_usage("--period-ns is only valid for periodic methods, not '%s'", m->name);
        if (!o.durations)
            die_usage("missing --durations-ns for method '%s'", m->name);
        if (o.count && o.budget)
            die_usage("--count and --budget-ns are exclusive (got both, for '%s')", m->name);
        if (!o.count && !o.budget)
            die_usage("one of --count or --budget-ns is required for '%s'", m->name);
    }

    const char *why = unavailable_reason(m);
    if (why) {
        fprintf(stderr, "probe: method '%s' is unavailable: %s\n", m->name, why);
        return 3;
    }
    /* A large stdout buffer: cells are printed in one go after measuring. */
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    /* --mlock: every page, now and later, stays in RAM (before the header: the harness
     * reads what is in force once the header is out). */
    if (o.mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        die_sys("mlockall(MCL_CURRENT | MCL_FUTURE)", errno);
    print_header(m->name, m->kind == KIND_PERIODIC ? "periodic" : "oneshot");
    fflush(stdout); /* the header goes out before the first measurement */
    /* After the header, whose timerslack_ns is the thread's own (the sleeper sets 1 ns). */
    if (m->wait == wait_sleeplab && !(sl_sleeper = sl.sleeper_new()))
        die_sys("sleeplab_sleeper_new", ENOMEM);
    if (m->kind == KIND_PERIODIC)
        run_periodic(m, period, count, warmup);
    else
        run_oneshot(m, durations, n_durations, o.budget != NULL, count, budget, warmup, max_count);
    fputs("end\n", stdout);
    free(durations);
    if (fflush(stdout) != 0)
        die_sys("writing stdout", errno);
    return 0;
}
