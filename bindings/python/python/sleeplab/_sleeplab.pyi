"""Type stubs for the native module sleeplab._sleeplab (see sleeplab/__init__.py)."""

from typing import Literal, Optional, Union, final

Missed = Literal["skip", "burst", "delay"]

#: The package's version: the Rust crate's (Cargo.toml), as pyproject.toml takes it.
__version__: str

#: The longest coarse sleep between two signal checks, ns (Ctrl-C is seen within it).
SLICE_NS: int
#: The keyword options PreciseSleeper and Ticker accept: the Rust library's option table.
OPTIONS: list[str]
#: The default of every option (durations in seconds): the Rust library's defaults.
DEFAULTS: dict[str, object]

def sleep(seconds: float) -> None:
    """Sleep `seconds` precisely, never returning early.

    A native sleep to the deadline minus a learned margin, then a short spin. Releases the
    GIL while waiting; Ctrl-C raises KeyboardInterrupt within about 50 ms. Raises
    ValueError for negative, NaN or infinite lengths, OverflowError beyond 2**64 ns. Uses
    one sleeper per thread, which sets that thread's timer slack to 1 ns on first use.
    """

def sleep_until(t: float) -> None:
    """Sleep until `t`, seconds on time.monotonic()'s clock (CLOCK_MONOTONIC), rounded up
    to the nanosecond. A time in the past returns at once; NaN or infinity raise
    ValueError."""

def sleep_until_ns(deadline_ns: int) -> None:
    """Sleep until `deadline_ns` on time.monotonic_ns()'s clock (exact integers)."""

def last_report() -> Optional[SleepReport]:
    """The SleepReport of this thread's last sleep, sleep_until or sleep_until_ns (None
    before the first): the margin it planned, its native oversleep, its spin and its own
    wake reading (compare with a time.monotonic_ns() read after the call to see the
    return path). An interrupted wait leaves the previous report."""

def _duration_ns(seconds: float) -> int:
    """`seconds` as the nanoseconds `sleep` would wait (rounded up), with its errors."""

def _deadline_ns(t: float) -> int:
    """`t` (time.monotonic() seconds) as the ns deadline `sleep_until` would wait for."""

def _direct_zero_sleeps_ns(n: int) -> int:
    """Benchmark helper: total ns of `n` zero-length sleeps called directly in Rust."""

def _warm_lead_ns(durations_ns: list[int]) -> int:
    """Test helper: how long before its deadline a wait warms the way back into Python,
    ns, after warm-ups that took `durations_ns` (oldest first)."""

def _option_samples() -> list[tuple[str, object, bool]]:
    """Test helper: (option, value, accepted) for each end of every option's range and
    the values beyond them, in Python's forms."""

def _option_kinds() -> list[tuple[str, str, list[str]]]:
    """Test helper: (option, kind, words) for every option: kind is "choice", "duration",
    "count", "number" or "budget"; words are a choice's, in the order of C's values."""

def _stub_options() -> str:
    """Test helper: the keyword lines of PreciseSleeper and Ticker in these stubs."""

@final
class SleepReport:
    """What one sleep did, in integer nanoseconds on time.monotonic_ns()'s clock."""

    start_ns: int
    deadline_ns: int
    #: The first clock read at or after the deadline.
    woke_ns: int
    #: woke_ns - deadline_ns, never negative.
    lateness_ns: int
    #: Time sleeping natively (coarse slices included).
    native_ns: int
    #: Time spinning before the deadline.
    spin_ns: int
    #: How far the last native sleep overslept its target; None without a native phase.
    native_oversleep_ns: Optional[int]
    #: The margin the precise phase planned to spin.
    margin_ns: int
    #: The margin the learned quantile called for, before the CPU budget and the
    #: contended regimes cut it to margin_ns.
    wanted_margin_ns: int
    #: True when the CPU budget cut the margin below wanted_margin_ns.
    budget_limited: bool
    @property
    def lateness(self) -> float:
        """lateness_ns in seconds."""

@final
class SleepStats:
    """Running totals over a sleeper's sleeps."""

    count: int
    total_lateness_ns: int
    max_lateness_ns: int
    mean_lateness_ns: float
    #: Sum of the spin phases: roughly the CPU the sleeper burned.
    total_spin_ns: int
    total_native_ns: int
    native_sleeps: int
    #: Native wakeups beyond the estimator's cap: counted, not learned (host stalls).
    stalls: int
    #: Sleeps whose margin the CPU budget cut below what the learned quantile called for.
    budget_limited: int
    #: Of those, the largest margin the quantile called for, ns, and that sleep's length.
    wanted_margin_ns: int
    wanted_wait_ns: int
    #: The CPU budget that would have covered them, percent of each sleep (cpu_budget=
    #: takes it); None when no sleep was limited.
    budget_wanted_percent: Optional[float]

