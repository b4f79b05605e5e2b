"""Worker processes (``rt run --workers N`` and ``[serve] workers``) sharing one port, with the Redis broker
keeping pub/sub correct across them; SIGTERM closes every socket with 1001; a worker that dies comes back."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from rt.testing import clean_environ

pytestmark = pytest.mark.anyio
RELAY = Path(__file__).parent / "apps" / "relay.py"
LAUNCHERS = {
    "rt run --workers 2": ([sys.executable, "-m", "rt", "run", "--workers", "2", str(RELAY)], {}),
    "[serve] workers = 2": ([sys.executable, str(RELAY)], {"RT_SERVE_WORKERS": "2"}),
}


@contextlib.contextmanager
def supervisor(launcher: str, redis_url: str, backend: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    argv, extra = LAUNCHERS[launcher]
    environ = clean_environ({"RT_SERVE_BROKER": redis_url, "RT_BACKEND": backend, "PORT": "0", **extra})
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the supervisor's line comes first: workers start after it binds
        assert "listening on" in line, line
        yield process, int(line.split()[-1].rsplit(":", 1)[1].strip("/"))
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        process.communicate()


def stats(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10) as response:
        result: dict[str, Any] = json.load(response)
        return result


def worker_pids(port: int, tries: int = 40) -> set[int]:
    """The pids that answer on the port (each request is a new connection, spread by SO_REUSEPORT)."""
    pids: set[int] = set()
    for _ in range(tries):
        with contextlib.suppress(OSError):
            pids.add(stats(port)["pid"])
    return pids


def two_workers(port: int, without: int | None = None) -> set[int] | None:
    pids = worker_pids(port, 10)
    return pids if len(pids) == 2 and without not in pids else None


async def wait_for(predicate: Any, timeout: float = 20) -> Any:
    with anyio.fail_after(timeout):
        while True:
            with contextlib.suppress(OSError):
                result = await anyio.to_thread.run_sync(predicate)
                if result:
                    return result
            await anyio.sleep(0.05)


async def clients_on_every_worker(ws_client: Any, port: int, per_worker: int = 2) -> dict[int, list[Any]]:
    """Connect until each of the two workers holds ``per_worker`` clients (extra ones are closed)."""
    by_pid: dict[int, list[Any]] = {}
    with anyio.fail_after(30):
        while len(by_pid) < 2 or any(len(clients) < per_worker for clients in by_pid.values()):
            client = await ws_client.connect(port, "/?hello")
            pid = int((await client.recv()).split()[1])
            if len(by_pid.get(pid, [])) < per_worker:
                by_pid.setdefault(pid, []).append(client)
            else:
                await client.aclose()
    return by_pid


@pytest.mark.parametrize("launcher", list(LAUNCHERS))
async def test_two_workers_one_port_pubsub_through_redis(
    launcher: str, anyio_backend: str, redis_server: Any, ws_client: Any
) -> None:
    with supervisor(launcher, redis_server.url, anyio_backend) as (_, port):
        await wait_for(lambda: len(worker_pids(port, 10)) == 2)
        by_pid = await clients_on_every_worker(ws_client, port)
        clients = [client for group in by_pid.values() for client in group]
        try:
            await wait_for(lambda: redis_server.numsub("rt:room") == 2)  # one subscription per worker
            publishers = [group[0] for group in by_pid.values()]
            received: list[list[str]] = [[] for _ in clients]

            async def collect(client: Any, into: list[str]) -> None:
                with anyio.fail_after(30):
                    while len(into) < 100:
                        into.append(await client.recv())
                with anyio.move_on_after(0.5):
                    into.append(await client.recv())

            async def publish(client: Any, name: str) -> None:
                for n in range(50):
                    await client.send(f"room|{name}:{n}")

            async with anyio.create_task_group() as tg:
                for client, into in zip(clients, received, strict=True):
                    tg.start_soon(collect, client, into)
                for index, client in enumerate(publishers):
                    tg.start_soon(publish, client, f"w{index}")
        finally:
            for client in clients:
                await client.aclose()
    for got in received:
        assert sorted(got) == sorted(f"w{i}:{n}" for i in range(2) for n in range(50))  # exactly once
        for index in range(2):
            assert [m for m in got if m.startswith(f"w{index}:")] == [f"w{index}:{n}" for n in range(50)]


async def test_sigterm_closes_every_socket_with_1001(
    anyio_backend: str, redis_server: Any, ws_client: Any
) -> None:
    with supervisor("rt run --workers 2", redis_server.url, anyio_backend) as (process, port):
        await wait_for(lambda: len(worker_pids(port, 10)) == 2)
        by_pid = await clients_on_every_worker(ws_client, port, per_worker=1)
        clients = [client for group in by_pid.values() for client in group]
        try:
            process.send_signal(signal.SIGTERM)
            for client in clients:
                with anyio.fail_after(20):
                    opcode, payload = await client.recv_frame()
                assert opcode == 0x8 and struct.unpack("!H", payload[:2])[0] == 1001
            assert await anyio.to_thread.run_sync(lambda: process.wait(timeout=20)) == 0
        finally:
            for client in clients:
                await client.aclose()
    for pid in by_pid:
        with pytest.raises(ProcessLookupError):  # the workers are gone too (they were our grandchildren)
            os.kill(pid, 0)


async def test_a_worker_that_dies_is_restarted(anyio_backend: str, redis_server: Any) -> None:
    with supervisor("rt run --workers 2", redis_server.url, anyio_backend) as (process, port):
        first = await wait_for(lambda: two_workers(port))
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        survivors = first - {victim}
        second = await wait_for(lambda: two_workers(port, without=victim))
        assert survivors < second  # the other worker kept serving; a new one took the dead one's place
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert f"(pid {victim}) exited with code -9; restarting it" in err
