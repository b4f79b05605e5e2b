"""Running one pytest item: the phases pytest's runner has (set-up of the fixtures and the
``pytest_runtest_setup`` hooks, the call through ``pytest_runtest_call``/``pytest_pyfunc_call``, teardown),
each phase's report for the suite's ``pytest_runtest_makereport``/``pytest_runtest_logreport`` hooks, and the
end of the session (wider fixtures torn down, ``pytest_sessionfinish``).

rt's own runner (:mod:`rt_testrunner.execute`) schedules, times out and reports the function
:func:`make_runner` returns like any other test; this module is what that function does for a pytest item.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from rt_testrunner import capture, clock, pyplugins, pywarnings
from rt_testrunner.fixtures import NOTSET, FixtureDef, Setup, enclosing_classes
from rt_testrunner.pynodes import Node, test_instance
from rt_testrunner.pyplugins import is_wrapper
from rt_testrunner.pyskipping import check_skips, xfail_spec
from rt_testrunner.pywarnings import (
    apply_warning_filters,
    install_unraisable_hooks,
    tell_unraisable,
    uninstall_unraisable_hooks,
)
from rt_testrunner.state import CURRENT

if TYPE_CHECKING:
    from rt.events import TestFinished
    from rt_testrunner.pynodes import PyItem
    from rt_testrunner.pysession import PytestSession


#: the pytest item running in this context (its hooks explain a failed ``assert``: rewrite.py)
RUNNING: contextvars.ContextVar[PyItem | None] = contextvars.ContextVar("rt_pytest_item", default=None)

#: no time-out for pytest tests unless asked (pytest has none; rt's default 5 s would fail slow real tests)
NO_TIMEOUT_MS = 10**9


def _pyfunc_hooks(item: PyItem) -> list[Callable[..., Any]]:
    """The ``pytest_pyfunc_call`` hooks for ``item``: an async test an async plugin claims (rt runs it on that
    plugin's loop, async_plugins.py) is not handed to installed plugins' hooks, which under pytest get the
    sync function that plugin's own hook put in its place (pyee 13.0.1: pytest-twisted's ran its
    asyncio-marked coroutine tests in the reactor, 11 failed with "no running event loop"); a conftest.py's
    hooks are called."""
    hooks = item.session.hooks_for("pytest_pyfunc_call", item.file)
    if hooks and item.claim is not None:
        hooks = [hook for hook in hooks if pyplugins.owner(hook) is None]
    return hooks


def make_runner(item: PyItem) -> Callable[[], Any]:
    """The function rt calls for ``item``: async when the test or one of its fixtures is.

    Whether the test is async is asked of the function itself, as pytest does, never of what it wraps: a sync
    decorator around an ``async def`` usually runs its own loop (``loop.run_until_complete``), which cannot
    start inside rt's. A unittest method is never run in rt's loop either: ``TestCase.run`` calls it, and
    ``IsolatedAsyncioTestCase`` starts an event loop of its own."""
    if needs_loop(item):

        async def run_async() -> None:
            await run_item(item)

        return run_async

    def run_sync() -> None:
        coroutine = run_item(item)
        try:
            coroutine.send(None)
        except StopIteration:
            return
        coroutine.close()
        raise RuntimeError(
            f"{item.nodeid}: the test awaited, but neither its function nor its fixtures are async"
            " functions (a sync wrapper around an async def runs outside rt's event loop)"
        )

    return run_sync


def needs_loop(item: PyItem) -> bool:
    """The test or one of its fixtures is async, and rt runs it in an event loop."""
    # a conftest.py's pytest_pyfunc_call that answers runs the coroutine on a loop of its own
    pyfunc_hooks = _pyfunc_hooks(item)
    own_loop = False
    if pyfunc_hooks and not item.is_unittest and item.is_function:
        own_loop = any(not is_wrapper(hook) for hook in pyfunc_hooks)
    coroutine = not item.is_unittest and not own_loop and inspect.iscoroutinefunction(item.function)
    return coroutine or any(f.is_async for f in item.closure)


async def run_item(item: PyItem) -> None:
    RUNNING.set(item)
    try:
        await _run_item(item)
    finally:
        # set, not reset by token: an async test's coroutine may finish in another context than it began in
        RUNNING.set(None)


async def _run_item(item: PyItem) -> None:
    install_unraisable_hooks(item.session.blocked)  # once, when the first pytest test runs
    if item.node is None:
        item.node = Node(item)
    caught: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if item.session.warnings_plugin:
        recorded = item.session.hooks_for("pytest_warning_recorded", item.file)
        caught = pywarnings.recording(item.nodeid, _warnings_teller(item, recorded) if recorded else None)
    root_level = item.session.log_level
    if item.session.live_log is not None:
        item.session.live_log.attach()  # once logging is imported (the suite's modules import it, not rt)
        root_level = _lowest(root_level, item.session.live_log.level)
    with caught, _root_log_level(root_level):
        if item.session.warnings_plugin:
            apply_warning_filters(item)
        protocol = item.session.hooks_for("pytest_runtest_protocol", item.file)
        if not protocol:
            await _protocol(item)
            return
        from rt_testrunner import pyhooks

        # pytest's protocol reports a failed test and returns True: its wrappers never see the failure raised
        failure: list[BaseException] = []
        ran: list[bool] = []

        async def default() -> bool:
            ran.append(True)
            try:
                await _protocol(item)
            except (KeyboardInterrupt, GeneratorExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - raised again once the wrappers are done
                failure.append(exc)
            return True

        from rt_testrunner import pyprotocol

        pyprotocol.item_hooks(item).begin()
        available = {"item": item.node, "nextitem": next_node(item)}
        await pyhooks.call(protocol, available, default, firstresult=True, name="pytest_runtest_protocol")
        if failure:
            raise failure[0]
        if not ran:  # a plain hook ran the test itself: its outcome is what that hook logged
            pyprotocol.settle(item)


def next_node(item: PyItem) -> Any:
    """pytest's ``nextitem``: the node of the test that runs after ``item`` (after a file's last one, the next
    file's first in one process, None under ``--parallel``), None after the run's last (the runner links
    them, for the suites with protocol or teardown hooks: runner.py)."""
    following = item.next_item
    if following is None:
        return None
    if following.node is None:
        following.node = Node(following)
    return following.node


def _warnings_teller(item: PyItem, hooks: list[Callable[..., Any]]) -> Callable[[list[Any]], None]:
    """What hands each warning a test recorded to the ``pytest_warning_recorded`` hooks after the test."""

    def tell(caught: list[Any]) -> None:
        pywarnings.tell_recorded(hooks, caught, "runtest", item.nodeid, item.session)
        if item.session.report_log is not None:  # a --parallel worker's, for the worker that ends the session
            from rt_testrunner.report_replay import keep_warnings

            keep_warnings(item.session, caught, item.nodeid)

    return tell


async def _protocol(item: PyItem) -> None:
    """pytest's ``runtestprotocol`` for ``item`` between ``pytest_runtest_logstart`` and
    ``pytest_runtest_logfinish``: what the plugins' protocol wrappers wrap."""
    where = {"nodeid": item.nodeid, "location": item.node.location}
    logstart = item.session.hooks_for("pytest_runtest_logstart", item.file)
    if logstart:
        pyplugins.call("pytest_runtest_logstart", logstart, where)
    try:
        await _phases(item)
    finally:
        logfinish = item.session.hooks_for("pytest_runtest_logfinish", item.file)
        if logfinish:
            pyplugins.call("pytest_runtest_logfinish", logfinish, where)


