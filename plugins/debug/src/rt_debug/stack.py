"""``rt.Error``: V8's stack-trace API (``stack``, ``capture_stack_trace``, ``stack_trace_limit``,
``prepare_stack_trace``) over Python exceptions and frames.

V8 formats ``error.stack`` lazily, on first read, through ``Error.prepareStackTrace`` when set, and keeps the
result. Python has no hook at ``raise`` time, so an exception's call sites are taken from its traceback on the
first ``Error.stack(err)`` and kept with the result, on the exception itself; ``capture_stack_trace`` takes them
from the live stack at once. The cut (``start_fn``) and the limit apply when the call sites are taken.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs

from rt_debug.callsite import CallSite, sites_from_traceback, walk_stack
from rt_debug.origin import is_library, package_of

PrepareStackTrace = Callable[[Any, list[CallSite]], Any]
_RECORD_ATTRIBUTE = "__rt_stack_record__"
_UNSET = object()


@attrs.define
class StackRecord:
    """What is kept on an error between the capture of its call sites and the first read of its stack."""

    header: str
    call_sites: list[CallSite]
    formatted: Any = _UNSET


def header_of(error: Any) -> str:
    """V8's first stack line: ``Name: message``, or the name alone when the message is empty."""
    if isinstance(error, SyntaxError) and error.msg is not None:
        # str() of a SyntaxError appends "(basename, line N)": the report gives the full path in its stack
        name, message = type(error).__name__, str(error.msg)
    elif isinstance(error, BaseException):
        name = type(error).__name__
        try:
            message = str(error)
        except Exception:  # noqa: BLE001 - as traceback does: a broken __str__ must not hide the error
            message = "<exception str() failed>"
    else:
        name = str(getattr(error, "name", "") or "Error")
        message = str(getattr(error, "message", "") or "")
    return f"{name}: {message}" if message else name


def format_v8(header: str, call_sites: Sequence[CallSite]) -> str:
    """The default stack text: the header, then one ``    at name (file:line:column)`` line per call site."""
    return "\n".join([header, *(f"    at {site}" for site in call_sites)])


def _code_of(function: Any) -> types.CodeType | None:
    """The code object a ``start_fn`` runs, seeing through bound methods, static/class methods and wrappers."""
    if isinstance(function, (staticmethod, classmethod)):
        function = function.__func__
    function = getattr(function, "__func__", function)
    try:
        function = inspect.unwrap(function)
    except ValueError:
        pass
    return getattr(function, "__code__", None)


def _limit(call_sites: list[CallSite]) -> list[CallSite]:
    limit = Error.stack_trace_limit
    if not isinstance(limit, int) or isinstance(limit, bool):  # V8 takes no stack for a non-number limit
        return []
    return call_sites[: max(limit, 0)]


def _store(target: Any, record: StackRecord) -> None:
    try:
        setattr(target, _RECORD_ATTRIBUTE, record)
    except (AttributeError, TypeError):
        raise TypeError(
            f"rt.Error.capture_stack_trace needs an object that accepts attributes, got {type(target).__name__}"
        ) from None


