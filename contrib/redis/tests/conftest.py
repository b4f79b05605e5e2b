"""A real redis-server for the broker tests (Debian package ``redis-server``), on a free loopback port.

The tests start it themselves, with no persistence, and can kill, restart, stop (SIGSTOP) and resume it
to make the faults the broker must survive.
"""

from __future__ import annotations

import base64
import contextlib
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rt_redis.testing import RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.resume()
        server.kill()


class Client:
    """A small WebSocket client over anyio (text frames under 64 KiB and closes are all these tests need)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.buffer = b""

    @classmethod
    async def connect(cls, port: int, path: str = "/") -> Client:
        import anyio

        stream = await anyio.connect_tcp("127.0.0.1", port)
        client = cls(stream)
        key = base64.b64encode(os.urandom(16)).decode()
        await stream.send(
            f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        while b"\r\n\r\n" not in client.buffer:
            client.buffer += await stream.receive()
        head, client.buffer = client.buffer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head
        return client

    async def send(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        length = len(payload)
        header = (
            bytes((0x81, 0x80 | length)) if length < 126 else bytes((0x81, 0xFE)) + struct.pack("!H", length)
        )
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        await self.stream.send(header + mask + masked)

    async def _need(self, count: int) -> None:
        while len(self.buffer) < count:
            self.buffer += await self.stream.receive()

    async def recv_frame(self) -> tuple[int, bytes]:
        await self._need(2)
        opcode, length, offset = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F, 2
        if length == 126:
            await self._need(4)
            length, offset = struct.unpack("!H", self.buffer[2:4])[0], 4
        elif length == 127:
            await self._need(10)
            length, offset = struct.unpack("!Q", self.buffer[2:10])[0], 10
        await self._need(offset + length)
        payload, self.buffer = self.buffer[offset : offset + length], self.buffer[offset + length :]
        return opcode, payload

    async def recv(self) -> str:
        opcode, payload = await self.recv_frame()
        assert opcode == 0x1, (opcode, payload)
        return payload.decode()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.stream.aclose()


@pytest.fixture
def ws_client() -> type[Client]:
    return Client
