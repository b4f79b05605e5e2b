"""Event loops on the main thread for the async tests and fixtures of pytest suites, as pytest's plugins run them.

pytest's async plugins never start a thread for the loop: pytest-asyncio keeps an ``asyncio.Runner`` per loop
scope (``loop_scope`` of its mark and fixture, ``asyncio_default_test_loop_scope``,
``asyncio_default_fixture_loop_scope``), made when the scope first needs it and closed when the scope ends;
anyio's plugin keeps one test runner while a test or an async fixture holds it (a module-scoped async fixture
keeps its loop for the module, otherwise each test gets a new loop); pytest-trio runs each test in a
``trio.run`` of its own. Each async step (a fixture's set-up or teardown, the test) is run to its end on the
main thread, between the sync steps. What tests see depends on it: signal handlers can only be installed on
the main thread (``loop.add_signal_handler``, ``anyio.open_signal_receiver``), ``asyncio.get_running_loop()``
differs between tests with a function loop scope and not within a module's, a module-scoped async fixture
used from function-scoped tests belongs to another loop, and tasks a test leaves running are cancelled when
its loop closes.

So rt runs a pytest item's async steps the same way: :class:`MainThreadLoops` keeps the loops by
:data:`LoopKey` (the backend and what owns the loop: a scope instance or anyio's leases), each one an anyio
test runner (an ``asyncio.Runner``, or trio in guest mode driven from the main thread), and runs each step
with :meth:`MainThreadLoops.run` while the caller waits. The caller's context variables are handed in (the
runner's own task keeps its context between steps) and what a step sets comes back, as pytest-asyncio applies
an async fixture's context changes to the test. rt's own async test files keep the run's loop in its thread
(execute.py), where their concurrent groups run.

Time-outs: a test with one (``--timeout``, pytest-timeout's mark or ini value) is stopped as pytest-timeout's
signal method stops it: the item's ``SIGALRM`` stays armed while its steps run, and raises into whatever runs
on the main thread, the test's own code or the loop waiting for it. No cancel scope is wrapped around the
test (anyio's suite exits cancel scopes out of order on purpose, which a scope around it would turn into an
error). A loop the alarm stopped in the middle is closed, its tasks cancelled (a trio step runs in a cancel
scope of its own for that: a guest run ends only once its tasks do).
"""

from __future__ import annotations

import contextvars
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rt_testrunner import clock, timeouts
from rt_testrunner.execute import ANYIO_OWNER, POLICY_OPTION, LoopKey

_UNSET = object()


