"""Running the tests: one process, files in order, hooks around tests, retries, time-outs, concurrency, bail.

The runner only produces :mod:`rt.events` events; what the user sees is up to the reporters that receive
them (console, dots, JUnit and GitHub annotations in this plugin; any other reporter from a plugin).

Where async code runs: the runner drives itself synchronously on the main thread, and starts an anyio event
loop (a blocking portal on the backend named by ``rt.backend.resolve_backend``: ``--backend``, RT_BACKEND,
config) the first time a test or hook returns an awaitable. Async tests, async hooks and concurrent groups
then run in that one loop, which lives until the end of the run, so an async ``before_all`` can hand
resources to later tests. Why not ``anyio.run`` around everything: importing anyio and starting a loop
costs about 85 ms, more than a third of ``rt test``'s whole start-up, for suites that never await.
The runner's own methods are coroutines so the same code runs in both places; on the main thread they are
driven by :meth:`Runner.run_sync` and never suspend.

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
import math
import os
import queue
import random
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from rt.events import (
    FileFinished,
    FileStarted,
    Location,
    RunFinished,
    RunStarted,
    TestEvent,
    TestFailure,
    TestFinished,
    TestStarted,
    TestStatus,
)
from rt.interfaces import Reporter

from rt_testrunner import api, timeouts
from rt_testrunner.discovery import TestFile
from rt_testrunner.expect import unawaited_matcher_error
from rt_testrunner.failures import plain_failure, render_exception
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.rewrite import load_test_module
from rt_testrunner.state import CURRENT, TestState

FAILING_PASSED = ("this test is marked as failing but it passed. Remove `.failing` if tested behavior "
                  "now works")
TODO_PASSED = "this test is marked as todo but passes. Remove `.todo` or check that test is correct."


@attrs.frozen
class RunOptions:
    """Everything the runner needs, already validated (see :mod:`rt_testrunner.options`)."""

    root: Path
    timeout_ms: int = 5000
    rerun_each: int = 1
    retry: int = 0
    concurrent: bool = False
    max_concurrency: int = 20  # 0: unlimited
    seed: int | None = None  # set when the order is randomized
    bail: int | None = None
    todo: bool = False
    name_pattern: re.Pattern[str] | None = None
    only: bool = False
    preload: tuple[str, ...] = ()


@attrs.define
class _Outcome:
    error: BaseException | None = None
    timed_out: bool = False
    expect_calls: int = 0


@attrs.define
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
        """On the main thread: call within the time-out, keeping the outcome for the loop. Only a test's own
        results are kept: KeyboardInterrupt and SystemExit propagate and end the run."""
        try:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise timeouts.TestTimeout()
            with timeouts.alarm(remaining, alarms):
                self.result = self.context.run(self.fn, *self.args)
        except (Exception, timeouts.TestTimeout) as exc:  # noqa: BLE001 - re-raised in the loop, as a result
            self.error = exc


class _MainThreadCalls:
    """The channel through which code in the loop runs sync calls on the main thread.

    While the loop works for it (:meth:`Runner._in_loop`), the main thread does nothing but wait, so it can
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
_MAIN_THREAD: contextvars.ContextVar[_MainThreadCalls | None] = contextvars.ContextVar("rt_main_thread",
                                                                                     default=None)


def _is_async(fn: Callable[..., Any] | None) -> bool:
    if fn is None:
        return False
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


@attrs.frozen
class _Raised:
    """A BaseException carried back from the loop thread (a portal re-raises only ``Exception`` cleanly)."""

    error: BaseException