@final
class Tick:
    """One tick of a Ticker."""

    #: 0-based number of this tick.
    index: int
    #: When it was due (start + k*period), ns.
    scheduled_ns: int
    woke_ns: int
    #: woke_ns - scheduled_ns.
    lateness_ns: int
    #: Ticks missed at this tick.
    missed: int
    #: The sleep behind this tick.
    sleep: SleepReport
    @property
    def lateness(self) -> float:
        """lateness_ns in seconds."""
    @property
    def scheduled(self) -> float:
        """scheduled_ns in seconds (comparable with time.monotonic())."""

@final
class PreciseSleeper:
    """A precise sleeper with its own learned margin and statistics.

    The options are the Rust library's option table (OPTIONS; defaults in DEFAULTS),
    durations in seconds or as a string such as "250us"; `cpu_budget` is "auto", "none"
    (unlimited) or a percentage of each wait; a value out of range raises ValueError.
    Building it applies `timer_slack` and `sched_slice` ("short": ask the scheduler for a
    100 µs slice, so a wakeup preempts a busy thread at once; "inherit": leave it) to the
    calling thread, which owns it: a call from any other thread raises RuntimeError ("the
    object belongs to another thread", the C library's words). The GIL is released during
    the native sleep and held through the final spin (at most the margin), so taking it
    back does not come after the deadline.
    """

    def __init__(
        self,
        *,
        # <options> generated from sleeplab::precise::OPTIONS (tests/test_package.py)
        quantile: float = 0.99,
        cap: Union[float, str] = 0.05,
        window: int = 512,
        lateness_tolerance: Union[float, str] = 0.0,
        cpu_budget: Union[Literal["auto", "none"], float] = "auto",
        early_tolerance: Union[float, str] = 0.0,
        spin: Literal["pause", "yield"] = "pause",
        contention: Literal["adapt", "ignore"] = "adapt",
        host: Literal["adapt", "ignore"] = "adapt",
        sched_slice: Literal["short", "inherit"] = "short",
        prior: Union[float, str] = 0.0002,
        half_life: int = 8,
        headroom: Union[float, str] = 1e-05,
        timer_slack: Literal["minimal", "leave"] = "minimal",
        # </options>
    ) -> None: ...
    def sleep(self, seconds: float) -> SleepReport:
        """Sleep `seconds` precisely (see sleeplab.sleep)."""
    def sleep_until(self, t: float) -> SleepReport:
        """Sleep until `t` on time.monotonic()'s clock."""
    def sleep_until_ns(self, deadline_ns: int) -> SleepReport:
        """Sleep until `deadline_ns` on time.monotonic_ns()'s clock."""
    def stats(self) -> SleepStats:
        """Running statistics since creation or reset_stats()."""
    def reset_stats(self) -> None:
        """Clear the statistics (the learned margin is kept)."""
    @property
    def margin(self) -> float:
        """The margin the next sleep will spin before its deadline, seconds."""
    @property
    def margin_ns(self) -> int: ...
    @property
    def timer_slack_ns(self) -> Optional[int]:
        """The creating thread's timer slack read after building, ns."""

@final
class Ticker:
    """A drift-free periodic schedule: tick k is due at start + k*period, the first at once.

    `missed` decides what follows a tick a whole period late: "skip" (the default, the
    one for a frame loop; unlike tokio, whose default is Burst) drops the missed ticks and
    keeps the grid, "burst" fires them at once until caught up, "delay" restarts the
    schedule from the late tick. Iterating never ends; waits release the GIL and honour
    Ctrl-C. It belongs to the thread that created it: a call from any other thread raises
    RuntimeError.
    """

    def __init__(
        self,
        period: float,
        missed: Missed = "skip",
        *,
        # <options> generated from sleeplab::precise::OPTIONS (tests/test_package.py)
        quantile: float = 0.99,
        cap: Union[float, str] = 0.05,
        window: int = 512,
        lateness_tolerance: Union[float, str] = 0.0,
        cpu_budget: Union[Literal["auto", "none"], float] = "auto",
        early_tolerance: Union[float, str] = 0.0,
        spin: Literal["pause", "yield"] = "pause",
        contention: Literal["adapt", "ignore"] = "adapt",
        host: Literal["adapt", "ignore"] = "adapt",
        sched_slice: Literal["short", "inherit"] = "short",
        prior: Union[float, str] = 0.0002,
        half_life: int = 8,
        headroom: Union[float, str] = 1e-05,
        timer_slack: Literal["minimal", "leave"] = "minimal",
        # </options>
    ) -> None: ...
    def tick(self) -> Tick:
        """Wait for the next tick (never before it is due) and return it."""
    def __iter__(self) -> Ticker: ...
    def __next__(self) -> Tick: ...
    def reset(self, start: Optional[float] = None) -> None:
        """Restart the grid at `start` (time.monotonic() seconds; default now)."""
    def stats(self) -> SleepStats: ...
    @property
    def margin(self) -> float: ...
    @property
    def period(self) -> float: ...
    @property
    def period_ns(self) -> int: ...
    @property
    def missed(self) -> Missed: ...
    @missed.setter
    def missed(self, value: Missed) -> None: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def next_ns(self) -> int: ...
    @property
    def ticks(self) -> int: ...
    @property
    def missed_ticks(self) -> int: ...
