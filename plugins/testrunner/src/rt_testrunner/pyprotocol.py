"""A plain (``firstresult``) ``pytest_runtest_protocol`` of a conftest.py or plugin that runs the test itself.

Retry and repeat code in conftest.py files (and plugins such as flaky) take over each test's protocol: they
call ``item.ihook.pytest_runtest_logstart(...)``, then pytest's ``runtestprotocol(item, nextitem=...,
log=False)`` once or more, log the reports they keep with ``item.ihook.pytest_runtest_logreport(report=...)``,
and return True. pytest's ``runtestprotocol`` runs the phases through ``item.ihook``: so rt's test node gives
an ``ihook`` (:class:`ItemHooks`) whose set-up, call and teardown hooks run rt's own phases of that test,
whose ``pytest_runtest_makereport`` makes the phase's report with the suite's hooks, and whose
``pytest_runtest_logreport`` tells the suite's hooks and keeps the report. Once the hook returns, the test's
outcome is what the reports it logged say (the last one of each phase), as pytest's terminal counts it.

The hook is synchronous, and so are the phases it drives: an async test's or fixture's steps run each to its
end in a main-thread loop (main_loops.py), as pytest's async plugins run them.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from rt_testrunner import capture, pyplugins
from rt_testrunner.makereport import changed, error_from, report_call
from rt_testrunner.pyruntest import _report_readers, call_step, setup_step, teardown_step
from rt_testrunner.state import CURRENT

if TYPE_CHECKING:
    from rt_testrunner.pynodes import PyItem

#: the phases whose last logged report makes the test's outcome
_PHASES = ("setup", "call", "teardown")


class ItemHooks:
    """``item.ihook`` of an rt test: the runtest hooks run rt's phases of that test and tell the suite's
    hooks, every other name is ``config.hook``'s (every plugin's and conftest.py's implementation)."""

    def __init__(self, item: PyItem) -> None:
        self._item = item
        #: the reports given to ``pytest_runtest_logreport`` since the protocol began
        self.logged: list[Any] = []
        #: each report rt made, by its id, with the exception of its phase and the xfail mark that applied
        #: (the report kept with them: ids stay unique)
        self.errors: dict[int, tuple[Any, BaseException | None, tuple[str, Any, bool] | None]] = {}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        own = _RELAYS.get(name)
        if own is not None:
            return lambda **kwargs: own(self, **kwargs)
        hook: Callable[..., Any] = getattr(self._item.session.config.hook, name)
        return hook

    def begin(self) -> None:
        """A new protocol of the test starts: nothing logged yet."""
        self.logged.clear()
        self.errors.clear()

    def strict_xpass(self, report: Any) -> bool:
        """Whether ``report`` is rt's own failed call report of a strict xfail test that passed, unchanged by
        the hooks: the test then fails by its mark (rt's outcome of the mark and no error), not by the report."""
        known = self.errors.get(id(report))
        return (
            known is not None
            and known[1] is None
            and known[2] is not None
            and not changed(report, None, known[2])
        )

    def error_of(self, report: Any) -> BaseException:
        """The exception behind a report that did not pass: the phase's own for a report rt made whose outcome
        no hook changed, else one made of the report (makereport.py)."""
        known = self.errors.get(id(report))
        if known is not None and known[1] is not None and not changed(report, known[1], known[2]):
            return _from_relay(known[1])
        error = error_from(report)
        assert error is not None, "a report that did not pass"
        return error


