"""A debugger client for the tests: starts a program under an inspector and talks to it as a real client does.

It works for `rt run --inspect*` and for the reference runtime's own inspector alike: the banner on stderr gives
the WebSocket URL, then JSON messages go back and forth (``websockets``' synchronous client).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

REPO = Path(__file__).resolve().parents[3]
BUN = REPO / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"
# the whole banner, up to its closing rule: the pumps append line by line, and a test reads the lines after the URL
URL = re.compile(r"^  (ws://\S+)\nInspect in browser:\n  \S+\n-{5}[^\n]*\n", re.MULTILINE)
# only bounds a hang: starting a program under a loaded CI machine can take many times a quiet laptop's second
TIMEOUT = 60.0
# what a real client (the reference's own debugger) sends first, in this order
HANDSHAKE = (
    ("Inspector.enable", {}),
    ("Runtime.enable", {}),
    ("Console.enable", {}),
    ("Debugger.enable", {}),
    ("Debugger.setBreakpointsActive", {"active": True}),
)


def rt_environ() -> dict[str, str]:
    """Only rt-debug and rt-http loaded (the inspector's server is rt-http's), no RT_* from outside."""
    keep = {"debug", "http"}
    others = sorted({ep.name for ep in importlib.metadata.entry_points(group="rt")} - keep)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    environ.update({"RT_DISABLE_PLUGINS": ",".join(others), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"})
    return environ


class Program:
    """A process under an inspector; ``stderr`` collects its error output as it comes."""

    def __init__(self, command: Sequence[str], cwd: Path, environ: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ or rt_environ(),
        )
        self.stderr = ""
        self.stdout = ""
        self._lock = threading.Lock()
        self._pumps = [
            threading.Thread(target=self._pump, args=(name,), daemon=True) for name in ("stderr", "stdout")
        ]
        for pump in self._pumps:
            pump.start()

    def _pump(self, name: str) -> None:
        stream = getattr(self.process, name)
        for line in stream:
            with self._lock:
                setattr(self, name, getattr(self, name) + line)

    def url(self) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            with self._lock:
                match = URL.search(self.stderr)
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                self._drain()
                raise AssertionError(f"the program ended before its banner: {self.stderr}")
            time.sleep(0.02)
        raise AssertionError(f"no banner on stderr: {self.stderr!r}")

    def http_base(self) -> str:
        url = self.url()
        return "http://" + url[len("ws://") :].split("/", 1)[0]

    def wait(self, timeout: float = TIMEOUT) -> int:
        code = self.process.wait(timeout)
        self._drain()
        return code

    def _drain(self) -> None:
        """Until the pumps have read the pipes to their end (a sleep would race them on a loaded machine)."""
        for pump in self._pumps:
            pump.join(TIMEOUT)
            assert not pump.is_alive(), "the program's output did not end with it (a child holds the pipe?)"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def rt_program(script: Path, *flags: str, cwd: Path, args: Sequence[str] = ()) -> Program:
    return Program([sys.executable, "-m", "rt", "run", *flags, str(script), *args], cwd)


def bun_program(script: Path, *flags: str, cwd: Path) -> Program:
    return Program([str(BUN), *flags, str(script)], cwd, environ={**os.environ, "NO_COLOR": "1"})


class Client:
    """Sends requests, collects events; ``events`` keeps every event seen, in order."""

    def __init__(self, url: str) -> None:
        self._exit = contextlib.ExitStack()
        self.ws: ClientConnection = self._exit.enter_context(
            connect(url, open_timeout=TIMEOUT, max_size=None)
        )
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.replies: dict[int, dict[str, Any]] = {}
        self.closed = False

    def close(self) -> None:
        self._exit.close()

    def _receive(self, timeout: float) -> dict[str, Any]:
        message = json.loads(self.ws.recv(timeout=timeout))
        assert isinstance(message, dict)
        if "id" in message:
            self.replies[message["id"]] = message
        else:
            self.events.append(message)
        return message

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        """The whole reply (``result`` or ``error``) to one request."""
        self.next_id += 1
        request_id = self.next_id
        self.ws.send(json.dumps({"id": request_id, "method": method, "params": params}))
        deadline = time.monotonic() + TIMEOUT
        while request_id not in self.replies:
            self._receive(max(deadline - time.monotonic(), 0.01))
        return self.replies.pop(request_id)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """The ``result`` of a request that must succeed."""
        reply = self.request(method, **params)
        assert "result" in reply, reply
        return reply["result"]  # type: ignore[no-any-return]

    def event(self, method: str, timeout: float = TIMEOUT, **match: Any) -> dict[str, Any]:
        """The next event named ``method`` (whose params hold ``match``), seen already or still to come."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for index in range(seen, len(self.events)):
                event = self.events[index]
                params = event.get("params", {})
                if event["method"] == method and all(params.get(k) == v for k, v in match.items()):
                    del self.events[index]
                    return params  # type: ignore[no-any-return]
            seen = len(self.events)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {method} {match or ''} within {timeout}s; events: {self.events}")
            self._receive(remaining)

    def handshake(self, *before_initialized: tuple[str, dict[str, Any]]) -> None:
        """The sequence of REFERENCE.md: enable the domains, set breakpoints and so on, then initialized."""
        for method, params in (*HANDSHAKE, *before_initialized):
            self.call(method, **params)
        self.call("Inspector.initialized")

    def paused(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.event("Debugger.paused", timeout)

    def drain_until_closed(self, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self._receive(max(deadline - time.monotonic(), 0.01))
        except Exception:  # noqa: BLE001 - the connection closing is what is waited for
            self.closed = True
            return
        raise AssertionError("the inspector did not close the connection")

    def properties(self, object_id: str) -> dict[str, Any]:
        """name -> RemoteObject of an object's (or a scope's) properties."""
        result = self.call(
            "Runtime.getProperties", objectId=object_id, ownProperties=True, generatePreview=True
        )
        return {p["name"]: p["value"] for p in result["properties"]}

    def locals_of(self, call_frame: dict[str, Any]) -> dict[str, Any]:
        scope = next(s for s in call_frame["scopeChain"] if s["type"] in ("local", "closure", "global"))
        return self.properties(scope["object"]["objectId"])
