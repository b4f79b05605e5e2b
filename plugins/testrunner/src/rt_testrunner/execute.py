"""Executing tests and hooks: sync calls on the main thread under ``SIGALRM``, async ones in one event loop.

Where async code runs: the runner drives itself synchronously on the main thread, and starts an anyio event
loop (a blocking portal on the backend named by ``rt.backend.resolve_backend``: ``--backend``, RT_BACKEND,
config) the first time a test or hook returns an awaitable. Async tests, async hooks and concurrent groups
then run in that one loop, which lives until the end of the run, so an async ``before_all`` can hand
resources to later tests. Why not ``anyio.run`` around everything: importing anyio and starting a loop
costs about 85 ms, more than a third of ``rt test``'s whole start-up, for suites that never await.
The runner's own methods are coroutines so the same code runs in both places; on the main thread they are
driven by :meth:`Executor.run_sync` and never suspend.

Sync code and the loop: a sync test never runs in the loop (a concurrent group runs its sync tests first, on
the main thread). Sync ``before_each``/``after_each`` hooks of async tests in a concurrent group would, and
there ``SIGALRM`` cannot reach them, so a hook stuck in ``while True`` or ``time.sleep`` blocked the loop
and the whole run. Instead the loop hands such calls back to the main thread, which waits for the loop
anyway (:class:`_MainThreadCalls`): there they run under the same alarm as every other sync call and time
out with the same report, while the loop keeps running the other tests of the group.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import queue
from collections.abc import Callable, Coroutine
from typing import Any

import attrs

from rt_testrunner import capture, clock, timeouts
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.state import CURRENT, TestState

#: what a test can raise that is still only its own result: everything but ``GeneratorExit``. SystemExit and
#: KeyboardInterrupt are a failed test (the runner stops after a KeyboardInterrupt, see :class:`Outcome`).
TEST_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.define(eq=False)
class Outcome:
    """What came of one attempt: the first error (of the body or a hook), a time-out, expect() calls."""

    error: BaseException | None = None
    timed_out: bool = False
    expect_calls: int = 0
    #: the error came from setting the test up (a fixture), not its body: pytest counts it as an error
    setup_error: bool = False
    #: text the test wrote (stdout, stderr, logging) while its output was captured
    captured: str = ""
    #: the xfail mark that applied: (reason, raises, strict)
    xfail: tuple[str, Any, bool] | None = None
    teardown_error: BaseException | None = None
    capture: capture.Capture | None = None
    #: subtests that did not pass (``subtests.SubtestResult``) and the number that passed
    subtests: tuple[Any, ...] = ()
    subtests_passed: int = 0
    #: reports a plugin logged as reruns of the test (``TestState.reruns_logged``)
    reruns_logged: int = 0
    #: reports a plugin logged in a category of its own (``TestState.categories_logged``)
    categories_logged: dict[str, int] = attrs.Factory(dict)
    #: results of reports logged before the last ones (``TestState.logged_earlier``)
    logged_earlier: tuple[tuple[str, str, str], ...] = ()
    #: the error came from tearing down a pytest scope (:class:`ScopeTeardown`)
    scope_teardown: bool = False


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.define(eq=False)
class _SyncCall:
    """One sync test/hook call the loop hands to the main thread, and what came of it."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    deadline: float
    context: contextvars.Context
    done: Any  # anyio.Event, set (in the loop) once the call returned or raised
    result: Any = None
    error: BaseException | None = None

    def run(self, alarms: bool) -> None:
        """On the main thread: call within the time-out, keeping the outcome for the loop."""
        try:
            remaining = self.deadline - clock.monotonic()
            if remaining <= 0:
                raise timeouts.TestTimeout()
            with timeouts.alarm(remaining, alarms):
                self.result = self.context.run(self.fn, *self.args)
        except (*TEST_ERRORS, timeouts.TestTimeout) as exc:  # re-raised in the loop, as a result
            self.error = exc
        except BaseException as exc:  # noqa: BLE001 - pytest's outcome exceptions (skip, xfail) and the like
            self.error = exc


