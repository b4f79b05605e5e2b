"""How an ``rt test`` process ends: ``gc.freeze()`` just before the interpreter's teardown; the freeze of
rt's start-up (:func:`freeze_start_up`) before the first test file; and rarer young collections from the
start of the run to its first test (:func:`relax_collector`).

At exit, Python clears every module and runs full garbage collections over every object still alive: the
suite's modules, pytest's, rt's. Those collections were most of the teardown's cost, 0.05-0.09 s of CPU at
the end of a run of pluggy's or toolz's suite (10-15% of the whole run), and a forked ``--parallel`` worker
paid more, since each collection writes to pages it shares with the zygote. Freezing first (moving every
object to the permanent generation, which collections skip) removes that cost and keeps the rest of the
teardown: modules are still cleared, and every object freed then by reference counting is finalized as
before (a file a test left open in a module global is flushed and closed, a ``NamedTemporaryFile`` there
deletes its file). What is left out is collecting reference cycles still alive at exit, whose ``__del__``
Python never promised to run at exit ("It is not guaranteed that __del__() methods are called for objects
that still exist when the interpreter exits", the data model's documentation).

It is an ``atexit`` handler, so it runs only when the process really exits, and it is registered when the
run starts: ``atexit`` runs handlers in reverse order, so those the tests register run before it, with the
collector still at work.
"""

from __future__ import annotations

import atexit
import gc
import sys

_registered = False


def freeze_at_exit() -> None:
    """Register the freeze, once per process."""
    global _registered
    if not _registered:
        _registered = True
        atexit.register(_freeze)


def _freeze() -> None:
    """Freeze, keeping every module alive to the end: the teardown clears the globals of the modules still
    alive, which finalizes what they hold (a file a test module left open is flushed and closed). A module that
    nothing else holds would be freed when it leaves ``sys.modules`` while its globals, kept by their
    functions' reference cycle, would then never be cleared, since the collector no longer looks at them."""
    kept: list[object] = list(sys.modules.values())
    kept.append(kept)  # a cycle: frozen below, it is never collected
    gc.freeze()


def freeze_start_up() -> None:
    """Move what rt's start-up made (the kernel, rt's modules and classes, the parsed command line) to the
    permanent generation, just before the first test file is imported: it all lives to the end of the run,
    and every full collection while pytest is imported and the tests run would traverse it again. That was
    11 M instructions of a one-test run that imports pytest, and 25 M of toolz's suite (callgrind,
    docs/benchmarks.md). Only rt's own objects are frozen: what the suite creates afterwards is collected
    as before (and the collector stays on). The names of the modules imported so far are kept: a warm server
    started at the end of the run imports those of rt (rt_testrunner.warm_server), and freezes them as here.
    In that server's children rt's start-up is frozen already, and pytest and the installed plugins, which
    the server imported after it, must not be (they are not in a cold run)."""
    global START_UP_MODULES
    START_UP_MODULES = list(sys.modules)
    if not START_UP_FROZEN:
        gc.freeze()


#: the modules imported when rt's start-up was frozen (:func:`freeze_start_up`)
START_UP_MODULES: list[str] = []
#: True in a warm server's child (rt_testrunner.warm_server), where it is frozen already
START_UP_FROZEN = False


#: allocations between two young collections from the start of ``rt test`` to its first test (Python's: 700)
START_UP_THRESHOLD = 50_000
#: the collector's thresholds before :func:`relax_collector`, and those it set, while they are relaxed
_RELAXED: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = []


def relax_collector() -> None:
    """Young collections every 50,000 allocations instead of 700, until :func:`restore_collector` (before the
    first test runs). rt's start-up, ``import pytest``, the plugins, conftest.py files and the test modules
    allocate objects that nearly all live to the end of the run, and each young collection traversed the new
    ones again: 11 M instructions of a one-test run that imports pytest (943 M), 17 M of 2,000 trivial tests,
    6 M of toolz's suite (callgrind, docs/benchmarks.md "Speed (session 15)"). Only the collector's timing
    changes, and only before the tests: reference cycles made meanwhile are collected later, and at most
    50,000 new objects wait for it (not the collector off: a suite's collection may make garbage without
    bound). Nothing when the collector is off or already rarer than that."""
    if _RELAXED:
        return
    before = gc.get_threshold()
    if before[0] == 0 or before[0] >= START_UP_THRESHOLD:
        return
    relaxed = (START_UP_THRESHOLD, before[1], before[2])
    gc.set_threshold(*relaxed)
    _RELAXED.append((before, relaxed))


def restore_collector() -> None:
    """The thresholds of before :func:`relax_collector` back, before the first test runs: the tests see the
    interpreter's own, as under pytest; thresholds the suite's code set meanwhile (a conftest.py calling
    ``gc.set_threshold``) are left as it set them."""
    if not _RELAXED:
        return
    before, relaxed = _RELAXED.pop()
    if gc.get_threshold() == relaxed:
        gc.set_threshold(*before)
