"""pytest's ``--pyargs``: the test paths given as dotted module or package names (``rt test --pyargs
pkg.tests``), each turned into the file or folder it imports from before the run collects, as pytest turns
them (a name that is an existing path stays one, a node id's ``::`` part is kept)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path


class PackageNotFoundError(Exception):
    """A name ``--pyargs`` was given that neither names an existing path nor imports (pytest's usage error)."""


def resolve(names: Sequence[str], root: Path, sys_path: Sequence[str]) -> list[str]:
    """Each of ``names`` as a path: an existing path (from ``root``) as it is, else the file of the module or
    the folder of the package it names, found on ``sys_path`` (the run's own: the rootdir, ``pythonpath``)."""
    resolved: list[str] = []
    for name in names:
        dotted, separator, rest = name.partition("::")
        if (root / dotted).exists():
            resolved.append(name)
            continue
        resolved.append(f"{_location(dotted, sys_path)}{separator}{rest}")
    return resolved


def _location(dotted: str, sys_path: Sequence[str]) -> str:
    previous = sys.path[:]
    sys.path[:] = list(sys_path)
    try:
        spec = importlib.util.find_spec(dotted)  # imports the parent packages, as pytest's lookup does
    except (ImportError, ValueError):
        spec = None
    finally:
        sys.path[:] = previous
    if spec is not None and spec.submodule_search_locations:
        if spec.origin is not None and spec.has_location:
            return str(Path(spec.origin).parent)
        return str(next(iter(spec.submodule_search_locations)))
    if spec is not None and spec.has_location and spec.origin is not None:
        return spec.origin
    raise PackageNotFoundError(f"module or package not found: {dotted} (missing __init__.py?)")
