"""Verbose fetch logging: the observer of the kernel's ``rt_http_request``/``rt_http_response`` hooks.

``RT_CONFIG_VERBOSE_FETCH`` (or ``[debug] verbose_fetch``) selects the format, as in the reference runtime::

    [fetch] $ curl --http1.1 "http://127.0.0.1:8080/items" -X POST -H "Content-Type: application/json" --data-raw "{}"
    [fetch] > HTTP/1.1 POST http://127.0.0.1:8080/items
    [fetch] > Content-Type: application/json
    [fetch] < 201 Created
    [fetch] < Content-Length: 2

``true`` prints the ``>`` and ``<`` lines, ``curl`` adds the curl command first, ``false`` (default) nothing.
Secrets stay out of the log: ``Authorization``/``Cookie``-like header values (and headers named like
``X-Auth-Token`` or ``X-Client-Secret``) and URL passwords are masked unless
``RT_CONFIG_VERBOSE_FETCH_SECRETS=1``. A body is shown (``--data-raw``) only when it is text; of a body longer
than :data:`MAX_BODY_BYTES` only that much is shown, followed by ``(N bytes total)``. The client wrappers
(:mod:`rt_debug.instrument`) therefore keep no more than that of a body: a :class:`BodyPreview` (its first
bytes and its true length), so logging a 100 MB upload does not copy 100 MB.
Formatting is pure functions of the events, so it is tested without sockets.
"""

from __future__ import annotations

import codecs
import contextlib
import sys
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

from rt.events import HttpRequest, HttpResponse

PREFIX = "[fetch]"
MODES = ("curl", "true", "false")
MASK = "[REDACTED]"
MAX_BODY_BYTES = 4096
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})
# Custom credential headers have no fixed names (X-Auth-Token, X-CSRF-Token, X-Amz-Security-Token, Api-Key,
# X-Client-Secret ...): a name containing one of these words is masked too. Masking a harmless header costs a
# debugging session little; printing a token leaks it into logs and CI output.
SECRET_HEADER_WORDS = ("token", "secret", "password", "passwd", "api-key", "apikey", "credential", "session")
_PRINTABLE_CONTROLS = frozenset("\t\n\r")


def is_secret_header(name: str) -> bool:
    """Whether the value of header ``name`` is masked in the log."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or any(word in lowered for word in SECRET_HEADER_WORDS)


def _mask_headers(headers: Iterable[tuple[str, str]], show_secrets: bool) -> list[tuple[str, str]]:
    return [(name, value if show_secrets or not is_secret_header(name) else MASK) for name, value in headers]


def _mask_url(url: str, show_secrets: bool) -> str:
    """Hide the password of ``http://user:password@host/``: it is as secret as an Authorization header."""
    if show_secrets:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{MASK}@{host}"))


def _shell_quote(text: str) -> str:
    """Quote for a POSIX shell on one line: double quotes, or ``$'...'`` when the text has line breaks."""
    if any(ch in text for ch in "\n\r\t") or any(ord(ch) < 0x20 for ch in text):
        escaped = text.replace("\\", "\\\\").replace("'", "\\'")
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        escaped = "".join(ch if ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in escaped)
        return f"$'{escaped}'"
    escaped = "".join("\\" + ch if ch in '\\"$`' else ch for ch in text)
    return f'"{escaped}"'


class BodyPreview(bytes):
    """The first :data:`MAX_BODY_BYTES` bytes of a longer request body, with the body's full length in
    :attr:`total`: all the log shows of it, so all a client wrapper needs to keep (see :func:`preview`).
    A ``bytes`` subclass, so it fits :attr:`rt.events.HttpRequest.body` without a change to the kernel."""

    total: int

    def __new__(cls, head: bytes, total: int) -> BodyPreview:
        preview = super().__new__(cls, head)
        preview.total = total
        return preview

    def __repr__(self) -> str:
        return f"BodyPreview({bytes(self)!r}, total={self.total})"


def _utf8_length(text: str) -> int:
    """``len(text.encode())`` without encoding a long text at once (ASCII is O(1) in CPython)."""
    if text.isascii():
        return len(text)
    step = 1 << 16
    return sum(len(text[i:i + step].encode("utf-8", "surrogatepass")) for i in range(0, len(text), step))


