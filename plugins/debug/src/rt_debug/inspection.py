"""``rt.inspect(value, *, colors=False, depth=2) -> str``.

Values are laid out by ``rich.pretty``, which already handles what a hand-written printer gets wrong: dicts,
lists, sets, dataclasses, attrs classes, named tuples, cycles (shown as ``...``), a depth limit and line
breaking by width. Exceptions get the error report (source preview, message, V8 stack). ``colors=True``
highlights with pygments; with ``colors=False`` the result never holds an escape code.
"""

from __future__ import annotations

from typing import Any

from rt_debug.preview import highlighter
from rt_debug.report import error_report

WIDTH = 80


def inspect(value: Any, *, colors: bool = False, depth: int | None = 2) -> str:
    """A readable, possibly multi-line string for ``value``, as Node's/the reference's ``inspect`` gives.

    ``depth`` counts nesting levels shown below the top one (``0``: only the top container's items;
    ``None``: no limit); deeper containers are shown as ``...``.
    """
    if not isinstance(colors, bool):
        raise TypeError(f"rt.inspect: colors must be True or False, got {colors!r}")
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool)):
        raise TypeError(f"rt.inspect: depth must be a non-negative int or None, got {type(depth).__name__}")
    if depth is not None and depth < 0:
        raise ValueError(f"rt.inspect: depth must be a non-negative int or None, got {depth!r}")
    if isinstance(value, BaseException):
        return error_report(value, colors=colors)
    from rich.pretty import pretty_repr

    text = pretty_repr(value, max_width=WIDTH, max_depth=None if depth is None else depth + 1)
    return highlighter(colors)(text)
