"""Part of the Python probe (probe.py imports it): the roundings and clamps each of
Python's waits applies to a requested duration, as the comment lines of a cell."""

import sys


def notes_for(method, d):
    """Comment lines on a rounding or clamp this runtime applies to duration d."""
    notes = []
    if method == "time.sleep":
        if (sys.implementation.name == "cpython" and sys.version_info < (3, 11)
                and sys.platform != "win32" and d % 1000):
            notes.append("CPython < 3.11 time.sleep uses select(): the timeout is "
                         "rounded up to whole microseconds")
    elif method in ("threading.Event.wait", "select.select"):
        if d % 1000:
            notes.append("%s converts the timeout to whole microseconds, rounding up"
                         % method)
    elif method == "asyncio.sleep":
        if d == 0:
            notes.append("asyncio.sleep(0) is a bare yield to the event loop (no timer)")
        else:
            import selectors
            sel = selectors.DefaultSelector.__name__
            if sel in ("EpollSelector", "PollSelector", "DevpollSelector"):
                notes.append("asyncio: %s.select rounds the wait (deadline - now) up to "
                             "whole milliseconds" % sel)
    return notes
