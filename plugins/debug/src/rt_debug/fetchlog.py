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
``RT_CONFIG_VERBOSE_FETCH_SECRETS=1``. A body is shown (``--data-raw``) only when it is text and short.
Formatting is pure functions of the events, so it is tested without sockets.
"""

from __future__ import annotations

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


def printable_body(body: bytes | None) -> str | None:
    """The body as text when it is short UTF-8 text without binary control characters, else ``None``."""
    if not body or len(body) > MAX_BODY_BYTES:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(ord(ch) < 0x20 and ch not in _PRINTABLE_CONTROLS for ch in text):
        return None
    return text


def curl_line(request: HttpRequest, *, show_secrets: bool = False) -> str:
    """``curl --http1.1 "URL" -X METHOD -H "Name: value" ... --data-raw "body"`` (the reference's layout)."""
    version = "--http2" if request.http_version.upper().startswith("HTTP/2") else "--http1.1"
    parts = ["curl", version, _shell_quote(_mask_url(request.url, show_secrets)), "-X", request.method.upper()]
    for name, value in _mask_headers(request.headers, show_secrets):
        parts.extend(["-H", _shell_quote(f"{name}: {value}")])
    body = printable_body(request.body)
    if body is not None:
        parts.extend(["--data-raw", _shell_quote(body)])
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
