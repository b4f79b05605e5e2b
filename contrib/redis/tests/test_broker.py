"""The Redis broker in one process: two servers, each with its own broker, against a real redis-server.

Two servers in one process talk only through Redis (each broker has its own origin), exactly as two
processes would; test_processes.py does the same with real processes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import rt
from rt_redis.broker import RedisBroker

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def relay(broker: Any) -> AsyncIterator[Any]:
    """A server whose sockets subscribe to ``?topics=a,b`` and publish ``topic|text`` with server.publish."""

    def fetch(req: Any, server: Any) -> Any:
        topics = (req.query.get("topics") or "room").split(",")
        return None if server.upgrade(req, data={"topics": topics}) else rt.Response("no", status=400)

    def open_(ws: Any) -> None:
        for topic in ws.data["topics"]:
            ws.subscribe(topic)

    def message(ws: Any, msg: str) -> None:
        topic, _, text = msg.partition("|")
        server.publish(topic, text)

    server = rt.serve(fetch=fetch, websocket={"open": open_, "message": message}, port=0, broker=broker)
    async with server:
        yield server


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


async def numsub(redis_server: Any, channel: str) -> int:
    return await anyio.to_thread.run_sync(redis_server.numsub, channel)


async def wait_numsub(redis_server: Any, channel: str, count: int) -> None:
    with anyio.fail_after(10):
        while await numsub(redis_server, channel) != count:
            await anyio.sleep(0.02)


async def collect(client: Any, count: int, into: list[str], timeout: float = 10) -> None:
    with anyio.fail_after(timeout):
        for _ in range(count):
            into.append(await client.recv())


async def nothing_more(client: Any, wait: float = 0.3) -> None:
    with anyio.move_on_after(wait):
        extra = await client.recv()
        raise AssertionError(f"an extra message arrived: {extra!r}")


async def test_every_message_once_to_every_subscriber_in_order(
    rt_kernel: Any, redis_server: Any, ws_client: Any
) -> None:
    broker_a, broker_b = RedisBroker(redis_server.url), RedisBroker(redis_server.url)
    async with relay(broker_a) as a, relay(broker_b) as b:
        await wait_until(lambda: broker_a.connected and broker_b.connected)
        clients = [
            await ws_client.connect(a.port),
            await ws_client.connect(a.port),
            await ws_client.connect(b.port),
        ]
        try:
            await wait_numsub(redis_server, "rt:room", 2)  # one subscription per process, not per socket
            for n in range(30):
                await clients[0].send(f"room|a{n}")
                await clients[2].send(f"room|b{n}")
            received: list[list[str]] = [[], [], []]
            async with anyio.create_task_group() as tg:
                for client, into in zip(clients, received, strict=True):
                    tg.start_soon(collect, client, 60, into)
            for client in clients:
                await nothing_more(client)
        finally:
            for client in clients:
                await client.aclose()
    expected_a, expected_b = [f"a{n}" for n in range(30)], [f"b{n}" for n in range(30)]
    for got in received:
        assert sorted(got) == sorted(expected_a + expected_b)  # exactly once each
        assert [m for m in got if m[0] == "a"] == expected_a  # order per publisher
        assert [m for m in got if m[0] == "b"] == expected_b
    assert (
        broker_a.stats.echoes == 30 and broker_b.stats.echoes == 30
    )  # own messages came back and were skipped
    assert broker_a.stats.received == 30 and broker_b.stats.received == 30


async def test_subscribes_on_redis_only_while_a_local_socket_listens(
    rt_kernel: Any, redis_server: Any, ws_client: Any
) -> None:
    broker = RedisBroker(redis_server.url)
    async with relay(broker) as server:
        await wait_until(lambda: broker.connected)
        assert await numsub(redis_server, "rt:news") == 0
        first = await ws_client.connect(server.port, "/?topics=news")
        await wait_numsub(redis_server, "rt:news", 1)
        second = await ws_client.connect(server.port, "/?topics=news,sport")
        await wait_numsub(redis_server, "rt:sport", 1)
        assert await numsub(redis_server, "rt:news") == 1
        await first.aclose()
        await wait_until(lambda: server.subscriber_count("news") == 1)
        await anyio.sleep(0.1)
        assert await numsub(redis_server, "rt:news") == 1  # the second socket still listens
        await second.aclose()
        await wait_numsub(redis_server, "rt:news", 0)
        await wait_numsub(redis_server, "rt:sport", 0)


async def test_return_values_count_local_delivery(rt_kernel: Any, redis_server: Any, ws_client: Any) -> None:
    broker_a, broker_b = RedisBroker(redis_server.url), RedisBroker(redis_server.url)
    async with relay(broker_a) as a, relay(broker_b) as b:
        await wait_until(lambda: broker_a.connected and broker_b.connected)
        remote = await ws_client.connect(b.port)
        try:
            await wait_numsub(redis_server, "rt:room", 1)
            assert a.subscriber_count("room") == 0
            assert a.publish("room", "hello") == 0  # nobody here took it ...
            with anyio.fail_after(10):
                assert await remote.recv() == "hello"  # ... and it still reached the other process
            assert b.publish("room", "héllo") == len("héllo".encode())  # a local taker: the payload length
            assert await remote.recv() == "héllo"
        finally:
            await remote.aclose()


async def test_a_message_over_the_limit_is_refused(rt_kernel: Any, redis_server: Any, ws_client: Any) -> None:
    broker = RedisBroker(redis_server.url, max_message_bytes=1000)
    async with relay(broker) as server:
        await wait_until(lambda: broker.connected)
        client = await ws_client.connect(server.port)
        try:
            with pytest.raises(ValueError, match="1001 bytes is over the broker's limit of 1000 bytes"):
                server.publish("room", b"x" * 1001)
            assert server.publish("room", "y" * 1000) == 1000
            assert await client.recv() == "y" * 1000  # the refused one was not delivered locally either
        finally:
            await client.aclose()
    assert broker.stats.published == 1


async def test_redis_restarted_mid_stream(
    rt_kernel: Any, redis_server: Any, ws_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rt.redis")
    broker_a, broker_b = RedisBroker(redis_server.url), RedisBroker(redis_server.url)
    async with relay(broker_a) as a, relay(broker_b) as b:
        await wait_until(lambda: broker_a.connected and broker_b.connected)
        local, remote = await ws_client.connect(a.port), await ws_client.connect(b.port)
        got_local: list[str] = []
        got_remote: list[str] = []
        try:
            await wait_numsub(redis_server, "rt:room", 2)
            sent = 0

            async def publish_for(seconds: float) -> None:
                nonlocal sent
                with anyio.move_on_after(seconds):
                    while True:
                        assert a.publish("room", f"m{sent}") > 0  # local delivery never stops
                        sent += 1
                        await anyio.sleep(0.002)

            async def receive(client: Any, into: list[str]) -> None:
                while True:
                    into.append(await client.recv())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive, local, got_local)
                tg.start_soon(receive, remote, got_remote)
                await publish_for(0.3)
                await anyio.to_thread.run_sync(redis_server.kill)
                await publish_for(0.3)  # Redis is down
                # and until a publish found it down (a loaded machine can take a while to see it)
                with anyio.fail_after(30):
                    while broker_a.stats.dropped_unreachable == 0:
                        await publish_for(0.05)
                await anyio.to_thread.run_sync(redis_server.start)
                await wait_until(lambda: broker_a.connected and broker_b.connected)
                await wait_numsub(redis_server, "rt:room", 2)  # re-subscribed after the restart
                before_restart = sent
                await publish_for(0.3)
                with anyio.fail_after(10):
                    while len(got_local) < sent or not got_remote or got_remote[-1] != f"m{sent - 1}":
                        await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
        finally:
            await local.aclose()
            await remote.aclose()
    assert got_local == [f"m{n}" for n in range(sent)]  # every one, in order, once
    numbers = [int(m[1:]) for m in got_remote]
    assert numbers == sorted(set(numbers))  # in order, never twice
    assert set(range(before_restart, sent)) <= set(numbers)  # everything after the reconnection crossed
    assert len(numbers) < sent  # some were published while Redis was down ...
    stats = broker_a.stats
    assert stats.dropped_unreachable + stats.unconfirmed >= sent - len(numbers) > 0  # ... and were counted
    assert stats.connects == 2
    messages = [record.getMessage() for record in caplog.records]
    assert any("reached local subscribers only" in m for m in messages), messages  # ... and logged
    assert any("reconnected; 1 topics re-subscribed" in m for m in messages), messages


async def test_a_stalled_redis_never_blocks_the_loop(
    rt_kernel: Any, redis_server: Any, ws_client: Any
) -> None:
    broker_a = RedisBroker(redis_server.url, max_pending_bytes=200_000)
    broker_b = RedisBroker(redis_server.url)
    async with relay(broker_a) as a, relay(broker_b) as b:
        await wait_until(lambda: broker_a.connected and broker_b.connected)
        local, remote = await ws_client.connect(a.port), await ws_client.connect(b.port)
        try:
            await wait_numsub(redis_server, "rt:room", 2)
            redis_server.pause()  # SIGSTOP: connections stay open, nothing is read
            try:
                payload = "z" * 20_000
                with anyio.fail_after(10):  # were any call waiting on Redis, this would hang
                    for n in range(400):  # 8 MB: far past the socket buffers and max_pending_bytes
                        assert a.publish("room", f"{n}:{payload}") > 0
                        if n % 20 == 0:
                            await anyio.lowlevel.checkpoint()
                    for n in range(400):
                        assert (await local.recv()).startswith(f"{n}:")
                assert broker_a.stats.dropped_backlog > 0
            finally:
                redis_server.resume()
            a.publish("room", "after")
            with anyio.fail_after(10):
                while (await remote.recv()) != "after":
                    pass
        finally:
            await local.aclose()
            await remote.aclose()
