"""The floor of a suite: the CPU time of its own work, which no runner can remove. Used by bench/realsuites.py.

    cd SUITE && python /path/to/bench/suite_floor.py   (prints one JSON line)

Runs ``rt test`` in this process with two kinds of calls timed (``time.process_time``, this process's CPU):
importing the suite's files (conftest.py files, test modules and everything they import, pytest included
when the suite imports it) and running each test (its fixtures' set-up and teardown, its body, unittest's
setUp/tearDown and subtests). What rt does around them (start-up, collection, capture, reporting) is
what is left out. The floor is then a bare interpreter's start-up plus those two sums: what a runner that
cost nothing would take. A suite whose floor is above a third of pytest's time cannot meet 0.33x.

The tests run inside rt's process, so work that grows with the number of loaded modules (freezegun scans
every module at each ``freeze_time``) is counted with rt's modules loaded: a slight over-estimate there.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

_spent = {"imports": 0.0, "tests": 0.0}
_depth = [0]


def _timed(kind: str, function: Any) -> Any:
    """``function`` with its CPU time added to ``_spent[kind]`` (outermost call only: imports nest)."""

    def sync(*args: Any, **kwargs: Any) -> Any:
        if _depth[0]:
            return function(*args, **kwargs)
        _depth[0] += 1
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            _spent[kind] += time.process_time() - started
            _depth[0] -= 1

    async def asynchronous(*args: Any, **kwargs: Any) -> Any:
        # a test's coroutine: timed around each step, so time spent suspended in the loop is not counted
        coroutine = function(*args, **kwargs)
        result: Any = None
        error: BaseException | None = None
        while True:
            started = time.process_time()
            try:
                awaited = coroutine.throw(error) if error is not None else coroutine.send(result)
            except StopIteration as stop:
                _spent[kind] += time.process_time() - started
                return stop.value
            _spent[kind] += time.process_time() - started
            try:
                result, error = await _Yield(awaited), None
            except BaseException as exc:  # noqa: BLE001 - handed back to the coroutine
                result, error = None, exc

    return asynchronous if kind == "tests" else sync


class _Yield:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        return (yield self.value)


def main() -> int:
    from rt_testrunner import collect, importing, pyruntest, rewrite

    importing.import_path = _timed("imports", importing.import_path)
    collect.load_test_module = _timed("imports", rewrite.load_test_module)
    pyruntest.run_item = _timed("tests", pyruntest.run_item)
    from rt.cli import main as rt_main

    started = time.process_time()
    try:
        status = rt_main(["test"])
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    total = time.process_time() - started
    sys.__stdout__.write(json.dumps({**_spent, "rt_total": total, "status": status}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
