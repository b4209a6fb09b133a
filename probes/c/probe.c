/*
 * sleeplab probe for C on Linux/glibc: measures the POSIX and Linux wait
 * functions with clock_gettime(CLOCK_MONOTONIC) and prints the
 * `sleeplab-probe/1` line protocol (spec/probe-protocol.md).
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -o probe probes/c/probe.c
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

/* ------------------------------------------------------- one-shot waits */

/*
 * No signal handlers are installed, so EINTR is not expected; where it can
 * be resumed toward the same deadline (nanosleep family) it is, and the whole
 * counts as one call. For usleep/select/pselect/poll an EINTR simply ends the
 * call, which is what a caller of those functions sees.
 */

static void wait_nanosleep(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    struct timespec req = a->ts, rem;
    while (nanosleep(&req, &rem) != 0) {
        if (errno != EINTR)
            die_sys("nanosleep", errno);
        req = rem;
    }
}

static void wait_clock_nanosleep(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    struct timespec req = a->ts, rem;
    int err;
    while ((err = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem)) != 0) {
        if (err != EINTR)
            die_sys("clock_nanosleep", err);
        req = rem;
    }
}

static void wait_clock_nanosleep_abs(const struct wait_args *a, const struct timespec *start)
{
    /* The deadline is built from the clock reading that opened the timed region. */
    struct timespec deadline = ts_add(*start, &a->ts);
    int err;
    while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) != 0) {
        if (err != EINTR)
            die_sys("clock_nanosleep(TIMER_ABSTIME)", err);
    }
}

static void wait_usleep(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    if (usleep(a->us) != 0 && errno != EINTR)
        die_sys("usleep", errno);
}

static void wait_select(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    struct timeval tv = a->tv; /* Linux select() overwrites its timeout */
    if (select(0, NULL, NULL, NULL, &tv) < 0 && errno != EINTR)
        die_sys("select", errno);
}

static void wait_pselect(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    if (pselect(0, NULL, NULL, NULL, &a->ts, NULL) < 0 && errno != EINTR)
        die_sys("pselect", errno);
}

static void wait_poll(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    if (poll(NULL, 0, a->ms) < 0 && errno != EINTR)
        die_sys("poll", errno);
}

static void wait_sched_yield(const struct wait_args *a, const struct timespec *start)
{
    (void)a;
    (void)start;
    sched_yield();
}

/* -------------------------------------------------------- periodic runs */

static void record_tick(uint64_t *arrivals, uint64_t *k, uint64_t total, uint64_t arrival,
                        uint64_t expirations)
{
    /* One line per expiration, all with the same arrival time: never drop a tick. */
    for (uint64_t j = 0; j < expirations && *k < total; j++)
        arrivals[(*k)++] = arrival;
}

static void periodic_timerfd(uint64_t period_ns, uint64_t total, uint64_t *arrivals,
                             uint64_t *multi_reads, uint64_t *t0_ns)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd < 0)
        die_sys("timerfd_create", errno);

    struct timespec t0, t;
    struct itimerspec its;
    its.it_interval = ns_to_ts(period_ns);
    now(&t0);
    *t0_ns = ts_ns(&t0);
    /* Armed on an absolute first expiry so that tick k is due exactly at t0 + k*P. */
    its.it_value = ts_add(t0, &its.it_interval);
    if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        die_sys("timerfd_settime", errno);

    uint64_t k = 0;
    *multi_reads = 0;
    while (k < total) {
        uint64_t expirations;
        ssize_t r = read(fd, &expirations, sizeof expirations);
        now(&t);
        if (r != (ssize_t)sizeof expirations) {
            if (r < 0 && errno == EINTR)
                continue;
            die_sys("read(timerfd)", r < 0 ? errno : EIO);
        }
        if (expirations > 1)
            (*multi_reads)++;
        record_tick(arrivals, &k, total, ts_diff_ns(&t0, &t), expirations);
    }
    close(fd);
}

