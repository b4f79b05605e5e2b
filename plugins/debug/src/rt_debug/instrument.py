"""Make ``http.client`` (so ``urllib.request``, ``urllib3`` and ``requests``) and ``httpx`` emit the kernel's
``rt_http_request``/``rt_http_response`` hooks, so verbose fetch logging sees them as it sees ``rt.fetch``.

Neither library has a process-wide hook for this (httpx's ``event_hooks`` are per client, http.client has
none), so the few methods every request passes through are wrapped, once per process, and only when verbose
fetch is enabled (``rt_configure``). The wrappers only observe: arguments and results pass through untouched,
and a failure to build or deliver an event never reaches the request.

- http.client: ``putrequest``/``putheader`` collect the request line and headers, ``endheaders`` emits the
  request (with the body when it is passed there, as ``HTTPConnection.request`` does), ``getresponse`` emits
  the response. urllib3 streams the body after ``endheaders``, so its ``request`` is wrapped to hand the body
  over first.
- httpx: the default transports' ``handle_request``/``handle_async_request``, which every request of every
  ``Client``/``AsyncClient`` goes through (redirects included) with its final headers.

Of a request body an event keeps only what the log can show, the first 4 KiB and the true length
(:func:`rt_debug.fetchlog.preview`): these wrappers run on every request while logging is on, and copying a
large upload in full to print 4 KiB of it would double its memory for nothing.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import importlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from rt.events import HttpRequest, HttpResponse
from rt_debug.fetchlog import preview

_lock = threading.Lock()
_installed: list[tuple[type, str, Any]] = []  # (class, attribute, original) to restore on uninstall
_STATE = "_rt_debug_request"
_BODY = "_rt_debug_body"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _emit(kind: str, event: HttpRequest | HttpResponse) -> None:
    with contextlib.suppress(Exception):
        from rt.kernel import get_kernel

        host = get_kernel().host
        if host.has_http_observers():
            if kind == "request":
                host.http_request(event)
            else:
                host.http_response(event)


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    return str(value)


# --- http.client ------------------------------------------------------------------------------------------


def _connection_url(connection: http.client.HTTPConnection, target: str) -> str:
    if target.startswith(("http://", "https://")):  # absolute form, as sent to a proxy
        return target
    scheme = "https" if isinstance(connection, http.client.HTTPSConnection) else "http"
    host = getattr(connection, "_tunnel_host", None) or connection.host
    port = (
        getattr(connection, "_tunnel_port", None)
        if getattr(connection, "_tunnel_host", None)
        else connection.port
    )
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    authority = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{authority}{target if target.startswith('/') or target == '*' else '/' + target}"


def _wrap_putrequest(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def putrequest(self: http.client.HTTPConnection, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        result = original(self, method, url, *args, **kwargs)
        with contextlib.suppress(Exception):
            setattr(self, _STATE, {"method": method, "url": _connection_url(self, url), "headers": []})
        return result

    return putrequest


def _wrap_putheader(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def putheader(self: http.client.HTTPConnection, header: Any, *values: Any) -> Any:
        result = original(self, header, *values)
        state = getattr(self, _STATE, None)
        if state is not None:
            with contextlib.suppress(Exception):
                state["headers"].append((_text(header), ", ".join(_text(v) for v in values)))
        return result

    return putheader


def _wrap_endheaders(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def endheaders(self: http.client.HTTPConnection, message_body: Any = None, **kwargs: Any) -> Any:
        state = getattr(self, _STATE, None)
        if state is not None and "request" not in state:
            with contextlib.suppress(Exception):
                body = preview(message_body)
                if body is None:
                    body = getattr(self, _BODY, None)
                request = HttpRequest(
                    method=state["method"],
                    url=state["url"],
                    headers=tuple(state["headers"]),
                    body=body,
                    http_version="HTTP/1.1",
                    client="http.client",
                )
                state["request"], state["started"] = request, time.perf_counter()
                _emit("request", request)
        with contextlib.suppress(Exception):
            setattr(self, _BODY, None)
        return original(self, message_body, **kwargs)

    return endheaders


def _wrap_getresponse(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def getresponse(self: http.client.HTTPConnection, *args: Any, **kwargs: Any) -> Any:
        response = original(self, *args, **kwargs)
        state = getattr(self, _STATE, None)
        if state is not None and "request" in state:
            with contextlib.suppress(Exception):
                setattr(self, _STATE, None)
                _emit(
                    "response",
                    HttpResponse(
                        request=state["request"],
                        status=response.status,
                        reason=response.reason or "",
                        headers=tuple(response.getheaders()),
                        http_version="HTTP/1.0" if response.version == 10 else "HTTP/1.1",
                        elapsed=time.perf_counter() - state["started"],
                    ),
                )
        return response

    return getresponse


def _wrap_urllib3_request(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def request(self: Any, method: str, url: str, body: Any = None, *args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(Exception):
            setattr(self, _BODY, preview(body))
        return original(self, method, url, body, *args, **kwargs)

    return request


# --- httpx ------------------------------------------------------------------------------------------------


def _httpx_request(request: Any) -> HttpRequest:
    try:
        body = preview(request.content)
    except Exception:  # noqa: BLE001 - httpx.RequestNotRead (a streamed body); no httpx import here
        body = None
    return HttpRequest(
        method=request.method,
        url=str(request.url),
        headers=tuple(request.headers.multi_items()),
        body=body,
        http_version="HTTP/1.1",
        client="httpx",
    )


def _httpx_response(event: HttpRequest, response: Any, started: float) -> HttpResponse:
    return HttpResponse(
        request=event,
        status=response.status_code,
        reason=response.reason_phrase or "",
        headers=tuple(response.headers.multi_items()),
        http_version=response.http_version or "HTTP/1.1",
        elapsed=time.perf_counter() - started,
    )


def _wrap_httpx_sync(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        event, started = _observe_httpx_request(request)
        response = original(self, request)
        if event is not None:
            with contextlib.suppress(Exception):
                _emit("response", _httpx_response(event, response, started))
        return response

    return handle_request


def _wrap_httpx_async(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def handle_async_request(self: Any, request: Any) -> Any:
        event, started = _observe_httpx_request(request)
        response = await original(self, request)
        if event is not None:
            with contextlib.suppress(Exception):
                _emit("response", _httpx_response(event, response, started))
        return response

    return handle_async_request


def _observe_httpx_request(request: Any) -> tuple[HttpRequest | None, float]:
    started = time.perf_counter()
    if request.extensions.get("rt.observed"):  # rt.fetch emitted this request's events itself
        return None, started
    try:
        event = _httpx_request(request)
    except Exception:  # noqa: BLE001 - observation must not break the request
        return None, started
    _emit("request", event)
    return event, started


# --- install / uninstall ----------------------------------------------------------------------------------


def _targets() -> Iterator[tuple[type, str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    connection = http.client.HTTPConnection
    yield connection, "putrequest", _wrap_putrequest
    yield connection, "putheader", _wrap_putheader
    yield connection, "endheaders", _wrap_endheaders
    yield connection, "getresponse", _wrap_getresponse
    with contextlib.suppress(ImportError):
        urllib3_connection = importlib.import_module("urllib3.connection")
        yield urllib3_connection.HTTPConnection, "request", _wrap_urllib3_request
    with contextlib.suppress(ImportError):
        httpx = importlib.import_module("httpx")
        yield httpx.HTTPTransport, "handle_request", _wrap_httpx_sync
        yield httpx.AsyncHTTPTransport, "handle_async_request", _wrap_httpx_async


def install() -> bool:
    """Wrap the client methods (once per process). Returns False when they were already wrapped."""
    with _lock:
        if _installed:
            return False
        for owner, attribute, wrap in _targets():
            original = owner.__dict__[attribute]
            setattr(owner, attribute, wrap(original))
            _installed.append((owner, attribute, original))
        return True


def uninstall() -> None:
    """Put the original methods back (tests; a program that turns logging off for good)."""
    with _lock:
        while _installed:
            owner, attribute, original = _installed.pop()
            setattr(owner, attribute, original)


def is_installed() -> bool:
    return bool(_installed)
