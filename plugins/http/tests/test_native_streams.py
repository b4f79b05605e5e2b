"""The backend fast paths behind ``native_listener``: anyio's stream contract over real loopback sockets.

On asyncio the accepted streams are ``rt_http.asyncio_streams.ProtocolStream``s, on trio
``rt_http.trio_streams.DirectSocketStream``s. The contract tests run on both backends; the tests of one
stream's own mechanics (asyncio's read and write buffers, trio's fairness checkpoints) on its backend only.
Every server test in this folder also runs over these streams. The asyncio stream also runs on uvloop
(``rt`` runs asyncio on uvloop when it is installed), whose transports are not asyncio's classes.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest

from rt_http import asyncio_streams
from rt_http.asyncio_streams import ProtocolListener, ProtocolStream
from rt_http.transports import native_listener
from rt_http.trio_streams import DirectSocketListener, DirectSocketStream

# more 64 KiB chunks than loopback's kernel buffers hold (a few MiB), so a send() that never waits ends the test
_MOST_CHUNKS = 1000
asyncio_only = pytest.mark.parametrize(
    "anyio_backend", ["asyncio", ("asyncio", {"use_uvloop": True})], ids=["asyncio", "uvloop"]
)
trio_only = pytest.mark.parametrize("anyio_backend", ["trio"])
# what native_listener accepts on each backend
NATIVE = {"asyncio": (ProtocolListener, ProtocolStream), "trio": (DirectSocketListener, DirectSocketStream)}
pytestmark = pytest.mark.anyio
UVLOOP = ("asyncio", {"use_uvloop": True})


@pytest.fixture(params=["asyncio", "uvloop", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """asyncio, asyncio on uvloop, and trio."""
    return UVLOOP if request.param == "uvloop" else request.param


def name(backend: Any) -> str:
    return backend if isinstance(backend, str) else backend[0]


async def test_uvloop_is_running_when_asked_for(anyio_backend: Any) -> None:
    import asyncio

    import sniffio

    if sniffio.current_async_library() == "asyncio":
        loop_module = type(asyncio.get_running_loop()).__module__
        assert loop_module.startswith("uvloop") == (anyio_backend == UVLOOP)


async def _pair(backend: str) -> tuple[Any, anyio.abc.SocketStream, Any]:
    """A listener, a client stream (anyio's own) and the accepted server stream (ours)."""
    listener = native_listener(await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0))
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    client = await anyio.connect_tcp("127.0.0.1", port)
    server = await listener.listeners[0].accept()
    assert isinstance(server, NATIVE[backend][1])
    return listener, client, server


@pytest.fixture
async def pair(anyio_backend: Any) -> AsyncIterator[tuple[anyio.abc.SocketStream, Any]]:
    listener, client, server = await _pair(name(anyio_backend))
    try:
        yield client, server
    finally:
        await client.aclose()
        await server.aclose()
        await listener.aclose()


@contextlib.asynccontextmanager
async def counting_turns() -> AsyncIterator[Callable[[], int]]:
    """A task that counts its turns while the block runs: how often the code under test let others run."""
    turns = 0

    async def ticker() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        await anyio.sleep(0.01)  # the ticker is running
        yield lambda: turns
        tg.cancel_scope.cancel()


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


async def test_native_listener(anyio_backend: Any) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    try:
        native = native_listener(listener)
        assert all(isinstance(inner, NATIVE[name(anyio_backend)][0]) for inner in native.listeners)
    finally:
        await listener.aclose()


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
        # one 64 KiB window at most (it was 256 KiB plus a read): what a request body no handler reads may hold
        assert protocol.buffered <= 64 * 1024 == asyncio_streams._READ_HIGH
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
    """Send until send() waits (nobody reads): the kernel's buffers are full and the transport holds more.

    The wait is seen (``drain_waiter``), not guessed from time: a time limit could cancel a loaded machine's
    sends before the buffers are full."""
    sent = 0

    async def fill() -> None:
        nonlocal sent
        for _ in range(_MOST_CHUNKS):
            sent += 65536  # before the await: a send() cancelled while it waits has written its bytes
            await server.send(b"y" * 65536)
        pytest.fail("send() never waited although nobody read")

    with anyio.fail_after(30):  # only bounds a hang
        async with anyio.create_task_group() as tg:
            tg.start_soon(fill)
            while server._protocol.drain_waiter is None:
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
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


async def test_unix_listener(tmp_path: Any, anyio_backend: Any) -> None:
    path = str(tmp_path / "s.sock")
    listener = native_listener(await anyio.create_unix_listener(path))
    assert isinstance(listener, NATIVE[name(anyio_backend)][0])
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


