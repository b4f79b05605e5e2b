"""The report of an error: a small source preview around the failing line, the message, the V8-style stack.

This is what ``rt run`` prints for an unhandled exception and what ``rt.inspect(exc)`` returns::

    3 | def divide(a, b):
    4 |     return a / b
                   ^^^^^
    ZeroDivisionError: division by zero
        at divide (/app/calc.py:4:12)
        at <module> (/app/calc.py:7:1)

Source lines come from :mod:`linecache` (which also knows code typed at the REPL and zipped modules);
highlighting is pygments', applied only when ``colors`` is asked for.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable

from rt_debug.callsite import CallSite, sites_from_traceback
from rt_debug.stack import stack_text

LINES_BEFORE = 2
MAX_CHAINED = 5  # __cause__/__context__ links followed at most: a chain is rarely longer, a cycle is possible
_CAUSE = "The above exception was the direct cause of:"
_CONTEXT = "While handling the above exception, another one was raised:"


def _highlighter(colors: bool) -> Callable[[str], str]:
    if not colors:
        return lambda text: text
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    lexer, formatter = PythonLexer(stripnl=False, ensurenl=False), TerminalFormatter()
    return lambda text: highlight(text, lexer, formatter)


def source_preview(site: CallSite, *, colors: bool = False) -> list[str]:
    """Up to ``LINES_BEFORE`` lines before the failing one, the failing line, and carets under the failing span.

    Empty when the source cannot be found (code from ``exec`` of a string, a deleted file).
    """
    filename = site.get_file_name()
    first = max(1, site.line - LINES_BEFORE)
    numbered = [(n, linecache.getline(filename, n).rstrip("\r\n")) for n in range(first, site.line + 1)]
    if not numbered[-1][1].strip():
        return []
    highlight = _highlighter(colors)
    width = len(str(site.line))
    gutter = width + 3  # "NN | "
    lines = [f"{str(n).rjust(width)} | {highlight(text)}" for n, text in numbered]
    failing = numbered[-1][1]
    end = site.end_column if site.end_line == site.line and site.end_column else len(failing) + 1
    span = max(1, end - site.column)
    lines.append(" " * (gutter + site.column - 1) + "^" * span)
    return lines


def _sites_for(error: BaseException, skip_frames: Callable[[list[CallSite]], list[CallSite]] | None) -> list[CallSite]:
    sites = sites_from_traceback(error.__traceback__, with_callers=skip_frames is None)
    return skip_frames(sites) if skip_frames is not None else sites


def _report_one(
    error: BaseException,
    *,
    colors: bool,
    skip_frames: Callable[[list[CallSite]], list[CallSite]] | None,
) -> list[str]:
    sites = _sites_for(error, skip_frames)
    lines = source_preview(sites[0], colors=colors) if sites else []
    lines.append(stack_text(error, sites))
    if isinstance(error, BaseExceptionGroup):
        for index, inner in enumerate(error.exceptions, 1):
            lines.append("")
            lines.append(f"[{index}/{len(error.exceptions)}] raised in a task of the group above:")
            lines.extend(_report_one(inner, colors=colors, skip_frames=skip_frames))
    return lines


def error_report(
    error: BaseException,
    *,
    colors: bool = False,
    skip_frames: Callable[[list[CallSite]], list[CallSite]] | None = None,
) -> str:
    """The full report of ``error``, causes first (as Python prints them), each with its own preview.

    ``skip_frames`` trims the call sites of each exception (``rt run`` drops its own and runpy's frames);
    without it the callers of the traceback's outermost frame are included, as in ``rt.Error.stack``.
    An exception group reports each exception of the group after its own stack (errors that escaped tasks).
    """
    chain: list[tuple[BaseException, str | None]] = []
    current: BaseException | None = error
    link: str | None = None
    seen: set[int] = set()
    while current is not None and id(current) not in seen and len(chain) < MAX_CHAINED:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    blocks: list[str] = []
    for exc, following in reversed(chain):
        blocks.extend(_report_one(exc, colors=colors, skip_frames=skip_frames))
        if following is not None:
            blocks.extend(["", following, ""])
    return "\n".join(blocks)
