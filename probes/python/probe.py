#!/usr/bin/env python3
"""sleeplab probe for Python (protocol sleeplab-probe/1, see spec/probe-protocol.md).

Measures Python's own wait functions with time.perf_counter_ns and prints the
line protocol on stdout. Standard library only; runs on CPython/PyPy 3.8+. The
methods named `sleeplab.*` measure sleeplab's own Python package (bindings/python)
when this interpreter can import it, and are listed as unavailable otherwise.
Its parts: probe_timed.py (the timed loops), probe_roundings.py (known roundings).

    python3 probe.py --list
    python3 probe.py --method time.sleep --durations-ns 0,10000,1000000 --count 200 --warmup 5
    python3 probe.py --method asyncio.sleep --durations-ns 1000000 --budget-ns 200000000
    python3 probe.py --method asyncio-call_at --period-ns 1000000 --count 500 --warmup 10
"""

import json
import os
import sys
import time

# The parts of this probe, beside it (the script's directory is first on sys.path).
from probe_roundings import notes_for
from probe_timed import _budget, _budget0, _budget_select, _fill, _fill0, _fill_select

PROTOCOL = "sleeplab-probe/1"
U64_MAX = (1 << 64) - 1
DEFAULT_MAX_COUNT = 100000
CLOCK_NAME = "time.perf_counter_ns"

EXIT_OK = 0
EXIT_BAD_ARGS = 2
EXIT_UNAVAILABLE = 3

ONESHOT = "oneshot"
YIELD = "yield"
PERIODIC = "periodic"


# ---------------------------------------------------------------- methods ---

def _unavailable_reason(name):
    """None when the method works here, else a short reason."""
    if name == "os.sched_yield" and not hasattr(os, "sched_yield"):
        return "os.sched_yield does not exist on this platform"
    if name == "select.select" and sys.platform == "win32":
        return "Windows select() rejects three empty fd lists"
    if name.startswith("sleeplab."):
        try:
            import sleeplab  # noqa: F401
        except ImportError as e:
            return ("the sleeplab package is not importable by %s (%s); "
                    "build it into the workspace's .venv with scripts/python-env.sh "
                    "(sleeplab runtimes then finds it) or install it with: "
                    "%s -m pip install ./bindings/python"
                    % (sys.executable, e, sys.executable))
    return None


# (name, kind, description); order is the --list order.
METHODS = [
    ("time.sleep", ONESHOT,
     "time.sleep(d / 1e9): float seconds"),
    ("threading.Event.wait", ONESHOT,
     "threading.Event().wait(d / 1e9) on an event nobody sets: one call, no loop"),
    ("asyncio.sleep", ONESHOT,
     "await asyncio.sleep(d / 1e9) inside one running event loop (loop start-up not timed)"),
    ("select.select", ONESHOT,
     "select.select([], [], [], d / 1e9): empty fd lists, float seconds timeout"),
    ("os.sched_yield", YIELD,
     "os.sched_yield()"),
    ("asyncio-call_at", PERIODIC,
     "drift-free periodic callback: loop.call_at(t0 + k*P) re-armed from each callback"),
    ("sleeplab.sleep", ONESHOT,
     "sleeplab.sleep(d / 1e9): sleeplab's precise sleep (native sleep, then spin the "
     "learned margin; GIL released)"),
    ("sleeplab.Ticker", PERIODIC,
     "sleeplab.Ticker(P / 1e9, missed=\"burst\").tick(): tick k due at t0 + k*P, "
     "missed ticks fire at once"),
]
KIND = {name: kind for name, kind, _ in METHODS}


def _event_wait():
    import threading
    return threading.Event().wait


def _sleeplab_sleep():
    import sleeplab
    return sleeplab.sleep


# Blocking one-shot and yield methods: name -> (lambda seconds: (function, argument)).
# The function is called as function(argument), or function() when the argument is
# None. A new blocking method is one METHODS row and one entry here.
SYNC_CALLS = {
    "time.sleep": lambda secs: (time.sleep, secs),
    "threading.Event.wait": lambda secs: (_event_wait(), secs),
    "os.sched_yield": lambda secs: (os.sched_yield, None),
    "sleeplab.sleep": lambda secs: (_sleeplab_sleep(), secs),
}


