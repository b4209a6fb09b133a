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
* a preemption: the thread switched out runnable (R, R+) until switched back in;
* the timer's CPU was idle when its interrupt came: the last `sched_switch` on that CPU
  before its last `local_timer_entry` before the expiry went to pid 0, and that entry
  came at or after the time the timer ran; the guest's work on that CPU between the
  two: its idle task's interrupts and softirqs (`irq_handler_entry/exit`,
  `softirq_entry/exit`), and where `cpu_idle` lines for that CPU follow the switch to
  idle, every moment it was not stopped in an idle state (from `state` ≥ 1 to the next
  interrupt entry, state exit or polling entry);
* who held the CPU the thread came on between its wakeup and its switch-in: the
  `sched_switch` lines on that CPU (the task switched out at each held it until then).

Components, each stretch clipped to [max(deadline, start), end] as explain clips it, a
preemption's time taken out of whatever stretch it falls in and counted as run queue:

    slack              soft expiry → the timer ran                          explain's slack_ns
    idle delivery      the timer ran → local_timer_entry on an idle CPU,    idle_delivery_ns
                       less the guest's work there
    timer interrupt    the timer ran → sched_waking, less idle delivery     timer_irq_ns
    idle wakeup        sched_waking → switch-in while no other task held    idle_wakeup_ns
                       the CPU
    run queue          the rest of sched_waking → switch-in, and            run_queue_ns
                       preemptions
    on CPU → sys_exit  switch-in → sys_exit                                 kernel_exit_ns

The rules for which timer is the thread's own, when the CPU counts as idle, what counts
as the guest's work and who held the CPU are the account's own, re-implemented: a wrong
rule would be wrong here too. What the comparison catches is a decoding or bookkeeping
error in either reader (a field read wrong, an event dropped, a stretch booked to the
wrong component), not a wrong rule.

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
ANY = re.compile(r"(?P<args>.*)")
CPU_IDLE = re.compile(r"state=(?P<state>\d+) cpu_id=(?P<cpu>\d+)")
# cpu_idle's state on leaving an idle state (PWR_EVENT_EXIT, -1 as a u32).
IDLE_EXIT = 4294967295
# The guest's interrupts and softirqs: entries and exits.
IRQ_ENTRIES = ("irq_handler_entry", "softirq_entry", "local_timer_entry")
IRQ_EXITS = ("irq_handler_exit", "softirq_exit", "local_timer_exit")
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
               "sched_waking": WAKING, "sched_switch": SWITCH, "sys_exit": SYS_EXIT,
               "cpu_idle": CPU_IDLE}.get(name)
        if pat is None and name in IRQ_ENTRIES + IRQ_EXITS:
            pat = ANY
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
            return [(out, prev), ("in", nxt), ("switch", e.cpu)]
        if e.name == "sys_exit":
            return [("exit", e.pid)]
        if e.name in IRQ_ENTRIES + IRQ_EXITS or e.name == "cpu_idle":
            keys = [("idle cpu", e.cpu)]
            if e.name == "local_timer_entry":
                keys.append(("local timer", e.cpu))
            return keys
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


def stretches_minus(a, b, cuts):
    """[a, b] without the sorted, disjoint stretches `cuts`: what is left."""
    out, at = [], a
    for p, q in cuts:
        if q <= at or p >= b:
            continue
        if p > at:
            out.append((at, p))
        at = max(at, q)
    if at < b:
        out.append((at, b))
    return out


def merged(stretches):
    """Stretches sorted and merged where they touch."""
    out = []
    for p, q in sorted(stretches):
        if out and p <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], q))
        else:
            out.append((p, q))
    return out


