"""The pretty-printed form pytest diffs two containers in (``Full diff:`` at ``-v`` or on CI), so the diff
lines match pytest's.

Unlike :mod:`pprint`, every item of a container goes on a line of its own (never packed to fit a width),
indented 4 spaces per level with a trailing comma, dict items in insertion order, set items sorted; a
string longer than the line is split at word ends into adjacent literals; a dataclass with its generated
``__repr__`` is shown field by field. Everything else is its ``repr``. Output is produced in pieces so a
budget (lines, characters) stops the work early on a huge value.
"""

from __future__ import annotations

import collections
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

_WIDTH = 80
_INDENT = 4
_SCALARS = frozenset({str, bytes, bytearray, float, complex, bool, type(None), int})


def pformat_lines(value: Any, max_lines: int | None = None, max_chars: int | None = None) -> list[str]:
    """The lines of ``value`` pretty-printed; with a budget, formatting stops at the first piece reaching it
    (the result may overshoot it slightly)."""
    pieces: list[str] = []
    lines = chars = 0
    for piece in _format(value, 0, 0, set(), 0):
        pieces.append(piece)
        chars += len(piece)
        if "\n" in piece:
            lines += piece.count("\n")
        if (max_lines is not None and lines >= max_lines) or (max_chars is not None and chars >= max_chars):
            break
    return "".join(pieces).splitlines()


def _recursion(value: Any) -> str:
    return f"<Recursion on {type(value).__name__} with id={id(value)}>"


