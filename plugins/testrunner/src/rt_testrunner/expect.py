"""``expect(value)`` and its matchers, with failure messages that show a readable diff.

Failures raise :class:`ExpectationError` (an ``AssertionError``) whose message is already the rendered report:
the runner prints it as is. Diffs come from ``pprint`` + ``difflib`` (stdlib), one line per element, so a long
dict shows only the lines that differ.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
import types
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import attrs

from rt_testrunner.mocking import Mock
from rt_testrunner.state import CURRENT, TestState, count_expect

_MISSING = object()


class ExpectationError(AssertionError):
    """A matcher failed; ``str(error)`` is the full report (header, expected/received, diff)."""


def _show(value: Any) -> str:
    import pprint  # only failures format values: keep it off the start-up path

    return pprint.pformat(value, width=100, sort_dicts=False)


def diff(expected: Any, received: Any) -> str:
    """``- Expected`` / ``+ Received`` lines for two values. Containers are laid out one element per line
    so that only the elements that differ are marked; scalars are shown side by side."""
    import difflib
    import pprint

    containers = (dict, list, tuple, set, frozenset)
    if not (isinstance(expected, containers) and isinstance(received, containers)):
        left, right = _show(expected).splitlines(), _show(received).splitlines()
        if len(left) == 1 and len(right) == 1:
            return f"Expected: {left[0]}\nReceived: {right[0]}"
    else:
        left = pprint.pformat(expected, width=1, sort_dicts=False).splitlines()
        right = pprint.pformat(received, width=1, sort_dicts=False).splitlines()
    lines = ["- Expected", "+ Received", ""]
    for line in difflib.ndiff(left, right):
        if line.startswith("?"):
            continue
        lines.append(line.rstrip())
    return "\n".join(lines)


# --- asymmetric matchers ----------------------------------------------------------------------------------


class AnyOf:
    """``expect.any(int)``: equal to any instance of the type."""

    def __init__(self, kind: type | tuple[type, ...]) -> None:
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, self.kind)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        name = getattr(self.kind, "__name__", repr(self.kind))
        return f"expect.any({name})"


class Anything:
    """``expect.anything()``: equal to everything except ``None``."""

    def __eq__(self, other: object) -> bool:
        return other is not None

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return "expect.anything()"


def _strict_equal(a: Any, b: Any) -> bool:
    if isinstance(b, AnyOf | Anything):
        return bool(b == a)
    if type(a) is not type(b):
        return False
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "__dict__") and not callable(a):
        return bool(a == b) and _strict_equal(vars(a), vars(b))
    return bool(a == b)


def _matches_object(received: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if isinstance(received, Mapping):
            return all(k in received and _matches_object(received[k], v) for k, v in expected.items())
        return all(
            hasattr(received, k) and _matches_object(getattr(received, k), v) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(received, list):
        return len(expected) == len(received) and all(
            _matches_object(r, e) for r, e in zip(received, expected, strict=True)
        )
    return bool(received == expected)


def _same(a: Any, b: Any) -> bool:
    """``to_be``: identity, or equality for immutable scalars (so ``to_be(1000)`` works as users expect)."""
    if a is b:
        return True
    scalar = (int, float, complex, str, bytes, bool, type(None))
    return type(a) is type(b) and isinstance(a, scalar) and a == b


def _property(value: Any, path: str | list[Any] | tuple[Any, ...]) -> Any:
    parts = path.split(".") if isinstance(path, str) else list(path)
    for part in parts:
        if isinstance(value, Mapping):
            if part not in value:
                return _MISSING
            value = value[part]
        elif (
            isinstance(value, list | tuple)
            and isinstance(part, int | str)
            and str(part).lstrip("-").isdigit()
        ):
            index = int(part)
            if not -len(value) <= index < len(value):
                return _MISSING
            value = value[index]
        else:
            value = getattr(value, str(part), _MISSING)
            if value is _MISSING:
                return _MISSING
    return value


def _call_text(args: tuple[Any, ...], kwargs: Mapping[str, Any] | None = None) -> str:
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in (kwargs or {}).items()]
    return "(" + ", ".join(parts) + ")"


class Expectation:
    """The object ``expect(value)`` returns. ``.not_`` negates; ``.resolves``/``.rejects`` await first."""

    def __init__(self, value: Any, negated: bool = False, mode: str | None = None) -> None:
        self._value = value
        self._negated = negated
        self._mode = mode

    @property
    def not_(self) -> Expectation:
        return Expectation(self._value, not self._negated, self._mode)

    @property
    def resolves(self) -> Expectation:
        return Expectation(self._value, self._negated, "resolves")

    @property
    def rejects(self) -> Expectation:
        return Expectation(self._value, self._negated, "rejects")

    # -- the mechanism ---------------------------------------------------------------------------------------

    def _verdict(
        self,
        value: Any,
        name: str,
        args: str | Callable[[], str],
        passed: bool,
        message: Callable[[Any], str],
    ) -> None:
        count_expect()
        if passed == self._negated:
            not_ = ".not_" if self._negated else ""
            header = f"expect(received){not_}.{name}({args() if callable(args) else args})"
            raise ExpectationError(f"{header}\n\n{message(value)}")

    def _lazy(
        self,
        name: str,
        args: str | Callable[[], str],
        judge: Callable[[Any], bool],
        message: Callable[[Any], str],
    ) -> Any:
        """Run a matcher now, or, under ``.resolves``/``.rejects``, return a coroutine that awaits first."""
        if self._mode is None:
            return self._verdict(self._value, name, args, judge(self._value), message)

        async def settle() -> None:
            shown = args() if callable(args) else args
            awaitable = (
                self._value()
                if callable(self._value) and not inspect.isawaitable(self._value)
                else self._value
            )
            try:
                result = await awaitable
            except Exception as exc:
                if self._mode == "resolves":
                    count_expect()
                    raise ExpectationError(
                        f"expect(received).resolves.{name}({shown})\n\n"
                        f"Received an exception instead of a value: {type(exc).__name__}: {exc}"
                    ) from exc
                result = exc
            else:
                if self._mode == "rejects":
                    count_expect()
                    raise ExpectationError(
                        f"expect(received).rejects.{name}({shown})\n\nReceived a value instead of an exception: "
                        f"{_show(result)}"
                    )
            self._verdict(result, name, args, judge(result), message)

        coroutine = settle()
        state = CURRENT.get()
        if state is not None:
            not_ = ".not_" if self._negated else ""
            state.pending_matchers.append(
                _PendingMatcher(
                    coroutine,
                    lambda: (
                        f"expect(received).{self._mode}{not_}.{name}({args() if callable(args) else args})"
                    ),
                    self._value,
                    *_user_position(),
                )
            )
        return coroutine

    def _simple(
        self, name: str, expected: Any, judge: Callable[[Any], bool], show: Callable[[], str] | None = None
    ) -> Any:
        """A matcher comparing with ``expected``; its text is only formatted when the matcher fails."""

        def arg() -> str:
            return "" if expected is _MISSING else _show(expected)

        def message(value: Any) -> str:
            label = show() if show is not None else arg()
            if expected is _MISSING:
                return f"Received: {_show(value)}"
            if self._negated:
                return f"Expected: not {label}\nReceived: {_show(value)}"
            return (
                diff(expected, value)
                if name in ("to_equal", "to_strict_equal", "to_match_object")
                else (f"Expected: {label}\nReceived: {_show(value)}")
            )

        return self._lazy(name, arg, judge, message)

    # -- equality and truth ------------------------------------------------------------------------------------

    def to_be(self, expected: Any) -> Any:
        return self._simple("to_be", expected, lambda v: _same(v, expected))

    def to_equal(self, expected: Any) -> Any:
        return self._simple("to_equal", expected, lambda v: bool(v == expected))

    def to_strict_equal(self, expected: Any) -> Any:
        return self._simple("to_strict_equal", expected, lambda v: _strict_equal(v, expected))

    def to_be_truthy(self) -> Any:
        return self._simple("to_be_truthy", _MISSING, bool)

    def to_be_falsy(self) -> Any:
        return self._simple("to_be_falsy", _MISSING, lambda v: not v)

    def to_be_none(self) -> Any:
        return self._simple("to_be_none", _MISSING, lambda v: v is None)

    def to_be_defined(self) -> Any:
        return self._simple("to_be_defined", _MISSING, lambda v: v is not None)

    def to_be_nan(self) -> Any:
        return self._simple("to_be_nan", _MISSING, lambda v: isinstance(v, float) and math.isnan(v))

    # -- numbers -----------------------------------------------------------------------------------------------

    def _compare(self, name: str, expected: Any, op: str, judge: Callable[[Any], bool]) -> Any:
        def safe(value: Any) -> bool:
            try:
                return judge(value)
            except TypeError:
                return False

        return self._simple(name, expected, safe, lambda: f"{op} {_show(expected)}")

    def to_be_greater_than(self, expected: Any) -> Any:
        return self._compare("to_be_greater_than", expected, ">", lambda v: v > expected)

    def to_be_greater_than_or_equal(self, expected: Any) -> Any:
        return self._compare("to_be_greater_than_or_equal", expected, ">=", lambda v: v >= expected)

    def to_be_less_than(self, expected: Any) -> Any:
        return self._compare("to_be_less_than", expected, "<", lambda v: v < expected)

    def to_be_less_than_or_equal(self, expected: Any) -> Any:
        return self._compare("to_be_less_than_or_equal", expected, "<=", lambda v: v <= expected)

    def to_be_close_to(self, expected: float, num_digits: int = 2) -> Any:
        tolerance = 10 ** (-num_digits) / 2

        def judge(value: Any) -> bool:
            try:
                return bool(abs(value - expected) < tolerance)
            except TypeError:
                return False

        def message(value: Any) -> str:
            return f"Expected: {_show(expected)} (within {tolerance:g})\nReceived: {_show(value)}" + (
                f"\nDifference: {abs(value - expected):g}" if isinstance(value, int | float) else ""
            )

        return self._lazy("to_be_close_to", f"{expected!r}, {num_digits}", judge, message)

    # -- containers and strings ------------------------------------------------------------------------------

    def to_contain(self, item: Any) -> Any:
        def judge(value: Any) -> bool:
            try:
                return item in value
            except TypeError:
                return False

        return self._simple("to_contain", item, judge, lambda: f"a container holding {_show(item)}")

    def to_contain_equal(self, item: Any) -> Any:
        def judge(value: Any) -> bool:
            try:
                return any(element == item for element in value)
            except TypeError:
                return False

        return self._simple(
            "to_contain_equal", item, judge, lambda: f"a container with an element equal to {_show(item)}"
        )

    def to_have_length(self, length: int) -> Any:
        def judge(value: Any) -> bool:
            try:
                return len(value) == length
            except TypeError:
                return False

        def message(value: Any) -> str:
            try:
                actual = str(len(value))
            except TypeError:
                actual = f"(no length: {type(value).__name__})"
            return (
                f"Expected length: {'not ' if self._negated else ''}{length}\nReceived length: {actual}\n"
                f"Received: {_show(value)}"
            )

        return self._lazy("to_have_length", repr(length), judge, message)

    def to_have_property(self, path: str | list[Any], value: Any = _MISSING) -> Any:
        def judge(received: Any) -> bool:
            found = _property(received, path)
            return found is not _MISSING and (value is _MISSING or bool(found == value))

        def message(received: Any) -> str:
            found = _property(received, path)
            if found is _MISSING:
                return f"Expected path: {path!r}\nThe path does not exist in: {_show(received)}"
            return f"Expected path: {path!r}\n" + diff(value, found)

        args = repr(path) + ("" if value is _MISSING else f", {value!r}")
        return self._lazy("to_have_property", args, judge, message)

    def to_match(self, pattern: str | re.Pattern[str]) -> Any:
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        return self._simple(
            "to_match",
            compiled.pattern,
            lambda v: isinstance(v, str) and compiled.search(v) is not None,
            lambda: f"a string matching /{compiled.pattern}/",
        )

    def to_match_object(self, expected: Any) -> Any:
        return self._simple("to_match_object", expected, lambda v: _matches_object(v, expected))

    def to_be_instance_of(self, kind: type | tuple[type, ...]) -> Any:
        name = getattr(kind, "__name__", repr(kind))

        def message(value: Any) -> str:
            return (
                f"Expected an instance of: {'not ' if self._negated else ''}{name}\n"
                f"Received type: {type(value).__name__}\nReceived: {_show(value)}"
            )

        return self._lazy("to_be_instance_of", name, lambda v: isinstance(v, kind), message)

    # -- exceptions --------------------------------------------------------------------------------------------

    def to_raise(self, expected: Any = None) -> Any:
        """``expected``: an exception type, a substring or regex of the message, or an exception instance."""
        if self._mode == "rejects":
            return self._lazy(
                "to_raise",
                "" if expected is None else repr(expected),
                lambda exc: _exception_matches(exc, expected),
                _raise_message(expected),
            )
        count_expect()
        raised: BaseException | None = None
        if not callable(self._value):
            raise ExpectationError(
                "expect(received).to_raise()\n\nReceived value must be a function (e.g. a lambda) that "
                f"raises; got {_show(self._value)}"
            )
        try:
            self._value()
        except Exception as exc:  # noqa: BLE001 - whatever the function raises is what to_raise inspects
            raised = exc
        passed = raised is not None and _exception_matches(raised, expected)
        if passed == self._negated:
            not_ = ".not_" if self._negated else ""
            header = f"expect(received){not_}.to_raise({'' if expected is None else repr(expected)})"
            raise ExpectationError(f"{header}\n\n{_raise_message(expected)(raised)}")

    to_throw = to_raise

    # -- mocks -------------------------------------------------------------------------------------------------

    def _mock(self, name: str) -> Mock:
        if not isinstance(self._value, Mock):
            count_expect()
            raise ExpectationError(
                f"expect(received).{name}()\n\nReceived value must be a mock or spy (rt.test.mock / spy_on); "
                f"got {_show(self._value)}"
            )
        return self._value

    def _calls_text(self, received: Mock) -> str:
        calls = received.mock.calls
        if not calls:
            return "Number of calls: 0"
        shown = "\n".join(
            f"  {i + 1}: {_call_text(args, kw)}"
            for i, (args, kw) in enumerate(zip(calls, received.mock.kwargs, strict=True))
        )
        return f"Received calls:\n{shown}\n\nNumber of calls: {len(calls)}"

    def to_have_been_called(self) -> Any:
        received = self._mock("to_have_been_called")
        return self._verdict(received, "to_have_been_called", "", bool(received.mock.calls), self._calls_text)

    def to_have_been_called_times(self, times: int) -> Any:
        received = self._mock("to_have_been_called_times")
        return self._verdict(
            received,
            "to_have_been_called_times",
            repr(times),
            len(received.mock.calls) == times,
            lambda m: f"Expected number of calls: {times}\n{self._calls_text(m)}",
        )

    def to_have_been_called_with(self, *args: Any, **kwargs: Any) -> Any:
        received = self._mock("to_have_been_called_with")
        passed = any(
            a == args and k == kwargs for a, k in zip(received.mock.calls, received.mock.kwargs, strict=True)
        )
        return self._verdict(
            received,
            "to_have_been_called_with",
            _call_text(args, kwargs)[1:-1],
            passed,
            lambda m: f"Expected: {_call_text(args, kwargs)}\n{self._calls_text(m)}",
        )

    def to_have_been_last_called_with(self, *args: Any, **kwargs: Any) -> Any:
        received = self._mock("to_have_been_last_called_with")
        calls = received.mock.calls
        passed = bool(calls) and calls[-1] == args and received.mock.kwargs[-1] == kwargs
        return self._verdict(
            received,
            "to_have_been_last_called_with",
            _call_text(args, kwargs)[1:-1],
            passed,
            lambda m: f"Expected: {_call_text(args, kwargs)}\n{self._calls_text(m)}",
        )

    def to_have_returned(self) -> Any:
        received = self._mock("to_have_returned")
        passed = any(r.type == "return" for r in received.mock.results)
        return self._verdict(
            received,
            "to_have_returned",
            "",
            passed,
            lambda m: f"Results: {[(r.type, r.value) for r in m.mock.results]!r}",
        )

    # -- snapshots (rt_testrunner.snapshots) ------------------------------------------------------------------

    def to_match_snapshot(self, hint: str | None = None) -> None:
        """Compare with ``__snapshots__/<file>.snap`` (written on the first run, updated with ``-u``)."""
        from rt_testrunner import snapshots

        count_expect()
        snapshots.session().match(self._value, hint)

    def to_match_inline_snapshot(self, snapshot: str | None = None) -> None:
        """Compare with the string literal in the call; the first run (and ``-u``) writes it into the file."""
        from rt_testrunner import snapshots

        count_expect()
        snapshots.session().match_inline(self._value, snapshot, snapshots.user_frame())


@attrs.frozen
class _PendingMatcher:
    """A matcher under ``.resolves``/``.rejects``: its coroutine, its text, and where the test created it."""

    coroutine: Coroutine[Any, Any, None]
    header: Callable[[], str]
    value: Any
    frame: types.FrameType | None
    lasti: int
    lineno: int


def _user_position() -> tuple[types.FrameType | None, int, int]:
    """The frame that called the matcher (the first one outside this module), with its current instruction and
    line: the frame goes on running, so they are read now, for the traceback of an "await it" failure."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return None, 0, 0
    return frame, frame.f_lasti, frame.f_lineno


