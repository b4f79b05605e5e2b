"""Defects hostile or unlucky clients found in the WebSocket layer (issue 13), each reproduced on loopback
(asyncio and trio): a compression context advanced by a dropped message, a big compressed message
inflated on the event loop, frames that came with the handshake left unanswered, close codes refused."""

from __future__ import annotations

import base64
import os
import struct
import threading
import zlib
from typing import Any

import anyio
import pytest

import rt
from rt_http import deflate as deflate_module

pytestmark = pytest.mark.anyio
OFFERING = "Sec-WebSocket-Extensions: permessage-deflate\r\n"


def upgrading(req: rt.Request, server: Any) -> rt.Response | None:
    return None if server.upgrade(req) else rt.Response("no", status=400)


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]


@pytest.mark.parametrize("via", ["send", "publish"])
async def test_a_message_dropped_under_backpressure_does_not_advance_the_compression_context(
    serve: Any, ws_tools: Any, via: str
) -> None:
    """Defect 2: with a dedicated compressor (context kept across messages) a message sent while the queue
    is over ``backpressure_limit`` is dropped. Before the fix it was compressed first, so the same text sent
    next round was compressed as a reference to bytes the client never saw: it inflated to other text (or
    not at all). Each round: an incompressible filler that takes the queue over the limit, and the secret."""
    accepted: list[str] = []
    secret = "secret-" + base64.b32encode(os.urandom(20)).decode()

    def message(ws: Any, msg: Any) -> None:
        round_ = int(msg)
        filler = base64.b32encode(os.urandom(200)).decode()
        for text in [filler, secret] if round_ == 0 else [secret, filler]:
            result = ws.send(text, compress=True) if via == "send" else ws.publish("t", text, compress=True)
            if result != 0:
                accepted.append(text)

    handler = rt.WebSocketHandler(
        open=lambda ws: ws.subscribe("t"),
        message=message,
        per_message_deflate={"compress": "dedicated"},
        backpressure_limit=100,
        publish_to_self=True,
    )
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
            assert b"client_no_context_takeover" in client.response_head  # and the server keeps its context
            await ws_tools.wait_until(lambda: server.subscriber_count("t") == 1)
            inflater = zlib.decompressobj(wbits=-15)
            received: list[str] = []
            for round_, expected in enumerate([1, 3, 5]):  # frames received by the end of each round
                await client.send_text(str(round_))
                with anyio.fail_after(5):
                    while len(received) < expected:
                        opcode, payload = await client.recv_frame()
                        assert opcode == 1
                        received.append(inflater.decompress(payload + b"\x00\x00\xff\xff").decode())
            assert len(accepted) == 5  # the secret was dropped in round 0, sent in rounds 1 and 2
            assert received == accepted


async def test_a_big_compressed_message_is_inflated_off_the_event_loop(serve: Any, ws_tools: Any) -> None:
    """Defect 8: inflating a large message ran on the event loop, so every other client waited for it.
    The inflate is held until the test lets it go, to show where it runs: another client's echo must come
    back while it is still going on (a fixed delay could end first on a loaded machine), and the big message
    must still arrive whole and in order."""
    started, release = threading.Event(), threading.Event()
    original = deflate_module.Inflater.inflate
    order: list[str] = []

    def slow_inflate(self: Any, data: bytes, max_size: int) -> bytes | None:
        if len(data) > 100_000:
            started.set()
            release.wait(30)  # stands for megabytes of inflating (a blocking call, as zlib's is)
        return original(self, data, max_size)

    def message(ws: Any, msg: Any) -> None:
        order.append("big" if len(msg) > 1000 else msg)
        ws.send(msg if len(msg) <= 1000 else f"got {len(msg)}")

    big = base64.b64encode(os.urandom(150_000))  # base64 of random bytes: compresses only to ~75%
    handler = rt.WebSocketHandler(message=message, per_message_deflate=True)
    patch = pytest.MonkeyPatch()
    patch.setattr(deflate_module.Inflater, "inflate", slow_inflate)
    try:
        async with serve(fetch=upgrading, websocket=handler) as server:
            async with (
                await ws_tools.RawClient.connect(server, extra=OFFERING) as sender,
                await ws_tools.RawClient.connect(server) as other,
            ):
                await sender.send(0x2, deflate(big), rsv=0x40)
                await sender.send(0x1, b"after")  # must not overtake the big message
                await ws_tools.wait_until(started.is_set)
                await other.send_text("ping?")
                with anyio.fail_after(5):
                    assert await other.recv_frame() == (1, b"ping?")
                order.append("echoed")
                release.set()
                with anyio.fail_after(10):
                    assert await sender.recv_frame() == (1, f"got {len(big)}".encode())
                    assert await sender.recv_frame() == (1, b"after")
    finally:
        release.set()
        patch.undo()
    assert order == ["ping?", "echoed", "big", "after"]


