"""The plain-text trace reader behind scripts/explain_independent.py: a tracefs
instance's `trace` file parsed by its own regexes (no code shared with sleeplab's
tracer), indexed per thread, timer and CPU, and each wake read from it alone.

Per wake (a thread id and its window: start, deadline, end), from the text trace alone:

* it went to sleep: its last `sched_switch` out with a sleeping state (not R or R+);
* the wakeup: the first `sched_waking` of the tid after that (after its start without
  a switch-out);
* the thread's own hrtimer: the last `hrtimer_start` the thread itself armed (common pid
  = tid) in its window before it went to sleep, outside an interrupt (the tick re-arms
  itself in the interrupts that come while the thread runs), whose timer address then
  expires (`hrtimer_expire_entry`) before the wakeup (the scheduler arms a timer of its
  own on the thread's way to sleep, `dl_task_timer`, which does not run then); its
  `softexpires` and `expires`;
* the timer ran at its hard expiry, or at that expiry's `now` when that is earlier;
* on CPU: the first `sched_switch` onto the thread (next_pid = tid) after the wakeup;
  out of the kernel: its first `sys_exit` after that;
* a thread with no switch-out to sleep whose own timer woke it all the same (the
  `sched_waking` in the interrupt while the thread itself was current: it never left
  the CPU) was on CPU from its wakeup;
* a preemption: the thread switched out runnable (R, R+) until switched back in.

Components, each stretch clipped to [max(deadline, start), end] as explain clips it, a
preemption's time taken out of whatever stretch it falls in and counted as run queue:

    slack              soft expiry → the timer ran                    explain's slack_ns
    timer interrupt    the timer ran → sched_waking                   timer_irq_ns
    waking → on CPU    sched_waking → switch-in, and preemptions      idle_wakeup_ns + run_queue_ns
    on CPU → sys_exit  switch-in → sys_exit                           kernel_exit_ns

The text trace prints its timestamps in seconds: for the `mono` clock (and every
nanosecond clock) in microseconds, rounded to the nearest (the kernel's ns2usecs adds
500 ns), so a stamp t stands for t ± 0.5 µs; the event fields expires, softexpires and
now are in ns. (Nine decimals, were a kernel to print them, are read as exact.) Events
are ordered by their lines: the kernel prints each instance's buffers merged in time
order; two instances' lines are merged by stamp, on equal stamps the timer and
scheduler instance's first. A component is then read to within about a microsecond: a
wake agrees when the two are within AGREE_NS, and a (cell, component) agrees when the
95 % interval of its share of agreeing wakes, taken over explain's rounds, lies at or
above AGREE_SHARE (disagrees when it lies below; undecided between).
"""
import bisect
import re

# One line of the text trace: TASK-PID, an optional (TGID), [CPU], optional irq flags,
# TIMESTAMP:, the event's name and its fields.
LINE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:(?P<flags>\S{4,6})\s+)?(?P<secs>\d+)\.(?P<frac>\d+):\s+(?P<event>\w+):\s?(?P<args>.*)$")
HRTIMER_START = re.compile(
    r"hrtimer=(?P<addr>\S+) function=(?P<fn>\S+) expires=(?P<hard>-?\d+) "
    r"softexpires=(?P<soft>-?\d+)")
EXPIRE_ENTRY = re.compile(r"hrtimer=(?P<addr>\S+) function=(?P<fn>\S+) now=(?P<now>-?\d+)")
WAKING = re.compile(r"comm=.* pid=(?P<pid>\d+) prio=-?\d+ target_cpu=(?P<target>\d+)")
SWITCH = re.compile(
    r"prev_comm=.* prev_pid=(?P<prev>\d+) prev_prio=-?\d+ prev_state=(?P<state>\S+) ==> "
    r"next_comm=.* next_pid=(?P<next>\d+) next_prio=-?\d+")
SYS_EXIT = re.compile(r"NR (?P<nr>-?\d+) = (?P<ret>-?\d+)")
LOST = re.compile(r"CPU:(\d+) \[LOST (\d+) EVENTS\]")


