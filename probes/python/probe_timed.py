"""Part of the Python probe (probe.py imports it): the timed loops of the blocking
methods, by count (`_fill*`) or by time budget (`_budget*`)."""

import time


# ---------------------------------------------------------- timed loops ---
# Timed region everywhere: clock read, the wait, clock read. Everything else
# (storing, summing, the loop test) happens outside it. Functions and
# arguments are bound to locals beforehand, so no attribute lookup is timed.
# Each loop also keeps every call's opening clock read (its start, for
# --timestamps) in `starts`, after the closing read.
# The loops are written out once per call shape (one argument, none, select's
# four) on purpose: a shared loop would have to call through a wrapper or
# unpack arguments inside the timed region, and that would be measured too.

def _fill(fn, arg, out, starts, n):
    clk = time.perf_counter_ns
    for i in range(n):
        t0 = clk()
        fn(arg)
        t1 = clk()
        out[i] = t1 - t0
        starts[i] = t0


def _budget(fn, arg, budget, max_count):
    clk = time.perf_counter_ns
    out = []
    starts = []
    append = out.append
    start = starts.append
    total = 0
    n = 0
    while True:
        t0 = clk()
        fn(arg)
        t1 = clk()
        e = t1 - t0
        append(e)
        start(t0)
        total += e
        n += 1
        if total >= budget or n >= max_count:
            return out, starts


def _fill0(fn, out, starts, n):
    clk = time.perf_counter_ns
    for i in range(n):
        t0 = clk()
        fn()
        t1 = clk()
        out[i] = t1 - t0
        starts[i] = t0


def _budget0(fn, budget, max_count):
    clk = time.perf_counter_ns
    out = []
    starts = []
    append = out.append
    start = starts.append
    total = 0
    n = 0
    while True:
        t0 = clk()
        fn()
        t1 = clk()
        e = t1 - t0
        append(e)
        start(t0)
        total += e
        n += 1
        if total >= budget or n >= max_count:
            return out, starts


def _fill_select(sel, empty, secs, out, starts, n):
    clk = time.perf_counter_ns
    for i in range(n):
        t0 = clk()
        sel(empty, empty, empty, secs)
        t1 = clk()
        out[i] = t1 - t0
        starts[i] = t0


def _budget_select(sel, empty, secs, budget, max_count):
    clk = time.perf_counter_ns
    out = []
    starts = []
    append = out.append
    start = starts.append
    total = 0
    n = 0
    while True:
        t0 = clk()
        sel(empty, empty, empty, secs)
        t1 = clk()
        e = t1 - t0
        append(e)
        start(t0)
        total += e
        n += 1
        if total >= budget or n >= max_count:
            return out, starts
