/*
 * Part of the C probe (probe.c includes it once, in order): the one-shot waits (one
 * timed call each) and the periodic runs (ticks recorded against t0). It relies on what
 * probe.c and the parts before it define.
 */
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
