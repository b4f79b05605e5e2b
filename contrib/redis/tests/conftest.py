"""A real redis-server for the broker tests (Debian package ``redis-server``), on a free loopback port.

The tests start it themselves, with no persistence, and can kill, restart, stop (SIGSTOP) and resume it
to make the faults the broker must survive.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One redis-server process; ``restart`` brings it back on the same port."""

    def __init__(self, directory: Path) -> None:
        executable = shutil.which("redis-server")
        if executable is None:  # a missing dependency is an error, never a skip (.ci/apt-packages.txt has it)
            raise RuntimeError("redis-server is not installed: apt-get install redis-server")
        self.executable = executable
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.directory / "redis.log", "ab")  # noqa: SIM115 - handed to the process
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.command("PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"redis-server did not start: {(self.directory / 'redis.log').read_text()}"
                )
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.kill()
        self.start()

    def pause(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def command(self, *args: str) -> bytes:
        """Send one command, return the raw reply (enough for PING and PUBSUB NUMSUB)."""
        import hiredis

        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(hiredis.pack_command(args))
            reader = hiredis.Reader()
            raw = b""
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    raise OSError("redis closed the connection")
                raw += chunk
                reader.feed(chunk)
                if reader.gets() is not False:
                    return raw

    def numsub(self, channel: str) -> int:
        import hiredis

        reader = hiredis.Reader()
        reader.feed(self.command("PUBSUB", "NUMSUB", channel))
        reply = reader.gets()
        return int(reply[1])


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
