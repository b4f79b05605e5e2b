"""Scripts the client knows about: each source file gets a ``scriptId`` and one ``Debugger.scriptParsed``.

Files are announced when the client enables the debugger (the program's own modules already loaded), when a
module of the program is executed later (an audit hook on ``exec`` sees every module body run by the import
system), and when a frame of a file not yet announced shows up in a paused stack (a library file, say).
"""

from __future__ import annotations

import itertools
import linecache
import os
import threading
import types
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from rt_debug.origin import is_library


def path_of_url(url: str) -> str:
    """A client's ``url`` (a path, or a ``file://`` URL) as a file name as Python's code objects spell it."""
    if url.startswith("file://"):
        return os.path.normpath(unquote(urlsplit(url).path))
    return os.path.normpath(url) if url.startswith("/") else url


def executable_lines(filename: str) -> list[int]:
    """1-based lines of ``filename`` that hold code (where a breakpoint can stop), from its code objects."""
    source = "".join(linecache.getlines(filename))
    if not source:
        return []
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    lines: set[int] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        lines.update(line for _, _, line in current.co_lines() if line is not None)
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return sorted(lines)


def resolve_line(filename: str, line: int) -> int | None:
    """The first line at or after ``line`` (1-based) where execution can stop, or None past the last one."""
    return next((candidate for candidate in executable_lines(filename) if candidate >= line), None)


class Scripts:
    """filename <-> scriptId, and the announcement of new files to the client."""

    def __init__(self, announce: Callable[[dict[str, Any]], None]) -> None:
        self._announce = announce
        self._lock = threading.Lock()
        self._ids: dict[str, str] = {}
        self._files: dict[str, str] = {}
        self._counter = itertools.count(1)
        self.enabled = False
        self.on_new: list[Callable[[str, str], None]] = []  # (filename, script_id): breakpoints resolve here

    def id_for(self, filename: str, *, announce: bool = True) -> str:
        """The scriptId of ``filename``, announcing it first if the client has not heard of it."""
        with self._lock:
            known = self._ids.get(filename)
            if known is not None:
                return known
            script_id = str(next(self._counter))
            self._ids[filename] = script_id
            self._files[script_id] = filename
        if self.enabled and announce:
            self._send(filename, script_id)
        return script_id

    def known(self, filename: str) -> str | None:
        with self._lock:
            return self._ids.get(filename)

    def filename(self, script_id: str) -> str | None:
        with self._lock:
            return self._files.get(script_id)

    def all(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._ids.items())

    def _send(self, filename: str, script_id: str) -> None:
        lines = linecache.getlines(filename)
        self._announce(
            {
                "scriptId": script_id,
                "url": filename,
                "startLine": 0,
                "startColumn": 0,
                "endLine": len(lines),
                "endColumn": 0,
                "executionContextId": 1,
                "scriptType": "module",
                "isContentScript": False,
                "sourceURL": filename,
            }
        )
        for callback in list(self.on_new):
            callback(filename, script_id)

    def enable(self, program_files: list[str]) -> None:
        """Announce what is known so far and every program file given (the main script, loaded modules)."""
        for filename in program_files:
            self.id_for(filename, announce=False)
        self.enabled = True
        for filename, script_id in self.all():
            self._send(filename, script_id)

    def seen_code(self, code: types.CodeType) -> None:
        """A module body is about to run (audit event ``exec``): announce it if it is the program's."""
        filename = code.co_filename
        if not self.enabled or code.co_name != "<module>" or not filename.startswith("/"):
            return
        if self.known(filename) is None and not is_library(filename):
            self.id_for(filename)


def loaded_program_files(modules: dict[str, Any]) -> list[str]:
    """Files of the program's own modules already imported (not the standard library, packages or rt)."""
    files = []
    for module in list(modules.values()):
        filename = getattr(module, "__file__", None)
        if (
            isinstance(filename, str)
            and filename.endswith(".py")
            and not is_library(os.path.abspath(filename))
        ):
            files.append(os.path.abspath(filename))
    return sorted(set(files))
