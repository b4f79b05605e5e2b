"""Event types that cross plugin boundaries.

Test events flow from the runner (rt-testrunner) to reporters (any distribution); HTTP events flow from
clients (rt.fetch, http.client, httpx hooks) to observers (verbose fetch logging in rt-debug). They live in
the kernel so that a third-party reporter or observer depends on ``rt-kernel`` alone.

All are frozen attrs classes: a reporter must not be able to change what the next reporter sees.

The HTTP events are defined in :mod:`rt._http_events` and read from here on first use (``from rt.events
import HttpRequest`` works as before): every ``rt test`` imports this module for the test events, and the
two HTTP classes it never uses were 6 million instructions of its start-up (an attrs class costs about 3
million to create, half of it compiling its generated methods).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

# --- test run ---------------------------------------------------------------------------------------------


class TestStatus(enum.Enum):
    """How one test ended. ``FAIL`` covers time-outs and a ``.failing`` test that passed.

    The last three are pytest's outcomes, which a pytest suite run by ``rt test`` reports as pytest counts
    them: ``XFAIL`` an expected failure (``xfail`` mark), ``XPASS`` a non-strict ``xfail`` test that passed,
    ``ERROR`` a test whose set-up (a fixture) or a file whose collection failed.
    """

    __test__ = False  # not a pytest test class

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    TODO = "todo"
    XFAIL = "xfail"
    XPASS = "xpass"
    ERROR = "error"


@attrs.frozen
class Location:
    """Where something is declared: file path (as the user sees it), 1-based line, 1-based column."""

    file: str
    line: int = 0
    column: int = 0


@attrs.frozen
class TestFailure:
    """Why a test failed, already rendered: reporters print it, they do not re-format exceptions."""

    __test__ = False

    message: str
    kind: str = "Error"  # exception class name, or "Timeout"
    details: str = ""  # the full rendered failure: diff, traceback, source preview
    location: Location | None = None
    timed_out: bool = False


@attrs.frozen
class RunStarted:
    """The run begins: how many files were selected, and the seed when order is randomized."""

    files: Sequence[str]
    seed: int | None = None
    root: str = ""
    bail: int | None = None  # stop after this many failures (None: run everything)
    rerun_each: int = 1


@attrs.frozen
class FileStarted:
    file: str


@attrs.frozen
class TestStarted:
    __test__ = False

    file: str
    path: tuple[str, ...]  # describe names, then the test name
    attempt: int = 1
    run: int = 1


@attrs.frozen
class TestFinished:
    """One test's final result (after retries). ``attempt``/``run`` are 1-based; ``duration`` in seconds."""

    __test__ = False

    file: str
    path: tuple[str, ...]
    status: TestStatus
    duration: float
    attempt: int = 1
    run: int = 1
    failure: TestFailure | None = None
    location: Location | None = None
    expect_calls: int = 0
    hook: str | None = None  # "before_all" / "after_all" when this entry reports a failing hook, not a test
    output: str = ""  # what the test printed (stdout, stderr, logging) while rt captured it
    reason: str = ""  # why it was skipped or is expected to fail (pytest's skip/xfail reasons)
    earlier_failures: tuple[TestFailure, ...] = ()  # the failed attempts before the last one (retries)
    suite_lines: tuple[int, ...] = ()  # where each describe of ``path[:-1]`` is declared (0: unknown)
    #: a subtest's result (pytest 9 reports each one that did not pass): the name of the test it is part of,
    #: ``path[-1]`` of that test's own result, recorded just before it ("" for a test's own result)
    subtest_of: str = ""
    subtests_passed: int = 0  # the test's subtests that passed (pytest 9 counts them in its JUnit ``tests``)
    #: ``record_property(name, value)``'s pairs, as the JUnit report's ``<properties>`` of the test
    properties: tuple[tuple[str, str], ...] = ()
    #: the result was decided while the test was set up (a pytest-style test's skip mark or a fixture that
    #: skipped or failed), not by its body: pytest reports it for its ``setup`` phase
    at_setup: bool = False
    #: False for a result pytest's terminal leaves out of its counts: a subtest that skipped or failed as
    #: expected while the subtests' verbosity is 0 (a plain ``pytest`` run); the JUnit report still has it,
    #: the summary's counts and the result lines do not
    counted: bool = True
    #: a test of rt's own API (``rt.test``), not a pytest item: the JUnit report writes its failure's message as
    #: rt's reporter always did (an assert's text alone), not in the words of pytest's junitxml
    own_style: bool = False

    @property
    def name(self) -> str:
        return " > ".join(self.path)


