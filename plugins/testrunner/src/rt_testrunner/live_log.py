"""pytest's live logging (``log_cli = true`` or ``--log-cli-level``): log records shown on the terminal as they
are emitted, while the tests run, not only with a failure.

As pytest's logging plugin: a handler on the root logger at ``log_cli_level`` (else ``log_level``; with
neither, the loggers' own levels decide, so the root's WARNING), records formatted with ``log_cli_format`` /
``log_cli_date_format`` (else ``log_format`` / ``log_date_format``, else pytest's default format), and a
``live log <phase>`` separator line before the first record of each phase of a test (setup, call, teardown),
the records outside a test under ``live log`` alone. The records still join the test's captured log. The
records go to stdout, where pytest's terminal reporter writes them (rt's own report is on stderr), through
the copies of the descriptors that capture keeps, so live records are never captured themselves.
"""

from __future__ import annotations

import sys
from typing import Any

from rt_testrunner import capture
from rt_testrunner.pyconfig import PytestConfig

#: pytest's default log format and the width of its separator lines off a terminal
DEFAULT_FORMAT = capture.LOG_FORMAT
_WIDTH = 80


def separator(title: str, width: int = _WIDTH) -> str:
    """pytest's ``----- title -----`` line, ``width`` characters at most."""
    fill = "-" * max((width - len(title) - 2) // 2, 1)
    line = f"{fill} {title} {fill}"
    return line + "-" if len(line) + 1 <= width else line


class LiveLog:
    """The live logging of one session: a handler added to the root logger once ``logging`` is imported."""

    def __init__(self, config: PytestConfig) -> None:
        self.level = config.log_cli_level
        values = config.values
        self.format = str(values.get("log_cli_format") or values.get("log_format") or DEFAULT_FORMAT)
        date_format = values.get("log_cli_date_format") or values.get("log_date_format")
        self.date_format = str(date_format) if date_format else None
        self.handler: Any = None
        #: the phase of the running test (set as it enters each), and the test and phase of the last separator
        self.phase = ""
        self.section: tuple[str, str] | None = None

    def attach(self) -> None:
        """Add the handler to the root logger, if ``logging`` is imported and it is not there yet."""
        if self.handler is not None or "logging" not in sys.modules:
            return
        import logging

        live = self

        class _LiveHandler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    live.write(self.format(record))
                except Exception:  # noqa: BLE001 - a record that cannot be shown must not fail the test
                    self.handleError(record)

        handler = _LiveHandler(self.level if self.level is not None else logging.NOTSET)
        handler.setFormatter(logging.Formatter(self.format, self.date_format))
        logging.getLogger().addHandler(handler)
        self.handler = handler

    def write(self, text: str) -> None:
        from rt_testrunner import pyruntest

        item = pyruntest.RUNNING.get()
        section = (item.nodeid, self.phase) if item is not None else ("", "")
        stream = capture.terminal_stream("out")
        if section != self.section:
            self.section = section
            title = f"live log {section[1]}" if section[1] else "live log"
            stream.write("\n" + separator(title) + "\n")
        stream.write(text + "\n")
        stream.flush()

    def detach(self) -> None:
        if self.handler is not None:
            import logging

            logging.getLogger().removeHandler(self.handler)
            self.handler = None
