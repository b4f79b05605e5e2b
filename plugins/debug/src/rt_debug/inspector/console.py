"""``print`` and ``logging`` as ``Console.messageAdded`` events, while the output still goes where it went.

``sys.stdout`` and ``sys.stderr`` are wrapped by a tee that passes every write through unchanged and sends each
complete line to the client (stdout as ``log``, stderr as ``error``). A logging handler on the root logger
sends records with their level; when it is the only handler a record meets, it also does what Python's
``logging.lastResort`` would have done, so the program's own output does not change because a client is there.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

Emit = Callable[[str, str, int, str, str], None]  # (level, text, line, url, function)
_quiet = threading.local()  # set while the handler writes through lastResort: that line is already sent
_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning"}


def _caller_position() -> tuple[int, str, str]:
    """(1-based line, file, function) of the code that wrote, skipping this module and the logging machinery."""
    frame: Any = sys._getframe(2)
    while frame is not None and (
        frame.f_code.co_filename == __file__ or "logging" in frame.f_code.co_filename
    ):
        frame = frame.f_back
    if frame is None:
        return 0, "", ""
    return frame.f_lineno or 0, frame.f_code.co_filename, frame.f_code.co_qualname


class Tee:
    """A text stream that writes through to ``wrapped`` and reports complete lines to ``emit``."""

    def __init__(self, wrapped: TextIO, level: str, emit: Emit) -> None:
        self._wrapped = wrapped
        self._level = level
        self._emit = emit
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        written = self._wrapped.write(text)
        if getattr(_quiet, "active", False) or not isinstance(text, str):
            return written
        with self._lock:
            self._pending += text
            if "\n" not in self._pending:
                return written
            *lines, self._pending = self._pending.split("\n")
        line, url, function = _caller_position()
        for complete in lines:
            self._emit(self._level, complete, line, url, function)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)


class ConsoleHandler(logging.Handler):
    def __init__(self, emit: Emit) -> None:
        super().__init__(logging.DEBUG)
        self._emit = emit

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        except Exception:  # noqa: BLE001 - a bad format string is logging's problem, not the debugger's
            return
        level = _LEVELS.get(record.levelno, "error" if record.levelno > logging.WARNING else "debug")
        self._emit(level, text, record.lineno, record.pathname, record.funcName)
        if self._alone(record):
            _quiet.active = True
            try:
                resort = logging.lastResort
                if resort is not None and record.levelno >= resort.level:
                    resort.handle(record)
            finally:
                _quiet.active = False

    def _alone(self, record: logging.LogRecord) -> bool:
        """True when no other handler will see ``record``: python would have used logging.lastResort."""
        logger: logging.Logger | None = logging.getLogger(record.name)
        while logger is not None:
            if any(handler is not self for handler in logger.handlers):
                return False
            if not logger.propagate:
                return False
            logger = logger.parent
        return True


class Console:
    """Installs and removes the tee and the handler; ``emit`` gets each message."""

    def __init__(
        self, send_event: Callable[[str, dict[str, Any]], None], script_id: Callable[[str], str]
    ) -> None:
        self._send_event = send_event
        self._script_id = script_id
        self._handler = ConsoleHandler(self._emit)
        self._saved: tuple[Any, Any] | None = None

    def _emit(self, level: str, text: str, line: int, url: str, function: str) -> None:
        self._send_event(
            "Console.messageAdded",
            {
                "message": {
                    "source": "console-api",
                    "level": level,
                    "text": text,
                    "type": "log",
                    "line": line,
                    "column": 1,
                    "url": url,
                    "repeatCount": 1,
                    "timestamp": time.time(),
                    "parameters": [{"type": "string", "value": text}],
                    "stackTrace": {
                        "callFrames": [
                            {
                                "functionName": function,
                                "url": url,
                                "scriptId": self._script_id(url) if url else "0",
                                "lineNumber": max(line - 1, 0),
                                "columnNumber": 0,
                            }
                        ]
                    },
                }
            },
        )

    def install(self) -> None:
        if self._saved is not None:
            return
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = Tee(sys.stdout, "log", self._emit)
        sys.stderr = Tee(sys.stderr, "error", self._emit)
        logging.getLogger().addHandler(self._handler)

    def remove(self) -> None:
        if self._saved is None:
            return
        if isinstance(sys.stdout, Tee):
            sys.stdout = self._saved[0]
        if isinstance(sys.stderr, Tee):
            sys.stderr = self._saved[1]
        self._saved = None
        logging.getLogger().removeHandler(self._handler)
