"""The folders ``tmp_path``, ``tmp_path_factory``, ``tmpdir`` and ``tmpdir_factory`` hand out, laid out,
named and kept as pytest's: ``{temproot}/pytest-of-{user}/pytest-{N}/{test name, 30 characters}{n}/``.

Why pytest's own root and not one of rt's: a test sees its paths (in messages it compares, in a line
rich wraps at 80 columns, in a length a file system limits), so they must be pytest's to the character;
and pytest's scheme is made for several processes sharing the root: a run takes the next number by
creating the folder (``mkdir`` decides who gets it), holds a ``.lock`` file with its process id while it
runs, and at its end removes the numbered folders older than the last ``tmp_path_retention_count`` that
no live run holds (a lock older than three days is a crashed run's), renaming each to ``garbage-*`` first
so no two runs delete the same one. rt's runs follow the same rules, so rt and pytest runs of one user
share the root and its retention: the last three runs of either are kept, not three of each.

``--basetemp DIR`` is used as it is, emptied first, never numbered nor cleaned up afterwards; under
``--parallel`` the main process takes the run's folder and each worker gets ``popen-gw{N}`` in it, as
pytest-xdist's workers do (``N`` counts from 0).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: a run's lock older than this (pytest's three days) is a crashed run's: its folder may go
LOCK_TIMEOUT_S = 3 * 24 * 60 * 60
_RUN_PREFIX = "pytest-"
_POLICIES = ("all", "failed", "none")
#: the folder the main process of a ``--parallel`` run took for the run (set in its workers): each worker's
#: ``--basetemp`` is its ``popen-gw{N}``
_SHARED: dict[str, Path] = {}


class RetentionError(ValueError):
    """A ``tmp_path_retention_count`` or ``tmp_path_retention_policy`` pytest refuses to start with: ``status``
    is its exit status (3, its internal error, for a count; 4, its usage error, for a policy)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def retention(values: dict[str, Any], inifile: Path | None = None) -> tuple[int, str]:
    """The run's ``tmp_path_retention_count`` and ``tmp_path_retention_policy`` (pytest's ini options), checked
    as pytest checks them when it configures its tmpdir plugin, before it collects: a count ``int()`` does
    not read or below 0 is its internal error, a policy other than its three its usage error, naming the
    configuration file (:class:`RetentionError`, in pytest's words)."""
    raw = values.get("tmp_path_retention_count", 3)
    try:
        count = int(raw)
    except (TypeError, ValueError) as exc:
        raise RetentionError(f"internal error: tmp_path_retention_count: {exc}", 3) from None
    if count < 0:
        raise RetentionError(
            f"internal error: tmp_path_retention_count must be >= 0. Current input: {count}.", 3
        )
    policy = str(values.get("tmp_path_retention_policy", "all"))
    if policy not in _POLICIES:
        expected = " | ".join(repr(choice) for choice in _POLICIES)
        raise RetentionError(
            f"{inifile}: config option 'tmp_path_retention_policy' expects one of {expected}, got {policy!r}",
            4,
        )
    return count, policy