static void periodic_clock_nanosleep_abs(uint64_t period_ns, uint64_t total,
                                         uint64_t *arrivals, uint64_t *multi_reads,
                                         uint64_t *t0_ns)
{
    struct timespec t0, t;
    *multi_reads = 0;
    now(&t0);
    *t0_ns = ts_ns(&t0);
    for (uint64_t k = 1; k <= total; k++) {
        /*
         * Deadline t0 + k*P computed from t0 each time (as cyclictest does):
         * no drift, and a late wakeup makes the next call return at once
         * instead of shifting every later tick.
         */
        uint64_t offset = k * period_ns;
        struct timespec d = ns_to_ts(offset);
        struct timespec deadline = ts_add(t0, &d);
        int err;
        while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) != 0) {
            if (err != EINTR)
                die_sys("clock_nanosleep(TIMER_ABSTIME)", err);
        }
        now(&t);
        arrivals[k - 1] = ts_diff_ns(&t0, &t);
    }
}

/* ------------------------------------------------ sleeplab's C ABI (optional) */

/*
 * The few functions of include/sleeplab.h the probe calls, loaded with dlopen so
 * that the probe builds and runs without the library (its methods are then listed
 * as unavailable). Opaque objects are `void *` here.
 */
#define SLEEPLAB_MISSED_BURST 0 /* include/sleeplab.h: missed ticks fire at once, grid kept */

static struct {
    void *(*sleeper_new)(void);
    int (*sleep_ns)(void *sleeper, uint64_t ns);
    int (*ticker_new)(const void *options, uint64_t period_ns, int missed, void **out);
    int (*ticker_reset_at_ns)(void *ticker, uint64_t start_ns);
    int (*ticker_tick)(void *ticker, void *out);
    void (*ticker_free)(void *ticker);
    const char *(*strerror)(int code);
} sl;
static char sl_why[512]; /* why the library could not be loaded */
static int sl_state;     /* 0 not tried, 1 loaded, -1 failed */
static void *sl_sleeper; /* the one sleeper of the one-shot method (created on this thread) */

/* Loads the library once; false (with `sl_why` set) when it is missing or incomplete. */
static bool sleeplab_loaded(void)
{
    if (sl_state)
        return sl_state > 0;
    const char *path = getenv("SLEEPLAB_LIB");
    if (!path || !*path)
        path = "libsleeplab.so";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(sl_why, sizeof sl_why,
                 "sleeplab's C library is not loadable (%s); build it with cargo build "
                 "--release -p sleeplab-ffi (sleeplab runtimes then finds it), set "
                 "SLEEPLAB_LIB=/path/to/libsleeplab.so, or install it with scripts/install-c.sh",
                 e ? e : path);
        sl_state = -1;
        return false;
    }
    /* POSIX guarantees dlsym's object pointer converts to a function pointer. */
    struct {
        const char *name;
        void **slot;
    } syms[] = {
        {"sleeplab_sleeper_new", (void **)&sl.sleeper_new},
        {"sleeplab_sleep_ns", (void **)&sl.sleep_ns},
        {"sleeplab_ticker_new", (void **)&sl.ticker_new},
        {"sleeplab_ticker_reset_at_ns", (void **)&sl.ticker_reset_at_ns},
        {"sleeplab_ticker_tick", (void **)&sl.ticker_tick},
        {"sleeplab_ticker_free", (void **)&sl.ticker_free},
        {"sleeplab_strerror", (void **)&sl.strerror},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
            snprintf(sl_why, sizeof sl_why, "%s has no symbol %s (an older sleeplab?)", path,
                     syms[i].name);
            sl_state = -1;
            return false;
        }
    }
    sl_state = 1;
    return true;
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void die_sleeplab(const char *what, int code)
{
    fprintf(stderr, "probe: %s failed: %s (%d)\n", what, sl.strerror(code), code);
    exit(1);
}

static void wait_sleeplab(const struct wait_args *a, const struct timespec *start)
{
    (void)start;
    int rc = sl.sleep_ns(sl_sleeper, a->ns);
    if (rc != 0)
        die_sleeplab("sleeplab_sleep_ns", rc);
}