class _MainThreadCalls:
    """The channel through which code in the loop runs sync calls on the main thread.

    While the loop works for it (:meth:`Executor.in_loop`), the main thread does nothing but wait, so it can
    serve: it takes :class:`_SyncCall` items off a queue, runs each under ``SIGALRM`` (the one place where a
    sync call can be interrupted), and wakes the waiting task through the portal. The waiting task does not
    block the loop, so the other tests of a concurrent group go on meanwhile; calls are served one at a time,
    as before, when they blocked the loop. The call runs in a copy of the task's context (a Context cannot be
    entered by two threads at once); variables it sets are copied back to the task, so a ``before_each`` that
    sets a context variable is seen by its test as when it ran in the task itself.
    """

    def __init__(self, portal: Any, alarms: bool) -> None:
        self._portal = portal
        self._alarms = alarms
        self._queue: queue.SimpleQueue[_SyncCall | None] = queue.SimpleQueue()

    async def call(self, fn: Callable[..., Any], args: tuple[Any, ...], deadline: float) -> Any:
        """In the loop: ``fn(*args)`` on the main thread; its result, or its exception re-raised here."""
        import anyio

        sync_call = _SyncCall(fn, args, deadline, contextvars.copy_context(), anyio.Event())
        self._queue.put(sync_call)
        await sync_call.done.wait()
        for var, value in sync_call.context.items():
            if var.get(_UNSET) is not value:
                var.set(value)
        if sync_call.error is not None:
            raise sync_call.error
        return sync_call.result

    def serve(self, until: Any) -> None:
        """On the main thread: run the calls handed over until the future ``until`` (the loop's work) is done."""
        until.add_done_callback(lambda _: self._queue.put(None))
        while (sync_call := self._queue.get()) is not None:
            sync_call.run(self._alarms)
            self._portal.call(sync_call.done.set)


_UNSET = object()

#: Set while a coroutine of the runner runs inside the event loop (and may therefore really await): the way
#: back to the main thread for sync calls
MAIN_THREAD: contextvars.ContextVar[_MainThreadCalls | None] = contextvars.ContextVar(
    "rt_main_thread", default=None
)

#: The portal of the event loop the current code runs in (None on the main thread, outside every loop): an
#: async fixture's teardown goes back to the loop that set it up (:func:`in_home_loop`)
LOOP: contextvars.ContextVar[Any] = contextvars.ContextVar("rt_loop", default=None)

#: A backend as anyio names it, with its options (``("trio", ())``, ``("asyncio", (("use_uvloop", True),))``);
#: None is the run's own backend (``--backend``)
BackendKey = tuple[str, tuple[tuple[str, Any], ...]] | None


#: a loop on the main thread (main_loops.py): the backend and its owner, a scope instance
#: (``fixtures.scope_key``: ``("module", file)``) or :data:`ANYIO_OWNER`
LoopKey = tuple[Any, Any]

#: the owner of anyio's plugin's loop: kept while a test or an async fixture holds a lease on it
ANYIO_OWNER = ("anyio",)

#: The main-thread loops of the running session (main_loops.MainThreadLoops, made on first need so a run
#: without async pytest code never imports it), in a one-item list; None outside ``Executor.run_sync``
_MAIN_LOOPS: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("rt_main_loops", default=None)


def main_loops(create: bool = True) -> Any:
    """The run's ``main_loops.MainThreadLoops`` (None outside a run, or when none was made and ``create`` is
    false)."""
    holder = _MAIN_LOOPS.get()
    if holder is None:
        return None
    if holder[0] is None and create:
        from rt_testrunner.main_loops import MainThreadLoops

        holder[0] = MainThreadLoops()
    return holder[0]


def in_run() -> bool:
    """Running under ``Executor.run_sync`` (where pytest items' async steps go to main-thread loops)."""
    return _MAIN_LOOPS.get() is not None


#: the option of an asyncio loop's key that names the event loop policy to make it with (not one of anyio's
#: runner options: main_loops.py sets the policy while that loop lives)
POLICY_OPTION = "event_loop_policy"


def backend_key(name: str, options: dict[str, Any] | None = None) -> BackendKey:
    return (name, tuple(sorted((options or {}).items())))


class _EnterLoop:
    """What a pytest item's coroutine, driven on the main thread, yields when it needs an event loop: the
    executor then goes on driving the same coroutine in the loop of ``backend`` (:meth:`Executor.call`)."""

    def __init__(self, backend: BackendKey) -> None:
        self.backend = backend

    def __await__(self) -> Any:
        yield self


