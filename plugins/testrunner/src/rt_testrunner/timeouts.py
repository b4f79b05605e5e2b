"""Time-outs for synchronous test code.

An async test is cancelled through anyio (``move_on_after``). A synchronous one cannot be cancelled that way,
and running every sync test in a worker thread would cost more than the tests themselves (and the thread of a
test that loops forever could never be stopped). So the runner arms ``SIGALRM`` (``signal.setitimer``) around
each synchronous call: the handler raises :class:`TestTimeout` into the test's own frame, which stops
``while True: pass`` and a long ``time.sleep`` alike, and the run continues with the next test.
Only possible on the main thread of a POSIX process; elsewhere sync code runs without a time-out. That is why
the runner sends the sync hooks of tests running in the event loop's thread (async tests of a concurrent group)
back to the main thread to run (``runner._MainThreadCalls``) instead of calling them in the loop.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType


class TestTimeout(BaseException):
    """Raised into a test that ran past its time-out. A BaseException so ``except Exception`` in the
    test's own code cannot swallow it."""

    __test__ = False


_state = {"armed": False}


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _state["armed"]:
        _state["armed"] = False
        raise TestTimeout()


def alarms_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def installed() -> Iterator[bool]:
    """Install the SIGALRM handler for the duration of a run; yields whether sync time-outs work."""
    if not alarms_available():
        yield False
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def alarm(seconds: float, enabled: bool) -> Iterator[None]:
    """Raise :class:`TestTimeout` in this thread if the block runs longer than ``seconds``."""
    if not enabled:
        yield
        return
    _state["armed"] = True
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-4))
    try:
        yield
    finally:
        _state["armed"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def inner_alarm(seconds: float) -> Iterator[bool]:
    """Raise :class:`TestTimeout` if the block runs longer than ``seconds``, inside the alarm running now
    (pytest-timeout's ``func_only``: the test's call alone is timed, within the whole test's time): the outer
    alarm is stopped meanwhile and armed again for what is left of it. Yields whether the alarm is armed
    (only on the main thread, with rt's handler installed)."""
    if not alarms_available() or signal.getsignal(signal.SIGALRM) is not _on_alarm:
        yield False
        return
    outer = _state["armed"]
    left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    started = time.monotonic()
    _state["armed"] = True
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-4))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _state["armed"] = outer
        if outer and left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - started), 1e-4))


def is_armed() -> bool:
    """An :func:`alarm` is running on this (the main) thread."""
    return _state["armed"] and threading.current_thread() is threading.main_thread()


def disarm() -> None:
    """Stop the running alarm for a while (an event loop run on the main thread: main_loops.py)."""
    _state["armed"] = False
    signal.setitimer(signal.ITIMER_REAL, 0)


def rearm(seconds: float) -> None:
    """Arm the alarm :func:`disarm` stopped again, for what is left of its time."""
    _state["armed"] = True
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-4))