static void periodic_sleeplab_ticker(uint64_t period_ns, uint64_t total, uint64_t *arrivals,
                                     uint64_t *multi_reads, uint64_t *t0_ns)
{
    void *ticker = NULL;
    int rc = sl.ticker_new(NULL, period_ns, SLEEPLAB_MISSED_BURST, &ticker);
    if (rc != 0)
        die_sleeplab("sleeplab_ticker_new", rc);
    *multi_reads = 0;
    struct timespec t0, t;
    now(&t0);
    /* Tick j (from 0) is due at t0 + (j+1)*P: tick k counting from 1 at t0 + k*P. */
    *t0_ns = ts_ns(&t0);
    if ((rc = sl.ticker_reset_at_ns(ticker, *t0_ns + period_ns)) != 0)
        die_sleeplab("sleeplab_ticker_reset_at_ns", rc);
    for (uint64_t k = 0; k < total; k++) {
        if ((rc = sl.ticker_tick(ticker, NULL)) != 0)
            die_sleeplab("sleeplab_ticker_tick", rc);
        now(&t);
        arrivals[k] = ts_diff_ns(&t0, &t);
    }
    sl.ticker_free(ticker);
}

/* Why method `m` cannot run here, or NULL. */
static const char *unavailable_reason(const struct method *m)
{
    bool needs_sleeplab = m->wait == wait_sleeplab || m->periodic == periodic_sleeplab_ticker;
    return needs_sleeplab && !sleeplab_loaded() ? sl_why : NULL;
}

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

/* ---------------------------------------------------------------- output */

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* --timestamps: every one-shot line carries its call's start, every periodic cell its t0. */
static bool timestamps;

static void print_header(const char *method, const char *mode)
{
    struct utsname u;
    char platform[sizeof u.sysname + sizeof u.machine + 2] = "unknown";
    if (uname(&u) == 0) {
        for (char *p = u.sysname; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        snprintf(platform, sizeof platform, "%s %s", u.sysname, u.machine);
    }
    char version[256];
    snprintf(version, sizeof version, "%s, glibc %s", __VERSION__, gnu_get_libc_version());

    fputs("{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":", stdout);
#if defined(__clang__)
    print_json_string("clang");
#elif defined(__GNUC__)
    print_json_string("gcc");
#else
    print_json_string("unknown");
#endif
    fputs(",\"runtime_version\":", stdout);
    print_json_string(version);
    fputs(",\"clock\":\"CLOCK_MONOTONIC\",\"platform\":", stdout);
    print_json_string(platform);
    /* Extra field (allowed by the spec): the slack the kernel adds to this thread's timers. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack >= 0)
        printf(",\"timerslack_ns\":%d", slack);
    if (!method) /* the optional arguments this probe takes (spec: --list header) */
        fputs(",\"options\":[\"mlock\",\"timestamps\"]", stdout);
    if (method) {
        fputs(",\"method\":", stdout);
        print_json_string(method);
        fputs(",\"mode\":", stdout);
        print_json_string(mode);
        /* This thread measures: the kernel's id of it, for a trace of its waits. */
        printf(",\"tid\":%ld", (long)syscall(SYS_gettid));
        if (timestamps)
            fputs(",\"timestamps\":true", stdout);
    }
    fputs("}\n", stdout);
}

static void print_list(void)
{
    print_header(NULL, NULL);
    for (size_t i = 0; i < N_METHODS; i++) {
        fputs("{\"method\":", stdout);
        print_json_string(methods[i].name);
        const char *why = unavailable_reason(&methods[i]);
        printf(",\"kind\":\"%s\",\"available\":%s", kind_names[methods[i].kind],
               why ? "false" : "true");
        if (why) {
            fputs(",\"reason\":", stdout);
            print_json_string(why);
        }
        fputs(",\"description\":", stdout);
        print_json_string(methods[i].description);
        fputs("}\n", stdout);
    }
    fputs("end\n", stdout);
}

/*
 * What a cell prints with --timestamps (ignored without): each one-shot call's start
 * (`warm`, `samples`, parallel to the values), or the periodic cell's t0.
 */
struct stamps {
    const uint64_t *warm;
    const uint64_t *samples;
    uint64_t t0;
};

/* One line: tag, value and, with --timestamps, the start when there is one. */
static void print_line(const char *tag, uint64_t value, const uint64_t *start)
{
    if (timestamps && start)
        printf("%s %" PRIu64 " %" PRIu64 "\n", tag, value, *start);
    else
        printf("%s %" PRIu64 "\n", tag, value);
}

static void print_cell(uint64_t value, const char *tag, const uint64_t *warm, uint64_t n_warm,
                       const uint64_t *samples, uint64_t n, const struct stamps *st)
{
    bool periodic = strcmp(tag, "t") == 0;
    printf("cell %" PRIu64 "\n", value);
    if (timestamps && periodic)
        printf("t0 %" PRIu64 "\n", st->t0);
    for (uint64_t i = 0; i < n_warm; i++)
        print_line("w", warm[i], periodic ? NULL : &st->warm[i]);
    for (uint64_t i = 0; i < n; i++)
        print_line(tag, samples[i], periodic ? NULL : &st->samples[i]);
    printf("done %" PRIu64 " %" PRIu64 "\n", value, n);
    fflush(stdout);
}

/* ------------------------------------------------------------- arguments */

/* Strict non-negative decimal integer: digits only, no sign, fits in int64. */
static uint64_t parse_number(const char *flag, const char *s)
{
    uint64_t v = 0;
    if (*s == '\0')
        die_usage("empty number for %s", flag);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            die_usage("bad number for %s: '%s' (expected decimal digits only)", flag, s);
        unsigned digit = (unsigned)(*p - '0');
        if (v > (MAX_NUMBER - digit) / 10)
            die_usage("number out of range for %s: '%s'", flag, s);
        v = v * 10 + digit;
    }
    return v;
}

/* Comma-separated list with no spaces and no empty elements. */
static uint64_t *parse_list(const char *flag, const char *s, size_t *n_out)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += (*p == ',');
    uint64_t *v = malloc(n * sizeof *v);
    char *copy = strdup(s);
    if (!v || !copy)
        die_sys("malloc", ENOMEM);
    char *item = copy;
    for (size_t i = 0; i < n; i++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (*item == '\0')
            die_usage("empty element in %s list: '%s'", flag, s);
        v[i] = parse_number(flag, item);
        item = comma ? comma + 1 : item + strlen(item);
    }
    free(copy);
    *n_out = n;
    return v;
}

