"""``terminalreporter.stats``: the run's reports by outcome, as plugins read them at the end of the session.

pytest's terminal reporter files every report under its category (``passed``, ``failed``, ``skipped``,
``xfailed``, ``xpassed``, ``error``) as the run goes; plugins read that dictionary in
``pytest_terminal_summary`` and ``pytest_unconfigure`` (pytest-md-report's table of outcomes per test, summary
lines that count the failures). rt reports through its own reporters, so it makes that dictionary from its
results when the session ends: one ``TestReport`` per result, made only when a plugin reads the dictionary
(a suite with hypothesis's or pytest-cov's summary hook installed pays nothing for it). Under ``--parallel``
the results are the whole run's, which the main process hands to the worker that ends the session last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from rt.events import TestFinished, TestStatus

#: rt's status -> (pytest's category in ``stats``, the report's outcome, the phase it is reported for)
_CATEGORIES = {
    TestStatus.PASS: ("passed", "passed", "call"),
    TestStatus.FAIL: ("failed", "failed", "call"),
    TestStatus.ERROR: ("error", "failed", "setup"),
    TestStatus.SKIP: ("skipped", "skipped", "setup"),
    TestStatus.XFAIL: ("xfailed", "skipped", "call"),
    TestStatus.XPASS: ("xpassed", "passed", "call"),
}

#: the suffix of the name of a test's own teardown result (runner.py): pytest's report of that phase
_TEARDOWN = " [teardown]"


class LazyStats(dict[str, list[Any]]):
    """A dictionary that fills itself on first read: the reports are made only for a plugin that looks."""

    def __init__(self, fill: Callable[[dict[str, list[Any]]], None]) -> None:
        super().__init__()
        self._fill: Callable[[dict[str, list[Any]]], None] | None = fill

    def _filled(self) -> None:
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)

    def __getitem__(self, key: str) -> list[Any]:
        self._filled()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._filled()
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        self._filled()
        return super().__iter__()

    def __len__(self) -> int:
        self._filled()
        return super().__len__()

    def __repr__(self) -> str:
        self._filled()
        return super().__repr__()

    def get(self, key: str, default: Any = None) -> Any:
        self._filled()
        return super().get(key, default)

    def items(self) -> Any:
        self._filled()
        return super().items()

    def keys(self) -> Any:
        self._filled()
        return super().keys()

    def values(self) -> Any:
        self._filled()
        return super().values()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._filled()
        return super().setdefault(key, default)

    def copy(self) -> dict[str, list[Any]]:
        self._filled()
        return dict(super().items())


def attach(reporter: Any, results: Callable[[], Sequence[TestFinished]]) -> None:
    """Give pytest's terminal reporter (or a plugin's in its place) ``stats`` made from ``results`` when read."""
    if reporter is None:
        return
    try:
        reporter.stats = LazyStats(lambda stats: _fill(stats, results()))
    except AttributeError:  # a reporter that does not let its stats be replaced keeps its own
        return


def _fill(stats: dict[str, list[Any]], results: Iterable[TestFinished]) -> None:
    for category, report in _reports(results):
        stats.setdefault(category, []).append(report)


def _reports(results: Iterable[TestFinished]) -> Iterator[tuple[str, Any]]:
    """Each result's category and pytest ``TestReport`` (not the failed hooks' results nor subtests')."""
    from _pytest.reports import TestReport

    for event in results:
        found = _CATEGORIES.get(event.status)
        if found is None or event.hook is not None or event.subtest_of:
            continue
        category, outcome, when = found
        path = event.path
        if path and path[-1].endswith(_TEARDOWN):
            path = (*path[:-1], path[-1].removesuffix(_TEARDOWN))
            when = "teardown"
        nodeid = "::".join((event.file, *path))
        line = event.location.line - 1 if event.location is not None and event.location.line else None
        location = (event.file, line, ".".join(path))
        longrepr: Any = None
        if event.failure is not None:
            longrepr = event.failure.details or event.failure.message
        elif outcome == "skipped" and event.status is TestStatus.SKIP:
            longrepr = (event.file, (line or 0) + 1, f"Skipped: {event.reason}")
        extra: dict[str, Any] = {}
        if event.status in (TestStatus.XFAIL, TestStatus.XPASS):
            extra["wasxfail"] = event.reason
        sections = [(f"Captured stdout {when}", event.output)] if event.output else []
        report = TestReport(
            nodeid,
            location,
            {},
            outcome,  # type: ignore[arg-type]
            longrepr,
            when,  # type: ignore[arg-type]
            sections=sections,
            duration=event.duration,
            user_properties=list(event.properties),
            **extra,
        )
        yield category, report
