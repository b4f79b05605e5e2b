"""Every matcher of API.md, in both directions, plus ``.not_``, ``.resolves``/``.rejects`` and mocks."""

from __future__ import annotations

import re
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rt_testrunner.expect import ExpectationError, expect
from rt_testrunner.mocking import mock, spy_on
from rt_testrunner.state import CURRENT, TestState


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


def raises() -> None:
    raise ValueError("bad input 42")


PASSING: list[tuple[str, Any, tuple[Any, ...]]] = [
    ("to_be", 1000, (1000,)),
    ("to_be", None, (None,)),
    ("to_equal", {"a": [1, 2]}, ({"a": [1, 2]},)),
    ("to_equal", {"a": 1, "b": "x"}, ({"a": expect.any(int), "b": expect.anything()},)),
    ("to_strict_equal", [1, (2, 3)], ([1, (2, 3)],)),
    ("to_be_truthy", [0], ()),
    ("to_be_falsy", "", ()),
    ("to_be_none", None, ()),
    ("to_be_greater_than", 3, (2,)),
    ("to_be_greater_than_or_equal", 3, (3,)),
    ("to_be_less_than", 2, (3,)),
    ("to_be_less_than_or_equal", 3, (3,)),
    ("to_be_close_to", 0.1 + 0.2, (0.3,)),
    ("to_contain", "haystack", ("st",)),
    ("to_contain", [1, 2, 3], (2,)),
    ("to_contain_equal", [{"a": 1}], ({"a": 1},)),
    ("to_have_length", [1, 2, 3], (3,)),
    ("to_have_property", {"a": {"b": [5]}}, ("a.b",)),
    ("to_have_property", {"a": {"b": [5]}}, (["a", "b", 0], 5)),
    ("to_have_property", Point(1, 2), ("x", 1)),
    ("to_match", "hello world", (r"wor\w+",)),
    ("to_match", "hello", (re.compile("^h"),)),
    ("to_match_object", {"a": 1, "b": {"c": 2, "d": 3}}, ({"b": {"c": 2}},)),
    ("to_be_instance_of", True, (int,)),
    ("to_raise", raises, ()),
    ("to_raise", raises, (ValueError,)),
    ("to_raise", raises, ("bad input",)),
    ("to_raise", raises, (re.compile(r"\d+"),)),
    ("to_raise", raises, (ValueError("bad input 42"),)),
]

FAILING: list[tuple[str, Any, tuple[Any, ...], str]] = [
    ("to_be", [1], ([1],), "Expected: [1]"),
    ("to_equal", {"a": [1, 2]}, ({"a": [1, 3]},), "- Expected\n+ Received"),
    ("to_strict_equal", [1], ([1.0],), "to_strict_equal"),
    ("to_strict_equal", (1, 2), ([1, 2],), "to_strict_equal"),
    ("to_be_truthy", 0, (), "Received: 0"),
    ("to_be_falsy", 1, (), "Received: 1"),
    ("to_be_none", 0, (), "Received: 0"),
    ("to_be_greater_than", 1, (2,), "Expected: > 2"),
    ("to_be_greater_than_or_equal", 1, (2,), "Expected: >= 2"),
    ("to_be_less_than", 3, (2,), "Expected: < 2"),
    ("to_be_less_than_or_equal", 3, (2,), "Expected: <= 2"),
    ("to_be_greater_than", "a", (2,), "Received: 'a'"),
    ("to_be_close_to", 0.5, (0.3,), "Difference"),
    ("to_contain", [1, 2], (3,), "holding 3"),
    ("to_contain_equal", [{"a": 1}], ({"a": 2},), "element equal"),
    ("to_have_length", [1], (2,), "Received length: 1"),
    ("to_have_length", 5, (2,), "no length"),
    ("to_have_property", {"a": 1}, ("b",), "does not exist"),
    ("to_have_property", {"a": 1}, ("a", 2), "Expected: 2"),
    ("to_match", "hello", ("^x",), "matching /^x/"),
    ("to_match", 5, ("5",), "matching"),
    ("to_match_object", {"a": 1}, ({"a": 2},), "- Expected"),
    ("to_be_instance_of", "s", (int,), "Received type: str"),
    ("to_raise", lambda: None, (), "nothing was raised"),
    ("to_raise", raises, (TypeError,), "Received: ValueError: bad input 42"),
    ("to_raise", raises, ("other",), "Expected: 'other'"),
    ("to_raise", 5, (), "must be a function"),
]


@pytest.mark.parametrize(("matcher", "value", "args"), PASSING)
def test_matcher_passes(matcher: str, value: Any, args: tuple[Any, ...]) -> None:
    getattr(expect(value), matcher)(*args)
    with pytest.raises(ExpectationError, match=r"\.not_\." + matcher):
        getattr(expect(value).not_, matcher)(*args)


@pytest.mark.parametrize(("matcher", "value", "args", "shown"), FAILING)
def test_matcher_fails_readably(matcher: str, value: Any, args: tuple[Any, ...], shown: str) -> None:
    with pytest.raises(ExpectationError) as info:
        getattr(expect(value), matcher)(*args)
    message = str(info.value)
    assert message.startswith(f"expect(received).{matcher}(")
    assert shown in message
    if matcher != "to_raise" or callable(value):
        getattr(expect(value).not_, matcher)(*args)


