"""What a test file declares: a tree of suites (the file, then each ``describe``) holding tests and hooks.

Declarations go to the suite on top of :data:`COLLECTOR`'s stack. The runner loads one file at a time in one
process (spec C rule 3), so a module-level collector is enough; it is reset per file by the runner (:func:`rt_testrunner.api.collecting_into`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from rt.events import Location

HOOK_KINDS = ("before_all", "before_each", "after_each", "after_all")


@attrs.define(eq=False, repr=False)
class TestCase:
    """One declared test. ``args`` are the row of ``test.each``; ``flags`` are the chained qualifiers."""

    __test__ = False

    name: str
    fn: Callable[..., Any] | None
    suite: Suite
    flags: frozenset[str] = frozenset()
    args: tuple[Any, ...] = ()
    retry: int | None = None
    timeout: int | None = None  # milliseconds
    location: Location | None = None
    #: the pytest item (:class:`rt_testrunner.pynodes.PyItem`) this test runs, for pytest-style tests
    item: Any = None

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.suite.path, self.name)

    def has(self, flag: str) -> bool:
        return flag in self.flags or self.suite.inherits(flag)

    def __repr__(self) -> str:
        # short, as pytest's ``<Function test_x>``: code that formats the locals of the frames under a test
        # (django-debug-toolbar 8.0.0's SQL panel with stack-trace locals) reads the runner's frames, whose
        # lists of tests and suites made a generated repr of the whole tree (78 MB for 200 tests)
        return f"<TestCase {' > '.join(self.path)}>"


@attrs.define(eq=False, repr=False)
class Suite:
    """A file's root suite (``name is None``) or a ``describe`` block."""

    name: str | None
    parent: Suite | None = None
    flags: frozenset[str] = frozenset()
    children: list[TestCase | Suite] = attrs.field(factory=list)
    hooks: dict[str, list[Callable[..., Any]]] = attrs.field(factory=lambda: {k: [] for k in HOOK_KINDS})
    location: Location | None = None  # where the describe is declared (JUnit's suite line)
    #: a file's root only: the nodes inside the file whose collection failed while the rest of it collected
    #: (a pytest test class: its path, and what it raised), each reported as a collection error of its own
    collect_errors: list[tuple[tuple[str, ...], BaseException]] | None = None
    #: a file's root only: the paths of its test classes that collected no test, which are left out of the
    #: tree but are nodes pytest finds by id (``test_a.py::TestEmpty``: no tests ran, not "not found")
    empty_nodes: list[tuple[str, ...]] | None = None

    @property
    def path(self) -> tuple[str, ...]:
        if self.parent is None or self.name is None:
            return ()
        return (*self.parent.path, self.name)

    @property
    def lines(self) -> tuple[int, ...]:
        """The declaration line of each describe on the path (0 where unknown), outermost first."""
        if self.parent is None or self.name is None:
            return ()
        return (*self.parent.lines, self.location.line if self.location is not None else 0)

    def __repr__(self) -> str:
        return f"<Suite {' > '.join(self.path)}>"  # short, as the test's (see TestCase.__repr__)

    def record_collect_error(self, exc: BaseException) -> None:
        """This suite's node failed to collect (a pytest test class, a conftest.py's collector): the error goes
        to its file's root (:attr:`collect_errors`) under the suite's path; the suite is left out."""
        root = self
        while root.parent is not None:
            root = root.parent
        root.collect_errors = [*(root.collect_errors or ()), (self.path, exc)]

    def record_empty(self) -> None:
        """This suite's node collected no test (a pytest test class): its path goes to its file's root
        (:attr:`empty_nodes`); the suite is left out."""
        root = self
        while root.parent is not None:
            root = root.parent
        root.empty_nodes = [*(root.empty_nodes or ()), self.path]

    def inherits(self, flag: str) -> bool:
        suite: Suite | None = self
        while suite is not None:
            if flag in suite.flags:
                return True
            suite = suite.parent
        return False

    def tests(self) -> list[TestCase]:
        found: list[TestCase] = []
        for child in self.children:
            found.extend(child.tests() if isinstance(child, Suite) else [child])
        return found


class Collector:
    """The stack of suites that declarations are added to while a file is being loaded.

    Outside ``rt test`` (a test file imported by plain Python) declarations land in a root suite nobody runs.
    """

    def __init__(self) -> None:
        self.stack: list[Suite] = [Suite(None)]

    @property
    def current(self) -> Suite:
        return self.stack[-1]


COLLECTOR = Collector()
