"""``mock(fn=None)`` and ``spy_on(obj, name)``: callables that record their calls and results.

Written here rather than on ``unittest.mock``: the jest-shaped surface (``.mock.calls``, ``mock_return_value``,
``mock_implementation``, once-variants, ``expect(m).to_have_been_called_with``) is what the spec names, and
``MagicMock``'s auto-attributes would hide typos in tests that use it.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class MockResult:
    """``type`` is ``"return"`` or ``"throw"``."""

    type: str
    value: Any


@attrs.define
class MockState:
    calls: list[tuple[Any, ...]] = attrs.field(factory=list)
    kwargs: list[dict[str, Any]] = attrs.field(factory=list)
    results: list[MockResult] = attrs.field(factory=list)

    @property
    def last_call(self) -> tuple[Any, ...] | None:
        return self.calls[-1] if self.calls else None


_NOTHING = object()


class Mock:
    """A recording function. ``mock.calls``/``mock.results`` hold what happened; the ``mock_*`` methods
    change what it does and return the mock, so they chain."""

    def __init__(self, implementation: Callable[..., Any] | None = None, name: str = "mock") -> None:
        self.mock = MockState()
        self._name = name
        self._implementation = implementation
        self._once: list[Callable[..., Any]] = []
        self._restore: Callable[[], None] | None = None
        self._binds_instances = False  # set by spy_on for a plain method spied on its class

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """As a class attribute standing for a plain method, bind like the method did: ``obj.method()`` calls
        the mock with ``obj`` first (recorded in ``mock.calls`` too, as Python passes it)."""
        if instance is None or not self._binds_instances:
            return self
        return types.MethodType(self, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.mock.calls.append(args)
        self.mock.kwargs.append(kwargs)
        implementation = self._once.pop(0) if self._once else self._implementation
        try:
            value = implementation(*args, **kwargs) if implementation is not None else None
        except Exception as exc:
            self.mock.results.append(MockResult("throw", exc))
            raise
        self.mock.results.append(MockResult("return", value))
        return value

    def __repr__(self) -> str:
        return f"<rt mock {self._name!r}: {len(self.mock.calls)} call(s)>"

    def get_mock_name(self) -> str:
        return self._name

    def mock_name(self, name: str) -> Mock:
        self._name = name
        return self

    def mock_implementation(self, fn: Callable[..., Any]) -> Mock:
        self._implementation = fn
        return self

    def mock_implementation_once(self, fn: Callable[..., Any]) -> Mock:
        self._once.append(fn)
        return self

    def mock_return_value(self, value: Any) -> Mock:
        return self.mock_implementation(lambda *a, **k: value)

    def mock_return_value_once(self, value: Any) -> Mock:
        return self.mock_implementation_once(lambda *a, **k: value)

    def mock_resolved_value(self, value: Any) -> Mock:
        async def resolved(*a: Any, **k: Any) -> Any:
            return value

        return self.mock_implementation(resolved)

    def mock_rejected_value(self, error: BaseException) -> Mock:
        async def rejected(*a: Any, **k: Any) -> Any:
            raise error

        return self.mock_implementation(rejected)

    def mock_clear(self) -> Mock:
        """Forget the recorded calls and results; keep the implementation."""
        self.mock = MockState()
        return self

    def mock_reset(self) -> Mock:
        """Forget calls, results and any implementation."""
        self.mock_clear()
        self._implementation = None
        self._once.clear()
        return self

    def mock_restore(self) -> Mock:
        """For a spy: put the original attribute back."""
        if self._restore is not None:
            self._restore()
            self._restore = None
        return self


class _MockFactory:
    """``mock(fn)`` creates a mock; ``mock.fn(fn)`` is the same (the spec's alias object)."""

    def __call__(self, fn: Callable[..., Any] | None = None) -> Mock:
        return Mock(fn, getattr(fn, "__name__", "mock") if fn is not None else "mock")

    def fn(self, fn: Callable[..., Any] | None = None) -> Mock:
        return self(fn)

    def __repr__(self) -> str:
        return "rt.test.mock"


mock = _MockFactory()


def spy_on(obj: Any, name: str) -> Mock:
    """Replace ``obj.name`` with a mock that calls the original; ``mock_restore()`` puts it back."""
    original = getattr(obj, name, _NOTHING)
    if original is _NOTHING:
        raise AttributeError(f"spy_on: {obj!r} has no attribute {name!r}")
    if not callable(original):
        raise TypeError(f"spy_on: {type(obj).__name__}.{name} is not callable")
    own = getattr(obj, "__dict__", {})
    had_own = name in own
    # the raw attribute, not what getattr gave: restoring a staticmethod/classmethod must keep its wrapper
    raw = own[name] if had_own else None
    spy = Mock(original, name)
    # a plain function found on a class is a method: the spy must bind `self` as it did (staticmethod and
    # classmethod objects are not plain functions and keep their own binding through `original`)
    spy._binds_instances = isinstance(obj, type) and inspect.isfunction(inspect.getattr_static(obj, name))
    setattr(obj, name, spy)

    def restore() -> None:
        if had_own:
            setattr(obj, name, raw)
        else:
            delattr(obj, name)

    spy._restore = restore
    return spy
