"""Two and three real rt server processes sharing a real redis-server: clients on each get every message
exactly once, in each publisher's order; Redis killed and restarted mid-stream. Servers run on asyncio and
on trio (the process backend follows the ``anyio_backend`` parameter)."""

from __future__ import annotations

import contextlib
import json
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


class Process:
    def __init__(self, redis_url: str, backend: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, str(RELAY)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_environ({"RT_SERVE_BROKER": redis_url, "RT_BACKEND": backend, "PORT": "0"}),
        )
        assert self.popen.stdout is not None
        line = self.popen.stdout.readline()  # "rt.serve listening on http://127.0.0.1:PORT/"
        if "listening on" not in line:
            self.popen.kill()
            raise AssertionError(line + self.popen.communicate()[1])
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "stats", timeout=10) as response:
            result: dict[str, Any] = json.load(response)
            return result

    def stop(self) -> str:
        """Terminate; the process's stderr (its log)."""
        self.popen.terminate()
        try:
            _, err = self.popen.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            _, err = self.popen.communicate()
        return err


@contextlib.contextmanager
def processes(count: int, redis_url: str, backend: str) -> Iterator[list[Process]]:
    started: list[Process] = []
    try:
        for _ in range(count):
            started.append(Process(redis_url, backend))
        yield started
    finally:
        for process in started:
            process.stop()


async def wait_for(predicate: Any, timeout: float = 15) -> None:
    with anyio.fail_after(timeout):
        while not await anyio.to_thread.run_sync(predicate):
            await anyio.sleep(0.02)


@pytest.mark.parametrize("count", [2, 3])
async def test_every_message_exactly_once_in_order_across_processes(
    count: int, anyio_backend: str, redis_server: Any, ws_client: Any
) -> None:
    per_publisher = 100
    with processes(count, redis_server.url, anyio_backend) as servers:
        clients = [await ws_client.connect(server.port) for server in servers for _ in range(2)]
        try:
            await wait_for(lambda: redis_server.numsub("rt:room") == count)
            total = count * per_publisher
            received: list[list[str]] = [[] for _ in clients]

            async def collect(client: Any, into: list[str]) -> None:
                with anyio.fail_after(30):
                    while len(into) < total:
                        into.append(await client.recv())
                with anyio.move_on_after(0.5):  # and nothing after: no duplicates arrive late
                    into.append(await client.recv())

            async def publish(client: Any, publisher: int) -> None:
                for n in range(per_publisher):
                    await client.send(f"room|p{publisher}:{n}")

            async with anyio.create_task_group() as tg:
                for client, into in zip(clients, received, strict=True):
                    tg.start_soon(collect, client, into)
                for publisher in range(count):  # the first client of each process publishes
                    tg.start_soon(publish, clients[2 * publisher], publisher)
        finally:
            for client in clients:
                await client.aclose()
        stats = [server.stats() for server in servers]
    expected = {f"p{p}:{n}" for p in range(count) for n in range(per_publisher)}
    for got in received:
        assert len(got) == len(expected) and set(got) == expected  # every message, exactly once
        for publisher in range(count):
            mine = [int(m.split(":")[1]) for m in got if m.startswith(f"p{publisher}:")]
            assert mine == list(range(per_publisher))  # in the publisher's order
    for each in stats:
        assert each["echoes"] == per_publisher  # Redis echoed each process's own messages; they were skipped
        assert each["received"] == (count - 1) * per_publisher
        assert each["dropped_unreachable"] == each["dropped_backlog"] == each["unconfirmed"] == 0


async def test_redis_killed_and_restarted_mid_stream(
    anyio_backend: str, redis_server: Any, ws_client: Any
) -> None:
    with processes(2, redis_server.url, anyio_backend) as (a, b):
        publisher = await ws_client.connect(a.port, "/?topics=other")
        local, remote = await ws_client.connect(a.port), await ws_client.connect(b.port)
        got_local: list[str] = []
        got_remote: list[str] = []
        sent = 0
        try:
            await wait_for(lambda: redis_server.numsub("rt:room") == 2)

            async def publish_for(seconds: float) -> None:
                nonlocal sent
                with anyio.move_on_after(seconds):
                    while True:
                        await publisher.send(f"room|m{sent}")
                        sent += 1
                        await anyio.sleep(0.003)

            async def receive(client: Any, into: list[str]) -> None:
                while True:
                    into.append(await client.recv())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive, local, got_local)
                tg.start_soon(receive, remote, got_remote)
                await publish_for(0.5)
                await anyio.to_thread.run_sync(redis_server.kill)
                await publish_for(0.5)  # Redis is down: process a still delivers locally
                # and until a publish found it down (a loaded machine can take a while to see it)
                with anyio.fail_after(30):
                    while (await anyio.to_thread.run_sync(a.stats))["dropped_unreachable"] == 0:
                        await publish_for(0.05)
                await anyio.to_thread.run_sync(redis_server.start)
                await wait_for(lambda: a.stats()["connects"] == 2 and b.stats()["connects"] == 2)
                await wait_for(lambda: redis_server.numsub("rt:room") == 2)  # both re-subscribed
                after_restart = sent
                await publish_for(0.5)
                with anyio.fail_after(15):
                    while len(got_local) < sent or not got_remote or got_remote[-1] != f"m{sent - 1}":
                        await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
        finally:
            for client in (publisher, local, remote):
                await client.aclose()
        stats_a = a.stats()
        log_a = a.stop()
    assert got_local == [f"m{n}" for n in range(sent)]  # local delivery never stopped
    numbers = [int(m[1:]) for m in got_remote]
    assert numbers == sorted(set(numbers))  # in order, never twice
    assert set(range(after_restart, sent)) <= set(numbers)  # reconnected and re-subscribed
    missed = sent - len(numbers)
    assert missed > 0  # published while Redis was down ...
    assert stats_a["dropped_unreachable"] + stats_a["unconfirmed"] >= missed  # ... counted ...
    assert "reached local subscribers only" in log_a  # ... and logged
    assert "reconnected; 2 topics re-subscribed" in log_a  # room, and the publisher's own topic
