"""Reporting: turning outcomes into :mod:`rt.events` events, counting them, and judging each attempt.

The runner only produces events; what the user sees is up to the reporters that receive them (console, dots,
JUnit and GitHub annotations in this plugin; any other reporter from a plugin).
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from rt.events import Location, TestFailure, TestFinished, TestStatus
from rt_testrunner import outcomes
from rt_testrunner.execute import Outcome
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.tally import Tally

FAILING_PASSED = (
    "this test is marked as failing but it passed. Remove `.failing` if tested behavior now works"
)
TODO_PASSED = "this test is marked as todo but passes. Remove `.todo` or check that test is correct."


class Recorder(Tally):
    """The tally of a run that executes tests: it also judges each attempt (status, failure, reason)."""

    def location(self, location: Location | None) -> Location | None:
        return display_location(location, self.root)

    def judge(
        self, case: TestCase, outcome: Outcome, timeout_ms: int
    ) -> tuple[TestStatus, TestFailure | None, str]:
        """The status of an attempt, its failure, and the reason of a skip or an expected failure."""
        status, failure, reason = self._judge(case, outcome, timeout_ms)
        if failure is not None and outcome.captured:
            failure = attrs.evolve(failure, details=f"{failure.details}\n{outcome.captured}")
        return status, failure, reason

    def judge_teardown(self, outcome: Outcome, timeout_ms: int) -> tuple[TestStatus, TestFailure | None, str]:
        """The result of a test's failed teardown (``outcome.teardown_error``): an error, as pytest reports
        it, but an expected failure when the test is marked xfail and ``raises`` (if given) matches, or it
        called ``pytest.xfail()``, and a skip for ``pytest.skip()``, as pytest's skipping plugin makes the
        report of every phase (paho-mqtt 2.2.0: ``XFAIL at teardown of`` its xfail-marked test, which rt
        counted as an error)."""
        error = outcome.teardown_error
        assert error is not None
        kind = outcomes.classify(error)
        if kind is outcomes.Kind.SKIP:
            return TestStatus.SKIP, None, outcomes.reason(error)
        if kind is outcomes.Kind.XFAIL:
            return TestStatus.XFAIL, None, outcomes.reason(error)
        if outcome.xfail is not None and outcomes.xfail_applies(error, outcome.xfail):
            return TestStatus.XFAIL, None, outcome.xfail[0]
        return TestStatus.ERROR, self.failure(Outcome(error=error), timeout_ms), ""

    def _judge(
        self, case: TestCase, outcome: Outcome, timeout_ms: int
    ) -> tuple[TestStatus, TestFailure | None, str]:
        error = outcome.error
        if outcome.timed_out and outcome.setup_error:
            # pytest-timeout's time-out while a pytest test's fixtures are set up is an error, as pytest's
            failure = self.failure(outcome, timeout_ms)
            return TestStatus.ERROR, attrs.evolve(failure, details=f"error at setup: {failure.details}"), ""
        if error is not None and not outcome.timed_out:
            kind = outcomes.classify(error)
            if kind is outcomes.Kind.SKIP:
                return TestStatus.SKIP, None, outcomes.reason(error)
            if kind is outcomes.Kind.XFAIL:
                return TestStatus.XFAIL, None, outcomes.reason(error)
            if outcome.setup_error:
                # as pytest: an error while setting up a test marked xfail is an expected failure too
                if outcome.xfail is not None and outcomes.xfail_applies(error, outcome.xfail):
                    return TestStatus.XFAIL, None, outcome.xfail[0]
                failure = self.failure(outcome, timeout_ms)
                return (
                    TestStatus.ERROR,
                    attrs.evolve(failure, details=f"error at setup: {failure.details}"),
                    "",
                )
            if outcome.xfail is not None and outcomes.xfail_applies(error, outcome.xfail):
                return TestStatus.XFAIL, None, outcome.xfail[0]
            if kind is outcomes.Kind.FAIL:
                # a report's text (ReportedFailure) is the whole failure: pytest names no exception's type
                named = "ReportedFailure" if isinstance(error, outcomes.ReportedFailure) else "Failed"
                failure = _plain_failure(
                    outcomes.reason(error) or "Failed", named, self.location(case.location)
                )
                crash = getattr(error, "crash", "")  # a changed report's crash line (ReportedFailure)
                return TestStatus.FAIL, attrs.evolve(failure, message=crash) if crash else failure, ""
        elif outcome.xfail is not None and not outcome.timed_out:
            reason, _, strict = outcome.xfail
            if strict:
                return (
                    TestStatus.FAIL,
                    _plain_failure(
                        f"[XPASS(strict)] {reason}".rstrip(), "XPassStrict", self.location(case.location)
                    ),
                    reason,
                )
            return TestStatus.XPASS, None, reason
        rt_status, rt_failure = self._judge_rt(case, outcome, timeout_ms)
        return rt_status, rt_failure, ""

    def _judge_rt(
        self, case: TestCase, outcome: Outcome, timeout_ms: int
    ) -> tuple[TestStatus, TestFailure | None]:
        failed = outcome.error is not None or outcome.timed_out
        if case.has("todo"):
            if failed:
                return TestStatus.TODO, None
            return TestStatus.FAIL, _plain_failure(TODO_PASSED, "TodoPassed", self.location(case.location))
        if case.has("failing") and not outcome.timed_out:
            if failed:
                return TestStatus.PASS, None
            return TestStatus.FAIL, _plain_failure(
                FAILING_PASSED, "FailingPassed", self.location(case.location)
            )
        if failed:
            failure = self.failure(outcome, timeout_ms)
            if failure.location is None:
                failure = attrs.evolve(failure, location=self.location(case.location))
            return TestStatus.FAIL, failure
        return TestStatus.PASS, None

    def failure(self, outcome: Outcome, timeout_ms: int) -> TestFailure:
        if outcome.timed_out:
            return _plain_failure(f"this test timed out after {timeout_ms}ms.", "Timeout", timed_out=True)
        assert outcome.error is not None
        from rt_testrunner.failures import render_exception

        return render_exception(outcome.error, self.root)

    def hook_failure(self, suite: Suite, kind: str, error: Outcome, file: str, timeout_ms: int) -> None:
        failure = self.failure(error, timeout_ms)
        self.record(
            TestFinished(
                file,
                (*suite.path, f"{kind} hook"),
                TestStatus.FAIL,
                0.0,
                failure=failure,
                suite_lines=suite.lines,
                location=failure.location,
                hook=kind,
            )
        )


def display_location(location: Location | None, root: Path) -> Location | None:
    """``location`` with its file relative to the root (string work: this runs once per test)."""
    if location is None:
        return None
    prefix = f"{root}{os.sep}"
    if location.file.startswith(prefix):
        return Location(location.file[len(prefix) :].replace(os.sep, "/"), location.line, location.column)
    return location


def _plain_failure(
    message: str, kind: str = "Error", location: Location | None = None, timed_out: bool = False
) -> TestFailure:
    """:func:`rt_testrunner.failures.plain_failure`, that module imported only when a test fails (a passing
    run never imports it)."""
    from rt_testrunner.failures import plain_failure

    return plain_failure(message, kind, location, timed_out)