# ----------------------------------------------------------------- --mlock ---

def _mlock_flags():
    """MCL_CURRENT | MCL_FUTURE on this machine, or None where --mlock is not offered
    (not Linux, an architecture whose values differ, no ctypes or no mlockall)."""
    if not sys.platform.startswith("linux"):
        return None
    import platform
    if platform.machine().startswith(("ppc", "powerpc", "sparc", "alpha", "mips")):
        return None
    try:
        import ctypes
        if not hasattr(ctypes.CDLL(None), "mlockall"):
            return None
    except (ImportError, OSError):
        return None
    return 1 | 2


# ------------------------------------------------------------ --timestamps ---

def _timestamps_offered():
    """Whether --timestamps is offered: the clocks the probe reads (perf_counter_ns;
    monotonic_ns for sleeplab.Ticker) are clock_gettime(CLOCK_MONOTONIC) as an
    absolute count, the kernel trace's clock (CPython on Linux), as the interpreter
    itself reports."""
    try:
        return all(time.get_clock_info(c).implementation == "clock_gettime(CLOCK_MONOTONIC)"
                   for c in ("perf_counter", "monotonic"))
    except (AttributeError, ValueError):
        return False


def _options():
    """The optional arguments this probe takes (spec: the --list header's "options")."""
    opts = []
    if _mlock_flags() is not None:
        opts.append("mlock")
    if _timestamps_offered():
        opts.append("timestamps")
    return opts


def _measuring_thread():
    """The kernel id of this thread, which measures every method (header "tid")."""
    import threading
    get = getattr(threading, "get_native_id", None)
    return get() if get is not None and sys.platform.startswith("linux") else None


