"""The inspector's server: rt-http's ``serve`` on a thread of its own, with its own event loop.

The program's main thread can then be paused (blocked in the tracer) while this thread keeps talking to the
client. One client at a time: a second connection is closed with 1013 (try again later) while one is attached.
The server starts before the program, prints the banner on stderr, and stops when the program ends.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any

from rt_debug.inspector.address import InspectAddress
from rt_debug.inspector.console import Console
from rt_debug.inspector.endpoints import answer, version_info, ws_url
from rt_debug.inspector.session import MAX_MESSAGE, Session

if TYPE_CHECKING:
    from rt.kernel import Kernel

RULE = "--------------------- rt Inspector ---------------------"
DEFAULT_UI_URL = "https://debug.bun.sh/#"
STARTUP_TIMEOUT = 30.0


class InspectorUnavailable(RuntimeError):
    """The inspector cannot start (rt-http missing or disabled, the port taken); the message is one line."""


def _require_http(kernel: Kernel) -> None:
    try:
        import rt_http.server  # noqa: F401 - only checking that it is installed
    except ImportError:
        raise InspectorUnavailable(
            "the inspector needs rt-http (its WebSocket server): pip install 'rt-debug[inspect]'"
        ) from None
    if "tcp" not in kernel.host.transports():
        raise InspectorUnavailable(
            "the inspector needs the rt-http plugin, which is disabled (RT_DISABLE_PLUGINS or [plugins] disable)"
        )


class Inspector:
    """Runs the server thread; ``session`` is the attached client's session (None when nobody is attached)."""

    def __init__(
        self, address: InspectAddress, main_script: str, kernel: Kernel, ui_url: str = DEFAULT_UI_URL
    ) -> None:
        _require_http(kernel)
        self.address = address
        self.main_script = main_script
        self.kernel = kernel
        self.ui_url = ui_url
        self.initialized = threading.Event()
        self.session: Session | None = None
        self.port = 0
        self._portal: Any = None
        self._stop: Any = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="rt-inspector", daemon=True)
        self._main_session = Session(self._send, main_script=main_script, initialized=self.initialized)
        self.console = Console(self._main_session.event, self._main_session.scripts.id_for)
        self._socket: Any = None
        from rt import __version__

        self._version = version_info(__version__, sys.version.split()[0])

    @property
    def tracer(self) -> Any:
        return self._main_session.tracer

    # -- the server thread ---------------------------------------------------------------------------------

    def _run(self) -> None:
        import anyio

        from rt.kernel import use_kernel

        async def main() -> None:
            from anyio.from_thread import BlockingPortal

            from rt_http.server import serve

            server = serve(
                fetch=self._fetch,
                websocket={
                    "message": self._message,
                    "open": self._open,
                    "close": self._close,
                    "idle_timeout": 0,
                    "max_payload_length": MAX_MESSAGE,
                },
                hostname=self.address.host,
                port=self.address.port,
            )
            async with BlockingPortal() as portal:
                self._portal = portal
                self._stop = anyio.Event()
                async with server:
                    self.port = server.port
                    self._server = server
                    self._ready.set()
                    await self._stop.wait()

        with use_kernel(self.kernel):
            try:
                anyio.run(main, backend="asyncio")
            except BaseException as exc:  # noqa: BLE001 - reported to the main thread, which says it in one line
                self._startup_error = exc
                self._ready.set()

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(STARTUP_TIMEOUT) or self._startup_error is not None:
            error = self._startup_error
            while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]  # the task group around the listener wraps what went wrong
            detail = f"{type(error).__name__}: {error}" if error is not None else "timed out"
            if isinstance(error, OSError):
                detail = error.strerror or str(error)
            raise InspectorUnavailable(
                f"the inspector cannot listen on {self.address.host}:{self.address.port}: {detail}"
            )
        self.tracer.install_poke()
        self._banner()

    def _banner(self) -> None:
        url = ws_url(self.address, self.port)
        lines = [
            RULE,
            "Listening:",
            f"  {url}",
            "Inspect in browser:",
            f"  {self.ui_url}{url[len('ws://') :]}",
            RULE,
        ]
        if not self.address.is_loopback:
            lines.append(
                f"rt: warning: the inspector listens on {self.address.host}, not on a loopback address: anyone who "
                "can reach it and knows the path can run code in this process"
            )
        print("\n".join(lines), file=sys.stderr, flush=True)

    def before_main(self) -> None:
        """On the main thread, before the script: wait for a client if asked to, arm the first-line pause."""
        install_audit_hook(self)
        if self.address.mode in ("brk", "wait"):
            self.initialized.wait()
        tracer = self.tracer
        if self.address.mode == "brk" and tracer.attached:
            tracer.break_at_start = self.main_script
        tracer.sync(None)

    def uncaught(self, error: BaseException) -> None:
        sys.settrace(None)
        self.tracer.uncaught(error)
        sys.settrace(None)

    def stop(self) -> None:
        """Close the client's connection and stop the server thread (from the main thread, at the end)."""
        self.console.remove()
        portal, stop = self._portal, self._stop
        if portal is not None and stop is not None and self._thread.is_alive():
            try:
                portal.call(self._shutdown)
            except Exception:  # noqa: BLE001, S110 - the loop may already be gone; the thread is a daemon
                pass
            self._thread.join(5)

    async def _shutdown(self) -> None:
        if self._socket is not None:
            self._socket.close(1000, "program ended")
        await self._server.stop(close_active=True)
        self._stop.set()

    # -- HTTP and WebSocket handlers (on the server thread) ------------------------------------------------

    async def _fetch(self, request: Any, server: Any) -> Any:
        from rt_http.messages import Response

        headers = {name: request.headers.get(name) for name in ("host", "origin", "upgrade")}
        decision = answer(
            request.method,
            request.path,
            headers,
            address=self.address,
            port=self.port,
            version=self._version,
            title=f"rt {self.main_script}",
            script_url=f"file://{self.main_script}",
        )
        if decision.kind == "upgrade":
            if server.upgrade(request):
                return None
            return Response(status=400)
        if decision.kind == "json":
            return Response(decision.body, headers={"content-type": "application/json;charset=utf-8"})
        return Response(status=decision.status)

    def _open(self, ws: Any) -> None:
        if self._socket is not None:
            ws.close(1013, "another debugger is attached")
            return
        self._socket = ws
        self.session = self._main_session
        self.session.tracer.attached = True

    def _message(self, ws: Any, message: Any) -> None:
        if ws is not self._socket:
            return
        text = message if isinstance(message, str) else bytes(message).decode("utf-8", errors="replace")
        session = self._main_session
        before = session.console_enabled
        session.handle(text)
        if session.console_enabled and not before:
            self.console.install()
        elif before and not session.console_enabled:
            self.console.remove()

    def _close(self, ws: Any, code: int, reason: str) -> None:
        if ws is not self._socket:
            return
        self._socket = None
        self.session = None
        self.console.remove()
        self._main_session.closed()

    def _send(self, message: dict[str, Any]) -> None:
        """Send to the client from any thread: on the server thread directly, else through the portal."""
        socket = self._socket
        if socket is None:
            return
        text = json.dumps(message, default=str)
        if threading.current_thread() is self._thread:
            socket.send(text)
            return
        portal = self._portal
        if portal is None:
            return
        try:
            portal.start_task_soon(self._send_async, socket, text)
        except RuntimeError:
            pass  # the server has stopped: the client is gone

    @staticmethod
    async def _send_async(socket: Any, text: str) -> None:
        socket.send(text)


_current: list[Inspector] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Every module body run (imports included) raises the audit event ``exec`` with its code object."""
    if event == "exec" and _current:
        code = args[0]
        if hasattr(code, "co_filename"):
            _current[0]._main_session.scripts.seen_code(code)


def install_audit_hook(inspector: Inspector) -> None:
    """Audit hooks cannot be removed: one per process, pointing at the inspector of the moment."""
    if not _current:
        _current.append(inspector)
        sys.addaudithook(_audit)
    else:
        _current[0] = inspector