class TempPathFactory:
    """``tmp_path_factory`` (and ``config._tmp_path_factory``): numbered folders under the run's base folder,
    made when first asked for (a run that never asks makes none)."""

    def __init__(
        self, given_basetemp: Path | None = None, retention_count: int = 3, retention_policy: str = "all"
    ):
        self._given = Path(os.path.abspath(given_basetemp)) if given_basetemp is not None else None
        self._retention_count = retention_count
        self._retention_policy = retention_policy
        self._basetemp: Path | None = None
        #: the ``--parallel`` worker (``RT_TEST_WORKER``) the base folder was made for, None outside one
        self._worker: str | None = None
        #: lower-cased name -> the next number to try, so a new folder need not list the base folder
        self._next_number: dict[str, int] = {}
        #: what the run's end undoes (its lock) and cleans up (older runs' folders), last first
        self._cleanups: list[Callable[[], None]] = []

    @classmethod
    def from_config(cls, values: dict[str, Any], basetemp: str | None) -> TempPathFactory:
        """The factory of a run whose configuration has ``values`` (``tmp_path_retention_count`` and
        ``tmp_path_retention_policy``, pytest's ini options) and ``--basetemp``."""
        count, policy = retention(values)
        return cls(Path(basetemp) if basetemp else None, count, policy)

    @property
    def retention_policy(self) -> str:
        return self._retention_policy

    def getbasetemp(self) -> Path:
        shared = _SHARED.get("run")
        worker = os.environ.get("RT_TEST_WORKER", "1") if shared is not None else None
        if self._basetemp is not None and worker == self._worker:
            return self._basetemp
        # a --parallel worker's folder is in the run's (--basetemp's too, which the main process emptied); one
        # a conftest.py's pytest_configure asked for in the zygote is made again for each worker forked from it
        self._worker = worker
        given = (
            shared / f"popen-gw{int(worker) - 1}"
            if shared is not None and worker is not None
            else self._given
        )
        if given is not None:
            if given.exists():
                remove_tree(given)
            given.mkdir(mode=0o700)
            self._basetemp = given.resolve()
        else:
            keep = 0 if self._retention_policy == "none" else self._retention_count
            self._basetemp = numbered_run_folder(user_root(), keep, self._cleanups.append)
            atexit.register(self.close)
        return self._basetemp

    def mktemp(self, basename: str, numbered: bool = True) -> Path:
        base = self.getbasetemp()
        basename = os.path.normpath(basename)
        if (base / basename).resolve().parent != base:
            raise ValueError(f"{basename} is not a normalized and relative path")
        if not numbered:
            path = base / basename
            path.mkdir(mode=0o700)
            return path
        path = _counted_folder(base, basename, self._next_number)
        _point_link(base / f"{basename}current", path)
        return path

    def finish(self, exitstatus: int) -> None:
        """The run's end (pytest's ``pytest_sessionfinish`` of its tmpdir plugin): the whole base folder goes
        when every test passed under the ``failed`` policy, links to removed folders go, then the older
        runs' folders are cleaned up and the lock is given back."""
        base = self._basetemp
        if base is None:
            return
        numbered = self._given is None and self._worker is None  # not --basetemp's, nor a worker's
        if exitstatus == 0 and self._retention_policy == "failed" and numbered:
            shutil.rmtree(base, ignore_errors=True)
        if base.is_dir():
            remove_dead_links(base)
        self.close()

    def close(self) -> None:
        while self._cleanups:
            self._cleanups.pop()()


def user_root() -> Path:
    """``{temproot}/pytest-of-{user}``, made private to the user (pytest's checks: owned by them, not a
    link); the temproot is ``PYTEST_DEBUG_TEMPROOT`` or the system's temporary folder."""
    import tempfile

    temproot = Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()).resolve()
    root = temproot / f"pytest-of-{_user() or 'unknown'}"
    try:
        root.mkdir(mode=0o700, exist_ok=True)
    except OSError:  # a user name the file system refuses
        root = temproot / "pytest-of-unknown"
        root.mkdir(mode=0o700, exist_ok=True)
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None:
        found = root.lstat()
        if stat.S_ISLNK(found.st_mode):
            raise OSError(f"The temporary directory {root} is a symbolic link. Fix this and try again.")
        if found.st_uid != uid:
            raise OSError(
                f"The temporary directory {root} is not owned by the current user. Fix this and try again."
            )
        if found.st_mode & 0o077:
            root.chmod(found.st_mode & ~0o077)
    return root


def _user() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except (ImportError, OSError, KeyError):
        return None


def numbered_run_folder(root: Path, keep: int, register: Callable[[Callable[[], None]], None]) -> Path:
    """A new ``pytest-{N}`` folder in ``root`` (``N`` one more than the highest there), held by a lock
    while the run lasts unless nothing is kept; ``register`` gets the run's end: give the lock back, remove
    the folders beyond the last ``keep`` no live run holds."""
    for _ in range(10):
        path = root / f"{_RUN_PREFIX}{_highest(root, _RUN_PREFIX) + 1}"
        try:
            path.mkdir(mode=0o700)
        except OSError:
            continue
        _point_link(root / f"{_RUN_PREFIX}current", path)
        break
    else:
        raise OSError(f"could not create numbered dir with prefix {_RUN_PREFIX} in {root} after 10 tries")
    if keep:
        lock = _lock(path)
        register(_unlocker(lock))
    stale_before = path.stat().st_mtime - LOCK_TIMEOUT_S
    register(lambda: _clean_up_runs(root, keep, stale_before))
    return path