class Event:
    """One line of the trace: its order in the trace, time (ns, the middle of what the
    printed stamp rounds), the printed stamp's resolution (ns), CPU, current pid,
    whether it fired in an interrupt (the irq-info column's third flag: h, s or H), event
    name, parsed fields, and the line itself."""
    __slots__ = ("seq", "t", "res", "cpu", "pid", "irq", "name", "f", "line")

    def __init__(self, seq, t, res, cpu, pid, irq, name, f, line):
        self.seq, self.t, self.res, self.cpu, self.pid, self.irq = seq, t, res, cpu, pid, irq
        self.name, self.f, self.line = name, f, line


def stamp_ns(secs, frac):
    """(ns, resolution ns) of a printed stamp: the kernel prints a nanosecond clock's
    stamp in µs rounded to the nearest (its ns2usecs adds 500 ns before dividing), so
    `1263.269783` stands for 1263269783000 ± 500 ns; nine decimals are exact."""
    frac = frac[:9]
    res = 10 ** (9 - len(frac))
    return int(secs) * 1_000_000_000 + int(frac) * res, res


class Trace:
    """The text trace, indexed for the reader: per tid its hrtimer_starts, sleeping and
    runnable switch-outs, switch-ins, wakings and sys_exits; per timer address its
    expiries; per CPU its expiries and wakings (for the evidence)."""

    def __init__(self, *texts):
        """`texts`: the `trace` files of one run's instances, each in time order; merged
        by time (equal stamps: the earlier file's line first)."""
        parsed = []
        self.lost = 0
        for text in texts:
            for line in text.splitlines():
                e = self.parse(line)
                if e is not None:
                    parsed.append(e)
        parsed.sort(key=lambda e: e.t)  # stable: each file's order, then the files'
        self.events = parsed
        self.by = {}
        self.times = {}
        for seq, e in enumerate(parsed):
            e.seq = seq
            for key in self.keys(e):
                self.by.setdefault(key, []).append(e)

    def parse(self, line):
        """The Event of one line, or None (a header, another event, a loss note)."""
        if line.startswith("#"):
            return None
        m = LINE.match(line)
        if not m:
            lost = LOST.search(line)
            if lost:
                self.lost += int(lost.group(2))
            return None
        name, args = m.group("event"), m.group("args")
        pat = {"hrtimer_start": HRTIMER_START, "hrtimer_expire_entry": EXPIRE_ENTRY,
               "sched_waking": WAKING, "sched_switch": SWITCH, "sys_exit": SYS_EXIT}.get(name)
        f = pat.match(args) if pat else None
        if not f:
            return None
        t, res = stamp_ns(m.group("secs"), m.group("frac"))
        flags = m.group("flags") or ""
        irq = len(flags) >= 3 and flags[2] in "hsH"
        return Event(-1, t, res, int(m.group("cpu")), int(m.group("pid")), irq, name,
                     f.groupdict(), line.rstrip())

    @staticmethod
    def keys(e):
        """The indexes an event goes into."""
        f = e.f
        if e.name == "hrtimer_start":
            return [("start", e.pid)]
        if e.name == "hrtimer_expire_entry":
            return [("expire", f["addr"]), ("cpu", e.cpu)]
        if e.name == "sched_waking":
            return [("waking", int(f["pid"])), ("cpu", e.cpu)]
        if e.name == "sched_switch":
            prev, nxt = int(f["prev"]), int(f["next"])
            out = "out_sleep" if not f["state"].startswith("R") else "out_run"
            return [(out, prev), ("in", nxt)]
        if e.name == "sys_exit":
            return [("exit", e.pid)]
        return []

    def within(self, key, lo, hi):
        """The events of index `key` that may lie in [lo, hi] ns: the interval a rounded
        stamp stands for reaches into it."""
        evs = self.by.get(key, [])
        times = self.times.get(key)
        if times is None:
            times = self.times[key] = [e.t for e in evs]
        half = evs[0].res // 2 if evs else 0
        i = bisect.bisect_left(times, lo - half)
        j = bisect.bisect_right(times, hi + half)
        return evs[i:j]