async def _phases(item: PyItem) -> None:
    """The set-up, call and teardown of ``item``, each reported to the suite's report hooks: each phase ends
    as its report says, which a ``pytest_runtest_makereport`` hook may have changed (makereport.py)."""
    state = CURRENT.get()
    report_hooks = _report_readers(item)
    started = clock.time()
    interrupted = False
    pending: BaseException | None = None
    mark = None
    try:
        setup_error = await _raised(setup_step(item))
        # the xfail mark (set in the set-up, or added by the test): every phase's report is made with it
        mark = state.xfail if state is not None else None
        if report_hooks:
            raised, setup_error = (
                setup_error,
                _make_report(item, "setup", setup_error, started, report_hooks, mark),
            )
            if raised is not None and setup_error is None and item.setup is not None:
                item.setup.incomplete = True  # a hook made the failed set-up's report passed
        if setup_error is not None:
            if state is not None:
                state.setup_error = True
            raise setup_error
        started = clock.time()
        call_error = await _raised(call_step(item))
        mark = state.xfail if state is not None else None
        if report_hooks:
            call_error = _make_report(item, "call", call_error, started, report_hooks, mark)
        if call_error is not None:
            if state is not None:
                state.call_failed = True
            raise call_error
    except BaseException as exc:
        from rt_testrunner.makereport import interrupt  # only when a phase raised: a passing run never does

        interrupted = interrupt(exc)
        pending = exc
        raise
    finally:
        started = clock.time()
        teardown_error = _unchained(await teardown_step(item, next_node(item)), pending)
        if report_hooks and not interrupted:  # pytest tears down after an interrupt without reports
            teardown_error = _make_report(item, "teardown", teardown_error, started, report_hooks, mark)
        if state is not None and teardown_error is not None:
            state.teardown_error = teardown_error
        os.environ.pop("PYTEST_CURRENT_TEST", None)


