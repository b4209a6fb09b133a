// The timed waits of scripts/bench-floor.sh (and the program scripts/explain-rate.sh
// follows): WAITS waits of PERIOD ns on CPU 0 (the kernels here record nothing CPU 1's
// idle task emits), each's lateness read from CLOCK_MONOTONIC (the clock both recorders
// stamp with) right after it returns, then the median lateness in ns. `grid`:
// clock_nanosleep to t0 + k·PERIOD (TIMER_ABSTIME); `relative`: nanosleep(PERIOD), late
// past its start plus PERIOD.
//
//   floor-waits grid|relative WAITS PERIOD_NS
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec spec(long long ns)
{
    struct timespec t = {ns / 1000000000LL, ns % 1000000000LL};
    return t;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int grid = argc == 4 && strcmp(argv[1], "grid") == 0;
    int relative = argc == 4 && strcmp(argv[1], "relative") == 0;
    long waits = argc == 4 ? strtol(argv[2], NULL, 10) : 0;
    long long period = argc == 4 ? strtoll(argv[3], NULL, 10) : 0;
    if (!(grid || relative) || waits <= 0 || period <= 0) {
        fprintf(stderr, "usage: floor-waits grid|relative WAITS PERIOD_NS\n");
        return 2;
    }
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    if (sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) {
        fprintf(stderr, "floor-waits: cannot pin to CPU 0\n");
        return 1;
    }
    long long *late = malloc(sizeof(long long) * (size_t)waits);
    if (!late)
        return 1;
    long long t0 = now_ns() + period;
    for (long k = 0; k < waits; k++) {
        long long deadline;
        if (grid) {
            deadline = t0 + k * period;
            struct timespec at = spec(deadline);
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
                ;
        } else {
            long long start = now_ns();
            deadline = start + period;
            struct timespec req = spec(period), rem;
            while (nanosleep(&req, &rem) != 0 && errno == EINTR)
                req = rem;
        }
        late[k] = now_ns() - deadline;
    }
    qsort(late, (size_t)waits, sizeof *late, by_value);
    // The lower median: a sample's own value, as the lab's quantile rule reads it.
    printf("%lld\n", late[(waits - 1) / 2]);
    free(late);
    return 0;
}
