"""Whose code a frame runs: the program's, a library's (stdlib, site-packages, frozen modules) or rt's own.

Error reports show the program's frames and fold the others into a count: a ``copy.deepcopy`` or an event loop
between two user frames says little, and with a 10-frame limit it would push the user's frames out of sight.
rt's own packages (``rt`` and ``rt_*``) count as libraries even when they are installed editable from a source
tree, which is outside site-packages.
"""

from __future__ import annotations

import os
import sys
import sysconfig

_CYTHON = (".pyx", ".pxd", ".pxi")
_LIBRARY_PATHS = tuple(
    sorted({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")})
)


_dirs_cache: tuple[int, tuple[str, ...]] = (-1, ())


def _rt_package_dirs() -> tuple[str, ...]:
    """The folders of the rt packages loaded now (only those can have frames on a stack).

    Asked for every frame of a report and every module the inspector sees run: the answer is kept until the
    number of loaded modules changes.
    """
    global _dirs_cache
    count = len(sys.modules)
    if _dirs_cache[0] == count:
        return _dirs_cache[1]
    folders = set()
    for name, module in list(sys.modules.items()):
        if "." in name or not (name == "rt" or name.startswith("rt_")):
            continue
        path = getattr(module, "__file__", None)
        if path:
            folders.add(os.path.dirname(os.path.abspath(path)) + os.sep)
    _dirs_cache = (count, tuple(sorted(folders)))
    return _dirs_cache[1]


def is_library(filename: str) -> bool:
    """True for the standard library, installed packages, frozen modules and rt's own packages."""
    if filename.endswith(_CYTHON):  # compiled extensions name their frames by source: "uvloop/loop.pyx"
        return True
    return filename.startswith((*_LIBRARY_PATHS, "<frozen ", *_rt_package_dirs()))


def package_of(filename: str) -> str:
    """A short name for the package a library file belongs to (``asyncio``, ``anyio``, ``rt``)."""
    if filename.endswith(_CYTHON) and not os.path.isabs(filename):
        return filename.split("/", 1)[0]
    if filename.startswith("<frozen "):
        return filename[len("<frozen ") : -1].split(".")[0]
    for folder in _rt_package_dirs():
        if filename.startswith(folder):
            return "rt"
    for root in sorted(_LIBRARY_PATHS, key=len, reverse=True):
        if filename.startswith(root + os.sep):
            first = filename[len(root) + 1 :].split(os.sep, 1)[0]
            return first.removesuffix(".py") or first
    return os.path.basename(filename)