async def test_frames_that_came_with_the_handshake_are_answered_at_once(serve: Any) -> None:
    """Defect 9: a client that pipelines its first message behind the upgrade request got the answer only
    after it sent something else."""
    handler = rt.WebSocketHandler(message=lambda ws, msg: ws.send(msg))
    async with serve(fetch=upgrading, websocket=handler) as server:
        stream = await anyio.connect_tcp("127.0.0.1", server.port)
        async with stream:
            key = base64.b64encode(os.urandom(16)).decode()
            mask = os.urandom(4)
            frame = bytes((0x81, 0x80 | 5)) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(b"early"))
            await stream.send(
                (
                    "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
                + frame
            )
            data = b""
            with anyio.fail_after(5):
                while not data.endswith(b"\x81\x05early"):
                    data += await stream.receive()
            assert data.startswith(b"HTTP/1.1 101")


@pytest.mark.parametrize("code", [1000, 1001, 1003, 1008, 1011, 1014, 3000, 4999])
async def test_close_accepts_every_code_an_endpoint_may_send(serve: Any, ws_tools: Any, code: int) -> None:
    """Defect 9: ``ws.close()`` refused 1001, 1008 and 1011 (going away, policy violation, server error)."""
    closed: list[tuple[int, str]] = []
    handler = rt.WebSocketHandler(
        message=lambda ws, msg: ws.close(code, "because"),
        close=lambda ws, c, reason: closed.append((c, reason)),
    )
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with await ws_tools.RawClient.connect(server) as client:
            await client.send_text("close please")
            assert await client.recv_close() == (code, "because")
            await client.send(0x8, struct.pack("!H", code))
    assert closed == [(code, "because")]


@pytest.mark.parametrize("code", [999, 1004, 1005, 1006, 1015, 2000, 5000, True])
async def test_close_refuses_codes_that_may_not_be_sent(serve: Any, ws_tools: Any, code: Any) -> None:
    errors: list[Exception] = []

    def message(ws: Any, msg: Any) -> None:
        try:
            ws.close(code)
        except ValueError as exc:
            errors.append(exc)
            ws.send("refused")

    async with serve(fetch=upgrading, websocket=rt.WebSocketHandler(message=message)) as server:
        async with await ws_tools.RawClient.connect(server) as client:
            await client.send_text("close please")
            assert await client.recv_frame() == (1, b"refused")
    assert len(errors) == 1 and "1000-1003, 1007-1014 or 3000-4999" in str(errors[0])


async def test_a_big_message_is_deflated_off_the_event_loop_and_in_order(serve: Any, ws_tools: Any) -> None:
    """Defect 8, the sending side: a socket's own compressor deflating a big message kept every other client
    waiting. Deflating is held until the test lets it go, to show where it runs (a fixed delay could end
    first on a loaded machine); the small message sent after the big one must still arrive after it, and
    both inflate right (the compressor's context advanced in order)."""
    started, release = threading.Event(), threading.Event()
    original = deflate_module.Deflater.compress
    big = base64.b64encode(os.urandom(90_000)).decode()

    order: list[str] = []

    def slow_compress(self: Any, data: bytes) -> bytes:
        if len(data) > 100_000:
            started.set()
            release.wait(30)
            order.append("deflated")
        return original(self, data)

    def message(ws: Any, msg: Any) -> None:
        if msg == "big please":
            ws.send(big, compress=True)
            ws.send(big[:50] + " and after", compress=True)  # refers back into the big one
        else:
            order.append(msg)
            ws.send(msg)

    handler = rt.WebSocketHandler(message=message, per_message_deflate={"compress": "dedicated"})
    patch = pytest.MonkeyPatch()
    patch.setattr(deflate_module.Deflater, "compress", slow_compress)
    try:
        async with serve(fetch=upgrading, websocket=handler) as server:
            async with (
                await ws_tools.RawClient.connect(server, extra=OFFERING) as receiver,
                await ws_tools.RawClient.connect(server) as other,
            ):
                await receiver.send_text("big please")
                await ws_tools.wait_until(started.is_set)
                await other.send_text("ping?")
                with anyio.fail_after(5):
                    assert await other.recv_frame() == (1, b"ping?")
                assert order == ["ping?"]  # answered while the big message was still being deflated
                release.set()
                inflater = zlib.decompressobj(wbits=-15)
                with anyio.fail_after(10):
                    for expected in (big, big[:50] + " and after"):
                        opcode, payload = await receiver.recv_frame()
                        assert opcode == 1
                        assert inflater.decompress(payload + b"\x00\x00\xff\xff").decode() == expected
    finally:
        release.set()
        patch.undo()
    assert order == ["ping?", "deflated"]
