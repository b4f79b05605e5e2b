"""One client's session: the protocol's methods, each a small function of its ``params``.

Messages arrive on the inspector thread. While the program runs they are answered there; while it is paused
they are queued for the main thread (see :mod:`.tracer`), which answers them between its own steps, so
``evaluateOnCallFrame`` runs in the paused frame's thread. Every reply carries the request's ``id``; a method
this session does not know, or bad params, get a protocol error (never an exception out of the server).
"""

from __future__ import annotations

import json
import linecache
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

from rt_debug.inspector.remote import ObjectNotFound, RemoteObjects
from rt_debug.inspector.scripts import Scripts, loaded_program_files, path_of_url, resolve_line
from rt_debug.inspector.tracer import Breakpoint, Step, Tracer

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
PARSE_ERROR = -32700
SERVER_ERROR = -32000
MAX_MESSAGE = 1024 * 1024


class ProtocolError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _error(code: int, message: str, request_id: Any) -> dict[str, Any]:
    return {
        "error": {"code": code, "message": message, "data": [{"code": code, "message": message}]},
        "id": request_id,
    }


def _require(params: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = params.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: '{name}' is missing or of the wrong type")
    return value


class Session:
    """The protocol state of one connected client; ``send`` delivers a JSON-ready dict to it (any thread)."""

    def __init__(
        self, send: Callable[[dict[str, Any]], None], *, main_script: str, initialized: threading.Event
    ) -> None:
        self.send = send
        self.objects = RemoteObjects()
        self.scripts = Scripts(lambda params: self.event("Debugger.scriptParsed", params))
        self.tracer = Tracer(self.objects, self.scripts, self.event)
        self.tracer.execute = self.execute
        self.scripts.on_new.append(self.tracer.resolve_new_script)
        self.main_script = main_script
        self.initialized = initialized
        self.console_enabled = False
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "Inspector.enable": self._empty,
            "Inspector.disable": self._empty,
            "Inspector.initialized": self._initialized,
            "Runtime.enable": self._runtime_enable,
            "Runtime.disable": self._empty,
            "Runtime.evaluate": self._evaluate,
            # what CDP clients (Chrome DevTools, VS Code) send instead of Inspector.initialized
            "Runtime.runIfWaitingForDebugger": self._initialized,
            "Runtime.getProperties": self._get_properties,
            "Runtime.callFunctionOn": self._call_function_on,
            "Runtime.releaseObject": self._release_object,
            "Runtime.releaseObjectGroup": self._release_group,
            "Console.enable": self._console_enable,
            "Console.disable": self._console_disable,
            "Debugger.enable": self._debugger_enable,
            "Debugger.disable": self._debugger_disable,
            "Debugger.setBreakpointsActive": self._set_breakpoints_active,
            "Debugger.setBreakpointByUrl": self._set_breakpoint_by_url,
            "Debugger.setBreakpoint": self._set_breakpoint,
            "Debugger.removeBreakpoint": self._remove_breakpoint,
            "Debugger.getScriptSource": self._get_script_source,
            "Debugger.pause": self._pause,
            "Debugger.resume": self._resume,
            "Debugger.continueToLocation": self._continue_to_location,
            "Debugger.stepNext": self._step_over,
            "Debugger.stepOver": self._step_over,
            "Debugger.stepInto": self._step_into,
            "Debugger.stepOut": self._step_out,
            "Debugger.evaluateOnCallFrame": self._evaluate_on_call_frame,
            "Debugger.setPauseOnExceptions": self._set_pause_on_exceptions,
        }

    # -- transport side ------------------------------------------------------------------------------------

    def event(self, method: str, params: dict[str, Any]) -> None:
        """An event; one without params has no ``params`` key, as the reference sends ``Debugger.resumed``."""
        self.send({"method": method, "params": params} if params else {"method": method})

    def handle(self, text: str | bytes) -> None:
        """One message from the client (inspector thread): answer it now, or queue it for the paused thread."""
        if len(text) > MAX_MESSAGE:
            self.send(_error(PARSE_ERROR, "message too large", None))
            return
        try:
            message = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            self.send(_error(PARSE_ERROR, "Parse error: the message is not JSON", None))
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self.send(_error(-32600, "Invalid request: an object with 'id' and 'method' is expected", None))
            return
        with self.tracer.lock:
            if self.tracer.paused:
                self.tracer.commands.put(message)
                return
        self.execute(message)

    def execute(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        method = message["method"]
        params = message.get("params") or {}
        handler = self._methods.get(method)
        if handler is None:
            self.send(_error(METHOD_NOT_FOUND, f"'{method}' was not found", request_id))
            return
        if not isinstance(params, dict):
            self.send(_error(INVALID_PARAMS, "Invalid params: 'params' must be an object", request_id))
            return
        try:
            result = handler(params)
        except ProtocolError as exc:
            self.send(_error(exc.code, exc.message, request_id))
            return
        except Exception as exc:  # noqa: BLE001 - a bug in a handler answers an error, never kills the session
            self.send(_error(SERVER_ERROR, f"Internal error: {type(exc).__name__}: {exc}", request_id))
            return
        self.send({"result": result, "id": request_id})

    def closed(self) -> None:
        """The client is gone: the next one starts afresh (no breakpoints, objects or announced scripts)."""
        self.tracer.detach()
        self.objects.release_all()
        self.scripts.enabled = False
        self.console_enabled = False

    # -- Inspector, Runtime, Console -----------------------------------------------------------------------

    def _empty(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _initialized(self, params: dict[str, Any]) -> dict[str, Any]:
        self.initialized.set()
        return {}

    def _runtime_enable(self, params: dict[str, Any]) -> dict[str, Any]:
        self.event("Runtime.executionContextCreated", {"context": {"id": 1, "origin": "", "name": "main"}})
        return {}

    def _console_enable(self, params: dict[str, Any]) -> dict[str, Any]:
        self.console_enabled = True
        return {}

    def _console_disable(self, params: dict[str, Any]) -> dict[str, Any]:
        self.console_enabled = False
        return {}

    def _evaluation_result(self, run: Callable[[], Any], params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("objectGroup")
        group = requested if isinstance(requested, str) else "console"
        by_value = bool(params.get("returnByValue"))
        with_preview = bool(params.get("generatePreview"))
        try:
            value = run()
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the expression failing is a result, not an error
            remote = self.objects.wrap(exc, group, with_preview=with_preview)
            return {
                "result": remote,
                "wasThrown": True,
                "exceptionDetails": {
                    "exceptionId": 1,
                    "text": "Uncaught",
                    "lineNumber": 0,
                    "columnNumber": 0,
                    "exception": remote,
                },
            }
        return {
            "result": self.objects.wrap(value, group, by_value=by_value, with_preview=with_preview),
            "wasThrown": False,
        }

    def _evaluate(self, params: dict[str, Any]) -> dict[str, Any]:
        expression = _require(params, "expression", str)
        main = sys.modules.get("__main__")
        namespace = main.__dict__ if main is not None else {}
        return self._evaluation_result(lambda: evaluate(expression, namespace, namespace), params)

    def _get_properties(self, params: dict[str, Any]) -> dict[str, Any]:
        object_id = _require(params, "objectId", str)
        if params.get("accessorPropertiesOnly"):
            return {"properties": []}
        try:
            properties = self.objects.properties(
                object_id,
                "backtrace" if self.tracer.paused else "console",
                with_preview=bool(params.get("generatePreview")),
            )
        except ObjectNotFound:
            raise ProtocolError(SERVER_ERROR, "Could not find object with given id") from None
        return {"properties": properties}

    def _call_function_on(self, params: dict[str, Any]) -> dict[str, Any]:
        """The function is a Python expression giving a callable (``lambda self: len(self)``), called with the
        object and the arguments; JavaScript that a client sends does not compile and is reported as thrown."""
        declaration = _require(params, "functionDeclaration", str)
        target = None
        if isinstance(params.get("objectId"), str):
            try:
                target = self.objects.get(params["objectId"])
            except ObjectNotFound:
                raise ProtocolError(SERVER_ERROR, "Could not find object with given id") from None
        arguments = []
        for argument in params.get("arguments") or []:
            if isinstance(argument, dict) and isinstance(argument.get("objectId"), str):
                try:
                    arguments.append(self.objects.get(argument["objectId"]))
                except ObjectNotFound:
                    raise ProtocolError(SERVER_ERROR, "Could not find object with given id") from None
            elif isinstance(argument, dict):
                arguments.append(argument.get("value"))

        def call() -> Any:
            function = eval(declaration, {"__builtins__": __builtins__})
            return function(target, *arguments) if target is not None else function(*arguments)

        return self._evaluation_result(call, params)

    def _release_object(self, params: dict[str, Any]) -> dict[str, Any]:
        self.objects.release(_require(params, "objectId", str))
        return {}

    def _release_group(self, params: dict[str, Any]) -> dict[str, Any]:
        self.objects.release_group(_require(params, "objectGroup", str))
        return {}

    # -- Debugger ------------------------------------------------------------------------------------------

    def _debugger_enable(self, params: dict[str, Any]) -> dict[str, Any]:
        self.tracer.attached = True
        files = [self.main_script, *loaded_program_files(sys.modules)]
        self.scripts.enable(files)
        self.tracer.poke()
        return {}

    def _debugger_disable(self, params: dict[str, Any]) -> dict[str, Any]:
        for breakpoint_id in list(self.tracer.breakpoints):
            self.tracer.remove_breakpoint(breakpoint_id)
        self.tracer.pause_on_exceptions = "none"
        if self.tracer.paused:
            self.tracer.resume()
        return {}

    def _set_breakpoints_active(self, params: dict[str, Any]) -> dict[str, Any]:
        self.tracer.active = bool(_require(params, "active", bool))
        self.tracer.poke()
        return {}

    @staticmethod
    def _condition(params: dict[str, Any]) -> str:
        given = params.get("options")
        options: dict[str, Any] = given if isinstance(given, dict) else {}
        condition = params.get("condition") or options.get("condition") or ""
        if not isinstance(condition, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: 'condition' must be a string")
        if condition:
            try:
                compile(condition, "<condition>", "eval")
            except SyntaxError as exc:
                raise ProtocolError(
                    SERVER_ERROR, f"the condition is not a Python expression: {exc.msg}"
                ) from None
        return condition

    def _set_breakpoint_by_url(self, params: dict[str, Any]) -> dict[str, Any]:
        line = _require(params, "lineNumber", int)
        column = params.get("columnNumber", 0) if isinstance(params.get("columnNumber"), int) else 0
        condition = self._condition(params)
        url = params.get("url")
        regex = params.get("urlRegex")
        if isinstance(url, str) and url:
            filename = path_of_url(url)
            breakpoint_id = f"{url}:{line}:{column}"
            resolved = resolve_line(filename, line + 1) if os.path.isfile(filename) else None
            bp = Breakpoint(breakpoint_id, filename, resolved or line + 1, condition)
        elif isinstance(regex, str) and regex:
            try:
                re.compile(regex)
            except re.error as exc:
                raise ProtocolError(INVALID_PARAMS, f"Invalid params: bad urlRegex: {exc}") from None
            breakpoint_id = f"/{regex}/:{line}:{column}"
            bp = Breakpoint(breakpoint_id, None, line + 1, condition, url_regex=regex)
            for filename, _ in self.scripts.all():
                if re.search(regex, filename):
                    bp = Breakpoint(
                        breakpoint_id, filename, resolve_line(filename, line + 1) or line + 1, condition
                    )
                    break
        else:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: 'url' or 'urlRegex' is required")
        if breakpoint_id in self.tracer.breakpoints:
            raise ProtocolError(SERVER_ERROR, "Breakpoint at specified location already exists")
        self.tracer.add_breakpoint(bp)
        locations = []
        script_id = self.scripts.known(bp.filename) if bp.filename else None
        if script_id is not None:
            location = {"scriptId": script_id, "lineNumber": bp.line - 1, "columnNumber": 0}
            locations.append(location)
            # the reference tells it with an event too; clients written for it wait for that
            self.event("Debugger.breakpointResolved", {"breakpointId": breakpoint_id, "location": location})
        return {"breakpointId": breakpoint_id, "locations": locations}

    def _location(self, params: dict[str, Any]) -> tuple[str, str, int]:
        location = _require(params, "location", dict)
        script_id = _require(location, "scriptId", str)
        line = _require(location, "lineNumber", int)
        filename = self.scripts.filename(script_id)
        if filename is None:
            raise ProtocolError(SERVER_ERROR, f"No script for id: {script_id}")
        return script_id, filename, line

    def _set_breakpoint(self, params: dict[str, Any]) -> dict[str, Any]:
        script_id, filename, line = self._location(params)
        resolved = resolve_line(filename, line + 1)
        if resolved is None:
            raise ProtocolError(SERVER_ERROR, "Could not resolve breakpoint")
        breakpoint_id = f"{script_id}:{resolved - 1}:0"
        self.tracer.add_breakpoint(Breakpoint(breakpoint_id, filename, resolved, self._condition(params)))
        return {
            "breakpointId": breakpoint_id,
            "actualLocation": {"scriptId": script_id, "lineNumber": resolved - 1, "columnNumber": 0},
        }

    def _remove_breakpoint(self, params: dict[str, Any]) -> dict[str, Any]:
        self.tracer.remove_breakpoint(_require(params, "breakpointId", str))
        return {}

    def _get_script_source(self, params: dict[str, Any]) -> dict[str, Any]:
        script_id = _require(params, "scriptId", str)
        filename = self.scripts.filename(script_id)
        if filename is None:
            raise ProtocolError(SERVER_ERROR, f"No script for id: {script_id}")
        return {"scriptSource": "".join(linecache.getlines(filename))}

    def _pause(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.tracer.paused:
            self.tracer.request_pause()
        return {}

    def _paused_only(self) -> None:
        if not self.tracer.paused or threading.current_thread() is not self.tracer.main_thread:
            raise ProtocolError(SERVER_ERROR, "Can only perform operation while paused.")

    def _resume(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        self.tracer.resume()
        return {}

    def _step_over(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        self.tracer.resume(Step("over", self.tracer.paused_frames[0].frame))
        return {}

    def _step_into(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        self.tracer.resume(Step("into", None))
        return {}

    def _step_out(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        self.tracer.resume(Step("out", self.tracer.paused_frames[0].frame))
        return {}

    def _continue_to_location(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        script_id, filename, line = self._location(params)
        resolved = resolve_line(filename, line + 1) or line + 1
        self.tracer.add_breakpoint(
            Breakpoint(f"continue:{script_id}:{resolved}", filename, resolved, one_shot=True)
        )
        self.tracer.resume()
        return {}

    def _evaluate_on_call_frame(self, params: dict[str, Any]) -> dict[str, Any]:
        self._paused_only()
        call_frame_id = _require(params, "callFrameId", str)
        expression = _require(params, "expression", str)
        try:
            ordinal = json.loads(call_frame_id)["ordinal"]
            paused = self.tracer.paused_frames[ordinal]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProtocolError(SERVER_ERROR, "Could not find call frame with given id") from None
        frame = paused.frame
        return self._evaluation_result(lambda: evaluate(expression, frame.f_globals, paused.locals), params)

    def _set_pause_on_exceptions(self, params: dict[str, Any]) -> dict[str, Any]:
        state = _require(params, "state", str)
        if state not in ("none", "uncaught", "all"):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown pause on exceptions state: {state}")
        self.tracer.pause_on_exceptions = state
        self.tracer.poke()
        return {}


def evaluate(source: str, globals_: dict[str, Any], locals_: dict[str, Any]) -> Any:
    """An expression's value; a statement (``x = 1``, ``import os``) runs and gives None."""
    try:
        code = compile(source, "<inspector>", "eval")
    except SyntaxError:
        exec(compile(source, "<inspector>", "exec"), globals_, locals_)  # noqa: S102 - the client's own code
        return None
    return eval(code, globals_, locals_)
