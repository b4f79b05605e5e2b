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
        self._started = False  # once started, the port is kept: restarts must come back on it

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart, on the same port); a first start whose free port was taken meanwhile by another
        process (the port is only probed, then bound by redis-server) tries another free port."""
        for _ in range(4):
            if self._start():
                return
            if self._started:
                break  # a restart comes back on its port or fails
            self.port = free_port()
        self._fail()

    def _fail(self) -> None:
        raise RuntimeError(f"redis-server did not start: {(self.directory / 'redis.log').read_text()}")

    def _start(self) -> bool:
        """True once it answers PING; False when it exited because its port was taken."""
        log_file = self.directory / "redis.log"
        logged = log_file.stat().st_size if log_file.exists() else 0
        log = open(log_file, "ab")  # noqa: SIM115 - handed to the process
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
        deadline = time.monotonic() + 60  # only bounds a hang: a loaded machine can be slow to start it
        while True:
            try:
                # the PONG must come from our process: another test run's redis-server may hold the port
                # probed free, and then ours fails its bind below
                if self.command("PING") == b"+PONG\r\n" and self._answers_as_ours():
                    self._started = True
                    return True
            except OSError:
                pass
            if self.process.poll() is not None:
                self.process.wait()
                with open(log_file, "rb") as logged_now:
                    logged_now.seek(logged)
                    if b"Address already in use" in logged_now.read():
                        return False
                self._fail()
            if time.monotonic() > deadline:
                self._fail()
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

    def _answers_as_ours(self) -> bool:
        assert self.process is not None
        pid = f"process_id:{self.process.pid}\r\n".encode()
        return self.process.poll() is None and pid in self.command("INFO", "server")

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
