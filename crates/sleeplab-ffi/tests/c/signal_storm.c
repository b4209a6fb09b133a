/*
 * Never early through the C ABI under a signal storm: a thread sends SIGUSR1 to the main
 * thread every 100 us (10 kHz; the handler is installed WITHOUT SA_RESTART, so every
 * native sleep it hits fails with EINTR) while the main thread sleeps with
 * sleeplab_sleep_ns, sleeplab_sleep_until_ns and a ticker. Every return is checked
 * against an independent clock_gettime(CLOCK_MONOTONIC) read.
 *
 * Prints one summary line; exit 0 when there were no early returns, the storm was real
 * (signals delivered, plain clock_nanosleep calls cut short) and every call returned 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sleeplab.h"

#define STORM_INTERVAL_NS 100000u

static atomic_ulong delivered;
static atomic_int stop;

static void on_sigusr1(int sig) {
    (void)sig;
    atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct timespec to_timespec(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

static void *storm(void *arg) {
    pthread_t target = *(pthread_t *)arg;
    uint64_t next = now_ns();
    while (!atomic_load(&stop)) {
        pthread_kill(target, SIGUSR1);
        next += STORM_INTERVAL_NS;
        struct timespec ts = to_timespec(next);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    return NULL;
}

/* 0.2 .. 2 ms, spread deterministically. */
static uint64_t wait_ns(uint64_t i) { return 200000u + (i * 7919u * 13u) % 1800000u; }

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigusr1;
    sa.sa_flags = 0; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }

    sleeplab_sleeper *sleeper = sleeplab_sleeper_new();
    sleeplab_ticker *ticker = NULL;
    if (sleeper == NULL || sleeplab_ticker_new(NULL, 1000000u, SLEEPLAB_MISSED_BURST, &ticker) != 0) {
        fprintf(stderr, "could not create a sleeper or ticker\n");
        return 1;
    }

    pthread_t me = pthread_self(), thread;
    if (pthread_create(&thread, NULL, storm, &me) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
    }

    /* The storm is real: plain sleeps are cut short. */
    int cut_short = 0;
    for (int i = 0; i < 30; i++) {
        struct timespec ts = to_timespec(2000000u);
        if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == EINTR) {
            cut_short++;
        }
    }

    uint64_t early = 0, failed = 0, calls = 0;
    for (uint64_t i = 0; i < 300; i++, calls++) {
        uint64_t d = wait_ns(i), before = now_ns();
        int rc = sleeplab_sleep_ns(sleeper, d);
        uint64_t after = now_ns();
        sleeplab_report r = {0};
        failed += rc != 0 || sleeplab_sleeper_last_report(sleeper, &r) != 0;
        early += after < before + d || r.woke_ns < r.deadline_ns || after < r.deadline_ns;
    }
    for (uint64_t i = 0; i < 100; i++, calls++) {
        uint64_t deadline = now_ns() + wait_ns(i + 300);
        failed += sleeplab_sleep_until_ns(sleeper, deadline) != 0;
        early += now_ns() < deadline;
    }
    for (uint64_t i = 0; i < 200; i++, calls++) {
        sleeplab_tick t = {0};
        failed += sleeplab_ticker_tick(ticker, &t) != 0;
        early += t.woke_ns < t.scheduled_ns || now_ns() < t.scheduled_ns;
    }

    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    sleeplab_stats stats;
    failed += sleeplab_sleeper_stats(sleeper, &stats) != 0;
    failed += stats.count != 400;
    sleeplab_ticker_free(ticker);
    sleeplab_sleeper_free(sleeper);

    unsigned long signals = atomic_load(&delivered);
    printf("signals %lu, plain sleeps cut short %d/30, calls %" PRIu64 ", early %" PRIu64
           ", failed %" PRIu64 "\n",
           signals, cut_short, calls, early, failed);
    return early == 0 && failed == 0 && signals > 100 && cut_short > 0 ? 0 : 1;
}
