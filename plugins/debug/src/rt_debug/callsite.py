"""``rt.CallSite``: one frame of a captured stack, with the methods of V8's CallSite API.

A CallSite keeps no frame object: a frame pins every local variable of its function (and, in CPython 3.11,
the function itself), so holding frames would keep whole object graphs alive for as long as an error's stack is.
It keeps the code object (immutable, cheap), the position, and *weak* references to the receiver (``self``/``cls``)
and to the function, so that ``get_this()``/``get_function()`` return ``None`` once those are gone, as V8's
call sites return ``undefined`` for a collected function.
"""

from __future__ import annotations

import gc
import inspect
import itertools
import linecache
import runpy
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import attrs

_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_RECEIVER_NAMES = ("self", "cls")
_CONSTRUCTOR_NAMES = ("__init__", "__new__")
_EVAL_FILENAMES = ("<string>", "<stdin>")


def _weak_or_strong(value: Any) -> Callable[[], Any]:
    """A zero-argument getter: a weak reference when the object allows one, else the object itself.

    Objects that refuse weak references (ints, strings, tuples) are small and immortal enough that keeping
    them is harmless, and dropping them would make ``get_this()`` useless for such receivers.
    """
    if value is None:
        return lambda: None
    try:
        return weakref.ref(value)
    except TypeError:
        return lambda: value


@attrs.frozen
class _Span:
    """Where an instruction's source is, 1-based; the end column is exclusive and may be unknown."""

    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


def _span(code: types.CodeType, lasti: int, fallback_line: int | None) -> _Span:
    """The source span of the instruction at byte offset ``lasti``, from the code's position table."""
    if lasti >= 0:
        # one entry per 2-byte code unit
        entry = next(itertools.islice(code.co_positions(), lasti // 2, None), (None, None, None, None))
        line, end_line, column, end_column = entry
        if line is not None:
            start = _characters(code.co_filename, line, column or 0)
            end = (
                None
                if end_column is None or end_line is None
                else _characters(code.co_filename, end_line, end_column)
            )
            return _Span(line, start + 1, end_line, None if end is None else end + 1)
    return _Span(fallback_line or code.co_firstlineno, 1)


def _characters(filename: str, line: int, byte_offset: int) -> int:
    """Position tables count UTF-8 bytes; people (and carets) count characters: convert, as traceback does."""
    text = linecache.getline(filename, line)
    if not text or text.isascii():
        return byte_offset
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))


def _receiver(frame: types.FrameType, code: types.CodeType) -> Any:
    """The ``this`` of a Python frame: its first argument when that is named ``self`` or ``cls``."""
    if code.co_argcount and code.co_varnames[0] in _RECEIVER_NAMES:
        return frame.f_locals.get(code.co_varnames[0])
    return None


def _find_function(code: types.CodeType, this: Any, globals_: dict[str, Any]) -> Any:
    """The function object running ``code``: cheap lookups first (module global, attribute of ``this``)."""
    candidates: list[Any] = [globals_.get(code.co_name)]
    if this is not None:
        owner = this if isinstance(this, type) else type(this)
        for klass in getattr(owner, "__mro__", ()):
            candidates.append(vars(klass).get(code.co_name))
    for candidate in candidates:
        function = _unwrap(candidate)
        if function is not None and getattr(function, "__code__", None) is code:
            return function
    return None


def _unwrap(candidate: Any) -> Any:
    if isinstance(candidate, (staticmethod, classmethod)):
        candidate = candidate.__func__
    if isinstance(candidate, property):
        candidate = candidate.fget
    try:
        return inspect.unwrap(candidate) if callable(candidate) else None
    except ValueError:  # a __wrapped__ cycle: not ours to fix
        return candidate


