"""Per-test state that ``expect`` updates: a context variable, so concurrent tests do not share counters."""

from __future__ import annotations

import contextvars
from typing import Any

import attrs


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.define(eq=False)
class TestState:
    __test__ = False

    expect_calls: int = 0
    #: the running test's describe names and name (snapshot keys), and its snapshot checks so far
    test_path: tuple[str, ...] = ()
    snapshot_calls: int = 0
    expected_assertions: int | None = None
    requires_assertions: bool = False
    #: the matchers under ``.resolves``/``.rejects`` created in this attempt (their coroutines): one never
    #: awaited checked nothing, and the runner fails the test for it (``expect.unawaited_matcher_error``)
    pending_matchers: list[Any] = attrs.Factory(list)
    #: set when the error came from setting the test up (a pytest fixture): counted as an error, not a failure
    setup_error: bool = False
    #: what the test wrote while its output was captured (stdout, stderr, logging), shown with its failure
    captured: str = ""
    #: the xfail mark that applies to this test: (reason, raises, strict)
    xfail: tuple[str, Any, bool] | None = None
    #: an error from tearing the test's fixtures down (pytest counts it as an error next to the test's result)
    teardown_error: BaseException | None = None
    #: the test's subtests that did not pass (``subtests.SubtestResult``), each reported as a result of its own,
    #: and how many passed (pytest 9 counts them apart)
    subtests: list[Any] = attrs.Factory(list)
    subtests_passed: int = 0
    #: the call of a pytest-style test did not pass (it failed, skipped or failed as expected): pytest's
    #: ``tmp_path_retention_policy = failed`` keeps its ``tmp_path``
    call_failed: bool = False
    #: reports a plugin logged as reruns of the test (pytest's ``rerun`` category: pytest-retry's with
    #: ``retry_outcome = "rerun"``), counted in the summary's `` N rerun`` as pytest's terminal counts them
    reruns_logged: int = 0
    #: reports a plugin logged in a category of its own (pytest-retry's default ``retried``), by category
    categories_logged: dict[str, int] = attrs.Factory(dict)
    #: reports a plain ``pytest_runtest_protocol`` logged before the last one of each phase, each a result
    #: pytest counts: (its category: ``passed``, ``failed``, ``error``, ``skipped``, ``xfailed``, ``xpassed``;
    #: the reason; the failure's text)
    logged_earlier: list[tuple[str, str, str]] = attrs.Factory(list)


CURRENT: contextvars.ContextVar[TestState | None] = contextvars.ContextVar("rt_test_state", default=None)


def count_expect() -> None:
    state = CURRENT.get()
    if state is not None:
        state.expect_calls += 1
