"""Hypothesis against the running server: random and mutated frames never crash it or leak a connection,
and every connection ends in exactly one close-handler call with a close code."""

from __future__ import annotations

import logging
import struct
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rt

FRAME = st.builds(
    lambda opcode, payload, fin, rsv, masked: (opcode, payload, fin, rsv, masked),
    st.sampled_from([0, 1, 2, 3, 8, 9, 10, 15]),
    st.binary(max_size=200)
    | st.sampled_from([b"\xff\xfe", struct.pack("!H", 1000), struct.pack("!H", 1006)]),
    st.booleans(),
    st.sampled_from([0, 0, 0, 0x40]),
    st.booleans() | st.just(True),
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frames=st.lists(FRAME, min_size=1, max_size=5), flip=st.integers(0, 10_000), mutate=st.booleans())
def test_random_frames_end_in_one_close_and_no_leak(
    rt_kernel: Any, ws_tools: Any, caplog: Any, backend: str, frames: list[Any], flip: int, mutate: bool
) -> None:
    caplog.set_level(logging.ERROR, logger="rt.serve")
    caplog.clear()
    closes: list[tuple[int, str]] = []

    def fetch(req: rt.Request, server: Any) -> Any:
        return None if server.upgrade(req) else rt.Response("no", status=400)

    handler = rt.WebSocketHandler(
        message=lambda ws, m: ws.send(m),
        max_payload_length=150,
        close=lambda ws, code, reason: closes.append((code, reason)),
    )

    async def main() -> None:
        async with rt.serve(fetch=fetch, websocket=handler, transport="memory") as server:
            client = await ws_tools.RawClient.connect(server)
            data = bytearray(
                b"".join(
                    ws_tools.mask_frame(op, payload, fin=fin, rsv=rsv, masked=masked)
                    for op, payload, fin, rsv, masked in frames
                )
            )
            if mutate:
                data[flip % len(data)] ^= 1 << (flip % 8)
            await client.stream.send(bytes(data))
            with anyio.move_on_after(0.2):  # drain whatever the server answers until it closes or goes quiet
                try:
                    while True:
                        await client.recv_frame()
                except (
                    anyio.EndOfStream,
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                    AssertionError,
                ):
                    pass
            await client.aclose()
            await ws_tools.wait_until(lambda: server.pending_websockets == 0)
            # the server is alive and well for the next client
            again = await ws_tools.RawClient.connect(server)
            await again.send_text("still here")
            assert await again.recv_frame() == (1, b"still here")
            await again.aclose()
            await ws_tools.wait_until(lambda: server.pending_websockets == 0)
            await ws_tools.wait_until(lambda: not server._connections)  # no connection task left behind

    anyio.run(main, backend=backend)
    assert len(closes) == 2  # one per connection, never zero, never twice
    assert all(isinstance(code, int) and (1000 <= code <= 1015 or 3000 <= code <= 4999) for code, _ in closes)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records
    ]
