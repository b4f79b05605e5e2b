"""Hypothesis against the running server: random and mutated frames never crash it or leak a connection,
every connection ends in exactly one close-handler call, and the close code is the one the protocol calls
for (the sans-I/O parser, tested on its own, is the oracle)."""

from __future__ import annotations

import logging
import struct
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rt
from rt_http.frames import Close, Fail
from rt_http.protocol import WebSocketProtocol

MAX_PAYLOAD = 150

FRAME = st.builds(
    lambda opcode, payload, fin, rsv, masked: (opcode, payload, fin, rsv, masked),
    st.sampled_from([0, 1, 2, 3, 8, 9, 10, 15]),
    st.binary(max_size=200)
    | st.sampled_from([b"\xff\xfe", struct.pack("!H", 1000), struct.pack("!H", 1006)]),
    st.booleans(),
    st.sampled_from([0, 0, 0, 0x40]),
    st.booleans() | st.just(True),
)


def expected_close(data: bytes) -> tuple[int | None, int]:
    """What the server must do with ``data``, by the sans-I/O parser (tested on its own in test_frames.py):
    (the close code the client must receive, or None for no close frame; the code the close handler gets).
    A protocol failure closes with its code; a client close is echoed; without either the connection ends
    when the client hangs up (1006)."""
    for event in WebSocketProtocol(max_payload_length=MAX_PAYLOAD).receive_data(data):
        if isinstance(event, Fail):
            return event.code, event.code
        if isinstance(event, Close):
            return event.code, event.code
    return None, 1006


@pytest.mark.parametrize("transport", ["memory", "tcp"])  # tcp: over the backend's own fast stream
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frames=st.lists(FRAME, min_size=1, max_size=5), flip=st.integers(0, 10_000), mutate=st.booleans())
def test_random_frames_close_with_the_right_code_and_leak_nothing(
    rt_kernel: Any,
    ws_tools: Any,
    caplog: Any,
    backend: str,
    transport: str,
    frames: list[Any],
    flip: int,
    mutate: bool,
) -> None:
    caplog.set_level(logging.ERROR, logger="rt.serve")
    caplog.clear()
    closes: list[tuple[int, str]] = []

    def fetch(req: rt.Request, server: Any) -> Any:
        return None if server.upgrade(req) else rt.Response("no", status=400)

    handler = rt.WebSocketHandler(
        message=lambda ws, m: ws.send(m),
        max_payload_length=MAX_PAYLOAD,
        close=lambda ws, code, reason: closes.append((code, reason)),
    )
    data = bytearray(
        b"".join(
            ws_tools.mask_frame(op, payload, fin=fin, rsv=rsv, masked=masked)
            for op, payload, fin, rsv, masked in frames
        )
    )
    if mutate:
        data[flip % len(data)] ^= 1 << (flip % 8)
    sent_code, handler_code = expected_close(bytes(data))
    received: list[int] = []

    async def main() -> None:
        async with rt.serve(fetch=fetch, websocket=handler, transport=transport, port=0) as server:
            async with await ws_tools.RawClient.connect(server) as client:
                await client.stream.send(bytes(data))
                if sent_code is not None:  # the server answers (echoes first, maybe), then closes
                    received.append((await client.recv_close())[0])
            await ws_tools.wait_until(lambda: server.pending_websockets == 0)
            # the server is alive and well for the next client
            async with await ws_tools.RawClient.connect(server) as again:
                await again.send_text("still here")
                assert await again.recv_frame() == (1, b"still here")
            await ws_tools.wait_until(lambda: server.pending_websockets == 0)
            await ws_tools.wait_until(lambda: not server._connections)  # no connection task left behind

    anyio.run(main, backend=backend)
    assert received == ([] if sent_code is None else [sent_code])
    assert [code for code, _ in closes] == [handler_code, 1006]  # exactly one per connection
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records
    ]