class _Resumed:
    """Awaits a coroutine that already ran up to an :class:`_EnterLoop`: it continues from there, in the loop."""

    def __init__(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        self.coroutine = coroutine

    def __await__(self) -> Any:
        return (yield from self.coroutine.__await__())


async def use_backend(backend: BackendKey) -> None:
    """Called by a pytest item before its first async step (an async fixture, the test itself). Until then it
    runs on the main thread, as pytest runs sync fixtures, outside any loop; here it moves into the event
    loop of ``backend``, chosen per test (anyio's ``anyio_backend``, pytest-asyncio's asyncio). Inside a loop
    already (a concurrent group, a later step of the same test) it stays where it is."""
    if LOOP.get() is None:
        await _EnterLoop(backend)


async def in_home_loop(home: Any, async_fn: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Await ``async_fn()`` in the loop of the portal ``home`` (where an async fixture was set up): its
    objects belong to that loop, while the test that ends its scope may run in another backend's."""
    current = LOOP.get()
    if home is None or current is home:
        return await async_fn()
    if current is None:  # on the main thread, outside every loop: the home loop's thread runs it
        return home.call(async_fn)
    import anyio.to_thread

    return await anyio.to_thread.run_sync(home.call, async_fn)


def is_async(fn: Callable[..., Any] | None) -> bool:
    if fn is None:
        return False
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.frozen(eq=False)
class _Raised:
    """A BaseException carried back from the loop thread (a portal re-raises only ``Exception`` cleanly)."""

    error: BaseException


class Executor:
    """Calls tests and hooks: on the main thread, or in the run's event loop once something awaits."""

    def __init__(self, backend: str = "asyncio", capture_output: bool = True) -> None:
        self.backend = backend
        self.capture_output = capture_output
        #: pytest's logging plugin is there: a test's log records are captured even when its output is not
        self.capture_logs = False
        self.loop_stack = contextlib.ExitStack()
        #: one event loop per backend a test asked for, kept for the rest of the run: tests that share a
        #: backend share its loop, and an async fixture of a wider scope outlives the tests that use it
        self._portals: dict[BackendKey, Any] = {}
        self.alarms = False
        #: a pytest suite's scope teardowns run without rt's deadline for hooks (pytest has none), unless the
        #: command line gave ``--timeout``, which bounds pytest tests too; its session hooks never have one
        self.untimed_pytest_hooks = True

    def run_sync(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Drive one of the runner's coroutines on the main thread; the event loop, if one was needed, is
        closed before returning."""
        holder: list[Any] = [None]
        token = _MAIN_LOOPS.set(holder)
        try:
            with self.loop_stack:
                self.loop_stack.callback(lambda: holder[0] is not None and holder[0].close_all())
                try:
                    coroutine.send(None)
                except StopIteration as stop:
                    return stop.value
                coroutine.close()
        finally:
            _MAIN_LOOPS.reset(token)
        raise RuntimeError("internal error: rt test's runner suspended outside its event loop")

    def portal(self, backend: BackendKey = None) -> Any:
        """The blocking portal of ``backend``'s event loop (the run's own backend for None), started on first
        use and closed at the end of the run."""
        key = backend if backend is not None else backend_key(self.backend)
        portal = self._portals.get(key)
        if portal is not None and getattr(portal, "_event_loop_thread_id", True) is None:
            # a test broke its loop (anyio's own suite exits cancel scopes out of order on purpose): the
            # next test gets a new loop, as under pytest, where each test has a loop of its own
            portal = None
        if portal is None:
            from anyio.from_thread import start_blocking_portal

            assert key is not None
            name, options = key
            portal = self.loop_stack.enter_context(
                start_blocking_portal(backend=name, backend_options=dict(options) or None)
            )
            self._portals[key] = portal
        return portal

    def in_loop(self, async_fn: Callable[..., Any], *args: Any, backend: BackendKey = None) -> Any:
        """Run ``async_fn(*args)`` in the event loop of ``backend`` (started on first use) and wait for it,
        serving the sync calls it hands back to this thread meanwhile (:class:`_MainThreadCalls`)."""
        portal = self.portal(backend)
        state = CURRENT.get()
        main_thread = _MainThreadCalls(portal, self.alarms)

        async def enter() -> Any:
            MAIN_THREAD.set(main_thread)
            LOOP.set(portal)
            CURRENT.set(state)
            try:
                return await async_fn(*args)
            except BaseException as exc:  # carried across the thread boundary, re-raised below
                if isinstance(exc, Exception | timeouts.TestTimeout):
                    return _Raised(exc)
                raise

        future = portal.start_task_soon(enter)
        main_thread.serve(future)
        result = future.result()
        if isinstance(result, _Raised):
            raise result.error
        return result

    async def call(
        self, fn: Callable[..., Any], args: tuple[Any, ...], deadline: float, main_first: bool = False
    ) -> None:
        """Call a test or hook, sync or async, raising :class:`TestTimeout` past ``deadline``. In the loop a
        sync callable is run on the main thread, the only thread where ``SIGALRM`` can interrupt it.

        ``main_first`` (a pytest item): its coroutine starts on the main thread, where its sync fixtures run
        as under pytest, and names the loop it needs when it needs one (:func:`use_backend`); one that
        never awaits (a skipped test, sync fixtures only) starts no loop at all."""
        remaining = deadline - clock.monotonic()
        if remaining <= 0:
            raise timeouts.TestTimeout()
        main_thread = MAIN_THREAD.get()
        in_loop = main_thread is not None
        if main_thread is not None and not is_async(fn):
            result = await main_thread.call(fn, args, deadline)
        else:
            with timeouts.alarm(remaining, self.alarms and not in_loop):
                result = fn(*args)
        if inspect.isawaitable(result):
            if in_loop:
                await await_before(result, deadline)
            elif main_first and inspect.iscoroutine(result):
                self._drive_from_main_thread(result, deadline)
            else:
                self.in_loop(await_before, result, deadline)

    def _drive_from_main_thread(self, coroutine: Coroutine[Any, Any, Any], deadline: float) -> None:
        with timeouts.alarm(deadline - clock.monotonic(), self.alarms):
            try:
                step = coroutine.send(None)
            except StopIteration:
                return
        if not isinstance(step, _EnterLoop):
            coroutine.close()
            raise RuntimeError("internal error: a pytest item awaited before entering its event loop")
        self.in_loop(await_before, _Resumed(coroutine), deadline, backend=step.backend)

    async def attempt(
        self, case: TestCase, chain: list[Suite], timeout_ms: int, captured: bool = False
    ) -> Outcome:
        """One attempt: before_each hooks (outer first), the body, after_each hooks (inner first), all within
        the time-out. A fresh :class:`TestState` per attempt, so an earlier attempt leaves nothing behind."""
        state = TestState(test_path=case.path)
        token = CURRENT.set(state)
        output = None
        if captured and (self.capture_output or self.capture_logs):
            output = capture.Capture(passthrough=not self.capture_output)
        capture_token = capture.CURRENT.set(output)
        outcome = Outcome()
        deadline = clock.monotonic() + timeout_ms / 1000
        capture.begin(output)
        try:
            try:
                for suite in chain:
                    for hook in suite.hooks["before_each"]:
                        await self.call(hook, (), deadline)
                assert case.fn is not None
                await self.call(case.fn, case.args, deadline, main_first=case.item is not None)
                unawaited = _unawaited_matcher_error(state)
                if unawaited is not None:
                    raise unawaited
                check_assertion_count(state)
            except timeouts.TestTimeout:
                outcome.timed_out = True
            except BaseException as exc:  # a test's error of any kind is a result
                if isinstance(exc, GeneratorExit):
                    raise
                outcome.error = exc
            after_deadline = clock.monotonic() + timeout_ms / 1000
            for suite in reversed(chain):
                for hook in suite.hooks["after_each"]:
                    try:
                        await self.call(hook, (), after_deadline)
                    except timeouts.TestTimeout:
                        outcome.timed_out = outcome.timed_out or outcome.error is None
                    except BaseException as exc:  # a test's error of any kind is a result
                        if isinstance(exc, GeneratorExit):
                            raise
                        if outcome.error is None and not outcome.timed_out:
                            outcome.error = exc
            # after a failure or time-out, or in an after_each hook: closed here (no RuntimeWarning), and a
            # failure only when nothing else failed first
            unawaited = _unawaited_matcher_error(state)
            if unawaited is not None and outcome.error is None and not outcome.timed_out:
                outcome.error = unawaited
        finally:
            capture.end(output)
            capture.CURRENT.reset(capture_token)
            CURRENT.reset(token)
        outcome.expect_calls = state.expect_calls
        outcome.setup_error = state.setup_error
        outcome.captured = output.report() if output is not None else ""
        outcome.capture = output
        outcome.xfail = state.xfail
        outcome.teardown_error = state.teardown_error
        outcome.subtests = tuple(state.subtests)
        outcome.subtests_passed = state.subtests_passed
        outcome.reruns_logged = state.reruns_logged
        outcome.categories_logged = state.categories_logged
        outcome.logged_earlier = tuple(state.logged_earlier)
        return outcome

    async def hooks(
        self, suite: Suite, kind: str, deadline_ms: int, written: list[str] | None = None
    ) -> Outcome | None:
        """Run a suite's ``before_all``/``after_all`` hooks; the first failure stops them. ``written``
        receives what each scope teardown that passed wrote (its captured sections)."""
        hooks = suite.hooks[kind]
        if not hooks:
            return None
        deadline = clock.monotonic() + deadline_ms / 1000
        for hook in hooks:
            # the session's end (pytest_sessionfinish, plugins' terminal summaries and unconfigure hooks) is
            # never bounded: under a short --timeout, an installed plugin's summary that imports its package
            # (hypothesis's, about 0.1 s) failed a spec project's run as an "after_all hook"
            untimed = isinstance(hook, PytestHook) or (
                self.untimed_pytest_hooks and isinstance(hook, ScopeTeardown)
            )
            hook_deadline = clock.monotonic() + 2 * _NO_DEADLINE_S if untimed else deadline
            output = None
            if isinstance(hook, ScopeTeardown) and (self.capture_output or self.capture_logs):
                output = capture.Capture(passthrough=not self.capture_output)
            token = capture.CURRENT.set(output)
            capture.begin(output)
            try:
                if output is not None:
                    output.enter("teardown")
                await self.call(hook, (), hook_deadline)
                if output is not None and written is not None:
                    text = _report(output)
                    if text:
                        written.append(text)
            except timeouts.TestTimeout:
                scope = isinstance(hook, ScopeTeardown)
                return Outcome(timed_out=True, captured=_report(output), scope_teardown=scope)
            except BaseException as exc:  # a test's error of any kind is a result
                if isinstance(exc, GeneratorExit):
                    raise
                scope = isinstance(hook, ScopeTeardown)
                return Outcome(error=exc, captured=_report(output), scope_teardown=scope)
            finally:
                capture.end(output)
                capture.CURRENT.reset(token)
        return None


@attrs.define(eq=False)
class ScopeTeardown:
    """An ``after_all`` hook that tears down a pytest scope (a module's, a class's, the session's fixtures).
    pytest tears them down in the teardown phase of the scope's last test: what they write is captured as
    that test's (shown only if it fails) and their failure is an error at that test's teardown, not a test
    of its own that failed."""

    finish: Callable[[], Any]

    def __call__(self) -> Any:
        return self.finish()


@attrs.define(eq=False)
class PytestHook:
    """An ``after_all`` hook that calls a pytest suite's session hooks (``pytest_sessionfinish``, the
    configuration's cleanups). pytest bounds neither, so rt's 5 s deadline for hooks does not apply: a plugin
    that writes its report there (pytest-benchmark's) may take longer."""

    call: Callable[[], Any]

    def __call__(self) -> Any:
        return self.call()


def _report(output: capture.Capture | None) -> str:
    """The sections of what a scope's teardown wrote (read once its descriptors gave back their part)."""
    if output is None:
        return ""
    capture.end(output)
    return output.report()


#: a deadline further away than this is no time-out at all (pytest tests have none unless asked)
_NO_DEADLINE_S = 86_400.0


async def await_before(awaitable: Any, deadline: float) -> None:
    """Await inside the loop; past ``deadline`` the awaitable is cancelled and the test timed out. Without a
    real deadline no timer is set: a test loop with a virtual clock jumps to its next timer when idle
    (aiostream's ``TimeTrackingTestLoop``), and would reach a far one at once."""
    import anyio

    remaining = deadline - clock.monotonic()
    if remaining > _NO_DEADLINE_S:
        await awaitable
        return
    with anyio.move_on_after(remaining) as scope:
        await awaitable
    if scope.cancelled_caught:
        raise timeouts.TestTimeout()


def _unawaited_matcher_error(state: TestState) -> BaseException | None:
    """:func:`rt_testrunner.expect.unawaited_matcher_error`; only ``expect`` records pending matchers, so a
    test that used none (every test of a pytest suite) does not import that module."""
    if not state.pending_matchers:
        return None
    from rt_testrunner.expect import unawaited_matcher_error

    return unawaited_matcher_error(state)


def check_assertion_count(state: TestState) -> None:
    if state.expected_assertions is not None and state.expect_calls != state.expected_assertions:
        raise AssertionError(
            f"expected {state.expected_assertions} assertion(s) (expect.assertions), but {state.expect_calls} ran"
        )
    if state.requires_assertions and state.expect_calls == 0:
        raise AssertionError("expected at least one assertion (expect.has_assertions), but none ran")
