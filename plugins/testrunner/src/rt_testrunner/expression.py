"""The ``-k`` and ``-m`` expressions of pytest: ``not``, ``and``, ``or``, parentheses and names.

A name is matched by a callback: for ``-k`` a case-insensitive substring of a test's keywords (its name, its
class, module and folders, its marks), for ``-m`` a mark's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


class ExpressionError(ValueError):
    """A malformed expression, with the column where it went wrong."""


Matcher = Callable[[Callable[[str], bool]], bool]


def _either(a: Matcher, b: Matcher) -> Matcher:
    return lambda match: a(match) or b(match)


def _both(a: Matcher, b: Matcher) -> Matcher:
    return lambda match: a(match) and b(match)


def parse(text: str) -> Callable[[Callable[[str], bool]], bool]:
    """Compile ``text``; the result evaluates it with a name matcher."""
    tokens = [m.group(1) for m in _TOKEN.finditer(text)]
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ExpressionError(f"unexpected end of expression {text!r}")
        position += 1
        return tokens[position - 1]

    def expr() -> Matcher:
        left = term()
        while peek() == "or":
            take()
            right = term()
            left = _either(left, right)
        return left

    def term() -> Matcher:
        left = factor()
        while peek() == "and":
            take()
            right = factor()
            left = _both(left, right)
        return left

    def factor() -> Matcher:
        token = take()
        if token == "not":
            inner = factor()
            return lambda m: not inner(m)
        if token == "(":
            inner = expr()
            if take() != ")":
                raise ExpressionError(f"expected ')' in {text!r}")
            return inner
        if token in (")", "and", "or"):
            raise ExpressionError(f"unexpected {token!r} in {text!r}")
        return lambda m: m(token)

    if not tokens:
        return lambda m: True
    tree = expr()
    if position != len(tokens):
        raise ExpressionError(f"unexpected {tokens[position]!r} in {text!r}")
    return tree