def lock_memory():
    """mlockall(MCL_CURRENT | MCL_FUTURE) through ctypes; raises OSError."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(_mlock_flags()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


# ------------------------------------------------------------- arguments ---

class BadArgs(Exception):
    pass


VALUE_FLAGS = ("--method", "--durations-ns", "--count", "--budget-ns",
               "--warmup", "--max-count", "--period-ns")


def parse_uint(flag, text):
    """A non-negative decimal integer that fits in u64; no sign, exponent, space."""
    if not text or any(c not in "0123456789" for c in text):
        raise BadArgs("bad value %r for %s: expected a non-negative decimal integer"
                      % (text, flag))
    value = int(text)
    if value > U64_MAX:
        raise BadArgs("bad value %r for %s: larger than 2^64-1" % (text, flag))
    return value


def parse_args(argv):
    """Returns ("list", None) or ("run", options dict). Raises BadArgs."""
    if argv == ["--list"]:
        return "list", None
    raw = {}
    mlock = False
    timestamps = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--list":
            raise BadArgs("bad argument '--list': it must be used alone")
        if arg == "--mlock" and _mlock_flags() is not None:
            if mlock:
                raise BadArgs("bad argument '--mlock': given twice")
            mlock = True
            i += 1
            continue
        if arg == "--timestamps" and _timestamps_offered():
            if timestamps:
                raise BadArgs("bad argument '--timestamps': given twice")
            timestamps = True
            i += 1
            continue
        if arg not in VALUE_FLAGS:
            raise BadArgs("unknown argument %r" % arg)
        if arg in raw:
            raise BadArgs("bad argument %r: given twice" % arg)
        if i + 1 >= len(argv):
            raise BadArgs("missing value for %s" % arg)
        raw[arg] = argv[i + 1]
        i += 2

    if "--method" not in raw:
        raise BadArgs("missing --method (or --list)")
    method = raw["--method"]
    if method not in KIND:
        raise BadArgs("unknown method %r (see --list)" % method)
    kind = KIND[method]

    opts = {"method": method, "kind": kind, "mlock": mlock, "timestamps": timestamps}
    if kind == PERIODIC:
        for flag in ("--durations-ns", "--budget-ns", "--max-count"):
            if flag in raw:
                raise BadArgs("bad argument %s: %r is a periodic method "
                              "(use --period-ns P --count C [--warmup W])" % (flag, method))
        if "--period-ns" not in raw:
            raise BadArgs("missing --period-ns for periodic method %r" % method)
        if "--count" not in raw:
            raise BadArgs("missing --count for periodic method %r" % method)
        opts["period"] = parse_uint("--period-ns", raw["--period-ns"])
        if opts["period"] < 1:
            raise BadArgs("bad value %r for --period-ns: must be at least 1"
                          % raw["--period-ns"])
    else:
        if "--period-ns" in raw:
            raise BadArgs("bad argument --period-ns: %r is a %s method, not periodic"
                          % (method, kind))
        if "--durations-ns" not in raw:
            raise BadArgs("missing --durations-ns for %s method %r" % (kind, method))
        text = raw["--durations-ns"]
        if text == "":
            raise BadArgs("bad value '' for --durations-ns: empty list")
        durations = []
        for part in text.split(","):
            if part == "":
                raise BadArgs("bad value %r for --durations-ns: empty list element" % text)
            durations.append(parse_uint("--durations-ns", part))
        opts["durations"] = durations
        has_count = "--count" in raw
        has_budget = "--budget-ns" in raw
        if has_count and has_budget:
            raise BadArgs("bad arguments: --count %s and --budget-ns %s given together"
                          % (raw["--count"], raw["--budget-ns"]))
        if not has_count and not has_budget:
            raise BadArgs("missing --count or --budget-ns")
        if has_budget:
            opts["budget"] = parse_uint("--budget-ns", raw["--budget-ns"])
            if opts["budget"] < 1:
                raise BadArgs("bad value %r for --budget-ns: must be at least 1"
                              % raw["--budget-ns"])
        opts["max_count"] = DEFAULT_MAX_COUNT
        if "--max-count" in raw:
            opts["max_count"] = parse_uint("--max-count", raw["--max-count"])
            if opts["max_count"] < 1:
                raise BadArgs("bad value %r for --max-count: must be at least 1"
                              % raw["--max-count"])

    if "--count" in raw:
        opts["count"] = parse_uint("--count", raw["--count"])
        if opts["count"] < 1:
            raise BadArgs("bad value %r for --count: must be at least 1" % raw["--count"])
    opts["warmup"] = parse_uint("--warmup", raw["--warmup"]) if "--warmup" in raw else 0
    return "run", opts


# ---------------------------------------------------------------- output ---

def _implementation():
    name = sys.implementation.name
    return {"cpython": "CPython", "pypy": "PyPy", "graalpy": "GraalPy",
            "ironpython": "IronPython", "jython": "Jython"}.get(name, name)


def _platform():
    try:
        u = os.uname()
        return "%s %s" % (u.sysname.lower(), u.machine)
    except AttributeError:  # Windows
        return sys.platform


# --timestamps: every one-shot line carries its call's start, every periodic cell its t0.
TIMESTAMPS = False


def header(extra=None):
    h = {
        "protocol": PROTOCOL,
        "runtime": "python",
        "implementation": _implementation(),
        "runtime_version": sys.version.split()[0],
        "clock": CLOCK_NAME,
        "platform": _platform(),
    }
    if extra:
        h.update(extra)
    return json.dumps(h, separators=(",", ":"))


def emit(text, fd=1):
    """Writes all of text to fd at once, unbuffered (copes with partial writes
    and with a non-blocking pipe that is momentarily full)."""
    data = text.encode("utf-8")
    view = memoryview(data)
    off = 0
    while off < len(data):
        try:
            off += os.write(fd, view[off:])
        except BlockingIOError:
            time.sleep(0.001)


def measurement_header(method, mode):
    """The header of a measurement: the method, its mode, the measuring thread and
    whether timestamps follow."""
    extra = {"method": method, "mode": mode}
    tid = _measuring_thread()
    if tid is not None:
        extra["tid"] = tid
    if TIMESTAMPS:
        extra["timestamps"] = True
    return header(extra) + "\n"


def _lines(tag, values, starts):
    """`tag value` lines, with each call's start with --timestamps."""
    if TIMESTAMPS and starts is not None:
        return ["%s %d %d\n" % (tag, x, t) for x, t in zip(values, starts)]
    return ["%s %d\n" % (tag, x) for x in values]