def _from_relay(error: BaseException) -> BaseException:
    """``error`` with its traceback from rt's phase on: the frames of the hook, of pytest's runner and of
    the plugin that called them (flaky's ``lambda: ihook(item=item)``) are not the test's, as pytest cuts them."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != __file__:
        tb = tb.tb_next
    return error.with_traceback(tb) if tb is not None else error


def _drive(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run one of rt's phases of a test that needs no event loop to the end, from the synchronous hook."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()
    raise RuntimeError(
        "a phase of the test awaited inside a plain pytest_runtest_protocol (no event loop there)"
    )


def _logstart(hooks: ItemHooks, **where: Any) -> None:
    _tell(hooks._item, "pytest_runtest_logstart", where)  # noqa: SLF001 - the relay's own item


def _logfinish(hooks: ItemHooks, **where: Any) -> None:
    _tell(hooks._item, "pytest_runtest_logfinish", where)  # noqa: SLF001 - the relay's own item


def _tell(item: PyItem, name: str, available: dict[str, Any]) -> None:
    found = item.session.hooks_for(name, item.file)
    if found:
        pyplugins.call(name, found, available)


def _setup(hooks: ItemHooks, **_: Any) -> None:
    _drive(setup_step(hooks._item))  # noqa: SLF001 - the relay's own item


def _call(hooks: ItemHooks, **_: Any) -> None:
    _drive(call_step(hooks._item))  # noqa: SLF001 - the relay's own item


def _teardown(hooks: ItemHooks, nextitem: Any = None, **_: Any) -> None:
    error = _drive(teardown_step(hooks._item, nextitem))  # noqa: SLF001 - the relay's own item
    if error is not None:
        raise error


def _makereport(hooks: ItemHooks, call: Any, **_: Any) -> Any:
    """The phase's report, made as rt makes it for its own protocol (the captured output as its sections,
    the xfail mark that applies): the suite's ``pytest_runtest_makereport`` hooks, pytest's last."""
    item = hooks._item  # noqa: SLF001 - the relay's own item
    output = capture.CURRENT.get()
    if output is not None:
        out, err = output.phase_output()
        item.node.add_report_section(call.when, "stdout", out)
        item.node.add_report_section(call.when, "stderr", err)
    readers = _report_readers(item)
    state = CURRENT.get()
    xfail = state.xfail if state is not None else None  # every phase's, as pytest's skipping plugin
    report = report_call(item.node, item.node.location, call, readers[0] if readers else [], xfail)
    hooks.errors[id(report)] = (report, call.excinfo.value if call.excinfo is not None else None, xfail)
    return report


def _logreport(hooks: ItemHooks, report: Any) -> None:
    item = hooks._item  # noqa: SLF001 - the relay's own item
    hooks.logged.append(report)
    if report.outcome not in _OUTCOMES:
        _count_rerun(item, report)
    readers = _report_readers(item)
    if readers is not None and readers[1]:
        pyplugins.call("pytest_runtest_logreport", readers[1], {"report": report})


_RELAYS: dict[str, Callable[..., Any]] = {
    "pytest_runtest_logstart": _logstart,
    "pytest_runtest_logfinish": _logfinish,
    "pytest_runtest_setup": _setup,
    "pytest_runtest_call": _call,
    "pytest_runtest_teardown": _teardown,
    "pytest_runtest_makereport": _makereport,
    "pytest_runtest_logreport": _logreport,
}


#: the outcomes of pytest's reports; a plugin's own word (pytest-retry's "retried") is its status's
_OUTCOMES = ("passed", "failed", "skipped")


def _count_rerun(item: PyItem, report: Any) -> None:
    """A report a plugin logs with an outcome of its own (pytest-retry logs a failed attempt as
    ``retry_outcome``) counts under the category its ``pytest_report_teststatus`` gives, as pytest's terminal
    counts it: ``rerun`` is the summary's `` N rerun``, another word of the plugin's (pytest-retry's default
    ``retried``) a `` N retried`` line of its own, as pytest's ``2 passed, 1 retried``."""
    config = item.session.config
    status = config.hook.pytest_report_teststatus(report=report, config=config)
    state = CURRENT.get()
    if state is None or not isinstance(status, tuple) or not status or not isinstance(status[0], str):
        return
    category = status[0]
    if category == "rerun":
        state.reruns_logged += 1
    elif category and category not in _PYTEST_CATEGORIES:
        state.categories_logged[category] = state.categories_logged.get(category, 0) + 1


#: the categories of pytest's own summary, which rt counts from its results
_PYTEST_CATEGORIES = frozenset(
    {
        "passed",
        "failed",
        "skipped",
        "error",
        "xfailed",
        "xpassed",
        "deselected",
        "warnings",
        "subtests passed",
    }
)


def item_hooks(item: PyItem) -> ItemHooks:
    """The ``ihook`` of ``item``'s node, made on first use."""
    found = item.node.__dict__.get("_rt_ihook")
    if found is None:
        found = item.node.__dict__["_rt_ihook"] = ItemHooks(item)
    return found  # type: ignore[no-any-return]


def _counted(report: Any) -> tuple[str, str, str] | None:
    """What pytest's terminal counts a logged report as (``passed``, ``failed``, ``error``, ``skipped``,
    ``xfailed``, ``xpassed``), with its reason and text; None for a passed set-up or teardown, which it does
    not count, and a plugin's own outcome (counted by :func:`_count_rerun`)."""
    text = str(getattr(report, "longreprtext", "") or "")
    xfail = str(getattr(report, "wasxfail", ""))
    if report.outcome == "passed":
        if report.when != "call":
            return None
        return ("xpassed", xfail, "") if hasattr(report, "wasxfail") else ("passed", "", "")
    if report.outcome == "skipped":
        if hasattr(report, "wasxfail"):
            return "xfailed", xfail, ""
        longrepr = report.longrepr
        why = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else text
        return "skipped", str(why).removeprefix("Skipped: "), ""
    if report.outcome == "failed":
        return ("failed" if report.when == "call" else "error"), "", text
    return None


def settle(item: PyItem) -> None:
    """The test's outcome from the reports the plain protocol logged (the last one of each phase): a failed
    teardown is its teardown error, a set-up that did not pass or a call that did not pass raises what that
    phase raised (rt counts a failure, an error, a skip or an xfail from it, as pytest counts the reports).
    The reports logged before those (a test run and logged twice: flaky's xfail test) are results of their
    own, as pytest's terminal counts every logged report (``TestState.logged_earlier``)."""
    hooks = item_hooks(item)
    last: dict[str, Any] = {}
    for report in hooks.logged:
        if (
            report.nodeid == item.nodeid
            and report.when in _PHASES
            and report.outcome in {"passed", "failed", "skipped"}
        ):
            last[report.when] = report
    state = CURRENT.get()
    if state is not None:
        kept = {id(report) for report in last.values()}
        state.logged_earlier = [
            counted
            for report in hooks.logged
            if id(report) not in kept and report.nodeid == item.nodeid and report.when in _PHASES
            for counted in [_counted(report)]
            if counted is not None
        ]
        teardown = last.get("teardown")
        # a skipped teardown (xfailed under the mark, or pytest.skip()) counts as pytest counts it too
        state.teardown_error = (
            hooks.error_of(teardown) if teardown is not None and not teardown.passed else None
        )
        state.setup_error = False
    setup = last.get("setup")
    if setup is not None and not setup.passed:
        if state is not None and setup.failed:
            state.setup_error = True
        raise hooks.error_of(setup)
    call = last.get("call")
    # a strict xfail test that passed fails by its xfail mark (rt's outcome of the mark and no error)
    if call is not None and not call.passed and not hooks.strict_xpass(call):
        raise hooks.error_of(call)
