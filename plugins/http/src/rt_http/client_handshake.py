"""The client side of the RFC 6455 opening handshake, sans I/O.

:class:`ClientHandshake` builds the upgrade request for a ``ws://``/``wss://`` URL and checks the server's
answer; h11 parses the response head (it knows the protocol-switch rules: a 101 to a request with
``Upgrade`` ends HTTP on that connection and hands back the bytes after the head, which may already hold the
first frames). permessage-deflate is negotiated with the ``websockets`` package's client extension factory,
which implements RFC 7692's parameter rules completely (window bits, context takeover, refusing answers the
client did not offer); rt takes the agreed parameters from it and compresses with its own codec.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from urllib.parse import urlsplit

import attrs
import h11
from websockets.exceptions import NegotiationError
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory, PerMessageDeflate
from websockets.headers import build_extension, parse_extension

from rt_http.handshake import accept_key
from rt_http.headers import Headers, HeadersInit

MAX_RESPONSE_HEAD = 64 * 1024  # a server's 101 head is a few hundred bytes; more is not a WebSocket server
_RESERVED = frozenset(
    {
        "host",
        "upgrade",
        "connection",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-accept",
        "sec-websocket-extensions",
    }
)


class HandshakeError(Exception):
    """The server did not accept the WebSocket handshake, or answered it wrongly."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@attrs.frozen
class Target:
    """Where a ``ws://``/``wss://`` URL points."""

    secure: bool
    host: str
    port: int
    resource: str  # path and query, as sent in the request line
    url: str

    @property
    def host_header(self) -> str:
        default = 443 if self.secure else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def parse_url(url: str) -> Target:
    """Check and split a WebSocket URL; ``http(s)://`` is accepted as the WHATWG WebSocket does."""
    if not isinstance(url, str):
        raise TypeError(f"WebSocket url must be a str, got {type(url).__name__}")
    parts = urlsplit(url)
    scheme = {"ws": "ws", "wss": "wss", "http": "ws", "https": "wss"}.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(f"WebSocket url must start with ws:// or wss://, got {url!r}")
    if parts.fragment:
        raise ValueError(f"WebSocket url must not have a fragment: {url!r}")
    if not parts.hostname:
        raise ValueError(f"WebSocket url has no host: {url!r}")
    try:
        port = parts.port or (443 if scheme == "wss" else 80)
    except ValueError:
        raise ValueError(f"WebSocket url has an invalid port: {url!r}") from None
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme == "wss", parts.hostname, port, resource, url)


def check_protocols(protocols: str | Sequence[str] | None) -> tuple[str, ...]:
    """Subprotocols as the WebSocket constructor takes them: one string or a sequence, no duplicates."""
    if protocols is None:
        return ()
    items = (protocols,) if isinstance(protocols, str) else tuple(protocols)
    for item in items:
        if not isinstance(item, str) or not item or any(c in item for c in ' ,;"()<>@:\\/[]?={}\t\r\n'):
            raise ValueError(f"invalid WebSocket subprotocol {item!r}")
    if len(set(items)) != len(items):
        raise ValueError(f"WebSocket subprotocols must be unique, got {list(items)!r}")
    return items


@attrs.define
class Accepted:
    """What the server agreed to."""

    protocol: str
    extensions: str
    deflate: PerMessageDeflate | None
    headers: Headers
    leftover: bytes  # bytes after the response head: the first frames, when the server sent them at once


class ClientHandshake:
    """Build the upgrade request; feed the response bytes to :meth:`receive` until it returns the result."""

    def __init__(
        self,
        target: Target,
        *,
        protocols: tuple[str, ...] = (),
        headers: HeadersInit = None,
        compress: bool = True,
    ) -> None:
        self.target = target
        self.protocols = protocols
        self.key = base64.b64encode(os.urandom(16)).decode("ascii")
        self._deflate = ClientPerMessageDeflateFactory(client_max_window_bits=True) if compress else None
        self._extra = Headers(headers)
        for name in self._extra:
            if name in _RESERVED:
                raise ValueError(f"WebSocket header {name!r} is set by the handshake and cannot be given")
        self._connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_RESPONSE_HEAD)

    def request(self) -> bytes:
        """The bytes of the upgrade request."""
        fields = [
            ("Host", self.target.host_header),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", self.key),
            ("Sec-WebSocket-Version", "13"),
        ]
        if self.protocols:
            fields.append(("Sec-WebSocket-Protocol", ", ".join(self.protocols)))
        if self._deflate is not None:
            fields.append(
                (
                    "Sec-WebSocket-Extensions",
                    build_extension([(self._deflate.name, self._deflate.get_request_params())]),
                )
            )
        fields.extend(self._extra.items())
        data = self._connection.send(h11.Request(method="GET", target=self.target.resource, headers=fields))
        return data or b""

    def receive(self, data: bytes) -> Accepted | None:
        """Feed response bytes; None while the head is incomplete. Raises :class:`HandshakeError`."""
        self._connection.receive_data(data)
        try:
            event = self._connection.next_event()
        except h11.RemoteProtocolError as exc:
            if not data:
                raise HandshakeError(
                    f"{self.target.url} closed the connection during the handshake"
                ) from None
            raise HandshakeError(f"invalid handshake response from {self.target.url}: {exc}") from None
        if event is h11.NEED_DATA:
            return None
        if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
            leftover, _closed = self._connection.trailing_data
            return self._check(
                Headers((n.decode("latin-1"), v.decode("latin-1")) for n, v in event.headers), leftover
            )
        status = getattr(event, "status_code", None)
        reason = getattr(event, "reason", b"").decode("latin-1", "replace")
        raise HandshakeError(
            f"{self.target.url} refused the WebSocket handshake: {status} {reason}".rstrip(), status=status
        )

    def _check(self, headers: Headers, leftover: bytes) -> Accepted:
        url = self.target.url
        if not headers.has_token("upgrade", "websocket"):
            raise HandshakeError(f"{url}: the 101 response has no 'Upgrade: websocket'", 101)
        if not headers.has_token("connection", "upgrade"):
            raise HandshakeError(f"{url}: the 101 response has no 'Connection: Upgrade'", 101)
        if headers.get("sec-websocket-accept") != accept_key(self.key):
            raise HandshakeError(f"{url}: wrong Sec-WebSocket-Accept in the 101 response", 101)
        protocol = headers.get("sec-websocket-protocol") or ""
        if protocol and protocol not in self.protocols:
            raise HandshakeError(
                f"{url}: the server chose subprotocol {protocol!r}, which was not offered", 101
            )
        extensions = headers.get("sec-websocket-extensions") or ""
        deflate = self._negotiate(extensions) if extensions else None
        return Accepted(protocol, extensions, deflate, headers, bytes(leftover))

    def _negotiate(self, header: str) -> PerMessageDeflate:
        try:
            accepted = parse_extension(header)
        except Exception as exc:  # noqa: BLE001 - websockets raises InvalidHeaderFormat and friends
            raise HandshakeError(
                f"{self.target.url}: invalid Sec-WebSocket-Extensions {header!r}: {exc}", 101
            ) from None
        if self._deflate is None or len(accepted) != 1 or accepted[0][0] != self._deflate.name:
            raise HandshakeError(
                f"{self.target.url}: the server accepted extensions that were not offered: {header!r}", 101
            )
        try:
            return self._deflate.process_response_params(accepted[0][1], [])
        except NegotiationError as exc:
            raise HandshakeError(
                f"{self.target.url}: unacceptable permessage-deflate answer {header!r}: {exc}", 101
            ) from None