def first_after(events, seq):
    """The first of `events` later in the trace than line `seq`."""
    return next((e for e in events if e.seq > seq), None)


def clipper(lo, hi):
    """The length of [a, b] inside [lo, hi] (0 when empty)."""
    return lambda a, b: max(0, min(b, hi) - max(a, lo))


def read_wake(tr, tid, start, deadline, end):
    """The wake by the reader's rules: ({component: ns}, {instant: ns}, None), or
    (None, None, what is missing)."""
    sleeps = tr.within(("out_sleep", tid), start, end)
    # Without a switch-out to sleep its timer may still have woken it while it was on the
    # CPU (in the interrupt, the thread itself current): the way from there is on CPU.
    block = sleeps[-1] if sleeps else None
    waking = first_after(tr.within(("waking", tid), start, end), block.seq if block else -1)
    if waking is None:
        return None, None, "sched_waking" if block else "did not block"
    # Its own timer: armed by the thread itself (not in an interrupt that came while it
    # ran: the tick re-arms itself there) before it went to sleep, and run before its
    # wakeup (the scheduler arms timers of its own on the thread's way to sleep, which
    # do not run then); the last such.
    own = None
    for arm in tr.within(("start", tid), start, end):
        if arm.irq or arm.seq > (block or waking).seq:
            continue
        ran = first_after(tr.within(("expire", arm.f["addr"]), start, end), arm.seq)
        if ran is not None and ran.seq < waking.seq:
            own = (arm, ran)
    if own is None:
        return None, None, "hrtimer_start of a timer that ran before its wakeup"
    arm, expiry = own
    soft, hard = int(arm.f["soft"]), int(arm.f["hard"])
    ran = min(hard, int(expiry.f["now"]))
    on_cpu = first_after(tr.within(("in", tid), start, end), waking.seq) if block else waking
    if on_cpu is None:
        return None, None, "switch-in"
    exit_ = first_after(tr.within(("exit", tid), start, end), on_cpu.seq)
    if exit_ is None:
        return None, None, "sys_exit"

    # Preemptions in the window: switched out runnable, back in at the next switch-in.
    ins = tr.within(("in", tid), start, end)
    preempted = []
    for out in tr.within(("out_run", tid), start, end):
        back = first_after(ins, out.seq)
        preempted.append((out.t, back.t if back else end))

    lo = max(deadline, start)
    clip = clipper(lo, end)

    def stretch(a, b):
        """[a, b] clipped, less the preemptions inside it."""
        if b <= a:
            return 0
        inside = sum(clipper(max(a, lo), min(b, end))(p, q) for p, q in preempted)
        return clip(a, b) - inside

    parts = {
        "slack": stretch(soft, ran),
        "timer interrupt": stretch(ran, waking.t),
        "waking → on CPU": stretch(waking.t, on_cpu.t) + sum(clip(p, q) for p, q in preempted),
        "on CPU → sys_exit": stretch(on_cpu.t, exit_.t),
    }
    instants = {"soft": soft, "ran": ran, "waking": waking.t, "on CPU": on_cpu.t,
                "sys_exit": exit_.t, "timer": arm.f["fn"], "preempted": bool(preempted),
                "blocked": block is not None}
    return parts, instants, None


def evidence_lines(tr, tid, start, end):
    """The text-trace lines of a wake's window that concern it: its thread's own events,
    and the expiries and wakings on the CPUs it ran and woke on."""
    cpus = {e.cpu for e in tr.within(("start", tid), start, end)}
    cpus |= {e.cpu for e in tr.within(("waking", tid), start, end)}
    keys = [("start", tid), ("out_sleep", tid), ("out_run", tid), ("in", tid), ("waking", tid),
            ("exit", tid)] + [("cpu", c) for c in sorted(cpus)]
    evs = {e.seq: e for k in keys for e in tr.within(k, start, end)}
    return [evs[s].line for s in sorted(evs)]
