"""HMAC signing with the keyed state precomputed per (algorithm, secret).

HMAC hashes the key into its inner and outer pads before it hashes any message. A CSRF secret is the same
for every token, so we key one ``hmac`` object per (digest factory, secret) once and ``.copy()`` it per token,
which skips that work on every call (bench/csrf.py measures the gain). The cache is bounded, because the
secret is caller input.
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable
from typing import Any, Final

_MAX_ENTRIES: Final = 256


class KeyedMacCache:
    """``(digest factory, secret) -> keyed hmac object``; callers ``copy()`` the result before ``update``.

    Keyed by ``id(factory)`` with the factory kept in the value, so unhashable factories work and an id is
    never reused while its entry lives. Secrets are ``str`` (encoded as UTF-8, as the reference does) or the
    ``bytes`` of a generated default secret. The repr never shows the secrets it holds.
    """

    def __init__(self, max_entries: int = _MAX_ENTRIES) -> None:
        self._entries: dict[tuple[int, str | bytes], tuple[Callable[[], Any], hmac.HMAC]] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<KeyedMacCache entries={len(self._entries)}>"

    def keyed(self, factory: Callable[[], Any], secret: str | bytes) -> hmac.HMAC:
        entry = self._entries.get((id(factory), secret))
        if entry is not None and entry[0] is factory:
            return entry[1]
        mac = hmac.new(secret_bytes(secret), digestmod=factory)
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._entries.clear()  # simple and bounded; real programs use one or two secrets
            self._entries[(id(factory), secret)] = (factory, mac)
        return mac

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def secret_bytes(secret: str | bytes) -> bytes:
    return secret if isinstance(secret, bytes) else utf8(secret)


def utf8(text: str) -> bytes:
    """UTF-8 as JavaScript's encoders produce it: a lone surrogate becomes U+FFFD instead of an error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def sign(keyed: hmac.HMAC, message: bytes) -> bytes:
    mac = keyed.copy()
    mac.update(message)
    return mac.digest()