struct options {
    bool list;
    bool mlock;
    bool timestamps;
    const char *method;
    const char *durations;
    const char *count, *budget, *warmup, *max_count, *period;
};

static void parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--list") == 0) {
            if (o->list)
                die_usage("duplicate flag: '%s'", arg);
            o->list = true;
            continue;
        }
        if (strcmp(arg, "--mlock") == 0) {
            if (o->mlock)
                die_usage("duplicate flag: '%s'", arg);
            o->mlock = true;
            continue;
        }
        if (strcmp(arg, "--timestamps") == 0) {
            if (o->timestamps)
                die_usage("duplicate flag: '%s'", arg);
            o->timestamps = true;
            continue;
        }
        const char **slot = NULL;
        if (strcmp(arg, "--method") == 0)
            slot = &o->method;
        else if (strcmp(arg, "--durations-ns") == 0)
            slot = &o->durations;
        else if (strcmp(arg, "--count") == 0)
            slot = &o->count;
        else if (strcmp(arg, "--budget-ns") == 0)
            slot = &o->budget;
        else if (strcmp(arg, "--warmup") == 0)
            slot = &o->warmup;
        else if (strcmp(arg, "--max-count") == 0)
            slot = &o->max_count;
        else if (strcmp(arg, "--period-ns") == 0)
            slot = &o->period;
        else if (strncmp(arg, "--", 2) == 0)
            die_usage("unknown flag: '%s'", arg);
        else
            die_usage("unexpected argument: '%s'", arg);
        if (*slot)
            die_usage("duplicate flag: '%s'", arg);
        if (i + 1 >= argc)
            die_usage("missing value for %s", arg);
        *slot = argv[++i];
    }
}

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