@attrs.frozen(eq=False)
class CallSite:
    """One frame of a stack, as given to ``rt.Error.prepare_stack_trace(err, call_sites)``."""

    code: types.CodeType
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    _this: Callable[[], Any] = attrs.field(default=lambda: None, repr=False)
    _function: Callable[[], Any] = attrs.field(default=lambda: None, repr=False)

    @classmethod
    def from_frame(
        cls, frame: types.FrameType, lasti: int | None = None, lineno: int | None = None
    ) -> CallSite:
        """Describe ``frame`` at instruction ``lasti`` (a traceback's ``tb_lasti``; default: where it is now)."""
        code = frame.f_code
        offset = frame.f_lasti if lasti is None else lasti
        span = _span(code, offset, lineno if lineno is not None else frame.f_lineno)
        this = _receiver(frame, code)
        function = _find_function(code, this, frame.f_globals)
        return cls(
            code,
            span.line,
            span.column,
            span.end_line,
            span.end_column,
            _weak_or_strong(this),
            _weak_or_strong(function),
        )

    # -- the V8 CallSite methods ---------------------------------------------------------------------------

    def get_this(self) -> Any:
        """The receiver (``self``/``cls``) of a method call; ``None`` for a plain function or once it is gone."""
        return self._this()

    def get_type_name(self) -> str | None:
        """The class name of ``this`` (for ``cls`` receivers, the class itself); ``None`` without a receiver."""
        this = self.get_this()
        if this is None:
            return None
        return this.__name__ if isinstance(this, type) else type(this).__name__

    def get_function(self) -> Any:
        """The function object, or ``None`` once it has been garbage collected (as V8 gives ``undefined``).

        Falls back to asking the garbage collector which live function owns this code: slow, so it runs only
        here, on demand, never while a stack is captured.
        """
        function = self._function()
        if function is not None:
            return function
        for referrer in gc.get_referrers(self.code):
            if isinstance(referrer, types.FunctionType) and referrer.__code__ is self.code:
                return referrer
        return None

    def get_function_name(self) -> str | None:
        """The function's name; ``None`` for module-level code (V8 gives ``null`` for top-level code)."""
        return None if self.code.co_name == "<module>" else self.code.co_name

    def get_method_name(self) -> str | None:
        """The name the function was called by on ``this``; ``None`` for a plain function."""
        return self.code.co_name if self.get_this() is not None else None

    def get_file_name(self) -> str:
        return self.code.co_filename

    def get_line_number(self) -> int:
        """1-based line number."""
        return self.line

    def get_column_number(self) -> int:
        """1-based column, from the code object's position table (``co_positions()``)."""
        return self.column

    def get_eval_origin(self) -> None:
        """Always ``None``: the spec leaves it ``undefined``."""
        return

    def get_script_name_or_source_url(self) -> str:
        return self.code.co_filename

    def is_toplevel(self) -> bool:
        """True when there is no receiver: module code or a plain function call (V8: ``this`` is global)."""
        return self.get_this() is None

    def is_eval(self) -> bool:
        """True for code compiled from a string (``exec``/``eval``/``compile`` without a file name)."""
        return self.code.co_filename in _EVAL_FILENAMES

    def is_native(self) -> bool:
        """Always False: C functions have no Python frame, so they never appear in a stack."""
        return False

    def is_constructor(self) -> bool:
        """True for ``__init__``/``__new__``, Python's constructors."""
        return self.code.co_name in _CONSTRUCTOR_NAMES

    def is_async(self) -> bool:
        """True for ``async def`` functions and async generators."""
        return bool(self.code.co_flags & _ASYNC_FLAGS)

    def is_promise_all(self) -> bool:
        """Not implemented in the reference runtime either: always False."""
        return False

    def get_promise_index(self) -> None:
        """Not implemented in the reference runtime either: always ``None``."""
        return

    def display_name(self) -> str | None:
        """The name V8 prints: qualified (``Class.method``), ``new Class`` for constructors, ``async`` prefix."""
        if self.code.co_name == "<module>":
            return None
        qualname = self.code.co_qualname
        if self.is_constructor():
            owner = qualname.rsplit(".", 1)[0] if "." in qualname else qualname
            return f"new {owner}"
        return f"async {qualname}" if self.is_async() else qualname

    def location(self) -> str:
        return f"{self.get_file_name()}:{self.line}:{self.column}"

    def __str__(self) -> str:
        name = self.display_name()
        return f"{name} ({self.location()})" if name else self.location()


# `python -m mod` and `rt run folder/` run the program's module code from runpy's _run_code, `rt run script.py`
# from rt_debug.runner.exec_main: what calls those is the launcher's, not the program's, so a stack ends there.
_launcher_codes: set[types.CodeType] = {getattr(runpy, "_run_code").__code__}  # noqa: B009 - private, stable


def add_launcher(code: types.CodeType) -> None:
    """Mark ``code`` as a launcher: stacks stop at its frame (rt run registers its own)."""
    _launcher_codes.add(code)


def walk_stack(frame: types.FrameType | None) -> Iterator[types.FrameType]:
    """``frame`` and its callers, innermost first, up to the program's module code (not its launcher)."""
    while frame is not None and frame.f_code not in _launcher_codes:
        yield frame
        frame = frame.f_back


def sites_from_traceback(tb: types.TracebackType | None, *, with_callers: bool = True) -> list[CallSite]:
    """Call sites of an exception, innermost first, as V8 orders a stack.

    A Python traceback only covers the frames the exception passed through; with ``with_callers`` the callers
    of its outermost frame are added, so the stack is the whole call stack at the raise, as in V8.
    """
    entries: list[types.TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    sites = [CallSite.from_frame(e.tb_frame, e.tb_lasti, e.tb_lineno) for e in reversed(entries)]
    if with_callers and entries:
        sites.extend(CallSite.from_frame(f) for f in walk_stack(entries[0].tb_frame.f_back))
    return sites
