"""The source preview of an error report: a few lines around the failing one, carets under the expression.

The report (see :mod:`rt_debug.report`) is what ``rt run`` prints for an unhandled exception and what
``rt.inspect(exc)`` returns::

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

from rt_debug.callsite import CallSite
from rt_debug.origin import is_library

LINES_BEFORE = 2


def highlighter(colors: bool) -> Callable[[str], str]:
    """Python syntax highlighting for a terminal (pygments), or the identity when ``colors`` is False."""
    if not colors:
        return lambda text: text
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.formatters import TerminalFormatter  # type: ignore[import-untyped]
    from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

    lexer, formatter = PythonLexer(stripnl=False, ensurenl=False), TerminalFormatter()
    return lambda text: str(highlight(text, lexer, formatter))


def preview_site(sites: list[CallSite]) -> CallSite | None:
    """The frame worth showing: the innermost one in the user's code, else the innermost of all.

    An error raised inside a library (anyio's task group re-raising, json parsing bad input) is best shown
    where the user's code called into it.
    """
    return next((s for s in sites if not is_library(s.get_file_name())), sites[0] if sites else None)


def source_lines(
    filename: str, line: int, column: int, end_column: int | None = None, *, colors: bool = False
) -> list[str]:
    """Up to ``LINES_BEFORE`` lines before ``line``, that line, and carets under ``column``..``end_column``.

    Lines and columns are 1-based; ``end_column`` is exclusive (to the end of the line when unknown).
    Empty when the source cannot be found (code from ``exec`` of a string, a deleted file).
    """
    first = max(1, line - LINES_BEFORE)
    numbered = [(n, linecache.getline(filename, n).rstrip("\r\n")) for n in range(first, line + 1)]
    if not numbered[-1][1].strip():
        return []
    while not numbered[0][1].strip():  # blank lines before the context say nothing
        numbered.pop(0)
    highlight = highlighter(colors)
    width = len(str(line))
    gutter = width + 3  # "NN | "
    lines = [f"{str(n).rjust(width)} | {highlight(text)}".rstrip() for n, text in numbered]
    end = end_column if end_column and end_column > column else len(numbered[-1][1]) + 1
    lines.append(" " * (gutter + column - 1) + "^" * max(1, end - column))
    return lines


def source_preview(site: CallSite, *, colors: bool = False) -> list[str]:
    """The preview of one call site (see :func:`source_lines`)."""
    end = site.end_column if site.end_line == site.line else None
    return source_lines(site.get_file_name(), site.line, site.column, end, colors=colors)


def syntax_error_preview(error: SyntaxError, *, colors: bool = False) -> list[str]:
    """A SyntaxError happens before any frame of the file runs: its position is on the error itself.

    When the file cannot be read (code compiled from a string), the line the error carries is shown.
    """
    if not error.lineno:
        return []
    end = error.end_offset if error.end_lineno in (None, error.lineno) else None
    column = error.offset or 1
    lines = source_lines(error.filename, error.lineno, column, end, colors=colors) if error.filename else []
    if lines or not error.text:
        return lines
    text = error.text.rstrip("\r\n")
    prefix = f"{error.lineno} | "
    stop = end if end and end > column else len(text) + 1
    return [
        prefix + highlighter(colors)(text),
        " " * (len(prefix) + column - 1) + "^" * max(1, stop - column),
    ]