def test_to_equal_diff_marks_only_changed_lines() -> None:
    expected = {"name": "rt", "tags": ["a", "b"], "size": 3}
    received = {"name": "rt", "tags": ["a", "c"], "size": 3}
    with pytest.raises(ExpectationError) as info:
        expect(received).to_equal(expected)
    changed = [line for line in str(info.value).splitlines() if line.startswith(("- ", "+ ")) and "'" in line]
    assert changed == ["-           'b'],", "+           'c'],"]


def test_expect_counts_calls_and_assertions() -> None:
    state = TestState()
    token = CURRENT.set(state)
    try:
        expect(1).to_be(1)
        expect(1).not_.to_be(2)
        with pytest.raises(ExpectationError):
            expect(1).to_be(2)
        expect.assertions(3)
    finally:
        CURRENT.reset(token)
    assert state.expect_calls == 3
    assert state.expected_assertions == 3


def test_mock_records_calls_and_results() -> None:
    fn = mock(lambda x, y=0: x + y)
    assert fn(1, y=2) == 3
    assert fn.mock.calls == [(1,)]
    assert fn.mock.kwargs == [{"y": 2}]
    assert fn.mock.results[0].type == "return" and fn.mock.results[0].value == 3
    expect(fn).to_have_been_called()
    expect(fn).to_have_been_called_times(1)
    expect(fn).to_have_been_called_with(1, y=2)
    expect(fn).to_have_been_last_called_with(1, y=2)
    expect(fn).to_have_returned()
    with pytest.raises(ExpectationError, match="Expected number of calls: 2"):
        expect(fn).to_have_been_called_times(2)


def test_mock_implementations_and_reset() -> None:
    fn = mock.fn()
    assert fn() is None
    fn.mock_return_value(7).mock_return_value_once(1)
    assert [fn(), fn()] == [1, 7]
    fn.mock_implementation(lambda: 9)
    assert fn() == 9
    fn.mock_clear()
    assert fn.mock.calls == [] and fn() == 9
    fn.mock_reset()
    assert fn() is None
    failing = mock(lambda: raises())
    with pytest.raises(ValueError):
        failing()
    assert failing.mock.results[0].type == "throw"
    expect(failing).not_.to_have_returned()


def test_mock_matchers_reject_plain_functions() -> None:
    with pytest.raises(ExpectationError, match="must be a mock or spy"):
        expect(len).to_have_been_called()


def test_spy_on_calls_through_and_restores() -> None:
    class Box:
        def size(self) -> int:
            return 4

    box = Box()
    spy = spy_on(box, "size")
    assert box.size() == 4
    expect(spy).to_have_been_called_times(1)
    spy.mock_return_value(5)
    assert box.size() == 5
    spy.mock_restore()
    assert box.size() == 4 and "size" not in box.__dict__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        spy_on(box, "nope")


def test_spy_on_a_static_method_restores_the_wrapper() -> None:
    class Tools:
        @staticmethod
        def double(n: int) -> int:
            return 2 * n

    spy = spy_on(Tools, "double")
    assert Tools().double(3) == 6
    expect(spy).to_have_been_called_with(3)
    spy.mock_restore()
    assert isinstance(Tools.__dict__["double"], staticmethod)
    assert Tools().double(4) == 8


def test_spy_on_a_method_of_a_class_keeps_self_bound() -> None:
    class Counter:
        def __init__(self) -> None:
            self.count = 0

        def add(self, n: int) -> int:
            self.count += n
            return self.count

        @classmethod
        def make(cls) -> Counter:
            return cls()

    spy = spy_on(Counter, "add")
    make = spy_on(Counter, "make")
    first, second = Counter.make(), Counter()
    assert first.add(2) == 2 and first.add(3) == 5 and second.add(1) == 1
    assert [call[0] for call in spy.mock.calls] == [first, first, second]
    expect(spy).to_have_been_last_called_with(second, 1)
    expect(make).to_have_been_called_times(1)
    spy.mock_restore()
    make.mock_restore()
    assert "add" in Counter.__dict__ and Counter().add(7) == 7
    assert isinstance(Counter.__dict__["make"], classmethod) and isinstance(Counter.make(), Counter)


@pytest.mark.anyio
async def test_resolves_and_rejects(anyio_backend: str) -> None:
    async def value() -> int:
        await anyio.lowlevel.checkpoint()
        return 5

    async def failure() -> int:
        await anyio.lowlevel.checkpoint()
        raise KeyError("missing")

    await expect(value()).resolves.to_be(5)
    await expect(value).resolves.not_.to_be(6)
    await expect(failure()).rejects.to_raise(KeyError)
    await expect(failure()).rejects.to_be_instance_of(KeyError)
    with pytest.raises(ExpectationError, match="Received an exception instead of a value") as raised:
        await expect(failure()).resolves.to_be(5)
    assert str(raised.value).startswith(
        "expect(received).resolves.to_be(5)\n"
    )  # the argument, not a function
    with pytest.raises(ExpectationError, match="Received a value instead of an exception"):
        await expect(value()).rejects.to_raise()


@pytest.mark.anyio
async def test_mock_resolved_and_rejected_values(anyio_backend: str) -> None:
    fn = mock().mock_resolved_value(3)
    assert await fn() == 3
    fn.mock_rejected_value(RuntimeError("no"))
    with pytest.raises(RuntimeError):
        await fn()


def test_snapshot_matchers_outside_rt_test_say_so() -> None:
    with pytest.raises(AssertionError, match="only when tests run under rt test"):
        expect(1).to_match_snapshot()
    with pytest.raises(AssertionError, match="only when tests run under rt test"):
        expect(1).to_match_inline_snapshot("1")
