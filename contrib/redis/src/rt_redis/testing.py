"""A real ``redis-server`` for tests (yours and rt's): on a free loopback port, no persistence, and the
faults a broker must survive: kill, restart on the same port, pause (SIGSTOP) and resume.

    server = RedisServer(tmp_path); server.start()      # server.url -> "redis://127.0.0.1:PORT/0"
    ...
    server.kill()

A missing ``redis-server`` raises (``apt-get install redis-server``): a test that needs Redis must not pass
without it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


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

        from rt_redis.broker import pack

        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(pack(*args))
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
