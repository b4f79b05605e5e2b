"""Scheduling: which declared tests run, in what order, and which of them run together (concurrently)."""

from __future__ import annotations

import random
import re

import attrs

from rt_testrunner.execute import is_async
from rt_testrunner.model import Suite, TestCase


@attrs.frozen
class Schedule:
    """The selection and ordering rules of one run (``-t``, ``--only``, ``--todo``, the seed, concurrency)."""

    name_pattern: re.Pattern[str] | None = None
    only: bool = False
    todo: bool = False
    seed: int | None = None
    concurrent: bool = False

    def selected(self, case: TestCase, only_mode: bool) -> bool:
        if only_mode and not case.has("only"):
            return False
        pattern = self.name_pattern
        return pattern is None or pattern.search(" ".join(case.path)) is not None

    def will_execute(self, case: TestCase) -> bool:
        if case.has("skip"):
            return False
        return not case.has("todo") or (self.todo and case.fn is not None)

    def ordered(self, suite: Suite, file: str) -> list[TestCase | Suite]:
        children = list(suite.children)
        if self.seed is not None:
            random.Random(f"{self.seed}:{file}:{'>'.join(suite.path)}").shuffle(children)
        return children

    def is_concurrent(self, case: TestCase) -> bool:
        if case.has("serial"):
            return False
        return case.has("concurrent") or self.concurrent


def split_group(group: list[TestCase]) -> tuple[list[TestCase], list[TestCase]]:
    """A concurrent group's sync tests (run first, one after the other, on the main thread, where a time-out
    can interrupt them) and its async ones (run together in the event loop)."""
    async_cases = [case for case in group if is_async(case.fn)]
    async_ids = {id(case) for case in async_cases}
    return [case for case in group if id(case) not in async_ids], async_cases
