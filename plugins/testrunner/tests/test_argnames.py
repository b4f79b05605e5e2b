"""The names a test function or fixture asks for, read from a plain function's code without
``inspect.signature``: the same names as ``inspect.signature`` for every shape of parameter list."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest

from rt_testrunner.fixtures import _plain_function_argnames, argnames

SHAPES = [
    "def f(): pass",
    "def f(a, b): pass",
    "def f(a, b=1): pass",
    "def f(a, /, b, c=2, *args, d, e=3, **kw): pass",
    "def f(a=1, /, b=2): pass",
    "def f(a, b=1, c=2, /, d=3): pass",
    "def f(*, a, b=1): pass",
    "def f(a, b, /): pass",
    "def f(a, /, b, *, c): z = 1; w = 2",
    "def f(*args, **kwargs): local = 1",
    "async def f(a, b=1, *, c): pass",
    "def f(a, b):\n    def inner(c): return a + c\n    return inner",
]


def _by_signature(function: Any) -> list[str]:
    parameters = inspect.signature(function).parameters.values()
    return [
        p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
    ]


@pytest.mark.parametrize("source", SHAPES)
def test_a_plain_function_gives_the_names_its_signature_gives(source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # noqa: S102 - the shapes above
    function = namespace["f"]
    assert _plain_function_argnames(function) == _by_signature(function)
    function.pytestmark = []  # a marked test: attributes that do not change its signature
    assert _plain_function_argnames(function) == _by_signature(function)


def test_a_wrapped_or_re_signed_function_goes_through_its_signature() -> None:
    def original(a: int, b: int) -> None: ...

    @functools.wraps(original)
    def wrapper(*args: Any) -> None: ...

    assert _plain_function_argnames(wrapper) is None
    assert argnames(wrapper) == ("a", "b")

    def re_signed(*args: Any) -> None: ...

    re_signed.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    assert _plain_function_argnames(re_signed) is None
    assert argnames(re_signed) == ("a", "b")
    assert _plain_function_argnames(functools.partial(original, 1)) is None
    assert argnames(functools.partial(original, 1)) == ("b",)