def guest_work(tr, cpu, idle_since, a, b):
    """The guest's own work on idle `cpu` in [a, b]: its idle task's interrupts and
    softirqs, entry to exit; and where `cpu_idle` lines on `cpu` follow `idle_since`,
    every moment it was not stopped in an idle state (state ≥ 1 until the next interrupt
    entry, state exit or polling entry)."""
    evs = tr.within(("idle cpu", cpu), min(idle_since, a), b)
    busy, depth, opened = [], 0, a
    for e in evs:
        if e.t < a or e.pid != 0:
            continue
        if e.name in IRQ_ENTRIES:
            if depth == 0:
                opened = e.t
            depth += 1
        elif e.name in IRQ_EXITS:
            if depth == 0:
                busy.append((a, e.t))
            else:
                depth -= 1
                if depth == 0:
                    busy.append((opened, e.t))
    if depth > 0:
        busy.append((opened, b))
    if not any(e.name == "cpu_idle" for e in evs):
        return merged(busy)
    stopped, since = [], None
    for e in evs:
        if e.name == "cpu_idle" and int(e.f["state"]) not in (0, IDLE_EXIT):
            since = e.t if since is None else since
        elif e.name == "cpu_idle" or e.name in IRQ_ENTRIES:
            if since is not None:
                stopped.append((since, e.t))
                since = None
    if since is not None:
        stopped.append((since, b))
    return stretches_minus(a, b, merged(stopped))


def idle_delivery(tr, expiry, since, ran):
    """The delivery of the timer interrupt that ran `expiry` to an idle CPU: (its
    local_timer_entry, the CPU's switch to idle), or None (the CPU was running, the
    interrupt entered before the timer ran, or the trace does not say)."""
    cpu = expiry.cpu
    entries = [e for e in tr.within(("local timer", cpu), since, expiry.t) if e.seq < expiry.seq]
    if not entries or entries[-1].t < ran:
        return None
    entry = entries[-1]
    switches = [e for e in tr.within(("switch", cpu), since, entry.t) if e.seq < entry.seq]
    if not switches or int(switches[-1].f["next"]) != 0:
        return None
    return entry, switches[-1]


def held_by_others(tr, tid, waking, on_cpu):
    """The stretches of [waking, on_cpu] in which another task held the CPU the thread
    came on: each `sched_switch` there switched out a task that held it until then (the
    idle task and the thread itself hold nothing)."""
    out, at = [], waking.t
    for e in tr.within(("switch", on_cpu.cpu), waking.t, on_cpu.t):
        if e.seq <= waking.seq or e.seq > on_cpu.seq:
            continue
        prev = int(e.f["prev"])
        if prev not in (0, tid) and e.t > at:
            out.append((at, e.t))
        at = e.t
    return out


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

    delivered = idle_delivery(tr, expiry, start, ran)
    delivery = 0
    if delivered is not None:
        entry, idle_switch = delivered
        work = guest_work(tr, expiry.cpu, idle_switch.t, ran, entry.t)
        delivery = sum(stretch(p, q) for p, q in stretches_minus(ran, entry.t, work))
    held = held_by_others(tr, tid, waking, on_cpu) if block else []
    run_queue = sum(stretch(p, q) for p, q in held) + sum(clip(p, q) for p, q in preempted)
    parts = {
        "slack": stretch(soft, ran),
        "idle delivery": delivery,
        "timer interrupt": stretch(ran, waking.t) - delivery,
        "idle wakeup": stretch(waking.t, on_cpu.t) - sum(stretch(p, q) for p, q in held),
        "run queue": run_queue,
        "on CPU → sys_exit": stretch(on_cpu.t, exit_.t),
    }
    instants = {"soft": soft, "ran": ran, "waking": waking.t, "on CPU": on_cpu.t,
                "sys_exit": exit_.t, "timer": arm.f["fn"], "preempted": bool(preempted),
                "blocked": block is not None}
    return parts, instants, None


def evidence_lines(tr, tid, start, end):
    """The text-trace lines of a wake's window that concern it: its thread's own events,
    and the expiries, wakings, switches, interrupts and idle states on the CPUs it ran
    and woke on."""
    cpus = {e.cpu for e in tr.within(("start", tid), start, end)}
    cpus |= {e.cpu for e in tr.within(("waking", tid), start, end)}
    keys = [("start", tid), ("out_sleep", tid), ("out_run", tid), ("in", tid), ("waking", tid),
            ("exit", tid)] + [(k, c) for c in sorted(cpus) for k in ("cpu", "switch", "idle cpu")]
    evs = {e.seq: e for k in keys for e in tr.within(k, start, end)}
    return [evs[s].line for s in sorted(evs)]