def cell_text(value, warm, samples, sample_tag, notes=(), starts=(None, None), t0=None):
    """One cell as a single string: notes, cell line, (t0,) w lines, samples, done.
    `starts` holds the starts of the warm-up and measured calls (one-shot), `t0` the
    periodic cell's t0; both are printed only with --timestamps."""
    parts = ["# %s\n" % n for n in notes]
    parts.append("cell %d\n" % value)
    if TIMESTAMPS and t0 is not None:
        parts.append("t0 %d\n" % t0)
    parts.extend(_lines("w", warm, starts[0]))
    parts.extend(_lines(sample_tag, samples, starts[1]))
    parts.append("done %d %d\n" % (value, len(samples)))
    return "".join(parts)


def do_list():
    opts = _options()
    lines = [header({"options": opts} if opts else None)]
    for name, kind, desc in METHODS:
        reason = _unavailable_reason(name)
        obj = {"method": name, "kind": kind, "available": reason is None}
        if reason is not None:
            obj["reason"] = reason
        obj["description"] = desc
        lines.append(json.dumps(obj, separators=(",", ":")))
    lines.append("end")
    emit("\n".join(lines) + "\n")


def sync_cell(method, d, opts):
    """Runs one cell of a blocking method; returns (warm, samples, starts), starts
    being (warm-up starts, sample starts)."""
    warmup = opts["warmup"]
    secs = d / 1e9
    warm = [0] * warmup
    warm_starts = [0] * warmup
    if method in SYNC_CALLS:
        fn, arg = SYNC_CALLS[method](secs)
    elif method == "select.select":
        import select
        sel, empty = select.select, []
        _fill_select(sel, empty, secs, warm, warm_starts, warmup)
        if "count" in opts:
            samples, starts = [0] * opts["count"], [0] * opts["count"]
            _fill_select(sel, empty, secs, samples, starts, opts["count"])
        else:
            samples, starts = _budget_select(sel, empty, secs, opts["budget"],
                                             opts["max_count"])
        return warm, samples, (warm_starts, starts)
    else:
        raise AssertionError(method)

    if arg is None:
        _fill0(fn, warm, warm_starts, warmup)
        if "count" in opts:
            samples, starts = [0] * opts["count"], [0] * opts["count"]
            _fill0(fn, samples, starts, opts["count"])
        else:
            samples, starts = _budget0(fn, opts["budget"], opts["max_count"])
    else:
        _fill(fn, arg, warm, warm_starts, warmup)
        if "count" in opts:
            samples, starts = [0] * opts["count"], [0] * opts["count"]
            _fill(fn, arg, samples, starts, opts["count"])
        else:
            samples, starts = _budget(fn, arg, opts["budget"], opts["max_count"])
    return warm, samples, (warm_starts, starts)


async def _asyncio_fill(secs, out, starts, n):
    import asyncio
    sleep = asyncio.sleep
    clk = time.perf_counter_ns
    for i in range(n):
        t0 = clk()
        await sleep(secs)
        t1 = clk()
        out[i] = t1 - t0
        starts[i] = t0


async def _asyncio_budget(secs, budget, max_count):
    import asyncio
    sleep = asyncio.sleep
    clk = time.perf_counter_ns
    out = []
    starts = []
    append = out.append
    start = starts.append
    total = 0
    n = 0
    while True:
        t0 = clk()
        await sleep(secs)
        t1 = clk()
        e = t1 - t0
        append(e)
        start(t0)
        total += e
        n += 1
        if total >= budget or n >= max_count:
            return out, starts


def run_oneshot(opts):
    method = opts["method"]
    emit(measurement_header(method, ONESHOT))
    if method == "asyncio.sleep":
        import asyncio

        async def all_cells():
            # One running loop; every cell is timed inside it.
            for d in opts["durations"]:
                secs = d / 1e9
                warm, warm_starts = [0] * opts["warmup"], [0] * opts["warmup"]
                await _asyncio_fill(secs, warm, warm_starts, opts["warmup"])
                if "count" in opts:
                    samples, starts = [0] * opts["count"], [0] * opts["count"]
                    await _asyncio_fill(secs, samples, starts, opts["count"])
                else:
                    samples, starts = await _asyncio_budget(secs, opts["budget"],
                                                            opts["max_count"])
                emit(cell_text(d, warm, samples, "s", notes_for(method, d),
                               (warm_starts, starts)))

        asyncio.run(all_cells())
    else:
        for d in opts["durations"]:
            warm, samples, starts = sync_cell(method, d, opts)
            emit(cell_text(d, warm, samples, "s", notes_for(method, d), starts))
    emit("end\n")


