/*
 * A 60 Hz frame limiter in C with sleeplab's drift-free ticker.
 *
 *   scripts/install-c.sh "$HOME/.local"          # from the repository: lib, header, pkg-config
 *   export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
 *   cc -O2 -o frame_limiter examples/frame_limiter.c $(pkg-config --cflags --libs sleeplab)
 *   ./frame_limiter 60                            # 60 frames = 1 s, no LD_LIBRARY_PATH needed
 *
 * (The README's C section has the same lines; crates/sleeplab-ffi/tests/c_programs.rs
 * runs them.) sleeplab.pc links the program with an rpath to $HOME/.local/lib, so it runs
 * as it is; for /usr/local or /usr, install-c.sh runs ldconfig instead.
 *
 * Each frame is due at start + k * 16.666667 ms; a frame that overruns by whole periods
 * drops the missed ones (SLEEPLAB_MISSED_SKIP, the default) instead of rushing to catch
 * up. Exit status: 0, 1 if a call failed or a tick came early (never), 2 on bad
 * arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sleeplab.h"

#define PERIOD_NS 16666667u /* 60 Hz */

static void render_frame(uint64_t index) {
    (void)index; /* a real program would draw here */
}

int main(int argc, char **argv) {
    long frames = 300;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [frames]\n", argv[0]);
        return 2;
    }
    if (argc == 2) {
        char *end = NULL;
        errno = 0;
        frames = strtol(argv[1], &end, 10);
        if (errno != 0 || end == argv[1] || *end != '\0' || frames < 1) {
            fprintf(stderr, "frame_limiter: bad frame count '%s' (want an integer >= 1)\n", argv[1]);
            return 2;
        }
    }

    sleeplab_ticker *ticker = NULL;
    int rc = sleeplab_ticker_new(NULL, PERIOD_NS, SLEEPLAB_MISSED_SKIP, &ticker);
    if (rc != SLEEPLAB_OK) {
        fprintf(stderr, "frame_limiter: sleeplab_ticker_new: %s\n", sleeplab_last_error());
        return 1;
    }

    uint64_t early = 0;
    for (long i = 0; i < frames; i++) {
        sleeplab_tick tick;
        rc = sleeplab_ticker_tick(ticker, &tick);
        if (rc != SLEEPLAB_OK) {
            fprintf(stderr, "frame_limiter: sleeplab_ticker_tick: %s\n", sleeplab_last_error());
            sleeplab_ticker_free(ticker);
            return 1;
        }
        if (tick.woke_ns < tick.scheduled_ns || sleeplab_now_ns() < tick.scheduled_ns) {
            early++;
        }
        render_frame(tick.index);
        if (tick.index % 60 == 0) {
            printf("frame %" PRIu64 ": late by %.2f us, spun %.2f us\n", tick.index,
                   tick.lateness_ns / 1e3, tick.sleep.spin_ns / 1e3);
        }
    }

    sleeplab_stats stats;
    sleeplab_ticker_state state;
    uint64_t margin_ns = 0;
    if (sleeplab_ticker_stats(ticker, &stats) != SLEEPLAB_OK ||
        sleeplab_ticker_get_state(ticker, &state) != SLEEPLAB_OK ||
        sleeplab_ticker_margin_ns(ticker, &margin_ns) != SLEEPLAB_OK) {
        fprintf(stderr, "frame_limiter: could not read the ticker's statistics\n");
        sleeplab_ticker_free(ticker);
        return 1;
    }
    printf("frames %" PRIu64 ", missed %" PRIu64 ", early %" PRIu64
           ", mean lateness %.2f us, max %.2f us, learned margin %.1f us, spin %.2f ms in all\n",
           state.ticks, state.missed_ticks, early, stats.mean_lateness_ns / 1e3,
           stats.max_lateness_ns / 1e3, margin_ns / 1e3, stats.total_spin_ns / 1e6);
    sleeplab_ticker_free(ticker);
    return early == 0 ? 0 : 1;
}
