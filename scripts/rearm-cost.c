// What re-arming the kernel's earliest timer costs: a 1 kHz loop on timerfds, waiting in
// epoll_wait, with K = 1 timerfd re-armed after each wake for the next deadline (always
// the earliest timer: a clock-event reprogram, an exit to the host on a virtual machine)
// or K = 2 timerfds alternating, each re-armed after its wake for the deadline after
// next (behind the other: never the earliest when armed). The reactor timer of
// sleeplab's asleep keeps two for this reason (docs/ASYNC.md).
//
//   cc -O2 -o rearm-cost scripts/rearm-cost.c && ./rearm-cost K WAKES
//
// Prints one JSON object: K, the wakes, the process's CPU over them as a share of their
// wall time (percent), and their mean lateness after the deadline (ns).
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void arm(int fd, uint64_t at) {
    struct itimerspec s = {{0, 0}, {(time_t)(at / 1000000000u), (long)(at % 1000000000u)}};
    if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &s, NULL) != 0) {
        perror("timerfd_settime");
        exit(1);
    }
}

int main(int argc, char **argv) {
    int k = argc > 2 ? atoi(argv[1]) : 0;
    long wakes = argc > 2 ? atol(argv[2]) : 0;
    if ((k != 1 && k != 2) || wakes <= 0) {
        fprintf(stderr, "usage: rearm-cost K(1|2) WAKES(>0)\n");
        return 2;
    }
    const uint64_t period = 1000000;
    int ep = epoll_create1(0);
    int fd[2];
    for (int i = 0; i < 2; i++) {
        fd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
        struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.u32 = (uint32_t)i};
        if (fd[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e) != 0) {
            perror("timerfd");
            return 1;
        }
    }
    // Each timerfd's deadline: timerfd i of K fires at t0 + (i + j·K)·period, j = 0, 1, …
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC) + period;
    uint64_t deadline[2] = {t0, t0 + period};
    for (int i = 0; i < k; i++) arm(fd[i], deadline[i]);
    uint64_t cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);
    uint64_t late = 0;
    for (long i = 0; i < wakes; i++) {
        struct epoll_event e;
        uint64_t n;
        // An interrupted wait, or a read that found no expiry, is not a wake.
        if (epoll_wait(ep, &e, 1, -1) != 1) {
            i--;
            continue;
        }
        uint64_t woke = clock_ns(CLOCK_MONOTONIC), *d = &deadline[e.data.u32];
        if (read(fd[e.data.u32], &n, sizeof n) != sizeof n) {
            i--;
            continue;
        }
        late += woke > *d ? woke - *d : 0;
        *d += (uint64_t)k * period;
        arm(fd[e.data.u32], *d);
    }
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0, wall = clock_ns(CLOCK_MONOTONIC) - wall0;
    printf("{\"k\": %d, \"wakes\": %ld, \"cpu_percent\": %.4f, \"mean_late_ns\": %.1f}\n", k, wakes,
           100.0 * (double)cpu / (double)wall, (double)late / (double)wakes);
    return 0;
}
