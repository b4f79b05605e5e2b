"""A one-line progress indicator for long runs on a terminal: ``[3/12 files] 41 pass 1 fail 3.2s  a.test.py``.

It is the built-in reporter ``progress``, on only when stderr is a terminal and neither agent mode nor CI is on
(rule in :mod:`rt_testrunner.plugin`). It appears once a run has lasted :data:`DELAY` seconds, so short runs
print exactly what they always did. The other terminal reporters write through :attr:`ProgressReporter.stream`,
which erases the status line before their text, so the line never ends up in the middle of the output.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, TextIO

from rt.events import FileStarted, RunFinished, RunStarted, TestEvent, TestFinished, TestStarted, TestStatus
from rt.interfaces import ReporterOptions

DELAY = 1.0  # seconds before the line first appears
INTERVAL = 0.1  # seconds between redraws
_ERASE = "\r\x1b[2K"


class _ClearingStream:
    """stderr as the other reporters see it: erases the status line before anything is written."""

    def __init__(self, stream: TextIO, owner: ProgressReporter) -> None:
        self._stream = stream
        self._owner = owner

    def write(self, text: str) -> int:
        if text:
            self._owner.erase()
        return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return _isatty(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressReporter:
    def __init__(self, options: ReporterOptions) -> None:
        self._out: TextIO = options.stream or sys.stderr
        self.stream = _ClearingStream(self._out, self)
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.drawn = False
        self.files_total = 0
        self.files_done = 0
        self.current = ""
        self.counts = {status: 0 for status in TestStatus}
        self.delay = DELAY

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, RunStarted):
            self.started = time.monotonic()
            self.files_total = len(event.files)
        elif isinstance(event, FileStarted):
            self.files_done += 1
            self.current = event.file
        elif isinstance(event, TestStarted):
            self.current = f"{event.file} > {' > '.join(event.path)}"
        elif isinstance(event, TestFinished) and event.counted:
            self.counts[event.status] += 1
        elif isinstance(event, RunFinished):
            self.erase()
            return
        self._maybe_draw()

    def status_line(self, now: float) -> str:
        parts = [f"[{self.files_done}/{self.files_total} files]", f"{self.counts[TestStatus.PASS]} pass"]
        for status in (TestStatus.SKIP, TestStatus.TODO):
            if self.counts[status]:
                parts.append(f"{self.counts[status]} {status.value}")
        parts.append(f"{self.counts[TestStatus.FAIL]} fail")
        parts.append(f"{now - self.started:.1f}s")
        line = " ".join(parts) + (f"  {self.current}" if self.current else "")
        width = shutil.get_terminal_size((80, 24)).columns - 1
        return line if len(line) <= width else line[: max(0, width - 1)] + "…"

    def _maybe_draw(self) -> None:
        now = time.monotonic()
        if now - self.started < self.delay or now - self.last_draw < INTERVAL:
            return
        self.last_draw = now
        self._out.write(_ERASE + self.status_line(now))
        self._out.flush()
        self.drawn = True

    def erase(self) -> None:
        if self.drawn:
            self.drawn = False
            self._out.write(_ERASE)

    def close(self) -> None:
        self.erase()
        self._out.flush()
