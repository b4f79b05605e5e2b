"""The WebSocket clients bench/ws.py measures (its client rows), one per process, as bench/ws_server.py is for
servers: rt.WebSocket on asyncio, uvloop and trio, the `websockets` client, and picows (a Cython client, the
fastest Python WebSocket library on PyPI; optional: ``uv run --with picows``).

    python -P bench/ws_client.py IMPL URL SECONDS SIZE WINDOW

IMPL: rt-asyncio | rt-uvloop | rt-trio | websockets | websockets-uvloop | picows | picows-uvloop.
Opens one connection, keeps WINDOW binary messages of SIZE bytes in flight against an echo server (1: one
round trip at a time), warms up, then counts echoes for SECONDS. Prints one JSON line: the count, the wall
time and this process's CPU time over the timed window (so start-up and the handshake are not in it), in
all and in user mode only: the user part is the client's own code (Python, or picows' C); the system part is
mostly the kernel's loopback TCP path, which a ``send`` runs in the sender's time (delivering to the server's
socket), and is about the same per message for every client (one ``send``, one ``recv``, the ``epoll`` waits).
rt's rows import rt_http from PYTHONPATH when bench/ws.py sets it (its ``--before`` columns).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

# bench/ is sys.path[0] for this script: keep a bench named like a standard module from shadowing it
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

WARMUP = 0.3  # seconds of traffic before the timed window


class Window:
    """The timed window: call :meth:`tick` per echo; it starts after the warm-up and ends after SECONDS."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.count = 0
        self.started = 0.0
        self.cpu = self.user = 0.0
        self.warm_until = time.perf_counter() + WARMUP
        self.result: dict[str, float] | None = None

    def tick(self) -> bool:
        """Count one echo; False once the window is over (the caller stops sending)."""
        if self.result is not None:
            return False
        now = time.perf_counter()
        if not self.started:
            if now >= self.warm_until:
                times = os.times()
                self.started, self.cpu, self.user = now, times.user + times.system, times.user
            return True
        self.count += 1
        if now - self.started >= self.seconds:
            times = os.times()
            self.result = {
                "count": self.count,
                "wall": now - self.started,
                "cpu": times.user + times.system - self.cpu,
                "user": times.user - self.user,
            }
            return False
        return True


def payload(size: int) -> bytes:
    return bytes(i % 251 for i in range(size))


async def _echo(
    ws: Any, receive: Callable[[], Awaitable[object]], window: Window, size: int, in_flight: int
) -> None:
    """Keep ``in_flight`` messages outstanding: send one for every echo, until the window closes."""
    data = payload(size)
    for _ in range(in_flight):
        await ws.send(data)
    outstanding = in_flight
    while outstanding:
        await receive()
        outstanding -= 1
        if window.tick():
            await ws.send(data)
            outstanding += 1


async def rt_client(url: str, window: Window, size: int, in_flight: int) -> None:
    import rt

    async with rt.WebSocket(url, per_message_deflate=False) as ws:
        await _echo(ws, ws.receive, window, size, in_flight)


async def websockets_client(url: str, window: Window, size: int, in_flight: int) -> None:
    from websockets.asyncio.client import connect

    async with connect(url, compression=None, max_size=None) as ws:
        await _echo(ws, ws.recv, window, size, in_flight)


async def picows_client(url: str, window: Window, size: int, in_flight: int) -> None:
    """picows is callback-shaped (frames arrive in ``on_ws_frame`` on the transport's callback), so its
    client answers in the callback: what its documentation recommends for speed."""
    import asyncio

    from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

    data = payload(size)
    finished = asyncio.get_running_loop().create_future()

    class Echo(WSListener):  # type: ignore[misc]
        outstanding = 0

        def on_ws_connected(self, transport: WSTransport) -> None:
            for _ in range(in_flight):
                transport.send(WSMsgType.BINARY, data)
            self.outstanding = in_flight

        def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
            self.outstanding -= 1
            if window.tick():
                transport.send(WSMsgType.BINARY, data)
                self.outstanding += 1
            elif self.outstanding == 0 and not finished.done():
                finished.set_result(None)

    transport, _listener = await ws_connect(Echo, url)
    await finished
    transport.disconnect()
    await transport.wait_disconnected()


def main() -> None:
    impl, url, seconds, size, in_flight = sys.argv[1:6]
    window = Window(float(seconds))
    arguments = (url, window, int(size), int(in_flight))
    if impl.startswith(("rt-", "before-")):
        import anyio

        backend = impl.split("-", 1)[1]
        if backend == "trio":
            anyio.run(rt_client, *arguments, backend="trio")
        else:
            options = {"use_uvloop": backend == "uvloop"}
            anyio.run(rt_client, *arguments, backend="asyncio", backend_options=options)
    else:
        import asyncio

        name, _, loop = impl.partition("-")
        runner = websockets_client if name == "websockets" else picows_client
        if loop == "uvloop":
            import uvloop

            uvloop.run(runner(*arguments))
        else:
            asyncio.run(runner(*arguments))
    if window.result is None:
        raise SystemExit(f"{impl}: the window never ended (count {window.count})")
    print(json.dumps(window.result))


if __name__ == "__main__":
    main()
