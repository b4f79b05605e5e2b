"""The listener transports registered through ``rt_register_transports``: tcp, unix, tls and memory.

Each is a thin adapter over anyio's listeners, so the same server code runs on asyncio and trio. The memory
transport connects a client byte stream to the server inside one process, for tests that need no sockets.
The tcp, unix and tls listeners accept through :func:`native_listener` (see ``asyncio_streams`` and
``trio_streams``).
"""

from __future__ import annotations

import contextlib
import ssl
import sys
from typing import Any

import anyio
from anyio.abc import ByteStream, Listener, SocketListener
from anyio.streams.stapled import MultiListener
from anyio.streams.tls import TLSListener

from rt.interfaces import ListenOptions


def local_port(listener: Any) -> int:
    """The port a tcp or tls listener is bound to (the one chosen by the system for port 0)."""
    inner = getattr(listener, "listener", listener)  # TLSListener wraps the TCP one
    listeners = getattr(inner, "listeners", [inner])
    return int(listeners[0].extra(anyio.abc.SocketAttribute.local_port))


def native_listener(listener: Listener[ByteStream]) -> Listener[ByteStream]:
    """The one switch to backend-specific code: accepted sockets become streams that skip a layer which
    bench/ws.py measured to cost most of a WebSocket round trip. On asyncio, streams built on
    ``asyncio.BufferedProtocol`` (``rt_http.asyncio_streams``); on trio, streams that call the non-blocking
    socket directly (``rt_http.trio_streams``). Any other backend keeps anyio's own streams."""
    # a backend that is not imported cannot be running: do not import it just to ask
    if "asyncio" in sys.modules:
        from rt_http import asyncio_streams

        if asyncio_streams.running_on_asyncio():
            return _wrap_socket_listeners(listener, asyncio_streams.ProtocolListener)
    if "trio" in sys.modules:
        from rt_http import trio_streams

        if trio_streams.running_on_trio():
            return _wrap_socket_listeners(listener, trio_streams.DirectSocketListener)
    return listener


async def native_connect(host: str, port: int) -> ByteStream:
    """A TCP connection for the client, on the same streams :func:`native_listener` gives the server: the
    other side of that one switch. Any other backend gets anyio's ``connect_tcp``."""
    if "asyncio" in sys.modules:
        from rt_http import asyncio_streams

        if asyncio_streams.running_on_asyncio():
            return await asyncio_streams.connect(host, port)
    if "trio" in sys.modules:
        from rt_http import trio_streams

        if trio_streams.running_on_trio():
            return await trio_streams.connect(host, port)
    return await anyio.connect_tcp(host, port)


def _wrap_socket_listeners(listener: Any, wrap: Any) -> Listener[ByteStream]:
    """``listener`` with every socket listener in it (a TCP listener is a MultiListener of one per address
    family) replaced by ``wrap(socket_listener)``; any other listener unchanged."""
    if isinstance(listener, MultiListener):
        return MultiListener([_wrap_socket_listeners(inner, wrap) for inner in listener.listeners])
    if isinstance(listener, SocketListener):
        wrapped: Listener[ByteStream] = wrap(listener)
        return wrapped
    plain: Listener[ByteStream] = listener
    return plain


def host_for_url(hostname: str) -> str:
    """``hostname`` as a URL's host: an IPv6 address in brackets (also for the server's workers' URL)."""
    return f"[{hostname}]" if ":" in hostname else hostname


class TcpTransport:
    name = "tcp"
    scheme = "http"

    async def listen(self, options: ListenOptions) -> Listener[ByteStream]:
        listener = await anyio.create_tcp_listener(
            local_host=options.hostname,
            local_port=options.port,
            backlog=options.backlog,
            reuse_port=options.reuse_port,
        )
        return native_listener(listener)

    def url(self, listener: Listener[ByteStream], options: ListenOptions) -> str:
        return f"{self.scheme}://{host_for_url(options.hostname)}:{local_port(listener)}/"