def _unchained(error: BaseException | None, pending: BaseException | None) -> BaseException | None:
    """The teardown's ``error`` without the set-up's or call's ``pending`` error as its context: rt tears
    down while that error propagates, so Python chains it to what the teardown raised; pytest tears down after
    the call's report, with nothing to chain (its teardown report shows no "During handling" section, and
    pytest-rerunfailures' ``--only-rerun`` does not find the call's error in the teardown's)."""
    seen: set[int] = set()
    exc = error
    while pending is not None and exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__context__ is pending:
            exc.__context__ = None
            break
        exc = exc.__context__
    return error


async def _raised(step: Awaitable[None]) -> BaseException | None:
    """What the phase ``step`` raised, None when it ended: its report is made before it is raised again."""
    try:
        await step
    except BaseException as exc:  # noqa: BLE001 - raised again by the caller once the report is made
        return exc
    return None


async def setup_step(item: PyItem) -> None:
    """pytest's set-up phase of ``item``: the ``pytest_runtest_setup`` hooks around the set-up of its
    fixtures (a fresh set of function-scoped values each time: a plain ``pytest_runtest_protocol`` may run
    the phases again). Raises what the phase raised."""
    item.setup = Setup(item, item.session.registry, item.session.scopes)
    # the instance is made before the fixtures, as pytest makes it: its setup_method and the fixtures defined
    # as its methods (``@pytest.fixture(autouse=True) def inject(self, caplog)``) see the instance the test
    # then runs on; one a hook asked for before stays, a set-up after a teardown (a rerun) gets a fresh one
    if item.instance_done:
        item.instance = None
    item.instance_done = False
    test_instance(item)
    setup = item.setup
    _current_test(item, "setup")
    setup_hooks = [hook for base, hook in item.session.setup_hooks if item.file.startswith(base)]
    if setup_hooks:
        from rt_testrunner import pyhooks

        await pyhooks.call(
            [_skip_marks, *setup_hooks],
            {"item": item.node, "rt_item": item},
            lambda: _set_up(item, setup),
            firstresult=False,
            name="pytest_runtest_setup",
            plain_default=True,
        )
    else:
        _skip_marks(item)
        await _set_up(item, setup)
    tell_unraisable()


async def call_step(item: PyItem) -> None:
    """pytest's call phase of ``item`` (its fixtures set up). Raises what the test raised."""
    state = CURRENT.get()
    try:
        _current_test(item, "call")
        assert item.setup is not None
        await _call_item(item, item.setup)
        tell_unraisable()
    finally:
        # an xfail mark added while the test ran (``request.applymarker``, ``node.add_marker``) counts,
        # as pytest evaluates the marks again after the call when none applied before it
        if state is not None and state.xfail is None:
            state.xfail = xfail_spec(item)


async def teardown_step(item: PyItem, nextitem: Any = None) -> BaseException | None:
    """pytest's teardown phase of ``item``: its error returned, its fixtures torn down whatever happened."""
    setup = item.setup if item.setup is not None else Setup(item, item.session.registry, item.session.scopes)
    _current_test(item, "teardown")
    teardown_error = await _teardown_phase(item, setup, nextitem)
    item.setup = None
    setup.release()
    item.instance_done = True
    if item.is_unittest:
        item.instance = None  # pytest drops a TestCase's instance after its teardown
    if item.log_attached:
        capture.detach(item.log_attached)
    if item.caplog is not None:
        item.caplog.finish()
        item.caplog = None
    return teardown_error


