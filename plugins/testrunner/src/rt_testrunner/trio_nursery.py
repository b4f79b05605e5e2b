"""pytest-trio's ``nursery`` fixture: a nursery of the test's own ``trio.run``, one per async fixture or test
that asks for it.

The fixture itself returns a placeholder (``NURSERY_FIXTURE_PLACEHOLDER``); pytest-trio's runner puts a
nursery it opens inside the run in its place when it calls the trio fixture or test, and cancels that
nursery once the test returns or the fixture's teardown is done, so the tasks started there (a server a
fixture serves the test from, hypercorn's) end with it. rt runs those tests on trio itself
(async_plugins.py), so it does the same here: the function is called inside a nursery opened in the run.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any


def placeholders(kwargs: dict[str, Any]) -> list[str]:
    """The arguments in ``kwargs`` that hold pytest-trio's nursery placeholder (none without pytest-trio)."""
    plugin = sys.modules.get("pytest_trio.plugin")
    placeholder = getattr(plugin, "NURSERY_FIXTURE_PLACEHOLDER", None)
    if placeholder is None:
        return []
    return [name for name, value in kwargs.items() if value is placeholder]


async def run_test(function: Callable[..., Any], kwargs: dict[str, Any], names: list[str]) -> None:
    """The async test ``function`` with a nursery for each of ``names``, cancelled once it returns."""
    async with sys.modules["trio"].open_nursery() as nursery:
        try:
            await function(**{**kwargs, **dict.fromkeys(names, nursery)})
        finally:
            nursery.cancel_scope.cancel()


async def fixture(
    function: Callable[..., Any], kwargs: dict[str, Any], names: list[str]
) -> AsyncIterator[Any]:
    """The fixture ``function`` (sync or async, returning or ``yield``-ing) as an async ``yield`` fixture
    whose nursery lives until its teardown is done: pytest-trio makes every fixture that asks for the nursery
    a trio fixture, set up and torn down inside the run (hypercorn's sync ``client_stream`` starts its server
    there). The nursery is held by a task of its own, as pytest-trio runs each trio fixture: rt runs each
    step of a test (a set-up, the test, a teardown) in a cancel scope of its own, which a nursery left open
    across steps would cross."""
    trio = sys.modules["trio"]
    holder = _Holder(trio)
    trio.lowlevel.spawn_system_task(holder.hold, function, {**kwargs}, names)
    await holder.ready.wait()
    if holder.error is not None:
        raise holder.error
    yield holder.value
    holder.teardown.set()
    await holder.done.wait()
    if holder.error is not None:
        raise holder.error


class _Holder:
    """The task that holds one fixture's nursery, from its set-up to the end of its teardown."""

    def __init__(self, trio: Any) -> None:
        self.ready = trio.Event()
        self.teardown = trio.Event()
        self.done = trio.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self._trio = trio

    async def hold(self, function: Callable[..., Any], kwargs: dict[str, Any], names: list[str]) -> None:
        try:
            async with self._trio.open_nursery() as nursery:
                try:
                    kwargs.update(dict.fromkeys(names, nursery))
                    await self._run(function(**kwargs))
                finally:
                    nursery.cancel_scope.cancel()
        except BaseException as exc:  # noqa: BLE001 - a system task's error would end the whole run
            self.error = exc
        finally:
            self.ready.set()
            self.done.set()

    async def _run(self, result: Any) -> None:
        """Set up (the value), wait for the teardown, tear down."""
        if inspect.isasyncgen(result):
            self.value = await result.__anext__()
        elif inspect.isgenerator(result):
            self.value = next(result)
        else:
            self.value = (await result) if inspect.isawaitable(result) else result
        self.ready.set()
        await self.teardown.wait()
        extra: Any = _DONE
        if inspect.isasyncgen(result):
            extra = await anext(result, _DONE)
        elif inspect.isgenerator(result):
            extra = next(result, _DONE)
        if extra is not _DONE:
            raise RuntimeError(f"fixture {result.__name__!r} yielded more than once")


#: a generator's end (its second step returned nothing more)
_DONE = object()