def preview(body: object) -> bytes | None:
    """What a client wrapper keeps of a request ``body`` for the event: the whole body when it is at most
    :data:`MAX_BODY_BYTES` (the object itself when it is ``bytes``, else a copy), a :class:`BodyPreview` of a
    longer one, ``None`` for a file or an iterator (streamed: never read here). Only the head is copied, and
    the body itself is left as it is, so the request still sends all of it."""
    if isinstance(body, str):
        head = body[:MAX_BODY_BYTES].encode("utf-8", "surrogatepass")[:MAX_BODY_BYTES]
        total = _utf8_length(body)
    elif isinstance(body, (bytes, bytearray, memoryview)):
        view = memoryview(body)
        total = view.nbytes
        if total <= MAX_BODY_BYTES:
            return body if type(body) is bytes else view.tobytes()
        # a view of the first bytes, copied alone (a non-contiguous view, which clients refuse anyway, whole)
        head = view.cast("B")[:MAX_BODY_BYTES].tobytes() if view.c_contiguous else view.tobytes()[:MAX_BODY_BYTES]
    else:
        return None
    return head if total <= MAX_BODY_BYTES else BodyPreview(head, total)


def shown_body(body: bytes | None) -> tuple[str, int] | None:
    """``(text, total)``: the body's first :data:`MAX_BODY_BYTES` bytes as text and the body's full length,
    when it is UTF-8 text without binary control characters; else ``None``. ``body`` is a
    :class:`BodyPreview` (from the wrappers) or a whole body (from a client that emits events itself)."""
    if not body:
        return None
    total = body.total if isinstance(body, BodyPreview) else len(body)
    head = bytes(body[:MAX_BODY_BYTES])
    try:
        # incremental: a character cut in two at the limit is left out, not taken for binary data
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=total <= len(head))
    except UnicodeDecodeError:
        return None
    if any(ord(ch) < 0x20 and ch not in _PRINTABLE_CONTROLS for ch in text):
        return None
    return text, total


def printable_body(body: bytes | None) -> str | None:
    """The text of the body that the log shows (at most :data:`MAX_BODY_BYTES` of it), or ``None``."""
    shown = shown_body(body)
    return None if shown is None else shown[0]


def curl_line(request: HttpRequest, *, show_secrets: bool = False) -> str:
    """``curl --http1.1 "URL" -X METHOD -H "Name: value" ... --data-raw "body"`` (the reference's layout)."""
    version = "--http2" if request.http_version.upper().startswith("HTTP/2") else "--http1.1"
    parts = ["curl", version, _shell_quote(_mask_url(request.url, show_secrets)), "-X", request.method.upper()]
    for name, value in _mask_headers(request.headers, show_secrets):
        parts.extend(["-H", _shell_quote(f"{name}: {value}")])
    shown = shown_body(request.body)
    if shown is not None:
        text, total = shown
        parts.extend(["--data-raw", _shell_quote(text)])
        if total > MAX_BODY_BYTES:
            parts.append(f"({total} bytes total)")
    return " ".join(parts)


def _header_lines(marker: str, headers: Sequence[tuple[str, str]], show_secrets: bool) -> list[str]:
    return [f"{PREFIX} {marker} {name}: {value}" for name, value in _mask_headers(headers, show_secrets)]


def request_lines(request: HttpRequest, mode: str, *, show_secrets: bool = False) -> list[str]:
    """The lines logged for ``request`` in ``mode`` (``curl``/``true``; nothing for anything else)."""
    if mode not in ("curl", "true"):
        return []
    lines = [f"{PREFIX} $ {curl_line(request, show_secrets=show_secrets)}"] if mode == "curl" else []
    url = _mask_url(request.url, show_secrets)
    lines.append(f"{PREFIX} > {request.http_version} {request.method.upper()} {url}")
    lines.extend(_header_lines(">", request.headers, show_secrets))
    return lines


def response_lines(response: HttpResponse, mode: str, *, show_secrets: bool = False) -> list[str]:
    """``[fetch] < 200 OK`` and the response headers, in ``curl`` and ``true`` modes."""
    if mode not in ("curl", "true"):
        return []
    status = f"{response.status} {response.reason}".rstrip()
    return [f"{PREFIX} < {status}", *_header_lines("<", response.headers, show_secrets)]


def _settings() -> tuple[str, bool]:
    """The mode and the secrets switch of the kernel in use (the one whose client emitted the event)."""
    from rt.kernel import get_kernel

    config = get_kernel().config
    return str(config.get("debug.verbose_fetch", "false")), bool(config.get("debug.verbose_fetch_secrets", False))


def _write(lines: list[str]) -> None:
    if lines:
        stream = sys.stderr
        stream.write("\n".join(lines) + "\n")
        stream.flush()


def log_request(request: HttpRequest) -> None:
    """Observer of ``rt_http_request``. Observers must not raise, so a failure to log is swallowed."""
    with contextlib.suppress(Exception):  # logging must never break the request it describes
        mode, show_secrets = _settings()
        _write(request_lines(request, mode, show_secrets=show_secrets))


def log_response(response: HttpResponse) -> None:
    """Observer of ``rt_http_response``."""
    with contextlib.suppress(Exception):
        mode, show_secrets = _settings()
        _write(response_lines(response, mode, show_secrets=show_secrets))