def _skip_marks(rt_item: PyItem) -> None:
    """pytest's skipping plugin's ``pytest_runtest_setup`` (``tryfirst``: inside the wrappers, before the
    other hooks): the skip marks skip the test in its set-up phase, so it has a skipped set-up report and a
    teardown report (pytest-html and pytest-json-report list it), and the xfail marks apply."""
    xfail = check_skips(rt_item)
    state = CURRENT.get()
    if state is not None:
        state.xfail = xfail


_skip_marks.pytest_impl = {"tryfirst": True}  # type: ignore[attr-defined]


async def _set_up(item: PyItem, setup: Setup) -> None:
    """pytest's own ``pytest_runtest_setup``: the test's fixtures (directly parametrized values through the
    plugins' ``pytest_fixture_setup``), then its node's set-up. The suite's ``pytest_runtest_setup`` hooks
    run before it and their wrappers around it, so a wrapper that times or patches the set-up sees it."""
    fixture_hooks = [h for base, h in item.session.fixture_setup_hooks if item.file.startswith(base)]
    if fixture_hooks:
        _direct_params_through(fixture_hooks, item, setup)
    if item.session.named_hooks.get("pytest_fixture_post_finalizer"):
        # pytest sets each directly parametrized name up as a fixture of its own, torn down last
        for name, value in item.direct_params.items():
            setup.post_finalizer(FixtureDef(name, _no_function, "function"), value, setup.finalizers)
    for name in item.fixturenames:
        await setup.get(name)
    item.setup_node()


async def _teardown_phase(item: PyItem, setup: Setup, nextitem: Any = None) -> BaseException | None:
    """The teardown phase: the suite's ``pytest_runtest_teardown`` hooks around pytest's own (the fixtures'
    teardown, then the node's), whose error is the phase's. The fixtures are torn down even when a hook
    raised before them (pytest's next set-up would tear them down)."""
    hooks = [h for base, h in item.session.teardown_hooks if item.file.startswith(base)]
    if not hooks:
        return await _tear_down(item, setup, raising=False)
    from rt_testrunner import pyhooks

    done: list[bool] = []

    async def default() -> None:
        done.append(True)
        await _tear_down(item, setup, raising=True)

    error: BaseException | None = None
    try:
        await pyhooks.call(
            hooks,
            {"item": item.node, "nextitem": nextitem},
            default,
            firstresult=False,
            name="pytest_runtest_teardown",
            plain_default=True,
        )
    except BaseException as exc:  # noqa: BLE001 - reported as the test's teardown error
        error = exc
    if not done:
        error = await _tear_down(item, setup, raising=False) or error
    return error


async def _tear_down(item: PyItem, setup: Setup, raising: bool) -> BaseException | None:
    """pytest's own ``pytest_runtest_teardown``: the test's fixtures, then its node; the last error of
    them raised (``raising``) or returned."""
    error: BaseException | None = None
    try:
        result = setup.teardown()
        if inspect.isawaitable(result):
            await result
        tell_unraisable()
    except BaseException as exc:  # noqa: BLE001 - reported as the test's teardown error
        error = exc
    try:
        item.teardown_node()
    except BaseException as exc:  # noqa: BLE001 - reported as the test's teardown error
        error = exc
    try:
        ending = _class_ending(item)
        if inspect.isawaitable(ending):
            await ending
    except BaseException as exc:  # noqa: BLE001 - reported as the test's teardown error
        error = exc
    if error is not None and raising:
        raise error
    return error