class SortKey:
    """Sorting values of mixed types as pprint does: by value where they compare, else by type name and id
    (also the order in which explain.py keeps a truncated dict's entries)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: SortKey) -> bool:
        try:
            return bool(self.value < other.value)
        except TypeError:
            return (str(type(self.value)), id(self.value)) < (str(type(other.value)), id(other.value))


def _format(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    identity = id(value)
    if identity in context:
        yield _recursion(value)
        return
    printer = _PRINTERS.get(type(value).__repr__)
    if printer is None and _generated_dataclass_repr(value):
        printer = _dataclass
    if printer is None:
        yield _flat(value, context, level)
        return
    context.add(identity)
    yield from printer(value, indent, allowance, context, level + 1)
    context.discard(identity)


def _generated_dataclass_repr(value: Any) -> bool:
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None or not dataclasses.is_dataclass(value) or isinstance(value, type):
        return False
    if not value.__dataclass_params__.repr:
        return False
    wrapped = getattr(value.__repr__, "__wrapped__", None)
    return wrapped is not None and "__create_fn__" in wrapped.__qualname__


def _items(values: Iterable[Any], indent: int, context: set[int], level: int) -> Iterator[str]:
    inner = indent + _INDENT
    any_item = False
    for item in values:
        any_item = True
        yield "\n" + " " * inner
        yield from _format(item, inner, 1, context, level)
        yield ","
    if any_item:
        yield "\n" + " " * indent


def _pairs(pairs: Iterable[tuple[Any, Any]], indent: int, context: set[int], level: int) -> Iterator[str]:
    inner = indent + _INDENT
    any_item = False
    for key, item in pairs:
        any_item = True
        yield "\n" + " " * inner
        yield _flat(key, context, level)
        yield ": "
        yield from _format(item, inner, 1, context, level)
        yield ","
    if any_item:
        yield "\n" + " " * indent


def _fields(pairs: Iterable[tuple[str, Any]], indent: int, context: set[int], level: int) -> Iterator[str]:
    inner = indent + _INDENT
    any_item = False
    for name, item in pairs:
        any_item = True
        yield "\n" + " " * inner
        yield name
        yield "="
        if id(item) in context:
            yield "..."  # as a dataclass's own repr shows a recursion
        else:
            yield from _format(item, inner + len(name) + 1, 1, context, level)
        yield ","
    if any_item:
        yield "\n" + " " * indent


Printer = Callable[[Any, int, int, set[int], int], Iterator[str]]


def _dataclass(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    import dataclasses

    yield type(value).__name__ + "("
    shown = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr]
    yield from _fields(shown, indent, context, level)
    yield ")"


def _dict(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield "{"
    yield from _pairs(value.items(), indent, context, level)
    yield "}"


def _dict_with_class(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    if not len(value):
        yield repr(value)
        return
    yield type(value).__name__ + "("
    yield from _dict(value, indent, allowance, context, level)
    yield ")"


def _list(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield "["
    yield from _items(value, indent, context, level)
    yield "]"


def _tuple(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield "("
    yield from _items(value, indent, context, level)
    yield ")"


def _set(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    if not len(value):
        yield repr(value)
        return
    opening, closing = ("{", "}") if type(value) is set else (type(value).__name__ + "({", "})")
    yield opening
    try:
        ordered = sorted(value)
    except TypeError:
        ordered = sorted(value, key=SortKey)
    yield from _items(ordered, indent, context, level)
    yield closing


def _str(value: str, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    """A string too long for its line is split at word ends into literals on lines of their own (in
    parentheses at the top level)."""
    if not len(value):
        yield repr(value)
        return
    chunks: list[str] = []
    lines = value.splitlines(keepends=True)
    if level == 1:
        indent += 1
        allowance += 1
    width_last = width = _WIDTH - indent
    text = ""
    for number, line in enumerate(lines):
        text = repr(line)
        if number == len(lines) - 1:
            width_last -= allowance
        if len(text) <= width_last:
            chunks.append(text)
            continue
        words = re.findall(r"\S*\s*", line)[:-1]
        room = width
        current = ""
        for position, word in enumerate(words):
            candidate = current + word
            if position == len(words) - 1 and number == len(lines) - 1:
                room -= allowance
            if len(repr(candidate)) > room:
                if current:
                    chunks.append(repr(current))
                current = word
            else:
                current = candidate
        if current:
            chunks.append(repr(current))
    if len(chunks) == 1:
        yield text
        return
    if level == 1:
        yield "("
    for number, chunk in enumerate(chunks):
        if number:
            yield "\n" + " " * indent
        yield chunk
    if level == 1:
        yield ")"


def _bytes_parts(value: bytes, width: int, allowance: int) -> Iterator[str]:
    current = b""
    last = len(value) // 4 * 4
    for start in range(0, len(value), 4):
        part = value[start : start + 4]
        candidate = current + part
        if start == last:
            width -= allowance
        if len(repr(candidate)) > width:
            if current:
                yield repr(current)
            current = part
        else:
            current = candidate
    if current:
        yield repr(current)


def _bytes(value: bytes, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    if len(value) <= 4:
        yield repr(value)
        return
    top = level == 1
    if top:
        indent += 1
        allowance += 1
        yield "("
    separator = ""
    for part in _bytes_parts(value, _WIDTH - indent, allowance):
        yield separator
        yield part
        separator = "\n" + " " * indent
    if top:
        yield ")"


def _bytearray(value: bytearray, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield "bytearray("
    yield from _bytes(bytes(value), indent + 10, allowance + 1, context, level + 1)
    yield ")"


def _mappingproxy(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield "mappingproxy("
    yield from _format(value.copy(), indent, allowance, context, level)
    yield ")"


def _namespace(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    name = "namespace" if type(value) is types.SimpleNamespace else type(value).__name__
    yield name + "("
    yield from _fields(value.__dict__.items(), indent, context, level)
    yield ")"


def _defaultdict(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield f"{type(value).__name__}({_flat(value.default_factory, context, level)}, "
    yield from _dict(value, indent, allowance, context, level)
    yield ")"


def _counter(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield type(value).__name__ + "("
    if value:
        yield "{"
        yield from _pairs(value.most_common(), indent, context, level)
        yield "}"
    yield ")"


def _chainmap(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    if not len(value.maps) or (len(value.maps) == 1 and not len(value.maps[0])):
        yield repr(value)
        return
    yield type(value).__name__ + "("
    yield from _items(value.maps, indent, context, level)
    yield ")"


def _deque(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield type(value).__name__ + "("
    if value.maxlen is not None:
        yield f"maxlen={value.maxlen}, "
    yield "["
    yield from _items(value, indent, context, level)
    yield "])"


def _wrapped_data(value: Any, indent: int, allowance: int, context: set[int], level: int) -> Iterator[str]:
    yield from _format(value.data, indent, allowance, context, level - 1)


_PRINTERS: dict[Callable[..., str], Printer] = {
    dict.__repr__: _dict,
    collections.OrderedDict.__repr__: _dict_with_class,
    list.__repr__: _list,
    tuple.__repr__: _tuple,
    set.__repr__: _set,
    frozenset.__repr__: _set,
    str.__repr__: _str,
    bytes.__repr__: _bytes,
    bytearray.__repr__: _bytearray,
    types.MappingProxyType.__repr__: _mappingproxy,
    types.SimpleNamespace.__repr__: _namespace,
    collections.defaultdict.__repr__: _defaultdict,
    collections.Counter.__repr__: _counter,
    collections.ChainMap.__repr__: _chainmap,
    collections.deque.__repr__: _deque,
    collections.UserDict.__repr__: _wrapped_data,
    collections.UserList.__repr__: _wrapped_data,
    collections.UserString.__repr__: _wrapped_data,
}


def _flat(value: Any, context: set[int], level: int) -> str:
    """The one-line form of a dict key or of a value with no printer: ``repr``, with plain dicts, lists and
    tuples rebuilt item by item so a recursive one is named rather than repeated."""
    kind = type(value)
    if kind in _SCALARS:
        return repr(value)
    own_repr = getattr(kind, "__repr__", None)
    if issubclass(kind, dict) and own_repr is dict.__repr__:
        if not value:
            return "{}"
        if id(value) in context:
            return _recursion(value)
        context.add(id(value))
        parts = [f"{_flat(k, context, level + 1)}: {_flat(v, context, level + 1)}" for k, v in value.items()]
        context.discard(id(value))
        return "{" + ", ".join(parts) + "}"
    if (issubclass(kind, list) and own_repr is list.__repr__) or (
        issubclass(kind, tuple) and own_repr is tuple.__repr__
    ):
        if issubclass(kind, list):
            if not value:
                return "[]"
            shape = "[%s]"
        elif len(value) == 1:
            shape = "(%s,)"
        else:
            if not value:
                return "()"
            shape = "(%s)"
        if id(value) in context:
            return _recursion(value)
        context.add(id(value))
        parts = [_flat(item, context, level + 1) for item in value]
        context.discard(id(value))
        return shape % ", ".join(parts)
    return repr(value)
