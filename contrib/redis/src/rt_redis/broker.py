"""A Redis pub/sub broker for ``rt.serve``: ``publish`` reaches the subscribers of every server process.

Why not ``redis.asyncio``: rt runs on asyncio *and* trio, and redis-py's async client is asyncio-only (its
connections are asyncio streams). Running it on a thread with its own asyncio loop would add a thread hop
and a copy per message and a second event loop to keep alive. Instead this module speaks RESP itself over
anyio sockets, which work the same on both backends, with the two halves of the protocol taken from Redis'
own libraries: ``hiredis.Reader`` (the C reply parser redis-py uses) parses, ``hiredis.pack_command``
encodes commands, and ``redis.connection.parse_url`` reads the URL exactly as redis-py does. Only the
PUBLISH of the hot path is framed here by hand, so the payload is copied once, at the write.

Two connections per process: one that only PUBLISHes (pipelined: a writer task sends everything queued in a
loop turn in one write, a reader task counts the replies) and one in subscribe mode that receives the
messages. The calls a server makes (``publish``, ``subscribe``, ``unsubscribe``) only append to queues and
return, so a slow or stopped Redis never blocks the event loop; what cannot be queued is counted and logged.

Every message carries the publishing broker's ``origin`` (16 random hex characters, one per server
process) and a kind byte (``t`` text, ``b`` binary) before the payload; a broker drops its own messages
when Redis echoes them back, because its server already delivered them locally.
"""

from __future__ import annotations

import contextlib
import logging
import random
import secrets
import ssl
import time
from collections.abc import Callable
from typing import Any, cast

import anyio
import attrs
import hiredis
from anyio.abc import ByteStream

log = logging.getLogger("rt.redis")

ORIGIN_LENGTH = 16  # hex characters of the per-process origin tag
TEXT, BINARY = b"t", b"b"
_READ_SIZE = 65536
_CONNECT_TIMEOUT = 5.0  # seconds for TCP connect + AUTH
_BACKOFF_FIRST, _BACKOFF_MAX = 0.1, 5.0  # reconnect delays: doubling, with jitter
_CLOSE_FLUSH = 2.0  # seconds aclose() waits for queued publishes to be confirmed
_LOG_EVERY = 5.0  # seconds between two warnings about messages that were not sent
_SUBSCRIBE_BATCH = 512  # channels per SUBSCRIBE command when re-subscribing after a reconnect


def pack(*args: str | bytes) -> bytes:
    """A RESP command, encoded by hiredis (its stub types the argument as a 1-tuple, hence the cast)."""
    packed: bytes = hiredis.pack_command(cast(Any, args))
    return packed


class RedisProtocolError(Exception):
    """Redis answered something this client did not ask for, or more than the limits allow."""


_CONNECTION_ERRORS = (
    OSError,
    TimeoutError,
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    RedisProtocolError,
    hiredis.ProtocolError,
    ssl.SSLError,
)


