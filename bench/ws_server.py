"""The servers bench/ws.py measures, one per process: rt.serve (asyncio or trio) or the `websockets` server.

    python bench/ws_server.py IMPL MODE    IMPL: rt-asyncio | rt-uvloop | rt-trio | websockets | bare-BACKEND
                                           MODE: echo | chat | idle

(The reference runtime's server is bench/ws_bun.js, started by bench/ws.py with the runtime's own binary.)

Prints ``READY <port>`` once listening, then serves until killed. Each does the same work: echo the message,
or republish it to every socket in "room" (rt: ``server.publish``; websockets: its ``broadcast``).
"""

from __future__ import annotations

import os
import sys

# bench/ is sys.path[0] for this script: keep a bench named like a standard module from shadowing it
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]


def run_rt(backend: str, mode: str) -> None:
    # rt runs asyncio on uvloop when it is installed: rt-asyncio is asyncio's own loop, rt-uvloop is uvloop
    os.environ["RT_LOOP"] = "uvloop" if backend == "uvloop" else "asyncio"
    backend = "asyncio" if backend == "uvloop" else backend
    import rt

    def fetch(req: rt.Request, server: rt.Server) -> rt.Response | None:
        return None if server.upgrade(req) else rt.Response("websocket only", status=400)

    handlers: dict[str, object] = {"idle_timeout": 0, "send_pings": False}
    if mode == "echo":
        handlers["message"] = lambda ws, msg: ws.send(msg)
    elif mode == "chat":
        handlers["open"] = lambda ws: ws.subscribe("room")
        handlers["message"] = lambda ws, msg: server.publish("room", msg)
    server = rt.serve(fetch=fetch, websocket=handlers, hostname="127.0.0.1", port=0, backlog=4096)

    async def main() -> None:
        async with server:
            print(f"READY {server.port}", flush=True)
            await server.serve_forever()

    from rt.backend import run

    run(main, backend=backend)


def run_bare_anyio(backend: str) -> None:
    """Not a WebSocket server: a fake 101, then raw ``receive()``/``send()`` echo. It shows what the streams
    cost on each backend before any WebSocket work: anyio's own (``bare-asyncio``, ``bare-trio``) and the
    ones rt-http accepts (``bare-asyncio-rt``, ``bare-trio-rt``: anyio's listener through ``native_listener``)."""
    import anyio
    import anyio.abc

    native = backend.endswith("-rt")
    backend = backend.removesuffix("-rt")

    async def handle(stream: anyio.abc.ByteStream) -> None:
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            await stream.send(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
            while True:
                await stream.send(await stream.receive())
        except Exception:
            pass

    async def main() -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0, backlog=4096)
        if native:
            from rt_http.transports import native_listener

            listener = native_listener(listener)
        print(f"READY {listener.extra(anyio.abc.SocketAttribute.local_port)}", flush=True)
        await listener.serve(handle)

    anyio.run(main, backend=backend)


def run_websockets(mode: str) -> None:
    import asyncio
    import logging

    # the load generator drops its connections without a closing handshake: websockets logs each one
    logging.getLogger("websockets").setLevel(logging.CRITICAL)

    from websockets.asyncio.server import broadcast, serve

    clients: set = set()

    async def handler(ws) -> None:  # type: ignore[no-untyped-def]
        if mode == "echo":
            async for message in ws:
                await ws.send(message)
        elif mode == "chat":
            clients.add(ws)
            try:
                async for message in ws:
                    broadcast(clients, message)
            finally:
                clients.discard(ws)
        else:
            await ws.wait_closed()

    async def main() -> None:
        async with serve(
            handler, "127.0.0.1", 0, compression=None, ping_interval=None, max_size=2**24, backlog=4096
        ) as server:
            port = server.sockets[0].getsockname()[1]
            print(f"READY {port}", flush=True)
            await asyncio.Future()

    asyncio.run(main())


if __name__ == "__main__":
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    impl, mode = sys.argv[1], sys.argv[2]
    if impl == "websockets":
        run_websockets(mode)
    elif impl.startswith("bare-"):
        run_bare_anyio(impl.removeprefix("bare-"))
    else:
        run_rt(impl.removeprefix("rt-"), mode)
