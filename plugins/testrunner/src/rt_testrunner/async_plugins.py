"""Which pytest plugin would run an async test or fixture, and so on which backend rt runs it.

pytest itself runs no coroutine: a plugin claims each async test (its ``pytest_pyfunc_call``) and each async
fixture (its ``pytest_fixture_setup``), and pytest 9 fails what none claims. rt decides the same per test,
from what the suite's environment and configuration would make pytest do:

- pytest-asyncio first, when installed: tests marked ``asyncio`` (every async test under
  ``asyncio_mode = auto``, even one marked ``anyio``) run on asyncio; async fixtures made with
  ``@pytest_asyncio.fixture`` (every one in auto mode) too, even for a sync test;
- anyio's plugin (installed with anyio): a test whose fixtures include ``anyio_backend`` (a test marked
  ``anyio`` gets it, see :meth:`PytestSession._anyio_claims`) runs on that fixture's backend, and so do all
  its async fixtures;
- pytest-trio, when installed: tests marked ``trio`` (every one under ``trio_mode = true``) run on trio,
  with their async fixtures;
- anything else fails as under pytest 9: the test with "async def functions are not natively supported",
  the fixture with "requested an async fixture ... with no plugin or hook that handled it" (a set-up error).

A project that never imports pytest is not a pytest suite, and a file pytest would not collect
(``backend.test.py``) is rt's: their ``async def test_*`` functions run on rt's own backend (``--backend``),
rt's behaviour for its own test files.
"""

from __future__ import annotations

import fnmatch
import inspect
import os
import sys
from typing import Any

from rt_testrunner.execute import BackendKey, backend_key

#: the test runs on the backend its ``anyio_backend`` fixture names
ANYIO = "anyio"
#: no plugin claims the async test or fixture: pytest 9 fails it
UNCLAIMED = "unclaimed"

ASYNC_TEST_FAILURE = (
    "async def functions are not natively supported.\n"
    "You need to install a suitable plugin for your async framework, for example:\n"
    "  - anyio\n"
    "  - pytest-asyncio\n"
    "  - pytest-tornasync\n"
    "  - pytest-trio\n"
    "  - pytest-twisted"
)


class AsyncModes:
    """The async plugins pytest would load in this environment and their modes from the configuration."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.anyio_auto = _text(values.get("anyio_mode")) == "auto"
        self.asyncio_auto = _text(values.get("asyncio_mode")) == "auto"
        self.trio_mode = _text(values.get("trio_mode")) in ("1", "true", "yes", "on")
        self._plugins: frozenset[str] | None = None

    @property
    def plugins(self) -> frozenset[str]:
        """The names of the installed async plugins' ``pytest11`` entry points (read on first need: only a
        suite with async tests or fixtures pays for it)."""
        if self._plugins is None:
            from rt._entrypoints import entry_points

            self._plugins = frozenset(
                entry.name for entry in entry_points("pytest11") if entry.name in ("asyncio", "trio")
            )
        return self._plugins

    def test_claim(self, function: Any, marks: list[Any], fixturenames: list[str], native: bool) -> Any:
        """None for a sync test or an rt test file (``native``: rt's backend), :data:`ANYIO`, a backend, or
        :data:`UNCLAIMED`."""
        inner = getattr(getattr(function, "hypothesis", None), "inner_test", function)
        if not inspect.iscoroutinefunction(inner):
            return None
        names = {mark.name for mark in marks}
        # pytest-asyncio makes the test a sync function that runs the coroutine on asyncio, before anyio's
        # hook sees it: in its auto mode an anyio-marked test runs on asyncio for every anyio_backend
        if "asyncio" in self.plugins and ("asyncio" in names or self.asyncio_auto):
            return backend_key("asyncio")
        if "anyio_backend" in fixturenames:
            return ANYIO
        if "trio" in self.plugins and ("trio" in names or self.trio_mode):
            return backend_key("trio")
        return None if native else UNCLAIMED

    def fixture_claim(self, test_claim: Any, func: Any, native: bool, anyio_asked: bool = False) -> Any:
        """Who sets up an async fixture of a test claimed by ``test_claim``: :data:`ANYIO`, a backend, None
        (rt's backend, in an rt test file) or :data:`UNCLAIMED`. ``anyio_asked``: the test's fixtures include
        ``anyio_backend``, so anyio's ``pytest_fixture_setup`` runs the fixture, whatever the test is (a sync
        test, or pytest-lazy-fixtures' hook asking for it with ``getfixturevalue``), after pytest-asyncio,
        which made it a sync function at collection."""
        if test_claim == ANYIO or test_claim == backend_key("trio"):
            return test_claim
        if "asyncio" in self.plugins and (
            self.asyncio_auto or getattr(func, "_force_asyncio_fixture", False)
        ):
            return backend_key("asyncio")
        if anyio_asked:
            return ANYIO
        return None if native else UNCLAIMED

    def trio_fixture_refusal(self, func: Any, scope: str, trio_test: bool) -> RuntimeError | None:
        """What pytest-trio's ``pytest_fixture_setup`` (whose work rt does) raises for fixture ``func`` of a
        test that is ``trio_test`` (marked ``trio``) or not: a trio fixture (made with its
        ``trio_fixture``, as its ``nursery`` is; in a trio test or trio mode, any async fixture that
        pytest-asyncio does not take first) wider than a function, or of a test that is not a trio test,
        is a set-up error. Without it rt handed the ``nursery`` placeholder to tests pytest refuses
        (trio-util 0.8.0 without trio mode: 33 set-up errors under pytest, rt ran the tests)."""
        forced = getattr(func, "_force_trio_fixture", False)
        is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
        if not (forced or is_async) or "trio" not in self.plugins:
            return None
        if not forced:
            if not (trio_test or self.trio_mode):
                return None
            if "asyncio" in self.plugins and (
                self.asyncio_auto or getattr(func, "_force_asyncio_fixture", False)
            ):
                return None  # pytest-asyncio made it a sync function at collection: pytest-trio sees no coroutine
        if scope != "function":
            return RuntimeError("Trio fixtures must be function-scope")
        if not trio_test:
            return RuntimeError("Trio fixtures can only be used by Trio tests")
        return None


def is_native(file: str, python_files: list[str]) -> bool:
    """A test file pytest would not collect (``*.test.py``, rt's own patterns), or any file of a project that
    never imports pytest: its async ``test_*`` functions and fixtures are rt's, on rt's backend."""
    if "pytest" not in sys.modules:
        return True
    name = os.path.basename(file)
    return not any(fnmatch.fnmatch(name, pattern) for pattern in python_files)


def unclaimed_fixture_message(test_name: str, fixture_name: str, autouse: bool) -> str:
    """pytest 9's error for an async fixture no plugin set up."""
    auto = " with autouse=True" if autouse else ""
    return (
        f"{test_name!r} requested an async fixture {fixture_name!r}{auto}, with no plugin or hook that handled"
        " it. This is an error, as pytest does not natively support it.\n"
        "See: https://docs.pytest.org/en/stable/deprecations.html#sync-test-depending-on-async-fixture"
    )


def fail(message: str) -> None:
    """Fail as pytest's ``fail(..., pytrace=False)`` (pytest is imported: the suite uses it)."""
    import pytest

    pytest.fail(message, pytrace=False)


def _text(value: Any) -> str:
    return str(value).strip().lower() if value is not None else ""


__all__ = ["ANYIO", "UNCLAIMED", "AsyncModes", "BackendKey"]
