"""Find the entry points of one group without importing ``importlib.metadata``.

Why by hand: ``importlib.metadata.entry_points()`` imports ``email``, ``zipfile`` and friends and parses
every distribution's metadata; that was 22 ms of the kernel's 100 ms start-up (measured with
``-X importtime``), paid by every ``rt`` command before it does anything. The format read here is small
and specified (PyPA "Entry points specification": an INI file ``entry_points.txt`` in each
``*.dist-info`` (or legacy ``*.egg-info``) directory), and only directories on ``sys.path`` are scanned this way. Anything else on
``sys.path`` (zip files, eggs) goes through ``importlib.metadata`` as before, so nothing is missed.

As ``importlib.metadata`` does, the first distribution of a given (normalized) name on ``sys.path`` wins.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator

import attrs

_NORMALIZE = re.compile(r"[-_.]+")


@attrs.frozen
class FoundEntryPoint:
    """An entry point and the distribution that declares it."""

    name: str
    value: str  # "module" or "module:attribute"
    distribution: str | None
    version: str | None
    #: the distribution's ``*.dist-info``/``*.egg-info`` folder, when found on disk (its RECORD lists its files)
    info_dir: str | None = None

    def load(self) -> object:
        import importlib

        module_name, _, attribute = self.value.partition(":")
        target: object = importlib.import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            target = getattr(target, part)
        return target


def _normalize(name: str) -> str:
    return _NORMALIZE.sub("-", name).lower()


def _parse_group(text: str, group: str) -> list[tuple[str, str]]:
    """``name = value`` lines of section ``[group]`` of an entry_points.txt."""
    found: list[tuple[str, str]] = []
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[" and line[-1] == "]":
            in_group = line[1:-1].strip() == group
            continue
        if in_group and "=" in line:
            name, _, value = line.partition("=")
            found.append((name.strip(), value.strip()))
    return found


_INFO_SUFFIXES = {".dist-info": "METADATA", ".egg-info": "PKG-INFO"}  # wheels; legacy `setup.py develop`


def _name_and_version(info_dir: str, directory_name: str, suffix: str) -> tuple[str | None, str | None]:
    """Read ``Name:`` and ``Version:`` from the metadata headers; fall back to the directory name."""
    name = version = None
    try:
        with open(os.path.join(info_dir, _INFO_SUFFIXES[suffix]), encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # end of the headers
                key, _, value = line.partition(":")
                if key == "Name":
                    name = value.strip()
                elif key == "Version":
                    version = value.strip()
    except OSError:
        pass
    if name is None or version is None:
        stem = directory_name[: -len(suffix)]
        dir_name, _, dir_version = stem.partition("-")
        name, version = name or dir_name or None, version or dir_version or None
    return name, version


def _key_of(directory_name: str, suffix: str) -> str:
    """The normalized distribution name of a ``*.dist-info``/``*.egg-info`` directory, from its name alone:
    what ``importlib.metadata`` itself keeps the first of (its ``_normalized_name`` reads the directory name),
    so that finding the distributions on a path never opens a metadata file."""
    return _normalize(directory_name[: -len(suffix)].partition("-")[0])


def _from_directory(path: str, group: str, seen: set[str]) -> Iterator[FoundEntryPoint]:
    """Only a distribution whose ``entry_points.txt`` mentions ``group`` has its metadata read: the kernel
    scans every installed distribution at each start, and reading two files of each was most of that scan."""
    try:
        entries = list(os.scandir(path))  # the directory's own order, as importlib.metadata reads it
    except OSError:
        return
    for entry in entries:
        suffix = next((s for s in _INFO_SUFFIXES if entry.name.endswith(s)), None)
        if suffix is None or not entry.is_dir():
            continue
        key = _key_of(entry.name, suffix)
        if key in seen:
            continue
        seen.add(key)
        try:
            with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        if group not in text:
            continue
        found = _parse_group(text, group)
        if found:
            name, version = _name_and_version(entry.path, entry.name, suffix)
            for ep_name, value in found:
                yield FoundEntryPoint(ep_name, value, name, version, entry.path)


def _from_importlib(path: str, group: str, seen: set[str]) -> Iterator[FoundEntryPoint]:
    import importlib.metadata

    for dist in importlib.metadata.distributions(path=[path]):
        try:
            name, version = dist.metadata["Name"], dist.version
        except Exception:  # noqa: BLE001 - unreadable metadata: unknown, not fatal
            name, version = None, None
        key = _normalize(name or "")
        if not name or key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points:
            if ep.group == group:
                yield FoundEntryPoint(ep.name, ep.value, name, version)


def entry_points(
    group: str, path: Iterable[str] | None = None, *, by_name: bool = True, every_distribution: bool = False
) -> list[FoundEntryPoint]:
    """Entry points of ``group`` from the distributions on ``path`` (default ``sys.path``), sorted by name;
    with ``by_name=False``, in the order of ``path`` (``importlib.metadata.entry_points``' order). With
    ``every_distribution``, those of a distribution found again further on the path too, as
    ``importlib.metadata.distributions()`` lists them (pytest marks every such distribution's modules for
    assert rewriting: a plugin's sdist egg-info folder next to its installed metadata)."""
    seen: set[str] = set()
    found: list[FoundEntryPoint] = []
    for entry in sys.path if path is None else path:
        directory = entry or os.getcwd()
        if every_distribution:
            seen = set()
        if os.path.isdir(directory):
            found.extend(_from_directory(directory, group, seen))
        elif os.path.exists(directory):
            found.extend(_from_importlib(directory, group, seen))
    return sorted(found, key=lambda ep: ep.name) if by_name else found