class _Raised:
    """An exception of a step, carried out of the runner's task (which must live on for the next step)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class MainThreadLoops:
    """The main-thread loops of a run, by :data:`LoopKey`, and anyio's leases on its loops."""

    def __init__(self) -> None:
        self._runners: dict[LoopKey, Any] = {}
        self._leases: dict[LoopKey, int] = {}
        #: the policy each loop made with an event_loop_policy replaced, put back when that loop closes
        self._policies: dict[LoopKey, Any] = {}

    def run(self, key: LoopKey, make: Callable[[], Any]) -> Any:
        """Await ``make()`` in the loop of ``key`` (started on first use) on this thread, and return its
        result or raise its exception."""
        runner = self._runners.get(key)
        if runner is None:
            runner = self._start(key)
        import anyio

        caller = contextvars.copy_context()
        library = _library_var()
        cancelled = anyio.get_cancelled_exc_class
        trio_step: list[Any] = []

        async def step() -> tuple[Any, contextvars.Context]:
            for var, value in caller.items():
                if var is not library and var.get(_UNSET) is not value:
                    var.set(value)
            try:
                if key[0][0] == "trio":
                    # a guest run only ends once its tasks do: the way to cancel this one from outside
                    with anyio.CancelScope() as scope:
                        trio_step[:] = [scope, sys.modules["trio"].lowlevel.current_trio_token()]
                        result: Any = await make()
                else:
                    result = await make()
            except cancelled():  # the loop is closing: its task must end
                raise
            except BaseException as exc:  # noqa: BLE001 - the runner's task must live on: re-raised below
                result = _Raised(exc)
            return result, contextvars.copy_context()

        try:
            if key[1] != ANYIO_OWNER and key[0][0] == "asyncio":
                # pytest-asyncio's Runner.run: each step a task of its own (a task the test leaves behind
                # that cancels "all other tasks" does not reach a runner's task serving the next steps)
                result, after = runner.get_loop().run_until_complete(step())
            else:
                result, after = runner.run_fixture(step, {})
        except BaseException:
            # the time-out's alarm (or ^C) stopped the loop itself, not the step: the loop is closed
            if trio_step:
                trio_step[1].run_sync_soon(trio_step[0].cancel)
            self._drop(key)
            raise
        for var, value in after.items():
            if var is not library and var.get(_UNSET) is not value:
                var.set(value)
        if isinstance(result, _Raised):
            raise result.error
        return result

    def _start(self, key: LoopKey) -> Any:
        from anyio._core._eventloop import get_async_backend

        (name, options), owner = key
        settings = dict(options)
        policy = settings.pop(POLICY_OPTION, None)
        if policy is not None:
            # pytest-asyncio's event_loop_policy fixture: the current policy while the loop lives, which the
            # runner's asyncio.Runner makes its loop with (and tests see as asyncio.get_event_loop_policy())
            asyncio = sys.modules["asyncio"]
            self._policies[key] = asyncio.get_event_loop_policy()
            asyncio.set_event_loop_policy(policy)
        runner: Any = get_async_backend(name).create_test_runner(settings)
        runner.__enter__()
        if owner != ANYIO_OWNER and name == "asyncio":
            # anyio's runner raises errors of callbacks and unretrieved tasks after each step, as anyio's
            # plugin does; pytest-asyncio's plain asyncio.Runner only logs them
            runner.get_loop().set_exception_handler(None)
        self._runners[key] = runner
        return runner

    def lease(self, key: LoopKey) -> None:
        self._leases[key] = self._leases.get(key, 0) + 1

    def release(self, key: LoopKey) -> None:
        """Drop a lease on an anyio loop; the last one closes it, as anyio's plugin closes its runner."""
        left = self._leases.get(key, 0) - 1
        if left > 0:
            self._leases[key] = left
            return
        self._leases.pop(key, None)
        self.close(key)

    def close_owned(self, owner: Any) -> None:
        """Close the loops of a scope instance that ended (pytest-asyncio closes its runner with the scope)."""
        for key in [key for key in self._runners if key[1] == owner]:
            self.close(key)

    def close(self, key: LoopKey) -> None:
        runner = self._runners.pop(key, None)
        if runner is None:
            return
        try:
            with _alarm_paused():
                runner.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - a loop failing to close is no test's result (pytest-asyncio warns)
            return
        finally:
            self._restore_policy(key)

    def _drop(self, key: LoopKey) -> None:
        runner = self._runners.pop(key, None)
        self._leases.pop(key, None)
        if runner is not None:
            try:
                with _alarm_paused():
                    runner.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the test's own error is what counts
                return
            finally:
                self._restore_policy(key)

    def _restore_policy(self, key: LoopKey) -> None:
        if key in self._policies:
            sys.modules["asyncio"].set_event_loop_policy(self._policies.pop(key))

    def close_all(self) -> None:
        for key in list(self._runners):
            self.close(key)
        self._leases.clear()


def _library_var() -> Any:
    """sniffio's variable naming the running async library: each loop has its own, never copied across."""
    import sys

    sniffio = sys.modules.get("sniffio")
    return getattr(sniffio, "current_async_library_cvar", None)


@contextmanager
def _alarm_paused() -> Iterator[None]:
    """Pause the ``SIGALRM`` time-out of the sync code around a step and re-arm it for what is left after."""
    if not timeouts.is_armed():
        yield
        return
    remaining, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    timeouts.disarm()
    started = clock.monotonic()
    try:
        yield
    finally:
        left = remaining - (clock.monotonic() - started)
        timeouts.rearm(left)


__all__ = ["MainThreadLoops"]
