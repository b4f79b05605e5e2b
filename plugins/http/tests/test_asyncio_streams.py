"""The asyncio fast path (rt_http.asyncio_streams): anyio's stream contract over real loopback sockets.

These tests run on asyncio only, because the module is the asyncio-specific code path; every server test in
this folder also runs over it on asyncio (and over anyio's own streams on trio). ``test_native_listener``
runs on both backends and shows that trio keeps anyio's listener untouched.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import pytest

from rt_http import asyncio_streams
from rt_http.asyncio_streams import ProtocolListener, ProtocolStream
from rt_http.transports import native_listener

# more 64 KiB chunks than loopback's kernel buffers hold (a few MiB), so a send() that never waits ends the test
_MOST_CHUNKS = 1000
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])
pytestmark = pytest.mark.anyio


async def _pair() -> tuple[Any, anyio.abc.SocketStream, ProtocolStream]:
    """A listener, a client stream (anyio's own) and the accepted server stream (ours)."""
    listener = native_listener(await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0))
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    client = await anyio.connect_tcp("127.0.0.1", port)
    server = await listener.listeners[0].accept()
    assert isinstance(server, ProtocolStream)
    return listener, client, server


@pytest.fixture
async def pair() -> AsyncIterator[tuple[anyio.abc.SocketStream, ProtocolStream]]:
    listener, client, server = await _pair()
    try:
        yield client, server
    finally:
        await client.aclose()
        await server.aclose()
        await listener.aclose()


