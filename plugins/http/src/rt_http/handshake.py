"""The server side of the RFC 6455 opening handshake, checked the way REFERENCE.md describes."""

from __future__ import annotations

import base64
import binascii
import hashlib

import attrs

from rt_http.headers import Headers

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _GUID).digest()).decode("ascii")


@attrs.frozen
class HandshakeResult:
    """``headers`` for the 101 response when ``ok``; else ``status`` (0: plain refusal, 426: wrong version)."""

    ok: bool
    headers: tuple[tuple[str, str], ...] = ()
    status: int = 0


def check_upgrade(method: str, headers: Headers) -> HandshakeResult:
    if (
        method != "GET"
        or not headers.has_token("upgrade", "websocket")
        or not headers.has_token("connection", "upgrade")
    ):
        return HandshakeResult(False)
    key = headers.get("sec-websocket-key") or ""
    try:
        if len(base64.b64decode(key.encode("ascii"), validate=True)) != 16:
            return HandshakeResult(False)
    except (binascii.Error, UnicodeEncodeError):
        return HandshakeResult(False)
    if (headers.get("sec-websocket-version") or "").strip() != "13":
        return HandshakeResult(False, (("sec-websocket-version", "13"),), status=426)
    response = [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-accept", accept_key(key)),
    ]
    offered = [p.strip() for p in (headers.get("sec-websocket-protocol") or "").split(",") if p.strip()]
    if offered:
        response.append(("sec-websocket-protocol", offered[0]))  # the reference keeps only the first offer
    return HandshakeResult(True, tuple(response))