def unawaited_matcher_error(state: TestState) -> ExpectationError | None:
    """The failure for matchers under ``.resolves``/``.rejects`` that the test created but never awaited.

    Such a matcher is a coroutine: without ``await`` it never runs, so ``expect(coro).resolves.to_be(1)``
    would pass whatever ``coro`` returns, with only a "never awaited" RuntimeWarning (bun fails such a test
    too). Called by the runner when a test (or a hook) has returned: every pending matcher is forgotten, and
    an unawaited one is closed, along with the coroutine it was given, so the failure replaces the warnings.
    The error's traceback points at the line that created the first unawaited matcher."""
    unawaited = [
        p for p in state.pending_matchers if inspect.getcoroutinestate(p.coroutine) == inspect.CORO_CREATED
    ]
    state.pending_matchers.clear()
    if not unawaited:
        return None
    for pending in unawaited:
        pending.coroutine.close()
        value = pending.value
        if inspect.iscoroutine(value) and inspect.getcoroutinestate(value) == inspect.CORO_CREATED:
            value.close()
    first = unawaited[0]
    header = first.header()
    more = (
        f"\n\n({len(unawaited)} matchers under .resolves/.rejects were never awaited in this test.)"
        if len(unawaited) > 1
        else ""
    )
    error = ExpectationError(
        f"{header} was never awaited, so it checked nothing.\n\n"
        f"A matcher under .resolves/.rejects returns a coroutine: write `await {header}` "
        f"(in an `async def` test or hook).{more}"
    )
    if first.frame is not None:
        error.__traceback__ = types.TracebackType(None, first.frame, first.lasti, first.lineno)
    return error


