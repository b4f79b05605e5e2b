"""The counts of a run and the events that make them, sent on to the reporters: :class:`Tally`.

A module of its own, apart from judging outcomes (:class:`rt_testrunner.report.Recorder`, which extends it),
so that ``rt test --parallel``'s main process, which counts and reports what its workers judged, does not
import the execution and failure-rendering machinery (about 0.05 s of CPU) on the critical path of its run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rt.events import RunFinished, SnapshotCounts, TestEvent, TestFinished, TestStatus
from rt.interfaces import Reporter


class Tally:
    """Sends events to the reporters and keeps the counts the summary and the exit code are made of."""

    def __init__(self, reporters: Sequence[Reporter], root: Path, bail: int | None) -> None:
        self.reporters = list(reporters)
        self.root = root
        self.bail = bail
        self.counts = {status: 0 for status in TestStatus}
        self.expect_calls = 0
        #: attempts of pytest-style tests run again after a failure (pytest-rerunfailures' ``N rerun``; the
        #: runner counts them: the spec's tests print no such count)
        self.reruns = 0
        #: reports plugins logged in a category of their own (pytest-retry's ``retried``), by category
        self.categories: dict[str, int] = {}
        self.bailed = False
        self.interrupted = False
        #: ``pytest.exit(msg, returncode=N)``'s N, the status the run then exits with (exit_status.py)
        self.exit_code: int | None = None
        #: ``pytest.exit(msg)``'s "_pytest.outcomes.Exit: msg", shown in the summary as pytest shows it
        self.interrupt_reason: str | None = None
        #: subtests that passed, which pytest 9 counts apart from the tests ("5 subtests passed")
        self.subtests_passed = 0
        #: warnings recorded while collecting and running pytest-style tests (pywarnings.recorded)
        self.warnings = 0
        #: those warnings' locations and texts (pywarnings.listed), for pytest's "warnings summary"
        self.warning_list: list[tuple[str, str]] = []
        #: ``record_testsuite_property`` pairs, in the order recorded
        self.testsuite_properties: list[tuple[str, str]] = []
        #: every result recorded, in order: ``terminalreporter.stats`` is made of them (terminal_stats.py)
        self.results: list[TestFinished] = []

    def interrupt(self, exit_code: int | None = None, reason: str | None = None) -> None:
        """A test raised KeyboardInterrupt: it failed, and no further test starts (the summary and the
        reports are still written, as pytest does on Ctrl-C)."""
        self.interrupted = True
        if exit_code is not None and self.exit_code is None:
            self.exit_code = exit_code
        if reason is not None and self.interrupt_reason is None:
            self.interrupt_reason = reason
        self.bailed = True

    def emit(self, event: TestEvent) -> None:
        for reporter in self.reporters:
            reporter.handle(event)

    def run_finished(
        self, *, files: int, duration: float, seed: int | None, filtered_out: int, snapshots: SnapshotCounts
    ) -> RunFinished:
        """The run's summary from what was recorded: one place for a one-process run and ``--parallel``."""
        counts = self.counts
        return RunFinished(
            passed=counts[TestStatus.PASS],
            failed=counts[TestStatus.FAIL],
            skipped=counts[TestStatus.SKIP],
            todo=counts[TestStatus.TODO],
            expect_calls=self.expect_calls,
            files=files,
            duration=duration,
            seed=seed,
            filtered_out=filtered_out,
            bailed=self.bailed and not self.interrupted,
            xfailed=counts[TestStatus.XFAIL],
            xpassed=counts[TestStatus.XPASS],
            errors=counts[TestStatus.ERROR],
            interrupted=self.interrupted,
            exit_code=self.exit_code,
            interrupt_reason=self.interrupt_reason,
            subtests_passed=self.subtests_passed,
            warnings=self.warnings,
            warning_list=tuple(self.warning_list),
            testsuite_properties=tuple(self.testsuite_properties),
            snapshots=snapshots,
            reruns=self.reruns,
            categories=tuple(self.categories.items()),
        )

    def add_categories(self, counts: dict[str, int]) -> None:
        """Count reports of plugins' own categories (:attr:`categories`)."""
        for category, number in counts.items():
            self.categories[category] = self.categories.get(category, 0) + number

    def record(self, event: TestFinished) -> None:
        if event.counted:
            self.counts[event.status] += 1
        self.expect_calls += event.expect_calls
        self.results.append(event)
        self.emit(event)
        if (
            event.status in (TestStatus.FAIL, TestStatus.ERROR)
            and self.bail is not None
            and self.counts[TestStatus.FAIL] + self.counts[TestStatus.ERROR] >= self.bail
        ):
            self.bailed = True