def _class_ending(item: PyItem) -> Any:
    """The class's fixtures torn down in its last test's own teardown when the next test (``nextitem``) is
    in another class, as pytest's ``teardown_exact(nextitem)``: a ``pytest_runtest_teardown`` wrapper's code
    after its ``yield`` then runs after them (SQLAlchemy's testing plugin drops the class's tables in a
    class fixture, then ends the class's database work in its wrapper: rt tore the fixture down later, with
    the class's suite, and its ``DROP TABLE`` failed). When the runner did not link the tests (no hook
    reads ``nextitem``), the class's suite tears them down."""
    following = item.next_item
    if item.cls is None or not item.next_known:
        return None
    if following is not None and following.cls is item.cls and following.file == item.file:
        return None
    # a class nested in another: each class the next test is not inside ends, the innermost first (from a
    # test of the outer class to one of a class inside it, none ends: pytest's chain of nodes keeps both)
    qualname = item.cls.__qualname__
    inside = following.cls.__qualname__ if following is not None and following.cls is not None else None
    if following is None or following.file != item.file:
        inside = None
    ending = [
        ("class", item.file, name)
        for name in reversed([*enclosing_classes(qualname), qualname])
        if inside is None or not (inside == name or inside.startswith(name + "."))
    ]
    return item.session.scopes.finish(*ending) if ending else None


def _current_test(item: PyItem, when: str) -> None:
    """The test enters phase ``when``: pytest's ``PYTEST_CURRENT_TEST`` variable (the running test's node id
    and phase, which suites read and subprocesses inherit; removed after the test's teardown), the captured
    output's section, and ``caplog``'s records, which are the phase's own, as pytest's."""
    os.environ["PYTEST_CURRENT_TEST"] = f"{item.nodeid} ({when})".replace("\x00", "(null)")
    if item.session.live_log is not None:
        item.session.live_log.phase = when
    output = capture.CURRENT.get()
    if output is not None:
        output.enter(when)
    if when == "setup" and "caplog" in item.fixturenames:
        # made now, not when the caplog fixture is set up: the records of the fixtures set up before it are
        # the setup phase's too (``caplog.get_records("setup")``)
        from rt_testrunner.caplog import LogCaptureFixture

        item.caplog = LogCaptureFixture(item.session.log_level)
    if item.caplog is not None:
        item.caplog.enter(when)
    _attach_log_handlers(item)


def _attach_log_handlers(item: PyItem) -> None:
    """The test's log handlers (its report section's, its caplog's) on the loggers that do not propagate to
    the root logger, found again at each phase as pytest finds them."""
    if item.log_attached:
        capture.detach(item.log_attached)
    if "logging" not in sys.modules:
        return
    handlers = [h for h in (capture.report_handler(), getattr(item.caplog, "handler", None)) if h is not None]
    if handlers:
        item.log_attached = capture.attach_to_unpropagating(handlers)


def _direct_params_through(hooks: list[Callable[..., Any]], item: PyItem, setup: Setup) -> None:
    """pytest sets up each directly parametrized name as a fixture of its own, through the plugins'
    ``pytest_fixture_setup(fixturedef, request)`` with the value as ``request.param``: a hook may answer the
    value, or replace ``request.param`` (pytest-lazy-fixtures turns ``lf("name")`` into that fixture's value)."""
    from rt_testrunner.fixtures import FixtureRequest

    for name, value in item.direct_params.items():
        pseudo = FixtureDef(name, _no_function, "function")
        request = FixtureRequest(item, setup, pseudo, value)
        answer = pyplugins.call(
            "pytest_fixture_setup", hooks, {"fixturedef": pseudo, "request": request}, firstresult=True
        )
        setup.values[name] = answer if answer is not None else request.param


def _no_function() -> None:
    """The function of a directly parametrized name's stand-in fixture (never called)."""


