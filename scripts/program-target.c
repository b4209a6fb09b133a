/* A program with known waits, for checking `sleeplab explain --pid` / `-- CMD` against
 * ground truth: ROUNDS times, one wait of each kind below, each with a timeout of
 * WAIT_US microseconds that nothing ends early, each timed by its own clock reads
 * (CLOCK_MONOTONIC, right before and right after the call). Prints one CSV row per
 * wait to OUT: call,tid,before_ns,after_ns,deadline_ns (deadline: before + the timeout,
 * or the absolute instant asked for; a millisecond API's timeout is WAIT_US rounded up
 * to whole milliseconds). With SLACK_NS set, the thread's timer slack is set to it
 * (PR_SET_TIMERSLACK) first; otherwise it is left at the default.
 *
 *   cc -O2 -o /tmp/program-target scripts/program-target.c
 *   /tmp/program-target ROUNDS WAIT_US truth.csv [SLACK_NS]
 *
 * Every wait is its system call made directly (no C library mapping one call onto
 * another), so the names are the kernel's. x86_64 (poll, select and epoll_wait exist
 * there). Bad input: one line naming it, exit 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

struct futex_waitv_arg {
    uint64_t val;
    uint64_t uaddr;
    uint32_t flags;
    uint32_t reserved;
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct timespec ts_of(uint64_t ns) {
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return t;
}

static long parse(const char *what, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "program-target: %s %s: a whole number from %ld to %ld\n", what, s, lo,
                hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: program-target ROUNDS WAIT_US OUT.csv [SLACK_NS]\n");
        return 2;
    }
    long rounds = parse("ROUNDS", argv[1], 1, 1000000);
    long wait_us = parse("WAIT_US", argv[2], 1, 1000000);
    if (argc == 5)
        prctl(PR_SET_TIMERSLACK, (unsigned long)parse("SLACK_NS", argv[4], 1, 1000000000), 0, 0, 0);
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        fprintf(stderr, "program-target: %s: %s\n", argv[3], strerror(errno));
        return 2;
    }
    uint64_t wait = (uint64_t)wait_us * 1000u;
    int ms = (int)((wait_us + 999) / 1000);
    int ep = epoll_create1(0);
    if (ep < 0) {
        perror("program-target: epoll_create1");
        return 2;
    }
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    if (tfd < 0) {
        perror("program-target: timerfd_create");
        return 2;
    }
    uint32_t word = 0;
    int tid = (int)syscall(SYS_gettid);
    fprintf(out, "call,tid,before_ns,after_ns,deadline_ns\n");
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < 13; k++) {
            const char *name = NULL;
            uint64_t before = now_ns(), deadline = before + wait;
            struct timespec rel = ts_of(wait);
            switch (k) {
            case 0:
                name = "nanosleep";
                syscall(SYS_nanosleep, &rel, NULL);
                break;
            case 1:
                name = "clock_nanosleep";
                syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &rel, NULL);
                break;
            case 2: {
                name = "clock_nanosleep";
                struct timespec abs = ts_of(deadline);
                syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
                break;
            }
            case 3:
                name = "poll";
                deadline = before + (uint64_t)ms * 1000000u;
                syscall(SYS_poll, NULL, 0, ms);
                break;
            case 4:
                name = "ppoll";
                syscall(SYS_ppoll, NULL, 0, &rel, NULL, 8);
                break;
            case 5: {
                name = "select";
                struct timeval tv = {(time_t)(wait_us / 1000000), (suseconds_t)(wait_us % 1000000)};
                syscall(SYS_select, 0, NULL, NULL, NULL, &tv);
                break;
            }
            case 6:
                name = "pselect6";
                syscall(SYS_pselect6, 0, NULL, NULL, NULL, &rel, NULL);
                break;
            case 7: {
                name = "epoll_wait";
                struct epoll_event e;
                deadline = before + (uint64_t)ms * 1000000u;
                syscall(SYS_epoll_wait, ep, &e, 1, ms);
                break;
            }
            case 8: {
                name = "epoll_pwait";
                struct epoll_event e;
                deadline = before + (uint64_t)ms * 1000000u;
                syscall(SYS_epoll_pwait, ep, &e, 1, ms, NULL, 8);
                break;
            }
            case 9: {
                name = "epoll_pwait2";
                struct epoll_event e;
                if (syscall(SYS_epoll_pwait2, ep, &e, 1, &rel, NULL, 0) < 0 && errno == ENOSYS)
                    continue;
                break;
            }
            case 10:
                name = "futex";
                syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
                break;
            case 11: {
                name = "futex_waitv";
                struct futex_waitv_arg w = {0, (uint64_t)(uintptr_t)&word, 2 | 128, 0};
                struct timespec abs = ts_of(deadline);
                if (syscall(SYS_futex_waitv, &w, 1, 0, &abs, CLOCK_MONOTONIC) < 0 &&
                    errno == ENOSYS)
                    continue;
                break;
            }
            case 12: {
                /* A one-shot timerfd armed for the deadline, then read: the read waits. */
                name = "timerfd_read";
                struct itimerspec its = {{0, 0}, ts_of(deadline)};
                uint64_t expirations;
                syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME, &its, NULL);
                before = now_ns();
                syscall(SYS_read, tfd, &expirations, sizeof expirations);
                break;
            }
            }
            uint64_t after = now_ns();
            fprintf(out, "%s,%d,%llu,%llu,%llu\n", name, tid, (unsigned long long)before,
                   (unsigned long long)after, (unsigned long long)deadline);
        }
    }
    return fclose(out) == 0 ? 0 : 2;
}