class TlsTransport(TcpTransport):
    """TCP with TLS; the handshake runs in the connection's own task so a slow client blocks no one else."""

    name = "tls"
    scheme = "https"

    async def listen(self, options: ListenOptions) -> Listener[ByteStream]:
        if not isinstance(options.tls, ssl.SSLContext):
            raise TypeError("the tls transport needs tls=ssl.SSLContext (with a certificate chain loaded)")
        tcp = await super().listen(options)
        return TLSListener(tcp, options.tls, standard_compatible=False, handshake_timeout=10)


class UnixTransport:
    name = "unix"

    async def listen(self, options: ListenOptions) -> Listener[ByteStream]:
        if not options.unix:
            raise ValueError("the unix transport needs unix=<socket path>")
        return native_listener(await anyio.create_unix_listener(options.unix, backlog=options.backlog))

    def url(self, listener: Listener[ByteStream], options: ListenOptions) -> str:
        return f"unix:{options.unix}"


class _MemoryByteStream(ByteStream):
    """One end of an in-process byte pipe (two bounded memory object streams)."""

    def __init__(self, send: Any, receive: Any, peer: str) -> None:
        self._send, self._receive, self.peer = send, receive, peer

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            data: bytes = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None
        return data

    async def send(self, item: bytes) -> None:
        try:
            await self._send.send(bytes(item))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def send_eof(self) -> None:
        await self._send.aclose()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_pipe(buffer: int = 16) -> tuple[ByteStream, ByteStream]:
    """A connected (client, server) pair of byte streams; each direction holds at most ``buffer`` writes."""
    c2s_send, c2s_receive = anyio.create_memory_object_stream[bytes](buffer)
    s2c_send, s2c_receive = anyio.create_memory_object_stream[bytes](buffer)
    return _MemoryByteStream(c2s_send, s2c_receive, "server"), _MemoryByteStream(
        s2c_send, c2s_receive, "memory"
    )


class MemoryListener(Listener[ByteStream]):
    """Accepts the server ends of pipes made by :meth:`connect`."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[ByteStream](64)

    async def connect(self) -> ByteStream:
        """Open a connection to the server; returns the client's end. ``ClosedResourceError`` once the
        listener is closed (and then no pipe is left behind)."""
        client, server = memory_pipe()
        try:
            await self._send.send(server)
        except BaseException as exc:
            await client.aclose()
            await server.aclose()
            if isinstance(exc, (anyio.BrokenResourceError, anyio.ClosedResourceError)):
                raise anyio.ClosedResourceError from None
            raise
        return client

    async def accept(self) -> ByteStream:
        return await self._receive.receive()

    async def serve(self, handler: Any, task_group: Any = None) -> None:
        async with contextlib.AsyncExitStack() as stack:
            if task_group is None:
                task_group = await stack.enter_async_context(anyio.create_task_group())
            while True:
                try:
                    stream = await self.accept()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                task_group.start_soon(handler, stream)

    async def aclose(self) -> None:
        """Close, and close the connections queued but never accepted: their clients see end-of-stream
        (as a TCP client whose connection sat in a closed listener's backlog sees a reset)."""
        await self._send.aclose()
        while True:
            try:
                queued = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            await queued.aclose()
        await self._receive.aclose()

    @property
    def extra_attributes(self) -> dict[Any, Any]:
        return {}


class MemoryTransport:
    name = "memory"

    async def listen(self, options: ListenOptions) -> Listener[ByteStream]:
        return MemoryListener()

    def url(self, listener: Listener[ByteStream], options: ListenOptions) -> str:
        return f"memory://{id(listener):x}/"


BUILTIN_TRANSPORTS = {
    "tcp": TcpTransport,
    "unix": UnixTransport,
    "tls": TlsTransport,
    "memory": MemoryTransport,
}
