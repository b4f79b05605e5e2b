"""``pytest_runtest_makereport(item, call)`` of a suite's conftest.py files.

A common conftest.py pattern keeps each phase's report on the item (``item.rep_call = report``) from a
hookwrapper, so that a fixture's teardown can tell whether the test failed (screenshots or logs on failure,
"incremental" test classes that skip after a failure). rt makes the report of each phase (setup, call,
teardown) right after it, before the next one starts, as pytest does, with pytest's own ``TestReport`` and
``CallInfo`` (a conftest with such a hook imports pytest) and pluggy's ``Result`` for old-style hookwrappers,
and gives it to the hooks in pluggy's order. A hook may change the report's outcome (a wrapper's
``report.outcome = "passed"`` once a retry passed, ``outcome.force_result(...)``, soft-assertion plugins failing a
test that raised nothing, a conftest.py skipping a test that failed for want of a server): the phase then ends as
the report says (:func:`changed`, :func:`error_from`), as pytest's terminal, JUnit file and exit status count the
reports, not the exceptions behind them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from rt_testrunner import clock
from rt_testrunner.failures import is_noise
from rt_testrunner.outcomes import Kind, ReportedFailure, classify, reason, xfail_applies

Hook = Callable[..., Any]
Phase = Literal["setup", "call", "teardown"]
Outcome = Literal["passed", "failed", "skipped"]


def ordered(hooks: list[Hook]) -> list[Hook]:
    """pluggy's call order: the last registered first (the nearest conftest.py), ``tryfirst`` ones before
    and ``trylast`` ones after the others."""
    hooks = list(reversed(hooks))
    first = [h for h in hooks if _options(h).get("tryfirst")]
    last = [h for h in hooks if _options(h).get("trylast")]
    return [*first, *(h for h in hooks if h not in first and h not in last), *last]


def _options(hook: Hook) -> dict[str, Any]:
    options = getattr(hook, "pytest_impl", None)
    return options if isinstance(options, dict) else {}


def report_phase(
    node: Any,
    location: tuple[str, int | None, str],
    when: Phase,
    error: BaseException | None,
    start: float,
    hooks: list[Hook],
    xfail: tuple[str, Any, bool] | None = None,
) -> Any:
    """Make the report of phase ``when`` of the test ``node`` (``error``: what the phase raised) and call
    the ``pytest_runtest_makereport`` hooks with it."""
    import pytest

    stop = clock.time()
    excinfo = pytest.ExceptionInfo.from_exception(error) if error is not None else None
    call: pytest.CallInfo[None] = pytest.CallInfo(
        None, excinfo, start, stop, stop - start, when, _ispytest=True
    )
    return report_call(node, location, call, hooks, xfail)


def report_call(
    node: Any,
    location: tuple[str, int | None, str],
    call: Any,
    hooks: list[Hook],
    xfail: tuple[str, Any, bool] | None = None,
) -> Any:
    """The report of pytest's ``CallInfo`` ``call`` of the test ``node``, made by the
    ``pytest_runtest_makereport`` hooks (pytest's own last)."""
    from rt_testrunner import pyplugins

    error = call.excinfo.value if call.excinfo is not None else None
    phase = (node, location, call.when, error, call.duration, call.start, call.stop, xfail)
    available = {"item": node, "call": call, "rt_phase": phase}
    return pyplugins.call("pytest_runtest_makereport", [_builtin, *hooks], available, firstresult=True)


def _builtin(rt_phase: tuple[Any, ...]) -> Any:
    """pytest's own ``pytest_runtest_makereport``, registered first: called when no other hook answers. One
    function for every phase (what it reports comes in ``rt_phase``, a name no plugin's hook declares), so
    that its call plan and parameter names are looked up once, not for each phase of each test."""
    return _default_report(*rt_phase)


def _default_report(
    node: Any,
    location: tuple[str, int | None, str],
    when: Phase,
    error: BaseException | None,
    duration: float,
    start: float,
    stop: float,
    xfail: tuple[str, Any, bool] | None,
) -> Any:
    import pytest

    own = getattr(node, "report_keywords", None)  # rt's node; a conftest.py's own item is pytest's
    keywords: dict[str, Literal[1]] = own() if own is not None else dict.fromkeys(node.keywords, 1)
    outcome = own_outcome(when, error, xfail)
    extra: dict[str, Any] = {}
    longrepr: Any = None
    if error is None:
        if when == "call" and xfail is not None and xfail[2]:
            longrepr = f"[XPASS(strict)] {xfail[0]}"  # pytest's: failed, without ``wasxfail``
        elif when == "call" and xfail is not None:
            extra["wasxfail"] = xfail[0]
    else:
        kind = classify(error)
        if kind is Kind.SKIP:
            longrepr = (location[0], (location[1] or 0) + 1, f"Skipped: {reason(error)}")
        else:
            # an expected failure's report keeps the exception's repr, as pytest's skipping plugin only
            # changes its outcome: a hook that makes it failed again has pytest's crash line
            excinfo = pytest.ExceptionInfo.from_exception(error)
            excinfo.traceback = _users_entries(excinfo.traceback)
            longrepr = excinfo.getrepr(style="short")
        if outcome == "skipped" and kind is not Kind.SKIP:
            extra["wasxfail"] = reason(error) if kind is Kind.XFAIL else xfail[0] if xfail else ""
    return pytest.TestReport(
        node.nodeid,
        location,
        keywords,
        outcome,
        longrepr,
        when,
        duration=duration,
        start=start,
        stop=stop,
        user_properties=list(node.user_properties),
        **extra,
    )


def own_outcome(when: Phase, error: BaseException | None, xfail: tuple[str, Any, bool] | None) -> Outcome:
    """The outcome of rt's own report of phase ``when`` that raised ``error`` (None: nothing), with the xfail
    mark ``xfail`` that applies: what pytest's ``TestReport.from_item_and_call`` and skipping plugin make (an
    error of any phase under the mark is skipped, with ``wasxfail``, when ``raises`` allows it; a strict mark
    fails a call that raised nothing)."""
    if error is None:
        return "failed" if when == "call" and xfail is not None and xfail[2] else "passed"
    kind = classify(error)
    if kind is Kind.SKIP or kind is Kind.XFAIL or xfail_applies(error, xfail):
        return "skipped"
    return "failed"


def changed(report: Any, error: BaseException | None, xfail: tuple[str, Any, bool] | None) -> bool:
    """Whether the hooks answered ``report`` with another outcome than rt's own report of its phase has
    (``error``: what the phase raised): the phase then ends as the report says. An interrupt (Ctrl-C, a
    cancellation, ``pytest.exit``) is never taken back by a report: pytest makes no report of it."""
    outcome = getattr(report, "outcome", None)
    if outcome not in ("passed", "failed", "skipped"):
        return False  # no report, or a plugin's own word for a passing stage (pytest-retry's "retried")
    if error is not None and interrupt(error):
        return False
    return bool(outcome != own_outcome(report.when, error, xfail))


def interrupt(error: BaseException) -> bool:
    """Ctrl-C, a cancellation, a generator closed, ``pytest.exit()``: what stops a test without a report,
    whatever its base class (pytest's ``Exit`` is an ``Exception``; its skip, xfail and fail outcomes are
    ``BaseException`` s that are reported)."""
    kind = classify(error)
    if kind is Kind.EXIT:
        return True
    return not isinstance(error, (Exception, SystemExit)) and kind is Kind.OTHER


def error_from(report: Any) -> BaseException | None:
    """What a phase whose report says ``report.outcome`` raises in rt: nothing for a passed one, pytest's
    xfail or skip exception for a skipped one (with the reason the report gives), and for a failed one a
    :class:`ReportedFailure` of the report's text."""
    import pytest

    if report.passed:
        return None
    text = getattr(report, "longreprtext", "") or str(getattr(report, "longrepr", "") or "")
    if report.skipped and hasattr(report, "wasxfail"):
        return pytest.xfail.Exception(str(report.wasxfail))
    if report.skipped:
        longrepr = report.longrepr
        why = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else text
        return pytest.skip.Exception(str(why).removeprefix("Skipped: "))
    crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", "")
    return ReportedFailure(text or f"{report.nodeid}: the {report.when} report says failed", str(crash or ""))


def _users_entries(traceback: Any) -> Any:
    """The entries of a pytest ``Traceback`` that are the suite's code, not the runner's, as pytest cuts its own
    frames from a report's traceback (rt's failures show the same ones): rendering reads and parses each
    entry's source file, and rt's modules between the test and its fixtures are long (sqlalchemy-utils 0.43.0,
    215 set-up errors of fixtures that need database servers: 200 ms a report, 42 s of a run pytest ends in
    24 s). All of them when none is left."""
    kept = traceback.filter(lambda entry: not is_noise(str(entry.path)))
    return kept if kept else traceback