def _make_report(
    item: PyItem,
    when: Literal["setup", "call", "teardown"],
    error: BaseException | None,
    started: float,
    hooks: tuple[list[Callable[..., Any]], list[Callable[..., Any]]],
    xfail: tuple[str, Any, bool] | None = None,
) -> BaseException | None:
    """The report of phase ``when`` (``error``: what it raised) made by the suite's hooks and logged: what the
    phase raises is what that report says, ``error`` unless a hook changed its outcome."""
    from rt_testrunner.makereport import changed, error_from, interrupt, report_phase

    if error is not None and interrupt(error):
        return error  # pytest makes no report of a phase ``pytest.exit()`` or Ctrl-C stopped
    makereport, logreport = hooks
    output = capture.CURRENT.get()
    if output is not None:
        out, err = output.phase_output()
        item.node.add_report_section(when, "stdout", out)
        item.node.add_report_section(when, "stderr", err)
    report = report_phase(item.node, item.node.location, when, error, started, makereport, xfail)
    properties = getattr(report, "user_properties", None)
    if when == "teardown" and isinstance(properties, list) and properties != item.node.user_properties:
        # pytest's JUnit file writes the teardown report's properties, which a hook may have added to
        item.node.user_properties[:] = properties
    if logreport:
        pyplugins.call("pytest_runtest_logreport", logreport, {"report": report})
        if item.session.report_log is not None:
            from rt_testrunner.report_replay import keep

            keep(item.session, report)
    if not changed(report, error, xfail):
        return error
    state = CURRENT.get()
    if state is not None and when == "call":
        # the report's own xfail, if any: passed with ``wasxfail`` is pytest's xpassed, whatever the mark said
        # (the set-up's and teardown's reports leave the call's alone)
        kept = report.passed and hasattr(report, "wasxfail")
        state.xfail = (str(report.wasxfail), None, False) if kept else None
    return error_from(report)


def _report_readers(item: PyItem) -> tuple[list[Callable[..., Any]], list[Callable[..., Any]]] | None:
    """The ``pytest_runtest_makereport`` and ``pytest_runtest_logreport`` hooks of the plugins and conftest.py
    files above ``item``, once per test; None when there are none: pytest's report of each phase (a
    ``TestReport``, a ``CallInfo``) is then not made, since nothing would read it."""
    session = item.session
    makereport = [hook for base, hook in session.report_hooks if item.file.startswith(base)]
    logreport = [hook for base, hook in session.logreport_hooks if item.file.startswith(base)]
    return (makereport, logreport) if makereport or logreport else None


async def _call_item(item: PyItem, setup: Setup) -> None:
    """The test itself, its fixtures set up: a unittest method through ``TestCase.run``, else the function."""
    if item.is_unittest:
        await _call_unittest(item)
        return
    function = item.function
    if "hypothesis" in sys.modules:
        from rt_testrunner.hypothesis_items import prepare

        prepare(item)
    if item.instance is not None:
        function = getattr(item.instance, item.originalname)
    kwargs = {
        name: setup.values[name] if name in setup.values else item.direct_params.get(name, NOTSET)
        for name in item.requested
    }
    missing = [name for name, value in kwargs.items() if value is NOTSET]
    for name in missing:
        if setup.incomplete:
            raise KeyError(name)  # pytest's call reads the fixture values set up: ``funcargs[name]``
        kwargs[name] = await setup.get(name)

    async def call_function() -> bool:
        # a plugin's hook may have put a wrapper in the function's place (``pyfuncitem.obj = ...``)
        replaced = getattr(item.node, "replaced_obj", None)
        nurseries = setup.nurseries(kwargs) if inspect.iscoroutinefunction(function) else []
        if nurseries and replaced is None:
            from rt_testrunner import trio_nursery

            result = trio_nursery.run_test(function, kwargs, nurseries)
        else:
            result = (function if replaced is None else replaced)(**kwargs)
        if inspect.isawaitable(result):
            await setup.run_test(result)
        elif result is not None and item.is_function:
            _warn_returned(item, result)
        return True

    pyfunc_hooks = _pyfunc_hooks(item) if item.is_function else []
    runtest_hooks = item.session.hooks_for("pytest_runtest_call", item.file)
    if item.call_timeout_ms is not None:
        call = _run_call(item, call_function, pyfunc_hooks, runtest_hooks)
        await _timed_call(item.call_timeout_ms, call)
    else:
        await _run_call(item, call_function, pyfunc_hooks, runtest_hooks)
    if "subtests" in item.fixturenames:
        from rt_testrunner import subtests

        failed = subtests.failed_count()
        if failed:
            raise subtests.SubtestsFailed(failed)


async def _call_unittest(item: PyItem) -> None:
    """A unittest method through ``TestCase.run``, inside the ``pytest_runtest_call`` hooks as pytest runs
    its ``TestCaseFunction`` (no ``pytest_pyfunc_call``: pytest calls it for test functions only); a
    conftest.py's hook that skips, xfails or wraps the call of such a test was never called."""
    from rt_testrunner.pyunittest import run_unittest

    async def call_case() -> bool:
        run_unittest(item)
        return True

    await _run_call(item, call_case, [], item.session.hooks_for("pytest_runtest_call", item.file))


