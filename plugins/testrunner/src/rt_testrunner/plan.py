"""What ``rt test --parallel`` hands its workers: whole files, and big files cut into parts.

A run whose tests sit in a few big files cannot be shared by handing out whole files: one worker gets the
biggest file and the others wait. When the zygote collected the run (:mod:`rt_testrunner.zygote`), it says
which files may be cut (files of test functions, :meth:`rt_testrunner.runner.Runner.parts`) and whether each
of their tests is selected; a file bigger than a worker's fair piece is then cut between tests into parts of about that size (:class:`Work`; :data:`MIN_PIECE` tests at least), each handed out on
its own. The pieces are small
enough (about :data:`PIECES_PER_WORKER` per worker) that the workers finish close to each other when each
takes the next piece as it becomes idle, and big enough that a file's module-scoped fixtures are set up a few
times at most (once per part, as pytest-xdist's ``--dist load`` sets them up once per worker that runs tests
of the module). The main process puts a file's parts back together before reporting it
(:mod:`rt_testrunner.pool`), so reporters see each file whole, as in one process.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rt_testrunner import wire

#: a worker's share of the run is cut into about this many pieces: enough for the workers to end together when
#: the pieces' sizes are only estimates (tests counted, not timed), few enough that each piece's overhead (a
#: message each way, module fixtures set up again) stays small
PIECES_PER_WORKER = 4
#: no piece is cut smaller than this many tests: below it a piece's overhead outweighs what sharing it gains
MIN_PIECE = 8


@attrs.frozen
class Work:
    """A file (``parts == 1``) or part ``part`` of ``parts`` of it: its top-level children ``start:stop``."""

    index: int  # into the run's files
    start: int = 0
    stop: int = 0
    part: int = 0
    parts: int = 1
    #: a turn of the session's order: the node ids of its tests (its file's ``part`` of ``parts``)
    segment: tuple[str, ...] | None = None

    def message(self) -> tuple[Any, ...]:
        if self.segment is not None:
            return (wire.RUN, self.index, self.segment, self.part == 0)
        if self.parts == 1:
            return (wire.RUN, self.index)
        return (wire.RUN, self.index, self.start, self.stop)


def plan(
    order: Sequence[int], weights: Mapping[int, tuple[int, ...]], workers: int, timed: bool
) -> list[Work]:
    """The run's pieces, in the order to hand them out. ``order``: the files' indexes in the run's order (the
    slowest first when ``timed``); ``weights``: the files that may be cut, each with its children's test
    counts. Without timings the biggest pieces go first (a file that cannot be cut counts as the mean of
    those that can), so that the last pieces handed out are small; with timings the files keep their order,
    each file's parts one after the other."""
    if workers < 2 or not weights:
        return [Work(index) for index in order]
    sizes = [sum(counts) for counts in weights.values()]
    mean = sum(sizes) / len(sizes)
    total = sum(sum(weights[index]) if index in weights else mean for index in order)
    target = max(float(MIN_PIECE), total / (workers * PIECES_PER_WORKER))
    pieces: list[tuple[float, Work]] = []
    for index in order:
        counts = weights.get(index)
        size = float(sum(counts)) if counts is not None else mean
        if counts is None or size <= target:
            pieces.append((size, Work(index)))
            continue
        spans = cut(counts, math.ceil(size / target))
        for part, (start, stop) in enumerate(spans):
            pieces.append((float(sum(counts[start:stop])), Work(index, start, stop, part, len(spans))))
    if not timed:
        pieces.sort(key=lambda piece: -piece[0])  # stable: equal sizes keep the run's order
    return [work for _, work in pieces]


def cut(counts: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """``counts`` cut into at most ``parts`` consecutive, non-empty spans of about equal sums (a child is never
    cut: one bigger than a span's share makes a span of its own)."""
    total = sum(counts)
    spans: list[tuple[int, int]] = []
    start, done = 0, 0
    for position, count in enumerate(counts):
        done += count
        if len(spans) < parts - 1 and done >= total * (len(spans) + 1) / parts:
            spans.append((start, position + 1))
            start = position + 1
    if start < len(counts):
        spans.append((start, len(counts)))
    return spans


def in_session_order(turns: Sequence[tuple[int, tuple[str, ...] | None]]) -> list[Work]:
    """The pieces of a run whose collection hooks set an order across files (pytest-randomly, pytest-order, a
    conftest.py moving the slow tests last), in that order: each worker's share then runs in the hooks' order,
    as pytest-xdist's workers run theirs. ``turns``: (file index, the node ids of the turn's tests, or None
    for a whole file), as :meth:`rt_testrunner.runner.Runner.worker_turns` gives them. A file in several
    turns is put back together by the main process before it is reported, as a file cut in parts is."""
    counts: dict[int, int] = {}
    for index, ids in turns:
        if ids is not None:
            counts[index] = counts.get(index, 0) + 1
    seen: dict[int, int] = {}
    pieces: list[Work] = []
    for index, ids in turns:
        if ids is None:
            pieces.append(Work(index))
            continue
        part = seen.get(index, 0)
        seen[index] = part + 1
        pieces.append(Work(index, part=part, parts=counts[index], segment=tuple(ids)))
    return pieces