async def _blocked_then_closed(call: Any, close: Any) -> type[BaseException] | None:
    """Park ``call()`` in a task, check a second concurrent ``call()`` is refused as busy (as anyio's
    streams and listeners do), run ``close()``, and return what the parked call raised."""
    raised: list[type[BaseException]] = []

    async def park() -> None:
        try:
            await call()
        except BaseException as exc:
            raised.append(type(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(park)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(anyio.BusyResourceError):
            await call()
        await close()
    return raised[0] if raised else None


async def test_native_listener(anyio_backend: str) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    try:
        native = native_listener(listener)
        if anyio_backend == "asyncio":
            assert all(isinstance(inner, ProtocolListener) for inner in native.listeners)
        else:
            assert native is listener
    finally:
        await listener.aclose()


@asyncio_only
async def test_round_trip_and_socket_attributes(pair: Any) -> None:
    client, server = pair
    await client.send(b"hello")
    assert await server.receive() == b"hello"
    await server.send(b"world")
    assert await client.receive() == b"world"
    client_port = client.extra(anyio.abc.SocketAttribute.local_port)
    assert server.extra(anyio.abc.SocketAttribute.remote_address) == ("127.0.0.1", client_port)
    assert server.extra(anyio.abc.SocketAttribute.remote_port) == client_port
    assert server.extra(anyio.abc.SocketAttribute.family) == socket.AF_INET
    raw = server.extra(anyio.abc.SocketAttribute.raw_socket)
    assert raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


@asyncio_only
async def test_receive_respects_max_bytes(pair: Any) -> None:
    client, server = pair
    await client.send(b"abcdefghij")
    with anyio.fail_after(5):
        received = await server.receive(4)
        while len(received) < 10:
            part = await server.receive(4)
            assert len(part) <= 4
            received += part
    assert received == b"abcdefghij"
    with pytest.raises(ValueError):
        await server.receive(0)


@asyncio_only
async def test_end_of_stream_after_buffered_data_and_half_close(pair: Any) -> None:
    client, server = pair
    await client.send(b"last words")
    await client.send_eof()
    with anyio.fail_after(5):
        assert await server.receive() == b"last words"
        with pytest.raises(anyio.EndOfStream):
            await server.receive()
        await server.send(b"still answering")  # our half stays open after the peer's EOF
        assert await client.receive() == b"still answering"


@asyncio_only
async def test_reset_by_peer_is_a_broken_resource(pair: Any) -> None:
    client, server = pair
    raw = client.extra(anyio.abc.SocketAttribute.raw_socket)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    await client.aclose()  # linger 0: an RST instead of a FIN
    with anyio.fail_after(5):
        with pytest.raises((anyio.BrokenResourceError, anyio.EndOfStream)) as caught:
            await server.receive()
        assert caught.type is anyio.BrokenResourceError
        with pytest.raises(anyio.BrokenResourceError):
            for _ in range(100):  # the first write after an RST may still be accepted by the kernel
                await server.send(b"x")
                await anyio.sleep(0.01)


@asyncio_only
async def test_closed_stream_raises_and_wakes_a_waiting_reader(pair: Any) -> None:
    client, server = pair
    raised = await _blocked_then_closed(server.receive, server.aclose)  # one reader at a time
    assert raised == anyio.ClosedResourceError
    with pytest.raises(anyio.ClosedResourceError):
        await server.send(b"x")
    with pytest.raises(anyio.ClosedResourceError):
        await server.receive()
    with anyio.fail_after(5):
        with pytest.raises(anyio.EndOfStream):
            await client.receive()


@asyncio_only
async def test_reading_pauses_while_the_reader_falls_behind(pair: Any) -> None:
    client, server = pair
    protocol = server._protocol
    payload = bytes(range(256)) * 8192  # 2 MiB, more than the kernel buffers plus our read limit

    async def flood() -> None:
        await client.send(payload)

    async with anyio.create_task_group() as tg:
        tg.start_soon(flood)
        with anyio.fail_after(5):
            while not protocol.reading_paused:
                await anyio.sleep(0.01)
        await anyio.sleep(0.1)  # were reading still on, the buffer would grow past the limit now
        assert protocol.buffered <= asyncio_streams._READ_HIGH + asyncio_streams._READ_SIZE
        received = bytearray()
        with anyio.fail_after(10):
            while len(received) < len(payload):
                received += await server.receive()
    assert received == payload
    assert not protocol.reading_paused


@asyncio_only
async def test_send_waits_for_a_peer_that_does_not_read(pair: Any) -> None:
    client, server = pair
    transport = server._transport
    chunk = b"x" * 65536
    sent = 0
    with anyio.move_on_after(1) as scope:
        for _ in range(_MOST_CHUNKS):  # ends when send() blocks: the kernel buffers and ours are full
            await server.send(chunk)
            sent += len(chunk)
            assert transport.get_write_buffer_size() <= asyncio_streams._WRITE_HIGH + len(chunk)
    assert scope.cancelled_caught, "send() never waited although nobody read"
    assert server._protocol.drain_waiter is None  # the cancelled wait cleaned up after itself
    received = 0
    with anyio.fail_after(10):
        while received < sent:
            received += len(await client.receive())
    await server.send(b"after")  # writing works again once the peer read


async def _fill(server: ProtocolStream) -> int:
    """Send until send() waits (nobody reads): the kernel's buffers are full and the transport holds more."""
    sent = 0
    with anyio.move_on_after(0.5) as scope:
        for _ in range(_MOST_CHUNKS):
            sent += 65536  # before the await: a send() cancelled while it waits has written its bytes
            await server.send(b"y" * 65536)
    assert scope.cancelled_caught, "send() never waited although nobody read"
    assert server._transport.get_write_buffer_size() > 0
    return sent


@asyncio_only
async def test_aclose_cuts_a_peer_that_never_reads(pair: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The socket is closed when aclose() returns: after the grace, a peer that never reads is cut."""
    client, server = pair
    monkeypatch.setattr(asyncio_streams, "_CLOSE_GRACE", 0.2)
    await _fill(server)
    with anyio.fail_after(5):
        await server.aclose()
    assert server._protocol.lost and server._transport.is_closing()
    assert server._protocol.lost_waiter is None


@asyncio_only
async def test_a_cancelled_aclose_cuts_at_once(pair: Any) -> None:
    """The server cancels the drain of its streams when it exits (default grace: 10 s)."""
    client, server = pair
    await _fill(server)
    with anyio.fail_after(5):
        with anyio.CancelScope() as scope:
            scope.cancel()
            await server.aclose()
    assert server._protocol.lost
    with pytest.raises(anyio.ClosedResourceError):
        await server.send(b"late")
    await server.aclose()  # a second close is a no-op


@asyncio_only
async def test_aclose_lets_a_reading_peer_receive_everything(pair: Any) -> None:
    """What send() accepted is delivered: aclose() waits for the transport to drain it, then EOF."""
    client, server = pair
    sent = await _fill(server)
    received = 0

    async def read_all() -> None:
        nonlocal received
        with pytest.raises(anyio.EndOfStream):
            while True:
                received += len(await client.receive())

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_all)
            await server.aclose()
            assert server._protocol.lost and server._protocol.error is None  # closed, not cut
    assert received == sent


@asyncio_only
async def test_listener_close_ends_a_pending_accept() -> None:
    listener = native_listener(await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0))
    inner = listener.listeners[0]
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    raised = await _blocked_then_closed(inner.accept, listener.aclose)  # one acceptor at a time
    assert raised == anyio.ClosedResourceError
    with pytest.raises(anyio.ClosedResourceError):
        await inner.accept()
    with pytest.raises(OSError):
        await anyio.connect_tcp("127.0.0.1", port)  # the port is closed


@asyncio_only
async def test_unix_listener(tmp_path: Any) -> None:
    path = str(tmp_path / "s.sock")
    listener = native_listener(await anyio.create_unix_listener(path))
    assert isinstance(listener, ProtocolListener)
    try:
        client = await anyio.connect_unix(path)
        server = await listener.accept()
        await client.send(b"over unix")
        assert await server.receive() == b"over unix"
        await server.send(b"back")
        assert await client.receive() == b"back"
        await client.aclose()
        with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
            await server.receive()
        await server.aclose()
    finally:
        await listener.aclose()
