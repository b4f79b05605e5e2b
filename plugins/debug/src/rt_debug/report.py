"""The report of an unhandled error: source preview, message, V8-style stack, and all Python's traceback tells.

It never shows less than ``python`` would: the ``__cause__``/``__context__`` chain (oldest first, as Python
prints it), exception notes (``add_note``), a SyntaxError's full path and position, and exception groups with
their members (nested groups too, each member with its own chain), up to Python's own width and depth limits.
Frames of libraries, event loops and rt itself are folded into a count (see :func:`rt_debug.stack.stack_text`).
"""

from __future__ import annotations

from collections.abc import Callable

from rt_debug.callsite import CallSite, sites_from_traceback
from rt_debug.preview import preview_site, source_preview, syntax_error_preview
from rt_debug.stack import stack_text

SkipFrames = Callable[[list[CallSite]], list[CallSite]]

CAUSE = "The above exception was the direct cause of:"
CONTEXT = "While handling the above exception, another one was raised:"
MAX_GROUP_WIDTH = 15  # as traceback.TracebackException's defaults
MAX_GROUP_DEPTH = 10
INDENT = "  "


def _chain(error: BaseException) -> list[tuple[BaseException, str | None]]:
    """``error`` and the exceptions it was raised from or while handling, newest first, with the link text.

    Every link is followed (a cycle is stopped by identity), as ``traceback`` does.
    """
    chain: list[tuple[BaseException, str | None]] = []
    current: BaseException | None = error
    link: str | None = None
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, CONTEXT
        else:
            current = None
    return chain


def _notes(error: BaseException) -> list[str]:
    notes = getattr(error, "__notes__", None)
    if notes is None:
        return []
    if not isinstance(notes, (list, tuple)):
        return [f"<__notes__ is a {type(notes).__name__}, not a sequence>"]
    lines: list[str] = []
    for note in notes:
        lines.extend((note if isinstance(note, str) else repr(note)).splitlines() or [""])
    return lines


def _report_one(
    error: BaseException, *, colors: bool, skip_frames: SkipFrames | None, depth: int
) -> list[str]:
    sites = sites_from_traceback(error.__traceback__, with_callers=skip_frames is None)
    if skip_frames is not None:
        sites = skip_frames(sites)
    origin = None
    if isinstance(error, SyntaxError):
        lines = syntax_error_preview(error, colors=colors)
        if error.filename:
            origin = f"{error.filename}:{error.lineno or 1}:{error.offset or 1}"
    else:
        site = preview_site(sites)
        lines = source_preview(site, colors=colors) if site is not None else []
    lines.extend(stack_text(error, sites, origin=origin).splitlines())
    lines.extend(_notes(error))
    if isinstance(error, BaseExceptionGroup):
        lines.extend(_members(error, colors=colors, skip_frames=skip_frames, depth=depth))
    return lines


def _members(
    group: BaseExceptionGroup[BaseException], *, colors: bool, skip_frames: SkipFrames | None, depth: int
) -> list[str]:
    """Each member's report under its group, indented one step per level of nesting."""
    if depth >= MAX_GROUP_DEPTH:
        return [f"{INDENT}... (exception groups nested more than {MAX_GROUP_DEPTH} deep)"]
    lines: list[str] = []
    total = len(group.exceptions)
    for index, inner in enumerate(group.exceptions[:MAX_GROUP_WIDTH], 1):
        lines.extend(["", f"{INDENT}[{index}/{total}] in the exception group above:"])
        inner_lines = _report_chain(inner, colors=colors, skip_frames=skip_frames, depth=depth + 1)
        lines.extend(f"{INDENT}{line}" if line else "" for line in inner_lines)
    if total > MAX_GROUP_WIDTH:
        more = total - MAX_GROUP_WIDTH
        lines.extend(["", f"{INDENT}... and {more} more exception{'s' if more > 1 else ''}"])
    return lines


def _report_chain(
    error: BaseException, *, colors: bool, skip_frames: SkipFrames | None, depth: int
) -> list[str]:
    blocks: list[str] = []
    for exc, following in reversed(_chain(error)):
        blocks.extend(_report_one(exc, colors=colors, skip_frames=skip_frames, depth=depth))
        if following is not None:
            blocks.extend(["", following, ""])
    return blocks


def error_report(error: BaseException, *, colors: bool = False, skip_frames: SkipFrames | None = None) -> str:
    """The full report of ``error``, causes first (as Python prints them), each with its own preview.

    ``skip_frames`` trims the call sites of each exception (``rt run`` drops its own and runpy's frames);
    without it the callers of the traceback's outermost frame are included, as in ``rt.Error.stack``.
    """
    return "\n".join(_report_chain(error, colors=colors, skip_frames=skip_frames, depth=0))
