"""One HTTP/1.1 connection: h11 parses and frames, this module moves bytes with anyio.

h11 rather than httptools: it is pure Python (no wheel to build for every platform), rejects malformed
messages strictly, enforces a header-size limit itself (``max_incomplete_event_size``, answered with 431) and
hands back the bytes that follow a 101, which the WebSocket layer needs. Only the upgrade request goes through
HTTP in the WebSocket benchmarks, so its speed does not show there.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable
from typing import TYPE_CHECKING, Any

import anyio
import h11
from anyio.abc import ByteStream

from rt_http.headers import Headers
from rt_http.messages import Request, Response

if TYPE_CHECKING:
    from rt_http.server import Server

log = logging.getLogger("rt.serve")
_READ_SIZE = 65536


class RequestTooLarge(Exception):
    pass


class HttpConnection:
    """Reads requests, calls the server, writes responses, until the peer or keep-alive ends it."""

    __slots__ = ("server", "stream", "remote_address", "scheme", "h11", "upgrade", "busy", "refusal")

    def __init__(self, server: Server, stream: ByteStream, remote_address: str, scheme: str) -> None:
        self.server = server
        self.stream = stream
        self.remote_address = remote_address
        self.scheme = scheme
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=server.max_header_size)
        self.upgrade: tuple[Any, tuple[tuple[str, str], ...]] | None = None  # set by server.upgrade()
        self.busy = False
        self.refusal: Response | None = None  # set by server.upgrade() for a wrong Sec-WebSocket-Version

    async def run(self) -> None:
        try:
            while await self._one_request():
                pass
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return
        if self.upgrade is not None and self.h11 is not None:
            ws = self.upgrade[0]
            trailing = bytes(self.h11.trailing_data[0])
            self.h11 = None  # type: ignore[assignment]  # an idle WebSocket keeps no HTTP state alive
            await ws.run(self.stream, trailing)

    async def _next_event(self) -> Any:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            if self.h11.they_are_waiting_for_100_continue:
                # the body is always read before dispatch (and a too-large Content-Length was refused with
                # 413 before we got here), so say so now instead of making the client wait out its timer
                go_on = h11.InformationalResponse(status_code=100, headers=[])
                await self.stream.send(self.h11.send(go_on) or b"")
            timeout = (
                self.server.idle_timeout if self.h11.their_state is h11.IDLE else self.server.read_timeout
            )
            with anyio.move_on_after(timeout):
                data = await self.stream.receive(_READ_SIZE)
                self.h11.receive_data(data)
                continue
            raise anyio.EndOfStream  # idle keep-alive connection, or a stalled request: drop it

    async def _one_request(self) -> bool:
        try:
            event = await self._next_event()
            if isinstance(event, (h11.ConnectionClosed, h11.EndOfMessage)):
                return False
            assert isinstance(event, h11.Request)
            # h11 limits only a head that arrives in pieces; one that arrives whole is measured here
            head_size = len(event.target) + sum(len(n) + len(v) + 4 for n, v in event.headers)
            if head_size > self.server.max_header_size:
                await self._send_error(431, "Request Header Fields Too Large")
                return False
            body = await self._read_body(event)
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            await self._send_error(
                status, "Request Header Fields Too Large" if status == 431 else "Bad Request"
            )
            return False
        except RequestTooLarge:
            await self._send_error(413, "Payload Too Large")
            return False
        except anyio.EndOfStream:
            return False

        self.busy = True
        request = self._build_request(event, body)
        response = await self.server._respond(request)
        if self.upgrade is not None:
            await self._switch_to_websocket()
            return False
        await self._send_response(request, response)
        self.busy = False
        self.refusal = None
        if self.h11.our_state is h11.MUST_CLOSE or self.server._stopping:
            return False
        try:
            self.h11.start_next_cycle()
        except h11.LocalProtocolError:
            return False
        return True

    async def _read_body(self, event: h11.Request) -> bytes:
        limit = self.server.max_request_body_size
        for name, value in event.headers:
            if name == b"content-length" and int(value) > limit:
                raise RequestTooLarge
        chunks: list[bytes] = []
        size = 0
        while True:
            part = await self._next_event()
            if isinstance(part, h11.Data):
                size += len(part.data)
                if size > limit:
                    raise RequestTooLarge
                chunks.append(part.data)
            elif isinstance(part, h11.EndOfMessage):
                return b"".join(chunks)
            else:  # ConnectionClosed mid-body
                raise anyio.EndOfStream

    def _build_request(self, event: h11.Request, body: bytes) -> Request:
        headers = Headers._trusted([(n.decode("latin-1"), v.decode("latin-1")) for n, v in event.headers])
        target = event.target.decode("latin-1")
        host = headers.get("host") or self.server.hostname
        url = target if "://" in target else f"{self.scheme}://{host}{target}"
        request = Request(
            url,
            method=event.method.decode("ascii"),
            headers=headers,
            body=body,
            remote_address=self.remote_address,
        )
        request._context = self
        return request

    async def _send_response(self, request: Request, response: Response) -> None:
        headers = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers.items()]
        head = request.method == "HEAD"
        if not response.is_streaming and not response.headers.has("content-length"):
            headers.append((b"content-length", str(len(response._body)).encode()))
        h11_response = h11.Response(
            status_code=response.status, headers=headers, reason=response.status_text.encode("latin-1")
        )
        if not response.is_streaming or head:
            data = self.h11.send(h11_response) or b""
            if not head and response._body:
                data += self.h11.send(h11.Data(data=response._body)) or b""
            data += self.h11.send(h11.EndOfMessage()) or b""
            await self.stream.send(data)
            return
        await self.stream.send(self.h11.send(h11_response) or b"")
        stream = response._stream
        try:
            if isinstance(stream, AsyncIterable):
                async for chunk in stream:
                    if chunk:
                        await self.stream.send(self.h11.send(h11.Data(data=bytes(chunk))) or b"")
            else:
                for chunk in stream or ():
                    if chunk:
                        await self.stream.send(self.h11.send(h11.Data(data=bytes(chunk))) or b"")
        except Exception:
            # the status line is out: the only honest signal left is to cut the connection
            log.exception("a streaming response body raised; closing the connection")
            raise anyio.BrokenResourceError from None
        await self.stream.send(self.h11.send(h11.EndOfMessage()) or b"")

    async def _send_error(self, status: int, text: str) -> None:
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = text.encode()
        response = h11.Response(
            status_code=status,
            headers=[
                (b"content-type", b"text/plain;charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        )
        try:
            await self.stream.send(
                self.h11.send(response)
                + self.h11.send(h11.Data(data=body))
                + self.h11.send(h11.EndOfMessage())
            )
        except (h11.LocalProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass

    async def _switch_to_websocket(self) -> None:
        assert self.upgrade is not None
        ws, headers = self.upgrade
        response = h11.InformationalResponse(
            status_code=101,
            headers=[(n.encode("latin-1"), v.encode("latin-1")) for n, v in headers],
            reason=b"Switching Protocols",
        )
        try:
            await self.stream.send(self.h11.send(response) or b"")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            ws._finish(1006, "")  # the client left before the 101: the socket never opened for it
            raise
        self.busy = False
