"""Fetch-style ``Request`` and ``Response``.

The server reads a request body fully (within ``max_request_body_size``) before calling the handler, so the
body
methods are cheap; they are still ``async``, as in the fetch API, so that a streaming body can be added later
without changing user code.
"""

from __future__ import annotations

import builtins
import json as _json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from rt_http.headers import Headers, HeadersInit

BodyInit = str | bytes | bytearray | memoryview | AsyncIterable[bytes] | Iterable[bytes] | None


class Request:
    """An incoming request: ``method``, absolute ``url``, ``headers``, ``params`` (routes), body readers."""

    __slots__ = (
        "method",
        "url",
        "headers",
        "params",
        "remote_address",
        "_body",
        "_cookies",
        "_parts",
        "_context",
    )

    def __init__(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: HeadersInit = None,
        body: bytes | str | None = None,
        remote_address: str = "",
    ) -> None:
        self.method = method.upper()
        self.url = url
        self.headers = headers if isinstance(headers, Headers) else Headers(headers)
        self.params: dict[str, str] = {}
        self.remote_address = remote_address
        self._body = body.encode() if isinstance(body, str) else (body or b"")
        self._cookies: dict[str, str] | None = None
        self._parts = urlsplit(url)
        self._context: Any = None  # the server connection that received it (for upgrade)

    @property
    def path(self) -> str:
        return self._parts.path or "/"

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(self._parts.query, keep_blank_values=True))

    @property
    def cookies(self) -> dict[str, str]:
        """Cookies of the ``Cookie`` header; a malformed header gives an empty dict rather than an error."""
        if self._cookies is None:
            jar = SimpleCookie()
            try:
                for value in self.headers.get_all("cookie"):
                    jar.load(value)
            except CookieError:
                jar = SimpleCookie()
            self._cookies = {key: morsel.value for key, morsel in jar.items()}
        return self._cookies

    async def bytes(self) -> bytes:
        return self._body

    async def array_buffer(self) -> builtins.bytes:
        return self._body

    async def text(self) -> str:
        return self._body.decode("utf-8", errors="replace")

    async def json(self) -> Any:
        return _json.loads(self._body)

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.url}>"


class Response:
    """An outgoing response. ``body`` is text, bytes, an (async) iterable of bytes (sent chunked), or None."""

    __slots__ = ("_body", "_stream", "headers", "redirected", "status", "status_text", "url")

    def __init__(
        self,
        body: BodyInit = None,
        *,
        status: int = 200,
        status_text: str | None = None,
        headers: HeadersInit = None,
    ) -> None:
        if not isinstance(status, int) or not 200 <= status <= 599:
            raise ValueError(f"Response status must be an int from 200 to 599, got {status!r}")
        self.status = status
        self.status_text = status_text if status_text is not None else _reason(status)
        self.headers = Headers(headers)
        self.url = ""  # set by rt.fetch: the final URL, after redirects
        self.redirected = False  # set by rt.fetch: whether a redirect was followed
        self._stream: AsyncIterable[bytes] | Iterable[bytes] | None = None
        if body is None:
            self._body = b""
        elif isinstance(body, str):
            self._body = body.encode("utf-8")
            if not self.headers.has("content-type"):
                self.headers.set("content-type", "text/plain;charset=utf-8")
        elif isinstance(body, (bytes, bytearray, memoryview)):
            self._body = bytes(body)
        elif isinstance(body, (AsyncIterable, Iterable)):
            self._body = b""
            self._stream = cast("AsyncIterable[bytes] | Iterable[bytes]", body)
        else:
            raise TypeError(f"unsupported Response body type {type(body).__name__}")

    @classmethod
    def json(cls, data: Any, *, status: int = 200, headers: HeadersInit = None) -> Response:
        response = cls(_json.dumps(data, separators=(",", ":")), status=status, headers=headers)
        response.headers.set("content-type", "application/json;charset=utf-8")
        return response

    @classmethod
    def redirect(cls, url: str, status: int = 302) -> Response:
        return cls(status=status, headers={"location": url})

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def is_streaming(self) -> bool:
        return self._stream is not None

    async def stream(self) -> AsyncIterator[builtins.bytes]:
        """The body chunk by chunk, as it arrives (a response of ``rt.fetch``) or as it was given."""
        if self._stream is None:
            if self._body:
                yield self._body
            return
        if isinstance(self._stream, AsyncIterable):
            async for chunk in self._stream:
                yield builtins.bytes(chunk)
        else:
            for chunk in self._stream:
                yield builtins.bytes(chunk)

    async def bytes(self) -> builtins.bytes:
        if self._stream is None:
            return self._body
        return b"".join([chunk async for chunk in self.stream()])

    async def text(self) -> str:
        return (await self.bytes()).decode("utf-8", errors="replace")

    async def json_body(self) -> Any:
        return _json.loads(await self.bytes())

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.status_text}>"


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def coerce_headers(init: HeadersInit | Mapping[str, str]) -> Headers:
    return init if isinstance(init, Headers) else Headers(init)