async def test_send_waits_for_a_peer_that_stops_reading_and_resumes(pair: Any) -> None:
    """A peer that does not read fills the kernel's buffers: send() then waits (no buffer of ours grows),
    the wait can be cancelled, and writing works again once the peer reads."""
    client, server = pair
    chunk = b"w" * 65536
    with anyio.move_on_after(1) as scope:
        for _ in range(_MOST_CHUNKS):
            await server.send(chunk)
    assert scope.cancelled_caught, "send() never waited although nobody read"
    tail = b"<end>"

    async def read_to_the_end() -> None:
        received = b""
        while not received.endswith(tail):
            received = (received + await client.receive())[-len(tail) :]

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_to_the_end)
            await server.send(tail)


async def test_a_peer_that_floods_cannot_starve_other_tasks(pair: Any) -> None:
    """Reads that never have to wait still yield every few operations (anyio's own streams yield on every
    one): with all the data already there, a reader that never yielded would run 192 reads without letting
    another task run once."""
    client, server = pair
    payload = b"f" * (192 * 1024)
    with anyio.fail_after(5):
        await client.send(payload)  # loopback buffers hold it all: every read below finds data at once
    await anyio.sleep(0.05)  # (asyncio: the transport has handed it to the stream)
    reads = received = 0
    async with counting_turns() as turns:
        before = turns()
        while received < len(payload):
            received += len(await server.receive(1024))
            reads += 1
        during = turns() - before
    assert reads >= len(payload) // 1024
    assert during >= reads // 32  # it yields every 16; never yielding would give none (or one)


@trio_only
async def test_a_short_read_then_waits_without_missing_data(pair: Any) -> None:
    """After a short read the next receive() waits for readability first: data that arrived in between,
    or arrives later, is still delivered."""
    client, server = pair
    await client.send(b"one")
    assert await server.receive() == b"one"
    assert server._drained
    await client.send(b"two")  # already there when receive() starts waiting
    with anyio.fail_after(5):
        assert await server.receive() == b"two"

    async def later() -> None:
        await anyio.sleep(0.05)
        await client.send(b"three")

    async with anyio.create_task_group() as tg:
        tg.start_soon(later)
        with anyio.fail_after(5):
            assert await server.receive() == b"three"


@trio_only
async def test_closing_wakes_a_writer_waiting_on_a_stalled_peer(pair: Any) -> None:
    client, server = pair

    async def fill() -> None:
        for _ in range(_MOST_CHUNKS):
            await server.send(b"z" * 65536)

    with anyio.fail_after(5):
        raised = await _blocked_then_closed(fill, server.aclose)  # one writer at a time
    assert raised == anyio.ClosedResourceError


async def test_a_cancelled_accept_keeps_the_pending_connection() -> None:
    """accept() in a cancelled scope raises before it takes a connection: the next accept() gets it.
    (asyncio's sock_accept() took it and then dropped it; a checkpoint after trio's accept() did too.)"""
    listener = native_listener(await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0))
    inner = listener.listeners[0]
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    try:
        async with await anyio.connect_tcp("127.0.0.1", port) as client:  # waiting in the backlog
            with anyio.CancelScope() as scope:
                scope.cancel()
                await inner.accept()
            assert scope.cancelled_caught
            with anyio.fail_after(5):
                async with await inner.accept() as server:
                    await client.send(b"still here")
                    assert await server.receive() == b"still here"
    finally:
        await listener.aclose()


async def test_operations_that_never_wait_still_yield_and_a_cancellation_loses_no_data() -> None:
    """A peer that reads as fast as we write (a thread here) never makes send() wait, and data already in
    the kernel never makes receive() wait: every few operations they yield all the same (a ticker runs,
    a cancellation arrives), and they yield before taking or writing anything, so nothing is lost."""
    import threading

    listener = native_listener(await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0))
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    peer = socket.create_connection(("127.0.0.1", port))
    received = bytearray()

    def read_all() -> None:
        while chunk := peer.recv(65536):
            received.extend(chunk)

    reader = threading.Thread(target=read_all)
    try:
        server = await listener.listeners[0].accept()
        reader.start()
        async with counting_turns() as turns:
            before = turns()
            for _ in range(320):
                await server.send(b"s" * 64)  # small: the kernel always takes it at once
            during = turns() - before
        assert during >= 320 // 32

        sent = 320 * 64
        with anyio.CancelScope() as scope:  # already cancelled: sends go on only until a checkpoint
            scope.cancel()
            for _ in range(100):
                await server.send(b"c" * 64)
                sent += 64
        assert scope.cancelled_caught and sent < 320 * 64 + 100 * 64

        peer.sendall(bytes(range(200)))  # now the other way: all of it is in the kernel before we read
        got = bytearray()
        for _ in range(5000):  # attempts, not a deadline: the cancelled scopes below absorb a time-out
            if len(got) >= 200:
                break
            with anyio.CancelScope() as scope:
                scope.cancel()
                while True:
                    got += await server.receive(1)  # until the checkpoint raises
            await anyio.sleep(0.001)
        assert bytes(got) == bytes(range(200))  # nothing read was lost to a cancellation
        await server.aclose()
        reader.join(5)
        assert len(received) == sent  # what send() reported as sent, no more and no less
    finally:
        peer.close()
        await listener.aclose()


