"""Topic state leaves with the socket: 100k subscribe/close cycles, and real connections over memory pipes."""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from typing import Any

import anyio
import pytest

import rt
from rt_http.websocket import ServerWebSocket, WebSocketHandler


def test_100k_subscribe_close_cycles_leave_nothing_behind(rt_kernel: Any) -> None:
    server = rt.serve(fetch=lambda req, s: None, websocket={}, port=0)
    handler = WebSocketHandler()
    keeper = ServerWebSocket(server._hub, handler, None, "keeper")
    keeper.subscribe("room")

    def cycle(count: int) -> weakref.ref[ServerWebSocket]:
        ref = None
        for index in range(count):
            ws = ServerWebSocket(server._hub, handler, {"n": index}, "peer")
            server._hub.sockets[ws] = None
            assert ws.subscribe("room") and ws.subscribe(f"private-{index}") and ws.subscribe("lobby")
            assert ws.publish("lobby", "x") == 0  # only itself there, and it is excluded
            ws.close() if index % 2 else ws.terminate()
            ref = weakref.ref(ws)
        assert ref is not None
        return ref

    cycle(1000)  # warm up caches and interned strings
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    last = cycle(100_000)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert last() is None  # nothing holds a closed socket
    assert server.subscriber_count("room") == 1 and server.subscriber_count("lobby") == 0
    assert len(server._hub.topics) == 1 and not server._hub.sockets
    assert after - before < 256 * 1024, f"grew by {after - before} bytes over 100k cycles"


@pytest.mark.anyio
async def test_real_connections_clean_their_topics_on_every_kind_of_close(
    rt_kernel: Any, ws_tools: Any
) -> None:
    def fetch(req: rt.Request, server: Any) -> Any:
        return None if server.upgrade(req) else rt.Response("no", status=400)

    def open_(ws: Any) -> None:
        ws.subscribe("room")
        ws.subscribe("other")

    async with rt.serve(fetch=fetch, websocket={"open": open_}, transport="memory") as server:
        for index in range(150):
            client = await ws_tools.RawClient.connect(server)
            await ws_tools.wait_until(lambda: server.subscriber_count("room") == 1)
            if index % 3 == 0:
                await client.send(8, b"\x03\xe8")  # close handshake
                await client.recv_close()
            elif index % 3 == 1:
                await client.send(1, b"x", masked=False)  # protocol error
            await client.aclose()  # and abrupt EOF for the rest
            await ws_tools.wait_until(lambda: server.pending_websockets == 0)
        assert server.subscriber_count("room") == 0 and len(server._hub.topics) == 0
        await anyio.sleep(0)
