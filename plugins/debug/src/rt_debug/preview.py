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
import sysconfig
from collections.abc import Callable

from rt_debug.callsite import CallSite, sites_from_traceback
from rt_debug.stack import stack_text

LINES_BEFORE = 2
MAX_CHAINED = 5  # __cause__/__context__ links followed at most: a chain is rarely longer, a cycle is possible
_CAUSE = "The above exception was the direct cause of:"
_CONTEXT = "While handling the above exception, another one was raised:"


def highlighter(colors: bool) -> Callable[[str], str]:
    """Python syntax highlighting for a terminal (pygments), or the identity when ``colors`` is False."""
    if not colors:
        return lambda text: text
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.formatters import TerminalFormatter  # type: ignore[import-untyped]
    from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

    lexer, formatter = PythonLexer(stripnl=False, ensurenl=False), TerminalFormatter()
    return lambda text: str(highlight(text, lexer, formatter))


_LIBRARY_PATHS = tuple(sorted({sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")}))


def _is_library(filename: str) -> bool:
    return filename.startswith(_LIBRARY_PATHS) or filename.startswith("<frozen ")


def preview_site(sites: list[CallSite]) -> CallSite | None:
    """The frame worth showing: the innermost one in the user's code, else the innermost of all.

    An error raised inside a library (anyio's task group re-raising, json parsing bad input) is best shown
    where the user's code called into it.
    """
    return next((s for s in sites if not _is_library(s.get_file_name())), sites[0] if sites else None)


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


def _syntax_error_preview(error: SyntaxError, colors: bool) -> list[str]:
    """A SyntaxError happens before any frame of the file runs: its position is on the error itself."""
    if not error.filename or not error.lineno:
        return []
    end = error.end_offset if error.end_lineno in (None, error.lineno) else None
    return source_lines(error.filename, error.lineno, error.offset or 1, end, colors=colors)


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
    if isinstance(error, SyntaxError):
        lines = _syntax_error_preview(error, colors)
    else:
        site = preview_site(sites)
        lines = source_preview(site, colors=colors) if site is not None else []
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
