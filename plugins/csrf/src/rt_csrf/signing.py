"""HMAC keyed once per (algorithm, secret), copied per token.

HMAC hashes the key into its inner and outer pads before it hashes any message. A CSRF secret is the same
for every token, so :mod:`rt_csrf.profiles` keys one HMAC object per (digest factory, secret) once and
``.copy()`` s it per token, which skips that work on every call (bench/csrf.py measures it against
``hmac.new`` per token).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, Protocol


class KeyedMac(Protocol):
    """What a keyed HMAC object offers: ``hmac.HMAC``, or the C object inside it."""

    digest_size: int

    def copy(self) -> KeyedMac: ...

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


def keyed_mac(factory: Callable[[], Any], secret: bytes) -> KeyedMac:
    """An HMAC object keyed with ``secret``, to be ``copy()``-ed before each ``update``.

    When CPython built it on OpenSSL, this is the C object inside ``hmac.HMAC``: ``hmac.HMAC.copy`` is a
    Python method around the C object's ``copy`` and costs about a third of the signing time (bench/csrf.py).
    ``_hmac`` is a CPython detail, so anything unexpected falls back to the public object, which has the same
    four members.
    """
    mac = hmac.new(secret, digestmod=factory)
    inner = getattr(mac, "_hmac", None)
    if inner is not None and all(
        hasattr(inner, name) for name in ("copy", "update", "digest", "digest_size")
    ):
        return inner  # type: ignore[no-any-return]
    return mac


def utf8(text: str) -> bytes:
    """UTF-8 as JavaScript's encoders produce it: a lone surrogate becomes U+FFFD instead of an error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
