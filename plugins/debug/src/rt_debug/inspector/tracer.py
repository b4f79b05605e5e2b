"""Breakpoints, stepping and pauses of the main thread, on ``sys.settrace`` (Python 3.11 has no sys.monitoring).

Cost is the point of the design. With no breakpoint, no step and no "pause on all exceptions", no trace
function is installed at all: the program runs at full speed. Otherwise the global trace function only looks at
each call's file name and returns a local trace function for frames of files that hold a breakpoint (and, while
stepping, for the program's own frames): every other frame runs without line events.

Only the main thread is traced and paused; other threads keep running. While paused, the main thread waits for
the client's commands, handed over by the inspector thread through a queue, and runs them itself, so
expressions evaluate in the paused frame on the thread that owns it.

The inspector thread cannot install a trace function on the main thread; when the client sets a breakpoint
or asks for a pause while the program runs, it sends the main thread a signal whose handler installs it
("poke"). A blocking call that the signal interrupts is resumed, as PEP 475 says.
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import queue
import re
import signal
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any, Literal

import attrs

from rt_debug.callsite import CallSite, walk_stack
from rt_debug.inspector.remote import RemoteObjects, Scope
from rt_debug.inspector.scripts import Scripts, resolve_line
from rt_debug.origin import is_library

PauseState = Literal["none", "uncaught", "all"]
StepMode = Literal["into", "over", "out"]
GROUP = "backtrace"
_YIELD_VALUE = dis.opmap["YIELD_VALUE"]
_SUSPENDING = (
    inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
)
# a real-time signal nobody else uses (SIGUSR2 where there are none)
POKE_SIGNAL = int(signal.SIGRTMIN) + 5 if hasattr(signal, "SIGRTMIN") else int(signal.SIGUSR2)


@attrs.define
class Breakpoint:
    id: str
    filename: str | None  # None: a urlRegex that has matched no file yet
    line: int  # 1-based, resolved to a line with code
    condition: str = ""
    url_regex: str | None = None
    one_shot: bool = False  # continueToLocation


@attrs.define
class Step:
    mode: StepMode
    frame: types.FrameType | None  # the frame the step started in (over/out), None for into


@attrs.define
class PausedFrame:
    frame: types.FrameType
    locals: dict[str, Any]


class Tracer:
    """The debugger of the main thread. ``execute`` runs one client command on the main thread while paused."""

    def __init__(
        self, objects: RemoteObjects, scripts: Scripts, emit: Callable[[str, dict[str, Any]], None]
    ) -> None:
        self.objects = objects
        self.scripts = scripts
        self.emit = emit
        self.execute: Callable[[Any], None] = lambda command: None
        self.main_thread = threading.main_thread()
        self.lock = threading.RLock()
        self.breakpoints: dict[str, Breakpoint] = {}
        self._by_file: dict[str, dict[int, list[Breakpoint]]] = {}
        self.active = True
        self.pause_on_exceptions: PauseState = "none"
        self.step: Step | None = None
        self.pause_requested = False
        self.break_at_start: str | None = None  # the main script, for --inspect-brk
        self.attached = False
        self.paused = False
        self.paused_frames: list[PausedFrame] = []
        self.commands: queue.Queue[Any] = queue.Queue()
        self._resume = False
        self._user_code: dict[types.CodeType, bool] = {}
        # the exception paused on last, weakly: it is not paused on again as it unwinds through callers
        self._last_exception: Callable[[], BaseException | None] = lambda: None
        self._poke_installed = False

    # -- what is traced ------------------------------------------------------------------------------------

    def _is_user(self, code: types.CodeType) -> bool:
        known = self._user_code.get(code)
        if known is None:
            filename = code.co_filename
            known = self._user_code[code] = not filename.startswith("<") and not is_library(filename)
        return known

    def _needs_tracing(self) -> bool:
        return self.attached and bool(
            (self.active and self._by_file)
            or self.step is not None
            or self.pause_requested
            or self.break_at_start
            or self.pause_on_exceptions == "all"
        )

    def _trace_all_user(self) -> bool:
        return bool(
            (self.step is not None and self.step.mode == "into")
            or self.pause_requested
            or self.break_at_start
            or self.pause_on_exceptions == "all"
        )

    def _wants(self, frame: types.FrameType) -> bool:
        code = frame.f_code
        if self.active and code.co_filename in self._by_file:
            return True
        step = self.step
        if step is not None and step.frame is frame:
            return True
        return self._all_user and self._is_user(code)

    def _refresh(self) -> None:
        """Recompute the flags the trace functions read on every event (cheaper than working them out there)."""
        self._all_user = self._trace_all_user()
        self._quiet = self.active and not (self.step or self.pause_requested or self.break_at_start)
        self._traced_files = frozenset(self._by_file) if self.active else frozenset()

    _all_user = False
    _quiet = True
    _traced_files: frozenset[str] = frozenset()

    # The two trace functions run for every call (global) and every line of a traced frame (local): their
    # common case (a file without breakpoints; a line without one) is kept to a lookup or two.

    def _global(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename in self._traced_files:
            return self._local
        if (self._all_user or self.step is not None) and self._wants(frame):
            return self._local
        return None

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "line" and self._quiet:
            lines = self._by_file.get(frame.f_code.co_filename)
            if lines is None:
                if not self._wants(frame):
                    frame.f_trace = None  # this frame is done with: no more line events for it
                    return None
            elif frame.f_lineno not in lines:
                return self._local
        if self.paused:  # code the client evaluates while paused does not pause again
            return None
        if event == "line":
            self._on_line(frame)
        elif event == "return":
            self._on_return(frame)
        elif event == "exception":
            self._on_exception(frame, arg)
        if not self._wants(frame) and event == "line":
            frame.f_trace = None  # this frame is done with: no more line events for it
            return None
        return self._local

    def sync(self, frame: types.FrameType | None = None) -> None:
        """On the main thread: install or remove the trace function as breakpoints and modes now require.

        ``frame`` and its callers, already running, get the local trace function when they need it: a new
        breakpoint in a loop that is running now must stop it.
        """
        self._refresh()
        if not self._needs_tracing():
            sys.settrace(None)
            return
        sys.settrace(self._global)
        current = frame
        while current is not None:
            if self._wants(current):
                current.f_trace = self._local
                current.f_trace_lines = True
            current = current.f_back

    def install_poke(self) -> None:
        """On the main thread, at start: the signal handler through which the inspector thread pokes it."""
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(POKE_SIGNAL) in (signal.SIG_DFL, signal.SIG_IGN, None):
                signal.signal(POKE_SIGNAL, lambda signum, frame: self.sync(frame))
                self._poke_installed = True

    def poke(self) -> None:
        """From any thread: make the main thread re-sync its tracing now (or at its next resume if paused)."""
        if threading.current_thread() is self.main_thread:
            self.sync(sys._getframe(1))
            return
        if self.paused or not self._poke_installed or self.main_thread.ident is None:
            return
        with contextlib.suppress(OSError, ValueError, ProcessLookupError):
            signal.pthread_kill(self.main_thread.ident, POKE_SIGNAL)

    # -- breakpoints ---------------------------------------------------------------------------------------

    def _index(self) -> None:
        by_file: dict[str, dict[int, list[Breakpoint]]] = {}
        for bp in self.breakpoints.values():
            if bp.filename is not None:
                by_file.setdefault(bp.filename, {}).setdefault(bp.line, []).append(bp)
        self._by_file = by_file
        self._refresh()

    def add_breakpoint(self, bp: Breakpoint) -> None:
        with self.lock:
            self.breakpoints[bp.id] = bp
            self._index()
        self.poke()

    def remove_breakpoint(self, breakpoint_id: str) -> None:
        with self.lock:
            self.breakpoints.pop(breakpoint_id, None)
            self._index()
        self.poke()

    def resolve_new_script(self, filename: str, script_id: str) -> None:
        """A file was announced: breakpoints waiting on a urlRegex that matches it now bind to it."""
        resolved: list[Breakpoint] = []
        with self.lock:
            for bp in list(self.breakpoints.values()):
                if bp.filename is None and bp.url_regex and re.search(bp.url_regex, filename):
                    line = resolve_line(filename, bp.line)
                    if line is not None:
                        self.breakpoints[bp.id] = attrs.evolve(bp, filename=filename, line=line)
                        resolved.append(self.breakpoints[bp.id])
                elif bp.filename == filename:
                    resolved.append(bp)
            self._index()
        for bp in resolved:
            self.emit(
                "Debugger.breakpointResolved",
                {
                    "breakpointId": bp.id,
                    "location": {"scriptId": script_id, "lineNumber": bp.line - 1, "columnNumber": 0},
                },
            )
        if resolved:
            self.poke()

    def _breakpoint_hit(self, frame: types.FrameType) -> Breakpoint | None:
        lines = self._by_file.get(frame.f_code.co_filename)
        if not lines or not self.active:
            return None
        for bp in lines.get(frame.f_lineno, ()):
            if not bp.condition:
                return bp
            try:
                if eval(bp.condition, frame.f_globals, frame.f_locals):
                    return bp
            except Exception:  # noqa: BLE001, S112 - a condition that raises is false, as in V8
                continue
        return None

    # -- events --------------------------------------------------------------------------------------------

    def _on_line(self, frame: types.FrameType) -> None:
        bp = self._breakpoint_hit(frame)
        if bp is not None:
            if bp.one_shot:
                self.remove_breakpoint(bp.id)
                self._pause(frame, "other")
            else:
                self._pause(frame, "Breakpoint", {"breakpointId": bp.id})
            return
        code = frame.f_code
        if self.break_at_start is not None:
            if code.co_filename == self.break_at_start:
                self._pause(frame, "PauseOnNextStatement")
            return
        if self.pause_requested and self._is_user(code):
            self._pause(frame, "other")
            return
        step = self.step
        if step is None:
            return
        if (step.mode == "into" and self._is_user(code)) or (step.mode == "over" and step.frame is frame):
            self._pause(frame, "other")

    def _on_return(self, frame: types.FrameType) -> None:
        step = self.step
        if step is None or step.frame is not frame or step.mode == "into":
            return
        code = frame.f_code
        suspended = code.co_flags & _SUSPENDING and code.co_code[frame.f_lasti] == _YIELD_VALUE
        if suspended:
            return  # an await or a yield: the step goes on when this frame resumes
        caller = frame.f_back
        if caller is not None and self._is_user(caller.f_code):
            self.step = Step("over", caller)
            caller.f_trace = self._local
            caller.f_trace_lines = True
        else:  # returned into a library (an event loop, a callback): stop at the next line of the program
            self.step = Step("into", None)
        self._refresh()

    def _on_exception(
        self, frame: types.FrameType, arg: tuple[type[BaseException], BaseException, Any]
    ) -> None:
        error = arg[1]
        if (
            self.pause_on_exceptions != "all"
            or error is self._last_exception()
            or not self._is_user(frame.f_code)
        ):
            return
        if isinstance(error, (StopIteration, StopAsyncIteration, GeneratorExit)):
            return  # the machinery of iteration, not an error
        self._last_exception = _weak(error)
        self._pause(frame, "exception", self.objects.wrap(error, GROUP, with_preview=True))

    def uncaught(self, error: BaseException) -> None:
        """The program ended with ``error``: with pause on uncaught (or all) exceptions, pause where it was
        raised, its frames still holding their variables, before the report is printed."""
        if not self.attached or self.pause_on_exceptions == "none" or error is self._last_exception():
            return
        leaf = error
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        tb = leaf.__traceback__
        frames: list[types.FrameType] = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        user = [f for f in reversed(frames) if self._is_user(f.f_code)]
        if user:
            self._pause(
                user[0],
                "exception",
                self.objects.wrap(error, GROUP, with_preview=True),
                lines={id(f): t.tb_lineno for f, t in _frames_and_lines(leaf.__traceback__)},
            )

    # -- pausing -------------------------------------------------------------------------------------------

    def _call_frames(self, frame: types.FrameType, lines: dict[int, int] | None) -> list[dict[str, Any]]:
        self.paused_frames = []
        result = []
        for ordinal, current in enumerate(walk_stack(frame)):
            code = current.f_code
            line = (lines or {}).get(id(current), current.f_lineno)
            site = CallSite.from_frame(current)
            column = site.column - 1 if site.line == line else 0
            script_id = self.scripts.id_for(code.co_filename)
            location = {"scriptId": script_id, "lineNumber": max(line - 1, 0), "columnNumber": max(column, 0)}
            snapshot = dict(current.f_locals)
            self.paused_frames.append(PausedFrame(current, snapshot))
            is_module = code.co_name == "<module>"
            scopes = []
            if not is_module:
                scopes.append(
                    {
                        "object": self.objects.scope(Scope("Local", snapshot, code.co_qualname), GROUP),
                        "type": "local",
                        "name": code.co_qualname,
                        "empty": not snapshot,
                        "location": {
                            "scriptId": script_id,
                            "lineNumber": code.co_firstlineno - 1,
                            "columnNumber": 0,
                        },
                    }
                )
            globals_ = {k: v for k, v in current.f_globals.items() if k != "__builtins__"}
            scopes.append(
                {
                    "object": self.objects.scope(Scope("Global", globals_), GROUP),
                    "type": "global",
                    "empty": not globals_,
                }
            )
            this = (
                snapshot.get(code.co_varnames[0])
                if code.co_argcount and code.co_varnames[0] in ("self", "cls")
                else None
            )
            result.append(
                {
                    "callFrameId": f'{{"ordinal":{ordinal},"injectedScriptId":1}}',
                    "functionName": code.co_qualname,
                    "location": location,
                    "scopeChain": scopes,
                    "this": self.objects.wrap(this, GROUP, with_preview=True)
                    if this is not None
                    else {"type": "undefined"},
                    "isTailDeleted": False,
                }
            )
        return result

    def _pause(
        self,
        frame: types.FrameType,
        reason: str,
        data: dict[str, Any] | None = None,
        lines: dict[int, int] | None = None,
    ) -> None:
        if not self.attached:
            return
        self.step = None
        self.pause_requested = False
        self.break_at_start = None
        self._resume = False
        with self.lock:
            self.paused = True
        try:
            params: dict[str, Any] = {"callFrames": self._call_frames(frame, lines), "reason": reason}
            if data is not None:
                params["data"] = data
            self.emit("Debugger.paused", params)
            while not self._resume and self.attached:
                command = self.commands.get()
                if command is None:  # detached
                    break
                self.execute(command)
        finally:
            with self.lock:
                self.paused = False
                self.paused_frames = []
            self.objects.release_group(GROUP)
            if self.attached:
                self.emit("Debugger.resumed", {})
            self.sync(frame)

    def resume(self, step: Step | None = None) -> None:
        """Called on the main thread by a command run while paused: leave the pause, maybe stepping."""
        self.step = step
        self._resume = True
        self._refresh()

    def request_pause(self) -> None:
        self.pause_requested = True
        self._refresh()
        self.poke()

    def detach(self) -> None:
        """The client is gone: forget breakpoints and modes, let a paused program go on."""
        with self.lock:
            self.attached = False
            self.breakpoints.clear()
            self._index()
            self.step = None
            self.pause_requested = False
            self.break_at_start = None
            self.pause_on_exceptions = "none"
            if self.paused:
                self.commands.put(None)
        self.poke()


def _weak(error: BaseException) -> Callable[[], BaseException | None]:
    try:
        return weakref.ref(error)
    except TypeError:
        return lambda: error


def _frames_and_lines(tb: types.TracebackType | None) -> list[tuple[types.FrameType, types.TracebackType]]:
    pairs = []
    while tb is not None:
        pairs.append((tb.tb_frame, tb))
        tb = tb.tb_next
    return pairs