async def _run_call(
    item: PyItem,
    call_function: Callable[[], Awaitable[bool]],
    pyfunc_hooks: list[Callable[..., Any]],
    runtest_hooks: list[Callable[..., Any]],
) -> None:
    """The call phase's hooks around the test function: ``pytest_runtest_call``, ``pytest_pyfunc_call``."""
    if not pyfunc_hooks and not runtest_hooks:
        await call_function()
    else:
        from rt_testrunner import pyhooks

        async def pyfunc_call() -> Any:
            if not pyfunc_hooks:
                return await call_function()
            return await pyhooks.call(
                pyfunc_hooks, {"pyfuncitem": item.node}, call_function, firstresult=True
            )

        await pyhooks.call(
            runtest_hooks, {"item": item.node}, pyfunc_call, firstresult=False, plain_default=True
        )


async def _timed_call(timeout_ms: int, call: Awaitable[None]) -> None:
    """``call`` (a sync test's) within pytest-timeout's ``func_only`` time-out, stopped through ``SIGALRM``
    inside the time-out of the whole test, which fails the test with that plugin's message."""
    from rt_testrunner import timeouts

    seconds = timeout_ms / 1000
    try:
        with timeouts.inner_alarm(seconds):
            await call
    except timeouts.TestTimeout:
        raise TimeoutFailure(f"Timeout (>{seconds:.1f}s) from pytest-timeout.") from None


class TimeoutFailure(AssertionError):
    """A test's call that ran past pytest-timeout's ``func_only`` time-out: a failed test, as pytest's
    ``Failed: Timeout (>1.0s) from pytest-timeout.``"""


def _warn_returned(item: PyItem, result: object) -> None:
    """pytest's ``pytest_pyfunc_call`` warns of a test function that returns a value (a ``return`` meant as an
    ``assert``): counted in the warnings, a failure of the test under ``filterwarnings = error`` (waitress
    3.0.2's ``test_suite()`` returns a ``DocTestSuite``: rt dropped the value, 1 warning where pytest has 2)."""
    import warnings

    import pytest

    warnings.warn(
        pytest.PytestReturnNotNoneWarning(
            f"Test functions should return None, but {item.node.nodeid} returned {type(result)!r}.\n"
            "Did you mean to use `assert` instead of `return`?\n"
            "See https://docs.pytest.org/en/stable/how-to/assert.html#return-not-none for more information."
        ),
        stacklevel=1,
    )


def _lowest(first: int | None, second: int | None) -> int | None:
    """The lower of two optional levels (the root logger is lowered for caplog's and for live logging's)."""
    if first is None or second is None:
        return first if second is None else second
    return min(first, second)


@contextlib.contextmanager
def _root_log_level(level: int | None) -> Iterator[None]:
    """The configured ``log_level`` on the root logger while a test runs (lowered, never raised), and the
    root logger's own level back afterwards, whatever the test set: pytest's logging plugin does both."""
    if level is None:
        yield
        return
    import logging

    root = logging.getLogger()
    original = root.level
    root.setLevel(min(original, level))
    try:
        yield
    finally:
        root.setLevel(original)


def tell_deselected(items: list[PyItem]) -> None:
    """Call the ``pytest_deselected(items)`` hooks of the plugins and the conftest.py files above the file of
    ``items``, the tests of one file ``-k``, ``-m``, ``--deselect`` (or ``-t``) leave out, once per file (pytest
    calls them once per filter, while it collects): pytest-json-report counts them. A hook that raises is one
    line; the run goes on."""
    session = items[0].session
    session.deselected += len(items)
    session.deselected_items += items
    hooks = session.hooks_for("pytest_deselected", items[0].file)
    if not hooks:
        return
    try:
        pyplugins.call("pytest_deselected", hooks, {"items": [item.node for item in items]})
    except Exception as exc:  # noqa: BLE001 - one line, as a plugin hook's failure is
        print(f"rt test: pytest_deselected raised {type(exc).__name__}: {exc}", file=sys.stderr)


