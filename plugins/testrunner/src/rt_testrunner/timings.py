"""``--timings`` files: per-file durations, so ``--parallel`` starts the slowest files first.

The format is the reference runtime's: ``{"version": 1, "files": {"path/as/shown.test.py": milliseconds}}``.
Several files are merged (one per CI shard, say); a file that does not exist yet reads as empty, so the
first ``--update-timings`` run creates it. Starting the slowest files first keeps one long file from
starting last and leaving the other workers idle at the end of the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rt.events import FileFinished, RunFinished, TestEvent
from rt_testrunner.discovery import TestFile

VERSION = 1


class TimingsError(Exception):
    """A ``--timings`` file that is not one: a usage error."""


def load(paths: Sequence[str], root: Path) -> dict[str, float]:
    """The merged durations (ms) of ``paths``; a later file wins for a file named in several."""
    merged: dict[str, float] = {}
    for name in paths:
        path = root / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise TimingsError(f"--timings {name!r}: not a timings file ({exc})") from None
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict):
            raise TimingsError(f'--timings {name!r}: not a timings file (no "files" object)')
        for file, duration in files.items():
            if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
                merged[str(file)] = float(duration)
    return merged


def slowest_first(files: Sequence[TestFile], known: Mapping[str, float]) -> list[int]:
    """Indexes of ``files`` in the order to start them: files without a timing first (they may be the
    slowest; nothing says otherwise), in the run's order, then the known ones from the slowest."""
    unknown = [i for i, f in enumerate(files) if f.relative not in known]
    timed = sorted(
        (i for i, f in enumerate(files) if f.relative in known), key=lambda i: -known[files[i].relative]
    )
    return unknown + timed


def balanced_shard(
    files: Sequence[TestFile], index: int, count: int, known: Mapping[str, float]
) -> list[TestFile]:
    """``--shard K/N`` with ``--timings``: the files split so that each shard's total time is about the same
    (the longest first, each to the shard with the least time so far; a file without a timing counts as the
    known files' mean). Every machine computes the same split from the same tree and timings file, and
    together the shards cover every file exactly once. The chosen files keep the run's order."""
    mean = sum(known.values()) / len(known) if known else 1.0
    weight = {f.relative: known.get(f.relative, mean) for f in files}
    totals = [0.0] * count
    chosen: set[str] = set()
    for f in sorted(files, key=lambda f: (-weight[f.relative], f.relative)):
        target = min(range(count), key=lambda i: (totals[i], i))
        totals[target] += weight[f.relative]
        if target == index - 1:
            chosen.add(f.relative)
    return [f for f in files if f.relative in chosen]


def write(name: str, root: Path, measured: Mapping[str, float], earlier: Mapping[str, float]) -> None:
    """``earlier`` updated with ``measured``, written atomically (a reader never sees half a file)."""
    merged = {**earlier, **{file: round(ms) for file, ms in measured.items()}}
    path = root / name
    text = json.dumps({"version": VERSION, "files": dict(sorted(merged.items()))}, indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


class TimingsWriter:
    """``--update-timings``: a reporter that keeps each file's duration and writes them when the run ends
    (the same in a one-process and a ``--parallel`` run: both report every file's ``FileFinished``)."""

    def __init__(self, name: str, root: Path, earlier: Mapping[str, float]) -> None:
        self.name = name
        self.root = root
        self.earlier = earlier
        self.measured: dict[str, float] = {}

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileFinished) and event.error is None:
            self.measured[event.file] = event.duration * 1000
        elif isinstance(event, RunFinished) and not (event.bailed or event.interrupted):
            write(self.name, self.root, self.measured, self.earlier)

    def close(self) -> None:
        pass
