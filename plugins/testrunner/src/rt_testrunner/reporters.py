"""The console and dots reporters: what ``rt test`` prints, in the reference runtime's format.

Both only consume :mod:`rt.events` events, like any third-party reporter. Output goes to stderr (result
lines and summary alike), buffered per file so 5,000 passing tests do not cost 5,000 writes.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Sequence
from typing import TextIO

from rt.events import (
    FileFinished,
    FileStarted,
    RunFinished,
    SnapshotCounts,
    TestEvent,
    TestFinished,
    TestStatus,
)
from rt.interfaces import ReporterOptions

_COLORS = {
    "pass": "\x1b[32m",
    "fail": "\x1b[31m",
    "skip": "\x1b[33m",
    "todo": "\x1b[35m",
    "dim": "\x1b[2m",
    "xfail": "\x1b[33m",
    "xpass": "\x1b[33m",
    "error": "\x1b[31m",
}
_RESET = "\x1b[0m"


class ReportWriteError(Exception):
    """A reporter could not write its output file; ``rt test`` prints this and exits 1. Defined here, not
    next to the JUnit reporter, so catching it does not import that module (start-up time is measured)."""


def format_ms(seconds: float) -> str:
    return f"[{seconds * 1000:.2f}ms]"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def snapshot_line(counts: SnapshotCounts) -> str | None:
    """The reference's ``snapshots: 2 passed, 1 added`` (``+3 added`` when only added); rt adds updated,
    obsolete and removed. ``None`` when every snapshot passed: that count joins the expect() line."""
    parts: list[str] = []
    if counts.passed:
        parts.append(f"{counts.passed} passed")
    if counts.written:
        parts.append(f"{counts.written} added" if parts else f"+{counts.written} added")
    for count, word in (
        (counts.updated, "updated"),
        (counts.failed, "failed"),
        (counts.obsolete, "obsolete"),
        (counts.removed, "removed"),
    ):
        if count:
            parts.append(f"{count} {word}")
    if not parts or parts == [f"{counts.passed} passed"]:
        return None
    return "snapshots: " + ", ".join(parts)


#: the line pytest ends its "warnings summary" with
WARNINGS_DOCS = "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html"


def warnings_summary(listed: Sequence[tuple[str, str]], width: int = 80) -> str:
    """pytest's "warnings summary" section for the warnings of a pytest suite: one entry per distinct text, in
    the order first raised, under the node ids (or ``file:line``) that raised it (fewer than 10), else each
    file with its count, as pytest's terminal reporter writes it (a ``width`` of its terminal: 80 off one)."""
    grouped: dict[str, list[str]] = {}
    for where, text in listed:
        grouped.setdefault(text, []).append(where)
    title = " warnings summary "
    side = "=" * max((width - len(title)) // 2, 1)
    lines = [f"{side}{title}{side}"]
    for text, places in grouped.items():
        if len(places) < 10:
            lines += places
        else:
            per_file = collections.Counter(place.split("::", 1)[0] for place in places)
            lines += [
                f"{file}: {count} warning{'s' if count > 1 else ''}" for file, count in per_file.items()
            ]
        lines.append("\n".join(f"  {line}" for line in text.splitlines()).rstrip())
        lines.append("")
    lines.append(WARNINGS_DOCS)
    return "\n".join(lines) + "\n"


def summary_lines(event: RunFinished) -> list[str]:
    """The summary block (spec / REFERENCE.md): seed, bail notice, counts, the ``Ran N tests`` line."""
    lines: list[str] = []
    if event.bailed:
        lines.append(f"Bailed out after {plural(event.failed, 'failure')}")
    if event.seed is not None:
        lines.append(f" --seed={event.seed}")
    lines.append(f" {event.passed} pass")
    if event.skipped:
        lines.append(f" {event.skipped} skip")
    if event.todo:
        lines.append(f" {event.todo} todo")
    if event.filtered_out:
        lines.append(f" {event.filtered_out} filtered out")
    lines.append(f" {event.failed} fail")
    if event.errors:
        lines.append(f" {plural(event.errors, 'error')}")
    snapshots = snapshot_line(event.snapshots)
    if snapshots is not None:
        lines.append(snapshots)
    calls = f"{event.expect_calls} expect() calls" if event.expect_calls else ""
    if snapshots is None and event.snapshots.passed:
        lines.append(f" {event.snapshots.passed} snapshots" + (f", {calls}" if calls else ""))
    elif calls:
        lines.append(f" {calls}")
    if event.xfailed:
        lines.append(f" {event.xfailed} xfail")
    if event.xpassed:
        lines.append(f" {event.xpassed} xpass")
    if event.reruns:
        lines.append(f" {event.reruns} rerun")
    lines.extend(f" {number} {category}" for category, number in event.categories if number)
    if event.subtests_passed:
        lines.append(f" {event.subtests_passed} subtests passed")  # pytest 9's words, "1 subtests passed" too
    if event.warnings:
        lines.append(f" {plural(event.warnings, 'warning')}")  # pytest's "1 warning", "2 warnings"
    if event.interrupted and event.errors and not (event.passed or event.failed or event.xfailed):
        # pytest-style files that failed to collect: no test ran, as pytest's run stops there
        lines.insert(0, f"Interrupted: {plural(event.errors, 'error')} during collection")
    elif event.interrupted and event.interrupt_reason is not None:
        lines.insert(0, f"!!! {event.interrupt_reason} !!!")  # pytest.exit(msg): pytest's line, its reason
    elif event.interrupted:
        lines.insert(0, "Interrupted (KeyboardInterrupt in a test)")
    lines.append(
        f"Ran {plural(event.tests, 'test')} across {plural(event.files, 'file')}. {format_ms(event.duration)}"
    )
    return lines


class ConsoleReporter:
    """``(pass) outer > inner [1.23ms]`` lines under a ``path:`` header per file, failures in full."""

    def __init__(self, options: ReporterOptions) -> None:
        self.stream: TextIO = options.stream or sys.stderr
        self.colors = options.colors and not options.agent
        self.agent = options.agent
        self.buffer: list[str] = []
        self.header: str | None = None

    def _paint(self, kind: str, text: str) -> str:
        return f"{_COLORS[kind]}{text}{_RESET}" if self.colors else text

    def _write_header(self) -> None:
        if self.header is not None:
            self.buffer.append(f"\n{self.header}:")
            self.header = None

    def _flush(self) -> None:
        if self.buffer:
            self.stream.write("\n".join(self.buffer) + "\n")
            self.stream.flush()
            self.buffer.clear()

    def result_line(self, event: TestFinished) -> str:
        status = event.status.value
        suffix = ""
        if event.attempt > 1:
            suffix += f" (attempt {event.attempt})"
        if event.run > 1:
            suffix += f" (run {event.run})"
        timing = (
            ""
            if event.status in (TestStatus.SKIP, TestStatus.TODO, TestStatus.XFAIL)
            else " " + self._paint("dim", format_ms(event.duration))
        )
        return f"{self._paint(status, f'({status})')} {event.name}{suffix}{timing}"

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileStarted):
            self.header = event.file
            if not self.agent:
                self._write_header()
        elif isinstance(event, TestFinished):
            self.on_test(event)
        elif isinstance(event, FileFinished):
            if event.error is not None:
                self._write_header()
                self.buffer.append(f"error: {event.error.details}")
                crashed = event.error.kind == "WorkerCrashed"  # rt test --parallel: its worker died
                self.buffer.append(
                    f"(fail) {event.file} {'(worker crashed)' if crashed else 'failed to load'}"
                )
            self._flush()
        elif isinstance(event, RunFinished):
            self._flush()
            if event.warning_list:
                self.stream.write("\n" + warnings_summary(event.warning_list))
            self.stream.write("\n" + "\n".join(summary_lines(event)) + "\n")
            self.stream.flush()

    def on_test(self, event: TestFinished) -> None:
        if not event.counted:  # a quiet subtest's skip or xfail: pytest prints no letter or line for it
            return
        self.write_attempts(event)
        if event.status in (TestStatus.FAIL, TestStatus.ERROR):
            self._write_header()
            self.write_failure(event)
        elif not self.agent or event.earlier_failures:
            self.buffer.append(self.result_line(event))

    def write_attempts(self, event: TestFinished) -> None:
        """Each failed attempt of a retried test, before its final line (REFERENCE.md)."""
        for failure in event.earlier_failures:
            self._write_header()
            self.buffer.append(failure.details or failure.message)
            if failure.timed_out:
                self.buffer.append(f"  ^ {failure.message}")

    def write_failure(self, event: TestFinished) -> None:
        failure = event.failure
        if failure is not None and not failure.timed_out and failure.details:
            self.buffer.append(failure.details)
            where = failure.location
            if where is not None and where.file not in failure.details:
                self.buffer.append(f"      at {where.file}:{where.line}")
        self.buffer.append(self.result_line(event))
        if failure is not None and failure.timed_out:
            self.buffer.append(f"  ^ {failure.message}")
        self._flush()

    def close(self) -> None:
        self._flush()


class AgentReporter(ConsoleReporter):
    """Agent mode (REFERENCE.md): no colour, no pass/skip/todo lines, failures in full, the summary kept."""

    def __init__(self, options: ReporterOptions) -> None:
        super().__init__(options)
        self.agent = True
        self.colors = False


class DotsReporter(ConsoleReporter):
    """``--dots``: one ``.`` per pass/skip/todo; failures in full; the same summary."""

    def __init__(self, options: ReporterOptions) -> None:
        super().__init__(options)
        self.dots = 0

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileStarted):
            self.header = event.file
        elif isinstance(event, RunFinished) and self.dots:
            self.stream.write("\n")
            super().handle(event)
        else:
            super().handle(event)

    def on_test(self, event: TestFinished) -> None:
        if event.status in (TestStatus.FAIL, TestStatus.ERROR):
            if self.dots:
                self.stream.write("\n")
                self.dots = 0
            self._write_header()
            self.write_attempts(event)
            self.write_failure(event)
            return
        self.stream.write(".")
        self.dots += 1

    def close(self) -> None:
        super().close()
