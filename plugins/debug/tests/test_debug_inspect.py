"""rt.inspect: readable output for containers and records, error reports for exceptions, pygments colours."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import attrs
import pytest

import rt
from rt.kernel import Kernel

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclasses.dataclass
class Point:
    x: int
    y: int


@attrs.define
class User:
    name: str
    tags: list[str]


@pytest.fixture(autouse=True)
def _kernel(rt_kernel: Kernel) -> Kernel:
    return rt_kernel


def test_small_values_stay_on_one_line() -> None:
    assert rt.inspect({"a": 1}) == "{'a': 1}"
    assert rt.inspect([1, 2, 3]) == "[1, 2, 3]"
    assert rt.inspect({3}) == "{3}"
    assert rt.inspect(b"\x00ab") == "b'\\x00ab'"


def test_large_nested_values_are_laid_out_on_several_indented_lines() -> None:
    value = {
        "users": [User("alice", ["admin", "ops"]), User("bob", [])],
        "origin": Point(1, 2),
        "blob": b"\x89PNG" * 4,
        "ids": {101, 202},
        "description": "a string long enough to push this structure past the line width",
    }
    text = rt.inspect(value)
    lines = text.splitlines()
    assert len(lines) > 3
    assert lines[0] == "{"
    assert lines[-1] == "}"
    assert "User(name='alice', tags=[...])" in text  # attrs class; its list is at depth 3
    assert "User(name='alice', tags=['admin', 'ops'])" in rt.inspect(value, depth=3)
    assert "Point(x=1, y=2)" in text  # dataclass
    assert "b'\\x89PNG" in text  # bytes shown escaped, not decoded
    assert "{101, 202}" in text or "{202, 101}" in text
    assert all(line.startswith("    ") for line in lines[1:-1])


def test_cycles_are_shown_not_followed() -> None:
    value: dict[str, Any] = {"name": "loop"}
    value["self"] = value
    items: list[Any] = [1]
    items.append(items)
    assert rt.inspect(value) == "{'name': 'loop', 'self': ...}"
    assert rt.inspect(items) == "[1, ...]"


def test_depth_limit() -> None:
    nested = {"l1": {"l2": {"l3": {"l4": 1}}}}
    assert rt.inspect(nested) == "{'l1': {'l2': {'l3': {...}}}}"  # default depth 2, as the reference
    assert rt.inspect(nested, depth=0) == "{'l1': {...}}"
    assert rt.inspect(nested, depth=None) == "{'l1': {'l2': {'l3': {'l4': 1}}}}"


def test_bad_options_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="depth must be a non-negative int"):
        rt.inspect({}, depth=-1)
    for wrong_type in ("2", 2.0, True):
        with pytest.raises(TypeError, match="depth must be a non-negative int"):
            rt.inspect({}, depth=wrong_type)
    with pytest.raises(TypeError, match="colors must be True or False"):
        rt.inspect({}, colors="yes")


def _fails() -> None:
    total = 10
    count = 0
    print(total / count)


def test_exception_gives_source_preview_message_and_stack() -> None:
    try:
        _fails()
    except ZeroDivisionError as exc:
        text = rt.inspect(exc)
    lines = text.splitlines()
    line_no = _fails.__code__.co_firstlineno + 3
    assert lines[0] == f"{line_no - 2} |     total = 10"
    assert lines[2] == f"{line_no} |     print(total / count)"
    assert lines[3] == " " * (len(f"{line_no} | ") + 10) + "^" * len("total / count")
    assert lines[4] == "ZeroDivisionError: division by zero"
    assert lines[5] == f"    at _fails ({__file__}:{line_no}:11)"
    assert not ANSI.search(text)


def test_exception_chain_reports_the_cause_first() -> None:
    try:
        try:
            {}["key"]
        except KeyError as inner:
            raise RuntimeError("lookup failed") from inner
    except RuntimeError as exc:
        text = rt.inspect(exc)
    assert (
        text.index("KeyError: 'key'") < text.index("direct cause") < text.index("RuntimeError: lookup failed")
    )


def test_colors_highlight_the_source_with_pygments_and_only_when_asked() -> None:
    try:
        _fails()
    except ZeroDivisionError as exc:
        plain, colored = rt.inspect(exc), rt.inspect(exc, colors=True)
    assert ANSI.search(colored)
    assert ANSI.sub("", colored) == plain
    value = {"key": [1, "two"]}
    assert not ANSI.search(rt.inspect(value))
    assert ANSI.sub("", rt.inspect(value, colors=True)) == rt.inspect(value)
    assert ANSI.search(rt.inspect(value, colors=True))


def test_columns_count_characters_not_utf8_bytes() -> None:
    try:
        _fails_in_unicode_line()
    except ZeroDivisionError as exc:
        text = rt.inspect(exc)
    line_no = _fails_in_unicode_line.__code__.co_firstlineno + 1
    column = '    return ("ü" * 3, 1 / 0)'.index("1 / 0") + 1
    assert f"    at _fails_in_unicode_line ({__file__}:{line_no}:{column})" in text
    assert " " * len(f"{line_no} | " + '    return ("ü" * 3, ') + "^^^^^\n" in text + "\n"


def _fails_in_unicode_line() -> tuple[str, float]:
    return ("ü" * 3, 1 / 0)