def _exception_matches(exc: BaseException | None, expected: Any) -> bool:
    if exc is None:
        return False
    if expected is None:
        return True
    if isinstance(expected, type) and issubclass(expected, BaseException):
        return isinstance(exc, expected)
    if isinstance(expected, str):
        return expected in str(exc)
    if isinstance(expected, re.Pattern):
        return expected.search(str(exc)) is not None
    if isinstance(expected, BaseException):
        return type(exc) is type(expected) and str(exc) == str(expected)
    return False


def _raise_message(expected: Any) -> Callable[[Any], str]:
    def message(exc: Any) -> str:
        received = "nothing was raised" if exc is None else f"{type(exc).__name__}: {exc}"
        wanted = (
            "an exception"
            if expected is None
            else (expected.__name__ if isinstance(expected, type) else repr(expected))
        )
        return f"Expected: {wanted}\nReceived: {received}"

    return message


class _Expect:
    """``expect``: call it on a value; ``expect.any``/``expect.anything``/``expect.assertions`` hang off it."""

    def __call__(self, value: Any) -> Expectation:
        return Expectation(value)

    @staticmethod
    def any(kind: type | tuple[type, ...]) -> AnyOf:
        return AnyOf(kind)

    @staticmethod
    def anything() -> Anything:
        return Anything()

    @staticmethod
    def assertions(count: int) -> None:
        """Fail the current test unless exactly ``count`` expect() calls ran in it."""
        state = CURRENT.get()
        if state is not None:
            state.expected_assertions = count

    @staticmethod
    def has_assertions() -> None:
        state = CURRENT.get()
        if state is not None:
            state.requires_assertions = True

    def __repr__(self) -> str:
        return "rt.test.expect"


expect = _Expect()