@attrs.frozen
class Endpoint:
    """Where Redis is, from a ``redis://`` or ``rediss://`` URL (the password never shows in a repr)."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str | None = None
    db: int = 0
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    tls: bool = False

    @property
    def label(self) -> str:
        return self.path or f"{self.host}:{self.port}"

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        from redis.connection import SSLConnection, UnixDomainSocketConnection, parse_url

        try:
            fields: dict[str, Any] = parse_url(url)  # type: ignore[no-untyped-call]
        except ValueError as exc:
            raise ValueError(f"bad Redis URL: {exc}") from None
        connection_class = fields.get("connection_class")
        return cls(
            host=fields.get("host") or "127.0.0.1",
            port=int(fields.get("port") or 6379),
            path=fields.get("path") if connection_class is UnixDomainSocketConnection else None,
            db=int(fields.get("db") or 0),
            username=fields.get("username"),
            password=fields.get("password"),
            tls=connection_class is SSLConnection,
        )


@attrs.define
class BrokerStats:
    """What happened to the messages, for logs, tests and monitoring. Counts of messages, not bytes."""

    published: int = 0  # queued for Redis
    confirmed: int = 0  # acknowledged by Redis (a PUBLISH reply)
    received: int = 0  # from other processes, delivered to local subscribers
    echoes: int = 0  # own messages Redis sent back (skipped)
    dropped_unreachable: int = 0  # published while Redis was unreachable: local delivery only
    dropped_backlog: int = 0  # Redis was not keeping up (over max_pending_bytes): local delivery only
    unconfirmed: int = 0  # written but not acknowledged when a connection failed: may or may not have arrived
    dropped_incoming: int = 0  # malformed or over-limit messages from Redis
    connects: int = 0  # successful (re)connections


class _Connection:
    """One RESP connection: an anyio byte stream and a hiredis reader."""

    def __init__(self, stream: ByteStream, max_reply: int) -> None:
        self.stream = stream
        self.reader = hiredis.Reader()
        self.max_reply = max_reply

    async def reply(self) -> Any:
        while True:
            reply = self.reader.gets()
            if reply is not False:
                return reply
            if self.reader.len() > self.max_reply:
                raise RedisProtocolError(f"Redis sent a reply over the limit of {self.max_reply} bytes")
            self.reader.feed(await self.stream.receive(_READ_SIZE))

    async def command(self, *args: str | bytes) -> Any:
        await self.stream.send(pack(*args))
        reply = await self.reply()
        if isinstance(reply, hiredis.ReplyError):
            raise RedisProtocolError(f"Redis refused {args[0]!s}: {reply}")
        return reply

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):  # already broken: closed all the same
                await self.stream.aclose()


class RedisBroker:
    """The ``redis`` broker (see the module docstring). ``stats`` counts what happened to messages."""

    def __init__(
        self,
        url: str,
        *,
        channel_prefix: str = "rt:",
        max_message_bytes: int = 1024 * 1024,
        max_pending_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        for name, value in (
            ("max_message_bytes", max_message_bytes),
            ("max_pending_bytes", max_pending_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int (bytes), got {value!r}")
        self.endpoint = Endpoint.from_url(url)
        self.origin = secrets.token_hex(ORIGIN_LENGTH // 2)
        self.max_message_bytes = max_message_bytes
        self.max_pending_bytes = max_pending_bytes
        self.stats = BrokerStats()
        self._origin = self.origin.encode("ascii")
        self._prefix = channel_prefix.encode("utf-8")
        self._wanted: dict[str, None] = {}  # topics with local subscribers, in subscription order
        self._connected = False
        self._closing = False
        # publisher side: pieces to write, their size and message count; written and unconfirmed messages
        self._out: list[bytes] = []
        self._out_bytes = 0
        self._out_count = 0
        self._writing = 0
        self._inflight = 0
        self._sub_out: list[bytes] = []  # SUBSCRIBE/UNSUBSCRIBE commands for the subscriber connection
        self._wake: anyio.Event | None = None
        self._sub_wake: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._last_drop_log = -_LOG_EVERY
        self._dropped_logged = 0

    @property
    def connected(self) -> bool:
        return self._connected

    def __repr__(self) -> str:
        state = "connected" if self._connected else "not connected"
        return f"<RedisBroker {self.endpoint.label} {state} origin={self.origin}>"

    # -- what the server calls: queue and return -----------------------------------------------------------

    def publish(self, topic: str, payload: bytes, *, is_text: bool) -> None:
        if not self._connected:
            self.stats.dropped_unreachable += 1
            self._note_dropped()
            return
        size = len(payload)
        if size > self.max_message_bytes:  # the server checks first; a direct caller gets the same answer
            raise ValueError(
                f"message of {size} bytes is over the broker's limit of {self.max_message_bytes}"
            )
        if self._out_bytes + size > self.max_pending_bytes:
            self.stats.dropped_backlog += 1
            self._note_dropped()
            return
        channel = self._prefix + topic.encode("utf-8")
        head = b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b%b" % (
            len(channel),
            channel,
            size + ORIGIN_LENGTH + 1,
            self._origin,
            TEXT if is_text else BINARY,
        )
        self._out += (head, payload, b"\r\n")
        self._out_bytes += size + len(head) + 2
        self._out_count += 1
        self.stats.published += 1
        if self._wake is not None:
            self._wake.set()

    def subscribe(self, topic: str) -> None:
        if topic in self._wanted:
            return
        self._wanted[topic] = None
        self._queue_subscription(b"SUBSCRIBE", topic)

    def unsubscribe(self, topic: str) -> None:
        if topic not in self._wanted:
            return
        del self._wanted[topic]
        self._queue_subscription(b"UNSUBSCRIBE", topic)

    def _queue_subscription(self, command: bytes, topic: str) -> None:
        if not self._connected:
            return  # applied from _wanted on the next connection
        self._sub_out.append(pack(command, self._prefix + topic.encode("utf-8")))
        if self._sub_wake is not None:
            self._sub_wake.set()

    def _note_dropped(self) -> None:
        now = time.monotonic()
        if now - self._last_drop_log >= _LOG_EVERY:
            self._last_drop_log = now
            stats = self.stats
            log.warning(
                "Redis at %s: %d messages reached local subscribers only (%d while Redis was unreachable, "
                "%d while it was not keeping up); they were not sent to other processes",
                self.endpoint.label,
                stats.dropped_unreachable + stats.dropped_backlog,
                stats.dropped_unreachable,
                stats.dropped_backlog,
            )

    # -- the connection's life -----------------------------------------------------------------------------

    async def run(self, deliver: Callable[[str, bytes, bool], None]) -> None:
        """Connect and stay connected until cancelled or closed, reconnecting with backoff."""
        backoff = _BACKOFF_FIRST
        failures = 0
        with anyio.CancelScope() as self._scope:
            while not self._closing:
                started = self.stats.connects
                try:
                    await self._session(deliver)
                    reason = "the connection closed"
                except _CONNECTION_ERRORS as exc:
                    reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if self._closing:
                    break
                if self.stats.connects != started:
                    backoff, failures = _BACKOFF_FIRST, 0
                failures += 1
                delay = backoff * random.uniform(0.8, 1.2)
                level = logging.WARNING if failures == 1 or failures % 10 == 0 else logging.DEBUG
                log.log(
                    level,
                    "Redis at %s unreachable (%s); retrying in %.1f s (attempt %d); local delivery continues",
                    self.endpoint.label,
                    reason,
                    delay,
                    failures,
                )
                await anyio.sleep(delay)
                backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _connect(self) -> _Connection:
        endpoint = self.endpoint
        with anyio.fail_after(_CONNECT_TIMEOUT):
            stream: ByteStream
            if endpoint.path is not None:
                stream = await anyio.connect_unix(endpoint.path)
            elif endpoint.tls:
                stream = await anyio.connect_tcp(
                    endpoint.host, endpoint.port, tls=True, ssl_context=ssl.create_default_context()
                )
            else:
                stream = await anyio.connect_tcp(endpoint.host, endpoint.port)
            connection = _Connection(stream, self.max_message_bytes + 64 * 1024 + len(self._prefix))
            try:
                if endpoint.password is not None:
                    credentials = (
                        (endpoint.username, endpoint.password) if endpoint.username else (endpoint.password,)
                    )
                    await connection.command(b"AUTH", *credentials)
            except BaseException:
                await connection.aclose()
                raise
            return connection

    async def _session(self, deliver: Callable[[str, bytes, bool], None]) -> None:
        """One connected period: returns or raises when a connection fails."""
        publisher = await self._connect()
        try:
            subscriber = await self._connect()
        except BaseException:
            await publisher.aclose()
            raise
        failure: BaseException | None = None
        try:
            # in one synchronous step: the topics wanted now are subscribed first, and from here on
            # subscribe()/unsubscribe() queue their commands after them and publish() queues messages
            channels = [self._prefix + topic.encode("utf-8") for topic in self._wanted]
            self._sub_out[:] = [
                pack(b"SUBSCRIBE", *channels[start : start + _SUBSCRIBE_BATCH])
                for start in range(0, len(channels), _SUBSCRIBE_BATCH)
            ]
            self._connected = True
            self.stats.connects += 1
            dropped = self.stats.dropped_unreachable + self.stats.dropped_backlog
            if self.stats.connects > 1:
                log.warning(
                    "Redis at %s reconnected; %d topics re-subscribed; %d messages reached local subscribers "
                    "only so far",
                    self.endpoint.label,
                    len(channels),
                    dropped,
                )
            async with anyio.create_task_group() as tg:

                async def guard(loop: Callable[[_Connection], Any], connection: _Connection) -> None:
                    nonlocal failure
                    try:
                        await loop(connection)
                    except _CONNECTION_ERRORS as exc:
                        failure = failure or exc
                    tg.cancel_scope.cancel()

                tg.start_soon(guard, self._write_publishes, publisher)
                tg.start_soon(guard, self._read_confirmations, publisher)
                tg.start_soon(guard, self._write_subscriptions, subscriber)
                tg.start_soon(guard, lambda connection: self._read_messages(connection, deliver), subscriber)
        finally:
            self._connected = False
            lost = self._out_count + self._writing + self._inflight
            self._out.clear()
            self._out_bytes = self._out_count = self._writing = self._inflight = 0
            if lost and not self._closing:
                self.stats.unconfirmed += lost
                log.warning(
                    "Redis at %s: the connection failed with %d messages not confirmed; they reached local "
                    "subscribers, and may or may not have reached other processes",
                    self.endpoint.label,
                    lost,
                )
            await publisher.aclose()
            await subscriber.aclose()
        if failure is not None:
            raise failure

    async def _write_publishes(self, connection: _Connection) -> None:
        while True:
            if not self._out:
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            data = b"".join(self._out)
            self._writing = self._out_count
            self._out.clear()
            self._out_bytes = self._out_count = 0
            await connection.stream.send(data)
            self._inflight += self._writing
            self._writing = 0

    async def _read_confirmations(self, connection: _Connection) -> None:
        while True:
            reply = await connection.reply()
            if isinstance(reply, hiredis.ReplyError):
                log.error("Redis at %s refused a PUBLISH: %s", self.endpoint.label, reply)
            self._inflight -= 1
            self.stats.confirmed += 1

    async def _write_subscriptions(self, connection: _Connection) -> None:
        while True:
            if not self._sub_out:
                self._sub_wake = anyio.Event()
                await self._sub_wake.wait()
                continue
            data = b"".join(self._sub_out)
            self._sub_out.clear()
            await connection.stream.send(data)

    async def _read_messages(
        self, connection: _Connection, deliver: Callable[[str, bytes, bool], None]
    ) -> None:
        prefix_length = len(self._prefix)
        header = ORIGIN_LENGTH + 1
        while True:
            reply = await connection.reply()
            if type(reply) is not list or not reply:
                if isinstance(reply, hiredis.ReplyError):
                    raise RedisProtocolError(f"Redis refused a subscription: {reply}")
                continue
            if reply[0] != b"message" or len(reply) != 3:
                continue  # subscribe/unsubscribe confirmations
            channel, data = reply[1], reply[2]
            if not isinstance(data, bytes) or len(data) < header or not channel.startswith(self._prefix):
                self.stats.dropped_incoming += 1
                log.warning(
                    "Redis at %s: a message on %r is not from rt; dropped", self.endpoint.label, channel
                )
                continue
            if data[:ORIGIN_LENGTH] == self._origin:
                self.stats.echoes += 1  # ours: the server delivered it locally already
                continue
            kind = data[ORIGIN_LENGTH:header]
            if kind != TEXT and kind != BINARY or len(data) - header > self.max_message_bytes:
                self.stats.dropped_incoming += 1
                log.warning(
                    "Redis at %s: a malformed or over-limit message on %r; dropped",
                    self.endpoint.label,
                    channel,
                )
                continue
            try:
                topic = channel[prefix_length:].decode("utf-8")
            except UnicodeDecodeError:
                self.stats.dropped_incoming += 1
                continue
            self.stats.received += 1
            try:
                deliver(topic, data[header:], kind == TEXT)
            except Exception:  # a bug in delivery must not cut every other message
                log.exception("delivering a message from Redis on topic %r failed", topic)

    async def aclose(self) -> None:
        """Wait briefly for queued publishes to be confirmed, then disconnect."""
        if self._connected and (self._out or self._writing or self._inflight):
            with anyio.move_on_after(_CLOSE_FLUSH):
                while self._connected and (self._out or self._writing or self._inflight):
                    await anyio.sleep(0.01)
        self._closing = True
        if self._scope is not None:
            self._scope.cancel()
