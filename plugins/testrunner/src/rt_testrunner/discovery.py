"""Finding test files: the four name patterns, positional filters, ``./path`` files and ``--shard K/N``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

SUFFIXES = (".test.py", "_test.py", ".spec.py", "_spec.py")
PATTERNS = ("*.test.py", "*_test.py", "*.spec.py", "*_spec.py")
SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox",
                                 ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


class DiscoveryError(Exception):
    """A usage error in the file arguments (a ``./path`` that does not exist)."""


@attrs.frozen
class TestFile:
    __test__ = False

    path: Path  # absolute
    relative: str  # as shown to the user: posix, relative to the root when inside it


def is_test_file(name: str) -> bool:
    return name.endswith(SUFFIXES)


def _walk(directory: Path) -> Iterable[Path]:
    """Test files under ``directory``, skipping VCS folders, caches, node_modules and virtual environments."""
    for current, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIPPED_DIRECTORIES and not os.path.exists(os.path.join(current, d, "pyvenv.cfg"))
        )
        for name in sorted(filenames):
            if is_test_file(name):
                yield Path(current, name)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def is_explicit_path(argument: str) -> bool:
    """Spec C rule 2: ``./x`` and ``/x`` name a file (or folder); anything else is a name fragment."""
    return argument.startswith(("./", "/", "../")) or argument in (".", "..")


def discover(root: Path, filters: Sequence[str]) -> list[TestFile]:
    """Every selected test file, sorted by relative path. ``filters`` are the positional arguments."""
    explicit = [f for f in filters if is_explicit_path(f)]
    fragments = [f for f in filters if not is_explicit_path(f)]
    found: dict[Path, TestFile] = {}
    for argument in explicit:
        target = (root / argument).resolve() if not argument.startswith("/") else Path(argument).resolve()
        if target.is_dir():
            for path in _walk(target):
                found[path] = TestFile(path, _relative(path, root))
        elif target.is_file():
            found[target] = TestFile(target, _relative(target, root))
        else:
            raise DiscoveryError(f"Test file not found: {argument!r}")
    if fragments or not explicit:
        for path in _walk(root):
            relative = _relative(path, root)
            if not fragments or any(fragment in relative for fragment in fragments):
                found.setdefault(path, TestFile(path, relative))
    return sorted(found.values(), key=lambda f: f.relative)


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` with ``1 <= K <= N``; raises ValueError with the message the user sees."""
    index_text, _, count_text = text.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise ValueError(f"Invalid shard: {text!r} (expected K/N, e.g. --shard 1/3)") from None
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"Invalid shard: {text!r} (expected 1 <= K <= N)")
    return index, count


def shard(files: Sequence[TestFile], index: int, count: int) -> list[TestFile]:
    """Deterministic split: sorted by path, file i goes to shard ``i % count + 1``. Every machine computes the
    same split from the same tree, and together the shards cover every file exactly once."""
    ordered = sorted(files, key=lambda f: f.relative)
    return [f for position, f in enumerate(ordered) if position % count == index - 1]