class Runner:
    def __init__(self, options: RunOptions, reporters: Sequence[Reporter], backend: str = "asyncio") -> None:
        self.options = options
        self.backend = backend
        self._loop_stack = contextlib.ExitStack()
        self._portal: Any = None
        self.reporters = list(reporters)
        self.counts = {status: 0 for status in TestStatus}
        self.expect_calls = 0
        self.bailed = False
        self.preload_root = Suite(None)
        self.alarms = False
        self.limiter: Any = None

    # -- events ------------------------------------------------------------------------------------------------

    def emit(self, event: TestEvent) -> None:
        for reporter in self.reporters:
            reporter.handle(event)

    def _record(self, event: TestFinished) -> None:
        self.counts[event.status] += 1
        self.expect_calls += event.expect_calls
        self.emit(event)
        if (event.status is TestStatus.FAIL and self.options.bail is not None
                and self.counts[TestStatus.FAIL] >= self.options.bail):
            self.bailed = True

    # -- the run -----------------------------------------------------------------------------------------------

    def run_sync(self, files: Sequence[TestFile]) -> RunFinished:
        """Run everything; returns the final event (also emitted). The event loop, if one was needed, is
        closed before returning."""
        coroutine = self.run(files)
        with self._loop_stack:
            try:
                coroutine.send(None)
            except StopIteration as stop:
                finished: RunFinished = stop.value
                return finished
            coroutine.close()
        raise RuntimeError("internal error: rt test's runner suspended outside its event loop")

    def _in_loop(self, async_fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``async_fn(*args)`` in the run's event loop (started on first use) and wait for it, serving the
        sync calls it hands back to this thread meanwhile (:class:`_MainThreadCalls`)."""
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._portal = self._loop_stack.enter_context(start_blocking_portal(backend=self.backend))
        state = CURRENT.get()
        main_thread = _MainThreadCalls(self._portal, self.alarms)

        async def enter() -> Any:
            _MAIN_THREAD.set(main_thread)
            CURRENT.set(state)
            try:
                return await async_fn(*args)
            except BaseException as exc:  # carried across the thread boundary, re-raised below
                if isinstance(exc, Exception | timeouts.TestTimeout):
                    return _Raised(exc)
                raise

        future = self._portal.start_task_soon(enter)
        main_thread.serve(future)
        result = future.result()
        if isinstance(result, _Raised):
            raise result.error
        return result

    async def run(self, files: Sequence[TestFile]) -> RunFinished:
        started = time.perf_counter()
        self.emit(RunStarted([f.relative for f in files], self.options.seed, str(self.options.root),
                             bail=self.options.bail, rerun_each=self.options.rerun_each))
        with timeouts.installed() as self.alarms:
            preload_error = self._load_preload()
            if preload_error is not None:
                self.counts[TestStatus.FAIL] += 1
                self.emit(FileStarted(preload_error[0]))
                self.emit(FileFinished(preload_error[0], 0.0, preload_error[1]))
            else:
                await self._run_files(files)
        finished = RunFinished(
            passed=self.counts[TestStatus.PASS], failed=self.counts[TestStatus.FAIL],
            skipped=self.counts[TestStatus.SKIP], todo=self.counts[TestStatus.TODO],
            expect_calls=self.expect_calls, files=len(files), duration=time.perf_counter() - started,
            seed=self.options.seed, bailed=self.bailed,
        )
        self.emit(finished)
        return finished

    async def _run_files(self, files: Sequence[TestFile]) -> None:
        hook_error = await self._hooks(self.preload_root, "before_all", deadline_ms=self.options.timeout_ms)
        if hook_error is None:
            for test_file in files:
                if self.bailed:
                    break
                await self._run_file(test_file)
        else:
            self._hook_failure(self.preload_root, "before_all", hook_error, "<preload>")
        after_error = await self._hooks(self.preload_root, "after_all", deadline_ms=self.options.timeout_ms)
        if after_error is not None:
            self._hook_failure(self.preload_root, "after_all", after_error, "<preload>")

    def _load_preload(self) -> tuple[str, TestFailure] | None:
        for script in self.options.preload:
            path = (self.options.root / script).resolve()
            api.REGISTERED_FUNCTIONS.clear()
            try:
                with api.collecting_into(self.preload_root):
                    load_test_module(path, f"preload/{path.name}")
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                return script, render_exception(exc, self.options.root)
        return None

    async def _run_file(self, test_file: TestFile) -> None:
        started = time.perf_counter()
        self.emit(FileStarted(test_file.relative))
        error: TestFailure | None = None
        for run in range(1, self.options.rerun_each + 1):
            if self.bailed:
                break
            root = Suite(None)
            api.REGISTERED_FUNCTIONS.clear()
            try:
                with api.collecting_into(root):
                    module = load_test_module(test_file.path, test_file.relative)
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                error = render_exception(exc, self.options.root)
                self.counts[TestStatus.FAIL] += 1
                break
            _add_plain_functions(root, module.__dict__, module.__name__)
            only_mode = self.options.only or any(t.has("only") for t in root.tests())
            await self._run_suite(root, [self.preload_root], test_file, run, only_mode)
        self.emit(FileFinished(test_file.relative, time.perf_counter() - started, error))

    # -- selection ---------------------------------------------------------------------------------------------

    def _selected(self, case: TestCase, only_mode: bool) -> bool:
        if only_mode and not case.has("only"):
            return False
        pattern = self.options.name_pattern
        return pattern is None or pattern.search(" ".join(case.path)) is not None

    def _will_execute(self, case: TestCase) -> bool:
        if case.has("skip"):
            return False
        return not case.has("todo") or (self.options.todo and case.fn is not None)

    def _ordered(self, suite: Suite, test_file: TestFile) -> list[TestCase | Suite]:
        children = list(suite.children)
        if self.options.seed is not None:
            random.Random(f"{self.options.seed}:{test_file.relative}:{'>'.join(suite.path)}").shuffle(children)
        return children

    def _concurrent(self, case: TestCase) -> bool:
        if case.has("serial"):
            return False
        return case.has("concurrent") or self.options.concurrent

    # -- suites ------------------------------------------------------------------------------------------------

    async def _run_suite(self, suite: Suite, chain: list[Suite], test_file: TestFile, run: int,
                         only_mode: bool) -> None:
        selected = [t for t in suite.tests() if self._selected(t, only_mode)]
        if not selected:
            return
        executes = any(self._will_execute(t) for t in selected)
        chain = [*chain, suite]
        if executes:
            error = await self._hooks(suite, "before_all", deadline_ms=self.options.timeout_ms)
            if error is not None:
                self._hook_failure(suite, "before_all", error, test_file.relative)
                await self._after_all(suite, test_file)
                return
        group: list[TestCase] = []
        for child in self._ordered(suite, test_file):
            if self.bailed:
                break
            if isinstance(child, TestCase):
                if not self._selected(child, only_mode):
                    continue
                if self._concurrent(child) and self._will_execute(child):
                    group.append(child)
                    continue
            await self._run_group(group, chain, test_file, run)
            group = []
            if isinstance(child, Suite):
                await self._run_suite(child, chain, test_file, run, only_mode)
            else:
                await self._run_test(child, chain, test_file, run)
        await self._run_group(group, chain, test_file, run)
        if executes:
            await self._after_all(suite, test_file)

    async def _after_all(self, suite: Suite, test_file: TestFile) -> None:
        error = await self._hooks(suite, "after_all", deadline_ms=self.options.timeout_ms)
        if error is not None:
            self._hook_failure(suite, "after_all", error, test_file.relative)

    async def _run_group(self, group: list[TestCase], chain: list[Suite], test_file: TestFile, run: int) -> None:
        """Consecutive concurrent tests run together, at most ``--max-concurrency`` at once."""
        if not group:
            return
        # Synchronous tests cannot overlap anything: they run first, one after the other, on the main thread,
        # where a time-out can interrupt them. The async ones then run together in the event loop.
        async_cases = [case for case in group if _is_async(case.fn)]
        async_ids = {id(case) for case in async_cases}
        for case in group:
            if id(case) not in async_ids:
                await self._run_test(case, chain, test_file, run)
        if len(async_cases) == 1:
            await self._run_test(async_cases[0], chain, test_file, run)
        elif _MAIN_THREAD.get() is not None:
            await self._run_group_in_loop(async_cases, chain, test_file, run)
        elif async_cases:
            self._in_loop(self._run_group_in_loop, async_cases, chain, test_file, run)

    async def _run_group_in_loop(self, group: list[TestCase], chain: list[Suite], test_file: TestFile,
                                 run: int) -> None:
        import anyio

        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(self.options.max_concurrency or math.inf)
        limiter = self.limiter

        async def limited(case: TestCase) -> None:
            async with limiter:
                if not self.bailed:
                    await self._run_test(case, chain, test_file, run)

        async with anyio.create_task_group() as group_tasks:
            for case in group:
                group_tasks.start_soon(limited, case)

    def _hook_failure(self, suite: Suite, kind: str, error: _Outcome, file: str) -> None:
        failure = self._failure(error, self.options.timeout_ms)
        self._record(TestFinished(file, (*suite.path, f"{kind} hook"), TestStatus.FAIL, 0.0, failure=failure,
                                  location=failure.location, hook=kind))

    # -- one test ----------------------------------------------------------------------------------------------

    async def _run_test(self, case: TestCase, chain: list[Suite], test_file: TestFile, run: int) -> None:
        if self.bailed:
            return
        location = _display_location(case.location, self.options.root)
        run_label = run if self.options.rerun_each > 1 else 1
        if not self._will_execute(case):
            status = TestStatus.SKIP if case.has("skip") else TestStatus.TODO
            self._record(TestFinished(test_file.relative, case.path, status, 0.0, run=run_label, location=location))
            return
        retries = case.retry if case.retry is not None else self.options.retry
        timeout_ms = case.timeout or self.options.timeout_ms
        attempt = 1
        while True:
            self.emit(TestStarted(test_file.relative, case.path, attempt, run_label))
            started = time.perf_counter()
            outcome = await self._attempt(case, chain, timeout_ms)
            duration = time.perf_counter() - started
            status, failure = self._judge(case, outcome, timeout_ms)
            if status is not TestStatus.FAIL or attempt > retries:
                break
            attempt += 1
        self._record(TestFinished(test_file.relative, case.path, status, duration, attempt, run_label, failure,
                                  location, outcome.expect_calls))

    def _judge(self, case: TestCase, outcome: _Outcome, timeout_ms: int) -> tuple[TestStatus, TestFailure | None]:
        failed = outcome.error is not None or outcome.timed_out
        if case.has("todo"):
            if failed:
                return TestStatus.TODO, None
            return TestStatus.FAIL, plain_failure(TODO_PASSED, "TodoPassed", _display_location(
                case.location, self.options.root))
        if case.has("failing") and not outcome.timed_out:
            if failed:
                return TestStatus.PASS, None
            return TestStatus.FAIL, plain_failure(FAILING_PASSED, "FailingPassed", _display_location(
                case.location, self.options.root))
        if failed:
            failure = self._failure(outcome, timeout_ms)
            if failure.location is None:
                failure = attrs.evolve(failure, location=_display_location(case.location, self.options.root))
            return TestStatus.FAIL, failure
        return TestStatus.PASS, None

    def _failure(self, outcome: _Outcome, timeout_ms: int) -> TestFailure:
        if outcome.timed_out:
            return plain_failure(f"this test timed out after {timeout_ms}ms.", "Timeout", timed_out=True)
        assert outcome.error is not None
        return render_exception(outcome.error, self.options.root)

    async def _attempt(self, case: TestCase, chain: list[Suite], timeout_ms: int) -> _Outcome:
        """One attempt: before_each hooks (outer first), the body, after_each hooks (inner first), all within
        the time-out. A fresh :class:`TestState` per attempt, so an earlier attempt leaves nothing behind."""
        state = TestState()
        token = CURRENT.set(state)
        outcome = _Outcome()
        deadline = time.monotonic() + timeout_ms / 1000
        try:
            try:
                for suite in chain:
                    for hook in suite.hooks["before_each"]:
                        await self._call(hook, (), deadline)
                assert case.fn is not None
                await self._call(case.fn, case.args, deadline)
                unawaited = unawaited_matcher_error(state)
                if unawaited is not None:
                    raise unawaited
                _check_assertion_count(state)
            except timeouts.TestTimeout:
                outcome.timed_out = True
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                outcome.error = exc
            after_deadline = time.monotonic() + timeout_ms / 1000
            for suite in reversed(chain):
                for hook in suite.hooks["after_each"]:
                    try:
                        await self._call(hook, (), after_deadline)
                    except timeouts.TestTimeout:
                        outcome.timed_out = outcome.timed_out or outcome.error is None
                    except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                        if outcome.error is None and not outcome.timed_out:
                            outcome.error = exc
            # after a failure or time-out, or in an after_each hook: closed here (no RuntimeWarning), and a
            # failure only when nothing else failed first
            unawaited = unawaited_matcher_error(state)
            if unawaited is not None and outcome.error is None and not outcome.timed_out:
                outcome.error = unawaited
        finally:
            CURRENT.reset(token)
        outcome.expect_calls = state.expect_calls
        return outcome

    async def _call(self, fn: Callable[..., Any], args: tuple[Any, ...], deadline: float) -> None:
        """Call a test or hook, sync or async, raising :class:`TestTimeout` past ``deadline``. In the loop a
        sync callable is run on the main thread, the only thread where ``SIGALRM`` can interrupt it."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise timeouts.TestTimeout()
        main_thread = _MAIN_THREAD.get()
        in_loop = main_thread is not None
        if main_thread is not None and not _is_async(fn):
            result = await main_thread.call(fn, args, deadline)
        else:
            with timeouts.alarm(remaining, self.alarms and not in_loop):
                result = fn(*args)
        if inspect.isawaitable(result):
            if in_loop:
                await _await_before(result, deadline)
            else:
                self._in_loop(_await_before, result, deadline)

    async def _hooks(self, suite: Suite, kind: str, deadline_ms: int) -> _Outcome | None:
        hooks = suite.hooks[kind]
        if not hooks:
            return None
        deadline = time.monotonic() + deadline_ms / 1000
        for hook in hooks:
            try:
                await self._call(hook, (), deadline)
            except timeouts.TestTimeout:
                return _Outcome(timed_out=True)
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                return _Outcome(error=exc)
        return None


async def _await_before(awaitable: Any, deadline: float) -> None:
    """Await inside the loop; past ``deadline`` the awaitable is cancelled and the test timed out."""
    import anyio

    with anyio.move_on_after(deadline - time.monotonic()) as scope:
        await awaitable
    if scope.cancelled_caught:
        raise timeouts.TestTimeout()


def _check_assertion_count(state: TestState) -> None:
    if state.expected_assertions is not None and state.expect_calls != state.expected_assertions:
        raise AssertionError(
            f"expected {state.expected_assertions} assertion(s) (expect.assertions), but {state.expect_calls} ran"
        )
    if state.requires_assertions and state.expect_calls == 0:
        raise AssertionError("expected at least one assertion (expect.has_assertions), but none ran")


def _display_location(location: Location | None, root: Path) -> Location | None:
    """``location`` with its file relative to the root (string work: this runs once per test)."""
    if location is None:
        return None
    prefix = f"{root}{os.sep}"
    if location.file.startswith(prefix):
        return Location(location.file[len(prefix):].replace(os.sep, "/"), location.line, location.column)
    return location


def _required_parameters(fn: Callable[..., Any]) -> list[str]:
    """Parameters without defaults (read from the code object: ``inspect.signature`` is slow per test)."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    required = list(positional[:len(positional) - len(fn.__defaults__ or ())])
    keyword_only = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    required.extend(name for name in keyword_only if name not in (fn.__kwdefaults__ or {}))
    return required


def _plain_function_fails(name: str, params: list[str]) -> Callable[[], None]:
    def fail() -> None:
        raise TypeError(
            f"{name}() takes arguments ({', '.join(params)}): rt test does not provide pytest fixtures; "
            "use before_each/after_each hooks or test.each instead"
        )

    return fail


def _add_plain_functions(root: Suite, namespace: dict[str, Any], module_name: str) -> None:
    """pytest-style ``def test_*()`` functions of the file join its root suite, in source order."""
    added = False
    for name, value in list(namespace.items()):
        if not name.startswith("test_") or not inspect.isfunction(value):
            continue
        if value.__module__ != module_name or id(value) in api.REGISTERED_FUNCTIONS:
            continue
        code = value.__code__
        params = _required_parameters(value)
        fn = value if not params else _plain_function_fails(name, params)
        root.children.append(TestCase(name, fn, root, frozenset(), (), None, None,
                                      Location(code.co_filename, code.co_firstlineno, 1)))
        added = True
    if not added:
        return

    def line(child: TestCase | Suite) -> int:
        if isinstance(child, TestCase):
            return child.location.line if child.location else 0
        tests = child.tests()
        return min((t.location.line for t in tests if t.location), default=0)

    root.children.sort(key=line)