def run_periodic(opts):
    """asyncio-call_at: tick k (from 1) is due at t0 + k*P on the loop clock.

    Each callback reads the clock first, stores its arrival time since t0, and
    re-arms itself with call_at for the next absolute due time, so lateness
    never accumulates (a late tick whose successor is already due fires that
    successor on the next loop iteration: no tick is dropped)."""
    import asyncio

    period = opts["period"]
    warmup = opts["warmup"]
    total = warmup + opts["count"]
    arrivals = [0] * total

    async def main():
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        clk = time.perf_counter_ns
        call_at = loop.call_at
        state = {"k": 0}
        # Read the probe clock first, then the loop clock: both are
        # CLOCK_MONOTONIC on Linux; the gap (< 1 us) makes arrivals look
        # slightly later, never earlier.
        t0 = clk()
        base = loop.time()

        def tick():
            now = clk()
            k = state["k"]
            arrivals[k] = now - t0
            k += 1
            state["k"] = k
            if k < total:
                call_at(base + (k + 1) * period / 1e9, tick)
            else:
                done.set_result(None)

        call_at(base + period / 1e9, tick)
        await done
        return t0

    emit(measurement_header(opts["method"], PERIODIC))
    t0 = asyncio.run(main())
    notes = []
    import selectors
    sel = selectors.DefaultSelector.__name__
    if sel in ("EpollSelector", "PollSelector", "DevpollSelector"):
        notes.append("asyncio: %s.select rounds the wait (deadline - now) up to "
                     "whole milliseconds" % sel)
    emit(cell_text(period, arrivals[:warmup], arrivals[warmup:], "t", notes, t0=t0))
    emit("end\n")


def run_sleeplab_ticker(opts):
    """sleeplab.Ticker: its tick j (from 0) is due at start_ns + j*P, the first at
    once, so with t0 = start_ns - P tick k (from 1) is due at t0 + k*P. The
    ticker's grid is on time.monotonic_ns (CLOCK_MONOTONIC), and so are the
    arrivals read here: the same clock as perf_counter_ns on Linux."""
    import sleeplab

    period = opts["period"]
    warmup = opts["warmup"]
    total = warmup + opts["count"]
    arrivals = [0] * total
    emit(measurement_header(opts["method"], PERIODIC))
    ticker = sleeplab.Ticker(period / 1e9, missed="burst")
    if ticker.period_ns != period:
        raise AssertionError("period %d ns became %d ns" % (period, ticker.period_ns))
    t0 = ticker.start_ns - period
    tick = ticker.tick
    clk = time.monotonic_ns
    for k in range(total):
        tick()
        arrivals[k] = clk() - t0
    emit(cell_text(period, arrivals[:warmup], arrivals[warmup:], "t", t0=t0))
    emit("end\n")


# ------------------------------------------------------------------ main ---

def main(argv):
    prog = "probe.py"
    try:
        action, opts = parse_args(argv)
    except BadArgs as e:
        emit("%s: %s\n" % (prog, e), 2)
        return EXIT_BAD_ARGS
    if action == "list":
        do_list()
        return EXIT_OK
    global TIMESTAMPS
    TIMESTAMPS = opts["timestamps"]
    reason = _unavailable_reason(opts["method"])
    if reason is not None:
        emit("%s: method %r is unavailable: %s\n" % (prog, opts["method"], reason), 2)
        return EXIT_UNAVAILABLE
    if opts["mlock"]:
        # Before the header: the harness reads what is in force once it is out.
        try:
            lock_memory()
        except OSError as e:
            emit("%s: mlockall(MCL_CURRENT | MCL_FUTURE) failed: %s\n" % (prog, e), 2)
            return 1
    if opts["method"] == "sleeplab.Ticker":
        run_sleeplab_ticker(opts)
    elif opts["kind"] == PERIODIC:
        run_periodic(opts)
    else:
        run_oneshot(opts)
    return EXIT_OK


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BrokenPipeError:
        # The reader went away: the run is lost; leave without a traceback.
        code = 1
    sys.exit(code)
