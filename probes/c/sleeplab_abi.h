/*
 * Part of the C probe (probe.c includes it once, in order): sleeplab's own C ABI, loaded
 * with dlopen when present: its one-shot and ticker methods. It relies on what probe.c
 * and the parts before it define.
 */
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
