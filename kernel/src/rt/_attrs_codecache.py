"""The compiled methods of rt's own attrs classes, kept on disk next to rt's bytecode, for the ``rt`` command.

attrs writes the source of a class's generated methods (``__init__``, ``__repr__``, ``__eq__``, ...) when the
class is created and compiles it with ``compile()``: no ``.pyc`` keeps that work. The ``rt`` command creates
about 45 attrs classes at start-up (the kernel's events and contracts, the test runner's), and compiling their
methods was about 85 million instructions of every ``rt test`` run (callgrind: 809 M for a project of one
test that imports pytest, of which ``import pytest`` is 550 M). This module keeps those code objects in one
marshal file, as Python keeps a module's code in ``__pycache__``, and hands attrs the stored code when the
source it wrote is the same, character for character: a changed class (a new field, another attrs version
writing other source) is compiled as before and stored again, so the cache can only ever return what
``compile()`` would.

It works through attrs' ``_compile_and_eval(script, globs, locs, filename)``, the one function that compiles
and runs every generated method (attrs 22.2 to 26.1). That is a private name: :func:`install` leaves attrs
alone unless the function is there with those parameters, and then every class is created the ordinary way.
Only the ``rt`` command installs it, and only while rt starts: :mod:`rt.cli` while it builds the kernel,
then ``rt test`` while it imports the runner; :func:`uninstall` restores attrs' own function before a
command's code runs (a script under ``rt run``) and before ``rt test`` imports a test file, so a program or a
suite sees attrs untouched. Only classes of rt's
packages (``rt``, ``rt_*``) are stored; another class created meanwhile is compiled as attrs does it.
"""

from __future__ import annotations

import marshal
import os
import sys
from typing import Any

_PARAMETERS = ("script", "globs", "locs", "filename")
_PREFIX = "<attrs generated "
#: Stored entries beyond which a save keeps only this process's (old versions' entries do not pile up).
MAX_ENTRIES = 512

_state: _Cache | None = None


class _Cache:
    """Code objects by attrs' file name for them, each with the source it was compiled from."""

    def __init__(self, path: str | None, make: Any, module: Any) -> None:
        self.path = path
        self.original = make
        self.module = module
        self.stored: dict[str, tuple[str, Any]] = _read(path) if path else {}
        self.used: dict[str, tuple[str, Any]] = {}
        self.new = 0
        self.hits = 0

    def compile_and_eval(
        self, script: str, globs: dict[str, Any] | None, locs: Any = None, filename: str = ""
    ) -> None:
        """attrs' ``_compile_and_eval``, with the code taken from the cache when the source is the same."""
        if not _is_own(filename):
            self.original(script, globs, locs, filename)
            return
        entry = self.stored.get(filename)
        if entry is not None and entry[0] == script:
            self.hits += 1
        else:
            entry = (script, compile(script, filename, "exec"))
            self.new += 1
        self.used[filename] = entry
        eval(entry[1], globs, locs)  # noqa: S307 - attrs' own generated code, as attrs runs it

    def save(self) -> None:
        if not self.new or self.path is None or sys.dont_write_bytecode:
            return
        entries = {**self.stored, **self.used}
        if len(entries) > MAX_ENTRIES:
            entries = self.used
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(_magic() + marshal.dumps(entries))
            os.replace(temporary, self.path)  # whole or not at all, whoever else writes at the same time
        except (OSError, ValueError):
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _is_own(filename: str) -> bool:
    """``<attrs generated methods rt_testrunner.state.TestState>``: a class of an rt package (not of the test
    files rt imports as ``rt_test_files.*``)."""
    if not filename.startswith(_PREFIX):
        return False
    qualified = filename[len(_PREFIX) :].partition(" ")[2]
    package = qualified.partition(".")[0]
    return (package == "rt" or package.startswith("rt_")) and package != "rt_test_files"


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def _read(path: str) -> dict[str, tuple[str, Any]]:
    """The stored entries; none when the file is missing, from another Python, or damaged."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return {}
    magic = _magic()
    if not data.startswith(magic):
        return {}
    try:
        entries = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {
        name: entry
        for name, entry in entries.items()
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str)
    }


def default_path() -> str | None:
    """``rt/__pycache__/attrs-methods.<tag>.marshal`` (under ``sys.pycache_prefix`` when that is set)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    from importlib.util import cache_from_source

    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attrs-methods.py")
    return os.path.join(os.path.dirname(cache_from_source(source)), f"attrs-methods.{tag}.marshal")


def install(path: str | None = None) -> bool:
    """Route attrs' compiling through the cache at ``path`` (default :func:`default_path`); ``False`` (and
    attrs untouched) when attrs has no ``_compile_and_eval`` as this module knows it."""
    global _state
    if _state is not None:
        return True
    from attr import _make

    make = getattr(_make, "_compile_and_eval", None)
    code = getattr(make, "__code__", None)
    if code is None or code.co_varnames[: len(_PARAMETERS)] != _PARAMETERS:
        return False
    _state = _Cache(path if path is not None else default_path(), make, _make)
    _make._compile_and_eval = _state.compile_and_eval
    return True


def uninstall() -> None:
    """Give attrs its own function back and store what was compiled; nothing when not installed."""
    global _state
    state, _state = _state, None
    if state is None:
        return
    if state.module._compile_and_eval == state.compile_and_eval:
        state.module._compile_and_eval = state.original
    state.save()


def installed() -> _Cache | None:
    """The cache in use (tests read its ``hits`` and ``new``)."""
    return _state
