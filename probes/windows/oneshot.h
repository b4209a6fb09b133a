/*
 * Part of the Windows probe (probe.c includes it once, in order): the one-shot and yield
 * methods: one timed call per sample (QPC, the wait, QPC), seed 002's timer sleep, and
 * the cells. It relies on what probe.c and the parts before it define.
 */
/* ------------------------------------------------------------------------------------ */
/* one-shot waits                                                                       */

static HANDLE g_timer;         /* waitable timer for waitable-timer(-high-res) */
static HANDLE g_seed_timer;    /* waitable timer for seed002 */
static int g_period_begun = 0; /* timeBeginPeriod(1) active */

/* per-cell precomputed arguments, so the timed region holds only the call */
struct cell_args {
    DWORD ms;           /* Sleep/SleepEx */
    LARGE_INTEGER due;  /* waitable timers: negative = relative, 100 ns units */
    uint64_t ticks;     /* busy wait */
    uint64_t ns;        /* seed002 */
};

/* seed002 state: a running estimate of how much a waitable timer oversleeps, kept for the
 * whole run (the seed keeps it in statics). Initial values as in the seed: 5 ms, count 1. */
static double s_mean = 5e6, s_m2 = 0.0, s_estimate = 5e6;
static int64_t s_n = 1;

static void seed002_wait(uint64_t d_ns, uint64_t d_ticks)
{
    int64_t start = qpc();
    int64_t deadline = start + (int64_t)d_ticks;
    (void)d_ns;
    for (;;) {
        int64_t now = qpc();
        double remaining = now >= deadline ? 0.0 : (double)ticks_to_ns((uint64_t)(deadline - now));
        double to_wait = remaining - s_estimate;
        LARGE_INTEGER due;
        int64_t a, b;
        double observed, err, delta;
        if (to_wait <= 100.0) break; /* less than one 100 ns unit left for the timer */
        due.QuadPart = -(LONGLONG)(to_wait / 100.0);
        a = qpc();
        SetWaitableTimer(g_seed_timer, &due, 0, NULL, NULL, FALSE);
        WaitForSingleObject(g_seed_timer, INFINITE);
        b = qpc();
        observed = (double)ticks_to_ns((uint64_t)(b - a));
        err = observed - to_wait;
        s_n++;
        delta = err - s_mean;
        s_mean += delta / (double)s_n;
        s_m2 += delta * (err - s_mean);
        s_estimate = s_mean + sqrt(s_m2 / (double)(s_n - 1));
    }
    while (qpc() < deadline) YieldProcessor();
}

static inline void busy_wait(uint64_t ticks)
{
    int64_t s = qpc();
    while ((uint64_t)(qpc() - s) < ticks) YieldProcessor();
}

/* One measured call; returns elapsed QPC ticks. The switch happens outside the region. */
static uint64_t timed_call(int m, const struct cell_args *c)
{
    int64_t t0, t1;
    switch (m) {
    case M_SLEEP:
    case M_TBP_SLEEP:
        t0 = qpc();
        Sleep(c->ms);
        t1 = qpc();
        break;
    case M_SLEEPEX:
        t0 = qpc();
        SleepEx(c->ms, FALSE);
        t1 = qpc();
        break;
    case M_WT:
    case M_WT_HR:
        t0 = qpc();
        SetWaitableTimer(g_timer, &c->due, 0, NULL, NULL, FALSE);
        WaitForSingleObject(g_timer, INFINITE);
        t1 = qpc();
        break;
    case M_BUSY:
        t0 = qpc();
        busy_wait(c->ticks);
        t1 = qpc();
        break;
    case M_SEED002:
        t0 = qpc();
        seed002_wait(c->ns, c->ticks);
        t1 = qpc();
        break;
    case M_SLEEP0:
        t0 = qpc();
        Sleep(0);
        t1 = qpc();
        break;
    case M_SWITCH:
        t0 = qpc();
        SwitchToThread();
        t1 = qpc();
        break;
    default:
        t0 = t1 = 0;
        break;
    }
    return (uint64_t)(t1 - t0);
}

static void *alloc_samples(uint64_t n)
{
    void *p;
    if (n == 0) n = 1;
    if (n > (uint64_t)(SIZE_MAX / sizeof(uint64_t))) die(1, "cannot allocate %llu samples", (unsigned long long)n);
    p = malloc((size_t)n * sizeof(uint64_t));
    if (!p) die(1, "cannot allocate %llu samples", (unsigned long long)n);
    memset(p, 0, (size_t)n * sizeof(uint64_t)); /* touch the pages before measuring */
    return p;
}