class Error:
    """The stack-trace API of V8's ``Error`` constructor, as a namespace of class-level settings and functions.

    ``Error.stack_trace_limit`` (default 10) caps the frames kept; ``Error.prepare_stack_trace`` is a settable
    global hook ``(error, call_sites) -> object`` whose return value, whatever its type, becomes the stack.
    """

    stack_trace_limit: ClassVar[int] = 10
    prepare_stack_trace: ClassVar[PrepareStackTrace | None] = None

    def __init__(self) -> None:
        raise TypeError(
            "rt.Error is a namespace (Error.stack, Error.capture_stack_trace ...); raise an exception"
        )

    @staticmethod
    def stack(error: Any) -> Any:
        """The stack of ``error``: V8-formatted text, or what ``prepare_stack_trace`` returned for it.

        Formatted once and kept, as V8 does. If ``prepare_stack_trace`` raises, so does this call (and the next
        one tries again). An exception never raised yet has no traceback, so its stack is its header line.
        """
        record = getattr(error, _RECORD_ATTRIBUTE, None)
        if not isinstance(record, StackRecord):
            if not isinstance(error, BaseException):
                raise TypeError(
                    f"rt.Error.stack expects an exception or an object given to capture_stack_trace, "
                    f"got {type(error).__name__}"
                )
            record = StackRecord(header_of(error), _limit(sites_from_traceback(error.__traceback__)))
            _store(error, record)
        if record.formatted is _UNSET:
            record.formatted = _format(error, record)
        return record.formatted

    @staticmethod
    def capture_stack_trace(target: Any, start_fn: Callable[..., Any] | None = None) -> None:
        """Set ``target.stack`` to the stack at this call, leaving out ``start_fn``'s call and all above it.

        ``start_fn`` not on the stack leaves just the header line. A ``prepare_stack_trace`` that raises leaves
        ``target.stack`` unset; ``Error.stack(target)`` then raises its error.
        """
        caller = sys._getframe(1)
        frames = list(walk_stack(caller))
        if start_fn is not None:
            code = _code_of(start_fn)
            cut = next((i for i, frame in enumerate(frames) if frame.f_code is code), None)
            frames = [] if cut is None else frames[cut + 1 :]
        record = StackRecord(header_of(target), _limit([CallSite.from_frame(frame) for frame in frames]))
        _store(target, record)
        del frames, caller
        try:
            stack = Error.stack(target)
        except Exception:  # noqa: BLE001 - the hook's error is raised again when the stack is read
            try:
                del target.stack  # a stack from an earlier capture must not pass for this one
            except (AttributeError, TypeError):
                pass
            return
        try:
            target.stack = stack
        except (AttributeError, TypeError):
            pass  # the record is kept: Error.stack(target) still answers


def _format(error: Any, record: StackRecord) -> Any:
    hook = Error.prepare_stack_trace
    if hook is None:
        return format_v8(record.header, record.call_sites)
    return hook(error, list(record.call_sites))


def _folded_lines(call_sites: Sequence[CallSite], limit: int) -> list[str]:
    """``    at`` lines of the program's frames, each run of library (or rt) frames folded into one count line.

    The innermost frame is always shown, library or not: it is where the error was raised. Only shown
    frames count against ``limit``; frames past it are summed up in a last line, so none vanishes unsaid.
    """
    lines: list[str] = []
    folded: list[str] = []
    shown = 0

    def flush() -> None:
        if folded:
            packages = ", ".join(dict.fromkeys(package_of(name) for name in folded))
            count = len(folded)
            lines.append(f"    ... {count} frame{'s' if count > 1 else ''} in {packages}")
            folded.clear()

    for index, site in enumerate(call_sites):
        if shown >= limit:
            flush()
            rest = len(call_sites) - index
            lines.append(f"    ... {rest} more frame{'s' if rest > 1 else ''}")
            break
        if index and is_library(site.get_file_name()):
            folded.append(site.get_file_name())
            continue
        flush()
        lines.append(f"    at {site}")
        shown += 1
    flush()
    return lines


def stack_text(error: BaseException, call_sites: list[CallSite], *, origin: str | None = None) -> str:
    """The stack printed for an unhandled exception: through the hook when set, else V8 text with folding.

    ``origin`` is a ``file:line:column`` shown as the first frame (a SyntaxError's position, which no frame
    has). The hook's result is shown with ``str``; if the hook itself fails, the V8 text is printed instead,
    so a broken hook never hides the original error.
    """
    header = header_of(error)
    if Error.prepare_stack_trace is not None:
        with contextlib.suppress(Exception):  # a broken user hook must not hide the error being reported
            return str(_format(error, StackRecord(header, _limit(call_sites))))
    limit = Error.stack_trace_limit
    limit = max(limit, 0) if isinstance(limit, int) and not isinstance(limit, bool) else 0
    first = [f"    at {origin}"] if origin else []
    return "\n".join([header, *first, *_folded_lines(call_sites, limit)])