def _counted_folder(base: Path, prefix: str, next_number: dict[str, int]) -> Path:
    """``{prefix}{n}`` in ``base``, ``n`` counted per (lower-cased) prefix from 0; a name taken (by a
    ``mktemp(numbered=False)`` or another process) is skipped, a run of them makes the folder be listed once."""
    key = prefix.lower()
    number = next_number.get(key, 0)
    for attempt in range(1, 21):
        path = base / f"{prefix}{number}"
        try:
            path.mkdir(mode=0o700)
        except OSError:
            number = max(number, _highest(base, prefix)) + 1 if attempt == 10 else number + 1
            continue
        next_number[key] = number + 1
        return path
    raise OSError(f"could not create numbered dir with prefix {prefix} in {base} after 20 tries")


def _numbered(root: Path, prefix: str) -> Iterator[tuple[Path, int]]:
    """The entries of ``root`` named ``prefix`` (any case) and what follows it, as a number (-1: not one)."""
    lowered = prefix.lower()
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name.lower().startswith(lowered):
                suffix = entry.name[len(prefix) :]
                yield Path(entry.path), int(suffix) if re.fullmatch(r"\s*[+-]?\d+\s*", suffix) else -1


def _highest(root: Path, prefix: str) -> int:
    return max((number for _, number in _numbered(root, prefix)), default=-1)


def _point_link(link: Path, target: Path) -> None:
    """``link`` pointing to ``target`` from now on (best effort: parallel runs may race, as in pytest)."""
    try:
        link.unlink()
    except OSError:
        pass
    try:
        link.symlink_to(target)
    except OSError:
        pass


def _lock(folder: Path) -> Path:
    lock = folder / ".lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as exc:
        raise OSError(f"cannot create lockfile in {folder}") from exc
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return lock


def _unlocker(lock: Path) -> Callable[[], None]:
    owner = os.getpid()

    def unlock() -> None:
        if os.getpid() == owner:  # not in a forked child (a worker), whose end is not the run's
            try:
                lock.unlink()
            except OSError:
                pass

    return unlock


def _clean_up_runs(root: Path, keep: int, stale_before: float) -> None:
    """Remove the run folders numbered ``keep`` or more below the highest, and ``garbage-*`` left by an
    interrupted removal, each unless a live run holds it; then the links to folders gone."""
    if not root.exists():
        return
    numbered = list(_numbered(root, _RUN_PREFIX))
    highest = max((number for _, number in numbered), default=-1)
    for path, number in numbered:
        if number <= highest - keep:
            _remove_unless_held(path, stale_before)
    for path in root.glob("garbage-*"):
        _remove_unless_held(path, stale_before)
    remove_dead_links(root)


def _remove_unless_held(path: Path, stale_before: float) -> None:
    if path.is_symlink():
        return
    lock = path / ".lock"
    try:
        if lock.is_file():
            if lock.stat().st_mtime >= stale_before:
                return  # a live run's
            lock.unlink()
    except OSError:
        return
    taken = None
    try:
        taken = _lock(path)  # no other run removes it meanwhile
        garbage = path.parent / f"garbage-{uuid.uuid4()}"
        path.rename(garbage)
        taken = garbage / ".lock"
        remove_tree(garbage)
    except OSError:
        return
    finally:
        if taken is not None:
            try:
                taken.unlink()
            except OSError:
                pass


def remove_dead_links(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_symlink() and not entry.resolve().exists():
            entry.unlink()


def remove_tree(path: Path) -> None:
    """``path`` and all it holds, also what a test made read-only."""

    def writable_and_retry(function: Any, name: str, _: Any) -> None:
        try:
            os.chmod(os.path.dirname(name), stat.S_IRWXU)
            if not os.path.islink(name):
                os.chmod(name, stat.S_IRWXU if os.path.isdir(name) else stat.S_IRUSR | stat.S_IWUSR)
            function(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=writable_and_retry)
    else:
        shutil.rmtree(path, onerror=writable_and_retry)


def share_run_folder(folder: Path) -> None:
    """In a ``--parallel`` worker: ``folder`` is the run's, each worker's base folder is in it."""
    _SHARED["run"] = folder


def run_folder(values: dict[str, Any], basetemp: str | None) -> TempPathFactory:
    """The main process of a ``--parallel`` run: the factory that took the run's folder (``--basetemp``,
    emptied, or the next numbered one), as pytest-xdist's controller takes it before its workers start; its
    ``finish`` ends it."""
    factory = TempPathFactory.from_config(values, basetemp)
    factory.getbasetemp()
    return factory