static void run_oneshot(const struct args *a, int m)
{
    uint64_t cap = a->have_count ? a->count : a->max_count;
    uint64_t *warm = (uint64_t *)alloc_samples(a->warmup);
    uint64_t *samp = (uint64_t *)alloc_samples(cap);
    size_t ci;

    /* set-up before anything is printed, so failures leave stdout empty */
    if (m == M_WT) {
        g_timer = CreateWaitableTimerW(NULL, FALSE, NULL);
        if (!g_timer) die(1, "CreateWaitableTimerW failed, GetLastError=%lu", (unsigned long)GetLastError());
    } else if (m == M_WT_HR) {
        g_timer = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, TIMER_ALL_ACCESS);
        if (!g_timer)
            die(3, "method 'waitable-timer-high-res' unavailable: CreateWaitableTimerExW failed, GetLastError=%lu",
                (unsigned long)GetLastError());
    } else if (m == M_SEED002) {
        g_seed_timer = CreateWaitableTimerW(NULL, FALSE, NULL);
        if (!g_seed_timer) die(1, "CreateWaitableTimerW failed, GetLastError=%lu", (unsigned long)GetLastError());
    } else if (m == M_TBP_SLEEP) {
        MMRESULT r = timeBeginPeriod(1);
        if (r != TIMERR_NOERROR) die(3, "method 'timeBeginPeriod1-Sleep' unavailable: timeBeginPeriod(1) returned %u", r);
        g_period_begun = 1;
    }

    print_header(g_methods[m].name, "oneshot");
    fflush(stdout);

    for (ci = 0; ci < a->n_durations; ci++) {
        uint64_t d = a->durations[ci];
        struct cell_args c;
        uint64_t i, n = 0, sum_ns = 0;

        memset(&c, 0, sizeof c);
        c.ms = (DWORD)(d / NS_PER_MS);
        c.due.QuadPart = -(LONGLONG)(d / 100);
        c.ticks = ns_to_ticks_ceil(d);
        c.ns = d;

        /* notes on roundings this probe knows of */
        switch (m) {
        case M_SLEEP:
        case M_SLEEPEX:
        case M_TBP_SLEEP:
            if (d % NS_PER_MS) {
                out("# API takes whole ms: requested ");
                out_u64(d);
                out(" ns, called with ");
                out_u64(c.ms);
                out(" ms (");
                out_u64((uint64_t)c.ms * NS_PER_MS);
                out(" ns)");
                if (c.ms == 0) out("; 0 ms only yields");
                out("\n");
            }
            break;
        case M_WT:
        case M_WT_HR:
            if (m == M_WT_HR && ci == 0 && strcmp(g_implementation, "wine") == 0)
                out("# wine's CreateWaitableTimerExW ignores CREATE_WAITABLE_TIMER_HIGH_RESOLUTION: this is the "
                    "plain waitable timer\n");
            if (d % 100) {
                out("# due time in 100 ns units: requested ");
                out_u64(d);
                out(" ns, relative due time ");
                out_u64(d / 100);
                out(" x 100 ns");
                if (d / 100 == 0) out(" (0 = absolute time 0, already past: fires at once)");
                out("\n");
            }
            break;
        case M_SLEEP0:
        case M_SWITCH:
            if (d) {
                out("# yield method: requested duration ");
                out_u64(d);
                out(" ns ignored\n");
            }
            break;
        default:
            break;
        }

        /* warm-up calls, timed the same way */
        for (i = 0; i < a->warmup; i++) warm[i] = timed_call(m, &c);
        /* measured calls */
        if (a->have_count) {
            for (n = 0; n < a->count; n++) samp[n] = timed_call(m, &c);
        } else {
            while (n < a->max_count && sum_ns < a->budget) {
                uint64_t t = timed_call(m, &c);
                samp[n++] = t;
                sum_ns += ticks_to_ns(t); /* after the region; the budget counts measured ns */
            }
        }

        out_line("cell", d);
        for (i = 0; i < a->warmup; i++) out_line("w", ticks_to_ns(warm[i]));
        for (i = 0; i < n; i++) out_line("s", ticks_to_ns(samp[i]));
        out("done ");
        out_u64(d);
        out(" ");
        out_u64(n);
        out("\n");
        fflush(stdout);
    }
    out("end\n");
    fflush(stdout);
    free(warm);
    free(samp);
}