def finish_session_scopes(session: PytestSession) -> Any:
    """Tear down package and session fixtures at the end of the run (an awaitable when one of them is
    async). What they write is captured as the last test's teardown (``execute.ScopeTeardown``), unlike
    what :func:`session_finished`'s hooks write, which pytest prints on the terminal."""
    if session.live_log is not None:
        session.live_log.detach()
    results = []
    keys = list(session.scopes.by_scope)
    # pytest's order: the packages' fixtures (the last package entered first), then the session's
    ending = [key for key in reversed(keys) if key[0] == "package"] + [
        key for key in keys if key[0] == "session"
    ]
    for key in ending:
        results.append(session.scopes.finish(key))
    pending = [r for r in results if inspect.isawaitable(r)]
    if pending:

        async def wait() -> None:
            for awaitable in pending:
                await awaitable

        return wait()
    return None


def session_finished(
    session: PytestSession,
    exitstatus: int,
    results: Callable[[], Sequence[TestFinished]] = tuple,
    summary: bool = True,
    warnings: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] | None = None,
) -> None:
    """Call the conftests' ``pytest_sessionfinish(session, exitstatus)`` (``exitstatus`` 1 when a test failed,
    as pytest's), then their and the plugins' ``pytest_terminal_summary(terminalreporter, exitstatus, config)``
    (what they print after the run: pytest-benchmark's table, pytest-html's and pytest-json-report's file
    names) and ``pytest_unconfigure(config)`` (where plugins close or write their files: pytest-json-report,
    pytest-md-report), then ``config.add_cleanup`` functions, in pytest's order; a summary or unconfigure
    hook that raises is one line and does not keep the others from running. ``terminalreporter.stats``
    holds ``results`` by outcome when a summary or unconfigure hook reads it; the summary hooks are called
    only where ``summary`` (one ``--parallel`` worker, as pytest-xdist calls them in its controller only)."""
    uninstall_unraisable_hooks()
    session.exitstatus = exitstatus
    if session.finish_hooks:
        pyplugins.call(
            "pytest_sessionfinish", session.finish_hooks, {"session": session.node, "exitstatus": exitstatus}
        )
    config = session.config
    temp_folders = config.stash.get("rt:tmp_path_factory")
    if temp_folders is not None:  # pytest's tmpdir plugin ends its run after the conftests' hooks
        temp_folders.finish(exitstatus)
    # a --parallel worker that does not end the run keeps no reports, as a pytest-xdist worker's go to its
    # controller: nor its warnings and deselected tests
    whole = summary
    summary = summary and bool(session.named_hooks.get("pytest_terminal_summary"))
    if summary or session.named_hooks.get("pytest_unconfigure"):
        from rt_testrunner import terminal_stats

        reporter = config.pluginmanager.getplugin("terminalreporter")
        terminal_stats.attach(reporter, results, session if whole else None, warnings)
        if summary and reporter is not None:
            available = {"terminalreporter": reporter, "exitstatus": exitstatus, "config": config}
            _call_each(session, "pytest_terminal_summary", available)
            sys.stdout.flush()
    _call_each(session, "pytest_unconfigure", {"config": config})
    cleanups = session.config.cleanups
    while cleanups:
        cleanup = cleanups.pop()
        try:
            cleanup()
        except Exception as exc:  # noqa: BLE001 - one line, as a plugin hook's failure is
            print(
                f"rt test: a config.add_cleanup function failed: {type(exc).__name__}: {exc}", file=sys.stderr
            )


def _call_each(session: PytestSession, name: str, available: dict[str, Any]) -> None:
    """Hook ``name`` of every plugin and conftest.py, one at a time in pluggy's order: one that raises is told
    in one line (naming its plugin or module) and the others still run, as at the end of pytest's run."""
    hooks = [hook for _, hook in session.named_hooks.get(name, ())]
    for hook in pyplugins.ordered(hooks):
        try:
            pyplugins.call(name, [hook], available)
        except Exception as exc:  # noqa: BLE001 - one line, as a plugin hook's failure is
            where = pyplugins.describe_error(hook, name, exc)
            if pyplugins.owner(hook) is None:
                where = f"{getattr(hook, '__module__', '?')}: {name} raised {type(exc).__name__}: {exc}"
            print(f"rt test: {where}", file=sys.stderr)