# --- the client's side: native_connect ----------------------------------------------------------------------


async def test_native_connect_gives_the_clients_the_same_streams(anyio_backend: Any) -> None:
    from rt_http.transports import native_connect

    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        client = await native_connect("127.0.0.1", port)
        try:
            assert isinstance(client, NATIVE[name(anyio_backend)][1])
            assert client.extra(anyio.abc.SocketAttribute.remote_port) == port
            raw = client.extra(anyio.abc.SocketAttribute.raw_socket)
            assert raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)  # small frames go out at once
            server = await listener.listeners[0].accept()
            async with server:
                await client.send(b"ping")
                assert await server.receive() == b"ping"
                await server.send(b"pong")
                assert await client.receive() == b"pong"
                await server.aclose()
                with pytest.raises(anyio.EndOfStream):
                    await client.receive()
        finally:
            await client.aclose()


async def test_native_connect_refused_is_an_os_error(anyio_backend: Any) -> None:
    from rt_http.transports import native_connect

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    with pytest.raises(OSError):
        await native_connect("127.0.0.1", port)


@trio_only
async def test_trio_connect_tries_the_next_address_after_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name with two addresses, the first refusing (nothing listens on 127.0.0.2): the second is used.
    (On asyncio, ``loop.create_connection`` does this itself.) When every address fails, all are named."""
    from rt_http import trio_streams

    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)

        async def two_addresses(host: str, port: int, **kwargs: Any) -> list[Any]:
            assert host == "two.example"
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
                for address in ("127.0.0.2", "127.0.0.1")
            ]

        monkeypatch.setattr(trio_streams.anyio, "getaddrinfo", two_addresses)
        client = await trio_streams.connect("two.example", port)
        assert client.extra(anyio.abc.SocketAttribute.remote_address) == ("127.0.0.1", port)
        await client.aclose()
    with pytest.raises(
        OSError, match=r"all connection attempts to two.example:\d+ failed: .*127.0.0.2.*127.0.0.1"
    ):
        await trio_streams.connect("two.example", port)


@trio_only
async def test_trio_connect_names_ipv6_addresses_in_brackets_and_an_empty_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rt_http import trio_streams

    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
    answers: list[Any] = [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0))]

    async def resolve(host: str, port: int, **kwargs: Any) -> list[Any]:
        return answers

    monkeypatch.setattr(trio_streams.anyio, "getaddrinfo", resolve)
    with pytest.raises(OSError, match=rf"attempts to \[::1\]:{port} failed: \[::1\]:{port}: ") as info:
        await trio_streams.connect("::1", port)
    assert info.value.errno is not None
    answers = []
    with pytest.raises(OSError, match=rf"^no address to connect to for \[::1\]:{port}$"):
        await trio_streams.connect("::1", port)


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.002)


@asyncio_only
async def test_a_data_handler_takes_reads_in_the_callback_and_keeps_their_order(pair: Any) -> None:
    """The client's fast path: a read the handler takes never reaches receive(); one it leaves is buffered,
    and while anything is buffered the handler is not offered later reads (they would overtake it)."""
    client, server = pair
    taken: list[bytes] = []

    def handler(data: bytes) -> bool:
        if data.startswith(b"take"):
            taken.append(data)
            return True
        return False

    server.set_data_handler(handler)
    await client.send(b"take1")
    await _until(lambda: taken == [b"take1"])
    await client.send(b"keep")
    await _until(lambda: server._protocol.buffered == 4)
    await client.send(b"take2")  # buffered data is waiting: not offered, queued behind it
    await _until(lambda: server._protocol.buffered == 9)
    received = b""
    while len(received) < 9:
        received += await server.receive()
    assert received == b"keeptake2"
    await client.send(b"take3")  # nothing buffered any more: offered again
    await _until(lambda: taken == [b"take1", b"take3"])
    server.set_data_handler(None)
    await client.send(b"take4")
    assert await server.receive() == b"take4"
