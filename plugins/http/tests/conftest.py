"""Helpers shared by the rt-http tests: a server started for one test, and a raw WebSocket client.

The raw client speaks RFC 6455 by hand (masked frames, any bytes we like) so tests can send what well-behaved
clients never would; interop with real clients lives in test_interop.py.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import os
import struct
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from anyio.abc import ByteStream

import rt


@pytest.fixture(autouse=True)
def _collect_garbage() -> Any:
    """Collect garbage after each test so a leaked socket or stream warns in the test that leaked it."""
    yield
    gc.collect()


@pytest.fixture
def serve(rt_kernel: Any) -> Any:
    """``async with serve(**options) as server``: a started server on a free loopback port."""

    @contextlib.asynccontextmanager
    async def start(**options: Any) -> AsyncIterator[Any]:
        options.setdefault("port", 0)
        server = rt.serve(**options)
        async with server:
            yield server

    return start


def mask_frame(
    opcode: int,
    payload: bytes,
    *,
    fin: bool = True,
    rsv: int = 0,
    masked: bool = True,
    length_override: int | None = None,
) -> bytes:
    first = (0x80 if fin else 0) | rsv | opcode
    length = len(payload) if length_override is None else length_override
    mask_bit = 0x80 if masked else 0
    if length < 126:
        header = bytes((first, mask_bit | length))
    elif length < 65536:
        header = bytes((first, mask_bit | 126)) + struct.pack("!H", length)
    else:
        header = bytes((first, mask_bit | 127)) + struct.pack("!Q", length)
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class RawClient:
    """A minimal WebSocket client over any anyio byte stream.

    Close it: ``async with await RawClient.connect(server) as client:`` (or ``await client.aclose()``);
    a client dropped open leaks its socket or memory pipe, which the ResourceWarning check reports.
    """

    def __init__(self, stream: ByteStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.response_head = b""

    @classmethod
    async def connect(cls, server: Any, path: str = "/", extra: str = "") -> RawClient:
        if server.transport_name == "memory":
            stream: ByteStream = await server.listener.connect()
        else:
            stream = await anyio.connect_tcp("127.0.0.1", server.port)
        client = cls(stream)
        try:
            key = base64.b64encode(os.urandom(16)).decode()
            await stream.send(
                f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n".encode()
            )
            while b"\r\n\r\n" not in client.buffer:
                client.buffer += await stream.receive()
            client.response_head, client.buffer = client.buffer.split(b"\r\n\r\n", 1)
            assert client.response_head.startswith(b"HTTP/1.1 101"), client.response_head
        except BaseException:
            with anyio.CancelScope(shield=True):
                await client.aclose()
            raise
        return client

    async def __aenter__(self) -> RawClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def send(self, opcode: int, payload: bytes, **kw: Any) -> None:
        await self.stream.send(mask_frame(opcode, payload, **kw))

    async def send_text(self, text: str) -> None:
        await self.send(0x1, text.encode())

    async def _need(self, count: int) -> None:
        while len(self.buffer) < count:
            self.buffer += await self.stream.receive()

    async def recv_frame(self) -> tuple[int, bytes]:
        """(opcode, payload) of the next server frame; server frames are never masked."""
        await self._need(2)
        first, second = self.buffer[0], self.buffer[1]
        assert not second & 0x80, "server frames must not be masked"
        length, offset = second & 0x7F, 2
        if length == 126:
            await self._need(4)
            length, offset = struct.unpack("!H", self.buffer[2:4])[0], 4
        elif length == 127:
            await self._need(10)
            length, offset = struct.unpack("!Q", self.buffer[2:10])[0], 10
        await self._need(offset + length)
        payload = self.buffer[offset : offset + length]
        self.buffer = self.buffer[offset + length :]
        return first & 0x0F, payload

    async def recv_close(self, timeout: float = 5) -> tuple[int, str]:
        """Skip data frames until the close frame; (code, reason), 1005 for an empty body."""
        with anyio.fail_after(timeout):
            while True:
                opcode, payload = await self.recv_frame()
                if opcode == 0x8:
                    if not payload:
                        return 1005, ""
                    return struct.unpack("!H", payload[:2])[0], payload[2:].decode()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.stream.aclose()


def ws_url(server: Any, path: str = "/") -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.005)


@pytest.fixture
def ws_tools() -> Any:
    """The helpers above, for test modules (importlib import mode keeps conftest out of their imports)."""
    import types

    return types.SimpleNamespace(
        RawClient=RawClient, mask_frame=mask_frame, ws_url=ws_url, wait_until=wait_until
    )
