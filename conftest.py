"""The repository's top-level conftest: rt's pytest plugin, and the guard that keeps the tests self-contained.

``rt.testing`` gives the ``rt_kernel`` / ``rt_make_kernel`` / ``rt_register`` fixtures and an
``anyio_backend`` parametrized over asyncio and trio, so every ``@pytest.mark.anyio`` test runs on both. It
is opt-in (not a ``pytest11`` entry point) so that it does not change other projects' pytest runs.

The guard: every file a test reads must be in this repository (a fresh clone has nothing beside it, so a
test reading ``../shared/vectors.json`` passes here and fails there). An audit hook (PEP 578) sees every
``open()`` of the test process; a read of a path outside the repository fails the test (or the collection)
that made it, naming the path. Reads of the interpreter, the installed packages, system files and temporary
directories are allowed (:data:`ALLOWED`). tests/test_self_contained.py shows the guard failing a test.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

pytest_plugins = ["rt.testing"]

ROOT = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))


def _allowed_roots() -> tuple[str, ...]:
    """Where a test may read outside the repository: the interpreter and installed packages, the operating
    system, temporary directories, and tool caches under the home directory."""
    places = {
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
        *sysconfig.get_paths().values(),
        "/proc", "/sys", "/dev", "/etc", "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/run", "/var",
        "/opt", "/snap", "/nix",
    }
    # Import locations as the interpreter started (editable installs put src/ folders here), except the
    # repository's ancestors, which would allow everything beside it.
    places.update(p for p in sys.path if p and not (ROOT + os.sep).startswith(os.path.realpath(p) + os.sep))
    if os.environ.get("RT_GUARD_TMP") != "0":  # tests/test_self_contained.py turns it off for its project
        places.add(tempfile.gettempdir())
    home = os.path.expanduser("~")
    if home and home != "/":
        places.update(os.path.join(home, name) for name in (".cache", ".local", ".npm", ".config", ".pyenv"))
    return tuple(sorted({os.path.realpath(p) for p in places if p}))


ALLOWED = _allowed_roots()
_violations: list[str] = []


PARENT = os.path.dirname(ROOT)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _outside(path: str) -> bool:
    """Whether reading ``path`` leaves the repository. Beside the repository (``../shared``) only an allowed
    place that is itself beside it counts (``~/.cache`` for a clone in the home directory): a broad one such
    as the temporary directory, when the clone is in it, does not."""
    real = os.path.realpath(os.path.join(os.getcwd(), path))
    if _inside(real, ROOT):
        return False
    beside = _inside(real, PARENT)
    for root in ALLOWED:
        if _inside(real, root) and (not beside or (root != PARENT and _inside(root, PARENT))):
            return False
    return True


def _is_read(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    if isinstance(flags, int):
        return flags & (os.O_WRONLY | os.O_RDWR) != os.O_WRONLY
    return True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open":  # cheap exit for the thousands of other events
        return
    path, mode, flags = args
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or not _is_read(mode, flags):
        return
    try:
        if _outside(path):
            _violations.append(os.path.realpath(os.path.join(os.getcwd(), path)))
    except Exception:  # noqa: BLE001 - an audit hook must never break the open() it watches
        pass


if not getattr(sys, "_rt_repo_guard", False):
    sys._rt_repo_guard = (ROOT, _outside)  # type: ignore[attr-defined]  # hooks cannot be removed: once
    sys.addaudithook(_audit)


def _take() -> list[str]:
    found = sorted(set(_violations))
    _violations.clear()
    return found


def _message(paths: list[str]) -> str:
    listed = "\n".join(f"  {p}" for p in paths)
    return (
        f"read outside the repository ({ROOT}):\n{listed}\n"
        "A fresh clone has nothing beside it: move the data into the repository (next to the test) and read "
        "it from there. (Guard: conftest.py at the repository root.)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    paths = _take()
    if paths and report.outcome != "skipped":
        report.outcome = "failed"
        report.longrepr = _message(paths)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    report = yield
    paths = _take()
    if paths:
        report.outcome = "failed"
        report.longrepr = _message(paths)
    return report