@attrs.frozen
class FileFinished:
    file: str
    duration: float
    error: TestFailure | None = None  # the file itself failed to load or a file-level hook raised


@attrs.frozen
class SnapshotCounts:
    """What ``to_match_snapshot`` / ``to_match_inline_snapshot`` did in a run (all zero when unused)."""

    passed: int = 0
    failed: int = 0
    written: int = 0  # new snapshots written (first run, not in CI)
    updated: int = 0  # changed by -u
    obsolete: int = 0  # stored but not checked by any test that ran
    removed: int = 0  # obsolete ones deleted by -u
    files_removed: int = 0  # .snap files left empty and deleted by -u

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.written + self.updated


@attrs.frozen
class RunFinished:
    """The run is over. ``bailed`` is set when ``--bail`` stopped it early.

    ``errors`` counts files that failed to load (and preload scripts): they are not tests, so they are not in
    ``failed``, but they fail the run. ``filtered_out`` counts tests that ``-t`` left out."""

    passed: int
    failed: int
    skipped: int
    todo: int
    expect_calls: int
    files: int
    duration: float
    seed: int | None = None
    bailed: bool = False
    errors: int = 0
    filtered_out: int = 0
    snapshots: SnapshotCounts = attrs.Factory(SnapshotCounts)
    xfailed: int = 0
    xpassed: int = 0
    interrupted: bool = False  # a test raised KeyboardInterrupt (or pytest.exit): the run stopped there
    reruns: int = 0  # attempts of failed pytest-style tests run again (pytest-rerunfailures' "N rerun")
    exit_code: int | None = None  # pytest.exit(msg, returncode=N)'s N: the status the run exits with
    #: what stopped the run when ``interrupted``, as pytest names it ("_pytest.outcomes.Exit: msg" for
    #: ``pytest.exit(msg)``); None for a KeyboardInterrupt or collection errors
    interrupt_reason: str | None = None
    subtests_passed: int = (
        0  # subtests that passed (not results of their own): pytest 9's "N subtests passed"
    )
    #: warnings pytest-style tests and their collection raised (pytest's warnings plugin records them; its
    #: summary's "N warnings")
    warnings: int = 0
    #: each of those warnings, for pytest's "warnings summary": (a test's node id, or ``file:line`` for one
    #: raised while collecting; the warning as ``warnings.formatwarning`` writes it), in the order raised
    warning_list: tuple[tuple[str, str], ...] = ()
    #: ``record_testsuite_property(name, value)`` pairs of the run, values as text (pytest's junitxml writes
    #: them as the ``<properties>`` of its ``<testsuite>``)
    testsuite_properties: tuple[tuple[str, str], ...] = ()
    #: reports plugins logged in a category of their own (pytest-retry's ``retried``), by category in the
    #: order first seen, as pytest's summary line counts them after its own ("1 passed, 2 retried")
    categories: tuple[tuple[str, int], ...] = ()

    @property
    def tests(self) -> int:
        return self.passed + self.failed + self.skipped + self.todo + self.xfailed + self.xpassed


TestEvent = RunStarted | FileStarted | TestStarted | TestFinished | FileFinished | RunFinished


if TYPE_CHECKING:
    from rt._http_events import HttpRequest as HttpRequest
    from rt._http_events import HttpResponse as HttpResponse

_HTTP_EVENTS = ("HttpRequest", "HttpResponse")


def __getattr__(name: str) -> Any:
    """``HttpRequest`` and ``HttpResponse``, imported from :mod:`rt._http_events` when first read."""
    if name in _HTTP_EVENTS:
        from rt import _http_events

        value = getattr(_http_events, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
